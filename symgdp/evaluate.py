r"""Numeric evaluation of a privacy profile: float64 first, high precision where needed.

A :class:`~symgdp.profile.Profile` is a SymPy expression; this module turns it into numbers.
:class:`Evaluator` compiles the bound expression once with ``sympy.lambdify`` (SciPy/NumPy
for speed, mpmath for precision, ball arithmetic through :mod:`symgdp.interval` for proofs)
and evaluates :math:`\log\delta(\varepsilon)` in log space under the float-trust rules:

* A float64 value above ``_TINY`` is used as is, unless it is below ``_TINY_CANCEL`` and the
  branch that produced it subtracts nearly equal numbers (``_cancels``): such a value may
  have passed through subnormal intermediates and is recomputed in high precision.
* Where the plain value underflows, the log-expanded expression (``_log_expression``)
  is evaluated in float64; where that is not conclusive (or would cancel), mpmath at rising
  precision and ball arithmetic decide, and a value that cancels to 0 at every precision
  raises :class:`~symgdp.errors.PrecisionError` unless it is provably 0.
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

from .errors import PrecisionError, ProfileError
from .interval import ArbUnsupported, profile_arb

__all__ = ["Evaluator"]

# Rounding noise below zero that is read as an exact zero (e.g. 1 - exp(0) at a kink).
_NEG_TOL = 1e-14
# Below this a float64 value has lost relative precision (subnormal) or underflowed.
_TINY = 1e-290
# Below this a value computed by a cancelling float expression is not trusted.
_TINY_CANCEL = 1e-100
# Highest mpmath precision (decimal digits) tried before a cancelling value is refused.
_MP_MAX_DPS = 3840
# Below log delta = this, ball arithmetic is not used to resolve a value (see _arb_log).
_ARB_FLOOR = -1e9
_MODULES = ["scipy", "numpy"]


def _log_expression(expr: sympy.Expr) -> sympy.Expr:
    """log(expr) rewritten so that products and exponentials become sums (no underflow)."""
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(_log_expression(e), c) for e, c in expr.args])
    if expr.is_zero:
        return sympy.S.NegativeInfinity
    return sympy.expand_log(sympy.log(expr), force=True)


def _cancels(e: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether evaluating ``e`` in float may subtract nearly equal numbers.

    Looks through sums, products, powers, Max/Min and Piecewise branches for a sum with a
    negative term that depends on ``var`` (e.g. the erfc difference of the Gaussian
    profile); function arguments (exp, erfc, ...) are not inspected, since a cancellation
    there does not make the function value lose relative accuracy in the same way.
    """
    if var not in e.free_symbols:
        return False
    if isinstance(e, sympy.Add):
        if any(var in t.free_symbols and t.could_extract_minus_sign() for t in e.args):
            return True
        return any(_cancels(t, var) for t in e.args)
    if isinstance(e, (sympy.Mul, sympy.Max, sympy.Min)):
        return any(_cancels(a, var) for a in e.args)
    if isinstance(e, sympy.Pow):
        return _cancels(e.base, var)
    if isinstance(e, sympy.Piecewise):
        return any(_cancels(b, var) for b, _ in e.args)
    if isinstance(e, sympy.log):
        return _cancels(e.args[0], var)
    return False



