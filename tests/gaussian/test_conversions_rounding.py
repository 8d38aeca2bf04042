"""Every public numeric conversion of the GDP family and of rdp lies on its documented safe
side, for eps in [1e-300, 2000], mu in [1e-300, 1e3] and the other parameters' ranges.

Safe sides: delta_mu / log_delta_mu (the delta of a guarantee), mu_from_pure_dp and
compose_gdp (the mu of a guarantee), the Rényi quantities of rdp (upper bounds) are rounded
up by default; tradeoff_gdp (the curve type II errors stay above) is rounded down.  Each
"up" result must be >= the truth, each "down" result <= it, never NaN, never a negative
delta, and close to the truth.

References (independent of the float code; each test says which):
* ``ref_log_delta``: delta_mu = Phi(a) - e^eps Phi(b) in mpmath at 60 digits plus the
  digits its subtraction loses (measured, then recomputed), and beyond |a| = 1e12, where
  mpmath's erfc gives up, the alternating Mills-ratio series
  Phi(-x)/phi(x) = 1/x - 1/x^3 + 3/x^5 - ... (remainder below its first omitted term,
  < 1e-90 relative there) at the digits its difference loses;
* the 50-digit closed forms of symgdp.gaussian.precise, each checked here by its defining equation
  in mpmath (a residual test of the reference itself);
* sqrt(sum mu_i^2) in 50-digit mpmath; log-sum-exp of the binomial sum of the subsampled
  Gaussian in 50-digit mpmath; the conversion formulas of rdp in 50-digit mpmath.
The profile (conftest) sets max_examples, no database, no deadline, derandomized.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from symgdp.gaussian import precise
from symgdp.gaussian import vectorised as g
from symgdp.notions import renyi as R

TINY = 5e-324

log_eps = st.floats(-300.0, math.log10(2000.0)).map(lambda t: 10.0**t)
eps_any = st.one_of(st.just(0.0), log_eps)
mus = st.floats(-300.0, 3.0).map(lambda t: 10.0**t)


def _mills(x: mpmath.mpf) -> mpmath.mpf:
    """Phi(-x)/phi(x) for x >= 1e12 by the asymptotic series (alternating; six terms)."""
    s, term = mpmath.mpf(0), 1 / x
    for k in range(6):
        s += term
        term *= -(2 * k + 1) / (x * x)
    return s


def ref_log_delta(eps: float, mu: float) -> mpmath.mpf:
    """log delta_mu(eps), independent of symgdp (see the module notes), to ~50 digits."""
    with mpmath.workdps(60):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        a0 = m / 2 - e / m
    if a0 < -1e12:
        # delta = phi(a) (M(-a) - M(-b)), b = a - mu: the difference is about
        # mu/a^2 against 1/|a|, so log10(|a|/mu) digits are lost
        lost = int(mpmath.log10(-a0 / m)) + 1
        with mpmath.workdps(60 + lost):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a = m / 2 - e / m
            b = a - m
            diff = _mills(-a) - _mills(-b)
            return -a * a / 2 - mpmath.log(2 * mpmath.pi) / 2 + mpmath.log(diff)
    work = 60
    while True:
        with mpmath.workdps(work):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a, b = m / 2 - e / m, -e / m - m / 2
            first = mpmath.ncdf(a)
            second = mpmath.exp(e) * mpmath.ncdf(b)
            d = first - second
            if d > 0:
                lost = int(mpmath.log10(first / d)) + 1
                if lost + 55 <= work:
                    if d < mpmath.mpf(1) / 2:
                        return mpmath.log(d)
                    return mpmath.log1p(-(mpmath.ncdf(-a) + second))
                work = 60 + lost
            else:
                work *= 2
        assert work < 20000


# eps near mu^2/2, where the float code switches between its two forms (a = 0)
near_switch = st.tuples(mus.filter(lambda m: m > 1e-150), st.floats(-1e-3, 1e-3)).map(
    lambda t: (t[0] * t[0] / 2 * (1 + t[1]), t[0]))
eps_mu_pairs = st.one_of(st.tuples(eps_any, mus), near_switch)


@given(eps_mu_pairs)
@example((2000.0, 1e-300))  # a = -2e303: the Mills-series reference
@example((1e-300, 1e-300))
@example((1e-300, 1e3))  # delta within 1e-54000 of 1
@example((2000.0, 1e3))
@example((40.0, 1.0))  # delta underflows float64
@example((2000.0, 2.0))  # log delta near -5e5
@example((745.0, 38.6))  # log delta near -745, delta subnormal
@example((0.0, 5e-324))
@example((4995.0, 100.0))  # eps near mu^2/2 = 5000: the exponent's absolute error
def test_log_delta_and_delta_on_their_sides(pair):
    eps, mu = pair
    ref = ref_log_delta(eps, mu)
    up = g.log_delta_mu(eps, mu)
    down = g.log_delta_mu(eps, mu, rounding="down")
    vec = g.log_delta_mu(np.array([eps, eps]), np.array([mu, mu]))
    vdown = g.log_delta_mu(np.array([eps]), np.array([mu]), rounding="down")
    for u in (up, float(vec[0])):
        assert not math.isnan(u) and u <= 0.0
        assert u >= ref, (eps, mu, u, ref)
        # close, unless the exact log is beyond the float range (then -1.8e308): 1e-11
        # relative, plus the error bound of the exponent eps - x^2/2, formed in floats to
        # about eps*u and moved by the error model's 32 of them (7e-15*eps; 2e-14*eps
        # allowed; found at eps = 4995, mu = 100: 6.7e-11 above the 60-digit value)
        slack = 1e-11 * abs(ref) + 2e-14 * eps + 1e-300
        assert u <= max(ref + slack, -np.finfo(float).max)
    for d in (down, float(vdown[0])):
        assert d <= ref, (eps, mu, d, ref)
        if ref > -1e308:  # else -inf is the float below it
            assert d >= ref - 1e-11 * abs(ref) - 2e-14 * eps - 1e-300
    # delta itself: up never below exp(ref) and never 0 (delta_mu > 0 for finite eps)
    dref = mpmath.exp(ref)
    dup = g.delta_mu(eps, mu)
    ddown = g.delta_mu(eps, mu, rounding="down")
    vup = float(g.delta_mu(np.array([eps]), np.array([mu]))[0])
    for u in (dup, vup):
        assert 0.0 < u <= 1.0 and u >= dref, (eps, mu, u, dref)
        assert u <= dref * (1 + 1e-10) + 3 * TINY
    assert 0.0 <= ddown <= dref, (eps, mu, ddown, dref)
    assert ddown >= dref * (1 - 1e-10) - 3 * TINY


def test_delta_rounding_edges():
    # exact ends: mu = 0 (no information), mu = inf (no privacy), eps = inf
    for r in ("up", "down", "nearest"):
        assert g.delta_mu(1.0, 0.0, rounding=r) == 0.0
        assert g.delta_mu(1.0, math.inf, rounding=r) == 1.0
        assert g.log_delta_mu(math.inf, 1.0, rounding=r) == -math.inf
        assert g.log_delta_mu(1.0, math.inf, rounding=r) == 0.0
        assert math.isnan(g.delta_mu(math.nan, 1.0, rounding=r))
    with pytest.raises(g.DomainError):
        g.delta_mu(1.0, 1.0, rounding="sideways")


# up to 1e8 (the mpmath reference's erfc overflows near eps0 = 1e300)
rr_eps = st.one_of(st.just(5e-324), log_eps, st.floats(3.3, 8.0).map(lambda t: 10.0**t))


@given(rr_eps)
@example(5e-324)  # eps0/2 underflows: the series
@example(1e-10)  # the series' edge
@example(1.0)  # the two float formulas meet
@example(2000.0)
@example(1e8)
def test_mu_from_pure_dp_sides(eps0):
    # reference: symgdp.gaussian.precise at 50 digits, checked by its defining equation
    # Phi(-mu/2) = 1/(1 + e^eps0) in log form
    ref = precise.mu_from_pure_dp(eps0, dps=50)
    with mpmath.workdps(60):
        lhs = mpmath.log(mpmath.ncdf(-ref / 2))
        rhs = -mpmath.log1p(mpmath.exp(mpmath.mpf(eps0)))
        assert abs(lhs - rhs) <= mpmath.mpf(10) ** -40 * abs(rhs)
    up = g.mu_from_pure_dp(eps0)
    down = g.mu_from_pure_dp(eps0, rounding="down")
    vec = float(g.mu_from_pure_dp(np.array([eps0]))[0])
    assert down <= ref <= up and ref <= vec, (eps0, down, ref, up)
    assert up <= ref * (1 + 1e-13) + 3 * TINY
    assert down >= ref * (1 - 1e-13) - 3 * TINY


@given(st.lists(st.one_of(st.just(0.0), mus, st.just(5e-324)), min_size=1, max_size=6))
@example([5e-324, 5e-324, 5e-324])  # subnormal roundings
@example([1e300, 1e300])  # the squares overflow: hypot does not
@example([3.0, 4.0])
def test_compose_gdp_sides(ms):
    # reference: sqrt(sum mu_i^2) in 50-digit mpmath (the floats are exact there)
    with mpmath.workdps(50):
        ref = mpmath.sqrt(mpmath.fsum(mpmath.mpf(m) ** 2 for m in ms))
    up = g.compose_gdp(*ms)
    down = g.compose_gdp(*ms, rounding="down")
    vec = float(g.compose_gdp(*[np.array([m]) for m in ms])[0])
    assert down <= ref <= up and ref <= vec, (ms, down, ref, up)
    assert up <= ref * (1 + 1e-14) + 3 * TINY
    assert down >= ref * (1 - 1e-14) - 3 * TINY


alphas01 = st.one_of(st.floats(-300.0, -0.31).map(lambda t: 10.0**t),
                     st.floats(-16.0, -0.31).map(lambda t: 1.0 - 10.0**t),
                     st.floats(0.0, 1.0))
mus_g = st.one_of(st.just(0.0), mus)


@given(alphas01, mus_g)
@example(1e-300, 1e-300)
@example(1e-300, 1e3)
@example(0.5, 37.0)  # G near the float64 underflow
@example(1.0 - 2**-53, 1e-300)
@example(0.3, 0.0)
def test_tradeoff_gdp_sides(alpha, mu):
    # reference: symgdp.gaussian.precise at 50 digits, its quantile checked by Phi(z) = alpha
    ref = precise.tradeoff_gdp(alpha, mu, dps=50)
    if 0 < alpha < 1:
        with mpmath.workdps(60):
            z = -precise._norm_quantile_log(mpmath.log(mpmath.mpf(alpha)), 60)
            assert abs(mpmath.ncdf(-z) - alpha) <= mpmath.mpf(10) ** -45 * alpha
    down = g.tradeoff_gdp(alpha, mu)
    up = g.tradeoff_gdp(alpha, mu, rounding="up")
    vec = float(g.tradeoff_gdp(np.array([alpha]), np.array([mu]))[0])
    assert 0.0 <= down <= ref <= up <= 1.0, (alpha, mu, down, ref, up)
    assert vec <= ref
    assert down >= ref * (1 - 1e-10) - 3 * TINY
    assert up <= ref * (1 + 1e-10) + 3 * TINY


# -- rdp ---------------------------------------------------------------------------------
def _mp_log_a(q: float, sigma: float, a: int) -> mpmath.mpf:
    """log A_alpha of the subsampled Gaussian: the binomial sum in 50-digit mpmath."""
    with mpmath.workdps(50):
        qq, s = mpmath.mpf(q), mpmath.mpf(sigma)
        lq, lp, two_s2 = mpmath.log(qq), mpmath.log1p(-qq), 2 * s * s  # hoisted
        terms = [mpmath.log(math.comb(a, k)) + k * lq + ((a - k) * lp if k < a else 0)
                 + mpmath.mpf(k * k - k) / two_s2 for k in range(a + 1)]
        m = max(terms)
        return m + mpmath.log(mpmath.fsum(mpmath.exp(t - m) for t in terms))


@pytest.mark.slow
@given(st.floats(-12.0, 0.0).map(lambda t: 10.0**t), st.floats(-1.0, 3.0).map(lambda t: 10.0**t),
       st.lists(st.integers(2, 300), min_size=1, max_size=4))
@example(1.0, 1.0, [2])
@example(1e-12, 0.1, [300])  # huge exponents k^2/(2 sigma^2)
@example(0.5, 1000.0, [2, 3])  # A_alpha within 1e-7 of 1
def test_subsampled_gaussian_log_a_up(q, sigma, orders):
    got = R.subsampled_gaussian_log_a(q, sigma, orders)
    for a, v in zip(orders, got, strict=True):
        ref = _mp_log_a(q, sigma, a)
        assert v >= ref, (q, sigma, a, v, ref)
        assert v <= ref + 1e-12 * (abs(ref) + a * math.log(a) + 1)


def _mp_rr(e0: float, a: float) -> mpmath.mpf:
    """Rényi divergence of randomized response: log(cosh((a - 1/2) e0)/cosh(e0/2))/(a - 1)
    at enough digits for its cancellation near a = 1 and e0 = 0."""
    lost = 3 * max(0.0, -math.log10(e0)) + max(0.0, -math.log10(a - 1.0))
    with mpmath.workdps(60 + int(lost)):
        e, al = mpmath.mpf(e0), mpmath.mpf(a)
        return mpmath.log(mpmath.cosh((al - mpmath.mpf(1) / 2) * e)
                          / mpmath.cosh(e / 2)) / (al - 1)


orders_real = st.lists(st.one_of(st.floats(-12.0, 0.0).map(lambda t: 1.0 + 10.0**t),
                                 st.floats(0.31, 4.0).map(lambda t: 10.0**t)),
                       min_size=1, max_size=4)


@given(log_eps, st.integers(1, 10**9), orders_real,
       st.one_of(log_eps, st.floats(0.0, 2000.0)))
@example(1e-6, 10**9, [1.0001], 1e-6)
@example(2000.0, 1, [1.0 + 1e-12, 1e4], 2000.0)
@example(1.0, 28, [1.00001], 0.4)
@example(1e-3, 1, [1.0 + 1e-9], 1e-3)
def test_log_delta_from_rdp_up(e0, k, orders, eps):
    # reference: the improved conversion in 50-digit mpmath at the same float curve values
    curve = k * R.pure_dp_rdp(e0, np.asarray(orders))
    got = R.log_delta_from_rdp(orders, curve, eps)
    with mpmath.workdps(50):
        vals = []
        for a, r in zip(orders, curve, strict=True):
            al, rr = mpmath.mpf(a), mpmath.mpf(float(r))
            vals.append((al - 1) * (rr - mpmath.mpf(eps)) + (al - 1) * mpmath.log1p(-1 / al)
                        - mpmath.log(al))
        ref = min(min(vals), mpmath.mpf(0))
    assert got >= ref, (e0, k, orders, eps, got, ref)
    assert got <= 0.0
    assert got <= ref + 1e-12 * (abs(ref) + 1)


@pytest.mark.slow
@given(log_eps, st.integers(1, 10**9), orders_real,
       st.floats(-300.0, 0.0).map(lambda t: 10.0**t))
@example(1e-300, 1, [1.0 + 1e-12], 1e-300)
@example(2000.0, 10**9, [1e4], 1.0)
@example(1.0, 28, [1.00001], 1.0)     # log1p(-1/alpha) near alpha = 1 (found in CI)
@example(1.0, 33, [1.000001], 1.0)
def test_eps_from_rdp_up(e0, k, orders, delta):
    # reference: the conversion formula in 50-digit mpmath at the same float curve values
    curve = k * R.pure_dp_rdp(e0, np.asarray(orders))
    got = R.eps_from_rdp(orders, curve, delta)
    with mpmath.workdps(50):
        vals = []
        for a, r in zip(orders, curve, strict=True):
            al = mpmath.mpf(a)
            vals.append(mpmath.mpf(float(r)) + mpmath.log1p(-1 / al)
                        - (mpmath.log(mpmath.mpf(delta)) + mpmath.log(al)) / (al - 1))
        ref = max(min(vals), mpmath.mpf(0))
    assert got >= ref, (e0, k, orders, delta, got, ref)
    assert got <= ref + 1e-12 * (abs(ref) + 1)


# -- composition.rdp_tight: never below the exact minimum over the orders ---------------
def _rdp_objective(e0: float, k: int, d: float, t: mpmath.mpf) -> mpmath.mpf:
    """k D_alpha(RR) + log(1 - 1/alpha) - (log d + log alpha)/(alpha - 1), alpha = 1 + e^t,
    in mpmath at 50 digits plus those D_alpha's closed form loses.

    log cosh x is written log1p(2 sinh^2(x/2)) (cosh x = 1 + 2 sinh^2(x/2)): exact to the
    working precision however small x, so a tiny eps costs no digits (the ratio of the two
    cosh's loses 2 log10(1/eps) digits); the difference of the two logs still cancels by
    (alpha - 1)/alpha, which the digits for t cover."""
    lost = max(0.0, -float(t) / math.log(10))
    with mpmath.workdps(50 + int(lost)):
        a = 1 + mpmath.exp(t)
        e = mpmath.mpf(e0)

        def log_cosh(x):
            return mpmath.log1p(2 * mpmath.sinh(x / 2) ** 2)

        rr = (log_cosh((a - mpmath.mpf(1) / 2) * e) - log_cosh(e / 2)) / (a - 1)
        conv = (mpmath.log(mpmath.mpf(d)) + mpmath.log(a)) / (a - 1)
        return k * rr + mpmath.log(1 - 1 / a) - conv


def _rdp_tight_min(e0: float, k: int, d: float) -> mpmath.mpf:
    """The minimum over t = log(alpha - 1) in [-8, 12] (rdp_tight's range, so at least the
    minimum over all orders): a 41-point grid, then golden section around its best point
    (the objective is unimodal in t on the cases tried; the grid guards the rest)."""
    with mpmath.workdps(50):
        ts = [mpmath.mpf(-8) + mpmath.mpf(i) / 2 for i in range(41)]
        vals = [_rdp_objective(e0, k, d, t) for t in ts]
        i = min(range(41), key=lambda j: vals[j])
        lo, hi = ts[max(i - 1, 0)], ts[min(i + 1, 40)]
        gr = (mpmath.sqrt(5) - 1) / 2
        for _ in range(90):
            x1, x2 = hi - gr * (hi - lo), lo + gr * (hi - lo)
            if _rdp_objective(e0, k, d, x1) < _rdp_objective(e0, k, d, x2):
                hi = x2
            else:
                lo = x1
        return min(min(vals), _rdp_objective(e0, k, d, (lo + hi) / 2))


@pytest.mark.slow
@given(log_eps, st.integers(1, 10**9), st.floats(-300.0, -1e-9).map(lambda t: 10.0**t))
@example(1e-6, 10**9, 1e-5)  # once 9e-9 relative below the minimum (cancellation)
@example(1e-300, 1, 0.999999)  # delta near 1: the log terms cancel
@example(2000.0, 10**9, 1e-300)
@example(1e-3, 1, 0.5)
def test_rdp_tight_never_below_the_minimum(e0, k, d):
    from symgdp import composition as C

    ref = _rdp_tight_min(e0, k, d)
    got = C.rdp_tight(e0, k, d)
    assert got >= max(ref, 0), (e0, k, d, got, ref)
