"""symgdp.additive_noise: profiles derived from a noise density, checked against the
catalogue's hand-written profiles (exact symbolic equality) and against an independent
40-digit mpmath quadrature of the definition delta(eps) = int max(0, p(x) - e^eps p(x - D)).
"""

from __future__ import annotations

from itertools import pairwise

import mpmath
import pytest
import sympy
from references import ref_log_delta
from sympy.stats import Laplace, Logistic, Normal

import symgdp
from symgdp import mechanisms
from symgdp.errors import ProfileError

SIGMA = sympy.Symbol("sigma", positive=True)
B = sympy.Symbol("b", positive=True)
D = mechanisms.SENSITIVITY
X = sympy.Symbol("x", real=True)


@pytest.fixture(scope="module")
def gaussian():
    return symgdp.additive_noise(Normal("Z", 0, SIGMA))


@pytest.fixture(scope="module")
def laplace():
    return symgdp.additive_noise(Laplace("Z", 0, B))


@pytest.fixture(scope="module")
def logistic():
    return symgdp.additive_noise(Logistic("Z", 0, B))


@pytest.fixture(scope="module")
def gumbel_noise():
    # standard Gumbel noise, sensitivity 1: derived once (about 40 s of symbolic steps) for
    # the two tests that read it (its profile, and its verdict)
    x = sympy.Symbol("x")
    return symgdp.additive_noise(sympy.exp(-(x + sympy.exp(-x))), sensitivity=1)


def quadrature_profile(density, eps, shift, kinks=(), dps=40):
    """The definition: int max(0, p(x) - e^eps p(x - shift)) dx at ``dps`` digits.

    The integrand changes sign where p(x) = e^eps p(x - shift): that point is found by
    bisection on the sign of the integrand itself (no loss, no threshold formula), and
    the integral is split there and at the density's own kinks.
    """
    with mpmath.workdps(dps + 20):
        e = mpmath.mpf(eps)
        s = mpmath.mpf(shift)

        def g(x):
            return density(x) - mpmath.exp(e) * density(x - s)

        lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
        for _ in range(12):             # probes down to -4096 and up to 4096
            if g(lo) > 0:
                break
            lo *= 2
        for _ in range(12):
            if g(hi) <= 0:
                break
            hi *= 2
        if not g(lo) > 0:
            return mpmath.mpf(0)        # the integrand is positive at no probe point
        assert g(hi) <= 0
        for _ in range(400):
            mid = (lo + hi) / 2
            if g(mid) > 0:
                lo = mid
            else:
                hi = mid
        cross = (lo + hi) / 2
        near = [cross - mpmath.mpf(2) ** k for k in range(-8, 9)]  # where the mass sits
        points = sorted({-mpmath.inf, cross, *near,
                         *[mpmath.mpf(k) for k in kinks if k < cross]})
        total = mpmath.mpf(0)
        for a, c in pairwise(points):
            total += mpmath.quad(lambda t: max(g(t), 0), [a, c])
        return +total


def close(got, ref, digits):
    """|got - ref| <= 10^-digits |ref|, compared at 60 digits (not the default 15)."""
    with mpmath.workdps(60):
        return abs(mpmath.mpf(got) - ref) <= mpmath.mpf(10) ** -digits * abs(ref)


def gauss_density(sigma):
    return lambda x: mpmath.npdf(x, 0, sigma)


def laplace_density(b):
    return lambda x: mpmath.exp(-abs(x) / b) / (2 * b)


def logistic_density(b):
    return lambda x: mpmath.exp(-x / b) / (b * (1 + mpmath.exp(-x / b)) ** 2)


# -- the known cases, exactly ------------------------------------------------------------
def test_gaussian_is_balle_wang_exactly(gaussian):
    # the catalogue's Gaussian profile (Balle & Wang 2018, Thm 8) with mu = Delta/sigma:
    # symbolically equal, not only numerically
    hand = mechanisms.gaussian(sigma=SIGMA, sensitivity=D).expr
    assert sympy.simplify(gaussian.expr - hand) == 0
    d = gaussian.meta["derivation"]
    assert sympy.simplify(d.loss - D * (D - 2 * X) / (2 * SIGMA**2)) == 0
    assert sympy.simplify(d.threshold - (D / 2 - SIGMA**2 * symgdp.eps / D)) == 0
    assert sympy.simplify(d.tail_limit - D**2 / SIGMA**2) == 0
    assert d.verdict.startswith("GDP")


