"""The surface a researcher meets in the second week: certification by default everywhere,
failure probabilities that never print as 0, natural mechanism parameters, LaTeX names a
reader expects, and a command line that checks domains and suggests what was meant.

Every numeric check compares against an independent reference, named in a comment:
40-digit mpmath for probabilities, closed forms for the mechanisms' profiles.
"""

from __future__ import annotations

import copy
import io
import math
import pickle
import re
from decimal import Decimal

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import mechanisms
from symgdp.cli.main import main
from symgdp.errors import DomainError
from symgdp.numerics.decimals import Probability, latex_names


def _exp40(log_p: float) -> mpmath.mpf:
    """Reference: exp(log_p) at 40 digits (mpmath), with no float64 underflow."""
    with mpmath.workdps(40):
        return mpmath.exp(mpmath.mpf(log_p))


def _dec(text: str) -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.mpf(text)


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(args, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# -- Probability: a positive bound never prints as 0 ---------------------------------------


@settings(max_examples=200, deadline=None, database=None)
@given(st.floats(min_value=-1e7, max_value=-1e-6, allow_nan=False))
def test_probability_prints_an_upper_bound_from_its_log(log_p):
    p = Probability.from_log(log_p)
    truth = _exp40(log_p)  # reference: 40-digit mpmath
    assert float(p) > 0 and p.log == log_p
    assert float(p) >= truth  # the float itself is an upper bound (never 0.0)
    for text in (repr(p), str(p), f"{p}", f"{p:.3e}", f"{p:.2g}", f"{p:.4G}"):
        assert _dec(text) > 0, text
        assert _dec(text) >= truth, (text, truth)
        # rounded up to the digits shown: within one unit of the last digit (2 digits at
        # least, relative 0.11), plus the float error of log_p itself
        assert _dec(text) <= truth * (1 + 0.11 + 1e-15 * abs(log_p)), (text, truth)
    # a fixed-point format rounds a positive bound up to its last decimal, never to 0
    assert _dec(f"{p:.3f}") >= truth and f"{p:.3f}" != "0.000"


def test_probability_of_the_tutorial_prints_like_the_cli():
    # exp(-2323.98): reference 5.1087e-1010 (mpmath); float64 underflows to 0.0
    log_p = -2323.98
    assert math.exp(log_p) == 0.0
    p = Probability.from_log(log_p)
    assert repr(p) == str(p) == "5.2e-1010" and p.underflows
    assert f"{p:.3e}" == "5.109e-1010"  # 5.10869466...e-1010 rounded up
    assert _dec(f"{p:.3e}") >= _exp40(log_p)
    assert f"failure probability <= {p}" == "failure probability <= 5.2e-1010"
    assert f"{p:>12}" == "   5.2e-1010"


def test_probability_in_float_range_is_the_float_and_rounds_up_in_format():
    p = Probability(4.2998e-09)
    assert repr(p) == "4.2998e-09" and float(p) == 4.2998e-09
    assert f"{p:.2g}" == "4.3e-09"
    # rounded up from the float's exact binary value (reference: decimal.Decimal of it),
    # by at most one unit of the last digit shown
    exact = Decimal(4.2998e-09)
    for spec, unit in ((".4e", Decimal("1e-13")), (".6g", Decimal("1e-14"))):
        shown = Decimal(format(p, spec))
        assert exact <= shown <= exact + unit, (spec, shown)
    third = Probability(1 / 3)  # reference: 0.333... < 0.334
    assert f"{third:.3f}" == "0.334" and f"{third:.1%}" == "33.4%"
    assert Decimal(f"{third:.5g}") >= Decimal(1 / 3)


def test_probability_edges_zero_one_and_bad_values():
    zero = Probability(0.0)  # an exact 0 (a proof, not an underflow) prints as 0
    assert repr(zero) == "0.0" and zero.log == -math.inf and not zero.underflows
    assert Probability.from_log(-math.inf) == 0.0
    assert Probability.from_log(0.0) == 1.0 and Probability.from_log(5.0) == 1.0
    # from a log that float64 rounds: the bound is not below the true 0.25
    assert Probability.from_log(math.log(0.25)) >= 0.25
    for bad in (-0.1, 1.5, math.nan):
        with pytest.raises(DomainError):
            Probability(bad)
    with pytest.raises(DomainError):
        Probability.from_log(math.nan)


def test_probability_keeps_its_log_through_pickle_and_copy():
    p = Probability.from_log(-5000.0)
    for q in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert isinstance(q, Probability) and q.log == -5000.0 and str(q) == str(p)
    assert type(p + 0.0) is float  # arithmetic gives plain floats


# -- LaTeX names ------------------------------------------------------------------------


@pytest.mark.parametrize("name, tex", [
    ("eps0", r"\varepsilon_{0}"), ("eps_0", r"\varepsilon_{0}"),
    ("epsilon0", r"\varepsilon_{0}"), ("eps", r"\varepsilon"), ("eps_h", r"\varepsilon_{h}"),
    ("eps_tail", r"\varepsilon_{\mathrm{tail}}"), ("sigma", r"\sigma"),
    ("sigma0", r"\sigma_{0}"), ("mu", r"\mu"), ("gamma", r"\gamma"),
    ("delta0", r"\delta_{0}"), ("lam", r"\lambda"), ("sigma_max", r"\sigma_{\mathrm{max}}"),
    ("B", "B"), ("q", "q"),
])
def test_parameter_names_render_as_a_reader_expects(name, tex):
    x = sympy.Symbol(name, positive=True)
    assert sympy.latex(x, symbol_names=latex_names(x)) == tex


def test_report_latex_uses_the_names_and_prints_an_exact_zero_exactly():
    from symgdp.present.report import report

    # the Laplace profile (eps0 = 1) is 0 beyond eps0: its tail limit is exactly 0
    # (reference: the closed form (1 - e^{(eps - 1)/2})_+ vanishes for eps >= 1)
    r = report("Max(0, 1 - exp((eps - eps0)/2))", values={"eps0": 1}, eps_h=5, tol=1e-4)
    tex = r.to_latex()
    assert r"\varepsilon_{0} = 1" in tex and "eps_{0}" not in tex
    assert r"\lim G = 0 \\" in tex and r"0\ldots" not in tex
    # an irrational mu_tail keeps its digits rounded down, with \ldots
    r2 = report("exp(-eps**2/3)", eps_h=20, tol=1e-4)
    # reference: lim eps^2/(-2 log delta) = 3/2, mu_tail = sqrt(3/2) = 1.2247448713...
    assert r"\lim G = 1.2247448\ldots" in r2.to_latex()


# -- certification: one default everywhere ------------------------------------------------


@pytest.mark.slow
def test_report_certifies_by_default_like_the_cli():
    from symgdp.present.report import report

    expr = "2*exp(-eps**2)"
    r = report(expr, eps_h=20, tol=1e-4)
    assert r.measurement.certified and r"\text{certified}" in r.to_latex()
    status, out, err = run(["analyze", expr, "--eps-h", "20", "--tol", "1e-4", "--latex"])
    assert status == 0 and r"\text{certified}" in out
    # the same bracket both ways; reference: G's supremum of 2 exp(-eps^2) lies inside
    # the float64 run's bracket too (a second search)
    f = report(expr, eps_h=20, tol=1e-4, certify=False).measurement
    assert not f.certified and r"\text{float64}" in report(expr, eps_h=20, tol=1e-4,
                                                           certify=False).to_latex()
    m = r.measurement
    assert max(m.lower, f.lower) <= min(m.upper, f.upper)


def test_every_entry_point_defaults_to_automatic_certification():
    import inspect

    from symgdp.measurement.measure import measure
    from symgdp.planning.calibrate import calibrate
    from symgdp.planning.sweep import sweep
    from symgdp.present.report import report

    for fn in (report, measure, calibrate, sweep):
        assert inspect.signature(fn).parameters["certify"].default is None, fn.__name__


# -- natural parameters --------------------------------------------------------------------


def _laplace_ref(eps: float, eps0: float) -> float:
    """Reference: the closed form (1 - e^{(eps - eps0)/2})_+ (Balle, Barthe & Gaboardi)."""
    return max(0.0, 1.0 - math.exp((eps - eps0) / 2))


def _rr_ref(eps: float, p: float) -> mpmath.mpf:
    """Reference: randomized response telling the truth with probability p, at 40 digits:
    (p - (1 - p) e^eps)_+ (the hockey-stick divergence of Bernoulli(p) vs Bernoulli(1-p))."""
    with mpmath.workdps(40):
        p = mpmath.mpf(p)
        return max(mpmath.mpf(0), p - (1 - p) * mpmath.exp(eps))


@pytest.mark.parametrize("b, sensitivity", [(2.0, 2.0), (0.5, 1.0), (3.0, 0.75)])
def test_laplace_by_scale(b, sensitivity):
    p = mechanisms.laplace(b=b, sensitivity=sensitivity)
    for eps in (0.0, 0.3, 1.0, 2.5, 7.0):
        assert p(eps) == pytest.approx(_laplace_ref(eps, sensitivity / b), rel=1e-12, abs=1e-300)
    assert float(p.meta["eps0"]) == pytest.approx(sensitivity / b, rel=1e-15)


@pytest.mark.parametrize("truth", [0.5, 0.6, 0.75, 0.99])
def test_randomized_response_by_truth_probability(truth):
    p = mechanisms.randomized_response(p=truth)
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0):
        ref = _rr_ref(eps, truth)
        assert p(eps) == pytest.approx(float(ref), rel=1e-12, abs=1e-15)
    with mpmath.workdps(40):  # eps0 = log(p / (1 - p))
        assert float(p.meta["eps0"]) == pytest.approx(
            float(mpmath.log(mpmath.mpf(truth) / (1 - mpmath.mpf(truth)))), rel=1e-12, abs=1e-15)


