"""The high-order Taylor test of the first-order search, against independent 40-digit truths.

The enclosures (erfcx and ErfcxDiff Taylor coefficients, the series of log delta_mu, the
series of a profile on a ball) are compared with mpmath's own Taylor coefficients
(``mpmath.taylor`` at 40 digits on the textbook formulas, never symgdp).  The measured
brackets of nearly Gaussian profiles written with decimal literals (the case the test
exists for: their GDPT is flat to 1e-16) are checked as ``lower <= truth <= upper`` with
the truth from the stored binary constants -- a closed form where they make the profile
exactly delta_mu, an mpmath maximisation of the GDPT otherwise -- and so are adversarial
profiles whose GDPT rises slightly above mu in a narrow bump.
"""

from __future__ import annotations

import functools
import math
import os

import mpmath
import numpy as np
import pytest
import sympy
from flint import arb, ctx

from symgdp import Profile, eps
from symgdp.errors import ProfileError
from symgdp.measurement.firstorder import FirstOrder
from symgdp.measurement.forms import _log_rates
from symgdp.measurement.measure import measure
from symgdp.measurement.series import (
    _SERIES_ORDER,
    _erfcx_taylor,
    _gauss_log_series,
    _log_series,
    _series_at,
)

DPS = 40
SCALE = int(os.environ.get("SYMGDP_TEST_SCALE", "1"))


def mp_erfcx(z):
    return mpmath.exp(z * z) * mpmath.erfc(z)


def mp_log_delta_mu(x, mu):
    """log delta_mu(x) from the textbook formula (Dong, Roth & Su 2021), 40 digits."""
    return mpmath.log(mpmath.ncdf(-x / mu + mu / 2)
                      - mpmath.exp(x) * mpmath.ncdf(-x / mu - mu / 2))


def literal_gaussian(mu: float) -> Profile:
    """The Gaussian profile written with decimal literals (as a user would type it)."""
    return Profile.parse(f"erfc((eps/{mu} - {mu / 2})/sqrt(2))/2 "
                         f"- exp(eps)*erfc((eps/{mu} + {mu / 2})/sqrt(2))/2")


def mp_profile(p: Profile):
    """The profile in mpmath, its Floats read as the binary numbers they store."""
    e = p.bound_expr.xreplace({c: sympy.Rational(c) for c in p.bound_expr.atoms(sympy.Float)})
    return sympy.lambdify(p.var, e, "mpmath")


def mp_gdpt(f, x) -> mpmath.mpf:
    """G(x) = mu_GDP(x, delta(x)): the root in mu of log delta_mu(x) = log delta(x)
    (delta_mu increases in mu) at 40 digits: bisection down to a bracket of 1e-3, then
    Anderson-Bjorck inside it, the root confirmed by the sign change across +-1e-32
    (should it not show, bisection on to 1e-9 and Anderson-Bjorck again, as before)."""
    with mpmath.workdps(DPS):
        x = mpmath.mpf(x)
        target = mpmath.log(f(x))

        def g(m):
            return mp_log_delta_mu(x, m) - target

        lo, hi = mpmath.mpf("0.05"), mpmath.mpf(8)
        for width in ("1e-3", "1e-9"):
            while hi - lo > mpmath.mpf(width):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
            try:
                r = mpmath.findroot(g, (lo, hi), solver="anderson")
            except (ValueError, ZeroDivisionError):
                continue
            eps_r = mpmath.mpf("1e-32") * r
            if g(r - eps_r) < 0 < g(r + eps_r):
                return r
        raise AssertionError(f"no confirmed root of the GDPT at {x}")


def mp_sup(f, a: float, b: float, n: int) -> tuple[mpmath.mpf, float]:
    """sup of the GDPT on [a, b]: a scan of n + 1 points, then golden-section search
    between the neighbours of the best one; returns (sup estimate, argmax)."""
    xs = np.linspace(a, b, n + 1)
    gs = [mp_gdpt(f, float(x)) for x in xs]
    i = max(range(len(gs)), key=lambda j: gs[j])
    lo, hi = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, n)])
    phi = (math.sqrt(5) - 1) / 2
    c, d = hi - phi * (hi - lo), lo + phi * (hi - lo)
    gc, gd = mp_gdpt(f, c), mp_gdpt(f, d)
    for _ in range(50):
        if gc > gd:
            hi, d, gd = d, c, gc
            c = hi - phi * (hi - lo)
            gc = mp_gdpt(f, c)
        else:
            lo, c, gc = c, d, gd
            d = lo + phi * (hi - lo)
            gd = mp_gdpt(f, d)
    return max(gc, gd, gs[i]), float(xs[i])


