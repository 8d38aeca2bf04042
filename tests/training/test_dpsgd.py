"""Tests of symgdp.notions.renyi and symgdp.dpsgd.

References (named at each test): the Rényi curves summed term by term in 40-digit mpmath
with exact binomials; the closed form alpha/(2 sigma^2) of the unsampled Gaussian;
dp_accounting's *optimistic* PLD of DP-SGD, a lower bound on the true profile (so every
guaranteed upper bound must lie above the GDPT it implies); the CLT formula in mpmath.
"""

from __future__ import annotations

import functools
import math
import os

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import dpsgd
from symgdp.errors import DomainError
from symgdp.gaussian.vectorised import mu_gdp
from symgdp.notions import renyi as R
from symgdp.training.dpsgd import mu_clt

DPS = 40


def ref_log_a(q: float, sigma: float, alpha: int) -> mpmath.mpf:
    """log A_alpha of the sampled Gaussian, term by term, exact binomials, 40 digits."""
    with mpmath.workdps(DPS):
        q, s = mpmath.mpf(q), mpmath.mpf(sigma)
        return mpmath.log(mpmath.fsum(
            mpmath.binomial(alpha, k) * (1 - q)**(alpha - k) * q**k
            * mpmath.exp((k * k - k) / (2 * s * s)) for k in range(alpha + 1)))


@pytest.mark.parametrize("q,sigma", [(0.01, 1.0), (0.1, 0.8), (0.001, 2.0), (0.5, 5.0)])
def test_subsampled_gaussian_renyi_curve_against_mpmath(q, sigma):
    orders = [2, 3, 17, 64, 255, 600]
    got = R.subsampled_gaussian_log_a(q, sigma, orders)
    for a, g in zip(orders, got, strict=True):
        ref = float(ref_log_a(q, sigma, a))
        assert g >= ref  # rounded up
        assert g - ref <= 1e-9 * max(1.0, abs(ref))


def test_unsampled_gaussian_renyi_curve_is_the_closed_form():
    # reference: q = 1 is the Gaussian mechanism, (alpha - 1) * alpha / (2 sigma^2)
    orders = np.array([2, 5, 40])
    got = R.subsampled_gaussian_log_a(1.0, 1.5, orders)
    np.testing.assert_allclose(got, (orders - 1) * orders / (2 * 1.5**2), rtol=1e-12)


def test_pure_dp_renyi_curve_against_mpmath():
    # reference: the Rényi divergence of binary randomized response in 40-digit mpmath
    for e0, a in [(0.2, 2.0), (0.2, 37.5), (1.0, 1.01), (3.0, 200.0)]:
        with mpmath.workdps(DPS):
            E, A = mpmath.mpf(e0), mpmath.mpf(a)
            ref = mpmath.log((mpmath.exp(A * E) + mpmath.exp(E) * mpmath.exp(-A * E))
                             / (mpmath.exp(E) + 1)) / (A - 1)
        assert R.pure_dp_rdp(e0, a) == pytest.approx(float(ref), rel=1e-12)


def test_conversion_formula_against_mpmath():
    # reference: the improved conversion evaluated directly at 40 digits
    a = np.array([3.0, 10.0])
    r = np.array([0.5, 0.9])
    ld = R.log_delta_from_rdp(a, r, 2.0)
    with mpmath.workdps(DPS):
        vals = [(A - 1) * (rr - 2) + (A - 1) * mpmath.log(1 - 1 / mpmath.mpf(A))
                - mpmath.log(A) for A, rr in zip(a, r, strict=True)]
    assert ld == pytest.approx(float(min(vals)), rel=1e-12)
    e = R.eps_from_rdp(a, r, math.exp(ld))
    assert e == pytest.approx(2.0, rel=1e-10)


def test_clt_formula():
    # reference: the formula in 40-digit mpmath
    with mpmath.workdps(DPS):
        ref = mpmath.mpf("0.01") * mpmath.sqrt(1000 * (mpmath.e - 1))
    assert mu_clt(0.01, 1.0, 1000) == pytest.approx(float(ref), rel=1e-14)


@functools.cache
def _run(q: float, sigma: float, steps: int) -> object:
    return dpsgd(q, sigma, steps, failure_prob=1e-10, tol=1e-3, floor=False, compare=True)


@functools.cache
def _optimistic_pld(q: float, sigma: float, steps: int) -> object:
    """dp_accounting's optimistic PLD of DP-SGD: a lower bound on the true profile."""
    from dp_accounting.pld import privacy_loss_distribution as P

    opt = P.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=False,
                                    use_connect_dots=False)
    return opt.self_compose(steps)


def _optimistic_gdpt_max(q: float, sigma: float, steps: int, eps_h: float) -> float:
    """max over a grid of [0, eps_h] of the GDPT of the optimistic PLD: a lower bound on
    every valid mu."""
    xs = np.linspace(0.0, eps_h, 60)
    d = np.asarray(_optimistic_pld(q, sigma, steps).get_delta_for_epsilon(xs))
    ok = d > 1e-12  # far above the float floor of the FFT
    return float(np.max(mu_gdp(xs[ok], d[ok])))


