r"""Privacy profiles as immutable SymPy value objects.

A privacy profile :math:`\delta_A(\varepsilon)`, :math:`\varepsilon \ge 0`, is the smallest
:math:`\delta` for which a mechanism :math:`A` is :math:`(\varepsilon, \delta)`-DP
(Balle, Barthe & Gaboardi 2020; theory §1).  :class:`Profile` holds the SymPy
expression :math:`\delta(\varepsilon)` -- the single source of truth -- together with the
numeric values of its parameters.  Numeric code is generated from it at run time with
``sympy.lambdify`` (NumPy/SciPy for speed, mpmath for precision).

Conventions:

* Values above 1 are vacuous and read as 1 (naive profiles often exceed 1 near 0).
* ``log_delta`` works in log space (:mod:`symgdp.evaluation.evaluate`): where the float64 value
  underflows it evaluates the log-expanded expression, and where that is not conclusive it
  falls back to mpmath, so :math:`\log\delta` is finite wherever :math:`\delta > 0`.
* A negative, NaN or complex value is an error (:class:`~symgdp.errors.ProfileError`)
  naming the :math:`\varepsilon` at which it occurred.
* What counts as a profile: :meth:`Profile.validate` rejects negative,
  complex, increasing and everywhere-vacuous (:math:`\ge 1`) expressions, deciding
  symbolically where SymPy can and otherwise on a dense numeric grid; the message says
  which.

The symbolic pipeline delegates to :mod:`symgdp.refinement.refine` (partial-order refinement,
theory §2; Poisson subsampling, theory §7) and :mod:`symgdp.tail.limit` (tail limit and
identification, theory §5).  Trade-off equations :math:`\sigma = f(\varepsilon, \delta)`
(theory §1) are solved for :math:`\delta` by :meth:`Profile.from_tradeoff`; when SymPy
cannot, the profile holds :class:`~symgdp.symbolic.implicit.LogDeltaRoot`, an implicit function
evaluated by a bracketed root search in :math:`\log\delta` (float64 or mpmath).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast

import mpmath
import numpy as np
import sympy

from symgdp.contracts import FloatKind, MeasureMethod, ProfileSource, TradeoffMethod
from symgdp.errors import AnalysisTimeout, DomainError, ProfileError, UnboundParameterError
from symgdp.evaluation.evaluate import Evaluator
from symgdp.numerics.rounding import exp_up
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.implicit import LogDeltaRoot
from symgdp.symbolic.symbols import delta as _DELTA
from symgdp.symbolic.symbols import eps as _EPS
from symgdp.symbolic.symbols import match_symbol, normalise_values, symbol_table, sympify_value

__all__ = ["Profile", "LogDeltaRoot", "sympify_value"]



def _solve_for(residual: sympy.Expr, symbol: sympy.Symbol) -> list[Any]:
    return list(sympy.solve(residual, symbol, dict=False))


# Solutions of trade-off equations already found, keyed by (residual, symbol): solving is
# the slow symbolic step of from_tradeoff and the same equation recurs (a mechanism built
# for several parameter values, a report of an equation already analysed).  Only
# successes are kept; a timeout may succeed with a larger budget.
_SOLVED: dict[tuple[sympy.Expr, sympy.Symbol], tuple[Any, ...]] = {}
_SOLVED_MAX = 256


def _solve_bounded(residual: sympy.Expr, symbol: sympy.Symbol,
                   timeout: float | None) -> tuple[Any, ...]:
    """``sympy.solve(residual, symbol)`` under the time budget, once per equation."""
    key = (residual, symbol)
    if key not in _SOLVED:
        sols = tuple(run_bounded(_solve_for, residual, symbol, timeout=timeout))
        if len(_SOLVED) >= _SOLVED_MAX:
            _SOLVED.pop(next(iter(_SOLVED)))
        _SOLVED[key] = sols
    return _SOLVED[key]


# Entries of a profile's cache that depend only on its expression, values and var (not on
# its metadata): Profile.replace hands them to a copy that changes metadata only.
_VALUE_CACHE = ("bound", "evaluator", "validated", "family")



class Profile:
    r"""A privacy profile :math:`\delta(\varepsilon)` as a SymPy expression.

    Construction: ``Profile(expr, values)``, :meth:`parse` (a string, safely),
    :meth:`from_tradeoff` (a trade-off equation :math:`\sigma = f(\varepsilon,\delta)`).
    Symbolic steps keep unbound parameters symbolic: :meth:`refine` (theory §2),
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

    __slots__ = ("_expr", "_values", "_var", "_name", "_meta", "_cache", "_source")
    _expr: sympy.Expr
    _values: Mapping[sympy.Symbol, sympy.Expr]
    _var: sympy.Symbol
    _name: str | None
    _meta: Mapping[str, Any]
    _cache: dict[Any, Any]
    _source: Any

    def __init__(
        self,
        expr: Any,
        values: Mapping[Any, Any] | None = None,
        *,
        var: sympy.Symbol = _EPS,
        name: str | None = None,
        source: Any = None,
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
        names: dict[str, sympy.Symbol] = {}
        for s in sorted(e.free_symbols | {var}, key=sympy.default_sort_key):
            if (isinstance(s, sympy.Symbol) and not isinstance(s, sympy.Dummy)
                    and names.setdefault(s.name, s) != s):
                def said(u: sympy.Symbol) -> str:
                    a = getattr(u, "_assumptions_orig", {})
                    return ", ".join(f"{k}={v}" for k, v in sorted(a.items())) or "none"

                raise ProfileError(
                    f"two different symbols are both called {s.name!r} (assumptions "
                    f"{said(names[s.name])} and {said(s)}); the variable is {var}: rename "
                    "the parameter, or write eps as symgdp.eps (Profile.parse does)")
        vals = normalise_values(e, values or {})
        object.__setattr__(self, "_expr", e)
        object.__setattr__(self, "_values", MappingProxyType(vals))
        object.__setattr__(self, "_var", var)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_meta", MappingProxyType(dict(meta)))
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_source", source)

    # -- value-object plumbing -------------------------------------------------------------
    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Profile is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Profile):
            return NotImplemented
        if self._source is not None or other._source is not None:
            return self is other
        return (self._var == other._var and self.bound_expr == other.bound_expr) or (
            self._expr == other._expr and dict(self._values) == dict(other._values)
            and self._var == other._var)

    def __hash__(self) -> int:
        if self._source is not None:
            return id(self)
        return hash((self.bound_expr, self._var))

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v}" for k, v in self._values.items())
        nm = f", name={self._name!r}" if self._name else ""
        return f"Profile({self._expr}{', {' + vals + '}' if vals else ''}{nm})"

    def replace(self, **changes: Any) -> Profile:
        """A copy with some of ``expr``, ``values``, ``var``, ``name`` or metadata changed.

        ``values`` are *merged* into the values already bound: a partial dict binds (or
        re-binds) the parameters it names and keeps the others; a parameter given the
        value ``None`` is unbound, and ``values=None`` unbinds every parameter.

        A refined profile's flat pieces were computed for its parameter values, so new
        ``values`` (or ``var``) for it are refused: refine the naive profile again.  So are
        new values for a numeric profile without parameters (:meth:`from_source`: its
        numbers were computed when it was built); a parametric source (noise with a symbolic
        shape) is bound to the new values instead.

        Example:
            >>> import sympy
            >>> from symgdp import eps
            >>> a, b = sympy.symbols("a b", positive=True)
            >>> p = Profile(sympy.exp(-a * b * eps), {"a": 1, "b": 2})
            >>> sorted((str(k), v) for k, v in p.replace(values={"b": 3}).values.items())
            [('a', 1), ('b', 3)]
            >>> sorted(str(k) for k in p.replace(values={"a": None}).values)
            ['b']
        """
        if self._meta.get("segments") and ("values" in changes or "var" in changes):
            raise ProfileError("the breakpoints of a refined profile were computed for its "
                               "parameter values; replace the values of the naive profile "
                               "(meta['naive']) and refine again")
        if "values" in changes and changes["values"] is not None:
            changes = {**changes, "values": self._merged_values(changes["values"])}
        kw = dict(self._meta)
        kw.update({k: v for k, v in changes.items()
                   if k not in ("expr", "values", "var", "name")})
        same = not {"expr", "values", "var"} & set(changes)
        # the same values again for a numeric source without parameters (a sweep re-binding
        # a profile's own values): it stays.  Other values are not its values (a source may
        # hold values it was built with, e.g. from_zcdp(rho, values={rho: 0.5}): keeping it
        # would answer for those; dropping it leaves an opaque symbol): refused
        fixed = (not {"expr", "var"} & set(changes) and self._source is not None
                 and not self._expr.free_symbols - {self._var}
                 and not callable(getattr(self._source, "bind", None)))
        keep = same or bool(fixed)
        new = Profile(changes.get("expr", self._expr), changes.get("values", self._values),
                      var=changes.get("var", self._var), name=changes.get("name", self._name),
                      source=self._source if keep else None, **kw)
        if fixed and not same and dict(new._values) != dict(self._values):
            raise ProfileError(
                f"the numeric {self._source.kind} profile has no parameters: its numbers "
                f"were computed when it was built, so values "
                f"{ {str(k): v for k, v in new._values.items()} } cannot be bound to it; "
                "build it again with those values")
        bind = getattr(self._source, "bind", None)
        if not same and callable(bind) and not {"expr", "var"} & set(changes):
            # a parametric source (e.g. noise with a symbolic shape): new values give the
            # source of those values (numeric once every parameter is bound)
            object.__setattr__(new, "_source", bind(dict(new._values)))
        if same:
            # the same function: what was computed from the expression and its values
            # (compiled evaluation, validation) holds for the copy too
            for key in _VALUE_CACHE:
                if key in self._cache:
                    new._cache[key] = self._cache[key]
        return new

    def _merged_values(self, new: Mapping[Any, Any]) -> dict[Any, Any]:
        """The bound values with ``new`` merged in by parameter name (``None`` unbinds)."""
        if not isinstance(new, Mapping):
            raise ProfileError(f"values must be a mapping of parameter to value, got {new!r}")
        names = set()
        for k in new:
            if not isinstance(k, (str, sympy.Symbol)):
                raise ProfileError(f"parameter names must be strings or Symbols, got {k!r}")
            names.add(k if isinstance(k, str) else k.name)
        out: dict[Any, Any] = {k: v for k, v in self._values.items() if k.name not in names}
        out.update({k: v for k, v in new.items() if v is not None})
        return out

    def derived(self, expr: Any, values: Mapping[Any, Any] | None = None, *,
                name: str | None = None, **meta: Any) -> Profile:
        """A new plain :class:`Profile` of the same variable (``values`` default to this
        profile's), as the symbolic stages build their results: they work on any
        profile-like object and never import this module."""
        return Profile(expr, self._values if values is None else values, var=self._var,
                       name=name, **meta)

    @classmethod
    def from_source(cls, source: ProfileSource, *, name: str | None = None,
                    var: sympy.Symbol = _EPS,
                    **meta: Any) -> Profile:
        r"""A numeric profile whose values come from ``source`` rather than a formula.

        The expression is the opaque :math:`\delta_{\mathrm{kind}}(\varepsilon)`; numeric
        methods (``__call__``, :meth:`log_delta`, :meth:`measure`, :meth:`gdpt`,
        :meth:`eps_for_delta`) work, and symbolic ones answer what the source knows.  A
        source is any object with ``kind`` (a short name), ``log_delta(x)`` (a proved
        *upper* bound on :math:`\log\delta` at each point of a 1-d float64 array, non-
        increasing in :math:`\varepsilon`), and optionally ``tail_limit()`` (its symbolic
        tail limit), ``no_tail()`` (why it has none), ``pld`` (its privacy loss
        distribution), ``end()`` (an :math:`\varepsilon` beyond which it is constant).
        The profile built from a privacy loss distribution (:meth:`from_pld`) is one.
        """
        expr = sympy.Function(f"delta_{source.kind}")(var)
        return cls(expr, var=var, name=name or source.kind, source=source, **meta)

    @classmethod
    def from_rdp(cls, expr: Any, alpha: Any = None, values: Mapping[Any, Any] | None = None,
                 *, name: str | None = None, timeout: float | None = None) -> Profile:
        r"""The profile implied by a Rényi-DP curve :math:`\varepsilon(\alpha)` (an
        expression in ``alpha``, a string, or a table ``{order: value}``), through the tight
        RDP to :math:`(\varepsilon, \delta)` conversion minimised over the order
        (:func:`symgdp.notions.rdp_source`): an upper bound on the mechanism's profile.

        Example:
            >>> import sympy
            >>> from symgdp.notions import alpha
            >>> p = Profile.from_rdp(alpha / 2)          # the Gaussian mechanism, sigma = 1
            >>> p.tail_limit()
            1
            >>> from symgdp import delta_mu
            >>> bool(p(1.0) >= delta_mu(1.0, 1.0))
            True
        """
        from symgdp.notions import alpha as _ALPHA
        from symgdp.notions import rdp_source

        src = rdp_source(expr, alpha=_ALPHA if alpha is None else alpha, values=values,
                         timeout=timeout)
        return cls.from_source(src, name=name)

    @classmethod
    def from_zcdp(cls, rho: Any, xi: Any = 0, values: Mapping[Any, Any] | None = None, *,
                  name: str | None = None) -> Profile:
        r"""The profile implied by :math:`(\xi, \rho)`-zCDP, i.e. the RDP curve
        :math:`\xi + \rho\alpha` (:func:`symgdp.notions.zcdp_source`).

        Example:
            >>> p = Profile.from_zcdp(0.5)                # the Gaussian mechanism, sigma = 1
            >>> p.tail_limit()
            1.00000000000000
        """
        from symgdp.notions import zcdp_source

        return cls.from_source(zcdp_source(rho, xi, values), name=name)

    @classmethod
    def from_tradeoff_curve(cls, expr: Any, alpha: Any = None,
                            values: Mapping[Any, Any] | None = None, *,
                            name: str | None = None, symmetric: bool = True,
                            tol: float = 1e-6) -> Profile:
        r"""The profile of an :math:`f`-DP trade-off curve :math:`T(\alpha)` through its
        convex conjugate, :math:`\delta(\varepsilon) = \sup_\alpha 1 - T(\alpha) -
        e^\varepsilon\alpha` (Dong, Roth & Su 2021, Prop. 2.12;
        :func:`symgdp.notions.tradeoff_source`).  ``symmetric=False`` also takes the
        inverse curve's conjugate.

        Example:
            >>> import sympy
            >>> from symgdp.notions import alpha
            >>> # G_1(alpha) = Phi(Phi^{-1}(1 - alpha) - 1), written with erfc and erfcinv
            >>> G1 = sympy.erfc(-(sympy.sqrt(2) * sympy.erfcinv(2 * alpha) - 1) / sympy.sqrt(2)) / 2
            >>> p = Profile.from_tradeoff_curve(G1)
            >>> from symgdp import delta_mu
            >>> bool(abs(p(1.0) - delta_mu(1.0, 1.0)) < 1e-5)
            True
        """
        from symgdp.notions import alpha as _ALPHA
        from symgdp.notions import tradeoff_source

        src = tradeoff_source(expr, alpha=_ALPHA if alpha is None else alpha, values=values,
                              symmetric=symmetric, tol=tol)
        return cls.from_source(src, name=name)

    @property
    def source(self) -> Any:
        """The numeric source of a profile built by :meth:`from_source`, else ``None``."""
        return self._source

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
    @classmethod
    def parse(cls, text: str, values: Mapping[Any, Any] | None = None, *,
              var: sympy.Symbol = _EPS, name: str | None = None, **meta: Any) -> Profile:
        r"""A profile from a string, parsed safely (no ``eval``; :mod:`symgdp.symbolic.parsing`).

        ``eps``/``epsilon``/``ε`` name ``var``; other identifiers become positive
        parameters, which ``values`` may bind.

        Example:
            >>> p = Profile.parse("B*exp(-sigma^2*eps^2/A^2)", {"A": 2, "B": 1, "sigma": 2})
            >>> round(p(1.0), 12)
            0.367879441171
        """
        from symgdp.symbolic.parsing import parse_expression

        expr = parse_expression(text, symbols=symbol_table(var, values))
        return cls(expr, values, var=var, name=name, text=text, **meta)

    @classmethod
    def from_tradeoff(cls, equation: Any, values: Mapping[Any, Any] | None = None, *,
                      solve_for: sympy.Symbol = _DELTA, var: sympy.Symbol = _EPS,
                      name: str | None = None, timeout: float | None = None,
                      method: TradeoffMethod = "auto") -> Profile:
        r"""The naive profile of a trade-off equation :math:`\sigma = f(\varepsilon, \delta)`.

        The equation is solved for ``solve_for`` (:math:`\delta`) with SymPy under the
        time budget, keeping unbound parameters symbolic (theory §1).  When SymPy finds no
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
            from symgdp.symbolic.parsing import parse_equation

            text = equation
            equation = parse_equation(
                equation, symbols=symbol_table(var, values, (solve_for,)))
        if not isinstance(equation, sympy.Eq):
            raise ProfileError(f"from_tradeoff needs an equation sigma = f(eps, delta) "
                               f"(sympy.Eq or a string), got {equation!r}")
        d = match_symbol(solve_for, equation)
        v = match_symbol(var, equation)
        if d not in equation.free_symbols:
            raise ProfileError(f"the equation {equation} does not contain {solve_for}")
        if v not in equation.free_symbols:
            raise ProfileError(f"the equation {equation} does not contain {var}")
        residual = equation.lhs - equation.rhs
        if v != var:
            residual = residual.xreplace({v: var})
        meta: dict[str, Any] = {"tradeoff": equation}
        if text is not None:
            meta["text"] = text
        if method != "numeric":
            sols = None
            why = ""
            try:
                sols = _solve_bounded(residual, d, timeout)
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
    def _pick_solution(cls, candidates: list[Any], residual: sympy.Expr, d: sympy.Symbol,
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
        r"""The refinement point :math:`c` (theory §2) of a refined profile, else ``None``.

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
        are rejected (see *What counts as a profile* above).  SymPy's assumptions
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
        if self._source is not None:
            return self  # a source is a proved bound on a profile: nothing to check
        from symgdp.refinement.validate import check_profile

        key = "validated"
        if key not in self._cache:
            check_profile(self, timeout=timeout)
            self._cache[key] = True
        return self

    def refine(self, *, timeout: float | None = None, dps: int = 40) -> Profile:
        r"""The partial-order refinement of theory §2
        (see :func:`symgdp.refinement.refine.refine`)."""
        if self._source is not None:
            return self  # numeric: already a profile's bound, refinement cannot lower it
        from symgdp.refinement.refine import refine

        return refine(self, timeout=timeout, dps=dps)

    def subsample(self, gamma: Any) -> Profile:
        r"""Poisson subsampling with rate ``gamma`` under add/remove (theory §7;
        :func:`symgdp.refinement.refine.subsample`)."""
        if self._source is not None:
            raise ProfileError(f"a numeric {self._source.kind} profile cannot be subsampled: "
                               "subsample the mechanism before building it")
        from symgdp.refinement.refine import subsample

        return subsample(self, gamma)

    def tail_limit(self, *, timeout: float | None = None) -> sympy.Expr:
        r""":math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` (theory §5;
        :func:`symgdp.tail.limit.tail_limit`)."""
        if self._source is not None:
            return self._source_tail()
        from symgdp.tail.limit import tail_limit

        self.validate(timeout=timeout)
        return tail_limit(self, timeout=timeout)

    def identify(self, *, timeout: float | None = None) -> Any:
        r"""The GDP verdict from the tail (theory §5; :func:`symgdp.tail.limit.identify`)."""
        if self._source is not None:
            self._source_tail()  # a source without a symbolic tail has no verdict
            from symgdp.tail.limit import identify_limit

            return identify_limit(self._source_tail(), method="symbolic")
        from symgdp.tail.limit import identify

        self.validate(timeout=timeout)
        return identify(self, timeout=timeout)

    def _source_tail(self) -> sympy.Expr:
        own = getattr(self._source, "tail_limit", None)
        limit = own() if callable(own) else None
        if limit is None:
            why = getattr(self._source, "no_tail", None)
            raise ProfileError(why() if callable(why) else
                               f"a numeric {self._source.kind} profile has no symbolic tail")
        return limit

    def measure(self, eps_h: float = 100.0, tol: float = 1e-6, *, refine: bool = True,
                method: MeasureMethod = "auto", certify: bool | None = None, **kw: Any) -> Any:
        """Guaranteed bounds on the GDP parameter (:func:`symgdp.measurement.measure.measure`,
        which validates the profile)."""
        from symgdp.measurement.measure import measure

        return measure(self, eps_h=eps_h, tol=tol, refine=refine, method=method,
                       certify=certify, **kw)

    def tradeoff(self, alpha: Any, **kw: Any) -> Any:
        r"""The trade-off curve :math:`\beta(\alpha)` of the mechanism with certified
        bands (``.lower``, ``.upper``; :func:`symgdp.notions.bands.band`, Dong, Roth & Su 2021,
        Prop. 2.12), vectorised over ``alpha``.

        Example:
            >>> from symgdp import mechanisms
            >>> b = mechanisms.gaussian(1.0).tradeoff([0.05, 0.5])
            >>> bool((b.lower <= b.upper).all()), round(float(b.upper[1]), 6)  # Phi(-1)
            (True, 0.158655)
        """
        from symgdp.notions.bands import band

        return band(self, alpha, **kw)

    def group(self, k: int) -> Profile:
        r"""The profile of groups of ``k`` records (:func:`symgdp.notions.group.group_profile`):
        a Gaussian mechanism's exactly (:math:`\mu`-GDP gives :math:`k\mu`-GDP), any other
        profile by the group bound along the chain of ``k`` neighbours.

        Example:
            >>> from symgdp import mechanisms
            >>> g = mechanisms.gaussian(0.5).group(3)
            >>> round(g(1.0), 12) == round(mechanisms.gaussian(1.5)(1.0), 12)
            True
        """
        if self._source is not None:
            raise ProfileError(f"group privacy of a numeric {self._source.kind} profile is "
                               "not available: give the mechanism's profile as a formula")
        from symgdp.notions.group import group_profile

        return cast(Profile, group_profile(self, k))

    def gdpt(self, eps: Any) -> Any:
        r"""The GDP transformation :math:`G(\varepsilon) = \mu_{GDP}(\varepsilon,
        \delta(\varepsilon))` (theory §4; :func:`symgdp.measurement.measure.gdpt`)."""
        from symgdp.measurement.measure import gdpt

        return gdpt(self, eps)

    # -- privacy loss distributions (symgdp.accounting) -----------------------------------
    @classmethod
    def from_pld(cls, pld: Any, *, name: str | None = None) -> Profile:
        r"""The numeric profile of a pessimistic dp_accounting privacy loss distribution
        (an upper bound, floored by its mass at infinity; its ``source`` is a
        :class:`~symgdp.pld.curves.PLDSource`).

        Example:
            >>> from dp_accounting.pld import privacy_loss_distribution as pld
            >>> p = Profile.from_pld(pld.from_gaussian_mechanism(1.0).self_compose(4))
            >>> from symgdp import delta_mu
            >>> p(1.0) >= delta_mu(1.0, 2.0)   # 4-fold 1-GDP is 2-GDP
            True
            >>> p.source.floor < 1e-14   # the mass at infinity: dp_accounting's tail cut
            True
        """
        from symgdp.pld.curves import pld_source

        return cls.from_source(pld_source(pld), name=name or "PLD")

    def to_pld(self, value_discretization_interval: float = 1e-4, **kw: Any) -> Any:
        r"""A pessimistic dp_accounting privacy loss distribution dominating this profile
        (:func:`symgdp.pld.connect.to_pld`; a profile built from a PLD returns it)."""
        from symgdp.pld.connect import to_pld

        return to_pld(self, value_discretization_interval, **kw)

    def eps_for_delta(self, delta: Any) -> Any:
        r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le \delta`
        (``inf`` when the profile stays above ``delta``, e.g. below a PLD's floor), by
        bisection to 1e-12 relative on :meth:`log_delta`, rounded up so that
        :math:`(\varepsilon, \delta)`-DP holds; vectorised.

        Example:
            >>> from symgdp import mechanisms
            >>> round(mechanisms.laplace(1.0).eps_for_delta(0.1), 6)  # 1 + 2 log(0.9)
            0.789279
        """
        from symgdp.pld.curves import first_eps_below

        scalar = np.ndim(delta) == 0
        d = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        bad = ~((d > 0) & (d <= 1))
        if np.any(bad):
            raise DomainError(f"delta must lie in (0, 1], got {d[bad][0]!r}")
        out = np.array([first_eps_below(self, float(np.log(t))) for t in d])
        return float(out[0]) if scalar else out

    # -- numeric evaluation (symgdp.evaluation.evaluate) -----------------------------------
    def _evaluator(self) -> Evaluator:
        c = self._cache
        if "evaluator" not in c:
            c["evaluator"] = Evaluator(self)
        return cast(Evaluator, c["evaluator"])

    def __call__(self, eps: Any) -> Any:
        r""":math:`\delta(\varepsilon)` in float64, read as 1 above 1 (vectorised), rounded
        *up*: ``exp`` of :meth:`log_delta` (itself an upper bound for a certified source)
        taken a few ulps above its nearest float, so a certified profile's float is never
        below the bound it stands for (0 stays 0 where the log is ``-inf``).

        Example:
            >>> from symgdp import mechanisms, compose
            >>> c = compose(mechanisms.randomized_response(20.0), times=2)
            >>> import mpmath; p = mpmath.e**20 / (1 + mpmath.e**20)
            >>> bool(c(20.0) >= p**2 * (1 - mpmath.e**-20))       # the exact value
            True
        """
        y = exp_up(np.asarray(self.log_delta(eps), dtype=np.float64))
        return float(y) if np.ndim(eps) == 0 else y

    def log_delta(self, eps: Any) -> Any:
        r""":math:`\log\delta(\varepsilon) \le 0` (vectorised), finite wherever
        :math:`\delta > 0` even when :math:`\delta` underflows float64
        (see :mod:`symgdp.evaluation.evaluate` for when float64 is trusted)."""
        if self._source is not None:
            from symgdp.pld.curves import eps_array

            scalar, x = eps_array(eps)
            out = np.minimum(np.asarray(self._source.log_delta(x.ravel()), dtype=np.float64),
                             0.0)
            return float(out[0]) if scalar else out.reshape(np.shape(eps))
        return self._evaluator().log_delta(eps)

    def mp(self, eps: Any, *, dps: int = 40) -> mpmath.mpf:
        r"""The profile at one point with mpmath at ``dps`` digits (values above 1 kept).

        At a pole or a 0/0 (``K/eps`` at 0, a division by zero) the value is taken just
        to the right, at :math:`\varepsilon + 2^{-p/2}` for a working precision of
        :math:`p` bits (a pole then reads as a huge, i.e. vacuous, value).
        """
        if self._source is not None:
            with mpmath.workdps(dps):
                return mpmath.exp(mpmath.mpf(self.log_delta(float(eps))))
        return self._evaluator().mp(eps, dps=dps)

    def _eval_numpy(self, x: np.ndarray, kind: FloatKind) -> np.ndarray:
        """Float64 values of the plain (``"numpy"``) or log-expanded (``"log"``) expression."""
        return cast(np.ndarray, self._evaluator().eval_float(x, kind))

    def _mp_log(self, e: float) -> float:
        """log delta(e) resolved in high precision (see ``Evaluator.mp_log`` in
        :mod:`symgdp.evaluation.evaluate`)."""
        if self._source is not None:
            return float(self.log_delta(float(e)))
        return self._evaluator().mp_log(e)

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
            return str(sympy.latex(self.bound_expr if bound else self._expr))
        if bound and self._values:
            template = template.xreplace(dict(self._values))
        parts = []
        for sym, val in self._meta.get("latex_constants", ()):
            approx = mpmath.nstr(mpmath.mpf(sympy.N(val, digits + 5)), digits)
            if isinstance(val, sympy.Float):
                parts.append(rf"{sympy.latex(sym)} \approx {approx}")
            else:
                parts.append(rf"{sympy.latex(sym)} = {sympy.latex(val)} \approx {approx}")
        return str(sympy.latex(template)) + r",\quad " + r",\ ".join(parts)

    def _repr_latex_(self) -> str:
        lhs = rf"\delta_{{\mathrm{{{self._name}}}}}" if self._name else r"\delta"
        return rf"${lhs}({sympy.latex(self._var)}) = {self.latex()}$"
