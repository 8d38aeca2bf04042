"""Shared helpers of the notions' sources: symbols, binding, balls, outward rounding,
and the RDP to (eps, delta) conversion at one order."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx

from symgdp.errors import DomainError, ParseError, UnboundParameterError
from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb
from symgdp.symbolic.parsing import parse_expression

#: the default symbol of a Rényi order and of a trade-off curve's type I error
alpha = sympy.Symbol("alpha", positive=True, real=True)

_U = 2.0**-52
_TINY = 2.0**-1000   # absolute slack: covers an underflowed product's lost bits


# -- shared helpers ----------------------------------------------------------------------

def _up(x: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    """``x + slack`` rounded up once more (slack covers the float error of ``x``)."""
    return np.nextafter(x + slack, np.inf)


def _down(x: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    return np.nextafter(x - slack, -np.inf)


def _symbol(var: Any) -> sympy.Symbol:
    if isinstance(var, str):
        return sympy.Symbol(var, positive=True, real=True)
    if not isinstance(var, sympy.Symbol):
        raise DomainError(f"the order/argument symbol must be a SymPy Symbol, got {var!r}")
    return var


def _expression(expr: Any, var: sympy.Symbol, what: str) -> sympy.Expr:
    if isinstance(expr, str):
        names = {var.name: var, "alpha": var, "α": var}
        return parse_expression(expr, symbols=names)
    try:
        out = sympy.sympify(expr, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise ParseError(f"{what} must be a SymPy expression or a string, got {expr!r}"
                         ) from exc
    if not isinstance(out, sympy.Expr):
        raise ParseError(f"{what} must be an expression, got {expr!r}")
    return out


def _bind(expr: sympy.Expr, values: Mapping[Any, Any] | None, var: sympy.Symbol | None
          ) -> tuple[sympy.Expr, list[sympy.Symbol]]:
    """``expr`` with ``values`` substituted (keys symbols or names), and the symbols left
    unbound besides ``var``."""
    if values:
        by_name = {s.name: s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
        subs = {}
        for k, v in values.items():
            s = by_name.get(k) if isinstance(k, str) else k
            if s is not None:
                subs[s] = sympy.sympify(v)
        expr = expr.subs(subs)
    free = sorted((s for s in expr.free_symbols if s != var), key=str)
    return expr, free


def _require_bound(free: list[sympy.Symbol], what: str) -> None:
    if free:
        names = ", ".join(map(str, free))
        raise UnboundParameterError(
            f"{what} has unbound parameters {names}: give them values= for numeric work")


def _ball(number: sympy.Expr, prec: int = 128) -> arb:
    """A ball around a numeric SymPy expression (exact numbers, sqrt, pi, ...)."""
    z = sympy.Dummy("z")
    with ctx.workprec(prec):
        try:
            b = lambdify_arb(sympy.sympify(number), z)(0.0)
        except ArbUnsupported as exc:
            raise DomainError(f"cannot evaluate {number} with ball arithmetic: {exc}") from exc
    if not b.is_finite():
        raise DomainError(f"the value {number} is not a finite real number")
    return b


def _float_bounds(b: arb) -> tuple[float, float]:
    """Floats below and above every point of the ball (equal when it is one float)."""
    lo, hi = float(b.lower()), float(b.upper())
    if arb(lo) > b.lower():
        lo = math.nextafter(lo, -math.inf)
    if arb(hi) < b.upper():
        hi = math.nextafter(hi, math.inf)
    return lo, hi


def _fmt(x: Any) -> str:
    return f"{float(x):.6g}"


def _xs(x: Any) -> tuple[bool, np.ndarray]:
    scalar = np.ndim(x) == 0
    arr = np.atleast_1d(np.asarray(x, dtype=np.float64))
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        bad = arr[np.isnan(arr) | (arr < 0)][0]
        raise DomainError(f"eps must be >= 0, got {bad!r}")
    return scalar, arr


def _finish(scalar: bool, out: np.ndarray, shape: tuple[int, ...]) -> Any:
    return float(out[0]) if scalar else out.reshape(shape)


# -- the conversion RDP -> (eps, delta) at one order, float with outward rounding ---------

def log1m_inv(a: Any) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\log(1 - 1/\alpha)` for float orders :math:`\alpha > 1` (vectorised) and a
    bound on its absolute float error.

    ``log1p(-1/alpha)`` alone amplifies the rounding of :math:`1/\alpha` by
    :math:`1/(\alpha - 1)` (about 1e5 u at :math:`\alpha = 1.00001`): for
    :math:`\alpha \le 2` the value is :math:`\log(\alpha - 1) - \log\alpha` instead, with
    :math:`\alpha - 1` exact (Sterbenz), each logarithm within 2 u of its size; above 2 the
    condition number of ``log1p`` at :math:`-1/\alpha` is at most 2.

    Example:
        >>> import mpmath
        >>> v, err = log1m_inv(np.array([1.00001, 3.0]))
        >>> with mpmath.workdps(40):
        ...     ref = [mpmath.log(1 - 1 / mpmath.mpf(a)) for a in (1.00001, 3.0)]
        >>> all(abs(v[i] - ref[i]) <= err[i] for i in (0, 1)) and bool(err[0] < 1e-13)
        True
    """
    a = np.asarray(a, dtype=np.float64)
    near = a <= 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        lm1 = np.log(np.where(near, a - 1.0, 1.0))
        la = np.log(a)
        far = np.log1p(-1.0 / np.where(near, 2.0, a))
    v = np.where(near, lm1 - la, far)
    err = np.where(near, 4 * _U * (np.abs(lm1) + np.abs(la)),
                   4 * _U / np.where(near, 2.0, a)) + 4 * _U * np.abs(v) + _TINY
    return v, err


def _log_g(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(\alpha - 1)\log(1 - 1/\alpha) - \log\alpha` in float and a bound on its
    rounding error."""
    v, verr = log1m_inv(a)
    t = (a - 1.0) * v
    la = np.log(a)
    return t - la, (16 * _U * (np.abs(t) + np.abs(la)) + np.abs(a - 1.0) * verr * (1 + 8 * _U)
                    + _TINY)


