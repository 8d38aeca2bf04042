"""Clip and rectify (symgdp.planning.amplify; theory §7)."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from symgdp.errors import DomainError
from symgdp.measurement.measure import measure
from symgdp.planning.amplify import ClipAndRectify, clip_and_rectify
from symgdp.profile import Profile
from symgdp.symbolic.symbols import eps


def test_rectifies_a_measured_head_bound() -> None:
    # exp(-eps^2)/2 is never 0: in float mode (no tail proof) the measurement is a head
    # bound only (certified, its tail is proved: tests/test_whole_line.py)
    m = measure(Profile(sympy.exp(-(eps**2)) / 2), 20.0, 1e-6, refine=False, identify=False,
                certify=False)
    assert not m.covers_tail
    r = clip_and_rectify(m, -1.0, 3.0)
    assert isinstance(r, ClipAndRectify)
    assert r.mu == m.upper and r.eps_h == 20.0
    assert r.scale == pytest.approx(4 / 20, rel=1e-15)  # b = (y_high - y_low)/eps_h
    assert Fraction(4) / Fraction(r.scale) <= 20  # exactly: the noise gives eps_h-DP
    assert f"{m.upper:.10g}-GDP" in r.statement and str(r) == r.statement


@settings(max_examples=60)
@given(st.floats(-1e6, 1e6), st.floats(1e-6, 1e6), st.floats(1e-3, 1e4))
@example(0.0, 1.0, 3.0)  # 1/3 rounds down in float64
@example(-0.1, 0.30000000000000004, 7.0)
def test_scale_is_rounded_up(y_low: float, width: float, eps_h: float) -> None:
    y_high = y_low + width
    if not y_high > y_low:
        return
    m = SimpleNamespace(upper=1.0, eps_h=eps_h, certified=False, covers_tail=False)
    r = clip_and_rectify(m, y_low, y_high)
    # exact rational arithmetic: the Laplace mechanism's eps = (y_high - y_low)/b <= eps_h
    assert (Fraction(y_high) - Fraction(y_low)) / Fraction(r.scale) <= Fraction(eps_h)
    # and the rounding costs at most one ulp
    assert r.scale <= math.nextafter(float((Fraction(y_high) - Fraction(y_low))
                                           / Fraction(eps_h)), math.inf)


def test_already_covering_measurement_is_said_so() -> None:
    p = Profile(sympy.Max(1 - sympy.exp((eps - 1) / 2), 0))
    m = measure(p, 10.0, 1e-6, refine=False, identify=False)
    assert m.covers_tail
    assert "without rectification" in clip_and_rectify(m, 0, 1).statement


def test_bad_input() -> None:
    m = SimpleNamespace(upper=1.0, eps_h=10.0)
    with pytest.raises(DomainError, match="exceed"):
        clip_and_rectify(m, 1.0, 1.0)
    with pytest.raises(DomainError, match="finite"):
        clip_and_rectify(m, 0.0, math.inf)
    with pytest.raises(DomainError, match="upper bound"):
        clip_and_rectify(SimpleNamespace(upper=math.inf, eps_h=10.0), 0.0, 1.0)
