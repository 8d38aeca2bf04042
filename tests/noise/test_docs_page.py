"""docs/noise.md: its Python blocks run in order, as a reader would paste them."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_noise_page_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "noise.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(code) == 3
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in code:
            exec(compile(block, "noise.md", "exec"), namespace)
    printed = out.getvalue()
    assert r"\begin{align*}" in printed and "privacy loss" in printed
    # the page's claims: the Gaussian of variance 1 is 1-GDP (Dong, Roth & Su 2021, Thm
    # 2.7), Laplace's mu is about 1.371, and logistic noise lies strictly in between
    rows = {name: (float(lo), float(up)) for name, lo, up in
            re.findall(r"(\w+)\s+([\d.]+) <= mu <= ([\d.]+)", printed)}
    assert set(rows) == {"Gaussian", "Laplace", "logistic"}
    assert rows["Gaussian"][0] <= 1.0 <= rows["Gaussian"][1]
    assert rows["Laplace"][0] <= 1.3710 and rows["Laplace"][1] >= 1.3709
    assert rows["Gaussian"][1] < rows["logistic"][0] and rows["logistic"][1] < rows["Laplace"][0]
