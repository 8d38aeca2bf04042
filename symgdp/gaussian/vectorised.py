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

import math
from typing import Any, cast

import numpy as np
from scipy import special

from symgdp.contracts import Rounding
from symgdp.errors import ConvergenceError, DomainError, PrecisionError
from symgdp.gaussian.core import (  # noqa: F401 (re-exported names of the family's core)
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
    _check_nonneg,
    _finish,
    _half_a_squared,
    _log_delta_core,
    _prepare,
    _quiet,
    _rr_side,
    _scalar_first,
)
from symgdp.gaussian.mu_fast import (  # noqa: F401 (re-exported names of the fast path)
    _FAST_BLOCK,
    _mu_fast,
    _mu_fast_blocks,
    _mu_start_fast,
)
from symgdp.gaussian.scalar import (  # noqa: F401 (re-exported names of the family's core)
    _FAST_MORE,
    _FAST_STEP,
    _check_rounding,
    _delta_mu_scalar,
    _enclose,
    _eps_gdp_scalar,
    _log_delta_mu_scalar,
    _mp_root,
    _mu_gdp_scalar,
)

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




def _round_log(ld: np.ndarray, err: np.ndarray, up: bool) -> np.ndarray:
    """log delta values with float errors at most ``err`` moved to the safe side."""
    err = err + _SUB_SLACK  # a log within 1e-308 of 0 carries subnormal roundings
    # at a regular point the exact log is finite: a log that overflowed to -inf is below
    # -1.8e308 (the up side is the most negative float), an unbounded error leaves 0
    # (up) or -inf (down)
    ok = np.isfinite(err)
    if up:
        y = np.minimum(np.nextafter(ld + err, np.inf), 0.0)
        return np.where(np.isneginf(ld), -np.finfo(np.float64).max, np.where(ok, y, 0.0))
    return np.where(ok, np.nextafter(ld - err, -np.inf), -np.inf)


def _round_delta(v: np.ndarray, rel: np.ndarray, up: bool) -> np.ndarray:
    """delta values with relative error at most ``rel`` (and, once subnormal, an absolute
    error below one subnormal step) moved to the safe side, inside [0, 1]."""
    if up:
        y = np.nextafter(v * (1.0 + rel), np.inf)
        y = np.where(y < 1e-300, np.nextafter(y, np.inf), y)
        return np.minimum(y, 1.0)
    y = np.where(rel < 1.0, np.nextafter(v * (1.0 - rel), 0.0), 0.0)
    y = np.where(y < 1e-300, np.nextafter(y, 0.0), y)
    return np.maximum(y, 0.0)


@_scalar_first(_log_delta_mu_scalar)
def log_delta_mu(eps: Any, mu: Any, *, rounding: Rounding = "up") -> Any:
    r"""Natural logarithm of the GDP privacy profile :math:`\log\delta_\mu(\varepsilon)`.

    Finite wherever :math:`\delta_\mu(\varepsilon)` itself underflows float64, and accurate
    to about 1e-15 relative (see ``docs/benchmarks.md``).

    Rounding: :math:`\delta_\mu(\varepsilon)` is the :math:`\delta` of the guarantee
    "a :math:`\mu`-GDP mechanism is :math:`(\varepsilon, \delta)`-DP", so by default
    (``rounding="up"``) the float is never below the exact value at the given floats: the
    float evaluation is moved up by a bound on its error (the error model in
    :mod:`symgdp.gaussian.core`, 32 times the roundings of every step) and one ulp, and
    stays at most 0.  ``rounding="down"`` gives a lower bound (the safe side when
    :math:`\delta_\mu` is the curve another profile must stay below), ``"nearest"`` the
    plain float value (either side).  The distance from the exact value is about 1e-14
    relative, up to about 1e-11 where the error bound is pessimistic: near cancellations
    of the erfc form (:math:`\mu \ll 0.05`) and where the two terms of the direct form
    nearly cancel; for large :math:`\varepsilon` the exponent
    :math:`\varepsilon - x^2/2` carries an absolute error bound of about
    :math:`10^{-14}\varepsilon` (e.g. 7e-11 at :math:`\varepsilon = 5000, \mu = 100`).

    Args:
        eps: :math:`\varepsilon \ge 0` (float or array).
        mu: :math:`\mu \ge 0` (float or array), broadcast against ``eps``.
        rounding: ``"up"`` (default), ``"down"`` or ``"nearest"``.

    Returns:
        :math:`\log\delta_\mu(\varepsilon) \le 0`; ``-inf`` for :math:`\mu = 0` or
        :math:`\varepsilon = \infty`, ``0`` for :math:`\mu = \infty` (exact, whatever
        the rounding).

    Example:
        >>> round(log_delta_mu(100.0, 1.0), 6)
        -4960.254554
        >>> log_delta_mu(1.0, 1.0, rounding="down") < log_delta_mu(1.0, 1.0)
        True
    """
    up = _check_rounding(rounding)
    scalar, (e, m) = _prepare(eps, mu)
    _check_nonneg("eps", e)
    _check_nonneg("mu", m)
    out, reg = _edge_log_delta(e, m)
    if np.any(reg):
        if up is None:
            out[reg] = _log_delta_core(e[reg], m[reg])
        else:
            err = np.empty(int(np.count_nonzero(reg)))
            out[reg] = _round_log(_log_delta_core(e[reg], m[reg], err), err, up)
    return _finish(scalar, out)


