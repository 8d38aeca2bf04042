r"""The result of a measurement: :class:`Measurement`, a guaranteed bracket on
:math:`\sup_{[0,\varepsilon_h]} G`."""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from symgdp.errors import DomainError, PrecisionError, SymgdpError
from symgdp.numerics.decimals import (
    Probability,
    format_bracket,
    format_log_upper,
    head_caveat,
    latex_text,
)

__all__ = ["Measurement", "MeasurementTimeLimit", "time_limit", "check_time_limit",
           "TRADEOFF_METHOD"]

#: the method of a trade-off curve's profile measured in the alpha domain
#: (:meth:`symgdp.notions.tradeoff.TradeoffSource.gdp_bracket`)
TRADEOFF_METHOD = "trade-off curve, alpha branch-and-bound"


class MeasurementTimeLimit(PrecisionError):
    """A measurement ran past its wall-clock budget (``measure(..., time_limit=)``):
    nothing is claimed about the profile."""


# (monotonic deadline, the budget in seconds) of the running measurement, or None
_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "symgdp_measure_deadline", default=None)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Run the block under a wall-clock budget, checked cooperatively by
    :func:`check_time_limit` at every batch of profile evaluations (no signal, no
    thread: nothing is interrupted half-way).  ``None`` means no budget; an inner budget
    never extends an outer one.

    Example:
        >>> with time_limit(0.0):
        ...     try:
        ...         check_time_limit()
        ...     except MeasurementTimeLimit as exc:
        ...         print(type(exc).__name__)
        MeasurementTimeLimit
    """
    if seconds is None:
        yield
        return
    end = time.monotonic() + seconds
    outer = _DEADLINE.get()
    if outer is not None and outer[0] <= end:
        yield
        return
    token = _DEADLINE.set((end, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_time_limit() -> None:
    """Raise :class:`MeasurementTimeLimit` when the running measurement's budget is spent."""
    d = _DEADLINE.get()
    if d is not None and time.monotonic() > d[0]:
        raise MeasurementTimeLimit(
            f"the measurement did not finish within its time limit of {d[1]:g} s and "
            "claims nothing: try a larger tol, a smaller eps_h, certify=False (float "
            "mode), or a larger time_limit (None for no limit; CLI --time-limit)")


