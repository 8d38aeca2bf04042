"""Generalized Gaussian noise exp(-|x/sigma|^k): the certified profile against closed forms
(k = 2: the Gaussian, Balle & Wang 2018, Thm 5, written here with mpmath.ncdf; k = 1: the
Laplace profile 1 - e^{(eps - Delta/sigma)/2}) and, for other k, against a 40-digit mpmath
quadrature of the definition int max(0, p(x) - e^eps p(x - Delta)) dx, split at the sign
change found by mpmath.findroot.
"""

from __future__ import annotations

import flint
import mpmath
import pytest

from symgdp.errors import DomainError
from symgdp.noise.gengauss import generalized_gaussian, variance

DPS = 40


def _root(k, s, d, e):
    """x_eps: L(x) = (|x - d|^k - |x|^k)/s^k = eps, by mpmath.findroot in a bracket."""
    def loss(x):
        return (abs(x - d) ** k - abs(x) ** k) / s ** k - e

    lo = mpmath.mpf(-1)
    while loss(lo) <= 0:
        lo *= 2
    return mpmath.findroot(loss, (lo, d), solver="anderson")


def gamma_profile(k, s, d, eps, dps=DPS):
    """``dps`` digits: F(x_eps) - e^eps F(x_eps - d), F from mpmath's regularised incomplete
    gamma function (an implementation independent of Arb's)."""
    with mpmath.workdps(dps):
        k, s, d, e = (mpmath.mpf(v) for v in (k, s, d, eps))

        def F(x):
            q = mpmath.gammainc(1 / k, abs(x / s) ** k, mpmath.inf, regularized=True) / 2
            return q if x <= 0 else 1 - q

        x = _root(k, s, d, e)
        return F(x) - mpmath.exp(e) * F(x - d)


def quad_profile(k, s, d, eps):
    """The definition int max(0, p(x) - e^eps p(x - d)) dx by 40-digit quadrature, split
    geometrically towards the sign change (good to ~10 digits in far tails)."""
    with mpmath.workdps(DPS):
        k, s, d, e = (mpmath.mpf(v) for v in (k, s, d, eps))
        c = k / (2 * s * mpmath.gamma(1 / k))

        def g(x):
            return c * (mpmath.exp(-abs(x / s) ** k) - mpmath.exp(e - abs((x - d) / s) ** k))

        x = _root(k, s, d, e)
        pts = sorted({-mpmath.inf, *[x - mpmath.mpf(2) ** j for j in range(8, -12, -1)], x,
                      *([mpmath.mpf(0)] if x > 0 else [])})
        return mpmath.quad(g, pts, maxdegree=10)


def gauss_profile(mu, eps):
    with mpmath.workdps(DPS):
        mu, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("scale, shift", [(1.0, 1.0), (3.0, 2.0), (0.5, 1.0)])
def test_k2_is_the_gaussian(scale, shift):
    # exp(-x^2/s^2): a Gaussian of standard deviation s/sqrt 2, so mu = sqrt(2) Delta / s
    p = generalized_gaussian(2, scale=scale, sensitivity=shift)
    with mpmath.workdps(DPS):
        mu = mpmath.sqrt(2) * shift / scale
    for eps in (0.0, 0.5, 2.0, 8.0):
        truth = gauss_profile(mu, eps)
        up = p.source.delta_ball(eps)
        with mpmath.workdps(DPS):
            got = mpmath.mpf(up.mid().str(45, radius=False))
            assert got >= truth * (1 - mpmath.mpf(10) ** -36)  # an upper bound (to 40 digits)
            assert got - truth <= 1e-30 * truth          # and a tight one
        assert p.log_delta(eps) >= float(mpmath.log(truth))


def test_k1_is_the_laplace():
    p = generalized_gaussian(1, scale=2.0, sensitivity=1.0)   # eps0 = Delta/b = 1/2
    for eps in (0.0, 0.1, 0.3, 0.49):
        with mpmath.workdps(DPS):
            truth = 1 - mpmath.exp((mpmath.mpf(eps) - mpmath.mpf(0.5)) / 2)
            got = mpmath.mpf(p.source.delta_ball(eps).mid().str(45, radius=False))
            # an upper bound (up to the reference's own 40 digits), and a tight one
            assert truth * (1 - mpmath.mpf(10) ** -36) <= got <= truth * (1 + mpmath.mpf(10) ** -30)
    assert p(0.5) == 0.0 and p(3.0) == 0.0


