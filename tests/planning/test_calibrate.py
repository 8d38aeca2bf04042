"""symgdp.calibrate against closed forms and independent mpmath computations.

References (none computed by symgdp):
* Gaussian mechanism: mu = Delta/sigma exactly (Dong, Roth & Su 2021), so sigma* = Delta/mu.
* Laplace mechanism: mu(eps0) = -2 Phi^{-1}(exp(-eps0/2)/2) (the GDPT peaks at eps = 0),
  so eps0* = -2 log(2 Phi(-mu/2)), and the scale b* = Delta/eps0*.
* Pure DP: mu(eps0) = -2 Phi^{-1}(1/(1+e^eps0)), so eps0* = log(1/Phi(-mu/2) - 1).
* Poisson-subsampled Laplace: an mpmath search (sup of the GDPT, then bisection on the rate).
Phi, Phi^{-1} and delta_mu come from mpmath at 40 digits (tests/reference.py).
"""

from __future__ import annotations

import math
import os

import mpmath
import pytest
import sympy
from references import ref_log_delta

from symgdp import calibrate, mechanisms
from symgdp.errors import ConvergenceError, DomainError, SymgdpError
from symgdp.planning.calibrate import mu_target

DPS = 40
SCALE = int(os.environ.get("SYMGDP_TEST_SCALE", "1"))


def phi(x):
    return mpmath.ncdf(x)


def laplace_eps0_for(mu):
    with mpmath.workdps(DPS):  # eps0* = -2 log(2 Phi(-mu/2))
        return float(-2 * mpmath.log(2 * phi(-mpmath.mpf(mu) / 2)))


def pure_dp_eps0_for(mu):
    with mpmath.workdps(DPS):  # eps0* = log(1/Phi(-mu/2) - 1)
        return float(mpmath.log(1 / phi(-mpmath.mpf(mu) / 2) - 1))


@pytest.mark.parametrize("target", [0.5, 1.0, 2.0])
def test_laplace_eps0_is_the_closed_form(target):
    r = calibrate(mechanisms.laplace(1.0), "varepsilon_0", target, eps_h=20)
    truth = laplace_eps0_for(target)
    assert r.direction == "increasing"  # more budget, larger mu: the largest safe value
    assert r.bracket[0] <= truth <= r.bracket[1]
    assert r.value <= truth  # safe side
    assert r.measurement.upper <= target and r.measurement.certified
    assert r.bracket[1] - r.bracket[0] < 1e-4


def test_laplace_noise_scale_is_decreasing():
    b = sympy.Symbol("b", positive=True)
    sens = 2
    r = calibrate(mechanisms.laplace(sens / b), "b", 1.0, eps_h=20)
    truth = sens / laplace_eps0_for(1.0)  # b* = Delta / eps0*
    assert r.direction == "decreasing"
    assert r.bracket[0] <= truth <= r.bracket[1] and r.value >= truth
    assert r.measurement.upper <= 1.0


def test_pure_dp_against_mu_from_pure_dp():
    r = calibrate(mechanisms.pure_dp(3.0), "varepsilon_0", 0.8, eps_h=20)
    truth = pure_dp_eps0_for(0.8)
    assert r.bracket[0] <= truth <= r.bracket[1] and r.value <= truth
    with mpmath.workdps(DPS):  # mu of the returned value, independently, is <= the target
        mu_val = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(r.value)) - 1)
    assert mu_val <= 0.8


@pytest.mark.slow
def test_gaussian_noise_is_delta_over_mu():
    # loose settings so that the flat GDPT of the Gaussian measures fast
    s = sympy.Symbol("sigma", positive=True)
    sens = 1.5
    r = calibrate(mechanisms.gaussian(sens / s), "sigma", 1.0, bracket=(0.5, 4.0),
                  eps_h=2, tol=1e-2, rtol=1e-3, refine=False)
    truth = sens / 1.0
    assert r.direction == "decreasing"
    assert r.value >= truth and r.bracket[0] <= truth <= r.bracket[1]
    assert r.measurement.lower <= sens / r.value <= r.measurement.upper <= 1.0