def contains(ball: arb, v) -> bool:
    """The 40-digit value ``v`` lies in ``ball`` (read at 200 bits: a tiny ball)."""
    with ctx.workprec(200):
        return bool(ball.contains(arb(mpmath.nstr(v, 45))))


# -- the enclosures -----------------------------------------------------------------------

@pytest.mark.parametrize("z", [-3.0, -0.7, 0.0, 1.25, 12.5, 150.0])
@pytest.mark.parametrize("c", [None, 0.2, 2.5])
def test_erfcx_taylor_coefficients_contain_mpmath(z, c):
    # reference: mpmath.taylor of erfcx(z + s) (- erfcx(z + c + s)) at 40 digits
    n, k0 = 10, 1
    with ctx.workprec(64):
        got = _erfcx_taylor(arb(z), None if c is None else arb(c), k0, n)
    with mpmath.workdps(DPS):
        zz = mpmath.mpf(z)
        f = (lambda s: mp_erfcx(s)) if c is None else \
            (lambda s: mp_erfcx(s) - mp_erfcx(s + mpmath.mpf(c)))
        ref = mpmath.taylor(f, zz, n + k0)
        ref = [ref[k0 + j] * mpmath.factorial(k0 + j) / mpmath.factorial(j)
               for j in range(n + 1)]
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        assert contains(g, r), (j, g, r)
        # tight: a few ulps at 64 bits relative to the coefficient
        assert float(g.rad()) <= 1e-15 * float(abs(r)) + 1e-300, (j, g)


@pytest.mark.slow
@pytest.mark.parametrize("z", [0.05, 40.0, 700.0, 5000.0])
@pytest.mark.parametrize("c", [None, 0.2])
def test_erfcx_taylor_of_the_search_order_is_tight(z, c):
    # the order the search uses (12, from erfcx itself) and far-out arguments: the extra
    # bits of the recurrence, estimated from its growth, still give 64-bit coefficients;
    # reference: mpmath.taylor of the same formula at 80 digits (at 40 its finite
    # differences lose the order-12 coefficient at z = 5000)
    n = _SERIES_ORDER
    with ctx.workprec(64):
        got = _erfcx_taylor(arb(z), None if c is None else arb(c), 0, n)
    # the Taylor series of erfcx(s) - erfcx(s + c) is the difference of the two series
    # (each cached: mpmath.taylor works at ~1200 digits, 2 s at z = 40, and the series at
    # z serves both c cases); at 80 digits the subtraction loses < 3 of them
    ref = _mp_erfcx_taylor(z, 0.0, n)
    if c is not None:
        with mpmath.workdps(2 * DPS):
            ref = [a - b for a, b in zip(ref, _mp_erfcx_taylor(z, c, n), strict=True)]
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        assert contains(g, r), (j, g, r)
        assert float(g.rad()) <= 1e-15 * float(abs(r)) + 1e-300, (j, g)


@functools.cache
def _mp_erfcx_taylor(z: float, c: float, n: int) -> list[mpmath.mpf]:
    """mpmath.taylor of erfcx at z + c (the floats added exactly), order n, 80 digits."""
    with mpmath.workdps(2 * DPS):
        return mpmath.taylor(mp_erfcx, mpmath.mpf(z) + mpmath.mpf(c), n)


def test_erfcx_taylor_on_a_ball_is_enclosed():
    # a narrow ball of z: every point's coefficients inside (mpmath at both ends and mid)
    z = arb(2.0, 1e-10)
    with ctx.workprec(64):
        got = _erfcx_taylor(z, arb(0.5), 0, 6)
    with mpmath.workdps(DPS):
        for zz in (2 - mpmath.mpf("1e-10"), mpmath.mpf(2), 2 + mpmath.mpf("1e-10")):
            ref = mpmath.taylor(lambda s: mp_erfcx(s) - mp_erfcx(s + mpmath.mpf("0.5")), zz, 6)
            assert all(contains(g, r) for g, r in zip(got, ref, strict=True))


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("x", [0.0, 0.75, 9.0, 60.0])
def test_gauss_log_series_matches_mpmath(mu, x):
    # reference: mpmath.taylor of the textbook log delta_mu at 40 digits
    n = 8
    with ctx.workprec(64):
        got = _series_at(_gauss_log_series(), arb(x), n, (arb(mu),), {})
    with mpmath.workdps(DPS):
        ref = mpmath.taylor(lambda t: mp_log_delta_mu(t, mpmath.mpf(mu)), mpmath.mpf(x), n)
    for g, r in zip(got, ref, strict=True):
        assert contains(g, r), (g, r)


