"""The in-process budget off the main thread (symgdp.symbolic.budget.run_in_thread): no fork in a
worker thread (Dask runs its tasks in one), a timeout that interrupts the thread, and
nothing left armed after the call."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
import sympy

from symgdp import Profile, eps
from symgdp.errors import AnalysisTimeout
from symgdp.symbolic import budget as _bounded
from symgdp.symbolic.budget import run_in_thread


@pytest.fixture(autouse=True)
def _unscaled_budgets(monkeypatch):
    # the suite scales every budget for a loaded machine (conftest); these tests are
    # about the budget itself and read it back
    monkeypatch.setattr(_bounded, "TIMEOUT_SCALE", 1.0)


def in_thread(fn, *args):
    """``fn(*args)`` in a new thread: its result, or the exception it raised."""
    out: dict = {}

    def target():
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join(120)
    assert not t.is_alive(), "the bounded call did not return"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def no_fork(monkeypatch):
    def forbidden():
        raise AssertionError("forked in a worker thread")

    monkeypatch.setattr(os, "fork", forbidden)


def test_value_in_a_thread_without_fork(no_fork):
    # reference: the sum of 1..100 is 5050 (Gauss)
    assert in_thread(lambda: run_in_thread(sum, range(101), timeout=30)) == 5050


def test_exception_of_the_call_is_reraised(no_fork):
    with pytest.raises(ValueError, match="invalid literal"):
        in_thread(lambda: run_in_thread(int, "x", timeout=30))


def _spin(limit: float) -> int:
    """Pure-Python work that would run ``limit`` seconds (the budget stops it first)."""
    n, end = 0, time.monotonic() + limit
    while time.monotonic() < end:
        n += 1
    return n


def test_budget_interrupts_the_thread(no_fork):
    t0 = time.monotonic()
    with pytest.raises(AnalysisTimeout, match="0.2 s"):
        in_thread(lambda: run_in_thread(_spin, 60.0, timeout=0.2))
    assert time.monotonic() - t0 < 50  # far below the 60 s the loop would take


def test_budget_survives_a_broad_except(no_fork):
    # code that catches everything once (as some libraries do) is interrupted again
    def stubborn():
        try:
            return _spin(60.0)
        except BaseException:  # noqa: BLE001 - what the test simulates
            return _spin(60.0)

    with pytest.raises(AnalysisTimeout):
        in_thread(lambda: run_in_thread(stubborn, timeout=0.2))


def test_nothing_stays_armed_after_many_calls(no_fork):
    # calls that finish right around their budget: whatever the race, each one either
    # returns or times out, and code after them runs undisturbed
    def many():
        outcomes = []
        for i in range(40):
            try:
                outcomes.append(run_in_thread(_spin, 0.01 * (i % 3), timeout=0.01))
            except AnalysisTimeout:
                outcomes.append(None)
        return outcomes, _spin(0.3) > 0

    outcomes, after = in_thread(many)
    assert len(outcomes) == 40 and after
    assert not _bounded._ARMED


def test_nested_budget_falls_back_to_a_child():
    # a budget inside a budget in the same thread runs in a forked child (reference: the
    # child's pid differs from this process's)
    pid = in_thread(lambda: run_in_thread(lambda: run_in_thread(os.getpid, timeout=30),
                                          timeout=30))
    assert pid != os.getpid()


def test_main_thread_uses_a_child():
    # in the main thread the SIGALRM budget of the callers applies; this function forks
    assert run_in_thread(os.getpid, timeout=30) != os.getpid()


def test_validation_in_a_worker_thread_does_not_fork(no_fork):
    # a profile whose tiny values trigger the log-space re-check of validation (the step
    # that forked in every Dask task); reference: exp(-eps^2) is a valid, decreasing
    # profile, and its log delta at 30 is -900 exactly
    p = Profile(sympy.exp(-(eps**2)))
    in_thread(p.validate)
    assert in_thread(lambda: float(p.log_delta(np.array([30.0]))[0])) == -900.0


def test_validation_in_a_thread_still_rejects(no_fork):
    # reference: d/deps log(exp(-eps^2) (1 + eps^40)) = -2 eps + 40 eps^39 / (1 + eps^40)
    # > 0 at eps = 2; every value is below 1e-50, so only the log-space re-check (the
    # step that runs under the thread budget) sees the rise
    from symgdp.errors import ProfileError

    p = Profile(sympy.exp(-(eps**2)) * (1 + eps**40) / 1e70)
    with pytest.raises(ProfileError, match="increasing"):
        in_thread(p.validate)


def test_a_sweep_point_in_a_worker_thread_does_not_fork(monkeypatch):
    # a Dask worker runs sweep points in a thread; after the first point of an expression
    # (its symbolic preparation, bounded in a child, is cached per expression structure)
    # a point forks no child.  Reference for the record: the same point in the main thread.
    from symgdp import mechanisms
    from symgdp.planning.sweep import _run_point, _tasks

    opts = {"eps_h": 100.0, "tol": 1e-6, "refine": True, "method": "auto", "timeout": None,
            "identify": False}
    points = [{"A": 1.0, "B": 1.0, "sigma": s} for s in (0.7, 1.3, 2.9)]
    tasks, _ = _tasks(mechanisms.sgd_family, points, "measure", opts)
    first = _run_point(tasks[0])  # main thread: prepares the expression
    assert first["error"] is None
    reference = _run_point(tasks[1])

    def forbidden():
        raise AssertionError("forked in a worker thread")

    monkeypatch.setattr(os, "fork", forbidden)
    rec = in_thread(_run_point, tasks[1])
    assert rec["error"] is None
    assert {k: v for k, v in rec.items() if k != "seconds"} == \
        {k: v for k, v in reference.items() if k != "seconds"}
    assert in_thread(_run_point, tasks[2])["error"] is None
