"""Tests of symgdp.report: every derived step, its renderings and its honesty.

References used (each test says which):
* closed forms of docs/theory.md: the tail limits 1/2 of e^{-eps^2} and A^2/(2 sigma^2) of
  B e^{-sigma^2 eps^2/A^2} (§5), mu = -2 Phi^{-1}(1/(1+e^{eps0})) of the worst-case
  eps0-DP profile (§3), written here with mpmath's erfinv at 40 digits;
* the refinement point c of §2 found here with mpmath.findroot at 40 digits;
* exact decimal arithmetic (``decimal.Decimal``) and mpmath for the outward rounding.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal

import mpmath
import pytest
import sympy
from hypothesis import example, given
from hypothesis import strategies as st

from symgdp import Profile, eps
from symgdp.errors import ParseError, ProfileError, UnboundParameterError
from symgdp.present.report import (
    Report,
    format_bracket,
    format_log_upper,
    format_lower,
    format_upper,
    report,
)

PURE_DP_1 = "Max(0, (exp(1) - exp(eps))/(1 + exp(1)))"


def mu_pure_dp_reference(eps0: float) -> float:
    """-2 Phi^{-1}(1/(1+e^eps0)) = 2 sqrt(2) erfinv(tanh(eps0/2)), 40-digit mpmath."""
    with mpmath.workdps(40):
        return float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(mpmath.mpf(eps0) / 2)))


# -- outward rounding --------------------------------------------------------------------------


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=1, max_value=15))
@example(0.70710678118654757, 6)
@example(1.0, 3)
@example(9.9999999999999999e-5, 2)
def test_format_rounds_outwards_and_tightly(x, digits):
    """Reference: exact decimal value of the float."""
    exact = Decimal(x)
    lo, up = Decimal(format_lower(x, digits)), Decimal(format_upper(x, digits))
    assert lo <= exact <= up
    ulp = Decimal(10) ** (exact.adjusted() - digits + 1)
    assert up - lo <= ulp


@given(st.floats(min_value=-1e6, max_value=-1e-6))
@example(-1000.0)
@example(-math.log(10) * 43)
def test_format_log_upper_is_an_upper_bound(log_x):
    """Reference: mpmath logarithm of the printed number (works below float64 underflow)."""
    text = format_log_upper(log_x)
    mant, _, exp = text.partition("e")
    with mpmath.workdps(30):
        printed = mpmath.mpf(mant) * mpmath.mpf(10) ** int(exp or 0)
        assert mpmath.log(printed) >= log_x
        assert mpmath.log(printed) <= log_x + math.log(1.1) + 1e-9


def test_format_edge_cases():
    assert format_lower(0.0) == "0" and format_upper(math.inf) == "inf"
    assert format_log_upper(-math.inf) == "0" and format_log_upper(0.0) == "1"
    assert format_bracket(1.0, math.inf) == ("1.00000", "inf")


# -- the steps -----------------------------------------------------------------------------------


def test_symbolic_tail_of_exp_minus_eps_squared():
    """Reference: theory §5, lim eps^2/(-2 log e^{-eps^2}) = 1/2."""
    r = report("exp(-eps**2)", measure=False)
    assert r.tail_limit == sympy.Rational(1, 2)
    assert r.is_gdp is True and r.verdict == "GDP"
    assert r.mu_tail == pytest.approx(math.sqrt(0.5), rel=1e-15)
    assert r.measurement is None


def test_unbound_parameters_keep_the_formula():
    """Reference: theory §5: the tail limit of B e^{-sigma^2 eps^2/A^2} is
    A^2/(2 sigma^2)."""
    r = report("B*exp(-sigma**2*eps**2/A**2)")
    A, sigma = sympy.symbols("A sigma", positive=True)
    assert sympy.simplify(r.tail_limit - A**2 / (2 * sigma**2)) == 0
    assert r.measurement is None and r.refined is None
    assert any("A, B, sigma" in n for n in r.notes)
    assert "A^{2}" in r.to_latex()
    json.dumps(r.to_dict(), allow_nan=False)


def test_strict_mode_names_unbound_and_unknown_parameters():
    with pytest.raises(UnboundParameterError, match=r"B.*--set B=VALUE"):
        report("B*exp(-eps**2)", strict=True)
    with pytest.raises(ProfileError, match=r"no parameter named C .*B"):
        report("B*exp(-eps**2)", values={"B": 2, "C": 1}, strict=True)


def test_equation_needs_tradeoff_flag():
    with pytest.raises(ParseError, match="tradeoff=True"):
        report("sigma = sqrt(2*log(1.25/delta))/eps", values={"sigma": 2})


def test_pure_dp_profile_is_fully_measured():
    """Reference: theory §3 closed form, the worst-case 1-DP profile is exactly mu-GDP with
    mu = -2 Phi^{-1}(1/(1+e)) = 1.2320353853...; its profile is 0 beyond eps = 1."""
    truth = mu_pure_dp_reference(1.0)
    assert truth == pytest.approx(1.2320353853, abs=1e-10)  # the value quoted in theory §3
    r = report(PURE_DP_1, eps_h=5.0, tol=1e-6)
    m = r.measurement
    assert m.lower <= truth <= m.upper
    assert m.upper - m.lower <= 1e-6 * (1 + 1e-9)
    assert m.covers_tail and r.verdict == "GDP"
    assert r.tail_limit == 0
    # the renderings carry the bracket rounded outwards
    lo, up = format_bracket(m.lower, m.upper)
    assert Decimal(lo) <= Decimal(m.lower) and Decimal(up) >= Decimal(m.upper)
    tex = r.to_latex()
    assert f"{lo} \\le \\sup" in tex and f"\\le {up}" in tex
    assert "\\mu\\text{-GDP with }" in tex
    assert "full guarantee" in r.statement and up in r.statement


def test_tradeoff_report_against_independent_refinement_point():
    """SGD family sigma = A/eps sqrt(log(B/delta)), A=1, B=1.25, sigma=1.5.

    References: naive profile B e^{-sigma^2 eps^2/A^2} solved by hand; tail limit
    A^2/(2 sigma^2) = 2/9 (theory §5); the refinement point c solves
    d'(c) + e^c (1 - d(c) + d'(c)) = 0 (theory §2), found here with mpmath.findroot at
    40 digits after checking on a grid that the bracket changes sign once.
    """
    values = {"A": 1, "B": 1.25, "sigma": 1.5}
    r = report("sigma = A/eps*sqrt(log(B/delta))", values=values, tradeoff=True,
               eps_h=20.0, tol=1e-6)
    A, B, sigma = sympy.symbols("A B sigma", positive=True)
    assert r.kind == "tradeoff" and r.equation is not None
    assert sympy.simplify(r.profile.expr - B * sympy.exp(-sigma**2 * eps**2 / A**2)) == 0
    assert r.tail_limit == sympy.Rational(2, 9)

    with mpmath.workdps(40):
        def d(c):
            return mpmath.mpf("1.25") * mpmath.exp(-mpmath.mpf("2.25") * c**2)

        def bracket(c):
            dd = -mpmath.mpf("4.5") * c * d(c)
            return dd + mpmath.exp(c) * (1 - d(c) + dd)

        grid = [mpmath.mpf(i) / 100 for i in range(1, 500)]
        signs = [mpmath.sign(bracket(c)) for c in grid]
        assert sum(1 for a, b in zip(signs, signs[1:], strict=False) if a != b) == 1
        c_ref = mpmath.findroot(bracket, mpmath.mpf("0.98"))
    assert float(r.breakpoint) == pytest.approx(float(c_ref), rel=1e-12)
    assert float(r.breakpoint_delta) == pytest.approx(float(d(c_ref)), rel=1e-12)

    # the measured bracket contains G(0) of the refined profile, mu_GDP(0, d) =
    # 2 Phi^{-1}((1 + d)/2) (closed form at eps = 0), a valid lower bound of the sup
    with mpmath.workdps(40):
        d0 = d(c_ref) + (1 - d(c_ref)) * (mpmath.exp(c_ref) - 1) / (1 + mpmath.exp(c_ref))
        g0 = float(2 * mpmath.sqrt(2) * mpmath.erfinv(d0))
    m = r.measurement
    assert m.upper >= g0 - 1e-12
    assert m.lower <= m.upper
    text = r.to_text()
    assert "refinement point" in text and "refined profile" in text


def test_not_gdp_profile_serialises_infinity_as_text():
    """Reference: theory §5, K/eps has an infinite tail limit (not GDP)."""
    r = report("1/eps", eps_h=10.0, tol=1e-3)
    assert r.tail_limit == sympy.oo and r.is_gdp is False and r.verdict == "not GDP"
    d = r.to_dict()
    assert d["mu_tail"] == "inf" and d["is_gdp"] is False and d["tail_limit"] == "oo"
    assert json.loads(json.dumps(d, allow_nan=False))["verdict"] == "not GDP"
    assert "not GDP" in r.statement


@pytest.mark.parametrize("how", ["inconclusive", "timeout"])
def test_undecided_tail_is_unknown_never_a_guess(monkeypatch, how):
    """The tail analysis is replaced by one that cannot decide: the report must say unknown."""
    import symgdp.tail.limit as tail
    from symgdp.errors import AnalysisTimeout

    def undecided(profile, timeout=None):
        if how == "timeout":
            raise AnalysisTimeout("SymPy ran out of time")
        return tail.Identification(None, None, math.nan, "unknown", "SymPy ran out of time")

    monkeypatch.setattr(tail, "identify", undecided)
    r = report("exp(-eps**2)", measure=False)
    assert r.is_gdp is None and r.tail_limit is None and r.verdict == "unknown"
    assert "unknown" in r.statement
    assert "unknown" in r.to_latex() and "unknown" in r.to_text()
    d = r.to_dict()
    assert d["is_gdp"] is None and d["tail_limit"] is None and d["verdict"] == "unknown"
    assert any("unknown" in n for n in r.notes)


def test_renderings_and_jupyter_hooks():
    p = Profile(sympy.exp(-eps**2), name="A")
    r = report(p, measure=False)
    assert isinstance(r, Report)
    md = r._repr_markdown_()
    assert md.startswith("**symgdp report**") and "- **tail limit**: $" in md
    assert r._repr_latex_().startswith("$$\\begin{aligned}")
    assert r.to_latex().startswith("\\begin{align*}") and r.to_latex().endswith("\\end{align*}")
    assert str(r) == r.to_text()
    with pytest.raises(AttributeError):
        r.kind = "tradeoff"  # frozen


def test_profile_values_are_merged():
    B = sympy.Symbol("B", positive=True)
    p = Profile(B * sympy.exp(-eps**2), {"B": 2})
    r = report(p, values={"B": 3}, measure=False, refine=False)
    assert r.profile.bound_expr == 3 * sympy.exp(-eps**2)


def test_rejects_other_inputs():
    with pytest.raises(ProfileError, match="list"):
        report([1, 2])


def test_refinement_that_does_not_finish_is_a_note_not_a_guess(monkeypatch):
    """Without the refinement the profile is measured as given, and the report says so."""
    from symgdp.errors import AnalysisTimeout

    def slow(self, **kwargs):
        raise AnalysisTimeout("refinement ran out of time")

    monkeypatch.setattr(Profile, "refine", slow)
    r = report(PURE_DP_1, eps_h=3.0, tol=1e-4)
    assert r.refined is None and r.breakpoint is None
    assert r.measurement.refined is False
    assert any("refinement did not finish" in n for n in r.notes)
    assert any("as given" in n for n in r.notes)


def test_notion_profiles_carry_their_tail_limit():
    # a numeric source knows its tail limit: zCDP rho gives log delta ~ -(eps - rho)^2/(4 rho)
    # (the closed form of the conversion), so lim eps^2/(-2 log delta) = 2 rho; the report
    # used the generic symbolic analysis instead and called it unknown
    r = report(Profile.from_zcdp("1/8"))
    assert r.tail_limit == sympy.Rational(1, 4) and r.is_gdp is True
    assert "verdict          GDP" in r.to_text()


def test_inconclusive_tail_is_not_called_unfinished():
    # the pure 1-DP trade-off curve (Kairouz et al.'s f_{1,0}) as a numeric f-DP source has
    # no symbolic tail: the analysis finishes, inconclusive, and says so (not "did not
    # finish", which would invite a larger timeout that cannot help)
    r = report(Profile.from_tradeoff_curve("Max(0, 1 - exp(1)*alpha, exp(-1)*(1 - alpha))"),
               measure=False)
    assert r.tail_limit is None and r.tail_method == "inconclusive"
    text = r.to_text()
    assert "unknown (inconclusive)" in text and "did not finish" not in text
    assert "unknown (inconclusive)" in r.to_latex()


def test_numeric_source_notes_name_what_applies():
    # a zCDP profile is no DP-SGD and has no formula to differentiate: the notes said
    # "the function delta_zCDP has no ball-arithmetic counterpart" and gave DP-SGD's
    # sqrt(T)/sigma; its tail limit 2 rho = 1/4 (closed form) is what they should name
    notes = " ".join(report(Profile.from_zcdp("1/8")).notes)
    assert "numeric source (proved values, no derivative)" in notes
    assert "ball-arithmetic counterpart" not in notes and "DP-SGD" not in notes
    assert "mu^2 = 0.25" in notes
