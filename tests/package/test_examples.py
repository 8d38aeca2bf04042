"""Every script in examples/ runs in small mode and writes its outputs to the given folder.

The scripts are started together (they spend most of their time importing and in SymPy,
so running them side by side keeps the suite fast) and each test waits for its own.
What the scripts compute is tested against references in the unit tests; here the
outputs of the walk-through are also checked against the closed-form tail limit
A^2/(2 sigma^2) = 2/9 of its trade-off equation (theory §5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Scripts of the seed paper's figures and the colleague-owned ones, by name, so that a
# missing script is noticed rather than silently not run.
NAMED = ["profiles_figure.py", "gdpt_figure.py", "composition_figure.py", "walkthrough.py",
         "composition_table.py", "mechanisms_tour.py", "tradeoff_figures.py"]
SCRIPTS = sorted({p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
                 | set(NAMED))
# Files each of our scripts must write (the colleagues' scripts may write what they like).
OUTPUTS = {
    "profiles_figure.py": ["profiles.png"],
    "gdpt_figure.py": ["gdpt.png"],
    "composition_figure.py": ["composition.png"],
    "walkthrough.py": ["report.tex", "report.md", "report.json", "walkthrough.png",
                       "walkthrough_tradeoff.png"],
    "tradeoff_figures.py": ["tradeoff_figures.png", "tradeoff_figures.pdf"],
    "noise_shape_figure.py": ["noise_shape.png", "noise_shape.pdf"],
}
TIMEOUT = 300
# Run once per test run by the small_tour fixture (tests/package/conftest.py), whose JSON
# test_examples_tour.py checks row by row: the same script, the same --small run.
SHARED = "mechanisms_tour.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``runs(name)``: (process, output folder) of ``examples/<name> --small``, or None for
    a script that does not exist.  In one process every script starts at the first request,
    all at once; under pytest-xdist a worker starts only the scripts of the tests it was
    given (each worker started all of them before: twice the work).  Every process is
    reaped and its pipes closed at teardown (no ResourceWarning in a later test)."""
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="error")
    started: dict[str, tuple[subprocess.Popen, Path]] = {}

    def start(name: str) -> None:
        script = EXAMPLES / name
        if not script.exists() or name == SHARED or name in started:
            return
        out = tmp_path_factory.mktemp(name.removesuffix(".py"))
        proc = subprocess.Popen([sys.executable, str(script), "--small", "--out", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=tmp_path_factory.getbasetemp())
        started[name] = (proc, out)

    def get(name: str) -> tuple[subprocess.Popen, Path] | None:
        if not started and not os.environ.get("PYTEST_XDIST_WORKER"):
            for other in SCRIPTS:
                start(other)
        start(name)
        return started.get(name)

    yield get
    for proc, _ in started.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # reap it and close its pipes (no ResourceWarning at exit)


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs_in_small_mode(runs, name, request):
    if name == SHARED:
        out, done = request.getfixturevalue("small_tour")
        returncode, stdout, stderr = done["returncode"], done["stdout"], done["stderr"]
    else:
        got = runs(name)
        if got is None:
            pytest.skip(f"examples/{name} does not exist yet")
        proc, out = got
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        returncode = proc.returncode
    assert returncode == 0, f"{name} failed:\n{stderr[-3000:]}"
    assert "Traceback" not in stderr
    for filename in OUTPUTS.get(name, []):
        assert (out / filename).stat().st_size > 0, f"{name} did not write {filename}"
    if name in OUTPUTS:
        assert "wrote" in stdout


@pytest.mark.slow
def test_walkthrough_report_has_the_closed_form_tail(runs):
    """Reference: theory §5, sigma = A/eps sqrt(log(B/delta)) has tail limit A^2/(2 sigma^2),
    2/9 for A = 1, sigma = 1.5."""
    proc, out = runs("walkthrough.py")
    proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0
    d = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert d["tail_limit"] == "2/9" and d["is_gdp"] is True
    assert d["mu_lower"] <= d["mu_upper"]
    tex = (out / "report.tex").read_text(encoding="utf-8")
    assert tex.startswith("\\begin{align*}") and "\\frac{2}{9}" in tex


def test_examples_default_to_the_ignored_folder():
    """Outputs go to examples/out/ by default, which git ignores."""
    ignore = (EXAMPLES.parent / ".gitignore").read_text(encoding="utf-8").split()
    assert "examples/out/" in ignore
    for name in OUTPUTS:
        assert 'Path(__file__).resolve().parent / "out"' in (EXAMPLES / name).read_text(
            encoding="utf-8")
