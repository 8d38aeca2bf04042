"""dpsgd(sampling=...): each scheme against an independent truth.

Truths: closed forms (a fixed-size batch of the whole data set, and one use of the
Gaussian per epoch, are the plain Gaussian mechanism), brute-force 30-digit enumeration of
every batch of a tiny data set (n <= 6) with the exact hockey-stick divergence of the two
Gaussian mixtures (roots of the privacy loss by bisection, masses by erfc), and the order
relations the theorems give.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

from symgdp import dpsgd
from symgdp.errors import DomainError
from symgdp.gaussian.vectorised import delta_mu
from symgdp.training.sampling import plan_sampling, truncation_probability

FAST = dict(tol=1e-3, value_discretization_interval=1e-3)


# -- the brute-force truth: the exact hockey stick of two 1-D Gaussian mixtures ------------
def _mixture_cdf(mix, sigma, y):
    """P(Y <= y) for the mixture [(weight, mean), ...] with a common sigma (mpmath)."""
    return mpmath.fsum(w * mpmath.ncdf((y - m) / sigma) for w, m in mix)


def _merge(mix):
    """Components with equal means merged (exact weights)."""
    out = {}
    for w, m in mix:
        out[m] = out.get(m, 0) + w
    return sorted((w, m) for m, w in out.items())


def hockey(p_mix, q_mix, sigma, eps):
    """sup_S P(S) - e^eps Q(S) at 30 digits: the sets {log p/q > eps} found from the sign
    changes of the loss on a float grid, refined by bisection in mpmath."""
    p_mix, q_mix = _merge(p_mix), _merge(q_mix)
    with mpmath.workdps(30):
        ms = [m for _, m in p_mix + q_mix]
        ys = np.linspace(min(ms) - 12 * sigma, max(ms) + 12 * sigma, 2001)

        def flog(mix):
            w = np.log(np.asarray([float(w) for w, _ in mix]))
            m = np.asarray([float(m) for _, m in mix])
            return np.logaddexp.reduce(w[:, None] - (ys[None, :] - m[:, None]) ** 2
                                       / (2 * sigma**2), axis=0)

        def f(y):
            p = mpmath.fsum(w * mpmath.exp(-((y - m) ** 2) / (2 * sigma**2)) for w, m in p_mix)
            q = mpmath.fsum(w * mpmath.exp(-((y - m) ** 2) / (2 * sigma**2)) for w, m in q_mix)
            return mpmath.log(p) - mpmath.log(q) - eps

        sgn = list(flog(p_mix) - flog(q_mix) - eps > 0)
        edges = []
        for i in range(len(ys) - 1):
            if sgn[i] != sgn[i + 1]:
                a, b = mpmath.mpf(float(ys[i])), mpmath.mpf(float(ys[i + 1]))
                for _ in range(70):
                    c = (a + b) / 2
                    a, b = (c, b) if (f(c) > 0) == sgn[i] else (a, c)
                edges.append((a + b) / 2)
        pts = [-mpmath.inf] + edges + [mpmath.inf]
        total = mpmath.mpf(0)
        inside = sgn[0]
        for lo, hi in zip(pts[:-1], pts[1:], strict=True):
            if inside:
                dp = _mixture_cdf(p_mix, sigma, hi) - _mixture_cdf(p_mix, sigma, lo)
                dq = _mixture_cdf(q_mix, sigma, hi) - _mixture_cdf(q_mix, sigma, lo)
                total += dp - mpmath.exp(eps) * dq
            inside = not inside
        return max(float(total), 0.0)


def _batches_sum(grads, b):
    """The law of the batch sum of a fixed-size batch drawn without replacement."""
    combos = list(itertools.combinations(range(len(grads)), b))
    w = mpmath.mpf(1) / len(combos)
    return [(w, sum(grads[i] for i in c)) for c in combos]


# -- without replacement --------------------------------------------------------------------
def test_without_replacement_whole_data_set_is_the_gaussian():
    # closed form: b = n is the Gaussian with sensitivity 2 under replace-one: mu = 2 sqrt(T)/s
    r = dpsgd(sampling="without_replacement", dataset_size=7, batch_size=7, sigma=8.0,
              steps=4, **FAST)
    truth = 2 * math.sqrt(4) / 8.0
    assert r.mu_floor <= truth <= r.mu_upper <= truth + 2e-3
    assert (r.sampling, r.neighbouring, r.tight) == ("without_replacement", "replace_one", True)


def test_without_replacement_brute_force_n6():
    # every data set of n = 6 one-dimensional clipped gradients in {-1, +1} with the
    # replaced record +1 -> -1, every batch of b = 2 enumerated: the exact one-step profile
    # (max over data sets and both orders) lies between the certified lower and upper
    # profiles, and the worst data set attains the dominating pair (the bound is tight)
    n, b, sigma = 6, 2, 1.5
    r = dpsgd(sampling="without_replacement", dataset_size=n, batch_size=b, sigma=sigma,
              steps=1, **FAST)
    eps_grid = [0.0, 0.4, 1.0, 2.0]
    truth = np.zeros(len(eps_grid))
    for plus in range(n):  # how many of the other n - 1 records have gradient +1
        others = [1] * plus + [-1] * (n - 1 - plus)
        d1 = _batches_sum([1] + others, b)
        d2 = _batches_sum([-1] + others, b)
        for k, e in enumerate(eps_grid):
            truth[k] = max(truth[k], hockey(d1, d2, sigma, e), hockey(d2, d1, sigma, e))
    up = np.asarray(r.profile(np.asarray(eps_grid)))
    lo = np.asarray(r.delta_lower(np.asarray(eps_grid)))
    assert np.all(lo <= truth) and np.all(truth <= up)
    assert np.all(up - truth <= 2e-3 * truth + 1e-6)  # tight: the pair is attained


def test_symmetric_step_is_the_mirrored_pair():
    # the one-step measure: total mass 1 (up to the upward rounding), and the symmetry
    # omega(-l) = e^{-l} omega(l) of a symmetric pair, checked away from the grid's ends
    from symgdp.training.symmetrised import symmetric_step

    pmf, moved = symmetric_step(0.2, 0.8, 0.01, 1e-14, 80)
    w = np.asarray(pmf.approx)
    assert abs(w.sum() - 1.0) < 1e-12 and moved < 1e-12
    mid = -pmf.lower                      # the index of the loss 0
    for k in (5, 50, 200):
        lo, hi = w[mid - k], w[mid + k]
        assert hi > 0 and abs(lo - math.exp(-0.01 * k) * hi) <= 1e-3 * hi


def test_without_replacement_many_steps_orders():
    # the upper bound composes the symmetrised measure, the floor the attained pair: at
    # T = 1 they agree (both the pair's profile for eps >= 0), at T = 60 the upper is
    # above the pair's own compositions' floor (adaptive gradients can alternate the pair
    # and its swap), and mu grows with T
    r1 = dpsgd(sampling="without_replacement", dataset_size=20, batch_size=5, sigma=2.0,
               steps=1, **FAST)
    r60 = dpsgd(sampling="without_replacement", dataset_size=20, batch_size=5, sigma=2.0,
                steps=60, **FAST)
    assert r1.mu_upper - r1.mu_floor < 5e-3
    xs = np.linspace(0.0, 3.0, 13)
    assert np.all(np.asarray(r60.delta_lower(xs)) <= np.asarray(r60.profile(xs)))
    assert r60.mu_floor <= r60.mu_upper and r60.mu_upper > r1.mu_upper
    # the same pair without symmetrisation (Poisson add/remove, rate b/n, noise sigma/2)
    pair = dpsgd(0.25, 1.0, 60, **FAST)
    assert r60.mu_upper >= pair.mu_floor


def test_without_replacement_refuses_add_remove_by_name():
    with pytest.raises(DomainError, match="add_remove"):
        dpsgd(sampling="without_replacement", dataset_size=10, batch_size=2, sigma=1.0,
              steps=3, neighbouring="add_remove")


# -- shuffle and random allocation: proved bounds without amplification -----------------
@pytest.mark.parametrize("rel,factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_shuffle_is_one_gaussian_per_epoch(rel, factor):
    # closed form: epochs E, one use of the Gaussian each: mu = factor sqrt(E)/sigma
    r = dpsgd(sampling="shuffle", dataset_size=100, batch_size=10, sigma=3.0, epochs=4,
              neighbouring=rel, **FAST)
    truth = factor * 2.0 / 3.0
    assert truth <= r.mu_upper <= truth + 2e-3
    assert not r.tight and r.neighbouring == rel
    assert "no tight analysis" in r.assumption and "Chua" in r.assumption
    # b | n: the max-statistic floor (t = 10 batches, sensitivity `factor`), below the
    # closed form of the bound without amplification (a floor above it would be a bug)
    assert 0 < r.mu_floor < truth and r.plan.floor_pair == (10, factor)
    assert 0 < r.delta_lower(0.5) <= float(delta_mu(0.5, truth, rounding="up"))
    # b does not divide n: t = ceil(101/10) = 11 batches, the last one partial; the max
    # statistic's law does not depend on which batch holds the record, so the floor is the
    # t = 11 pair's, below the bound and below the b | n floor of 10 batches
    odd = dpsgd(sampling="shuffle", dataset_size=101, batch_size=10, sigma=3.0, epochs=4,
                neighbouring=rel, **FAST)
    assert odd.plan.floor_pair == (11, factor)
    assert 0 < odd.mu_floor < truth and odd.mu_floor <= r.mu_floor
    assert 0 < odd.delta_lower(0.5) <= float(delta_mu(0.5, truth, rounding="up"))
    # beside it, the Poisson number for q = b/n and E ceil(n/b) steps (not a bound)
    ref = r.poisson_reference
    assert ref.schedule == ((0.1, 3.0, 40),) and ref.neighbouring == rel
    assert ref.mu_upper < r.mu_upper


def test_random_allocation_bound_and_poisson_beside():
    r = dpsgd(sampling="random_allocation", sigma=2.0, steps=10, epochs=9, **FAST)
    unamplified = 3.0 / 2.0  # closed form sqrt(9)/2, each epoch one Gaussian
    # add/remove: the amplified bound (test_allocation_upper checks it against quadrature)
    assert r.amplification and r.mu_upper < unamplified and r.steps == 90
    # the floor: the attained pair's own (allocation_tight), so the bracket is tight
    assert 0 < r.mu_floor <= r.mu_upper <= r.mu_floor + 5e-3 and r.tight
    assert r.poisson_reference.schedule == ((0.1, 2.0, 90),)
    # replace-one: no amplified pair here, the closed form 2 sqrt(9)/2
    rr = dpsgd(sampling="random_allocation", sigma=2.0, steps=10, epochs=9,
               neighbouring="replace_one", **FAST)
    assert 3.0 <= rr.mu_upper <= 3.0 + 2e-3 and not rr.amplification


# -- truncated Poisson -----------------------------------------------------------------------
def test_truncation_probability_against_the_binomial_sum():
    # independent: the exact binomial tail as a 40-digit sum
    for n, q, b in [(20, 0.3, 9), (1001, 0.01, 30), (50, 0.5, 49)]:
        with mpmath.workdps(40):
            exact = mpmath.fsum(mpmath.binomial(n, k) * mpmath.mpf(q) ** k
                                * (1 - mpmath.mpf(q)) ** (n - k) for k in range(b + 1, n + 1))
        p = truncation_probability(n, q, b)
        assert exact <= p <= exact * (1 + 1e-12)


def test_truncated_poisson_brute_force():
    # n = 3 records in D (4 in D' = D + x under add/remove), q = 0.2, at most 2 kept (a
    # uniformly random 2 of a larger batch): every Poisson batch and every truncation
    # enumerated; the exact one-step profile of every data set with gradients in {-1, 0, 1}
    # is below the certified upper profile, and the worst (the others 0) above its floor.
    # (The profiles are built as dpsgd builds them, from the Poisson result and the plan:
    # dpsgd itself refuses a truncation this likely at any small failure probability.)
    n, q, bmax, sigma = 3, 0.2, 2, 1.0
    base = dpsgd(q, sigma, 1, **FAST)
    plan = plan_sampling("truncated_poisson", q=q, sigma=sigma, steps=1, dataset_size=n,
                         max_batch_size=bmax)
    upper = plan.wrap(base.profile)

    def lower(e):
        return max(float(base.delta_lower(e)) - float(plan.extra_delta(e)), 0.0)

    eps_grid = [0.0, 0.5]

    def law(grads):
        out = []
        for mask in itertools.product([0, 1], repeat=len(grads)):
            w = mpmath.mpf(q) ** sum(mask) * (1 - mpmath.mpf(q)) ** (len(grads) - sum(mask))
            chosen = [g for g, m in zip(grads, mask, strict=True) if m]
            if len(chosen) <= bmax:
                out.append((w, sum(chosen)))
                continue
            subs = list(itertools.combinations(chosen, bmax))
            out.extend((w / len(subs), sum(c)) for c in subs)
        return out

    worst = np.zeros(len(eps_grid))
    for others in itertools.product([-1, 0, 1], repeat=n):
        if list(others) != sorted(others):
            continue  # the law depends on the multiset only
        d, d2 = law(list(others)), law([1] + list(others))
        for k, e in enumerate(eps_grid):
            t = max(hockey(d, d2, sigma, e), hockey(d2, d, sigma, e))
            assert t <= float(upper(e))
            worst[k] = max(worst[k], t)
    assert all(lower(e) <= w for e, w in zip(eps_grid, worst, strict=True))
    assert lower(0.0) > 0  # the floor says something


def test_truncated_poisson_orders():
    # p = 0 (max_batch_size = the data set): exactly the Poisson result; otherwise above it
    base = dpsgd(0.01, 1.0, 100, **FAST)
    same = dpsgd(sampling="truncated_poisson", q=0.01, sigma=1.0, steps=100,
                 dataset_size=1000, max_batch_size=1000, neighbouring="replace_one", **FAST)
    assert same.plan.truncation == 0.0
    cut = dpsgd(sampling="truncated_poisson", q=0.01, sigma=1.0, steps=100,
                dataset_size=1000, max_batch_size=45, **FAST)
    assert cut.plan.truncation > 0 and cut.mu_upper >= base.mu_upper
    assert cut.mu_floor <= cut.mu_upper
    xs = np.linspace(0, 2, 9)
    assert np.all(np.asarray(cut.profile(xs)) >= np.asarray(base.profile(xs)))
    with pytest.raises(DomainError, match="max_batch_size"):
        dpsgd(sampling="truncated_poisson", q=0.01, sigma=1.0, steps=100,
              dataset_size=1000, max_batch_size=20)


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(sampling="bogus", q=0.1, sigma=1.0, steps=1), "bogus"),
    (dict(sampling="shuffle", dataset_size=10, batch_size=11, sigma=1.0, epochs=1),
     "batch_size=11"),
    (dict(sampling="shuffle", dataset_size=10, sigma=1.0, epochs=1), "batch_size"),
    (dict(sampling="without_replacement", dataset_size=10, batch_size=2, sigma=1.0),
     "steps"),
    (dict(sampling="random_allocation", sigma=1.0, steps=5, dataset_size=3),
     "dataset_size=3"),
    (dict(sampling="truncated_poisson", q=0.1, sigma=1.0, steps=2, dataset_size=5,
          max_batch_size=6), "max_batch_size=6"),
    (dict(q=0.1, sigma=1.0, steps=2, examples_per_user=0), "examples_per_user.*got 0"),
    (dict(sampling="shuffle", dataset_size=10, batch_size=2, sigma=1.0, epochs=0),
     "epochs"),
    (dict(sampling="shuffle", schedule=[(0.1, 1.0, 2)]), "schedule"),
])
def test_bad_input_is_a_domain_error_naming_the_value(kw, match):
    with pytest.raises(DomainError, match=match):
        dpsgd(**kw)


def test_plan_is_the_documented_reduction():
    p = plan_sampling("without_replacement", dataset_size=8, batch_size=2, sigma=3.0,
                      steps=7)
    assert p.phases == ((0.25, 1.5, 7),) and p.engine_relation == "add_remove"
    assert p.neighbouring == "replace_one" and p.tight


# -- float() is the safe end -----------------------------------------------------------------
def test_float_of_brackets_is_the_safe_end():
    from symgdp.accounting.certified import EpsBracket

    b = EpsBracket(1.25, 1.5)
    assert float(b) == 1.5 and str(b) == "[1.25, 1.50]"
    assert float(EpsBracket(0.1234561, 0.1234569)) == 0.1234569
    s = str(EpsBracket(0.1234561, 0.1234569))  # rounded outwards
    lo, up = (float(x) for x in s.strip("[]").split(","))
    assert lo <= 0.1234561 and up >= 0.1234569
    r = dpsgd(0.1, 2.0, 3, **FAST)
    assert float(r) == r.mu_upper


# -- the accountant with a sampling scheme -----------------------------------------------------
def test_accountant_with_sampling_schemes_is_dpsgd():
    from symgdp import Accountant

    acc = Accountant(sampling="without_replacement", dataset_size=20, batch_size=5, **FAST)
    for _ in range(3):
        acc.step(noise_multiplier=2.0)
    r = dpsgd(sampling="without_replacement", dataset_size=20, batch_size=5, sigma=2.0,
              steps=3, **FAST)
    assert acc.neighbouring == "replace_one" and acc.get_mu() == r.mu_upper
    sh = Accountant(sampling="shuffle", dataset_size=20, batch_size=5, **FAST)
    sh.step(noise_multiplier=2.0, steps=8)  # two epochs of 4 steps: closed form sqrt(2)/2
    assert math.sqrt(2) / 2 <= sh.get_mu() <= math.sqrt(2) / 2 + 2e-3
    with pytest.raises(DomainError, match="sample_rate"):
        sh.step(noise_multiplier=2.0, sample_rate=0.25)
    sh.step(noise_multiplier=2.0, steps=1)
    with pytest.raises(DomainError, match="whole epochs"):
        sh.get_mu()
    with pytest.raises(DomainError, match="sampling must be one of"):
        Accountant(sampling="bogus")


@pytest.mark.parametrize("gamma,sigma", [(0.01, 0.3), (0.1, 0.5), (0.5, 1.0), (0.9, 2.0),
                                         (0.3, 6.0)])
def test_the_pair_is_above_its_swap_for_nonnegative_eps(gamma, sigma):
    # the hypothesis the symmetrised measure rests on (Dong, Roth & Su 2022, Section 4.2:
    # C_gamma(f) follows f_gamma where its slope is below -1): for eps >= 0 the profile of
    # R = (gamma N(2, s^2) + (1 - gamma) N(0, s^2), N(0, s^2)) is at least its swap's;
    # 30-digit hockey sticks by the enumeration helper above
    r = [(mpmath.mpf(gamma), 2), (1 - mpmath.mpf(gamma), 0)]
    q = [(mpmath.mpf(1), 0)]
    for e in (0.0, 0.05, 0.3, 1.0, 3.0):
        assert hockey(r, q, sigma, e) >= hockey(q, r, sigma, e) - 1e-15


def test_bounds_without_a_floor_give_no_band():
    # a proved upper bound only (shuffle without its floor): no lower bound on the profile,
    # so no band's upper side, on either route
    r = dpsgd(sampling="shuffle", dataset_size=21, batch_size=5, sigma=2.0, epochs=1,
              floor=False, **FAST)
    assert math.isnan(r.mu_floor)
    with pytest.raises(DomainError):
        r.tradeoff([0.1])
    with pytest.raises(DomainError, match="shuffle"):
        r.tradeoff([0.1], discretization=1e-3)
