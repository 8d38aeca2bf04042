"""Needless refusals and loose results of issue 21, answered (round 3).

Every bracket is checked as ``lower <= truth <= upper`` against an independent reference:
the GDP family and its inverse G(eps, delta) in 40-digit mpmath (bisection on mu, not
symgdp's own inversion), and closed forms of the step profiles and their refinements
(theory: delta_ref(eps) = 1 - (1 + e^eps) sup_{e0 >= eps} R(e0), R = (1 - delta)/(1 + e^e0),
and for a step profile that supremum is over R(eps) and the right limits R(s+) of the steps).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import mpmath
import pytest
import sympy
from references import golden_max

from symgdp import Profile, eps
from symgdp.accounting.pure_dp import optimal_pure_dp
from symgdp.errors import ParseError
from symgdp.symbolic.parsing import parse_expression
from symgdp.symbolic.steps import _simple, canonical_steps, right_limit, step_points

P, H = sympy.Piecewise, sympy.Heaviside
DPS = 40
# SYMGDP_TEST_SCALE >= 2 runs the references at their original (finer) sizes
SCALE = max(1, int(os.environ.get("SYMGDP_TEST_SCALE", "1")))


# -- the independent reference --------------------------------------------------------------
def delta_mu(mu, e):
    """The Gaussian profile (Dong, Roth & Su 2021, Cor. 2.13) in mpmath."""
    mu, e = mpmath.mpf(mu), mpmath.mpf(e)
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def G(e, d, iterations=120):
    """mu with delta_mu(e) = d: bisection in log mu (delta_mu increases with mu)."""
    d = mpmath.mpf(d)
    lo, hi = mpmath.mpf("1e-8"), mpmath.mpf(200)
    for _ in range(iterations):
        m = mpmath.sqrt(lo * hi)
        if delta_mu(m, e) < d:
            lo = m
        else:
            hi = m
    return (lo + hi) / 2


@functools.cache
def _step_truth(*points: tuple[int, str]) -> mpmath.mpf:
    """max of G(eps, d) over the (eps, d) given: the left limits of a step profile at its
    steps (closed form in G), computed once per test process for every spelling and both
    certify settings (the same numbers each time)."""
    with mpmath.workdps(DPS):
        return max(G(e, d) for e, d in points)


def _contains(m, truth):
    assert m.lower <= truth <= m.upper, (m.lower, float(truth), m.upper)


# -- 1. Or/And/Not conditions ----------------------------------------------------------------
# 0.3 on [0, 3), 0.01 on [3, 5), 0 after, in many spellings (both ends of each step open or
# closed: the supremum of G is the same left limit G(3-, 0.3), since G(eps, d) increases
# with eps for a fixed d)
SPELLINGS = {
    "or": P((0.3, (eps < 2) | (eps < 3)), (0.01, eps < 5), (0, True)),
    "or-closed": P((0.3, (eps <= 3) | (eps < 1)), (0.01, (eps < 5) | (eps < 4)), (0, True)),
    "and": P((0.01, (eps >= 3) & (eps < 5)), (0.3, eps < 3), (0, True)),
    "not": P((0.3, ~(eps >= 3)), (0.01, ~(eps >= 5)), (0, True)),
    "reversed": P((0.01, (eps >= 3) & (eps < 5)), (0, eps >= 5), (0.3, True)),
    "greater": P((0, eps > 5), (0.01, eps > 3), (0.3, True)),
    "heaviside": 0.29 * H(3 - eps) + 0.01 * H(5 - eps),
    "heaviside-1": 0.29 * H(3 - eps, 1) + 0.01 * H(-eps + 5, 0),
    "sum": P((0.29, eps < 3), (0, True)) + P((0.01, eps <= 5), (0, True)),
}


@pytest.mark.parametrize("certify", [False, True])
@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_step_spellings_measured(name, certify):
    truth = _step_truth((3, "0.3"), (5, "0.01"))  # closed form: the left limits at the steps
    m = Profile(SPELLINGS[name]).measure(refine=False, certify=certify)
    assert m.covers_tail
    _contains(m, truth)


@pytest.mark.parametrize("certify", [False, True])
def test_issue_or_profile(certify):
    # the issue's profile: 0.3 on [0, 3), 0.01 after (not GDP: the head on [0, 100] only);
    # its supremum on the head is at 3- or at 100
    e = P((0.3, (eps < 2) | (eps < 3)), (0.01, True))
    truth = _step_truth((3, "0.3"), (100, "0.01"))
    m = Profile(e).measure(refine=False, certify=certify)
    _contains(m, truth)


def test_cli_or_condition():
    expr = "Piecewise((0.3, (eps<2)|(eps<3)), (0.01, eps<5), (0, True))"
    out = subprocess.run([sys.executable, "-m", "symgdp", "analyze", expr, "--no-refine",
                          "--json"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    with mpmath.workdps(DPS):
        truth = G(3, "0.3")  # closed form, as above
    assert got["mu_lower"] <= truth <= got["mu_upper"]


@pytest.mark.parametrize("text", ["eps | 2", "~eps", "exp(-eps) & 1",
                                  "Piecewise((0.3, (eps | 2) < 3), (0, True))"])
def test_logic_operators_only_in_conditions(text):
    with pytest.raises(ParseError, match="is for Piecewise conditions only"):
        parse_expression(text)


def test_logic_operators_in_conditions_parse():
    got = parse_expression("Piecewise((0.3, ~(eps >= 3) & (eps < 5) | (eps < 1)), (0, True))")
    want = P((0.3, (~(eps >= 3) & (eps < 5)) | (eps < 1)), (0, True))
    x = [0, 1, 2.5, 2.999, 3, 4, 5]
    assert [got.subs(eps, v) for v in x] == [want.subs(eps, v) for v in x]


def test_canonical_chain_is_the_same_function():
    # every rewrite is checked pointwise, at the ends, just beside them and between them
    # (exact rationals: no float ties), against SymPy's own evaluation of the original
    x = sympy.Symbol("x", positive=True)
    cases = [
        P((3, (x < 2) | (x < 3)), (1, True)),
        P((3, (x >= 1) & (x < 2)), (1, True)),
        P((3, ~(x < 1)), (1, True)),
        P((sympy.exp(-x), (x > 5) | (x < 2)), (1, True)),
        P((5, sympy.Eq(x, 1)), (2, x < 2), (1, True)),
        P((1, x <= 1), (0, True)) + P((1, x < 2), (sympy.S.Half, True)),
        P((1, x < 2), (7, x < 1), (0, True)),
    ]
    pts = [sympy.Rational(k, 4) for k in range(0, 28)]
    pts += [p + d for p in (1, 2, 3, 5) for d in (sympy.Rational(-1, 10**9),
                                                  sympy.Rational(1, 10**9))]
    for e in cases:
        c = canonical_steps(e, x)
        assert isinstance(c, P)
        for p in pts:
            assert sympy.simplify(c.subs(x, p) - e.subs(x, p)) == 0, (e, c, p)


def test_canonical_chain_random_conditions():
    # random And/Or/Not/Xor trees of comparisons (every operator, both directions, ties
    # between thresholds), checked exactly at every threshold, just beside it and between
    # thresholds, against SymPy's evaluation of the original Piecewise
    import random

    rng = random.Random(20261126)
    x = sympy.Symbol("x", positive=True)
    ops = [sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge, sympy.Eq, sympy.Ne]

    def tree(depth):
        if depth == 0 or rng.random() < 0.3:
            c = sympy.Rational(rng.randint(0, 12), 2)
            rel = rng.choice(ops)
            return rel(x, c) if rng.random() < 0.5 else rel(2 * c - 2 * x, 0)
        kind = rng.choice([sympy.And, sympy.Or, sympy.Not, sympy.Xor])
        if kind is sympy.Not:
            return sympy.Not(tree(depth - 1))
        return kind(tree(depth - 1), tree(depth - 1))

    for _ in range(40):
        args = [(sympy.Rational(rng.randint(0, 9), 10), tree(3)) for _ in range(3)]
        e = P(*args, (1, True))
        c = canonical_steps(e, x)
        # a chain: var < c_k / var <= c_k, non-decreasing, then True (or one constant)
        assert not isinstance(c, P) or _simple(c, x, strict=False), c
        ends = sorted({sympy.Rational(k, 2) for k in range(13)})
        pts = {sympy.S.Zero} | {t + d for t in ends for d in (0, sympy.Rational(1, 10**6),
                                                              -sympy.Rational(1, 10**6))}
        for p in sorted(q for q in pts if q >= 0):
            assert c.subs(x, p) == e.subs(x, p), (e, c, p)


def test_step_points_and_right_limits():
    x = sympy.Symbol("x", positive=True)
    assert step_points(P((1, (x < 2) | (x > 5)), (0, True)) + H(3 - x), x) == [2, 3, 5]
    assert right_limit(P((sympy.S.Half, x <= 1), (sympy.exp(-x), True)), x, 1) == sympy.exp(-1)
    assert right_limit(H(2 - x) / 4 + H(3 - x) / 4, x, 2) == sympy.Rational(1, 4)
    # a branch that itself jumps at s: no claim
    assert right_limit(P((1, x < 1), (sympy.floor(x), True)), x, 1) is None


# -- 2. the 1000-fold optimal composition in float mode ------------------------------------
def _kov(e0, k, e):
    """Kairouz-Oh-Viswanath (2015, Thm 3.3), the binomial sum itself, at 100 digits."""
    e0, e = mpmath.mpf(e0), mpmath.mpf(e)
    s = mpmath.fsum(mpmath.binomial(k, i) * max(mpmath.exp((k - i) * e0)
                                                - mpmath.exp(e + i * e0), 0)
                    for i in range(k + 1))
    return s / (1 + mpmath.exp(e0)) ** k


@pytest.mark.slow
def test_optimal_pure_dp_float_mode(monkeypatch):
    # the search's "has run 15 s" notice is a wall-clock SymgdpWarning (an error under the
    # suite's filterwarnings): on a loaded machine it failed this test by the clock alone
    monkeypatch.setattr("symgdp.measurement.search._WARN_AFTER_SECONDS", float("inf"))
    m = optimal_pure_dp(1, 1000).measure(certify=False)
    assert m.upper - m.lower <= 1.01e-6
    with mpmath.workdps(100):  # delta is within 1e-50 of 1 there
        pts = [mpmath.mpf(m.argmax)] + [1 + mpmath.mpf(j) / 10**5 for j in range(0, 41, 4)]
        # 100 halvings of log mu over [1e-8, 200] leave a relative error of ~2e-29 in G,
        # still far below the float bounds' ulps (and delta's 1e-50 margin to 1 is resolved
        # by the 100 digits, not by the iterations; 200 with SYMGDP_TEST_SCALE >= 2)
        g = [G(x, _kov(1, 1000, x), iterations=200 if SCALE >= 2 else 100) for x in pts]
    # G at the reported best point is at least the lower bound; no point beats the upper
    assert m.lower <= g[0]
    assert max(g) <= m.upper


# -- 3./4. refinement exact at the steps ------------------------------------------------------
def _refined_truth(levels, ends, closed):
    """sup G of the refinement of the step profile levels[k] on the k-th piece (ends of the
    pieces ``ends``, each closed or open), the last level 0: on each flat piece
    [a_k, s_k] delta_ref = 1 - (1 + e^eps) R(s_k+) and left of a_k it is the naive level;
    G is maximised over the crossing points a_k, the step points and a grid of each flat
    piece (G increases with eps where delta is constant)."""
    def naive_R(x):
        for lv, s, c in zip(levels, ends, closed, strict=True):
            if x < s or (c and x == s):
                return (1 - lv) / (1 + mpmath.exp(x))
        return 1 / (1 + mpmath.exp(x))

    right = [(1 - (levels[k + 1] if k + 1 < len(levels) else 0)) / (1 + mpmath.exp(s))
             for k, s in enumerate(ends)]

    def sup_R(x):
        return max([naive_R(x)] + [r for s, r in zip(ends, right, strict=True) if s >= x])

    def d_ref(x):
        return max(0, 1 - (1 + mpmath.exp(x)) * sup_R(x))

    def h(x):
        d = d_ref(x)
        return G(x, d, iterations=100 if SCALE >= 2 else 80) if d > 0 else mpmath.mpf(-1)

    best = mpmath.mpf(-1)
    left = mpmath.mpf(0)
    for k, s in enumerate(ends):
        s = mpmath.mpf(s)
        # the crossing a_k: naive level meets the flat piece of step k
        lv = levels[k]
        q = (1 - lv) * (1 + mpmath.exp(s)) / (1 - (levels[k + 1] if k + 1 < len(levels)
                                                   else 0)) - 1
        a = max(mpmath.log(q), left) if q > 0 else left  # q <= 0: flat from the start
        left = s
        if SCALE >= 2:  # the original reference: a 200-point grid of the piece
            cands = [a + (s - a) * j / 200 for j in range(200)] + [s - (s - a) / 10**12]
            best = max([best] + [h(x) for x in cands])
            continue
        # G is smooth on the piece (delta_ref = 1 - (1 + e^eps) R(s_k+) there): a 20-point
        # grid, then golden section between the best point's neighbours (0.618^40 ~ 4e-9
        # of a grid step), which is at least the grid's maximum and closer to the
        # supremum than the 200-point grid it replaces (a fifth of the G evaluations)
        xs = [a + (s - a) * j / 20 for j in range(20)] + [s - (s - a) / 10**12]
        vals = [h(x) for x in xs]
        best = max(best, max(vals), golden_max(h, xs, vals, 40))
    return best


@functools.cache
def _refined_truth_once(levels, ends, closed):
    """The mpmath truth of one case, computed once per test process (both ``certify``
    settings compare with it)."""
    with mpmath.workdps(DPS):
        return _refined_truth([mpmath.mpf(sympy.Float(v)) for v in levels], ends, closed)


REFINE_CASES = [
    # (levels, ends, closed): the float-mode failures of the last round and neighbours
    ((0.5, 0.1), (0.5, 5), (False, True)),
    ((0.9, 0.5), (1, 2), (False, True)),
    ((0.999, 1e-6), (1, 2), (True, False)),
    ((0.999, 1e-6), (0.5, 5), (True, False)),
    ((0.3, 0.01), (0.5, 5), (True, True)),
    # steps at 3 and 3.5: a RecursionError (SymPy's piecewise_fold on eps < 3.5 inside
    # eps < 3.50000000000000000000000000000000000077) on the last round's code
    ((0.5, 0.1), (3, 3.5), (False, False)),
    ((0.3, 0.01), (3, 3.5), (True, False)),
]


@pytest.mark.slow  # the reference's search in mpmath, once per case (cached)
@pytest.mark.xdist_group("refined_closed_steps")  # one worker: the truth is computed once
@pytest.mark.parametrize("certify", [False, True])
@pytest.mark.parametrize("levels,ends,closed", REFINE_CASES)
def test_refined_closed_steps(levels, ends, closed, certify):
    e = P(*[(sympy.Float(lv), (eps <= s) if c else (eps < s))
            for lv, s, c in zip(levels, ends, closed, strict=True)], (0, True))
    m = Profile(e).refine().measure(certify=certify)
    truth = _refined_truth_once(levels, ends, closed)
    # the grid estimate is below the supremum by far less than the tolerance
    assert m.lower <= truth + 1e-9 and truth <= m.upper


NARROW = {
    "open": P((0.001, eps < 10), (0, True)),
    "closed": P((0.001, eps <= 10), (0, True)),
    "or": P((0.001, (eps < 5) | (eps < 10)), (0, True)),
    "heaviside": 0.001 * H(10 - eps),
    "heaviside-0": 0.001 * H(10 - eps, 0),
    "heaviside-1": 0.001 * H(10 - eps, 1),
}


@pytest.mark.parametrize("name", sorted(NARROW))
def test_narrow_piece_next_to_a_step(name):
    r = Profile(NARROW[name]).refine()
    segs = r.meta["segments"]
    assert len(segs) == 1 and segs[-1][1] == 10  # the flat piece ends exactly at the step
    with mpmath.workdps(DPS):
        # closed form: the flat piece is the (10, 0) pure pair, 1 - (1 + e^eps)/(1 + e^10),
        # from a = log(0.999 (1 + e^10) - 1), where it meets the naive level 0.001
        a = mpmath.log(mpmath.mpf("0.999") * (1 + mpmath.exp(10)) - 1)
        truth = G(a, "0.001")
        unrefined = G(10, "0.001")
        for t in (a + (10 - a) * j / 7 for j in range(1, 7)):
            flat = (mpmath.exp(10) - mpmath.exp(t)) / (1 + mpmath.exp(10))
            v = r.mp(t, dps=DPS)
            assert flat <= v <= flat * (1 + mpmath.mpf(10) ** -30) + mpmath.mpf(10) ** -40
            assert G(t, flat) < truth  # the supremum is at a, not inside the flat piece
    for certify in (False, True):
        m = r.measure(certify=certify)
        _contains(m, truth)
        assert m.upper < unrefined  # tighter than the unrefined profile's supremum


def test_tiny_and_irrational_steps_refined():
    with mpmath.workdps(DPS):
        # a 1e-300 step: the flat piece is 1e-300 wide, the supremum G(3-, 1e-300)
        m = Profile(P((1e-300, eps < 3), (0, True))).refine().measure(certify=False)
        _contains(m, G(3, "1e-300"))
        # a step at sqrt(2) (no float64): refined with a numeric end, float mode
        a = mpmath.log(mpmath.mpf("0.99") * (1 + mpmath.exp(mpmath.sqrt(2))) - 1)
        m = Profile(P((0.01, eps < sympy.sqrt(2)), (0, True))).refine().measure(
            certify=False)
        _contains(m, G(a, "0.01"))
        # a closed step at 1/10 (no float64 either): float64 takes the wrong side at
        # fl(0.1), so the float mode falls back to the certified path and says so
        a = mpmath.log(mpmath.mpf("0.99") * (1 + mpmath.exp(mpmath.mpf(1) / 10)) - 1)
        m = Profile(P((0.01, eps <= sympy.Rational(1, 10)), (0, True))).refine().measure(
            certify=False)
        _contains(m, G(a, "0.01"))


# -- 5. real powers of balls touching 0 ------------------------------------------------------
def test_real_power_of_a_ball_touching_zero():
    # a ball built from [0, b] reaches just below 0 by the rounding of its radius; Arb's
    # power is NaN there, the enclosure is [0, b^e] (reference: mpmath's b^e at 40 digits)
    from flint import arb

    from symgdp.evaluation.interval import lambdify_arb

    for b, e in [(5e-324, 1.5), (1e-3, 1 / 3), (0.25, 0.5), (2.0, 2.5)]:
        ball = arb(0).union(arb(b))
        for f in (lambdify_arb(eps ** sympy.Float(e), eps), lambdify_arb(sympy.sqrt(eps), eps)):
            v = f(ball)
            assert v.is_finite()
        v = lambdify_arb(eps ** sympy.Float(e), eps)(ball)
        with mpmath.workdps(DPS):
            top = mpmath.mpf(b) ** mpmath.mpf(e)
        assert v.lower() <= 0 and float(v.upper()) >= float(top) * (1 - 1e-15)
        assert float(v.upper()) <= float(top) * (1 + 1e-6)
    # a ball that changes sign in earnest is no real argument: still NaN
    v = lambdify_arb((eps - 1) ** sympy.Float(1.5), eps)(arb(1 - 1e-9).union(arb(1 + 1e-9)))
    assert not v.is_finite()


def test_float_gaussian_plus_heavier_term_is_measured():
    # the reviewer's needless refusal: the float-literal Gaussian (mu = 1) plus
    # 1e-30 exp(-eps^1.5) was refused ("cannot prove non-increasing on [0, 5e-324]": the
    # derivative's eps^0.5 was NaN on that ball).  Reference: delta in 40-digit mpmath and
    # G by bisection; G increases on the grid, so the head's supremum is G(eps_h)
    text = ("0.5*erfc(0.7071067811865476*eps - 0.35355339059327373) - 0.5*exp(eps)*"
            "erfc(0.7071067811865476*eps + 0.35355339059327373) + 1e-30*exp(-eps**1.5)")
    m = Profile.parse(text).measure()
    assert not m.covers_tail  # eps^2 / (2 eps^1.5) -> oo: not GDP, the head only
    with mpmath.workdps(DPS):
        a, bb = mpmath.mpf("0.7071067811865476"), mpmath.mpf("0.35355339059327373")

        def delta(x):
            x = mpmath.mpf(x)
            return (mpmath.erfc(a * x - bb) / 2 - mpmath.exp(x) * mpmath.erfc(a * x + bb) / 2
                    + mpmath.mpf("1e-30") * mpmath.exp(-x ** 1.5))

        # the truth is G(eps_h) (the last point); the grid checks the premise that G
        # increases, which 10 points test as well as 40 on this smooth G (40 with
        # SYMGDP_TEST_SCALE >= 2)
        n = 40 if SCALE >= 2 else 10
        xs = [m.eps_h * i / n for i in range(1, n + 1)]
        gs = [G(x, delta(x)) for x in xs]
    assert all(g1 <= g2 for g1, g2 in zip(gs, gs[1:], strict=False))
    _contains(m, gs[-1])