@pytest.mark.slow
@pytest.mark.parametrize("q,sigma,steps", [(0.01, 1.0, 1000), (0.1, 2.0, 100)])
def test_dpsgd_bracket_is_valid_and_tight(q, sigma, steps):
    r = _run(q, sigma, steps)
    assert r.surrogate_lower <= r.mu_upper <= r.surrogate_lower + 1e-3
    assert r.failure_prob <= 1e-10
    # reference: the optimistic PLD's GDPT on the same head never exceeds a valid mu
    floor = _optimistic_gdpt_max(q, sigma, steps, r.eps_h)
    assert floor <= r.mu_upper
    assert r.mu_upper - floor < 0.01  # within 0.01 of the smallest valid mu
    assert r.mu_upper <= r.mu_rdp + 1e-12  # the minimum of two bounds is never worse
    # (eps, delta) implied: never below dp_accounting's pessimistic epsilon
    assert r.eps_at(1e-5) >= r.eps_pld - 1e-9
    # the certified epsilon: above the optimistic PLD's (a lower bound on the truth) and
    # within the two PLDs' spread of dp_accounting's pessimistic one
    opt = float(_optimistic_pld(q, sigma, steps).get_epsilon_for_delta(1e-5))
    assert opt <= r.eps_certified <= r.eps_pld + (r.eps_pld - opt) + 1e-6


@pytest.mark.slow
def test_the_clt_underestimates_for_the_standard_case():
    # q = 0.01, sigma = 1, T = 1000: the CLT's 0.4145 is below the optimistic PLD's GDPT
    # (reference: dp_accounting optimistic PLD), so it is not a valid guarantee
    r = _run(0.01, 1.0, 1000)
    assert r.mu_clt < _optimistic_gdpt_max(0.01, 1.0, 1000, r.eps_h) <= r.mu_upper
    assert r.eps_clt < r.eps_pld


def test_renyi_tail_bounds_the_optimistic_pld():
    # reference: the optimistic PLD is below the true profile; the Rényi bound above it
    r = _run(0.01, 1.0, 1000)
    xs = np.linspace(0.0, 4.0, 17)
    lo = np.asarray(_optimistic_pld(0.01, 1.0, 1000).get_delta_for_epsilon(xs))
    up = np.exp(r.profile.rdp_log_delta(xs))
    assert np.all(up >= lo)
    assert np.all(r.profile(xs) >= lo)


def test_eps_at_refuses_delta_below_the_failure_probability():
    r = dpsgd(0.01, 1.0, 100, failure_prob=1e-8, tol=1e-3, floor=False, compare=False)
    with pytest.raises(DomainError):
        r.eps_at(1e-9)
    assert r.eps_at(1e-8) <= r.eps_h + 1e-12


@pytest.mark.parametrize("kw", [
    dict(q=0.0, sigma=1.0, steps=10), dict(q=1.5, sigma=1.0, steps=10),
    dict(q=0.1, sigma=0.0, steps=10), dict(q=0.1, sigma=1.0, steps=0),
    dict(q=0.1, sigma=1.0, steps=2.5), dict(q=0.1, sigma=1.0, steps=10, failure_prob=0.0),
    dict(q=0.1, sigma=1.0, steps=10, floor_discretization=0.0),
    dict(q=0.1, sigma=1.0, steps=10, value_discretization_interval=-1.0),
])
def test_bad_input_is_refused(kw):
    with pytest.raises(DomainError):
        dpsgd(**kw)


@pytest.mark.parametrize("sigma,steps", [(2.0, 16), (1.0, 10)])
def test_unsampled_dpsgd_is_exactly_gaussian(sigma, steps):
    # reference: q = 1 is T-fold Gaussian, exactly sqrt(T)/sigma-GDP (closed form); the
    # guaranteed upper end must be above it and close (the PLD is pessimistic, so even
    # surrogate_lower, which brackets what the bound profile proves, may sit above it), and the
    # mechanism-level floor must be below it
    r = dpsgd(1.0, sigma, steps, tol=1e-3, value_discretization_interval=1e-3,
              compare=False)
    exact = math.sqrt(steps) / sigma
    assert r.mu_floor <= exact <= r.mu_upper <= exact + 2e-3
    assert exact - r.mu_floor < 0.02


@pytest.mark.skipif(not os.environ.get("SYMGDP_TEST_SCALE"),
                    reason="a few seconds per case: deeper check only")
@settings(max_examples=3 * max(1, int(os.environ.get("SYMGDP_TEST_SCALE", "1"))),
          deadline=None)
@given(q=st.floats(0.002, 0.2), sigma=st.floats(0.7, 3.0), steps=st.integers(1, 300))
def test_random_dpsgd_bracket_above_the_optimistic_floor(q, sigma, steps):
    # reference: dp_accounting's optimistic PLD (below the true profile) on the same head
    r = dpsgd(q, sigma, steps, tol=1e-3, compare=True)
    assert r.failure_prob <= 1e-10 and r.mu_floor <= r.mu_upper <= r.surrogate_lower + 1e-3
    assert _optimistic_gdpt_max(q, sigma, steps, r.eps_h) <= r.mu_upper
