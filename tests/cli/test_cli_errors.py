"""The command line under bad input (the CLI error contract: exit 2, one line).

Contract: ``symgdp analyze ...`` with bad input exits with status 2 and writes exactly one
line, ``symgdp: error: ...``, on stderr -- never a traceback, never an "internal error"
(status 1), nothing on stdout -- and nothing in the input is executed.

The end-to-end cases run the real program in subprocesses (in parallel, since each one
pays the import of SymPy/SciPy); the many further cases and the fuzzing call
``symgdp.cli.main.main`` in-process, which is the same code behind the console script.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from symgdp.cli.main import main

SENTINEL = "pwned-by-symgdp-test"

# (arguments after "analyze", a word the one-line message must contain)
END_TO_END = [
    ([""], "empty"),
    (["__import__('os').system('touch {sentinel}')"], "not allowed"),
    (["$(touch {sentinel})"], "cannot parse"),
    (["A*exp(-eps)"], "--set"),
    (["--", "-exp(-eps)"], "negative"),
    (["sqrt(eps - 5)*exp(-eps)"], "complex"),
]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="")
    return subprocess.run([sys.executable, "-m", "symgdp", "analyze", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def end_to_end(tmp_path_factory) -> dict[int, tuple[subprocess.CompletedProcess, Path]]:
    """Run every END_TO_END case once, all at the same time (start-up is mostly I/O)."""
    base = tmp_path_factory.mktemp("cli")
    jobs = {}
    for i, (args, _) in enumerate(END_TO_END):
        cwd = base / f"case{i}"
        cwd.mkdir()
        sentinel = cwd / SENTINEL
        jobs[i] = ([a.format(sentinel=sentinel) for a in args], cwd)
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {i: pool.submit(_run, args, cwd) for i, (args, cwd) in jobs.items()}
        return {i: (f.result(), jobs[i][1]) for i, f in futures.items()}


def assert_one_line_error(status: int, out: str, err: str, word: str) -> None:
    assert status == 2, (status, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("symgdp: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    assert word in err, err


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(END_TO_END)),
                         ids=[" ".join(a)[:40] for a, _ in END_TO_END])
def test_end_to_end(case, end_to_end):
    proc, cwd = end_to_end[case]
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, END_TO_END[case][1])
    # the injection attempts did not create their file, and nothing else appeared
    assert not (cwd / SENTINEL).exists()
    assert list(cwd.iterdir()) == []


def run_main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["analyze", *args], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


IN_PROCESS = [
    (["   "], "empty"),
    (["@@@"], "cannot parse"),
    (["1 +* eps"], "cannot parse"),
    (["open('pwned', 'w')"], "unknown function"),
    (["exp(-eps) + 'x'"], "strings"),
    (["9**9**9**9"], "exponent"),
    (["`id`"], "cannot parse"),
    (["exp(-eps); import os"], "cannot parse"),
    (["exp(-eps)\nimport os"], "cannot parse"),
    (["sigma = exp(-eps)"], "--tradeoff"),
    (["ε ≥ δ"], "comparisons"),
    (["ε ≪ δ"], "cannot parse"),
    (["x.__class__"], "attribute access"),
    (["lambda: 0"], "lambdas"),
    (["[exp(-eps)]"], "lists"),
    (["exp(-eps)[0]"], "subscripts"),
    (["sin(eps)"], "unknown function"),
    (["eval('1')"], "unknown function"),
    (["x" * 50_000], "max_length"),
    (["(" * 300 + "eps" + ")" * 300], "cannot parse"),
    (["1/0"], "undefined"),
    (["A*B*exp(-eps)"], "A, B"),
    (["1"], "at least 1"),
    (["2"], "at least 1"),
    (["1 - exp(-eps)"], "increasing"),
    (["1 + exp(-eps)"], "at least 1"),
    (["Max(1, exp(-eps))"], "at least 1"),
    (["-exp(-eps)"], "-"),
    (["0 - exp(-eps)"], "negative"),
    (["Piecewise((exp(-eps), eps < 1), (-0.1, True))"], "negative"),
    (["exp(-(eps - 2)^2)"], "increasing"),
    (["eps"], "increasing"),
    (["exp(-eps^2)", "--set", "A=nan"], "--set"),
    (["exp(-eps^2)", "--set", "A=1/0"], "--set"),
    (["exp(-eps^2)", "--set", "A=x"], "--set"),
    (["exp(-eps^2)", "--set", "A"], "--set"),
    (["exp(-eps^2)", "--set", "eps=1"], "--set"),
    (["exp(-eps^2)", "--set", "__class__=1"], "__class__"),
    (["exp(-eps^2)", "--set", "A=__import__('os')"], "--set"),
    (["exp(-eps^2)", "--tol", "1e-300"], "tol"),
    (["--tradeoff", "sigma = A/eps*sqrt(log(1/delta))"], "--set"),
    (["A*exp(-eps^2)", "--set", "A=-1"], "A must be positive"),
    (["A*exp(-eps^2)", "--set", "A=2", "--set", "A=3"], "twice"),
    (["exp(-eps^2)", "--eps-h", "0"], "--eps-h"),
    (["exp(-eps^2)", "--eps-h", "-1"], "--eps-h"),
    (["exp(-eps^2)", "--eps-h", "nan"], "--eps-h"),
    (["exp(-eps^2)", "--eps-h", "inf"], "--eps-h"),
    (["exp(-eps^2)", "--tol", "0"], "--tol"),
    (["exp(-eps^2)", "--tol", "-1e-3"], "--tol"),
    (["exp(-eps^2)", "--tol", "abc"], "--tol"),
    (["exp(-eps^2)", "--bogus"], "unrecognized"),
    (["exp(-eps^2)", "--json", "--latex"], "not allowed with"),
    (["exp(-eps^2)", "--plot", "figure.unknownext"], "--plot"),
    (["--tradeoff", "sigma = "], "empty side"),
    (["--tradeoff", "sigma"], "equation"),
    (["--tradeoff", "sigma = delta"], "does not contain"),
    (["--tradeoff", "sigma = sigma"], "always"),
    (["--tradeoff", "sigma = __import__('os')"], "underscore"),
]


@pytest.mark.parametrize("args, word", IN_PROCESS, ids=[" ".join(a)[:40] for a, _ in IN_PROCESS])
def test_in_process(args, word, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_main(args)
    assert_one_line_error(status, out, err, word)
    assert list(tmp_path.iterdir()) == []


def test_no_command():
    out, err = io.StringIO(), io.StringIO()
    assert main([], stdout=out, stderr=err) == 2
    assert err.getvalue().count("\n") == 1 and "analyze" in err.getvalue()


@pytest.mark.parametrize("expr", [
    "0",
    "Piecewise((1 - exp((eps - 1)/2), eps < 1), (0, True))",
])
def test_valid_edge_profiles_are_not_internal_errors(expr):
    # A profile that is 0 (everywhere, or beyond some eps) is perfectly valid: a mechanism
    # that is 0-GDP, or Laplace written with Piecewise.  Success, not a crash.
    status, out, err = run_main([expr, "--eps-h", "3", "--tol", "1e-3", "--json"])
    assert status == 0, err
    assert "internal error" not in err


TOKENS = ["eps", "ε", "delta", "A", "(", ")", "*", "**", "^", "/", "+", "-", "1", "2", "0.5",
          "1e308", "exp", "log", "sqrt", "Max", "Piecewise", ",", "<", "True", "=", "'",
          "__import__", ".", "[", "]", "lambda", ":", ";", "\n", " ", "9", "I", "oo", "e"]


@settings(max_examples=40 * max(1, int(os.environ.get("SYMGDP_TEST_SCALE", "1"))),
          deadline=None, derandomize=not os.environ.get("SYMGDP_TEST_SCALE"),
          phases=(Phase.explicit, Phase.generate),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TOKENS), min_size=0, max_size=12).map("".join))
def test_fuzz_never_internal_error(text):
    # Whatever the text: success (0) or bad input (2) with one line -- never status 1 or
    # an exception out of main.  A small head and coarse tol keep successful runs short.
    status, out, err = run_main(["--", text, "--eps-h", "2", "--tol", "1e-2"]
                                if text.startswith("-") else
                                [text, "--eps-h", "2", "--tol", "1e-2"])
    assert status in (0, 2), (text, err)
    assert "Traceback" not in err
    if status == 2:
        assert err.count("\n") == 1 and out == "", (text, err)