@dataclass(frozen=True, slots=True)
class Measurement:
    r"""Guaranteed bracket on :math:`\sup_{[0,\varepsilon_h]} G`.

    Attributes:
        lower: guaranteed lower bound on the supremum of the GDPT over ``[0, eps_h]``.
        upper: guaranteed upper bound; the mechanism is ``(eps_h, upper)``-head GDP, and
            ``upper``-GDP outright when ``covers_tail``.
        eps_h: end of the measured head.
        tol: requested bracket width (``upper - lower <= tol``).
        covers_tail: the bound ``upper`` holds on the whole line: the profile is exactly 0
            from some :math:`\varepsilon \le` ``eps_h`` on (proved by an exact evaluation,
            not a float underflow), or :math:`\delta \le \delta_{upper}` is proved on
            :math:`[\varepsilon_h, \infty)` (the tail certificate, ``tail_proof``).
        mu_tail: :math:`\sqrt{\lim G^2}` from the symbolic identification (``inf`` when not
            GDP, ``nan`` when unknown, 0 when ``covers_tail``).
        failure_prob: an upper bound of :math:`\delta(\varepsilon_h)`, the profile at the
            end of the head, rounded up -- :math:`\delta_{upper}(\varepsilon_h)`, or the
            profile's own value at ``eps_h`` where that was computed and is smaller -- so
            :math:`\delta(\varepsilon) \le \delta_{upper}(\varepsilon) +` ``failure_prob``
            for every :math:`\varepsilon` (0 when ``covers_tail``).  A
            :class:`~symgdp.numerics.decimals.Probability`: never prints as 0 when positive.
        log_failure_prob: its natural logarithm (finite where the float underflows).
        refined: the refined profile (theory §2) was measured.
        method: ``"first-order"``, ``"branch-and-bound"`` or ``"staircase"``, or
            :data:`TRADEOFF_METHOD` for a trade-off curve measured in the :math:`\alpha`
            domain (``lower`` is then proved at the tangent point ``argmax`` of the best
            :math:`\alpha`, ``upper`` by boxes over :math:`\alpha`).
        certified: every bound was proved in ball arithmetic.
        evaluations: profile values that steered the search (float64, or in a certified
            first-order search the midpoints of point balls; see ``measure``).
        argmax: :math:`\varepsilon` of the best point value (where ``lower`` was found).
        seconds: wall time of the whole measurement.
        certify_evaluations: ball-arithmetic profile evaluations (0 unless certified).
        notes: remarks on how the result was obtained.
        cover: the leaf intervals as rows ``(x, y, U)`` with ``U`` the float upper bound of
            :math:`G` on ``[x, y]`` (for plots; ``None`` for the staircase).
        profile: the profile that was measured (refined or as given).
        proved_until: :math:`\delta \le \delta_{upper}` is proved on
            :math:`[0, \text{proved\_until}]`: ``inf`` when ``covers_tail``, at least
            ``eps_h`` otherwise (beyond it where the tail proof got further; ``nan``: not
            recorded).
        tail_proof: how the whole line was proved (empty unless ``covers_tail``).  When the
            tail is the maximum of :math:`G` the bracket is on the supremum over the whole
            line (see ``notes``).
    """

    lower: float
    upper: float
    eps_h: float
    tol: float
    covers_tail: bool
    mu_tail: float
    failure_prob: float
    log_failure_prob: float
    refined: bool
    method: str
    certified: bool
    evaluations: int
    argmax: float
    seconds: float = field(default=math.nan, compare=False)
    certify_evaluations: int = 0
    notes: tuple[str, ...] = ()
    cover: Any = field(default=None, compare=False, repr=False)
    profile: Any = field(default=None, compare=False, repr=False)
    # -- whole line (symgdp.measurement.whole_line.certificate) --
    proved_until: float = field(default=math.nan, compare=False)
    tail_proof: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if math.isnan(self.lower) or math.isnan(self.upper) or self.lower > self.upper:
            raise DomainError(f"invalid bracket [{self.lower!r}, {self.upper!r}]")
        if self.lower < 0:
            raise DomainError(f"lower must be >= 0, got {self.lower!r}")
        if not self.tol > 0:
            raise DomainError(f"tol must be > 0, got {self.tol!r}")
        if self.method not in ("first-order", "branch-and-bound", "staircase",
                               TRADEOFF_METHOD):
            raise DomainError(f"unknown method {self.method!r}")
        if not isinstance(self.failure_prob, Probability):
            # one value, printed from its log and rounded up, never as 0.0 when positive
            object.__setattr__(self, "failure_prob", Probability.from_log(
                self.log_failure_prob) if self.failure_prob > 0 or
                self.log_failure_prob > -math.inf else Probability(0.0))

    @property
    def width(self) -> float:
        """``upper - lower`` (0 for an infinite bracket)."""
        return 0.0 if self.lower == self.upper else self.upper - self.lower

    def __contains__(self, mu: float) -> bool:
        return self.lower <= mu <= self.upper

    def _bracket_text(self) -> tuple[str, str, str]:
        # rounded outwards (lower down, upper and failure probability up): the printed
        # statement stays true
        lo, up = format_bracket(self.lower, self.upper)
        return lo, up, format_log_upper(self.log_failure_prob)

    def headline_caveat(self) -> str | None:
        r"""What must be said before the bracket: why ``upper`` is not the mechanism's
        :math:`\mu` (tail limit above it or infinite, maximum at ``eps_h``), else ``None``."""
        return head_caveat(lower=self.lower, upper=self.upper, eps_h=self.eps_h,
                           argmax=self.argmax, mu_tail=self.mu_tail,
                           covers_tail=self.covers_tail)

    def __repr__(self) -> str:
        # the caveat first; the failure probability prints from its log, rounded up
        parts = [] if self.headline_caveat() is None else \
            [f"caveat={self.headline_caveat()!r}"]
        for f in fields(self):
            if not f.repr:
                continue
            value = getattr(self, f.name)
            parts.append(f"{f.name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __str__(self) -> str:
        how = "certified" if self.certified else "float64"
        lo, up, fp = self._bracket_text()
        head = (f"sup G on {self._span()} in [{lo}, {up}] "
                f"({self.method}, {how}, {self.evaluations} evaluations)")
        caveat = self.headline_caveat()
        head = head if caveat is None else f"CAUTION: {caveat}.  {head}"
        if self.covers_tail:
            return head + f"; {self._whole_line_reason()}: {up}-GDP"
        return head + f"; head GDP, tail failure probability <= {fp}"

    def _span(self) -> str:
        """The range of eps the bracket is about: the whole line when the tail is covered
        (proved below the upper end, or the profile 0 beyond eps_h: the head's bracket is
        then one on sup G over every eps), else the head."""
        return "[0, inf)" if self.covers_tail else f"[0, {self.eps_h:g}]"

    def _whole_line_reason(self) -> str:
        return self.tail_proof or "the profile is 0 beyond eps_h"

    def _repr_markdown_(self) -> str:
        return str(self)

    def _repr_latex_(self) -> str:
        lo, up, _ = self._bracket_text()
        how = r"\text{certified}" if self.certified else r"\text{float64}"
        caveat = self.headline_caveat()
        # Jupyter renders with MathJax, whose \text takes no nested math: words stay words
        s = "" if caveat is None else \
            rf"$\text{{Caution: {latex_text(caveat, symbols=False)}}}$ "
        span = r"[0, \infty)" if self._span() == "[0, inf)" else f"[0, {self.eps_h:g}]"
        s += (rf"$\sup_{{\varepsilon \in {span}}} G(\varepsilon) \in [{lo}, {up}]"
              rf"\quad ({how})")
        if self.covers_tail:
            return s + rf",\quad {up}\text{{-GDP (whole line)}}$"
        fp = format_log_upper(self.log_failure_prob, latex=True)
        return s + rf",\quad \delta_{{\mu}}({self.eps_h:g}) \le {fp}$"



def _mu_tail(profile: Any, covers_tail: bool, identify: bool, notes: list[str],
             timeout: float | None) -> float:
    if covers_tail:
        return 0.0  # an eventually-zero profile has tail limit 0 (theory §5)
    if not identify:
        return math.nan
    if not hasattr(profile, "identify"):
        notes.append("no identify(): mu_tail unknown")
        return math.nan
    try:
        return float(profile.identify(timeout=timeout).mu_tail)
    except SymgdpError as exc:
        notes.append(f"identification failed ({type(exc).__name__}: {exc}); mu_tail unknown")
        return math.nan
