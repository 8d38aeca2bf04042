"""Progress of long stages, for callbacks, tqdm bars and the command line.

A long computation (the refinement, the tail analysis, the measurement of a report, or any
other stage) reports :class:`ProgressEvent` values to a callback: one ``"start"``, any
number of ``"advance"`` events with counts inside the stage (for example profile
evaluations done out of a predicted total), and one ``"end"`` with the stage's wall time.
A function that takes ``progress=`` accepts

* ``None`` or ``False``: no progress (the default);
* ``True`` or ``"tqdm"``: one `tqdm <https://tqdm.github.io>`_ bar per stage on stderr
  (tqdm is imported only then);
* any callable taking one :class:`ProgressEvent`.

Example:
    >>> events = []
    >>> with stage(events.append, "measure", "measuring the head") as s:
    ...     s.advance(50, 200)
    >>> [(e.kind, e.done, e.total) for e in events]
    [('start', None, None), ('advance', 50, 200), ('end', None, None)]
    >>> str(events[0])
    'measuring the head'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from symgdp.contracts import ProgressKind

__all__ = ["ProgressEvent", "ProgressCallback", "as_callback", "stage", "Stage",
           "TqdmProgress"]

_KINDS = ("start", "advance", "end")


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One step of progress.

    Attributes:
        stage: short stage name (``"refine"``, ``"identify"``, ``"measure"``, ...).
        kind: ``"start"``, ``"advance"`` or ``"end"``.
        done: work done inside the stage (``"advance"`` only; ``None`` otherwise).
        total: the predicted total of that work, ``None`` when unknown.
        detail: the stage in words, e.g. ``"measuring the head"``.
        seconds: wall time of the stage (``"end"`` only).
    """

    stage: str
    kind: ProgressKind
    done: int | None = None
    total: int | None = None
    detail: str = ""
    seconds: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {', '.join(_KINDS)}; got {self.kind!r}")

    def __str__(self) -> str:
        text = self.detail or self.stage
        if self.done is not None:
            text += f" ({self.done}/{self.total})" if self.total else f" ({self.done})"
        return text


ProgressCallback = Callable[[ProgressEvent], None]


class TqdmProgress:
    """A :data:`ProgressCallback` that shows one tqdm bar per stage (on stderr)."""

    def __init__(self, **tqdm_kwargs: Any) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError as exc:
            raise ImportError("progress=True needs tqdm: pip install tqdm") from exc
        self._tqdm = tqdm
        self._kwargs = {"leave": False, **tqdm_kwargs}
        self._bars: dict[str, Any] = {}

    def __call__(self, event: ProgressEvent) -> None:
        bar = self._bars.get(event.stage)
        if event.kind == "start":
            if bar is not None:
                bar.close()
            self._bars[event.stage] = self._tqdm(desc=event.detail or event.stage,
                                                 total=None, **self._kwargs)
        elif event.kind == "advance" and bar is not None:
            if event.total is not None and bar.total != event.total:
                bar.total = event.total
            if event.done is not None:
                bar.update(max(0, event.done - bar.n))
        elif event.kind == "end" and bar is not None:
            bar.close()
            del self._bars[event.stage]


def as_callback(progress: Any) -> ProgressCallback | None:
    """The callback a ``progress=`` argument stands for (see the module docstring).

    Raises:
        TypeError: ``progress`` is none of the accepted kinds.
    """
    if progress is None or progress is False:
        return None
    if progress is True or progress == "tqdm":
        return TqdmProgress()
    if callable(progress):
        return progress
    raise TypeError(f"progress must be None, True, 'tqdm' or a callable taking a "
                    f"ProgressEvent; got {progress!r}")


class Stage:
    """The stage being run: report counts inside it with :meth:`advance`."""

    __slots__ = ("_callback", "name", "detail")

    def __init__(self, callback: ProgressCallback | None, name: str, detail: str) -> None:
        self._callback, self.name, self.detail = callback, name, detail

    def advance(self, done: int, total: int | None = None) -> None:
        """``done`` units of work out of a predicted ``total`` (``None``: unknown)."""
        if self._callback is not None:
            self._callback(ProgressEvent(self.name, "advance", int(done),
                                         None if total is None else int(total), self.detail))


@contextmanager
def stage(callback: ProgressCallback | None, name: str, detail: str = "") -> Iterator[Stage]:
    """Report the start and the end (with its wall time) of a stage around a block.

    The end is reported also when the block raises, so a bar is never left open.
    """
    t0 = time.perf_counter()
    if callback is not None:
        callback(ProgressEvent(name, "start", detail=detail))
    try:
        yield Stage(callback, name, detail)
    finally:
        if callback is not None:
            callback(ProgressEvent(name, "end", detail=detail,
                                   seconds=time.perf_counter() - t0))
