r"""Numeric evaluation of a privacy profile: float64 first, high precision where needed.

A :class:`~symgdp.profile.Profile` is a SymPy expression; this module turns it into numbers.
:class:`Evaluator` compiles the bound expression once with ``sympy.lambdify`` (SciPy/NumPy
for speed, mpmath for precision, ball arithmetic through :mod:`symgdp.interval` for proofs)
and evaluates :math:`\log\delta(\varepsilon)` in log space under the float-trust rules:

* A float64 value above ``_TINY`` is used as is, unless it is below ``_TINY_CANCEL`` and may
  have cancelled: the branch that produced it subtracts values of the profile (such a
  value may rest on subnormal intermediates), or its exponent is a sum that is
  ill-conditioned at that point (``_SumCheck``).  Then it is recomputed.
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

from ._bounded import run_bounded
from .errors import AnalysisTimeout, PrecisionError, ProfileError
from .implicit import LogDeltaRoot
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
# A flagged sum whose terms' magnitudes add up to at most this multiple of its value loses
# at most 3 bits to cancellation in float64; its value is trusted (see _SumCheck).
_COND_MAX = 8.0
# Error bound per unit of sum_i |t_i| of a float64 sum of a few terms, each within a few
# ulps; and the accuracy asked of log delta (ten times finer than what the measurement
# assumes of float64 profile values).
_SUM_ERR = 16 * 2.0**-53
_LOG_ABS_TOL = 1e-14
_LOG_REL_TOL = 1e-13
# Symbolic preparation of an expression at most this large (sympy.count_ops, no Sum) runs
# in-process; larger ones run under the time budget of symgdp._bounded.
_SMALL_OPS = 300
# A finite sum whose terms' zero conditions have no compact form is written out only up
# to this many terms (see _sum_zero_condition).
_SHORT_SUM = 64


def _prepare(fn: Any, expr: sympy.Expr, fallback: Any) -> Any:
    """``fn(expr)``, a symbolic rewriting, under the time budget unless ``expr`` is small.

    On timeout the ``fallback`` is used: an answer that is only slower to evaluate (the
    high-precision path), never a wrong one.
    """
    if not expr.has(sympy.Sum) and sympy.count_ops(expr) <= _SMALL_OPS:
        return fn(expr)
    try:
        return run_bounded(fn, expr)
    except AnalysisTimeout:
        return fallback


def _log_expression(expr: sympy.Expr) -> sympy.Expr:
    """log(expr) rewritten so that products and exponentials become sums (no underflow)."""
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(_log_expression(e), c) for e, c in expr.args])
    if expr.is_zero:
        return sympy.S.NegativeInfinity
    return sympy.expand_log(sympy.log(expr), force=True)


def _cancelling_sums(e: sympy.Expr, var: sympy.Symbol,
                     inside_log: bool = False) -> list[tuple[sympy.Add, bool]]:
    r"""The sums of ``e`` whose float evaluation may subtract nearly equal numbers.

    Looks through sums, products, powers, Max/Min and Piecewise branches for a sum (that
    depends on ``var``) with a negative term, constant or not (e.g. the erfc difference of
    the Gaussian profile, or :math:`e^{-\varepsilon} - c`, which cancels where
    :math:`e^{-\varepsilon} \approx c`); function arguments (exp, erfc, ...) are not inspected, since a cancellation
    there does not make the function value lose relative accuracy in the same way.  Each
    sum comes with ``inside_log``: in a log-expression (``_log_expression``) a sum inside
    ``log(...)`` is a difference of the profile's own values, one outside is a sum of
    logarithms and exponents.
    """
    if var not in e.free_symbols:
        return []
    out: list[tuple[sympy.Add, bool]] = []
    if isinstance(e, sympy.Add):
        # any subtraction counts, also of a constant (f(eps) - c cancels where f ~ c)
        if any(t.could_extract_minus_sign() for t in e.args):
            out.append((e, inside_log))
        for t in e.args:
            out += _cancelling_sums(t, var, inside_log)
    elif isinstance(e, (sympy.Mul, sympy.Max, sympy.Min)):
        for a in e.args:
            out += _cancelling_sums(a, var, inside_log)
    elif isinstance(e, sympy.Pow):
        out += _cancelling_sums(e.base, var, inside_log)
    elif isinstance(e, sympy.Piecewise):
        for b, _ in e.args:
            out += _cancelling_sums(b, var, inside_log)
    elif isinstance(e, sympy.log):
        out += _cancelling_sums(e.args[0], var, True)
    return out


def _cancels(e: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether evaluating ``e`` in float may subtract nearly equal numbers somewhere."""
    return bool(_cancelling_sums(e, var))


