"""The numeric core of the GDP family: log delta_mu in float64 with its error bound, the
enclosure of a float root by that bound, and the small array helpers of
:mod:`symgdp.gaussian.vectorised` (theory §3)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
from scipy import special

from symgdp.errors import DomainError

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
# absolute slack of eight subnormal steps: covers the roundings of a value that is itself
# subnormal (absorbed without effect by any normal value).  The error model above is
# relative, so a log delta within 1e-308 of 0 (delta within that of 1: the complement
# 1 - delta is subnormal and carries absolute, not relative, rounding errors) needs it.
_SUB_SLACK = 8 * 5e-324
# the smallest normal float64: below it scipy's ndtr may flush its result to 0
_TINY = 2.2250738585072014e-308

_F = TypeVar("_F", bound=Callable[..., Any])


def _quiet(fn: Any) -> Any:
    """Run ``fn`` with floating-point warnings off: every edge case is handled explicitly
    (and tested against references), so an intermediate inf/NaN in a discarded branch of
    ``np.where`` is not a reason to warn the user."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapper


def _scalar_first(fast: Callable[..., Any]) -> Callable[[_F], _F]:
    """Decorator: try the scalar fast path ``fast`` (same arguments) before ``fn``.

    ``fast`` returns a float, or None to decline (an array, an edge case, a rare regime):
    then the vectorised ``fn`` runs, so edge cases and errors are handled in one place.
    """

    def deco(fn: _F) -> _F:
        quiet = _quiet(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                out = fast(*args, **kwargs)
            except (ArithmeticError, ValueError, TypeError):
                out = None  # e.g. math.exp overflow: the vectorised path knows what to do
            return quiet(*args, **kwargs) if out is None else out

        return cast(_F, wrapper)

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


def two_prod(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _half_a_squared(eps: Any, mu: Any) -> tuple[Any, Any]:
    """a**2/2 as an unevaluated sum hi + lo, with a = mu/2 - eps/mu to ~2 ulp of a**2/2.

    exp(-a**2/2) amplifies the absolute error of its argument into a relative error of
    the result; near the float64 underflow a**2/2 is about 700, so a plain evaluation
    would cost ~1e-13 relative accuracy in delta.  The double-double evaluation removes it.
    """
    q = eps / mu
    p, pe = two_prod(q, mu)
    q_lo = ((eps - p) - pe) / mu  # eps/mu == q + q_lo to about 1e-32 relative
    h = 0.5 * mu
    a = h - q
    # error of the subtraction h - q (Knuth's two-sum), then the discarded q_lo
    bb = a - h
    a_lo = (h - (a - bb)) + (-q - bb) - q_lo
    sq, sq_e = two_prod(a, a)
    hi = 0.5 * sq
    lo = 0.5 * sq_e + a * a_lo
    return hi, lo


def _log_delta_core(eps: np.ndarray, mu: np.ndarray, err: np.ndarray | None = None
                    ) -> np.ndarray:
    """log delta_mu(eps) for finite eps >= 0, 0 < mu < inf (no NaN), as float64 array.

    With ``err`` (an array of the same shape) it is filled with a bound on the absolute
    float error of the result (see :func:`_err_model`).  Each branch is evaluated only on
    its own elements (and without indexing when one branch holds them all).
    """
    q = eps / mu
    a = mu / 2.0 - q
    b = -q - mu / 2.0
    tail = a <= _A_SWITCH
    n_tail = int(np.count_nonzero(tail))
    if n_tail == a.size:
        out, slow = _log_delta_tail(a, b, err)
        slow |= mu < _MU_TINY
    elif n_tail == 0:
        out = _log_delta_head(a, b, eps, err)
        slow = mu < _MU_TINY
    elif tail[:n_tail].all():
        # the tail elements come first (vectorised._mu_fast orders them so): each branch
        # on a slice, the same element-wise arithmetic without gathering and scattering
        out = np.empty_like(a)
        slow = mu < _MU_TINY
        out[:n_tail], slow_t = _log_delta_tail(
            a[:n_tail], b[:n_tail], None if err is None else err[:n_tail])
        slow[:n_tail] |= slow_t
        out[n_tail:] = _log_delta_head(a[n_tail:], b[n_tail:], eps[n_tail:],
                                       None if err is None else err[n_tail:])
    else:
        out = np.empty_like(a)
        slow = mu < _MU_TINY
        head = ~tail
        e_t = None if err is None else np.empty(n_tail)
        out[tail], slow_t = _log_delta_tail(a[tail], b[tail], e_t)
        slow[tail] |= slow_t
        e_h = None if err is None else np.empty(a.size - n_tail)
        out[head] = _log_delta_head(a[head], b[head], eps[head], e_h)
        if err is not None:
            err[tail] = e_t
            err[head] = e_h
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


def _log_delta_tail(at: np.ndarray, bt: np.ndarray, err: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The erfcx form of :func:`_log_delta_core` (a <= 0): (log delta, mask of the
    elements whose erfcx difference cancels too much, to be recomputed in mpmath)."""
    # e1 = erfcx(-a/sqrt2), d = e1 - erfcx(-b/sqrt2), out = -a^2/2 - log 2 + log d, each
    # operation in place where an array is free (the same roundings, fewer temporaries)
    e1 = np.divide(at, -_SQRT2)
    special.erfcx(e1, out=e1)
    d = np.divide(bt, -_SQRT2)
    special.erfcx(d, out=d)
    np.subtract(e1, d, out=d)
    a2 = at * at
    out = a2 * -0.5
    out -= _LOG2
    out += np.log(d)
    if err is not None:
        err[...] = _ERR_C * _ULP * (
            1.0 + a2 + np.abs(out)
            + (2.0 + np.minimum(-bt, (at - bt) / np.maximum(-at, 1e-300)))
            * (2.0 * e1 - d) / d)
    # For mu small against |a| the two erfcx values nearly coincide and their difference
    # loses log10(e1/d) digits.  Where that loss could reach ~1e-13 of |log delta|, those
    # (rare, mu << 0.05) elements are recomputed in mpmath instead.
    a2 *= 0.5
    np.maximum(a2, 1.0, out=a2)
    a2 *= d
    e1 *= _CANCEL
    return out, a2 < e1


def _log_delta_head(ah: np.ndarray, bh: np.ndarray, eh: np.ndarray, err: np.ndarray | None
                    ) -> np.ndarray:
    """The direct form of :func:`_log_delta_core` (a > 0), or near delta = 1 its
    complement."""
    # Where delta >= 1/2 (most elements with a > 0) the complement
    # 1 - delta = Phi(-a) + e^eps Phi(b) is the accurate form; it is formed first, and the
    # direct form only where the complement exceeds 1/2.  There b < 0 < a, so
    # Phi(a) - Phi(b) = (erf(a/sqrt2) + erf(-b/sqrt2))/2 is a sum of positive terms:
    # accurate even for tiny mu (delta ~ mu/sqrt(2 pi) at eps = 0).
    comp = np.negative(ah)
    special.ndtr(comp, out=comp)
    low = comp < _TINY
    if low.any():
        # ndtr flushes a result below the normal range to 0 (from a^2/2 > 709.78, where
        # Phi(-a) ~ 2.4e-310): an error of the whole term, outside the relative error model;
        # exp(log_ndtr(-a)) keeps it to a relative ulp (a^2/2 + few), within (1 + b^2) of it
        comp[low] = np.exp(special.log_ndtr(-ah[low]))
    v = special.log_ndtr(bh)
    v += eh
    np.exp(v, out=v)
    comp += v
    big = comp <= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        np.negative(comp, out=v)
        out = np.log1p(v)
        if err is not None:
            amp = comp / (1.0 - comp)
        if not np.all(big):
            small = ~big
            es, bs = eh[small], bh[small]
            t = np.expm1(es)
            u = special.ndtr(bs)
            low = u < _TINY
            if low.any():
                # (as Phi(-a) above: expm1(eps) reaches 1.8e308, so a flushed Phi(b) of
                # ~1e-310 would drop a term of ~0.01 from the direct form)
                u[low] = np.exp(special.log_ndtr(bs[low]))
            t *= u
            direct = np.divide(ah[small], _SQRT2)  # 0.5 (erf(a/sqrt2) + erf(-b/sqrt2)) - t
            special.erf(direct, out=direct)
            np.divide(bs, -_SQRT2, out=u)
            special.erf(u, out=u)
            direct += u
            direct *= 0.5
            direct -= t
            # past eps = 709.78 expm1 overflows: t is inf or NaN and direct is not positive;
            # there (delta near 1/2) the complement stays
            fine = direct > 0.0
            out[small] = np.where(fine, np.log(direct), out[small])
            if err is not None:
                amp[small] = np.where(fine, (direct + 2.0 * t) / direct, amp[small])
    if err is not None:
        err[...] = _ERR_C * _ULP * ((1.0 + bh * bh) * amp + np.abs(out))
    return out


def _mp_log_delta(eps: float, mu: float) -> float:
    """log delta_mu(eps) through mpmath (which raises its precision against cancellation)."""
    from symgdp.gaussian.precise import log_delta_mu as mp_log_delta_mu

    a = mu / 2.0 - eps / mu
    if a < -1e8:
        # delta = phi(a) mu / (a b) (1 + O(1/a^2)) (Mills ratio), exact to float64 here
        b = a - mu
        return -0.5 * a * a - _LOG_SQRT_2PI + math.log(mu) - math.log(-a) - math.log(-b)
    return float(mp_log_delta_mu(eps, mu, dps=20))




def _rr_side(e: float, y: float, up: bool) -> bool:
    r"""Prove in ball arithmetic that ``y`` is an upper (``up``) or a lower bound on the GDP
    parameter :math:`-2\Phi^{-1}(1/(1 + e^{e}))` of :math:`e`-DP.

    :math:`\Phi(-y/2)` decreases in ``y``, so ``y`` is an upper bound iff
    :math:`\Phi(-y/2) \le 1/(1 + e^{e})`.  Below ``e = 1`` this is compared as
    :math:`\mathrm{erf}(y/(2\sqrt2)) \ge \tanh(e/2)` (no cancellation near 1/2); above, in
    logs, with :math:`\mathrm{erfc}(x)` for :math:`x = y/(2\sqrt2) \ge 10^4` taken from the
    classical bounds :math:`(1 - 1/(2x^2)) e^{-x^2}/(x\sqrt\pi) < \mathrm{erfc}(x) <
    e^{-x^2}/(x\sqrt\pi)` (arb's erfc does not reach :math:`x = 10^{150}`).  False when the
    balls do not decide.
    """
    from flint import arb, ctx

    with ctx.workprec(160):
        x = arb(y) / (2 * arb(2).sqrt())
        if e < 1.0:
            lhs, rhs = -x.erf(), -(arb(e) / 2).tanh()  # increasing in Phi(-y/2)
        else:
            rhs = -(arb(e) + (-arb(e)).exp().log1p())  # log(1/(1 + e^e))
            if y < 2.0 * _SQRT2 * 1e4:
                lhs = (x.erfc() / 2).log()
            else:
                top = -x * x - (x * arb.pi().sqrt()).log() - arb(2).log()
                lhs = top if up else top + (-1 / (2 * x * x)).log1p()
        return bool(lhs <= rhs) if up else bool(lhs >= rhs)
