"""The neighbouring relation changes the mechanism, not its label (issue 31, part 1).

References (named at each test): the exact Gaussian profile delta_mu at 50 digits
(mpmath; under replace-one the sum of records with norm <= 1 moves by 2, so
GaussianDpEvent(s) is (2/s)-GDP); the profile of randomized response composed with a
Gaussian as the finite mixture sum_j P(L_RR = l_j) delta_G(eps - l_j) at 50 digits; the
one-step replace-one subsampled Gaussian pair in closed form at 30 digits (the loss is
monotone in x, so delta(eps) = P(X > x*) - e^eps Q(X > x*)); and
dp_accounting's own REPLACE_ONE PLD accountant (a second algorithm, float64).
"""

from __future__ import annotations

import dp_accounting as dpa
import mpmath
import pytest

from symgdp import compose, from_dp_event, mechanisms
from symgdp.accounting.certified import SubsampledGaussian
from symgdp.errors import DomainError

DPS = 50


def gdp_delta(x: mpmath.mpf, mu: mpmath.mpf) -> mpmath.mpf:
    """delta_mu at any real x (the Gaussian pair's hockey stick, both signs)."""
    return mpmath.ncdf(-x / mu + mu / 2) - mpmath.exp(x) * mpmath.ncdf(-x / mu - mu / 2)


def eps_of(delta_fn, delta: float, hi: float = 60.0) -> mpmath.mpf:
    """The eps where a non-increasing delta_fn crosses delta, by 200 bisections."""
    lo, hi_ = mpmath.mpf(0), mpmath.mpf(hi)
    d = mpmath.mpf(delta)
    for _ in range(200):
        m = (lo + hi_) / 2
        before = (lo, hi_)
        if delta_fn(m) > d:
            lo = m
        else:
            hi_ = m
        if (lo, hi_) == before:
            break  # the working precision is exhausted: every further step is this one
    return hi_


def dpa_eps(event, relation, delta: float) -> float:
    acc = dpa.pld.PLDAccountant(relation, value_discretization_interval=1e-4)
    acc.compose(event)
    return acc.get_epsilon(delta)


def test_gaussian_event_under_replace_one_has_sensitivity_two():
    # reference: delta_mu with mu = 2/s at 50 digits; dp_accounting REPLACE_ONE agrees
    with mpmath.workdps(DPS):
        truth = eps_of(lambda e: gdp_delta(e, mpmath.mpf(2)), 1e-5)
        c = from_dp_event(dpa.GaussianDpEvent(1.0), neighbouring="replace_one")
        assert c.neighbouring == "replace_one"
        assert c.mu_floor <= 2.0 <= c.mu_upper <= 2.0 + 1e-3
        b = c.eps_at(1e-5)
        assert b.lower <= truth <= b.upper <= truth + 1e-3
    ref = dpa_eps(dpa.GaussianDpEvent(1.0), dpa.NeighboringRelation.REPLACE_ONE, 1e-5)
    assert abs(ref - float(truth)) < 1e-2  # the reading of dp_accounting's semantics


def test_gaussian_with_randomized_response_under_replace_one():
    # reference: RR's loss takes e0 / -e0 / 0 with masses a, b, (k-2) b; composed with the
    # 2/s-GDP Gaussian the profile is the mixture of shifted Gaussian hockey sticks
    s, p, k = 1.5, 0.3, 4
    tree = dpa.ComposedDpEvent([dpa.GaussianDpEvent(s), dpa.RandomizedResponseDpEvent(p, k)])
    with mpmath.workdps(DPS):
        P, K = mpmath.mpf(p), mpmath.mpf(k)
        a, bb = 1 - P + P / K, P / K
        e0, mu = mpmath.log(a / bb), 2 / mpmath.mpf(s)

        def truth_delta(e):
            return (a * gdp_delta(e - e0, mu) + bb * gdp_delta(e + e0, mu)
                    + (K - 2) * bb * gdp_delta(e, mu))

        truth = eps_of(truth_delta, 1e-5)
        c = from_dp_event(tree, neighbouring="replace_one")
        b = c.eps_at(1e-5)
        assert b.lower <= truth <= b.upper <= truth + 1e-2
        for x in (0.5, 2.0, 4.0):  # the profile itself is an upper bound
            assert c(x) >= truth_delta(mpmath.mpf(x))
    ref = dpa_eps(tree, dpa.NeighboringRelation.REPLACE_ONE, 1e-5)
    assert abs(ref - float(truth)) < 1e-2


