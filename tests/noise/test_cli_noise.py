"""symgdp analyze --noise: a density string in, the derivation and mu out."""

from __future__ import annotations

import io
import json

import pytest

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


def test_analyze_integer_noise_discrete_laplace():
    # the discrete Laplace PMF with t = 2, its normaliser written as a Sum; reference: the
    # closed form delta(eps) = (e^(1/t) - e^eps)/(e^(1/t) + 1) for eps < 1/t (0 beyond),
    # itself checked here against a 40-digit direct sum of max(0, p(x) - e^eps p(x - 1))
    import mpmath
    import sympy

    from symgdp import Profile, eps

    code, out, err = run("analyze", "--noise", "--support", "integers",
                         "exp(-abs(x)/t)/Sum(exp(-abs(j)/t), (j, -oo, oo))", "--set", "t=2",
                         "--json", "--eps-h", "2")
    assert code == 0, err
    d = json.loads(out)
    closed = sympy.Piecewise((0, eps >= sympy.Rational(1, 2)),
                             ((sympy.exp(sympy.Rational(1, 2)) - sympy.exp(eps))
                              / (sympy.exp(sympy.Rational(1, 2)) + 1), True))
    with mpmath.workdps(40):
        c = (1 - mpmath.exp(-0.5)) / (1 + mpmath.exp(-0.5))

        def direct(e):
            return mpmath.nsum(lambda x: max(0, c * mpmath.exp(-abs(x) / 2)
                                             - mpmath.exp(e) * c * mpmath.exp(-abs(x - 1) / 2)),
                               [-mpmath.inf, mpmath.inf])

        for e in (0, 0.2, 0.45):
            e = mpmath.mpf(e)
            closed_at = (mpmath.exp(0.5) - mpmath.exp(e)) / (mpmath.exp(0.5) + 1)
            assert abs(direct(e) - closed_at) < 1e-30
            assert abs(closed.subs(eps, sympy.Float(e, 40)).evalf(40) - closed_at) < 1e-30
    m = Profile(closed).measure(eps_h=2)
    assert d["mu_lower"] <= m.upper and m.lower <= d["mu_upper"]


@pytest.mark.parametrize("argv, why", [
    (("analyze", "--support", "integers", "exp(-eps)"), "--noise"),
    (("analyze", "--noise", "--support", "integers", "exp(-abs(x))/Sum(exp(-abs(j)), "
      "(j, -oo, oo))", "--set", "Delta=1.5"), "positive integer"),
    (("analyze", "--noise", "--support", "integers", "exp(-abs(x))/Sum(exp(-abs(j)), "
      "(j, -oo, oo))", "--set", "b=2"), "not a parameter"),
])
def test_analyze_integer_noise_bad_input(argv, why):
    code, _, err = run(*argv)
    assert code == 2 and why in err, err


def test_analyze_noise_cauchy():
    # the Cauchy density goes to the Student-t route (symgdp.noise.student), end to end;
    # measured here with the published staircase algorithm (test_student measures it with
    # the default search)
    import mpmath

    code, out, err = run("analyze", "--noise", "1/(pi*(1+x**2))", "--set", "Delta=1",
                         "--method", "staircase", "--tol", "1e-3", "--json")
    assert code == 0, err
    d = json.loads(out)
    tex = d["latex"]["report"]
    for row in ("privacy loss", "level set", "directions", "verdict"):
        assert rf"\text{{{row}:}}" in tex
    # reference at eps = 0 by hand: delta(0) = P(|Z| < 1/2) = 2 atan(1/2)/pi, and
    # delta_mu(0) = 2 Phi(mu/2) - 1, so G(0) = 2 Phi^-1((1 + delta(0))/2) <= sup G
    with mpmath.workdps(30):
        d0 = 2 * mpmath.atan(mpmath.mpf(1) / 2) / mpmath.pi
        g0 = 2 * mpmath.sqrt(2) * mpmath.erfinv(d0)
    assert d["mu_upper"] >= g0 and d["mu_upper"] - d["mu_lower"] <= 2e-3
    assert d["mu_lower"] <= g0 + 2e-3
