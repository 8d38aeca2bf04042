"""symgdp analyze --noise: a density string in, the derivation and mu out."""

from __future__ import annotations

import io
import json

from symgdp import mechanisms
from symgdp.cli.main import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_analyze_noise_laplace():
    code, out, err = run("analyze", "--noise", "exp(-abs(x)/b)/(2*b)", "--set", "b=2",
                         "--set", "Delta=1", "--json", "--eps-h", "5")
    assert code == 0, err
    d = json.loads(out)
    tex = d["latex"]["report"]
    for row in ("privacy loss", "threshold", "monotonicity", "verdict"):
        assert rf"\text{{{row}:}}" in tex
    # the derived profile is Laplace with eps0 = Delta/b = 1/2: its bracket must overlap
    # the one measured on the catalogue's hand-written profile
    m = mechanisms.laplace(0.5).measure(eps_h=5)
    assert d["mu_lower"] <= m.upper and m.lower <= d["mu_upper"]


def test_analyze_noise_refuses_other_readings():
    code, _, err = run("analyze", "--noise", "--tradeoff", "exp(-x**2/2)/sqrt(2*pi)")
    assert code == 2 and "--noise" in err


def test_analyze_noise_bad_density_is_bad_input():
    code, _, err = run("analyze", "--noise", "exp(-x**2/2)", "--set", "Delta=1")
    assert code == 2 and "integrates to sqrt(2)*sqrt(pi)" in err
