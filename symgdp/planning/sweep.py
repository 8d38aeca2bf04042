r"""Sweeping a parameter grid: measure, identify or calibrate at every point, on any executor.

:func:`sweep` evaluates a profile (or a function that builds one) at every point of a grid
— a mapping of parameter names to values (their Cartesian product) or an explicit list of
points — and returns one record per point.  The work runs on any
:class:`concurrent.futures.Executor`: a process pool by default (the symbolic and numeric
work is CPU-bound, so threads do not help), or a cluster's executor such as Dask's
``distributed.Client.get_executor()``.  symgdp does no scheduling of its own.

Every point is an independent, picklable piece of work that carries the SymPy expression
as a *string* and the parameter values as plain numbers; the worker re-reads the string
with the safe parser (:mod:`symgdp.symbolic.parsing`, no ``eval``, no pickled functions) and
measures.  The parent checks once that the string reads back to the same expression.
A profile with a numeric source and no text form (generalized Gaussian noise with a
symbolic shape, say, bound at each point) is swept in this process instead, serially
(not on threads either: python-flint's working precision is global); an executor refuses
it by name.

With ``out=`` every record is appended to a JSON-lines file as soon as its point (on an
executor: its batch, below) finishes -- one JSON object per line: the point,
``mu_lower``, ``mu_upper``, ``certified``, timing and ``error`` -- so an interrupted sweep
resumes with ``resume=True`` where it stopped: finished points are read back, not
recomputed.  A point that fails (a parameter value outside the mechanism's range, a
profile that is not a privacy profile there) is a record with an ``error`` message, not a
lost sweep.

On an executor the points travel in batches: one task computes several points (about four
tasks per worker, at most 32 points each, or ``chunksize=``), so that the executor's cost
per task (Dask's scheduling and messages, a pool's round trip) is paid once per batch, not
once per point.  A batch's records arrive together, in grid order, when the batch
finishes; every point keeps its own record and its own ``error``.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, as_completed
from dataclasses import dataclass
from typing import Any

import sympy

from symgdp.contracts import MeasureMethod
from symgdp.errors import DomainError, SymgdpError
from symgdp.numerics.decimals import json_number
from symgdp.profile import Profile

__all__ = ["SweepTable", "sweep", "grid_points", "TASKS"]

#: what a sweep computes at each point
TASKS = ("measure", "identify", "calibrate")
# Below this many points the automatic progress bar stays off.
_PROGRESS_MIN = 20
# Batches of points per task on an executor: about this many tasks per worker (enough for
# the workers to even out points of unequal cost) ...
_TASKS_PER_WORKER = 4
# ... and at most this many points in one task, so that an interrupted sweep loses little
# and the progress bar moves (on a 2-worker LocalCluster a task's own cost is a few ms,
# a 32-point batch of the refined SGD family about 1.6 s).
_MAX_CHUNK = 32


class SweepTable(list):
    """The records of a sweep, in grid order (a list of dicts).

    Each record has ``index``, ``point`` (the parameter values), ``error`` (``None`` or
    ``"ErrorClass: message"``), ``seconds`` and the task's fields: ``mu_lower``,
    ``mu_upper``, ``certified``, ``covers_tail``, ``eps_h`` (and ``mu_tail`` with
    ``identify=True``) for ``"measure"``;
    ``is_gdp``, ``mu_tail``, ``limit`` for ``"identify"``; ``value``, ``bracket`` and the
    measured bracket at ``value`` for ``"calibrate"``.
    """

    @property
    def errors(self) -> list[dict[str, Any]]:
        """The records whose point failed."""
        return [r for r in self if r.get("error")]

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one column per grid parameter and per field."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is installed in CI
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        rows = []
        for r in self:
            row = dict(r["point"])
            row.update({k: v for k, v in r.items() if k not in ("point", "sweep")})
            rows.append(row)
        return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# the picklable task


@dataclass(frozen=True)
class _Task:
    """One grid point's work; plain data only (strings and numbers)."""

    index: int
    point: tuple[tuple[str, Any], ...]  # the grid values, as given (JSON numbers)
    expr: str  # the profile, as text for symgdp.symbolic.parsing
    var: tuple[str, tuple[tuple[str, bool], ...]]
    symbols: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]  # name, assumptions
    values: tuple[tuple[str, Any], ...]  # every parameter value (numbers or strings)
    task: str
    options: tuple[tuple[str, Any], ...]
    fingerprint: str


