"""The GDP parameter of a typed trade-off curve, measured in the alpha domain
(symgdp.notions.tradeoff_mu, the route measure() takes for a TradeoffSource).

References (each test says which): closed forms of mu (G_mu itself; Laplace's
-2 Phi^{-1}(e^{-eps0/2}/2); pure eps-DP's -2 Phi^{-1}(1/(1 + e^eps0))), a 40-digit mpmath
brute force of sup h on a fine grid refined by golden-section search, and 40-digit
mpmath values of the Gaussian profile and of the curves' conjugates.
"""

from __future__ import annotations

import functools

import mpmath
import pytest
import sympy
from references import probit_sup

import symgdp
from symgdp.measurement.result import TRADEOFF_METHOD
from symgdp.notions.tradeoff_mu import gdp_bracket, probit_form

a = sympy.Symbol("alpha")
E0 = sympy.Integer(1)
TOL = 1e-6


def _g_erfc(mu: sympy.Expr) -> sympy.Expr:
    return 1 - sympy.erfc(sympy.erfcinv(2 * a) - mu / sympy.sqrt(2)) / 2


def _g_erf(mu: sympy.Expr) -> sympy.Expr:
    return (1 + sympy.erf(sympy.erfinv(1 - 2 * a) - mu / sympy.sqrt(2))) / 2


LAPLACE = sympy.Piecewise((1 - sympy.exp(E0) * a, a < sympy.exp(-E0) / 2),
                          (sympy.exp(-E0) / (4 * a), a <= sympy.Rational(1, 2)),
                          (sympy.exp(-E0) * (1 - a), True))
PURE = sympy.Max(0, 1 - sympy.exp(E0) * a, sympy.exp(-E0) * (1 - a))
# two-fold randomized response with eps0 = log 3 (p = 3/4): the Neyman-Pearson curve
# between Bin(2, 1/4) and Bin(2, 3/4), vertices (1/16, 7/16) and (7/16, 1/16)
RR2 = sympy.Max(0, 1 - 9 * a, sympy.Rational(1, 2) - a, (1 - a) / 9)


def _phi_inv(p: mpmath.mpf) -> mpmath.mpf:
    # mpmath has erfinv only; 2p - 1 keeps p to the working precision (>= 40 digits here,
    # and p >= 1e-33 where it is used)
    return mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)


def _mp_curve(expr: sympy.Expr):
    f = sympy.lambdify(a, expr, modules="mpmath")
    return lambda x: mpmath.mpf(f(x))


def _brute_mu(expr: sympy.Expr) -> mpmath.mpf:
    """sup over alpha of Phi^{-1}(1 - alpha) - Phi^{-1}(T(alpha)), 40 digits: a grid of
    2001 points in u = Phi^{-1}(1 - alpha) on [-4, 12], then golden-section search around
    the best point (the reference of the curves without closed form)."""
    with mpmath.workdps(40):
        f = _mp_curve(expr)

        def h(u: mpmath.mpf) -> mpmath.mpf:
            al = mpmath.erfc(u / mpmath.sqrt(2)) / 2
            return u - _phi_inv(f(al))

        return probit_sup(h, -4, 12)


def _measure(expr: sympy.Expr, **kw):
    eps_h = kw.pop("eps_h", 100.0)
    return symgdp.Profile.from_tradeoff_curve(expr, alpha=a, **kw).measure(
        eps_h=eps_h, tol=TOL)


@pytest.mark.parametrize("mu", [sympy.Rational(1, 4), sympy.Integer(1), sympy.Integer(3)])
@pytest.mark.parametrize("spelling", [_g_erfc, _g_erf])
def test_gaussian_curve(mu, spelling):
    # reference: mu itself (the curve is G_mu, whose GDP parameter is exactly mu)
    m = _measure(spelling(mu))
    assert m.method == TRADEOFF_METHOD and m.certified
    assert m.lower <= float(mu) <= m.upper and m.upper - m.lower <= TOL
    assert str(m).count("trade-off curve, alpha branch-and-bound, certified") == 1


