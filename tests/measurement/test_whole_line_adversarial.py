"""Adversarial review of the whole-line certificate (symgdp/measurement/tail_forms.py,
tail_proof.py; theory §14).

Every profile here is one that a certificate must NOT cover, or one it may cover, checked
against an independent reference: log delta - log delta_mu computed in mpmath from the
closed form delta_mu = Phi(-a) - e^eps Phi(-b) (a, b = eps/mu -/+ mu/2) at a precision
that covers its cancellation (about 2 log10(eps) + 60 digits), and log delta from the
profile's expression lambdified to mpmath.  A point with log delta > log delta_mu is a
point with G(eps) > mu: the mechanism is not mu-GDP there.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy
from sympy import Rational as R
from sympy import exp, log

from symgdp import Profile, eps, measure
from symgdp.measurement.whole_line.certificate import prove_tail


def _log_delta_mu(x: float, mu: float) -> mpmath.mpf:
    """log delta_mu(x) from the closed form, in mpmath (independent of symgdp)."""
    x, mu = mpmath.mpf(x), mpmath.mpf(mu)
    digits = 60 + int(2 * (mpmath.log10(x + 1) + mpmath.log10(mu + 1 / mu)))
    with mpmath.workdps(max(60, digits)):
        a, b = x / mu - mu / 2, x / mu + mu / 2
        r2 = mpmath.sqrt(2)
        v = mpmath.erfc(a / r2) / 2 - mpmath.exp(x) * mpmath.erfc(b / r2) / 2
        assert v > 0
        return mpmath.log(v)


def _excess(expr: sympy.Expr, mu: float, points: list[float]) -> tuple[float, float]:
    """max over ``points`` of log delta - log delta_mu (> 0: G > mu there), and where."""
    f = sympy.lambdify(eps, sympy.log(expr), "mpmath")
    best = (-mpmath.inf, 0.0)
    for x in points:
        # the profile may cancel like delta_mu does: the same precision rule
        with mpmath.workdps(80 + int(2 * mpmath.log10(x + 1))):
            v = (f(mpmath.mpf(x)) - _log_delta_mu(x, mu), x)
        best = max(best, v)
    return float(best[0]), best[1]


def _assert_sound(expr: sympy.Expr, mu: float, proved: bool, points: list[float]) -> None:
    excess, where = _excess(expr, mu, points)
    assert not (proved and excess > 0), (
        f"certified mu = {mu!r} on the whole line, but log delta - log delta_mu = "
        f"{excess:.6g} > 0 at eps = {where:g}")


_FAR = [10.0**k for k in range(1, 18)]


def test_coefficient_maximum_is_exact_not_a_float_tie() -> None:
    # Two terms whose eps^2 coefficients differ by 2^-55 (below float64 resolution at 1/2):
    # the upper form must keep the larger one.  Reference: mpmath says delta > delta_1 from
    # about eps = 1e15 on (the +2^-56 eps^2 term wins over -eps/100).  Before the fix the
    # coefficient-wise maximum compared float(mid) and kept the first of a "tie".
    d, g = R(1, 2**56), R(1, 100)
    expr = (exp(-(R(1, 2) + d) * eps**2 + (R(1, 2) - g) * eps)
            + exp(-(R(1, 2) - d) * eps**2 + (R(1, 2) - g) * eps))
    excess, _ = _excess(expr, 1.0, [1e15, 1e16])
    assert excess > 0  # the reference sees the violation: the test can fail
    r = prove_tail(expr, eps, 1e6, 1.0)
    _assert_sound(expr, 1.0, r.proved, _FAR)


def test_sup_of_a_form_whose_lead_falls_first() -> None:
    # exp(-30 eps / log(eps)^6) as a value: eps/log^6 falls until e^6 ~ 403 and rises
    # after, so its value at E is not its least; the sup of the exponent used it.
    # Reference: mpmath, G(2000) far above mu (log delta - log delta_mu ~ 1.5e5).
    expr = exp(-eps**2 / 2 * (1 - exp(-30 * eps / log(eps)**6)))
    for mu in (1.3, 1.5, 2.0):
        r = prove_tail(expr, eps, 3.5, mu)
        _assert_sound(expr, mu, r.proved, [4.0, 50.0, 400.0, 800.0, 2000.0])


def test_sup_of_a_form_whose_lead_tends_to_zero() -> None:
    # exp(-1/log eps) -> 1 at infinity: a negative multiple of 1/log(eps) has sup 0, not
    # its value at E.  Reference: mpmath, G -> 1 > 0.9 (excess ~1e79 at eps = 1e40).
    expr = exp(-eps**2 / 2 * (2 - exp(-1 / log(eps))))
    for mu in (0.9, 0.95):
        r = prove_tail(expr, eps, 10.0, mu)
        _assert_sound(expr, mu, r.proved, [1e2, 1e5, 1e10, 1e20, 1e40])


def test_measure_does_not_certify_a_late_rise_read_through_a_value() -> None:
    # End to end: a valid (non-increasing, checked on the grid) profile whose exponent's
    # coefficient creeps up near eps ~ 400; measure() used to return covers_tail=True with
    # the head's upper end 1.7076 although G(2000) is far above it.  Now the tail is seen
    # to be the maximum and the whole-line bracket is on sup G.  Reference: mpmath
    # log delta - log delta_mu on a geometric grid of [5, 1e6] (G(x) > mu iff > 0).
    expr = sympy.Piecewise(
        (exp(-(eps + 1)**2 / 2), eps < 2),
        (exp(-(eps + 1)**2 / 2 * (1 - exp(-30 * eps / log(eps)**6))), True))
    m = measure(Profile(expr), eps_h=5.0, tol=1e-3, refine=False)
    grid = [5.0 * 1.1**k for k in range(130)]
    excess, where = _excess(expr, 1.7075852085941152, grid)
    assert excess > 0  # the old certificate was wrong there
    if m.covers_tail:
        _assert_sound(expr, m.upper, True, grid)
        low, _ = _excess(expr, m.lower, grid)
        assert low >= -1e-9  # the lower end is a G value: some point reaches it
    else:
        assert m.failure_prob > 0 and m.proved_until < where


def test_middle_part_does_not_assume_monotonicity_after_an_exact_zero() -> None:
    # delta = (eps - 20)^2 * Gaussian * (1 + bump at 21): exactly 0 at the grid point
    # eps = 20 = 16 * 1.25, then a bump above delta_1.5.  FirstOrder.prove_below closes an
    # interval starting at an exact zero (right for a non-increasing profile); the middle
    # part must not, as it claims delta <= delta_mu for the expression as given.
    # Reference: mpmath, log delta(21) - log delta_1.5(21) ~ 14.4 > 0.
    from symgdp.measurement.firstorder import FirstOrder

    expr = (sympy.expand((eps - 20)**2) * exp(-eps**2 / (2 * R(14, 10)**2))
            * (1 + exp(40 - 10 * (eps - 21)**2)) / 800)
    excess, _ = _excess(expr, 1.5, [21.0])
    assert excess > 0
    r = prove_tail(expr, eps, 16.0, 1.5, fo=FirstOrder(Profile(expr)))
    _assert_sound(expr, 1.5, r.proved, [16.0 + 0.25 * k for k in range(40)])
    assert r.until <= 21.0


_P = lambda x: sympy.erfc(-x / sympy.sqrt(2)) / 2  # noqa: E731 - Phi, erfc spelling

# (profile, eps_h, mu): from the review's attack list; each either refused or sound.
_CASES = [
    (_P(-eps), 5.0, 1.0 + 1e-9),  # Phi(-eps): G -> 1 from below
    (sympy.Min(2 * exp(-eps**2 / 2), exp(-eps**2 / 8)), 10.0, 1.5),
    (2 * exp(-eps**2 / 8) - exp(-eps**2 / 8 - eps / 10**30), 10.0, 2.0001),  # cancelling
    (exp(-eps**2 / (2 * 10**6)) / 2, 100.0, 1000.001),  # huge mu
    (exp(-eps**2 / 2 + eps**R(3, 2)), 10.0, 1.1),  # eps^1.5 drift
    (exp(-eps**2 / 2 + eps / 10**12), 10.0, 1.0 + 1e-11),  # a tiny linear drift
    (exp(-eps**2 / 2) / 2 + exp(-eps) / 10**300, 10.0, 10.0),  # not GDP: exp(-eps) wins
    (1 / (1 + eps)**2, 10.0, 100.0),  # not GDP
    (_P(-eps / R(13, 10) + R(13, 20)) - exp(eps) * _P(-eps / R(13, 10) - R(13, 20)), 5.0,
     1.3),  # delta_mu(1.3) itself at mu = 1.3: the limit is exactly mu
    (exp(-eps**2 / 2 + eps / 2 + 10 * log(eps + 1)) / 10**9, 20.0, 1.0 + 2.0**-36),
]


@pytest.mark.parametrize(("expr", "eps_h", "mu"), _CASES)
def test_attack_list_is_refused_or_sound(expr: sympy.Expr, eps_h: float, mu: float) -> None:
    # Reference: mpmath log delta - log delta_mu on a geometric grid up to 1e12 and at
    # 1e15..1e40 (the analytic part's range); a certificate must see no point above.
    grid = [eps_h * 1.5**k for k in range(70)] + [1e15, 1e20, 1e30, 1e40]
    r = prove_tail(expr, eps, eps_h, mu)
    _assert_sound(expr, mu, r.proved, grid)
