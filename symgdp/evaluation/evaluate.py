r"""Numeric evaluation of a privacy profile: float64 first, high precision where needed.

A :class:`~symgdp.profile.Profile` is a SymPy expression; this module turns it into numbers.
:class:`Evaluator` compiles the bound expression once with ``sympy.lambdify`` (SciPy/NumPy
for speed, mpmath for precision, ball arithmetic through :mod:`~symgdp.evaluation.interval`
for proofs) and evaluates :math:`\log\delta(\varepsilon)` in log space under the float-trust rules
(the analysis behind them is :mod:`symgdp.evaluation.trust`):

* Every float64 value comes with a bound on its error (``_ErrorBound``): each intermediate
  value -- terms, factors, function arguments and values, Piecewise conditions -- carries
  a bound propagated by condition numbers, subnormal or underflowed intermediates
  included, and a value is used only where the bound keeps :math:`\log\delta` within
  ``_LOG_ABS_TOL + _LOG_REL_TOL |log delta|`` (theory §10).  The float forms are compiled
  with constants folded and ``log1p``/``expm1`` rewrites (``_float_form``).
* In addition, a float64 value above ``_TINY`` is not used where it is below
  ``_TINY_CANCEL`` and may have cancelled: the branch that produced it subtracts values of
  the profile (such a value may rest on subnormal intermediates), or its exponent is a
  sum that is ill-conditioned at that point (``_SumCheck``).  Then it is recomputed.
  Where the expression has no error bound (a Sum, an implicit root), a normal value must
  also agree with the log-expanded expression.
* Where the plain value underflows, the log-expanded expression (``_log_expression``)
  is evaluated in float64, under the same rule; where that is not conclusive, mpmath at
  rising precision and ball arithmetic decide, and a value that cancels to 0 at every
  precision raises :class:`~symgdp.errors.PrecisionError` unless it is provably 0.
* A structural zero (``_zero_condition``, e.g. the Laplace profile beyond
  :math:`\varepsilon_0`) is an exact :math:`-\infty`; a negative value is a
  :class:`~symgdp.errors.ProfileError` naming the :math:`\varepsilon`.

Values above 1 are vacuous and read as 1, so :math:`\log\delta \le 0` everywhere.

Example:
    >>> import sympy
    >>> from symgdp import Profile, eps
    >>> ev = Evaluator(Profile(sympy.exp(-eps**2)))
    >>> float(ev.log_delta(40.0))
    -1600.0
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy
from flint import arb, ctx

from symgdp.contracts import FloatKind
from symgdp.errors import AnalysisTimeout, PrecisionError, ProfileError, UnboundParameterError
from symgdp.evaluation.interval import ArbUnsupported, profile_arb
from symgdp.evaluation.trust import (
    _LOG_ABS_TOL,
    _LOG_REL_TOL,
    _MODULES,
    _TINY,
    _ErrorBound,
    _float_form,
    _SumCheck,
    _Unsupported,
    _zero_condition,
)
from symgdp.gaussian.gdp_balls import erfc_form
from symgdp.symbolic.budget import OutOfTime, run_bounded, with_budget
from symgdp.symbolic.implicit import LogDeltaRoot

__all__ = ["Evaluator"]

# Rounding noise below zero that is read as an exact zero (e.g. 1 - exp(0) at a kink).
_NEG_TOL = 1e-14
# Below this a value computed by a cancelling float expression is not trusted.
_TINY_CANCEL = 1e-100
# Highest mpmath precision (decimal digits) tried before a cancelling value is refused.
_MP_MAX_DPS = 3840
# Below log delta = this, ball arithmetic is not used to resolve a value (see _arb_log).
_ARB_FLOOR = -1e9
# Symbolic preparation of an expression at most this large (sympy.count_ops, no Sum) runs
# in-process; larger ones run under the time budget of symgdp.symbolic.budget.
_SMALL_OPS = 300
#: the in-process budget of a small expression's rewriting (it takes milliseconds)
_SMALL_SECONDS = 2.0


def _prepare(fn: Any, expr: sympy.Expr, fallback: Any) -> Any:
    """``fn(expr)``, a symbolic rewriting, under the time budget unless ``expr`` is small.

    On timeout ``fallback()`` is used (built only then): an answer that is only slower to
    evaluate (the high-precision path), never a wrong one.
    """
    if not expr.has(sympy.Sum) and sympy.count_ops(expr) <= _SMALL_OPS:
        # small: in this process (no fork), still under a budget -- expand_log(force=True)
        # of log(tanh(1/2) (e^eps - e)/(1 - e)) runs without end in SymPy 1.14
        try:
            return with_budget(lambda: fn(expr), _SMALL_SECONDS)
        except OutOfTime:
            return fallback()
    try:
        return run_bounded(fn, expr)
    except AnalysisTimeout:
        return fallback()


def _log_expression(expr: sympy.Expr) -> sympy.Expr:
    """log(expr) rewritten so that products and exponentials become sums (no underflow)."""
    try:
        expr = sympy.piecewise_fold(expr)
    except RecursionError:
        # SymPy recurses without end on near-equal Float conditions (eps < 3.5 inside
        # eps < 3.50000000000000000000000000000000000077): kept unfolded, still exact
        pass
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(_log_expression(e), c) for e, c in expr.args])
    if expr.is_zero:
        return sympy.S.NegativeInfinity
    return sympy.expand_log(sympy.log(expr), force=True)


class Evaluator:
    """The numeric side of one bound profile, compiled lazily and cached.

    Args:
        profile: the profile to evaluate -- anything with ``bound_expr``, ``var``,
            ``values``, ``expr`` and ``require_bound()`` (a :class:`~symgdp.profile.Profile`).
    """

    __slots__ = ("_profile", "_var", "_cache")

    def __init__(self, profile: Any) -> None:
        self._profile = profile
        self._var = profile.var
        self._cache: dict[Any, Any] = {}

    def bound(self) -> sympy.Expr:
        """The bound expression as evaluated: ``1 - erf(u)`` written ``erfc(u)``
        (``erfc_form``, an exact identity without the cancellation)."""
        c = self._cache
        if "bound" not in c:
            self._profile.require_bound()
            c["bound"] = erfc_form(self._profile.bound_expr)
        return c["bound"]

    def fn(self, kind: FloatKind) -> Any:
        """The compiled function of one kind: ``"numpy"`` (the expression in float64),
        ``"log"`` (its log-expanded form in float64) or ``"mpmath"``."""
        c = self._cache
        if kind not in c:
            bound = self.bound()
            if kind == "mpmath":
                c[kind] = sympy.lambdify(self._var, bound, modules="mpmath")
            else:
                c[kind] = sympy.lambdify(self._var, self.float_form(kind), modules=_MODULES)
        return c[kind]

    def float_form(self, kind: FloatKind) -> sympy.Expr:
        """The expression compiled for float64 (``_float_form``): the bound expression
        (``"numpy"``) or its log-expression (``"log"``), computed once."""
        c = self._cache
        key = ("float_form", kind)
        if key not in c:
            expr = self.bound() if kind == "numpy" else self.log_expression()
            c[key] = _prepare(lambda e: _float_form(e, self._var), expr, lambda: expr)
        return c[key]

    def error_bound(self, kind: FloatKind) -> _ErrorBound | None:
        """The error analysis (``_ErrorBound``) of :meth:`float_form`, None where the
        expression has a node it does not know (the older checks then apply alone)."""
        c = self._cache
        key = ("error_bound", kind)
        if key not in c:
            try:
                c[key] = _ErrorBound(self.float_form(kind), self._var)
            except (_Unsupported, TypeError, ValueError, NotImplementedError):
                c[key] = None
        return c[key]

    def zero_mask(self, x: np.ndarray) -> np.ndarray:
        """Where the expression is structurally an exact zero (see ``_zero_condition``)."""
        c = self._cache
        if "zero" not in c:
            # not known to be zero (the fallback) only sends points to mpmath
            cond = _prepare(_zero_condition, self.bound(), lambda: sympy.false)
            c["zero"] = None if cond is sympy.false else sympy.lambdify(
                self._var, _float_form(sympy.Piecewise((1, cond), (0, True)), self._var),
                modules=_MODULES)
        f = c["zero"]
        if f is None:
            return np.zeros(x.shape, dtype=bool)
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(x)), x.shape).astype(bool)

    def log_expression(self) -> sympy.Expr:
        """The log-expanded bound expression (``_log_expression``), computed once."""
        c = self._cache
        if "log_expr" not in c:
            bound = self.bound()
            # unexpanded, log(expr) underflows with expr and sends those points to mpmath
            c["log_expr"] = _prepare(_log_expression, bound, lambda: sympy.log(bound))
        return c["log_expr"]

    def _cross_check(self) -> bool:
        """Whether normal float values are checked against the log-expression: not for
        implicit profiles (both routes are the same root search) nor when the plain
        log(expr) is all there is (its preparation timed out)."""
        c = self._cache
        if "cross" not in c:
            le = self.log_expression()
            c["cross"] = not (le.has(LogDeltaRoot)
                              or (isinstance(le, sympy.log)
                                  and le.args[0] == self.bound()))
        return c["cross"]

    def cancel_mask(self, x: np.ndarray, differences: bool = True) -> np.ndarray:
        """Where (per point) the float log-expression may subtract nearly equal numbers.

        Structurally, a sum with a negative term in ``eps`` may cancel (``_cancels``); per
        point, a difference of profile values is reported when ``differences`` is set, a
        sum of logarithms and exponents where it is ill-conditioned or has a tiny or
        non-finite term (``_SumCheck``).  For a Piecewise profile only the branch that
        holds at a point is judged, so e.g. a refined profile whose head branch is a
        difference but whose tail is exp(-eps^2) keeps its fast float tail.
        """
        c = self._cache
        if "log_cancels" not in c:
            # judged in the form that float64 evaluates (log1p/expm1 rewrites included)
            le = self.float_form("log")
            if isinstance(le, sympy.Piecewise):
                checks = [_SumCheck(b, self._var) for b, _ in le.args]
                which = sympy.lambdify(self._var, sympy.Piecewise(
                    *[(i, cond) for i, (_, cond) in enumerate(le.args)]), modules=_MODULES)
                c["log_cancels"] = (which, checks)
            else:
                c["log_cancels"] = (None, [_SumCheck(le, self._var)])
        which, checks = c["log_cancels"]
        if which is None:
            return checks[0](x, differences)
        with np.errstate(all="ignore"):
            branch = np.broadcast_to(np.asarray(which(x), dtype=np.float64), x.shape)
        out = ~np.isfinite(branch)  # no branch matched: counts as cancelling, the safe side
        for i, check in enumerate(checks):
            at = branch == i
            if np.any(at):
                out[at] = check(x[at], differences)
        return out

    def eval_float(self, x: np.ndarray, kind: FloatKind, *, with_error: bool = False) -> Any:
        """The float64 values of :meth:`fn` ``(kind)`` at ``x`` (complex values refused).

        With ``with_error``, a pair: the values and a per-point bound on their absolute
        float64 error (``_ErrorBound``), or None where the expression has no such bound.
        """
        bound = self.error_bound(kind) if with_error else None
        err = None
        with np.errstate(all="ignore"):
            try:
                if bound is not None:
                    y, err = bound(x)
                else:
                    y = self.fn(kind)(x)
            except OverflowError as exc:  # a Python int or constant beyond float64
                raise PrecisionError(
                    f"the profile cannot be evaluated in float64 ({exc}): a constant or "
                    "parameter of it lies beyond the float64 range") from exc
        y = np.asarray(y)
        if np.iscomplexobj(y):
            bad = np.abs(y.imag) > 0
            if np.any(bad):
                raise ProfileError(
                    f"the profile is complex at eps={x[bad].flat[0]!r}: {y[bad].flat[0]!r}")
            y = y.real
        y = np.asarray(y, dtype=np.float64)
        # a writable array of our own; a fresh result is not copied again (allocating
        # large arrays is costly)
        if not (y.shape == x.shape and y.base is None and y.flags.writeable
                and not np.may_share_memory(y, x)):
            y = np.broadcast_to(y, x.shape).copy()
        return (y, err) if with_error else y

    def mp(self, eps: Any, *, dps: int = 40) -> mpmath.mpf:
        r"""The profile at one point with mpmath at ``dps`` digits (values above 1 kept).

        At a pole or a 0/0 (``K/eps`` at 0, a division by zero) the value is taken just
        to the right, at :math:`\varepsilon + 2^{-p/2}` for a working precision of
        :math:`p` bits (a pole then reads as a huge, i.e. vacuous, value).
        """
        f = self.fn("mpmath")
        with mpmath.workdps(dps):
            x = mpmath.mpf(eps)
            try:
                v = f(x)
            except ZeroDivisionError:
                v = f(x + mpmath.ldexp(max(abs(x), mpmath.mpf(1)), -(mpmath.mp.prec // 2)))
            if isinstance(v, mpmath.mpc):
                if v.imag != 0:
                    raise ProfileError(f"the profile is complex at eps={eps!r}: {v}")
                v = v.real
            return +mpmath.mpf(v)

    def mp_log(self, e: float) -> float:
        """log delta(e) with mpmath, raising precision until two finite evaluations agree.

        A value of exactly 0 is not trusted as such (1 - (1 - e^{-eps})^3 cancels to 0 at
        any precision below ~eps/2.3 digits): it counts as an exact zero only when the
        expression is structurally 0 there or ball arithmetic proves it; otherwise the
        precision keeps rising and, past ``_MP_MAX_DPS`` digits, PrecisionError is raised
        rather than a wrong -inf returned.
        """
        try:
            via_arb = self.arb_log(e)
        except PrecisionError:
            # The ball never excluded 0: either an exact zero that arb cannot see as such
            # (e^x - e^x at a kink) or a cancellation beyond reach.  Only a provable zero
            # is accepted from the point evaluation below; a positive value is not.  The
            # point evaluation returns -inf only where exact_zero holds: without it, it
            # could only end in this PrecisionError, after mpmath work up to _MP_MAX_DPS
            # digits (seconds per point: (1 + erf(-x))/2 past x ~ 95 cancels at every
            # precision), or in a "negative" read from a value the balls could not tell
            # from 0.
            if self.exact_zero(e) and self.mp_log_points(e) == -np.inf:
                return -np.inf
            raise
        if via_arb is not None:
            return via_arb
        return self.mp_log_points(e)

    def mp_log_points(self, e: float) -> float:
        """log delta(e) from mpmath point evaluations at rising precision."""
        prev = None
        dps = 30
        while dps <= _MP_MAX_DPS:
            v = self.mp(e, dps=dps)
            if v < -_NEG_TOL:
                raise ProfileError(f"the profile is negative at eps={e!r}: {mpmath.nstr(v, 8)}")
            if v <= 0:
                if self.exact_zero(e):
                    return -np.inf
                prev = None
            else:
                with mpmath.workdps(dps):
                    cur = float(mpmath.log(v))
                if prev is not None and abs(cur - prev) <= 1e-13 * abs(cur):
                    return min(cur, 0.0)
                prev = cur
            dps *= 2
        raise PrecisionError(
            f"cannot resolve the profile at eps={e!r}: its value cancels to 0 even at "
            f"{_MP_MAX_DPS} digits and is not provably 0 (rewrite it without the "
            "cancellation, e.g. with expm1/log1p forms)")

    def _arb_fn(self) -> Any:
        """The ball-arithmetic version of the profile (None when it has none), compiled once."""
        c = self._cache
        if "arb" not in c:
            try:
                c["arb"] = profile_arb(self._profile)
            except (ArbUnsupported, ProfileError, TypeError, ValueError):
                c["arb"] = None
        return c["arb"]

    def arb_log(self, e: float) -> float | None:
        """log delta(e) from ball arithmetic, precision doubled until the enclosure of the
        log is 1e-15 relative (None when the expression has no ball version).

        Unlike a point evaluation, a ball shows a cancellation hidden inside Max/Min or a
        Piecewise (the enclosure stays wide), so a value is only returned once resolved.
        """
        f = self._arb_fn()
        if f is None:
            return None
        prec = 128
        while prec <= int(_MP_MAX_DPS * 3.33):
            with ctx.workprec(prec):
                try:
                    v = f(arb(e))
                except (ArbUnsupported, TypeError, ValueError, ZeroDivisionError):
                    return None
                if v.is_exact() and v.is_zero():
                    return -np.inf
                if v < 0:
                    raise ProfileError(f"the profile is negative at eps={e!r}: {v.str(8)}")
                if v > 0:
                    lv = v.log()
                    mid, rad = float(lv.mid()), float(lv.rad())
                    if math.isfinite(mid) and rad <= 1e-15 * abs(mid) + 1e-300:
                        return min(mid, 0.0)
                # Arb's balls lose their radius control at astronomically small magnitudes
                # (seen below exp(-1e15)); there the mpmath evaluation is used instead.
                up = float(arb(v.upper()).log().mid()) if v.upper() > 0 else -math.inf
                if up < _ARB_FLOOR:
                    return None
            prec *= 2
        raise PrecisionError(
            f"cannot resolve the profile at eps={e!r} even with {prec // 2} bits of ball "
            "arithmetic (a cancellation, possibly inside Max/Min or a Piecewise branch): "
            "rewrite it without the cancellation, e.g. with expm1/log1p forms")

    def exact_zero(self, e: float) -> bool:
        """The profile is provably exactly 0 at ``e`` (by structure or in ball arithmetic)."""
        if bool(self.zero_mask(np.array([e]))[0]):
            return True
        f = self._arb_fn()
        if f is None:
            return False
        try:
            v = f(e)
        except (ArbUnsupported, ProfileError, ArithmeticError, TypeError, ValueError):
            return False
        return bool(v.is_exact() and v.is_zero())

    def check_sign(self, x: np.ndarray, y: np.ndarray,
                   err: np.ndarray | None = None) -> dict[int, float]:
        """Re-check every point where a float value is negative, in ball arithmetic or
        mpmath at rising precision: a true negative value raises ProfileError; a float
        false alarm (a cancelling sum such as the erf form of the Gaussian profile,
        -4e-13 in float64 where the value is a tiny positive number) is returned as
        ``{index: log delta}`` for the caller to use instead of the float value.  With
        ``err`` (the values' error bounds, ``_ErrorBound``) a value within its error of 0
        is also re-checked."""
        neg = np.flatnonzero(y < -_NEG_TOL)
        fixed: dict[int, float] = {}
        for i in neg:
            e = float(x.flat[i])
            within = err is not None and not bool(y.flat[i] + err.flat[i] < 0)
            if not within and not bool(self.cancel_mask(np.array([e]))[0]):
                # no subtraction that float64 could have cancelled: the sign is trusted
                raise ProfileError(f"the profile is negative at eps={e!r}: {y.flat[i]!r}")
            fixed[int(i)] = self.mp_log(e)  # raises ProfileError if truly negative
        return fixed

    def delta(self, eps: Any) -> Any:
        r""":math:`\delta(\varepsilon)` in float64, read as 1 above 1 (vectorised)."""
        scalar = np.ndim(eps) == 0
        x = np.asarray(eps, dtype=np.float64)
        ld = self.log_delta(x)
        y = np.exp(ld)
        return float(y) if scalar else y

    def log_delta(self, eps: Any) -> Any:
        r""":math:`\log\delta(\varepsilon) \le 0` (vectorised), finite wherever
        :math:`\delta > 0` even when :math:`\delta` underflows float64."""
        scalar = np.ndim(eps) == 0
        x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        if np.any(np.isnan(x)):
            raise ProfileError("eps is NaN")
        if np.any(x < 0):
            raise ProfileError(f"a profile is defined for eps >= 0, got {x[x < 0][0]!r}")
        y, err = self.eval_float(x, "numpy", with_error=True)
        fixed = self.check_sign(x, y, err)
        out = np.full(x.shape, np.nan)
        if fixed:
            idx = np.fromiter(fixed, dtype=np.intp)
            y[idx] = np.nan  # not a float value to trust
            out[idx] = np.fromiter(fixed.values(), dtype=np.float64)
        ok = np.isfinite(y) & (y > _TINY)
        # A branch that subtracts nearly equal numbers (e.g. the erfc difference of the
        # Gaussian profile) may have passed through subnormal intermediates long before its
        # value underflows: below _TINY_CANCEL such values are recomputed in high precision.
        # At any magnitude, so are values whose exponent cancels (e.g. -a eps^2 + b eps, a
        # difference of huge numbers), judged by the error bound of that sum (cancel_mask).
        small = ok & (y < _TINY_CANCEL)
        if np.any(small):
            ok[np.flatnonzero(small)[self.cancel_mask(x[small])]] = False
        big = ok & ~small & (y <= 1.0)
        if np.any(big):
            idx = np.flatnonzero(big)
            doubt = self.cancel_mask(x[idx], differences=False)
            if err is None and self._cross_check():
                # A product may pass through a subnormal factor (eps^150 * e^-725) and
                # still come out normal: the log-expression, which never forms that
                # factor, must agree with the plain value, or the point is recomputed.
                ly = self.eval_float(x[idx], "log")
                doubt |= ~(np.abs(ly - np.log(y[idx]))
                           <= _LOG_ABS_TOL + _LOG_REL_TOL * np.abs(ly))
            ok[idx[doubt]] = False
        vacuous = np.isfinite(y) & (y > 1.0)
        if err is not None:
            # Every intermediate value's float64 error is bounded (_ErrorBound): a value is
            # trusted only where that bound keeps log delta within the tolerance, and read
            # as vacuous only where it is >= 1 up to that tolerance.
            with np.errstate(all="ignore"):
                logs = np.log(np.clip(y, _TINY, 1.0))  # (no slow log of 0 or subnormals)
                ok &= err <= y * (_LOG_ABS_TOL - _LOG_REL_TOL * logs)
                vacuous &= y - err >= math.exp(-_LOG_ABS_TOL)
            ok &= ~vacuous
            out[ok] = logs[ok]
        else:
            out[ok] = np.log(np.minimum(y[ok], 1.0))
        out[vacuous] = 0.0
        out[np.isposinf(y)] = 0.0  # +inf overflow of a vacuous expression reads as 1
        rest = np.isnan(out)
        zero = rest & (y == 0.0)
        if np.any(zero):
            # a branch that is structurally 0 (Max(f, 0) with f <= 0, a zero Piecewise case)
            # is an exact zero, not an underflow: log delta = -inf without mpmath
            z = self.zero_mask(x[zero])
            if np.any(z):
                idx = np.flatnonzero(zero)[z]
                out[idx] = -np.inf
                rest[idx] = False
        if np.any(rest):
            # the float log-expression would still subtract nearly equal tiny numbers
            # (e.g. the erfc difference of the Gaussian profile): use mpmath there
            idx = np.flatnonzero(rest)
            slow = idx[self.cancel_mask(x[idx])]
            if slow.size:
                out[slow] = [self.mp_log(float(e)) for e in x[slow]]
                rest[slow] = False
        if np.any(rest):
            xr = x[rest]
            ly, lerr = self.eval_float(xr, "log", with_error=True)
            good = np.isfinite(ly) & (ly <= 0)
            if lerr is not None:
                good &= lerr <= _LOG_ABS_TOL + _LOG_REL_TOL * np.abs(ly)
            lr = np.where(good, ly, np.nan)
            # positive log with an underflowing plain value: contradictory, recheck in mpmath
            need = ~good
            if np.any(need):
                lr[need] = [self.mp_log(float(e)) for e in xr[need]]
            out[rest] = lr
        out = np.minimum(out, 0.0)
        return float(out[0]) if scalar else out.reshape(np.shape(eps))


class _Bare:
    """A bound expression read the way :class:`Evaluator` reads a profile."""

    __slots__ = ("expr", "bound_expr", "var", "values")

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol) -> None:
        self.expr = self.bound_expr = expr
        self.var = var
        self.values: dict = {}

    def require_bound(self) -> None:
        free = self.expr.free_symbols - {self.var}
        if free:
            raise UnboundParameterError("numeric work needs values for: "
                                        + ", ".join(sorted(map(str, free))))


def evaluator_of(expr: sympy.Expr, var: sympy.Symbol) -> Evaluator:
    """An :class:`Evaluator` of a bare expression in ``var`` with no free parameter."""
    return Evaluator(_Bare(expr, var))
