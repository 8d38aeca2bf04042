r"""Amplification: turning a head-GDP measurement into a full GDP guarantee.

Clip and rectify (theory §7; "Identification, Amplification and Measurement: A
bridge to Gaussian Differential Privacy", NeurIPS 2022): let :math:`A` be
:math:`(\varepsilon_h, \mu)`-head GDP, i.e. :math:`\delta_A \le \delta_\mu` on
:math:`[0, \varepsilon_h]`, with a real-valued output.  Clip the output to
:math:`[y_-, y_+]` and add Laplace noise of scale

.. math::

    b = \frac{y_+ - y_-}{\varepsilon_h}.

The result is :math:`\varepsilon_h`-DP (Laplace mechanism of sensitivity
:math:`y_+ - y_-`), so its profile is 0 beyond :math:`\varepsilon_h`, and by
post-processing its profile stays below :math:`\delta_A \le \delta_\mu` on the head:
it is :math:`\mu`-GDP.  The :math:`\mu` used is the measurement's guaranteed ``upper``.

Where the tail proof of the measurement got beyond the head (``proved_until``
:math:`= \varepsilon_c > \varepsilon_h`: :math:`\delta_A \le \delta_\mu` on
:math:`[0, \varepsilon_c]`), the same argument holds with :math:`\varepsilon_c` in place of
:math:`\varepsilon_h`: less noise, :math:`b = (y_+ - y_-)/\varepsilon_c`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from symgdp.errors import DomainError

__all__ = ["ClipAndRectify", "clip_and_rectify"]


@dataclass(frozen=True, slots=True)
class ClipAndRectify:
    r"""The rectified mechanism: clip to ``[y_low, y_high]``, add Laplace noise of ``scale``.

    Attributes:
        scale: Laplace scale :math:`b = (y_{high} - y_{low})/\varepsilon_h`, rounded up.
        mu: the GDP parameter of the rectified mechanism (the measurement's ``upper``).
        eps_h: the head end point, also the pure-DP parameter of the rectified mechanism.
        y_low, y_high: the clipping range.
        certified: whether ``mu`` was certified in ball arithmetic.
        statement: the guarantee in words.
    """

    scale: float
    mu: float
    eps_h: float
    y_low: float
    y_high: float
    certified: bool
    statement: str

    def __str__(self) -> str:
        return self.statement


def _scale_up(y_low: float, y_high: float, eps_h: float) -> float:
    """(y_high - y_low)/eps_h rounded up, so the noise never falls short of eps_h-DP."""
    exact = (Fraction(y_high) - Fraction(y_low)) / Fraction(eps_h)
    b = float(exact)
    return b if Fraction(b) >= exact else math.nextafter(b, math.inf)


def clip_and_rectify(measurement: Any, y_low: float, y_high: float, *,
                     proved_until: float | None = None) -> ClipAndRectify:
    r"""Laplace scale that makes an :math:`(\varepsilon_h, \mu)`-head-GDP mechanism
    :math:`\mu`-GDP after clipping its output to ``[y_low, y_high]`` (theory §7).

    Args:
        measurement: a :class:`~symgdp.measurement.measure.Measurement` (``upper`` and
            ``eps_h`` used).
        y_low: lower clipping bound.
        y_high: upper clipping bound, ``> y_low``.
        proved_until: the end :math:`\varepsilon_c` of the range on which
            :math:`\delta_A \le \delta_\mu` is proved; default the measurement's own
            ``proved_until`` when it is finite and beyond ``eps_h``, else ``eps_h``.  The
            rectified mechanism is then :math:`\varepsilon_c`-DP (less noise).

    Raises:
        DomainError: a non-finite or empty clipping range, a non-finite ``upper`` (no head
            guarantee to keep) or ``eps_h <= 0``.

    Example:
        >>> from types import SimpleNamespace
        >>> m = SimpleNamespace(upper=1.5, eps_h=100.0, certified=False, covers_tail=False)
        >>> r = clip_and_rectify(m, 0.0, 1.0)
        >>> r.scale, r.mu
        (0.01, 1.5)
    """
    y_low, y_high = float(y_low), float(y_high)
    if not (math.isfinite(y_low) and math.isfinite(y_high)):
        raise DomainError(f"the clipping range must be finite, got [{y_low!r}, {y_high!r}]")
    if not y_high > y_low:
        raise DomainError(f"y_high must exceed y_low, got [{y_low!r}, {y_high!r}]")
    mu = float(measurement.upper)
    eps_h = float(measurement.eps_h)
    if not (math.isfinite(eps_h) and eps_h > 0):
        raise DomainError(f"eps_h must be finite and > 0, got {eps_h!r}")
    if proved_until is None:
        proved_until = getattr(measurement, "proved_until", math.nan)
        if not (isinstance(proved_until, (int, float)) and math.isfinite(proved_until)):
            proved_until = eps_h
    proved_until = float(proved_until)
    if not (math.isfinite(proved_until) and proved_until >= eps_h):
        raise DomainError(f"proved_until must be finite and >= eps_h = {eps_h!r}, got "
                          f"{proved_until!r}")
    own = getattr(measurement, "proved_until", math.nan)
    if proved_until > eps_h and not (isinstance(own, (int, float)) and own >= proved_until):
        raise DomainError(f"proved_until={proved_until!r} is beyond what the measurement "
                          f"proved ({own!r})")
    if not math.isfinite(mu):
        raise DomainError(f"the measurement's upper bound is {mu!r}: no head GDP to keep")
    eps_c = proved_until
    scale = _scale_up(y_low, y_high, eps_c)
    certified = bool(getattr(measurement, "certified", False))
    extra = (" (the bound already holds on the whole line: the mechanism is "
             f"{mu:.10g}-GDP without rectification)"
             if getattr(measurement, "covers_tail", False) else "")
    statement = (
        f"Clipping the output to [{y_low:g}, {y_high:g}] and adding Laplace noise of scale "
        f"b = {scale:.10g} gives an {eps_c:g}-DP mechanism that keeps the bound "
        f"delta <= delta_mu on [0, {eps_c:g}], hence a {mu:.10g}-GDP mechanism"
        f"{' (certified)' if certified else ''}{extra}.")
    return ClipAndRectify(scale=scale, mu=mu, eps_h=eps_c, y_low=y_low, y_high=y_high,
                          certified=certified, statement=statement)
