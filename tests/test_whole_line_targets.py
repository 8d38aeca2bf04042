"""The whole line, second round: Gaussians written with float literals, finite sums
(randomized-response compositions), profiles with switching points beyond eps_h.

Independent truths as in test_whole_line: log delta and log delta_mu in 60-digit mpmath
(every Float of the expression read as the exact binary number it stores) on log grids
out to eps = 10^4, and G = mu_GDP(eps, delta(eps)) in mpmath.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from flint import arb, ctx
from test_whole_line import DPS, _below_on_grid, _grid, _log_delta_mp

from symgdp import Profile, precise
from symgdp.measure import measure
from symgdp.measurement.gaussian_profiles import near_gaussian_mu_bound


def _literal(mu: float, slope: str | None = None) -> Profile:
    """delta_mu typed with float literals (eps/mu stored rounded, or a given slope)."""
    s = slope if slope is not None else f"{1 / mu}"
    return Profile.parse(f"erfc(({s}*eps - {mu / 2})/sqrt(2))/2 "
                         f"- exp(eps)*erfc(({s}*eps + {mu / 2})/sqrt(2))/2")


# -- Gaussians typed with float literals ----------------------------------------------------
@pytest.mark.parametrize("mu", [0.3, 1.0, 1.5, 4.0, 0.7, 30.0])
def test_float_literal_gaussian_is_certified_on_the_whole_line(mu: float) -> None:
    p = _literal(mu)
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert m.covers_tail and m.failure_prob == 0 and m.proved_until == math.inf
    assert "literals" in m.tail_proof
    # 60-digit truth on [0.01, 10^4]: the profile (Floats read exactly) is below
    # delta_upper, and G at the grid points is at most upper
    assert _below_on_grid(p.bound_expr, m.upper, 0.01)


def test_lemma_dominating_mu_on_random_literals() -> None:
    # A(eps) <= delta_{max(mu, mu/kappa)}(eps) for every eps >= 0: checked in 60-digit
    # mpmath (independent of the ball proof) for slopes on both sides of 1/mu
    rng = __import__("random").Random(7)
    with mpmath.workdps(DPS + 20):
        for _ in range(40):
            mu = mpmath.mpf(10) ** rng.uniform(-1.3, 1.3)
            kappa = 1 + rng.choice([-1, 1]) * mpmath.mpf(10) ** rng.uniform(-15, -0.5)
            beta = mu / (2 * mpmath.sqrt(2))
            alpha = kappa / (4 * beta)
            with ctx.workprec(300):
                near = (0.0, 0.0, arb(mpmath.nstr(mu, 80)), arb(mpmath.nstr(kappa, 80)))
                mb = near_gaussian_mu_bound(near)
                top = mpmath.mpf(arb(mb.upper()).str(60, radius=False))
            assert top >= max(mu, mu / kappa) * (1 - mpmath.mpf(10) ** -25)
            for x in [0, 1e-3, 0.5, 2, 10, 100, 1e3, 1e4]:
                x = mpmath.mpf(x)
                a = (mpmath.erfc(alpha * x - beta)
                     - mpmath.exp(x) * mpmath.erfc(alpha * x + beta)) / 2
                d = precise.delta_mu(x, max(mu, mu / kappa), dps=DPS + 20)
                assert a <= d * (1 + mpmath.mpf(10) ** -30)


def test_float_literal_slope_below_one_over_mu_makes_the_tail_the_maximum() -> None:
    # 0.0333333333333333 < 1/30: the GDPT tends to 30/kappa = 1/0.0333333333333333 > 30;
    # with a short head the head bound is below it, and the whole-line bracket reaches it
    p = _literal(30.0, "0.0333333333333333")
    m = measure(p, 0.01, 1e-6, refine=False, identify=False)
    assert m.covers_tail and "maximum" in m.tail_proof
    limit = mpmath.mpf(30) / (4 * mpmath.mpf(sympy.Rational(0.0333333333333333))
                              * mpmath.mpf(15) / 2)  # mu / kappa, exact rationals
    assert m.upper >= limit and m.upper - float(limit) < 1e-12
    assert _below_on_grid(p.bound_expr, m.upper, 0.01)
    # the bracket still holds sup G from below: G at 1 (60-digit truth) is above lower
    x = mpmath.mpf(1)
    assert precise.mu_gdp(x, log_delta=_log_delta_mp(p.bound_expr, x), dps=DPS) >= m.lower


def test_float_literal_grid_independent_of_lemma() -> None:
    # the certified upper end of every literal Gaussian holds pointwise in G (60 digits)
    for mu in (0.3, 4.0):
        p = _literal(mu)
        m = measure(p, 100.0, 1e-6, refine=False, identify=False)
        for x in _grid(1.0, 1e4, 25):
            g = precise.mu_gdp(x, log_delta=_log_delta_mp(p.bound_expr, x), dps=DPS)
            assert g <= m.upper
