"""Tests of symgdp.conversions against independent references.

References: the Balle-Wang hockey-stick formula of the Gaussian mechanism written in
sigma and evaluated in 40-digit mpmath; the Rényi divergence of two Bernoulli laws
computed directly from its definition in mpmath; a numeric supremum over a dense alpha
grid (a second algorithm for the zCDP parameter); and symgdp.gaussian.precise.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import conversions as V
from symgdp.errors import DomainError
from symgdp.gaussian import precise

DPS = 40


def balle_wang_delta(eps: float, sigma: float, sens: float) -> mpmath.mpf:
    """Balle & Wang (2018) Thm 8: delta of the Gaussian mechanism, in sigma, 40 digits."""
    with mpmath.workdps(DPS):
        e, s, d = mpmath.mpf(eps), mpmath.mpf(sigma), mpmath.mpf(sens)
        return mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(
            -d / (2 * s) - e * s / d)


@pytest.mark.parametrize("eps,delta,sens", [(0.1, 1e-5, 1.0), (1.0, 1e-5, 1.0),
                                            (5.0, 1e-9, 3.0), (0.5, 0.2, 0.01)])
def test_analytic_sigma_gives_exactly_delta(eps, delta, sens):
    # reference: Balle-Wang's delta(eps; sigma) in 40-digit mpmath, at the returned sigma
    s = V.analytic_gaussian_sigma(eps, delta, sens)
    assert float(balle_wang_delta(eps, s, sens)) == pytest.approx(delta, rel=1e-9)


def test_analytic_sigma_edges_and_vectorised():
    # reference: mu_GDP(eps, 1) = inf (no noise needed); arrays broadcast
    assert V.analytic_gaussian_sigma(1.0, 1.0) == 0.0
    out = V.analytic_gaussian_sigma(np.array([0.5, 1.0]), 1e-5, 2.0)
    assert out.shape == (2,) and out[0] > out[1]
    with pytest.raises(DomainError, match="delta"):
        V.analytic_gaussian_sigma(1.0, 0.0)


@settings(max_examples=30)
@given(eps=st.floats(1e-3, 0.999), delta=st.floats(1e-12, 0.5))
def test_classical_calibration_is_valid_but_looser(eps, delta):
    # reference: the exact (analytic) calibration; classical noise must be at least it
    c = V.classical_gaussian_sigma(eps, delta)
    a = V.analytic_gaussian_sigma(eps, delta)
    assert c >= a * (1 - 1e-12)
    assert c == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) / eps, rel=1e-14)


def test_classical_calibration_refuses_eps_at_least_one():
    with pytest.raises(DomainError, match="eps"):
        V.classical_gaussian_sigma(1.0, 1e-5)
    e, d = sympy.symbols("e d", positive=True)
    assert V.classical_gaussian_sigma(e, d).free_symbols == {e, d}


def bernoulli_renyi(eps: float, alpha: float) -> mpmath.mpf:
    """D_alpha(Bern(p) || Bern(q)), p = e^eps/(1+e^eps), q = 1-p, from the definition."""
    with mpmath.workdps(DPS):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        q = 1 - p
        if a == 1:
            return p * mpmath.log(p / q) + q * mpmath.log(q / p)
        return mpmath.log(p**a * q**(1 - a) + q**a * p**(1 - a)) / (a - 1)


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("alpha", [1.0, 1.001, 1.5, 2.0, 10.0, 300.0])
def test_rdp_of_pure_dp_is_bernoulli_renyi_divergence(eps, alpha):
    # reference: the Rényi divergence of randomized response from its definition
    got = V.rdp_of_pure_dp(eps, alpha)
    assert got == pytest.approx(float(bernoulli_renyi(eps, alpha)), rel=1e-9)
    assert got <= eps * (1 + 1e-15)


def test_rdp_limits_and_symbolic():
    # reference: D_infinity = eps; the symbolic form evaluated exactly by SymPy
    assert V.rdp_of_pure_dp(2.0, math.inf) == 2.0
    e, a = sympy.symbols("e a", positive=True)
    expr = V.rdp_of_pure_dp(e, a)
    val = float(expr.subs({e: 1, a: 2}))
    assert val == pytest.approx(float(bernoulli_renyi(1.0, 2.0)), rel=1e-14)


@pytest.mark.parametrize("eps", [0.05, 1.0, 3.0, 10.0])
def test_tight_zcdp_is_the_supremum_over_alpha(eps):
    # reference (second algorithm): sup over a dense alpha grid of D_alpha/alpha in mpmath,
    # approaching the claimed supremum as alpha -> 1 and never exceeding it
    rho = V.zcdp_of_pure_dp(eps)
    alphas = [1 + 10.0**-j for j in range(1, 9)] + list(np.linspace(1.05, 60, 80))
    ratios = [float(bernoulli_renyi(eps, a)) / a for a in alphas]
    assert max(ratios) <= rho * (1 + 1e-9)
    assert ratios[7] == pytest.approx(rho, rel=1e-6)  # alpha = 1 + 1e-8
    assert rho <= V.zcdp_of_pure_dp(eps, tight=False)


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-8])
def test_zcdp_to_dp_is_valid_for_the_gaussian_mechanism(mu, delta):
    # reference: a mu-GDP Gaussian mechanism is (mu^2/2)-zCDP; its exact eps at delta
    # (symgdp.gaussian.precise.eps_gdp, 40 digits) must not exceed the zCDP conversion
    eps = V.zcdp_to_dp(mu**2 / 2, delta)
    assert float(precise.eps_gdp(mu, delta, dps=DPS)) <= eps
    r, d = sympy.symbols("r d", positive=True)
    expr = V.zcdp_to_dp(r, d)
    assert float(expr.subs({r: mu**2 / 2, d: delta})) == pytest.approx(eps, rel=1e-14)


@pytest.mark.parametrize("call", [
    lambda: V.rdp_of_pure_dp(1.0, 0.5),
    lambda: V.rdp_of_pure_dp(-1.0, 2.0),
    lambda: V.zcdp_of_pure_dp(float("nan")),
    lambda: V.zcdp_to_dp(-0.1, 1e-5),
    lambda: V.zcdp_to_dp(0.1, 0.0),
    lambda: V.analytic_gaussian_sigma(1.0, 1e-5, 0.0),
])
def test_bad_input_names_the_value(call):
    with pytest.raises(DomainError, match="got"):
        call()


def test_analytic_gaussian_sigma_scalar_path_matches_vectorised():
    # second algorithm: the vectorised path (array in) against the scalar fast path
    # (plain floats in) on random points, and bad scalars still refused by the checks
    rng = np.random.default_rng(7)
    e = rng.uniform(0.0, 30.0, 300)
    d = 10.0 ** rng.uniform(-300.0, 0.0, 300)
    s = rng.uniform(0.1, 10.0, 300)
    vec = V.analytic_gaussian_sigma(e, d, s)
    for i in range(300):
        # both rounded up from a residual evaluated at their own float root: the last-ulp
        # noise of that residual separates them by far less than 1e-14 relative
        assert V.analytic_gaussian_sigma(float(e[i]), float(d[i]), float(s[i])) == \
            pytest.approx(vec[i], rel=1e-14)
    for bad in ((-1.0, 1e-5, 1.0), (1.0, 0.0, 1.0), (1.0, 1e-5, -2.0), (1.0, 2.0, 1.0)):
        with pytest.raises(DomainError):
            V.analytic_gaussian_sigma(*bad)
