r"""mu_gdp near delta -> 1 against a 40-digit mpmath root of delta_mu(eps) = delta.

Reference: bisection in mpmath (40 digits, 160 steps) on the closed form
:math:`\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) -
e^\varepsilon\Phi(-\varepsilon/\mu - \mu/2)` (Dong, Roth & Su 2021, Cor. 2.13), which is
increasing in :math:`\mu`; for ``log_delta`` the target is :math:`1 - \delta =
-\mathrm{expm1}(\log\delta)`, so values of :math:`\delta` within 1e-30 of 1 are reachable.
The scalar and the vectorised paths are both checked.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from symgdp.gaussian.vectorised import mu_gdp


def _delta_mu(mu, e):
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def _root(eps: float, one_minus_delta) -> mpmath.mpf:
    e = mpmath.mpf(eps)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while 1 - _delta_mu(hi, e) > one_minus_delta:
        hi *= 2
    for _ in range(160):
        m = (lo + hi) / 2
        if m == 0 or 1 - _delta_mu(m, e) > one_minus_delta:
            lo = m
        else:
            hi = m
    return (lo + hi) / 2


@pytest.mark.parametrize("eps", [0.0, 1e-8, 0.5, 1.0, 30.0, 150.0])
@pytest.mark.parametrize("gap", [1e-2, 1e-6, 1e-10, 1e-15])
def test_mu_gdp_near_delta_one(eps, gap):
    delta = 1.0 - gap
    with mpmath.workdps(40):
        true = _root(eps, 1 - mpmath.mpf(delta))  # the double delta, exactly
        near = {"rounding": "nearest"}
        for got in (mu_gdp(eps, delta, **near),
                    mu_gdp(np.array([eps]), np.array([delta]), **near)[0]):
            assert abs(mpmath.mpf(got) - true) <= 1e-14 * true
        # the default is rounded up (never below the root) by its error bound
        for got in (mu_gdp(eps, delta), mu_gdp(np.array([eps]), np.array([delta]))[0]):
            assert true <= mpmath.mpf(got) <= true * (1 + mpmath.mpf(1e-13))


@pytest.mark.parametrize("log_delta", [-1e-5, -1e-16, -1e-30])
def test_mu_gdp_log_delta_near_zero(log_delta):
    with mpmath.workdps(60):
        true = _root(1.0, -mpmath.expm1(mpmath.mpf(log_delta)))
        assert abs(mpmath.mpf(mu_gdp(1.0, log_delta=log_delta)) - true) <= 1e-14 * true
