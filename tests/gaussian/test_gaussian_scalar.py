"""The scalar fast path of symgdp.gaussian.vectorised gives the vectorised path's answers.

One float in takes a path of plain ``math``/``scipy.special`` scalar calls; these tests
hold it to (1) the vectorised path on the same points (to a few ulps -- bit-identical where
NumPy's exp/log are the platform libm's), (2) the independent 40-digit mpmath reference of
``tests/reference.py`` (δ_μ from Φ(a) − e^ε Φ(b) with ``mpmath.erfc``), and (3) the same
edge cases and errors (they are declined by the fast path and handled by the vectorised one).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from references import ref_log_delta
from scipy.special import log_ndtr

import symgdp.gaussian.vectorised as g
from symgdp.errors import DomainError

ULPS = 4


def _points(n: int, seed: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    eps = np.concatenate([rng.uniform(0.0, 5.0, n // 2), 10 ** rng.uniform(-8, 3.3, n - n // 2)])
    mu = 10 ** rng.uniform(-2, 1.3, n)
    return [(float(e), float(m)) for e, m in zip(eps, mu, strict=True)]


def _close(a: float, b: float, ulps: int = ULPS) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= ulps * math.ulp(max(abs(a), abs(b)))


# the float roots of the scalar and the array path start their iterations from different
# points and stop within a few ulps of the root each (each is checked against 40-digit
# mpmath in test_gaussian.py): they agree to 16 ulps, not to the last bit (9 ulps apart at
# (eps, log delta) = (1.3921280605038666, -1.7329718234456224))
ROOT_ULPS = 16


def test_scalar_equals_vectorised_on_random_points():
    pts = _points(400, 7)
    E = np.array([p[0] for p in pts])
    M = np.array([p[1] for p in pts])
    # both paths round log delta and delta the same way, bit for bit, in every direction
    for r in ("up", "down", "nearest"):
        L = g.log_delta_mu(E, M, rounding=r)
        D = g.delta_mu(E, M, rounding=r)
        for i, (e, m) in enumerate(pts):
            assert _close(g.log_delta_mu(e, m, rounding=r), L[i]), (e, m, r)
            assert _close(g.delta_mu(e, m, rounding=r), D[i]), (e, m, r)
    inside = (L < 0) & np.isfinite(L)
    # the same float root on both paths ("nearest"); the default rounds it up by a
    # residual evaluated at that root, whose last-ulp noise in log delta moves the two
    # paths apart by up to ulp(log delta) / slope: compared to 1e-14 relative there
    near = {"rounding": "nearest"}
    mu_v = g.mu_gdp(E[inside], log_delta=L[inside], **near)
    eps_v = g.eps_gdp(M[inside], log_delta=L[inside], **near)
    mu_up = g.mu_gdp(E[inside], log_delta=L[inside])
    eps_up = g.eps_gdp(M[inside], log_delta=L[inside])
    for j, i in enumerate(np.flatnonzero(inside)):
        assert _close(g.mu_gdp(pts[i][0], log_delta=float(L[i]), **near), mu_v[j],
                      ROOT_ULPS), pts[i]
        # the float roots ("nearest") of the two paths stop at different points: 7e-11
        # relative apart at eps = 2.8e-8, mu = 0.04 (ill-conditioned: delta near
        # delta_mu(0)), 4e-13 at eps = 8.2e-4, mu = 0.026 (the array path's stop); the
        # default's safe side is tested against 50-digit mpmath in test_conversions_safe
        e_s = g.eps_gdp(pts[i][1], log_delta=float(L[i]), **near)
        e0, m0 = pts[i]
        # |d log delta / d eps| = e^eps Phi(b) / delta (theory §3): log delta's last ulps
        # fix eps only to 64 ulp(log delta) / slope absolutely
        slope = math.exp(e0 + float(log_ndtr(-e0 / m0 - m0 / 2)) - float(L[i]))
        cond = 64 * math.ulp(abs(float(L[i]))) / slope
        assert abs(e_s - float(eps_v[j])) <= 1e-12 * e_s + cond, (pts[i], e_s, eps_v[j])
        assert g.mu_gdp(pts[i][0], log_delta=float(L[i])) == pytest.approx(mu_up[j], rel=1e-14)
        # rounded up by each path's own error bound at its own root: 1.4e-12 relative
        # apart at eps = 8.2e-4, mu = 0.026, both above the 40-digit root
        assert g.eps_gdp(pts[i][1], log_delta=float(L[i])) == pytest.approx(
            eps_up[j], rel=1e-11, abs=1e-15)
    d = D[inside & (D > 0) & (D < 1)]
    e_d = E[inside & (D > 0) & (D < 1)]
    mu_d = g.mu_gdp(e_d, d, **near)
    for j in range(d.size):
        assert _close(g.mu_gdp(float(e_d[j]), float(d[j]), **near), mu_d[j], ROOT_ULPS)


def test_scalar_path_matches_40_digit_mpmath():
    """log δ_μ(ε) to 1e-13 relative; μ_GDP and ε_GDP recover the μ and ε the reference was
    computed at (to 1e-12 relative plus what the rounding of log δ moves them)."""
    for e, m in _points(60, 11):
        ref = ref_log_delta(e, m)
        lr = float(ref)
        got = g.log_delta_mu(e, m, rounding="nearest")  # accuracy of the float evaluation
        assert abs(got - lr) <= 1e-13 * abs(lr) + 1e-300, (e, m)
        assert g.log_delta_mu(e, m, rounding="down") <= ref <= g.log_delta_mu(e, m), (e, m)
        if not (-1e300 < lr < -1e-8):
            continue
        with mpmath.workdps(40):
            a = mpmath.mpf(m) / 2 - mpmath.mpf(e) / m
            dl_dmu = float(mpmath.exp(-a * a / 2 - mpmath.log(2 * mpmath.pi) / 2 - ref))
        mu = g.mu_gdp(e, log_delta=lr)
        assert abs(mu - m) <= 1e-12 * m + 2e-13 * abs(lr) / dl_dmu, (e, m)
        if e > 1e-6:
            eps_back = g.eps_gdp(m, log_delta=lr)
            assert abs(eps_back - e) <= 1e-9 * e + 1e-12, (e, m)


def test_regular_scalar_calls_do_not_reach_the_vectorised_core(monkeypatch):
    """A behaviour check that the fast path is the one taken (not a timing test)."""

    def boom(*args, **kwargs):
        raise AssertionError("vectorised core reached")

    monkeypatch.setattr(g, "_log_delta_core", boom)
    assert g.log_delta_mu(1.0, 1.0) < 0
    assert 0 < g.delta_mu(1.0, 1.0) < 1
    assert g.mu_gdp(1.0, 1e-5) > 0
    assert g.mu_gdp(1.0, log_delta=-1000.0) > 0
    assert g.eps_gdp(1.0, 1e-5) > 0
    assert g.mu_gdp(np.float64(1.0), np.array(1e-5)) > 0


@pytest.mark.parametrize("args", [(math.nan, 1.0), (1.0, math.nan), (0.0, 1.0), (1.0, 0.0),
                                  (math.inf, 1.0), (1.0, math.inf), (0.0, 0.0), (800.0, 30.0),
                                  (1e-300, 1e-120), (1.0, 1e-3)])
def test_edge_cases_agree_with_the_vectorised_path(args):
    e, m = args
    for f in (g.log_delta_mu, g.delta_mu):
        v = f(np.array([e]), np.array([m]))[0]
        assert _close(f(e, m), float(v))
        assert type(f(e, m)) is float
    L = -1000.0
    assert _close(g.mu_gdp(e, log_delta=L), float(g.mu_gdp(np.array([e]), log_delta=L)[0]))
    assert _close(g.eps_gdp(m, log_delta=L), float(g.eps_gdp(np.array([m]), log_delta=L)[0]))
    for d in (0.0, 1.0, 1e-5):
        assert _close(g.mu_gdp(e, d), float(g.mu_gdp(np.array([e]), np.array([d]))[0]))


@pytest.mark.parametrize("call", [lambda: g.log_delta_mu(-1.0, 1.0), lambda: g.delta_mu(1.0, -1.0),
                                  lambda: g.mu_gdp(1.0, 1.5), lambda: g.mu_gdp(-1.0, 0.5),
                                  lambda: g.eps_gdp(1.0, log_delta=0.5)])
def test_scalar_domain_errors_unchanged(call):
    with pytest.raises(DomainError):
        call()


def test_exactly_one_of_delta_and_log_delta_still_enforced():
    with pytest.raises(TypeError):
        g.mu_gdp(1.0, 1e-5, log_delta=-3.0)
    with pytest.raises(TypeError):
        g.eps_gdp(1.0)