def test_laplace_is_the_closed_form(laplace):
    # mechanisms.laplace(b=b, sensitivity=Delta): Max(0, 1 - exp((eps - Delta/b)/2))
    pw = laplace.meta["derivation"].profile   # the Profile clamps eps at eps0 inside
    assert isinstance(pw, sympy.Piecewise)
    (zero, cond), (branch, _) = pw.args
    assert zero == 0 and sympy.simplify(cond.rhs - D / B) == 0   # 0 from eps0 = Delta/b on
    assert sympy.simplify(branch - (1 - sympy.exp((symgdp.eps - D / B) / 2))) == 0
    d = laplace.meta["derivation"]
    assert d.verdict.startswith("pure DP") and sympy.simplify(d.loss_bound - D / B) == 0
    hand = mechanisms.laplace(b=2, sensitivity=1.5)
    mine = laplace.replace(values={"b": 2, "Delta": 1.5})
    for e in (0.0, 0.3, 0.74, 0.75, 2.0):
        assert mine(e) == pytest.approx(hand(e), rel=1e-14, abs=1e-300)


# exact (rational) parameter values: Floats would carry only 15 digits into mp()
R = sympy.Rational


def mpq(r):
    """The rational r as an mpf of 80 digits (at the default 15 it would be a double)."""
    with mpmath.workdps(80):
        return mpmath.mpf(r.p) / r.q


@pytest.mark.parametrize("sigma, shift", [(R(1), R(1)), (R(1, 2), R(2)), (R(3), R(1, 2))])
def test_gaussian_against_quadrature(gaussian, sigma, shift):
    p = gaussian.replace(values={"sigma": sigma, "Delta": shift})
    for e in (0.0, 0.5, 2.0):
        # 40-digit definition
        ref = quadrature_profile(gauss_density(mpq(sigma)), e, mpq(shift))
        assert close(p.mp(e, dps=40), ref, 30)
        assert p(e) == pytest.approx(float(ref), rel=1e-10)
    for e in (6.0, 40.0):
        # far out (delta down to 1e-285 and below): the closed form delta_mu at 40
        # digits (references.py), mu = Delta/sigma exactly
        with mpmath.workdps(60):
            truth = ref_log_delta(mpmath.mpf(e), mpq(shift) / mpq(sigma))
        with mpmath.workdps(50):
            assert close(mpmath.log(p.mp(e, dps=40)), truth, 28)
        assert p.log_delta(e) == pytest.approx(float(truth), rel=1e-12)


def test_laplace_against_quadrature(laplace):
    b, shift = R(4, 5), R(13, 10)
    p = laplace.replace(values={"b": b, "Delta": shift})
    for e in (0.0, 0.4, 1.5):                       # eps0 = 1.625
        ref = quadrature_profile(laplace_density(mpq(b)), e, mpq(shift),
                                 kinks=(0, mpq(shift)))   # 40-digit definition
        assert close(p.mp(e, dps=40), ref, 30)
    assert p(1.625) == 0.0 and p(3.0) == 0.0


@pytest.mark.parametrize("b, shift", [(R(1), R(1)), (R(7, 10), R(13, 10))])
def test_logistic_against_quadrature(logistic, b, shift):
    d = logistic.meta["derivation"]
    assert d.verdict.startswith("pure DP") and sympy.simplify(d.loss_bound - D / B) == 0
    p = logistic.replace(values={"b": b, "Delta": shift})
    eps0 = float(shift / b)
    for e in (0.0, 0.2 * eps0, 0.7 * eps0, 0.99 * eps0):
        ref = quadrature_profile(logistic_density(mpq(b)), e, mpq(shift))  # 40 digits
        assert close(p.mp(e, dps=40), ref, 28)
        assert p(e) == pytest.approx(float(ref), rel=1e-8)
    assert p(eps0 * 1.01) == 0.0


def test_asymmetric_noise_takes_both_directions(gumbel_noise):
    # standard Gumbel noise: log-concave, not symmetric; P vs Q has an unbounded loss,
    # Q vs P a loss bounded by Delta -- the profile is the larger of both
    p = gumbel_noise
    d = p.meta["derivation"]
    assert "both directions" in d.directions
    # below x = -60 the Gumbel density is exp(-x - e^(-x)) < exp(-e^60): read as 0 (its
    # mass there is below 1e-(10^25), and mpmath would spend minutes on exp(-e^(10^20)))
    def gumbel(t):
        return mpmath.mpf(0) if t < -60 else mpmath.exp(-(t + mpmath.exp(-t)))

    mirror = lambda t: gumbel(-t)  # noqa: E731
    for e in (0.0, 0.5, 1.5, 4.0):
        ref = max(quadrature_profile(gumbel, e, 1), quadrature_profile(mirror, e, 1))
        assert close(p.mp(e, dps=40), ref, 25)


def test_measured_mu_of_derived_gaussian(gaussian):
    # sigma = 2, Delta = 1 is exactly 0.5-GDP (Dong, Roth & Su 2021, Thm 2.7)
    m = gaussian.replace(values={"sigma": 2, "Delta": 1}).measure(eps_h=20, tol=1e-5)
    assert m.lower <= 0.5 <= m.upper and m.upper - m.lower <= 1e-4