# Profiles with a numeric source (noise with a symbolic shape, a Student-t with symbolic
# scale, ...) have no text form: their tasks name them here, and they run in this process.
_LOCAL_TAG = "local:"
_LOCAL: dict[str, Profile] = {}


def _local(p: Profile) -> tuple[str, tuple, tuple, str]:
    """Register a profile that has no text form: (task text, var, symbols, a description
    stable across runs for the fingerprint)."""
    key = f"{_LOCAL_TAG}{id(p)}"
    _LOCAL[key] = p
    syms = tuple(sorted((v.name, tuple(sorted(v.assumptions0.items())))
                        for v in p.expr.free_symbols if v != p.var))
    var = (p.var.name, tuple(sorted(p.var.assumptions0.items())))
    stable = f"{sympy.sstr(p.expr)}|{p.name}|{p.meta.get('derivation', '')}"
    return key, var, syms, stable


def _symbol(name: str, assumptions: tuple[tuple[str, bool], ...]) -> sympy.Symbol:
    return sympy.Symbol(name, **dict(assumptions))


def _to_value(v: Any) -> Any:
    if isinstance(v, str):
        from symgdp.symbolic.parsing import parse_expression

        return parse_expression(v)
    return v


_PARSED: dict[tuple, Profile] = {}


def _profile_of(t: _Task) -> Profile:
    from symgdp.symbolic.parsing import parse_expression

    if t.expr.startswith(_LOCAL_TAG):
        local = _LOCAL.get(t.expr)
        if local is None:
            raise DomainError("a profile with a numeric source (no text form) is swept in the "
                              "process that built it: executor='serial' or a thread pool")
        return local.replace(values={k: _to_value(v) for k, v in t.values})
    key = (t.expr, t.var, t.symbols)
    base = _PARSED.get(key)
    if base is None:
        var = _symbol(*t.var)
        table = {n: _symbol(n, a) for n, a in t.symbols}
        table[var.name] = var
        expr = parse_expression(t.expr, symbols=table)
        base = Profile(expr, var=var)
        if len(_PARSED) > 64:
            _PARSED.clear()
        _PARSED[key] = base
    return base.replace(values={k: _to_value(v) for k, v in t.values})


_LOCK = threading.Lock()
_ACTIVE = 0
_WAS_DAEMON = False


@contextlib.contextmanager
def _children_allowed() -> Iterator[None]:
    """Let a daemonic worker (Dask's, for one) fork the short-lived children in which
    symgdp bounds its SymPy calls (symgdp.symbolic.budget); without them the symbolic steps
    would fall back to numeric ones and records would depend on the executor.  The
    children are themselves daemonic and killed when their budget expires."""
    global _ACTIVE, _WAS_DAEMON
    proc = multiprocessing.current_process()
    with _LOCK:  # workers with several threads run several tasks at once
        if _ACTIVE == 0:
            _WAS_DAEMON = proc.daemon
            if _WAS_DAEMON:
                proc.daemon = False
        _ACTIVE += 1
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE -= 1
            if _ACTIVE == 0 and _WAS_DAEMON:
                proc.daemon = True


def _run_point(t: _Task) -> dict[str, Any]:
    """Compute one grid point (in a worker); every failure becomes the record's ``error``."""
    with _children_allowed():
        return _run_task(t)


def _run_chunk(chunk: Sequence[_Task]) -> list[dict[str, Any]]:
    """Compute a batch of grid points in one task (in a worker), one record per point in
    the batch's order; a failing point is its own record's ``error``, as in
    :func:`_run_point`."""
    with _children_allowed():
        return [_run_task(t) for t in chunk]