def _replace_one_eps(q: float, sigma: float, delta: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(e_lo, e_hi) around the eps where the one-step replace-one pair's delta(eps) crosses
    ``delta``, at 30 digits: x*(eps) (P(x) = e^eps Q(x); the loss log P/Q is increasing)
    and eps by the Illinois method, then the ends checked by sign, so the crossing lies
    between them whatever the root finder did.  (200 x 220 bisections at 50 digits gave
    the same number in 7 s of CPU; this costs a hundredth of it.)"""
    qq, s = mpmath.mpf(q), mpmath.mpf(sigma)

    def loss(x):
        def lmix(c):
            return mpmath.log((1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, c, s))
        return lmix(1) - lmix(-1)

    def tail(x, c):
        return (1 - qq) * mpmath.ncdf(-x / s) + qq * mpmath.ncdf(-(x - c) / s)

    def delta_of(e):
        x = mpmath.findroot(lambda z: loss(z) - e, (mpmath.mpf(-50), mpmath.mpf(50)),
                            solver="illinois", verify=False)
        # delta is stationary in x at x*: an x* off by 1e-25 moves it by ~1e-50
        return tail(x, 1) - mpmath.exp(e) * tail(x, -1)

    with mpmath.workdps(30):
        d = mpmath.mpf(delta)
        # log delta is near linear in eps: its root by the secant method from 3, 4
        e = mpmath.findroot(lambda e: mpmath.log(delta_of(e) / d), (mpmath.mpf(3),
                                                                     mpmath.mpf(4)),
                            solver="secant", verify=False)
        lo, hi = e - mpmath.mpf(10) ** -12, e + mpmath.mpf(10) ** -12
        assert delta_of(lo) > d >= delta_of(hi)  # the crossing is in [lo, hi]
        return lo, hi


def test_subsampled_gaussian_under_replace_one_is_the_replace_pair():
    # reference: the replace-one pair's closed-form profile at 30 digits, its crossing
    # proved between two points 2e-12 apart (_replace_one_eps); dp_accounting REPLACE_ONE
    q, s = 0.3, 1.0
    ev = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s))
    lo, hi = _replace_one_eps(q, s, 1e-5)
    c = from_dp_event(ev, neighbouring="replace_one")
    assert c.neighbouring == "replace_one"
    b = c.eps_at(1e-5)
    assert b.lower <= lo and hi <= b.upper <= lo + 1e-2
    # the add/remove answer is strictly smaller: a relabelling would be caught here
    assert from_dp_event(ev).eps_at(1e-5).upper < lo - 0.1
    ref = dpa_eps(ev, dpa.NeighboringRelation.REPLACE_ONE, 1e-5)
    assert abs(ref - float(lo)) < 1e-2


def test_subsampled_gaussian_with_q_one_under_replace_one_is_sensitivity_two():
    # reference: q = 1 is no sampling; 4 steps of sensitivity 2, sigma 2: mu = 2 * 2 / 2
    c = compose(SubsampledGaussian(1.0, 2.0, neighbouring="replace_one"), times=4)
    assert c.neighbouring == "replace_one"  # taken from the item
    assert c.mu_floor <= 2.0 <= c.mu_upper


def test_a_relation_is_never_relabelled():
    sg = SubsampledGaussian(0.1, 1.0)
    with pytest.raises(DomainError, match="add_remove"):
        compose(sg, neighbouring="replace_one")
    with pytest.raises(DomainError, match="different neighbouring"):
        compose(sg, SubsampledGaussian(0.1, 1.0, neighbouring="replace_one"))
    earlier = compose(mechanisms.gaussian(1.0), times=2, discretization=1e-2)
    with pytest.raises(DomainError, match="add_remove"):
        compose(earlier, mechanisms.gaussian(1.0), neighbouring="replace_one")
    # Profile.subsample is an add/remove theorem: refused under replace-one, both routes
    sub = mechanisms.gaussian(1.0).subsample(0.5)
    for certify in (True, False):
        with pytest.raises(DomainError, match="subsampled"):
            compose(sub, neighbouring="replace_one", certify=certify)
    with pytest.raises(DomainError, match="neighbouring"):
        compose(mechanisms.gaussian(1.0), neighbouring="replace")


def test_a_profile_states_its_relation():
    # a profile's relation is the one it was stated for: the label is carried, the
    # theorem is the same (reference: 4-fold 0.5-GDP is exactly 1-GDP)
    c = compose(mechanisms.gaussian(0.5), times=4, neighbouring="replace_one")
    assert c.neighbouring == "replace_one" and c.mu_floor <= 1.0 <= c.mu_upper


@pytest.mark.parametrize("event", [
    dpa.LaplaceDpEvent(1.0),
    dpa.PoissonSampledDpEvent(0.5, dpa.LaplaceDpEvent(1.0)),
])
def test_laplace_is_refused_under_replace_one_by_name(event):
    with pytest.raises(DomainError, match="replace_one"):
        from_dp_event(event, neighbouring="replace_one")


def test_a_profile_that_states_its_relation_is_not_relabelled():
    # a numeric source whose metadata names its relation (as a DP-SGD profile may)
    from symgdp.pld.curves import curves_source

    c = compose(mechanisms.gaussian(1.0), discretization=1e-2, _engine=True)  # its PLD
    src = curves_source(c.source.curves, neighbouring="replace_one")
    from symgdp import Profile

    p = Profile.from_source(src, name="stated replace-one")
    assert compose(p, discretization=1e-2).neighbouring == "replace_one"
    with pytest.raises(DomainError, match="stated replace-one"):
        compose(p, neighbouring="add_remove", discretization=1e-2)