@_scalar_first(_delta_mu_scalar)
def delta_mu(eps: Any, mu: Any, *, rounding: Rounding = "up") -> Any:
    r""":math:`\delta_\mu(\varepsilon)`, the GDP privacy profile (theory §3).

    Computed without cancellation or overflow; relative error about 1e-13 or better
    wherever the value is a normal float64. Deep in the tail (e.g.
    :math:`\delta_1(40) \approx 3.9\times10^{-343}`) it underflows: rounded up to a
    subnormal (two subnormal steps, ``1e-323``, cover the rounding of ``exp``), rounded
    down or to nearest to ``0.0``; use :func:`log_delta_mu` there.

    Rounding: as :func:`log_delta_mu`, by default (``rounding="up"``) never below the
    exact value at the given floats (the safe side for the :math:`\delta` of a
    guarantee) and at most 1; ``"down"`` gives a lower bound (at least 0), ``"nearest"``
    the plain float value.

    Example:
        >>> delta_mu(1.0, 1.0)  # doctest: +ELLIPSIS
        0.1269...
        >>> delta_mu(40.0, 1.0), delta_mu(40.0, 1.0, rounding="down")
        (1e-323, 0.0)
    """
    up = _check_rounding(rounding)
    scalar, (e, m) = _prepare(eps, mu)
    _check_nonneg("eps", e)
    _check_nonneg("mu", m)
    logd, reg = _edge_log_delta(e, m)
    out = np.array(np.exp(logd), dtype=np.float64)
    if np.any(reg):
        er, mr = e[reg], m[reg]
        err = None if up is None else np.empty(er.shape)
        ld = _log_delta_core(er, mr, err)
        if up is None:
            res = np.exp(ld)
        else:
            res = np.exp(_round_log(ld, cast(np.ndarray, err), up))
        rel = np.full(er.shape, 2.0 * _ULP)
        a = mr / 2.0 - er / mr
        b = -er / mr - mr / 2.0
        tail = a <= _A_SWITCH
        if np.any(tail):
            et, mt, at, bt = er[tail], mr[tail], a[tail], b[tail]
            hi, lo = _half_a_squared(et, mt)
            e1 = special.erfcx(-at / _SQRT2)
            d = e1 - special.erfcx(-bt / _SQRT2)
            fine = (d * np.maximum(1.0, 0.5 * at * at) >= _CANCEL * e1) & (mt >= _MU_TINY)
            val = 0.5 * np.exp(-hi) * (1.0 - lo) * d
            if up is not None:
                # the double-double form only while every factor is a normal float; its
                # error: exp of an argument exact to ~u^2, two product roundings and the
                # erfcx difference as in the error model of the log (gaussian_core)
                fine &= val > 1e-300
                rel[tail] = np.where(fine, _ERR_C * _ULP * (
                    4.0 + (2.0 + np.minimum(-bt, (at - bt) / np.maximum(-at, 1e-300)))
                    * (2.0 * e1 - d) / d), rel[tail])
            res[tail] = np.where(fine, val, res[tail])
        if up is None:
            out[reg] = np.minimum(res, 1.0)
        else:
            out[reg] = _round_delta(res, rel, up)
    return _finish(scalar, out)


