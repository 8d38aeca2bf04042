"""Tests of symgdp.evaluation.evaluate: when a float64 value of a profile is trusted, and when not.

References: closed forms evaluated in 40-60-digit mpmath (``log B - s^2 eps^2``,
``K (log1p(eps) - eps)``, ``-eps + log1p(-e^{-eps})``).  The accuracy asked for is the one
the measurement relies on: ``|error of log delta| <= 1e-13 + 1e-12 |log delta|``.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import Profile, eps
from symgdp.evaluation.evaluate import Evaluator


def _slack(ref: np.ndarray) -> np.ndarray:
    return 1e-13 + 1e-12 * np.abs(ref)


class _Spy:
    """Counts the high-precision fallbacks of every Evaluator while installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[float] = []
        real = Evaluator.mp_log

        def spy(ev: Evaluator, e: float) -> float:
            self.calls.append(e)
            return real(ev, e)

        monkeypatch.setattr(Evaluator, "mp_log", spy)


def test_benign_sums_in_log_space_stay_in_float(monkeypatch):
    """log(2 e^{-eps^2}) = log 2 - eps^2 is a sum with a negative term, but it does not
    cancel where the profile underflows: the refined and the plain profile evaluate there
    without one high-precision fallback, and agree with the closed form (40-digit mpmath)."""
    spy = _Spy(monkeypatch)
    naive = Profile(2 * sympy.exp(-eps**2))
    refined = naive.refine()
    x = np.linspace(0.0, 300.0, 30001)
    for p in (naive, refined):
        got = p.log_delta(x)
        tail = x > float(refined.breakpoint)
        with mpmath.workdps(40):
            ref = np.array([float(mpmath.log(2) - mpmath.mpf(v) ** 2) for v in x[tail]])
        assert np.all(np.abs(got[tail] - ref) <= _slack(ref))
    assert spy.calls == []


def test_a_sum_that_cancels_is_still_recomputed(monkeypatch):
    """(1+eps)^K e^{-K eps} with K = 1e12: in log space K log(1+eps) - K eps subtracts two
    numbers ~4.5e7 to get ~-1000, and float64 is wrong in the 5th digit.  The condition
    number flags it and the value is recomputed (reference: K (log1p(eps) - eps) at 60
    digits)."""
    spy = _Spy(monkeypatch)
    K = sympy.Integer(10) ** 12
    p = Profile((1 + eps) ** K * sympy.exp(-K * eps))
    x = np.array([4.5e-5, 1e-4, 3e-4])
    got = p.log_delta(x)
    with mpmath.workdps(60):
        ref = np.array([float(10**12 * (mpmath.log1p(mpmath.mpf(v)) - mpmath.mpf(v)))
                        for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))
    assert len(spy.calls) == len(x)
    # the float64 log-expression alone (as written, without the log1p form) would have
    # been wrong (so the check mattered)
    naive_float = sympy.lambdify(eps, p._evaluator().log_expression(), "numpy")(x)
    assert np.any(np.abs(naive_float - ref) > _slack(ref))


def test_an_underflowing_term_is_not_trusted(monkeypatch):
    """e^{-eps} - e^{-2 eps}: where e^{-2 eps} underflows, the sum is not trusted even if it
    looks well conditioned (reference: -eps + log1p(-e^{-eps}) at 40 digits)."""
    spy = _Spy(monkeypatch)
    p = Profile(sympy.exp(-eps) - sympy.exp(-2 * eps))
    x = np.array([200.0, 400.0, 800.0, 5000.0])
    got = p.log_delta(x)
    with mpmath.workdps(40):
        ref = np.array([float(-mpmath.mpf(v) + mpmath.log1p(-mpmath.exp(-mpmath.mpf(v))))
                        for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))
    assert set(spy.calls) >= {400.0, 800.0, 5000.0}


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(B=st.floats(1.01, 50.0), s=st.floats(0.05, 20.0),
       x=st.lists(st.floats(0.0, 1e4), min_size=1, max_size=20))
def test_refined_gaussian_shaped_profiles_match_the_closed_form(B, s, x):
    """B e^{-s^2 eps^2}, refined: beyond the breakpoint log delta = log B - s^2 eps^2
    (reference: 40-digit mpmath with the float parameters taken exactly)."""
    refined = Profile(sympy.Float(B) * sympy.exp(-sympy.Float(s) ** 2 * eps**2)).refine()
    xs = np.array(x)
    xs = xs[xs > float(refined.breakpoint) * (1 + 1e-9)]
    if xs.size == 0:
        return
    got = refined.log_delta(xs)
    with mpmath.workdps(40):
        ref = np.array([float(mpmath.log(B) - mpmath.mpf(s) ** 2 * mpmath.mpf(v) ** 2)
                        for v in xs])
    ref = np.minimum(ref, 0.0)
    assert np.all(np.abs(got - ref) <= _slack(ref))


