"""DP-SGD schedules, neighbouring relations, the headline bracket, Accountant, dpsgd_sigma.

References (named at each test): the closed form of the unsampled case (q = 1 is the
Gaussian mechanism: sqrt(sum T_i / sigma_i^2)-GDP for add/remove, twice that for
replace-one, whose sensitivity is 2); the exact one- and two-step profiles of the
subsampled Gaussian in 30-40 digit mpmath (the loss inverted by mpmath's root finder,
two steps by 25-digit numerical integration over the first step); dp_accounting's optimistic and
pessimistic PLDs (float64) for the replace-one relation; independent dpsgd calls.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest

from symgdp import Accountant, dpsgd, dpsgd_sigma
from symgdp.errors import DomainError, SymgdpError
from symgdp.gaussian.vectorised import mu_gdp

FAST = dict(value_discretization_interval=1e-3, tol=1e-3)


@functools.cache
def _run(q, sigma, steps, neighbouring="add_remove"):
    return dpsgd(q, sigma, steps, neighbouring=neighbouring, **FAST)


# -- exact references ------------------------------------------------------------------------
def _loss(x, q, s, rel):
    """log P(x)/Q(x) of the dominating pair, mpmath."""
    p = (1 - q) + q * mpmath.exp((2 * x - 1) / (2 * s * s))
    if rel == "add_remove":
        return mpmath.log(p)
    return mpmath.log(p / ((1 - q) + q * mpmath.exp((-2 * x - 1) / (2 * s * s))))


def _tail(x, mean, s):
    return mpmath.erfc((x - mean) / (s * mpmath.sqrt(2))) / 2


def _delta1(e, q, s, rel):
    """Exact one-step profile at any real e: P[L > e] - e^e Q[L > e], the point x_e found
    by mpmath's root finder on the loss (not the closed form the library uses)."""
    q, s, e = mpmath.mpf(q), mpmath.mpf(s), mpmath.mpf(e)
    lo, hi = mpmath.mpf(-60), mpmath.mpf(60)
    if rel == "add_remove" and q < 1 and e <= mpmath.log(1 - q):
        return 1 - mpmath.exp(e)  # every loss is above e
    x = mpmath.findroot(lambda t: _loss(t, q, s, rel) - e, (lo, hi), solver="illinois",
                       tol=mpmath.mpf(10) ** (-mpmath.mp.dps + 4), verify=False)
    pt = (1 - q) * _tail(x, 0, s) + q * _tail(x, 1, s)
    qt = _tail(x, 0, s) if rel == "add_remove" else (1 - q) * _tail(x, 0, s) + q * _tail(x, -1, s)
    return pt - mpmath.exp(e) * qt


def _delta2(e, q, s, rel):
    """Exact two-step profile: E_{x~P}[delta_1(e - L(x))] by numerical integration."""
    q, s = mpmath.mpf(q), mpmath.mpf(s)

    def dens(x):
        return ((1 - q) * mpmath.npdf(x, 0, s) + q * mpmath.npdf(x, 1, s))

    return mpmath.quad(lambda x: dens(x) * _delta1(e - _loss(x, q, s, rel), q, s, rel),
                       [-12 * s, 0, 0.5, 1, 1 + 12 * s])


# -- the headline ------------------------------------------------------------------------------
def test_headline_is_the_mechanism_bracket():
    # reference: the floor theorem -- mu_floor is below every valid mu, mu_upper a valid one
    r = _run(0.05, 1.0, 20)
    assert r.mu_lower == r.mu_floor <= r.surrogate_lower <= r.mu_upper
    assert r.mu_upper - r.mu_floor < 5e-3
    text = str(r)
    assert "contains the mechanism's mu" in text and "add/remove" in text
    d = r.as_dict()
    assert d["neighbouring"] == "add_remove" and d["mu_floor"] == r.mu_floor
    assert list(d)[:2] == ["mu_floor", "mu_upper"]


@pytest.mark.parametrize("rel", ["add_remove", "replace_one"])
def test_one_phase_schedule_is_the_plain_call(rel):
    # reference: the plain call (the same phase composed by the same squarings)
    a = _run(0.05, 1.0, 20, rel)
    b = dpsgd(schedule=[(0.05, 1.0, 20)], neighbouring=rel, **FAST)
    assert (a.mu_floor, a.mu_upper, a.eps_certified) == (b.mu_floor, b.mu_upper,
                                                         b.eps_certified)
    assert b.neighbouring == rel and b.schedule == ((0.05, 1.0, 20),)


