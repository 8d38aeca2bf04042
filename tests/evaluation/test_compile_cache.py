"""Shared compiles: profiles that differ only in their constants reuse one compiled form.

A refined profile carries 40-digit decimal constants that change at every parameter
point; they are compiled as symbols fed as exact values.  These tests check that the
shared functions enclose the truth exactly as a fresh compile does (the truth: 40-digit
mpmath on the profile's own expression, differentiated by mpmath, never symgdp's ball
code), that the constants are not rounded on the way (the balls are far narrower than
a 53-bit rounding of them would be off), and that interleaving the measurements of
profiles sharing a compile changes nothing.
"""

from __future__ import annotations

import math
import random

import mpmath
import pytest
import sympy
from flint import arb, ctx

from symgdp import Profile, eps, mechanisms
from symgdp.evaluation.interval import _compile_arb, abstract_constants, lambdify_arb, profile_arb
from symgdp.gaussian.gdp_balls import Erfcx
from symgdp.measurement.compiled import _compiled, _shared_form
from symgdp.measurement.firstorder import FirstOrder
from symgdp.measurement.measure import measure
from symgdp.refinement.refine import refine

DPS = 40
POINTS = (0.0, 0.05, 0.3, 0.9, 1.7, 3.0, 7.5)


def _mp_fn(profile: Profile):
    """The profile as an mpmath function of eps at 40 digits, its parameters fed as the
    exact numbers they hold (substituted into the expression, SymPy would first round
    e.g. exp(-eps0/2) to 53 bits); SymPy's mpmath printer writes Float constants with
    all their bits."""
    params = list(profile.values)
    f = sympy.lambdify([profile.var, *params], profile.expr, modules="mpmath")

    def exact(v: object) -> mpmath.mpf:
        v = sympy.sympify(v)
        if v.is_Rational:
            return mpmath.mpf(int(v.p)) / int(v.q)
        return mpmath.mpf(v._mpf_) if isinstance(v, sympy.Float) else mpmath.mpf(str(v))

    def g(t: mpmath.mpf) -> mpmath.mpf:
        return f(t, *(exact(profile.values[s]) for s in params))

    return g


def _truth(profile: Profile, x: float) -> tuple[mpmath.mpf, mpmath.mpf | None]:
    """delta(x) and (log delta)'(x) at 40 digits (the derivative by mpmath's numerical
    differentiation; None next to a branch point, where it is one-sided)."""
    f = _mp_fn(profile)
    with mpmath.workdps(DPS):
        v = mpmath.mpf(f(mpmath.mpf(x)))
        try:
            d = mpmath.diff(lambda t: mpmath.log(f(t)), mpmath.mpf(x)) if v > 0 else None
        except (ValueError, ZeroDivisionError):
            d = None
    return v, d


def _contains(ball: arb, truth: mpmath.mpf) -> bool:
    with mpmath.workdps(DPS):
        lo = mpmath.mpf(ball.lower().str(45, radius=False))
        hi = mpmath.mpf(ball.upper().str(45, radius=False))
        # the decimal strings of the end points are rounded to 45 digits: widen by that
        slack = mpmath.mpf(10) ** -43 * max(abs(lo), abs(hi), mpmath.mpf(10) ** -300)
        return lo - slack <= truth <= hi + slack


def _sgd_refined(a: float, sigma: float) -> Profile:
    return refine(mechanisms.sgd_family(a, 1.0, sigma))


def _check_enclosures(profile: Profile, fo: FirstOrder) -> None:
    bps = [float(b) for b in fo.branch_points]
    for x in POINTS:
        v, d = _truth(profile, x)
        ball = fo.delta(x)
        assert _contains(ball, min(v, mpmath.mpf(1))), (profile, x, ball, v)
        if v > 0:
            # narrow balls (64 bits), so that the containment is a sharp test
            assert ball.rad() <= 1e-15 * abs(ball.mid())
        if d is not None and v < 1 and all(abs(x - b) > 1e-6 for b in bps):
            db = fo.dlog(x)
            assert _contains(db, d), (profile, x, db, d)


def test_refined_sgd_profiles_share_one_compile_and_enclose_the_truth() -> None:
    p1, p2 = _sgd_refined(1.0, 2.0), _sgd_refined(1.3, 2.5)
    # the constants differ, the structure does not
    assert p1.bound_expr != p2.bound_expr
    assert _shared_form(p1.expr, p1.var, ())[0] == _shared_form(p2.expr, p2.var, ())[0]
    fo1 = FirstOrder(p1)
    hits = _compiled.cache_info().hits
    fo2 = FirstOrder(p2)
    assert _compiled.cache_info().hits == hits + 1
    assert fo1._f is fo2._f
    # each keeps its own branch point, with its own value
    assert fo1.branch_points != fo2.branch_points
    for p, fo in ((p1, fo1), (p2, fo2)):
        _check_enclosures(p, fo)
        # against a fresh compile: same truth, same enclosures
        _compiled.cache_clear()
        _compile_arb.cache_clear()
        fresh = FirstOrder(p)
        _check_enclosures(p, fresh)
        for x in POINTS:
            assert fresh.delta(x).overlaps(fo.delta(x))


