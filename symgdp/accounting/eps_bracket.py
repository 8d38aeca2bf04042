r"""The answer to "which epsilon at this delta?" of a certified accounting result: a
bracket ``[lower, upper]`` around the smallest :math:`\varepsilon` with
:math:`(\varepsilon, \delta)`-DP, whose ``upper`` end is itself the guarantee (what
:meth:`symgdp.Composition.eps_at` and the DP-SGD results return)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["EpsBracket"]


class EpsBracket(NamedTuple):
    r"""The smallest :math:`\varepsilon` with :math:`(\varepsilon, \delta)`-DP lies in
    ``[lower, upper]``; ``upper`` is itself a guarantee."""

    lower: float
    upper: float

    def __float__(self) -> float:
        """The safe end, ``upper``: ``float(b)`` is the guarantee.

        Example:
            >>> b = EpsBracket(1.5, 1.75)
            >>> float(b), str(b)
            (1.75, '[1.50, 1.75]')
            >>> str(EpsBracket(1.8282041, 1.8282436))
            '[1.82820, 1.82825]'
        """
        return float(self.upper)

    def __str__(self) -> str:
        """The interval, rounded outwards (:func:`~symgdp.numerics.decimals.format_bracket`)."""
        from symgdp.numerics.decimals import format_bracket

        lo, up = format_bracket(self.lower, self.upper)
        return f"[{lo}, {up}]"
