"""Adversarial review of mu_gdp's rounding side (fast path, scalar and array), against an
mpmath reference written here (not symgdp.gaussian.precise): log delta_mu(eps) from the
exact floats at 60+ digits, in the complement form log1p(-(Phi(-a) + e^eps Phi(b))) for
a > 0 (so a 1 - delta far below float64's subnormals is resolved) and in the erfcx form
(as erfc(x) e^(x^2), at enough extra digits for its cancellation) for a <= 0.

Found by it: near delta = 1 with 1 - delta below the smallest normal float
(a = mu/2 - eps/mu >= 37.68), scipy's ndtr(-a) flushes Phi(-a) to 0, an error of the whole
term (up to ~2.5e-310 absolute) that the relative error model of log delta did not cover;
rounded up, mu_gdp returned a mu about 3.5e-4 relative below the root."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symgdp.gaussian import core, scalar
from symgdp.gaussian import vectorised as g


def _ref_log_delta(eps: float, mu: float) -> mpmath.mpf:
    """log delta_mu(eps) from the exact floats eps, mu (60 digits plus those lost to the
    magnitude of a^2 and to the erfcx cancellation)."""
    big = abs(mu / 2.0 - eps / mu)
    extra = 20 + int(2 * math.log10(max(1.0, big))) + int(max(0.0, -math.log10(mu)))
    with mpmath.workdps(60 + extra):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        a = m / 2 - e / m
        b = -e / m - m / 2
        if a > 0:
            comp = mpmath.ncdf(-a) + mpmath.exp(e + mpmath.log(mpmath.ncdf(b)))
            return +mpmath.log1p(-comp)
        s2 = mpmath.sqrt(2)
        d = (mpmath.erfc(-a / s2) * mpmath.exp(a * a / 2)
             - mpmath.erfc(-b / s2) * mpmath.exp(b * b / 2))
        return +(-a * a / 2 - mpmath.log(2) + mpmath.log(d))


def _points() -> list[tuple[float, float]]:
    """(eps, L): the two wrong sides found by the review's sweep, and a grid of a at the
    root across the flush of ndtr(-a) (a^2/2 = 709.78, Phi(-a) ~ 2.4e-310), with L the
    reference's log delta there rounded to float."""
    pts = [(2.2202920957628294, -3.8450871430545e-311),
           (1.680094444433748, -1.36311369e-315)]
    for eps in (1e-17, 0.3, 2.0, 50.0):
        for a in (37.4, 37.6, 37.7, 37.9, 38.2, 38.5):
            mu = a + math.sqrt(a * a + 2.0 * eps)  # mu/2 - eps/mu = a
            L = float(_ref_log_delta(eps, mu))
            if L < 0.0:
                pts.append((eps, L))
    return pts


POINTS = _points()


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_side_where_one_minus_delta_is_subnormal(rounding: str) -> None:
    # truth: the 60-digit reference above; log delta increases in mu, so a float rounded
    # up must have log delta >= L (down: <= L), scalar calls and one array call alike
    e = np.array([p[0] for p in POINTS])
    L = np.array([p[1] for p in POINTS])
    arr = g.mu_gdp(e, log_delta=L, rounding=rounding)
    for i, (eps, Li) in enumerate(POINTS):
        for y in (g.mu_gdp(eps, log_delta=Li, rounding=rounding), float(arr[i])):
            diff = _ref_log_delta(eps, y) - mpmath.mpf(Li)
            assert (diff >= 0) if rounding == "up" else (diff <= 0), (eps, Li, y, diff)


def test_log_delta_error_bound_covers_the_flush_of_ndtr() -> None:
    # truth: the reference above; the bound of the float evaluation (array and scalar)
    # must cover it, with the subnormal slack the enclosure adds
    eps = np.array([0.3, 0.3, 2.0, 2.0, 50.0])
    a = np.array([37.6, 37.8, 37.7, 38.3, 38.0])
    mu = a + np.sqrt(a * a + 2.0 * eps)
    err = np.empty(eps.size)
    ld = core._log_delta_core(eps, mu, err)
    for i in range(eps.size):
        truth = _ref_log_delta(float(eps[i]), float(mu[i]))
        ls, es = scalar._log_delta_scalar_err(float(eps[i]), float(mu[i]))
        for v, ev in ((ld[i], err[i]), (ls, es)):
            assert abs(mpmath.mpf(float(v)) - truth) <= ev + core._SUB_SLACK, (i, v, truth)


# eps just below the exp overflow (709.7827) and a = mu/2 - eps/mu just above 0: 1 - delta
# is above 1/2, so the direct form Phi(a) - Phi(b) - expm1(eps) Phi(b) is taken, with
# Phi(b) ~ 5.9e-311 times expm1(eps) ~ 1.8e308 (a term of ~0.01); ndtr(b) flushes it to 0
NEAR_OVERFLOW = [(eps, a) for eps in (709.7826, 709.7827, 709.78271289)
                 for a in (0.003, 0.01, 0.02, 0.04)]


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_log_delta_and_delta_sides_just_below_the_exp_overflow(rounding: str) -> None:
    # truth: the 60-digit reference above; log_delta_mu and delta_mu rounded up (down) must
    # not be below (above) it, in scalar and array calls
    e = np.array([p[0] for p in NEAR_OVERFLOW])
    mu = np.array([a + math.sqrt(a * a + 2.0 * eps) for eps, a in NEAR_OVERFLOW])
    lds = g.log_delta_mu(e, mu, rounding=rounding)
    ds = g.delta_mu(e, mu, rounding=rounding)
    sign = 1 if rounding == "up" else -1
    for i in range(e.size):
        truth = _ref_log_delta(float(e[i]), float(mu[i]))
        for v in (g.log_delta_mu(float(e[i]), float(mu[i]), rounding=rounding), lds[i]):
            assert sign * (mpmath.mpf(float(v)) - truth) >= 0, (e[i], mu[i], v, truth)
        for v in (g.delta_mu(float(e[i]), float(mu[i]), rounding=rounding), ds[i]):
            assert sign * (mpmath.mpf(float(v)) - mpmath.exp(truth)) >= 0, (e[i], mu[i], v)


@pytest.mark.parametrize("rounding", ["up", "down"])
def test_tradeoff_side_where_the_result_is_subnormal(rounding: str) -> None:
    # the same flush of ndtr in tradeoff_gdp: G_mu(alpha) = Phi(-Phi^-1(alpha) - mu) of
    # ~1e-310..1e-320 came out 0 (rounded up: 1.5e-323, below the truth); truth: mpmath's
    # ncdf at 60 digits from the float alpha, mu (Phi^-1(0.5) = 0 exactly)
    mus = [37.5, 37.7, 37.8, 38.2, 38.5]
    arr = g.tradeoff_gdp(np.full(len(mus), 0.5), np.array(mus), rounding=rounding)
    sign = 1 if rounding == "up" else -1
    with mpmath.workdps(60):
        for i, mu in enumerate(mus):
            truth = mpmath.ncdf(-mpmath.mpf(mu))
            for v in (g.tradeoff_gdp(0.5, mu, rounding=rounding), arr[i]):
                assert sign * (mpmath.mpf(float(v)) - truth) >= 0, (mu, v, truth)