@pytest.mark.parametrize("mu", [0.3, 1.5])
def test_profile_series_on_a_ball_encloses_every_point(mu):
    # the remainder's coefficient on a ball: mpmath's coefficient at points of the ball
    p = literal_gaussian(mu)
    fn = _log_series(p.bound_expr, p.var, ())
    f = mp_profile(p)
    n = 6
    for a, b in [(0.0, 0.4), (2.0, 3.5), (40.0, 41.0)]:
        with ctx.workprec(64):
            ball = arb(0.5 * (a + b), 0.5 * (b - a))
            # from the ranges of the erfcx arguments on the ball, and from their values
            # at the end points (monotone arguments), the cache shared
            cache: dict = {}
            _series_at(fn, arb(a), n, (), cache)
            gots = [_series_at(fn, ball, n, (), {}),
                    _series_at(fn, ball, n, (), cache, (arb(a), arb(b)))]
        with mpmath.workdps(DPS):
            for t in np.linspace(a, b, 5):
                ref = mpmath.taylor(lambda s: mpmath.log(f(s)), mpmath.mpf(float(t)), n)
                for got in gots:
                    assert all(contains(g, r) for g, r in zip(got, ref, strict=True)), \
                        (a, b, t)


def test_log_rates_is_an_exact_rewrite():
    # reference: mpmath values of both forms at 40 digits
    x = sympy.Symbol("x")
    e = sympy.log(5 * sympy.exp(x) - 4) + sympy.log(sympy.exp(2 * x) + 3 * sympy.exp(x) + 1)
    r = _log_rates(e, x)
    assert r != e
    fe, fr = sympy.lambdify(x, e, "mpmath"), sympy.lambdify(x, r, "mpmath")
    with mpmath.workdps(DPS):
        for t in ("0", "0.5", "3", "80"):
            assert abs(fe(mpmath.mpf(t)) - fr(mpmath.mpf(t))) < mpmath.mpf("1e-35")


def test_undecided_min_gives_no_series():
    # Min(1, 2 exp(-x)) crosses at log 2: on a ball around it no argument is active
    p = Profile(sympy.Min(1, 2 * sympy.exp(-eps)) / 2)
    fn = _log_series(p.bound_expr, p.var, ())
    with ctx.workprec(64):
        got = _series_at(fn, arb(math.log(2), 0.1), 4, (), {})
        assert not got[0].is_finite()
        inside = _series_at(fn, arb(2.0, 0.1), 4, (), {})  # 2 exp(-x) < 1 on all of it
    assert contains(inside[1], -1)  # d/dx log(exp(-x)) = -1


# -- the test itself ------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.3, 1.5])
def test_series_test_never_proves_a_false_bound(mu):
    # the literal Gaussian's sup is 2b (b the stored mu/2, attained at 0; see below): the
    # test must refuse every mu below it on an interval holding 0, and anywhere a value
    # below the GDPT there (mpmath G at the interval's midpoint)
    p = literal_gaussian(mu)
    f = mp_profile(p)
    fo = FirstOrder(p)
    fo.use_series(p)
    two_b = 2 * sympy.Rational(mu / 2)
    for w in (0.01, 0.5, 1.5625):
        assert fo._series_below(0.0, w, float(two_b) * (1 - 1e-12)) is not True
    for a, b in [(1.0, 1.25), (30.0, 30.25)]:
        g = mp_gdpt(f, 0.5 * (a + b))
        assert fo._series_below(a, b, float(g) * (1 - 1e-13)) is not True
        assert fo._series_below(a, b, float(g) + 1e-6) is True  # and it is strong


