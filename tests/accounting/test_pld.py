"""Tests of symgdp.accounting (profiles <-> privacy loss distributions, composition).

References (named at each test): the Kairouz-Oh-Viswanath sum for k-fold randomized
response in its original (p, q) form with exact binomials in 40-digit mpmath; the exact
GDP profile delta_mu in 40-digit mpmath (k-fold mu-GDP is sqrt(k) mu-GDP); dp_accounting's
own get_delta_for_epsilon / get_epsilon_for_delta (a second implementation of the PLD's
profile).
"""

from __future__ import annotations

import math
import os

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symgdp import Profile, compose, measure
from symgdp import accounting as L
from symgdp import mechanisms as M
from symgdp.errors import DomainError, ProfileError
from symgdp.gaussian import precise
from symgdp.pld import connect as C

DPS = 40


def kov_delta(eps0: float, k: int, eps: float) -> mpmath.mpf:
    """KOV Theorem 3.3, original form, exact binomials, 40 digits (independent of
    symgdp.composition's log-space form)."""
    with mpmath.workdps(DPS + 20):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        q = 1 - p
        s = mpmath.fsum(max(mpmath.binomial(k, j) * (p**j * q**(k - j)
                                                     - mpmath.exp(e) * q**j * p**(k - j)), 0)
                        for j in range(k + 1))
        return +s


def gdp_delta(eps: float, mu: float) -> float:
    """delta_mu(eps) at 40 digits (symgdp.gaussian.precise, mpmath)."""
    return float(precise.delta_mu(eps, mu, dps=DPS))


def test_kfold_randomized_response_against_exact_kov():
    # reference: the 40-digit KOV sum.  Also guards against dp_accounting 0.6.0's
    # RandomizedResponseDpEvent, whose count composes only once: 1-fold RR is 0 at eps=1
    p = compose(M.randomized_response(0.2), times=50)
    xs = np.linspace(0.0, 9.8, 50)
    got = p(xs)
    ref = np.array([float(kov_delta(0.2, 50, x)) for x in xs])
    assert np.all(got >= ref)  # pessimistic: never below the exact profile
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-4)
    assert got[5] > 0.28 and float(kov_delta(0.2, 1, xs[5])) == 0.0


def test_heterogeneous_composition_of_randomized_response():
    # reference: the 40-digit KOV sum for 6-fold RR, composed as 2 + 4
    one = compose(M.randomized_response(0.3), times=2)
    p = compose(one, compose(M.randomized_response(0.3), times=4))
    for x in (0.0, 0.5, 1.1, 1.7):
        ref = float(kov_delta(0.3, 6, x))
        # pessimistic rounding of the losses to the 1e-4 grid: about k * 1e-4 above
        assert ref <= p(x) <= ref + 1e-3


@pytest.mark.parametrize("mu,k", [(0.25, 16), (1.0, 3)])
def test_kfold_gaussian_against_exact_gdp(mu, k):
    # reference: k-fold mu-GDP is exactly sqrt(k) mu-GDP; delta_mu at 40 digits
    p = compose(M.gaussian(mu), times=k, discretization=1e-3)
    total = math.sqrt(k) * mu
    for x in (0.0, 0.3, 1.0, 2.5, 4.0, 6.0):
        ref = gdp_delta(x, total)
        assert ref <= p(x) <= ref + 1e-6, x


def test_connect_the_dots_for_a_symbolic_profile_dominates():
    # The Gaussian profile written by hand (no mechanism tag) goes through connect the
    # dots; reference: 4-fold 0.5-GDP is 1-GDP (delta_mu at 40 digits)
    g = M.gaussian(0.5)
    hand = Profile(g.expr, g.values)
    assert C._mechanism_of(hand) is None
    p = compose(hand, times=4)
    for x in (0.0, 0.5, 1.5, 3.0, 5.0):
        ref = gdp_delta(x, 1.0)
        assert ref <= p(x) <= ref + 1e-5, x


