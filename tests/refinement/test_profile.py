r"""Tests of the symbolic side of symgdp.profile.Profile: parsing, trade-off equations,
validation, breakpoints, LaTeX and the measure/gdpt delegation.

References: closed forms solved by hand from the trade-off equations (theory §9), checked
as SymPy identities and numerically; the numeric inversion is checked against the closed
form and against the equation's own residual in 40-digit mpmath.
"""

from __future__ import annotations

import sys
import types

import mpmath
import numpy as np
import pytest
import sympy

from symgdp.errors import ParseError, ProfileError, UnboundParameterError
from symgdp.profile import LogDeltaRoot, Profile
from symgdp.symbolic.symbols import delta, eps, sigma

A, B = sympy.symbols("A B", positive=True)
E = sympy.exp
SGD = "sigma = A/eps*sqrt(log(B/delta))"
SGD_VALUES = {"A": 2, "B": 1, "sigma": 2}
X = np.array([0.0, 0.05, 0.3, 1.0, 1.7, 3.0, 7.5, 20.0])


def _same_function(expr, ref, values=None, pts=(0.3, 1.0, 2.5, 6.0)):
    """SymPy identity checked numerically at 40 digits (plus exact simplification)."""
    subs = {sympy.Symbol(k, positive=True) if isinstance(k, str) else k: v
            for k, v in (values or {}).items()}
    for x in pts:
        a = sympy.N(expr.subs(subs).subs(eps, x), 40)
        b = sympy.N(ref.subs(subs).subs(eps, x), 40)
        assert abs(a - b) <= 1e-35 * max(1, abs(b))


# -- parsing ------------------------------------------------------------------------------
def test_parse_matches_the_expression():
    p = Profile.parse("B*exp(-sigma^2*eps^2/A^2)", SGD_VALUES)
    assert p.expr == B * E(-sigma**2 * eps**2 / A**2)
    assert p.var == eps and p.unbound_symbols == set()
    # delta = e^{-eps^2} for A = 2, B = 1, sigma = 2 (closed form)
    assert np.allclose(p(X), np.exp(-X**2), rtol=1e-14, atol=0)


def test_parse_with_another_variable():
    t = sympy.Symbol("t", positive=True)
    p = Profile.parse("exp(-t^2)", var=t)
    assert p.expr == E(-t**2) and p.var == t
    assert p(1.0) == pytest.approx(np.exp(-1.0), rel=1e-15)


@pytest.mark.parametrize("text", ["9**9**9**9", "__import__('os').system('true')",
                                  "eps.__class__", "lambda: 1"])
def test_parse_refuses_unsafe_or_absurd_input(text):
    with pytest.raises(ParseError):
        Profile.parse(text)


def test_constructor_refuses_strings():
    with pytest.raises(ProfileError, match="Profile.parse"):
        Profile("exp(-eps)")


# -- trade-off equations --------------------------------------------------------------------
def test_from_tradeoff_sgd_family():
    # sigma = A eps^-1 sqrt(log(B/delta))  <=>  delta = B e^{-sigma^2 eps^2/A^2}
    p = Profile.from_tradeoff(SGD)
    assert sympy.simplify(p.expr - B * E(-sigma**2 * eps**2 / A**2)) == 0
    assert p.meta["method"] == "symbolic"
    assert isinstance(p.meta["tradeoff"], sympy.Eq)
    q = Profile.from_tradeoff(SGD, SGD_VALUES)
    assert np.allclose(q(X), np.exp(-X**2), rtol=1e-14)


def test_from_tradeoff_shuffle_sum():
    # m = 10 log(n/(eps delta))  <=>  delta = n e^{-m/10}/eps
    n, m = sympy.symbols("n m", positive=True)
    p = Profile.from_tradeoff("m = 10*log(n/(eps*delta))")
    assert sympy.simplify(p.expr - n * E(-m / 10) / eps) == 0


def test_from_tradeoff_classical_gaussian_and_sympy_equations():
    # sigma = sqrt(2 log(5/(4 delta)))/eps  <=>  delta = 5/4 e^{-sigma^2 eps^2/2}
    eq = sympy.Eq(sigma, sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / delta)) / eps)
    p = Profile.from_tradeoff(eq)
    _same_function(p.expr, sympy.Rational(5, 4) * E(-sigma**2 * eps**2 / 2), {sigma: 3})
    # an equation built from the user's own symbols, matched by name
    d, e, s = sympy.symbols("delta varepsilon sigma")
    q = Profile.from_tradeoff(sympy.Eq(s, sympy.sqrt(2 * sympy.log(1 / d)) / e), {"sigma": 1})
    assert q.var == eps
    assert q(2.0) == pytest.approx(np.exp(-2.0), rel=1e-14)  # delta = e^{-sigma^2 eps^2/2}