# -- measured brackets ------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("tol", [1e-6, 1e-9])
def test_literal_gaussian_certified_bracket(mu, tol):
    # truth from the stored binary constants: delta(eps) = Phi(b - A eps) - e^eps Phi(-b - A
    # eps) with A = the double 1/mu and b = the double mu/2; delta(0) = 2 Phi(b) - 1 =
    # delta_{2b}(0), so G(0) = 2b exactly; for mu = 1 and 4 (A = 1/(2b) exactly) the
    # profile is delta_{2b} itself and G = 2b everywhere.  mpmath shows G <= G(0) on a
    # grid (it decreases by < 1e-30 over [0, 100] for mu = 0.3).
    p = literal_gaussian(mu)
    f = mp_profile(p)
    with mpmath.workdps(DPS):
        two_b = 2 * mpmath.mpf(sympy.Rational(mu / 2))
        g0 = mp_gdpt(f, 0.0)
        assert abs(g0 - two_b) < mpmath.mpf("1e-35")
        grid = [mp_gdpt(f, x) for x in (0.5, 5.0, 40.0, 100.0)]
        assert max(grid) <= two_b + mpmath.mpf("1e-30")
    m = measure(p, 100.0, tol=tol, certify=True, refine=False, identify=False)
    assert m.certified
    assert m.lower <= two_b <= m.upper
    assert m.upper - m.lower <= tol
    # (the bracket comes from the near-Gaussian perturbation bound, without a search: the
    # series search on flat GDPTs is exercised by the bump profiles below)
    assert m.evaluations < 150


@pytest.mark.parametrize("mu", [0.3, 4.0])
def test_literal_gaussian_float_mode_bracket(mu):
    # the same truth (2b, the doubled stored mu/2) in float mode
    p = literal_gaussian(mu)
    two_b = 2 * mpmath.mpf(sympy.Rational(mu / 2))
    m = measure(p, 100.0, tol=1e-6, certify=False, refine=False, identify=False)
    assert not m.certified
    assert m.lower <= two_b <= m.upper
    assert m.upper - m.lower <= 1e-6


BUMPS = {
    # delta_1 times exp(1e-9 exp(-400 eps^2)): sup G ~ 1 + 1.09e-9 at eps = 0, width 0.05
    "bump at 0": ("exp(10**-9*exp(-400*eps**2))", 0.0, 0.3, 30),
    # delta_1 times exp(1e-7 exp(-400 (eps - 3)^2)): still non-increasing (the factor's
    # log-slope <= 2e-6 against (log delta_1)' ~ -3 there), its GDPT ~ 1 + 8.8e-9 in a
    # bump of width 0.05 around eps = 3 and ~ 1 elsewhere
    "bump at 3": ("exp(10**-7*exp(-400*(eps - 3)**2))", 2.8, 3.2, 40),
}


@pytest.mark.parametrize("name", sorted(BUMPS))
def test_near_gaussian_with_a_bump(name):
    # an exact Gaussian (mu = 1, integer literals) times a decreasing positive factor: a
    # privacy profile whose GDPT rises slightly above 1 in a narrow region; truth: mpmath
    # maximisation of its GDPT at 40 digits
    factor, a, b, n = BUMPS[name]
    base = "(erfc((eps - 1/2)/sqrt(2))/2 - exp(eps)*erfc((eps + 1/2)/sqrt(2))/2)"
    p = Profile.parse(f"{base}*{factor}")
    f = mp_profile(p)
    sup, _ = mp_sup(f, a, b, n)
    assert sup > 1 + mpmath.mpf("1e-9")  # the bump is real
    with mpmath.workdps(DPS):
        # outside [a, b] the GDPT stays below the bump's top
        assert all(mp_gdpt(f, x) < sup for x in (b + 0.5, 10.0, 60.0))
    for tol in (1e-6, 1e-9):
        m = measure(p, 100.0, tol=tol, certify=True, refine=False, identify=False)
        assert m.lower <= sup <= m.upper, (tol, m.lower, m.upper, sup)
        assert m.upper - m.lower <= tol


FAR_BUMPS = {
    # delta_1 times exp(c exp(-400 (eps - at)^2)): non-increasing (the factor's log-slope
    # stays below 0.03 against (log delta_1)' ~ -at), its GDPT ~ 1 + 1.1e-6 (1 + 6.8e-7)
    # in a bump of width 0.05 where the opening sweep of the search tries intervals
    # several units wide
    "1e-3 at 30": ("10**-3", 30.0),
    "1e-4 at 12": ("10**-4", 12.0),
}


@pytest.mark.parametrize("name", sorted(FAR_BUMPS))
def test_a_narrow_bump_far_out_is_found(name):
    # truth: mpmath maximisation of the GDPT at 40 digits around the bump; float mode,
    # and certified for the first
    c, at = FAR_BUMPS[name]
    base = "(erfc((eps - 1/2)/sqrt(2))/2 - exp(eps)*erfc((eps + 1/2)/sqrt(2))/2)"
    p = Profile.parse(f"{base}*exp({c}*exp(-400*(eps - {at})**2))")
    f = mp_profile(p)
    sup, _ = mp_sup(f, at - 0.2, at + 0.2, 20)
    assert sup > 1 + mpmath.mpf("5e-7")  # above the flat part by more than tol / 2
    for certify in (False, True) if at > 20 else (False,):
        m = measure(p, 100.0, tol=1e-6, certify=certify, refine=False, identify=False)
        assert m.certified == certify
        assert m.lower <= sup <= m.upper, (certify, m.lower, m.upper, sup)
        assert m.upper - m.lower <= 1e-6


