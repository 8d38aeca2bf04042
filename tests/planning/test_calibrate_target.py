"""calibrate(compose(...), target=(eps, delta)) proves its target or refuses it (issue 31.2).

References (named at each test): the exact Gaussian profile delta_mu at 50 digits
(mpmath; the 4-fold composition of the Gaussian with noise s is (2/s)-GDP); the leaky
Gaussian's profile is at least its reveal probability 1e-12 at every eps (a mechanism
that reveals its input with that probability), so no noise makes it (8, 1e-14)-DP.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy

from symgdp import Profile, calibrate, compose, mechanisms
from symgdp.errors import DomainError

S = sympy.Symbol("s", positive=True)


def gdp_delta(eps: float, mu: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def test_a_target_beyond_the_default_head_is_proved():
    # eps = 8 lies beyond the head of the default failure_prob 1e-10 for this mu: the
    # measurement must reach the target (reference: delta_{2/s}(8) <= 1e-14 at 50 digits)
    g = mechanisms.gaussian(sigma=S)
    r = calibrate(compose(g, times=4), "s", target=(8.0, 1e-14), rtol=1e-3)
    m = r.measurement
    assert 8.0 <= m.eps_h or m.failure_prob <= 1e-14
    # the least noise s* with delta_{2/s*}(8) = 1e-14, by bisection at 50 digits
    lo, hi = 1.0, 4.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gdp_delta(8.0, 2.0 / mid) > mpmath.mpf(1e-14) else (lo, mid)
    assert hi <= r.value <= hi * 1.01
    # a composition with a floor: its bracket is the exact calibration's, and says so
    assert not r.floorless and r.bracket[0] <= hi <= r.bracket[1]
    assert "exact calibration in" in str(r)


def test_an_unreachable_target_is_refused_by_name():
    # the leaky Gaussian: delta >= 1e-12 everywhere, so (8, 1e-14) cannot be met; it was
    # "calibrated" to s = 0.99 with eps_at(1e-14).upper = inf
    r = sympy.Rational(1, 10**12)
    g = mechanisms.gaussian(sigma=S)
    leaky = Profile(r + (1 - r) * g.expr.xreplace(dict(g.values)), name="leaky Gaussian")
    assert leaky.free_symbols == {S}
    with pytest.raises(DomainError, match=r"\(8\.0, 1e-14\)"):
        calibrate(compose(leaky), "s", target=(8.0, 1e-14), rtol=1e-3)


def test_reaches_reads_the_head_and_the_failure_probability():
    # the rule itself, on head measurements of the exact 1-GDP composition (the integer
    # route's: compose() answers Gaussians in closed form, whose measurement covers the
    # whole line, failure probability 0, and so reaches every (eps, delta) beyond eps_h)
    from symgdp.planning.calibrate import _Search

    c = compose(mechanisms.gaussian(0.5), times=4, _engine=True)
    m = c.calibration_measurement()
    s = _Search(c, S, 10.0, False, {}, 1, need=(m.eps_h * 1.01, 1e-3))
    assert s.reaches(m) == (m.failure_prob <= 1e-3)
    s.need = (m.eps_h * 1.01, m.failure_prob * 0.5)
    assert not s.reaches(m)
    s.need = (0.5 * m.eps_h, 1e-300)
    assert s.reaches(m)
    assert math.isfinite(m.eps_h)


def test_calibrate_through_a_floorless_composition():
    # a subsampled Laplace profile has no lower side, so a composition with it has no
    # floor (a subsampled Gaussian alone now has one): the search reads the composed
    # upper profile's lower ends and says so; it used to stop at 'mu does not change
    # measurably'.  Reference: dpsgd's bracket of the Gaussian steps alone (the exact
    # directional pairs, a second algorithm; dropping steps only lowers mu) must lie at or
    # below the target at the returned noise
    from symgdp import dpsgd

    q = sympy.Rational(1, 2)
    lap = mechanisms.laplace(0.1).subsample(q)
    r = calibrate(compose((mechanisms.gaussian(sigma=S).subsample(q), 4), (lap, 1)), "s",
                  target_mu=1.0, rtol=1e-3)
    assert r.measurement.upper <= 1.0
    assert any("no floor" in n for n in r.notes)
    assert dpsgd(0.5, r.value, 4, value_discretization_interval=1e-3).mu_floor <= 1.0
    # issue 31: without a floor the bracket's unsafe end is not proved unsafe for the
    # mechanism, so the text must not call the bracket the exact calibration
    assert r.floorless and r.to_dict()["floorless"] is True
    text = str(r)
    assert "exact calibration" not in text and "no floor" in text
    assert f"at {r.bracket[0]:.12g} only its upper profile" in text  # noise: lo is unsafe
    assert "upper profile's mu in" in text and "measured mu" not in text
