"""Certified composition (symgdp.compose): every bracket against an independent truth.

References (named at each test): the exact GDP profile delta_mu at 50 digits (mpmath;
k-fold mu-GDP is sqrt(k) mu-GDP); the Kairouz-Oh-Viswanath binomial sum for k-fold
randomized response / pure DP, own mpmath code at 50 digits; the 2-fold Laplace profile
by numeric convolution in mpmath (the inner expectation in closed form, the outer by
quadrature split at its kinks); a Gaussian composed with randomized response as the
binomial mixture of shifted exact Gaussian profiles; and the proved rows of
composition.table (gdp_laplace, gdp_summary).  Guaranteed bounds are checked as
lower <= truth <= upper.
"""

from __future__ import annotations

import io
import json
import math

import mpmath
import numpy as np
import pytest
import sympy

from symgdp import Profile, calibrate, compose, composition
from symgdp import mechanisms as M
from symgdp.accounting.certified import Composition, LazyComposition
from symgdp.errors import SymgdpError, UnboundParameterError


@pytest.fixture(autouse=True)
def _fifty_digits():
    """This module's references work at 50 digits.  Set per test and restored after: set at
    import (as it was), it held for every test collected after this module in the session,
    the product's ambient-precision mpmath calls in other wings included."""
    with mpmath.workdps(50):
        yield


def gdp_delta(eps: float, mu: float) -> mpmath.mpf:
    """delta_mu(eps) at 50 digits, valid for every real eps (the Gaussian PLD's profile)."""
    e, m = mpmath.mpf(eps), mpmath.mpf(mu)
    return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def kov_delta(e0: float, k: int, eps: float) -> mpmath.mpf:
    """k-fold randomized response (= worst eps0-DP), 50 digits: sum over the losses
    (k - 2i) eps0 with binomial weights of (1 - e^{eps - L})_+."""
    e0m = mpmath.mpf(e0)
    p = mpmath.exp(e0m) / (1 + mpmath.exp(e0m))
    out = mpmath.mpf(0)
    for i in range(k + 1):
        L = (k - 2 * i) * e0m
        if L > eps:
            out += mpmath.binomial(k, i) * p ** (k - i) * (1 - p) ** i * (
                1 - mpmath.exp(mpmath.mpf(eps) - L))
    return out


def laplace2_delta(e0: float, eps: float) -> mpmath.mpf:
    """2-fold Laplace(eps0) profile by convolution: the loss under P = Lap(0, 1/eps0) is
    eps0 (mass 1/2), -eps0 (mass e^{-eps0}/2), or eps0 (1 - 2x) for x in (0, 1) with
    density eps0/2 e^{-eps0 x}; g(s) = E[(1 - e^{eps - s - L})_+] in closed form."""
    a, e = mpmath.mpf(e0), mpmath.mpf(eps)

    def f(s: mpmath.mpf) -> mpmath.mpf:
        return 1 - mpmath.exp(e - s) if s > e else mpmath.mpf(0)

    def g(s: mpmath.mpf) -> mpmath.mpf:
        u = min(max((s + a - e) / (2 * a), 0), 1)
        cont = (1 - mpmath.exp(-a * u)) / 2 - mpmath.exp(e - s - a) * (mpmath.exp(a * u) - 1) / 2
        return f(s + a) / 2 + mpmath.exp(-a) / 2 * f(s - a) + cont

    cuts = sorted({mpmath.mpf(0), mpmath.mpf(1)} | {
        x for x in ((a - (e - a)) / (2 * a), (a - (e + a)) / (2 * a)) if 0 < x < 1})
    inner = mpmath.quad(lambda x: a / 2 * mpmath.exp(-a * x) * g(a * (1 - 2 * x)), cuts)
    return g(a) / 2 + mpmath.exp(-a) / 2 * g(-a) + inner


