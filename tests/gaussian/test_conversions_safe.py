"""Conversions are never on the unsafe side, from eps = 1e-300 to 2000.

Each float result is compared with an independent high-precision reference and must lie on
its documented side (upper bounds: mu_gdp, eps_gdp, Rényi/zCDP parameters, sigma, the
RDP epsilon; lower bounds: mu_gdp(rounding="down")) and close to it.  References:
the Rényi divergence of randomized response from its definition (two Bernoulli laws) in
mpmath with enough digits for its cancellation; symgdp.gaussian.precise (bisection/false position in
50-digit mpmath) for the GDP inverses; a golden-section minimum in 50-digit mpmath for
rdp_tight.  Hypothesis runs without a database, without deadline, derandomized.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from symgdp import composition as C
from symgdp import conversions as V
from symgdp.errors import ConvergenceError
from symgdp.gaussian import precise
from symgdp.gaussian import vectorised as g
from symgdp.notions import renyi as R

pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

SAFE = settings(database=None, deadline=None, derandomize=True, max_examples=40)
# the GDP inverses take a 50-digit mpmath root per example: fewer examples, marked slow
SLOW = settings(database=None, deadline=None, derandomize=True, max_examples=12)
TINY = 5e-324


def renyi_rr(eps: float, alpha: float) -> mpmath.mpf:
    """D_alpha(Bern(p) || Bern(1-p)), p = e^eps/(1+e^eps), from the definition; the working
    precision grows with the digits lost near alpha = 1 and eps = 0."""
    lost = 3 * max(0.0, -math.log10(eps)) + max(0.0, -math.log10(alpha - 1.0))
    with mpmath.workdps(60 + int(lost)):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        lp = -mpmath.log1p(mpmath.exp(-e))  # log p
        lq = -e + lp  # log q, q = 1 - p = e^-eps p
        x, y = a * lp + (1 - a) * lq, a * lq + (1 - a) * lp  # logs of the two terms
        m = max(x, y)
        return (m + mpmath.log(mpmath.exp(x - m) + mpmath.exp(y - m))) / (a - 1)


log_eps = st.floats(-300.0, math.log10(2000.0)).map(lambda t: 10.0**t)
alphas = st.one_of(st.floats(-15.0, 6.0).map(lambda t: 1.0 + 10.0**t),
                   st.floats(1.0, 300.0).map(lambda t: 10.0**t))


@SAFE
@given(log_eps, alphas)
@example(1e-6, 1.0001)  # once -8.3e-14 (conversions) and 0.0 (rdp): cancellation
@example(1e-300, 1.0 + 1e-15)
@example(2000.0, 1.0 + 1e-15)
@example(2000.0, 1e300)
@example(1e-300, 1e300)
def test_pure_dp_renyi_is_an_upper_bound_and_close(eps, alpha):
    ref = renyi_rr(eps, alpha)
    for got in (R.pure_dp_rdp(eps, alpha), V.rdp_of_pure_dp(eps, alpha)):
        assert got >= ref, (eps, alpha, got, ref)
        # 24 u of slack plus the one-ulp nudge: 1e-14 relative (or one subnormal step)
        assert got <= ref * (1 + 1e-14) + 2 * TINY
        assert got <= eps


@pytest.mark.parametrize("eps", [0.0, 1e-300, 1e-8, 1.0, 2000.0])
def test_renyi_edges(eps):
    # alpha = 1: KL = eps tanh(eps/2) (closed form, 50 digits); alpha = inf: eps
    with mpmath.workdps(50):
        kl = mpmath.mpf(eps) * mpmath.tanh(mpmath.mpf(eps) / 2)
    got = V.rdp_of_pure_dp(eps, 1.0)
    assert kl <= got <= kl * (1 + 1e-14) + 2 * TINY
    assert V.rdp_of_pure_dp(eps, math.inf) == eps
    assert V.zcdp_of_pure_dp(eps) >= kl and V.zcdp_of_pure_dp(eps) >= 0
    assert V.zcdp_of_pure_dp(eps, tight=False) >= mpmath.mpf(eps) ** 2 / 2


def _rdp_tight_ref(e0: float, k: int, d: float) -> mpmath.mpf:
    """min over alpha of k D_alpha + log(1 - 1/alpha) - (log d + log alpha)/(alpha - 1),
    golden section in t = log(alpha - 1) at 50 digits (the function is unimodal in t)."""
    with mpmath.workdps(50):
        def f(t):
            a = 1 + mpmath.exp(t)
            return k * _mp_rr(e0, a) \
                + mpmath.log(1 - 1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
        lo, hi = mpmath.mpf(-8), mpmath.mpf(12)
        gr = (mpmath.sqrt(5) - 1) / 2
        for _ in range(200):
            x1, x2 = hi - gr * (hi - lo), lo + gr * (hi - lo)
            if f(x1) < f(x2):
                hi = x2
            else:
                lo = x1
        return f((lo + hi) / 2)


def _mp_rr(e0: float, a: mpmath.mpf) -> mpmath.mpf:
    with mpmath.workdps(120):
        e = mpmath.mpf(e0)
        return mpmath.log(mpmath.cosh((a - mpmath.mpf(1) / 2) * e) / mpmath.cosh(e / 2)) / (a - 1)


@pytest.mark.parametrize("e0,k,d", [(1e-6, 10**9, 1e-5), (0.2, 50, 1e-3), (1.0, 1000, 1e-3)])
def test_rdp_tight_never_below_the_minimum(e0, k, d):
    ref = _rdp_tight_ref(e0, k, d)
    got = C.rdp_tight(e0, k, d)
    assert got >= ref
    assert got <= ref * (1 + 1e-9)


eps_mu = st.one_of(st.just(0.0), log_eps)
log_deltas = st.floats(-30.0, 5.0).map(lambda t: -(10.0**t))


@pytest.mark.slow
@SLOW
@given(eps_mu, log_deltas)
@example(1.98e-305, -707.0)  # once 1.45e-306 against the root 1.0006e-305
@example(0.0, -800.0)  # the root underflows: up gives the smallest subnormal
@example(1e-300, -1e-30)
@example(2000.0, -1e5)
# delta within 2e-323 of 1: the complement is subnormal, beyond log delta's relative error
# model (once 76.8627 rounded up against the root 76.8988, found by an adversarial run)
@example(9.654785914811513e-11, -2e-323)
@example(1e-3, -5e-324)
def test_mu_gdp_rounds_to_its_side(eps, L):
    ref = precise.mu_gdp(eps, log_delta=L, dps=50)
    up = g.mu_gdp(eps, log_delta=L)
    down = g.mu_gdp(eps, log_delta=L, rounding="down")
    vec = float(g.mu_gdp(np.array([eps]), log_delta=np.array([L]))[0])
    for u in (up, vec):
        assert u >= ref, (eps, L, u, ref)
        assert u <= ref * (1 + 1e-12) + 4 * TINY  # the error model's slack: <= 1e-12
    assert down <= ref <= up
    assert down >= ref * (1 - 1e-12) - 4 * TINY


mus = st.floats(-300.0, 2.0).map(lambda t: 10.0**t)


@pytest.mark.slow
@SLOW
@given(mus, log_deltas)
@example(1e-155, -1000.0)  # the 50-digit reference once overflowed in erfc here
@example(1.0, math.log(1e-5))
@example(1e-5, -12.0)
@example(30.0, -1e4)
@example(76.8987889617545, -2e-323)  # delta within 2e-323 of 1 (subnormal complement)
def test_eps_gdp_rounds_up(mu, L):
    ref = precise.eps_gdp(mu, log_delta=L, dps=50)
    up = g.eps_gdp(mu, log_delta=L)
    down = g.eps_gdp(mu, log_delta=L, rounding="down")
    assert down <= ref <= up, (mu, L, down, ref, up)
    assert up <= ref * (1 + 1e-12) + 1e-14


@pytest.mark.parametrize("eps,delta,s", [(1e-300, 1e-300, 1.0), (2000.0, 1e-300, 1e-300),
                                         (1.0, 1e-5, 1.0), (0.0, 0.5, 1e300)])
def test_analytic_sigma_never_below_exact(eps, delta, s):
    # reference: sensitivity / the 50-digit mu_GDP root
    ref = mpmath.mpf(s) / precise.mu_gdp(eps, delta, dps=50)
    got = V.analytic_gaussian_sigma(eps, delta, s)
    assert ref <= got <= ref * (1 + 1e-12)


@pytest.mark.parametrize("rho,delta", [(1e-300, 1 - 2**-53), (1e-300, 5e-324), (2000.0, 1e-300),
                                       (0.5, 1e-5), (0.0, 0.5)])
def test_zcdp_to_dp_rounds_up(rho, delta):
    # reference: the closed form of Bun & Steinke Prop. 1.3 at 50 digits
    with mpmath.workdps(50):
        r = mpmath.mpf(rho)
        ref = r + 2 * mpmath.sqrt(r * -mpmath.log(mpmath.mpf(delta)))
    got = V.zcdp_to_dp(rho, delta)
    assert ref <= got <= ref * (1 + 1e-14) + 2 * TINY


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-300), (0.999, 5e-324), (1e-300, 0.5)])
def test_classical_sigma_rounds_up(eps, delta):
    with mpmath.workdps(50):
        ref = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(5) / 4 / mpmath.mpf(delta))) / mpmath.mpf(eps)
    got = V.classical_gaussian_sigma(eps, delta)
    assert ref <= got <= ref * (1 + 1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("x", [0.0, 5e-324, 1e-300, 1e-8, 1.0, 700.0, 2000.0, 1e300])
def test_gdp_family_no_nan_or_negative_at_extremes(x):
    vals = [g.mu_from_pure_dp(x), g.compose_gdp(x, x), g.tradeoff_gdp(min(x, 1.0), x),
            g.delta_mu(x, x), g.mu_gdp(x, 1e-300)]
    try:
        vals.append(g.eps_gdp(x, 1e-300))
    except ConvergenceError:  # a refusal is acceptable (mu = 1e300: eps ~ mu^2/2 overflows)
        assert x == 1e300
    for v in vals:
        assert not math.isnan(v) and v >= 0
    assert g.log_delta_mu(x, x) <= 0
