"""The scalar fast path of :mod:`symgdp.gaussian.vectorised`: the same functions for one
float, without NumPy's per-call overhead (the results agree with the array path; see its tests)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from symgdp.contracts import Rounding
from symgdp.errors import DomainError
from symgdp.gaussian.core import (
    _A_SWITCH,
    _CANCEL,
    _CUBIC_DONE,
    _ERR_C,
    _LOG2,
    _LOG_SQRT_2PI,
    _MAX_ITER,
    _MU_TINY,
    _RESID_ULPS,
    _SQRT2,
    _SUB_SLACK,
    _TINY,
    _ULP,
    _half_a_squared,
)

# -- scalar fast path ------------------------------------------------------------------------
# One Python float in, one out, with the same formulas and the same operation order as the
# vectorised code above (elementary functions from math, special functions from the same
# scipy.special ufuncs), so a scalar call costs microseconds instead of the ~0.3-2 ms of
# NumPy's per-call overhead.  Only the regular regime is handled here: NaN, 0 and infinite
# arguments, out-of-domain values and the rare mpmath regimes (mu < _MU_TINY, an erfcx
# cancellation, a failed iteration) decline with None and take the vectorised path.
_erf, _erfcx, _ndtr, _log_ndtr = special.erf, special.erfcx, special.ndtr, special.log_ndtr
_ndtri, _ndtri_exp, _erfinv = special.ndtri, special.ndtri_exp, special.erfinv


def _plain(x: Any) -> float | None:
    """``x`` as a float if it is a real scalar or a 0-d float array (not bool), else None."""
    t = type(x)
    if t is float or t is int or t is np.float64:
        return float(x)
    if t is np.ndarray and x.ndim == 0 and x.dtype.kind in "fi":
        return float(x)
    return None


def _ndtr_low(x: float) -> float:
    """Phi(x) for x < 0 as core._log_delta_head forms Phi(-a) and Phi(b): exp(log_ndtr(x))
    where ndtr's result is below the normal range (there it flushes to 0)."""
    p = float(_ndtr(x))
    return math.exp(float(_log_ndtr(x))) if p < _TINY else p


def _log_delta_scalar_core(e: float, m: float) -> float | None:
    """:func:`_log_delta_core` for one regular point, or None for the mpmath regimes."""
    if m < _MU_TINY:
        return None
    a = m / 2.0 - e / m
    b = -e / m - m / 2.0
    if a <= _A_SWITCH:
        e1 = float(_erfcx(-a / _SQRT2))
        d = e1 - float(_erfcx(-b / _SQRT2))
        if not d * max(1.0, 0.5 * a * a) >= _CANCEL * e1:
            return None
        out = -0.5 * a * a - _LOG2 + math.log(d)
    else:
        # as core._log_delta_head: the complement first, the direct form below 1/2
        comp = _ndtr_low(-a) + math.exp(float(_log_ndtr(b)) + e)
        out = math.log1p(-comp)
        if not comp <= 0.5:
            direct = 0.5 * (float(_erf(a / _SQRT2)) + float(_erf(-b / _SQRT2))) \
                - math.expm1(e) * _ndtr_low(b)
            if direct > 0.0:
                out = math.log(direct)
    if out != out:
        return None
    return min(out, 0.0)


def _log_delta_scalar_err(e: float, m: float) -> tuple[float, float] | None:
    """(log delta, bound on its float error) for one regular point, as in
    :func:`_log_delta_core` with ``err``; None for the mpmath regimes."""
    if m < _MU_TINY:
        return None
    a = m / 2.0 - e / m
    b = -e / m - m / 2.0
    if a <= _A_SWITCH:
        e1 = float(_erfcx(-a / _SQRT2))
        d = e1 - float(_erfcx(-b / _SQRT2))
        if not d * max(1.0, 0.5 * a * a) >= _CANCEL * e1:
            return None
        out = -0.5 * a * a - _LOG2 + math.log(d)
        amp = (2.0 + min(-b, (a - b) / max(-a, 1e-300))) * (2.0 * e1 - d) / d
        extra = 1.0 + a * a
    else:
        # as core._log_delta_head: the complement first, the direct form below 1/2
        comp = _ndtr_low(-a) + math.exp(float(_log_ndtr(b)) + e)
        out = math.log1p(-comp)
        amp = (1.0 + b * b) * (comp / (1.0 - comp))
        if not comp <= 0.5:
            t = math.expm1(e) * _ndtr_low(b)
            direct = 0.5 * (float(_erf(a / _SQRT2)) + float(_erf(-b / _SQRT2))) - t
            if direct > 0.0:
                out = math.log(direct)
                amp = (1.0 + b * b) * ((direct + 2.0 * t) / direct)
        extra = 0.0
    if not out == out or not amp == amp:
        return None
    out = min(out, 0.0)
    return out, _ERR_C * _ULP * (extra + abs(out) + amp)


