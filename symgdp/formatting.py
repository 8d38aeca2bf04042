r"""Printing bounds so that the printed statement stays true: outward decimal rounding.

A lower bound is printed rounded down, an upper bound (or a failure probability) rounded
up, from the exact binary value of the float; a probability known only through its
logarithm is printed from the log, so it is never shown as 0 when it underflows float64.

Example:
    >>> format_lower(2 / 3, 3), format_upper(2 / 3, 3)  # outward: lower down, upper up
    ('0.666', '0.667')
    >>> format_log_upper(-800.0)  # exp(-800) underflows float64, yet prints as positive
    '3.7e-348'
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

__all__ = ["format_lower", "format_upper", "format_bracket", "format_log_upper"]

_LN10 = math.log(10.0)


def _directed(x: float, digits: int, rounding: str) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    d = Decimal(x)  # the exact binary value, so the rounding direction is honoured
    exp = d.adjusted() - digits + 1
    q = d.quantize(Decimal(1).scaleb(exp), rounding=rounding)
    if -7 < q.adjusted() < 7:
        return format(q, "f")
    return format(q.normalize(), "E").replace("E", "e")


def format_lower(x: float, digits: int = 6) -> str:
    """``x`` rounded down to ``digits`` significant digits, as text.

    >>> format_lower(0.70710678118)
    '0.707106'
    """
    return _directed(float(x), digits, ROUND_FLOOR)


def format_upper(x: float, digits: int = 6) -> str:
    """``x`` rounded up to ``digits`` significant digits, as text.

    >>> format_upper(0.70710678118)
    '0.707107'
    """
    return _directed(float(x), digits, ROUND_CEILING)


def format_bracket(lower: float, upper: float) -> tuple[str, str]:
    """A bracket rounded outwards with just enough digits to show its width (3 to 12).

    >>> format_bracket(1.23203538, 1.23203601)
    ('1.2320353', '1.2320361')
    """
    lo, up = float(lower), float(upper)
    if math.isfinite(lo) and math.isfinite(up) and up > 0:
        gap = max(up - lo, 1e-15 * up)
        digits = int(min(12, max(3, math.ceil(math.log10(up / gap)) + 1)))
    else:
        digits = 6
    return format_lower(lo, digits), format_upper(up, digits)


def format_log_upper(log_x: float, latex: bool = False) -> str:
    r"""An upper bound of :math:`x` from :math:`\log x`, as ``m e k`` (or LaTeX), rounded up.

    Works where :math:`x` itself underflows float64.

    >>> format_log_upper(-1000.0)  # exp(-1000) = 5.0759...e-435
    '5.1e-435'
    >>> format_log_upper(-100.0, latex=True)
    '3.8 \\times 10^{-44}'
    """
    if math.isnan(log_x):
        return "nan"
    if log_x == -math.inf:
        return "0"
    if log_x >= 0:
        return "1"
    t = log_x / _LN10
    k = math.floor(t)
    m = 10.0 ** (t - k)
    m_up = math.ceil(m * 10.0 * (1 + 1e-12)) / 10.0  # rounding up absorbs float error
    if m_up >= 10.0:
        m_up, k = 1.0, k + 1
    if latex:
        return rf"{m_up:.1f} \times 10^{{{k}}}"
    return f"{m_up:.1f}e{k:+d}".replace("e+", "e")
