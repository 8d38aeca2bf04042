"""The max-statistic floor of shuffled epochs and random allocation
(symgdp.training.allocation_floor): the pair of Chua et al. 2024 (arXiv:2403.17673) reduced
by the max per epoch, certified as a lower profile.

References, each independent of the code under test:
* 40-digit mpmath quadrature of the max-statistic pair's densities (their closed form as the
  derivative of the CDFs, the crossing found by bisection on their log ratio): the one-epoch
  hockey-stick divergence in both directions;
* the closed-form GDP profile (references.delta_gdp, 40 digits) for t = 1, where the pair is
  the Gaussian G_{c/sigma};
* dp_accounting's float64 FFT composition of pessimistic / optimistic PMFs of the same pair
  built from scipy (a second algorithm) for E > 1 with t > 1.
"""

from __future__ import annotations

import math
import os

import mpmath
import numpy as np
import pytest
from references import delta_gdp

from symgdp import dpsgd
from symgdp.errors import DomainError
from symgdp.training.allocation_floor import (
    floor_grid,
    max_statistic_floor,
    max_statistic_loss,
    mu_floor_from_lower,
    one_epoch_pmf,
)

SCALE = int(os.environ.get("SYMGDP_TEST_SCALE", "1"))
FAST = dict(tol=1e-3, value_discretization_interval=1e-3)


# -- the 40-digit reference: densities of the max statistic --------------------------------
def _densities(t, c, s):
    c, s = mpmath.mpf(c), mpmath.mpf(s)

    def p(m):  # d/dm [Phi((m - c)/s) Phi(m/s)^(t-1)]
        a, b = (m - c) / s, m / s
        out = mpmath.npdf(a) * mpmath.ncdf(b) ** (t - 1)
        if t > 1:
            out += (t - 1) * mpmath.ncdf(a) * mpmath.ncdf(b) ** (t - 2) * mpmath.npdf(b)
        return out / s

    def q(m):  # d/dm [Phi(m/s)^t]
        b = m / s
        return t * mpmath.ncdf(b) ** (t - 1) * mpmath.npdf(b) / s

    return p, q


def _crossing(p, q, level, guess, s):
    """The m with log(p/q) = level (the ratio increases): a bracket widened from a float
    guess until it holds, then the Illinois method on the 40-digit densities."""
    def f(m):
        return mpmath.log(p(m)) - mpmath.log(q(m)) - level

    step = mpmath.mpf(s) / 8
    lo, hi = mpmath.mpf(guess) - step, mpmath.mpf(guess) + step
    while f(lo) > 0:
        lo -= step
        step *= 2
    while f(hi) < 0:
        hi += step
        step *= 2
    return mpmath.findroot(f, (lo, hi), solver="illinois", tol=mpmath.mpf(10) ** -35)


def ref_hockey(t, c, s, eps, remove=True):
    """int (p - e^eps q)_+ (remove) or int (q - e^eps p)_+ (add), 40 digits, by quadrature
    on the side of the crossing where the integrand is positive (the float loss only
    seeds the search for the crossing)."""
    from scipy.optimize import brentq

    level = eps if remove else -eps
    guess = brentq(lambda m: float(max_statistic_loss(m, t, c, s)) - level,
                   -40.0 * s - c, 40.0 * s + c + 10.0)
    with mpmath.workdps(40):
        p, q = _densities(t, c, s)
        e = mpmath.exp(eps)
        s_ = mpmath.mpf(s)
        m0 = _crossing(p, q, mpmath.mpf(level), guess, s)
        if remove:
            pts = [m0 + k * s_ for k in (0, 2, 6, 14)] + [mpmath.inf]
            return mpmath.quad(lambda m: p(m) - e * q(m), pts)
        pts = [-mpmath.inf] + [m0 - k * s_ for k in (14, 6, 2, 0)]
        return mpmath.quad(lambda m: q(m) - e * p(m), pts)


CASES = [(1, 1.0, 1.0), (10, 1.0, 1.0), (100, 2.0, 2.0), (1000, 1.0, 0.7)]


@pytest.mark.parametrize("t,c,s", CASES)
def test_loss_is_the_log_density_ratio_and_increases(t, c, s):
    # reference: log p_M / q_M from the 40-digit densities above
    p, q = _densities(t, c, s)
    ms = np.linspace(-2.0, 6.0, 9) * s
    got = max_statistic_loss(ms, t, c, s)
    with mpmath.workdps(40):
        want = [float(mpmath.log(p(mpmath.mpf(m)) / q(mpmath.mpf(m)))) for m in ms]
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)
    fine = max_statistic_loss(np.linspace(-5.0, 10.0, 4001) * s, t, c, s)
    assert np.all(np.diff(fine) > 0)  # increasing (log-concavity of Phi)


def _against_quadrature(t, c, s, points):
    disc = floor_grid(t, c, s, 1)
    for remove in (True, False):
        pmf = one_epoch_pmf(t, c, s, disc, remove)
        for eps in points:
            lo = float(pmf.lower_delta(eps)[0])
            truth = ref_hockey(t, c, s, eps, remove)
            assert lo <= truth, (remove, eps, lo, truth)
        # and close: each loss is rounded down by about one grid step
        near = ref_hockey(t, c, s, points[-1] + 2 * disc, remove)
        assert lo >= near - 1e-12, (remove, points[-1], lo, near)