def test_natural_parameters_exactly_one_alternative():
    cases = [
        (lambda: mechanisms.laplace(), "eps0 and b"),
        (lambda: mechanisms.laplace(1.0, b=2.0), "eps0 and b"),
        (lambda: mechanisms.laplace(1.0, sensitivity=2), "sensitivity"),
        (lambda: mechanisms.laplace(b=-1), "b"),
        (lambda: mechanisms.laplace(b=0), "b"),
        (lambda: mechanisms.randomized_response(), "eps0 and p"),
        (lambda: mechanisms.randomized_response(1.0, p=0.7), "eps0 and p"),
        (lambda: mechanisms.randomized_response(p=0.3), "[1/2, 1)"),
        (lambda: mechanisms.randomized_response(p=1), "[1/2, 1)"),
        (lambda: mechanisms.randomized_response(p=sympy.Rational(1, 4)), "[1/2, 1)"),
    ]
    for make, word in cases:
        with pytest.raises(DomainError, match=re.escape(word)):
            make()


def test_natural_parameters_stay_symbolic():
    x = sympy.Symbol("x", positive=True)
    lap = mechanisms.laplace(b=x)
    assert x in lap.expr.free_symbols and lap.unbound_symbols == {x}
    rr = mechanisms.randomized_response(p=x)  # 1/2 <= x < 1 undecidable: accepted
    assert x in rr.expr.free_symbols
    with pytest.raises(DomainError):  # decidable: -x < 0
        mechanisms.laplace(b=-x)
    with pytest.raises(DomainError):  # decidable: x + 1 > 1
        mechanisms.randomized_response(p=x + 1)
    # bound later, the symbolic Laplace equals the closed form
    bound = lap.replace(values={**{str(k): v for k, v in lap.values.items()}, "x": 2})
    assert bound(0.5) == pytest.approx(_laplace_ref(0.5, 0.5), rel=1e-12)