def test_gaussian_curve_is_a_constant_in_probit_coordinates():
    # reference: G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) exactly, so h = mu
    for spelling in (_g_erfc, _g_erf):
        assert sympy.simplify(probit_form(spelling(sympy.Rational(3, 2)), a)[0] - 1.5) == 0


def test_laplace_curve():
    # reference: closed form mu = -2 Phi^{-1}(e^{-eps0/2}/2) for Laplace's curve, eps0 = 1
    with mpmath.workdps(40):
        mu = -2 * _phi_inv(mpmath.exp(-mpmath.mpf(1) / 2) / 2)
    m = _measure(LAPLACE)
    assert m.method == TRADEOFF_METHOD
    assert m.lower <= mu <= m.upper and m.upper - m.lower <= TOL


def test_pure_dp_curve():
    # reference: closed form mu = -2 Phi^{-1}(1/(1 + e^eps0)) for f_{eps0, 0}, eps0 = 1
    with mpmath.workdps(40):
        mu = -2 * _phi_inv(1 / (1 + mpmath.e))
    m = _measure(PURE)
    assert m.method == TRADEOFF_METHOD
    assert m.lower <= mu <= m.upper and m.upper - m.lower <= TOL


def test_two_fold_randomized_response_against_brute_force():
    # reference: 40-digit mpmath brute force of sup h (grid + golden section)
    ref = _brute_mu(RR2)
    m = _measure(RR2)
    assert m.method == TRADEOFF_METHOD
    assert m.lower <= ref + mpmath.mpf(10) ** -30 and m.upper >= ref
    assert m.upper - m.lower <= TOL


def test_eps_delta_curve_is_not_gdp_and_keeps_the_eps_route():
    # f_{eps, delta} with delta > 0: T(0) = 1 - delta, so 1 - T(alpha_h) >= delta and no
    # head fits; the eps search measures it as before.  reference: the GDPT at eps_h,
    # mu with delta_mu(eps_h) = delta (mpmath root), the supremum of an increasing GDPT
    d = sympy.Rational(1, 10**6)
    curve = sympy.Max(0, 1 - d - sympy.exp(E0) * a, sympy.exp(-E0) * (1 - d - a))
    b = gdp_bracket(curve, a, 10.0, TOL)
    assert b.upper is None and "stays above" in b.reason
    m = _measure(curve, eps_h=10.0)
    assert m.method != TRADEOFF_METHOD
    assert any("gave up" in n for n in m.notes)
    with mpmath.workdps(40):
        def dmu(mu):
            e = mpmath.mpf(10)
            return (mpmath.ncdf(-e / mu + mu / 2)
                    - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)) - mpmath.mpf(d)
        ref = mpmath.findroot(dmu, 3.0)
    assert m.lower <= ref <= m.upper


@pytest.mark.parametrize("curve", [_g_erfc(sympy.Integer(1)), PURE, LAPLACE])
def test_not_symmetric_agrees_for_symmetric_curves(curve):
    # reference: the symmetric measurement (T = T^{-1} for these curves, and G_mu is its
    # own inverse, so T^{-1} >= G_mu iff T >= G_mu: the same mu)
    m1 = _measure(curve)
    m2 = _measure(curve, symmetric=False)
    assert m2.method == TRADEOFF_METHOD
    assert max(m1.lower, m2.lower) <= min(m1.upper, m2.upper)


@functools.cache
def _alpha_at(u: mpmath.mpf, prec: int) -> mpmath.mpf:
    """alpha = Phi(-u) at the working precision ``prec`` (part of the key), memoised: the
    probit grid of _mp_conjugate is the same for every eps, so its 2001 values are
    computed once and are the very values a fresh evaluation gives."""
    return mpmath.erfc(u / mpmath.sqrt(2)) / 2


@functools.cache
def _mp_curve_memo(expr: sympy.Expr, prec: int):
    """_mp_curve(expr), memoised per point (at the working precision ``prec``, part of
    the key): the conjugates at several eps evaluate T on the same grid; same values."""
    return functools.cache(_mp_curve(expr))


