"""Issue 23: a typed trade-off curve that is not convex or not non-increasing is refused
with a proved witness; convexity and non-increase are proved (branch-and-bound in ball
arithmetic, symgdp.notions.convexity), or recorded as not proved (singular ends, budget,
Piecewise) -- never claimed without a proof.

Independent references: every witness of a refusal is re-checked in 40-digit mpmath (T(b)
above the chord through a and c, or T(c) > T(a)); the feature's known location (the
centre of a dip or bump, the crossing of two lines) is what the message must name; the
curves proved convex are re-checked by chords at random triples in mpmath and by the
closed-form G_mu'' / G_mu ratio.
"""

from __future__ import annotations

import math
import random
import re

import mpmath
import pytest
import sympy
from references import gdp_curve, gdp_curve_expr

from symgdp import Profile
from symgdp import notions as N
from symgdp.errors import DomainError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.notions.convexity import check_curve
from symgdp.notions.tradeoff import TradeoffSource

A = N.alpha
R = sympy.Rational
DPS = 40


_g_mp = gdp_curve  # G_mu in mpmath (40 digits)


def _g_sym(mu):
    """G_mu(alpha), written with erfc and erfcinv."""
    return gdp_curve_expr(mu, A)


def _t_mp(expr):
    """The curve as an mpmath function (evaluated at the working precision in force):
    erfcinv(x) as erfinv(1 - x), which mpmath has."""
    e = expr.replace(sympy.erfcinv, lambda x: sympy.erfinv(1 - x))
    return sympy.lambdify(A, e, modules="mpmath")


def _named_alpha(msg):
    return float(re.search(r"alpha = ([0-9.e+-]+)", msg).group(1).rstrip("."))


def _check_witness(exc, t_mp):
    """The error's witness holds in 40-digit mpmath (points are exact floats)."""
    kind, *pts = exc.witness
    with mpmath.workdps(DPS):
        if kind == "chord":
            a, b, c = (mpmath.mpf(x) for x in pts)
            assert 0 <= a < b < c <= 1
            ta, tb, tc = (mpmath.mpf(t_mp(x)) for x in (a, b, c))
            assert tb > ta + (tc - ta) * (b - a) / (c - a), (kind, pts)
        else:
            assert kind == "increase", exc.witness       # point witnesses for these curves
            a, c = (mpmath.mpf(x) for x in pts)
            assert 0 <= a < c <= 1
            assert mpmath.mpf(t_mp(c)) > mpmath.mpf(t_mp(a)), (kind, pts)
    return pts


def _refused(expr, near, within):
    """tradeoff_source refuses ``expr``, naming an alpha within ``within`` of ``near``,
    with a witness that mpmath confirms; the same from check_curve alone (no grid)."""
    for run in (lambda: N.tradeoff_source(expr),
                lambda: check_curve(expr, A, [lambdify_arb(expr, A)])):
        with pytest.raises(DomainError, match="not convex|increases") as info:
            run()
        assert abs(_named_alpha(str(info.value)) - near) <= within, str(info.value)
        pts = _check_witness(info.value, _t_mp(expr))
        assert all(abs(x - near) <= within for x in pts[1:-1] or pts)
    return info.value


# -- the standard curves -------------------------------------------------------------------

@pytest.mark.parametrize("mu", [R(1, 2), 1, 3])
def test_gaussian_curve_proved_except_its_singular_ends(mu):
    # G_mu is convex and decreasing (G_mu'' = mu phi(z - mu) / phi(z)^2 > 0); erfcinv(2 alpha)
    # is infinite at alpha = 0 and 1, so the end pieces stay honestly "not proved": only
    # [0, 2^-64] and [1 - 2^-53, 1]
    s = N.tradeoff_source(_g_sym(mu))
    for txt, opened in ((s.convexity, s.check.open_convex),
                        (s.monotonicity, s.check.open_monotone)):
        assert txt.startswith("not proved on [0, ")
        assert "end piece" in txt
        assert opened and all(q <= 2.0**-60 or p >= 1 - 2.0**-52 for p, q in opened)
    assert s.check.boxes < 500                      # a small cover: fast
    assert any("convex envelope" in n for n in s.notes)