def _run_task(t: _Task) -> dict[str, Any]:
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"index": t.index, "point": dict(t.point), "sweep": t.fingerprint}
    opts = dict(t.options)
    try:
        p = _profile_of(t)
        if t.task == "measure":
            m = p.measure(**opts)
            rec.update(mu_lower=json_number(m.lower), mu_upper=json_number(m.upper),
                       certified=m.certified, covers_tail=m.covers_tail, eps_h=m.eps_h)
            if opts.get("identify"):
                rec["mu_tail"] = json_number(m.mu_tail)
        elif t.task == "identify":
            ident = p.identify(**opts)
            rec.update(is_gdp=ident.is_gdp, mu_tail=json_number(ident.mu_tail),
                       limit=None if ident.limit is None else str(ident.limit),
                       method=ident.method)
        else:
            from symgdp.planning.calibrate import calibrate

            c = calibrate(p, **opts)
            m = c.measurement
            assert m is not None  # a profile (not an equation) is calibrated by measuring
            rec.update(value=json_number(c.value), bracket=[json_number(b) for b in c.bracket],
                       direction=c.direction, mu_lower=json_number(m.lower),
                       mu_upper=json_number(m.upper), certified=m.certified,
                       covers_tail=m.covers_tail, eps_h=m.eps_h)
        rec["error"] = None
    except Exception as exc:  # noqa: BLE001 - a failing point is a record, not a lost sweep
        rec["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    rec["seconds"] = time.perf_counter() - t0
    return rec


# ---------------------------------------------------------------------------------------
# grids and tasks


def grid_points(grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]]
                ) -> list[dict[str, Any]]:
    """The points of a grid: the Cartesian product of a mapping name → values (the last
    name varies fastest), or an explicit sequence of points (mappings), kept in order.

    Example:
        >>> grid_points({"sigma": [1, 2], "q": [0.1]})
        [{'sigma': 1, 'q': 0.1}, {'sigma': 2, 'q': 0.1}]
    """
    if isinstance(grid, Mapping):
        names = list(grid)
        if not names:
            raise DomainError("the grid has no parameters")
        columns = []
        for n in names:
            vals = grid[n]
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
                vals = [vals]
            vals = list(vals)
            if not vals:
                raise DomainError(f"the grid gives no values for {n!r}")
            columns.append([_plain(n, v) for v in vals])
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*columns)]
    points = []
    for i, pt in enumerate(grid):
        if not isinstance(pt, Mapping):
            raise DomainError(f"grid point {i} must be a mapping name -> value, got {pt!r}")
        points.append({str(k): _plain(str(k), v) for k, v in pt.items()})
    if not points:
        raise DomainError("the grid has no points")
    return points


def _plain(name: str, v: Any) -> Any:
    """A grid value as JSON data: int, float, or the text of a SymPy number."""
    import numpy as np

    if isinstance(v, bool):
        raise DomainError(f"grid value of {name!r} must be a number, got {v!r}")
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, sympy.Basic) and v.is_number:
        return str(v)
    raise DomainError(f"grid value of {name!r} must be a number, got {v!r}")


