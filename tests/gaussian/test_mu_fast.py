"""The fast path of mu_gdp (symgdp.gaussian.mu_fast): a first step without an evaluation
of log delta, one evaluation, up to two more where the step is not yet small, the
enclosure of the last point; the rest declined to the bracketed iteration (the first step
itself: test_mu_fast_u.py).

Every answer's side is checked against the independent 40-digit reference of
``tests/references.py`` (delta from Phi(a) - e^eps Phi(b) with mpmath.erfc, no code of
the package): delta_mu(eps) increases in mu, so ``y`` is above the exact root iff
log delta_y(eps) >= L.  Roots to compare with come from symgdp.gaussian.precise (a
40-digit mpmath bracketing solver, a second algorithm).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from references import ref_log_delta

from symgdp.gaussian import mu_fast, precise
from symgdp.gaussian import vectorised as g

EPS = [5e-324, 1e-300, 1e-12, 1e-6, 0.01, 0.3, 1.0, 10.0, 50.0, 709.78, 710.0, 1e3, 1e4,
       1e6]
LOGS = [-1e-300, -1e-30, -1e-17, -1e-16, -1e-8, -1e-3, -0.5, -0.6931471805599453, -0.7, -3.0,
        -11.5, -745.0, -1e3, -1e4, -1e5]
MUS = [1e-3, 0.05, 0.1, 0.5, 1.0, 3.0, 8.0, 8.5, 20.0, 50.0, 100.0]


def _boundary() -> tuple[np.ndarray, np.ndarray]:
    """eps tiny to huge (past the exp overflow at 709.78), log delta from -1e-300 to -1e5
    (delta near 1, subnormal and far below), and the log deltas of mu from 1e-3 to 100
    (the benchmark's 0.1 and 8 among them) at each eps."""
    pts = [(e, L) for e in EPS for L in LOGS]
    for e in EPS:
        for m in MUS:
            L = float(g.log_delta_mu(e, m, rounding="nearest"))
            if math.isfinite(L) and L < 0:
                pts.append((e, L))
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


def _side_ok(e: float, L: float, y: float, up: bool) -> bool | None:
    """Whether ``y`` is on its side of the exact root (None: the reference gave up)."""
    if y == 0.0:
        return not up  # 0 is below every root (delta > 0 for mu > 0)
    if math.isinf(y):
        return up
    try:
        v = ref_log_delta(e, y)
    except AssertionError:  # the reference's precision cap (mu within 1e-300 of 0)
        return None
    return bool(v >= L) if up else bool(v <= L)


def test_directed_side_on_the_boundary() -> None:
    e, L = _boundary()
    up = g.mu_gdp(e, log_delta=L)
    down = g.mu_gdp(e, log_delta=L, rounding="down")
    assert np.all(down <= up)
    checked = 0
    for i in range(e.size):
        for y, side in ((up[i], True), (down[i], False)):
            ok = _side_ok(float(e[i]), float(L[i]), float(y), side)
            assert ok is not False, (e[i], L[i], y, side)
            checked += ok is True
    assert checked >= 2 * e.size - 40  # the reference decides nearly all of them
    # the bracket is as narrow as documented where the answer is a normal float (about
    # 1e-14 relative, up to ~1e-11 where the error bound of log delta is pessimistic)
    normal = (down > 1e-300) & np.isfinite(up)
    assert np.max((up[normal] - down[normal]) / up[normal]) < 1e-10


def test_scalar_calls_are_directed_and_agree_with_arrays() -> None:
    e, L = _boundary()
    idx = range(0, e.size, 3)
    for r, side in (("up", True), ("down", False)):
        arr = g.mu_gdp(e, log_delta=L, rounding=r)
        for i in idx:
            y = g.mu_gdp(float(e[i]), log_delta=float(L[i]), rounding=r)
            assert type(y) is float
            assert _side_ok(float(e[i]), float(L[i]), y, side) is not False, (e[i], L[i], r)
            # both paths: the same point, up to the last ulps of NumPy's and libm's exp
            assert y == pytest.approx(arr[i], rel=1e-14, abs=1e-320), (e[i], L[i], r)


def test_nearest_and_bracket_against_40_digit_roots() -> None:
    # reference: symgdp.gaussian.precise.mu_gdp, a 40-digit mpmath root (bracketing)
    e, L = _boundary()
    near = g.mu_gdp(e, log_delta=L, rounding="nearest")
    up = g.mu_gdp(e, log_delta=L)
    down = g.mu_gdp(e, log_delta=L, rounding="down")
    for i in range(0, e.size, 9):
        if not (1e-300 < near[i] < 1e10):
            continue
        root = precise.mu_gdp(float(e[i]), log_delta=float(L[i]), dps=40)
        assert mpmath.mpf(float(down[i])) <= root <= mpmath.mpf(float(up[i])), (e[i], L[i])
        assert abs(mpmath.mpf(float(near[i])) / root - 1) < 1e-12, (e[i], L[i], near[i])


@pytest.mark.parametrize(("eps", "log_delta"), [
    (5e-324, -745.0),  # the start is subnormal: a step underflowed to mu = 0 once
    (5e-324, -1e5),  # the root underflows: 0 and the smallest subnormal bound it
    (1e-300, -700.0),
    (256.4, float(g.log_delta_mu(256.4, 5.555e-3))),  # |a| = 4.6e4: no first step
    (0.0009560576536717365, -9.337511800460792),  # a third evaluation (mu ~ sqrt(2 eps))
    (6.817080912297638e-07, -1.89e-321),  # three evaluations, then declined
    (1e4, -1e-300),  # delta within 1e-300 of 1
    (1e6, -0.5),
])
def test_hard_points_are_directed(eps: float, log_delta: float) -> None:
    for arr in (False, True):
        e = np.array([eps]) if arr else eps
        L = np.array([log_delta]) if arr else log_delta
        up = float(np.asarray(g.mu_gdp(e, log_delta=L)).ravel()[0])
        down = float(np.asarray(g.mu_gdp(e, log_delta=L, rounding="down")).ravel()[0])
        assert 0.0 <= down <= up
        for y, side in ((up, True), (down, False)):
            ok = _side_ok(eps, log_delta, y, side)
            if ok is None:  # a subnormal bound: compared with the mpmath root instead
                root = precise.mu_gdp(eps, log_delta=log_delta, dps=40)
                ok = mpmath.mpf(y) >= root if side else mpmath.mpf(y) <= root
            assert ok, (eps, log_delta, y, side)


def test_declined_points_get_the_directed_answer() -> None:
    # tiny mu far in the tail: the erfcx difference cancels (log delta in mpmath) and
    # the fast path declines some points to the bracketed iteration and its enclosure
    rng = np.random.default_rng(4)
    e = 10 ** rng.uniform(-8, 3, 4000)
    m = 10 ** rng.uniform(-4, -1, 4000)
    L = g.log_delta_mu(e, m)
    keep = np.isfinite(L) & (L < 0)
    e, L = e[keep], L[keep]
    with np.errstate(all="ignore"):
        _, declined = mu_fast._mu_fast_blocks(e, L, True)
    assert declined.size > 0
    pick = declined[:12]
    up = g.mu_gdp(e[pick], log_delta=L[pick])
    down = g.mu_gdp(e[pick], log_delta=L[pick], rounding="down")
    for j, i in enumerate(pick):
        assert _side_ok(float(e[i]), float(L[i]), float(up[j]), True) is not False
        assert _side_ok(float(e[i]), float(L[i]), float(down[j]), False) is not False


def test_first_step_uses_log_delta_at_the_start() -> None:
    # at the start log Phi(a) = L (the quantile), so log delta there is
    # L + log1p(-exp(-a^2/2 - log 2 - L) erfcx(-b/sqrt2)); against the 40-digit reference
    # at the same float point (for the starts of lower bound 1, where the identity is used)
    rng = np.random.default_rng(2)
    e = rng.uniform(0.0, 50.0, 60)
    L = g.log_delta_mu(e, rng.uniform(0.1, 8.0, 60))
    x, lp = mu_fast._mu_start_fast(e, L)
    from scipy import special
    for i in range(e.size):
        a = 0.5 * x[i] - e[i] / x[i]
        R = math.exp(-0.5 * a * a - math.log(2) - lp[i]) * special.erfcx((x[i] - a) / math.sqrt(2))
        got = lp[i] + math.log1p(-R)
        ref = float(ref_log_delta(float(e[i]), float(x[i])))
        assert got == pytest.approx(ref, rel=1e-9, abs=1e-9), (e[i], L[i])


def test_benchmark_points_stay_on_the_fast_path() -> None:
    # the benchmark's distribution (eps ~ U[0, 50], mu ~ U[0.1, 8]): no point declined to
    # the bracketed iteration (which is about 50x slower per point); the answers within
    # 1e-12 of the mu the log deltas were computed at
    rng = np.random.default_rng(0)
    e = rng.uniform(0.0, 50.0, 20_000)
    m = rng.uniform(0.1, 8.0, 20_000)
    L = g.log_delta_mu(e, m, rounding="nearest")
    for up in (True, False, None):
        with np.errstate(all="ignore"):
            y, declined = mu_fast._mu_fast_blocks(e, L, up)
        assert declined.size == 0
        assert np.max(np.abs(y / m - 1)) < 1e-12


@pytest.mark.parametrize("eps", [709.0, 709.79, 720.0, 800.0, 5000.0])
def test_log_delta_head_past_the_exp_overflow(eps: float) -> None:
    # a = mu/2 - eps/mu slightly above 0 (the direct form's branch), delta just below 1/2:
    # past eps = 709.78 the direct form's expm1(eps) overflows and the complement form
    # stays; the log delta of every rounding against the 40-digit reference, on its side
    for k in (1e-12, 1e-9, 1e-7):
        mu = math.sqrt(2.0 * eps) * (1.0 + k)
        ref = ref_log_delta(eps, mu)
        near = g.log_delta_mu(np.array([eps]), np.array([mu]), rounding="nearest")[0]
        # (documented: about 1e-14 relative, the exponent's error growing ~1e-17 eps)
        assert abs(near - float(ref)) <= 1e-14 * abs(float(ref)) + 1e-17 * eps, (eps, mu)
        assert g.log_delta_mu(eps, mu) >= ref >= g.log_delta_mu(eps, mu, rounding="down")
        assert float(mpmath.exp(ref)) < 0.5  # the branch the test is about