@pytest.mark.parametrize("curve", [
    "Max(0, 1 - exp(7/10)*alpha, exp(-7/10)*(1 - alpha))",            # eps-DP (Laplace)
    "Max(0, 1 - 2*alpha, (1 - alpha)/2)",                             # randomized response
    "Max(0, 1 - 1/100 - exp(4/5)*alpha, exp(-4/5)*(1 - 1/100 - alpha))",  # f_{eps,delta}
    "Max(1 - 3*alpha/2, (1 - alpha)/2)",                              # kink at 1/2 exactly
    "(1 - alpha)**2",
    "Max(0, 1 - 2*alpha, Abs(alpha - 1/2)/5 + (1 - alpha)/3 - 1/10)",  # Abs: a convex kink
])
def test_piecewise_linear_and_smooth_curves_proved(curve):
    s = N.tradeoff_source(curve)
    assert s.convexity == "proved" and s.monotonicity == "proved", (s.convexity,
                                                                   s.monotonicity)
    assert s.notes == ()
    # re-checked: chords at random triples in mpmath (a proof that is wrong would be
    # caught where the curve is not convex by more than the sampling misses)
    t = _t_mp(sympy.sympify(curve, locals={"alpha": A}))
    rng = random.Random(5)
    with mpmath.workdps(DPS):
        for _ in range(40):
            a, b, c = sorted(mpmath.mpf(rng.random()) for _ in range(3))
            ta, tb, tc = (mpmath.mpf(t(x)) for x in (a, b, c))
            assert tb <= ta + (tc - ta) * (b - a) / (c - a) + mpmath.mpf(10) ** -30
            assert tc <= ta + mpmath.mpf(10) ** -30


def test_wiggle_that_stays_convex_is_proved_on_the_cover():
    # G_1 (1 + 1e-12 sin(1e6 alpha)): T'' >= G_1'' - G_1 - 2e-6 |G_1'| > 0, since
    # min G_1'' / G_1 = 8.87 (closed form G'' = phi(z - 1) / phi(z)^2, minimised in mpmath
    # below): convex, and the checker proves it (ends aside)
    with mpmath.workdps(30):
        ratio = min(mpmath.npdf(z - 1) / (mpmath.npdf(z) ** 2 * mpmath.ncdf(z - 1))
                    for z in (mpmath.mpf(k) / 50 for k in range(-450, 450)))
    assert ratio > 8
    s = N.tradeoff_source(_g_sym(1) * (1 + R(1, 10**12) * sympy.sin(10**6 * A)))
    assert all(q <= 2.0**-60 or p >= 1 - 2.0**-52 for p, q in s.check.open_convex)


# -- refusals: features between the grid points of the quick check ------------------------

def test_narrow_dip_is_refused():
    c0, w = R(3037, 10000), R(1, 10**5)
    _refused(_g_sym(1) - R(1, 10**4) * sympy.exp(-((A - c0) / w) ** 2), 0.3037, 5e-5)


def test_narrow_bump_is_refused():
    # a bump too shallow to make the curve increase (slope ~1e-4 << |G_1'|), but its
    # curvature (~10) beats G_1'' (~1.5): not convex
    c0, w = R(61237, 100000), R(1, 10**5)
    err = _refused(_g_sym(1) + R(1, 10**9) * sympy.exp(-((A - c0) / w) ** 2), 0.61237, 5e-5)
    assert "not convex" in str(err)