@pytest.mark.parametrize("k", [1.5, 3.0, 1.25])
def test_other_shapes_against_two_references(k):
    p = generalized_gaussian(k, scale=1.0, sensitivity=1.0)
    for eps in (0.0, 0.4, 1.5, 4.0):
        truth = gamma_profile(k, 1, 1, eps)
        with mpmath.workdps(DPS):
            got = mpmath.mpf(p.source.delta_ball(eps).mid().str(45, radius=False))
            assert truth * (1 - mpmath.mpf(10) ** -30) <= got   # an upper bound
            assert got <= truth * (1 + mpmath.mpf(10) ** -30)   # and a tight one
            assert abs(got - quad_profile(k, 1, 1, eps)) <= 1e-8 * truth
        assert p.log_delta(eps) >= float(mpmath.log(truth)) - 1e-15


def test_variance_closed_form():
    # Gamma(3/k)/Gamma(1/k): 1/2 for k = 2 (sigma^2/2), 2 for k = 1 (Laplace: 2 b^2)
    assert abs(variance(2, 1.0) - 0.5) < 1e-15 and abs(variance(1, 3.0) - 18.0) < 1e-12


def test_bad_shapes_refused():
    with pytest.raises(DomainError, match="k = 0.5 is below 1"):
        generalized_gaussian(0.5)
    with pytest.raises(DomainError, match="scale sigma must be a positive"):
        generalized_gaussian(2, scale=-1.0)
    with pytest.raises(DomainError, match="sensitivity must be a positive"):
        generalized_gaussian(2, sensitivity=float("nan"))


def test_additive_noise_routes_the_generalized_gaussian():
    import sympy

    import symgdp
    from symgdp.errors import ProfileError

    x = sympy.Symbol("x")
    k = sympy.Rational(3)
    # |x|^3, which SymPy writes x^2 |x|: still recognised; sigma = 1
    density = k / (2 * sympy.gamma(1 / k)) * sympy.exp(-sympy.Abs(x) ** 3)
    p = symgdp.additive_noise(density, sensitivity=1)
    assert p.source is not None and "k = 3" in p.name
    for eps in (0.0, 1.5):
        truth = gamma_profile(3, 1, 1, eps)   # mpmath's incomplete gamma, 40 digits
        with mpmath.workdps(DPS):
            got = mpmath.mpf(p.source.delta_ball(eps).mid().str(45, radius=False))
            assert abs(got - truth) <= mpmath.mpf(10) ** -30 * truth
    with pytest.raises(DomainError, match="integrates to 2.0"):
        symgdp.additive_noise(2 * density, sensitivity=1)
    # a symbolic sensitivity: the parametric family, the same source once Delta is bound
    fam = symgdp.additive_noise(density)
    with pytest.raises(ProfileError, match="unbound parameters Delta"):
        fam(1.0)
    assert fam.replace(values={"Delta": 1})(1.5) == p(1.5)


@pytest.mark.parametrize("eps", [4.999, 5.0 - 2.0 ** -50, 5.0, -5.0])
def test_k1_at_the_pure_dp_edge_with_a_scale_not_binary(eps):
    # sigma = 1/5, Delta = 1: L takes values in [-5, 5], and 5 is sup L; the Laplace
    # closed form delta = 1 - e^{(eps - 5)/2} on [-5, 5] (40 digits, with expm1).  eps = 5
    # sits in the ball of Delta/sigma (1/5 is not a binary fraction) and 5 - 2^-50 sat in
    # the 53-bit ball it was computed in: both looped for ever looking for L > eps
    import sympy

    p = generalized_gaussian(1, scale=sympy.Rational(1, 5), sensitivity=1)
    with mpmath.workdps(DPS), flint.ctx.workprec(256):  # upper() rounds at the context's
        truth = -mpmath.expm1((mpmath.mpf(eps) - 5) / 2)  # no cancellation near eps = 5
        up = mpmath.mpf(p.source.delta_ball(eps).upper().str(60, radius=False))
        assert truth * (1 - mpmath.mpf(10) ** -36) <= up <= truth + mpmath.mpf(10) ** -60


