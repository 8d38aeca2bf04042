"""symgdp.additive_noise(..., support="integers"): profiles of noise on the integers.

References, independent of the package: the discrete Laplace closed form (computed here by
hand), a 40-digit mpmath direct sum of sum_x max(0, p(x) - e^eps p(x - D)) (both directions)
with the normaliser summed the same way, and dp_accounting's DiscreteLaplacePrivacyLoss and
DiscreteGaussianPrivacyLoss (their get_delta_for_epsilon: exact for the Laplace, for the
Gaussian over a support truncated where the mass left out is below 1e-30).
"""

from __future__ import annotations

import math

import flint
import mpmath
import numpy as np
import pytest
import sympy
from dp_accounting.pld import privacy_loss_mechanism as plm

import symgdp
from symgdp.errors import DomainError, ProfileError

K = sympy.Symbol("k", integer=True)
J = sympy.Symbol("j", integer=True)
B = sympy.Symbol("b", positive=True)


def direct_sum(logw, eps, shift, dps=40):
    """40-digit sum_x max(0, p(x) - e^eps p(x - shift)), both directions, p = w / sum w,
    over a window where every omitted weight is below e^-400 of the largest (with a log-
    concave weight the rest is far below the 40 digits)."""
    with mpmath.workdps(dps):
        top = max(logw(k) for k in range(-50, 51))
        lo, hi = -1, 1
        while logw(lo) > top - 400:
            lo -= 1
        while logw(hi) > top - 400:
            hi += 1
        lo, hi = min(lo, -hi), max(hi, -lo)  # symmetric, for the reversed direction
        ks = range(lo - shift, hi + shift + 1)
        w = {k: mpmath.exp(logw(k)) for k in range(lo - 2 * shift, hi + 2 * shift + 1)}
        total = mpmath.fsum(w[k] for k in ks)
        e = mpmath.exp(mpmath.mpf(eps))
        one = mpmath.fsum(max(0, w[k] - e * w[k - shift]) for k in ks)
        other = mpmath.fsum(max(0, w[-k] - e * w[-k + shift]) for k in ks)
        return max(one, other) / total


@pytest.fixture(scope="module")
def dlaplace():
    # p(k) = tanh(1/(2b)) e^{-|k|/b}: the normaliser sum_k e^{-|k|/b} = coth(1/(2b))
    return symgdp.additive_noise(sympy.tanh(1 / (2 * B)) * sympy.exp(-sympy.Abs(K) / B),
                                 sensitivity=1, variable=K, support="integers")


def test_discrete_laplace_is_the_closed_form(dlaplace):
    # by hand: L = 1/b for k <= 0, -1/b for k >= 1, so delta = F(0) (1 - e^{eps - 1/b})
    # with F(0) = 1/(1 + e^{-1/b}); zero from eps = 1/b on
    e = symgdp.eps
    want = (1 - sympy.exp(e - 1 / B)) / (1 + sympy.exp(-1 / B))
    body = dlaplace.expr.args[1][0]
    assert sympy.simplify((body - want).rewrite(sympy.exp)) == 0
    assert dlaplace.expr.args[0] == (0, sympy.Ge(e, 1 / B))
    assert dlaplace.meta["eps0"] == 1 / B


def test_discrete_laplace_of_scale_one_is_not_refused():
    # eps0 = 1 falls on the cross-check's grid: the 30-digit direct sum there is dust
    # (~4e-47, each term's rounding), not 0; that is agreement with the exact 0, not a
    # disagreement (it was refused).  Reference: the closed form above at b = 1,
    # (1 - e^{eps - 1}) / (1 + e^{-1}), at 40 digits
    p = symgdp.additive_noise(sympy.tanh(sympy.Rational(1, 2)) * sympy.exp(-sympy.Abs(K)),
                              sensitivity=1, variable=K, support="integers")
    assert p(1.0) == 0.0 and p(2.0) == 0.0
    with mpmath.workdps(40):
        for e in (0.0, 0.3, 0.9):
            ref = (1 - mpmath.exp(e - 1)) / (1 + mpmath.exp(-1))
            assert abs(mpmath.mpf(p(e)) - ref) <= 1e-14 * ref