@pytest.mark.parametrize("rel,factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_unsampled_schedule_is_exactly_gaussian(rel, factor):
    # reference: closed form; q = 1 steps are Gaussian with sensitivity 1 (add/remove) or
    # 2 (replace-one), and GDP composes as sqrt(sum mu_i^2)
    r = dpsgd(schedule=[(1.0, 2.0, 9), (1.0, 3.0, 4)], neighbouring=rel, **FAST)
    exact = factor * math.sqrt(9 / 4 + 4 / 9)
    assert r.mu_floor <= exact <= r.mu_upper
    assert r.mu_upper - r.mu_floor < 0.02 * factor


@pytest.mark.parametrize("rel", ["add_remove", "replace_one"])
def test_one_step_profile_against_mpmath(rel):
    # reference: the exact one-step profile at 40 digits (loss inverted by root finding);
    # the certified upper profile is above it and the proven lower profile below it
    q, s = 0.2, 1.0
    r = dpsgd(q, s, 1, neighbouring=rel, **FAST)
    xs = np.array([0.0, 0.1, 0.5, 1.0, 2.0])
    up = r.profile(xs)
    lo = r.delta_lower(xs)
    with mpmath.workdps(40):
        ex = [float(_delta1(x, q, s, rel)) for x in xs]
    for u, e, low in zip(up, ex, lo, strict=True):
        assert low <= e <= u
        assert u - e <= 2e-3 * e + 1e-12  # the grid is tight
    # and the mu of the head: between the floor and the upper end
    with mpmath.workdps(40):
        grid = np.linspace(0.0, r.eps_h, 25)
        mus = [float(mu_gdp(float(x), float(_delta1(x, q, s, rel)))) for x in grid]
    assert max(mus) <= r.mu_upper


@pytest.mark.slow
@pytest.mark.parametrize("rel", ["add_remove", "replace_one"])
def test_two_step_profile_against_quadrature(rel):
    # reference: the exact two-step profile by 18-digit numerical integration (at 25 digits
    # the four values agree with these to 19 significant digits; the asserted bracket is
    # compared in float64, so 18 digits decide it as 25 do, at two thirds of the time)
    q, s = 0.3, 1.2
    r = dpsgd(schedule=[(q, s, 1), (q, s, 1)], neighbouring=rel, **FAST)
    xs = np.array([0.05, 1.2])
    up, lo = r.profile(xs), r.delta_lower(xs)
    with mpmath.workdps(18):
        ex = [float(_delta2(x, q, s, rel)) for x in xs]
    for u, e, low in zip(up, ex, lo, strict=True):
        assert low <= e <= u


@pytest.mark.slow
def test_replace_one_against_dp_accounting():
    # reference: dp_accounting's optimistic (below the truth) and pessimistic (float64,
    # within its discretisation) PLDs with the REPLACE_ONE relation
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as P

    q, s, T = 0.05, 1.0, 20
    r = _run(q, s, T, "replace_one")

    def eps(pess):
        one = P.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=pess,
                                        value_discretization_interval=1e-4,
                                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
        return float(one.self_compose(T).get_epsilon_for_delta(1e-5))

    lo, hi = eps(False), eps(True)
    assert lo <= r.eps_certified <= hi + 2e-2  # our grid is 1e-3, theirs 1e-4
    # replace-one is weaker than add/remove (a replacement is a removal and an addition)
    assert r.mu_upper > _run(q, s, T).mu_upper


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(q=0.0, sigma=1.0, steps=10), dict(q=1.5, sigma=1.0, steps=10),
    dict(q=float("nan"), sigma=1.0, steps=10), dict(q=0.1, sigma=-1.0, steps=10),
    dict(q=0.1, sigma=float("inf"), steps=10), dict(q=0.1, sigma=1.0, steps=True),
    dict(q=0.1, sigma=1.0, steps=2.5), dict(q=0.1, sigma=1.0, steps="ten"),
    dict(schedule=[]), dict(schedule=[(0.1, 1.0)]), dict(schedule="0.1,1,10"),
    dict(schedule=[(0.1, 1.0, 10, 2)]), dict(schedule=[(0.1, 1.0, 10), (0.1, 0.0, 3)]),
    dict(q=0.1, sigma=1.0, steps=10, schedule=[(0.1, 1.0, 10)]), dict(q=0.1),
    dict(q=0.1, sigma=1.0, steps=10, neighbouring="swap"),
    dict(q=0.1, sigma=1.0, steps=10, neighbouring=None),
])
def test_bad_input_is_a_domain_error(kw):
    with pytest.raises(DomainError) as exc:
        dpsgd(**kw)
    assert str(exc.value)


def test_bad_calibration_and_accountant_input():
    for kw in (dict(), dict(target_mu=1.0, target=(1.0, 1e-5)), dict(target_mu=-1.0),
               dict(target=(1.0,)), dict(target=(1.0, 2.0))):
        with pytest.raises(SymgdpError):
            dpsgd_sigma(0.1, 10, **kw)
    acc = Accountant()
    with pytest.raises(DomainError):
        acc.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.raises(DomainError):
        acc.get_mu()  # nothing recorded
    with pytest.raises(DomainError):
        Accountant(neighbouring="rdp")


