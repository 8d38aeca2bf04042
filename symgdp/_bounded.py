r"""Time-bounded SymPy calls.

SymPy's ``limit``, ``solve``, ``simplify`` and friends can run for seconds or never
return (shared/math.md §10: one GDP-profile limit took 4.5 s).  A Python thread cannot be
stopped, so :func:`run_bounded` runs the call in a *forked* child process, receives the
result (pickled SymPy objects) through a pipe, and kills the child when the budget
expires, raising :class:`~symgdp.errors.AnalysisTimeout`.

Cost: a fork of an interpreter with SymPy, NumPy and SciPy loaded, plus the pickle round
trip, was measured at about 8 ms per call on the 2-core development machine (50 calls of
``run_bounded(int, 1)`` in a loop).  That is negligible next to the SymPy calls it guards,
but it is why callers batch their symbolic work into one bounded call rather than many
tiny ones.

Caveats:

* The child starts with a copy of the parent's memory, so SymPy caches warmed up in the
  child are lost when it exits; results computed there are returned by value.
* Results must be picklable.  Objects that are not (e.g. dynamically created classes)
  come back as a :class:`RuntimeError` describing the failure.
* ``fork`` is POSIX only.  Where it is unavailable the call runs in-process without a
  time limit, and :data:`FORK_AVAILABLE` is ``False``.

The default budget :data:`DEFAULT_TIMEOUT` (seconds) may be changed by the user; every
public symbolic entry point (``tail_limit``, ``identify``, ``refine``, ``from_tradeoff``)
also takes ``timeout=``.

Example:
    >>> import sympy
    >>> from symgdp._bounded import run_bounded
    >>> x = sympy.Symbol("x")
    >>> run_bounded(sympy.limit, sympy.sin(x) / x, x, 0, timeout=10)
    1
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
import warnings
from collections.abc import Callable
from typing import Any

from .errors import AnalysisTimeout

__all__ = ["DEFAULT_TIMEOUT", "FORK_AVAILABLE", "run_bounded", "resolve_timeout"]

#: Default time budget in seconds for one bounded SymPy call; users may change it.
DEFAULT_TIMEOUT: float = 10.0

try:
    _CTX = multiprocessing.get_context("fork")
    FORK_AVAILABLE = True
except ValueError:  # pragma: no cover - non-POSIX platforms
    _CTX = None
    FORK_AVAILABLE = False


def resolve_timeout(timeout: float | None) -> float:
    """The budget to use: ``timeout`` itself, or :data:`DEFAULT_TIMEOUT` when ``None``."""
    t = DEFAULT_TIMEOUT if timeout is None else timeout
    try:
        t = float(t)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"timeout must be a number of seconds, got {timeout!r}") from exc
    if not t > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return t


def _child(conn: Any, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    try:
        result = ("ok", fn(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        result = ("err", exc, traceback.format_exc())
    try:
        payload = pickle.dumps(result)
    except Exception as exc:  # noqa: BLE001 - unpicklable result or exception
        payload = pickle.dumps(("err", RuntimeError(
            f"bounded call of {getattr(fn, '__name__', fn)!r} produced an unpicklable "
            f"result: {exc}"), ""))
    try:
        conn.send_bytes(payload)
    finally:
        conn.close()


def run_bounded(fn: Callable[..., Any], *args: Any, timeout: float | None = None,
                **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)`` in a forked child and return its result.

    Args:
        fn: the (SymPy) callable.
        *args: positional arguments, passed to the child by fork (not pickled).
        timeout: budget in seconds; ``None`` means :data:`DEFAULT_TIMEOUT`.
        **kwargs: keyword arguments for ``fn``.

    Returns:
        The value ``fn`` returned, unpickled in the parent.

    Raises:
        AnalysisTimeout: the budget expired; the child was killed.
        Exception: whatever ``fn`` raised in the child is re-raised here.
    """
    budget = resolve_timeout(timeout)
    if _CTX is None:  # pragma: no cover - non-POSIX platforms
        return fn(*args, **kwargs)
    recv, send = _CTX.Pipe(duplex=False)
    with warnings.catch_warnings():
        # Python >= 3.12 warns about fork() in a multi-threaded parent; the child here only
        # runs pure-Python SymPy code and exits, so the warning does not apply.
        warnings.simplefilter("ignore", DeprecationWarning)
        proc = _CTX.Process(target=_child, args=(send, fn, args, kwargs), daemon=True)
        proc.start()
    send.close()
    try:
        if not recv.poll(budget):
            name = getattr(fn, "__name__", repr(fn))
            raise AnalysisTimeout(f"SymPy call {name!r} exceeded its time budget of "
                                  f"{budget:g} s (raise timeout= or "
                                  f"symgdp._bounded.DEFAULT_TIMEOUT)")
        try:
            payload = recv.recv_bytes()
        except EOFError:
            proc.join()
            raise RuntimeError(f"the child process running {getattr(fn, '__name__', fn)!r} "
                               f"died (exit code {proc.exitcode})") from None
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
        proc.close()
    result = pickle.loads(payload)
    if result[0] == "ok":
        return result[1]
    raise result[1]
