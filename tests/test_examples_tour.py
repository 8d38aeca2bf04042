"""The mechanisms tour's time cap: a case that runs too long is stopped and reported.

The tour measures each mechanism in a child process that is killed after a cap, so the
script always finishes (a slow search shows as "not finished within ..." in its table).
Reference for the finished case: the trade-off route (tradeoff.gdp_mu of the Laplace
trade-off curve), a second algorithm for the same mu.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import sys
from pathlib import Path

import pytest

from symgdp import mechanisms, tradeoff

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def tour():
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location("mechanisms_tour",
                                                      EXAMPLES / "mechanisms_tour.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(EXAMPLES))


def test_a_case_over_the_cap_is_stopped_and_reported(tour):
    # the nested Min/Piecewise shuffle profile needs far more than 0.3 s
    case = dict(profile=mechanisms.shuffle_amplification(2.0, 10**4), refine=False,
                tol=1e-2, identify=False)
    row = tour.identify_and_measure(case, 10.0, 0.3)
    assert row["measure_error"].startswith("not finished within the tour's cap of 0.3 s")
    assert "mu_upper" not in row
    assert not multiprocessing.active_children()  # the child was stopped and reaped


def test_a_case_within_the_cap_returns_its_bracket(tour):
    case = dict(profile=mechanisms.laplace(1.0), refine=False, tol=1e-3)
    row = tour.identify_and_measure(case, 10.0, 120.0)
    mu = tradeoff.gdp_mu(tradeoff.laplace(1.0))
    assert row["mu_lower"] <= mu <= row["mu_upper"]
    assert row["mu_upper"] - row["mu_lower"] <= 1e-3
    assert row["tail_limit"] == "0"
