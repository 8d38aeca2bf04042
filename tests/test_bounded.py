"""Tests of symgdp._bounded: SymPy calls in a forked child with a time budget."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest
import sympy

from symgdp import _bounded
from symgdp._bounded import resolve_timeout, run_bounded
from symgdp.errors import AnalysisTimeout


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


@pytest.mark.parametrize("bad", [0, -1, "soon", float("nan")])
def test_bad_timeouts_are_refused(bad):
    with pytest.raises(ValueError, match="timeout"):
        resolve_timeout(bad)
