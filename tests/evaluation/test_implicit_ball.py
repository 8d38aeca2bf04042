r"""Ball arithmetic on implicit profiles (``LogDeltaRoot``): enclosures, derivatives and
certified measurement.

References: closed forms of the trade-off equations solved by hand (the SGD family
:math:`\delta = B e^{-\sigma^2\varepsilon^2/A^2}`, theory §9), evaluated in 40-digit
mpmath; roots of residuals found by 40-digit mpmath bisection on a fine grid; GDPT
suprema maximised in 40-digit mpmath from the textbook :math:`\delta_\mu` (tests/reference.py);
and, as a second algorithm, the measurement of the closed-form profile.
"""

from __future__ import annotations

import os

import mpmath
import pytest
import sympy
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st
from references import ref_log_delta

from symgdp.errors import SymgdpError
from symgdp.evaluation.interval import lambdify_arb, profile_arb
from symgdp.measurement.firstorder import FirstOrder
from symgdp.numerics.balls import ArbUnsupported, to_arb
from symgdp.profile import Profile
from symgdp.symbolic.implicit import LogDeltaRoot
from symgdp.symbolic.symbols import eps

SGD = "sigma = A/eps*sqrt(log(B/delta))"
# the same family written so that it is defined at eps = 0: delta = e^{-c - sigma^2 eps^2}
SGD0 = "sigma**2 * eps**2 = log(1/delta) - c"
E_, T_ = sympy.Dummy("e", positive=True), sympy.Dummy("t", real=True)


def _root_profile(h):
    """The profile exp(t(eps)) with h(e, t) = 0 (h in the Dummies E_, T_)."""
    return Profile(sympy.exp(LogDeltaRoot(eps, sympy.Lambda((E_, T_), h))))


def _sgd_log_delta(x, a, b, s):
    # closed form log B - sigma^2 eps^2 / A^2 at 40 digits (sigma read as its double)
    with mpmath.workdps(40):
        x, a, b, s = (mpmath.mpf(v) for v in (x, a, b, s))
        return mpmath.log(b) - s**2 * x**2 / a**2


def _contains(ball, value):
    """The ball meets the 40-digit reference ``value`` (an mpf computed at 40 digits or
    more), taken with its own error of 1e-38 relative."""
    if not ball.is_finite():
        return False
    with ctx.workprec(300):
        ref = arb(mpmath.nstr(value, 60), mpmath.nstr(abs(value) * mpmath.mpf("1e-38"), 5))
        return ball.overlaps(ref)


@pytest.mark.parametrize("eq, vals", [
    (SGD, {"A": 2, "B": 1, "sigma": 2}),
    (SGD, {"A": 3, "B": 1, "sigma": 1.3}),            # a float parameter: fed as a ball
    ("A/eps*sqrt(log(B/delta)) = sigma", {"A": 2, "B": 1, "sigma": 0.7}),  # other side
])
def test_ball_encloses_the_closed_form_root(eq, vals):
    p = Profile.from_tradeoff(eq, vals, method="numeric")
    assert p.expr.has(LogDeltaRoot)
    f = profile_arb(p)
    a, b, s = vals["A"], vals["B"], vals["sigma"]
    for prec in (64, 256):
        with ctx.workprec(prec):
            for x in (0.25, 1.0, 3.0, 17.5, 1e4):
                ld = f(x).log()
                # reference: the closed form at 40 digits
                assert _contains(ld, _sgd_log_delta(x, a, b, s))
                assert ld.rad() <= 2.0 ** (20 - prec) * (1 + abs(ld.mid()))
            # a ball of eps encloses the values at its ends and inside (log delta itself:
            # exp of a wide ball of t is a ball whose lower end reaches below 0)
            t = lambdify_arb(p.bound_expr.args[0], eps)
            for lo, hi in ((0.5, 0.75), (2.0, 2.001), (9.0, 12.0)):
                ld = t(arb(lo).union(arb(hi)))
                for x in (lo, (lo + hi) / 2, hi):
                    assert _contains(ld, _sgd_log_delta(x, a, b, s))


_SCALE = max(1, int(os.environ.get("SYMGDP_TEST_SCALE", "1")))


