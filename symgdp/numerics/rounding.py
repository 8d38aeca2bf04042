r"""Directed rounding of float64 values and Arb balls: the one place where "rounded up"
is defined.

A bound that is rounded the unsafe way is a wrong bound.  Every wing that rounds a proved
value to a float imports these helpers:

* :func:`up` / :func:`down` -- the next float64 above / below (one ulp outwards), with
  ``inf`` and ``-inf`` kept;
* :func:`outward` -- an interval widened by one ulp at each end;
* :func:`float_below` / :func:`float_above` -- the nearest float64 below / above every
  point of an Arb ball;
* :func:`arb_ceil` / :func:`arb_floor` -- an Arb ball scaled by :math:`2^{bits}` and
  rounded to an integer on the safe side (the ceiling of its upper end, the floor of its
  lower end), clamped at 0: integer masses of a certified PLD.

Example:
    >>> up(1.0) > 1.0 > down(1.0)
    True
    >>> outward(0.5, 0.5) == (down(0.5), up(0.5))
    True
    >>> import flint
    >>> arb_ceil(flint.arb(0.3), 4), arb_floor(flint.arb(0.3), 4)   # 0.3 * 16 = 4.8
    (5, 4)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["up", "down", "outward", "float_below", "float_above", "arb_floor", "arb_ceil",
           "exp_up"]

#: unit roundoff of float64 and the smallest subnormal
_U = 2.0**-52
_TINY = 2.0**-1074


def up(x: float) -> float:
    """The next float64 above ``x`` (``inf`` stays ``inf``)."""
    return math.nextafter(x, math.inf)


def down(x: float) -> float:
    """The next float64 below ``x`` (``-inf`` stays ``-inf``)."""
    return math.nextafter(x, -math.inf)


def outward(lo: float, hi: float) -> tuple[float, float]:
    """``[lo, hi]`` widened by one ulp at each end."""
    return down(lo), up(hi)


def float_below(b: Any) -> float:
    """The largest float64 <= every point of the ball ``b`` (``-inf`` if unbounded)."""
    from flint import arb

    if not b.is_finite():
        return -math.inf
    x = b.lower()
    f = float(x)
    if math.isnan(f):
        return -math.inf
    if arb(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def float_above(b: Any) -> float:
    """The smallest float64 >= every point of the ball ``b`` (``inf`` if unbounded)."""
    from flint import arb

    if not b.is_finite():
        return math.inf
    x = b.upper()
    f = float(x)
    if math.isnan(f):
        return math.inf
    if arb(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def exp_up(log_value: Any) -> Any:
    r"""A float64 :math:`\ge e^{x}` for each ``x`` of ``log_value`` (a log of a
    probability, :math:`x \le 0`), capped at 1: the float a certified *upper* delta
    returns from its log.  ``exp(x)`` rounded to nearest can be below :math:`e^x`.  NumPy's
    accuracy tests hold its float64 ``exp`` to 1 ulp; we assume 4 (an assumption on the
    library, not a proof, like the float error model of :mod:`symgdp.gaussian`), so the
    result is that value inflated by :math:`4u`, moved one float up, and (for a
    subnormal value, whose error is absolute) at least five subnormal steps above it.
    Exactly 0 only at ``-inf``: an underflow reads as a positive subnormal, never 0.
    Scalars give floats.

    Example:
        >>> import math
        >>> y = exp_up(-1.0)
        >>> y > math.exp(-1.0) and y - math.exp(-1.0) < 1e-15
        True
        >>> exp_up(-800.0) > 0.0, exp_up(float("-inf")), exp_up(0.0)
        (True, 0.0, 1.0)
    """
    import numpy as np

    ld = np.asarray(log_value, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.exp(ld)
        out = np.maximum(np.nextafter(y * (1.0 + 4.0 * _U), np.inf), y + 5.0 * _TINY)
    out = np.where(np.isneginf(ld), 0.0, np.minimum(out, 1.0))
    out = np.where(np.isnan(ld), np.nan, out)
    return float(out) if np.ndim(log_value) == 0 else out


def arb_ceil(x: Any, bits: int) -> int:
    """ceil(max(upper end of the ball x, 0) * 2^bits) as a Python int."""
    m, e = x.upper().man_exp()
    m, e = int(m), int(e) + bits
    if m <= 0:
        return 0
    return m << e if e >= 0 else -((-m) >> -e)


def arb_floor(x: Any, bits: int) -> int:
    """floor(max(lower end of the ball x, 0) * 2^bits) as a Python int."""
    m, e = x.lower().man_exp()
    m, e = int(m), int(e) + bits
    if m <= 0:
        return 0
    return m << e if e >= 0 else m >> -e
