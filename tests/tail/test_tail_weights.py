r"""The rate of a weighted sum with one weight of undecided sign (symgdp.tail.weights) and
the erfc that keeps prepare's flips (symgdp.tail.asymptotics.TailErfc).

References, independent of the rule under test:

* hand closed forms: the rate of c e^{-s eps^2} is 2 s, a sum of positive terms decays
  like its slowest term;
* a 60-digit mpmath evaluation of -2 log S(eps)/eps^2 far out (eps = 10^4);
* for the refusals, the exact value of the profile at the tie (it is 0, or decays faster
  than the rule would say), so the rule must not apply.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy
from sympy import Rational, erf, exp, sqrt

from symgdp.symbolic.symbols import eps
from symgdp.tail.asymptotics import TailErfc, Unsupported, prepare
from symgdp.tail.weights import undecided_weight_rate

a, b, w = sympy.symbols("a b w", positive=True)


def _rate_mpmath(weights_rates, x=10**4, dps=60):
    """-2 log(sum_k c_k e^{-s_k eps^2})/eps^2 at eps = x, dps digits (rate of c e^{-s eps^2}
    is 2 s)."""
    with mpmath.workdps(dps):
        x = mpmath.mpf(x)
        s = sum(mpmath.mpf(c) * mpmath.exp(-mpmath.mpf(r) * x**2) for c, r in weights_rates)
        assert s > 0
        return -2 * mpmath.log(s) / x**2


def test_a_weight_that_vanishes_or_turns_negative():
    # w e^{-eps^2/a} + (1 - w) e^{-eps^2/b}: rates 2/a, 2/b
    ga, gb = exp(-eps**2 / a), exp(-eps**2 / b)
    r = undecided_weight_rate([(w, ga, 2 / a), (1 - w, gb, 2 / b)], eps)
    cases = [  # (w, a, b): admissible values, both orderings, the weight 0 and negative
        (Rational(1, 2), 1, 3), (Rational(1, 2), 3, 1), (1, 1, 3), (1, 3, 1), (3, 3, 1),
        (3, 2, 2)]
    for wv, av, bv in cases:
        got = r.xreplace({w: wv, a: av, b: bv})
        ref = _rate_mpmath([(wv, Rational(1, av)), (1 - wv, Rational(1, bv))])
        # far out the rate is within log(max weight)/eps^2 of its limit
        assert float(got) == pytest.approx(float(ref), abs=1e-6), (wv, av, bv)
    # hand closed forms: w = 1 drops the b term (2/a even when b > a), w = 1/2 keeps both
    assert r.xreplace({w: 1, a: 1, b: 3}) == 2
    assert r.xreplace({w: Rational(1, 2), a: 1, b: 3}) == Rational(2, 3)


def test_a_tie_that_cancels_is_refused():
    # w g_a + (1 - 2w) g_b: at a = b and w = 1 the sum is 0 (limit 0), but the formula
    # would say rate 2/a; the merged weight 1 - w is not provably positive: refused
    ga, gb = exp(-eps**2 / a), exp(-eps**2 / b)
    with pytest.raises(Unsupported):
        undecided_weight_rate([(w, ga, 2 / a), (1 - 2 * w, gb, 2 / b)], eps)
    # the value at the tie, exactly: 0
    assert (w * ga + (1 - 2 * w) * gb).xreplace({w: 1, b: a}) == 0


def test_a_tie_of_parts_that_are_not_proportional_is_refused():
    # g_j = e^{-eps^2/a} + e^{-eps^2 (1/a + 2)}, g_u = e^{-eps^2/b}, weight 1 - w: at
    # a = b, w = 2 the sum is e^{-eps^2 (1/a + 2)}, rate 2/a + 4, not the rule's 2/a
    gj = exp(-eps**2 / a) + exp(-eps**2 * (1 / a + 2))
    gu = exp(-eps**2 / b)
    with pytest.raises(Unsupported):
        undecided_weight_rate([(sympy.S.One, gj, 2 / a), (1 - w, gu, 2 / b)], eps)
    # the reference value at a = b = 1, w = 2: rate 6 (mpmath at eps = 10 with 400 digits,
    # enough to see e^{-300} beside the cancelling e^{-100})
    got = _rate_mpmath([(1, 1), (1, 3), (-1, 1)], x=10, dps=400)
    assert float(got) == pytest.approx(6, abs=1e-9)


def test_two_undecided_weights_are_refused():
    ga, gb = exp(-eps**2 / a), exp(-eps**2 / b)
    with pytest.raises(Unsupported):
        undecided_weight_rate([(1 - w, ga, 2 / a), (w - Rational(1, 2), gb, 2 / b)], eps)


def test_prepare_keeps_its_flips_for_parameters_named_before_eps():
    # SymPy writes erfc(eps/a - a/2) as 2 - erfc(a/2 - eps/a) (it depends on the names);
    # prepare must leave an erfc of an argument tending to +oo and no constant term
    g = (1 - erf((eps / a - a / 2) / sqrt(2))) / 2
    p = prepare(g, eps)
    assert p.atoms(TailErfc) and not p.atoms(sympy.erf)
    assert sympy.Add.make_args(p) and all(t.has(eps) for t in sympy.Add.make_args(p))
    (f,) = p.atoms(TailErfc)
    assert sympy.Poly(f.args[0], eps).LC().is_positive
    # the same function: 40-digit mpmath of 1 - Phi(eps/a - a/2) at a = 3, eps = 7
    with mpmath.workdps(40):
        ref = 1 - mpmath.ncdf(mpmath.mpf(7) / 3 - mpmath.mpf(3) / 2)
        assert abs(sympy.N(p.xreplace({a: 3, eps: 7}), 40) - sympy.Float(ref, 40)) < 1e-35


def test_a_weight_vanishing_off_the_grid_is_not_ignored():
    # (w - 2)^2 e^{-eps^2} + e^{-2 eps^2}: limit 1/2, but 1/4 at w = 2 (hand closed form:
    # e^{-2 eps^2} alone); w = 2 is no value of the parameter grid.  SymPy's limit says 1/2
    # for every w: the parameter check must now reject that formula at w = 2
    from symgdp.profile import Profile
    from symgdp.tail.limit import _Budget, _parameter_check

    expr = (w - 2) ** 2 * exp(-eps**2) + exp(-2 * eps**2)
    ok, detail = _parameter_check(expr, eps, Rational(1, 2), _Budget(30))
    assert ok is False and "w=2" in detail, detail
    got = Profile(expr).tail_limit(timeout=30)
    assert got.xreplace({w: 2}) == Rational(1, 4)
    # 60-digit mpmath reference at w = 1: rate 2 (the slower term), limit 1/2
    assert float(_rate_mpmath([(1, 1), (1, 2)])) == pytest.approx(2, abs=1e-6)
    assert got.xreplace({w: 1}) == Rational(1, 2)
