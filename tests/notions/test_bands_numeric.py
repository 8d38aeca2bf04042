"""Two-sided certified bands for numeric profiles: compositions and DP-SGD.

Every check is lower <= truth <= upper with the truth computed independently at 40 digits
with mpmath: the Neyman-Pearson curve of k-fold randomized response (binomial likelihood
ratio test), G_{sqrt(k) mu} for k Gaussians, the closed-form profile of the one-step
Poisson-subsampled Gaussian (both directions) and its conjugate, and the exact sums of the
integer PMFs behind ``IntPMF.lower_delta``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from references import gdp_curve, golden_section

from symgdp import compose, dpsgd, mechanisms
from symgdp.errors import DomainError
from symgdp.pld.pmf import SCALE_BITS, int_self_compose
from symgdp.training.dpsgd import subsampled_gaussian_pmfs

DPS = 40
ALPHA = np.array([0.0, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.45, 0.5, 0.6, 0.8, 0.95,
                  0.999, 1.0])


def _rr_curve(eps0: float, k: int, a: float) -> mpmath.mpf:
    """Reference: the type II error of the most powerful test between k-fold randomized
    response's output laws (Neyman-Pearson on the count j of ones, Bin(k, p) against
    Bin(k, 1 - p), p = e^eps0 / (1 + e^eps0)), randomised on the boundary count."""
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        P = [mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j) for j in range(k + 1)]
        Q = [mpmath.binomial(k, j) * (1 - p) ** j * p ** (k - j) for j in range(k + 1)]
        # the likelihood ratio Q/P = e^{-eps0 (2j - k)} is largest at j = 0: reject there first
        a = mpmath.mpf(a)
        acc_a, acc_b = mpmath.mpf(0), mpmath.mpf(0)
        for j in range(k + 1):
            if acc_a + P[j] >= a:
                frac = (a - acc_a) / P[j]
                return max(1 - acc_b - frac * Q[j], mpmath.mpf(0))  # -1e-42 at a = 1
            acc_a += P[j]
            acc_b += Q[j]
        return mpmath.mpf(0)


def _rr_profile(eps0: float, k: int, x: float) -> mpmath.mpf:
    """Reference: the exact profile of k-fold randomized response,
    sum_j P(j) (1 - e^{x - L_j})_+ with the loss L_j = eps0 (2j - k)."""
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        out = mpmath.mpf(0)
        for j in range(k + 1):
            loss = e * (2 * j - k)
            if loss > x:
                out += mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j) * (
                    1 - mpmath.exp(x - loss))
        return out


def _gdp_curve(mu: float, a: float) -> mpmath.mpf:
    """Reference: G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) at 40 digits (references.gdp_curve)."""
    return gdp_curve(mu, a, DPS)

def _assert_band(b, truth) -> None:
    for a, lo, up in zip(b.alpha, b.lower, b.upper, strict=True):
        t = truth(float(a))
        assert lo <= t <= up, (a, lo, float(t), up)


@pytest.fixture(scope="module")
def rr5():
    return compose(mechanisms.randomized_response(0.5), times=5)


def test_rr_composition_profile_bracketed(rr5):
    """lower_delta / log_delta_lower <= exact binomial profile <= the upper profile."""
    xs = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.4999, 2.5, 3.0])
    lo, up = rr5.log_delta_lower(xs), rr5.log_delta(xs)
    for x, a, b in zip(xs, lo, up, strict=True):
        t = _rr_profile(0.5, 5, float(x))
        if t == 0:
            assert a == -math.inf
            continue
        assert a <= float(mpmath.log(t)) <= b, (x, a, float(mpmath.log(t)), b)
    assert rr5.log_delta_lower(1.0) == lo[3]  # scalar in, scalar out


def test_rr_composition_band_two_sided(rr5):
    """The band of 5-fold randomized response contains its Neyman-Pearson curve and is
    two-sided (not the trivial upper band 1 - alpha)."""
    b = rr5.tradeoff(ALPHA)
    _assert_band(b, lambda a: _rr_curve(0.5, 5, a))
    assert b.method == "conjugate"
    assert float(np.max(b.width)) < 1e-6


def test_gaussian_composition_band():
    """4 Gaussians of mu = 0.5 are exactly G_1: lower <= G_1 <= upper, and narrow."""
    c = compose(mechanisms.gaussian(0.5), times=4)
    b = c.tradeoff(ALPHA, tol=1e-6)
    _assert_band(b, lambda a: _gdp_curve(1.0, a))
    assert b.method == "conjugate" and float(np.max(b.width)) < 1e-3


def test_composition_without_lower_side_is_one_sided():
    """A float64 composition has no proved lower side: no log_delta_lower, and its band's
    upper side is the trivial 1 - alpha (reference: that closed form)."""
    c = compose(mechanisms.gaussian(0.5), times=2, certify=False)
    assert c.log_delta_lower is None
    b = c.tradeoff([0.1, 0.5])
    assert b.method == "conjugate, lower only"
    assert list(b.upper) == pytest.approx([0.9, 0.5], abs=1e-12)


def test_int_pmf_lower_delta_matches_exact_sum():
    """The vectorised lower_delta is below, and within 1e-10 relative of, the 40-digit sum
    sum_i p_i (1 - e^{x - L_i})_+ + p_inf over the exact integer masses."""
    _, _, opt = subsampled_gaussian_pmfs(0.1, 1.0, 1e-2, 1e-16, SCALE_BITS)
    low = int_self_compose(opt, 10)
    xs = np.array([-0.0, 0.0, 0.003, 0.1, 0.5, 1.0, 2.0, 5.0, 8.0, 1e3])
    got = low.lower_delta(xs)
    coeffs = [int(v) for v in low.poly.coeffs()]
    with mpmath.workdps(DPS):
        for x, g in zip(xs, got, strict=True):
            ref = mpmath.mpf(low.inf) / mpmath.mpf(2) ** SCALE_BITS
            for i, ci in enumerate(coeffs):
                loss = mpmath.mpf(low.lower + i) * mpmath.mpf(low.disc)
                if loss > x:
                    ref += mpmath.mpf(ci) / mpmath.mpf(2) ** SCALE_BITS * (
                        1 - mpmath.exp(mpmath.mpf(x) - loss))
            assert g <= ref
            assert ref - g <= 1e-10 * ref + 1e-300


# -- DP-SGD -----------------------------------------------------------------------------------
def _subsampled_profile(q: float, sigma: float, x: mpmath.mpf) -> mpmath.mpf:
    """Reference: the one-step Poisson-subsampled Gaussian's profile, the larger of its two
    directions, in closed form (threshold x_l = sigma^2 log((e^l - 1 + q)/q) + 1/2 of the
    increasing loss log(1 - q + q e^{(2y - 1)/(2 sigma^2)})):
    remove: Pbar(x_eps) - e^eps Qbar(x_eps), add: Q(x_{-eps}) - e^eps P(x_{-eps})."""
    s = mpmath.mpf(sigma)
    q = mpmath.mpf(q)

    def thr(level):
        t = mpmath.exp(level) - 1 + q
        return None if t <= 0 else s**2 * mpmath.log(t / q) + mpmath.mpf(1) / 2

    def cdf_p(y):  # (1 - q) N(0, s^2) + q N(1, s^2)
        return (1 - q) * mpmath.ncdf(y / s) + q * mpmath.ncdf((y - 1) / s)

    xr = thr(x)
    rem = (1 - cdf_p(xr)) - mpmath.exp(x) * (1 - mpmath.ncdf(xr / s))
    xa = thr(-x)
    add = mpmath.mpf(0) if xa is None else mpmath.ncdf(xa / s) - mpmath.exp(x) * cdf_p(xa)
    return max(rem, add, mpmath.mpf(0))


def _conjugate(profile, a: float) -> mpmath.mpf:
    """Reference: f(a) = sup_eps max(0, 1 - d - e^eps a, e^-eps (1 - d - a)) at 40 digits,
    each branch concave in t = e^eps (resp. s = e^-eps): golden-section search to 1e-25."""
    a = mpmath.mpf(a)
    best = mpmath.mpf(0)
    for branch in (1, 2):
        def g(t, branch=branch):
            if branch == 1:
                return 1 - profile(mpmath.log(t)) - t * a
            return t * (1 - profile(-mpmath.log(t)) - a)

        lo, hi = (mpmath.mpf(1), mpmath.mpf(1e4)) if branch == 1 else (mpmath.mpf(1e-4),
                                                                        mpmath.mpf(1))
        lo, hi, inner = golden_section(g, lo, hi, width=mpmath.mpf(10) ** -25)
        best = max(best, inner, g(lo), g(hi), g(mpmath.mpf(1)))
    return best


@pytest.mark.slow
def test_dpsgd_band_full_batch_is_gdp():
    """q = 1: T steps of the Gaussian mechanism with sigma = 1 are exactly sqrt(T)-GDP, so
    the band contains G_2 for T = 4 (reference: G_mu at 40 digits)."""
    r = dpsgd(1.0, 1.0, 4, tol=1e-3, compare=False, value_discretization_interval=1e-3)
    b = r.tradeoff(ALPHA, tol=1e-6)
    _assert_band(b, lambda a: _gdp_curve(2.0, a))
    assert b.method == "conjugate" and float(np.max(b.width)) < 0.01


@pytest.mark.slow
def test_dpsgd_band_one_subsampled_step():
    """One step of the subsampled Gaussian (q = 0.5, sigma = 1): the band contains the
    conjugate of the closed-form two-direction profile (40 digits), and is two-sided."""
    r = dpsgd(0.5, 1.0, 1, tol=1e-3, compare=False, value_discretization_interval=1e-3)
    alphas = np.array([0.0, 0.01, 0.1, 0.3, 0.5, 0.8, 1.0])
    b = r.tradeoff(alphas, tol=1e-6)
    with mpmath.workdps(DPS):
        _assert_band(b, lambda a: _conjugate(lambda e: _subsampled_profile(0.5, 1.0, e), a))
    assert float(np.max(b.width)) < 0.01


def test_dpsgd_tradeoff_rejects_bad_discretization():
    r = dpsgd(1.0, 1.0, 1, tol=1e-3, compare=False, floor=False,
              value_discretization_interval=1e-3)
    with pytest.raises(DomainError, match="discretization"):
        r.tradeoff(0.5, discretization=0.0)
