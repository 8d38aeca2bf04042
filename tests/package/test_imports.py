"""What ``import symgdp`` loads: nothing heavy until a stage needs it (behaviour, not timing).

Each check runs in a fresh interpreter (a subprocess), since this test session itself has
imported everything long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke  # the README quick check runs this file

ROOT = Path(__file__).resolve().parents[2]
HEAVY_OPTIONAL = ["scipy.stats", "scipy.optimize", "matplotlib", "pandas", "dask", "tqdm",
                  "dp_accounting"]


def _loaded(code: str, names: list[str]) -> dict[str, bool]:
    """Run ``code`` in a new interpreter; which of ``names`` are then in sys.modules."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = (f"{code}\nimport json, sys\n"
              f"print(json.dumps({{n: n in sys.modules for n in {names!r}}}))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_symgdp_loads_no_numeric_library():
    """`import symgdp` alone (what the console script does first) is light."""
    got = _loaded("import symgdp", ["sympy", "scipy", "numpy", "mpmath", *HEAVY_OPTIONAL])
    assert not any(got.values()), got


def test_help_loads_neither_sympy_nor_scipy():
    code = ("import contextlib, io\nfrom symgdp.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['--help']) == 0\n")
    got = _loaded(code, ["sympy", "scipy", *HEAVY_OPTIONAL])
    assert not any(got.values()), got


@pytest.mark.slow
def test_every_public_name_without_heavy_optional_libraries():
    """Touching every public name loads SymPy and SciPy's special functions, but not
    scipy.stats, scipy.optimize, matplotlib or the other optional libraries."""
    code = "import symgdp\nfor n in symgdp.__all__:\n    getattr(symgdp, n)\n"
    got = _loaded(code, HEAVY_OPTIONAL)
    assert not any(got.values()), got


def test_public_names_resolve_to_their_objects():
    import symgdp
    import symgdp.measurement.measure
    import symgdp.present.report
    from symgdp.measurement.measure import measure
    from symgdp.present.report import report

    # a submodule import must not replace the public function of the same name
    assert symgdp.report is report and symgdp.measure is measure
    assert symgdp.mp is sys.modules["symgdp.gaussian.precise"]
    # the lazy table and __all__ list the same names (a new public name needs both)
    assert set(symgdp._LAZY) == set(symgdp.__all__)
    for name in symgdp.__all__:
        assert getattr(symgdp, name) is not None
    assert set(symgdp.__all__) <= set(dir(symgdp))
    with pytest.raises(AttributeError, match="no_such_name"):
        symgdp.no_such_name  # noqa: B018


def test_star_import_gives_every_public_name():
    ns: dict = {}
    exec("from symgdp import *", ns)
    import symgdp

    assert all(ns[n] is getattr(symgdp, n) for n in symgdp.__all__)
