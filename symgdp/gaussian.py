r"""The Gaussian differential privacy (GDP) family in float64, vectorised.

Notation (theory §3–4; Dong, Roth & Su, "Gaussian Differential Privacy",
JRSS-B 2021, Corollary 2.13): a mechanism is :math:`\mu`-GDP iff it is
:math:`(\varepsilon, \delta_\mu(\varepsilon))`-DP for every :math:`\varepsilon \ge 0`, where

.. math::

    \delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2)
        - e^{\varepsilon}\,\Phi(-\varepsilon/\mu - \mu/2).

With :math:`a = -\varepsilon/\mu + \mu/2`, :math:`b = -\varepsilon/\mu - \mu/2` one has
:math:`b^2 - a^2 = 2\varepsilon`, hence the cancellation-free form

.. math::

    \delta_\mu(\varepsilon) = \tfrac12 e^{-a^2/2}
        \left[\operatorname{erfcx}(-a/\sqrt2) - \operatorname{erfcx}(-b/\sqrt2)\right],

which keeps :math:`\log\delta_\mu(\varepsilon)` finite far beyond float64 underflow
(:math:`\delta_1(100) \approx 6.1\times10^{-2155}`) and never forms :math:`e^{\varepsilon}`,
so nothing overflows at :math:`\varepsilon \ge 710`.

Conventions shared by every function here:

* Scalars in give Python floats out; arrays in give arrays out (NumPy broadcasting).
* NaN inputs propagate to NaN outputs, element by element; they never raise and never
  turn into a number.  Negative :math:`\varepsilon`, :math:`\mu` or :math:`\delta` and
  :math:`\delta > 1` are outside the domain and raise :class:`~symgdp.errors.DomainError`.
* :math:`\mu = 0` means "no information": :math:`\delta_0 \equiv 0`;
  :math:`\mu = \infty` means "no privacy": :math:`\delta_\infty \equiv 1`.
* :math:`\mu_{GDP}(\varepsilon, 0) = 0` and :math:`\mu_{GDP}(\varepsilon, \delta) = \infty`
  for :math:`\delta \ge 1` (theory §4).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import special

from .errors import ConvergenceError, DomainError

__all__ = [
    "log_delta_mu",
    "delta_mu",
    "mu_gdp",
    "eps_gdp",
    "mu_from_pure_dp",
    "compose_gdp",
    "tradeoff_gdp",
    "dlog_delta_dmu",
]

_SQRT2 = math.sqrt(2.0)
_LOG2 = math.log(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Beyond this value of a = mu/2 - eps/mu the erfcx form would add large numbers whose
# sum is close to 1; there the complement 1 - Phi(-a) - e^eps Phi(b) is used instead.
_A_SWITCH = 0.0
_MAX_ITER = 80
# Relative Halley step below which the next error is ~step**3: far below 1 ulp.
_CUBIC_DONE = 1e-6
# Below this mu (or past this erfcx cancellation) log delta is evaluated in mpmath.
_MU_TINY = 1e-100
_CANCEL = 1e-3
# |residual| below this many ulps of |log delta| is rounding noise.
_ULP = float(np.finfo(np.float64).eps)
_RESID_ULPS = 32.0 * _ULP
_SPLITTER = 134217729.0  # 2**27 + 1, Dekker's constant for an exact float64 split
# Error model of the float log-profile (used to round mu_gdp / eps_gdp / log_delta_mu /
# delta_mu to a safe side).  Every elementary step and every scipy special function used
# is accurate to a few ulps, and the arguments a, b carry absolute errors of about
# u |b| (b = a - mu); so the absolute error of log delta is at most _ERR_C u times
# 1 + a^2 + |log delta| + k * (the amplification of the subtraction it makes): the
# amplification is (e1 + e2)/(e1 - e2) for the erfcx form (e1, e2 its two erfcx values),
# (S + T)/(S - T) for the direct form and c/(1 - c) for log1p(-c); k is the relative
# error of the terms in u: 2 + min(|b|, mu/|a|) for erfcx (|d log erfcx(x)/dx| is at most
# min(1.13, 1/x)), 1 + b^2 for the normal tail Phi(b).  _ERR_C = 32 sits well above the
# errors measured against 50-digit mpmath (tests/test_conversions_safe.py).
_ERR_C = 32.0


def _quiet(fn: Any) -> Any:
    """Run ``fn`` with floating-point warnings off: every edge case is handled explicitly
    (and tested against references), so an intermediate inf/NaN in a discarded branch of
    ``np.where`` is not a reason to warn the user."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapper


def _scalar_first(fast: Any) -> Any:
    """Decorator: try the scalar fast path ``fast`` (same arguments) before ``fn``.

    ``fast`` returns a float, or None to decline (an array, an edge case, a rare regime):
    then the vectorised ``fn`` runs, so edge cases and errors are handled in one place.
    """

    def deco(fn: Any) -> Any:
        quiet = _quiet(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                out = fast(*args, **kwargs)
            except (ArithmeticError, ValueError, TypeError):
                out = None  # e.g. math.exp overflow: the vectorised path knows what to do
            return quiet(*args, **kwargs) if out is None else out

        return wrapper

    return deco


def _prepare(*args: Any) -> tuple[bool, list[np.ndarray]]:
    """Broadcast inputs to float64 arrays; report whether all of them were scalars."""
    scalar = all(np.ndim(x) == 0 for x in args)
    arrays = np.broadcast_arrays(*[np.asarray(x, dtype=np.float64) for x in args])
    return scalar, [np.array(a, dtype=np.float64) for a in arrays]


def _finish(scalar: bool, out: np.ndarray) -> Any:
    return float(out) if scalar else out


def _check_nonneg(name: str, x: np.ndarray) -> None:
    bad = x < 0  # NaN compares False and so passes through, as documented
    if np.any(bad):
        raise DomainError(f"{name} must be >= 0, got {x[bad].flat[0]!r}")


def _two_prod(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's error-free product: x*y == p + e exactly (barring over/underflow)."""
    p = x * y
    cx = _SPLITTER * x
    xh = cx - (cx - x)
    xl = x - xh
    cy = _SPLITTER * y
    yh = cy - (cy - y)
    yl = y - yh
    e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    return p, e


def _half_a_squared(eps: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a**2/2 as an unevaluated sum hi + lo, with a = mu/2 - eps/mu to ~2 ulp of a**2/2.

    exp(-a**2/2) amplifies the absolute error of its argument into a relative error of
    the result; near the float64 underflow a**2/2 is about 700, so a plain evaluation
    would cost ~1e-13 relative accuracy in delta.  The double-double evaluation removes it.
    """
    q = eps / mu
    p, pe = _two_prod(q, mu)
    q_lo = ((eps - p) - pe) / mu  # eps/mu == q + q_lo to about 1e-32 relative
    h = 0.5 * mu
    a = h - q
    # error of the subtraction h - q (Knuth's two-sum), then the discarded q_lo
    bb = a - h
    a_lo = (h - (a - bb)) + (-q - bb) - q_lo
    sq, sq_e = _two_prod(a, a)
    hi = 0.5 * sq
    lo = 0.5 * sq_e + a * a_lo
    return hi, lo


def _log_delta_core(eps: np.ndarray, mu: np.ndarray, err: np.ndarray | None = None
                    ) -> np.ndarray:
    """log delta_mu(eps) for finite eps >= 0, 0 < mu < inf (no NaN), as float64 array.

    With ``err`` (an array of the same shape) it is filled with a bound on the absolute
    float error of the result (see :func:`_err_model`).
    """
    a = mu / 2.0 - eps / mu
    b = -eps / mu - mu / 2.0
    out = np.empty_like(a)
    tail = a <= _A_SWITCH
    slow = mu < _MU_TINY
    if np.any(tail):
        at, bt = a[tail], b[tail]
        e1 = special.erfcx(-at / _SQRT2)
        d = e1 - special.erfcx(-bt / _SQRT2)
        out[tail] = -0.5 * at * at - _LOG2 + np.log(d)
        if err is not None:
            err[tail] = _ERR_C * _ULP * (
                1.0 + at * at + np.abs(out[tail])
                + (2.0 + np.minimum(-bt, (at - bt) / np.maximum(-at, 1e-300)))
                * (2.0 * e1 - d) / d)
        # For mu small against |a| the two erfcx values nearly coincide and their difference
        # loses log10(e1/d) digits.  Where that loss could reach ~1e-13 of |log delta|, those
        # (rare, mu << 0.05) elements are recomputed in mpmath instead.
        slow[tail] |= d * np.maximum(1.0, 0.5 * at * at) < _CANCEL * e1
    head = ~tail
    if np.any(head):
        ah, bh, eh = a[head], b[head], eps[head]
        # Here b < 0 < a, so Phi(a) - Phi(b) = (erf(a/sqrt2) + erf(-b/sqrt2))/2 is a sum of
        # positive terms: accurate even for tiny mu (delta ~ mu/sqrt(2 pi) at eps = 0).
        direct = 0.5 * (special.erf(ah / _SQRT2) + special.erf(-bh / _SQRT2)) \
            - np.expm1(eh) * special.ndtr(bh)
        # Near delta = 1 the complement 1 - delta = Phi(-a) + e^eps Phi(b) is the accurate one.
        comp = special.ndtr(-ah) + np.exp(eh + special.log_ndtr(bh))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[head] = np.where(direct < 0.5, np.log(direct), np.log1p(-comp))
            if err is not None:
                amp = np.where(direct < 0.5,
                               (direct + 2.0 * np.expm1(eh) * special.ndtr(bh)) / direct,
                               comp / (1.0 - comp))
                err[head] = _ERR_C * _ULP * ((1.0 + bh * bh) * amp + np.abs(out[head]))
    if np.any(slow):
        out[slow] = [_mp_log_delta(x, m) for x, m in zip(eps[slow], mu[slow], strict=True)]
        if err is not None:
            # mpmath at 20 digits from the exact floats, rounded once to float64 (4 u
            # covers both); the Mills-ratio form (a < -1e8) forms a**2 in float64
            asl = a[slow]
            err[slow] = np.where(asl < -1e8, _ERR_C * _ULP * (np.abs(out[slow]) + asl * asl),
                                 4.0 * _ULP * (np.abs(out[slow]) + 1.0))
    # Rounding can only matter when the true value is within an ulp of 0 or -inf:
    # never report log(delta) > 0, i.e. delta > 1.
    np.minimum(out, 0.0, out=out)
    return out


def _mp_log_delta(eps: float, mu: float) -> float:
    """log delta_mu(eps) through mpmath (which raises its precision against cancellation)."""
    from .precise import log_delta_mu as mp_log_delta_mu

    a = mu / 2.0 - eps / mu
    if a < -1e8:
        # delta = phi(a) mu / (a b) (1 + O(1/a^2)) (Mills ratio), exact to float64 here
        b = a - mu
        return -0.5 * a * a - _LOG_SQRT_2PI + math.log(mu) - math.log(-a) - math.log(-b)
    return float(mp_log_delta_mu(eps, mu, dps=20))


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
        direct = 0.5 * (float(_erf(a / _SQRT2)) + float(_erf(-b / _SQRT2))) \
            - math.expm1(e) * float(_ndtr(b))
        if direct < 0.5:
            out = math.log(direct)
        else:
            comp = float(_ndtr(-a)) + math.exp(e + float(_log_ndtr(b)))
            out = math.log1p(-comp)
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
        t = math.expm1(e) * float(_ndtr(b))
        direct = 0.5 * (float(_erf(a / _SQRT2)) + float(_erf(-b / _SQRT2))) - t
        if direct < 0.5:
            out = math.log(direct)
            amp = (1.0 + b * b) * (direct + 2.0 * t) / direct
        else:
            comp = float(_ndtr(-a)) + math.exp(e + float(_log_ndtr(b)))
            out = math.log1p(-comp)
            amp = (1.0 + b * b) * comp / (1.0 - comp)
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
    from . import precise

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


def _log_delta_mu_scalar(eps: Any, mu: Any) -> float | None:
    em = _regular_eps_mu(eps, mu)
    return None if em is None else _log_delta_scalar_core(*em)


def _delta_mu_scalar(eps: Any, mu: Any) -> float | None:
    em = _regular_eps_mu(eps, mu)
    if em is None:
        return None
    e, m = em
    ld = _log_delta_scalar_core(e, m)
    if ld is None:
        return None
    res = math.exp(ld)
    a = m / 2.0 - e / m
    if a <= _A_SWITCH:
        b = -e / m - m / 2.0
        hi, lo = _half_a_squared(e, m)
        e1 = float(_erfcx(-a / _SQRT2))
        d = e1 - float(_erfcx(-b / _SQRT2))
        res = 0.5 * math.exp(-hi) * (1.0 - lo) * d
    return min(res, 1.0)


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
                   rounding: str = "up") -> float | None:
    e = _plain(eps)
    L = _scalar_log_delta_input(delta, log_delta)
    if e is None or L is None or not 0.0 <= e < math.inf:
        return None
    up = _check_rounding(rounding)
    x = _mu_gdp_scalar_nearest(e, L)
    if x is None or up is None:
        return x
    return _mu_enclose_scalar(e, L, x, up)


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
    return _enclose_scalar(x, ld - L, g1, g2, err + 2.0 * _ULP * abs(L), up, True)


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
                    rounding: str = "up") -> float | None:
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
    slack = 0.0 if up is None else err0 + 2.0 * _ULP * abs(L)
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
    return _enclose_scalar(x, L - ld, P, P - Q / m + P * P, err + 2.0 * _ULP * abs(L), up,
                           False)


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


def _edge_log_delta(eps: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fill edge cases (NaN, mu in {0, inf}, eps = inf); return (out, mask of regular)."""
    out = np.full(eps.shape, np.nan)
    nan = np.isnan(eps) | np.isnan(mu)
    mu0 = ~nan & (mu == 0)
    muinf = ~nan & np.isinf(mu)
    epsinf = ~nan & np.isinf(eps) & ~muinf
    out[mu0 | epsinf] = -np.inf
    out[muinf & ~np.isinf(eps)] = 0.0
    out[muinf & np.isinf(eps)] = np.nan  # delta_inf(inf): no meaningful limit
    regular = ~(nan | mu0 | muinf | epsinf)
    return out, regular


@_scalar_first(_log_delta_mu_scalar)
def log_delta_mu(eps: Any, mu: Any) -> Any:
    r"""Natural logarithm of the GDP privacy profile :math:`\log\delta_\mu(\varepsilon)`.

    Finite wherever :math:`\delta_\mu(\varepsilon)` itself underflows float64, and accurate
    to about 1e-15 relative (see ``docs/benchmarks.md``).

    Args:
        eps: :math:`\varepsilon \ge 0` (float or array).
        mu: :math:`\mu \ge 0` (float or array), broadcast against ``eps``.

    Returns:
        :math:`\log\delta_\mu(\varepsilon) \le 0`; ``-inf`` for :math:`\mu = 0` or
        :math:`\varepsilon = \infty`, ``0`` for :math:`\mu = \infty`.

    Example:
        >>> round(log_delta_mu(100.0, 1.0), 6)
        -4960.254554
    """
    scalar, (e, m) = _prepare(eps, mu)
    _check_nonneg("eps", e)
    _check_nonneg("mu", m)
    out, reg = _edge_log_delta(e, m)
    if np.any(reg):
        out[reg] = _log_delta_core(e[reg], m[reg])
    return _finish(scalar, out)


@_scalar_first(_delta_mu_scalar)
def delta_mu(eps: Any, mu: Any) -> Any:
    r""":math:`\delta_\mu(\varepsilon)`, the GDP privacy profile (theory §3).

    Computed without cancellation or overflow; relative error about 1e-13 or better
    wherever the value is a normal float64. It underflows to ``0.0`` deep in the tail
    (e.g. :math:`\delta_1(40) \approx 3.9\times10^{-343}`): use :func:`log_delta_mu` there.

    Example:
        >>> delta_mu(1.0, 1.0)  # doctest: +ELLIPSIS
        0.1269...
    """
    scalar, (e, m) = _prepare(eps, mu)
    _check_nonneg("eps", e)
    _check_nonneg("mu", m)
    logd, reg = _edge_log_delta(e, m)
    out = np.array(np.exp(logd), dtype=np.float64)
    if np.any(reg):
        er, mr = e[reg], m[reg]
        res = np.exp(_log_delta_core(er, mr))
        a = mr / 2.0 - er / mr
        b = -er / mr - mr / 2.0
        tail = a <= _A_SWITCH
        if np.any(tail):
            et, mt, at, bt = er[tail], mr[tail], a[tail], b[tail]
            hi, lo = _half_a_squared(et, mt)
            e1 = special.erfcx(-at / _SQRT2)
            d = e1 - special.erfcx(-bt / _SQRT2)
            fine = (d * np.maximum(1.0, 0.5 * at * at) >= _CANCEL * e1) & (mt >= _MU_TINY)
            res[tail] = np.where(fine, 0.5 * np.exp(-hi) * (1.0 - lo) * d, res[tail])
        out[reg] = np.minimum(res, 1.0)
    return _finish(scalar, out)


@_quiet
def dlog_delta_dmu(eps: Any, mu: Any) -> Any:
    r"""Derivative of the log-profile in the GDP parameter:
    :math:`\partial_\mu \log\delta_\mu(\varepsilon)
    = \varphi(\varepsilon/\mu - \mu/2)/\delta_\mu(\varepsilon)`."""
    scalar, (e, m) = _prepare(eps, mu)
    a = m / 2.0 - e / m
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_delta_mu(e, m))
    return _finish(scalar, out)


def _log_delta_input(delta: Any, log_delta: Any) -> np.ndarray:
    if (delta is None) == (log_delta is None):
        raise TypeError("give exactly one of delta= and log_delta=")
    if delta is not None:
        d = np.asarray(delta, dtype=np.float64)
        bad = (d < 0) | (d > 1)
        if np.any(bad):
            raise DomainError(f"delta must lie in [0, 1], got {d[bad].flat[0]!r}")
        with np.errstate(divide="ignore"):
            return np.log(d)
    L = np.asarray(log_delta, dtype=np.float64)
    bad = L > 0
    if np.any(bad):
        raise DomainError(f"log_delta must be <= 0 (delta <= 1), got {L[bad].flat[0]!r}")
    return L


def _halley(
    x: np.ndarray,
    derivs: Any,
    lo: np.ndarray,
    hi: np.ndarray,
    what: str,
    log_var: bool,
    scale: np.ndarray,
) -> np.ndarray:
    """Vectorised, bracketed Halley iteration on the unconverged subset.

    ``derivs(idx, x_sub)`` returns ``(F, F1, F2)``: the residual and its first two
    derivatives with respect to ``x`` (or, with ``log_var``, with respect to ``log x``).
    ``F`` is increasing in ``x``; ``scale`` (the target log-delta) sets the rounding
    level of ``F`` below which the iteration stops.  Every evaluation tightens the
    bracket ``[lo, hi]``; a step that leaves it, a non-finite one, or one after which the
    residual did not halve is replaced by bisection, so the iteration cannot run away.
    Halley's method converges cubically, so once a relative step is below
    ``_CUBIC_DONE`` the error after it is far below float64 resolution.
    """
    idx = np.flatnonzero(np.ones(x.shape, dtype=bool))
    prev = np.full(x.shape, np.inf)  # |F| at the previous iterate, to detect stalling
    for _ in range(_MAX_ITER):
        if idx.size == 0:
            return x
        xi = x[idx]
        F, F1, F2 = derivs(idx, xi)
        if np.any(np.isnan(F)):
            raise ConvergenceError(f"{what}: NaN residual at x={xi[np.isnan(F)][0]!r}")
        exact = F == 0
        lo[idx] = np.where(F < 0, np.maximum(lo[idx], xi), lo[idx])
        hi[idx] = np.where(F > 0, np.minimum(hi[idx], xi), hi[idx])
        den = 2.0 * F1 * F1 - F * F2
        step = np.where(den > 0, -2.0 * F * F1 / den, -F / F1)
        step = np.clip(step, -2.0, 2.0) if log_var else step
        xn = xi * np.exp(step) if log_var else xi + step
        l, h = lo[idx], hi[idx]
        # in log mode x > 0: a purely relative step (an absolute floor would stop the
        # iteration at once for a subnormal-sized mu)
        rel = np.abs(xn - xi) / (xi if log_var else np.maximum(np.abs(xi), 1e-300))
        small = rel <= _CUBIC_DONE
        outside = ~np.isfinite(xn) | (xn <= l) | (xn >= h)
        # A tiny step that leaves the bracket is rounding noise at the root: stay put.
        xn = np.where(small & outside, xi, xn)
        # Bisect where the step leaves the bracket or the residual stopped shrinking (a
        # residual that is a staircase at the rounding level stalls Halley's method).
        stalled = np.abs(F) > 0.5 * prev[idx]
        bad = (outside | stalled) & ~small
        prev[idx] = np.abs(F)
        if np.any(bad):
            if log_var:
                mid = np.where(np.isinf(h), 4.0 * l, np.where(l > 0, np.sqrt(l * h), h / 4.0))
            else:
                mid = np.where(np.isinf(h), 2.0 * l + 1.0, 0.5 * (l + h))
            xn = np.where(bad, mid, xn)
        x[idx] = np.where(exact, xi, xn)
        # Done: exact zero, a cubically small step, a residual at the rounding level of
        # log(delta) (it cannot be improved on), or a bracket one ulp wide.
        done = (exact | small | (np.abs(F) <= _RESID_ULPS * np.abs(scale[idx]))
                | (np.isfinite(h) & ((h - l <= 4.0 * _ULP * np.abs(h))
                                     | ((h - l <= 1e-300) & (not log_var)))))
        idx = idx[~done]
    if idx.size:
        raise ConvergenceError(f"{what}: no convergence after {_MAX_ITER} steps "
                               f"(e.g. at x={x[idx[0]]!r})")
    return x


@_scalar_first(_mu_gdp_scalar)
def mu_gdp(eps: Any, delta: Any = None, *, log_delta: Any = None,
           rounding: str = "up") -> Any:
    r"""The GDP transformation :math:`\mu_{GDP}(\varepsilon, \delta)`: the :math:`\mu` with
    :math:`\delta_\mu(\varepsilon) = \delta` (theory §4).

    Exactly one of ``delta`` and ``log_delta`` is given; ``log_delta`` reaches values of
    :math:`\delta` that underflow float64.  :math:`\delta = 0` gives ``0.0`` and
    :math:`\delta \ge 1` gives ``inf``; for :math:`\varepsilon = \infty` every
    :math:`\delta > 0` gives ``inf``.

    The root is found by a bracketed Halley iteration on :math:`\log\delta_\mu(\varepsilon)`
    in :math:`\log\mu`, started from the largest of two rigorous lower bounds
    (:math:`\Phi(\mu/2 - \varepsilon/\mu) \ge \delta_\mu(\varepsilon)` and
    :math:`\delta_\mu(0) \ge \delta_\mu(\varepsilon)`); at :math:`\varepsilon = 0` the
    closed form :math:`2\sqrt2\,\mathrm{erf}^{-1}(\delta)` is used.  Relative accuracy is
    about 1e-14 (``docs/benchmarks.md``), also near :math:`\delta \to 1`: against a
    40-digit mpmath root of :math:`\delta_\mu(\varepsilon) = \delta` the error stays below
    4e-16 up to :math:`\delta = 1 - 10^{-15}` (and :math:`\log\delta = -10^{-30}`).

    Rounding: by default (``rounding="up"``) the float is never below the exact root for
    the given floats, the safe side for a privacy guarantee (an upper bound on a GDPT
    value, and so on :math:`\mu`).  ``rounding="down"`` gives a lower bound (the safe side
    for "which :math:`\mu`-GDP mechanisms are :math:`(\varepsilon,\delta)`-DP", e.g. for
    a noise calibration), ``"nearest"`` the plain float root (either side).  The side is
    reached by one more evaluation of :math:`\log\delta_\mu(\varepsilon)` at the root
    with a bound on its float error (see the module notes): the root is moved by that
    error over the slope, plus the second-order term, plus 4 u; where that expansion is
    not valid (or :math:`\mu` underflows) the root is solved in 25-digit mpmath instead.
    The extra distance from the root is about 1e-14 relative (up to 1e-12 where the
    erfcx form cancels, for :math:`\mu \ll 0.05`).  A subnormal answer is moved by
    whole subnormal steps (0 and the smallest subnormal are the bounds when the root
    underflows).

    Example:
        >>> round(mu_gdp(1.0, delta_mu(1.0, 0.5)), 12)
        0.5
    """
    up = _check_rounding(rounding)
    L = _log_delta_input(delta, log_delta)
    scalar, (e, L) = _prepare(eps, L)
    _check_nonneg("eps", e)
    out = np.full(e.shape, np.nan)
    nan = np.isnan(e) | np.isnan(L)
    zero = ~nan & np.isneginf(L)
    inf = ~nan & ~zero & ((L >= 0) | np.isinf(e))
    out[zero] = 0.0
    out[inf] = np.inf
    reg = ~(nan | zero | inf)
    at0 = reg & (e == 0)
    if np.any(at0):
        # delta_mu(0) = erf(mu / (2 sqrt 2)): invert in closed form.
        out[at0] = _mu_at_eps_zero(L[at0])
    solve = reg & ~at0
    if np.any(solve):
        out[solve] = _mu_gdp_core(e[solve], L[solve])
    if up is not None and np.any(reg):
        out[reg] = _mu_round(e[reg], L[reg], out[reg], up)
    return _finish(scalar, out)


def _mu_round(e: np.ndarray, L: np.ndarray, x: np.ndarray, up: bool) -> np.ndarray:
    """The float roots ``x`` moved to the safe side (see :func:`mu_gdp`)."""
    out = x.copy()
    live = (x > 0) & np.isfinite(x)
    if np.any(live):
        el, Ll, xl = e[live], L[live], x[live]
        err = np.empty(xl.shape)
        ld = _log_delta_core(el, xl, err)
        a = xl / 2.0 - el / xl
        g1 = np.exp(np.log(xl) - 0.5 * a * a - _LOG_SQRT_2PI - ld)
        g2 = g1 * (1.0 - a * (xl / 2.0 + el / xl) - g1)
        y, bad = _enclose(xl, ld - Ll, g1, g2, err + 2.0 * _ULP * np.abs(Ll), up, True)
        fix = np.flatnonzero(live)
        out[fix] = y
        live[fix[~bad]] = False  # what remains live is declined: solve in mpmath
    under = np.flatnonzero((x == 0) & np.isfinite(L))
    if under.size:
        # the float root underflowed: when log delta at the smallest subnormal is already
        # >= L (with its error bound), the root lies in [0, 5e-324] (delta increases in
        # mu) and needs no mpmath solve (which is slow that deep: e^-1e5 cancels 43,000
        # digits in Phi(mu/2) - Phi(-mu/2))
        t = np.full(under.size, 5e-324)
        err = np.empty(under.size)
        ld = _log_delta_core(e[under], t, err)
        below = ld - err >= L[under]
        out[under[below]] = 5e-324 if up else 0.0
        live[under[~below]] = True
    for i in np.flatnonzero(live):
        out[i] = _mp_root("mu", float(e[i]), float(L[i]), up)
    return out


def _mu_at_eps_zero(L: np.ndarray) -> np.ndarray:
    """mu with erf(mu / (2 sqrt 2)) = exp(L), accurate for delta near 0 and near 1."""
    d = np.exp(L)
    # erfinv(d) = d sqrt(pi)/2 (1 + O(d^2)): below 1e-10 the log form also covers underflow.
    # Near delta = 1: mu = 2 sqrt2 erfcinv(y) = -2 Phi^{-1}(y/2), y = 1 - delta, in logs.
    return np.where(d < 1e-10, np.exp(L + _LOG_SQRT_2PI),
                    np.where(d < 0.5, 2.0 * _SQRT2 * special.erfinv(d),
                             -2.0 * special.ndtri_exp(np.log(-np.expm1(L)) - _LOG2)))


def _quantile_of_log(L: np.ndarray) -> np.ndarray:
    """Phi^{-1}(exp(L)), accurate also when exp(L) is within an ulp of 1."""
    return np.where(L < -0.6931471805599453, special.ndtri_exp(L),
                    -special.ndtri(-np.expm1(L)))


def _mu_start(e: np.ndarray, L: np.ndarray) -> np.ndarray:
    # Lower bound 1: Phi(mu/2 - eps/mu) = delta  <=>  mu = q + sqrt(q^2 + 2 eps).
    q = _quantile_of_log(L)
    r = np.sqrt(q * q + 2.0 * e)
    # q + r cancels when q << 0 (tiny delta); 2 eps / (r - q) is the same number, stably.
    mu_tail = np.where(q < 0, 2.0 * e / (r - q), q + r)
    # Lower bound 2: delta_mu(0) = erf(mu / (2 sqrt 2)) = delta.
    mu_head = _mu_at_eps_zero(L)
    return np.maximum(np.nan_to_num(mu_tail, nan=0.0), mu_head)


def _mu_gdp_core(e: np.ndarray, L: np.ndarray) -> np.ndarray:
    x = _mu_start(e, L)
    # mu below the smallest positive float: the answer underflows to 0.
    live = x > 0
    if not np.all(live):
        out = np.zeros(x.shape)
        out[live] = _mu_gdp_core(e[live], L[live]) if np.any(live) else out[live]
        return out

    def derivs(idx: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, ...]:
        # F = log delta_mu(eps) - L as a function of s = log mu.  With
        # Q = d log delta/d mu = phi(a)/delta and d2/dmu2 = -a Q (1/2 + eps/mu^2) - Q^2:
        # g1 = mu Q and g2 = g1 (1 - a (mu/2 + eps/mu) - g1), formed in log space so that
        # neither Q nor Q^2 overflows when delta is far below the float64 range.
        ei = e[idx]
        ld = _log_delta_core(ei, m)
        a = m / 2.0 - ei / m
        g1 = np.exp(np.log(m) - 0.5 * a * a - _LOG_SQRT_2PI - ld)
        g2 = g1 * (1.0 - a * (m / 2.0 + ei / m) - g1)
        return ld - L[idx], g1, g2

    lo = x.copy()  # a rigorous lower bound (see _mu_start)
    hi = np.full(x.shape, np.inf)
    return _halley(x, derivs, lo, hi, "mu_gdp", log_var=True, scale=L)


@_scalar_first(_eps_gdp_scalar)
def eps_gdp(mu: Any, delta: Any = None, *, log_delta: Any = None,
            rounding: str = "up") -> Any:
    r"""The :math:`\varepsilon \ge 0` with :math:`\delta_\mu(\varepsilon) = \delta`
    (``0`` when :math:`\delta_\mu(0) \le \delta` already).

    No bracket is assumed, so large answers are fine: ``eps_gdp(30, 1e-5)`` is about 577.
    :math:`\delta = 0` gives ``inf`` for :math:`\mu > 0`; :math:`\mu = 0` gives ``0``.

    Rounding: by default (``rounding="up"``) never below the exact answer for the given
    floats (a larger :math:`\varepsilon` at the same :math:`\delta` is the safe side of a
    privacy statement); ``0`` is returned only when :math:`\delta_\mu(0) \le \delta`
    holds with the float error counted against it.  ``"down"`` gives a lower bound,
    ``"nearest"`` the plain float root.  The side is reached as in :func:`mu_gdp`: about
    1e-14 relative (plus about 1e-16 absolute near :math:`\varepsilon = 0`) from the
    exact answer.

    Example:
        >>> round(eps_gdp(1.0, delta_mu(2.0, 1.0)), 12)
        2.0
    """
    up = _check_rounding(rounding)
    L = _log_delta_input(delta, log_delta)
    scalar, (m, L) = _prepare(mu, L)
    _check_nonneg("mu", m)
    out = np.full(m.shape, np.nan)
    nan = np.isnan(m) | np.isnan(L)
    mu0 = ~nan & (m == 0)
    muinf = ~nan & ~mu0 & np.isinf(m)
    out[mu0] = 0.0
    out[muinf & (L >= 0)] = 0.0
    out[muinf & (L < 0)] = np.inf
    reg = ~(nan | mu0 | muinf)
    if np.any(reg):
        mr, Lr = m[reg], L[reg]
        res = np.zeros(mr.shape)
        # delta = 0 needs eps = inf; delta >= delta_mu(0) is met already at eps = 0.  The
        # comparison uses the same log-profile as the iteration, so both agree at the edge.
        zero_delta = np.isneginf(Lr)
        res[zero_delta] = np.inf
        err0 = np.empty(mr.shape)
        ld0 = _log_delta_core(np.zeros(mr.shape), mr, err0)
        solve = ~zero_delta & (Lr < ld0)
        if np.any(solve):
            res[solve] = _eps_gdp_core(mr[solve], Lr[solve])
        if up is not None:
            # rounded up, eps = 0 only where delta_mu(0) <= delta holds with the float
            # error counted against it; rounded down, 0 also within that error
            slack = err0 + 2.0 * _ULP * np.abs(Lr)
            cand = ~zero_delta & ((Lr < ld0 + slack) if up else (Lr < ld0 - slack))
            res[~zero_delta & ~cand] = 0.0
            if np.any(cand):
                res[cand] = _eps_round(mr[cand], Lr[cand], res[cand], up)
        out[reg] = res
    return _finish(scalar, out)


def _eps_round(m: np.ndarray, L: np.ndarray, x: np.ndarray, up: bool) -> np.ndarray:
    """The float roots ``x`` of eps_gdp moved to the safe side (see :func:`eps_gdp`)."""
    err = np.empty(x.shape)
    ld = _log_delta_core(x, m, err)
    a = m / 2.0 - x / m
    b = a - m
    P = np.exp(x + special.log_ndtr(b) - ld)
    Q = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - ld)
    y, bad = _enclose(x, L - ld, P, P - Q / m + P * P, err + 2.0 * _ULP * np.abs(L), up,
                      False)
    for i in np.flatnonzero(bad):
        y[i] = _mp_root("eps", float(m[i]), float(L[i]), up)
    return y


def _eps_gdp_core(m: np.ndarray, L: np.ndarray) -> np.ndarray:
    # Upper bound: Phi(mu/2 - eps/mu) = delta (delta_mu(eps) < Phi(a) for every eps).
    q = _quantile_of_log(L)
    x = np.maximum(m * (m / 2.0 - q), 0.0)

    def derivs(idx: np.ndarray, ei: np.ndarray) -> tuple[np.ndarray, ...]:
        # Residual taken as L - log delta so that it increases with eps:
        # d log delta/d eps = -P with P = e^eps Phi(b)/delta, and
        # d2 log delta/d eps2 = -P + phi(a)/(mu delta) - P^2.
        mi = m[idx]
        ld = _log_delta_core(ei, mi)
        a = mi / 2.0 - ei / mi
        b = a - mi
        P = np.exp(ei + special.log_ndtr(b) - ld)
        Q = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - ld)
        return L[idx] - ld, P, P - Q / mi + P * P

    lo = np.zeros(x.shape)
    hi = x * (1.0 + 1e-15) + 1e-300  # rigorous upper bound, nudged past rounding
    return _halley(x, derivs, lo, hi, "eps_gdp", log_var=False, scale=L)