@pytest.mark.parametrize("t,c,s,eps", [(1, 1.0, 1.0, 0.7), (10, 1.0, 1.0, 0.2),
                                       (100, 2.0, 2.0, 0.5)])
def test_one_epoch_floor_against_quadrature(t, c, s, eps):
    # lower <= truth (40-digit quadrature) in both directions, at 0 and at eps, and
    # lower >= truth(eps + 2 disc) - 1e-12
    _against_quadrature(t, c, s, (0.0, eps))


@pytest.mark.parametrize("c,s,epochs", [(1.0, 2.0, 4), (2.0, 3.0, 10), (1.0, 0.5, 30)])
def test_t_one_is_the_gaussian(c, s, epochs):
    # t = 1: the pair is G_{c/s}, its E-fold composition G_{c sqrt(E)/s} (closed form,
    # references.delta_gdp at 40 digits)
    f = max_statistic_floor(1, c, s, epochs)
    mu = c * math.sqrt(epochs) / s
    shift = 2 * epochs * f.disc
    for eps in (0.0, 0.5, 1.0, 3.0):
        lo = float(f.delta_lower(eps))
        with mpmath.workdps(40):
            assert lo <= delta_gdp(mu, eps)
            assert lo >= delta_gdp(mu, eps + shift) - 1e-12
    xs = np.linspace(0.0, 4.0 * mu + 2.0, 161)
    m = mu_floor_from_lower(xs, f.delta_lower(xs))
    assert 0.98 * mu <= m <= mu


def _float_pmfs(t, c, s, disc, pessimistic):
    """dp_accounting PMF (remove direction) of the max-statistic pair from scipy float64
    CDFs on a fine m-grid: losses rounded up (pessimistic, right tail to infinity) or down
    (optimistic, tails dropped)."""
    from dp_accounting.pld import pld_pmf
    from scipy.special import log_ndtr

    ms = np.linspace(-12.0 * s - c, 12.0 * s + c + 2.0 * s * math.sqrt(math.log(t + 1)),
                     200_001)
    cdf = np.exp(log_ndtr((ms - c) / s) + (t - 1) * log_ndtr(ms / s))
    mass = np.diff(cdf)
    loss = max_statistic_loss(ms, t, c, s)
    idx = np.ceil(loss[1:] / disc) if pessimistic else np.floor(loss[:-1] / disc)
    probs: dict[int, float] = {}
    for k, w in zip(idx.astype(int), mass, strict=True):
        probs[int(k)] = probs.get(int(k), 0.0) + float(w)
    if pessimistic:
        probs[int(idx[0])] += float(cdf[0])
    inf = float(1.0 - cdf[-1]) if pessimistic else 0.0
    return pld_pmf.create_pmf(probs, disc, inf, pessimistic)


def test_composition_against_dp_accounting():
    # second algorithm: dp_accounting's FFT composition of float PMFs of the same pair on a
    # grid 1e-4 (pessimistic above the truth, optimistic below, up to float64 rounding)
    t, c, s, epochs = 10, 1.0, 1.5, 8
    f = max_statistic_floor(t, c, s, epochs)
    with np.errstate(all="ignore"):  # dp_accounting's own tail bounds overflow harmlessly
        pes = _float_pmfs(t, c, s, 1e-4, True).self_compose(epochs)
        opt = _float_pmfs(t, c, s, 1e-4, False).self_compose(epochs)
    remove = f.composed[0]
    for eps in (0.0, 0.3, 1.0, 2.0):
        lo = float(remove.lower_delta(eps)[0])
        assert lo <= float(pes.get_delta_for_epsilon(eps)) * (1 + 1e-9) + 1e-12
        # and close: each epoch's losses rounded down by about one step of the floor grid
        near = float(opt.get_delta_for_epsilon(eps + 2 * epochs * f.disc))
        assert lo >= near * (1 - 1e-6) - 1e-9, (eps, lo, near)