@pytest.mark.slow
def test_cli_dpsgd_schedule_and_calibration():
    # reference: the library calls the command wraps
    import io
    import json

    from symgdp.cli.main import main

    out = io.StringIO()
    assert main(["dpsgd", "--phase", "0.05:1:10", "--phase", "0.05:1:10", "--neighbouring",
                 "replace_one", "--json"], stdout=out, stderr=io.StringIO()) == 0
    data = json.loads(out.getvalue())
    assert data["neighbouring"] == "replace_one" and data["mu_floor"] <= data["mu_upper"]
    for bad in (["dpsgd", "--phase", "0.1:1"], ["dpsgd", "--q", "0.1", "--sigma", "1",
                "--steps", "3", "--neighbouring", "x"],
                ["dpsgd", "--q", "0.1", "--steps", "5", "--target-mu", "1",
                 "--target-eps", "1"],
                ["dpsgd", "--q", "0.1", "--steps", "5", "--target-eps", "-1"]):
        err = io.StringIO()
        assert main(bad, stdout=io.StringIO(), stderr=err) == 2
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()


# -- Accountant ----------------------------------------------------------------------------------
def test_accountant_is_dpsgd_on_its_schedule():
    # reference: dpsgd(schedule=...) on the same phases
    acc = Accountant(**FAST)
    for _ in range(6):
        acc.step(noise_multiplier=1.0, sample_rate=0.05)
    acc.step(noise_multiplier=1.5, sample_rate=0.05, steps=4)
    assert len(acc) == 10 and acc.history == [(1.0, 0.05, 6), (1.5, 0.05, 4)]
    ref = dpsgd(schedule=[(0.05, 1.0, 6), (0.05, 1.5, 4)], **FAST)
    assert acc.get_mu() == ref.mu_upper
    assert acc.get_mu(with_floor=True).mu_floor == ref.mu_floor
    ref_eps = dpsgd(schedule=[(0.05, 1.0, 6), (0.05, 1.5, 4)], failure_prob=1e-10,
                    delta=1e-5, **FAST).eps_certified
    assert acc.get_epsilon(1e-5) == ref_eps
    acc.step(noise_multiplier=1.5, sample_rate=0.05)  # merges, and the cache is dropped
    assert acc.history[-1] == (1.5, 0.05, 5) and acc.get_mu() > ref.mu_upper


# -- dpsgd_sigma -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_dpsgd_sigma_meets_the_target_and_less_noise_does_not():
    # reference: independent dpsgd calls at the returned value and below it
    c = dpsgd_sigma(0.1, 20, target_mu=1.0, rel=1e-2, value_discretization_interval=1e-3)
    assert c.within_rel and c.sigma_below >= c.value * (1 - 1e-2)
    up = dpsgd(0.1, c.value, 20, value_discretization_interval=1e-3)
    assert up.mu_upper <= 1.0
    down = dpsgd(0.1, c.sigma_below, 20, value_discretization_interval=1e-3)
    assert down.mu_floor > 1.0


@pytest.mark.slow
def test_dpsgd_sigma_for_an_epsilon_target():
    # reference: independent dpsgd calls; eps_certified meets, the proven lower profile
    # below it exceeds delta
    c = dpsgd_sigma(0.1, 20, target=(2.0, 1e-5), rel=1e-2, value_discretization_interval=1e-3)
    assert c.target == (2.0, 1e-5)
    up = dpsgd(0.1, c.value, 20, value_discretization_interval=1e-3, failure_prob=1e-6)
    assert up.eps_certified <= 2.0
    assert c.floor_below > 1e-5 and c.sigma_below < c.value


@pytest.mark.slow
def test_floor_at_ten_thousand_steps_is_close():
    # reference: the floor theorem; within 0.01 of the certified upper end by default
    r = dpsgd(0.01, 1.0, 10_000)
    assert r.mu_floor <= r.mu_upper <= r.mu_floor + 0.01


def _delta1_add(e, q, s):
    """Exact one-step add-direction profile (pair (Q, P)): Q[L < -e] - e^e P[L < -e]."""
    q, s, e = mpmath.mpf(q), mpmath.mpf(s), mpmath.mpf(e)
    if q < 1 and -e <= mpmath.log(1 - q):
        return mpmath.mpf(0)  # no remove loss lies below -e
    x = mpmath.findroot(lambda t: _loss(t, q, s, "add_remove") + e, (-60, 60),
                        solver="illinois", tol=mpmath.mpf(10) ** (-mpmath.mp.dps + 4),
                        verify=False)
    qc = 1 - _tail(x, 0, s)
    pc = (1 - q) * (1 - _tail(x, 0, s)) + q * (1 - _tail(x, 1, s))
    return qc - mpmath.exp(e) * pc


