"""Generalized Gaussian noise c exp(-|x/sigma|^k) with symbolic shape, scale and sensitivity:
the derivation as formulas in the parameters, the proved tail limit, and the certified
profile once the parameters are bound.

References, each independent of the code under test:
* gamma_profile (test_gengauss): F(x_eps) - e^eps F(x_eps - Delta) with x_eps by
  mpmath.findroot and F from mpmath's regularised incomplete gamma function, 40 digits;
* the tail's rate: -log delta(eps) from gamma_profile at 60 digits against the asymptote
  (C/sigma)^k eps^(k/(k-1)), C = (sigma^k/(k Delta))^(1/(k-1)), whose ratio must tend to 1
  (the proof in symgdp.noise.gengauss squeezes delta between two tail probabilities);
* the Gaussian's tail limit from the catalogue's closed form (mechanisms.gaussian).
"""

from __future__ import annotations

import io

import flint
import mpmath
import pytest
import sympy
from test_gengauss import gamma_profile

import symgdp
from symgdp import mechanisms
from symgdp.cli.main import main
from symgdp.errors import DomainError, ProfileError, SymgdpError
from symgdp.noise.gengauss import X_EPS, GeneralizedGaussianFamily

x = sympy.Symbol("x", real=True)
k = sympy.Symbol("k", positive=True)
s = sympy.Symbol("sigma", positive=True)
DENSITY = k / (2 * s * sympy.gamma(1 / k)) * sympy.exp(-sympy.Abs(x / s) ** k)


@pytest.fixture(scope="module")
def family():
    return symgdp.additive_noise(DENSITY, variable=x)


def _upper(p, eps):
    """The source's proved upper bound on delta(eps), to 45 digits (not a float)."""
    with mpmath.workdps(50), flint.ctx.workprec(256):
        return mpmath.mpf(p.source.delta_ball(eps).upper().str(45, radius=False))


def test_the_derivation_is_in_the_parameters(family):
    d = family.meta["derivation"]
    delta = d.sensitivity
    assert isinstance(family.source, GeneralizedGaussianFamily)
    assert {v.name for v in family.source.parameters} == {"Delta", "k", "sigma"}
    assert sympy.simplify(d.loss - (sympy.Abs(x - delta) ** k - sympy.Abs(x) ** k) / s ** k) == 0
    assert d.threshold == X_EPS and "root of L(x) = eps" in d.threshold_note
    # the tail limit by shape: 0 below 2, the Gaussian's 2 Delta^2/sigma^2 at 2, oo above
    lim = family.tail_limit()
    assert lim == d.tail_limit
    assert lim.subs(k, sympy.Rational(3, 2)) == 0
    assert sympy.simplify(lim.subs(k, 2) - 2 * delta**2 / s**2) == 0
    assert lim.subs(k, 3) == sympy.oo
    assert "not GDP for k > 2" in d.verdict and "GDP for k < 2" in d.verdict
    assert "30-digit quadrature" in d.check and "k = 3/2" in d.check and "k = 3:" in d.check
    tex = d.to_latex()
    for piece in (r"\Gamma", r"x_{\varepsilon}", r"\begin{cases}", r"\infty"):
        assert piece in tex


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_the_derived_formula_is_the_profile(family, eps):
    # the profile formula shown, with x_eps from mpmath's root finder, against the
    # 40-digit reference: eps = 0.5 < L(0) = 1 puts x_eps > 0 (the Piecewise's second
    # branch), eps = 2 puts it below 0
    d = family.meta["derivation"]
    vals = {k: 3, s: 1, d.sensitivity: 1}
    f = sympy.lambdify((X_EPS, symgdp.eps), d.profile.subs(vals), "mpmath")
    with mpmath.workdps(40):
        loss = lambda t: abs(t - 1) ** 3 - abs(t) ** 3 - eps  # noqa: E731
        root = mpmath.findroot(loss, (mpmath.mpf(-8), mpmath.mpf(1)), solver="anderson")
        got = f(root, mpmath.mpf(eps))
        truth = gamma_profile(3, 1, 1, eps)
        assert abs(got - truth) <= mpmath.mpf(10) ** -30 * truth


@pytest.mark.parametrize("shape,scale,shift", [(1.5, 0.75, 1.0), (3, 2.0, 0.5),
                                               (1.25, 1.0, 2.0)])
def test_bound_parameters_give_the_certified_profile(family, shape, scale, shift):
    p = family.replace(values={"k": shape, "sigma": scale, "Delta": shift})
    assert p.source.kind == f"generalized Gaussian (k = {sympy.Rational(shape)})"
    for eps in (0.1, 1.0, 3.0):
        truth = gamma_profile(shape, scale, shift, eps)   # 40-digit mpmath reference
        got = _upper(p, eps)
        with mpmath.workdps(50):
            assert truth * (1 - mpmath.mpf(10) ** -30) <= got <= \
                truth * (1 + mpmath.mpf(10) ** -20)
        assert p(eps) >= float(truth) * (1 - 1e-15)


