r"""Time-bounded SymPy calls.

SymPy's ``limit``, ``solve``, ``simplify`` and friends can run for seconds or never
return (theory §10: one GDP-profile limit took 4.5 s).  A Python thread cannot be
stopped, so :func:`run_bounded` runs the call in a *forked* child process, receives the
result (pickled SymPy objects) through a pipe, and kills the child when the budget
expires, raising :class:`~symgdp.errors.AnalysisTimeout`.

Cost: one call forks the interpreter (``os.fork``; SymPy, NumPy and SciPy loaded, ~100 MB)
and sends the pickled result back through a pipe.  Measured on the 2-core development
machine while it was busy: about 6 ms of CPU time (parent and child) and about 20 ms of
wall time per ``run_bounded(int, 1)``, almost all of it the fork and the child's exit
themselves (``benchmarks/bench_everyday.py``).  Modules that SymPy imports lazily inside a
call (``solve`` imports ``sympy.physics.units``, ~0.3 s) are imported once in the parent
after the first child needed them, so later children inherit them instead of importing
them again.  Callers still batch their symbolic work into one bounded call rather than
many tiny ones.

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

Numeric work off the main thread (a Dask worker runs its tasks in a thread pool) need not
fork: :func:`run_in_thread` bounds a call in-process by raising an exception in the
calling thread when its budget expires (``PyThreadState_SetAsyncExc``, the thread
counterpart of the SIGALRM budget that :mod:`symgdp.symbolic.parsing` sets in the main thread).
A fork there is expensive: a Dask worker's process is large and multi-threaded, and each
fork cost about 90 ms of a 60 ms sweep point (1,000-point sweep, 2-worker ``LocalCluster``).

Example:
    >>> import sympy
    >>> from symgdp.symbolic.budget import run_bounded
    >>> x = sympy.Symbol("x")
    >>> run_bounded(sympy.limit, sympy.sin(x) / x, x, 0, timeout=10)
    1
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from symgdp.errors import AnalysisTimeout

__all__ = ["DEFAULT_TIMEOUT", "FORK_AVAILABLE", "TIMEOUT_SCALE", "Bounded", "OutOfTime",
           "resolve_timeout", "run_bounded", "run_in_thread", "start_bounded", "with_budget"]

#: Default time budget in seconds for one bounded SymPy call; users may change it.
DEFAULT_TIMEOUT: float = 10.0

#: Factor applied to every budget of a bounded call, the explicit ones included: a shared
#: or slow machine (a loaded CI runner, say) may raise it so that symbolic steps are not
#: cut short by the load; the answers stay honest either way (a cut step falls back).
TIMEOUT_SCALE: float = 1.0

FORK_AVAILABLE: bool = hasattr(os, "fork")
# Lazily imported modules under these prefixes that a child loaded are imported in the
# parent too, so that the next child inherits them.
_PRELOAD_PREFIXES = ("sympy.", "mpmath.")


def resolve_timeout(timeout: float | None) -> float:
    """The budget to use: ``timeout`` itself, or :data:`DEFAULT_TIMEOUT` when ``None``
    (a bounded call enforces it times :data:`TIMEOUT_SCALE`)."""
    t = DEFAULT_TIMEOUT if timeout is None else timeout
    try:
        t = float(t)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"timeout must be a number of seconds, got {timeout!r}") from exc
    if not t > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    return t


def _child(fd: int, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Run in the forked child: call ``fn``, send the pickled outcome, never return."""
    code = 0
    # a crash of the child (e.g. SIGFPE inside a C library SymPy calls) is an expected,
    # handled outcome (the parent reports it): no fatal-error dump on stderr
    faulthandler.disable()
    try:
        before = set(sys.modules)
        try:
            result: tuple = ("ok", fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
            result = ("err", exc, traceback.format_exc())
        new = sorted(m for m in set(sys.modules) - before if m.startswith(_PRELOAD_PREFIXES))
        try:
            payload = pickle.dumps((*result[:2], new))
        except Exception as exc:  # noqa: BLE001 - unpicklable result or exception
            payload = pickle.dumps(("err", RuntimeError(
                f"bounded call of {getattr(fn, '__name__', fn)!r} produced an unpicklable "
                f"result: {exc}"), new))
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:  # noqa: BLE001 - a child must never return into the caller
        code = 1
    finally:
        os._exit(code)


def _preload(modules: list[str]) -> None:
    for name in modules:
        if name not in sys.modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S112 - only an optimisation
                continue


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
    return start_bounded(fn, *args, timeout=timeout, **kwargs).result()


class Bounded:
    """A bounded call running in a forked child (:func:`start_bounded`): :meth:`result`
    waits for it (within its budget, counted from the start) and returns or raises as
    :func:`run_bounded` does.  A handle dropped unread kills and reaps its child."""

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict,
                 timeout: float | None) -> None:
        self._budget = resolve_timeout(timeout) * TIMEOUT_SCALE
        self._name = getattr(fn, "__name__", repr(fn))
        self._lock = threading.Lock()
        self._outcome: tuple | None = None
        self._pid = 0
        self._owner = os.getpid()
        self._deadline = time.monotonic() + self._budget
        if not FORK_AVAILABLE:  # pragma: no cover - non-POSIX platforms
            try:
                self._outcome = ("ok", fn(*args, **kwargs))
            except Exception as exc:  # noqa: BLE001 - re-raised by result()
                self._outcome = ("err", exc)
            return
        rfd, wfd = os.pipe()
        with warnings.catch_warnings():
            # Python >= 3.12 warns about fork() in a multi-threaded parent; the child here
            # only runs pure-Python SymPy code and exits, so the warning does not apply.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
            os.close(rfd)
            _child(wfd, fn, args, kwargs)
        os.close(wfd)
        self._pid, self._rfd = pid, rfd

    def result(self) -> Any:
        with self._lock:
            if self._outcome is None:
                self._outcome = self._collect()
        if self._outcome[0] == "ok":
            return self._outcome[1]
        raise self._outcome[1]

    def _collect(self) -> tuple:
        chunks: list[bytes] = []
        finished = False
        rfd, self._rfd = self._rfd, -1
        try:
            while True:
                # past the deadline, what the child already wrote is still read (a call
                # started ahead may be collected late, long after it finished)
                left = max(self._deadline - time.monotonic(), 0.0)
                if not select.select([rfd], [], [], left)[0]:
                    return ("err", AnalysisTimeout(
                        f"SymPy call {self._name!r} exceeded its time budget of "
                        f"{self._budget:g} s (raise timeout= or "
                        "symgdp.symbolic.budget.DEFAULT_TIMEOUT)"))
                chunk = os.read(rfd, 1 << 20)
                if not chunk:
                    finished = True
                    break
                chunks.append(chunk)
        finally:
            os.close(rfd)
            status = _reap(self._pid, kill=not finished)
        if not chunks:
            code = os.waitstatus_to_exitcode(status) if status is not None else None
            return ("err", RuntimeError(
                f"the child process running {self._name!r} died (exit code {code})"))
        result = pickle.loads(b"".join(chunks))
        _preload(result[2])
        return tuple(result[:2])

    def __del__(self) -> None:
        # only in the process that started the child (a forked copy of this handle in
        # another bounded child must not touch it)
        if self._outcome is None and self._pid and os.getpid() == self._owner \
                and getattr(self, "_rfd", -1) >= 0:
            try:
                os.close(self._rfd)
            except OSError:  # pragma: no cover
                pass
            self._rfd = -1
            _reap(self._pid, kill=True)


