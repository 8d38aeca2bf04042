"""Tests of the ``symgdp`` command line: outputs, exit codes and one-line errors.

Numeric references: the worst-case 1-DP profile is exactly mu-GDP with
mu = -2 Phi^{-1}(1/(1+e)) (theory §3, computed here with mpmath's erfinv at 40
digits); the classical Gaussian calibration sigma = sqrt(2 log(1.25/delta))/eps has the tail
limit 1/sigma^2 (theory §5).
"""

from __future__ import annotations

import importlib
import io
import json
import shutil
import subprocess
import sys

import mpmath
import pytest

from symgdp.cli.main import main

PURE_DP_1 = "Max(0, (exp(1) - exp(eps))/(1 + exp(1)))"
REQUIRED = ["profile", "refined_profile", "breakpoint", "tail_limit", "is_gdp", "mu_tail",
            "mu_lower", "mu_upper", "eps_h", "covers_tail", "failure_prob"]


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*argv: str, stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv, fragment", [
    (["analyze", "1 +* eps"], "cannot parse"),
    (["analyze", "__import__('os').system('echo hi')"], "__import__"),
    (["analyze", "B*exp(-eps**2)"], "--set B=VALUE"),
    (["analyze", "exp(-eps)", "--set", "B=2"], "no parameter named B"),
    (["analyze", "exp(-eps)", "--eps-h", "-1"], "--eps-h"),
    (["analyze", "exp(-eps)", "--tol", "abc"], "not a number: 'abc'"),
    (["analyze", "exp(-eps)", "--set", "noequals"], "NAME=VALUE"),
    (["analyze", "exp(-eps)", "--set", "eps=1"], "variable"),
    (["analyze", "B*exp(-eps)", "--set", "B=x"], "must be a number"),
    (["analyze", "B*exp(-eps)", "--set", "B=1/0"], "B=1/0"),
    (["analyze", "exp(-eps)", "--json", "--latex"], "not allowed"),
    (["analyze"], "EXPR"),
    ([], "choose a command"),
    (["frobnicate"], "invalid choice"),
    (["analyze", "exp(eps)"], "eps"),
    (["analyze", "--", "-exp(-eps)"], "negative"),
    (["analyze", "-exp(-eps)"], "goes after '--'"),
    (["compose", "-eps", "--times", "2"], "symgdp compose [options] -- '-eps'"),
    # a misspelt option is named as such, for the subcommand it was given to
    (["analyze", "exp(-eps)", "--jsn"], "'--jsn' is not an option of symgdp analyze"),
    (["calibrate", "exp(-eps**2/s)", "--param", "s", "--target-mu", "1", "--bogus"],
     "'--bogus' is not an option of symgdp calibrate"),
    (["sweep", "exp(-eps**2/s)", "--grid", "s=1,2", "--bogus=3"],
     "'--bogus' is not an option of symgdp sweep"),
    (["analyze", "sigma = 1/eps"], "--tradeoff"),
    (["analyze", "--tradeoff", "sigma = sqrt(2*log(1.25/delta))/eps"], "sigma"),
    (["analyze", "exp(-eps**2)", "--plot", "figure.nope"], "unknown image format"),
    # --notion: the other notions as input
    (["analyze", "--notion", "rdp", "alpha/(2*s**2) + b"], "--set b=VALUE --set s=VALUE"),
    (["analyze", "--notion", "zcdp", "--tradeoff", "sigma = 1/eps"], "two readings"),
    (["analyze", "--notion", "zcdp", "--", "-1"], "negative"),
    (["analyze", "--notion", "curve", "Min(1 - alpha, alpha)"], "increases"),
    (["analyze", "--notion", "dp", "exp(-eps)"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(argv, fragment):
    code, out, err = run(*argv)
    assert code == 2
    assert out == ""
    assert err.startswith("symgdp: error: ") and err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert fragment in err


def test_unbound_parameter_names_it_and_suggests_set():
    code, _, err = run("analyze", "B*exp(-sigma**2*eps**2)")
    assert code == 2
    assert "B, sigma" in err and "--set B=VALUE --set sigma=VALUE" in err


def test_json_pure_dp_contains_closed_form_mu():
    """Reference: theory §3, mu = -2 Phi^{-1}(1/(1+e)) = 2 sqrt(2) erfinv(tanh(1/2))."""
    with mpmath.workdps(40):
        truth = float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(mpmath.mpf(1) / 2)))
    code, out, err = run("analyze", PURE_DP_1, "--json", "--eps-h", "5")
    assert code == 0, err
    d = json.loads(out)
    for key in REQUIRED:
        assert key in d, key
    assert d["mu_lower"] <= truth <= d["mu_upper"]
    assert d["mu_upper"] - d["mu_lower"] <= 1e-6 * (1 + 1e-9)
    assert d["covers_tail"] is True and d["is_gdp"] is True and d["eps_h"] == 5.0
    assert d["tail_limit"] == "0"
    assert err == ""  # no progress and no warnings when not on a terminal


