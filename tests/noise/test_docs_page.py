"""docs/noise.md: its Python blocks run in order, as a reader would paste them."""

from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_noise_page_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "noise.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(code) == 8
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
            re.findall(r"^(\w+)\s+([\d.]+) <= mu <= ([\d.]+)$", printed, re.M)}
    assert set(rows) == {"Gaussian", "Laplace", "logistic"}
    assert rows["Gaussian"][0] <= 1.0 <= rows["Gaussian"][1]
    assert rows["Laplace"][0] <= 1.3710 and rows["Laplace"][1] >= 1.3709
    assert rows["Gaussian"][1] < rows["logistic"][0] and rows["logistic"][1] < rows["Laplace"][0]
    # section 5: the geometric's closed form (1 - e^{eps - 1/b})/(1 + e^{-1/b}) below 1/b
    assert "Piecewise((0, varepsilon >= 1/b)" in printed
    assert "certified summation" in printed
    # discrete Gaussian, sigma = 2, Delta = 1, eps = 1: the 40-digit direct sum of the
    # definition (computed here, independently) lies below the printed upper bound
    import mpmath

    with mpmath.workdps(40):
        w = {x: mpmath.exp(-mpmath.mpf(x) ** 2 / 8) for x in range(-80, 82)}
        total = mpmath.fsum(w.values())
        ref = mpmath.fsum(max(0, w[x] - mpmath.e * w[x - 1]) for x in range(-79, 81)) / total
    bound = float(re.search(r"discrete Gaussian delta\(1\) <= ([\d.e+-]+)", printed)[1])
    assert ref <= bound * (1 + 1e-6) and bound <= ref * (1 + 1e-5)
    # section 6: k = 2 at variance 1 is the Gaussian (mu = 1), k = 1 Laplace (1.371)
    shapes = {float(k): (float(lo), float(up)) for k, lo, up in
              re.findall(r"k = ([\d.]+): ([\d.]+) <= mu <= ([\d.]+)", printed)}
    assert shapes[2.0][0] <= 1.0 + 1e-3 and shapes[2.0][1] >= 1.0 - 1e-3
    assert shapes[1.0][0] <= 1.3710 <= shapes[1.0][1] + 1e-3
    assert shapes[2.0][1] < shapes[1.5][0] and shapes[1.5][1] < shapes[1.0][0]
    # section 6, the shape as a symbol: the proved tail limit by cases, and k = 3 bound:
    # not GDP, its delta(1) above the 40-digit incomplete-gamma reference (test_gengauss)
    from test_gengauss import gamma_profile

    assert "Piecewise((0, k < 2), (2*Delta**2/sigma**2, Eq(k, 2)), (oo, True))" in printed
    gdp, value = re.search(r"^(True|False) ([\d.e-]+)$", printed, re.M).groups()
    truth = gamma_profile(3, 1, 1, 1.0)
    assert gdp == "False" and truth <= float(value) <= truth * (1 + 1e-12)
    # section 7: the staircase at gamma* against Laplace, delta(0) against the closed forms
    # (1 - e^(-e0/2)/2)(1 - e^(-e0)) (the staircase at gamma*, module notes) and
    # 1 - e^(-e0/2) (Laplace), and the page's claim that the staircase's mu is larger
    stairs = re.findall(r"eps0 = ([\d.]+): delta\(0\) ([\d.]+) staircase, ([\d.]+) Laplace; "
                        r"mu in \[([\d.]+), ([\d.]+)\] staircase, \[([\d.]+), ([\d.]+)\]",
                        printed)
    assert len(stairs) == 2
    for row in stairs:
        e0, ds, dl, sl, su, ll, lu = map(float, row)
        assert abs(ds - (1 - math.exp(-e0 / 2) / 2) * (1 - math.exp(-e0))) < 1e-6
        assert abs(dl - (1 - math.exp(-e0 / 2))) < 1e-6
        assert lu < sl <= su
    # section 8: Student-t noise, eps0 = (nu + 1) asinh(1/(2 sqrt(nu))) and, for the
    # Cauchy, delta(0) = P(|Z| < 1/2) = 2 atan(1/2)/pi (by hand); the bracket holds
    # G(0) = 2 Phi^-1((1 + delta(0))/2) <= mu, on the whole line
    heavy = re.findall(r"nu = (\d+): eps0 = ([\d.]+), delta\(0\) = ([\d.]+), ([\d.]+) <= "
                       r"mu <= ([\d.]+) \(whole line: True\)", printed)
    assert [int(r[0]) for r in heavy] == [1, 3]
    for nu, e0, d0, lo, up in heavy:
        assert abs(float(e0) - (int(nu) + 1) * math.asinh(1 / (2 * math.sqrt(int(nu))))) < 1e-6
        g0 = 2 * math.sqrt(2) * float(mpmath.erfinv(float(d0)))
        assert float(lo) <= float(up) and float(up) >= g0 - 1e-4
    assert abs(float(heavy[0][2]) - 2 * math.atan(0.5) / math.pi) < 1e-6