def _fingerprint(kind: str, source: str, task: str, options: dict[str, Any]) -> str:
    text = json.dumps([kind, source, task, sorted((k, repr(v)) for k, v in options.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _serialise(profile: Profile) -> tuple[str, tuple, tuple]:
    """The profile's expression as parser text, checked to read back identically."""
    from symgdp.symbolic.parsing import parse_expression

    expr = profile.expr
    syms = tuple(sorted((s.name, tuple(sorted(s.assumptions0.items())))
                        for s in expr.free_symbols if s != profile.var))
    var = (profile.var.name, tuple(sorted(profile.var.assumptions0.items())))
    text = sympy.sstr(expr, full_prec=True)
    table = {n: _symbol(n, a) for n, a in syms}
    table[profile.var.name] = profile.var
    try:
        back = parse_expression(text, symbols=table)
    except SymgdpError as exc:
        raise DomainError(f"the profile {expr} cannot be sent to workers as text: {exc}") \
            from exc
    if back != expr:
        raise DomainError(f"the profile {expr} does not read back from its text {text!r}; "
                          "it cannot be swept")
    return text, var, syms


def _value_text(v: Any) -> Any:
    if isinstance(v, (int, float)):
        return v
    v = sympy.sympify(v)
    if v.is_Integer:
        return int(v)
    if v.is_Float:
        return float(v) if v._prec <= 53 else sympy.sstr(v, full_prec=True)
    return sympy.sstr(v, full_prec=True)


def _tasks(source: Any, points: list[dict[str, Any]], task: str, options: dict[str, Any]
           ) -> tuple[list[_Task | dict[str, Any]], str]:
    """One task per point (or a ready error record when the profile cannot be built)."""
    if isinstance(source, str):
        source = Profile.parse(source)
    out: list[_Task | dict[str, Any]] = []
    if isinstance(source, Profile):
        try:
            text, var, syms = _serialise(source)
            stable = text
        except DomainError:
            if source.source is None:
                raise
            text, var, syms, stable = _local(source)
        names = {n for n, _ in syms}
        for pt in points:
            unknown = set(pt) - names
            if unknown:
                raise DomainError(f"grid parameter(s) {', '.join(sorted(unknown))} not in the "
                                  f"profile {source.expr} (its parameters: "
                                  f"{', '.join(sorted(names)) or 'none'})")
        if source.meta.get("segments"):
            raise DomainError("a refined profile's breakpoints were computed for its own "
                              "parameter values; sweep the naive profile (every point is "
                              "refined for its values)")
        base = {s.name: _value_text(v) for s, v in source.values.items()}
        fp = _fingerprint("profile", stable + repr(sorted(base.items())), task, options)
        for i, pt in enumerate(points):
            vals = {**base, **pt}
            out.append(_Task(i, tuple(pt.items()), text, var, syms,
                             tuple(sorted(vals.items())), task,
                             tuple(sorted(options.items())), fp))
        return out, fp
    if not callable(source):
        raise DomainError(f"sweep needs a Profile, a profile string or a function returning "
                          f"a Profile, got {source!r}")
    name = getattr(source, "__qualname__", repr(source))
    fp = _fingerprint("factory", f"{getattr(source, '__module__', '')}.{name}", task, options)
    for i, pt in enumerate(points):
        try:
            p = source(**{k: _to_value(v) for k, v in pt.items()})
            if not isinstance(p, Profile):
                raise DomainError(f"the factory returned {type(p).__name__}, not a Profile")
            try:
                text, var, syms = _serialise(p)
            except DomainError:
                if p.source is None:
                    raise
                text, var, syms, _ = _local(p)
            vals = {s.name: _value_text(v) for s, v in p.values.items()}
            out.append(_Task(i, tuple(pt.items()), text, var, syms, tuple(sorted(vals.items())),
                             task, tuple(sorted(options.items())), fp))
        except Exception as exc:  # noqa: BLE001 - a bad point is a record
            out.append({"index": i, "point": dict(pt), "sweep": fp,
                        "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}",
                        "seconds": 0.0})
    return out, fp


# ---------------------------------------------------------------------------------------
# the results file


def _key(point: Mapping[str, Any]) -> str:
    return json.dumps(point, sort_keys=True)


def _read_finished(path: str, fingerprint: str) -> dict[str, dict[str, Any]]:
    """Records already in ``path``; a torn last line (an interrupted write) is cut off."""
    done: dict[str, dict[str, Any]] = {}
    with open(path, "rb+") as f:
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            f.truncate(end)  # the last record was cut short by the interruption
        lines = data[:end].splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise DomainError(f"{path}:{n} is not a JSON record; not a sweep results file") \
                from None
        if not isinstance(rec, dict) or "point" not in rec:
            raise DomainError(f"{path}:{n} is not a sweep record")
        if rec.get("sweep") != fingerprint:
            raise DomainError(f"{path} holds results of a different sweep (another profile, "
                              "task or settings); write to another file")
        done[_key(rec["point"])] = rec
    return done


def _write(f: Any, rec: dict[str, Any]) -> None:
    f.write(json.dumps(rec, allow_nan=False) + "\n")
    f.flush()


# ---------------------------------------------------------------------------------------


def _progress(total: int, progress: bool | None) -> Any:
    show = progress if progress is not None else (total >= _PROGRESS_MIN
                                                  and sys.stderr.isatty())
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("the progress bar needs tqdm: pip install tqdm") from None
    return tqdm(total=total, unit="point", desc="sweep", file=sys.stderr)


def sweep(
    profile_or_factory: Profile | str | Callable[..., Profile],
    grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]],
    *,
    executor: Executor | str | None = None,
    workers: int | None = None,
    chunksize: int | None = None,
    out: str | os.PathLike[str] | None = None,
    resume: bool = False,
    task: str = "measure",
    eps_h: float = 100.0,
    tol: float = 1e-6,
    refine: bool = True,
    certify: bool | None = None,
    method: MeasureMethod = "auto",
    timeout: float | None = None,
    calibrate: Mapping[str, Any] | None = None,
    identify: bool = False,
    progress: bool | None = None,
) -> SweepTable:
    r"""Measure (or identify, or calibrate) a profile at every point of a grid.

    Args:
        profile_or_factory: a :class:`~symgdp.profile.Profile` (or a profile string) whose
            parameters are set from each point, or a function ``f(**point) -> Profile``
            (e.g. :func:`symgdp.mechanisms.sgd_family`), called here, in this process.
        grid: a mapping name → values (Cartesian product) or a sequence of points.
        executor: a :class:`concurrent.futures.Executor` to run the points on (not shut
            down here), or ``"serial"`` to run them in this process; by default a
            :class:`~concurrent.futures.ProcessPoolExecutor` with ``workers`` processes.
        workers: processes of the default pool (default ``os.cpu_count()``; 1 = serial);
            with another executor, its number of workers, which sizes the batches (default:
            read from the executor, else ``os.cpu_count()``).
        chunksize: grid points per task on an executor (default: about four tasks per
            worker, at most 32 points each; 1 = one task per point).  Records are written
            to ``out`` and counted by the progress bar as their batch finishes.
        out: JSON-lines file that receives each record as its point (or batch) finishes.
        resume: read the finished points from ``out`` and compute only the others.
            Without it an existing non-empty ``out`` is an error (nothing is overwritten).
        task: ``"measure"`` (default), ``"identify"`` or ``"calibrate"``.
        eps_h, tol, refine, certify, method, timeout: passed to
            :func:`~symgdp.measurement.measure.measure` (and to
            :func:`~symgdp.planning.calibrate.calibrate`).
        calibrate: for ``task="calibrate"``, the arguments of
            :func:`~symgdp.planning.calibrate.calibrate` (``parameter``, ``target_mu`` or
            ``target``, ``bracket``, ...).
        identify: for ``task="measure"``, also derive the tail limit at every point and
            record it as ``mu_tail`` (a symbolic step per point, often slower than the
            measurement itself; off by default, when ``mu_tail`` is not computed at all).
        progress: show a tqdm progress bar (default: for 20 points or more on a terminal).

    Returns:
        A :class:`SweepTable`, one record per point, in grid order.

    Example:
        >>> from symgdp import mechanisms
        >>> t = sweep(mechanisms.laplace, {"eps0": [0.5, 1.0, -1.0]}, executor="serial",
        ...           eps_h=10, tol=1e-6)
        >>> [r["mu_upper"] > r["mu_lower"] for r in t[:2]], t[2]["error"][:11]
        ([True, True], 'DomainError')
    """
    if task not in TASKS:
        raise DomainError(f"task must be one of {TASKS}, got {task!r}")
    options: dict[str, Any]
    if task == "identify":
        options = {"timeout": timeout}
    else:
        options = {"eps_h": eps_h, "tol": tol, "refine": refine, "method": method,
                   "timeout": timeout}
        if certify is not None:
            options["certify"] = certify
        if task == "measure":
            options["identify"] = bool(identify)
        else:
            if not calibrate or "parameter" not in calibrate:
                raise DomainError("task='calibrate' needs calibrate={'parameter': ..., "
                                  "'target_mu': ...}")
            options.update({k: (tuple(v) if isinstance(v, list) else v)
                            for k, v in calibrate.items()})
    points = grid_points(grid)
    seen_keys: set[str] = set()
    for pt in points:
        k = _key(pt)
        if k in seen_keys:
            raise DomainError(f"the grid repeats the point {pt}")
        seen_keys.add(k)
    tasks, fp = _tasks(profile_or_factory, points, task, options)

    results: dict[int, dict[str, Any]] = {}
    done: dict[str, dict[str, Any]] = {}
    path = os.fspath(out) if out is not None else None
    if path is not None and os.path.exists(path) and os.path.getsize(path) > 0:
        if not resume:
            raise DomainError(f"{path} already exists; pass resume=True to continue that "
                              "sweep, or choose another file")
        try:
            done = _read_finished(path, fp)
        except OSError as exc:
            raise DomainError(f"cannot read the results file {path!r}: "
                              f"{exc.strerror or exc}") from None
    todo: list[_Task] = []
    try:
        fh = open(path, "a", encoding="utf-8") if path is not None else None  # noqa: SIM115
    except OSError as exc:
        raise DomainError(f"cannot write the results file {path!r}: "
                          f"{exc.strerror or exc}") from None
    try:
        for t in tasks:
            i = t["index"] if isinstance(t, dict) else t.index
            pt = t["point"] if isinstance(t, dict) else dict(t.point)
            prev = done.get(_key(pt))
            if prev is not None:
                results[i] = {**prev, "index": i}
            elif isinstance(t, dict):
                results[i] = t
                if fh is not None:
                    _write(fh, t)
            else:
                todo.append(t)
        bar = _progress(len(todo), progress)
        try:
            for rec in _run(todo, executor, workers, chunksize):
                results[rec["index"]] = rec
                if fh is not None:
                    _write(fh, rec)
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
    finally:
        if fh is not None:
            fh.close()
        for t in tasks:
            if not isinstance(t, dict):
                _LOCAL.pop(t.expr, None)
    return SweepTable(results[i] for i in range(len(points)))


def _run(todo: list[_Task], executor: Executor | str | None, workers: int | None,
         chunksize: int | None = None) -> Iterable[dict[str, Any]]:
    """Records of the tasks: in completion order of their batches, each batch's records
    in grid order."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise DomainError(f"workers must be a positive integer, got {workers!r}")
    if chunksize is not None and (isinstance(chunksize, bool)
                                  or not isinstance(chunksize, int) or chunksize < 1):
        raise DomainError(f"chunksize must be a positive integer, got {chunksize!r}")
    if not todo:
        return
    local = any(t.expr.startswith(_LOCAL_TAG) for t in todo)
    if local and executor is not None and executor != "serial":
        # not on threads either: python-flint's working precision is one global setting,
        # which two threads in ball arithmetic at once would leave changed
        raise DomainError(f"a profile with a numeric source (no text form) cannot be sent to "
                          f"the workers of {type(executor).__name__}: it is swept in this "
                          "process, executor='serial' (the default for it)")
    if executor == "serial" or (executor is None and (workers == 1 or len(todo) == 1
                                                      or local)):
        for t in todo:
            yield _run_point(t)
        return
    if isinstance(executor, str):
        raise DomainError(f"executor must be an Executor or 'serial', got {executor!r}")
    own = executor is None
    width = (workers or os.cpu_count() or 1) if executor is None else _width(executor, workers)
    size = chunksize or _chunk_size(len(todo), width)
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    if own:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(max_workers=min(width, len(chunks)))
    futures: list[Future] = []
    try:
        futures = [executor.submit(_run_chunk, c) for c in chunks]  # type: ignore[union-attr]
        seen: set[Future] = set()
        for fut in as_completed(futures):
            if fut.exception() is not None:
                # a lost task (a dead worker, say): first the batches already finished,
                # so that a resumed sweep does not compute them again
                for other in futures:
                    if other not in seen and other.done() and not other.cancelled() \
                            and other.exception() is None:
                        seen.add(other)
                        yield from other.result()
                fut.result()
            seen.add(fut)
            yield from fut.result()
    finally:
        for fut in futures:
            fut.cancel()
        if own:
            executor.shutdown(wait=True, cancel_futures=True)  # type: ignore[union-attr]


def _chunk_size(points: int, width: int) -> int:
    """Points per task: about :data:`_TASKS_PER_WORKER` tasks per worker, at most
    :data:`_MAX_CHUNK` points each.

    Example:
        >>> _chunk_size(1000, 2), _chunk_size(40, 2), _chunk_size(3, 2)
        (32, 5, 1)
    """
    return max(1, min(_MAX_CHUNK, -(-points // (_TASKS_PER_WORKER * max(1, width)))))


def _width(executor: Executor, workers: int | None) -> int:
    """How many tasks ``executor`` runs at once: ``workers`` when given, else what the
    executor says (a ``concurrent.futures`` pool's workers, a Dask client's worker
    threads), else ``os.cpu_count()``."""
    if workers is not None:
        return workers
    n = getattr(executor, "_max_workers", None)  # concurrent.futures pools
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    if client is not None:
        try:
            n = sum(client.nthreads().values())
        except Exception:  # noqa: BLE001, S110 - the width only sizes the batches
            n = 0
        if n > 0:
            return n
    return os.cpu_count() or 1
