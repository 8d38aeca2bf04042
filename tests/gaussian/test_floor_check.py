"""The proved floor's last step, delta_mu(eps) <= delta decided in ball arithmetic
(symgdp.gaussian.gdp_balls.delta_mu_proved_at_most): True only where it holds.

Reference: delta_mu from its definition, Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
in 60-digit mpmath (mpmath.ncdf), independent of symgdp's ball code."""

from __future__ import annotations

import mpmath
import pytest

from symgdp.gaussian.gdp_balls import delta_mu_proved_at_most


def _delta(eps: float, mu: float) -> mpmath.mpf:
    with mpmath.workdps(60):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("eps, mu", [(1.0, 1.0), (0.0, 0.5), (10.0, 3.0), (0.0, 19.99),
                                     (300.0, 2.0), (1e-8, 1e-3), (2.0, 40.0)])
@pytest.mark.parametrize("rel", [1e-12, 1e-6, 1e-2])
def test_decides_both_sides_of_the_true_value(eps, mu, rel):
    d = _delta(eps, mu)
    above, below = float(d * (1 + rel)), float(d * (1 - rel))
    if above <= 1.0:
        # a delta above the truth (by 1e-12 relative and more) is proved where it is a float
        # distinct from the truth; never a claim below it
        assert delta_mu_proved_at_most(eps, mu, above) == (mpmath.mpf(above) >= d)
    assert not delta_mu_proved_at_most(eps, mu, below)


def test_near_one_and_far_below_float():
    # delta_20(0) = 1 - 1.5e-23: at most 1.0 (proved at 128 bits), not at most 1 - 2^-53
    assert _delta(0.0, 20.0) < 1
    assert delta_mu_proved_at_most(0.0, 20.0, 1.0)
    assert not delta_mu_proved_at_most(0.0, 20.0, 1.0 - 2.0**-53)
    # delta far below the float range (tiny mu): proved at most the smallest subnormal
    assert delta_mu_proved_at_most(5.0, 1e-30, 5e-324)
    # nonsense deltas are never "proved"
    assert not delta_mu_proved_at_most(1.0, 1.0, 0.0)
    assert not delta_mu_proved_at_most(1.0, 1.0, float("nan"))
