"""The whole line, second round: Gaussians written with float literals, finite sums
(randomized-response compositions), profiles with switching points beyond eps_h.

Independent truths as in test_whole_line: log delta and log delta_mu in 60-digit mpmath
(every Float of the expression read as the exact binary number it stores) on log grids
out to eps = 10^4, and G = mu_GDP(eps, delta(eps)) in mpmath.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from flint import arb, ctx
from test_whole_line import DPS, _below_on_grid, _grid, _log_delta_mp

from symgdp import Profile
from symgdp.gaussian import precise
from symgdp.measurement.measure import measure
from symgdp.measurement.near_gaussian import near_gaussian_mu_bound


def _literal(mu: float, slope: str | None = None) -> Profile:
    """delta_mu typed with float literals (eps/mu stored rounded, or a given slope)."""
    s = slope if slope is not None else f"{1 / mu}"
    return Profile.parse(f"erfc(({s}*eps - {mu / 2})/sqrt(2))/2 "
                         f"- exp(eps)*erfc(({s}*eps + {mu / 2})/sqrt(2))/2")


# -- Gaussians typed with float literals ----------------------------------------------------
@pytest.mark.parametrize("mu", [0.3, 1.0, 1.5, 4.0, 0.7, 30.0])
def test_float_literal_gaussian_is_certified_on_the_whole_line(mu: float) -> None:
    p = _literal(mu)
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert m.covers_tail and m.failure_prob == 0 and m.proved_until == math.inf
    assert "literals" in m.tail_proof
    # 60-digit truth on [0.01, 10^4]: the profile (Floats read exactly) is below
    # delta_upper, and G at the grid points is at most upper
    assert _below_on_grid(p.bound_expr, m.upper, 0.01)


def test_lemma_dominating_mu_on_random_literals() -> None:
    # A(eps) <= delta_{max(mu, mu/kappa)}(eps) for every eps >= 0: checked in 60-digit
    # mpmath (independent of the ball proof) for slopes on both sides of 1/mu
    rng = __import__("random").Random(7)
    with mpmath.workdps(DPS + 20):
        for _ in range(40):
            mu = mpmath.mpf(10) ** rng.uniform(-1.3, 1.3)
            kappa = 1 + rng.choice([-1, 1]) * mpmath.mpf(10) ** rng.uniform(-15, -0.5)
            beta = mu / (2 * mpmath.sqrt(2))
            alpha = kappa / (4 * beta)
            with ctx.workprec(300):
                near = (0.0, 0.0, arb(mpmath.nstr(mu, 80)), arb(mpmath.nstr(kappa, 80)))
                mb = near_gaussian_mu_bound(near)
                top = mpmath.mpf(arb(mb.upper()).str(60, radius=False))
            assert top >= max(mu, mu / kappa) * (1 - mpmath.mpf(10) ** -25)
            for x in [0, 1e-3, 0.5, 2, 10, 100, 1e3, 1e4]:
                x = mpmath.mpf(x)
                a = (mpmath.erfc(alpha * x - beta)
                     - mpmath.exp(x) * mpmath.erfc(alpha * x + beta)) / 2
                d = precise.delta_mu(x, max(mu, mu / kappa), dps=DPS + 20)
                assert a <= d * (1 + mpmath.mpf(10) ** -30)


def test_float_literal_slope_below_one_over_mu_makes_the_tail_the_maximum() -> None:
    # 0.0333333333333333 < 1/30: the GDPT tends to 30/kappa = 1/0.0333333333333333 > 30;
    # with a short head the head bound is below it, and the whole-line bracket reaches it
    p = _literal(30.0, "0.0333333333333333")
    m = measure(p, 0.01, 1e-6, refine=False, identify=False)
    assert m.covers_tail and "maximum" in m.tail_proof
    limit = mpmath.mpf(30) / (4 * mpmath.mpf(sympy.Rational(0.0333333333333333))
                              * mpmath.mpf(15) / 2)  # mu / kappa, exact rationals
    assert m.upper >= limit and m.upper - float(limit) < 1e-12
    assert _below_on_grid(p.bound_expr, m.upper, 0.01)
    # the bracket still holds sup G from below: G at 1 (60-digit truth) is above lower
    x = mpmath.mpf(1)
    assert precise.mu_gdp(x, log_delta=_log_delta_mp(p.bound_expr, x), dps=DPS) >= m.lower


def test_float_literal_grid_independent_of_lemma() -> None:
    # the certified upper end of every literal Gaussian holds pointwise in G (60 digits)
    for mu in (0.3, 4.0):
        p = _literal(mu)
        m = measure(p, 100.0, 1e-6, refine=False, identify=False)
        for x in _grid(1.0, 1e4, 25):
            g = precise.mu_gdp(x, log_delta=_log_delta_mp(p.bound_expr, x), dps=DPS)
            assert g <= m.upper


# -- finite sums: the randomized-response composition ---------------------------------------
def test_rr_composition_beyond_eps_h_is_certified() -> None:
    # 1000-fold 0.2-DP: the profile is 0 beyond eps = 200 > eps_h = 100 (a finite Sum)
    from symgdp import composition

    p = composition.optimal_pure_dp(0.2, 1000)
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    assert m.covers_tail and m.failure_prob == 0 and "subdivision" in m.tail_proof
    # 60-digit truth: the binomial sum term by term in mpmath (its Floats read exactly)
    # against delta_upper, and exactly 0 beyond 200.1 (the largest switch point)
    expr = p.bound_expr.xreplace({f: sympy.Rational(f) for f in p.bound_expr.atoms(sympy.Float)})
    coeff, s = expr.as_coeff_Mul()
    i = s.limits[0][0]
    term = sympy.lambdify((i, p.var), s.function, "mpmath")

    def delta(x: mpmath.mpf) -> mpmath.mpf:
        with mpmath.workdps(DPS + 40):
            return mpmath.mpf(coeff) * mpmath.fsum(term(k, x) for k in range(1001))

    for x in _grid(100.0, 199.0, 8):
        with mpmath.workdps(DPS + 40):
            assert mpmath.log(delta(x)) <= precise.log_delta_mu(x, m.upper, dps=DPS)
    assert all(delta(x) == 0 for x in _grid(200.1, 1e4, 4))


def test_sum_rule_encloses_every_term() -> None:
    # the Sum rule's upper form at E = 50 lies above the 60-digit log of the sum
    from flint import ctx as fctx

    from symgdp.measurement.whole_line.infinity_forms import Rules
    from symgdp.symbolic.symbols import eps

    i = sympy.Symbol("i", integer=True)
    expr = sympy.Sum(sympy.binomial(6, i) * sympy.exp(-eps**2 / (2 * (i + 1)**2) - i * eps)
                     / 64, (i, 0, 6))
    with fctx.workprec(128):
        lg = Rules(eps, 50.0).log(expr)
        hi = {k: float(v.upper()) for k, v in lg.hi.c.items()}
    exact = sympy.lambdify(eps, expr.doit(), "mpmath")
    with mpmath.workdps(DPS):
        for x in _grid(50.0, 1e4, 20):
            up = sum(c * x ** float(k[0]) * mpmath.log(x) ** k[1] for k, c in hi.items())
            assert mpmath.log(exact(x)) <= up


def test_sum_whose_tail_is_heavier_gets_the_larger_mu_or_nothing() -> None:
    # an adversary: the last term has the heaviest tail (mu = 4 at infinity) but a tiny
    # weight; the head bound on [0, 20] is far below 4
    i = sympy.Symbol("i", integer=True)
    text_sum = sympy.Sum(sympy.Rational(1, 4) ** (i + 1)
                         * sympy.exp(-Profile.parse("eps").var ** 2 / (2 * (i + 1) ** 2)
                                     - 40 * (3 - i) ** 2), (i, 0, 3))
    p = Profile(text_sum)
    m = measure(p, 20.0, 1e-4, refine=False, identify=False)
    expr = p.bound_expr.doit()
    if m.covers_tail:
        for x in _grid(20.0, 1e4, 30):  # 60-digit truth: G <= upper everywhere
            g = precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS)
            assert g <= m.upper
    x = mpmath.mpf(10**4)
    assert precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS) > m.lower


# -- Piecewise profiles whose pieces switch beyond eps_h -------------------------------------
@pytest.mark.parametrize("text", [
    "Piecewise((exp(-eps**2/8)/2, eps < 150), (exp(-eps**2/8 - eps)/2, True))",
    "Piecewise((exp(-eps**2/2 - eps)/3, eps < 250), (exp(-eps**2/2 - 2*eps)/3, True))",
    # adversary: the last piece rises above the head's bound (jumps up at 150)
    "Piecewise((exp(-eps**2/8)/2, eps < 150), (exp(-eps**2/9)/2, True))",
    # adversary: a late bump that ends beyond eps_h, written as a piece
    "Piecewise((exp(-eps**2/8)/2 + exp(-300)*(1 - eps/3000), eps < 3000), "
    "(exp(-eps**2/8)/2, True))",
])
def test_piecewise_switching_beyond_eps_h(text: str) -> None:
    p = Profile.parse(text)
    m = measure(p, 100.0, 1e-6, refine=False, identify=False)
    expr = p.bound_expr
    if m.covers_tail:
        # 60-digit truth on [eps_h, 10^4] across the switching points
        for x in [*_grid(100.0, 1e4, 40), mpmath.mpf(150), mpmath.mpf(250),
                  mpmath.mpf(2999)]:
            g = precise.mu_gdp(x, log_delta=_log_delta_mp(expr, x), dps=DPS)
            assert g <= m.upper
    else:
        assert m.failure_prob > 0 and any("whole line" in n for n in m.notes)
    if "eps**2/8 - eps" in text or "2*eps" in text:
        assert m.covers_tail  # the honest pieces are certified


def test_slow_decay_says_no_mu_holds() -> None:
    # delta ~ C/eps (the refined ICEA bound): no mu on the whole line, and the note says so
    from symgdp import mechanisms

    m = measure(mechanisms.shuffle_sum(100, 1000).refine(), 100.0, 1e-6, refine=False,
                identify=False)
    assert not m.covers_tail
    assert any("grows without bound" in n for n in m.notes)
    x = mpmath.mpf(10**4)  # truth: G(10^4) far above the head bound (60-digit mpmath)
    g = precise.mu_gdp(x, log_delta=_log_delta_mp(m.profile.bound_expr, x), dps=DPS)
    assert g > 10 * m.upper