def _family(kind: str, c: list[float]) -> Profile:
    f = [sympy.Float(v) for v in c]
    if kind == "max":
        return Profile(sympy.Max(0, f[0] - f[1] * sympy.exp(f[2] * eps)), {})
    if kind == "signs":  # the sign of the second term flips between constant sets
        return Profile(f[0] * sympy.exp(-f[2] * eps) + (f[1] - f[0] / 2)
                       * sympy.exp(-2 * f[2] * eps) / 4, {})
    return Profile(sympy.Piecewise((f[0] - f[1] * sympy.exp(eps), eps < f[2]),
                                   (f[0] * sympy.exp(-f[2] * eps**2), True)), {})


@pytest.mark.parametrize("kind", ["max", "signs", "piecewise"])
def test_random_constants_share_compiles_and_enclose_the_truth(kind: str) -> None:
    # constants drawn at random (seeded): every profile's enclosures against its own
    # 40-digit truth, whichever profile of the structure compiled first
    rng = random.Random(7)
    for _ in range(4):
        c = [rng.uniform(0.3, 0.9), rng.uniform(0.05, 0.6), rng.uniform(0.2, 1.5)]
        p = _family(kind, c)
        _check_enclosures(p, FirstOrder(p))


@pytest.mark.parametrize("e0", [0.1, 0.7])
def test_laplace_points_share_one_compile(e0: float) -> None:
    p = mechanisms.laplace(e0)
    fo = FirstOrder(p)
    assert fo._f is FirstOrder(mechanisms.laplace(0.4))._f
    _check_enclosures(p, fo)


def test_subsampled_laplace_rates_share_one_compile() -> None:
    # 1/gamma and 1/gamma - 1 are decimal literals of the expression (5.0 and 4.0 at
    # gamma = 0.2, 2.0 and 1.0 at 0.5): abstracted, integer-valued or not
    ps = [mechanisms.laplace(1.0).subsample(g) for g in (0.2, 0.5, 0.35)]
    fos = [FirstOrder(p) for p in ps]
    assert fos[0]._f is fos[1]._f is fos[2]._f
    for p, fo in zip(ps, fos, strict=True):
        _check_enclosures(p, fo)


def test_constants_are_exact_at_high_precision() -> None:
    # two expressions with one structure; 40-digit constants, checked at 300 bits
    x = sympy.Symbol("x")
    c = [sympy.Float("0.7129652932636526833042357554329541950312", 40),
         sympy.Float("0.2870347067363473166957642445670458049688", 40),
         sympy.Float("0.3333333333333333333333333333333333333333", 40)]
    e1 = c[0] - c[1] * sympy.exp(x * c[2])
    e2 = c[2] - c[0] * sympy.exp(x * c[1])
    f1 = lambdify_arb(e1, x)
    hits = _compile_arb.cache_info().hits
    f2 = lambdify_arb(e2, x)
    assert _compile_arb.cache_info().hits == hits + 1
    for e, f in ((e1, f1), (e2, f2)):
        g = sympy.lambdify(x, e, modules="mpmath")
        for t in (0.25, 1.5):
            with ctx.workprec(300), mpmath.workdps(90):
                ball = f(t)
                truth = g(mpmath.mpf(t))
                lo = mpmath.mpf(ball.lower().str(95, radius=False))
                hi = mpmath.mpf(ball.upper().str(95, radius=False))
                assert lo - mpmath.mpf(10) ** -92 <= truth <= hi + mpmath.mpf(10) ** -92
                assert float(ball.rad()) < 1e-80


