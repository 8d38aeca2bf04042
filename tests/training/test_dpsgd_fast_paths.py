"""The fast paths of DP-SGD's certified engine against independent references: the Taylor
blocks of the one-step tails (40-digit mpmath), the composition's cuts and roundings (a
brute-force exact integer composition), the addition chains (integer arithmetic)."""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest

from symgdp.pld import pmf as pmf_mod
from symgdp.training import engine as sgd
from symgdp.training.tailblocks import addremove_tails

CASES = [(0.01, 1.0, 1e-4, 1e-16), (0.5, 0.8, 1e-3, 1e-16), (1.0, 2.0, 1e-3, 1e-20),
         (0.001, 5.0, 1e-4, 1e-16), (0.3, 0.5, 1e-2, 1e-30), (0.9, 0.3, 1e-2, 1e-20)]


def _mp_tails(q: float, sigma: float, l: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    # reference: the closed form at 40 digits, P-tail and Q-tail above the loss l
    q, sigma = mpmath.mpf(q), mpmath.mpf(sigma)  # exact: the floats' binary values
    t = mpmath.expm1(l) + q
    if t <= 0:
        return mpmath.mpf(1), mpmath.mpf(1)
    x = sigma**2 * mpmath.log(t / q) + mpmath.mpf(1) / 2
    f = mpmath.erfc(x / (sigma * mpmath.sqrt(2))) / 2
    g = mpmath.erfc((x - 1) / (sigma * mpmath.sqrt(2))) / 2
    return (1 - q) * f + q * g, f


def _exact(x: flint.arb) -> mpmath.mpf:
    m, e = x.mid().man_exp()
    with mpmath.workprec(400):  # exact: the mantissa has at most a few hundred bits
        return mpmath.ldexp(mpmath.mpf(int(m)), int(e))


@pytest.mark.parametrize("q, sigma, disc, tau", CASES)
def test_taylor_blocks_contain_the_40_digit_tails(q, sigma, disc, tau):
    j0, j1 = sgd._loss_grid(q, sigma, disc, tau)
    prec = 96
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        p, a, e = addremove_tails(q, sigma, disc, j0, j1, prec)
    finally:
        flint.ctx.prec = old
    n = j1 - j0 + 1
    assert len(p) == len(a) == len(e) == n
    rng = np.random.default_rng(7)
    idx = sorted(set(rng.integers(0, n, 300).tolist()) | {0, 1, n - 1, n // 2}
                 | set(range(min(n, 300))))
    with mpmath.workdps(40):
        for k in idx:
            l = mpmath.mpf(j0 + k) * mpmath.mpf(disc)  # the grid loss, exactly
            pv, av = _mp_tails(q, sigma, l)
            for ball, ref in ((p[k], pv), (a[k], av), (e[k], mpmath.exp(l))):
                lo, hi = (_exact(b) for b in (ball.lower(), ball.upper()))
                # the reference's own error: 40 digits
                slack = abs(ref) * mpmath.mpf("1e-38")
                assert lo - slack <= ref <= hi + slack, (k, ball, ref)
            # and tight where the masses need it: the split of a cell multiplies a
            # P-tail's error by about 1/disc and a Q-tail's by up to e^l/disc, so the
            # P-balls must be about 2^-prec wide and the Q-balls 2^-prec min(1, e^-l)
            lf = float(l)
            assert float(p[k].rad()) <= 2.0**-prec * 16
            assert float(a[k].rad()) <= 2.0**-prec * 16 * min(1.0, math.exp(-lf))


@pytest.mark.parametrize("q, sigma, disc", [(0.99999, 0.16, 1e-3), (0.01, 1.0, 1e-4),
                                            (0.5, 0.3, 1e-3)])
def test_one_step_masses_are_tight(q, sigma, disc):
    # reference: the exact law has mass 1; rounding each cell up adds at most a unit per
    # cell plus the balls' widths, which the split amplifies by up to e^l / disc at large
    # losses (the point-by-point balls gave 3.3e4, 7.7e5 and 8.1e6 units here): at most
    # 2^30 units (1e-15) in all, where loose balls would add whole units of mass
    st = sgd.one_step_pmfs(q, sigma, disc, 1e-16, 80, "add_remove", True)
    for p in st.directions:
        excess = p.total() + p.inf - (1 << 80)
        assert 0 <= excess <= 2**30, excess


def _exact_power(step: pmf_mod.IntPMF, t: int) -> list[int]:
    # reference: the exact t-fold convolution of the one-step integers (scale 2^-80t)
    c = [int(v) for v in step.poly.coeffs()] + [0] * (step.size - step.poly.length())
    return [int(v) for v in (flint.fmpz_poly(c) ** t).coeffs()]


@pytest.mark.parametrize("t, tail", [(8, 1e-19), (8, 1e-6), (13, 1e-9)])
def test_composition_dominates_the_exact_one_and_books_what_it_moved(t, tail):
    st = sgd.one_step_pmfs(0.3, 1.0, 0.05, 1e-16, 80, "add_remove", False)
    step = st.directions[0]
    bits, disc = step.bits, step.disc
    ex = _exact_power(step, t)
    ex_lower = t * step.lower
    # the exact law has mass at infinity from the one step's tail too
    inf_ex = (step.total() + step.inf) ** t - step.total() ** t
    leaf = sgd._Tracked(step, 0.0, math.inf, math.inf)
    out = sgd._power(leaf, t, tail)
    nu = out.pmf
    assert out.cut > 0  # the cuts were exercised
    scale = 1 << (bits * (t - 1))  # nu in units of 2^-80 -> 2^-80t
    nuc = [int(v) for v in nu.poly.coeffs()] + [0] * (nu.size - nu.poly.length())
    # tails from every threshold: nu dominates (moves to larger losses, mass added only
    # by rounding up) and exceeds by at most what it says it moved plus what it added
    tail_nu = nu.inf * scale
    tail_ex = inf_ex
    hi_nu = nu.lower + nu.size - 1
    hi_ex = ex_lower + len(ex) - 1
    # the total changes only by the rounding up at infinity: the net added mass, exactly
    added = (nu.total() + nu.inf) * scale - (step.total() + step.inf) ** t
    assert added >= 0
    room = int(Fraction(out.cut) * 2 ** (bits * t)) + 1 + added
    for j in range(max(hi_nu, hi_ex), min(nu.lower, ex_lower) - 1, -1):
        if nu.lower <= j <= hi_nu:
            tail_nu += nuc[j - nu.lower] * scale
        if ex_lower <= j <= hi_ex:
            tail_ex += ex[j - ex_lower]
        assert tail_nu >= tail_ex, j
        assert tail_nu - tail_ex <= room, j
    assert nu.disc == disc


def test_phases_compose_to_dominate_the_exact_product():
    # reference: the exact product a^3 b^2 of two phases' one-step integers (flint
    # fmpz_poly): sgd.compose_phases (the one loop of the record-level, user-level and
    # symmetrised engines) dominates it from every threshold, exceeds it by at most what it
    # booked as cut plus what rounding added, and books 3 m_a + 2 m_b moved, rounded up
    a = sgd.one_step_pmfs(0.3, 1.0, 0.05, 1e-16, 80, "add_remove", False)
    b = sgd.one_step_pmfs(0.6, 2.0, 0.05, 1e-16, 80, "add_remove", False)
    pa, pb = a.directions[0], b.directions[0]
    out, moved = sgd.compose_phases([(sgd._Tracked(pa), 3, a.moved[0]),
                                     (sgd._Tracked(pb), 2, b.moved[0])], 1e-12)
    assert Fraction(moved) >= 3 * Fraction(a.moved[0]) + 2 * Fraction(b.moved[0])

    def poly(p):
        return flint.fmpz_poly([int(v) for v in p.poly.coeffs()])

    ex = [int(v) for v in (poly(pa) ** 3 * poly(pb) ** 2).coeffs()]
    ex_lower, bits, nu = 3 * pa.lower + 2 * pb.lower, 80, out.pmf
    full = (pa.total() + pa.inf) ** 3 * (pb.total() + pb.inf) ** 2
    tail_ex = full - pa.total() ** 3 * pb.total() ** 2    # the exact mass at infinity
    scale = 1 << (bits * 4)   # nu in units of 2^-80 -> 2^-400
    tail_nu = nu.inf * scale
    added = (nu.total() + nu.inf) * scale - full
    assert added >= 0 and out.cut > 0
    room = int(Fraction(out.cut) * 2 ** (bits * 5)) + 1 + added
    nuc = [int(v) for v in nu.poly.coeffs()] + [0] * (nu.size - nu.poly.length())
    hi_nu, hi_ex = nu.lower + nu.size - 1, ex_lower + len(ex) - 1
    for j in range(max(hi_nu, hi_ex), min(nu.lower, ex_lower) - 1, -1):
        if nu.lower <= j <= hi_nu:
            tail_nu += nuc[j - nu.lower] * scale
        if ex_lower <= j <= hi_ex:
            tail_ex += ex[j - ex_lower]
        assert tail_ex <= tail_nu <= tail_ex + room, j


def test_composition_books_the_add_directions_weighted_moves():
    # reference: sum_l nu(l) e^{-l} of the exact composition at 40 digits; the composed
    # measure's own weighted sum may fall short of it by at most erry (mass moved to
    # larger losses), and ey bounds the measure's weighted sum from above
    st = sgd.one_step_pmfs(0.3, 1.0, 0.05, 1e-16, 80, "add_remove", False)
    step = st.directions[0]
    t = 8
    ex = _exact_power(step, t)
    with mpmath.workdps(40):
        r = mpmath.exp(-mpmath.mpf(step.disc))
        w_ex = sum(mpmath.mpf(c) * r ** (t * step.lower + i) for i, c in enumerate(ex))
        w_ex = w_ex / mpmath.mpf(2) ** (80 * t)
        w_leaf = sum(mpmath.mpf(int(c)) * r ** (step.lower + i)
                     for i, c in enumerate(step.poly.coeffs())) / mpmath.mpf(2) ** 80
        leaf = sgd._Tracked(step, 0.0, float(w_leaf) * (1 + 1e-15), 0.0)
        out = sgd._power(leaf, t, 1e-9)
        nu = out.pmf
        w_nu = sum(mpmath.mpf(int(c)) * r ** (nu.lower + i)
                   for i, c in enumerate(nu.poly.coeffs())) / mpmath.mpf(2) ** 80
        assert out.erry > 0
        assert w_ex - w_nu <= out.erry
        assert w_nu <= out.ey


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 10, 100, 999, 1000, 1023, 1024, 12345,
                               2**24 + 1, 2**40 + 3])