def check_profile(c: Composition, truth, xs) -> None:
    up = c(np.asarray(xs))
    lo = c.lower_delta(np.asarray(xs))
    for x, u, l in zip(xs, up, lo, strict=True):
        t = truth(x)
        assert l <= t * (1 + 1e-12) + 1e-300, (x, l, t)
        assert t <= u * (1 + 1e-12), (x, t, u)


@pytest.mark.parametrize("mu,k", [(0.5, 4), (1.0, 3), (0.2, 25)])
def test_kfold_gaussian_bracket_contains_sqrt_k_mu(mu, k):
    # reference: k-fold mu-GDP is exactly sqrt(k) mu-GDP (delta_mu at 50 digits)
    c = compose(M.gaussian(mu), times=k)
    m = math.sqrt(k) * mu
    assert c.certified and c.neighbouring == "add_remove"
    assert c.mu_floor <= m <= c.mu_upper <= m + 1e-3
    assert c.mu_upper - c.mu_floor <= 1e-3
    check_profile(c, lambda x: gdp_delta(x, m), [0.0, 0.3, 1.0, 2.0, 4.0])


def test_far_tail_is_an_upper_bound():
    # reference: delta_mu at 50 digits where it is far below float64's FFT noise
    c = compose(M.gaussian(0.5), times=4)
    for x in (6.0, 8.0, 10.0):
        t = gdp_delta(x, 1.0)
        assert float(mpmath.log(t)) <= c.log_delta(x) + 1e-9


def test_two_gaussians_compose_to_root_sum_of_squares():
    # reference: 0.3-GDP o 0.4-GDP is 0.5-GDP
    c = compose(M.gaussian(0.3), M.gaussian(0.4))
    assert c.mu_floor <= 0.5 <= c.mu_upper <= 0.5 + 1e-3
    check_profile(c, lambda x: gdp_delta(x, 0.5), [0.0, 0.5, 1.5])


@pytest.mark.parametrize("e0,k", [(0.2, 30), (0.5, 7), (1.0, 3)])
def test_kfold_randomized_response_against_kov(e0, k):
    # reference: the KOV binomial sum at 50 digits (exact for k-fold RR)
    c = compose(M.randomized_response(e0), times=k)
    xs = list(np.linspace(0.0, k * e0 * 1.05, 9))
    check_profile(c, lambda x: kov_delta(e0, k, x), xs)
    ref_lo, ref_hi = composition.optimal_mu(e0, k)
    assert c.mu_floor <= ref_hi and ref_lo <= c.mu_upper  # both contain the true mu


def test_pure_dp_and_kov_items_compose_like_rr():
    # reference: the worst eps0-DP pair is RR; KOV(e0, 3) twice is KOV(e0, 6)
    c = compose(composition.optimal_pure_dp(0.4, 3), (M.pure_dp(0.4), 3))
    check_profile(c, lambda x: kov_delta(0.4, 6, x), [0.0, 0.5, 1.0, 2.0])


@pytest.mark.parametrize("e0", [0.3, 1.0])
def test_two_fold_laplace_against_numeric_convolution(e0):
    # reference: laplace2_delta (mpmath convolution of the Laplace loss distribution)
    c = compose(M.laplace(e0), times=2)
    check_profile(c, lambda x: laplace2_delta(e0, x), [0.0, 0.3 * e0, e0, 1.5 * e0])


def test_single_laplace_is_bracketed_by_its_closed_form():
    # reference: 1 - e^{(eps - eps0)/2} (exact Laplace profile)
    c = compose(M.laplace(0.7))
    check_profile(c, lambda x: max(mpmath.mpf(0), 1 - mpmath.exp((mpmath.mpf(x) - 0.7) / 2)),
                  [0.0, 0.2, 0.69, 0.8])


