"""Tests of symgdp.symbolic.budget: SymPy calls in a forked child with a time budget."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import time
from pathlib import Path

import pytest
import sympy

from symgdp.errors import AnalysisTimeout
from symgdp.symbolic import budget as _bounded
from symgdp.symbolic.budget import resolve_timeout, run_bounded


@pytest.fixture(autouse=True)
def _unscaled_budgets(monkeypatch):
    # the suite scales every budget for a loaded machine (conftest); these tests are
    # about the budget itself and read it back
    monkeypatch.setattr(_bounded, "TIMEOUT_SCALE", 1.0)


def test_returns_the_sympy_result():
    x = sympy.Symbol("x")
    # reference: the classical limit sin(x)/x -> 1 and exact SymPy integers round-trip
    assert run_bounded(sympy.limit, sympy.sin(x) / x, x, 0, timeout=30) == 1
    sols = run_bounded(sympy.solve, x**2 - 2, x, timeout=30)
    assert set(sols) == {sympy.sqrt(2), -sympy.sqrt(2)}


def test_keyword_arguments_are_passed():
    x = sympy.Symbol("x")
    assert run_bounded(sympy.expand, (x + 1) ** 2, timeout=30, deep=False) == x**2 + 2 * x + 1


def test_timeout_kills_the_child_quickly():
    t0 = time.monotonic()
    with pytest.raises(AnalysisTimeout, match="0.3 s"):
        run_bounded(time.sleep, 30, timeout=0.3)
    assert time.monotonic() - t0 < 10
    assert multiprocessing.active_children() == []


def test_default_timeout_is_user_adjustable(monkeypatch):
    monkeypatch.setattr(_bounded, "DEFAULT_TIMEOUT", 0.2)
    assert resolve_timeout(None) == 0.2
    with pytest.raises(AnalysisTimeout):
        run_bounded(time.sleep, 30)


def test_exceptions_in_the_child_are_reraised():
    with pytest.raises(ValueError, match="invalid literal"):
        run_bounded(int, "not a number", timeout=30)


def test_unpicklable_result_is_reported():
    with pytest.raises(RuntimeError, match="unpicklable"):
        run_bounded(lambda: (lambda: 1), timeout=30)


def test_dying_child_is_reported():
    with pytest.raises(RuntimeError, match="died"):
        run_bounded(os._exit, 3, timeout=30)


def test_a_crashing_child_prints_no_fatal_error_dump():
    """A child killed by a signal (SIGFPE inside a C library, seen in SymPy's gcd) is
    reported by the parent; with faulthandler on (as under pytest) it used to dump a
    "Fatal Python error" and every thread's stack on stderr as well."""
    import subprocess

    code = ("import os, signal\n"
            "from symgdp.symbolic.budget import run_bounded\n"
            "try:\n"
            "    run_bounded(lambda: os.kill(os.getpid(), signal.SIGFPE), timeout=30)\n"
            "except RuntimeError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                         capture_output=True, text=True, timeout=120)
    assert "died" in out.stdout
    assert "Fatal Python error" not in out.stderr, out.stderr


@pytest.mark.parametrize("bad", [0, -1, "soon", float("nan")])
def test_bad_timeouts_are_refused(bad):
    with pytest.raises(ValueError, match="timeout"):
        resolve_timeout(bad)


def _child_pids() -> set[int]:
    """Children of this process (Linux /proc), including exited but unreaped ones."""
    pids: set[int] = set()
    for path in Path("/proc/self/task").glob("*/children"):
        pids |= {int(p) for p in path.read_text().split()}
    return pids


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_children_are_reaped_after_success_timeout_and_error():
    before = _child_pids()
    run_bounded(int, "7", timeout=30)
    with pytest.raises(AnalysisTimeout):
        run_bounded(time.sleep, 30, timeout=0.2)
    with pytest.raises(ValueError):
        run_bounded(int, "x", timeout=30)
    assert _child_pids() <= before


def test_modules_a_child_imported_are_imported_in_the_parent():
    """The next child then inherits them (e.g. sympy.physics.units, which solve imports)."""
    candidates = ["sympy.physics.optics", "sympy.crypto.crypto", "sympy.codegen.fnodes",
                  "sympy.combinatorics.galois"]
    fresh = [m for m in candidates if m not in sys.modules]
    if not fresh:
        pytest.skip("every candidate module is already imported")
    assert run_bounded(_import_and_name, fresh[0], timeout=60) == fresh[0]
    assert fresh[0] in sys.modules


def _import_and_name(module: str) -> str:
    return importlib.import_module(module).__name__


def test_started_call_runs_while_the_caller_works():
    # reference: the same call through run_bounded (and SymPy in-process)
    x = sympy.Symbol("x")
    job = _bounded.start_bounded(sympy.diff, sympy.sin(x) ** 2, x, timeout=30)
    here = sympy.diff(sympy.sin(x) ** 2, x)
    assert job.result() == here == run_bounded(sympy.diff, sympy.sin(x) ** 2, x, timeout=30)
    assert job.result() == here  # collected once, kept


def test_started_call_budget_counts_from_the_start():
    job = _bounded.start_bounded(time.sleep, 30, timeout=0.3)
    time.sleep(0.4)
    t0 = time.monotonic()
    with pytest.raises(AnalysisTimeout, match="0.3 s"):
        job.result()
    # result() does not wait for the 30 s sleep (generous: a loaded machine is slow)
    assert time.monotonic() - t0 < 25
    with pytest.raises(AnalysisTimeout):  # the outcome is kept
        job.result()


def test_started_call_reraises_and_dropped_handle_reaps_its_child():
    job = _bounded.start_bounded(int, "not a number", timeout=30)
    with pytest.raises(ValueError, match="invalid literal"):
        job.result()
    job = _bounded.start_bounded(time.sleep, 30, timeout=60)
    pid = job._pid
    del job  # never collected: the child is killed and reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_started_call_collected_late_keeps_its_result():
    # a child that finished within its budget is not a timeout when collected after it
    # (reference: SymPy's derivative in this process)
    x = sympy.Symbol("x")
    # (a budget a loaded machine cannot miss for one derivative; the test then waits it out)
    job = _bounded.start_bounded(sympy.diff, sympy.sin(x), x, timeout=3)
    import select

    assert select.select([job._rfd], [], [], 60)[0]  # the child has written its result
    time.sleep(max(job._deadline - time.monotonic(), 0.0) + 0.1)  # the budget is over
    assert job.result() == sympy.cos(x)


def test_timeout_scale_multiplies_every_budget(monkeypatch):
    # a loaded machine may scale the budgets (the suite does): the budget enforced and
    # reported is the given one times the scale
    monkeypatch.setattr(_bounded, "TIMEOUT_SCALE", 2.0)
    with pytest.raises(AnalysisTimeout, match="0.4 s"):
        run_bounded(time.sleep, 60, timeout=0.2)
    assert resolve_timeout(0.2) == 0.2  # the scale applies where the budget is enforced


def test_tail_budget_is_scaled_too(monkeypatch):
    # the tail analysis shares one deadline between its bounded calls: that deadline is
    # scaled like every bounded call's, and what it hands on is unscaled (reference: the
    # arithmetic of the definition, bracketed by clock readings before and after)
    from symgdp.tail import rules as tail_rules

    monkeypatch.setattr(_bounded, "TIMEOUT_SCALE", 4.0)
    t0 = time.monotonic()
    b = tail_rules._Budget(2.5)
    t1 = time.monotonic()
    assert b.total == 2.5 and t0 + 10.0 <= b.end <= t1 + 10.0
    t2 = time.monotonic()
    left = b.left()
    t3 = time.monotonic()
    assert (b.end - t3) / 4.0 <= left <= (b.end - t2) / 4.0  # scaled back by a bounded call