def test_connect_the_dots_of_a_non_convex_upper_bound_stays_above_it():
    # A naive profile that is not convex in e^eps (2 e^{-eps^2} read as min(1, .)): the
    # PLD built from its lower convex envelope must still dominate every true profile
    # below it; the Gaussian 1-GDP profile is one (reference: delta_1 at 40 digits)
    naive = Profile.parse("min(1, 2*exp(-eps**2/2))")
    pl = L.from_pld(L.to_pld(naive))
    for x in (0.0, 0.5, 1.0, 2.0, 3.0):
        assert pl(x) >= gdp_delta(x, 1.0)


def test_tagged_profile_with_a_changed_expression_is_not_trusted():
    g = M.gaussian(1.0)
    assert C._mechanism_of(g) == ("gaussian", 1.0, 1.0)
    fake = g.replace(expr=g.expr / 2)  # keeps the meta tag, not the mechanism
    assert C._mechanism_of(fake) is None
    sub = M.gaussian(1.0).subsample(0.1)
    assert C._mechanism_of(sub) == ("gaussian", 1.0, 0.1)


def test_subsampled_gaussian_uses_the_exact_pld():
    # reference: dp_accounting's own subsampled-Gaussian PLD, read by its own code
    from dp_accounting.pld import privacy_loss_distribution as P

    pl = L.to_pld(M.gaussian(1.0).subsample(0.1))
    ref = P.from_gaussian_mechanism(1.0, sampling_prob=0.1)
    xs = [0.0, 0.1, 0.5, 1.0, 2.0]
    np.testing.assert_allclose(pl.get_delta_for_epsilon(xs), ref.get_delta_for_epsilon(xs),
                               rtol=1e-12)
    # the exact subsampled PLD is below the generic subsampling bound of the profile
    bound = M.gaussian(1.0).subsample(0.1)
    prof = L.from_pld(pl)
    assert all(prof(x) <= bound(x) + 1e-6 for x in xs)


def test_pld_profile_matches_dp_accountings_own_evaluation():
    # reference: dp_accounting's get_delta_for_epsilon (a second implementation); ours
    # adds the rounding margin, never less
    p = compose(M.laplace(0.2), times=50, certify=False)  # dp_accounting's route
    xs = np.linspace(0.0, 12.0, 97)
    ref = np.asarray(p.source.pld.get_delta_for_epsilon(xs))
    got = p(xs)
    assert np.all(got >= ref * (1 - 1e-12))
    # at most the documented slack: relative 8 (N + 2) u and the margin
    assert np.all(got <= ref * (1 + 1e-9) + p.source.margin + 1e-15)


def test_fifty_fold_laplace_epsilon_agrees_with_dp_accounting():
    # reference: dp_accounting's get_epsilon_for_delta at the same discretisation
    p = compose(M.laplace(0.2), times=50, certify=False)  # dp_accounting's route
    for d in (1e-1, 1e-3, 1e-5):
        assert abs(p.eps_for_delta(d) - p.source.pld.get_epsilon_for_delta(d)) < 1e-3


def test_eps_for_delta_is_the_smallest_valid_eps():
    # the integer route's PLD profile (compose() answers Gaussians in closed form)
    p = compose(M.gaussian(0.5), times=4, _engine=True)
    for d in (0.3, 1e-3, 1e-8):
        e = p.eps_for_delta(d)
        assert p(e) <= d < p(max(e - 1e-6, 0.0))
    assert p.eps_for_delta(p.source.floor / 2) == math.inf
    assert p.eps_for_delta(1.0) == 0.0


def test_measure_on_a_pld_profile_reports_the_floor():
    # the floor (mass at infinity) is a lower bound on every failure probability (the
    # integer route's PLD profile: compose() answers Gaussians in closed form, floor 0)
    p = compose(M.gaussian(0.5), times=4, _engine=True)
    assert p.source.floor > 0
    m = measure(p, eps_h=12.0, tol=1e-4, refine=False)
    assert m.failure_prob >= p.source.floor
    # 4-fold 0.5-GDP is 1-GDP: the head bracket must reach at least 1 (reference: exact)
    assert m.upper >= 1.0
    m2, fp = L.head_measure(p, 1e-9, tol=1e-4)
    assert fp <= 1e-9 and m2.upper >= 1.0 and m2.upper - m2.lower <= 1e-4