class _SumCheck:
    r"""Per point, whether the cancelling sums of one log-expression lost too much in float64.

    A difference of the profile's own values (a sum inside ``log(...)``, e.g. the erfc
    difference of the Gaussian profile) is never trusted where the profile is tiny: its
    terms may have passed through subnormal intermediates, so every such point is reported
    (``differences=True``).  A sum of logarithms and exponents (e.g.
    :math:`\log 2 - \varepsilon^2`, or an exponent :math:`-a\varepsilon^2 + b\varepsilon`)
    is judged at every point: evaluated from terms of relative error :math:`u` its error
    is at most :math:`u \sum_i |t_i|`.  It is trusted where its condition number
    :math:`\kappa = \sum_i |t_i| / |\sum_i t_i|` is at most ``_COND_MAX`` (as accurate as
    a non-cancelling value up to 3 bits; every term a finite normal float64 number) or,
    for the sum that is the whole log-expression, where that error bound is within
    ``_LOG_ABS_TOL + _LOG_REL_TOL |log delta|``.  Anywhere else -- a real cancellation, a
    tiny or non-finite term, a complex value -- the point is reported and is recomputed in
    high precision.
    """

    __slots__ = ("_strict", "_terms", "_top")

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol) -> None:
        sums = _cancelling_sums(expr, var)
        self._strict = any(inside for _, inside in sums)
        judged = [s for s, inside in sums if not inside]
        self._top = [s is expr for s in judged]
        self._terms = (sympy.lambdify(var, [list(s.args) for s in judged], modules=_MODULES)
                       if judged else None)

    def __call__(self, x: np.ndarray, differences: bool = True) -> np.ndarray:
        """Boolean array: True where a flagged sum may have cancelled at ``x``
        (differences of profile values count only with ``differences``)."""
        bad = np.full(x.shape, self._strict and differences)
        if self._terms is None or x.size == 0:
            return bad
        with np.errstate(all="ignore"):
            for terms, top in zip(self._terms(x), self._top, strict=True):
                total = np.zeros(x.shape)
                size = np.zeros(x.shape)
                normal = np.ones(x.shape, dtype=bool)
                for t in terms:
                    a = np.broadcast_to(np.asarray(t), x.shape)
                    if np.iscomplexobj(a):
                        bad |= a.imag != 0
                        a = a.real
                    a = a.astype(np.float64)
                    mag = np.abs(a)
                    bad |= ~np.isfinite(a)
                    normal &= mag >= _TINY
                    total = total + a
                    size = size + mag
                good = normal & (size <= _COND_MAX * np.abs(total))
                if top:
                    good |= size * _SUM_ERR <= _LOG_ABS_TOL + _LOG_REL_TOL * np.abs(total)
                bad |= ~good
        return bad


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
        return _sum_zero_condition(expr)
    if isinstance(expr, sympy.Add):
        # a sum is structurally zero where every term is (the exact k-fold profile)
        zs = [_zero_condition(t) for t in expr.args]
        return sympy.false if any(z is sympy.false for z in zs) else sympy.And(*zs)
    return sympy.false



