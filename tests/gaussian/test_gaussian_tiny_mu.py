r"""A tiny mu (the Gaussian mechanism with huge noise) never prints a failure probability 0.

:math:`\delta_\mu(\varepsilon_h)` is positive for every :math:`\mu > 0`; for tiny
:math:`\mu` its two terms cancel beyond any ball precision, and the bound used to come
out as :math:`\log = -\infty`, printed "failure probability <= 0".  Reference: the
closed form :math:`\Phi(-\varepsilon/\mu + \mu/2) - e^\varepsilon\Phi(-\varepsilon/\mu - \mu/2)`
(Dong, Roth & Su 2021, Cor. 2.13) in mpmath at 120 digits, whose exponent range is
unbounded; every printed or stored bound must be at least the true value.
"""

from __future__ import annotations

import json
import math

import mpmath
import pytest

from symgdp import mechanisms, report
from symgdp.gaussian.gdp_balls import log_delta_mu_upper
from symgdp.numerics.decimals import format_log_upper


def _true_log_delta(eps: float, mu: float) -> mpmath.mpf:
    with mpmath.workdps(120):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.log(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


@pytest.mark.parametrize("mu", [1e-30, 1e-8, 1e-5, 0.5, 3.0])
@pytest.mark.parametrize("eps", [1.0, 100.0])
def test_log_delta_mu_upper_is_a_finite_upper_bound(mu, eps):
    u = log_delta_mu_upper(eps, mu)
    assert math.isfinite(u)
    assert u >= _true_log_delta(eps, mu)


def test_log_delta_mu_upper_of_zero_mu_is_minus_infinity():
    assert log_delta_mu_upper(1.0, 0.0) == -math.inf


@pytest.mark.parametrize("log_x", [-2.358657632255133e38, -5e19, -1e13, -3e12, -800.0])
def test_huge_exponents_print_rounded_up(log_x):
    """Reference: log10 of the printed bound, read back in mpmath, is >= log_x / ln 10."""
    text = format_log_upper(log_x)
    mant, _, exp = text.partition("e")
    with mpmath.workdps(60):
        printed = mpmath.log10(mpmath.mpf(mant)) + int(exp)
        assert printed >= mpmath.mpf(log_x) / mpmath.log(10)


@pytest.mark.parametrize("mu", [1e-30, 1e-8])
def test_tiny_mu_measurement_and_report(mu):
    p = mechanisms.gaussian(mu)
    # certified: delta_mu itself, proved on the whole line (mu-GDP, failure probability 0)
    whole = p.measure(eps_h=100, tol=1e-6)
    assert whole.lower <= mu <= whole.upper and whole.covers_tail
    assert whole.failure_prob == 0
    # (float mode too: the exact delta_mu is recognised symbolically, no search)
    m = p.measure(eps_h=100, tol=1e-6, certify=False)
    assert m.lower <= mu <= m.upper
    if not m.covers_tail:  # a head statement: its tiny failure probability is a bound
        assert math.isfinite(m.log_failure_prob)
        assert m.log_failure_prob >= _true_log_delta(100.0, m.upper)
        assert "<= 0" not in str(m) and "failure_prob=0.0" not in repr(m)
    else:  # a whole-line proof: the failure probability is an exact 0
        assert m.failure_prob == 0 and "GDP" in str(m)
    r = report(p, eps_h=100, tol=1e-6, certify=False)
    md = r.to_markdown()
    assert "at most 0;" not in md and r"\le 0$" not in md
    d = json.loads(json.dumps(r.to_dict()))
    # a positive bound is never written as 0; an exact 0 only with the whole-line proof
    assert d["failure_prob"] not in (0, 0.0, "0") or d["covers_tail"] is True
    assert "failure prob.    <= 0" not in r.to_text()