def test_addition_chains_reach_their_target(k):
    # reference: integer addition along the chain, and the binary method's length
    steps = pmf_mod.addition_chain(k)
    e = [1]
    for i, j in steps:
        e.append(e[i] + e[j])
    assert e[-1] == k
    assert len(steps) <= 2 * k.bit_length()
    assert pmf_mod.chained(1, k, lambda a, b: a + b) == k


def test_product_threads_do_not_change_the_product():
    # reference: the same product with one thread (exact integers)
    rng = np.random.default_rng(3)
    a = flint.fmpz_poly([int(v) for v in rng.integers(0, 2**62, 3000)])
    b = flint.fmpz_poly([int(v) for v in rng.integers(0, 2**62, 2000)])
    old = pmf_mod.PRODUCT_THREADS
    try:
        pmf_mod.PRODUCT_THREADS = 1
        one = pmf_mod.product(a, b)
        pmf_mod.PRODUCT_THREADS = 2
        two = pmf_mod.product(a, b)
    finally:
        pmf_mod.PRODUCT_THREADS = old
    assert one == two
    assert flint.ctx.threads >= 1


@pytest.mark.parametrize("sigma, steps", [(0.5, 70), (0.4, 50)])
def test_gaussian_composition_beyond_mu_16_is_bracketed(sigma, steps):
    # reference: q = 1 is the Gaussian mechanism composed, exactly sqrt(T)/sigma-GDP (Dong,
    # Roth & Su 2022, Cor. 3.3), at 50 digits; 1 - delta(0) = 2 Phi(-mu/2) is about 6e-17
    # and 1e-18 here, below the dust of the engine's default 2^-80 scale (its upper end was
    # inf before scale_for, 40-60 s each after it).  q = 1 is now the closed form (no
    # scale): both ends are the floats either side of mu.  The scales the engine would use
    # are still checked against 2 Phi(-mu/2) in test_scale_grows_with_the_guessed_mu.
    from symgdp import dpsgd

    with mpmath.workdps(50):
        mu = mpmath.sqrt(steps) / mpmath.mpf(sigma)
    assert mu > 16
    r = dpsgd(1.0, sigma, steps, value_discretization_interval=1e-3, rdp_only=False)
    assert r.closed_form and math.isfinite(r.mu_upper)
    assert mpmath.mpf(r.mu_floor) <= mu <= mpmath.mpf(r.mu_upper)
    assert r.mu_upper - r.mu_floor <= 8e-15


def test_scale_grows_with_the_guessed_mu():
    # reference: 2 Phi(-mu/2) from scipy; the dust bound ops * support * 2^-bits must stay
    # below half a thousandth of it, and the default scale is kept for small mu
    from scipy.special import ndtr

    assert sgd.scale_for([(0.01, 1.0, 1000)], "add_remove", 1e6) == (80, 1e-19)
    for sigma, steps in ((0.5, 70), (0.4, 50), (0.3, 60), (0.25, 64)):
        bits, tail = sgd.scale_for([(1.0, sigma, steps)], "add_remove", 1e6)
        room = 1e-3 * 2 * float(ndtr(-math.sqrt(steps) / sigma / 2))
        ops = steps + 2 * int(steps).bit_length() + 1
        assert bits > 80 and ops * 1e6 * 2.0**-bits <= room / 2
        assert tail * 4 * ops <= room * (1 + 1e-12)