def _zero_condition(expr: sympy.Expr) -> Any:
    """A SymPy condition under which ``expr`` is exactly 0 by its structure.

    Sufficient, not necessary: ``false`` means "not known to be zero".  Used to tell an
    exact zero of a profile (e.g. the Laplace profile beyond eps0) from a float underflow
    without a slow mpmath evaluation.
    """
    if expr.is_zero is True:
        return sympy.true
    if isinstance(expr, sympy.Max):
        if any(a.is_zero is True for a in expr.args):
            return sympy.And(*[a <= 0 for a in expr.args if a.is_zero is not True])
        return sympy.false
    if isinstance(expr, sympy.Min):
        # Min(a, b, ...) = 0 where one argument is structurally 0 and the others are >= 0
        conds = []
        for i, a in enumerate(expr.args):
            z = _zero_condition(a)
            if z is not sympy.false:
                others = [b >= 0 for j, b in enumerate(expr.args) if j != i]
                conds.append(sympy.And(z, *others))
        return sympy.Or(*conds) if conds else sympy.false
    if isinstance(expr, sympy.Piecewise):
        conds, seen = [], sympy.false
        for e, c in expr.args:
            z = _zero_condition(e)
            if z is not sympy.false:
                conds.append(sympy.And(c, sympy.Not(seen), z))
            seen = sympy.Or(seen, c)
        return sympy.Or(*conds) if conds else sympy.false
    if isinstance(expr, sympy.Mul):
        zs = [_zero_condition(f) for f in expr.args]
        zs = [z for z in zs if z is not sympy.false]
        return sympy.Or(*zs) if zs else sympy.false
    if isinstance(expr, sympy.Pow) and expr.exp.is_positive is True:
        return _zero_condition(expr.base)
    if isinstance(expr, sympy.Sum) and len(expr.limits) == 1:
        i, lo, hi = expr.limits[0]
        if lo.is_Integer and hi.is_Integer and 0 <= int(hi) - int(lo) <= 2000:
            zs = [_zero_condition(expr.function.xreplace({i: sympy.Integer(j)}))
                  for j in range(int(lo), int(hi) + 1)]
            return sympy.false if any(z is sympy.false for z in zs) else sympy.And(*zs)
        return sympy.false
    if isinstance(expr, sympy.Add):
        # a sum is structurally zero where every term is (the exact k-fold profile)
        zs = [_zero_condition(t) for t in expr.args]
        return sympy.false if any(z is sympy.false for z in zs) else sympy.And(*zs)
    return sympy.false



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

    def fn(self, kind: str) -> Any:
        """The compiled function of one kind: ``"numpy"`` (the expression in float64),
        ``"log"`` (its log-expanded form in float64) or ``"mpmath"``."""
        c = self._cache
        if kind not in c:
            self._profile.require_bound()
            bound = self._profile.bound_expr
            if kind == "mpmath":
                c[kind] = sympy.lambdify(self._var, bound, modules="mpmath")
            else:
                expr = bound if kind == "numpy" else _log_expression(bound)
                c[kind] = sympy.lambdify(self._var, expr, modules=_MODULES)
        return c[kind]

    def zero_mask(self, x: np.ndarray) -> np.ndarray:
        """Where the expression is structurally an exact zero (see ``_zero_condition``)."""
        c = self._cache
        if "zero" not in c:
            cond = _zero_condition(self._profile.bound_expr)
            c["zero"] = None if cond is sympy.false else sympy.lambdify(
                self._var, sympy.Piecewise((1, cond), (0, True)), modules=_MODULES)
        f = c["zero"]
        if f is None:
            return np.zeros(x.shape, dtype=bool)
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(x)), x.shape).astype(bool)

    def cancel_mask(self, x: np.ndarray) -> np.ndarray:
        """Where (per point) the float log-expression may subtract nearly equal numbers.

        For a Piecewise profile only the branch that holds at a point matters, so e.g. a
        refined profile whose head branch is a difference but whose tail is exp(-eps^2)
        keeps its fast float tail.
        """
        c = self._cache
        if "log_cancels" not in c:
            le = _log_expression(self._profile.bound_expr)
            if isinstance(le, sympy.Piecewise) and any(
                    _cancels(b, self._var) for b, _ in le.args):
                ind = sympy.Piecewise(*[(int(_cancels(b, self._var)), cond)
                                        for b, cond in le.args])
                c["log_cancels"] = sympy.lambdify(self._var, ind, modules=_MODULES)
            else:
                c["log_cancels"] = _cancels(le, self._var)
        f = c["log_cancels"]
        if isinstance(f, bool):
            return np.full(x.shape, f)
        with np.errstate(all="ignore"):
            r = np.broadcast_to(np.asarray(f(x), dtype=np.float64), x.shape)
        return ~(r == 0.0)  # NaN (no branch matched) counts as cancelling: the safe side

    def eval_float(self, x: np.ndarray, kind: str) -> np.ndarray:
        """The float64 values of :meth:`fn` ``(kind)`` at ``x`` (complex values refused)."""
        with np.errstate(all="ignore"):
            y = self.fn(kind)(x)
        y = np.asarray(y)
        if np.iscomplexobj(y):
            bad = np.abs(y.imag) > 0
            if np.any(bad):
                raise ProfileError(
                    f"the profile is complex at eps={x[bad].flat[0]!r}: {y[bad].flat[0]!r}")
            y = y.real
        return np.broadcast_to(np.asarray(y, dtype=np.float64), x.shape).copy()

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
            # is accepted from the point evaluation below; a positive value is not.
            if self.mp_log_points(e) == -np.inf:
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

    def arb_log(self, e: float) -> float | None:
        """log delta(e) from ball arithmetic, precision doubled until the enclosure of the
        log is 1e-15 relative (None when the expression has no ball version).

        Unlike a point evaluation, a ball shows a cancellation hidden inside Max/Min or a
        Piecewise (the enclosure stays wide), so a value is only returned once resolved.
        """
        try:
            f = profile_arb(self._profile)
        except (ArbUnsupported, ProfileError, TypeError, ValueError):
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
        try:
            v = profile_arb(self._profile)(e)
        except (ArbUnsupported, ProfileError, ArithmeticError, ValueError):
            return False
        return bool(v.is_exact() and v.is_zero())

    def check_sign(self, x: np.ndarray, y: np.ndarray) -> None:
        """Raise ProfileError at the first point where a float value is negative."""
        neg = y < -_NEG_TOL
        if np.any(neg):
            raise ProfileError(
                f"the profile is negative at eps={x[neg].flat[0]!r}: {y[neg].flat[0]!r}")

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
        y = self.eval_float(x, "numpy")
        self.check_sign(x, y)
        out = np.full(x.shape, np.nan)
        ok = np.isfinite(y) & (y > _TINY)
        # A branch that subtracts nearly equal numbers (e.g. the erfc difference of the
        # Gaussian profile) may have passed through subnormal intermediates long before its
        # value underflows: below _TINY_CANCEL such values are recomputed in high precision.
        small = ok & (y < _TINY_CANCEL)
        if np.any(small):
            ok[np.flatnonzero(small)[self.cancel_mask(x[small])]] = False
        out[ok] = np.log(np.minimum(y[ok], 1.0))
        out[np.isfinite(y) & (y > 1.0)] = 0.0
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
            ly = self.eval_float(xr, "log")
            good = np.isfinite(ly) & (ly <= 0)
            lr = np.where(good, ly, np.nan)
            # positive log with an underflowing plain value: contradictory, recheck in mpmath
            need = ~good
            if np.any(need):
                lr[need] = [self.mp_log(float(e)) for e in xr[need]]
            out[rest] = lr
        out = np.minimum(out, 0.0)
        return float(out[0]) if scalar else out.reshape(np.shape(eps))