@settings(max_examples=12 * _SCALE, deadline=None)
@given(a=st.floats(0.3, 5), s=st.floats(0.1, 5), x=st.floats(0.01, 60),
       r=st.floats(0, 0.5), prec=st.sampled_from([64, 128, 256]))
def test_property_ball_of_eps_encloses_the_closed_form(a, s, x, r, prec):
    # float parameters (fed as exact balls), any ball [x - r x, x + r x]: the ball of
    # log delta holds the closed form log B - s^2 eps^2 / a^2 (40-digit mpmath) at its
    # ends and middle, or is NaN -- never a wrong enclosure
    p = Profile.from_tradeoff(SGD, {"A": a, "B": 1, "sigma": s}, method="numeric")
    t = lambdify_arb(p.bound_expr.args[0], eps, tuple(sorted(p.values, key=str)))
    vals = [to_arb(p.values[k]) for k in sorted(p.values, key=str)]
    lo, hi = x * (1 - r), x * (1 + r)
    with ctx.workprec(prec):
        v = t(arb(lo).union(arb(hi)), *vals)
    for y in (lo, (lo + hi) / 2, hi):
        assert not v.is_finite() or _contains(v, _sgd_log_delta(y, a, 1, s))
    if r == 0:
        assert v.is_finite()


def test_first_and_second_derivatives_enclose_the_closed_form():
    # (log delta)' = -2 sigma^2 eps / A^2 and (log delta)'' = -2 sigma^2 / A^2 (closed form)
    p = Profile.from_tradeoff(SGD, {"A": 2, "B": 1, "sigma": 1.5}, method="numeric")
    fo = FirstOrder(p)
    k = 2 * 1.5**2 / 4
    for x in (0.5, 2.0, 7.0):
        assert fo.dlog(x).contains(arb(-k) * arb(x))
        with ctx.workprec(64):
            assert fo._call(fo._l2, arb(x)).contains(arb(-k))
    on = fo.dlog_on(2.0, 2.5)
    assert on.contains(arb(-k) * 2) and on.contains(arb(-k) * arb(2.5))
    assert all(fo.nonincreasing(x, y) for x, y in ((0.5, 5.0), (5.0, 10.0), (20.0, 40.0)))


def _sup_gdpt(log_delta, lo, hi, grid=24):
    """sup of mu_GDP(eps, delta(eps)) on [lo, hi] in 40-digit mpmath: a grid, then a
    golden-section search around the best grid point (the GDPT is unimodal there)."""
    def G(x):
        L = log_delta(x)
        # mu with log delta_mu(x) = L on the textbook formula (bracketed Illinois method,
        # the residual checked by hand: it is only 40 digits accurate)
        m = mpmath.findroot(lambda m: ref_log_delta(x, m) - L,
                            (mpmath.mpf("0.05"), mpmath.mpf(20)), solver="illinois",
                            verify=False)
        assert abs(ref_log_delta(x, m) - L) <= mpmath.mpf("1e-35") * (1 + abs(L))
        return m

    with mpmath.workdps(40):
        xs = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * i / grid for i in range(grid + 1)]
        gs = [G(x) for x in xs]
        i = max(range(len(xs)), key=lambda j: gs[j])
        a, b = xs[max(i - 1, 0)], xs[min(i + 1, grid)]
        r = (mpmath.sqrt(5) - 1) / 2
        for _ in range(45):
            c, d = b - r * (b - a), a + r * (b - a)
            a, b = (a, d) if G(c) >= G(d) else (c, b)
        return max(G((a + b) / 2), gs[i])


@pytest.mark.slow
def test_measure_certifies_an_implicit_profile_with_an_interior_supremum():
    vals = {"c": 1, "sigma": 0.5}
    p = Profile.from_tradeoff(SGD0, vals, method="numeric")
    m = p.measure(refine=False)
    assert m.certified and m.method == "first-order"
    assert m.upper - m.lower <= m.tol
    # reference 1: 40-digit mpmath sup of the GDPT of e^{-1 - eps^2/4} (interior, ~1.97)
    truth = _sup_gdpt(lambda x: -1 - x**2 / 4, 1.0, 3.0)
    assert m.lower <= truth <= m.upper
    # reference 2 (second algorithm): the closed-form profile SymPy solves for
    q = Profile.from_tradeoff(SGD0, vals)
    assert not q.expr.has(LogDeltaRoot)
    mq = q.measure(refine=False)
    assert m.lower <= mq.upper and mq.lower <= m.upper


