"""Certified upper deltas returned as floats are rounded up (issue 31): the float that
``__call__`` returns is never below the exact exponential of the proved log it stands for.
Reference everywhere: mpmath at 40 digits, exp of the exact float log."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symgdp.numerics.rounding import exp_up
from symgdp.training.dpsgd import dpsgd

FAST = {"failure_prob": 1e-8, "tol": 1e-3, "floor": False, "compare": False}


def _exact_exp(x: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.exp(mpmath.mpf(x))


def _assert_rounded_up(values: np.ndarray, logs: np.ndarray) -> None:
    below = [(float(v), float(x)) for v, x in zip(values.ravel(), logs.ravel(), strict=True)
             if mpmath.mpf(float(v)) < _exact_exp(float(x))]
    assert not below, f"floats below the exact exp of their log (value, log): {below[:3]}"


def test_exp_up_against_mpmath() -> None:
    # reference: 40-digit mpmath exp of each float log; rounding to nearest puts about
    # half of these floats below the exact value (checked: the plain exp fails)
    rng = np.random.default_rng(31)
    x = np.concatenate([-rng.uniform(0, 1, 400), -rng.uniform(1, 700, 400),
                        -rng.uniform(700, 745, 200), [0.0, -1e-300, -745.1]])
    y = exp_up(x)
    _assert_rounded_up(y, x)
    assert np.all(y <= 1.0) and np.all(y > 0)
    plain = np.exp(x)
    assert any(mpmath.mpf(float(v)) < _exact_exp(float(t)) for v, t in zip(plain, x, strict=True))
    # and close: a few ulps above (relative 1e-15 for normal values)
    normal = plain > 1e-300
    assert np.all(y[normal] <= plain[normal] * (1 + 1e-14))
    assert exp_up(-math.inf) == 0.0 and math.isnan(exp_up(math.nan))
    assert isinstance(exp_up(-1.0), float) and exp_up(0.0) == 1.0


@pytest.fixture(scope="module")
def poisson() -> object:
    return dpsgd(0.01, 1.0, 100, **FAST)


def test_dpsgd_profile_call_rounds_up(poisson: object) -> None:
    # _UpperProfile.__call__ (min(PLD, RDP)): the float is >= exp(log_delta), exactly
    prof = poisson.profile  # type: ignore[attr-defined]
    xs = np.linspace(0.0, 6.0, 301)
    _assert_rounded_up(np.asarray(prof(xs)), np.asarray(prof.log_delta(xs)))
    for e in (0.0, 0.37, 2.5):
        assert mpmath.mpf(prof(e)) >= _exact_exp(prof.log_delta(e))


def test_truncated_poisson_profile_call_rounds_up() -> None:
    # _PlusTruncation.__call__ (upper profile + truncation term)
    r = dpsgd(sampling="truncated_poisson", q=0.01, sigma=1.0, steps=100,
              dataset_size=1000, max_batch_size=45, **FAST)
    prof = r.profile
    assert type(prof).__name__ == "_PlusTruncation"
    xs = np.linspace(0.0, 6.0, 301)
    _assert_rounded_up(np.asarray(prof(xs)), np.asarray(prof.log_delta(xs)))
