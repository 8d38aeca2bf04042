r"""Exact balls of numbers and three-valued comparisons over them (python-flint ``arb``).

The ground floor of the ball arithmetic of :mod:`symgdp.evaluation.interval` and
:mod:`symgdp.gaussian.gdp_balls`: :func:`to_arb` turns a number into an exact (or
outward-rounded) ball; the comparisons ``lt3``, ``le3``, ... answer True, False or
``None`` (undecided: the balls overlap the boundary); :func:`prove` runs such a check at
increasing working precision until it is decided.  Precision is always scoped with
``flint.ctx.workprec`` (never set globally).

Example:
    >>> to_arb(0.5) + to_arb(0.25)
    0.750000000000000
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import sympy
from flint import arb, ctx, fmpq, fmpz

from symgdp.errors import ProfileError

__all__ = ["ArbUnsupported", "PRECISIONS", "SERIES_CAP_LOCK", "prove", "to_arb"]

#: Arb's series length (``flint.ctx.cap``) is process-wide state: every code that sets it
#: for a series computation holds this lock meanwhile, so that another Python thread does
#: not truncate the series under it (truncated coefficients would read as exact zeros)
SERIES_CAP_LOCK = threading.RLock()

#: working precisions (bits) tried in turn by :func:`prove`
PRECISIONS: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)


class ArbUnsupported(ProfileError):
    """The expression uses a function that has no ball-arithmetic counterpart here."""


def to_arb(x: Any) -> arb:
    """An exact ``arb`` for a Python/NumPy float or int, or a SymPy number (outward-rounded
    when the number is not a binary fraction, e.g. ``Rational(1, 3)``)."""
    if isinstance(x, arb):
        return x
    if isinstance(x, (fmpz, fmpq)):
        return arb(x)
    if isinstance(x, sympy.Basic):
        x = sympy.sympify(x)
        if isinstance(x, sympy.Float):
            return _float_arb(x)
        if isinstance(x, sympy.Integer):
            return arb(fmpz(int(x)))
        if isinstance(x, sympy.Rational):
            return arb(fmpq(int(x.p), int(x.q)))
        if x is sympy.pi:
            return arb.pi()
        if x is sympy.E:
            return arb.const_e()
        raise ArbUnsupported(f"cannot convert {x!r} to a ball")
    if isinstance(x, int):
        return arb(fmpz(x))
    return arb(float(x))  # a float64 is a binary fraction: exact


# binary exponents beyond which a Float is not expanded into a rational (1e308 has 971;
# exp(-1e308) evaluated by SymPy has about -1.4e308, whose rational would not fit memory)
RATIONAL_EXP = 1 << 14


def float_exact(f: sympy.Float) -> fmpq | arb:
    """The binary number a finite, non-zero SymPy Float stores, exactly: a rational, or
    for a binary exponent too large to expand (``Float('1e-100000000')``) an exact ball
    ``man * 2**exp`` (arb exponents are unbounded integers)."""
    sign, man, exp, _bc = f._mpf_
    if abs(exp) > RATIONAL_EXP:
        return arb((fmpz(-int(man) if sign else int(man)), fmpz(int(exp))))
    v = fmpq(int(man) << exp, 1) if exp >= 0 else fmpq(int(man), 1 << -exp)
    return -v if sign else v


def _float_arb(f: sympy.Float) -> arb:
    sign, man, exp, _bc = f._mpf_
    if man == 0:
        if f == 0:
            return arb(0)
        return arb("nan") if f != f else arb(float(f))  # +-inf keep their sign
    return arb(float_exact(f))


# -- three-valued logic over balls -------------------------------------------------------
# True / False when decided, None when the balls overlap the boundary.

def tri(definitely: bool, definitely_not: bool) -> bool | None:
    if definitely:
        return True
    if definitely_not:
        return False
    return None


def lt3(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    return tri(a < b, a >= b)


def le3(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    return tri(a <= b, a > b)


def gt3(a: Any, b: Any) -> bool | None:
    return lt3(b, a)


def ge3(a: Any, b: Any) -> bool | None:
    return le3(b, a)


def eq3(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    if a.is_exact() and b.is_exact() and a == b:
        return True
    return tri(False, not a.overlaps(b))


def ne3(a: Any, b: Any) -> bool | None:
    r = eq3(a, b)
    return None if r is None else not r


def and3(*xs: bool | None) -> bool | None:
    if any(x is False for x in xs):
        return False
    return True if all(x is True for x in xs) else None


def or3(*xs: bool | None) -> bool | None:
    if any(x is True for x in xs):
        return True
    return False if all(x is False for x in xs) else None


def not3(x: bool | None) -> bool | None:
    return None if x is None else not x


def ball_piecewise(*pairs: tuple[bool | None, Callable[[], Any]]) -> arb:
    """Hull of every branch whose condition may hold, up to the first one that surely does."""
    out: arb | None = None
    for cond, branch in pairs:
        if cond is False:
            continue
        v = to_arb(branch())
        out = v if out is None else out.union(v)
        if cond is True:
            break
    if out is None:  # no branch applies: SymPy's Piecewise is undefined here
        return arb("nan")
    return out


def ball_max(*xs: Any) -> arb:
    out = to_arb(xs[0])
    for x in xs[1:]:
        out = out.max(to_arb(x))
    return out


def ball_min(*xs: Any) -> arb:
    out = to_arb(xs[0])
    for x in xs[1:]:
        out = out.min(to_arb(x))
    return out


def ball_ipow(x: Any, n: int) -> arb:
    """x**n for an integer n; Arb's own power is NaN on a ball containing 0."""
    x = to_arb(x)
    if n < 0:
        return 1 / ball_ipow(x, -n)
    if n == 0:
        return arb(1)
    if x > 0 or x < 0:
        # an even power is >= 0 (the midpoint-radius square of a wide ball is not)
        return (x**n).nonnegative_part() if n % 2 == 0 else x**n
    out, base, k = arb(1), x, n
    while k:
        if k & 1:
            out = out * base
        base = base * base
        k >>= 1
    return out.nonnegative_part() if n % 2 == 0 else out