@pytest.mark.slow
def test_measure_certifies_the_refined_implicit_sgd_family():
    vals = {"A": 2, "B": 1, "sigma": 2}
    p = Profile.from_tradeoff(SGD, vals, method="numeric")
    r = p.refine()
    m = r.measure(refine=False)
    assert m.certified and m.method == "first-order"
    # reference 1: the same refined profile with the root replaced by its closed form
    # e^{-eps^2}, its sup maximised in 40-digit mpmath
    closed = r.bound_expr.replace(lambda e: isinstance(e, LogDeltaRoot), lambda e: -e.args[0]**2)
    ld = sympy.lambdify(eps, sympy.log(closed), modules="mpmath")
    truth = _sup_gdpt(ld, 0.0, 4.0)
    assert m.lower <= truth <= m.upper
    # reference 2 (second algorithm): the closed-form SGD profile, refined and measured
    mq = Profile.from_tradeoff(SGD, vals).measure()
    assert m.lower <= mq.upper and mq.lower <= m.upper


def _mp_roots(h, x, lo=-30, hi=0, n=600):
    """Sign changes of t -> h(x, t) on a fine grid of [lo, hi], each bisected at 40 digits."""
    with mpmath.workdps(40):
        ts = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * i / n for i in range(n + 1)]
        vs = [h(mpmath.mpf(x), t) for t in ts]
        roots = []
        for t0, t1, v0, v1 in zip(ts, ts[1:], vs, vs[1:], strict=False):
            if v0 == 0 or v0 * v1 < 0:
                a, b = t0, t1
                for _ in range(140):
                    m = (a + b) / 2
                    a, b = (m, b) if (h(mpmath.mpf(x), m) < 0) == (v0 < 0) else (a, m)
                roots.append((a + b) / 2)
        return roots


def _search_start(h, x):
    """The grid point -4^k where the bracketed search (float, mpmath or ball) starts
    bisecting: the first of -1, -4, -16, ... at which the residual is not enough noise
    (here s = +1, h increasing overall), in 40-digit mpmath."""
    with mpmath.workdps(40):
        g = mpmath.mpf(-1)
        while h(mpmath.mpf(x), g) > 0:
            g *= 4
        return g


@pytest.mark.slow
def test_residual_with_several_roots_gives_nan_never_a_root():
    # h = t + 2e + 0.6 sin(3t) is not monotone in t: one root in the search's range
    # [-4^k, 0] for some eps, three for others (reference: 40-digit mpmath sign changes on
    # a fine grid).  A ball is NaN or refused unless the root there is unique, and then
    # contains it.
    h = T_ + 2 * E_ + sympy.Rational(3, 5) * sympy.sin(3 * T_)
    f = profile_arb(_root_profile(h))
    mp_h = sympy.lambdify((E_, T_), h, modules="mpmath")
    seen = {1: 0, 3: 0}
    for i in range(1, 41, 2):
        x = i / 8
        roots = _mp_roots(mp_h, x, lo=_search_start(mp_h, x), hi=0)
        with ctx.workprec(64):
            try:
                v = f(x)
            except SymgdpError:  # a second root proved
                v = None
        seen[len(roots)] = seen.get(len(roots), 0) + 1
        if len(roots) == 1:
            assert v is not None and v.is_finite() and _contains(v.log(), roots[0])
        else:
            assert v is None or not v.is_finite()
    assert seen[1] and seen[3]  # both kinds occur


def test_non_monotone_residual_is_refused():
    # three roots t = -2e - 1 and -2e - 1 -+ 1e-4 for every eps (closed form): a second
    # root is proved at a point, so the ball evaluation refuses, and so does measure()
    # in both modes -- never a bracket
    u = T_ + 2 * E_ + 1
    p = _root_profile(u**3 - sympy.Rational(1, 10**8) * u)
    with ctx.workprec(64), pytest.raises(SymgdpError, match="more than one root"):
        profile_arb(p)(1.0)
    for certify in (True, False):
        with pytest.raises(SymgdpError, match="more than one root"):
            p.measure(refine=False, certify=certify)


