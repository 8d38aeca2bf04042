"""The worked examples of docs/notions.md run, and print what the page says they print.

The page's Python blocks are executed in order in one namespace (every section: which
notion to use, RDP / zCDP / trade-off curve input, bands of symbolic and numeric profiles,
risk, audits, groups, the figures); each commented value the page shows after
``print(...)`` is checked against an independent reference in test_notions.py /
test_tradeoff_band.py / test_bands_numeric.py / test_risk.py / test_audit.py, here only
that the blocks run and print a few of the quoted values.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "notions.md"
SECTIONS = ("## Which notion to use", "## Other notions as input", "## Trade-off bands",
            "## Attack risk", "## Audits", "## Groups of records", "## Figures")


def _blocks() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for part in re.split(r"(?m)^(?=## )", text):
        if part.startswith(SECTIONS):
            out += re.findall(r"```python\n(.*?)```", part, flags=re.S)
    return out


@pytest.mark.slow
def test_notions_examples_run():
    blocks = _blocks()
    assert len(blocks) >= 12
    ns: dict = {"__name__": "__notions__"}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), ns)
    out = buf.getvalue()
    # a few of the printed values the page quotes
    for quoted in ("0.90763775", "closed form (laplace)", "1.0300639976244337",
                   "0.509862 0.509862", "2.0", "1.0 1.5405", "1.00000000000000",
                   "conjugate True", "0.87385408 0.48139827 0.09342865", "0.9967 True"):
        assert quoted in out, quoted
