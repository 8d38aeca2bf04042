"""The exact k-fold composition profile of eps0-DP (Kairouz, Oh & Viswanath 2015, Thm 3.3)
in its piecewise form: values, ball enclosures of it and its derivatives, and guaranteed
GDP brackets, for k from 1 to 1000.

References, all independent of symgdp's code:

* ``kov_delta``: the KOV sum in its original (p, q) form, exact binomials, 60 digits;
* ``kov_mu``: the tightest GDP mu from the trade-off curve of k-fold randomized response,
  whose vertices are (Q(i < t), 1 - P(i < t)) for the number i of flipped answers; the
  curve is piecewise linear and G_mu convex, so f >= G_mu holds iff it holds at every
  vertex, i.e. mu* = max_t Phi^-1(1 - alpha_t) - Phi^-1(beta_t) (Dong, Roth & Su 2021,
  Def. 2.1 and Thm 2.7), in 50-digit mpmath;
* closed forms: ``mu_from_pure_dp`` for k = 1 is checked against -2 Phi^-1(1/(1 + e^eps0)).
"""

from __future__ import annotations

import fractions
import math

import mpmath
import numpy as np
import pytest
import sympy
from flint import arb, ctx
from scipy import special

from symgdp import Profile
from symgdp import composition as C
from symgdp.errors import SymgdpError
from symgdp.evaluation.trust import _zero_condition
from symgdp.measurement.measure import measure

KS = [1, 2, 10, 50, 200, 1000]


def kov_delta(eps0: float | mpmath.mpf, k: int, eps: float | mpmath.mpf) -> mpmath.mpf:
    """KOV Theorem 3.3 in its original (p, q) form, sum_j binom(k, j) (p^j q^(k-j) -
    e^eps q^j p^(k-j))_+, at 30 digits more than the caller's precision (eps0 exact)."""
    with mpmath.workdps(mpmath.mp.dps + 30):
        e0, ee = mpmath.mpf(eps0), mpmath.exp(mpmath.mpf(eps))
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        q = 1 - p
        a, b = q**k, p**k  # binom(k, j) p^j q^(k-j) and binom(k, j) q^j p^(k-j), j = 0
        terms = []
        for j in range(k + 1):
            terms.append(max(a - ee * b, 0))
            a, b = a * (k - j) / (j + 1) * (p / q), b * (k - j) / (j + 1) * (q / p)
        return +mpmath.fsum(terms)


def _ndtri(y: mpmath.mpf) -> mpmath.mpf:
    """Phi^-1(y) for 0 < y < 1, also for tiny y: Newton's method on log Phi."""
    if y > 0.5:
        return -_ndtri(1 - y)
    x = mpmath.mpf(special.ndtri(max(float(y), 1e-300)))
    for _ in range(100):
        step = (mpmath.log(mpmath.ncdf(x)) - mpmath.log(y)) * mpmath.ncdf(x) / mpmath.npdf(x)
        x -= step
        if abs(step) < mpmath.mpf(10) ** (-mpmath.mp.dps + 5):
            return x
    raise AssertionError("no convergence")


def kov_mu(eps0: float | mpmath.mpf, k: int) -> float:
    """Tightest GDP mu of k-fold randomized response from its trade-off vertices
    (alpha_t, beta_t) = (Q(i < t), P(i >= t)): mu_t = -Phi^-1(alpha_t) - Phi^-1(beta_t),
    every vertex scanned in float64, the best ones at 50 digits."""
    with mpmath.workdps(50):
        e0 = mpmath.mpf(eps0)
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        q = 1 - p
        prob_p = [mpmath.binomial(k, i) * p**(k - i) * q**i for i in range(k + 1)]
        prob_q = [mpmath.binomial(k, i) * q**(k - i) * p**i for i in range(k + 1)]
        alpha, beta = [], []  # running sums of positive terms (no cancellation)
        for t in range(1, k + 1):
            alpha.append((alpha[-1] if alpha else 0) + prob_q[t - 1])
            beta.append((beta[-1] if beta else 0) + prob_p[k + 1 - t])
        beta.reverse()  # beta[t - 1] = P(i >= t)
        rough = [-special.ndtri(float(a)) - special.ndtri(float(b)) if min(a, b) > 1e-300
                 else -math.inf for a, b in zip(alpha, beta, strict=True)]
        best = int(np.argmax(rough))
        near = range(max(best - 3, 0), min(best + 4, k))
        return float(max(-_ndtri(alpha[t]) - _ndtri(beta[t]) for t in near))


