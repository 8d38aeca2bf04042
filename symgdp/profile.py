r"""Privacy profiles as immutable SymPy value objects.

A privacy profile :math:`\delta_A(\varepsilon)`, :math:`\varepsilon \ge 0`, is the smallest
:math:`\delta` for which a mechanism :math:`A` is :math:`(\varepsilon, \delta)`-DP
(Balle, Barthe & Gaboardi 2020; shared/math.md §1).  :class:`Profile` holds the SymPy
expression :math:`\delta(\varepsilon)` -- the single source of truth -- together with the
numeric values of its parameters.  Numeric code is generated from it at run time with
``sympy.lambdify`` (NumPy/SciPy for speed, mpmath for precision).

Conventions:

* Values above 1 are vacuous and read as 1 (naive profiles often exceed 1 near 0).
* ``log_delta`` works in log space: where the float64 value underflows it evaluates the
  log-expanded expression, and where that is not conclusive it falls back to mpmath, so
  :math:`\log\delta` is finite wherever :math:`\delta > 0`.
* A negative, NaN or complex value is an error (:class:`~symgdp.errors.ProfileError`)
  naming the :math:`\varepsilon` at which it occurred.
* What counts as a profile (shared/api.md): :meth:`Profile.validate` rejects negative,
  complex, increasing and everywhere-vacuous (:math:`\ge 1`) expressions, deciding
  symbolically where SymPy can and otherwise on a dense numeric grid; the message says
  which.

The symbolic pipeline delegates to :mod:`symgdp.refine` (partial-order refinement,
math §2; Poisson subsampling, math §7) and :mod:`symgdp.tail` (tail limit and
identification, math §5).  Trade-off equations :math:`\sigma = f(\varepsilon, \delta)`
(math §1) are solved for :math:`\delta` by :meth:`Profile.from_tradeoff`; when SymPy
cannot, the profile holds :class:`LogDeltaRoot`, an implicit function evaluated by a
bracketed root search in :math:`\log\delta` (float64 or mpmath).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
import sympy

from ._bounded import run_bounded
from .errors import AnalysisTimeout, PrecisionError, ProfileError, UnboundParameterError
from .symbols import ALIASES
from .symbols import delta as _DELTA
from .symbols import eps as _EPS

__all__ = ["Profile", "LogDeltaRoot", "sympify_value"]

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


def sympify_value(v: Any) -> sympy.Expr:
    """Turn a parameter value into a SymPy number (or keep a SymPy expression)."""
    if isinstance(v, sympy.Basic):
        if v.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or v.is_finite is False:
            raise ProfileError(f"a parameter value must be finite, got {v!r}")
        return v
    if isinstance(v, bool):
        raise ProfileError(f"a parameter value must be a number, got {v!r}")
    if isinstance(v, (int, np.integer)):
        return sympy.Integer(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not np.isfinite(f):
            raise ProfileError(f"a parameter value must be finite, got {v!r}")
        return sympy.Integer(int(f)) if f.is_integer() and abs(f) < 2**53 else sympy.Float(f)
    raise ProfileError(f"a parameter value must be a number or SymPy expression, got {v!r}")


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


# -- trade-off equations that SymPy cannot solve -------------------------------------------
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
    :meth:`Profile.from_tradeoff` builds when SymPy cannot solve for :math:`\delta`.
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


def _solve_for(residual: sympy.Expr, symbol: sympy.Symbol) -> list:
    return list(sympy.solve(residual, symbol, dict=False))


def _match_symbol(sym: sympy.Symbol, expr: sympy.Basic) -> sympy.Symbol:
    """The symbol of ``expr`` named like ``sym`` (equations may carry their own symbols)."""
    if sym in expr.free_symbols:
        return sym
    same = [s for s in expr.free_symbols if getattr(s, "name", None) == sym.name]
    return same[0] if len(same) == 1 else sym


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


class Profile:
    r"""A privacy profile :math:`\delta(\varepsilon)` as a SymPy expression.

    Construction: ``Profile(expr, values)``, :meth:`parse` (a string, safely),
    :meth:`from_tradeoff` (a trade-off equation :math:`\sigma = f(\varepsilon,\delta)`).
    Symbolic steps keep unbound parameters symbolic: :meth:`refine` (math §2),
    :meth:`subsample` (§7), :meth:`tail_limit` and :meth:`identify` (§5), :meth:`latex`.
    Numeric steps need every parameter bound: ``__call__``, :meth:`log_delta`,
    :meth:`mp`, :meth:`measure`, :meth:`gdpt`.  :meth:`validate` checks that the
    expression is a privacy profile at all.

    Args:
        expr: SymPy expression (or number) in ``var``.
        values: parameter values, keyed by SymPy symbol or by symbol name.
        var: the symbol standing for :math:`\varepsilon` (default :data:`symgdp.eps`).
        name: optional display name.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> s = sympy.Symbol("sigma", positive=True)
        >>> p = Profile(sympy.exp(-s**2 * eps**2), {"sigma": 1})
        >>> round(p(1.0), 12)
        0.367879441171
        >>> p.log_delta(40.0)
        -1600.0
    """

    __slots__ = ("_expr", "_values", "_var", "_name", "_meta", "_cache")

    def __init__(
        self,
        expr: Any,
        values: Mapping[Any, Any] | None = None,
        *,
        var: sympy.Symbol = _EPS,
        name: str | None = None,
        **meta: Any,
    ) -> None:
        if isinstance(expr, str):
            raise ProfileError("Profile() takes a SymPy expression; use Profile.parse(text) "
                               f"for the string {expr!r}")
        try:
            e = sympy.sympify(expr, strict=True)
        except (sympy.SympifyError, TypeError) as exc:
            raise ProfileError(f"not a SymPy expression: {expr!r}") from exc
        if not isinstance(var, sympy.Symbol):
            raise ProfileError(f"var must be a SymPy Symbol, got {var!r}")
        vals = self._normalise_values(e, values or {})
        object.__setattr__(self, "_expr", e)
        object.__setattr__(self, "_values", MappingProxyType(vals))
        object.__setattr__(self, "_var", var)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_meta", MappingProxyType(dict(meta)))
        object.__setattr__(self, "_cache", {})

    # -- value-object plumbing -------------------------------------------------------------
    @staticmethod
    def _normalise_values(expr: sympy.Expr, values: Mapping[Any, Any]) -> dict:
        by_name = {s.name: s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
        out: dict[sympy.Symbol, sympy.Expr] = {}
        for k, v in values.items():
            if isinstance(k, sympy.Symbol):
                sym = k
            elif isinstance(k, str):
                sym = by_name.get(k, sympy.Symbol(k))
            else:
                raise ProfileError(f"parameter names must be strings or Symbols, got {k!r}")
            out[sym] = sympify_value(v)
        return out

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Profile is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        return (self._var == other._var and self.bound_expr == other.bound_expr) or (
            self._expr == other._expr and dict(self._values) == dict(other._values)
            and self._var == other._var)

    def __hash__(self) -> int:
        return hash((self.bound_expr, self._var))

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v}" for k, v in self._values.items())
        nm = f", name={self._name!r}" if self._name else ""
        return f"Profile({self._expr}{', {' + vals + '}' if vals else ''}{nm})"

    def replace(self, **changes: Any) -> Profile:
        """A copy with some of ``expr``, ``values``, ``var``, ``name`` or metadata changed.

        A refined profile's flat pieces were computed for its parameter values, so new
        ``values`` (or ``var``) for it are refused: refine the naive profile again.
        """
        if self._meta.get("segments") and ("values" in changes or "var" in changes):
            raise ProfileError("the breakpoints of a refined profile were computed for its "
                               "parameter values; replace the values of the naive profile "
                               "(meta['naive']) and refine again")
        kw = dict(self._meta)
        kw.update({k: v for k, v in changes.items()
                   if k not in ("expr", "values", "var", "name")})
        return Profile(changes.get("expr", self._expr), changes.get("values", self._values),
                       var=changes.get("var", self._var), name=changes.get("name", self._name),
                       **kw)

    # -- public attributes -----------------------------------------------------------------
    @property
    def expr(self) -> sympy.Expr:
        """The SymPy expression, parameters kept symbolic."""
        return self._expr

    @property
    def values(self) -> Mapping[sympy.Symbol, sympy.Expr]:
        """Read-only mapping from parameter symbol to its SymPy value."""
        return self._values

    @property
    def var(self) -> sympy.Symbol:
        """The symbol standing for epsilon."""
        return self._var

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def meta(self) -> Mapping[str, Any]:
        """Extra read-only information attached by the constructor (e.g. ``breakpoint``)."""
        return self._meta

    @property
    def bound_expr(self) -> sympy.Expr:
        """The expression with every bound parameter substituted."""
        c = self._cache
        if "bound" not in c:
            c["bound"] = self._expr.xreplace(dict(self._values)) if self._values else self._expr
        return c["bound"]

    @property
    def free_symbols(self) -> set[sympy.Symbol]:
        """Symbols of the expression other than ``var`` (bound or not)."""
        return set(self._expr.free_symbols) - {self._var}

    @property
    def unbound_symbols(self) -> set[sympy.Symbol]:
        """Symbols other than ``var`` that still have no value."""
        return set(self.bound_expr.free_symbols) - {self._var}

    def require_bound(self) -> None:
        """Raise :class:`UnboundParameterError` naming every parameter without a value."""
        missing = self.unbound_symbols
        if missing:
            names = ", ".join(sorted(str(s) for s in missing))
            raise UnboundParameterError(
                f"numeric work on this profile needs values for: {names} "
                f"(pass values={{...}} or, on the command line, --set NAME=VALUE)")

    # -- construction from text and from trade-off equations -------------------------------
    @staticmethod
    def _symbol_table(var: sympy.Symbol, values: Mapping[Any, Any] | None,
                      extra: tuple[sympy.Symbol, ...] = ()) -> dict[str, sympy.Symbol]:
        table: dict[str, sympy.Symbol] = dict(ALIASES)
        for s in (*extra, *(k for k in (values or {}) if isinstance(k, sympy.Symbol))):
            table[s.name] = s
        if var != _EPS:
            # the user's own epsilon symbol replaces the canonical one under every alias
            for alias, s in ALIASES.items():
                if s == _EPS:
                    table[alias] = var
        table[var.name] = var
        return table

    @classmethod
    def parse(cls, text: str, values: Mapping[Any, Any] | None = None, *,
              var: sympy.Symbol = _EPS, name: str | None = None, **meta: Any) -> Profile:
        r"""A profile from a string, parsed safely (no ``eval``; :mod:`symgdp.parsing`).

        ``eps``/``epsilon``/``ε`` name ``var``; other identifiers become positive
        parameters, which ``values`` may bind.

        Example:
            >>> p = Profile.parse("B*exp(-sigma^2*eps^2/A^2)", {"A": 2, "B": 1, "sigma": 2})
            >>> round(p(1.0), 12)
            0.367879441171
        """
        from .parsing import parse_expression

        expr = parse_expression(text, symbols=cls._symbol_table(var, values))
        return cls(expr, values, var=var, name=name, source=text, **meta)

    @classmethod
    def from_tradeoff(cls, equation: Any, values: Mapping[Any, Any] | None = None, *,
                      solve_for: sympy.Symbol = _DELTA, var: sympy.Symbol = _EPS,
                      name: str | None = None, timeout: float | None = None,
                      method: str = "auto") -> Profile:
        r"""The naive profile of a trade-off equation :math:`\sigma = f(\varepsilon, \delta)`.

        The equation is solved for ``solve_for`` (:math:`\delta`) with SymPy under the
        time budget, keeping unbound parameters symbolic (math §1).  When SymPy finds no
        solution in time (or ``method="numeric"``), the profile is
        :math:`e^{t(\varepsilon)}` with ``t`` a :class:`LogDeltaRoot`: it inverts the
        equation numerically at every evaluation, assuming that the noise it asks for
        falls as :math:`\delta` grows.  ``meta["method"]`` says which (``"symbolic"`` or
        ``"numeric"``) and ``meta["tradeoff"]`` keeps the equation.

        Args:
            equation: a ``sympy.Eq`` or a string ``"sigma = f(eps, delta)"``.
            values: parameter values (e.g. ``{"sigma": 2, "A": 2, "B": 1}``).
            solve_for: the symbol to solve for, by default :data:`symgdp.delta`.
            var: the symbol for :math:`\varepsilon`.
            name: display name.
            timeout: budget in seconds for ``sympy.solve``.
            method: ``"auto"``, ``"symbolic"`` (raise if SymPy cannot solve) or
                ``"numeric"``.

        Example:
            >>> p = Profile.from_tradeoff("sigma = A/eps*sqrt(log(B/delta))")
            >>> p.expr
            B*exp(-sigma**2*varepsilon**2/A**2)
            >>> p.meta["method"]
            'symbolic'
        """
        if method not in ("auto", "symbolic", "numeric"):
            raise ValueError(f"method must be 'auto', 'symbolic' or 'numeric', got {method!r}")
        text = None
        if isinstance(equation, str):
            from .parsing import parse_equation

            text = equation
            equation = parse_equation(
                equation, symbols=cls._symbol_table(var, values, (solve_for,)))
        if not isinstance(equation, sympy.Eq):
            raise ProfileError(f"from_tradeoff needs an equation sigma = f(eps, delta) "
                               f"(sympy.Eq or a string), got {equation!r}")
        d = _match_symbol(solve_for, equation)
        v = _match_symbol(var, equation)
        if d not in equation.free_symbols:
            raise ProfileError(f"the equation {equation} does not contain {solve_for}")
        if v not in equation.free_symbols:
            raise ProfileError(f"the equation {equation} does not contain {var}")
        residual = equation.lhs - equation.rhs
        if v != var:
            residual = residual.xreplace({v: var})
        meta: dict[str, Any] = {"tradeoff": equation}
        if text is not None:
            meta["source"] = text
        if method != "numeric":
            sols = None
            why = ""
            try:
                sols = run_bounded(_solve_for, residual, d, timeout=timeout)
            except AnalysisTimeout as exc:
                why = str(exc)
            except Exception as exc:  # noqa: BLE001 - SymPy raises many kinds
                why = f"sympy.solve failed: {exc}"
            if sols is not None:
                keep = [s for s in sols if s.is_positive is not False
                        and s.is_extended_real is not False and d not in s.free_symbols]
                if len(keep) == 1:
                    return cls(keep[0], values, var=var, name=name, method="symbolic", **meta)
                if len(keep) > 1:
                    picked = cls._pick_solution(keep, residual, d, var, values)
                    if picked is not None:
                        return cls(picked, values, var=var, name=name, method="symbolic",
                                   **meta)
                    why = (f"sympy.solve gave {len(keep)} candidate solutions "
                           f"{keep} and none could be singled out")
                else:
                    why = f"sympy.solve found no positive solution for {d}"
            if method == "symbolic":
                raise ProfileError(f"cannot solve {equation} for {d} symbolically: {why}")
            meta["why_numeric"] = why
        e_, t_ = sympy.Dummy("e", positive=True), sympy.Dummy("t", real=True)
        h = sympy.expand_log(residual.xreplace({var: e_, d: sympy.exp(t_)}), force=True)
        expr = sympy.exp(LogDeltaRoot(var, sympy.Lambda((e_, t_), h)))
        return cls(expr, values, var=var, name=name, method="numeric", **meta)

    @classmethod
    def _pick_solution(cls, candidates: list, residual: sympy.Expr, d: sympy.Symbol,
                       var: sympy.Symbol, values: Mapping[Any, Any] | None) -> Any:
        """The one candidate that agrees with the numeric inversion, if values allow."""
        numeric = cls.from_tradeoff(sympy.Eq(residual, 0), values, solve_for=d, var=var,
                                    method="numeric")
        if numeric.unbound_symbols:
            return None
        xs = np.array([0.01, 0.1, 0.5, 1.0, 2.0, 5.0])
        ref = numeric.log_delta(xs)
        match = []
        for c in candidates:
            try:
                got = cls(c, values, var=var).log_delta(xs)
            except ProfileError:
                continue
            inside = ref < -1e-9
            if np.any(inside) and np.allclose(got[inside], ref[inside], rtol=1e-8, atol=1e-10):
                match.append(c)
        return match[0] if len(match) == 1 else None

    # -- the symbolic pipeline (delegates to refine.py and tail.py) ------------------------
    @property
    def breakpoint(self) -> sympy.Expr | None:
        r"""The refinement point :math:`c` (math §2) of a refined profile, else ``None``.

        With several flat pieces it is the one nearest :math:`\varepsilon = 0`; all of
        them are in ``meta["segments"]`` as ``(start, c, delta_naive(c))``.
        """
        return self._meta.get("breakpoint")

    @property
    def breakpoint_delta(self) -> sympy.Expr | None:
        r"""The naive profile at the refinement point, :math:`\tilde\delta(c)`, or ``None``."""
        return self._meta.get("breakpoint_delta")

    def validate(self, *, timeout: float | None = None) -> Profile:
        r"""Check that this is a privacy profile; return ``self`` or raise ``ProfileError``.

        Negative, complex, increasing and everywhere-vacuous (:math:`\ge 1`) expressions
        are rejected (shared/api.md "What counts as a profile").  SymPy's assumptions
        decide what they can (time-bounded); with every parameter bound the profile is
        also evaluated on a dense grid of :math:`\varepsilon \in [0, 10^4]`.  Values
        above 1 are read as 1 and are fine.  The message says how it was decided.

        Example:
            >>> from symgdp import eps
            >>> Profile(1 - sympy.exp(-eps)).validate()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            symgdp.errors.ProfileError: the profile 1 - exp(-varepsilon) is increasing (decided...
        """
        from .refine import check_profile

        key = "validated"
        if key not in self._cache:
            check_profile(self, timeout=timeout)
            self._cache[key] = True
        return self

    def refine(self, *, timeout: float | None = None, dps: int = 40) -> Profile:
        r"""The partial-order refinement of math §2 (see :func:`symgdp.refine.refine`)."""
        from .refine import refine

        return refine(self, timeout=timeout, dps=dps)

    def subsample(self, gamma: Any) -> Profile:
        r"""Poisson subsampling with rate ``gamma`` (math §7; :func:`symgdp.refine.subsample`)."""
        from .refine import subsample

        return subsample(self, gamma)

    def tail_limit(self, *, timeout: float | None = None) -> sympy.Expr:
        r""":math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` (math §5;
        :func:`symgdp.tail.tail_limit`)."""
        from .tail import tail_limit

        self.validate(timeout=timeout)
        return tail_limit(self, timeout=timeout)

    def identify(self, *, timeout: float | None = None) -> Any:
        r"""The GDP verdict from the tail (math §5; :func:`symgdp.tail.identify`)."""
        from .tail import identify

        self.validate(timeout=timeout)
        return identify(self, timeout=timeout)

    def measure(self, eps_h: float = 100.0, tol: float = 1e-6, *, refine: bool = True,
                method: str = "auto", certify: bool = False, **kw: Any) -> Any:
        """Guaranteed bounds on the GDP parameter (math §6; :func:`symgdp.measure.measure`)."""
        from .measure import measure

        self.validate()
        return measure(self, eps_h=eps_h, tol=tol, refine=refine, method=method,
                       certify=certify, **kw)

    def gdpt(self, eps: Any) -> Any:
        r"""The GDP transformation :math:`G(\varepsilon) = \mu_{GDP}(\varepsilon,
        \delta(\varepsilon))` (math §4; :func:`symgdp.measure.gdpt`)."""
        from .measure import gdpt

        return gdpt(self, eps)

    # -- numeric evaluation ----------------------------------------------------------------
    def _fn(self, kind: str) -> Any:
        c = self._cache
        if kind not in c:
            self.require_bound()
            expr = self.bound_expr if kind == "numpy" else _log_expression(self.bound_expr)
            if kind == "mpmath":
                c[kind] = sympy.lambdify(self._var, self.bound_expr, modules="mpmath")
            else:
                c[kind] = sympy.lambdify(self._var, expr, modules=_MODULES)
        return c[kind]

    def _eval_zero(self, x: np.ndarray) -> np.ndarray:
        """Where the expression is structurally an exact zero (see ``_zero_condition``)."""
        c = self._cache
        if "zero" not in c:
            cond = _zero_condition(self.bound_expr)
            c["zero"] = None if cond is sympy.false else sympy.lambdify(
                self._var, sympy.Piecewise((1, cond), (0, True)), modules=_MODULES)
        f = c["zero"]
        if f is None:
            return np.zeros(x.shape, dtype=bool)
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(x)), x.shape).astype(bool)

    def _log_cancels(self, x: np.ndarray) -> np.ndarray:
        """Where (per point) the float log-expression may subtract nearly equal numbers.

        For a Piecewise profile only the branch that holds at a point matters, so e.g. a
        refined profile whose head branch is a difference but whose tail is exp(-eps^2)
        keeps its fast float tail.
        """
        c = self._cache
        if "log_cancels" not in c:
            le = _log_expression(self.bound_expr)
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

    def _eval_numpy(self, x: np.ndarray, kind: str) -> np.ndarray:
        with np.errstate(all="ignore"):
            y = self._fn(kind)(x)
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
        f = self._fn("mpmath")
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

    def _mp_log(self, e: float) -> float:
        """log delta(e) with mpmath, raising precision until two finite evaluations agree.

        A value of exactly 0 is not trusted as such (1 - (1 - e^{-eps})^3 cancels to 0 at
        any precision below ~eps/2.3 digits): it counts as an exact zero only when the
        expression is structurally 0 there or ball arithmetic proves it; otherwise the
        precision keeps rising and, past ``_MP_MAX_DPS`` digits, PrecisionError is raised
        rather than a wrong -inf returned.
        """
        try:
            via_arb = self._arb_log(e)
        except PrecisionError:
            # The ball never excluded 0: either an exact zero that arb cannot see as such
            # (e^x - e^x at a kink) or a cancellation beyond reach.  Only a provable zero
            # is accepted from the point evaluation below; a positive value is not.
            if self._mp_log_points(e) == -np.inf:
                return -np.inf
            raise
        if via_arb is not None:
            return via_arb
        return self._mp_log_points(e)

    def _mp_log_points(self, e: float) -> float:
        """log delta(e) from mpmath point evaluations at rising precision."""
        prev = None
        dps = 30
        while dps <= _MP_MAX_DPS:
            v = self.mp(e, dps=dps)
            if v < -_NEG_TOL:
                raise ProfileError(f"the profile is negative at eps={e!r}: {mpmath.nstr(v, 8)}")
            if v <= 0:
                if self._exact_zero(e):
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

    def _arb_log(self, e: float) -> float | None:
        """log delta(e) from ball arithmetic, precision doubled until the enclosure of the
        log is 1e-15 relative (None when the expression has no ball version).

        Unlike a point evaluation, a ball shows a cancellation hidden inside Max/Min or a
        Piecewise (the enclosure stays wide), so a value is only returned once resolved.
        """
        from flint import arb, ctx

        from .interval import ArbUnsupported, profile_arb

        try:
            f = profile_arb(self)
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

    def _exact_zero(self, e: float) -> bool:
        """The profile is provably exactly 0 at ``e`` (by structure or in ball arithmetic)."""
        if bool(self._eval_zero(np.array([e]))[0]):
            return True
        from .interval import ArbUnsupported, profile_arb

        try:
            v = profile_arb(self)(e)
        except (ArbUnsupported, ProfileError, ArithmeticError, ValueError):
            return False
        return bool(v.is_exact() and v.is_zero())

    def _check(self, x: np.ndarray, y: np.ndarray) -> None:
        neg = y < -_NEG_TOL
        if np.any(neg):
            raise ProfileError(
                f"the profile is negative at eps={x[neg].flat[0]!r}: {y[neg].flat[0]!r}")

    def __call__(self, eps: Any) -> Any:
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
        y = self._eval_numpy(x, "numpy")
        self._check(x, y)
        out = np.full(x.shape, np.nan)
        ok = np.isfinite(y) & (y > _TINY)
        # A branch that subtracts nearly equal numbers (e.g. the erfc difference of the
        # Gaussian profile) may have passed through subnormal intermediates long before its
        # value underflows: below _TINY_CANCEL such values are recomputed in high precision.
        small = ok & (y < _TINY_CANCEL)
        if np.any(small):
            ok[np.flatnonzero(small)[self._log_cancels(x[small])]] = False
        out[ok] = np.log(np.minimum(y[ok], 1.0))
        out[np.isfinite(y) & (y > 1.0)] = 0.0
        out[np.isposinf(y)] = 0.0  # +inf overflow of a vacuous expression reads as 1
        rest = np.isnan(out)
        zero = rest & (y == 0.0)
        if np.any(zero):
            # a branch that is structurally 0 (Max(f, 0) with f <= 0, a zero Piecewise case)
            # is an exact zero, not an underflow: log delta = -inf without mpmath
            z = self._eval_zero(x[zero])
            if np.any(z):
                idx = np.flatnonzero(zero)[z]
                out[idx] = -np.inf
                rest[idx] = False
        if np.any(rest):
            # the float log-expression would still subtract nearly equal tiny numbers
            # (e.g. the erfc difference of the Gaussian profile): use mpmath there
            idx = np.flatnonzero(rest)
            slow = idx[self._log_cancels(x[idx])]
            if slow.size:
                out[slow] = [self._mp_log(float(e)) for e in x[slow]]
                rest[slow] = False
        if np.any(rest):
            xr = x[rest]
            ly = self._eval_numpy(xr, "log")
            good = np.isfinite(ly) & (ly <= 0)
            lr = np.where(good, ly, np.nan)
            # positive log with an underflowing plain value: contradictory, recheck in mpmath
            need = ~good
            if np.any(need):
                lr[need] = [self._mp_log(float(e)) for e in xr[need]]
            out[rest] = lr
        out = np.minimum(out, 0.0)
        return float(out[0]) if scalar else out.reshape(np.shape(eps))

    # -- display ---------------------------------------------------------------------------
    def latex(self, *, bound: bool = False, digits: int = 8) -> str:
        r"""LaTeX of the right-hand side :math:`\delta(\varepsilon) = \ldots`.

        ``bound=True`` substitutes the parameter values.  A refined profile is shown with
        its breakpoints as symbols (:math:`c`, :math:`\tilde\delta(c)`, and :math:`a_k`
        where a flat piece starts after 0), followed by their values to ``digits``
        significant digits (exact closed forms are shown too).

        Example:
            >>> import sympy
            >>> from symgdp import eps
            >>> s = Profile(2 * sympy.exp(-eps)).refine().latex(digits=5)
            >>> for part in s.split(r",\quad ")[1].split(r",\ "):
            ...     print(part)
            c = \log{\left(2 + \sqrt{6} \right)} \approx 1.4928
            \tilde{\delta}(c) = \frac{2}{2 + \sqrt{6}} \approx 0.44949
        """
        template = self._meta.get("latex_template")
        if template is None:
            return sympy.latex(self.bound_expr if bound else self._expr)
        if bound and self._values:
            template = template.xreplace(dict(self._values))
        parts = []
        for sym, val in self._meta.get("latex_constants", ()):
            approx = mpmath.nstr(mpmath.mpf(sympy.N(val, digits + 5)), digits)
            if isinstance(val, sympy.Float):
                parts.append(rf"{sympy.latex(sym)} \approx {approx}")
            else:
                parts.append(rf"{sympy.latex(sym)} = {sympy.latex(val)} \approx {approx}")
        return sympy.latex(template) + r",\quad " + r",\ ".join(parts)

    def _repr_latex_(self) -> str:
        lhs = rf"\delta_{{\mathrm{{{self._name}}}}}" if self._name else r"\delta"
        return rf"${lhs}({sympy.latex(self._var)}) = {self.latex()}$"
