"""Random allocation with amplification (symgdp.training.allocation_upper): the certified
upper profile against independent truths.

References: one epoch of two steps is the pair (P, Q) whose likelihood ratio is the mean of
two independent mean-1 lognormals; conditioning on the first, the inner expectation is a
lognormal call or put price in closed form (Black-Scholes), and the outer one a 1-D
quadrature at 30 digits (mpmath, the kink of the inner function a breakpoint).  The
moments of the certified law are checked against the closed forms E[S] = 1,
E[S^2] = 1 + (e^{1/sigma^2} - 1)/t (a mean-preserving spread can only raise the second
moment).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import symgdp
from symgdp.errors import DomainError
from symgdp.training.allocation_tight import pair_floor
from symgdp.training.allocation_upper import allocation_upper, epoch_law


def _two_step_truth(sigma: float, eps: float, direction: str) -> mp.mpf:
    """delta of one epoch of two steps, one direction, 30 digits (module notes)."""
    with mp.workdps(30):
        s = mp.mpf(1) / sigma
        m = -s**2 / 2                      # log X ~ N(m, s^2), E X = 1
        c = mp.e**mp.mpf(eps)
        k = 2 * c if direction == "remove" else 2 / c

        def call(kk: mp.mpf) -> mp.mpf:    # E[(X - kk)_+]
            if kk <= 0:
                return 1 - kk
            d1 = (m + s**2 - mp.log(kk)) / s
            return mp.ncdf(d1) - kk * mp.ncdf(d1 - s)

        def put(kk: mp.mpf) -> mp.mpf:     # E[(kk - X)_+]
            if kk <= 0:
                return mp.mpf(0)
            d1 = (m + s**2 - mp.log(kk)) / s
            return kk * mp.ncdf(s - d1) - mp.ncdf(-d1)

        def f(z: mp.mpf) -> mp.mpf:
            x1 = mp.e**(m + s * z)
            # remove: E[(x1/2 + X/2 - c)_+]; add: E[(1 - c (x1 + X)/2)_+]
            v = call(k - x1) / 2 if direction == "remove" else c * put(k - x1) / 2
            return v * mp.npdf(z)

        kink = float((mp.log(k) - m) / s)
        pts = sorted({-14.0, -4.0, 0.0, 4.0, 14.0} | ({kink} if -14 < kink < 14 else set()))
        return mp.quad(f, pts)


@pytest.mark.parametrize("sigma", [0.8, 2.0])
def test_one_epoch_of_two_steps_against_quadrature(sigma):
    up = allocation_upper(sigma, 2, 1)
    low = pair_floor(sigma, 2, 1)
    r = symgdp.dpsgd(sampling="random_allocation", sigma=sigma, steps=2, epochs=1, tol=1e-4)
    assert r.amplification and r.tight   # the floor is the attained pair's
    assert r.mu_floor <= r.mu_upper <= r.mu_floor + 2e-3
    worst_mu = 0.0
    arg = float(r.measurement.argmax)   # where the upper profile's GDPT peaks on the head
    for eps in (0.0, 0.5, 1.5, 3.0, arg):
        truth = max(_two_step_truth(sigma, eps, "remove"), _two_step_truth(sigma, eps, "add"))
        u = float(up.profile(eps))
        lo = float(low.delta_lower(eps))
        assert float(truth) <= u <= float(truth) * (1 + 1e-3) + 1e-15, (sigma, eps, truth, u)
        # the floor of the pair (a contraction, then the engine's floor theorem)
        assert lo <= float(truth), (sigma, eps, truth, lo)
        assert lo >= float(truth) * 0.8 - 1e-12 or float(truth) < 1e-9, (sigma, eps, lo)
        if eps <= r.eps_h:  # the bracket is a statement on the head [0, eps_h]
            worst_mu = max(worst_mu, float(symgdp.mu_gdp(eps, float(truth))))
    # the bracket of this epoch holds the truth's mu on the head (a lower bound on it: the
    # largest mu_gdp over the points above) and is tight above it
    assert worst_mu <= r.mu_upper <= worst_mu + 2e-3, (worst_mu, r.mu_upper)
    assert r.mu_floor <= r.mu_upper


@pytest.mark.parametrize("sigma, t", [(1.0, 10), (2.0, 7), (0.7, 17)])
def test_epoch_law_moments(sigma, t):
    law = epoch_law(sigma, t, 2.0**-9)
    x = np.exp((np.arange(law.q.size) + law.lower) * law.disc)
    mass = math.fsum(law.q) + law.zero
    mean = math.fsum(law.q * x)
    second = math.fsum(law.q * x * x)
    exact = 1.0 + math.expm1(1.0 / sigma**2) / t   # E[S^2], closed form
    assert 1.0 <= mass <= 1.0 + 1e-6
    assert 1.0 - 1e-12 <= mean + law.p_inf and mean <= 1.0 + 1e-6
    # a spread only raises the second moment; the grid adds little
    assert exact * (1 - 1e-9) <= second <= exact * (1 + 1e-3), (second, exact)
    assert law.zero < 1e-15 and law.p_inf < 1e-15


def test_amplified_below_the_gaussian_and_above_the_floor():
    r = symgdp.dpsgd(sampling="random_allocation", sigma=1.0, steps=10, epochs=3)
    assert r.amplification and r.neighbouring == "add_remove" and r.tight
    assert r.mu_floor <= r.mu_upper < math.sqrt(3.0)   # without amplification: sqrt(E)/sigma
    assert r.mu_upper - r.mu_floor < 5e-3   # the pair is attained: the bracket is tight
    assert "attained pair's certified lower profile" in r.assumption
    for eps in (0.0, 1.0, 2.5):
        assert r.profile(eps) <= symgdp.delta_mu(eps, math.sqrt(3.0), rounding="up")
    assert r.eps_at(1e-5) >= r.eps_certified
    band = r.tradeoff([0.01, 0.1, 0.5])
    assert bool(np.all(band.lower <= band.upper))
    assert "amplified" in r.assumption


def test_replace_one_and_one_step_are_not_amplified():
    # replace-one: no amplified pair is proved here, the closed form 2 sqrt(E)/sigma
    r = symgdp.dpsgd(sampling="random_allocation", sigma=2.0, steps=10, epochs=4,
                     neighbouring="replace_one")
    assert r.amplification == "" and r.closed_form
    assert r.mu_upper == pytest.approx(2.0 * math.sqrt(4.0) / 2.0, rel=1e-15)
    # one step per epoch is the Gaussian itself
    r1 = symgdp.dpsgd(sampling="random_allocation", sigma=2.0, steps=1, epochs=4)
    assert r1.amplification == "" and r1.mu_upper == pytest.approx(1.0, rel=1e-15)


def test_more_noise_is_more_private():
    mus = [symgdp.dpsgd(sampling="random_allocation", sigma=s, steps=20, epochs=2,
                        floor=False).mu_upper for s in (0.9, 1.2, 2.0)]
    assert mus[0] > mus[1] > mus[2]


def test_bad_input_is_refused():
    with pytest.raises(DomainError, match="at least 2 steps"):
        epoch_law(1.0, 1, 2.0**-9)
    with pytest.raises(DomainError, match="sigma"):
        epoch_law(-1.0, 4, 2.0**-9)
    with pytest.raises(DomainError, match="epochs"):
        allocation_upper(1.0, 4, 0)


def test_a_refused_amplified_bound_leaves_the_proved_one():
    # sigma = 0.1, two steps: the amplified bound refuses (its grid would need 81730 points),
    # which must not refuse dpsgd: the bound without amplification is proved on its own, the
    # exact Gaussian composition sqrt(E)/sigma = 10 (it was, before the amplified bound)
    with pytest.raises(DomainError, match="sigma too small"):
        allocation_upper(0.1, 2, 1)
    r = symgdp.dpsgd(sampling="random_allocation", sigma=0.1, steps=2, epochs=1)
    assert r.amplification == "" and r.closed_form
    assert r.mu_upper == pytest.approx(10.0, rel=1e-15)
    assert r.mu_floor <= r.mu_upper


@pytest.mark.parametrize("kw", [
    dict(epochs=2.5), dict(epochs=True), dict(steps=2.5), dict(steps=True),
    dict(sigma=math.nan), dict(sigma=1e-300), dict(sigma=1e300),
    dict(disc=0.0), dict(disc=-0.01), dict(disc=math.nan), dict(disc=2.0)])
def test_bad_arguments_are_domain_errors(kw):
    # 2.5 epochs were accounted as 2 (int()), fewer than the run's; the others raised
    # ZeroDivisionError, IndexError or ValueError, or (sigma 1e300) gave the trivial 1
    args = dict(sigma=1.0, steps=4, epochs=1) | kw
    with pytest.raises(DomainError):
        allocation_upper(**args)


def test_a_fine_grid_keeps_the_weights_error_budget():
    # the split weights' balls widen like 1/step^2: at 200 bits a grid of 2^-24 gave radius
    # 2^-174.4 (sigma 1000, 10^4 steps, disc=2^-24), above the 2^-181 per weight the
    # residual of _combine budgets (a formal hole of ~1e-52, hidden only by the integer
    # rounding's slack); the precision now grows with the grid, and _split refuses a wider
    # ball (DomainError) rather than use it
    from symgdp.training import allocation_upper as au

    step = 2.0**-24
    au._weights.cache_clear()
    # ratios 1/2 e^{d step} + 1/2 far from 1 (d up to 3e6: e^{0.18}), where balls are widest
    off, wl, wh = au._weights(1, 2, 1, 1, step, 2_999_000, 3_000_000)
    assert np.all((wl >= 0) & (wl <= 1) & (wh >= 0) & (wh <= 1))
    # the weights against an independent evaluation at 400 bits: mean and mass kept
    flint = pytest.importorskip("flint")
    old = flint.ctx.prec
    flint.ctx.prec = 400
    try:
        for idx in (0, 500, 1000):
            d = 2_999_000 + idx
            x = (flint.arb(step) * d).exp() / 2 + flint.arb(1) / 2
            lo_pt = (flint.arb(step) * int(off[idx])).exp()
            exact_hi = (x - lo_pt) / (lo_pt * (flint.arb(step).exp() - 1))
            assert abs(float(exact_hi.mid()) - wh[idx]) <= 2.0**-52 * wh[idx] + 2.0**-181
    finally:
        flint.ctx.prec = old