def test_near_double_and_triple_roots():
    # h = u^3 + 1e-40 u, u = t + e + 1: one root t = -e - 1 where h_t is 1e-40 (reference:
    # the closed form).  Near it every box must be tiny: at 64 bits the proof may not
    # close (NaN, never a wrong ball), at 128 it does.  The exact triple root u^3 (h_t = 0
    # there) is never wrong either, and its implicit derivative is NaN.
    u = T_ + E_ + 1
    near = profile_arb(_root_profile(u**3 + sympy.Rational(1, 10**40) * u))
    triple = _root_profile(u**3)
    for prec in (64, 128):
        with ctx.workprec(prec):
            for x in (0.5, 3.0):
                for f in (near, profile_arb(triple)):
                    v = f(x)
                    assert not v.is_finite() or v.log().contains(-arb(x) - 1)
                if prec == 128:
                    assert near(x).is_finite() and near(x).log().rad() < 1e-30
    # -h_e/h_t = -3u^2/3u^2 cancels symbolically to the closed form t' = -1
    assert FirstOrder(triple).dlog(2.0).contains(-1)


def test_boundary_conventions_delta_one_and_the_floor():
    # B = 3: delta = min(1, 3 e^{-eps^2}) -- the float convention gives exactly delta = 1
    # where even delta = 1 is not enough noise (closed form: eps^2 <= log 3)
    p = Profile.from_tradeoff(SGD, {"A": 1, "B": 3, "sigma": 1}, method="numeric")
    f = profile_arb(p)
    c = float(mpmath.sqrt(mpmath.log(3)))
    with ctx.workprec(64):
        assert f(0.5) == 1 and f(arb(0.5, 0.1)) == 1
        straddle = f(arb(c, 0.01)).log()
        assert straddle.contains(0) and _contains(straddle, _sgd_log_delta(c + 0.01, 1, 3, 1))
        assert _contains(f(2.0).log(), _sgd_log_delta(2.0, 1, 3, 1))
        # at eps = 0 the residual divides by 0: the float convention's delta = 1, shown
        # in exact arithmetic (closed form: min(1, 3) = 1 there as well)
        assert f(0.0) == 1
    m = p.measure(refine=False)
    assert m.certified and m.lower == m.upper == float("inf")  # G(0) = inf (closed form)
    # delta = 1 - e^{(eps - 2)/2} has no root for eps >= 2: the -T floor, exactly
    q = Profile.from_tradeoff("delta = 1 - exp((eps - 2)/2)", method="numeric")
    g = profile_arb(q)
    with ctx.workprec(64):
        with mpmath.workdps(40):
            ref = mpmath.log(1 - mpmath.exp(mpmath.mpf(-0.5)))
        assert _contains(g(1.0).log(), ref)
        # log delta is exactly -T = -1e300 there (the float search's documented floor)
        assert lambdify_arb(q.bound_expr.args[0], eps)(3.0) == arb(-1e300)
        assert FirstOrder(q)._l1(arb(3.0)).is_finite() is False  # no implicit derivative
        assert not FirstOrder(p)._l1(arb(0.5)).is_finite()


def test_the_ball_route_never_calls_the_float_root_search(monkeypatch):
    # lambdify puts LogDeltaRoot._imp_ (the float search) into the namespace of every
    # compiled function: the ball code must use its own entry
    import symgdp.symbolic.implicit as implicit

    def boom(*args):
        raise AssertionError("the float root search was called in ball arithmetic")

    monkeypatch.setattr(implicit.LogDeltaRoot, "_imp_", staticmethod(boom))
    p = _root_profile(T_ + E_**2 + sympy.Rational(1, 7))
    with ctx.workprec(64):
        v = profile_arb(p)(2.0).log()
    with mpmath.workdps(40):
        assert _contains(v, -4 - mpmath.mpf(1) / 7)  # closed form t = -e^2 - 1/7