@_quiet
def mu_from_pure_dp(eps0: Any) -> Any:
    r"""GDP parameter of any :math:`\varepsilon_0`-DP mechanism:
    :math:`\mu = -2\Phi^{-1}(1/(1 + e^{\varepsilon_0}))` (tight for randomized response;
    Dong, Roth & Su 2021, and theory §3).

    Computed as :math:`-2\Phi^{-1}` of :math:`\exp(-\operatorname{softplus}(\varepsilon_0))`
    in log space, so it stays exact for large :math:`\varepsilon_0`.

    Example:
        >>> round(mu_from_pure_dp(0.2), 13)
        0.2504839050689
    """
    scalar, (e,) = _prepare(eps0)
    _check_nonneg("eps0", e)
    with np.errstate(invalid="ignore"):
        log_p = -np.logaddexp(0.0, e)  # log(1/(1+e^eps0))
        # Near eps0 = 0 the quantile is close to 0 and ndtri_exp loses relative accuracy;
        # there 1 - 2p = tanh(eps0/2) and Phi^{-1}(p) = -sqrt2 erfinv(tanh(eps0/2)) is exact.
        out = np.where(e < 1.0, 2.0 * _SQRT2 * special.erfinv(np.tanh(0.5 * e)),
                       -2.0 * special.ndtri_exp(log_p))
    return _finish(scalar, out)