def _enclose_scalar(x: float, F: float, F1: float, F2: float, E: float, up: bool,
                    log_var: bool) -> float | None:
    """The root of an increasing F next to ``x``, rounded up (``up``) or down.

    F(x) is known to within ``E``; F1, F2 are its first two derivatives at ``x`` (in
    log x with ``log_var``).  The true root lies within -(F -+ E)/F1 of ``x`` to first
    order; the second-order term |F2/F1| step**2 and a relative 1e-6 of the step (for the
    rounding of F1) are added outward, and the final product or sum is moved 4 u and one
    ulp outward.  None when the step is not small enough for that expansion (the caller
    then solves in mpmath).
    """
    Fs = F - E if up else F + E
    if not (F1 > 0 and math.isfinite(Fs)):
        return None
    step = -Fs / F1
    curv = abs(F2 / F1)
    if not (curv * abs(step) <= 1e-3 and (abs(step) <= 1e-3 or not log_var)):
        return None
    step += (curv * step * step + 1e-6 * abs(step)) * (1.0 if up else -1.0)
    if log_var:
        y = x * math.exp(step)
        return math.nextafter(y * (1.0 + 4.0 * _ULP), math.inf) if up else \
            math.nextafter(y * (1.0 - 4.0 * _ULP), 0.0)
    y = x + step
    if up:
        return math.nextafter(y + 4.0 * _ULP * abs(y), math.inf)
    return max(math.nextafter(y - 4.0 * _ULP * abs(y), -math.inf), 0.0)