@pytest.mark.slow
def test_add_direction_read_from_the_remove_composition():
    # reference: the exact add-direction profile (one step at 40 digits; two steps by
    # 25-digit integration over the first step, x ~ Q = N(0, s^2), loss -L(x)); and the
    # add direction composed itself by the same engine
    from symgdp.training.engine import compose_schedule

    q, s = 0.3, 1.0
    xs = np.array([0.0, 0.3, 0.8])
    for steps in (1, 2):
        derived = compose_schedule([(q, s, steps)], 1e-3, 1e-10)
        direct = compose_schedule([(q, s, steps)], 1e-3, 1e-10, derive_add=False)
        assert derived.add_error is not None and len(derived.pmfs) == 1
        up = derived.curves()[1].delta(xs)
        ref = direct.curves()[1].delta(xs)
        with mpmath.workdps(40 if steps == 1 else 25):
            if steps == 1:
                ex = [float(_delta1_add(x, q, s)) for x in xs]
            else:
                ex = [float(mpmath.quad(
                    lambda t, x=x: mpmath.npdf(t, 0, s)
                    * _delta1_add(x + _loss(t, q, s, "add_remove"), q, s),
                    [-12 * s, 0, 1, 12 * s])) for x in xs]
        for u, r, e in zip(up, ref, ex, strict=True):
            assert e <= u <= e + 2e-3 * e + 1e-12
            assert abs(u - r) <= 1e-6 * r + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("rel", ["add_remove", "replace_one"])
def test_coarse_floor_below_a_fine_upper_profile(rel):
    # reference: the certified upper profile on a ten times finer grid (a second, independent
    # bound on the same true profile); the floor on a coarse grid, where its shift and the
    # Bernstein term are large, must stay below it everywhere
    sched = [(0.05, 1.0, 150), (0.1, 1.5, 50)]
    coarse = dpsgd(schedule=sched, neighbouring=rel, value_discretization_interval=5e-3,
                   tol=1e-3)
    fine = dpsgd(schedule=sched, neighbouring=rel, value_discretization_interval=5e-4,
                 tol=1e-3)
    xs = np.linspace(0.0, 1.2 * fine.eps_h, 40)
    assert np.all(coarse.delta_lower(xs) <= fine.profile(xs))
    assert np.all(fine.delta_lower(xs) <= coarse.profile(xs))


def test_tiny_heads_get_a_finer_floor_grid():
    # reference: a run on a five times finer grid with a smaller failure probability, so
    # its head contains this one and its certified mu_upper is a second, independent valid
    # mu there; with sigma = 50 the head is [0, 0.03], shorter than the floor's shift on
    # the grid 1e-4, so the floor takes its own finer grid (given by hand: the automatic grid
    # of a mu this small is already fine enough for the floor)
    r = dpsgd(0.01, 50.0, 1000, tol=1e-4, value_discretization_interval=1e-4)
    assert r.floor_discretization < r.discretization
    assert 0.8 * r.mu_upper < r.mu_floor <= r.mu_upper
    fine = dpsgd(0.01, 50.0, 1000, tol=1e-4, value_discretization_interval=2e-5,
                 failure_prob=1e-12)
    assert fine.eps_h >= r.eps_h and r.mu_floor <= fine.mu_upper


def test_replace_one_pair_dominates_other_clipped_gradients():
    # reference: 2-d numerical integration (Riemann sum, step 0.02 on [-9, 10]^2, error far
    # below the margins) of the hockey-stick divergence between the mixtures
    # (1-q)N(0, I) + qN(c, I) and (1-q)N(0, I) + qN(c', I) for clipped gradients c = e_1
    # and c' of norm <= 1 at several angles; the pair used for replace-one (c' = -c) must
    # be at least as large in both directions (a dominating pair for every epsilon >= 0)
    from scipy.stats import norm

    q, s, h = 0.3, 1.0, 0.02
    x = np.arange(-9.0, 10.0, h)
    X, Y = np.meshgrid(x, x, indexing="ij")

    def mix(cx, cy):
        return (1 - q) * norm.pdf(X) * norm.pdf(Y) + q * norm.pdf(X, cx, s) * norm.pdf(Y, cy, s)

    P = mix(1.0, 0.0)
    worst = mix(-1.0, 0.0)
    for eps in (0.0, 0.3, 0.8, 1.5):
        top = np.sum(np.maximum(P - np.exp(eps) * worst, 0)) * h * h
        for cx, cy in ((0.0, 1.0), (-0.5, 0.0), (0.0, 0.0), (np.cos(2.5), np.sin(2.5)),
                       (0.3, 0.3)):
            Q = mix(cx, cy)
            for a, b in ((P, Q), (Q, P)):
                assert np.sum(np.maximum(a - np.exp(eps) * b, 0)) * h * h <= top + 1e-6
