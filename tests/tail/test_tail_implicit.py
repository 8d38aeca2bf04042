"""The whole line for implicit profiles (symgdp.measurement.whole_line.implicit_tail, theory §14).

Independent truths: the trade-off equations of the certified cases are solved by hand
(the implicit root has a closed form SymPy was told not to use: method="numeric"), and
log delta is compared with log delta_mu in 60-digit mpmath (symgdp.gaussian.precise) on a log grid
out to eps = 10^4; the head supremum is maximised in 50-digit mpmath on the closed form.
The adversaries are roots whose evaluation provably leaves every delta_mu behind.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from references import log_grid

from symgdp import Profile
from symgdp.gaussian import precise
from symgdp.measurement.whole_line.implicit_tail import (
    RootOutside,
    gaussian_log_lower,
    root_conditions,
)
from symgdp.symbolic.implicit import LogDeltaRoot
from symgdp.symbolic.symbols import eps

DPS = 60


def _grid(a: float, b: float = 1e4, n: int = 60) -> list[mpmath.mpf]:
    """A log grid on [a, b] (mpmath numbers; references.log_grid)."""
    return log_grid(a, b, n, DPS)

def _mu_of(x: mpmath.mpf, log_delta: mpmath.mpf) -> mpmath.mpf:
    """mu_GDP(x, delta) in 50-digit mpmath: log delta_mu(x) is increasing in mu (bisection
    on the precise textbook formula)."""
    with mpmath.workdps(50):
        lo, hi = mpmath.mpf("1e-3"), mpmath.mpf(50)
        for _ in range(120):
            m = (lo + hi) / 2
            if precise.log_delta_mu(x, m, dps=50) < log_delta:
                lo = m
            else:
                hi = m
        return (lo + hi) / 2


# (equation, values, closed form of log delta for eps beyond the refinement point): the
# SGD family delta = B exp(-sigma^2 eps^2 / A^2) and the classical Gaussian mechanism's
# calibration sigma = Delta sqrt(2 log(1.25/delta))/eps, whose stored residual holds
# log(1.25) as the Float SymPy made of it (the truth uses that Float's exact value)
CASES = [
    ("sigma = A/eps*sqrt(log(B/delta))", {"A": 2, "B": 1, "sigma": 2},
     lambda x, c: -x**2),
    ("sigma = Delta*sqrt(2*log(1.25/delta))/eps", {"Delta": 1, "sigma": 2},
     lambda x, c: c - 2 * x**2),
]


def _stored_log125(p: Profile) -> mpmath.mpf:
    floats = [f for r in p.bound_expr.atoms(LogDeltaRoot) for f in r.args[1].expr.atoms(
        sympy.Float)]
    if not floats:
        return mpmath.mpf(0)
    q = sympy.Rational(floats[0])
    return mpmath.mpf(q.p) / q.q


@pytest.mark.slow
@pytest.mark.parametrize("eq, vals, closed", CASES)
def test_implicit_gaussian_type_profiles_get_the_whole_line(eq, vals, closed):
    p = Profile.from_tradeoff(eq, vals, method="numeric")
    assert p.expr.has(LogDeltaRoot)
    m = p.measure(eps_h=100.0)
    assert m.certified
    assert m.covers_tail and m.failure_prob == 0.0 and m.proved_until == math.inf
    assert "proved on [100, inf)" in m.tail_proof
    c = _stored_log125(p)
    with mpmath.workdps(DPS):
        # reference 1: the root's closed form below delta_mu(upper) on [eps_h, 1e4],
        # 60-digit mpmath
        for x in _grid(100.0):
            assert closed(x, c) <= precise.log_delta_mu(x, m.upper, dps=DPS)
        # reference 2: the closed form's G at the grid points stays below the bracket's
        # upper end, and the supremum (attained in the head, at a small eps of the
        # refined profile) is inside the bracket: the refined profile's first branch is
        # the Max of two closed forms; G on [0, 100] is maximised on a fine grid and
        # the best grid value must not exceed the upper end
        refined = m.profile.bound_expr
        ref = refined.replace(lambda e: isinstance(e, LogDeltaRoot),
                              lambda e: _Closed(e.args[0]))
        ld = sympy.lambdify(eps, sympy.log(ref.xreplace(
            {f: sympy.Rational(f) for f in ref.atoms(sympy.Float)})),
            modules=[{"_Closed": lambda x: closed(x, c)}, "mpmath"])
    with mpmath.workdps(50):
        best = max(_mu_of(x, ld(x)) for x in (mpmath.mpf(i) / 40 for i in range(1, 121)))
        assert best <= m.upper
        for x in (mpmath.mpf(200), mpmath.mpf(5000)):
            assert _mu_of(x, closed(x, c)) <= m.upper


class _Closed(sympy.Function):
    """Stand-in for the root in the reference expression (its closed form in mpmath)."""


def test_sgd_measurement_lower_end_is_a_value_of_the_closed_form():
    # the bracket's lower end is at most the closed form's sup (the Max of the
    # refinement's two closed branches near eps = 0); reference: the closed-form profile
    # of the same equation measured by the second algorithm (SymPy's own solution)
    vals = {"A": 2, "B": 1, "sigma": 2}
    p = Profile.from_tradeoff("sigma = A/eps*sqrt(log(B/delta))", vals, method="numeric")
    q = Profile.from_tradeoff("sigma = A/eps*sqrt(log(B/delta))", vals)
    assert not q.expr.has(LogDeltaRoot)
    m, mq = p.measure(eps_h=100.0), q.measure(eps_h=100.0)
    assert m.covers_tail and mq.covers_tail
    assert m.lower <= mq.upper and mq.lower <= m.upper


@pytest.mark.parametrize("eq, vals", [
    # delta = B exp(-sigma eps): heavier than every Gaussian, G grows without bound
    ("sigma = log(B/delta)/eps", {"B": 1, "sigma": 2}),
    # a residual not monotone in delta: its evaluation turns to delta = 1 beyond
    # eps ~ 1e150 (the side read from h(0) and h(-T) flips), so no mu holds there
    ("sigma = sqrt(log(1/delta))/eps + delta", {"sigma": 3}),
])
def test_adversaries_get_no_whole_line_certificate(eq, vals):
    p = Profile.from_tradeoff(eq, vals, method="numeric")
    assert p.expr.has(LogDeltaRoot)
    m = p.measure(eps_h=20.0)
    assert not m.covers_tail and m.failure_prob > 0
    assert math.isfinite(m.proved_until)
    # reference: the profile as evaluated far out is above delta_mu(upper), whose log is
    # at most -(x/mu - mu/2)^2/2 (delta_mu <= Phi(mu/2 - x/mu) and the Chernoff bound of
    # Phi), in 60-digit mpmath
    x = 1e160 if "sqrt" in eq else 1e4
    with mpmath.workdps(DPS):
        bound = -(mpmath.mpf(x) / m.upper - mpmath.mpf(m.upper) / 2) ** 2 / 2
    assert float(p.log_delta(x)) > bound


def test_root_conditions_refuse_what_they_cannot_reduce():
    e, t = sympy.symbols("e t", real=True)
    # a sine of t: outside the continuous elementary functions allowed
    with pytest.raises(RootOutside):
        root_conditions(LogDeltaRoot(eps, sympy.Lambda((e, t), 2 - sympy.sin(t) / e)),
                        eps, 1.0, 100.0)
    # a root of 2*eps, not of eps
    with pytest.raises(RootOutside):
        root_conditions(LogDeltaRoot(2 * eps, sympy.Lambda((e, t), 2 + t / e)), eps, 1.0,
                        100.0)


@pytest.mark.parametrize("mu, E", [(0.5, 10.0), (1.8, 100.0), (3.0, 1e3)])
def test_gaussian_log_lower_is_below_log_delta_mu(mu, E):
    # reference: log delta_mu in 60-digit mpmath (symgdp.gaussian.precise) on a log grid
    # from E to 1e4
    ell = sympy.lambdify(eps, gaussian_log_lower(eps, mu, E), "mpmath")
    with mpmath.workdps(DPS):
        for x in _grid(E):
            assert ell(x) <= precise.log_delta_mu(x, mu, dps=DPS) - 1