def _enclose(x: np.ndarray, F: np.ndarray, F1: np.ndarray, F2: np.ndarray, E: np.ndarray,
             up: bool, log_var: bool) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`_enclose_scalar`: (rounded roots, mask of elements it declined)."""
    Fs = F - E if up else F + E
    step = -Fs / F1
    curv = np.abs(F2 / F1)
    ok = (F1 > 0) & np.isfinite(step) & (curv * np.abs(step) <= 1e-3)
    if log_var:
        ok &= np.abs(step) <= 1e-3
    step = np.where(ok, step, 0.0)
    step = step + (curv * step * step + 1e-6 * np.abs(step)) * (1.0 if up else -1.0)
    if log_var:
        y = x * np.exp(step)
        y = np.nextafter(y * (1.0 + 4.0 * _ULP), np.inf) if up else \
            np.nextafter(y * (1.0 - 4.0 * _ULP), 0.0)
    else:
        y = x + step
        y = np.nextafter(y + 4.0 * _ULP * np.abs(y), np.inf) if up else \
            np.maximum(np.nextafter(y - 4.0 * _ULP * np.abs(y), -np.inf), 0.0)
    return y, ~ok


def _mp_root(kind: str, p: float, L: float, up: bool) -> float:
    """mu_gdp (kind "mu", p = eps) or eps_gdp (kind "eps", p = mu) at log delta L in
    mpmath (25 digits), as a float moved one ulp outward."""
    from symgdp.gaussian import precise

    if kind == "mu":
        r = precise.mu_gdp(p, log_delta=L, dps=25)
    else:
        r = precise.eps_gdp(p, log_delta=L, dps=25)
    f = float(r)
    if up:
        return math.nextafter(f, math.inf)
    return max(math.nextafter(f, -math.inf), 0.0)


def _check_rounding(rounding: str) -> bool | None:
    """True for "up", False for "down", None for "nearest"."""
    if rounding == "up":
        return True
    if rounding == "down":
        return False
    if rounding == "nearest":
        return None
    raise DomainError(f"rounding must be 'up', 'down' or 'nearest', got {rounding!r}")


def _regular_eps_mu(eps: Any, mu: Any) -> tuple[float, float] | None:
    e, m = _plain(eps), _plain(mu)
    if e is None or m is None or not (0.0 <= e < math.inf and 0.0 < m < math.inf):
        return None
    return e, m


def _shift_log(ld: float, err: float, up: bool) -> float | None:
    """log delta ``ld`` with float error at most ``err`` moved to the safe side."""
    err += 8 * 5e-324  # a log within 1e-308 of 0 carries subnormal roundings
    if not (math.isfinite(ld) and math.isfinite(err)):
        return None  # the vectorised path decides
    if up:
        return min(math.nextafter(ld + err, math.inf), 0.0)
    return math.nextafter(ld - err, -math.inf)


def _log_delta_mu_scalar(eps: Any, mu: Any, *, rounding: Rounding = "up") -> float | None:
    em = _regular_eps_mu(eps, mu)
    if em is None:
        return None
    up = _check_rounding(rounding)
    if up is None:
        return _log_delta_scalar_core(*em)
    le = _log_delta_scalar_err(*em)
    return None if le is None else _shift_log(le[0], le[1], up)


def _outward(v: float, rel: float, up: bool) -> float:
    """``v`` with relative error at most ``rel`` (and, once subnormal, an absolute error
    below one subnormal step) moved to the safe side, inside [0, 1]."""
    if up:
        y = math.nextafter(v * (1.0 + rel), math.inf)
        if y < 1e-300:
            y = math.nextafter(y, math.inf)
        return min(y, 1.0)
    y = math.nextafter(v * (1.0 - rel), 0.0) if rel < 1.0 else 0.0
    if y < 1e-300:
        y = math.nextafter(y, 0.0)
    return max(y, 0.0)


def _delta_mu_scalar(eps: Any, mu: Any, *, rounding: Rounding = "up") -> float | None:
    em = _regular_eps_mu(eps, mu)
    if em is None:
        return None
    up = _check_rounding(rounding)
    e, m = em
    if up is None:
        ld = _log_delta_scalar_core(e, m)
        if ld is None:
            return None
    else:
        le = _log_delta_scalar_err(e, m)
        if le is None:
            return None
        ld, err = le
    lr = ld if up is None else _shift_log(ld, err, up)
    if lr is None:
        return None
    res = math.exp(lr)
    rel = 2.0 * _ULP
    a = m / 2.0 - e / m
    if a <= _A_SWITCH:
        b = -e / m - m / 2.0
        hi, lo = _half_a_squared(e, m)
        e1 = float(_erfcx(-a / _SQRT2))
        d = e1 - float(_erfcx(-b / _SQRT2))
        val = 0.5 * math.exp(-hi) * (1.0 - lo) * d
        if up is None:
            return min(val, 1.0)
        if val > 1e-300:  # the double-double form, while every factor is a normal float
            res = val
            # exp of an argument exact to ~u^2, the two roundings of the product, and
            # the erfcx difference as in the error model of the log (gaussian_core)
            rel = _ERR_C * _ULP * (4.0 + (2.0 + min(-b, (a - b) / max(-a, 1e-300)))
                                   * (2.0 * e1 - d) / d)
    if up is None:
        return min(res, 1.0)
    return _outward(res, rel, up)


def _scalar_log_delta_input(delta: Any, log_delta: Any) -> float | None:
    """log delta from exactly one of the two, if it is a plain scalar in range."""
    if (delta is None) == (log_delta is None):
        return None
    if delta is not None:
        d = _plain(delta)
        if d is None or not 0.0 < d < 1.0:
            return None
        return math.log(d)
    L = _plain(log_delta)
    if L is None or not -math.inf < L < 0.0:
        return None
    return L


def _mu_at_eps_zero_scalar(L: float) -> float:
    d = math.exp(L)
    if d < 1e-10:
        return math.exp(L + _LOG_SQRT_2PI)
    if d < 0.5:
        return 2.0 * _SQRT2 * float(_erfinv(d))
    return -2.0 * float(_ndtri_exp(math.log(-math.expm1(L)) - _LOG2))


def _quantile_of_log_scalar(L: float) -> float:
    if L < -0.6931471805599453:
        return float(_ndtri_exp(L))
    return -float(_ndtri(-math.expm1(L)))


def _halley_scalar(x: float, derivs: Any, lo: float, hi: float, log_var: bool,
                   scale: float) -> float | None:
    """:func:`_halley` for one element (None where the vectorised path must decide)."""
    prev = math.inf
    for _ in range(_MAX_ITER):
        F, F1, F2 = derivs(x)
        if F != F:
            return None
        exact = F == 0
        if F < 0:
            lo = max(lo, x)
        if F > 0:
            hi = min(hi, x)
        den = 2.0 * F1 * F1 - F * F2
        step = -2.0 * F * F1 / den if den > 0 else -F / F1
        if step != step:
            return None
        if log_var:
            step = min(max(step, -2.0), 2.0)
        xn = x * math.exp(step) if log_var else x + step
        # in log mode x > 0: a purely relative step (an absolute floor would stop the
        # iteration at once for a subnormal-sized mu)
        rel = abs(xn - x) / (x if log_var else max(abs(x), 1e-300))
        small = rel <= _CUBIC_DONE
        outside = not math.isfinite(xn) or xn <= lo or xn >= hi
        if small and outside:
            xn = x
        stalled = abs(F) > 0.5 * prev
        prev = abs(F)
        if (outside or stalled) and not small:
            if log_var:
                xn = 4.0 * lo if math.isinf(hi) else (math.sqrt(lo * hi) if lo > 0 else hi / 4.0)
            else:
                xn = 2.0 * lo + 1.0 if math.isinf(hi) else 0.5 * (lo + hi)
        if not exact:
            x = xn
        if (exact or small or abs(F) <= _RESID_ULPS * abs(scale)
                or (math.isfinite(hi) and (hi - lo <= 4.0 * _ULP * abs(hi)
                                           or (not log_var and hi - lo <= 1e-300)))):
            return x
    return None


def _mu_gdp_scalar(eps: Any, delta: Any = None, *, log_delta: Any = None,
                   rounding: Rounding = "up") -> float | None:
    e = _plain(eps)
    L = _scalar_log_delta_input(delta, log_delta)
    if e is None or L is None or not 0.0 <= e < math.inf:
        return None
    up = _check_rounding(rounding)
    if e > 0.0:
        # the fast path of the array code (vectorised._mu_fast), element by element
        return _mu_fast_scalar(e, L, up)
    x = _mu_gdp_scalar_nearest(e, L)
    if x is None or up is None:
        return x
    return _mu_enclose_scalar(e, L, x, up)


# as in mu_fast._mu_fast: evaluations after the first one where the last step is not yet
# below _FAST_STEP, and the largest last step taken (the first step, without evaluation, is
# of order 5 in u = log(-log delta): see _step_u)
_FAST_MORE = 2
_FAST_STEP = 1e-9
# an evaluated point is also not the last where the second-order term of its step, which
# the enclosure adds (|F''/F'| step^2, relative), is above _FAST_CURV: far in the tail
# (|F''/F'| ~ a^2) a step below _FAST_STEP can leave it above 1e-3 (the enclosure then
# declines) or well above an ulp (a wider bracket)
_FAST_CURV = 1e-17
# where a^2 + c^2 exceeds this the first step is left out: its derivatives (of size
# (a^2 + c^2)^n before they cancel to a few units) lose too many digits in float64
# (measured: from a^2 + c^2 ~ 1e10 the step is noise; the start there is already within
# about log(|b|/mu)/(|a| c) of the root)
_U_FAR = 2e7
# |a| beyond which log Phi(a) at the start is evaluated (log_ndtr) rather than taken as L:
# ndtri_exp's relative accuracy (~1e-9 of q at L = -1e9) moves log Phi(a) by q^2 1e-9
_A_FAR = 100.0


def _mu_fast_scalar(e: float, L: float, up: bool | None) -> float | None:
    """``mu_fast._mu_fast`` for one element (eps > 0), with the same formulas in the
    same order; None where that path would decline (or where a math function raises:
    the vectorised path then decides)."""
    q = float(_ndtri_exp(L))
    r = math.sqrt(q * q + 2.0 * e)
    x = 2.0 * e / (r - q) if q < 0 else q + r
    mu_head = math.exp(L + _LOG_SQRT_2PI) if L < -0.6931471805599453 else \
        -2.0 * float(_ndtri_exp(math.log(-math.expm1(L)) - _LOG2))
    lp = L
    if not x >= mu_head:
        x = mu_head
        lp = float(_log_ndtr(0.5 * x - e / x))
    if not 0.0 < x < math.inf:
        return None
    s = math.log(x)
    a = 0.5 * x - e / x
    if abs(a) > _A_FAR:
        lp = float(_log_ndtr(a))
    # the first step: log delta = log Phi(a) + log1p(-R) (mu_fast._mu_fast), in u
    R = math.exp(a * a * -0.5 - _LOG2 - lp) * float(_erfcx((x - a) / _SQRT2))
    d = 0.0
    c = x - a
    if R < 1.0 and a * a + c * c <= _U_FAR:
        w = 1.0 - R  # log1p(-R) as in mu_fast._mu_fast (Goldberg's form)
        ld = (-R if w - 1.0 == 0.0 else -(math.log(w) * R) / (w - 1.0)) + lp
        if ld < 0.0:
            g = math.exp(a * a * -0.5 + s - _LOG_SQRT_2PI - ld)
            d = _step_u(a, c, g, ld, math.log(L / ld))
    for _ in range(_FAST_MORE + 1):
        d = min(max(d, -2.0), 2.0) if d == d else 0.0
        s = s + d
        x = math.exp(s)
        if not 0.0 < x < math.inf:
            return None
        if up is not None:
            le = _log_delta_scalar_err(e, x)
            if le is None:
                return None
            ld, err = le
        else:
            core = _log_delta_scalar_core(e, x)
            if core is None:
                return None
            ld = core
        d, g, gh = _step4_scalar(L, s, x, 0.5 * x - e / x, ld)
        if not (math.isfinite(d)
                and (abs(d) > _FAST_STEP or abs(gh / g) * (d * d) > _FAST_CURV)):
            break
    if not (math.isfinite(d) and abs(d) <= _FAST_STEP):
        return None
    if up is None:
        return x * math.exp(d)
    return _enclose_scalar(x, ld - L, g, gh, err + 2.0 * _ULP * abs(L) + _SUB_SLACK, up,
                           True)


def _step_u(a: float, c: float, g: float, ld: float, t: float) -> float:
    """The step in s = log mu of order 5 (error ~ step^6) towards u(s) = u(s0) + t,
    u = log(-log delta), from s0 where a = mu/2 - eps/mu, c = mu/2 + eps/mu,
    log delta = ``ld`` < 0 and g = (log delta)' = exp(G - ld), G = log(mu phi(a)).
    ``mu_fast._step_u_arr`` is the same for arrays, the same operations in the same order.

    u is far closer to linear in s than log delta, where delta is small (u ~ log(a^2/2))
    as where it is near 1 (u ~ log(1 - delta)), so the first step of
    :func:`symgdp.gaussian.mu_fast._mu_fast` is taken in u.  The derivatives in closed form
    (a' = c, c' = a): G' = 1 - a c, G'' = -(a^2 + c^2), G''' = -4 a c,
    G'''' = -4 (a^2 + c^2); E = e^G = delta' has E^(n)/E = e_n = sum_(k<=n) C(n-1, k-1)
    G^(k) e_(n-k), so with rho_n = e_(n-1) the derivatives of log delta are g lambda_n,
    lambda_n = rho_n - g sum_(k<n) C(n-1, k-1) lambda_k rho_(n-k) (the derivatives of a
    log), and those of u are gamma mu_n, gamma = g/ld, mu_n = lambda_n - gamma
    sum_(k<n) C(n-1, k-1) mu_k lambda_(n-k) (the same rule).  With A_n = mu_n/n! and
    tt = t/gamma the series reversion is d = tt (1 + tt (-A2 + tt ((2 A2^2 - A3)
    + tt ((5 A2 A3 - 5 A2^3 - A4) + tt (6 A2 A4 + 3 A3^2 - 21 A2^2 A3 + 14 A2^4 - A5))))).
    tests/gaussian/test_mu_fast_u.py checks it against u from a 40-digit reference: run in
    mpmath arithmetic, its error falls 2^6 times when the step is halved.

    No step where u is already at its target (t = 0); else about t/u', u' = g/ld:

    >>> abs(_step_u(-1.0, 2.0, 1.5, -2.0, 0.0))
    0.0
    >>> round(_step_u(-1.0, 2.0, 1.5, -2.0, 1e-3) / (1e-3 / (1.5 / -2.0)), 4)
    1.0015
    """
    p = a * c
    q2 = a * a + c * c
    G1 = 1.0 - p
    G4 = q2 * -4.0
    G2 = -q2
    G3 = p * -4.0
    e2 = G2 + G1 * G1
    e3 = G3 + G1 * e2 + (G2 * 2.0) * G1
    e4 = G4 + G1 * e3 + (G2 * 3.0) * e2 + (G3 * 3.0) * G1
    L2, L3, L4, L5 = _log_rule(G1, e2, e3, e4, g)
    gam = g / ld
    M2, M3, M4, M5 = _log_rule(L2, L3, L4, L5, gam)
    A2 = M2 * 0.5
    A3 = M3 * (1.0 / 6.0)
    A4 = M4 * (1.0 / 24.0)
    A5 = M5 * (1.0 / 120.0)
    A22 = A2 * A2
    d = A2 * A4 * 6.0 + A3 * A3 * 3.0 - A22 * A3 * 21.0 + A22 * A22 * 14.0 - A5
    tt = t / gam
    d = d * tt + ((A3 - A22) * A2 * 5.0 - A4)
    d = d * tt + (A22 * 2.0 - A3)
    d = d * tt - A2
    return (d * tt + 1.0) * tt


def _log_rule(r1: float, r2: float, r3: float, r4: float, h: float
              ) -> tuple[float, float, float, float]:
    """The derivatives 2 to 5 of log f from those of f (the rule :func:`_step_u` applies
    twice): with h = f'/f and r_k = f^(k+1)/f' (k = 1..4), the o_k with
    (log f)^(k+1) = h o_k, o_k = r_k - h sum_(j<k) C(k, j) o_j r_(k-1-j) (o_0 = r_0 = 1).
    ``mu_fast._log_rule`` is the same for arrays.

    f = s at s = 1 (f' = f = 1, no higher derivatives): the derivatives of log s there,
    -1, 2, -6, 24:

    >>> _log_rule(0.0, 0.0, 0.0, 0.0, 1.0)
    (-1.0, 2.0, -6.0, 24.0)
    """
    o1 = r1 - h
    o2 = r2 - h * (r1 + o1 * 2.0)
    o3 = r3 - h * (r2 + (o1 * 3.0) * r1 + o2 * 3.0)
    o4 = r4 - h * (r3 + (o1 * 4.0) * r2 + (o2 * 6.0) * r1 + o3 * 4.0)
    return o1, o2, o3, o4


def _step4_scalar(L: float, s: float, x: float, a: float, ld: float
                  ) -> tuple[float, float, float]:
    """``vectorised._step4`` for one element, the same operations in the same order."""
    c = x - a
    p = a * c
    aa = a * a
    g = math.exp(aa * -0.5 + s - _LOG_SQRT_2PI - ld)
    h = 1.0 - p - g
    gh = g * h
    h1 = -(c * c + aa + gh)
    hh = h * h
    t = (L - ld) / g
    k = hh + h1
    d = k * 0.375 - hh * 0.625 - h1 * (1.0 / 12.0)
    d = d * h + p * (1.0 / 6.0) + k * g * (1.0 / 24.0)
    d = d * t + hh * 0.5 - k * (1.0 / 6.0)
    d = d * t - h * 0.5
    return (d * t + 1.0) * t, g, gh


def _mu_enclose_scalar(e: float, L: float, x: float, up: bool) -> float | None:
    """The float root ``x`` of log delta_x(e) = L moved to the safe side (None: decline)."""
    le = _log_delta_scalar_err(e, x)
    if le is None:
        return None
    ld, err = le
    a = x / 2.0 - e / x
    g1 = math.exp(math.log(x) - 0.5 * a * a - _LOG_SQRT_2PI - ld)
    g2 = g1 * (1.0 - a * (x / 2.0 + e / x) - g1)
    # 2 u |L| for the rounding of L = log(delta) when delta was given
    return _enclose_scalar(x, ld - L, g1, g2, err + 2.0 * _ULP * abs(L) + _SUB_SLACK, up,
                           True)


def _mu_gdp_scalar_nearest(e: float, L: float) -> float | None:
    if e == 0.0:
        return _mu_at_eps_zero_scalar(L)
    q = _quantile_of_log_scalar(L)
    r = math.sqrt(q * q + 2.0 * e)
    mu_tail = 2.0 * e / (r - q) if q < 0 else q + r
    x = max(0.0 if mu_tail != mu_tail else mu_tail, _mu_at_eps_zero_scalar(L))
    if not x > 0:
        return None

    def derivs(m: float) -> tuple[float, float, float]:
        ld = _log_delta_scalar_core(e, m)
        if ld is None:
            raise ArithmeticError("mpmath regime")
        a = m / 2.0 - e / m
        g1 = math.exp(math.log(m) - 0.5 * a * a - _LOG_SQRT_2PI - ld)
        g2 = g1 * (1.0 - a * (m / 2.0 + e / m) - g1)
        return ld - L, g1, g2

    return _halley_scalar(x, derivs, x, math.inf, True, L)


def _eps_gdp_scalar(mu: Any, delta: Any = None, *, log_delta: Any = None,
                    rounding: Rounding = "up") -> float | None:
    m = _plain(mu)
    L = _scalar_log_delta_input(delta, log_delta)
    if m is None or L is None or not 0.0 < m < math.inf:
        return None
    up = _check_rounding(rounding)
    le0 = _log_delta_scalar_err(0.0, m)
    if le0 is None:
        return None
    ld0, err0 = le0
    # eps = 0 is the answer when delta_mu(0) <= delta; rounded up, only when that holds
    # with the float error of log delta_mu(0) and of L counted against it
    slack = 0.0 if up is None else err0 + 2.0 * _ULP * abs(L) + _SUB_SLACK
    if up is not False and not L < ld0 + slack:
        return 0.0
    if up is False and not L < ld0 - slack:
        return 0.0
    x = 0.0 if not L < ld0 else _eps_gdp_scalar_nearest(m, L)
    if x is None or up is None:
        return x
    le = _log_delta_scalar_err(x, m)
    if le is None:
        return None
    ld, err = le
    a = m / 2.0 - x / m
    b = a - m
    P = math.exp(x + float(_log_ndtr(b)) - ld)
    Q = math.exp(-0.5 * a * a - _LOG_SQRT_2PI - ld)
    E = err + 2.0 * _ULP * abs(L) + _SUB_SLACK
    return _enclose_scalar(x, L - ld, P, P - Q / m + P * P, E, up, False)


def _eps_gdp_scalar_nearest(m: float, L: float) -> float | None:
    q = _quantile_of_log_scalar(L)
    x = max(m * (m / 2.0 - q), 0.0)

    def derivs(ei: float) -> tuple[float, float, float]:
        ld = _log_delta_scalar_core(ei, m)
        if ld is None:
            raise ArithmeticError("mpmath regime")
        a = m / 2.0 - ei / m
        b = a - m
        P = math.exp(ei + float(_log_ndtr(b)) - ld)
        Q = math.exp(-0.5 * a * a - _LOG_SQRT_2PI - ld)
        return L - ld, P, P - Q / m + P * P

    return _halley_scalar(x, derivs, 0.0, x * (1.0 + 1e-15) + 1e-300, False, L)