def test_json_tradeoff_classical_gaussian_tail():
    """Reference: theory §5, the classical calibration has tail limit 1/sigma^2 = 1/4."""
    code, out, err = run("analyze", "--tradeoff", "sigma = sqrt(2*log(1.25/delta))/eps",
                         "--set", "sigma=2", "--json", "--eps-h", "10", "--tol", "1e-4")
    assert code == 0, err
    d = json.loads(out)
    assert d["tail_limit"] == "1/4" and d["is_gdp"] is True
    assert d["mu_tail"] == pytest.approx(0.5, rel=1e-14)
    assert d["kind"] == "tradeoff" and d["values"] == {"sigma": "2"}
    assert d["mu_lower"] <= d["mu_upper"]


def test_text_latex_and_plot_outputs(tmp_path):
    code, out, _ = run("analyze", PURE_DP_1, "--eps-h", "5")
    assert code == 0
    assert "verdict" in out and "GDP" in out and "mu (whole line)" in out  # 0 beyond eps = 1

    code, out, _ = run("analyze", PURE_DP_1, "--eps-h", "5", "--latex")
    assert code == 0
    assert out.startswith("\\begin{align*}") and out.rstrip().endswith("\\end{align*}")

    target = tmp_path / "gdpt.png"
    code, out, _ = run("analyze", PURE_DP_1, "--eps-h", "5", "--plot", str(target))
    assert code == 0 and f"plot written to {target}" in out
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_to_missing_folder_is_bad_input(tmp_path):
    code, _, err = run("analyze", PURE_DP_1, "--eps-h", "5", "--plot",
                       str(tmp_path / "no" / "such" / "dir.png"))
    assert code == 2 and err.count("\n") == 1 and "cannot write" in err


def test_progress_only_on_a_terminal_and_never_with_json():
    code, _, err = run("analyze", PURE_DP_1, "--eps-h", "5", stderr=FakeTTY())
    assert code == 0 and "refining the profile" in err and "measuring the head" in err
    code, out, err = run("analyze", PURE_DP_1, "--eps-h", "5", "--json", stderr=FakeTTY())
    assert code == 0 and err == ""
    json.loads(out)


def test_internal_error_is_one_line_exit_1_and_debug_shows_it(monkeypatch):
    # the module, even when the package exports the function symgdp.report under its name
    report_module = importlib.import_module("symgdp.present.report")

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(report_module, "report", boom)
    code, out, err = run("analyze", "exp(-eps**2)")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "internal error (RuntimeError: boom)" in err
    assert "--debug" in err and "Traceback" not in err
    with pytest.raises(RuntimeError, match="boom"):
        main(["analyze", "exp(-eps**2)", "--debug"], stdout=io.StringIO(), stderr=io.StringIO())


