r"""Utility refinement (theory §2) of trade-off equations written with decimals.

A decimal such as 1.25 used to reach the refinement as a 15-digit Float: the naive noise
was then a 15-digit rounding and the refined one, computed at 30 digits, could "exceed"
it, a plain ValueError.  Floats are now read as the exact rationals they store.
References: the naive noise in closed form at 40 digits, and the refined noise against
an independent brute-force minimum of f(eps0, delta0(eps0)) over a fine eps0 grid in
mpmath (delta0 from the tight partial-order constraint).
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

from symgdp.errors import SymgdpError
from symgdp.refinement.utility import Calibration, refine_calibration

CASES = {
    # classical Gaussian calibration, sigma = sqrt(2 log(1.25/delta))/eps
    "classical gaussian": ("sigma = sqrt(2*log(1.25/delta))/eps",
                           lambda e, d: mpmath.sqrt(2 * mpmath.log(mpmath.mpf(5) / 4 / d)) / e),
    "1.25 twice": ("sigma = 1.25/eps*sqrt(log(1.25/delta))",
                   lambda e, d: mpmath.mpf(5) / 4 / e
                   * mpmath.sqrt(mpmath.log(mpmath.mpf(5) / 4 / d))),
    "log-linear with 0.7": ("sigma = -0.7*log(delta)/eps",
                            lambda e, d: -mpmath.mpf(0.7) * mpmath.log(d) / e),
}


def _grid_min(f, e, d, n=4000):
    """Brute-force utility refinement: min over eps0 in [eps, eps_max) of f at the tight
    delta0 = (delta - w)/(1 - w), w = (e^eps0 - e^eps)/(1 + e^eps0)."""
    e_max = mpmath.log((mpmath.exp(e) + d) / (1 - d))
    best = f(e, d)
    for k in range(1, n):
        e0 = e + (e_max - e) * k / n
        w = (mpmath.exp(e0) - mpmath.exp(e)) / (1 + mpmath.exp(e0))
        best = min(best, f(e0, (d - w) / (1 - w)))
    return best


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("target", [(1.0, 1e-5), (0.5, 1e-3)])
def test_decimal_equations_refine(name, target):
    equation, f = CASES[name]
    c = refine_calibration(equation, *target)
    assert isinstance(c, Calibration)
    with mpmath.workdps(40):
        e, d = mpmath.mpf(target[0]), mpmath.mpf(target[1])  # the doubles, exactly
        naive = f(e, d)
        assert abs(mpmath.mpf(sympy.N(c.sigma_naive, 40)) - naive) <= naive * mpmath.mpf(10) ** -30
        sigma = mpmath.mpf(sympy.N(c.sigma, 40))
        assert sigma <= naive * (1 + mpmath.mpf(10) ** -25)
        # never below the true infimum by more than the grid can tell, never far above
        grid = _grid_min(f, e, d)
        assert grid * (1 - mpmath.mpf(10) ** -6) <= sigma <= grid * (1 + mpmath.mpf(10) ** -12)


def test_float_value_of_a_parameter():
    """A float parameter value is the number it stores: C = 0.3 (reference: closed form
    -C log(delta)/eps at the naive point, 40 digits)."""
    c = refine_calibration("sigma = -C*log(delta)/eps", 0.25, 1e-4, {"C": 0.3})
    with mpmath.workdps(40):
        naive = -mpmath.mpf(0.3) * mpmath.log(mpmath.mpf(1e-4)) / mpmath.mpf(0.25)
        assert abs(mpmath.mpf(sympy.N(c.sigma_naive, 40)) - naive) <= naive * mpmath.mpf(10) ** -30


def test_refined_above_naive_is_a_symgdp_error():
    with pytest.raises(SymgdpError, match="exceeds the naive"):
        Calibration(sigma=sympy.Float(2, 30), eps0=sympy.Integer(1), delta0=sympy.Float(0.1),
                    sigma_naive=sympy.Integer(1))