def _touches_zero_from_above(x: arb) -> bool:
    """Whether ``x`` is a ball of non-negative numbers whose midpoint-radius form reaches
    just below 0: a ball built from ``[0, b]`` has its radius rounded up to 30 bits, so
    its lower end is about :math:`-2^{-30} b`, below 0 by rounding, not by any argument
    (a genuinely sign-changing ball, like ``eps - 1`` near 1, is not one)."""
    if not x.is_finite():
        return False
    up = x.upper()
    return bool(up > 0) and bool(x.lower() >= -up * arb(2) ** -26)


def ball_rpow(x: Any, e: Any) -> arb:
    r"""``x**e`` for a non-integer exponent.  A real power is defined for :math:`x \ge 0`
    only, where :math:`t \mapsto t^e` is increasing for :math:`e > 0`: on a ball of
    non-negative numbers touching 0 (see :func:`_touches_zero_from_above`) the enclosure
    is :math:`[0, b^e]` (Arb's own power is NaN there).  Every other ball: Arb's power."""
    x, e = to_arb(x), to_arb(e)
    if not (x > 0) and e > 0 and _touches_zero_from_above(x):
        return arb(0).union(arb(x.upper()) ** e)
    return x**e


def ball_sqrt(x: Any) -> arb:
    """``sqrt(x)``, with :func:`ball_rpow`'s rule for balls touching 0 (Arb's is NaN)."""
    x = to_arb(x)
    if not (x > 0) and _touches_zero_from_above(x):
        return arb(0).union(arb(x.upper()).sqrt())
    return x.sqrt()


def ball_log(x: Any, base: Any = None) -> arb:
    v = ball_monotone(to_arb(x), arb.log)

    return v if base is None else v / to_arb(base).log()

def ball_monotone(x: arb, f: Callable[[arb], arb]) -> arb:
    """``f`` (monotone) on the ball ``x``: the hull of its end-point values when the ball
    is wide (Arb's own enclosure of e.g. erfc on [7, 9] contains 0, losing the sign).
    Wide is relative to the midpoint only: a ball of radius 1e-205 around 5e-201 is wide
    (Arb's erfcinv there is 50 times looser than the end points' hull)."""
    if not x.is_finite() or x.rad() <= abs(x.mid()) * 2.0**-40:
        return f(x)
    return f(arb(x.lower())).union(f(arb(x.upper())))

def prove(check: Callable[[], bool | None],
          precisions: Sequence[int] = PRECISIONS) -> bool | None:
    """Run a three-valued ``check`` at increasing precision until it is decided.

    Returns True (proved), False (disproved) or None (undecided at the highest precision).
    """
    for p in precisions:
        with ctx.workprec(p):
            r = check()
        if r is not None:
            return r
    return None