# -- refusals -----------------------------------------------------------------------------
def test_shifted_cauchy_refused_with_reason():
    # centred Student-t/Cauchy noise has its own route (tests/noise/test_student.py); a
    # Cauchy centred at 1 is not recognised there and meets the log-concavity test, which
    # names the turning points of the loss: (Delta + 2) / 2 -+ sqrt(Delta^2 + 4 gamma^2)/2
    g = sympy.Symbol("gamma", positive=True)
    from sympy.stats import Cauchy

    with pytest.raises(ProfileError, match="not log-concave") as info:
        symgdp.additive_noise(Cauchy("Z", 1, g), sensitivity=1)
    assert "sqrt(Delta**2 + 4*gamma**2)" in str(info.value)


def test_student_t_like_is_derived():
    # 2/(pi (1 + x^2)^2), refused before the Student-t route, is nu = 3 there
    x = sympy.Symbol("x")
    p = symgdp.additive_noise(2 / (sympy.pi * (1 + x**2) ** 2), sensitivity=1)
    assert p.meta["nu"] == 3 and p.meta["derivation"].verdict.startswith("pure DP")


def test_support_not_the_line_refused():
    from sympy.stats import Exponential

    with pytest.raises(ProfileError, match="not the whole real line"):
        symgdp.additive_noise(Exponential("Z", 1))


def test_gumbel_verdict_not_gdp(gumbel_noise):
    # Gumbel's left tail is double-exponential: P against Q has delta ~ exp(-eps/(e^D - 1)),
    # an exponential tail, so eps^2/(-2 log delta) -> oo (theory §5): not GDP
    p = gumbel_noise
    d = p.meta["derivation"]
    assert d.loss_bound == sympy.oo
    assert d.tail_limit == sympy.oo and d.verdict.startswith("not GDP")


def test_crosscheck_refuses_a_wrong_profile():
    # the check is independent of the derivation: a profile off by 1e-7 (relative) is
    # caught (its tolerance is 10 digits)
    from symgdp.noise.check import crosscheck
    from symgdp.noise.density import read_density

    x = sympy.Symbol("x")
    d = read_density(sympy.exp(-sympy.Abs(x)) / 2)
    right = sympy.Max(0, 1 - sympy.exp((symgdp.eps - 1) / 2))
    assert crosscheck(d, right, sympy.Integer(1), {}).startswith("agrees")
    with pytest.raises(ProfileError, match="disagrees with the quadrature"):
        crosscheck(d, right * (1 + sympy.Rational(1, 10**7)), sympy.Integer(1), {})


def test_report_shows_the_derivation(laplace):
    r = symgdp.report(laplace.replace(values={"b": 2, "Delta": 1}), measure=False)
    tex = r.to_latex()
    assert tex.startswith(r"\begin{align*}")
    for row in ("privacy loss", "monotonicity", "threshold", "directions", "verdict"):
        assert rf"\text{{{row}:}}" in tex
    assert "privacy loss" in r.to_text() and "x_eps" in r.to_text()
    block = laplace.meta["derivation"].to_latex()
    assert block.startswith(r"\begin{align*}") and block.endswith(r"\end{align*}")


def test_logistic_closed_form(logistic):
    # by hand: with A = e^(Delta/b), r = sqrt(A e^eps), F(x_eps) = (A - r)/(A - 1) and
    # F(x_eps - Delta) = (A - r)/(r (A - 1)), so delta = (A - r)^2/(A (A - 1))
    # = (e^(Delta/2b) - e^(eps/2))^2/(e^(Delta/b) - 1) below eps0 = Delta/b
    (zero, cond), (branch, _) = logistic.meta["derivation"].profile.args
    hand = (sympy.exp(D / (2 * B)) - sympy.exp(symgdp.eps / 2)) ** 2 / (sympy.exp(D / B) - 1)
    assert zero == 0 and sympy.simplify(cond.rhs - D / B) == 0
    assert sympy.simplify(branch - hand) == 0


@pytest.mark.parametrize("text", [False, True])
def test_step_density_refused_naming_the_staircase(text):
    # a staircase density typed with floor (Geng & Viswanath, gamma = 1/2, eps0 = 1): not
    # read by the log-concave derivation; refused at once, naming the exact route
    x = sympy.Symbol("x", real=True)
    b = sympy.exp(-1)
    k = sympy.floor(sympy.Abs(x))
    f = sympy.Piecewise(((1 - b) / (1 + b) * b ** k, sympy.Abs(x) - k < sympy.S.Half),
                        ((1 - b) / (1 + b) * b ** (k + 1), True))
    with pytest.raises(ProfileError, match=r"noise\.staircase\.staircase"):
        symgdp.additive_noise(str(f) if text else f, 1, x)
