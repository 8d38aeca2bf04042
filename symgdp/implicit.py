r"""Implicit privacy profiles: :math:`\log\delta(\varepsilon)` as the root of a trade-off equation.

A trade-off equation :math:`\sigma = f(\varepsilon, \delta)` that SymPy cannot solve for
:math:`\delta` still defines the profile implicitly: with :math:`t = \log\delta` and the
residual :math:`h(\varepsilon, t) = \sigma - f(\varepsilon, e^t)`, the profile is
:math:`e^{t(\varepsilon)}` where :math:`t(\varepsilon) \le 0` solves
:math:`h(\varepsilon, t) = 0`.  :class:`LogDeltaRoot` is that :math:`t(\varepsilon)` as a
SymPy function: ``lambdify`` evaluates it by a bracketed root search (float64 vectorised,
or mpmath at the working precision), always returning the bracket end on the "enough
noise" side so that :math:`\delta` is never understated, and its derivative is the
implicit one, :math:`-h_\varepsilon / h_t`.

Example:
    >>> import sympy
    >>> from symgdp.implicit import LogDeltaRoot
    >>> e, t = sympy.symbols("e t", real=True)
    >>> x = sympy.Symbol("x", positive=True)
    >>> f = sympy.lambdify(x, LogDeltaRoot(x, sympy.Lambda((e, t), t + e**2)))
    >>> round(f(3.0), 9)   # t = -e**2
    -9.0
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
import sympy

__all__ = ["LogDeltaRoot"]

# Search range for t = log(delta): beyond t = -_T_MAX the profile value is reported as
# e^{-_T_MAX}, a valid upper bound (no trade-off equation reaches it in practice).
_T_MAX = 1e300
_FLOAT_ITER = 80


def _root_side(h0: Any, hlo: Any) -> Any:
    """Sign with which the residual approaches t = 0 (delta = 1): the 'enough noise' side."""
    return np.sign(h0 - hlo)


def _log_delta_root_float(x: Any, h: Any) -> np.ndarray:
    r"""Vectorised :math:`t(\varepsilon)` with :math:`h(\varepsilon, t) = 0`, :math:`t \le 0`.

    The residual ``h`` is assumed monotone in :math:`t` (a trade-off equation: the noise
    needed falls as :math:`\delta` grows).  Where even :math:`\delta = 1` does not satisfy
    the equation, or ``h`` is undefined, the answer is 0 (:math:`\delta = 1`, always a
    valid bound); where every :math:`\delta \ge e^{-T}` does, it is :math:`-T`.
    """
    xs = np.atleast_1d(np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        def H(t: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.asarray(h(xs, t), dtype=np.float64), xs.shape)

        h0 = H(np.zeros_like(xs))
        hfar = H(np.full_like(xs, -_T_MAX))
        side = _root_side(h0, hfar)
        out = np.zeros_like(xs)
        ok = np.isfinite(h0) & (side != 0) & ~np.isnan(hfar)
        # enough noise already at delta = e^{-T}
        far = ok & (hfar * side >= 0)
        out[far] = -_T_MAX
        todo = ok & ~far & (h0 * side > 0)
        if np.any(todo):
            hi = np.zeros_like(xs)
            lo = np.full_like(xs, -1.0)
            # expand the bracket geometrically: -1, -4, -16, ... -T
            for _ in range(520):
                need = todo & (H(lo) * side > 0) & (lo > -_T_MAX)
                if not np.any(need):
                    break
                hi = np.where(need, lo, hi)
                lo = np.where(need, np.maximum(4.0 * lo, -_T_MAX), lo)
            for _ in range(_FLOAT_ITER):
                mid = 0.5 * (lo + hi)
                good = H(mid) * side > 0
                hi = np.where(todo & good, mid, hi)
                lo = np.where(todo & ~good, mid, lo)
            # hi always satisfies the equation side: an upper bound on log delta
            out[todo] = hi[todo]
    return out


def _log_delta_root_mp(x: Any, h: Any) -> mpmath.mpf:
    """The mpmath counterpart of :func:`_log_delta_root_float` at the working precision."""
    x = mpmath.mpf(x)
    try:
        h0 = h(x, mpmath.mpf(0))
        hfar = h(x, mpmath.mpf(-_T_MAX))
    except (ZeroDivisionError, ValueError):
        return mpmath.mpf(0)
    if isinstance(h0, mpmath.mpc) or isinstance(hfar, mpmath.mpc) or not mpmath.isfinite(h0):
        return mpmath.mpf(0)
    side = mpmath.sign(h0 - hfar)
    if side == 0:
        return mpmath.mpf(0)
    if hfar * side >= 0:
        return mpmath.mpf(-_T_MAX)
    if h0 * side <= 0:
        return mpmath.mpf(0)
    hi, lo = mpmath.mpf(0), mpmath.mpf(-1)
    while h(x, lo) * side > 0 and lo > -_T_MAX:
        hi, lo = lo, max(4 * lo, mpmath.mpf(-_T_MAX))
    # Illinois (safeguarded regula falsi): invariant side*h(lo) <= 0 < side*h(hi), so
    # hi -- the end returned -- always satisfies the equation's "enough noise" side.
    f_lo, f_hi = side * h(x, lo), side * h(x, hi)
    last = 0
    width = hi - lo
    for i in range(4 * mpmath.mp.prec + 100):
        if i % 3 == 2:
            # a bisection step every third iteration unless the bracket halved meanwhile
            if hi - lo > width / 2:
                m = (lo + hi) / 2
            else:
                m = None
            width = hi - lo
        else:
            m = None
        if m is None:
            den = f_hi - f_lo
            m = hi - f_hi * (hi - lo) / den if den != 0 else (lo + hi) / 2
            if not lo < m < hi:
                m = (lo + hi) / 2
        if m in (lo, hi):
            break
        fm = side * h(x, m)
        if fm > 0:
            hi, f_hi = m, fm
            if last == 1:
                f_lo /= 2
            last = 1
        else:
            lo, f_lo = m, fm
            if last == -1:
                f_hi /= 2
            last = -1
        if hi - lo <= mpmath.eps * 4 * abs(hi):
            break
    return hi


def _log_delta_root_impl(x: Any, h: Any) -> Any:
    if isinstance(x, (mpmath.mpf, mpmath.mpc)):
        return _log_delta_root_mp(x.real, h)
    scalar = np.ndim(x) == 0
    out = _log_delta_root_float(x, h)
    return float(out[0]) if scalar else out.reshape(np.shape(x))


class LogDeltaRoot(sympy.Function):
    r""":math:`\log\delta(\varepsilon)` defined implicitly by a trade-off equation.

    ``LogDeltaRoot(eps, Lambda((e, t), h))`` is the :math:`t \le 0` with
    :math:`h(\varepsilon, t) = 0`, where :math:`h` is the residual of
    :math:`\sigma = f(\varepsilon, \delta)` with :math:`\delta = e^t`.  It is what
    :meth:`~symgdp.profile.Profile.from_tradeoff` builds when SymPy cannot solve for :math:`\delta`.
    ``lambdify`` evaluates it by a bracketed bisection (float64, vectorised, or mpmath at
    the working precision; the bracket end on the "enough noise" side is returned, so the
    value never understates :math:`\delta`), and :meth:`fdiff` gives the implicit
    derivative :math:`-h_\varepsilon/h_t`, so refinement works on it too.
    """

    is_extended_real = True

    def _eval_is_extended_nonpositive(self) -> bool:
        return True

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        if argindex != 1:
            raise sympy.ArgumentIndexError(self, argindex)
        lam = self.args[1]
        e, t = lam.variables
        he, ht = sympy.diff(lam.expr, e), sympy.diff(lam.expr, t)
        return (-he / ht).xreplace({e: self.args[0], t: self})

    def _code(self, printer: Any) -> str:
        lam = self.args[1]
        e, t = lam.variables
        E, T = sympy.Symbol("_root_e"), sympy.Symbol("_root_t")
        body = printer._print(lam.expr.xreplace({e: E, t: T}))
        return (f"LogDeltaRoot({printer._print(self.args[0])}, "
                f"(lambda _root_e, _root_t: ({body})))")

    _numpycode = _scipycode = _mpmathcode = _pythoncode = _lambdacode = _code

    def _latex(self, printer: Any) -> str:
        lam = self.args[1]
        e, t = lam.variables
        T = sympy.Symbol("t", real=True)
        body = printer._print(lam.expr.xreplace({e: self.args[0], t: T}))
        return rf"\operatorname{{root}}_{{t \le 0}}\left\{{{body} = 0\right\}}"


LogDeltaRoot._imp_ = staticmethod(_log_delta_root_impl)