def test_abstraction_keeps_signs_and_structural_literals() -> None:
    x = sympy.Symbol("x")
    a, sa, _ = abstract_constants(0.25 * sympy.exp(-0.5 * x))
    b, sb, _ = abstract_constants(-0.25 * sympy.exp(-0.5 * x))
    assert a != b  # the sign of a constant is part of the compiled form
    assert all(s.is_positive for s in sa + sb)
    # the exponent of a power and the index of Erfcx stay as they are
    e, syms, _ = abstract_constants(sympy.exp(x)**sympy.Float(0.5)
                                     + Erfcx(x, sympy.Float(1.0)))
    assert syms == () and e.has(sympy.Float(0.5)) and e.has(sympy.Float(1.0))
    # the same value twice is one symbol (an exact cancellation is kept)
    e, syms, vals = abstract_constants(sympy.Float(0.3) * x - sympy.Float(0.3) * x**2)
    assert len(syms) == 1
    # erf/erfc forms are prepared with their numbers (their rewriting tests values)
    g = Profile.parse("erfc((eps/1.5 - 0.75)/sqrt(2))/2 - exp(eps)*erfc((eps/1.5 + "
                      "0.75)/sqrt(2))/2")
    assert _shared_form(g.expr, g.var, ())[1] == ()


def test_profile_arb_points_share_one_compile() -> None:
    fs = []
    for e0 in (0.1, 0.7, 2):
        p = mechanisms.laplace(e0)
        misses = _compile_arb.cache_info().misses
        f = profile_arb(p)
        if fs:
            assert _compile_arb.cache_info().misses == misses
        fs.append((p, f))
    for p, f in fs:
        for x in POINTS:
            v, _ = _truth(p, x)
            assert _contains(f(x), min(v, mpmath.mpf(1)))


def test_a_jump_stays_per_point() -> None:
    # one structure, two jump positions and directions: a downward jump (allowed) and
    # an upward one (a rise, which must be found at its own point)
    down = Profile(sympy.Piecewise((0.5 * sympy.exp(-eps), eps < 0.4),
                                   (0.25 * sympy.exp(-eps), True)), {})
    up = Profile(sympy.Piecewise((0.5 * sympy.exp(-eps), eps < 0.7),
                                 (0.75 * sympy.exp(-eps), True)), {})
    fd, fu = FirstOrder(down), FirstOrder(up)
    assert fd.nonincreasing(0.0, 1.0)
    assert not fu.nonincreasing(0.0, 1.0)
    assert fu.nonincreasing(0.0, 0.6) and fd.nonincreasing(0.0, 0.6)
    assert fu.nonincreasing(0.8, 1.5)


def _bump(a: float) -> Profile:
    return Profile(sympy.Float(0.5) * sympy.exp(-eps) + sympy.Float(a)
                   * sympy.exp(-sympy.Float(4.5) * (eps - sympy.Float(2.5))**2), {})


def test_a_rise_is_found_in_the_profile_that_has_it() -> None:
    # one structure: a bump of height 0.001 (the profile stays decreasing) or 0.3 (it
    # rises before 2.5); built alternately.  Truth: the sign of delta' at 40 digits
    for a in (0.001, 0.3, 0.001, 0.3):
        p = _bump(a)
        fo = FirstOrder(p)
        f = _mp_fn(p)
        with mpmath.workdps(DPS):
            slopes = [mpmath.diff(f, mpmath.mpf(x)) for x in (2.0, 2.1, 2.2, 2.3, 2.4)]
        rises = any(s > 0 for s in slopes)
        assert rises == (a == 0.3)
        assert fo.rising_at(2.3) == (slopes[3] > 0)
        proved = [fo.nonincreasing(x, x + 0.05) for x in (2.0, 2.2, 2.4)]
        if rises:
            assert not any(proved)
        else:
            assert all(proved)


@pytest.mark.parametrize("certify", [False, True])
def test_interleaved_measurements_equal_the_measurement_alone(certify: bool) -> None:
    # truth for Laplace: mu = -2 Phi^{-1}(e^{-eps0/2}/2) (closed form, 40-digit mpmath)
    kw = dict(tol=1e-6, refine=False, identify=False, certify=certify)
    profiles = [mechanisms.laplace(0.3), mechanisms.laplace(1.1),
                _sgd_refined(1.0, 2.0), _sgd_refined(0.8, 1.7)]
    alone = []
    for p in profiles:
        _compiled.cache_clear()
        _compile_arb.cache_clear()
        alone.append(measure(p, **kw))
    together = [measure(p, **kw) for p in profiles + profiles[::-1]]
    for m, a in zip(together, alone + alone[::-1], strict=True):
        assert (m.lower, m.upper) == (a.lower, a.upper)
    with mpmath.workdps(DPS):
        for e0, m in ((0.3, alone[0]), (1.1, alone[1])):
            truth = -2 * mpmath.sqrt(2) * mpmath.erfinv(
                2 * mpmath.exp(-mpmath.mpf(e0) / 2) / 2 - 1)
            assert m.lower <= truth <= m.upper
            assert m.upper - m.lower <= 1e-6
    assert all(math.isfinite(m.upper) for m in alone)