def test_numeric_inversion_agrees_with_the_closed_form():
    p = Profile.from_tradeoff(SGD, SGD_VALUES, method="numeric")
    assert p.meta["method"] == "numeric" and p.expr.has(LogDeltaRoot)
    # a float log delta = t carries an absolute error of a few ulps of t, i.e. a relative
    # error of about |t| * 1e-16 in delta
    assert np.allclose(p(X), np.exp(-X**2), rtol=1e-12, atol=0)
    # log space: finite far beyond float underflow (closed form log delta = -eps^2)
    big = np.array([30.0, 50.0, 200.0])
    assert np.allclose(p.log_delta(big), -big**2, rtol=1e-15)
    # 40-digit evaluation against the mpmath closed form
    with mpmath.workdps(40):
        ref = mpmath.exp(-mpmath.mpf("2.5") ** 2)
    assert abs(p.mp(2.5, dps=40) - ref) < mpmath.mpf("1e-37") * ref


def test_numeric_inversion_derivative_is_the_implicit_derivative():
    # d/d eps of e^{-eps^2} is -2 eps e^{-eps^2} (closed form)
    p = Profile.from_tradeoff(SGD, SGD_VALUES, method="numeric")
    d = sympy.lambdify(eps, sympy.diff(p.bound_expr, eps), modules="mpmath")
    with mpmath.workdps(40):
        for x in ("0.5", "1.5", "3"):
            x = mpmath.mpf(x)
            assert abs(d(x) + 2 * x * mpmath.exp(-x**2)) < mpmath.mpf("1e-30")


@pytest.mark.slow
def test_fallback_when_sympy_cannot_solve():
    eq = "sigma = sqrt(log(1/delta))/eps + delta"
    p = Profile.from_tradeoff(eq, {"sigma": 3}, timeout=20)
    assert p.meta["method"] == "numeric" and p.meta["why_numeric"]
    # second check: the value satisfies the equation itself (residual at 40 digits)
    with mpmath.workdps(40):
        for x in ("0.5", "1", "2", "4"):
            d = p.mp(x, dps=40)
            assert 0 < d < 1
            res = mpmath.sqrt(mpmath.log(1 / d)) / mpmath.mpf(x) + d - 3
            assert abs(res) < mpmath.mpf("1e-30")
    with pytest.raises(ProfileError, match="symbolically"):
        # SymPy fails (or, on a loaded machine, runs out of its 1 s): either way no profile
        Profile.from_tradeoff(eq, method="symbolic", timeout=1)


def test_several_solutions_are_resolved_by_the_numeric_inversion():
    # sigma = 1/(eps delta (2 - delta)) has two roots 1 -+ sqrt(1 - 1/(sigma eps)); the
    # '-' branch is the profile but is complex for eps < 1/sigma, so the numeric inversion
    # is kept.  Check it against the '-' root in closed form.
    p = Profile.from_tradeoff("sigma = 1/(eps*delta*(2-delta))", {"sigma": 3})
    x = np.array([0.1, 0.34, 0.5, 1.0, 10.0])
    ref = np.where(3 * x >= 1, 1 - np.sqrt(np.clip(1 - 1 / (3 * x), 0, None)), 1.0)
    assert np.allclose(p(x), ref, rtol=1e-12)


def test_from_tradeoff_rejects_non_equations():
    with pytest.raises(ProfileError, match="equation"):
        Profile.from_tradeoff(sigma - eps)
    with pytest.raises(ProfileError, match="delta"):
        Profile.from_tradeoff(sympy.Eq(sigma, 1 / eps))


# -- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize("expr, problem, how", [
    (-E(-eps), "negative", "symbolically"),
    (sympy.I * E(-eps), "complex", "symbolically"),
    (1 - E(-eps), "increasing", "symbolically"),
    (2 + 0 * eps, "at least 1", "symbolically"),
    (1 + E(-eps), "at least 1", "symbolically"),
    (sympy.sqrt(eps - 5) * E(-eps), "complex", "grid"),
    (sympy.Piecewise((sympy.Rational(1, 2), eps < 1), (sympy.Rational(3, 5), eps < 2),
                     (E(-eps), True)), "increasing", "grid"),
    (sympy.Max(1, 2 - eps), "at least 1", "grid"),
    (sympy.Piecewise((E(-eps), eps < 3), (-E(-eps), True)), "negative", "grid"),
])
def test_invalid_profiles_are_named(expr, problem, how):
    with pytest.raises(ProfileError, match=problem) as info:
        Profile(expr).validate()
    assert how in str(info.value)


