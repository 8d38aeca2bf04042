"""Structural proofs of the first-order search (Min/Max/Piecewise profiles), exact
decimal literals and the third-order Taylor bound, against independent 40-digit truths.

Truths: a 40-digit mpmath scan plus golden-section search of the GDPT (``ref_sup_g`` of
``test_firstorder``, built on :mod:`reference`), with the profile evaluated by mpmath from
the textbook formula or from SymPy's own mpmath printer (never symgdp's evaluators); the
exact Gaussian mu for the decimal-literal Gaussian (which differs from it by float
rounding of its literals only).  Adversarial cases: a narrow rise inside a Min or Max,
an upward jump inside a nested Piecewise, an inactive spike above a Min's cap.
"""

from __future__ import annotations

import functools
import importlib

import mpmath
import pytest
import sympy
from references import ref_log_delta
from test_firstorder import DPS, check, ref_sup_g

from symgdp import Profile, eps, mechanisms
from symgdp.errors import ProfileError, SymgdpWarning
from symgdp.evaluation.interval import lambdify_arb
from symgdp.gaussian.gdp_balls import ErfcxDiff
from symgdp.measurement.firstorder import FirstOrder
from symgdp.measurement.measure import measure


def _mp_log_delta(profile: Profile):
    """log delta by SymPy's mpmath printer at 40 digits (parameters substituted)."""
    f = sympy.lambdify(eps, profile.expr.xreplace(dict(profile.values)), "mpmath")

    def log_delta(x: float) -> mpmath.mpf:
        with mpmath.workdps(DPS):
            return mpmath.log(mpmath.mpf(f(mpmath.mpf(x))))

    return log_delta


@pytest.mark.parametrize("eps0, n, certify", [(2.0, 10**4, False), (2.0, 10**4, True),
                                             (1.0, 10**6, True)])
def test_shuffle_amplification_is_bracketed(eps0, n, certify):
    # the nested Min/Max/Piecewise profile: proved monotone piece by piece; truth: a
    # 40-digit scan of the same expression through SymPy's mpmath printer (its maximum
    # is at eps = 0, where the eps0-DP part is the smaller one: the scan covers it)
    p = mechanisms.shuffle_amplification(eps0, n)
    m = measure(p, eps_h=50, tol=1e-5, refine=False, identify=False, certify=certify)
    check(m, _shuffle_truth(eps0, n), 1e-5)
    assert m.method == "first-order"


@functools.cache  # one truth per profile, shared by both certify modes
def _shuffle_truth(eps0: float, n: int) -> float:
    p = mechanisms.shuffle_amplification(eps0, n)
    return ref_sup_g(_mp_log_delta(p), 0.0, 0.5, n=10)[0]


@pytest.mark.slow
def test_refined_shuffle_amplification_is_bracketed():
    # the tour's path: refinement (a tangent line below a 40-digit branch point) first
    p = mechanisms.shuffle_amplification(2.0, 10**4)
    m = measure(p, eps_h=50, tol=1e-5, identify=False)
    truth, _ = ref_sup_g(_mp_log_delta(m.profile), 0.0, 0.5, n=10)
    check(m, truth, 1e-5)
    assert m.method == "first-order"


