"""The whole line: the tail certificate (symgdp.measurement.whole_line.certificate, tail_forms).

Every certificate is checked against independent truths: log delta and log delta_mu in
mpmath at 50+ digits (symgdp.gaussian.precise, whose delta_mu raises its precision against
cancellation) on log grids out to eps = 10^4, and G = mu_GDP(eps, delta(eps)) in mpmath.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from flint import ctx
from hypothesis import given, settings
from hypothesis import strategies as st
from references import log_grid

from symgdp import Profile, mechanisms
from symgdp.gaussian import precise
from symgdp.measurement.measure import measure
from symgdp.measurement.whole_line.certificate import gaussian_below, prove_tail
from symgdp.measurement.whole_line.infinity_forms import Rules, log_delta_mu_lower_form
from symgdp.planning.amplify import clip_and_rectify
from symgdp.symbolic.symbols import eps

DPS = 60


def _grid(a: float, b: float = 1e4, n: int = 60) -> list[mpmath.mpf]:
    """A log grid on [a, b] (mpmath numbers; references.log_grid)."""
    return log_grid(a, b, n, DPS)

def _log_delta_mp(expr: sympy.Expr, x: mpmath.mpf) -> mpmath.mpf:
    """log delta(x) in mpmath at DPS + 60 working digits (cancellation of the erfc
    differences costs a few), every number of the expression made exact first."""
    exact = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
    f = sympy.lambdify(eps, exact, "mpmath")
    with mpmath.workdps(DPS + 60):
        v = f(mpmath.mpf(x))
        assert v > 0
        return mpmath.log(v)


def _below_on_grid(expr: sympy.Expr, mu: float, a: float, b: float = 1e4) -> bool:
    # independent truth: log delta(x) <= log delta_mu(x) in 60-digit mpmath
    return all(_log_delta_mp(expr, x) <= precise.log_delta_mu(x, mu, dps=DPS)
               for x in _grid(a, b))


# -- the Gaussian side: the Mills lower form ------------------------------------------------
@pytest.mark.parametrize("mu", [0.3, 1.0, 2.1252369, 7.0])
def test_mills_lower_form_is_below_log_delta_mu(mu: float) -> None:
    E = max(10.0, 1.0 + 2 * mu * mu)
    with ctx.workprec(128):
        f = log_delta_mu_lower_form(mu, E)
        coef = {k: float(v.lower()) for k, v in f.c.items()}
    for x in _grid(E, 1e4, 40):
        lower = (coef.get((2, 0), 0) * x**2 + coef.get((1, 0), 0) * x
                 + coef.get((0, 1), 0) * mpmath.log(x) + coef.get((0, 0), 0))
        truth = precise.log_delta_mu(x, mu, dps=DPS)  # 60-digit reference
        assert lower <= truth
        # asymptotically tight: the gap is log(b^2/(b^2-3)) + mu^2/E + log(b eps/...)
        # bounded, not growing with eps
        assert truth - lower < 2 * math.log(1 + mu * mu / (2 * float(x))) + mu * mu / E + 1


def test_forms_enclose_the_profile_log() -> None:
    # log of the subsampled Gaussian (gamma = 1/2) at 60 digits lies below the upper form
    p = mechanisms.gaussian(1.0).subsample(0.5)
    with ctx.workprec(128):
        lg = Rules(p.var, 50.0).log(p.bound_expr)
        hi = {k: float(v.upper()) for k, v in lg.hi.c.items()}
    for x in _grid(50.0, 1e4, 30):
        up = sum(c * x ** float(k[0]) * mpmath.log(x) ** k[1] for k, c in hi.items())
        assert _log_delta_mp(p.bound_expr, x) <= up  # sympy evalf at 60 digits


# -- certificates, checked against 50+ digit truths ----------------------------------------
@pytest.mark.parametrize("text, eps_h", [("2*exp(-eps**2)", 100.0),
                                         ("exp(-eps**2/8)/eps", 30.0),
                                         ("3*exp(-eps**2/2 - eps)", 20.0)])
def test_closed_form_profiles_are_certified_on_the_whole_line(text: str, eps_h: float) -> None:
    p = Profile.parse(text)
    m = measure(p, eps_h, 1e-6, identify=False)
    assert m.covers_tail and m.proved_until == math.inf
    assert m.failure_prob == 0 and m.log_failure_prob == -math.inf
    assert "-GDP" in str(m) and m.headline_caveat() is None
    expr = m.profile.bound_expr
    assert _below_on_grid(expr, m.upper, eps_h)


def test_the_brief_example_says_mu_gdp() -> None:
    from symgdp.present.report import report

    r = report("2*exp(-eps**2)", eps_h=100, tol=1e-6)
    s = r.statement
    assert s.startswith("mu-GDP with mu = 2.12523") and "head GDP" not in s
    assert "failure probability" not in s
    d = r.to_dict()
    assert d["covers_tail"] is True and d["proved_until"] == "inf"
    assert d["failure_prob"] == 0


def test_sgd_family_refined_is_certified() -> None:
    p = mechanisms.sgd_family(1, 1, 1).refine()
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert m.covers_tail
    assert _below_on_grid(p.bound_expr, m.upper, 100.0)


def test_exact_gaussian_is_certified_by_monotonicity_in_mu() -> None:
    m = measure(mechanisms.gaussian(1.5), 50.0, 1e-6)
    assert m.covers_tail and m.failure_prob == 0
    assert gaussian_below(sympy.Rational(3, 2), m.upper)
    assert not gaussian_below(sympy.Rational(3, 2), 1.4999999)


def test_tail_is_the_maximum_subsampled_gaussian() -> None:
    # G increases to its limit 1 (head sup on [0, 50] about 0.986): whole-line bracket
    m = measure(mechanisms.gaussian(1.0).subsample(0.5), 50.0, 1e-6, identify=False)
    assert m.covers_tail
    assert m.lower <= 1.0 <= m.upper and m.upper - 1.0 < 1e-9
    assert "[0, inf)" in str(m)
    # 60-digit truth: the certified mu holds far out
    assert _below_on_grid(m.profile.bound_expr, m.upper, 50.0)


# -- adversaries: no certificate where it would be false ------------------------------------
def test_late_bump_that_ends_is_not_certified() -> None:
    # a tiny non-increasing term that ends at eps = 5000 dominates far beyond eps_h
    text = "exp(-eps**2)/2 + exp(-700)*Max(0, 1 - eps/5000)"
    p = Profile.parse(text)
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert not m.covers_tail and m.failure_prob > 0
    assert m.eps_h <= m.proved_until < 5000
    # truth: G(2500) far above the head bound (60-digit mpmath)
    x = mpmath.mpf(2500)
    g = precise.mu_gdp(x, log_delta=_log_delta_mp(m.profile.bound_expr, x), dps=DPS)
    assert g > m.upper


def test_slowly_drifting_tail_is_not_certified() -> None:
    # -log delta = eps^2/8 - eps^(3/2)/100: G exceeds 2 beyond eps ~ 2500 and tends to 2
    expr = sympy.exp(-eps**2 / 8 + eps ** sympy.Rational(3, 2) / 100)
    for mu in (2.0, 2.0 * (1 + 2.0**-36), 2.0003):
        assert not prove_tail(expr, eps, 100.0, mu).proved
    x = mpmath.mpf(10**4)  # truth: G(10^4) = 2.000401... (60-digit mpmath)
    assert precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS) > 2.0003


def test_oscillating_factor_is_not_certified() -> None:
    expr = sympy.exp(-eps**2 / 18 - 3 * eps + 2 * sympy.sin(eps))
    r = prove_tail(expr, eps, 10.0, 2.5)
    assert not r.proved
    x = mpmath.mpf(10**4)  # truth: G tends to 3 > 2.5
    assert precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS) > 2.5


def test_limit_equal_to_mu_from_above_is_not_certified() -> None:
    # delta = delta_2 * (1 + 1/eps): G > 2 everywhere and tends to 2; mu = 2 must fail
    m = sympy.Integer(2)
    gauss = (sympy.erfc((eps / m - m / 2) / sympy.sqrt(2))
             - sympy.exp(eps) * sympy.erfc((eps / m + m / 2) / sympy.sqrt(2))) / 2
    expr = gauss * (1 + 1 / eps)
    assert not prove_tail(expr, eps, 50.0, 2.0).proved
    assert not prove_tail(expr, eps, 50.0, 2.0 * (1 + 2.0**-36)).proved


def test_no_closed_form_keeps_failure_probability() -> None:
    m = measure(Profile.parse("2*exp(-eps**2)"), 10.0, 1e-4, certify=False, identify=False)
    assert not m.covers_tail and m.failure_prob > 0
    assert any("float mode" in n for n in m.notes)


def test_not_gdp_profile_is_not_certified() -> None:
    p = mechanisms.shuffle_sum(100, 1000).refine()  # delta ~ C/eps: not GDP
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert not m.covers_tail and m.failure_prob > 0
    assert any("whole line: not proved" in n for n in m.notes)


def test_clip_and_rectify_uses_proved_until() -> None:
    p = Profile.parse("exp(-eps**2)/2 + exp(-700)*Max(0, 1 - eps/5000)")
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert m.proved_until > m.eps_h
    r = clip_and_rectify(m, 0.0, 1.0)
    assert r.eps_h == m.proved_until and r.scale <= 1.0 / m.proved_until * (1 + 1e-15)
    # the post-processed mechanism's profile is 0 beyond proved_until, and below
    # delta_upper before it (truth at 60 digits on the proved stretch)
    assert _below_on_grid(m.profile.bound_expr, m.upper, m.eps_h, m.proved_until)
    with pytest.raises(Exception, match="beyond what the measurement proved"):
        clip_and_rectify(m, 0.0, 1.0, proved_until=m.proved_until * 2)


# -- property: a certificate never coexists with a point above mu+ -------------------------
@settings(max_examples=8, database=None, derandomize=True, deadline=None)
@given(c=st.sampled_from(["1", "2", "5", "1/2"]), k=st.sampled_from(["1/20", "1/4", "1", "2"]),
       b=st.sampled_from(["0", "1/2", "2"]), tiny=st.sampled_from([None, "1/40", "1/100"]))
def test_certificate_never_coexists_with_a_higher_point(c: str, k: str, b: str,
                                                        tiny: str | None) -> None:
    text = f"{c}*exp(-({k})*eps**2 - ({b})*eps)"
    if tiny is not None:  # a tiny term with a heavier tail, dominant beyond eps_h
        text += f" + exp(-300)*exp(-({tiny})*eps**2)"
    p = Profile.parse(f"Min(1, {text})")
    try:
        m = measure(p, 20.0, 1e-4, refine=False, identify=False)
    except Exception:  # noqa: BLE001 - a refusal is acceptable, a wrong certificate never
        return
    if not m.covers_tail:
        return
    expr = m.profile.bound_expr
    for x in _grid(20.0, 1e4, 40):
        g = precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS)  # 60 digits
        assert g <= m.upper
