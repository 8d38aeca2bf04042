"""Fixtures shared by the package-level tests.

``docs_build``: one ``mkdocs build --strict`` of the documentation site per test run,
shared by tests/package/test_docs.py (the strict build and its pages) and
tests/package/test_docs_browser.py (the pages in Chromium).  Each of them used to build the
site on its own (about 40 s of CPU each).  Under pytest-xdist the workers share the run's
base temporary folder, so the first worker that needs the site builds it under a file lock
and the others read the same result (return code, stderr and the folder).  A failed build
fails every test that asks for it, with the build's stderr.

``small_tour``: one run of ``examples/mechanisms_tour.py --small`` per test run, shared the
same way by tests/package/test_examples.py (the script runs) and
tests/package/test_examples_tour.py (every row of its JSON has a bracket); the two used to
compute the whole small tour each (about 20 s of CPU each).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _shared(tmp_path_factory, name: str, make) -> tuple[Path, dict]:
    """``make(folder)`` run once per test run (across xdist workers, under a file lock):
    the folder it wrote into and its JSON-able outcome."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this run (pytest-xdist's documented way)
    root = base / name
    root.mkdir(exist_ok=True)
    folder, result = root / "out", root / "result.json"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if result.exists():
            outcome = json.loads(result.read_text(encoding="utf-8"))
        else:
            outcome = make(folder)
            result.write_text(json.dumps(outcome), encoding="utf-8")
    return folder, outcome


def _build(site: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(site)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return {"returncode": proc.returncode, "stderr": proc.stderr[-4000:]}


@pytest.fixture(scope="session")
def docs_build(tmp_path_factory) -> Path:
    """The folder of the site built by ``mkdocs build --strict`` (asserted to succeed)."""
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed")
    pytest.importorskip("mkdocstrings_handlers.python",
                        reason="mkdocstrings-python is not installed")
    site, outcome = _shared(tmp_path_factory, "symgdp-docs-build", _build)
    assert outcome["returncode"] == 0, outcome["stderr"]
    return site


def _run_small_tour(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="error")
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "mechanisms_tour.py"),
                           "--small", "--out", str(out)], capture_output=True, text=True,
                          env=env, cwd=out.parent, timeout=600)
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


@pytest.fixture(scope="session")
def small_tour(tmp_path_factory) -> tuple[Path, dict]:
    """(output folder, {returncode, stdout, stderr}) of ``mechanisms_tour.py --small``."""
    return _shared(tmp_path_factory, "symgdp-small-tour", _run_small_tour)
