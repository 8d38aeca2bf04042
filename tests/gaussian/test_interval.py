"""Ball arithmetic for profiles and the GDP family (symgdp.evaluation.interval).

Every enclosure is tested as ``lower <= truth <= upper`` with the truth from 50-digit
mpmath computed here (independent of Arb).
"""

from __future__ import annotations

import math
import sys

import mpmath
import pytest
import sympy
from flint import arb, ctx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from symgdp.evaluation.interval import lambdify_arb, profile_arb
from symgdp.gaussian.gdp_balls import delta_mu_arb, log_delta_mu_arb
from symgdp.numerics.balls import ArbUnsupported, prove, to_arb
from symgdp.profile import Profile
from symgdp.symbolic.symbols import eps

E = sympy.exp
DPS = 50


def encloses(ball: arb, truth: mpmath.mpf) -> bool:
    """truth lies in the ball: compare with the ball's ends converted exactly to mpmath."""
    with mpmath.workdps(DPS + 20):
        lo = mpmath.mpf(ball.lower().str(DPS + 10, radius=False))
        hi = mpmath.mpf(ball.upper().str(DPS + 10, radius=False))
        # the decimal print of an end point is itself rounded: allow its last digit
        slack = (abs(lo) + abs(hi)) * mpmath.mpf(10) ** (-(DPS + 8))
        return lo - slack <= truth <= hi + slack


def delta_mu_ref(x: float, m: float) -> mpmath.mpf:
    """delta_mu(eps) at 50 digits, raising precision against cancellation (theory §3)."""
    work = DPS + 20
    while True:
        with mpmath.workdps(work):
            e, mu = mpmath.mpf(x), mpmath.mpf(m)
            a, b = -e / mu + mu / 2, -e / mu - mu / 2
            first = mpmath.ncdf(a)
            d = first - mpmath.exp(e) * mpmath.ncdf(b)
            if d > 0 and mpmath.log10(first / d) + DPS + 5 < work:
                return +d
            work *= 2


def test_to_arb_is_exact_for_binary_numbers() -> None:
    assert to_arb(0.1).is_exact() and to_arb(sympy.Float(0.1)).is_exact()
    # a SymPy Float is the binary number it stores, not the decimal it was typed as
    assert to_arb(sympy.Float(0.1)) == to_arb(0.1)
    third = to_arb(sympy.Rational(1, 3))
    assert (3 * third).contains(arb(1)) and not third.is_exact()
    assert to_arb(sympy.Integer(2) ** 80).is_exact()


@settings(max_examples=40)
@given(st.floats(0.0, 60.0), st.floats(0.05, 20.0))
@example(2000.0, 1.0)  # delta_1(2000) ~ 1.9e-868162 (theory §10)
@example(0.0, 1e-3)
@example(1e-6, 30.0)  # delta within 1e-40 of 1
def test_delta_mu_encloses_mpmath(x: float, m: float) -> None:
    ref = delta_mu_ref(x, m)
    for prec in (64, 256):
        assert encloses(delta_mu_arb(x, m, prec=prec), ref)
    with mpmath.workdps(DPS):
        assert encloses(log_delta_mu_arb(x, m, prec=128), mpmath.log(ref))


def test_delta_mu_far_tail() -> None:
    d = delta_mu_arb(2000.0, 1.0, prec=64)
    assert d > 0
    with mpmath.workdps(30):
        ref = delta_mu_ref(2000.0, 1.0)
        assert mpmath.nstr(ref, 3) == "1.88e-868162"
    assert encloses(d, ref)


def test_delta_mu_edges() -> None:
    assert delta_mu_arb(1.0, 0.0).is_zero()
    assert delta_mu_arb(1.0, math.inf) == 1


EXPRESSIONS = [
    sympy.Max(1 - E((eps - sympy.Rational(7, 3)) / 2), 0),  # Laplace, eps0 = 7/3
    sympy.Max(E(sympy.Float(1.3)) - E(eps), 0) / (1 + E(sympy.Float(1.3))),  # pure DP
    sympy.erfc(eps / sympy.sqrt(2) - sympy.Rational(1, 4)) / 2
    - E(eps) * sympy.erfc(eps / sympy.sqrt(2) + sympy.Rational(1, 4)) / 2,  # delta_mu, mu=1/sqrt2
    sympy.Min(3 * E(-(eps**2) * sympy.pi), 1),
    sympy.Piecewise((sympy.Rational(7, 10) - E(eps) / 5, eps < sympy.log(2)),
                    (E(-eps) / sympy.sqrt(8), True)),
    sympy.log(1 + E(-eps)) * sympy.erf(1 / (1 + eps)) / sympy.Abs(eps - 5),
    (1 + eps) ** sympy.Rational(-3, 2) * E(-eps) ** 2,
]