def test_vacuous_far_beyond_the_grid_is_still_a_profile():
    # K/log(1 + eps)^p with K = 6.8, p = 0.39 drops below 1 only near eps = e^140
    p = Profile(sympy.Float(6.8) / sympy.log(1 + eps) ** sympy.Float(0.39))
    assert p.validate() is p
    assert p.identify().is_gdp is False  # -2 log delta grows like log log eps


def test_values_above_one_are_read_as_one():
    p = Profile(4 * E(-2) / eps)  # shuffle sum n = 4, m = 20
    assert p.validate() is p
    assert p(0.1) == 1.0 and p(0.0) == 1.0
    assert p(2.0) == pytest.approx(2 * np.exp(-2.0), rel=1e-15)


def test_unbound_parameters_are_named():
    p = Profile(B * E(-sigma**2 * eps**2 / A**2))
    p.validate()  # symbolic checks only; nothing is provably wrong
    with pytest.raises(UnboundParameterError, match="A, B, sigma"):
        p.refine()
    with pytest.raises(UnboundParameterError, match="A, B, sigma"):
        p(1.0)


# -- breakpoints and LaTeX ------------------------------------------------------------------
def test_breakpoint_only_when_refined():
    p = Profile.from_tradeoff(SGD, SGD_VALUES)
    assert p.breakpoint is None and p.breakpoint_delta is None
    r = p.refine()
    assert r.breakpoint is not None and r.meta["refined"] is True
    assert r.meta["naive"] == p.expr
    # the naive expression survives symbolically in the last branch
    assert r.expr.args[-1][0] == p.expr


def test_latex_of_plain_and_refined_profiles():
    p = Profile(B * E(-sigma**2 * eps**2 / A**2), SGD_VALUES, name="SGD")
    assert p.latex() == sympy.latex(p.expr)
    assert p.latex(bound=True) == sympy.latex(E(-eps**2))
    assert p._repr_latex_().startswith(r"$\delta_{\mathrm{SGD}}(\varepsilon) = ")
    r = p.refine()
    tex = r.latex()
    assert r"\begin{cases}" in tex and r"\varepsilon < c" in tex
    assert r"c \approx 1.1878489" in tex and r"\tilde{\delta}(c) \approx 0.24390292" in tex
    assert r"\sigma" in tex and r"\sigma" not in r.latex(bound=True)


def test_latex_of_numeric_inversion():
    p = Profile.from_tradeoff(SGD, method="numeric")
    assert r"\operatorname{root}" in p.latex() and r"\sigma" in p.latex()


# -- delegation to symgdp.measure ----------------------------------------------------------
def test_measure_and_gdpt_delegate(monkeypatch):
    calls = []
    fake = types.ModuleType("symgdp.measurement.measure")
    fake.measure = lambda prof, **kw: calls.append(("measure", prof, kw)) or "M"
    fake.gdpt = lambda prof, e: calls.append(("gdpt", prof, e)) or "G"
    monkeypatch.setitem(sys.modules, "symgdp.measurement.measure", fake)
    p = Profile(E(-eps**2))
    assert p.measure(50.0, 1e-3, refine=False, method="staircase", certify=True, n=7) == "M"
    assert p.gdpt(1.5) == "G"
    assert calls[0] == ("measure", p, {"eps_h": 50.0, "tol": 1e-3, "refine": False,
                                       "method": "staircase", "certify": True, "n": 7})
    assert calls[1] == ("gdpt", p, 1.5)


def test_profile_stays_immutable_and_comparable():
    p = Profile(E(-eps**2))
    with pytest.raises(AttributeError):
        p.x = 1
    assert p == Profile(E(-eps**2)) and hash(p) == hash(Profile(E(-eps**2)))