def test_a_plain_difference_below_1e_100_is_recomputed(monkeypatch):
    """e^{-eps} - e^{-eps-1} at eps = 300 (about 3e-131) is well conditioned, but a float
    difference that small may rest on subnormal intermediates in general: values of a
    subtracting branch below 1e-100 are recomputed, as before (reference:
    -eps + log1p(-e^{-1}) at 40 digits)."""
    spy = _Spy(monkeypatch)
    p = Profile(sympy.exp(-eps) - sympy.exp(-eps - 1))
    x = np.array([10.0, 300.0])
    got = p.log_delta(x)
    with mpmath.workdps(40):
        ref = np.array([float(-mpmath.mpf(v) + mpmath.log1p(-mpmath.exp(-1))) for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))
    assert spy.calls == [300.0]


def test_symbolic_preparation_that_times_out_falls_back_to_correct_values(monkeypatch):
    """When the log-expansion and the structural-zero analysis do not finish in their
    budget, the values are the same, only computed in high precision (references: the
    closed form log 2 - eps^2 in 40-digit mpmath; the Laplace-type profile is 0 beyond 1)."""
    import symgdp.evaluation.evaluate as evaluate
    from symgdp.errors import AnalysisTimeout

    def timeout(*args, **kwargs):
        raise AnalysisTimeout("budget")

    monkeypatch.setattr(evaluate, "_SMALL_OPS", -1)
    monkeypatch.setattr(evaluate, "run_bounded", timeout)
    x = np.array([0.5, 30.0, 200.0])
    got = Profile(2 * sympy.exp(-eps**2)).log_delta(x)
    with mpmath.workdps(40):
        ref = np.array([min(0.0, float(mpmath.log(2) - mpmath.mpf(v) ** 2)) for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))
    lap = Profile(sympy.Max(1 - sympy.exp((eps - 1) / 2), 0))
    assert np.all(np.isneginf(lap.log_delta(np.array([1.5, 50.0]))))


def test_a_cancelling_exponent_is_recomputed_at_any_magnitude():
    """B e^{-a eps^2 + b eps} with a = 0.00156, b = 3.89 at eps = 2502: the exponent is
    -9738 + 9729 = -7.4, and float64 loses ~2e-11 of it (reference: the exponent at 60
    digits)."""
    B, a, b = 7.081074530641312, 0.001555571301002102, 3.8883609523128273
    p = Profile(sympy.Float(B) * sympy.exp(-sympy.Float(a) * eps**2 + sympy.Float(b) * eps))
    x = np.array([2502.0368573190003, 2400.0, 10.0])
    got = p.log_delta(x)
    with mpmath.workdps(60):
        ref = np.array([float(min(0, mpmath.log(B) - a * mpmath.mpf(v) ** 2 + b * mpmath.mpf(v)))
                        for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))


def test_a_subnormal_factor_is_not_trusted():
    """B eps^147.6 e^{-0.357 eps^2} at eps = 45.07 is ~2e-71, a normal float, but formed
    from e^{-725}, a subnormal with ~7 bits lost (reference: the log at 60 digits)."""
    B, a, b = 1.238259124936742, 0.3568441277607024, 147.59308968184814
    p = Profile(sympy.Float(B) * eps ** sympy.Float(b) * sympy.exp(-sympy.Float(a) * eps**2))
    x = np.array([45.07278995729068, 44.9])
    got = p.log_delta(x)
    with mpmath.workdps(60):
        ref = np.array([float(mpmath.log(B) + b * mpmath.log(v) - a * mpmath.mpf(v) ** 2)
                        for v in x])
    assert np.all(np.abs(got - ref) <= _slack(ref))


def test_negative_float_value_of_a_cancelling_sum_is_rechecked_not_rejected():
    # the erf form of 0.999*delta_2 is -4e-13 in float64 at eps = 14.648 (1 + erf(-x)
    # cancels); reference: the independent 40-digit log delta_2 of tests/reference.py
    # plus log 0.999
    from references import ref_log_delta

    from symgdp.errors import ProfileError
    mu = sympy.Integer(2)
    f = ((1 + sympy.erf((mu / 2 - eps / mu) / sympy.sqrt(2))) / 2
         - sympy.exp(eps) * (1 - sympy.erf((eps / mu + mu / 2) / sympy.sqrt(2))) / 2)
    p = Profile(sympy.Rational(999, 1000) * f)
    x = np.array([14.6484375, 5.0, 30.0])
    with mpmath.workdps(40):
        ref = [float(ref_log_delta(mpmath.mpf(v), 2) + mpmath.log(mpmath.mpf("0.999")))
               for v in x]
    assert np.allclose(p.log_delta(x), ref, rtol=1e-12, atol=0)
    # a truly negative profile with the same cancelling structure is still refused
    with pytest.raises(ProfileError):
        Profile(-sympy.Rational(1, 10**9) - f).log_delta(np.array([14.6484375]))