def test_help_and_version_exit_0():
    code, out, _ = run("--help")
    assert code == 0 and "analyze" in out
    code, out, _ = run("analyze", "--help")
    assert code == 0 and "--tradeoff" in out and "--set NAME=VALUE" in out
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("symgdp ")


def test_python_dash_m_never_shows_a_traceback():
    proc = subprocess.run([sys.executable, "-m", "symgdp", "analyze", "1 +* eps"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("symgdp: error:")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("symgdp") is None, reason="the console script is not installed")
def test_console_script_runs():
    proc = subprocess.run(["symgdp", "analyze", PURE_DP_1, "--eps-h", "5", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["covers_tail"] is True


def test_timeout_reaches_the_tail_analysis_and_unknown_is_reported(monkeypatch):
    """An undecided tail analysis gives verdict "unknown" (is_gdp null), never a guess."""
    import math

    import symgdp.tail.limit as tail

    seen = []

    def undecided(profile, timeout=None):
        seen.append(timeout)
        return tail.Identification(None, None, math.nan, "unknown", "out of time")

    monkeypatch.setattr(tail, "identify", undecided)
    # float mode: no whole-line proof, which would settle the verdict without the analysis
    code, out, err = run("analyze", "exp(-eps**2)", "--timeout", "7", "--json",
                         "--eps-h", "5", "--tol", "1e-3", "--no-certify")
    assert code == 0, err
    d = json.loads(out)
    assert 7.0 in seen  # (measure() may consult the tail analysis too)
    assert d["is_gdp"] is None and d["tail_limit"] is None and d["verdict"] == "unknown"
    assert d["mu_upper"] is not None and "unknown" in d["statement"]


def test_notions_as_input_on_the_command_line():
    # the pure 1-DP trade-off curve max(0, 1 - e a, e^-1 (1 - a)) (Kairouz, Oh & Viswanath)
    # has the pure-DP mu of theory section 3; zCDP rho = 1/8 and the RDP curve alpha/8 are
    # one statement (Bun & Steinke), so their brackets agree, and both contain G at eps = 0
    # of the tight RDP conversion, inf over alpha of e^{(alpha-1)(alpha/8)} (1-1/alpha)^alpha
    # / (alpha - 1) (Canonne, Kamath & Steinke), a lower bound of sup G (40-digit mpmath)
    with mpmath.workdps(40):
        pure = float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(mpmath.mpf(1) / 2)))
        d0 = mpmath.findroot(lambda a: mpmath.diff(lambda x: mpmath.log(
            mpmath.exp((x - 1) * x / 8) * (1 - 1 / x) ** x / (x - 1)), a), 3)
        f = mpmath.exp((d0 - 1) * d0 / 8) * (1 - 1 / d0) ** d0 / (d0 - 1)
        g0 = float(2 * mpmath.sqrt(2) * mpmath.erfinv(f))  # delta_mu(0) = 2 Phi(mu/2) - 1
    code, out, err = run("analyze", "--notion", "curve",
                         "Max(0, 1 - exp(1)*alpha, exp(-1)*(1 - alpha))", "--json",
                         "--eps-h", "5")
    assert code == 0, err
    d = json.loads(out)
    assert d["mu_lower"] <= pure <= d["mu_upper"] and d["input"].startswith("f-DP: T(alpha)")
    got = []
    for argv in (("--notion", "zcdp", "1/8"), ("--notion", "rdp", "alpha/(2*s**2)", "--set",
                                                "s=2")):
        code, out, err = run("analyze", *argv, "--json")
        assert code == 0, err
        d = json.loads(out)
        assert d["tail_limit"] == "1/4" and d["is_gdp"] is True  # 2 rho
        assert d["mu_lower"] - 1e-9 <= d["mu_upper"] and g0 <= d["mu_upper"]
        got.append((d["mu_lower"], d["mu_upper"]))
    assert got[0] == got[1]