def test_increase_over_a_tiny_interval_is_refused():
    # a bump of height 1e-6 and width 1e-7: slope ~10 > |G_1'(0.7)| = 0.5, on ~1e-7
    c0, w = R(7000001, 10**7), R(1, 10**7)
    err = _refused(_g_sym(1) + R(1, 10**6) * sympy.exp(-((A - c0) / w) ** 2), 0.7000001, 5e-7)
    assert "increases" in str(err)


def test_concave_kink_of_two_lines_is_refused():
    # Max(0, Min(9/10 - alpha/2, c - 3 alpha/2)): slope -1/2 then -3/2 at the crossing
    # alpha0 = c - 9/10 (a concave kink); in [0, 1], below 1 - alpha, non-increasing
    a0 = R(1234567, 10**7)
    curve = sympy.Max(0, sympy.Min(R(9, 10) - A / 2, R(9, 10) + a0 - 3 * A / 2))
    _refused(curve, float(a0), 0.05)


def test_concave_kink_at_a_split_point_is_refused():
    # the two lines cross at 1/2 exactly, the first split point: the boxes on either side
    # resolve the Min differently, and the joint is never taken as smooth
    curve = sympy.Max(0, sympy.Min(R(3, 4) - A / 2, R(5, 4) - 3 * A / 2))
    _refused(curve, 0.5, 0.3)


def test_tiny_concave_corner_between_grid_points_is_refused():
    # Min(G_1, G_1 + (alpha - a0)^2 - 1e-12): the second argument dips below G_1 only on
    # |alpha - a0| < 1e-6, between grid points, with a concave kink at each end (the
    # slope drops by 2e-6 there): found through check_curve's kink boxes
    a0 = R(30371, 100000)
    g = _g_sym(1)
    curve = sympy.Min(g, g + (A - a0) ** 2 - R(1, 10**12))
    err = _refused(curve, float(a0), 2e-6)
    assert "not convex" in str(err)


# -- not proved: accepted, and said so -----------------------------------------------------

@pytest.mark.parametrize("e", [R(1, 2), 1, 3])
def test_laplace_curve_typed_with_piecewise_is_proved(e):
    # the Laplace mechanism's exact curve (Dong, Roth & Su 2021): a line, a hyperbola and
    # a line, joined C^1 at e^-e/2 and 1/2 (the switches are proved continuous and their
    # slope jumps exactly 0 by SymPy)
    curve = sympy.Piecewise((1 - sympy.exp(e) * A, A < sympy.exp(-e) / 2),
                            (sympy.exp(-e) / (4 * A), A <= R(1, 2)),
                            (sympy.exp(-e) * (1 - A), True))
    s = N.tradeoff_source(curve)
    assert s.convexity == "proved" and s.monotonicity == "proved"
    # reference: the hyperbola's value and slope meet the lines' at both switches
    with mpmath.workdps(DPS):
        E = mpmath.exp(mpmath.mpf(e))
        a1 = 1 / (2 * E)
        assert abs((1 - E * a1) - 1 / (E * 4 * a1)) < mpmath.mpf(10) ** -35
        assert abs(-E + 1 / (E * 4 * a1**2)) < mpmath.mpf(10) ** -35


def test_piecewise_jumps_are_refused():
    # a jump up of 1e-6 at c = 0.300051 (between grid points; the pieces are lines whose
    # grid values look convex and decreasing): an increase
    c = R(300051, 10**6)
    up = sympy.Piecewise(((1 - A) / 2 + (c - A) - R(1, 10**6), A < c), ((1 - A) / 2, True))
    err = _refused(up, float(c), 1e-6)
    assert "increases" in str(err)
    # a jump down of 5e-8 (the first piece's condition typed as a decimal, 0.3333333,
    # while the lines meet at 1/3): not convex
    down = sympy.Piecewise((1 - 2 * A, A < R(3333333, 10**7)), ((1 - A) / 2, True))
    err = _refused(down, 1 / 3, 1e-6)
    assert "not convex" in str(err)