@pytest.mark.parametrize("b, shift", [(2.0, 1), (0.7, 3), (5.0, 2)])
def test_discrete_laplace_against_dp_accounting(dlaplace, b, shift):
    # at shift 1 the module's fixture is this very derivation (same density, same
    # sensitivity): derived once, not twice
    p = dlaplace if shift == 1 else symgdp.additive_noise(
        sympy.tanh(1 / (2 * B)) * sympy.exp(-sympy.Abs(K) / B),
        sensitivity=shift, variable=K, support="integers")
    q = p.replace(values={"b": b})
    ref = plm.DiscreteLaplacePrivacyLoss(1 / b, sensitivity=shift)  # exact closed form
    for eps in (0.0, 0.1, 0.5, 0.9 * shift / b, 1.2 * shift / b):
        want = ref.get_delta_for_epsilon(eps)
        assert math.isclose(q(eps), want, rel_tol=1e-12, abs_tol=1e-15)  # its float error
        # and the 40-digit direct sum of the definition
        d = direct_sum(lambda k, b=b: -abs(k) / mpmath.mpf(b), eps, shift)
        assert abs(mpmath.mpf(q(eps)) - d) <= 1e-13 * d + 1e-35  # 1e-35: the sum's own


@pytest.fixture(scope="module")
def dgauss():
    # sigma = 1.5, Delta = 1: the normaliser written as the sum over the integers
    s2 = sympy.Rational(9, 4)
    w = sympy.exp(-K**2 / (2 * s2))
    return symgdp.additive_noise(w / sympy.Sum(w.subs(K, J), (J, -sympy.oo, sympy.oo)),
                                 sensitivity=1, variable=K, support="integers")


def test_discrete_gaussian_is_certified_above_the_direct_sum(dgauss):
    src = dgauss.source
    xs = np.array([0.0, 0.25, 1.0, 2.0, 4.0, 8.0])
    up = dgauss.log_delta(xs)
    for x, u in zip(xs, up, strict=True):
        with mpmath.workdps(40), flint.ctx.workprec(200):
            truth = direct_sum(lambda k: -mpmath.mpf(k)**2 / mpmath.mpf(4.5), x, 1)
            assert u >= mpmath.log(truth)     # the proved upper bound holds
            assert u - mpmath.log(truth) < 1e-12 * abs(mpmath.log(truth)) + 1e-15  # tight
            # the ball holds the 40-digit truth (itself known to 1e-38)
            known = flint.arb(mpmath.nstr(truth, 40), 1e-38 * float(truth))
            assert src.delta_ball(float(x)).overlaps(known)


@pytest.mark.parametrize("sigma, shift", [(1.5, 1), (3.0, 2), (0.8, 1)])
def test_discrete_gaussian_against_dp_accounting(sigma, shift):
    s2 = sympy.nsimplify(sigma) ** 2
    w = sympy.exp(-K**2 / (2 * s2))
    p = symgdp.additive_noise(w / sympy.Sum(w.subs(K, J), (J, -sympy.oo, sympy.oo)),
                              sensitivity=shift, variable=K, support="integers")
    # dp_accounting: Canonne, Kamath & Steinke (2020), truncated where the mass left out is
    # below 1e-30, so it agrees to ~1e-12 where delta is above ~1e-15
    ref = plm.DiscreteGaussianPrivacyLoss(sigma, sensitivity=shift)
    for eps in (0.0, 0.3, 1.0, 2.5):
        want = ref.get_delta_for_epsilon(eps)
        got = math.exp(p.log_delta(eps))
        assert got >= want * (1 - 1e-10)
        assert math.isclose(got, want, rel_tol=1e-9)


def test_discrete_gaussian_far_tail():
    # delta ~ 1e-220: the ball sum with its tail bound, against the 40-digit direct sum
    w = sympy.exp(-K**2 / 2)
    p = symgdp.additive_noise(w / sympy.Sum(w.subs(K, J), (J, -sympy.oo, sympy.oo)),
                              variable=K, support="integers")
    truth = mpmath.log(direct_sum(lambda k: -mpmath.mpf(k)**2 / 2, 30.0, 1))
    got = p.log_delta(30.0)
    assert truth <= got <= truth + 1e-12 * abs(truth)


