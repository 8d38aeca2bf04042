"""symgdp.from_dp_event: dp_accounting DpEvent trees, accounted with a proof.

References (named at each test): the exact GDP profile delta_mu at 50 digits (mpmath;
compositions of Gaussians are Gaussian with root-sum-of-squares mu, and q = 1 Poisson
sampling is no sampling); the k-ary randomized response composition as a multinomial sum
at 50 digits; the bracket of symgdp.dpsgd for the same subsampled Gaussian (two proved
brackets of one mechanism must intersect).
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import mpmath
import pytest

from symgdp import from_dp_event
from symgdp.errors import DomainError


@pytest.fixture(autouse=True)
def _fifty_digits():
    """This module's references work at 50 digits.  Set per test and restored after: set at
    import (as it was), it held for every test collected after this module in the session,
    the product's ambient-precision mpmath calls in other wings included."""
    with mpmath.workdps(50):
        yield


def gdp_delta(eps: float, mu: float) -> mpmath.mpf:
    e, m = mpmath.mpf(eps), mpmath.mpf(mu)
    return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def rr_delta(p: float, k: int, t: int, eps: float) -> mpmath.mpf:
    """t-fold k-ary randomized response (replace-one): per step the loss is +e0 with
    probability a = 1 - p + p/k, -e0 with b = p/k, 0 with (k - 2) b; multinomial sum."""
    P, K = mpmath.mpf(p), mpmath.mpf(k)
    a, b = 1 - P + P / K, P / K
    c = (K - 2) * b
    e0 = mpmath.log(a / b)
    out = mpmath.mpf(0)
    for i in range(t + 1):
        for j in range(t - i + 1):
            L = (i - j) * e0
            if L > eps:
                w = (mpmath.factorial(t) / (mpmath.factorial(i) * mpmath.factorial(j)
                                            * mpmath.factorial(t - i - j)))
                out += w * a**i * b**j * c ** (t - i - j) * (1 - mpmath.exp(eps - L))
    return out


def test_gaussian_tree_is_root_sum_of_squares():
    # reference: 4-fold sigma=2 and one sigma=1/sqrt(3) give mu = sqrt(4/4 + 3) = 2
    ev = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 4),
                              dpa.GaussianDpEvent(1 / math.sqrt(3)), dpa.NoOpDpEvent()])
    c = from_dp_event(ev)
    assert c.certified and c.neighbouring == "add_remove"
    assert c.mu_floor <= 2.0 <= c.mu_upper <= 2.0 + 1e-3
    for x in (0.0, 1.0, 3.0):
        t = gdp_delta(x, 2.0)
        assert c.lower_delta(x) <= t <= c(x) * (1 + 1e-12)
    br = c.eps_at(1e-5)
    e = mpmath.findroot(lambda x: gdp_delta(x, 2.0) - 1e-5, 6.0)
    assert br.lower <= float(e) <= br.upper


def test_poisson_sampling_with_q_one_is_the_gaussian():
    # reference: q = 1 is no sampling; 4-fold sigma=2 is 1-GDP
    c = from_dp_event(dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(1.0, dpa.GaussianDpEvent(2.0)), 4))
    assert c.mu_floor <= 1.0 <= c.mu_upper <= 1.0 + 2e-3
    for x in (0.0, 1.0, 2.5):
        assert gdp_delta(x, 1.0) <= c(x) * (1 + 1e-12)


def test_poisson_sampled_gaussian_agrees_with_dpsgd():
    # reference: symgdp.dpsgd's bracket of the same mechanism (both proved: they meet)
    from symgdp import dpsgd

    c = from_dp_event(dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)), 20), discretization=2e-3)
    r = dpsgd(0.1, 1.0, 20, tol=1e-3, compare=False, value_discretization_interval=2e-3)
    assert c.mu_floor <= r.mu_upper and r.mu_floor <= c.mu_upper


def test_laplace_event_is_the_laplace_mechanism():
    # reference: one Laplace step with b = 2 has profile (1 - e^{(eps - 1/2)/2})_+
    c = from_dp_event(dpa.LaplaceDpEvent(2.0))
    for x in (0.0, 0.2, 0.45):
        t = 1 - mpmath.exp((mpmath.mpf(x) - 0.5) / 2)
        assert c.lower_delta(x) <= t <= c(x) * (1 + 1e-12)


def test_k_ary_randomized_response_under_replace_one():
    # reference: rr_delta, the multinomial sum at 50 digits
    c = from_dp_event(dpa.SelfComposedDpEvent(dpa.RandomizedResponseDpEvent(0.5, 4), 3),
                      neighbouring="replace_one")
    assert c.neighbouring == "replace_one"
    for x in (0.0, 0.5, 1.5, 3.0):
        t = rr_delta(0.5, 4, 3, x)
        assert c.lower_delta(x) <= t <= c(x) * (1 + 1e-12)


@pytest.mark.parametrize("event,word", [
    (dpa.ZCDpEvent(0.1), "ZCDpEvent"),
    (dpa.NonPrivateDpEvent(), "NonPrivateDpEvent"),
    (dpa.PoissonSampledDpEvent(0.1, dpa.ZCDpEvent(0.1)), "ZCDpEvent"),
    (dpa.GaussianDpEvent(0.0), "not private"),
    (dpa.RandomizedResponseDpEvent(0.5, 2), "replace"),
    (dpa.NoOpDpEvent(), "no private step"),
    ("gaussian", "str"),
])
def test_unknown_or_unaccountable_events_are_named(event, word):
    with pytest.raises(DomainError, match=word):
        from_dp_event(event)


def test_laplace_under_replace_one_is_refused():
    with pytest.raises(DomainError, match="add/remove"):
        from_dp_event(dpa.LaplaceDpEvent(1.0), neighbouring="replace_one")