def start_bounded(fn: Callable[..., Any], *args: Any, timeout: float | None = None,
                  **kwargs: Any) -> Bounded:
    """Start ``fn(*args, **kwargs)`` in a forked child and return at once: the call runs
    while the caller does other work (e.g. a second symbolic preparation on the other
    core).  Its budget runs from now; :meth:`Bounded.result` collects it.

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> job = start_bounded(sympy.diff, sympy.sin(x), x, timeout=10)
        >>> job.result()
        cos(x)
    """
    return Bounded(fn, args, kwargs, timeout)


def _reap(pid: int, kill: bool) -> int | None:
    """Wait for the child (killed first when ``kill``); its wait status."""
    try:
        if kill:
            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):  # pragma: no cover - already reaped
        return None


# -- in-process budget for a thread other than the main one ----------------------------------
class _ThreadOutOfTime(BaseException):
    """Raised in a thread whose in-process budget expired (:func:`run_in_thread`); a
    BaseException so that ``except Exception`` clauses of the bounded code let it through."""


_ARMED: set[int] = set()  # threads with a running in-process budget (not nested)
_ARMED_LOCK = threading.Lock()
# after its budget, the exception is posted again every this many seconds until it is
# raised at a safe point (not in a finaliser, where it would be reported and lost)
_REFIRE = 0.05


def _async_raise(tid: int, exc: type[BaseException] | None) -> int:
    import ctypes

    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid),
                                                      ctypes.py_object(exc) if exc else None)


def _thread_budget_available() -> bool:
    return (threading.current_thread() is not threading.main_thread()
            and sys.implementation.name == "cpython"
            and threading.get_ident() not in _ARMED)