def test_asymmetric_pmf_takes_both_directions():
    # w = e^{-k} for k >= 0, e^{2k} for k < 0: L is 2 on the left, -1 on the right; the
    # reversed pair has sup L = 1, so eps0 = 2 (from the first direction)
    w = sympy.Piecewise((sympy.exp(2 * K), K < 0), (sympy.exp(-K), True))
    c = 1 / (1 / (1 - sympy.exp(-1)) + sympy.exp(-2) / (1 - sympy.exp(-2)))
    p = symgdp.additive_noise(c * w, variable=K, support="integers")
    assert "both directions" in p.meta["derivation"].directions

    def logw(k):
        return 2 * mpmath.mpf(k) if k < 0 else -mpmath.mpf(k)

    for eps in (0.0, 0.5, 0.99, 1.5):
        ref = direct_sum(logw, eps, 1)
        assert abs(mpmath.mpf(p(eps)) - ref) <= 1e-13 * ref
    assert p(2.0) == 0.0


def test_bad_pmfs_are_named():
    with pytest.raises(DomainError, match="sums to"):  # the normaliser forgotten
        symgdp.additive_noise(sympy.exp(-sympy.Abs(K) / B), variable=K, support="integers")
    with pytest.raises(DomainError, match="sums to 2"):
        symgdp.additive_noise(2 * sympy.tanh(sympy.Rational(1, 2)) * sympy.exp(-sympy.Abs(K)),
                              variable=K, support="integers")
    with pytest.raises(DomainError, match="negative at k = "):
        symgdp.additive_noise(sympy.tanh(sympy.Rational(1, 2)) * sympy.exp(-sympy.Abs(K))
                              * sympy.cos(K), variable=K, support="integers")
    with pytest.raises(DomainError, match="positive integer, got 0.5"):
        symgdp.additive_noise(sympy.tanh(sympy.Rational(1, 2)) * sympy.exp(-sympy.Abs(K)),
                              sensitivity=0.5, variable=K, support="integers")
    with pytest.raises(DomainError, match="support must be"):
        symgdp.additive_noise(sympy.exp(-K), variable=K, support="naturals")


def test_numeric_normaliser_off_is_named():
    # the discrete Gaussian with the continuous Gaussian's normaliser 1/sqrt(2 pi): the sum
    # is 1 + 2 sum_{n>=1} e^{-2 pi^2 n^2} ~ 1 + 5e-9 (Poisson summation) -- refused, named
    w = sympy.exp(-K**2 / 2) / sympy.sqrt(2 * sympy.pi)
    with pytest.raises(DomainError, match=r"sums to 1\.00000000"):
        symgdp.additive_noise(w, variable=K, support="integers")


def test_not_log_concave_refused():
    # a two-sided Cauchy-like PMF: (log p)'' > 0 in the tails
    w = 1 / (1 + K**2)
    with pytest.raises(ProfileError, match="not proved monotone"):
        symgdp.additive_noise(w / sympy.Sum(1 / (1 + J**2), (J, -sympy.oo, sympy.oo)),
                              variable=K, support="integers")


