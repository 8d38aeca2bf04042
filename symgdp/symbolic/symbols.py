r"""The canonical symbols of symgdp.

``eps`` (:math:`\varepsilon`) and ``delta`` (:math:`\delta`) are positive real SymPy
symbols; every function that takes an expression also accepts ``var=`` to name another
symbol for :math:`\varepsilon`.  Safe parsing of user strings lives in
:mod:`symgdp.symbolic.parsing`.  The parameter values of a profile are read here too
(:func:`sympify_value`, :func:`normalise_values`), as are the names a profile's text may
use (:func:`symbol_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from symgdp.errors import ProfileError

__all__ = ["eps", "delta", "sigma", "mu", "gamma", "sympify_value", "normalise_values",
           "symbol_table", "match_symbol"]

eps = sympy.Symbol("varepsilon", positive=True, real=True)
delta = sympy.Symbol("delta", positive=True, real=True)
#: a noise scale, as used in trade-off equations ``sigma = f(eps, delta)``
sigma = sympy.Symbol("sigma", positive=True, real=True)
#: the GDP parameter
mu = sympy.Symbol("mu", positive=True, real=True)
#: a sampling rate
gamma = sympy.Symbol("gamma", positive=True, real=True)

# Names a user may type for the canonical symbols.
ALIASES: dict[str, sympy.Symbol] = {
    "eps": eps,
    "epsilon": eps,
    "varepsilon": eps,
    "ε": eps,
    "delta": delta,
    "δ": delta,
    "sigma": sigma,
    "σ": sigma,
    "mu": mu,
    "μ": mu,
    "gamma": gamma,
    "γ": gamma,
}


# -- parameter values and symbols of profiles ---------------------------------------------
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


def match_symbol(sym: sympy.Symbol, expr: sympy.Basic) -> sympy.Symbol:
    """The symbol of ``expr`` named like ``sym`` (equations may carry their own symbols)."""
    if sym in expr.free_symbols:
        return sym
    same = [s for s in expr.free_symbols if getattr(s, "name", None) == sym.name]
    return same[0] if len(same) == 1 else sym


def symbol_table(var: sympy.Symbol, values: Mapping[Any, Any] | None,
                 extra: tuple[sympy.Symbol, ...] = ()) -> dict[str, sympy.Symbol]:
    """The names a profile's text may use: the aliases, the parameters, and ``var``."""
    table: dict[str, sympy.Symbol] = dict(ALIASES)
    for s in (*extra, *(k for k in (values or {}) if isinstance(k, sympy.Symbol))):
        table[s.name] = s
    if var != eps:
        # the user's own epsilon symbol replaces the canonical one under every alias
        for alias, s in ALIASES.items():
            if s == eps:
                table[alias] = var
    table[var.name] = var
    return table


def normalise_values(expr: sympy.Expr, values: Mapping[Any, Any]) -> dict:
    """Parameter values keyed by the expression's own symbols (names looked up in it)."""
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