def test_dpsgd_floor_under_each_relation():
    # shuffle, b = n (t = 1): the pair is G_{c/sigma} per epoch, c = 2 under replace-one,
    # so the floor is within its grid of the closed form 2 sqrt(E)/sigma (the upper bound)
    r = dpsgd(sampling="shuffle", dataset_size=8, batch_size=8, sigma=2.0, epochs=9,
              neighbouring="replace_one", **FAST)
    assert 0.99 * 3.0 <= r.mu_floor <= 3.0 <= r.mu_upper
    # random allocation under replace-one: only the sensitivity-1 pair is attained (the
    # record replaced by a zero gradient), so with one step the floor is at most
    # sqrt(E)/sigma = 1.5, half the upper bound: a floor of c = 2 would fail here
    a = dpsgd(sampling="random_allocation", sigma=2.0, steps=1, epochs=9,
              neighbouring="replace_one", **FAST)
    assert 0.99 * 1.5 <= a.mu_floor <= 1.5 and a.mu_upper >= 3.0
    assert "loose under replace-one" in a.assumption
    # the same pair under either relation: the same lower profile (the floors differ only
    # by the head [0, eps_h] of each upper bound they are read on)
    b = dpsgd(sampling="random_allocation", sigma=2.0, steps=1, epochs=9,
              neighbouring="add_remove", **FAST)
    assert a.plan.floor_pair == b.plan.floor_pair == (1, 1.0) and b.mu_upper <= 1.5 + 2e-3
    xs = np.linspace(0.0, 5.0, 11)
    assert np.array_equal(a.delta_lower(xs), b.delta_lower(xs))
    assert 0.99 * 1.5 <= b.mu_floor <= 1.5
    assert "max-statistic" in str(b) and "Chua" in b.assumption
    # the statement states the bracket, and that it is not tight
    assert "not tight" in str(r) and "[" in str(r).split("mu in")[1][:3]


def test_amplification_shows_in_the_floor():
    # order relation: with many steps and a large sigma the max statistic sees little
    # (amplification), so the floor is far below the bound without amplification, and it
    # falls as the steps grow (one step: the Gaussian itself)
    floors = []
    for steps in (1, 100, 10_000):
        r = dpsgd(sampling="random_allocation", sigma=4.0, steps=steps, epochs=4, **FAST)
        assert r.mu_floor <= r.mu_upper
        floors.append(r.mu_floor)
    assert floors[0] >= 0.99 * 0.5          # sqrt(4)/4: the Gaussian
    assert floors[2] < 0.2 * floors[0] and floors[2] < floors[1] < floors[0]


def test_band_from_the_floor():
    # the floor's lower profile gives the trade-off band its upper side; the band contains
    # the max-statistic pair's own curve only as a bound: check the order lower <= upper
    r = dpsgd(sampling="shuffle", dataset_size=20, batch_size=5, sigma=2.0, epochs=2,
              **FAST)
    b = r.tradeoff([0.01, 0.1, 0.5])
    assert bool(np.all(b.lower <= b.upper))


def test_a_floor_grid_not_a_power_of_two_and_the_refusals():
    # any grid: 1e-3 is not a binary fraction; still below the 40-digit quadrature
    for remove in (True, False):
        pmf = one_epoch_pmf(10, 1.0, 1.0, 1e-3, remove)
        assert float(pmf.lower_delta(0.3)[0]) <= ref_hockey(10, 1.0, 1.0, 0.3, remove)
    # a grid too fine for one epoch: no floor (nan), and the assumption says why
    # (replace-one: the max-statistic floor is the only one)
    r = dpsgd(sampling="random_allocation", sigma=1.0, steps=10, epochs=2,
              floor_discretization=1e-7, neighbouring="replace_one", **FAST)
    assert math.isnan(r.mu_floor) and "floor not computed" in r.assumption
    assert "1e-07" in r.assumption and r.mu_upper >= 2 * math.sqrt(2)
    # add/remove: the attained pair's own floor stands in (allocation_tight)
    a = dpsgd(sampling="random_allocation", sigma=1.0, steps=10, epochs=2,
              floor_discretization=1e-7, **FAST)
    assert a.amplification and a.tight and 0 < a.mu_floor <= a.mu_upper < math.sqrt(2)
    assert "attained pair" in a.assumption
    # floor=False: none asked, none given
    n = dpsgd(sampling="random_allocation", sigma=1.0, steps=10, epochs=2, floor=False,
              **FAST)
    assert math.isnan(n.mu_floor) and n.floor_profile is None


@pytest.mark.parametrize("args,word", [
    ((0, 1.0, 1.0, 1), "steps per epoch"), ((3, 1.0, -1.0, 1), "sigma"),
    ((3, 0.0, 1.0, 1), "sensitivity"), ((3, 1.0, 1.0, 0), "epochs"),
])
def test_bad_input_is_refused_by_name(args, word):
    with pytest.raises(DomainError, match=word):
        max_statistic_floor(*args)
    with pytest.raises(DomainError, match="grid"):
        max_statistic_floor(3, 1.0, 1.0, 1, disc=2.0)


@pytest.mark.skipif(SCALE < 2, reason="deeper check: set SYMGDP_TEST_SCALE=2")
def test_deep_many_steps_and_epochs():
    # t = 10^5, E = 100: cheap, below the bound without amplification, and the floor's
    # one epoch against the quadrature
    f = max_statistic_floor(100_000, 1.0, 0.7, 100)
    xs = np.linspace(0.0, 30.0, 161)
    m = mu_floor_from_lower(xs, f.delta_lower(xs))
    assert 0 < m <= math.sqrt(100) / 0.7
    _against_quadrature(100_000, 1.0, 0.7, (0.0, 0.5))
    _against_quadrature(1000, 1.0, 0.7, (0.0, 0.2, 1.5))
    _against_quadrature(10, 1.0, 1.0, (0.0, 0.2, 0.7, 1.5))