# -- log space near and beyond float underflow ---------------------------------------------
def test_zero_profile_and_zero_branches_are_exact_minus_infinity():
    assert Profile(sympy.Integer(0)).log_delta(1.0) == -np.inf
    lap = Profile(sympy.Piecewise((1 - E((eps - 1) / 2), eps < 1), (0, True)))
    assert lap.log_delta(2.0) == -np.inf
    # 1 - e^{-h/2} for h = 1e-9 (closed form, 20 digits)
    with mpmath.workdps(30):
        ref = float(mpmath.log(-mpmath.expm1(mpmath.mpf("-5e-10"))))
    assert lap.log_delta(1.0 - 1e-9) == pytest.approx(ref, rel=1e-6)


def test_gaussian_log_delta_where_the_erfc_difference_underflows():
    # delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (theory §3); both terms
    # fall below the float64 normal range near log delta = -708.  Reference: the same
    # definition in 60-digit mpmath, computed here.
    mu = sympy.Rational(3, 10)
    Phi = lambda x: sympy.erfc(-x / sympy.sqrt(2)) / 2  # noqa: E731
    p = Profile(Phi(-eps / mu + mu / 2) - E(eps) * Phi(-eps / mu - mu / 2))
    for x in (11.0, 11.27, 11.5, 30.0):
        with mpmath.workdps(60):
            m, e = mpmath.mpf(3) / 10, mpmath.mpf(x)
            d = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
            ref = mpmath.log(d)
        assert p.log_delta(x) == pytest.approx(float(ref), rel=1e-12), x


@pytest.mark.parametrize("value", [sympy.oo, -sympy.oo, sympy.zoo, sympy.nan])
def test_infinite_parameter_values_are_refused(value):
    with pytest.raises(ProfileError, match="finite"):
        Profile(A * E(-eps**2), {"A": value})


def test_refinement_sees_through_min():
    # Min(1, K/eps) and K/eps are the same profile (values above 1 read as 1)
    K = 4 * E(-2)
    a = Profile(sympy.Min(1, K / eps)).refine()
    b = Profile(K / eps).refine()
    assert abs(float(a.breakpoint) - float(b.breakpoint)) < 1e-30


def test_refined_profile_refuses_new_values():
    r = Profile(B * E(-eps**2), {"B": 2}).refine()
    with pytest.raises(ProfileError, match="refine again"):
        r.replace(values={"B": 3})
    assert r.replace(name="x").name == "x"


def test_structural_zeros_are_exact_and_underflow_is_not_zero():
    """Exact zeros (Max(f, 0) with f <= 0, a zero Piecewise case, a zero factor) give
    log delta = -inf without mpmath; an underflowing value keeps its finite log.
    References: the closed forms log(1 - e^{(x-1)/2}) and -x^2."""
    import numpy as np
    import sympy

    from symgdp import eps as e

    lap = Profile(sympy.Max(1 - sympy.exp((e - 1) / 2), 0))
    x = np.array([0.0, 0.5, 0.999, 1.5, 50.0])
    got = lap.log_delta(x)
    ref = np.log1p(-np.exp((x[:3] - 1) / 2))
    assert np.allclose(got[:3], ref, rtol=1e-12, atol=0)
    assert np.all(np.isneginf(got[3:]))
    pw = Profile(sympy.Piecewise((sympy.exp(-e), e < 2), (0, True)))
    assert np.isneginf(pw.log_delta(3.0)) and pw.log_delta(1.0) == -1.0
    prod = Profile(sympy.exp(-e) * sympy.Max(1 - e / 4, 0))
    assert np.isneginf(prod.log_delta(5.0))
    assert abs(prod.log_delta(2.0) - (-2.0 + np.log(0.5))) < 1e-14
    gauss_tail = Profile(sympy.exp(-e**2))
    assert gauss_tail.log_delta(40.0) == -1600.0  # underflows in float64, not a zero


def test_piecewise_cancellation_is_judged_per_branch():
    """A refined profile whose head branch is a difference but whose tail is exp(-eps^2)
    evaluates the tail from the log-expression (exactly -eps^2, the closed form) and a
    Piecewise whose tail branch really cancels (the Gaussian profile written with erfc)
    still gets 40-digit-checked values there (reference: symgdp.gaussian.precise at 40 digits)."""
    import numpy as np
    import sympy

    from symgdp import eps as e
    from symgdp.gaussian import precise

    refined = Profile(sympy.Piecewise((sympy.Rational(4, 5) - sympy.exp(e) / 5, e < 1),
                                      (sympy.exp(-e**2), True)))
    x = np.array([30.0, 45.0, 100.0])
    assert np.array_equal(refined.log_delta(x), -x**2)
    a, b = -e + sympy.Rational(1, 2), -e - sympy.Rational(1, 2)
    gauss = sympy.erfc(-a / sympy.sqrt(2)) / 2 - sympy.exp(e) * sympy.erfc(-b / sympy.sqrt(2)) / 2
    pw = Profile(sympy.Piecewise((sympy.Integer(1) - e / 100, e < sympy.Rational(1, 100)),
                                 (gauss, True)))
    got = pw.log_delta(np.array([40.0, 60.0]))
    ref = [float(precise.log_delta_mu(v, 1)) for v in (40.0, 60.0)]
    assert np.allclose(got, ref, rtol=1e-13, atol=0)


