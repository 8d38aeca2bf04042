"""Floats of certified objects are rounded the safe way; large-eps0 randomized response
composes (issue 31, parts 3 and 4).

References (named at each test): the T-fold composition of eps0-randomized response as
its binomial sum at 50 digits (mpmath): per step the loss is +eps0 with probability
p = e^eps0 / (1 + e^eps0) and -eps0 otherwise, so delta_T(eps) = sum_k C(T, k)
p^(T-k) (1-p)^k (1 - e^(eps - (T - 2k) eps0))_+; the exact GDP profile delta_mu at 50
digits (4-fold 0.5-GDP is 1-GDP; 4 DP-SGD steps with q = 1, sigma = 1 are 2-GDP).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy

from symgdp import Profile, compose, eps, mechanisms
from symgdp.training.dpsgd import certified_pld

DPS = 50


def rr_truth(e0: float, t: int, x: float) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        E0, X = mpmath.mpf(e0), mpmath.mpf(x)
        p = 1 / (1 + mpmath.exp(-E0))
        out = mpmath.mpf(0)
        for k in range(t + 1):
            L = (t - 2 * k) * E0
            if L > X:
                out += mpmath.binomial(t, k) * p ** (t - k) * (1 - p) ** k * (
                    -mpmath.expm1(X - L))
        return out


def gdp_truth(x: float, mu: float) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        X, M = mpmath.mpf(x), mpmath.mpf(mu)
        return mpmath.ncdf(-X / M + M / 2) - mpmath.exp(X) * mpmath.ncdf(-X / M - M / 2)


def test_composed_randomized_response_float_is_not_below_the_truth():
    # reference: the binomial sum; at eps = 20 the nearest float was 1 ulp below it
    c = compose(mechanisms.randomized_response(20.0), times=2)
    for x in (0.0, 1e-6, 0.5, 19.9, 20.0, 20.5, 39.0):
        truth = rr_truth(20.0, 2, x)
        assert mpmath.mpf(c(x)) >= truth, x
        assert mpmath.mpf(c.lower_delta(x)) <= truth, x


@pytest.mark.parametrize("make, mu", [
    (lambda: compose(mechanisms.gaussian(0.5), times=4), 1.0),
    (lambda: certified_pld(1.0, 1.0, 4, value_discretization_interval=1e-3), 2.0),
])
def test_certified_profiles_round_their_floats_up(make, mu):
    # reference: delta_mu at 50 digits (both objects are exactly mu-GDP mechanisms)
    p = make()
    for x in (0.0, 1e-9, 0.3, 1.0, 3.0, 6.0):
        assert mpmath.mpf(p(x)) >= gdp_truth(x, mu), x
    lower = getattr(p, "lower_delta", None)
    if lower is not None:
        for x in (0.0, 0.3, 1.0, 3.0):
            assert mpmath.mpf(lower(x)) <= gdp_truth(x, mu), x


def test_an_underflowing_upper_bound_is_not_read_as_zero():
    # far in the tail the upper profile of 4-fold 0.5-GDP is below float64's range but
    # positive (log_delta finite): its float must stay > 0 (truth: delta_mu > 0 there)
    c = compose(mechanisms.gaussian(0.5), times=4)
    x = 45.0
    if math.isfinite(c.log_delta(x)):
        assert c(x) > 0.0 and mpmath.mpf(c(x)) >= gdp_truth(x, 1.0)


@pytest.mark.parametrize("e0", [25.0, 30.0])
def test_large_eps0_randomized_response_composes(e0):
    # reference: the binomial sum at 50 digits; the one-step profile is exactly 0 at eps0
    c = compose(mechanisms.randomized_response(e0), times=2)
    for x in (0.0, e0 / 2, e0, 1.5 * e0, 2 * e0 - 0.5):
        truth = rr_truth(e0, 2, x)
        assert mpmath.mpf(c.lower_delta(x)) <= truth <= mpmath.mpf(c(x)), x
    b = c.eps_at(1e-12)
    with mpmath.workdps(DPS):
        lo, hi = mpmath.mpf(0), mpmath.mpf(2 * e0)
        for _ in range(200):
            m = (lo + hi) / 2
            lo, hi = (m, hi) if rr_truth(e0, 2, m) > mpmath.mpf(1e-12) else (lo, m)
        assert b.lower <= hi <= b.upper


def test_pure_dp_written_with_the_cancellation_composes():
    # the same profile typed by hand: (e^25 - e^eps)_+ / (1 + e^25) cancels to 0 at 25
    e0 = sympy.Integer(25)
    p = Profile(sympy.Max(sympy.exp(e0) - sympy.exp(eps), 0) / (1 + sympy.exp(e0)))
    c = compose(p, times=2)
    for x in (0.0, 25.0, 40.0):
        truth = rr_truth(25.0, 2, x)
        assert mpmath.mpf(c.lower_delta(x)) <= truth <= mpmath.mpf(c(x)), x


def test_an_unresolvable_point_only_extends_the_grid(monkeypatch):
    # the reported refusal: the float evaluation of the one-step profile at eps0 raising
    # PrecisionError ('cancels to 0') must not stop the composition; the grid values
    # are balls, the point only decides where the grid ends (reference: the binomial sum)
    from symgdp.errors import PrecisionError

    real = Profile.log_delta

    def log_delta(self, x):
        if self.source is None and np.ndim(x) == 0 and float(x) == 25.0:
            raise PrecisionError("cannot resolve the profile at eps=25.0: its value "
                                 "cancels to 0")
        return real(self, x)

    monkeypatch.setattr(Profile, "log_delta", log_delta)
    c = compose(mechanisms.randomized_response(25.0), times=2)
    for x in (0.0, 25.0, 40.0):
        truth = rr_truth(25.0, 2, x)
        assert mpmath.mpf(c.lower_delta(x)) <= truth <= mpmath.mpf(c(x)), x


def test_optimal_pure_dp_composition_float_is_not_below_the_truth():
    # reference: the binomial sum (the k-fold eps0-DP optimum is k-fold randomized
    # response, Kairouz, Oh & Viswanath 2015)
    from symgdp.accounting.pure_dp import optimal_pure_dp

    p = optimal_pure_dp(20.0, 2)
    for x in (0.0, 0.5, 20.0, 39.0):
        assert mpmath.mpf(p(x)) >= rr_truth(20.0, 2, x), x
