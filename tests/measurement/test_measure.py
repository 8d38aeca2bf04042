"""Guaranteed GDPT brackets (symgdp.measure; theory §4, §6).

Every bracket is tested as ``lower <= truth <= upper`` and ``upper - lower <= tol`` with the
truth known independently: a closed form evaluated with 40-digit mpmath in the test, or
(for profiles without a closed form) 40-digit point values of the GDPT and a second
algorithm (the staircase against the branch-and-bound).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from symgdp.errors import ConvergenceError, DomainError, PrecisionError
from symgdp.gaussian import precise
from symgdp.gaussian.vectorised import log_delta_mu
from symgdp.measurement.finalise import _LOG_SLACK, _NEAR_ONE
from symgdp.measurement.measure import Measurement, gdpt, measure
from symgdp.profile import Profile
from symgdp.symbolic.symbols import eps

E = sympy.exp
DPS = 40


def mu_pure_dp_ref(e0: float) -> float:
    """-2 Phi^{-1}(1/(1+e^{e0})) at 40 digits (theory §3), written out with erfinv."""
    with mpmath.workdps(DPS):
        p = 1 / (1 + mpmath.exp(mpmath.mpf(e0)))
        return float(-2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1))


def mu_laplace_ref(e0: float) -> float:
    """-2 Phi^{-1}(e^{-e0/2}/2) at 40 digits."""
    with mpmath.workdps(DPS):
        q = mpmath.exp(-mpmath.mpf(e0) / 2) / 2
        return float(-2 * mpmath.sqrt(2) * mpmath.erfinv(2 * q - 1))


# eps0 stays a symbol with a bound value: substituted into exp() as a Float, SymPy would
# round exp(eps0) to 53 bits and the profile would differ from the mechanism in the last
# ulp; certified brackets are exact for the bound parameter value.
Z = sympy.Symbol("z", positive=True)


def pure_dp(e0: float) -> Profile:
    return Profile(sympy.Max(E(Z) - E(eps), 0) / (1 + E(Z)), {Z: e0})


def laplace(e0: float) -> Profile:
    return Profile(sympy.Max(1 - E((eps - Z) / 2), 0), {Z: e0})


def gaussian_erfc(mu: float) -> Profile:
    """delta_mu written with erfc (theory §3), Phi(x) = erfc(-x/sqrt 2)/2."""
    m = sympy.Float(mu)

    def Phi(x: sympy.Expr) -> sympy.Expr:
        return sympy.erfc(-x / sympy.sqrt(2)) / 2

    return Profile(Phi(-eps / m + m / 2) - E(eps) * Phi(-eps / m - m / 2))


class GaussianLogDelta:
    """A duck-typed profile whose log delta is the float64 GDP family itself."""

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def log_delta(self, x: np.ndarray) -> np.ndarray:
        return log_delta_mu(x, self.mu)


def g_ref(profile: Profile, x: float) -> float:
    """G(x) from a 40-digit profile value and the mpmath inverse (precise.mu_gdp)."""
    d = profile.mp(x, dps=DPS)
    if d <= 0:
        return 0.0
    with mpmath.workdps(DPS):
        L = mpmath.log(min(d, mpmath.mpf(1)))
    return float(precise.mu_gdp(x, log_delta=L, dps=30))


def check(m: Measurement, truth: float, tol: float) -> None:
    assert m.lower <= truth <= m.upper, (m.lower, truth, m.upper)
    assert m.upper - m.lower <= tol


# -- the three closed forms of the issue ------------------------------------------------


@pytest.mark.parametrize("certify", [False, True])
@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_pure_dp_closed_form(tol: float, certify: bool) -> None:
    m = measure(pure_dp(1.0), 100.0, tol, refine=False, certify=certify)
    check(m, mu_pure_dp_ref(1.0), tol)
    assert m.certified is certify
    assert m.covers_tail and m.failure_prob == 0.0 and m.mu_tail == 0.0
    assert m.argmax < 1e-3  # G of the worst-case eps0-DP profile peaks (flatly) at 0
    assert m.evaluations < 50_000
    if certify:
        assert m.certify_evaluations > 0


@pytest.mark.parametrize("certify", [False, True])
def test_laplace_closed_form(certify: bool) -> None:
    m = measure(laplace(2.0), 100.0, 1e-7, refine=False, certify=certify)
    check(m, mu_laplace_ref(2.0), 1e-7)
    assert m.covers_tail


@settings(max_examples=8)
@given(st.floats(0.01, 8.0))
@example(0.2)
@example(6.0)
def test_laplace_random(e0: float) -> None:
    m = measure(laplace(e0), 50.0, 1e-6, refine=False, identify=False)
    check(m, mu_laplace_ref(e0), 1e-6)


@settings(max_examples=8)
@given(st.floats(0.01, 8.0))
@example(0.2)
@example(5.5)
def test_pure_dp_random(e0: float) -> None:
    m = measure(pure_dp(e0), 20.0, 1e-6, refine=False, identify=False)
    check(m, mu_pure_dp_ref(e0), 1e-6)


@settings(max_examples=4)
@given(st.floats(0.01, 6.0), st.sampled_from([laplace, pure_dp]))
def test_certified_random(e0: float, family: Any) -> None:
    truth = (mu_laplace_ref if family is laplace else mu_pure_dp_ref)(e0)
    m = measure(family(e0), 10.0, 1e-6, refine=False, identify=False, certify=True)
    check(m, truth, 1e-6)
    assert m.certified


@settings(max_examples=8)
@given(st.floats(0.05, 6.0))
@example(1.0)
def test_gaussian_flat_gdpt(mu: float) -> None:
    # delta_mu's GDPT is the constant mu (theory §4): the flat worst case of the search
    m = measure(GaussianLogDelta(mu), 5.0, 1e-3, refine=False)
    check(m, mu, 1e-3)
    assert "no refine" not in " ".join(m.notes)  # refine=False: nothing to report
    assert math.isnan(m.mu_tail)  # a duck profile has no identification


def test_gaussian_written_with_erfc() -> None:
    m = measure(gaussian_erfc(1.5), 12.0, 2e-3, refine=False, identify=False)
    check(m, 1.5, 2e-3)
    # its float literals are read exactly: the profile is proved below delta_upper on the
    # whole line (theory §14), so no failure probability remains
    assert m.covers_tail and m.failure_prob == 0


@pytest.mark.slow
def test_gaussian_written_with_erfc_certified() -> None:
    m = measure(gaussian_erfc(0.7), 4.0, 5e-3, refine=False, identify=False, certify=True)
    check(m, 0.7, 5e-3)
    assert m.certified


# -- the staircase (published algorithm) as a second algorithm ---------------------------


@settings(max_examples=5)
@given(st.floats(0.5, 3.0))
def test_staircase_agrees_with_branch_and_bound(e0: float) -> None:
    p = laplace(e0)
    truth = mu_laplace_ref(e0)
    # eps_h = e0: past e0 the profile is an exact 0, which Profile evaluates slowly
    s = measure(p, e0, 1e-3, refine=False, method="staircase", identify=False)
    b = measure(p, e0, 1e-3, refine=False, identify=False)
    check(s, truth, 1e-3)
    check(b, truth, 1e-3)
    assert s.method == "staircase" and b.method == "first-order"
    assert max(s.lower, b.lower) <= min(s.upper, b.upper)
    # the staircase evaluates its whole grid: n + 2 points, n = ceil(sqrt(8 pi) eps_h/tol)
    n = math.ceil(math.sqrt(8 * math.pi) * e0 / 1e-3)
    assert s.evaluations >= n + 2
    assert b.evaluations < s.evaluations / 5


def test_staircase_certified() -> None:
    m = measure(pure_dp(0.5), 1.0, 1e-3, refine=False, method="staircase", certify=True,
                identify=False)
    check(m, mu_pure_dp_ref(0.5), 1e-3)
    assert m.certified


# -- shapes of G that break naive searches -----------------------------------------------


def k_fold_rr(e0: float, k: int) -> Profile:
    """Optimal k-fold composition of eps0-DP (Kairouz-Oh-Viswanath; theory §8): the GDPT
    oscillates with many local maxima."""
    z = sympy.Float(e0)
    p = E(z) / (1 + E(z))
    q = 1 - p
    terms = [sympy.binomial(k, j) * sympy.Max(p**j * q ** (k - j) - E(eps) * q**j * p ** (k - j), 0)
             for j in range(k + 1)]
    return Profile(sympy.Add(*terms))


@pytest.mark.slow
def test_many_local_maxima() -> None:
    p = k_fold_rr(0.3, 6)
    xs = np.linspace(0.0, 1.8, 37)
    g = gdpt(p, xs)
    assert np.sum((g[1:-1] > g[:-2]) & (g[1:-1] > g[2:])) >= 2  # the oscillation is real
    m = measure(p, 10.0, 1e-6, refine=False, identify=False)
    assert m.upper - m.lower <= 1e-6 and m.covers_tail  # k*eps0 = 1.8 <= eps_h
    # independent: 40-digit point values of G are lower bounds of the supremum
    ref = [g_ref(p, float(x)) for x in np.linspace(0.0, 1.8, 13)] + [g_ref(p, m.argmax)]
    assert max(ref) <= m.upper
    assert abs(g_ref(p, m.argmax) - m.lower) <= 1e-9
    s = measure(p, 2.0, 1e-4, refine=False, method="staircase", identify=False)
    assert max(s.lower, m.lower) <= min(s.upper, m.upper)


def test_discontinuous_profile_sup_not_attained() -> None:
    # delta = 1/2 on [0, 1), then e^{-eps^2}/10: G increases to mu_GDP(1, 1/2) as eps -> 1-
    # and jumps down; that limit is the supremum because for eps in [1, 3] monotonicity
    # gives G <= mu_GDP(3, e^{-1}/10), which is smaller (checked below at 40 digits)
    p = Profile(sympy.Piecewise((sympy.Rational(1, 2), eps < 1),
                                (E(-(eps**2)) / 10, True)))
    truth = float(precise.mu_gdp(1, sympy.Rational(1, 2), dps=DPS))
    with mpmath.workdps(DPS):
        assert precise.mu_gdp(3, mpmath.exp(-1) / 10, dps=DPS) < truth
    for certify in (False, True):
        m = measure(p, 3.0, 1e-8, refine=False, certify=certify, identify=False)
        check(m, truth, 1e-8)
        assert abs(m.argmax - 1.0) < 1e-7


def test_constant_profile_peaks_at_eps_h() -> None:
    # delta = 0.3: G(eps) = mu_GDP(eps, 0.3) increases, so the sup is at eps_h (not GDP)
    p = Profile(sympy.Float(0.3))
    truth = float(precise.mu_gdp(7, 0.3, dps=DPS))
    m = measure(p, 7.0, 1e-7, refine=False, identify=False)
    check(m, truth, 1e-7)
    assert m.argmax == 7.0 and not m.covers_tail


def test_zero_from_start() -> None:
    # eps0 = 0: the worst-case 0-DP profile Max(0, 1 - e^eps)/2 is 0 everywhere
    m = measure(pure_dp(0.0), 100.0, 1e-6, refine=False, certify=True)
    assert (m.lower, m.upper, m.covers_tail, m.failure_prob) == (0.0, 0.0, True, 0.0)
    assert m.log_failure_prob == -math.inf


def test_delta_one_somewhere_gives_infinity() -> None:
    # a naive profile with delta >= 1 near 0 and refine=False: no finite mu on the head
    p = Profile(sympy.Min(2 * E(-eps), 1))
    m = measure(p, 10.0, 1e-6, refine=False, identify=False)
    assert m.lower == m.upper == math.inf


def test_underflow_is_not_an_exact_zero() -> None:
    # exp(-eps^2)/2 underflows float64 long before eps_h = 60 but is never 0 (theory §5)
    p = Profile(E(-(eps**2)) / 2)
    # certified, the whole line is proved by the tail certificate, not by a zero
    mc = measure(p, 60.0, 1e-6, refine=False, identify=False)
    assert mc.covers_tail and "proved on [60, inf)" in mc.tail_proof
    # float mode has no tail proof: the head statement with its failure probability
    m = measure(p, 60.0, 1e-6, refine=False, certify=False)
    assert not m.covers_tail
    assert m.log_failure_prob == pytest.approx(log_delta_mu(60.0, m.upper), rel=1e-12)
    # the float underflows, the bound does not: a positive Probability that prints from its log
    assert m.log_failure_prob < -745 and 0.0 < m.failure_prob <= 5e-324
    # mu_tail comes from the symbolic identification: lim eps^2/(-2 log delta) = 1/2
    assert m.mu_tail == pytest.approx(math.sqrt(0.5), rel=1e-12)
    assert m.lower <= g_ref(p, m.argmax) + 1e-9
    assert max(g_ref(p, x) for x in (0.5, 1.0, 10.0, 50.0)) <= m.upper


def test_head_bound_failure_probability_and_refinement() -> None:
    # refine=True measures the refined profile (theory §2): never worse, and finite here
    p = Profile(sympy.Min(2 * E(-(eps**2)), 1))
    m = measure(p, 5.0, 1e-5, identify=False)
    assert m.refined and math.isfinite(m.upper)
    raw = measure(p, 5.0, 1e-5, refine=False, identify=False)
    assert raw.upper == math.inf and m.upper <= raw.upper
    # independent check of the refined bracket: 40-digit point values of the refined GDPT
    r = m.profile
    assert max(g_ref(r, x) for x in np.linspace(0.0, 5.0, 11)) <= m.upper


def test_float_slack_covers_log_delta_mu_error() -> None:
    # the float re-check rests on log_delta_mu's relative error being below _LOG_SLACK
    # where log delta <= _NEAR_ONE (closer to delta = 1 it uses ball arithmetic):
    # compare with 40-digit mpmath (precise.log_delta_mu) over a wide random sample
    rng = np.random.default_rng(7)
    for _ in range(150):
        x = float(10 ** rng.uniform(-6, 3.3))
        m = float(10 ** rng.uniform(-3.3, 2))
        ref = float(precise.log_delta_mu(x, m, dps=DPS))
        if ref > _NEAR_ONE:
            continue
        got = float(log_delta_mu(x, m, rounding="nearest"))
        assert abs(got - ref) <= _LOG_SLACK * abs(ref) + 1e-300, (x, m, got, ref)
        # the re-check asks for the lower bound: below the truth, within 2e-11 of it
        down = float(log_delta_mu(x, m, rounding="down"))
        assert ref - 2e-11 * abs(ref) <= down <= ref, (x, m, down, ref)


# -- gdpt --------------------------------------------------------------------------------


def test_gdpt_vectorised_and_in_log_space() -> None:
    p = Profile(E(-(eps**2)))
    xs = np.array([0.5, 10.0, 50.0])
    got = gdpt(p, xs)
    assert got.shape == (3,)
    # theory §5 quotes G(10) ~ 0.71289 and G(50) ~ 0.70497; here the 40-digit inverse
    for x, g in zip(xs, got, strict=True):
        ref = float(precise.mu_gdp(x, log_delta=-(x**2), dps=DPS))
        assert g == pytest.approx(ref, rel=1e-12)
    assert isinstance(gdpt(p, 50.0), float)


# -- refusals ----------------------------------------------------------------------------


def test_bad_arguments() -> None:
    p = laplace(1.0)
    with pytest.raises(DomainError, match="eps_h"):
        measure(p, -1.0)
    with pytest.raises(DomainError, match="tol"):
        measure(p, 10.0, 0.0)
    with pytest.raises(DomainError, match="method"):
        measure(p, 10.0, method="grid")
    with pytest.raises(PrecisionError, match="certify=True"):
        measure(p, 10.0, 1e-11, refine=False, certify=False)
    with pytest.raises(ConvergenceError, match="max_evaluations"):
        measure(GaussianLogDelta(1.0), 10.0, 1e-6, refine=False, max_evaluations=2_000)
    with pytest.raises(PrecisionError, match="cannot certify"):
        measure(GaussianLogDelta(1.0), 1.0, 1e-3, refine=False, certify=True)
    with pytest.raises(DomainError):
        Measurement(lower=2.0, upper=1.0, eps_h=1.0, tol=1.0, covers_tail=False,
                    mu_tail=0.0, failure_prob=0.0, log_failure_prob=0.0, refined=False,
                    method="staircase", certified=False, evaluations=0, argmax=0.0)


def test_certified_below_float_limit() -> None:
    # G approaches its sup linearly at a jump, so tol 1e-11 takes few evaluations here
    # (delta = 1/4 on [0, 2), e^{-eps}/100 after; for eps in [2, 5] monotonicity gives
    # G <= mu_GDP(5, e^{-2}/100), smaller than the limit at 2-)
    p = Profile(sympy.Piecewise((sympy.Rational(1, 4), eps < 2), (E(-eps) / 100, True)))
    truth = float(precise.mu_gdp(2, sympy.Rational(1, 4), dps=DPS))
    with mpmath.workdps(DPS):
        assert precise.mu_gdp(5, mpmath.exp(-2) / 100, dps=DPS) < truth
    m = measure(p, 5.0, 1e-11, refine=False, certify=True, identify=False)
    check(m, truth, 1e-11)
    assert m.certified


def test_log_near_one_profile_is_right_or_refused() -> None:
    # 1e15*log(1 + 3e-16 e^{-eps/100}) ~ 0.3 e^{-eps/100}: float64 as written rounds the
    # argument of log to a neighbour of 1 (values off by tens of per cent); the evaluator
    # computes it as log1p and judges that form.  Either the measurement is refused or
    # its bracket holds the supremum of the GDPT (reference: G at 40 digits with the
    # profile in log1p form, on a grid with golden-section refinement; G decreases here,
    # so the maximum is at or near eps = 0).
    p = Profile(sympy.Float(1e15) * sympy.log(1 + sympy.Float(3e-16) * E(-eps / 100)))
    try:
        m = measure(p, 5.0, 1e-4, refine=False, identify=False)
    except PrecisionError as exc:
        assert "inaccurate" in str(exc) or "cannot resolve" in str(exc)
        return

    def g(x: float) -> mpmath.mpf:
        with mpmath.workdps(DPS):
            t = mpmath.mpf(3e-16) * mpmath.exp(-mpmath.mpf(x) / 100)
            d = mpmath.mpf(1e15) * mpmath.log1p(t)
            return precise.mu_gdp(x, d, dps=DPS)

    truth = max(g(float(x)) for x in np.linspace(0.0, 5.0, 51))
    assert m.lower - 1e-9 <= truth <= m.upper


def test_measurement_str_and_width() -> None:
    m = measure(laplace(1.0), 10.0, 1e-6, refine=False)
    assert m.width == m.upper - m.lower
    assert mu_laplace_ref(1.0) in m
    assert "GDP" in str(m)


def test_profile_methods_delegate_here() -> None:
    p = laplace(1.5)
    m = p.measure(10.0, 1e-6, refine=False, identify=False)
    check(m, mu_laplace_ref(1.5), 1e-6)
    assert p.gdpt(0.0) == gdpt(p, 0.0)


def test_printed_measurement_is_rounded_outwards_and_still_true():
    """str() and the Jupyter reprs print a bracket that still contains the truth.
    Reference: Laplace mu = -2 Phi^{-1}(e^{-eps0/2}/2) at 40 digits (closed form)."""
    import re

    import mpmath
    import sympy

    from symgdp import Profile, eps

    e0 = 1.0
    with mpmath.workdps(40):
        truth = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 * (mpmath.exp(-mpmath.mpf(e0) / 2) / 2)
                                                    - 1)
    m = Profile(sympy.Max(1 - sympy.exp((eps - e0) / 2), 0)).measure(eps_h=10, tol=1e-6)
    for text in (str(m), m._repr_markdown_(), m._repr_latex_()):
        lo, up = (mpmath.mpf(v) for v in re.search(r"\[([0-9.]+), ([0-9.]+)\]", text).groups())
        assert lo <= truth <= up
    assert "GDP" in m._repr_latex_() and m._repr_latex_().startswith("$")


def test_a_constant_sympy_rounded_beyond_float_range_is_flagged():
    # SymPy splits exp(Float(c) - loggamma(eps + N)) into K * exp(-loggamma(eps + N)) with
    # K = exp(c) evaluated at 53 bits (here beyond the float64 range): the bracket is for
    # the stored K (checked against ball arithmetic of the stored expression), and the
    # user is told that K is not the exact value meant
    import warnings

    from symgdp.errors import SymgdpWarning

    c = float(mpmath.loggamma(10**6))
    p = Profile(sympy.exp(sympy.Float(c) - sympy.loggamma(eps + 10**6) - sympy.Rational(1, 10)))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        m = measure(p, eps_h=2, tol=1e-4, refine=False, identify=False, certify=True)
    assert any(issubclass(w.category, SymgdpWarning) and "float64 range" in str(w.message)
               for w in got)
    assert any("float64 range" in n for n in m.notes)
    # independent truth for the stored expression (mpmath at 60 digits: the stored K as
    # its exact binary, loggamma by mpmath): delta is decreasing, so sup G is at eps = 0,
    # G(0) = 2 sqrt(2) erfinv(delta(0))
    (k,) = [f for f in p.expr.atoms(sympy.Float) if abs(f) > 1e300]
    with mpmath.workdps(60):
        d = mpmath.exp(mpmath.log(mpmath.mpf(k._mpf_)) - mpmath.loggamma(10**6))
        g0 = 2 * mpmath.sqrt(2) * mpmath.erfinv(d)
    assert m.lower <= float(g0) <= m.upper


@pytest.mark.parametrize("e0", [0.3, 1.7])
def test_certified_search_steers_by_balls_not_float64_values(e0, monkeypatch):
    """A certified first-order measurement takes its steering values from the point balls
    (every bound is proved afterwards): it needs no float64 profile value.  Reference: the
    Laplace closed form mu = -2 Phi^{-1}(e^{-e0/2}/2) at 40 digits; second route: the same
    measurement steered by float64 values."""
    import importlib

    from symgdp import mechanisms

    search_module = importlib.import_module("symgdp.measurement.search")

    with mpmath.workdps(40):
        truth = -2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.exp(-mpmath.mpf(e0) / 2) - 1)
    p = mechanisms.laplace(e0)
    p.validate()  # the quick grid check before the search uses float64 values
    calls = []
    plain = Profile.log_delta

    def counted(self: Profile, x: Any) -> Any:
        calls.append(np.size(x))
        return plain(self, x)

    monkeypatch.setattr(Profile, "log_delta", counted)
    m = p.measure(eps_h=30, tol=1e-9, refine=False, identify=False)
    assert m.certified and m.method == "first-order"
    assert calls == []  # no float64 value steered the search
    monkeypatch.setattr(Profile, "log_delta", plain)
    assert m.lower <= truth <= m.upper and m.upper - m.lower <= 1e-9
    monkeypatch.setattr(search_module._BallSteered, "__call__",
                        search_module._Counted.__call__)
    f = mechanisms.laplace(e0).measure(eps_h=30, tol=1e-9, refine=False, identify=False)
    assert f.certified and f.lower <= truth <= f.upper
    assert max(m.lower, f.lower) <= min(m.upper, f.upper)
