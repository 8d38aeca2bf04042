"""``python -m symgdp``: the same command line as the ``symgdp`` console script."""

from __future__ import annotations

from symgdp.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
