"""DP-SGD with q = 1 and a small sigma reads its add direction tightly (issue 31, part 5).

Reference: q = 1 is no sampling, the Gaussian mechanism with sensitivity 1 composed T
times: exactly sqrt(T)/sigma-GDP (closed form).  The add direction read from the remove
measure weighted each rounded-up mass by e^{-l} down to l ~ -32 and reported
[3.33314, 3.57639] for the exact 3.33333.
"""

from __future__ import annotations

import math

from symgdp import dpsgd


def test_q_one_small_sigma_is_tight():
    r = dpsgd(1.0, 0.3, 1, value_discretization_interval=1e-3, tol=1e-3)
    exact = math.sqrt(1) / 0.3
    assert r.mu_floor <= exact <= r.mu_upper <= exact + 1e-2