def test_decimal_literal_gaussian_certified_to_1e9():
    # 1/1.5 and 0.75 as decimal literals: within ~1e-14 of the exact delta_1.5, whose
    # GDPT is the constant 1.5 (closed form)
    p = Profile.parse("erfc((eps/1.5 - 0.75)/sqrt(2))/2"
                      " - exp(eps)*erfc((eps/1.5 + 0.75)/sqrt(2))/2")
    m = measure(p, eps_h=100, tol=1e-9, refine=False, identify=False, certify=True)
    check(m, 1.5, 1e-9, slack=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("certify", [False, True])
def test_scaled_gaussian_against_a_1d_maximisation(certify):
    # 0.999 delta_1: G rises towards 1 along the head; truth: 40-digit maximisation of
    # mu_GDP(eps, 0.999 delta_1(eps)) with the textbook delta_mu
    g = mechanisms.gaussian(1.0)
    p = Profile(sympy.Rational(999, 1000) * g.expr, g.values)
    m = measure(p, eps_h=30, tol=1e-7, refine=False, identify=False, certify=certify)
    check(m, _scaled_gaussian_truth(), 1e-7)


@functools.cache  # one truth for both certify modes
def _scaled_gaussian_truth() -> float:
    def log_delta(x):
        with mpmath.workdps(DPS):
            return mpmath.log(mpmath.mpf(999) / 1000) + ref_log_delta(x, 1)

    return ref_sup_g(log_delta, 0.0, 30.0, n=8)[0]


@pytest.mark.slow
def test_subsampled_gaussian_against_the_textbook_formula():
    # gamma delta_mu(log(1 + (e^eps - 1)/gamma)) with the textbook delta_mu
    gamma = mpmath.mpf(1) / 5
    p = mechanisms.gaussian(1.0).subsample(0.2)
    m = measure(p, eps_h=20, tol=1e-7, refine=False, identify=False, certify=True)

    def log_delta(x):
        with mpmath.workdps(DPS):
            y = mpmath.log(1 + mpmath.expm1(mpmath.mpf(x)) / gamma)
            return mpmath.log(gamma) + ref_log_delta(y, 1)

    truth, _ = ref_sup_g(log_delta, 0.0, 20.0, n=8)
    if m.covers_tail:
        # the whole line: G rises to lim G = 1 (the tail limit gamma-subsampling keeps:
        # closed form), proved to be the maximum
        assert m.tail_proof.startswith("the tail is the maximum")
        assert m.lower <= 1.0 <= m.upper and m.upper >= truth
    else:
        check(m, truth, 1e-7)


def test_erfcx_diff_ball_encloses_the_difference_and_its_derivatives():
    # reference: mpmath derivatives of exp(u^2) erfc(u) at 40 digits, differenced at
    # points inside each ball (large z with a small c is where term-by-term balls fail)
    from flint import arb

    z = sympy.Symbol("z")
    for c in (sympy.Rational(1, 5), sympy.sqrt(2) * sympy.Rational(3, 4)):
        for n in range(4):
            f = lambdify_arb(sympy.diff(ErfcxDiff(z, c), z, n), z)
            for lo, hi in [(-2.0, -1.5), (0.5, 1.0), (150.0, 150.5)]:
                ball = f(arb(lo).union(arb(hi)))
                if lo > 100:  # tight (its true range) where the terms agree to 3 digits
                    assert ball.rad() < 0.05 * abs(ball.mid())
                for t in (lo, (lo + hi) / 2, hi):
                    with mpmath.workdps(DPS):
                        def erfcx(u):
                            return mpmath.exp(u * u) * mpmath.erfc(u)
                        ref = (mpmath.diff(erfcx, t, n)
                               - mpmath.diff(erfcx, t + mpmath.mpf(float(c)), n))
                    # float(c) differs from c by < 1e-16: well inside the ball's width
                    assert ball.lower() <= arb(str(ref)) + 1e-12 * abs(float(ref))
                    assert ball.upper() >= arb(str(ref)) - 1e-12 * abs(float(ref))


# -- adversarial: what the structural rules must not accept ----------------------------

_C = sympy.Rational(300012345, 10**8)
_SPIKE = sympy.Rational(1, 100) * sympy.exp(-10**16 * (eps - _C)**2)  # width ~1e-8


@pytest.mark.parametrize("kind", ["min", "max"])
@pytest.mark.parametrize("certify", [False, True])
def test_narrow_rise_inside_min_or_max_is_refused(kind, certify):
    # the rise sits in the active argument, between every grid point of the validation
    f = sympy.exp(-eps) + _SPIKE
    e = (sympy.Min(sympy.Rational(9, 10), f) if kind == "min"
         else sympy.Max(sympy.exp(-2 * eps), f))
    with pytest.raises(ProfileError, match="increases"):
        measure(Profile(e), eps_h=20, tol=1e-6, refine=False, identify=False,
                certify=certify)


def test_structural_rules_on_single_intervals():
    x0 = float(_C)
    # the spike is active under the Min: not provably non-increasing around it
    fo = FirstOrder(Profile(sympy.Min(sympy.Rational(9, 10), sympy.exp(-eps) + _SPIKE)))
    assert not fo.nonincreasing(x0 - 1e-3, x0 + 1e-3)
    assert fo.nonincreasing(1.0, 2.0)
    # above the cap 1/100 the spike is never active: the Min is constant there
    fo = FirstOrder(Profile(sympy.Min(sympy.Rational(1, 100), sympy.exp(-eps) + _SPIKE)))
    assert fo.nonincreasing(x0 - 1e-3, x0 + 1e-3)
    # an upward jump of a Piecewise whose condition is not of the form eps < c
    up = sympy.Min(sympy.Rational(1, 2), sympy.Piecewise(
        (sympy.exp(-eps), sympy.exp(eps) <= 20),
        (sympy.exp(-eps) + sympy.Rational(1, 1000), True)))
    j = float(sympy.log(20))
    assert not FirstOrder(Profile(up)).nonincreasing(j - 0.01, j + 0.01)
    # the same jump downwards is non-increasing
    down = sympy.Min(sympy.Rational(1, 2), sympy.Piecewise(
        (sympy.exp(-eps) + sympy.Rational(1, 1000), sympy.exp(eps) <= 20),
        (sympy.exp(-eps), True)))
    assert FirstOrder(Profile(down)).nonincreasing(j - 0.01, j + 0.01)


def test_long_first_order_search_warns(monkeypatch):
    # the module, not the function of the same name that symgdp exports
    monkeypatch.setattr(importlib.import_module("symgdp.measurement.search"),
                        "_WARN_AFTER_SECONDS", 0.0)
    with pytest.warns(SymgdpWarning, match="first-order search has run"):
        measure(mechanisms.laplace(1.0), eps_h=10, tol=1e-6, refine=False,
                identify=False)


# -- pure-DP profiles written Piecewise((0, eps >= eps0), (f, True)) (issue 30) ------------

def test_mirrored_branch_points_and_exact_zero_continuity():
    from symgdp.measurement.structure import _split_points

    # f reaches 0 at eps0 to second order: its ball there is 0 +- 1e-77, which the
    # relative tolerance cannot call continuous; SymPy's own evaluation gives exactly 0
    f = (sympy.exp(sympy.Rational(1, 4)) - sympy.exp(eps / 2)) ** 2
    pts, downs, jumps = _split_points(
        sympy.Piecewise((0, eps >= sympy.Rational(1, 2)), (f, True)), eps)
    assert (pts, downs, jumps) == ([sympy.Rational(1, 2)], [], [])
    # a downward jump at 1/2 in the mirrored form is a down, not continuity
    pts, downs, jumps = _split_points(
        sympy.Piecewise((0, eps >= sympy.Rational(1, 2)), (1 - eps, True)), eps)
    assert (pts, downs) == ([], [sympy.Rational(1, 2)])
    # an upward jump stays a possible jump (never trusted)
    pts, downs, jumps = _split_points(
        sympy.Piecewise((1, eps >= sympy.Rational(1, 2)), (eps / 4, True)), eps)
    assert pts == [] and downs == [] and jumps
    # ends that do not decrease are not a mirrored run
    pts, downs, jumps = _split_points(sympy.Piecewise(
        (0, eps >= 1), (1 - eps, eps >= 2), (2 - eps, True)), eps)
    assert 2 not in pts


@pytest.mark.parametrize("b", [sympy.sqrt(3) / sympy.pi, sympy.Rational(2)])
def test_logistic_noise_profile_measured_by_first_order(b):
    # The logistic noise profile (Delta = 1) reaches 0 at eps0 = 1/b to second order.  It
    # used to be refused ("cannot prove non-increasing on [eps0, eps0 + ulp]"): the
    # condition eps >= eps0 was not a checked branch point, and the one-ulp ball around
    # eps0 holds the branch's rise beyond it.  Truth: the 40-digit scan of its GDPT with
    # the profile written from the logistic CDF by hand (not the derived expression).
    e0 = 1 / b
    f = (sympy.exp(e0 / 2) - sympy.exp(eps / 2)) ** 2 / (sympy.exp(e0) - 1)
    p = Profile(sympy.Piecewise((0, eps >= e0), (f, True)))
    m = measure(p, eps_h=20, tol=1e-4)
    assert "first-order" in m.method or "first-order" in str(m)
    g = sympy.lambdify(eps, f, "mpmath")

    def log_delta(x):
        with mpmath.workdps(DPS):
            return mpmath.log(g(mpmath.mpf(x))) if x < float(e0) else -mpmath.inf

    truth, _ = ref_sup_g(log_delta, 0.0, float(e0) * (1 - 1e-12), n=60)
    check(m, truth, 1e-4)