def test_structural_zero_of_a_finite_sum():
    """The exact k-fold profile (a finite Sum of Max(.., 0) terms) is exactly 0 beyond
    k*eps0 and matches the KOV sum below it (reference: the sum in 40-digit mpmath)."""
    import mpmath
    import numpy as np

    from symgdp import composition

    k, e0 = 3, 0.5
    prof = composition.optimal_pure_dp(e0, k)
    assert np.all(np.isneginf(prof.log_delta(np.array([1.6, 10.0, 90.0]))))
    with mpmath.workdps(40):
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        q = 1 - p
        x = mpmath.mpf(1)
        ref = mpmath.fsum(mpmath.binomial(k, j) * max(p**j * q**(k - j)
                                                      - mpmath.exp(x) * q**j * p**(k - j), 0)
                          for j in range(k + 1))
    assert abs(prof.log_delta(1.0) - float(mpmath.log(ref))) <= 1e-12 * abs(float(mpmath.log(ref)))


def test_a_tradeoff_equation_is_solved_once(monkeypatch):
    """The second from_tradeoff of the same equation (other values) reuses the solution;
    both give the closed form B exp(-sigma^2 eps^2 / A^2) (solved by hand)."""
    import sympy

    import symgdp.profile as profile_module
    from symgdp import eps as e

    calls = []
    real = profile_module.run_bounded

    def counting(fn, *args, **kwargs):
        calls.append(fn)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(profile_module, "run_bounded", counting)
    monkeypatch.setattr(profile_module, "_SOLVED", {})
    text = "sigma = A/eps*sqrt(log(B/delta))"
    p1 = Profile.from_tradeoff(text, {"A": 1, "B": 2, "sigma": 1})
    p2 = Profile.from_tradeoff(text, {"A": 2, "B": 3, "sigma": 1})
    assert len(calls) == 1
    for p, (A, B) in ((p1, (1, 2)), (p2, (2, 3))):
        assert sympy.simplify(p.bound_expr - B * sympy.exp(-e**2 / A**2)) == 0


def test_two_symbols_with_one_name_are_refused_by_name():
    """A parameter Symbol('varepsilon') without assumptions is not symgdp's eps, but
    compiled code cannot tell them apart (lambdify raised SyntaxError: duplicate argument;
    reviewer's finding)."""
    vp = sympy.Symbol("varepsilon")
    with pytest.raises(ProfileError, match="both called 'varepsilon'"):
        Profile(vp * sympy.exp(-eps), {vp: 0.5})
    a, a_pos = sympy.Symbol("A"), sympy.Symbol("A", positive=True)
    with pytest.raises(ProfileError, match="both called 'A'"):
        Profile(a * a_pos * sympy.exp(-eps), {a: 1, a_pos: 2})


def test_replace_values_merges():
    # issue 30: a partial dict binds the parameters it names and keeps the others
    p = Profile(B * E(-sigma**2 * eps**2), {"B": 2, "sigma": 3})
    q = p.replace(values={"sigma": 5})
    assert {str(k): v for k, v in q.values.items()} == {"B": 2, "sigma": 5}
    # the value it computes is the one of the merged values: 2 e^{-25} at eps = 1 (by hand)
    assert abs(q(1.0) - 2 * mpmath.exp(-25)) <= 1e-15 * 2 * mpmath.exp(-25)
    # None unbinds one parameter; values=None unbinds them all
    assert [str(k) for k in p.replace(values={"B": None}).values] == ["sigma"]
    assert dict(p.replace(values=None).values) == {}
    # a Symbol key of the same name replaces the value bound under the name
    assert {str(k): v for k, v in p.replace(values={B: 7}).values.items()} == {"B": 7, "sigma": 3}
    with pytest.raises(ProfileError, match="mapping"):
        p.replace(values=[("B", 1)])
