"""Attack risk (symgdp.risk) and group privacy (symgdp.notions.group) against independent
references.

References (40-digit mpmath, written here): the GDP curve G_mu and its power
Phi(Phi^{-1}(a) + mu); the total variation 2 Phi(mu/2) - 1 and the randomized-response
advantage (e^eps - 1)/(e^eps + 1); the Bayes success maximised directly over the type I
error (golden-section search on the concave objective); the exact group profile of the
Gaussian mechanism (delta_{k mu}) and of k records each under randomized response (the
k-fold composition, from binomial sums).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy

from symgdp import mechanisms as M
from symgdp import risk
from symgdp.errors import DomainError
from symgdp.notions import group

DPS = 40


def _power_gauss(mu, a):
    with mpmath.workdps(DPS):
        a = mpmath.mpf(a)
        return mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a) + mu)


def _delta_gauss(mu, e):
    with mpmath.workdps(DPS):
        mu, e = mpmath.mpf(mu), mpmath.mpf(e)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def _bayes_brute(pi, curve):
    # max over alpha of (1 - pi)(1 - alpha) + pi (1 - f(alpha)): concave in alpha
    with mpmath.workdps(DPS):
        pi = mpmath.mpf(pi)

        def obj(a):
            return (1 - pi) * (1 - a) + pi * (1 - curve(a))

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        g = (mpmath.sqrt(5) - 1) / 2
        for _ in range(150):
            m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if obj(m1) < obj(m2):
                lo = m1
            else:
                hi = m2
        return max(obj(lo), obj(mpmath.mpf(0)), obj(mpmath.mpf(1)))


@pytest.mark.parametrize("mu", [0.1, 1.0, 4.0])
def test_max_tpr_gdp(mu):
    a = np.array([1e-12, 1e-3, 0.05, 0.3, 0.9])
    r = risk.max_tpr(mu, a)
    for ai, lo, up in zip(a, r.lower, r.upper, strict=True):
        ref = _power_gauss(mu, ai)
        assert lo <= ref <= up
        assert up - lo < 1e-14


def test_max_tpr_profile_and_scalar():
    # reference: the Gaussian power in mpmath; the generic route with the tag removed
    p = M.gaussian(1.0).replace(mechanism=None)
    r = risk.max_tpr(p, 0.05)
    assert isinstance(r.lower, float)
    ref = _power_gauss(1.0, 0.05)
    assert r.lower <= ref <= r.upper and r.width < 1e-9


@pytest.mark.parametrize("mu", [0.0, 0.3, 2.0, 12.0])
def test_advantage_gdp(mu):
    with mpmath.workdps(DPS):
        ref = 2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1
    a = risk.advantage(mu)
    assert a.lower <= ref <= a.upper and a.width < 1e-15


def test_advantage_profiles():
    # references: (e^eps - 1)/(e^eps + 1) for randomized response; 1 - e^{-eps0/2} for Laplace
    with mpmath.workdps(DPS):
        rr = (mpmath.e - 1) / (mpmath.e + 1)
        lap = 1 - mpmath.exp(-mpmath.mpf(3) / 2)
    a = risk.advantage(M.randomized_response(1.0))
    assert a.lower <= rr <= a.upper and a.width < 1e-15
    b = risk.advantage(M.laplace(3.0))
    assert b.lower <= lap <= b.upper
    # and the Gaussian profile agrees with the mu route (delta_mu(0) = 2 Phi(mu/2) - 1)
    g = risk.advantage(M.gaussian(0.7))
    with mpmath.workdps(DPS):
        assert g.lower <= 2 * mpmath.ncdf(mpmath.mpf(0.7) / 2) - 1 <= g.upper


@pytest.mark.parametrize("pi", [0.5, 0.1, 0.9, 0.01])
@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_bayes_success_gdp(pi, mu):
    def curve(a):
        return 1 - _power_gauss(mu, a) if 0 < a < 1 else (1 - a)

    ref = _bayes_brute(pi, curve)
    s = risk.bayes_success(mu, pi)
    assert s.lower - 1e-12 <= ref <= s.upper + 1e-15
    assert s.lower >= max(pi, 1 - pi)


def test_bayes_success_profile_vectorised():
    # reference: for randomized response the curve is max(0, 1 - e a, (1 - a)/e), e = e^eps0
    e0 = 1.0
    with mpmath.workdps(DPS):
        E = mpmath.e

        def curve(a):
            return max(0, 1 - E * a, (1 - a) / E)

        priors = np.array([0.2, 0.5, 0.75])
        s = risk.bayes_success(M.randomized_response(e0), priors)
        for pi, lo, up in zip(priors, s.lower, s.upper, strict=True):
            ref = _bayes_brute(pi, curve)
            assert lo - 1e-12 <= ref <= up + 1e-15
    assert s.lower.shape == (3,)
    assert risk.bayes_success(1.0, [0.0, 1.0]).lower.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("call", [
    lambda: risk.bayes_success(1.0, 1.5),
    lambda: risk.bayes_success(1.0, float("nan")),
    lambda: risk.max_tpr(1.0, -0.1),
    lambda: risk.advantage(-1.0),
    lambda: risk.advantage("mu"),
])
def test_risk_bad_input(call):
    with pytest.raises(DomainError):
        call()


# -- group privacy ----------------------------------------------------------------------
def test_group_gdp_float():
    assert group.group_profile(0.5, 3) == 1.5


@pytest.mark.parametrize("k", [2, 5])
def test_group_gaussian_exact(k):
    # reference: delta_{k mu} in mpmath (the Gaussian mechanism with sensitivity k Delta)
    g = group.group_profile(M.gaussian(0.4), k)
    assert g.meta["group"] == k and g.meta["mechanism"][0] == "gaussian"
    for e in (0.0, 0.5, 2.0, 6.0):
        assert g(e) == pytest.approx(float(_delta_gauss(0.4 * k, e)), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("k", [2, 3])
def test_group_generic_bounds_the_true_group_profile(k):
    # generic bound (tag removed) >= the true group profile delta_{k mu} of the Gaussian
    g = group.group_profile(M.gaussian(0.4).replace(mechanism=None), k)
    assert g.meta.get("mechanism") is None
    for e in np.linspace(0.0, 8.0, 41):
        assert g.mp(float(e)) >= _delta_gauss(0.4 * k, e) * (1 - 1e-30)


@pytest.mark.parametrize("k", [2, 3])
def test_group_pure_dp_bounds_k_records_of_randomized_response(k):
    # reference: k records each answered by randomized response differ in k answers; the
    # group profile of that mechanism is the k-fold composition, summed exactly here
    e0 = 0.8
    g = group.group_profile(M.randomized_response(e0), k)
    with mpmath.workdps(DPS):
        E0 = mpmath.mpf(e0)
        for e in np.linspace(0.0, k * e0 + 0.5, 23):
            e = mpmath.mpf(float(e))
            ref = sum(mpmath.binomial(k, i) * max(mpmath.exp((k - i) * E0)
                                                  - mpmath.exp(e + i * E0), 0)
                      for i in range(k + 1)) / (1 + mpmath.exp(E0)) ** k
            assert g.mp(float(e)) >= ref * (1 - 1e-30)
    assert g(k * e0) == 0.0  # (k eps0)-DP for groups of k


def test_group_expr_large_k_and_bad_k():
    x = sympy.Symbol("x")
    ex = group.group_expr(sympy.exp(-x), x, 40)
    assert ex == 40 * sympy.exp(39 * x / 40) * sympy.exp(-x / 40)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(DomainError, match="group size"):
            group.group_profile(0.5, bad)
    assert math.isclose(group.group_profile(0.5, 2.0), 1.0)
