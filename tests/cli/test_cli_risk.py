"""The ``symgdp risk`` and ``symgdp audit`` commands.

References: 2 Phi(mu/2) - 1 and Phi(Phi^{-1}(a) + mu) in 40-digit mpmath; the one-sided
Clopper-Pearson bounds from scipy.stats.beta directly.
"""

from __future__ import annotations

import io
import json

import mpmath
import pytest
from scipy import stats

from symgdp.cli.main import main


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_risk_mu_json():
    code, out, err = _run(["risk", "--mu", "1", "--fpr", "0.05", "--prior", "0.5", "--json"])
    assert code == 0, err
    r = json.loads(out)
    with mpmath.workdps(40):
        adv = 2 * mpmath.ncdf(mpmath.mpf(1) / 2) - 1
        tpr = mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(0.05)) + 1)
        assert r["advantage"][0] <= adv <= r["advantage"][1]
        assert r["max_tpr"][0]["lower"] <= tpr <= r["max_tpr"][0]["upper"]
        # Bayes success at prior 1/2 is (1 + advantage)/2
        b = r["bayes_success"][0]
        assert b["lower"] <= (1 + adv) / 2 <= b["upper"]


def test_risk_profile_text():
    code, out, _ = _run(["risk", "a*exp(-eps)", "--set", "a=0.5", "--fpr", "0.1"])
    assert code == 0
    assert "advantage" in out and "max TPR at FPR 0.1" in out


@pytest.mark.parametrize("argv", [
    ["risk"],
    ["risk", "exp(-eps)", "--mu", "1"],
    ["risk", "--mu", "-1"],
    ["risk", "--mu", "nan"],
    ["risk", "--mu", "1", "--fpr", "1.5"],
    ["risk", "--mu", "1", "--prior", "x"],
    ["risk", "a*exp(-eps)"],
    ["audit", "--tp", "-1", "--fn", "1", "--fp", "1", "--tn", "1"],
    ["audit", "--tp", "0", "--fn", "0", "--fp", "1", "--tn", "1"],
    ["audit", "--tp", "1", "--fn", "1", "--fp", "1", "--tn", "1", "--confidence", "1"],
    ["audit", "--tp", "1,2", "--fn", "1", "--fp", "1", "--tn", "1"],
    ["audit", "--tp", "1", "--fn", "1", "--fp", "1", "--tn", "1", "--delta", "1"],
])
def test_bad_input_one_line_exit_2(argv):
    code, out, err = _run(argv)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err


def test_audit_json_matches_clopper_pearson():
    code, out, err = _run(["audit", "--tp", "900", "--fn", "100", "--fp", "100", "--tn",
                           "900", "--delta", "1e-5", "--json"])
    assert code == 0, err
    r = json.loads(out)
    lo = stats.beta.ppf(0.025, 900, 101)
    hi = stats.beta.ppf(0.975, 101, 900)
    assert r["tpr_lower"][0] <= lo and r["fpr_upper"][0] >= hi
    assert r["mu_lower"] <= stats.norm.ppf(lo) - stats.norm.ppf(hi)
    assert r["mu_lower"] > stats.norm.ppf(lo) - stats.norm.ppf(hi) - 1e-9
    assert r["eps_lower"] > 0