@pytest.mark.parametrize("sens", [sympy.Integer(1), sympy.Rational(3, 2)])
def test_gaussian_search_closes_next_to_an_exact_hit(sens):
    # mu = sens/sigma is a straight line in log-log: regula falsi lands on sigma = sens
    # (closed form) at once; the search must then close with one step rtol/2 away rather
    # than creep up on it from the other end
    s = sympy.Symbol("sigma", positive=True)
    r = calibrate(mechanisms.gaussian(sens / s), "sigma", 1.0, bracket=(0.5, 4.0),
                  refine=False)
    assert r.bracket[0] <= sens <= r.bracket[1] and r.value >= sens
    assert r.bracket[1] - r.bracket[0] <= 1e-6 * float(sens)
    assert r.measurements <= 6


def test_integer_steps():
    # eps0 = k/10 (k steps of 0.1-DP composed by the basic theorem, a Laplace mechanism
    # of budget k/10): the largest safe k is floor(10 eps0*) (closed form above)
    k = sympy.Symbol("k", positive=True, integer=True)
    r = calibrate(mechanisms.laplace(k / 10), "k", 1.0, bracket=(1, 40), integer=True,
                  eps_h=20)
    truth = math.floor(10 * laplace_eps0_for(1.0))
    assert (r.value, r.bracket, r.direction) == (truth, (truth, truth + 1), "increasing")
    assert isinstance(r.value, int)


@pytest.mark.slow
def test_sgd_family_scales_with_A():
    # delta = B exp(-sigma^2 eps^2 / A^2) depends on sigma/A only, so the calibrated noise
    # scales with A: an exact relation, checked on the brackets (a second search)
    r1 = calibrate(mechanisms.sgd_family(1, 1, 1), "sigma", 1.0)
    r3 = calibrate(mechanisms.sgd_family(3, 1, 1), "sigma", 1.0)
    assert r1.direction == r3.direction == "decreasing"
    lo, hi = 3 * r1.bracket[0], 3 * r1.bracket[1]
    assert max(lo, r3.bracket[0]) <= min(hi, r3.bracket[1]) * (1 + 1e-12)  # they overlap
    assert r1.measurement.upper <= 1.0 and r3.measurement.upper <= 1.0


@pytest.mark.skipif(SCALE < 2, reason="deeper check: set SYMGDP_TEST_SCALE=2")
def test_sampling_rate_against_an_mpmath_search():
    g = sympy.Symbol("gamma", positive=True)
    e0, target = 2.0, 0.5
    p = mechanisms.laplace(e0).subsample(g)
    r = calibrate(p, "gamma", target, bracket=(0.01, 1.0), eps_h=20)

    # independent: sup of the GDPT of delta_sub(eps) = gamma (1 - e^{(t - e0)/2})_+,
    # t = log(1 + (e^eps - 1)/gamma), by a grid and golden-section search in mpmath, with
    # mu_GDP inverted by bisection on the reference log delta_mu
    def gdpt(eps, gamma):
        t = mpmath.log(1 + (mpmath.exp(eps) - 1) / gamma)
        ld = mpmath.log(gamma * (1 - mpmath.exp((t - e0) / 2)))
        lo, hi = mpmath.log(1e-9), mpmath.log(30)
        for _ in range(45):  # log delta_mu(eps) increases with mu: bisection on log mu
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if ref_log_delta(eps, mpmath.exp(mid), dps=25) < ld else (lo, mid)
        return mpmath.exp(lo)

    def sup_g(gamma):
        top = mpmath.log(1 + gamma * (mpmath.exp(e0) - 1))  # where delta_sub reaches 0
        xs = [top * i / 60 for i in range(60)]
        i = max(range(60), key=lambda j: gdpt(xs[j], gamma))
        a, b = xs[max(i - 1, 0)], xs[min(i + 1, 59)]
        for _ in range(40):
            c, d = b - (b - a) * 0.618, a + (b - a) * 0.618
            a, b = (a, d) if gdpt(c, gamma) >= gdpt(d, gamma) else (c, b)
        return max(gdpt(a, gamma), gdpt(xs[i], gamma))

    with mpmath.workdps(25):
        lo, hi = mpmath.mpf("0.01"), mpmath.mpf(1)
        for _ in range(25):  # sup G increases with gamma: bisection on the rate
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if sup_g(mid) <= target else (lo, mid)
    assert r.direction == "increasing"
    assert r.value <= float(hi) and r.bracket[0] <= float(hi)
    assert r.bracket[1] >= float(lo) * (1 - 1e-6)