@pytest.mark.parametrize("k, eps", [(1.01, 6.0), (1.01, 8.0)])
def test_k_near_one_far_threshold(k, eps):
    # x_eps near -10^77 (k = 1.01, eps = 6): |x - Delta|^k - |x|^k in 256-bit balls was a
    # difference of two numbers near 10^78 with L = 6 lost in its radius, so the bracket
    # never decided (a hang); the loss is now |x|^k expm1(k log1p(Delta/|x|)).  Reference:
    # the direct difference at 150 digits (mpmath's incomplete gamma), so no cancellation
    with mpmath.workdps(150):
        truth = gamma_profile(mpmath.mpf(k), 1, 1, eps, dps=150)
        assert truth > 0
        p = generalized_gaussian(k)
        with flint.ctx.workprec(256):
            up = mpmath.mpf(p.source.delta_ball(eps).upper().str(60, radius=False))
        assert up >= truth                                   # the proved upper bound holds
        assert mpmath.log(up) - mpmath.log(truth) <= 1e-8 * abs(mpmath.log(truth))  # tight
        assert p.log_delta(eps) >= float(mpmath.log(truth))


def test_composition_is_certified_with_a_floor():
    # the source encloses the exact profile (its balls' lower ends too), so a composition
    # is certified and has a floor.  References: k = 2, sigma = 2 is the Gaussian with
    # standard deviation sqrt(2), 3-fold mu = sqrt(3/2) (closed form, Dong, Roth & Su 2021,
    # Cor. 3.3); k = 1, sigma = 2 is Laplace with b = 2, composed through the catalogue's
    # closed-form profile (a second route): the brackets must overlap
    import math

    import symgdp
    from symgdp import mechanisms

    g = symgdp.compose(generalized_gaussian(2, 2.0, 1), times=3, discretization=4e-3)
    assert g.certified and g.mu_floor <= math.sqrt(1.5) <= g.mu_upper
    assert g.mu_upper - g.mu_floor < 1e-3
    lap = symgdp.compose(generalized_gaussian(1, 2.0, 1), times=2, discretization=4e-3)
    ref = symgdp.compose(mechanisms.laplace(b=2.0), times=2, discretization=4e-3)
    assert lap.certified and lap.mu_floor <= ref.mu_upper and ref.mu_floor <= lap.mu_upper
    with mpmath.workdps(DPS), flint.ctx.workprec(256):   # one step's enclosure, 40 digits
        src = generalized_gaussian(3, 1, 1).source
        for eps in (0.0, 0.7, 2.5):
            low, high = src.delta_bounds(eps)
            truth = gamma_profile(3, 1, 1, eps)
            lo = mpmath.mpf(low.lower().str(45, radius=False))
            hi = mpmath.mpf(high.upper().str(45, radius=False))
            slack = mpmath.mpf(10) ** -35 * truth   # the reference's own accuracy
            assert lo <= truth + slack and truth - slack <= hi and hi - lo <= 1e-30 * truth


def test_grid_values_bound_the_profile_at_the_exact_grid_points():
    # the one-step grid of a composition sits at p * disc exactly (disc the float); the
    # float product p * disc is rounded, and delta at a rounded-up eps is below delta at the
    # grid point: on this grid the upper values were an ulp below the truth at 28 of the 68
    # points checked.  Reference: the 50-digit incomplete-gamma profile (mpmath, not Arb)
    # at the exact grid point
    from symgdp.pld.onestep import grid_values

    disc = 0.0013  # not a binary fraction
    pos, V, A, _, _ = grid_values(generalized_gaussian(3, 1.0, 1), disc, 1e-18, 400)
    for i in [*range(0, len(pos), 12), len(pos) - 1]:
        with mpmath.workdps(50):
            e = mpmath.mpf(int(pos[i])) * mpmath.mpf(disc)   # exact at 50 digits
            truth = gamma_profile(3, 1, 1, e, dps=50)
            assert mpmath.mpf(A[i]) <= truth <= mpmath.mpf(V[i]), (int(pos[i]), V[i], A[i])
