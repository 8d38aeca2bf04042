"""Checks of the *installed* package (run by .ci/run with the wheel's own interpreter, from a
folder outside the source tree, so that nothing is imported from the checkout).

* every module of the source tree is in the wheel, the sdist, and imports from the install;
* the package metadata names the version, the console script and the dependencies.

Usage: python check_installed.py SOURCE_ROOT WHEEL SDIST
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import pkgutil
import sys
import tarfile
import zipfile
from pathlib import Path


def main(root: str, wheel: str, sdist: str) -> int:
    src = Path(root) / "symgdp"
    expected = {p.relative_to(src.parent).as_posix() for p in src.rglob("*.py")}
    expected.add("symgdp/py.typed")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected - in_wheel)
    assert not missing, f"the wheel leaves out {missing}"
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    missing = sorted(expected - names)
    assert not missing, f"the sdist leaves out {missing}"

    import symgdp

    here = Path(symgdp.__file__).resolve().parent
    assert Path(root).resolve() not in here.parents, f"symgdp imported from the checkout: {here}"
    mods = ["symgdp"] + [m.name for m in pkgutil.walk_packages(symgdp.__path__, "symgdp.")]
    n_src = len([p for p in expected if p.endswith(".py")])
    assert len(mods) == n_src, f"{len(mods)} modules installed, {n_src} in the source tree"
    for name in mods:
        importlib.import_module(name)
    for name in symgdp.__all__:
        getattr(symgdp, name)

    meta = md.metadata("symgdp")
    assert meta["Name"] == "symgdp" and md.version("symgdp") == symgdp.__version__
    scripts = {e.name: e.value for e in md.entry_points(group="console_scripts")}
    assert scripts.get("symgdp") == "symgdp.cli.main:main", scripts.get("symgdp")
    req = {r.split(">")[0].split("=")[0].split("[")[0].strip().lower()
           for r in (md.requires("symgdp") or []) if "extra ==" not in r}
    need = {"sympy", "mpmath", "numpy", "scipy", "matplotlib", "python-flint", "dp-accounting",
            "tqdm"}
    assert need <= req, f"dependencies missing from the metadata: {sorted(need - req)}"
    print(f"installed package: {len(mods)} modules import, wheel and sdist complete, "
          f"metadata {meta['Name']} {md.version('symgdp')}, console script symgdp")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