@pytest.mark.parametrize("k", range(len(EXPRESSIONS)))
@pytest.mark.parametrize("x", [0.0, 0.3, 0.6931471805599453, 1.3, 2.5, 7.75])
def test_lambdify_encloses_mpmath(k: int, x: float) -> None:
    expr = EXPRESSIONS[k]
    f = lambdify_arb(expr, eps)
    mp = sympy.lambdify(eps, expr, modules="mpmath")
    with mpmath.workdps(DPS):
        ref = mp(mpmath.mpf(x))
    for prec in (64, 200):
        with ctx.workprec(prec):
            v = f(x)
        assert encloses(v, ref), (expr, x, v, ref)


def test_piecewise_undecided_gives_the_hull() -> None:
    f = lambdify_arb(sympy.Piecewise((1 - eps, eps < 1), (eps / 4, True)), eps)
    ball = arb(1, 1e-3)  # straddles the breakpoint
    v = f(ball)
    assert v.contains(arb(0)) and v.contains(arb(0.25))  # both branches near eps = 1
    assert f(arb(0.5)) == 0.5 and f(arb(2)) == 0.5


def test_three_valued_logic() -> None:
    g = lambdify_arb(sympy.Piecewise((1, (eps > 1) & (eps < 2)), (0, True)), eps)
    assert g(1.5) == 1 and g(3.0) == 0
    assert g(arb(1, 0.5)).contains(arb(0)) and g(arb(1, 0.5)).contains(arb(1))


def test_integer_power_of_a_ball_straddling_zero_is_nonnegative() -> None:
    f = lambdify_arb((eps - 1) ** 2, eps)
    assert f(arb(1, 0.1)) >= 0


def test_unsupported_function_is_refused() -> None:
    with pytest.raises(ArbUnsupported, match="besselj"):
        lambdify_arb(sympy.besselj(0, eps), eps)
    with pytest.raises(ArbUnsupported, match="unbound"):
        lambdify_arb(eps * sympy.Symbol("k"), eps)


def test_profile_arb_reads_values_above_one_as_one() -> None:
    k = sympy.Symbol("k", positive=True)
    f = profile_arb(Profile(k * E(-eps), {"k": 3}))
    assert f(0.0) == 1
    assert encloses(f(2.0), 3 * mpmath.exp(-2))


def test_prove_raises_precision_until_decided() -> None:
    # 1 + 2^-100 > 1 is invisible at 64 bits and decided at 128
    assert prove(lambda: arb(1) + arb(2) ** -100 > arb(1) or None) is True
    assert prove(lambda: None, precisions=(64, 128)) is None


def test_finite_sum_is_expanded() -> None:
    # the k-fold composition profile is written as a Sum with numeric limits (theory §8)
    i = sympy.Symbol("i", integer=True, nonnegative=True)
    expr = sympy.Sum(sympy.binomial(4, i) * sympy.Max(E(-i * eps) - E(-2 * eps), 0),
                     (i, 0, 4))
    f = lambdify_arb(expr, eps)
    with mpmath.workdps(DPS):
        ref = sum(mpmath.binomial(4, j) * max(mpmath.exp(-j * mpmath.mpf(0.7))
                                              - mpmath.exp(-1.4), 0) for j in range(5))
    assert encloses(f(0.7), ref)


def test_float_parameters_enter_exactly() -> None:
    # exp(z) with z = 0.2014... bound as a double: SymPy's bound_expr rounds exp(z) to 53
    # bits, the ball must instead enclose the profile at exactly that double
    z = sympy.Symbol("z", positive=True)
    e0 = 0.20142041601609
    f = profile_arb(Profile(sympy.Max(E(z) - E(eps), 0) / (1 + E(z)), {z: e0}))
    with mpmath.workdps(DPS):
        ez = mpmath.exp(mpmath.mpf(e0))  # mpf(double) is exact
        ref = (ez - 1) / (1 + ez)
    with ctx.workprec(200):
        v = f(0.0)
    assert encloses(v, ref) and v.rad() < 1e-50


@pytest.mark.parametrize("x", ["1e151", "1e200", "1e400"])
def test_erfcx_of_huge_arguments_is_enclosed(x):
    # reference: the asymptotic series erfcx(x) = (1 - 1/(2x^2) + ...)/(x sqrt(pi)), whose
    # correction is below 1e-300 here (closed form at 40 digits); a point ball and a ball
    # of relative width 1e-20
    from flint import arb

    from symgdp.gaussian.gdp_balls import erfcx_arb

    with mpmath.workdps(40):
        ref = mpmath.nstr(1 / (mpmath.mpf(x) * mpmath.sqrt(mpmath.pi)), 35)
    for ball in (arb(x), arb(x, arb(x) * arb("1e-20"))):
        v = erfcx_arb(ball)
        assert v.is_finite() and v.contains(arb(ref))
        assert v.rad() <= 1e-15 * abs(v.mid()) or ball.rad() > 0