def test_common_subexpressions_stay_inside_the_residual():
    # a repeated piece of the residual holding the bound variables (t + e^2) must not be
    # hoisted out of the lambda by cse; reference: root of t + e^2 + (t + e^2)^3 = -1/2 by
    # 40-digit mpmath bisection
    w = T_ + E_**2
    expr = LogDeltaRoot(eps, sympy.Lambda((E_, T_), w + w**3 + sympy.Rational(1, 2)))
    fn = lambdify_arb(expr + eps + expr**2, eps, cse=True)
    mp_h = sympy.lambdify((E_, T_), w + w**3 + sympy.Rational(1, 2), modules="mpmath")
    (root,) = _mp_roots(mp_h, 1.5, lo=-5, hi=0)
    with ctx.workprec(64):
        v = fn(1.5)
    with mpmath.workdps(40):
        assert _contains(v, root + mpmath.mpf(1.5) + root**2)


def test_a_residual_whose_t_derivative_has_no_ball_version_is_refused_cleanly():
    # d/dt |t| = sign(t): no ball counterpart, so no ball evaluation at all (a clear
    # ArbUnsupported, and measure() falls back to the uncertified zeroth-order search)
    # instead of a compiled function that fails when called
    p = _root_profile(T_ + E_**2 + sympy.Abs(T_) / 10)
    with pytest.raises(ArbUnsupported, match="sign"):
        profile_arb(p)


@pytest.mark.slow
def test_measure_certifies_an_equation_sympy_cannot_solve():
    # sigma = sqrt(log(1/delta))/eps + delta has no closed form; reference: the refined
    # profile with its root found by 40-digit mpmath bisection of the equation itself,
    # and the GDPT's sup maximised in 40-digit mpmath
    # (SymPy's own attempt is tested in test_profile.py; skipped here for time)
    p = Profile.from_tradeoff("sigma = sqrt(log(1/delta))/eps + delta", {"sigma": 3},
                              method="numeric")
    assert p.expr.has(LogDeltaRoot)
    r = p.refine()
    m = r.measure(refine=False)
    assert m.certified and m.method == "first-order"

    def root(x):
        # t = log delta with 3 = e^t + sqrt(-t)/x (left side decreasing in t)
        with mpmath.workdps(45):
            a, b = mpmath.mpf(-10) * (1 + x * x) * 10, mpmath.mpf(0)
            for _ in range(200):
                c = (a + b) / 2
                a, b = (c, b) if mpmath.exp(c) + mpmath.sqrt(-c) / x > 3 else (a, c)
            return (a + b) / 2

    closed = r.bound_expr.replace(lambda e: isinstance(e, LogDeltaRoot),
                                  lambda e: _MpRoot(e.args[0]))
    ld = sympy.lambdify(eps, sympy.log(closed), modules=[{"_MpRoot": root}, "mpmath"])
    truth = _sup_gdpt(ld, 0.0, 4.0)
    assert m.lower <= truth <= m.upper


class _MpRoot(sympy.Function):
    """Stand-in for the root in the reference expression (evaluated by mpmath bisection)."""


@pytest.mark.parametrize("name", ["_root_e", "_root_t", "k"])
def test_parameter_names_never_shadow_the_residual_variables(name):
    """A parameter named like the printed lambda's arguments must not be shadowed by them
    (reviewer's finding: a wrong ball for ``_root_e``).  Reference: the root of
    sqrt(-t) + e^t = sigma + k eps in t by mpmath at 40 digits."""
    from symgdp.symbolic.symbols import delta

    k, sig = sympy.Symbol(name, positive=True), sympy.Symbol("sigma", positive=True)
    p = Profile.from_tradeoff(sympy.Eq(sig, sympy.sqrt(sympy.log(1 / delta)) + delta - k * eps),
                              {sig: 2.0, k: 0.5}, method="numeric")
    with mpmath.workdps(40):
        t = mpmath.findroot(lambda t: mpmath.sqrt(-t) + mpmath.exp(t) - 3, -4)
        truth = mpmath.exp(t)
    ball = profile_arb(p)(2.0)
    assert ball.lower() <= arb(str(truth)) <= ball.upper() and ball.rad() < 1e-15
    assert abs(mpmath.exp(p.log_delta(2.0)) / truth - 1) < 1e-12