# -- the command line checks domains -----------------------------------------------------

TRADEOFF = "sigma = sqrt(2*log(1.25/delta))/eps"


@pytest.mark.parametrize("args, words", [
    (["analyze", "--tradeoff", TRADEOFF, "--set", "sigma=-1.5"], ["sigma", "positive", "-1.5"]),
    (["analyze", "B*exp(-eps**2)", "--set", "B=0"], ["B", "positive"]),
    (["sweep", "B*exp(-sigma**2*eps**2)", "--set", "B=1", "--grid", "sigma=-1:2:4"],
     ["--grid sigma=-1:2:4", "sigma", "positive"]),
    (["calibrate", "B*exp(-sigma**2*eps**2)", "--param", "sigma", "--target-mu", "1",
      "--set", "B=1", "--bracket=-1,5"], ["--bracket", "sigma", "positive"]),
    (["compose", "B*exp(-eps**2)", "--set", "B=-2", "--times", "3"], ["B", "positive"]),
])
def test_set_and_grid_values_respect_the_assumptions(args, words):
    status, out, err = run(args)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize("args, words", [
    (["analyze", "exp(-eps**2)", "--eps-h", "-5"], ["--eps-h", "positive"]),
    (["compose", "exp(-eps**2)", "--times", "-3"], ["--times", "at least 1"]),
    (["calibrate", "B*exp(-sigma**2*eps**2)", "--param", "sigma", "--target-mu", "-1"],
     ["--target-mu", "positive"]),
    (["calibrate", "B*exp(-sigma**2*eps**2)", "--param", "sigma", "--target-eps", "-1",
      "--target-delta", "1e-5"], ["--target-eps", "positive"]),
    (["calibrate", "B*exp(-sigma**2*eps**2)", "--param", "sigma", "--target-mu", "1",
      "--bracket", "-1,5"], ["--bracket", "--bracket=-1,5"]),
])
def test_numeric_options_refuse_with_their_own_message(args, words):
    status, out, err = run(args)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert "goes after '--'" not in err, err
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize("args, guess", [
    (["analyse", "exp(-eps**2)"], "'analyze'"),
    (["swep", "exp(-eps**2)"], "'sweep'"),
    (["analyze", "exp(-eps**2)", "--eps-hh", "5"], "'--eps-h'"),
    (["analyze", "exp(-eps**2)", "--jsn"], "'--json'"),
    (["analyze", "exp(-eps**2)", "--method", "stair"], "'staircase'"),
])
def test_did_you_mean(args, guess):
    status, _, err = run(args)
    assert status == 2 and err.count("\n") == 1 and f"did you mean {guess}?" in err, err