def _sum_zero_condition(expr: sympy.Sum) -> Any:
    """``_zero_condition`` of a finite sum, without writing it out term by term.

    The summand's condition is derived once with the index symbolic.  Where it is a
    non-strict inequality ``g(i) <= 0`` (the form a ``Max(..., 0)`` term gives, e.g. the
    k-fold composition profile), the sum is zero where ``Sum(Max(g(i), 0)) <= 0``: a
    sum of non-negative numbers, zero exactly when every ``g(i) <= 0``, which stays one
    compact expression (a loop over ``i`` when compiled).  Other conditions are written
    out only for short sums.
    """
    i, lo, hi = expr.limits[0]
    if not (lo.is_Integer and hi.is_Integer) or int(hi) < int(lo):
        return sympy.false
    z = _zero_condition(expr.function)
    if z is sympy.false or z is sympy.true:
        return z
    if isinstance(z, (sympy.LessThan, sympy.GreaterThan)):
        g = z.lhs - z.rhs if isinstance(z, sympy.LessThan) else z.rhs - z.lhs
        return sympy.Sum(sympy.Max(g, 0), (i, lo, hi)) <= 0
    if int(hi) - int(lo) > _SHORT_SUM:
        return sympy.false
    zs = [z.xreplace({i: sympy.Integer(j)}) for j in range(int(lo), int(hi) + 1)]
    return sympy.false if any(c is sympy.false for c in zs) else sympy.And(*zs)


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
                expr = bound if kind == "numpy" else self.log_expression()
                c[kind] = sympy.lambdify(self._var, expr, modules=_MODULES)
        return c[kind]

    def zero_mask(self, x: np.ndarray) -> np.ndarray:
        """Where the expression is structurally an exact zero (see ``_zero_condition``)."""
        c = self._cache
        if "zero" not in c:
            # not known to be zero (the fallback) only sends points to mpmath
            cond = _prepare(_zero_condition, self._profile.bound_expr, sympy.false)
            c["zero"] = None if cond is sympy.false else sympy.lambdify(
                self._var, sympy.Piecewise((1, cond), (0, True)), modules=_MODULES)
        f = c["zero"]
        if f is None:
            return np.zeros(x.shape, dtype=bool)
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(x)), x.shape).astype(bool)

    def log_expression(self) -> sympy.Expr:
        """The log-expanded bound expression (``_log_expression``), computed once."""
        c = self._cache
        if "log_expr" not in c:
            bound = self._profile.bound_expr
            # unexpanded, log(expr) underflows with expr and sends those points to mpmath
            c["log_expr"] = _prepare(_log_expression, bound, sympy.log(bound))
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
                                  and le.args[0] == self._profile.bound_expr))
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
            le = self.log_expression()
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

    def eval_float(self, x: np.ndarray, kind: str) -> np.ndarray:
        """The float64 values of :meth:`fn` ``(kind)`` at ``x`` (complex values refused)."""
        with np.errstate(all="ignore"):
            try:
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

    def check_sign(self, x: np.ndarray, y: np.ndarray) -> dict[int, float]:
        """Re-check every point where a float value is negative, in ball arithmetic or
        mpmath at rising precision: a true negative value raises ProfileError; a float
        false alarm (a cancelling sum such as the erf form of the Gaussian profile,
        -4e-13 in float64 where the value is a tiny positive number) is returned as
        ``{index: log delta}`` for the caller to use instead of the float value."""
        neg = np.flatnonzero(y < -_NEG_TOL)
        fixed: dict[int, float] = {}
        for i in neg:
            e = float(x.flat[i])
            if not bool(self.cancel_mask(np.array([e]))[0]):
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
        y = self.eval_float(x, "numpy")
        fixed = self.check_sign(x, y)
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
            if self._cross_check():
                # A product may pass through a subnormal factor (eps^150 * e^-725) and
                # still come out normal: the log-expression, which never forms that
                # factor, must agree with the plain value, or the point is recomputed.
                ly = self.eval_float(x[idx], "log")
                doubt |= ~(np.abs(ly - np.log(y[idx]))
                           <= _LOG_ABS_TOL + _LOG_REL_TOL * np.abs(ly))
            ok[idx[doubt]] = False
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
