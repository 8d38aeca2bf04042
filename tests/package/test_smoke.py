"""The smoke tour: every wing's public entry point once, on a small case, each against an
independent truth (a closed form written here, or 40-digit mpmath).

These tests are marked ``smoke`` (README's quick check, ``-m smoke``, with the README and
docs examples): a few seconds each, so the quick check finds a broken wing in minutes.  The
deep checks of every wing live in its own test folder.
"""

from __future__ import annotations

import json

import mpmath
import pytest
import sympy
from references import ref_log_delta

import symgdp
from symgdp import mechanisms

pytestmark = pytest.mark.smoke


def _phi(x: float) -> mpmath.mpf:
    return mpmath.ncdf(x)


def test_public_names_exist():
    for name in ["eps", "delta", "Profile", "mu_gdp", "delta_mu", "log_delta_mu", "eps_gdp",
                 "mu_from_pure_dp", "compose_gdp", "tradeoff_gdp", "SymgdpError", "mp"]:
        assert hasattr(symgdp, name), name


def test_errors_derive_from_base():
    for cls in [symgdp.ParseError, symgdp.ProfileError, symgdp.ConvergenceError,
                symgdp.AnalysisTimeout, symgdp.DomainError]:
        assert issubclass(cls, symgdp.SymgdpError)


def test_gaussian_family_against_mpmath():
    # truth: the textbook formula at 40 digits (tests/references.py)
    got = symgdp.log_delta_mu(2.0, 1.5)
    assert got == pytest.approx(float(ref_log_delta(2.0, 1.5)), rel=1e-14)
    mu = symgdp.mu_gdp(2.0, symgdp.delta_mu(2.0, 1.5))
    assert mu == pytest.approx(1.5, rel=1e-12)


def test_symbolic_tail_limit_in_parameters():
    # by hand: eps^2 / (2 s^2 eps^2 / A^2 - 2 log B) -> A^2 / (2 s^2)
    A, s, B = sympy.symbols("A s B", positive=True)
    lim = symgdp.Profile(B * sympy.exp(-s**2 * symgdp.eps**2 / A**2)).tail_limit()
    assert sympy.simplify(lim - A**2 / (2 * s**2)) == 0


def test_parse_refine_measure_the_gaussian():
    # the Gaussian profile of mu = 1 is exactly delta_1: sup G = 1 on every head
    m = mechanisms.gaussian(1.0).measure(eps_h=10, tol=1e-4)
    assert m.lower <= 1.0 <= m.upper and m.upper - m.lower <= 1e-3
    p = symgdp.Profile.parse("2*exp(-eps**2)")
    assert float(p.refine().breakpoint) == pytest.approx(1.4939436, abs=1e-6)


def test_compose_contains_the_closed_form():
    # four 0.5-GDP mechanisms compose to sqrt(4) * 0.5 = 1 (Dong, Roth & Su, Cor. 3.3)
    c = symgdp.compose(mechanisms.gaussian(0.5), times=4)
    assert c.mu_floor <= 1.0 <= c.mu_upper


def test_dpsgd_full_batch_is_the_gaussian():
    # q = 1: four steps of the Gaussian with sigma 2 compose to sqrt(4) / 2 = 1
    r = symgdp.dpsgd(1.0, 2.0, 4)
    assert r.mu_floor <= 1.0 <= r.mu_upper


def test_dp_event_contains_the_closed_form():
    from dp_accounting import dp_event as E

    c = symgdp.from_dp_event(E.SelfComposedDpEvent(E.GaussianDpEvent(2.0), 4))
    assert c.mu_floor <= 1.0 <= c.mu_upper


def test_zcdp_tail_limit_is_two_rho():
    # (0, rho)-zCDP: the tail limit of the implied profile is 2 rho (Bun & Steinke 2016)
    p = symgdp.Profile.from_zcdp(0.125)
    assert float(p.tail_limit()) == pytest.approx(0.25)


def test_calibrate_the_gaussian_noise():
    # mu = 1/sigma for the Gaussian mechanism: sigma = 2 gives mu = 1/2
    s = sympy.Symbol("s", positive=True)
    r = symgdp.calibrate(mechanisms.gaussian(1 / s), "s", target_mu=0.5, bracket=(1, 10))
    assert r.measurement.upper <= 0.5
    assert r.value == pytest.approx(2.0, rel=1e-3)


def test_risk_advantage_of_one_gdp():
    # the advantage of a 1-GDP mechanism is 2 Phi(1/2) - 1 (Dong, Roth & Su 2022)
    b = symgdp.risk.advantage(1.0)
    lo, hi = b.lower, b.upper
    truth = float(2 * _phi(0.5) - 1)
    assert lo <= truth <= hi and hi - lo < 1e-9


def test_report_and_cli(capsys):
    r = symgdp.report(symgdp.Profile.parse("2*exp(-eps**2)"), eps_h=20)
    assert r.verdict == "GDP" and "align" in r.to_latex()
    from symgdp.cli.main import main

    assert main(["analyze", "2*exp(-eps**2)", "--eps-h", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mu_lower"] <= out["mu_upper"]


def test_plot_draws_a_figure():
    fig = symgdp.plot.profiles([mechanisms.laplace(1.0)], mu=[1.0], eps_max=3)
    assert fig.axes


def test_additive_noise_derives_the_gaussian():
    # Gaussian noise of scale 2, sensitivity 1: the profile of the 1/2-GDP Gaussian mechanism
    # (Balle & Wang 2018); at eps = 1 against the closed form delta_mu(1, 1/2) in mpmath
    x = sympy.Symbol("x", real=True)
    p = symgdp.additive_noise(sympy.exp(-x**2 / 8) / sympy.sqrt(8 * sympy.pi), sensitivity=1,
                              variable=x)
    truth = _phi(-2 + 0.25) - mpmath.e * _phi(-2 - 0.25)
    assert float(p(1.0)) == pytest.approx(float(truth), rel=1e-12)