def run_in_thread(fn: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
    r"""``fn(*args)`` in this process under a wall-clock budget, from a thread other than
    the main one; elsewhere (the main thread, a budget already running in this thread, an
    interpreter other than CPython) the call runs in a forked child (:func:`run_bounded`).

    When the budget expires a watchdog raises an exception in the calling thread; it is
    delivered at the next Python bytecode, so this bounds Python-level work (SymPy,
    mpmath, loops over NumPy calls), not one long-running C call: use it for work that is
    known to return from C quickly (vectorised evaluation of a profile, say), and
    :func:`run_bounded` for open-ended symbolic calls.  The exception is never raised
    inside a finaliser or a gc callback (it would be lost there); it is posted again
    every 50 ms until it lands at a safe point.  An interrupted SymPy call may leave its
    cache inconsistent, so the cache is cleared after a timeout.

    Raises:
        AnalysisTimeout: the budget expired.

    Example:
        >>> import threading
        >>> out = []
        >>> t = threading.Thread(target=lambda: out.append(run_in_thread(sum, [1, 2],
        ...                                                               timeout=5)))
        >>> t.start(); t.join(); out
        [3]
    """
    seconds = resolve_timeout(timeout) * TIMEOUT_SCALE
    if not _thread_budget_available():
        return run_bounded(fn, *args, timeout=timeout)
    tid = threading.get_ident()
    lock = threading.Lock()
    state = {"armed": True}
    stop = threading.Event()

    def watchdog() -> None:
        if stop.wait(seconds):
            return
        while True:
            with lock:
                if not state["armed"]:
                    return
                frame = sys._current_frames().get(tid)
                if not _in_finaliser(frame):
                    _async_raise(tid, _ThreadOutOfTime)
            if stop.wait(_REFIRE):
                return

    with _ARMED_LOCK:
        _ARMED.add(tid)
    dog = threading.Thread(target=watchdog, name="symgdp-budget", daemon=True)
    timed_out = False
    try:
        try:
            dog.start()
            return fn(*args)
        except _ThreadOutOfTime:
            timed_out = True
        finally:
            # Disarm: no exception is posted after this, and one posted but not yet raised
            # is withdrawn; one raised while this runs is caught and the disarm repeated.
            while True:
                try:
                    with lock:
                        state["armed"] = False
                        _async_raise(tid, None)
                    stop.set()
                    break
                except _ThreadOutOfTime:
                    timed_out = True
                    continue
    finally:
        with _ARMED_LOCK:
            _ARMED.discard(tid)
    if timed_out:  # only reached when the budget interrupted the call
        cache = sys.modules.get("sympy.core.cache")
        if cache is not None:
            cache.clear_cache()
        raise AnalysisTimeout(f"{getattr(fn, '__name__', fn)!r} exceeded its time budget of "
                              f"{seconds:g} s")


class OutOfTime(BaseException):
    """The alarm; a BaseException so that SymPy's ``except Exception`` cannot swallow it."""


def _in_finaliser(frame: Any) -> bool:
    """Whether ``frame`` runs (at any depth) in a gc callback, ``__del__`` or weakref.py."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        code = frame.f_code
        if (code in codes or code.co_name in ("__del__", "_exitfunc")
                or code.co_filename == weakref.__file__):
            return True
        frame = frame.f_back
    return False


def with_budget(fn: Callable[[], Any], seconds: float | None) -> Any:
    """``fn()`` under a wall-clock budget (SIGALRM), where one can be set.

    In-process, for short calls whose objects must stay here (the safe parser's tree
    building, convexity proofs): the safety net for what the parser's size limits miss
    (:func:`run_bounded` forks instead).  Main thread of a POSIX process with no other interval
    timer only; elsewhere ``fn`` runs without a budget."""
    if (seconds is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0):
        return fn()
    state = {"armed": True}

    def on_alarm(signum: int, frame: Any) -> None:
        # not in a gc callback or finaliser (an exception there is lost); it re-fires
        if state["armed"] and not _in_finaliser(frame):
            raise OutOfTime

    previous = signal.signal(signal.SIGALRM, on_alarm)
    # an alarm lost in a callback no check sees is not reported: it re-fires in 50 ms
    previous_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: None if u.exc_type is OutOfTime else previous_hook(u)
    try:
        # Re-fire every 50 ms after the budget: an alarm that lands in a finaliser (where
        # an exception cannot propagate) is not lost.
        signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        return fn()
    finally:
        # An alarm may still fire while this runs; retry until the timer is off and the
        # previous handler is back, so nothing of ours outlives the call.
        while True:
            try:
                state["armed"] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                break
            except OutOfTime:
                continue
        sys.unraisablehook = previous_hook
