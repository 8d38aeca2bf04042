r"""The crossing of a non-increasing function through a level, bracketed with proofs.

:func:`proved_crossing` bisects a bracket :math:`[a, b]` of the crossing point
:math:`x^* = \sup\{x : f(x) > \ell\}` of a non-increasing :math:`f` while keeping, at
every step, the invariant that :math:`f(a) > \ell` and :math:`f(b) \le \ell` are *proved*
(by ball arithmetic, say): monotonicity then puts :math:`x^*` in :math:`[a, b]` whatever
the rounding of the points in between.  The caller's ``side(x)`` says ``True`` only when
:math:`f(x) > \ell` is proved, ``False`` only when :math:`f(x) \le \ell` is proved, and
``None`` when it cannot decide (the ball of :math:`f(x)` holds :math:`\ell`).  An
undecided midpoint does not stop the search: each side is then narrowed towards it on its
own, its far end moving only to decided points, so both ends stay proved.

It serves the real line (python-flint balls, the generalized Gaussian's threshold in
:mod:`symgdp.noise.gengauss`) and the integers (the discrete noise's last positive term
in :mod:`symgdp.noise.discrete`) through the caller's ``midpoint``.

Example:
    >>> from fractions import Fraction
    >>> side = lambda x: x * x < 2 if x * x != 2 else None  # f(x) = -x^2, level -2
    >>> a, b = proved_crossing(side, Fraction(1), Fraction(2),
    ...                        lambda a, b: (a + b) / 2, 20)
    >>> a * a < 2 <= b * b and float(b - a) < 1e-5
    True
    >>> proved_crossing(lambda k: k <= 7, 0, 100, integer_midpoint, 64)  # f > l up to 7
    (7, 8)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["integer_midpoint", "proved_crossing"]

T = TypeVar("T")


def integer_midpoint(a: int, b: int) -> int | None:
    """The integer midpoint of ``a < b``, or ``None`` when no integer lies strictly between
    (the bracket is then as narrow as the integers allow)."""
    return (a + b) // 2 if b - a > 1 else None


def proved_crossing(side: Callable[[T], bool | None], lo: T, hi: T,
                    midpoint: Callable[[T, T], T | None], steps: int) -> tuple[T, T]:
    r"""``(a, b)`` with ``side(a)`` proved ``True`` and ``side(b)`` proved ``False``, so
    the crossing :math:`x^*` of the non-increasing :math:`f` lies in :math:`[a, b]`
    (module notes).

    Args:
        side: ``True`` when :math:`f(x) > \ell` is proved, ``False`` when
            :math:`f(x) \le \ell` is proved, ``None`` when undecided.
        lo, hi: the starting bracket, ``lo < hi``, with ``side(lo)`` ``True`` and
            ``side(hi)`` ``False`` established by the caller (not re-evaluated).
        midpoint: a point strictly between its arguments, or ``None`` when there is none.
        steps: the most halvings of the bracket (and again of each side after an
            undecided midpoint).

    Returns:
        The narrowed bracket; its ends are ``lo``/``hi`` or points where ``side`` answered
        ``True``/``False``, never an undecided point.
    """
    for _ in range(steps):
        m = midpoint(lo, hi)
        if m is None:
            break
        s = side(m)
        if s is True:
            lo = m
        elif s is False:
            hi = m
        else:  # undecided at m (f(m) = level within its ball): narrow each side alone
            return _narrow(side, lo, m, midpoint, steps, True), \
                _narrow(side, m, hi, midpoint, steps, False)
    return lo, hi


def _narrow(side: Callable[[T], bool | None], a: T, b: T,
            midpoint: Callable[[T, T], T | None], steps: int, left: bool) -> T:
    """The proved end (``a`` if ``left``, else ``b``) moved towards the other, undecided
    end, only ever onto points where ``side`` decides it (True left, False right)."""
    for _ in range(steps):
        m = midpoint(a, b)
        if m is None:
            break
        s = side(m)
        if left:
            a, b = (m, b) if s is True else (a, m)
        else:
            a, b = (a, m) if s is False else (m, b)
    return a if left else b