def test_log_delta_mu_of_a_subnormal_mu_is_enclosed():
    # reference: log Phi(-a) = -a^2/2 - log(a sqrt(2 pi)) + O(a^-2) for a = eps/mu - mu/2,
    # and the second term of delta_mu is smaller by far; closed form at 60 digits
    from symgdp.gaussian.gdp_balls import log_delta_mu_arb, log_delta_mu_upper

    mu = 5e-324
    v = log_delta_mu_arb(100.0, mu, prec=64)
    assert v.is_finite()
    with mpmath.workdps(60):
        a = mpmath.mpf(100) / mpmath.mpf(mu)
        ref = -a * a / 2 - mpmath.log(a * mpmath.sqrt(2 * mpmath.pi))
        mid = mpmath.mpf(v.mid().str(30, radius=False))
        assert abs(mid - ref) <= mpmath.mpf("1e-12") * abs(ref)
    assert log_delta_mu_upper(100.0, mu) == -sys.float_info.max


@pytest.mark.parametrize("n", [5, 1000, 5 * 10**6])
def test_loggamma_ball_is_rigorous(n):
    # reference: mpmath's loggamma at 60 digits; the ball must contain it and be tight
    # (SymPy prints loggamma as "lgamma": a float math.lgamma there was a wrong "exact" ball)
    x = sympy.Symbol("x")
    f = lambdify_arb(sympy.loggamma(x + n), x)
    with mpmath.workdps(60):
        ref = mpmath.nstr(mpmath.loggamma(mpmath.mpf(n) + mpmath.mpf("0.25")), 55)
    with ctx.workprec(128):
        v = f(arb("0.25"))
    with ctx.workprec(256):  # the 45-digit reference as a ball far narrower than v
        assert v.contains(arb(ref)) and v.rad() < 1e-25 * abs(v.mid())


def test_a_float_function_never_enters_a_ball_function():
    # a compiled ball function that would call math.* is refused, not trusted
    import math

    from symgdp.evaluation import interval

    x = sympy.Symbol("x")
    fn = sympy.lambdify(x, sympy.loggamma(x), modules=[{}, "math"])
    assert fn.__globals__.get("lgamma") is math.lgamma
    with pytest.raises(ArbUnsupported):
        interval._check_rigorous(fn)


@pytest.mark.parametrize("x, c", [(-5.0, 0.2), (0.3, 0.2), (0.3, 7.0), (20.0, 0.2),
                                  (117.7, 0.21), (7071.0, 0.007)])
def test_erfcx_diff_orders_contain_mpmath_and_are_tight(x, c):
    # reference: 50-digit mpmath derivatives of exp(z^2) erfc(z) at x and x + c (Taylor
    # coefficients of the textbook function); c a ball that is not a point, as mu/sqrt2
    # is (its radius run through the recurrence would cost up to 60 bits at x = 117.7)
    from symgdp.gaussian.gdp_balls import erfcx_diff_orders_arb

    with ctx.workprec(96):
        cb = arb(c) * (1 + arb(2.0**-80).union(-arb(2.0**-80)))
        got = erfcx_diff_orders_arb(arb(x), cb, 6)
        wide = erfcx_diff_orders_arb(arb(x).union(arb(x + 0.01)), cb, 6)
    with mpmath.workdps(DPS):
        erfcx = lambda z: mpmath.exp(z * z) * mpmath.erfc(z)  # noqa: E731
        ta = mpmath.taylor(erfcx, mpmath.mpf(x), 6)
        tb = mpmath.taylor(erfcx, mpmath.mpf(x) + mpmath.mpf(c), 6)
        tw = mpmath.taylor(erfcx, mpmath.mpf(x) + mpmath.mpf("0.004"), 6)
        tx = mpmath.taylor(erfcx, mpmath.mpf(x) + mpmath.mpf("0.004") + mpmath.mpf(c), 6)
    for n in range(7):
        truth = (ta[n] - tb[n]) * mpmath.factorial(n)
        assert encloses(got[n], truth), (n, got[n], truth)
        # tight: the c ball's own width (2^-80 relative) and a few ulps, at every order
        assert float(got[n].rad()) <= 2.0**-70 * abs(float(truth)) * (n + 1) * max(x, 1)
        assert encloses(wide[n], (tw[n] - tx[n]) * mpmath.factorial(n))