def exact_top(eps0: float, k: int) -> fractions.Fraction:
    return fractions.Fraction(eps0) * k


def grid(eps0: float, k: int) -> list[float]:
    """0, points inside pieces, levels and their float neighbours, and k*eps0 approached
    to the last double below the exact level."""
    top = exact_top(eps0, k)
    below = float(top)
    if fractions.Fraction(below) >= top:
        below = math.nextafter(below, -math.inf)
    pts = {0.0, eps0 / 3, 0.37 * k * eps0, float(top) * (1 - 1e-3), float(top) - 1e-9,
           below}
    for u in (1, 2, (k + 1) // 2 - 1):
        if 0 < u < (k + 1) // 2:
            lv = (k - 2 * u) * eps0
            pts |= {lv, math.nextafter(lv, -math.inf), math.nextafter(lv, math.inf),
                    lv + 0.5 * eps0}
    return sorted(x for x in pts if 0 <= x and fractions.Fraction(x) < top)


@pytest.mark.parametrize("eps0,k", [(0.2, k) for k in KS] + [(0.7, 33), (0.7, 200)])
def test_values_against_the_kov_sum(eps0, k):
    # reference: kov_delta (60-digit KOV sum); also the ball enclosure and mp()
    p = C.optimal_pure_dp(eps0, k)
    f = p.arb_delta()
    xs = grid(eps0, k)
    got = p.log_delta(np.array(xs))
    for x, g in zip(xs, got, strict=True):
        with mpmath.workdps(50):  # 80 digits: next to k*eps0 the sum cancels ~16 of them
            ref = kov_delta(eps0, k, x)
        assert ref > 0, x
        with mpmath.workdps(40):
            assert g == pytest.approx(float(mpmath.log(ref)), rel=1e-12, abs=1e-13), x
            assert abs(p.mp(x) / ref - 1) < mpmath.mpf(10) ** -30, x
        with ctx.workprec(64):
            assert f(x).contains(arb(mpmath.nstr(ref, 50))), x
    # from the exact level k*eps0 on the profile is exactly 0
    top = exact_top(eps0, k)
    first_zero = float(top) if fractions.Fraction(float(top)) >= top else \
        math.nextafter(float(top), math.inf)
    # the reference is 0 there up to its own rounding (its terms cancel exactly)
    assert kov_delta(eps0, k, first_zero) <= mpmath.mpf(10) ** -(mpmath.mp.dps + 20)
    assert p.log_delta(first_zero) == -math.inf
    assert C.optimal_log_delta(eps0, k, first_zero + 1.0) == -math.inf
    with ctx.workprec(64):
        z = f(first_zero)
    assert z.is_exact() and z.is_zero()


def test_float_parameter_and_exact_parameter_are_different_profiles():
    # reference: kov_delta with eps0 exactly 1/3 versus the double nearest 1/3; next to
    # a level the two differ in their first digit, and each evaluation follows its own
    e_exact = sympy.Rational(1, 3)
    p_exact, p_float = C.optimal_pure_dp(e_exact, 9), C.optimal_pure_dp(1 / 3, 9)
    x = 3.0 - 1e-15  # the exact level 9 * 1/3 = 3 lies above the float one
    with mpmath.workdps(60):
        third = mpmath.mpf(1) / 3
        refs = [kov_delta(third, 9, x), kov_delta(1 / 3, 9, x)]
    assert abs(refs[0] / refs[1] - 1) > 0.1
    for prof, ref in zip((p_exact, p_float), refs, strict=True):
        with ctx.workprec(64):
            assert prof.arb_delta()(x).contains(arb(mpmath.nstr(ref, 50)))


def _sample(a: float, b: float) -> list[float]:
    return [a + (b - a) * s for s in (0.1, 0.5, 0.9)]


@pytest.mark.parametrize("eps0,k,a,b", [
    (0.2, 10, 0.45, 0.55),      # inside one piece (levels 0.4, 0.8)
    (0.2, 10, 0.3, 1.1),        # across the levels 0.4 and 0.8
    (0.2, 50, 9.5, 9.999),      # the top piece, delta -> 0 at 10
    (0.7, 33, 0.0, 2.5),        # across several levels from 0
])
def test_derivative_enclosures_contain_numerical_derivatives(eps0, k, a, b):
    # reference: mpmath.diff of kov_delta at points of [a, b] (off the levels)
    kov = C.optimal_pure_dp(eps0, k)._pieces()
    levels = [(k - 2 * u) * eps0 for u in range((k + 1) // 2)]
    one_piece = not any(a < lv < b for lv in levels)
    with ctx.workprec(64):
        m, r = 0.5 * (a + b), 0.5 * (b - a)
        ball = arb(m, r)
        d1, l1, l2 = (kov.ball(ball, kind) for kind in ("d1", "l1", "l2"))
        assert all(v <= 0 for v in kov.parts(ball, "d1"))
    assert one_piece == l2.is_finite()
    for t in _sample(a, b):
        assert all(abs(t - lv) > 1e-6 for lv in levels)
        with mpmath.workdps(40):
            f = lambda e: kov_delta(eps0, k, e)  # noqa: E731
            v, dv = f(t), mpmath.diff(f, t)
            d2v = mpmath.diff(f, t, 2)
            checks = [(d1, dv), (l1, dv / v)]
            if one_piece:
                checks.append((l2, d2v / v - (dv / v) ** 2))
            for enc, ref in checks:
                tol = abs(ref) * mpmath.mpf(10) ** -15
                assert enc.lower() <= arb(mpmath.nstr(ref + tol, 30)), (t, enc, ref)
                assert enc.upper() >= arb(mpmath.nstr(ref - tol, 30)), (t, enc, ref)


@pytest.mark.parametrize("k", KS)
def test_measure_brackets_contain_the_tradeoff_mu(k):
    # reference: kov_mu (trade-off vertices, 50 digits); for k = 1 also the closed form
    eps0 = 0.2
    truth = kov_mu(eps0, k)
    if k == 1:
        with mpmath.workdps(30):
            closed = float(-2 * _ndtri(1 / (1 + mpmath.exp(mpmath.mpf(eps0)))))
        assert truth == pytest.approx(closed, rel=1e-14)
        assert C.mu_from_pure_dp(eps0) == pytest.approx(closed, rel=1e-14)
    p = C.optimal_pure_dp(eps0, k)
    eps_h = k * eps0 + 0.5
    runs = [(False, 1e-6), (True, 1e-6)] + ([(True, 1e-9)] if k in (10, 200) else [])
    for certify, tol in runs:
        m = measure(p, eps_h, tol, refine=False, identify=False, certify=certify)
        assert m.lower <= truth <= m.upper, (certify, tol, m.lower, truth, m.upper)
        assert m.upper - m.lower <= tol
        assert m.certified == certify and m.covers_tail and m.method == "first-order"


@pytest.mark.parametrize("eps0,k", [(0.7, 33), (sympy.Rational(1, 3), 9), (1e-8, 3),
                                    (3.0, 7)])
def test_measure_with_awkward_parameters(eps0, k):
    # reference: kov_mu with eps0 taken exactly (a Rational stays exact in the balls)
    with mpmath.workdps(60):
        e0 = mpmath.mpf(1) / 3 if isinstance(eps0, sympy.Rational) else eps0
        truth = kov_mu(e0, k)
    m = C.optimal_pure_dp(eps0, k).measure(eps_h=100, tol=1e-6, identify=False)
    assert m.certified and m.lower <= truth <= m.upper and m.upper - m.lower <= 1e-6


def test_measure_on_the_benchmark_head():
    # eps_h = 100 beyond k eps0 = 40 (the benchmark's setting); reference: kov_mu
    truth = kov_mu(0.2, 200)
    for certify in (False, True):
        m = measure(C.optimal_pure_dp(0.2, 200), 100, 1e-6, refine=False, identify=False,
                    certify=certify)
        assert m.lower <= truth <= m.upper and m.covers_tail


def test_optimal_mu_and_table_row_for_large_k():
    # reference: kov_mu; the GDP summary row is eps_gdp of the guaranteed upper bound
    lo, up = C.optimal_mu(0.2, 1000)
    assert lo <= kov_mu(0.2, 1000) <= up and up - lo <= 1e-8
    t = C.table(0.2, 1000, [1e-3], rows=("optimal", "gdp_summary"))
    assert t.mus["gdp_summary"] == up


def test_errors_stay_symgdp_errors():
    # delta(0) within 1e-10000 of 1: refused with a SymgdpError, never OverflowError
    p = C.optimal_pure_dp(50.0, 1000)
    with pytest.raises(SymgdpError):
        p.measure(eps_h=10, tol=1e-6, identify=False)


def test_zero_condition_of_a_long_sum_without_writing_it_out():
    # reference: kov_delta is exactly 0 from k*eps0 on and positive below; the generic
    # Profile of the same Sum (not the piecewise class) recognises the exact zeros
    k = 300
    p = C.optimal_pure_dp(0.2, k)
    cond = _zero_condition(Profile(p.expr, p.values).bound_expr)
    assert cond.has(sympy.Sum)  # one compact condition, not 301 inequalities
    q = Profile(p.expr, p.values)
    xs = np.array([0.0, 30.0, 59.9, 60.5, 80.0])
    mask = q._evaluator().zero_mask(xs)
    for x, z in zip(xs, mask, strict=True):
        assert bool(z) == (kov_delta(0.2, k, x) == 0), x
    # a short sum with a compound condition is still written out; a long one is "unknown"
    i, e = sympy.Symbol("i", integer=True), sympy.Symbol("e")
    term = sympy.Max(1 - e * i, 0) * sympy.Max(e - i, 0)  # zero where either factor is
    short = _zero_condition(sympy.Sum(term, (i, 1, 3)))
    assert isinstance(short, sympy.And) and len(short.args) == 3
    assert _zero_condition(sympy.Sum(term, (i, 1, 500))) is sympy.false


def _mu_gdp(eps: float, delta: mpmath.mpf) -> mpmath.mpf:
    """The mu with delta_mu(eps) = delta (Dong, Roth & Su 2021, Cor. 2.13), by bisection:
    delta_mu(eps) is increasing in mu."""
    e = mpmath.mpf(eps)

    def d_mu(m: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    lo, hi = mpmath.mpf("1e-6"), mpmath.mpf(60)
    for _ in range(80):  # 60 * 2^-80 < 1e-22
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d_mu(mid) < delta else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("eps_h", [0.1, 0.4, 3.7])
def test_measure_on_a_head_that_ends_early(eps_h):
    # the head [0, eps_h] ends before (0.1), on (0.4, a level) or after the argmax of the
    # 50-fold GDPT; reference: 40-digit GDPT values G(x) = mu_gdp(x, kov_delta(x)) on a
    # grid of the head, each a lower bound on the supremum, and at the returned argmax
    p = C.optimal_pure_dp(0.2, 50)
    xs = np.linspace(0.0, eps_h, 21)
    with mpmath.workdps(40):
        g = [_mu_gdp(x, kov_delta(0.2, 50, x)) for x in xs]
    for certify in (False, True):
        m = measure(p, eps_h, 1e-6, refine=False, identify=False, certify=certify)
        assert m.upper - m.lower <= 1e-6
        assert max(float(v) for v in g) <= m.upper
        if m.covers_tail:
            # the whole line proved: G beyond the head, to the end of the support
            # (eps0 * k = 10, where delta is 0), stays below the upper end (40 digits)
            with mpmath.workdps(40):
                far = [_mu_gdp(x, kov_delta(0.2, 50, x))
                       for x in np.linspace(eps_h, 9.99, 120)]
            assert max(float(v) for v in far) <= m.upper
        with mpmath.workdps(40):
            assert m.lower <= _mu_gdp(m.argmax, kov_delta(0.2, 50, m.argmax))
