"""The README is executable: its Python runs, its commands are the ones CI and users run.

* Every ```python block is executed; the results its comments promise are checked (the tail
  limit A^2/(2 sigma^2) is the closed form of theory §5).
* The Quickstart's test command is exactly the one in .ci/run.
* Every ``symgdp ...`` command shown is run (as ``python -m symgdp ...``) and must succeed.
* The README's links to files in the repository resolve.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke  # the README quick check runs this file

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def quickstart() -> list[str]:
    section = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", section, re.S)]


def symgdp_commands() -> list[list[str]]:
    commands = []
    for block in blocks("bash"):
        for part in block.replace("\\\n", " ").split("&&"):
            words = shlex.split(part)
            if words and words[0] == "symgdp":
                commands.append(words)
    return commands


def test_python_blocks_run(tmp_path, monkeypatch):
    code = blocks("python")
    assert code, "the README has no Python example"
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in code:
            exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
    printed = out.getvalue()
    assert "A**2/(2*sigma**2)" in printed  # theory §5 closed form
    assert "\nGDP\n" in printed
    assert "\\begin{align*}" in printed
    assert re.search(r"[\d.]+ <= sup G <= [\d.]+, failure probability", printed)


def test_quickstart_commands_match_ci():
    install_run, install_test = quickstart()[:2]
    pytest_line = next(line.strip() for line in CI.splitlines()
                       if "pytest" in line and not line.lstrip().startswith("#")
                       and "pip" not in line)
    assert pytest_line == "python -m pytest -q -p no:cacheprovider -n 2"
    assert "pip install --quiet -e '.[test]'" in CI
    assert install_test == f"pip install -e '.[test]' && {pytest_line}"
    assert install_run.startswith("pip install -e . && symgdp analyze ")
    # the quick check is the smoke marker, registered with pytest
    assert "add `-m smoke`" in README
    assert '"smoke:' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


COMMANDS = symgdp_commands()


@pytest.fixture(scope="module")
def command_runs(tmp_path_factory):
    """Every command started at the first request, all at once (each pays the import of
    SymPy/SciPy) when the tests run in one process; under pytest-xdist a worker starts only
    the commands of the tests it was given (the others would run for nothing).  Every
    process is reaped and its pipes closed at teardown (an unread pipe left to the garbage
    collector is a ResourceWarning in whichever test runs next: an error under the suite's
    warning filter)."""
    cwd = tmp_path_factory.mktemp("readme")
    procs: dict[int, subprocess.Popen] = {}

    def start(index: int) -> None:
        procs[index] = subprocess.Popen(
            [sys.executable, "-m", "symgdp", *COMMANDS[index][1:]], cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def get(index: int) -> subprocess.Popen:
        if not procs and not os.environ.get("PYTEST_XDIST_WORKER"):
            for i in range(len(COMMANDS)):
                start(i)
        if index not in procs:
            start(index)
        return procs[index]

    yield get
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # reaps the process and closes its pipes


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(COMMANDS)),
                         ids=[" ".join(w[1:3]) for w in COMMANDS])
def test_readme_symgdp_commands_succeed(index, command_runs):
    proc = command_runs(index)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "verdict" in stdout or "\\begin{align*}" in stdout


def test_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#:]+)\)", README):
        if target == "docs/benchmarks.md":
            continue  # written by the benchmark scripts; the site has a placeholder
        assert (ROOT / target).exists(), target
