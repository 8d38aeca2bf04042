"""``symgdp calibrate`` and ``symgdp sweep``: answers and the error contract.

Answers are checked against the Laplace closed form eps0* = -2 log(2 Phi(-mu/2)) (mpmath)
and against the Python API; bad input must exit 2 with exactly one line on stderr.
"""

from __future__ import annotations

import io
import json

import mpmath
import pytest

from symgdp import mechanisms, sweep
from symgdp.cli.main import main

LAPLACE = "Max(0, 1 - exp((eps - e0)/2))"


def run(args):
    out, err = io.StringIO(), io.StringIO()
    status = main(args, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_calibrate_laplace_json():
    status, out, err = run(["calibrate", LAPLACE, "--param", "e0", "--target-mu", "1",
                            "--eps-h", "20", "--json"])
    assert status == 0, err
    data = json.loads(out)
    with mpmath.workdps(40):  # closed form of the Laplace mechanism
        truth = float(-2 * mpmath.log(2 * mpmath.ncdf(-0.5)))
    assert data["bracket"][0] <= truth <= data["bracket"][1] and data["value"] <= truth
    assert data["direction"] == "increasing" and data["mu_upper"] <= 1


def test_calibrate_tradeoff_direct_route():
    status, out, err = run(["calibrate", "--tradeoff", "b = 1/(eps - 2*log(1 - delta))",
                            "--param", "b", "--target-eps", "1", "--target-delta", "1e-3"])
    assert status == 0, err
    # closed form of the Laplace calibration: b = 1/(eps - 2 log(1 - delta)), to 12 digits
    with mpmath.workdps(40):
        truth = 1 / (1 - 2 * mpmath.log(1 - mpmath.mpf("1e-3")))
    assert out.startswith(f"b = {mpmath.nstr(truth, 12)}")


def test_sweep_text_out_resume_and_plot(tmp_path):
    out_file, png = tmp_path / "mu.jsonl", tmp_path / "mu.png"
    args = ["sweep", LAPLACE, "--grid", "e0=0.5:2:4", "--eps-h", "10", "--workers", "1",
            "--out", str(out_file)]
    status, out, err = run(args + ["--plot", str(png)])
    assert status == 0, err
    assert png.stat().st_size > 0 and len(out_file.read_text().splitlines()) == 4
    rows = out.splitlines()
    assert rows[0].split("\t")[:3] == ["e0", "mu_lower", "mu_upper"] and len(rows) == 6
    api = sweep(mechanisms.laplace, {"eps0": [0.5, 1.0, 1.5, 2.0]}, executor="serial",
                eps_h=10)
    for row, r in zip(rows[1:5], api, strict=False):
        assert [float(c) for c in row.split("\t")[1:3]] == [r["mu_lower"], r["mu_upper"]]
    status, _, err = run(args)  # the file exists: refused without --resume
    assert status == 2 and err.count("\n") == 1 and "resume" in err
    status, out2, err = run(args + ["--resume", "--json"])
    assert status == 0 and len(json.loads(out2)) == 4


@pytest.mark.parametrize("args, word", [
    (["calibrate", LAPLACE, "--param", "e0"], "--target-mu"),
    (["calibrate", LAPLACE, "--param", "e0", "--target-mu", "1", "--target-eps", "1"],
     "either"),
    (["calibrate", LAPLACE, "--param", "nope", "--target-mu", "1"], "nope"),
    (["calibrate", LAPLACE, "--param", "e0", "--target-mu", "1", "--set", "e0=1"], "--set"),
    (["calibrate", LAPLACE, "--param", "e0", "--target-mu", "1", "--bracket", "1"],
     "LOW,HIGH"),
    (["sweep", LAPLACE], "--grid"),
    (["sweep", LAPLACE, "--grid", "e0=1:2"], "LOW:HIGH:COUNT"),
    (["sweep", LAPLACE, "--grid", "e0=1:2:0"], "COUNT"),
    (["sweep", LAPLACE, "--grid", "e0=x"], "not a finite real number"),
    (["sweep", LAPLACE, "--grid", "q=1,2"], "q"),
    (["sweep", LAPLACE, "--grid", "e0=1", "--resume"], "--out"),
    (["sweep", LAPLACE, "--grid", "e0=1", "--out", "/nonexistent-dir/x.jsonl"],
     "cannot write"),
    (["sweep", "1 - q*eps", "--grid", "q=1,2", "--eps-h", "10"], "every point failed"),
])
def test_bad_input_is_one_line_exit_2(args, word):
    status, out, err = run(args)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symgdp: error:") and word in err
