"""compose() of Poisson-subsampled Gaussian profiles (Profile.subsample of a Gaussian, add/remove)
has a proved floor: the DP-SGD engine's lower PLD of the remove pair.

References (named at each test), none of them symgdp code:

* one step: the exact profile of the pair ((1-q)N(0,s^2) + qN(1,s^2), N(0,s^2)) in closed
  form at 40 digits, both directions of add/remove (tests/references.py, subsampled_gaussian_h: the
  loss has the closed-form inverse x_t = s^2 log((e^t - 1 + q)/q) + 1/2);
* two steps, and a Gaussian step followed by a subsampled one: 40-digit tanh-sinh
  quadrature over the first step's output of the one-step closed form, split at its
  kinks (agrees with the closed form delta_{sqrt 2/s} to 1e-35 at q = 1, checked below,
  and with itself at 60 digits to 40 digits);
* q = 1: the Gaussian mechanism, sqrt(T)/sigma-GDP in closed form;
* the true sup of the GDPT on a head is bracketed on a grid x_0 < ... < x_n: on [x_i,
  x_{i+1}] it is at most G(x_{i+1}, delta(x_i)) and at least G(x_i, delta(x_i)), with G
  the GDPT found by 90-step mpmath bisection (references.gdpt_below).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import references as R
import sympy

from symgdp import Profile, calibrate, compose
from symgdp import mechanisms as M
from symgdp.mechanisms import subsampled_gaussian_parameters

# compositions of (subsampled) Gaussians are answered by the DP-SGD engine at its own grid;
# GENERAL forces the general composition (its engine-side lower and upper steps) on a
# coarse grid
DISC: dict = {}
GENERAL = dict(discretization=4e-3, _engine=True)


def _profile_one(e, q, s):
    with mpmath.workdps(40):
        return max(R.subsampled_gaussian_h(e, q, s, d) for d in ("remove", "add"))


def _two(e, q, s, d):
    """Two steps of one direction; the add losses are at most -log(1 - q), so the add
    direction is 0 from eps = -2 log(1 - q) on."""
    if d == "add" and q < 1 and e >= -2 * np.log1p(-q):
        return mpmath.mpf(0)
    with mpmath.workdps(40):
        return R.subsampled_gaussian_two_steps(e, q, s, d)


def _sup_bracket(xs, ds):
    """(at most, at least) the sup of G(eps, delta(eps)) over [xs[0], xs[-1]] (module notes)."""
    lo = max(R.gdpt_below(x, d) for x, d in zip(xs, ds, strict=True))
    hi = max(R.gdpt_below(b, d) for b, d in zip(xs[1:], ds[:-1], strict=True))
    return float(lo), float(hi) + 1e-12


def _check_points(c, xs, truth):
    low = c.lower_delta(np.asarray(xs, dtype=float))
    for x, lw, t in zip(xs, low, truth, strict=True):
        assert lw <= t * (1 + 1e-12), (x, lw, t)
        assert t <= float(c(x)) * (1 + 1e-12), (x, t, float(c(x)))


@pytest.mark.parametrize("route", ["engine", "general"])
@pytest.mark.parametrize("q, s", [(0.1, 2.0), (0.5, 1.0)])
def test_one_step_floor_against_the_exact_profile(q, s, route):
    # reference: the exact one-step profile, max of both directions, closed form at 40
    # digits; lower_delta <= truth <= upper pointwise, and the GDPT sup bracket of the
    # truth on the head meets [mu_floor, mu_upper] -- through the DP-SGD engine and through
    # the general composition (the engine's one-step pairs on both sides)
    c = compose(M.gaussian(sigma=s).subsample(q), **(DISC if route == "engine" else GENERAL))
    assert not c.floorless and c.certified and c.neighbouring == "add_remove"
    xs = [c.eps_h * i / 24 for i in range(25)]
    truth = [_profile_one(x, q, s) for x in xs]
    _check_points(c, xs, truth)
    lo, hi = _sup_bracket(xs, truth)
    assert c.mu_floor <= hi and lo <= c.mu_upper
    assert c.mu_floor >= lo - 5e-3  # the floor is not trivial: within 0.005 of the truth
    assert any(("DP-SGD engine" if route == "engine" else "the exact pairs") in n
               for n in c.notes)


def test_two_steps_against_quadrature():
    # reference: 40-digit quadrature of the one-step closed form over the first step's
    # output, both directions; first the quadrature itself against the closed form at q = 1
    with mpmath.workdps(40):
        gauss = R.delta_gdp(mpmath.sqrt(2) / 2, mpmath.mpf("0.5"))
        assert abs(_two(0.5, 1.0, 2.0, "remove") - gauss) < mpmath.mpf(10) ** -35
    q, s = 0.2, 1.0
    c = compose(M.gaussian(sigma=s).subsample(q), times=2, **DISC)
    assert not c.floorless
    xs = [0.5, c.eps_h]  # from 0.5 > -2 log(0.8) on, the add direction is 0
    truth = [max(_two(x, q, s, d) for d in ("remove", "add")) for x in xs]
    _check_points(c, xs, truth)
    lo, _ = _sup_bracket(xs, truth)
    assert c.mu_floor - 2e-3 <= lo <= c.mu_upper <= c.mu_floor + 2e-3


def test_gaussian_mixed_with_a_subsampled_gaussian():
    # reference: 40-digit quadrature over the Gaussian step's output (sigma 3, symmetric)
    # of the subsampled step's closed form, max of both directions
    q, s, sg = 0.3, 1.5, 3.0
    c = compose(M.gaussian(sigma=s).subsample(q), M.gaussian(sigma=sg), **DISC)
    assert not c.floorless

    def truth(x):
        with mpmath.workdps(40):
            return max(R.gaussian_then_subsampled(x, sg, q, s, d) for d in ("remove", "add"))

    xs = [0.1, c.eps_h]
    ds = [truth(x) for x in xs]
    _check_points(c, xs, ds)
    # the plain Gaussian takes the engine's lower side too (q = 1: no reveal term, which
    # at 1e-6 would hide the head's end, where the GDPT of this mixture is largest)
    lo, _ = _sup_bracket(xs, ds)
    assert c.mu_floor - 2e-3 <= lo <= c.mu_upper <= c.mu_floor + 2e-3


def test_unsampled_schedule_closed_form():
    # reference: q = 1 is the Gaussian mechanism (subsample(1) is the profile itself), the
    # closed form sqrt(sum T / sigma^2): sigma 2 (3 steps) and sigma 1.5 (2 steps) make a
    # sqrt(3/4 + 2/2.25)-GDP schedule
    mu = float(np.sqrt(3 / 4 + 2 / 2.25))
    c = compose((M.gaussian(sigma=2.0).subsample(1.0), 3), (M.gaussian(sigma=1.5), 2), **DISC)
    assert c.mu_floor <= mu <= c.mu_upper <= c.mu_floor + 1e-3
    # beside a subsampled step the Gaussians take the engine's lower side (q = 1); that
    # step (q = 1/2, sigma = 1000) is at most 1e-3-GDP (subsampling is a post-processing),
    # so the truth lies in [mu, sqrt(mu^2 + 1e-6)] (dropping it; GDP composition)
    c = compose((M.gaussian(sigma=2.0), 3), (M.gaussian(sigma=1.5), 2),
                M.gaussian(sigma=1000.0).subsample(0.5), **DISC)
    assert any("DP-SGD engine" in n for n in c.notes)
    assert c.mu_floor <= float(np.sqrt(mu**2 + 1e-6)) and mu <= c.mu_upper
    assert c.mu_upper <= c.mu_floor + 2e-3


def test_a_schedule_of_rates_and_noises_has_a_floor_below_dp_accounting():
    # reference: dp_accounting's pessimistic (connect-the-dots) PLD of the same schedule on
    # a finer grid, an upper bound on the truth up to float64 (1e-9 relative slack): the
    # proved lower profile lies below it; the floor below its GDPT sup bracket
    from dp_accounting.pld import privacy_loss_distribution as pld

    sched = [(0.1, 2.0, 2), (0.3, 1.5, 1)]
    c = compose(*[(M.gaussian(sigma=s).subsample(q), t) for q, s, t in sched], **DISC)
    assert not c.floorless
    total = None
    for q, s, t in sched:
        one = pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=1e-3,
                                          use_connect_dots=True).self_compose(t)
        total = one if total is None else total.compose(one)
    xs = np.linspace(0.0, c.eps_h, 25)
    pess = np.asarray(total.get_delta_for_epsilon(xs))
    assert np.all(c.lower_delta(xs) <= pess * (1 + 1e-9))
    _, hi = _sup_bracket([mpmath.mpf(float(x)) for x in xs], [mpmath.mpf(float(d)) for d in pess])
    assert c.mu_floor <= hi * (1 + 1e-9)
    assert c.mu_floor <= c.mu_upper <= c.mu_floor + 0.01


def test_only_an_exact_subsampled_gaussian_gets_the_engines_floor():
    # a profile subsampled twice carries the metadata of the last rate only (0.5, not
    # 0.25): the engine's floor for q = 0.5 would lie above the mechanism.  The floor
    # must come from the expression, so here there is none (and a note names the step);
    # a profile tagged Gaussian with another expression is not recognised either
    twice = M.gaussian(sigma=2.0).subsample(0.5).subsample(0.5)
    assert subsampled_gaussian_parameters(twice) is None
    c = compose(twice, **DISC)
    assert c.floorless and any("no floor: Gaussian" in n for n in c.notes)
    g = M.gaussian(mu=0.5)
    fake = Profile(g.expr ** 2, g.values, mechanism=g.meta["mechanism"]).subsample(0.5)
    assert subsampled_gaussian_parameters(fake) is None


def test_the_parameters_are_rounded_to_the_safe_side():
    # reference: exact rationals; the floor is computed for a pair with q rounded down and
    # sigma rounded up (less sampling, more noise: a post-processing of the true pair)
    q, s = subsampled_gaussian_parameters(M.gaussian(mu=0.3).subsample(sympy.Rational(1, 3)))
    assert sympy.Rational(q) <= sympy.Rational(1, 3) and q > 0.33333333333333
    assert sympy.Rational(s) >= 1 / sympy.Rational(0.3) and s < 3.33333333333334


def test_calibrate_proves_the_noise_below_unsafe():
    # the composition used to have no floor, so calibrate could not prove a noise level
    # too small; now the bracket holds the exact calibration.  Reference: the exact
    # one-step profile (closed form, 40 digits): at the returned noise the truth's GDPT sup
    # bracket on the head is below the target; at the unsafe end the truth's pointwise
    # values are above the composition's proved lower side, which proves it unsafe
    S = sympy.Symbol("s", positive=True)
    q, target = 0.5, 0.3
    r = calibrate(compose(M.gaussian(sigma=S).subsample(q), **DISC), "s", target_mu=target,
                  rtol=2e-2)
    lo_s, hi_s = r.bracket
    assert not r.floorless and lo_s < hi_s == r.value and "exact calibration in" in str(r)
    m = r.measurement
    xs = [m.eps_h * i / 16 for i in range(17)]
    lo, _ = _sup_bracket(xs, [_profile_one(x, q, r.value) for x in xs])
    assert lo <= target
    c = compose(M.gaussian(sigma=lo_s).subsample(q), **DISC)
    assert c.mu_floor > target
    xs = [c.eps_h * i / 16 for i in range(17)]
    truth = [_profile_one(x, q, lo_s) for x in xs]
    _check_points(c, xs, truth)
    assert _sup_bracket(xs, truth)[1] > target
