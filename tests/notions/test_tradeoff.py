"""Tests of symgdp.tradeoff against independent references.

References: Neyman-Pearson tests computed directly from the output distributions in
40-digit mpmath (Laplace laws, binomial counts); symgdp.gaussian.precise; the profile route
(symgdp.mechanisms / symgdp.composition profiles and their measured GDP) against the
trade-off route for the same mechanism; and the partial-order formula of theory §2.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import composition as C
from symgdp import mechanisms as M
from symgdp import tradeoff as T
from symgdp.errors import DomainError
from symgdp.gaussian import precise

DPS = 40

CURVES = [
    T.randomized_response(0.7),
    T.eps_delta(1.0, 0.05),
    T.laplace(0.5),
    T.laplace(3.0),
    T.gaussian(1.2),
    T.randomized_response_composition(0.3, 12),
]


@pytest.mark.parametrize("curve", CURVES, ids=lambda c: c.name)
def test_curves_are_tradeoff_functions(curve):
    # property: in [0, 1], non-increasing, convex, below 1 - alpha; complement = 1 - T
    a = np.linspace(0.0, 1.0, 2001)
    t = curve(a)
    assert np.all((t >= 0) & (t <= 1 - a + 1e-12))
    assert np.all(np.diff(t) <= 1e-12)
    assert np.all(np.diff(t, 2) >= -1e-9)
    np.testing.assert_allclose(curve.complement(a), 1 - t, atol=1e-12)


@pytest.mark.parametrize("eps0", [0.2, 1.0, 4.0])
def test_laplace_curve_is_neyman_pearson_of_two_laplace_laws(eps0):
    # reference: Lap(0, 1) vs Lap(eps0, 1); the likelihood ratio increases in x, so the
    # optimal tests reject for x > t: alpha = P0[X > t], beta = P1[X <= t] (mpmath)
    curve = T.laplace(eps0)
    with mpmath.workdps(DPS):
        e0 = mpmath.mpf(eps0)

        def sf(x, m):  # P[Lap(m, 1) > x]
            return mpmath.exp(-(x - m)) / 2 if x >= m else 1 - mpmath.exp(x - m) / 2

        for t in (-3.0, -0.5, 0.0, eps0 / 3, eps0, eps0 + 2.0):
            t = mpmath.mpf(t)
            alpha, beta = sf(t, 0), 1 - sf(t, e0)
            assert curve(float(alpha)) == pytest.approx(float(beta), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("mu", [0.0, 0.5, 2.0])
def test_gaussian_curve_matches_precise(mu):
    # reference: symgdp.gaussian.precise.tradeoff_gdp at 40 digits
    for a in (1e-6, 0.05, 0.5, 0.9):
        ref = float(precise.tradeoff_gdp(a, mu, dps=DPS))
        assert T.gaussian(mu)(a) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("eps0,k", [(0.5, 1), (0.3, 4), (1.0, 9)])
def test_composed_rr_vertices_are_binomial_tails(eps0, k):
    # reference: exact binomial tails in mpmath; the vertex t has alpha = P[Bin(k,q) >= t],
    # beta = P[Bin(k,p) < t]
    curve = T.randomized_response_composition(eps0, k)
    with mpmath.workdps(DPS):
        p = mpmath.exp(eps0) / (1 + mpmath.exp(eps0))
        q = 1 - p

        def tail(n, r, t):
            return sum(mpmath.binomial(n, j) * r**j * (1 - r)**(n - j) for j in range(t, n + 1))

        for t in range(1, k + 1):
            alpha, beta = tail(k, q, t), 1 - tail(k, p, t)
            assert curve(float(alpha)) == pytest.approx(float(beta), rel=1e-12, abs=1e-15)
    if k == 1:
        a = np.linspace(0, 1, 101)
        np.testing.assert_allclose(curve(a), T.randomized_response(eps0)(a), atol=1e-15)


@pytest.mark.parametrize("eps0", [0.3, 2.0])
def test_profile_route_laplace(eps0):
    # reference: the Laplace profile of symgdp.mechanisms (theory §9)
    x = np.array([0.0, 0.25 * eps0, 0.75 * eps0, eps0, 2 * eps0])
    got = T.profile_delta(T.laplace(eps0), x)
    np.testing.assert_allclose(got, M.laplace(eps0)(x), rtol=1e-9, atol=1e-12)


def test_profile_route_gaussian_and_composed_rr():
    # references: precise.delta_mu (40 digits); the KOV profile in log space
    for e in (0.0, 0.7, 3.0):
        ref = float(precise.delta_mu(e, 1.3, dps=DPS))
        assert T.profile_delta(T.gaussian(1.3), e) == pytest.approx(ref, rel=1e-8)
    x = np.array([0.0, 0.5, 2.0, 5.0])
    got = T.profile_delta(T.randomized_response_composition(0.25, 30), x)
    np.testing.assert_allclose(got, np.exp(C.optimal_log_delta(0.25, 30, x)), rtol=1e-11)


@settings(max_examples=40)
@given(eps0=st.floats(0.0, 5.0), delta0=st.floats(0.0, 0.9), frac=st.floats(0.0, 1.5))
def test_profile_of_eps_delta_curve_is_the_partial_order_bound(eps0, delta0, frac):
    # reference: theory §2, delta0 + (1 - delta0)(e^eps0 - e^eps)_+/(1 + e^eps0)
    e = frac * eps0
    ref = delta0 + (1 - delta0) * max(math.exp(eps0) - math.exp(e), 0) / (1 + math.exp(eps0))
    got = T.profile_delta(T.eps_delta(eps0, delta0), e)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("eps0", [0.01, 0.2, 1.0, 6.0])
def test_gdp_mu_of_pure_dp_curves(eps0):
    # references: -2 Phi^{-1}(1/(1 + e^eps0)) and -2 Phi^{-1}(e^{-eps0/2}/2) in mpmath
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        rr = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(e)) - 1)
        lap = -2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.exp(-e / 2) - 1)
    assert T.gdp_mu(T.randomized_response(eps0)) == pytest.approx(float(rr), rel=1e-11)
    assert T.gdp_mu(T.laplace(eps0)) == pytest.approx(float(lap), rel=1e-11)


@pytest.mark.parametrize("eps0,k", [(0.2, 50), (0.5, 8), (1.5, 3)])
def test_gdp_mu_tradeoff_route_equals_profile_route(eps0, k):
    # reference: the guaranteed bracket of composition.optimal_mu (profile route)
    lo, up = C.optimal_mu(eps0, k)
    mu = T.gdp_mu(T.randomized_response_composition(eps0, k))
    assert lo - 1e-12 <= mu <= up + 1e-12


def test_gdp_mu_special_cases():
    # references: G_mu has GDP parameter mu; f_{eps, delta>0} is not GDP (T(0) < 1)
    assert T.gdp_mu(T.gaussian(0.8)) == pytest.approx(0.8, rel=1e-12)
    assert T.gdp_mu(T.eps_delta(1.0, 1e-6)) == math.inf
    assert T.gdp_mu(T.randomized_response(0.0)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("call", [
    lambda: T.laplace(-1.0),
    lambda: T.eps_delta(1.0, 1.0),
    lambda: T.gaussian(float("inf")),
    lambda: T.randomized_response_composition(0.2, 0),
    lambda: T.gaussian(1.0)(1.5),
    lambda: T.profile_delta(T.gaussian(1.0), -0.1),
])
def test_bad_input_raises(call):
    with pytest.raises(DomainError):
        call()
