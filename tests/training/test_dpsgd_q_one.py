"""DP-SGD with q = 1 and a small sigma reads its add direction tightly (issue 31, part 5).

Reference: q = 1 is no sampling, the Gaussian mechanism with sensitivity 1 composed T
times: exactly sqrt(T)/sigma-GDP (closed form, Dong, Roth & Su 2022, Cor. 3.3), here
1/0.3 at 50 digits.  The engine's add direction read from the remove measure weighted each
rounded-up mass by e^{-l} down to l ~ -32 and reported [3.33314, 3.57639] for the exact
3.33333.  dpsgd now answers q = 1 in closed form; the engine's reading stays tested here
through the private switch.
"""

from __future__ import annotations

import mpmath

from symgdp import dpsgd


def _exact() -> mpmath.mpf:
    with mpmath.workdps(50):
        return 1 / mpmath.mpf(0.3)  # sigma as the exact binary value of its float


def test_q_one_small_sigma_is_tight():
    r = dpsgd(1.0, 0.3, 1, value_discretization_interval=1e-3, tol=1e-3, rdp_only=False)
    assert r.closed_form
    assert mpmath.mpf(r.mu_floor) <= _exact() <= mpmath.mpf(r.mu_upper) <= r.mu_floor + 1e-15


def test_q_one_small_sigma_engine_is_tight():
    r = dpsgd(1.0, 0.3, 1, value_discretization_interval=1e-3, tol=1e-3, rdp_only=False,
              _engine=True)
    assert not r.closed_form
    assert r.mu_floor <= _exact() <= r.mu_upper <= _exact() + 1e-2
