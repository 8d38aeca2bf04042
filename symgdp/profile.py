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
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
import sympy

from .errors import ProfileError, UnboundParameterError
from .symbols import eps as _EPS

__all__ = ["Profile", "sympify_value"]

# Rounding noise below zero that is read as an exact zero (e.g. 1 - exp(0) at a kink).
_NEG_TOL = 1e-14
# Below this a float64 value has lost relative precision (subnormal) or underflowed.
_TINY = 1e-290
_MODULES = ["scipy", "numpy"]


def sympify_value(v: Any) -> sympy.Expr:
    """Turn a parameter value into a SymPy number (or keep a SymPy expression)."""
    if isinstance(v, sympy.Basic):
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
    return sympy.expand_log(sympy.log(expr), force=True)


class Profile:
    r"""A privacy profile :math:`\delta(\varepsilon)` as a SymPy expression.

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
        """A copy with some of ``expr``, ``values``, ``var``, ``name`` or metadata changed."""
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
        """The profile at one point with mpmath at ``dps`` digits (values above 1 kept)."""
        f = self._fn("mpmath")
        with mpmath.workdps(dps):
            v = f(mpmath.mpf(eps))
            if isinstance(v, mpmath.mpc):
                if v.imag != 0:
                    raise ProfileError(f"the profile is complex at eps={eps!r}: {v}")
                v = v.real
            return +mpmath.mpf(v)

    def _mp_log(self, e: float) -> float:
        """log delta(e) with mpmath, raising precision until two evaluations agree."""
        prev = None
        for dps in (30, 60, 120, 240):
            v = self.mp(e, dps=dps)
            if v < -_NEG_TOL:
                raise ProfileError(f"the profile is negative at eps={e!r}: {mpmath.nstr(v, 8)}")
            if v <= 0:
                cur = -np.inf
            else:
                with mpmath.workdps(dps):
                    cur = float(mpmath.log(v))
            if prev is not None and (cur == prev or abs(cur - prev) <= 1e-13 * abs(cur)):
                return min(cur, 0.0)
            prev = cur
        return min(prev, 0.0)  # type: ignore[arg-type]

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
        out[ok] = np.log(np.minimum(y[ok], 1.0))
        out[np.isfinite(y) & (y > 1.0)] = 0.0
        out[np.isposinf(y)] = 0.0  # +inf overflow of a vacuous expression reads as 1
        rest = np.isnan(out)
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
    def latex(self, *, bound: bool = False) -> str:
        """LaTeX of the expression (``bound=True`` substitutes the parameter values)."""
        return sympy.latex(self.bound_expr if bound else self._expr)

    def _repr_latex_(self) -> str:
        lhs = rf"\delta_{{\mathrm{{{self._name}}}}}" if self._name else r"\delta"
        return rf"${lhs}({sympy.latex(self._var)}) = {self.latex()}$"
