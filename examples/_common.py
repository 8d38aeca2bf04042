"""Command line shared by the example scripts (``--out DIR``, ``--small``) and figure saving.

Not an example itself (tests/test_examples.py skips names starting with ``_``).  The
scripts are run as ``python examples/NAME.py``, which puts their own folder first on
``sys.path``, so they import this module as ``_common`` from any working directory.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def parser(doc: str, out: Path) -> argparse.ArgumentParser:
    """Parser described by the first line of ``doc`` (the script's docstring), with the
    options every example has: ``--out`` (default ``out``, which each script gives as
    ``examples/out/``, ignored by git) and ``--small``."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--out", type=Path, default=out,
                   help="output folder (default: examples/out/)")
    p.add_argument("--small", action="store_true", help="coarse settings, as run in CI")
    return p


def parse(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv`` with ``p`` and create the output folder ``args.out``."""
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def parse_args(doc: str, argv: list[str] | None, out: Path) -> argparse.Namespace:
    """The common options only: ``parse(parser(doc, out), argv)``."""
    return parse(parser(doc, out), argv)


def save_figure(fig: Any, args: argparse.Namespace, name: str) -> Path:
    """Save ``fig`` as ``name.png`` in ``args.out`` (100 dpi with ``--small``, else 200
    dpi) and as the vector figure ``name.pdf`` (fonts embedded as TrueType, ready for a
    paper: :func:`symgdp.present.plot.save`); return the PNG's path."""
    from symgdp import plot

    path = args.out / f"{name}.png"
    plot.save(fig, path, dpi=100 if args.small else 200)
    plot.save(fig, args.out / f"{name}.pdf")
    return path
