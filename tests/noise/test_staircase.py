"""The staircase mechanism (Geng & Viswanath 2016): symgdp.noise.staircase.staircase.

References, independent of the package: the density written here from its definition
(f = a b^k on [k D, (k + gamma) D), a b^(k+1) on [(k + gamma) D, (k + 1) D), even), and
the hockey-stick integral int (p(x) - e^eps p(x - s))_+ dx summed exactly over the pieces
of the piecewise-constant integrand (every breakpoint of p(x) and of p(x - s), sorted, the
integrand's value at each piece's midpoint times its length) at 50 digits, over a window
outside which the noise has mass below e^-100.  The GDP parameter mu is the largest
value of the GDP transform over eps (references.gdpt_below, references.golden_max), and
for gamma = 1/2 the pure-DP closed form -2 Phi^-1(1/(1 + e^eps0)) (theory §3).
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from references import gdpt_below, golden_max

import symgdp
from symgdp.errors import DomainError
from symgdp.noise.staircase import optimal_gamma, staircase

DPS = 50
E0 = sympy.Symbol("epsilon_0", positive=True)


def pieces(e0, g, d, s):
    """(p(mid), p(mid - s), length) over the pieces of (p(x) - e^eps p(x - s))_+, from the
    definition of the staircase density (50 digits)."""
    with mpmath.workdps(DPS):
        e0, g, d, s = (mpmath.mpf(v) for v in (e0, g, d, s))
        b = mpmath.exp(-e0)
        a = (1 - b) / (2 * d * (g + (1 - g) * b))

        def p(x):
            v = abs(x) / d
            k = mpmath.floor(v)
            return a * b ** k if v - k < g else a * b ** (k + 1)

        top = int(mpmath.ceil(100 / e0)) + 2  # P(|Z| >= (top - 1) d) = b^(top - 1) < e^-100
        ends = set()
        for k in range(top + 1):
            for t in (k, k + g):
                ends |= {t * d, -t * d, t * d + s, -t * d + s}
        ends = sorted(ends)
        return [(p((lo + hi) / 2), p((lo + hi) / 2 - s), hi - lo)
                for lo, hi in zip(ends[:-1], ends[1:], strict=True)]


def hockey(cells, eps):
    """int (p(x) - e^eps p(x - s))_+ dx over the precomputed pieces."""
    with mpmath.workdps(DPS):
        ee = mpmath.exp(mpmath.mpf(eps))
        return mpmath.fsum(max(0, u - ee * v) * w for u, v, w in cells)


def value(profile, eps):
    """The package's formula at 50 digits (its expression, each parameter bound to the
    exact binary value of its float: binding a Float lets SymPy round exp(-0.5) to 15
    digits)."""
    at = {k: sympy.Rational(float(v)) for k, v in profile.values.items()}
    with mpmath.workdps(DPS):
        f = sympy.lambdify(symgdp.eps, profile.expr.xreplace(at), "mpmath")
        return f(mpmath.mpf(eps))


@pytest.fixture(scope="module")
def symbolic():
    """One profile per gamma, symbolic in eps0 (bound per case below)."""
    return {g: staircase(E0, g) for g in (0, 0.3, 0.5, 1)}


@pytest.mark.parametrize("gamma", [0, 0.3, 0.5, 1])
@pytest.mark.parametrize("e0", [0.5, 1, 3])
def test_profile_is_the_hockey_stick_integral(symbolic, gamma, e0):
    # reference: the 50-digit piece sum of the definition (module docstring)
    p = symbolic[gamma].replace(values={"epsilon_0": e0})
    cells = pieces(e0, gamma, 1, 1)
    for t in (0, 0.1, 0.5, 0.9, 0.999):
        ref = hockey(cells, t * e0)
        assert abs(value(p, t * e0) - ref) < mpmath.mpf(10) ** -40
        # the float64 evaluation (not a certified bound for a formula: measure() is)
        assert abs(p(t * e0) - ref) <= 1e-13 * ref
    for t in (1, 1.5, 4):         # pure DP: nothing beyond eps0, in the reference too
        assert hockey(cells, t * e0) < mpmath.mpf(10) ** -45   # 0 up to 50-digit rounding
        assert p(t * e0) == 0


@pytest.mark.parametrize("gamma", [0, 0.3, 0.5, 1])
def test_delta_at_zero_is_the_total_variation(symbolic, gamma):
    # reference: TV = (1/2) int |p(x) - p(x - 1)| dx over the same pieces
    for e0 in (0.5, 3):
        with mpmath.workdps(DPS):
            tv = mpmath.fsum(abs(u - v) * w for u, v, w in pieces(e0, gamma, 1, 1)) / 2
        p = symbolic[gamma].replace(values={"epsilon_0": e0})
        assert abs(value(p, 0) - tv) < mpmath.mpf(10) ** -40


def test_the_profile_does_not_depend_on_the_sensitivity():
    # reference: the piece sum with Delta = 5/2 (the density scaled with it)
    p = staircase(1, 0.3, sensitivity=2.5)
    cells = pieces(1, 0.3, 2.5, 2.5)
    for e in (0, 0.4, 0.8):
        assert abs(value(p, e) - hockey(cells, e)) < mpmath.mpf(10) ** -40


@pytest.mark.parametrize("gamma", [0.3, 0.8])   # both sides of 1/2
def test_smaller_shifts_are_not_worse(symbolic, gamma):
    # the module's proof that |s| <= Delta is covered (the density is not log-concave):
    # reference: the piece sum with shifts s = 0.3, 0.9 and -0.55 against Delta = 1
    e0 = 1
    p = (symbolic[gamma] if gamma in symbolic else staircase(E0, gamma)).replace(
        values={"epsilon_0": e0})
    for s in (0.3, 0.9, -0.55):
        cells = pieces(e0, gamma, 1, s)
        for e in (0, 0.3, 0.7):
            assert hockey(cells, e) <= value(p, e)


def test_optimal_gamma_against_laplace():
    # reference: the piece sum at gamma* = 1/(1 + e^(eps0/2)) equals
    # (1 - e^(-eps0/2)/2)(1 - e^(-eps0)) (docs/noise.md), above Laplace noise of scale
    # Delta/eps0, whose delta(0) is 1 - e^(-eps0/2) (closed form); both are eps0-DP
    for e0 in (1, 3):
        g = optimal_gamma(e0)
        assert sympy.simplify(g - 1 / (1 + sympy.exp(sympy.Rational(e0) / 2))) == 0
        with mpmath.workdps(DPS):
            cells = pieces(e0, mpmath.mpf(sympy.N(g, DPS)), 1, 1)
            ref = hockey(cells, 0)
            x = mpmath.mpf(e0)
            closed = (1 - mpmath.exp(-x / 2) / 2) * (1 - mpmath.exp(-x))
            assert abs(ref - closed) < mpmath.mpf(10) ** -40
            for t in (0, 0.5, 0.95):   # the page's claim: above Laplace below eps0
                assert hockey(cells, t * x) > 1 - mpmath.exp((t * x - x) / 2)
        # the package at the float nearest gamma* (an irrational gamma is refused): its
        # exact profile differs from gamma*'s by far less than 1e-15
        assert abs(staircase(e0, float(g))(0.0) - float(closed)) < 1e-15


def _mu_reference(e0, gamma):
    """sup over eps of the GDP transform of the reference profile: a grid, then golden
    section around its best point (each value a bisection from below to 2^-90)."""
    cells = pieces(e0, gamma, 1, 1)
    with mpmath.workdps(40):
        def h(e):
            return gdpt_below(e, hockey(cells, e), iterations=75)

        xs = [mpmath.mpf(e0) * i / 12 for i in range(12)]
        vals = [h(x) for x in xs]
        # the maximum is inside (0, eps0) here: 0.618^45 of the bracket leaves an error
        # quadratic in it, far below the measured bracket's width
        return max(max(vals), golden_max(h, xs, vals, 45))


def test_measured_mu_brackets_the_reference(symbolic):
    # reference: the golden-section maximum of the GDP transform of the piece sum
    e0 = 1
    m = symbolic[0.3].replace(values={"epsilon_0": e0}).measure(eps_h=e0)
    assert m.lower <= _mu_reference(e0, 0.3) <= m.upper


def test_measured_mu_at_half_is_randomized_response(symbolic):
    # gamma = 1/2 has randomized response's profile: the pure-DP closed form
    # mu = -2 Phi^-1(1/(1 + e^eps0)) (theory §3), at 40 digits
    for e0 in (1, 3):
        m = symbolic[0.5].replace(values={"epsilon_0": e0}).measure(eps_h=e0)
        with mpmath.workdps(40):
            x = mpmath.mpf(e0)
            closed = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(x)) - 1)
        assert m.lower <= closed <= m.upper


@pytest.mark.parametrize("args", [
    (0, 0.3), (-1, 0.3), (float("nan"), 0.3), (float("inf"), 0.3), (True, 0.3),
    (1, -0.1), (1, 1.5), (1, sympy.Symbol("g", positive=True)), (1, "a"),
    (1, optimal_gamma(1)),
    (sympy.Symbol("e"), 0.3)])
def test_bad_input_is_named(args):
    with pytest.raises(DomainError):
        staircase(*args)
    with pytest.raises(DomainError, match="sensitivity"):
        staircase(1, 0.3, sensitivity=-2)


def test_derivation_and_report():
    p = staircase(E0, sympy.Rational(1, 2))
    d = p.meta["derivation"]
    assert d.verdict.startswith("pure DP") and "epsilon_0-DP" in d.verdict
    assert [ell for ell, _ in d.masses] == [E0, -E0]   # no L = 0 part at gamma = 1/2
    assert p.meta["eps0"] == E0
    text = str(symgdp.report(p.replace(values={"epsilon_0": 1}), measure=False))
    assert "masses" in text and "staircase" in text
    assert math.isclose(p.replace(values={"epsilon_0": 1})(0.0),
                        (math.e - 1) / (math.e + 1), rel_tol=1e-14)