def test_series_monotonicity_proof_and_a_rising_bump():
    # delta_1 times exp(5 exp(-400 (eps - 3)^2)) rises just before eps = 3 (the factor's
    # log-slope reaches ~ +85 against (log delta_1)' ~ -3); reference: the sign of the
    # mpmath derivative of its log at 40 digits
    base = "(erfc((eps - 1/2)/sqrt(2))/2 - exp(eps)*erfc((eps + 1/2)/sqrt(2))/2)"
    p = Profile.parse(f"{base}*exp(5*exp(-400*(eps - 3)**2))")
    f = mp_profile(p)
    with mpmath.workdps(DPS):
        assert mpmath.diff(lambda t: mpmath.log(f(t)), mpmath.mpf("2.95")) > 0
        assert mpmath.diff(lambda t: mpmath.log(f(t)), mpmath.mpf("3.4")) < 0
    fo = FirstOrder(p)
    fo.use_series(p)
    assert fo._series() is not None
    assert not fo._series_nonincreasing(2.9, 3.0)
    assert fo._series_nonincreasing(3.3, 3.6)
    assert fo._series_nonincreasing(10.0, 12.0)
    with pytest.raises(ProfileError):
        measure(p, 100.0, tol=1e-6, certify=True, refine=False, identify=False)


MIXTURE = ("(erfc((eps - 1/2)/sqrt(2))/2 - exp(eps)*erfc((eps + 1/2)/sqrt(2))/2)/2"
           " + (erfc((eps/2 - 1)/sqrt(2))/2 - exp(eps)*erfc((eps/2 + 1)/sqrt(2))/2)/2")


@pytest.mark.parametrize("name", ["literal 0.7", "subsampled", "mixture"])
def test_random_intervals_never_proved_below_the_gdpt(name):
    # random intervals (end at 0 or anywhere in [0, 40], widths 1e-3 to 5): with mu a
    # hair below the largest 40-digit mpmath G on 25 points of the interval the test
    # must never succeed (deeper: SYMGDP_TEST_SCALE)
    from symgdp import mechanisms

    p = {"literal 0.7": literal_gaussian(0.7),
         "subsampled": mechanisms.gaussian(1.0).subsample(0.3),
         "mixture": Profile.parse(MIXTURE)}[name]
    fo = FirstOrder(p)
    fo.use_series(p)
    assert fo._series() is not None
    f = mp_profile(p)
    rng = np.random.default_rng(11)
    proved = 0
    for _ in range(3 * SCALE):
        x = float(rng.choice([0.0, rng.uniform(0, 5), rng.uniform(0, 40)]))
        y = x + float(10 ** rng.uniform(-3, 0.7))
        gmax = max(mp_gdpt(f, t) for t in np.linspace(x, y, 25))
        for s in (-1e-6, -1e-12):
            assert fo._series_below(x, y, float(gmax * (1 + s))) is not True, (x, y, s)
        proved += fo._series_below(x, y, float(gmax * (1 + 1e-6))) is True
    assert proved >= 1  # it is not refusing everything


def test_prefetched_series_is_the_series_prepared_on_need():
    # reference: the series function prepared in the foreground (a second derivation of
    # the same expression) gives the same coefficients as the prefetched one
    from symgdp.measurement.series import (
        _LOG_SERIES,
        _SERIES_JOBS,
        _profile_series,
        prefetch_series,
    )

    p = literal_gaussian(0.7)
    _LOG_SERIES.clear()
    _SERIES_JOBS.clear()  # jobs other tests' measurements started and never collected
    prefetch_series(p)
    assert len(_SERIES_JOBS) == 1
    fn, pvals = _profile_series(p)
    assert not _SERIES_JOBS and fn is not None
    _LOG_SERIES.clear()
    ref = _log_series(p.bound_expr, p.var, ())
    with ctx.workprec(64):
        a = _series_at(fn, arb(3.0), 5, pvals, {})
        b = _series_at(ref, arb(3.0), 5, (), {})
    assert all(x.overlaps(y) and x.rad() < 1e-12 for x, y in zip(a, b, strict=True))