def test_an_expression_with_a_leading_minus_still_gets_its_hint():
    status, _, err = run(["analyze", "-exp(-eps)"])
    assert status == 2 and "goes after '--'" in err


def test_an_existing_sweep_file_names_the_cli_option(tmp_path):
    out = tmp_path / "mu.jsonl"
    out.write_text('{"x": 1}\n')
    status, _, err = run(["sweep", "B*exp(-eps**2)", "--grid", "B=1", "--out", str(out)])
    assert status == 2 and "--resume" in err and "resume=True" not in err, err


@pytest.mark.slow
def test_a_positive_value_still_runs_and_gives_the_gaussian_mu():
    import json

    # sigma = sqrt(2 log(1.25/delta))/eps gives delta = 1.25 exp(-sigma^2 eps^2 / 2):
    # the tail limit is 1/sigma^2 (reference: closed form), mu_tail = 1/1.5
    status, out, err = run(["analyze", "--tradeoff", TRADEOFF, "--set", "sigma=1.5",
                            "--eps-h", "20", "--tol", "1e-4", "--json"])
    assert status == 0, err
    d = json.loads(out)
    assert d["mu_tail"] == pytest.approx(1 / 1.5, rel=1e-12)
    assert d["mu_lower"] <= d["mu_upper"]


def test_library_messages_are_put_in_the_command_lines_words():
    status, _, err = run(["analyze", "sigma = exp(-eps)"])
    assert status == 2 and "pass --tradeoff" in err and "tradeoff=True" not in err, err
    from symgdp.cli.main import _cli_wording

    assert _cli_wording("f exists; pass resume=True to continue", ["sweep"]) == \
        "f exists; add --resume to continue"
    assert _cli_wording("too wide; pass certify=True", ["analyze"]) == "too wide; pass --certify"
    # calibrate has no --certify: the Python wording stays rather than a wrong option
    assert "certify=True" in _cli_wording("too wide; pass certify=True", ["calibrate"])