def _mp_conjugate(expr: sympy.Expr, eps: float) -> mpmath.mpf:
    """delta_T(eps) = sup_alpha 1 - T(alpha) - e^eps alpha, 40 digits: a grid in the
    probit coordinate refined by golden section (concave in alpha for a convex T)."""
    with mpmath.workdps(40):
        prec = mpmath.mp.prec
        f = _mp_curve_memo(expr, prec)
        c = mpmath.exp(eps)

        def g(u):
            al = _alpha_at(u, prec)
            return 1 - f(al) - c * al

        return max(probit_sup(g, -6, 14, iterations=100), mpmath.mpf(0))


def _mp_delta_mu(eps: float, mu: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("curve", [LAPLACE, RR2])
def test_head_and_failure_probability(curve):
    # reference: 40-digit mpmath conjugates delta_T(eps) and the Gaussian profile: the head
    # statement delta_T(eps) <= delta_upper(eps) on [0, eps_h] and <= failure_prob beyond
    eps_h = 4.0
    p = symgdp.Profile.from_tradeoff_curve(curve, alpha=a)
    m = p.measure(eps_h=eps_h, tol=TOL)
    assert m.method == TRADEOFF_METHOD and m.eps_h == eps_h
    assert float(m.failure_prob) >= float(_mp_delta_mu(eps_h, m.upper))
    for eps in (0.0, 0.3, 1.0, 2.0, 4.0):
        d = _mp_conjugate(curve, eps)
        assert d <= _mp_delta_mu(eps, m.upper)
        # the source's own proved lower bound on log delta_T agrees
        assert float(p.source.log_delta_lower(eps)) <= float(mpmath.log(
            _mp_delta_mu(eps, m.upper)))
    for eps in (5.0, 8.0):
        assert _mp_conjugate(curve, eps) <= float(m.failure_prob)


def test_lower_end_is_a_value_of_the_gdpt():
    # reference: the source's own conjugate search (eps route) at the reported argmax:
    # G(argmax) >= lower, i.e. delta_T(argmax) >= delta_lower(argmax)
    p = symgdp.Profile.from_tradeoff_curve(LAPLACE, alpha=a)
    m = p.measure(eps_h=10.0, tol=TOL)
    assert 0 <= m.argmax <= m.eps_h
    up = float(p.source.log_delta(m.argmax))
    assert up >= float(mpmath.log(_mp_delta_mu(m.argmax, m.lower))) - 1e-12


def test_asymmetric_curve_keeps_a_true_lower_end():
    # T = (1 - alpha)^2 is not symmetric and h is largest where the tangent eps is
    # negative: the alpha route gives up and the eps search measures it.  reference: the
    # closed-form conjugate delta(eps) = (1 - e^eps/2)^2 on [0, log 2] (0 beyond), whose
    # GDPT is largest at eps = 0 (grid + golden section confirm it there), solved for mu
    # in 40-digit mpmath.  The eps search once took G's lower end from the source's
    # UPPER bound on delta and reported 0.6372789244 > the truth 0.6372787279.
    with mpmath.workdps(40):
        ref = mpmath.findroot(lambda m: 2 * mpmath.ncdf(m / 2) - 1 - mpmath.mpf(1) / 4, 0.6)
    m = symgdp.Profile.from_tradeoff_curve((1 - a) ** 2, alpha=a).measure(eps_h=5.0,
                                                                         tol=1e-5)
    assert m.method != TRADEOFF_METHOD
    assert m.lower <= ref <= m.upper


@pytest.mark.parametrize("tol", [1e-6, 1e-7])
def test_measurement_tol_finer_than_the_source_tol(tol):
    # the source searches log delta to 1e-6 by default; a measurement asking for 1e-6 or
    # less on mu once raised PrecisionError (the bracket could not be narrower than the
    # source's own gap): the source is searched finer now.  reference: as above, the
    # closed-form conjugate (1 - e^eps/2)^2, G largest at eps = 0, 40-digit mpmath root
    with mpmath.workdps(40):
        ref = mpmath.findroot(lambda m: 2 * mpmath.ncdf(m / 2) - 1 - mpmath.mpf(1) / 4, 0.6)
    m = symgdp.Profile.from_tradeoff_curve((1 - a) ** 2, alpha=a).measure(tol=tol)
    assert m.lower <= ref <= m.upper and m.upper - m.lower <= tol * (1 + 1e-9)
