"""The mechanisms tour computes every row, with no wall-clock cap: a row's result does not
depend on the machine's load.

References: the trade-off route (tradeoff.gdp_mu of the mechanism's trade-off curve), a
second algorithm for the same mu; for pure DP also the closed form
mu = -2 Phi^{-1}(1/(1 + e^eps0)) (scipy's normal quantile).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from symgdp import mechanisms, tradeoff

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def test_the_tour_has_no_cap(tour):
    # the rows are computed in this process, to the end: no cap, no child process to kill
    assert not hasattr(tour, "CAP_SECONDS") and not hasattr(tour, "CAP_SECONDS_SMALL")
    import inspect

    assert "multiprocessing" not in inspect.getsource(tour)


def test_a_case_returns_its_bracket(tour):
    case = dict(profile=mechanisms.laplace(1.0), refine=False, tol=1e-3)
    row = tour.identify_and_measure(case, 10.0)
    mu = tradeoff.gdp_mu(tradeoff.laplace(1.0))
    assert row["mu_lower"] <= mu <= row["mu_upper"]
    assert row["mu_upper"] - row["mu_lower"] <= 1e-3
    assert row["tail_limit"] == "0"
    assert row["covers_tail"] and row["certified"]
    assert tour.guarantee(row) == "certified; covers the tail"


@pytest.mark.slow
def test_every_row_of_the_small_tour_has_a_bracket(tour, small_tour):
    from scipy.stats import norm

    # the rows of `mechanisms_tour.py --small` as the script wrote them (its JSON: floats
    # round-trip exactly), from the one run per test run shared with test_examples.py
    # (the small_tour fixture of tests/package/conftest.py)
    out, done = small_tour
    assert done["returncode"] == 0, done["stderr"][-3000:]
    rows = json.loads((out / "mechanisms_tour.json").read_text(encoding="utf-8"))["mechanisms"]
    assert len(rows) == len(tour.cases(True))
    for row, case in zip(rows, tour.cases(True), strict=True):
        assert "measure_error" not in row, row
        assert row["mu_lower"] <= row["mu_upper"] <= row["mu_lower"] + case["tol"]
        if "mu_tradeoff_route" in row:
            assert row["mu_lower"] - 1e-9 <= row["mu_tradeoff_route"] <= row["mu_upper"] + 1e-9
        assert tour.guarantee(row)
    pure = next(r for r in rows if r["name"] == "pure DP")
    closed = -2 * norm.ppf(1 / (1 + math.e))
    assert pure["mu_lower"] <= closed <= pure["mu_upper"]
