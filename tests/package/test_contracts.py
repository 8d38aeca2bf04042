"""The typed contracts of :mod:`symgdp.contracts` say what the code accepts at run time.

Each ``Literal`` mode is compared with the values its functions check (the two are written
in different places, so a mode added to one and not the other fails here), and each
numeric source of the package satisfies the protocol that its consumer is typed with.
"""

from __future__ import annotations

import inspect
from typing import get_args, get_type_hints

import pytest

from symgdp import contracts
from symgdp.errors import DomainError


def test_rounding_is_what_the_gaussian_family_accepts():
    from symgdp.gaussian import delta_mu

    for mode in get_args(contracts.Rounding):
        delta_mu(1.0, 1.0, rounding=mode)  # accepted
    with pytest.raises(DomainError, match="sideways"):
        delta_mu(1.0, 1.0, rounding="sideways")


def test_sampling_is_what_the_engine_knows():
    from symgdp.training.sampling import SAMPLINGS

    assert set(get_args(contracts.Sampling)) == set(SAMPLINGS)
    assert set(get_args(contracts.NeighbouringOrAuto)) == {*get_args(contracts.Neighbouring),
                                                           "auto"}


def test_neighbouring_is_what_the_engine_checks():
    from symgdp.training.engine import NEIGHBOURING, check_neighbouring

    assert get_args(contracts.Neighbouring) == tuple(NEIGHBOURING)
    for relation in NEIGHBOURING:
        assert check_neighbouring(relation) == relation


def test_measure_method_is_the_table_of_methods():
    from symgdp.measurement.measure import METHODS

    assert set(get_args(contracts.MeasureMethod)) == set(METHODS)


def test_progress_and_limit_kinds_are_what_the_classes_check():
    from symgdp.present import progress
    from symgdp.tail.limit import Identification

    assert get_args(contracts.ProgressKind) == progress._KINDS
    # Identification refuses any other method (its __post_init__): a wrong one raises
    with pytest.raises(ValueError, match="method must be"):
        Identification(limit=None, is_gdp=None, mu_tail=float("nan"), method="guessed")
    hints = get_type_hints(Identification)
    assert hints["method"] == contracts.LimitMethod


def test_signatures_use_the_contracts():
    """The public signatures carry the Literal types (not a bare ``str``)."""
    from symgdp import Accountant, Profile, compose, dpsgd, measure, report
    from symgdp.gaussian import vectorised

    def hint(fn, name):
        return get_type_hints(fn)[name]

    for fn in (vectorised.delta_mu, vectorised.log_delta_mu, vectorised.mu_gdp,
               vectorised.eps_gdp, vectorised.compose_gdp, vectorised.tradeoff_gdp,
               vectorised.mu_from_pure_dp):
        assert hint(inspect.unwrap(fn), "rounding") == contracts.Rounding, fn
    for fn in (dpsgd, Accountant.__init__):
        assert hint(fn, "neighbouring") == contracts.NeighbouringOrAuto, fn
        assert hint(fn, "sampling") == contracts.Sampling, fn
    # compose takes the relation its items carry when none is named
    assert hint(compose, "neighbouring") == contracts.Neighbouring | None
    for fn in (measure, report, Profile.measure):
        assert hint(fn, "method") == contracts.MeasureMethod, fn
    assert hint(Profile.from_tradeoff, "method") == contracts.TradeoffMethod
    assert hint(Profile.from_source, "source") == contracts.ProfileSource


def test_the_sources_satisfy_their_protocols():
    import numpy as np

    from symgdp.notions import rdp_source, tradeoff_source, zcdp_source
    from symgdp.pld.curves import Curve, curves_source

    zcdp = zcdp_source(0.5)
    rdp = rdp_source("alpha / (2 * 1.5**2)")
    fdp = tradeoff_source("(1 - alpha)**2")  # a convex trade-off curve below 1 - alpha
    for src in (zcdp, rdp, fdp):
        assert isinstance(src, contracts.NumericSource), src
        assert isinstance(src, contracts.ProfileSource), src
    for src in (zcdp, fdp):  # the ones whose docstrings promise a proved lower bound
        assert isinstance(src, contracts.NumericSourceWithLower), src
    # one PMF on a loss grid: masses 1/2 at losses 0 and 1 (a PLD source of the package)
    pld = curves_source([Curve(0, 1.0, np.array([0.5, 0.5]), 0.0)])
    assert isinstance(pld, contracts.ProfileSource)
    assert not isinstance(pld, contracts.NumericSource)  # no tail limit, no LaTeX
    assert not isinstance(object(), contracts.ProfileSource)
    # the protocol's promise, once: an upper bound on log delta, <= 0
    assert np.all(zcdp.log_delta(np.array([0.0, 1.0, 5.0])) <= 0.0)


@pytest.mark.slow
def test_a_type_checker_sees_a_misspelt_mode(tmp_path):
    """The point of the contracts: ``python -m mypy`` flags a misspelt mode before it runs
    (each of these calls would raise a DomainError at run time)."""
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    import subprocess
    import sys
    from pathlib import Path

    snippet = tmp_path / "typo.py"
    snippet.write_text(
        "from symgdp import Profile, compose, delta_mu\n"
        "delta_mu(1.0, 1.0, rounding='upp')\n"
        "compose(Profile.parse('exp(-eps)'), neighbouring='replace_once')\n"
        "Profile.parse('exp(-eps)').measure(method='bisect')\n"
        "delta_mu(1.0, 1.0, rounding='down')\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    # --no-site-packages: the contracts are symgdp's own Literal annotations (found from
    # cwd = the repository); checking SymPy/NumPy/mpmath's installed sources too cost more
    # than half of mypy's CPU (measured 4.7 s -> 2.1 s) and cannot change these errors
    proc = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                           "--no-site-packages",
                           "--cache-dir", str(tmp_path / "cache"), str(snippet)],
                          cwd=root, capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    # by hand: lines 2, 3 and 4 are misspelt, line 5 is right
    assert [int(e.split(":")[1]) for e in errors] == [2, 3, 4], proc.stdout
    assert "Literal['up', 'down', 'nearest']" in errors[0]
    assert "Literal['add_remove', 'replace_one']" in errors[1]