def test_mixed_gaussian_and_randomized_response():
    # reference: the binomial mixture over the RR losses of the exact Gaussian profile
    # shifted by each loss (composition of independent losses), 50 digits
    e0, k, mu = 0.5, 3, math.sqrt(2) * 0.3
    p = math.exp(e0) / (1 + math.exp(e0))

    def truth(x):
        return sum(mpmath.binomial(k, i) * mpmath.mpf(p) ** (k - i) * mpmath.mpf(1 - p) ** i
                   * gdp_delta(x - (k - 2 * i) * e0, mu) for i in range(k + 1))

    c = compose((M.gaussian(0.3), 2), (M.randomized_response(e0), k))
    check_profile(c, truth, [0.0, 0.5, 1.0, 2.0, 3.0])


def test_laplace_is_never_looser_than_the_proved_rows():
    # reference: composition.table's proved gdp_laplace and gdp_summary rows
    t = composition.table(0.2, 50, [1e-6], rows=("gdp_laplace", "gdp_summary"))
    c = compose(M.laplace(0.2), times=50)
    assert c.mu_floor <= c.mu_upper <= min(t.mus["gdp_laplace"], t.mus["gdp_summary"])
    assert c.mu_upper - c.mu_floor <= 1e-3


def test_table_summary_row_contains_the_mechanism():
    # reference: the proved gdp_laplace / gdp_summary rows of the same table
    t = composition.table(0.2, 50, [1e-6], rows=("gdp_laplace", "gdp_summary",
                                                 "gdp_summary_laplace"))
    assert t.mus["gdp_summary_laplace"] <= min(t.mus["gdp_laplace"], t.mus["gdp_summary"])
    assert t.mus["gdp_summary_laplace_floor"] <= t.mus["gdp_summary_laplace"]


def test_eps_at_brackets_the_exact_epsilon():
    # reference: eps of sqrt(k) mu-GDP at delta, solved at 50 digits
    c = compose(M.gaussian(0.5), times=4)
    for d in (1e-2, 1e-4):
        e = mpmath.findroot(lambda x, d=d: gdp_delta(x, 1.0) - d, 2.0)
        br = c.eps_at(d)
        assert br.lower <= float(e) <= br.upper <= float(e) + 1e-2


def test_nested_and_counted_items_flatten():
    # reference: 6-fold RR (KOV) however it is grouped
    one = compose(M.randomized_response(0.3), times=2)
    c = compose(one, (M.randomized_response(0.3), 4))
    check_profile(c, lambda x: kov_delta(0.3, 6, x), [0.0, 0.6, 1.2])


def test_non_convex_profile_has_no_floor_but_an_upper_bound():
    # reference: the chord argument needs only an upper bound; this profile is concave
    # in e^eps near 0 (not the profile of any mechanism), so no floor is claimed
    p = Profile.parse("exp(-eps^2/2)/2")
    c = compose(p, times=2, discretization=4e-3)
    assert math.isnan(c.mu_floor) and c.mu_upper > 0
    assert any("no floor" in n for n in c.notes)


def test_float_route_is_labelled():
    c = compose(M.gaussian(0.5), times=4, certify=False)
    assert not c.certified and c.source.pld is not None and math.isnan(c.mu_floor)
    assert "NOT certified" in repr(c)


def test_repr_and_dict_show_the_mechanism_bracket():
    c = compose(M.gaussian(0.5), times=4)
    r = repr(c)
    assert "mu in [" in r and "certified" in r and "add/remove" in r
    d = c.to_dict()
    assert d["mu_floor"] <= 1.0 <= d["mu_upper"] and d["neighbouring"] == "add_remove"


def test_a_composition_is_a_profile():
    c = compose(M.gaussian(0.5), times=4)
    assert isinstance(c, Profile)
    m = c.measure(eps_h=5.0, tol=1e-3, refine=False)
    assert m.upper >= 1.0 - 1e-9
    assert c.eps_for_delta(1e-3) == pytest.approx(c.eps_at(1e-3).upper)