def test_numeric_profile_behaviour():
    p = compose(M.laplace(1.0))
    assert p.refine() is p and p.validate() is p
    with pytest.raises(ProfileError):
        p.identify()
    with pytest.raises(ProfileError):
        p.log_delta(-1.0)
    assert p != compose(M.laplace(1.0))  # identity, not the opaque expression


@pytest.mark.parametrize("call", [
    lambda: compose(),
    lambda: compose(M.laplace(1.0), times=0),
    lambda: compose(M.laplace(1.0), times=2.5),
    lambda: compose(M.laplace(1.0), value_discretization_interval=0.0),
    lambda: compose(M.laplace(1.0), tail_mass_truncation=-1),
    lambda: L.to_pld(M.laplace(1.0), tail_delta=2.0),
    lambda: L.to_pld("exp(-eps)"),
    lambda: L.from_pld(object()),
    lambda: compose(L.to_pld(M.laplace(1.0), 1e-3), L.to_pld(M.laplace(1.0), 1e-4),
                    certify=False),
])
def test_bad_input_is_refused(call):
    with pytest.raises((DomainError, ProfileError)):
        call()


@pytest.mark.slow
def test_cli_compose_and_dpsgd():
    # reference: the library calls the commands wrap
    import io
    import json

    from symgdp.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["compose", "max(0, 1 - exp((eps - e0)/2))", "--set", "e0=0.2", "--times",
                 "10", "--json"], stdout=out, stderr=err) == 0
    data = json.loads(out.getvalue())
    assert data["times"] == 10 and data["mu_lower"] <= data["mu_upper"]
    ref = compose(M.laplace(0.2), times=10).eps_for_delta(1e-5)
    assert abs(data["eps"] - ref) < 1e-3  # connect the dots vs the exact constructor
    out = io.StringIO()
    assert main(["dpsgd", "--q", "0.05", "--sigma", "1", "--steps", "20", "--json"],
                stdout=out, stderr=err) == 0
    data = json.loads(out.getvalue())
    assert data["mu_clt_is_bound"] is False and data["mu_lower"] <= data["mu_upper"]
    for bad in (["dpsgd", "--q", "2", "--sigma", "1", "--steps", "3"],
                ["dpsgd", "--q", "0.1", "--sigma", "1"],
                ["compose", "exp(-eps)", "--times", "0"],
                ["compose", "eps +", "--times", "2"]):
        err = io.StringIO()
        assert main(bad, stdout=io.StringIO(), stderr=err) == 2
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()


def test_profile_methods_delegate_to_the_pld_module():
    # reference: the exact Laplace profile (closed form), which the PLD must dominate
    lap = M.laplace(0.5)
    pld = lap.to_pld(1e-3)
    p = Profile.from_pld(pld)
    assert p.source is not None and p.to_pld() is pld
    for x in (0.0, 0.2, 0.45):
        assert p(x) >= 1 - math.exp((x - 0.5) / 2)


_SCALE = max(1, int(os.environ.get("SYMGDP_TEST_SCALE", "1")))


@settings(max_examples=6 * _SCALE, deadline=None)
@given(e0=st.floats(0.05, 1.5), k=st.integers(2, 30), u=st.floats(0.0, 1.0))
def test_random_kfold_randomized_response_never_below_kov(e0, k, u):
    # reference: the 40-digit KOV sum at a random eps in [0, k eps0]
    p = compose(M.randomized_response(e0), times=k)
    x = u * k * e0
    ref = float(kov_delta(e0, k, x))
    assert ref <= p(x) <= ref + 2e-4 * k


@pytest.mark.slow
@settings(max_examples=6 * _SCALE, deadline=None)
@given(mu=st.floats(0.05, 2.0), k=st.integers(1, 20), x=st.floats(0.0, 8.0))
def test_random_kfold_gaussian_never_below_exact(mu, k, x):
    # reference: k-fold mu-GDP is sqrt(k) mu-GDP, delta_mu at 40 digits
    p = compose(M.gaussian(mu), times=k)
    ref = gdp_delta(x, math.sqrt(k) * mu)
    assert ref <= p(x) <= ref + 1e-5