@_quiet
def compose_gdp(*mus: Any) -> Any:
    r"""Composition of GDP guarantees: :math:`\sqrt{\sum_i \mu_i^2}`
    (Dong, Roth & Su 2021, Corollary 3.3).

    Example:
        >>> compose_gdp(3.0, 4.0)
        5.0
    """
    if not mus:
        raise TypeError("compose_gdp needs at least one mu")
    scalar, arrs = _prepare(*mus)
    for m in arrs:
        _check_nonneg("mu", m)
    # hypot never overflows in the squares (huge mu) and keeps full accuracy
    out = arrs[0]
    for m in arrs[1:]:
        out = np.hypot(out, m)
    return _finish(scalar, np.asarray(out, dtype=np.float64))


@_quiet
def tradeoff_gdp(alpha: Any, mu: Any) -> Any:
    r"""The GDP trade-off curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`.

    Example:
        >>> round(tradeoff_gdp(0.05, 0.0), 12)
        0.95
    """
    scalar, (al, m) = _prepare(alpha, mu)
    _check_nonneg("mu", m)
    bad = (al < 0) | (al > 1)
    if np.any(bad):
        raise DomainError(f"alpha must lie in [0, 1], got {al[bad].flat[0]!r}")
    # Phi^{-1}(1 - alpha) = -Phi^{-1}(alpha) avoids rounding 1 - alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        out = special.ndtr(-special.ndtri(al) - m)
    # mu = inf: G(0) = 1 by continuity in alpha at every finite mu, and 0 for alpha > 0.
    out = np.where(np.isinf(m), np.where(al > 0, 0.0, 1.0), out)
    out = np.where(np.isnan(al) | np.isnan(m), np.nan, out)
    return _finish(scalar, out)
