"""Validation and refinement share their symbolic work across parameter values.

A sweep or a calibration validates and refines one expression at many parameter values;
symgdp.refinement.family does the symbolic work once per expression with its parameters as symbols
(a "family") and per value numeric work only.  These tests compare that path with the
per-value path (``family._USE_FAMILIES = False``, the code every value took before) and,
where there is one, with an independent reference: the breakpoint as a 50-digit mpmath
root of the stationarity bracket, the Laplace mechanism's mu in closed form.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

import symgdp.refinement.family as family_mod
import symgdp.refinement.refine as refine_mod
import symgdp.refinement.validate as validate_mod
from symgdp import Profile, mechanisms, sweep
from symgdp.errors import ProfileError
from symgdp.measurement.measure import measure


def _both(make, *, eps_h=30.0):
    """(refined profile, measurement) through the family path and the per-value path."""
    out = []
    for on in (True, False):
        family_mod._USE_FAMILIES = on
        try:
            p = make()
            out.append((p.refine(), measure(p, eps_h=eps_h, identify=False)))
        finally:
            family_mod._USE_FAMILIES = True
    return out


def _same_bracket(a, b):
    assert (a.lower, a.upper, a.certified, a.method) == (b.lower, b.upper, b.certified,
                                                          b.method)


def _bracket_root(delta, c0):
    """Root of the stationarity bracket delta' + e^c (1 - delta + delta') at 50 digits."""
    with mpmath.workdps(50):
        def f(c):
            d, dp = delta(c), mpmath.diff(delta, c)
            return dp + mpmath.exp(c) * (1 - d + dp)

        return mpmath.findroot(f, mpmath.mpf(c0))


@pytest.mark.parametrize("A, B, sigma", [(0.5, 1.0, 0.7), (1.3, 1.0, 2.1), (1.1, 2.0, 1.5)])
def test_sgd_family_breakpoint_against_mpmath_root(A, B, sigma):
    (r_fam, m_fam), (r_val, m_val) = _both(lambda: mechanisms.sgd_family(A, B, sigma))
    # reference: the bracket's root for the exact doubles A, B, sigma (50-digit mpmath)
    with mpmath.workdps(50):
        k = mpmath.mpf(sigma) ** 2 / mpmath.mpf(A) ** 2
        c_ref = _bracket_root(lambda e: mpmath.mpf(B) * mpmath.exp(-k * e**2),
                              float(r_val.breakpoint))
        # parameters enter the family's functions exactly: the breakpoint to ~40 digits
        assert abs(mpmath.mpf(r_fam.breakpoint) - c_ref) < mpmath.mpf("1e-35")
        # the per-value path reads SymPy's 53-bit products of the Floats (sigma^2/A^2):
        # its breakpoint is off by about that rounding, no more
        assert abs(mpmath.mpf(r_val.breakpoint) - c_ref) < mpmath.mpf("1e-14")
    assert r_fam.meta["refine_method"] == r_val.meta["refine_method"] == "numeric"
    _same_bracket(m_fam, m_val)


@pytest.mark.parametrize("m, n", [(100, 1000), (60, 10**4)])
def test_shuffle_sum_family_matches_per_value_and_root(m, n):
    (r_fam, m_fam), (r_val, m_val) = _both(lambda: mechanisms.shuffle_sum(m, n))
    # integer parameters: both paths see the same exact numbers, to the last digit
    assert r_fam.meta["segments"] == r_val.meta["segments"]
    K = mpmath.mpf(n) * mpmath.exp(-mpmath.mpf(m) / 10)
    with mpmath.workdps(50):
        K = mpmath.mpf(n) * mpmath.exp(-mpmath.mpf(m) / 10)
        c_ref = _bracket_root(lambda e: K / e, float(r_val.breakpoint))
        assert abs(mpmath.mpf(r_fam.breakpoint) - c_ref) < mpmath.mpf("1e-35")
    _same_bracket(m_fam, m_val)


@pytest.mark.parametrize("eps0", [0.3, 1.0, 2.7])
def test_laplace_family_proof_and_closed_form_mu(eps0):
    (r_fam, m_fam), (r_val, m_val) = _both(lambda: mechanisms.laplace(eps0))
    assert r_fam.meta["refine_method"] == r_val.meta["refine_method"] == "proof"
    _same_bracket(m_fam, m_val)
    # closed form: eps0 = -2 log(2 Phi(-mu/2)), i.e. mu = -2 Phi^{-1}(e^{-eps0/2}/2)
    with mpmath.workdps(40):
        target = mpmath.exp(-mpmath.mpf(eps0) / 2) / 2
        mu = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 * target - 1)
    assert m_fam.covers_tail and m_fam.lower <= mu <= m_fam.upper


@pytest.mark.parametrize("eps0", [0.5, 3.0])
def test_subsampled_laplace_family_matches_per_value(eps0):
    (r_fam, m_fam), (r_val, m_val) = _both(lambda: mechanisms.laplace(eps0).subsample(0.1))
    assert r_fam.meta.get("refine_method") == r_val.meta.get("refine_method")
    assert r_fam.meta["segments"] == r_val.meta["segments"]
    _same_bracket(m_fam, m_val)
    # never above the naive profile (the refinement's construction, theory §2)
    p = mechanisms.laplace(eps0).subsample(0.1)
    for e in (0.05, 0.2, 1.0):
        assert r_fam.mp(e) <= p.mp(e)


@pytest.mark.parametrize("text, values", [
    ("a*exp(-eps) - b", {"a": 1, "b": 2}),      # negative everywhere
    ("1 - a*exp(-eps)", {"a": 1}),              # increasing
    ("1 + a*exp(-eps)", {"a": 1}),              # at least 1 everywhere
])
def test_invalid_values_rejected_alike(text, values):
    msgs = []
    for on in (True, False):
        family_mod._USE_FAMILIES = on
        try:
            with pytest.raises(ProfileError) as err:
                Profile.parse(text, values).validate()
            msgs.append(str(err.value))
        finally:
            family_mod._USE_FAMILIES = True
    assert msgs[0] == msgs[1]


def test_valid_values_need_no_child_process(monkeypatch):
    # the first value builds the family; later values are validated and refined with
    # numeric work only (no bounded SymPy call)
    for make in (lambda v: mechanisms.sgd_family(1.2, 1.0, v),
                 lambda v: mechanisms.laplace(v), lambda v: mechanisms.shuffle_sum(80, v)):
        make(2).refine()

    def refuse(*a, **k):
        raise AssertionError("a bounded call per value")

    for mod in (family_mod, refine_mod, validate_mod):
        monkeypatch.setattr(mod, "run_bounded", refuse)
    for make in (lambda v: mechanisms.sgd_family(1.2, 1.0, v),
                 lambda v: mechanisms.laplace(v), lambda v: mechanisms.shuffle_sum(80, v)):
        make(3).refine()


def test_values_breaking_assumptions_take_the_per_value_path():
    p = Profile.parse("exp(-a*eps)", {"a": -1.5})  # a is a positive symbol
    assert family_mod._family_point(p) is None
    q = Profile.parse("exp(-a*eps)", {"a": 1.5})
    assert family_mod._family_point(q) is not None
    assert family_mod._family.cache_info().maxsize == family_mod._FAMILY_CACHE
    # exact irrational values (sqrt(2)) also take the per-value path
    assert family_mod._family_point(Profile.parse("exp(-a*eps)", {"a": sympy.sqrt(2)})) is None


def test_replace_shares_value_caches_only_for_the_same_function():
    p = mechanisms.laplace(1.0)
    p.validate()
    p(0.5)
    same = p.replace(name="L2")
    assert same._cache["evaluator"] is p._cache["evaluator"] and "validated" in same._cache
    other = p.replace(values={"varepsilon_0": 2.0})
    assert "evaluator" not in other._cache and "validated" not in other._cache


@pytest.mark.slow
def test_sweep_records_identical_without_families():
    grid = {"A": [0.7, 1.6], "B": [1.0], "sigma": [0.9, 2.5]}
    tables = []
    for on in (True, False):
        family_mod._USE_FAMILIES = on
        try:
            t = sweep(mechanisms.sgd_family, grid, executor="serial", eps_h=30, tol=1e-6)
        finally:
            family_mod._USE_FAMILIES = True
        tables.append([{k: v for k, v in r.items() if k != "seconds"} for r in t])
    assert not any(r["error"] for r in tables[0] + tables[1])
    # Float parameters enter the family's functions exactly, while the per-value path
    # reads SymPy's 53-bit products of them: the refined breakpoints differ in their
    # last digits and a bound may move by an ulp.  Both brackets are guaranteed, so they
    # must intersect, with the same certification and the width asked for.
    for a, b in zip(*tables, strict=False):
        assert a["certified"] == b["certified"] is True
        assert max(a["mu_lower"], b["mu_lower"]) <= min(a["mu_upper"], b["mu_upper"])
        assert abs(a["mu_lower"] - b["mu_lower"]) <= 1e-12
        assert abs(a["mu_upper"] - b["mu_upper"]) <= 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("K", [2, 3, sympy.Rational(5, 2)])
def test_closed_form_breakpoint_from_the_family_solve(K):
    # K e^{-eps}: the bracket -K e^{-c} + e^c - 2K vanishes at e^c = K + sqrt(K^2 + K)
    # (by hand); the family solves it once with K symbolic, each value substitutes
    r = Profile.parse("K*exp(-eps)", {"K": K}).refine()
    want = sympy.log(K + sympy.sqrt(K**2 + K))
    assert not isinstance(r.breakpoint, sympy.Float)
    assert abs(sympy.N(r.breakpoint - want, 50)) < sympy.Float("1e-45")
    family_mod._USE_FAMILIES = False
    try:
        r_val = Profile.parse("K*exp(-eps)", {"K": K}).refine()
    finally:
        family_mod._USE_FAMILIES = True
    assert abs(sympy.N(r_val.breakpoint - r.breakpoint, 50)) < sympy.Float("1e-45")


def test_numeric_budget_in_process_and_restored():
    import signal
    import time

    from symgdp.errors import AnalysisTimeout

    def spin(n):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            pass
        return n

    before = signal.getsignal(signal.SIGALRM)
    t0 = time.monotonic()
    with pytest.raises(AnalysisTimeout):
        validate_mod._numeric_bounded(spin, 1, seconds=0.2)
    assert time.monotonic() - t0 < 4  # interrupted, not run to the end
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert validate_mod._numeric_bounded(lambda n: n + 1, 1, seconds=5) == 2