def test_a_normaliser_of_another_function_is_not_summed_by_the_weights_bound():
    # the certified sum bounds its tail geometrically, which holds for the log-concave
    # weight (proved) only: a constant holding the Sum of a heavier, non-log-concave
    # g(j) = exp(-sqrt(j^2 + 1)) (SymPy cannot sum it) is refused, not checked with a
    # bound that does not hold for g
    g = sympy.exp(-sympy.sqrt(J**2 + 1))
    w = sympy.exp(-K**2 / 2)
    pmf = sympy.Mul(w, 1 / sympy.Sum(sympy.exp(-J**2 / 2), (J, -sympy.oo, sympy.oo)),
                    3 / sympy.Sum(g, (J, -sympy.oo, sympy.oo)), evaluate=False)
    with pytest.raises(ProfileError, match="not a constant multiple of the weight"):
        symgdp.additive_noise(pmf, variable=K, support="integers")
    # a constant multiple of the weight is summed (certified ball around 1)
    ok = 2 * w / sympy.Sum(2 * sympy.exp(-J**2 / 2), (J, -sympy.oo, sympy.oo))
    p = symgdp.additive_noise(ok, variable=K, support="integers")
    # independent reference: the discrete Gaussian (s = 1) profile at eps = 1 by a 40-digit
    # direct sum over |k| <= 60
    with mpmath.workdps(40):
        ks = range(-60, 61)
        z = mpmath.fsum(mpmath.exp(-mpmath.mpf(k)**2 / 2) for k in ks)
        ref = mpmath.fsum(max(mpmath.mpf(0), mpmath.exp(-mpmath.mpf(k)**2 / 2)
                              - mpmath.e * mpmath.exp(-mpmath.mpf(k - 1)**2 / 2))
                          for k in ks) / z
    assert ref <= mpmath.mpf(p(1.0)) <= ref * (1 + 1e-9)


def test_asymmetric_certified_route_with_one_bounded_direction():
    # w = e^{k/2} for k < 0, e^{-k^2/8} for k >= 0 (log-concave: the slope drops from 1/2
    # to 0 at 0). One direction has L = 1/2 on its left run (sup L = 1/2), the other an
    # unbounded loss: no closed form, so the certified sum; reference: the direct sum
    w = sympy.Piecewise((sympy.exp(K / 2), K < 0), (sympy.exp(-K**2 / 8), True))
    wj = w.subs(K, J)
    p = symgdp.additive_noise(w / sympy.Sum(wj, (J, -sympy.oo, sympy.oo)), variable=K,
                              support="integers")
    assert p.source is not None and "both directions" in p.meta["derivation"].directions

    def logw(k):
        return mpmath.mpf(k) / 2 if k < 0 else -mpmath.mpf(k) ** 2 / 8

    for eps in (0.0, 0.3, 0.5, 1.0, 3.0):   # past 1/2 only the second direction counts
        with mpmath.workdps(40):
            truth = direct_sum(logw, eps, 1)
            up = p.log_delta(eps)
            assert mpmath.log(truth) <= up <= mpmath.log(truth) + 1e-12


def test_asymmetric_pmf_with_the_heavier_tail_on_the_right():
    # e^{-k^2/2} for k < 0, e^{-k} for k >= 0 (log-concave: the slope drops from 0 to -1
    # at 0).  The derivation's own 30-digit cross-check summed the reversed direction over
    # the window of the first, cutting the right (geometric) tail near k = 19: a false
    # disagreement of 2e-9 at eps = 0.3 and a refusal of a correct profile.  Reference: the
    # 40-digit direct sum of both directions
    w = sympy.Piecewise((sympy.exp(-K**2 / 2), K < 0), (sympy.exp(-K), True))
    p = symgdp.additive_noise(w / sympy.Sum(w.subs(K, J), (J, -sympy.oo, sympy.oo)),
                              variable=K, support="integers")
    assert p.source is not None and "agrees" in p.meta["derivation"].check

    def logw(k):
        return -mpmath.mpf(k) ** 2 / 2 if k < 0 else -mpmath.mpf(k)

    for eps in (0.0, 0.3, 1.0, 3.0):   # past 1 only the second direction counts
        with mpmath.workdps(40):
            truth = direct_sum(logw, eps, 1)
            up = p.log_delta(eps)
            assert mpmath.log(truth) <= up <= mpmath.log(truth) + 1e-12


def test_report_and_latex_of_a_discrete_profile(dlaplace):
    text = str(symgdp.report(dlaplace.replace(values={"b": 2}), measure=False))
    assert "noise check" in text and "closed form" in text
    rows = dict(dlaplace.meta["derivation"].latex_rows())
    assert rows["derived profile"].startswith(r"\delta(\varepsilon) = ")


def test_random_variable_refused_for_integers():
    from sympy.stats import Geometric

    with pytest.raises(DomainError, match="give the PMF"):
        symgdp.additive_noise(Geometric("G", sympy.Rational(1, 2)), support="integers")