def test_lazy_composition_binds_and_refuses_numeric_work():
    s = sympy.Symbol("s", positive=True)
    lazy = compose(M.gaussian(sigma=s), times=4)
    assert isinstance(lazy, LazyComposition) and s in lazy.unbound_symbols
    with pytest.raises(UnboundParameterError, match="s"):
        lazy.require_bound()
    bound = lazy.bind({s: 2.0})  # 4-fold 0.5-GDP is 1-GDP
    assert isinstance(bound, Composition) and bound.mu_floor <= 1.0 <= bound.mu_upper
    # by name, as Profile.replace takes them; a name it does not have is refused
    by_name = lazy.bind({"s": 2.0})
    assert by_name.mu_upper == bound.mu_upper
    with pytest.raises(SymgdpError, match="no parameter 'u'"):
        lazy.bind({"u": 1.0})


def test_lazy_composition_of_noise_with_a_symbolic_shape():
    # generalized Gaussian noise with k and sigma symbolic composes lazily; bound at k = 2,
    # sigma = 2 it is the Gaussian with standard deviation sqrt(2), 3-fold mu = sqrt(3/2)
    # (closed form, Dong, Roth & Su 2021, Cor. 3.3): the certified upper end lies above it
    import symgdp

    x = sympy.Symbol("x", real=True)
    k, s = sympy.symbols("k sigma", positive=True)
    noise = symgdp.additive_noise(k / (2 * s * sympy.gamma(1 / k))
                                  * sympy.exp(-sympy.Abs(x / s) ** k), sensitivity=1,
                                  variable=x)
    lazy = compose(noise, times=3, discretization=4e-3)
    assert isinstance(lazy, LazyComposition) and {v.name for v in lazy.unbound_symbols} == \
        {"k", "sigma"}
    got = lazy.replace(values={"k": 2, "sigma": 2})
    assert isinstance(got, Composition)
    assert math.sqrt(1.5) * (1 - 1e-12) <= got.mu_upper <= math.sqrt(1.5) * 1.02


def test_calibrate_through_compose():
    # reference: 4-fold Gaussian with noise s is (2/s)-GDP, so mu <= 0.8 needs s >= 2.5
    s = sympy.Symbol("s", positive=True)
    lazy = compose(M.gaussian(sigma=s), times=4, discretization=4e-3)
    r = calibrate(lazy, s, target_mu=0.8, rtol=1e-2)
    assert r.value >= 2.5 and r.value <= 2.5 * 1.03
    assert r.measurement.upper <= 0.8


@pytest.mark.parametrize("call,word", [
    (lambda: compose((M.laplace(1.0), -3)), "-3"),
    (lambda: compose((M.laplace(1.0), 2.5)), "2.5"),
    (lambda: compose((M.laplace(1.0), True)), "True"),
    (lambda: compose(M.laplace(1.0), times=0), "0"),
    (lambda: compose("not a profile"), "str"),
    (lambda: compose(42), "int"),
    (lambda: compose((M.laplace(1.0), 2, 3)), "length 3"),
    (lambda: compose(), "at least one"),
    (lambda: compose(M.laplace(1.0), neighbouring="swap"), "swap"),
    (lambda: compose(M.laplace(1.0), bogus=1), "bogus"),
])
def test_bad_input_is_named(call, word):
    with pytest.raises(SymgdpError, match=word):
        call()


def test_cli_compose_prints_the_mechanism_bracket():
    from symgdp.cli.main import main

    out = io.StringIO()
    assert main(["compose", "max(0, 1 - exp((eps - e0)/2))", "--set", "e0=0.2", "--times",
                 "10", "--json"], stdout=out, stderr=io.StringIO()) == 0
    data = json.loads(out.getvalue())
    # reference: the certified composition of the exact Laplace mechanism
    ref = compose(M.laplace(0.2), times=10)
    assert data["certified"] is True and data["neighbouring"] == "add_remove"
    assert data["mu_floor"] <= ref.mu_upper and ref.mu_floor <= data["mu_upper"]
    for bad in (["compose", "exp(-eps)", "--times", "-2"],
                ["compose", "exp(-eps)", "--times", "2.5"]):
        err = io.StringIO()
        assert main(bad, stdout=io.StringIO(), stderr=err) == 2
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()