def test_tail_rate_behind_the_limit():
    # -log delta(eps) / ((C/sigma)^k eps^(k/(k-1))) -> 1 (60-digit reference), and the
    # ratio eps^2/(-2 log delta) moves toward the proved limit: up for k = 3 (oo), down for
    # k = 3/2 (0)
    for shape, grows in ((3, True), (1.5, False)):
        with mpmath.workdps(60):
            kk = mpmath.mpf(shape)
            c = (1 / kk) ** (1 / (kk - 1))   # sigma = Delta = 1
            gaps, ratios = [], []
            for eps in (50, 400, 3200):
                nlog = -mpmath.log(gamma_profile(shape, 1, 1, eps, dps=60))
                gaps.append(abs(nlog / (c ** kk * mpmath.mpf(eps) ** (kk / (kk - 1))) - 1))
                ratios.append(mpmath.mpf(eps) ** 2 / (2 * nlog))
        assert gaps[2] < gaps[1] < gaps[0] and gaps[2] < 0.1, (shape, gaps)
        assert (ratios[0] < ratios[1] < ratios[2]) if grows else \
            (ratios[0] > ratios[1] > ratios[2]), (shape, ratios)


def test_verdicts_once_bound(family):
    three = family.replace(values={"k": 3, "sigma": 1, "Delta": 1})
    assert three.identify().is_gdp is False
    heavy = family.replace(values={"k": 1.5, "sigma": 1, "Delta": 1})
    assert heavy.identify().is_gdp is True and heavy.tail_limit() == 0
    # k = 2, sigma = 2 (standard deviation sqrt 2), Delta = 1: the Gaussian with
    # mu = 1/sqrt(2), whose closed form's tail limit is mu^2 = 1/2
    gauss = family.replace(values={"k": 2, "sigma": 2, "Delta": 1})
    assert gauss.tail_limit() == mechanisms.gaussian(1 / sympy.sqrt(2)).tail_limit()


def test_unbound_and_bad_values_are_refused(family):
    with pytest.raises(ProfileError, match="unbound parameters Delta, k, sigma"):
        family(1.0)
    with pytest.raises(SymgdpError, match="Delta, k, sigma"):
        family.measure(eps_h=2)
    with pytest.raises(DomainError, match="k = 1/2 is below 1"):
        family.replace(values={"k": 0.5, "sigma": 1, "Delta": 1})
    with pytest.raises(DomainError, match="scale sigma must be a positive"):
        family.replace(values={"k": 3, "sigma": -1, "Delta": 1})
    bound = family.replace(values={"k": 3, "sigma": 1, "Delta": 1})
    again = bound.replace(values={"k": None})     # unbinding goes back to the family
    assert isinstance(again.source, GeneralizedGaussianFamily)
    with pytest.raises(ProfileError, match="unbound parameters k"):
        again(1.0)
    assert again.replace(values={"k": 3})(1.0) == bound(1.0)


def test_bad_symbolic_densities():
    with pytest.raises(DomainError, match="integrates to"):
        symgdp.additive_noise(2 * DENSITY, variable=x)
    kr = sympy.Symbol("k", real=True)
    with pytest.raises(DomainError, match="not proved positive"):
        symgdp.additive_noise(DENSITY.subs(k, kr), variable=x)


def test_numeric_shape_with_a_symbolic_scale():
    # k = 3 with sigma left symbolic: one sample check (sigma = 1), bound later
    p = symgdp.additive_noise(DENSITY.subs(k, 3), sensitivity=1, variable=x)
    assert {v.name for v in p.source.parameters} == {"sigma"}
    assert p.tail_limit() == sympy.oo
    q = p.replace(values={"sigma": 0.5})
    truth = gamma_profile(3, 0.5, 1, 1.0)   # 40-digit reference
    with mpmath.workdps(50):
        assert truth * (1 - mpmath.mpf(10) ** -30) <= _upper(q, 1.0) <= \
            truth * (1 + mpmath.mpf(10) ** -20)


def test_cli_binds_a_symbolic_shape():
    out, err = io.StringIO(), io.StringIO()
    code = main(["analyze", "--noise", "k/(2*sigma*gamma(1/k))*exp(-Abs(x/sigma)**k)",
                 "--set", "k=3", "--set", "sigma=1", "--set", "Delta=1", "--eps-h", "2",
                 "--tol", "1e-3"], stdout=out, stderr=err)
    text = out.getvalue()
    assert code == 0, err.getvalue()
    assert "not GDP for k > 2" in text      # the derivation's verdict, in k
    assert "verdict          not GDP" in text   # and the bound profile's