def test_piecewise_switch_not_proved_stays_open():
    # the switch at the root of h = e^alpha + alpha - 2 (no closed form: solveset gives a
    # ConditionSet) between (1 - alpha)^2 - h^2/100 and (1 - alpha)^2, which agree there
    # (convex and decreasing in fact): accepted, not proved only at the switch (reference:
    # the root by mpmath's findroot)
    h = sympy.exp(A) + A - 2
    curve = sympy.Piecewise(((1 - A) ** 2 - h**2 / 100, h < 0), ((1 - A) ** 2, True))
    s = N.tradeoff_source(curve)
    assert "Piecewise switch not proved continuous" in s.convexity
    root = float(mpmath.findroot(lambda x: mpmath.exp(x) + x - 2, 0.5))
    assert s.check.open_convex and all(p <= root <= q and q - p < 1e-9
                                       for p, q in s.check.open_convex)


def test_budget_exhausted_is_not_proved():
    g = _g_sym(1)
    got = check_curve(g, A, [lambdify_arb(g, A)], max_boxes=5)
    assert got.convexity.startswith("not proved") and "budget of 5 boxes" in got.convexity
    assert not got.proved


def test_free_parameters_are_not_checked():
    mu = sympy.Symbol("mu", positive=True)
    s = N.tradeoff_source(_g_sym(mu))
    assert s.convexity == "not checked (free parameters)"


def test_measurement_notes_carry_the_caveat():
    # the profile of G_1 (not proved at its ends) is measured with the caveat in its notes
    p = Profile.from_tradeoff_curve(_g_sym(1))
    m = p.measure(eps_h=2.0, tol=1e-2)
    assert any("convex envelope" in n for n in m.notes)
    q = Profile.from_tradeoff_curve("Max(0, 1 - 2*alpha, (1 - alpha)/2)")
    assert not any("convex envelope" in n for n in q.measure(eps_h=2.0, tol=1e-2).notes)


def test_a_refused_curve_still_has_a_sound_direct_source():
    # TradeoffSource built directly (no check) keeps the conjugate bounds of the curve as
    # typed; its status says it was not checked.  Reference: the conjugate at eps = 0 by
    # brute force on a fine grid through the dip, in 30-digit mpmath (a lower estimate)
    c0, w, d = R(3037, 10000), R(1, 10**5), R(1, 10**4)
    curve = _g_sym(1) - d * sympy.exp(-((A - c0) / w) ** 2)
    src = TradeoffSource(curve, A)
    assert src.convexity == "not checked"
    t = _t_mp(curve)
    with mpmath.workdps(30):
        grid = [mpmath.mpf(j) / 1000 for j in range(1, 1000)]
        grid += [mpmath.mpf(3037) / 10000 + mpmath.mpf(j) / 10**7 for j in range(-300, 301)]
        ref = max(1 - mpmath.mpf(t(a)) - a for a in grid)
    assert src.log_delta(0.0) >= math.log(float(ref)) - 1e-15


def test_a_lone_piecewise_with_a_compound_condition_is_not_a_crash():
    """Found by mypy: a curve whose only nodes are Piecewise with conditions that are not one
    comparison (here ``0 < alpha < 1/4`` as an And) left the checker without difference
    functions, and ``check_curve`` raised TypeError ('NoneType' object is not callable).
    By hand, T(0) = 2/3 (the And is false at 0) below T(0+) = 1: the curve rises at 0, so
    neither property may be reported proved; every branch is kept possible instead."""
    a = sympy.Symbol("alpha")
    curve = sympy.Piecewise((1 - 2 * a, sympy.And(a > 0, a < sympy.Rational(1, 4))),
                            ((1 - a) * sympy.Rational(2, 3), True))
    got = check_curve(curve, a, [lambdify_arb(curve, a)])
    assert not got.proved
    assert got.convexity.startswith("not proved") and got.monotonicity.startswith("not proved")
