"""The privacy statement (DPSGDResult.statement(), symgdp dpsgd --statement) and the CLI's
sampling options: each line names its assumption and relation and carries the certified
numbers of the run it states (checked against dpsgd run directly, and closed forms)."""

from __future__ import annotations

import io
import json
import math

import pytest

from symgdp import dpsgd
from symgdp.cli.main import main

FAST = dict(tol=1e-3, value_discretization_interval=1e-3)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(["dpsgd", *argv], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_statement_lines_name_assumption_and_relation():
    r = dpsgd(sampling="poisson", dataset_size=40, batch_size=10, sigma=4.0, epochs=2,
              **FAST)
    assert r.q == 0.25 and r.steps == 8
    s = r.statement()
    assert len(s.lines) == 5
    for line, key in zip(s.lines, ("Poisson", "Poisson", "without replacement", "shuffled",
                                   "random allocation"), strict=True):
        assert key in line and "neighbouring:" in line and "-DP" in line
    assert "add/remove" in s.lines[0] and "replace one" in s.lines[1]
    # the shuffled line is the closed form sqrt(E)/sigma (a proved bound, not tight)
    sh = s.results["shuffle"]
    assert math.sqrt(2) / 4.0 <= sh.mu_upper <= math.sqrt(2) / 4.0 + 2e-3
    assert "not tight" in s.lines[3]
    # the without-replacement line is dpsgd's own run
    w = dpsgd(sampling="without_replacement", dataset_size=40, batch_size=10, sigma=4.0,
              steps=8, **FAST)
    assert s.results["without_replacement"].mu_upper == w.mu_upper
    assert f"({w.eps_certified:.4f}"[:5] in s.lines[2]


def test_statement_without_sizes_says_what_is_missing():
    s = dpsgd(0.1, 3.0, 5, **FAST).statement()
    assert len(s.lines) == 2 and "dataset_size" in s.lines[1]


def test_cli_sampling_and_statement():
    status, out, err = _cli(["--sampling", "shuffle", "--dataset-size", "40",
                             "--batch-size", "10", "--sigma", "4", "--epochs", "4"])
    assert status == 0 and "shuffled epochs" in out and "not tight" in out
    status, out, err = _cli(["--statement", "--dataset-size", "40", "--batch-size", "10",
                             "--sigma", "4", "--epochs", "1", "--json"])
    assert status == 0
    data = json.loads(out)
    assert len(data["statement"]) == 5 and data["sampling"] == "poisson"
    assert data["statements"]["shuffle"]["tight"] is False


@pytest.mark.parametrize("argv,match", [
    (["--sampling", "bogus", "--q", "0.1", "--sigma", "1", "--steps", "2"], "bogus"),
    (["--sampling", "shuffle", "--dataset-size", "10", "--batch-size", "11", "--sigma",
      "1", "--epochs", "1"], "batch_size=11"),
    (["--q", "0.1", "--sigma", "1", "--steps", "2", "--examples-per-user", "0"],
     "examples_per_user"),
    (["--statement", "--dataset-size", "10", "--batch-size", "2", "--sigma", "1",
      "--epochs", "1", "--target-mu", "1"], "target"),
])
def test_cli_bad_input_exit_2_one_line(argv, match):
    status, out, err = _cli(argv)
    assert status == 2 and err.count("\n") == 1 and match in err


def test_user_level_statement_lines():
    # reference: dpsgd run directly at user level and at record level (the lines must carry
    # exactly those runs' certified numbers)
    r = dpsgd(sampling="poisson", dataset_size=40, batch_size=4, sigma=3.0, steps=3,
              examples_per_user=2, **FAST)
    s = r.statement()
    assert "user level" in s.lines[0] and "add/remove one user (all 2 examples)" in s.lines[0]
    assert f"({r.eps_certified:.4f}"[:5] in s.lines[0]
    rec = dpsgd(0.1, 3.0, 3, **FAST)
    assert s.results["poisson"].mu_upper == rec.mu_upper
    assert "add/remove one record" in s.lines[1] and s.results["poisson_user"] is r
    assert "not analysed" in s.lines[-1] and "user level" in s.lines[-1]
    # the record-level numbers are below the user-level ones (a user is k records)
    assert rec.mu_upper < r.mu_upper


def test_cli_examples_per_user():
    status, out, err = _cli(["--q", "0.1", "--sigma", "8", "--steps", "2",
                             "--examples-per-user", "2", "--tol", "1e-3", "--json"])
    assert status == 0
    data = json.loads(out)
    assert data["examples_per_user"] == 2 and data["neighbouring"] == "add_remove"
    direct = dpsgd(0.1, 8.0, 2, examples_per_user=2, tol=1e-3)
    assert data["mu_upper"] == pytest.approx(direct.mu_upper, rel=0, abs=0)
    status, out, err = _cli(["--q", "0.1", "--sigma", "8", "--steps", "2",
                             "--examples-per-user", "2", "--tol", "1e-3"])
    assert status == 0 and "add/remove one user (2 examples per user)" in out
    status, out, err = _cli(["--q", "0.1", "--sigma", "8", "--steps", "2",
                             "--examples-per-user", "2", "--neighbouring", "replace_one"])
    assert status == 2 and "examples_per_user=2" in err and "replace_one" in err


def test_cli_user_level_phases():
    # reference: closed form (q = 1 phases: N(k, s_i^2) steps compose to
    # k sqrt(sum T_i / s_i^2)-GDP)
    status, out, err = _cli(["--phase", "1:60:2", "--phase", "1:90:1", "--examples-per-user",
                             "2", "--tol", "1e-3", "--json"])
    assert status == 0, err
    data = json.loads(out)
    mu = 2 * math.sqrt(2 / 3600 + 1 / 8100)
    assert data["mu_floor"] <= mu <= data["mu_upper"] and data["examples_per_user"] == 2
    status, out, err = _cli(["--phase", "1:8:2", "--examples-per-user", "2",
                             "--target-mu", "1"])
    assert status == 2 and "--phase" in err


def test_cli_calibration_at_user_level(monkeypatch):
    # reference: closed form; q = 1, T = 4, k = 2 is k sqrt(T)/sigma-GDP: mu <= 1 needs
    # sigma >= 4, so the certified sigma lies at or above 4 and the proved miss below it
    # (the command's own search on coarser grids: the wiring is under test, not the grid)
    import functools

    import symgdp.training.sigma as sigma_module

    monkeypatch.setattr(sigma_module, "dpsgd_sigma", functools.partial(
        sigma_module.dpsgd_sigma, rel=2e-2, value_discretization_interval=2e-3,
        coarse_discretization=2e-3, tol=1e-3))
    status, out, err = _cli(["--q", "1", "--steps", "4", "--target-mu", "1",
                             "--examples-per-user", "2", "--json"])
    assert status == 0, err
    data = json.loads(out)
    assert data["sigma_below"] < 4.0 <= data["sigma"] and data["examples_per_user"] == 2


def test_statement_of_a_schedule_lists_its_phases():
    # reference: the run itself (its certified eps is on the line); no "nan" for the
    # q and sigma a schedule does not have
    r = dpsgd(schedule=[(0.1, 8.0, 2), (0.2, 8.0, 1)], tol=1e-3,
              value_discretization_interval=2e-3)
    line = r.statement().lines[0]
    assert "nan" not in line and "(q 0.1, sigma 8, 2 steps)" in line
    assert f"({r.eps_certified:.4f}"[:5] in line
