"""Phases of fixed-size batches drawn without replacement (``dpsgd(sampling=
"without_replacement", dataset_size=n, schedule=[(batch_size, sigma, steps), ...])``,
replace-one), against independent truths.

References (named at each test): the closed form of full batches (b = n: each step the
Gaussian mechanism of sensitivity 2, so the phases compose to 2 sqrt(sum T_i / sigma_i^2)
-GDP, exactly; its profile in 40-digit mpmath); the single-phase scheme (a second route:
one phase, and one phase split in two, must give the same measure); monotonicity in the
batch size (a larger sampling ratio is less private, so phases mixing two batch sizes lie
between the runs with either one throughout).
"""

from __future__ import annotations

import math

import mpmath
import pytest

from symgdp import dpsgd
from symgdp.errors import DomainError

FAST = dict(tol=1e-3, value_discretization_interval=1e-3)


def _gauss_delta(e, mu):
    """delta_mu(e) of mu-GDP, 40-digit mpmath (closed form)."""
    with mpmath.workdps(40):
        e, mu = mpmath.mpf(float(e)), mpmath.mpf(float(mu))
        return float(mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2))


def test_full_batches_are_the_gaussian_of_sensitivity_two():
    # reference: closed form 2 sqrt(sum T_i / sigma_i^2) and its 40-digit profile
    r = dpsgd(sampling="without_replacement", dataset_size=30,
              schedule=[(30, 8.0, 2), (30, 12.0, 3)], **FAST)
    mu = 2.0 * math.sqrt(2 / 64.0 + 3 / 144.0)
    assert r.mu_floor <= mu <= r.mu_upper and r.mu_upper - r.mu_floor < 0.01 * mu
    assert r.neighbouring == "replace_one" and r.sampling == "without_replacement"
    for x in (0.0, 0.3, 1.0):
        assert float(r.delta_lower(x)) <= _gauss_delta(x, mu) <= float(r.profile(x))


def test_one_phase_and_split_phases_equal_the_single_run():
    # reference: the single-phase scheme (symgdp.training.symmetrised.compose_symmetric)
    a = dpsgd(sampling="without_replacement", dataset_size=100, batch_size=10, sigma=3.0,
              steps=6, **FAST)
    b = dpsgd(sampling="without_replacement", dataset_size=100, schedule=[(10, 3.0, 6)],
              **FAST)
    c = dpsgd(sampling="without_replacement", dataset_size=100,
              schedule=[(10, 3.0, 2), (10, 3.0, 4)], **FAST)
    assert (a.mu_floor, a.mu_upper) == (b.mu_floor, b.mu_upper)
    assert abs(c.mu_upper - a.mu_upper) < 1e-6 and abs(c.mu_floor - a.mu_floor) < 1e-6


def test_mixed_batch_sizes_lie_between():
    # reference: monotonicity in the sampling ratio (the runs with b = 10 and b = 20
    # throughout bracket the mixed schedule)
    lo = dpsgd(sampling="without_replacement", dataset_size=100, batch_size=10, sigma=3.0,
               steps=6, **FAST)
    hi = dpsgd(sampling="without_replacement", dataset_size=100, batch_size=20, sigma=3.0,
               steps=6, **FAST)
    m = dpsgd(sampling="without_replacement", dataset_size=100,
              schedule=[(10, 3.0, 3), (20, 3.0, 3)], **FAST)
    assert lo.mu_floor <= m.mu_upper and m.mu_floor <= hi.mu_upper
    assert lo.mu_upper < m.mu_upper < hi.mu_upper
    assert m.steps == 6 and math.isnan(m.q) and "schedule" in str(m)


@pytest.mark.parametrize("kw,match", [
    (dict(schedule=[(200, 1.0, 2)]), "batch_size=200"),
    (dict(schedule=[(0, 1.0, 2)]), "batch_size.*0"),
    (dict(schedule=[(10, -1.0, 2)]), "sigma.*-1.0"),
    (dict(schedule=[(10, 1.0, 2.5)]), "steps.*2.5"),
    (dict(schedule=[(10, 1.0)]), "entry 0"),
    (dict(schedule=[]), "empty"),
    (dict(schedule=[(10, 1.0, 2)], neighbouring="add_remove"), "add_remove"),
    (dict(schedule=[(10, 1.0, 2)], batch_size=10), "batch_size=10"),
])
def test_bad_schedules_are_domain_errors_naming_the_value(kw, match):
    with pytest.raises(DomainError, match=match):
        dpsgd(sampling="without_replacement", dataset_size=100, **kw, **FAST)


def test_other_schemes_still_refuse_schedules():
    with pytest.raises(DomainError, match="schedule=.*shuffle"):
        dpsgd(sampling="shuffle", dataset_size=100, schedule=[(10, 1.0, 2)], **FAST)


def test_cli_phases_without_replacement():
    # reference: closed form, as above (full batches: 2 sqrt(sum T_i / sigma_i^2)-GDP)
    import io
    import json

    from symgdp.cli.main import main

    def cli(*argv):
        out, err = io.StringIO(), io.StringIO()
        return main(["dpsgd", *argv], stdout=out, stderr=err), out.getvalue(), err.getvalue()

    status, out, err = cli("--sampling", "without_replacement", "--dataset-size", "30",
                           "--phase", "30:8:2", "--phase", "30:12:3", "--tol", "1e-3",
                           "--json")
    assert status == 0, err
    data = json.loads(out)
    mu = 2.0 * math.sqrt(2 / 64.0 + 3 / 144.0)
    assert data["mu_floor"] <= mu <= data["mu_upper"]
    assert data["neighbouring"] == "replace_one" and data["sampling"] == "without_replacement"
    status, _, err = cli("--sampling", "without_replacement", "--dataset-size", "30",
                         "--phase", "10.5:8:2")
    assert status == 2 and "10.5" in err
    status, _, err = cli("--sampling", "without_replacement", "--dataset-size", "30",
                         "--phase", "10:8:2", "--batch-size", "10")
    assert status == 2 and "--phase" in err