@_quiet
def dlog_delta_dmu(eps: Any, mu: Any) -> Any:
    r"""Derivative of the log-profile in the GDP parameter:
    :math:`\partial_\mu \log\delta_\mu(\varepsilon)
    = \varphi(\varepsilon/\mu - \mu/2)/\delta_\mu(\varepsilon)`."""
    scalar, (e, m) = _prepare(eps, mu)
    a = m / 2.0 - e / m
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_delta_mu(e, m, rounding="nearest"))
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
           rounding: Rounding = "up") -> Any:
    r"""The GDP transformation :math:`\mu_{GDP}(\varepsilon, \delta)`: the :math:`\mu` with
    :math:`\delta_\mu(\varepsilon) = \delta` (theory §4).

    Exactly one of ``delta`` and ``log_delta`` is given; ``log_delta`` reaches values of
    :math:`\delta` that underflow float64.  :math:`\delta = 0` gives ``0.0`` and
    :math:`\delta \ge 1` gives ``inf``; for :math:`\varepsilon = \infty` every
    :math:`\delta > 0` gives ``inf``.

    The root is found by series-reversion steps in :math:`\log\mu`
    (:mod:`~symgdp.gaussian.mu_fast`: the first one, of order five in
    :math:`\log(-\log\delta)`, without an evaluation of :math:`\log\delta`, then one
    evaluation, up to two more where its step is not yet small; speed in
    ``docs/benchmarks.md``); an
    element where that has not converged is solved by a bracketed Halley iteration,
    started from the largest of two rigorous lower bounds
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
    if bool(((L < 0) & (L > -np.inf) & (e > 0) & (e < np.inf)).all()):
        # every element regular, eps > 0 (the common case): no masks, no gathers
        return _finish(scalar, _mu_solve(e.ravel(), L.ravel(), up).reshape(e.shape))
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
    if up is not None and np.any(at0):
        out[at0] = _mu_round(e[at0], L[at0], out[at0], up)
    solve = reg & ~at0
    if np.any(solve):
        out[solve] = _mu_solve(e[solve], L[solve], up)
    return _finish(scalar, out)


def _mu_solve(e: np.ndarray, L: np.ndarray, up: bool | None) -> np.ndarray:
    """mu_gdp for regular eps > 0 and finite L < 0 (1-d): the fast path, and for the
    elements it declines the bracketed iteration, then the separate enclosure."""
    res, left = _mu_fast_blocks(e, L, up)
    if left.size:
        el, Ll = e[left], L[left]
        r = _mu_gdp_core(el, Ll)
        res[left] = r if up is None else _mu_round(el, Ll, r, up)
    return res


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
        y, bad = _enclose(xl, ld - Ll, g1, g2, err + 2.0 * _ULP * np.abs(Ll) + _SUB_SLACK, up,
                          True)
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
    return cast(np.ndarray, out)


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
    return cast(np.ndarray, np.where(L < -0.6931471805599453, special.ndtri_exp(L),
                                     -special.ndtri(-np.expm1(L))))


def _mu_start(e: np.ndarray, L: np.ndarray) -> np.ndarray:
    # Lower bound 1: Phi(mu/2 - eps/mu) = delta  <=>  mu = q + sqrt(q^2 + 2 eps).
    q = _quantile_of_log(L)
    r = np.sqrt(q * q + 2.0 * e)
    # q + r cancels when q << 0 (tiny delta); 2 eps / (r - q) is the same number, stably.
    mu_tail = np.where(q < 0, 2.0 * e / (r - q), q + r)
    # Lower bound 2: delta_mu(0) = erf(mu / (2 sqrt 2)) = delta.
    mu_head = _mu_at_eps_zero(L)
    return cast(np.ndarray, np.maximum(np.nan_to_num(mu_tail, nan=0.0), mu_head))


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
            rounding: Rounding = "up") -> Any:
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
            slack = err0 + 2.0 * _ULP * np.abs(Lr) + _SUB_SLACK
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
    E = err + 2.0 * _ULP * np.abs(L) + _SUB_SLACK
    y, bad = _enclose(x, L - ld, P, P - Q / m + P * P, E, up, False)
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


# sqrt(pi/2) with the float just above and the float two ulps below it
_C_RR = math.sqrt(math.pi / 2.0)
_C_RR_UP = math.nextafter(_C_RR, math.inf)
_C_RR_DOWN = math.nextafter(math.nextafter(_C_RR, 0.0), 0.0)
# the relative error of mu_from_pure_dp's float formulas in units of u (see there)
_RR_ERR = 32.0


def _outward_rel(x: np.ndarray, rel: Any, up: bool, lo: float = 0.0) -> np.ndarray:
    """``x`` with relative error at most ``rel`` (plus one subnormal step) moved to the safe
    side: up to +inf, down to ``lo`` at least.  inf, 0 (when exact) and NaN are kept by
    the callers."""
    if up:
        return cast(np.ndarray, np.nextafter(np.nextafter(x + np.abs(x) * rel, np.inf), np.inf))
    return cast(np.ndarray,
                np.maximum(np.nextafter(np.nextafter(x - np.abs(x) * rel, -np.inf), -np.inf), lo))


def _rr_outward(e: float, y0: float, up: bool) -> float:
    """The float GDP parameter ``y0`` of ``e``-DP moved outward until its side is proved."""
    rel = _RR_ERR * _ULP
    for _ in range(8):
        y = float(_outward_rel(np.float64(y0), rel, up))
        if _rr_side(e, y, up):
            return y
        rel *= 16.0
    raise PrecisionError(f"could not bound the GDP parameter of {e!r}-DP "
                         f"({'up' if up else 'down'}) near {y0!r}")


@_quiet
def mu_from_pure_dp(eps0: Any, *, rounding: Rounding = "up") -> Any:
    r"""GDP parameter of any :math:`\varepsilon_0`-DP mechanism:
    :math:`\mu = -2\Phi^{-1}(1/(1 + e^{\varepsilon_0}))` (tight for randomized response;
    Dong, Roth & Su 2021, and theory §3).

    Computed as :math:`-2\Phi^{-1}` of :math:`\exp(-\operatorname{softplus}(\varepsilon_0))`
    in log space, so it stays exact for large :math:`\varepsilon_0`; below
    :math:`\varepsilon_0 = 1` as :math:`2\sqrt2\,\mathrm{erf}^{-1}(\tanh(\varepsilon_0/2))`,
    and below :math:`10^{-10}` (subnormals included) as :math:`\sqrt{\pi/2}\,\varepsilon_0`,
    which is above the exact value by a relative :math:`0.018\varepsilon_0^2` at most.

    Rounding: the :math:`\mu` of a guarantee, so by default (``rounding="up"``) never below
    the exact value at the given float: the float formulas (with one Newton step on
    :math:`\log\Phi` above :math:`\varepsilon_0 = 1`) are within a few u; the value is
    moved by 32 u and two ulps, about 1e-14 relative, and its side is then proved in ball
    arithmetic (arb), the move widened until it holds.  ``"down"`` gives a lower bound,
    ``"nearest"`` the plain float value.

    Example:
        >>> round(mu_from_pure_dp(0.2), 13)
        0.2504839050689
        >>> mu_from_pure_dp(5e-324) > 0   # the series: no underflow of eps0/2
        True
    """
    up = _check_rounding(rounding)
    scalar, (e,) = _prepare(eps0)
    _check_nonneg("eps0", e)
    with np.errstate(invalid="ignore"):
        log_p = -np.logaddexp(0.0, e)  # log(1/(1+e^eps0))
        # Near eps0 = 0 the quantile is close to 0 and ndtri_exp loses relative accuracy;
        # there 1 - 2p = tanh(eps0/2) and Phi^{-1}(p) = -sqrt2 erfinv(tanh(eps0/2)) is exact.
        out = np.where(e < 1.0, 2.0 * _SQRT2 * special.erfinv(np.tanh(0.5 * e)),
                       -2.0 * special.ndtri_exp(log_p))
    # series: mu = sqrt(pi/2) eps0 (1 - (1/12 - pi/48) eps0^2 + O(eps0^4)), so the linear
    # term is an upper bound and below 1e-10 within 2e-22 relative of mu
    big = e >= 1.0
    if np.any(big & np.isfinite(e)):
        # one Newton step on log Phi(z) = log p: scipy's ndtri_exp alone is off by up to
        # 3000 u beyond eps0 = 4000; after it, within a few u (log_ndtr is accurate)
        nb = big & np.isfinite(e)
        z, lp = out[nb] / -2.0, log_p[nb]
        lz = special.log_ndtr(z)
        z = z - (lz - lp) * np.exp(lz + 0.5 * z * z + _LOG_SQRT_2PI)
        out[nb] = np.where(np.isfinite(z), -2.0 * z, out[nb])
    # series: mu = sqrt(pi/2) eps0 (1 - (1/12 - pi/48) eps0^2 + O(eps0^4)), so the linear
    # term is an upper bound and below 1e-10 within 2e-22 relative of mu
    tiny = e < 1e-10
    c = _C_RR if up is None else (_C_RR_UP if up else _C_RR_DOWN)
    out = np.where(tiny, e * c, out)
    if up is not None:
        out = np.where(tiny & (out > 0), _outward_rel(out, 0.0, up), out)
        # elsewhere: moved outward by 32 u (the float formulas are within a few u), and
        # the side proved in ball arithmetic (gaussian_core._rr_side), widening if needed
        for i in np.flatnonzero(~tiny & np.isfinite(out) & (out > 0)):
            out.flat[i] = _rr_outward(float(e.flat[i]), float(out.flat[i]), up)
    return _finish(scalar, out)


@_quiet
def compose_gdp(*mus: Any, rounding: Rounding = "up") -> Any:
    r"""Composition of GDP guarantees: :math:`\sqrt{\sum_i \mu_i^2}`
    (Dong, Roth & Su 2021, Corollary 3.3).

    Rounding: the :math:`\mu` of a guarantee, so by default (``rounding="up"``) never below
    the exact value for the given floats (each of the :math:`n - 1` ``hypot`` steps is
    within an ulp, so the result is moved by :math:`2(n-1)` u and two ulps; one
    :math:`\mu` is returned as it is).  ``"down"`` gives a lower bound, ``"nearest"`` the
    plain float value.

    Example:
        >>> compose_gdp(3.0, 4.0, rounding="nearest")
        5.0
        >>> 5.0 <= compose_gdp(3.0, 4.0) <= 5.0 * (1 + 1e-15)
        True
    """
    if not mus:
        raise TypeError("compose_gdp needs at least one mu")
    up = _check_rounding(rounding)
    scalar, arrs = _prepare(*mus)
    for m in arrs:
        _check_nonneg("mu", m)
    # hypot never overflows in the squares (huge mu) and keeps full accuracy
    out = arrs[0]
    for m in arrs[1:]:
        out = np.hypot(out, m)
    out = np.asarray(out, dtype=np.float64)
    if up is not None and len(arrs) > 1:
        # exact where at most one mu is non-zero (hypot(x, 0) = x): keep 0 exact
        live = np.isfinite(out) & (out > 0)
        out = np.where(live, _outward_rel(out, 2.0 * (len(arrs) - 1) * _ULP, up), out)
    return _finish(scalar, out)


@_quiet
def tradeoff_gdp(alpha: Any, mu: Any, *, rounding: Rounding = "down") -> Any:
    r"""The GDP trade-off curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`.

    Rounding: :math:`G_\mu` is the curve a :math:`\mu`-GDP mechanism's type II errors stay
    above, a lower bound, so by default (``rounding="down"``) the float is never above
    the exact value at the given floats (and at least 0).  With :math:`z` the quantile
    and :math:`x = -z - \mu` the float error is at most
    :math:`32u\,(1 + (|x| + 1.6)(|z| + |x|))` relative (the quantile within a few u of
    :math:`|z|`, :math:`\varphi(x)/\Phi(x) \le |x| + 1.6` turning an absolute error of
    :math:`x` into a relative one of :math:`\Phi(x)`), plus two subnormal steps.
    ``"up"`` gives an upper bound (at most 1), ``"nearest"`` the plain float value.
    :math:`\alpha \in \{0, 1\}` and :math:`\mu \in \{0, \infty\}` at those ends are exact.

    Example:
        >>> round(tradeoff_gdp(0.05, 0.0), 12)
        0.95
        >>> tradeoff_gdp(0.05, 1.0) <= tradeoff_gdp(0.05, 1.0, rounding="up")
        True
    """
    up = _check_rounding(rounding)
    scalar, (al, m) = _prepare(alpha, mu)
    _check_nonneg("mu", m)
    bad = (al < 0) | (al > 1)
    if np.any(bad):
        raise DomainError(f"alpha must lie in [0, 1], got {al[bad].flat[0]!r}")
    # Phi^{-1}(1 - alpha) = -Phi^{-1}(alpha) avoids rounding 1 - alpha
    with np.errstate(divide="ignore", invalid="ignore"):
        z = special.ndtri(al)
        x = -z - m
        out = special.ndtr(x)
        low = out < _TINY
        if np.any(low):
            # ndtr flushes a result below the normal range to 0 (from x^2/2 > 709.78);
            # exp(log_ndtr(x)) keeps it, to a relative ulp (x^2/2 + few) inside rel below
            out = np.where(low, np.exp(special.log_ndtr(x)), out)
        if up is not None:
            rel = _ERR_C * _ULP * (1.0 + (np.abs(x) + 1.6) * (np.abs(z) + np.abs(x)))
            if up:
                y = np.nextafter(out * (1.0 + rel) + 2 * 5e-324, np.inf)
                y = np.minimum(y, 1.0)
            else:
                y = np.where(rel < 1.0, out * (1.0 - rel) - 2 * 5e-324, 0.0)
                y = np.maximum(np.nextafter(y, -np.inf), 0.0)
            ends = (al == 0) | (al == 1)
            out = np.where(ends | ~np.isfinite(x), out, y)
    # mu = inf: G(0) = 1 by continuity in alpha at every finite mu, and 0 for alpha > 0.
    out = np.where(np.isinf(m), np.where(al > 0, 0.0, 1.0), out)
    out = np.where(np.isnan(al) | np.isnan(m), np.nan, out)
    return _finish(scalar, out)