def test_target_eps_delta_through_gdp_is_the_analytic_gaussian():
    s = sympy.Symbol("sigma", positive=True)
    eps, delta = 1.0, 1e-3
    r = calibrate(mechanisms.gaussian(1 / s), "sigma", target=(eps, delta), bracket=(0.5, 4),
                  eps_h=2, tol=1e-2, rtol=1e-3, refine=False)
    # the analytic Gaussian mechanism: sigma* = 1/mu with delta_mu(eps) = delta (mpmath root)
    with mpmath.workdps(DPS):
        mu = mpmath.findroot(lambda m: ref_log_delta(eps, m) - mpmath.log(delta), (0.2, 3),
                             solver="anderson")
    truth = float(1 / mu)
    assert r.target == (eps, delta) and r.target_mu <= float(mu)
    assert r.bracket[0] <= truth * (1 + 1e-12) and r.value >= truth


def test_mu_target_is_proved_below_the_exact_value():
    for eps, delta in [(1.0, 1e-5), (0.1, 0.3), (10.0, 1e-30), (0.0, 1e-3)]:
        m = mu_target(eps, delta)
        with mpmath.workdps(DPS):
            assert ref_log_delta(eps, m) <= mpmath.log(delta)
            exact = mpmath.findroot(
                lambda x, e=eps, d=delta: ref_log_delta(e, x) - mpmath.log(d), m)
        assert m <= exact and (exact - m) / exact < 1e-12


def test_tradeoff_route_is_the_laplace_calibration():
    # Laplace, solved for its scale: b = Delta/(eps - 2 log(1 - delta)) is exact, so no
    # partial-order refinement can lower it (closed form of the Laplace profile)
    r = calibrate("b = 1/(eps - 2*log(1 - delta))", "b", target=(1.0, 1e-3))
    truth = 1 / (1.0 - 2 * math.log1p(-1e-3))
    assert r.route == "tradeoff"
    assert r.value >= truth and r.value <= truth * (1 + 1e-12)


def test_bad_inputs_are_named():
    p = mechanisms.laplace(1.0)
    with pytest.raises(DomainError, match="exactly one"):
        calibrate(p, "varepsilon_0")
    with pytest.raises(DomainError, match="'nope' is not a parameter"):
        calibrate(p, "nope", 1.0)
    with pytest.raises(DomainError, match="not reached in the bracket"):
        calibrate(p, "varepsilon_0", 1.0, bracket=(5.0, 8.0), eps_h=20)
    with pytest.raises(DomainError, match="target_mu"):
        calibrate(p, "varepsilon_0", -1.0)
    with pytest.raises(DomainError, match="beyond eps_h"):
        calibrate(p, "varepsilon_0", target=(50.0, 1e-5), eps_h=20)
    with pytest.raises(SymgdpError):
        calibrate(mechanisms.sgd_family(1, sympy.Symbol("B", positive=True), 2), "sigma", 1.0)


def test_non_monotone_parameter_is_refused():
    # eps0 = (t - 1)^2 falls and then rises in t: the ends say "increasing", the interior
    # contradicts it, and the search must say so rather than return a value
    t = sympy.Symbol("t", positive=True)
    p = mechanisms.laplace((t - 1) ** 2)
    with pytest.raises(ConvergenceError, match="not monotone"):
        calibrate(p, "t", 1.0, bracket=(0.2, 2.5), eps_h=20)


def test_recognised_gaussian_reads_float_values_exactly():
    # sigma = 1.4999999999999998: SymPy's 53-bit 3/(2*sigma) is 1.0, below the true mu;
    # reference: the exact quotient of the double in 40-digit mpmath
    s = sympy.Symbol("sigma", positive=True)
    sig = 1.4999999999999998
    m = mechanisms.gaussian(sympy.Rational(3, 2) / s).replace(values={s: sig}).measure(
        refine=False, identify=False)
    with mpmath.workdps(40):
        truth = mpmath.mpf(3) / (2 * mpmath.mpf(sig))
        assert m.certified and m.lower <= truth <= m.upper
        assert truth > 1
