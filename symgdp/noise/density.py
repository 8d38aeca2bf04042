r"""Reading and checking a noise density: a SymPy expression or a ``sympy.stats`` variable.

:func:`read_density` turns the noise a researcher writes first -- a density :math:`p(x)`
as a SymPy expression in a variable, or a continuous ``sympy.stats`` random variable
(``Normal``, ``Laplace``, ``Logistic``, ``Cauchy``, ``StudentT``, ...) -- into a
:class:`Density`: the density split into analytic pieces on ordered intervals of the real
line (``Abs``, ``sign``, ``Max``/``Min`` and ``Piecewise`` are rewritten as pieces), with
its cumulative distribution function on each piece.

It is checked before anything is derived from it, each check under a time budget
(:mod:`symgdp.symbolic.budget`):

* it depends on the variable, the variable is real, and every parameter is declared real
  (a scale declared ``positive=True``);
* it is non-negative (proved by SymPy's assumptions on each piece; where they cannot
  decide, a numeric scan looks for a negative point and names it);
* it integrates to 1 over the real line (the integral is named when it is not).

What is not proved is refused, never assumed: :class:`~symgdp.errors.DomainError` for a
density that is wrong, :class:`~symgdp.errors.ProfileError` or
:class:`~symgdp.errors.AnalysisTimeout` for one that cannot be checked.

Example:
    >>> import sympy
    >>> from sympy.stats import Laplace
    >>> b = sympy.Symbol("b", positive=True)
    >>> d = read_density(Laplace("Z", 0, b))
    >>> [(p.lo, p.hi) for p in d.pieces]
    [(-oo, 0), (0, oo)]
    >>> d.cdf[0]
    exp(x/b)/2
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import mpmath
import sympy

from symgdp.errors import DomainError, ProfileError
from symgdp.symbolic.budget import run_bounded

__all__ = ["Density", "Piece", "read_density", "exact_number", "positive_number"]

_OO = sympy.oo


@dataclass(frozen=True)
class Piece:
    """The density on one interval ``(lo, hi)`` of the real line: an analytic ``expr``."""

    expr: sympy.Expr
    lo: sympy.Expr
    hi: sympy.Expr


@dataclass(frozen=True)
class Density:
    r"""A checked one-dimensional noise density (see :func:`read_density`).

    Attributes:
        x: the (real) variable.
        expr: the density as written, in ``x``.
        pieces: the analytic pieces, ordered, covering the real line.
        cdf: :math:`F(x) = P[Z \le x]` on each piece (an expression in ``x``).
        params: the parameters (free symbols other than ``x``).
        name: a display name (the distribution's, for a ``sympy.stats`` variable).
        symmetric: :math:`p(-x) = p(x)` proved (``True``) or not (``False``).
    """

    x: sympy.Symbol
    expr: sympy.Expr
    pieces: tuple[Piece, ...]
    cdf: tuple[sympy.Expr, ...]
    params: tuple[sympy.Symbol, ...]
    name: str
    symmetric: bool

    def piece_index(self, lo: sympy.Expr, hi: sympy.Expr) -> int:
        """The index of the piece that contains the interval ``(lo, hi)`` (proved by
        SymPy); ProfileError when no piece provably does."""
        for i, p in enumerate(self.pieces):
            if _le(p.lo, lo) and _le(hi, p.hi):
                return i
        raise ProfileError(f"cannot decide which piece of the density holds on ({lo}, {hi})")

    def reflected(self) -> Density:
        """The density of :math:`-Z`: :math:`p(-x)`, for the other shift direction."""
        x = self.x
        pieces = tuple(Piece(p.expr.xreplace({x: -x}), -p.hi, -p.lo)
                       for p in reversed(self.pieces))
        # F_{-Z}(x) = 1 - F_Z(-x) (continuous distributions)
        cdf = tuple(1 - c.xreplace({x: -x}) for c in reversed(self.cdf))
        return Density(x, self.expr.xreplace({x: -x}), pieces, cdf, self.params,
                       f"-{self.name}", self.symmetric)


def _le(a: sympy.Expr, b: sympy.Expr) -> bool:
    """``a <= b`` proved (infinite ends included)."""
    if a == b or a == -_OO or b == _OO:
        return True
    if a == _OO or b == -_OO:
        return False
    return bool((b - a).is_nonnegative)


def _lt(a: sympy.Expr, b: sympy.Expr) -> bool | None:
    if a == b:
        return False
    if a == -_OO or b == _OO:
        return True
    if a == _OO or b == -_OO:
        return False
    return (b - a).is_positive


# -- reading the input ----------------------------------------------------------------------
def _from_random_variable(rv: Any, variable: Any) -> tuple[sympy.Expr, sympy.Symbol, str]:
    from sympy.stats import density
    from sympy.stats.crv import SingleContinuousPSpace
    from sympy.stats.rv import RandomSymbol

    if not isinstance(rv, RandomSymbol):
        raise DomainError(f"not a sympy.stats random variable: {rv!r}")
    space = rv.pspace
    if not isinstance(space, SingleContinuousPSpace):
        raise ProfileError(f"the noise {rv} ({type(space).__name__}) is not a single "
                           "continuous random variable; give a density on the real line, "
                           "or a PMF on the integers with support='integers' "
                           "(multivariate noise is not derived yet)")
    dist = space.distribution
    support = dist.set
    if support != sympy.Interval(-_OO, _OO):
        raise ProfileError(
            f"the noise {rv} has support {support}, not the whole real line: p(x - Delta) "
            "= 0 where p(x) > 0, so delta(eps) is at least the mass there for every eps "
            "(not DP for any eps); only noise positive on the whole line is derived")
    name = type(dist).__name__.removesuffix("Distribution")
    x = sympy.Symbol(str(variable) if variable is not None else "x", real=True)
    return sympy.sympify(density(rv)(x)), x, name


def _from_expression(noise: Any, variable: Any) -> tuple[sympy.Expr, sympy.Symbol, str]:
    try:
        expr = sympy.sympify(noise, strict=True) if not isinstance(noise, str) \
            else None
    except (sympy.SympifyError, TypeError) as exc:
        raise DomainError(f"the noise must be a SymPy expression in a variable or a "
                          f"sympy.stats random variable, got {noise!r}") from exc
    if expr is None:
        from symgdp.symbolic.parsing import parse_expression

        name = str(variable) if variable is not None else "x"
        # the variable is real (a positive one would read |x| as x); decimals exact
        expr = parse_expression(noise, symbols={name: sympy.Symbol(name, real=True)},
                                rational=True)
    if isinstance(expr, (sympy.Equality, sympy.logic.boolalg.Boolean)) \
            or not isinstance(expr, sympy.Expr):
        raise DomainError(f"the noise must be a density p(x), an expression, got {expr}")
    syms = sorted((s for s in expr.free_symbols if isinstance(s, sympy.Symbol)),
                  key=lambda s: s.name)
    if variable is None:
        named_x = [s for s in syms if s.name == "x"]
        if len(syms) == 1 or named_x:
            var = (named_x or syms)[0]
        else:
            raise DomainError(f"give variable=: the density {expr} has the symbols "
                              f"{', '.join(s.name for s in syms) or 'none'} and none is "
                              "called x")
    else:
        if isinstance(variable, str):
            variable = sympy.Symbol(variable)
        if not isinstance(variable, sympy.Symbol):
            raise DomainError(f"variable must be a SymPy Symbol, got {variable!r}")
        same = [s for s in syms if s.name == variable.name]
        var = same[0] if same else variable
    if var not in expr.free_symbols:
        raise DomainError(f"{expr} is not a density in {var}: it does not depend on {var}")
    x = sympy.Symbol(var.name, real=True)
    return expr.xreplace({var: x}), x, "p"


def _pieces(expr: sympy.Expr, x: sympy.Symbol) -> list[Piece]:
    """The density as analytic pieces on ordered intervals (runs in a bounded child)."""
    rewritten = expr
    if expr.has(sympy.Abs, sympy.sign, sympy.Max, sympy.Min, sympy.Heaviside,
                sympy.Piecewise):
        rewritten = sympy.piecewise_fold(expr.rewrite(sympy.Piecewise))
    if not isinstance(rewritten, sympy.Piecewise):
        return [Piece(expr, -_OO, _OO)]
    out: list[Piece] = []
    for e, s in rewritten.as_expr_set_pairs(sympy.Interval(-_OO, _OO)):
        parts = s.args if isinstance(s, sympy.Union) else (s,)
        for part in parts:
            if isinstance(part, sympy.FiniteSet) or part is sympy.S.EmptySet:
                continue  # a point does not change the distribution
            if not isinstance(part, sympy.Interval):
                raise ProfileError(f"the density's piece {e} holds on {part}, not an "
                                   "interval: not split into pieces")
            if part.measure == 0:
                continue
            out.append(Piece(sympy.simplify(e), part.start, part.end))
    ordered: list[Piece] = []
    for p in out:  # insertion sort with proved comparisons
        k = 0
        while k < len(ordered) and _lt(ordered[k].lo, p.lo):
            k += 1
        ordered.insert(k, p)
    for a, b in pairwise(ordered):
        if sympy.simplify(a.hi - b.lo) != 0:
            raise ProfileError(f"cannot order the pieces of the density: ({a.lo}, {a.hi}) "
                               f"and ({b.lo}, {b.hi})")
    if not ordered or ordered[0].lo != -_OO or ordered[-1].hi != _OO:
        raise ProfileError(f"the pieces of {expr} do not cover the real line")
    return ordered


def _integrals(pieces: list[Piece], x: sympy.Symbol) -> tuple[sympy.Expr, list[sympy.Expr]]:
    """(total mass, CDF on each piece); runs in a bounded child."""
    t = sympy.Dummy("t", real=True)
    below = sympy.S.Zero
    cdf = []
    for p in pieces:
        f = p.expr.xreplace({x: t})
        part = sympy.integrate(f, (t, p.lo, x))
        if part.has(sympy.Integral):
            raise ProfileError(f"SymPy cannot integrate the density piece {p.expr}")
        cdf.append(sympy.simplify(below + part))
        mass = sympy.integrate(f, (t, p.lo, p.hi))
        if mass.has(sympy.Integral):
            raise ProfileError(f"SymPy cannot integrate the density piece {p.expr} on "
                               f"({p.lo}, {p.hi})")
        below = sympy.simplify(below + mass)
    return below, [_lower_tail(c) for c in cdf]


def _lower_tail(e: sympy.Expr) -> sympy.Expr:
    """``erf(a)`` written as ``erfc(-a) - 1`` (and ``erfc(a)`` as ``2 - erfc(-a)``): a CDF
    ``(1 + erf(a))/2`` becomes ``erfc(-a)/2``, accurate far into the lower tail where the
    profile needs it (no simplification afterwards: it would undo this)."""
    if not e.has(sympy.erf, sympy.erfc):
        return e
    e = e.replace(sympy.erfc, lambda a: 1 - sympy.erf(a))
    return sympy.expand(e.replace(sympy.erf, lambda a: sympy.erfc(-a) - 1))


def _negative_point(piece: Piece, x: sympy.Symbol,
                    params: tuple[sympy.Symbol, ...]) -> tuple[Any, dict] | None:
    """A point of the piece where the density is negative, at parameters 1 (or None)."""
    at = {s: sympy.Integer(1) for s in params}
    f = sympy.lambdify(x, piece.expr.xreplace(at), "mpmath")
    lo = -60.0 if piece.lo == -_OO else float(piece.lo.xreplace(at))
    hi = 60.0 if piece.hi == _OO else float(piece.hi.xreplace(at))
    with mpmath.workdps(30):
        for k in range(1, 2400):
            v = lo + (hi - lo) * k / 2400
            try:
                y = f(mpmath.mpf(v))
            except (ZeroDivisionError, ValueError, TypeError):
                continue
            if isinstance(y, mpmath.mpf) and y < 0:
                return sympy.nsimplify(v, rational=True), at
    return None


def _check(expr: sympy.Expr, x: sympy.Symbol) -> tuple[list[Piece], list, Any, bool]:
    """Pieces, signs proved per piece, and symmetry (runs in a bounded child)."""
    pieces = _pieces(expr, x)
    signs = [sympy.simplify(p.expr).is_nonnegative for p in pieces]
    symmetric = sympy.simplify(expr.xreplace({x: -x}) - expr) == 0
    return pieces, signs, None, bool(symmetric)


def _is_one(total: sympy.Expr) -> bool:
    """``total == 1`` proved by simplification (Gamma, Beta and Catalan values rewritten)."""
    d = sympy.simplify(total - 1)
    if d == 0:
        return True
    return sympy.simplify(sympy.gammasimp(d.rewrite(sympy.gamma))) == 0


def read_density(noise: Any, variable: Any = None, *, timeout: float | None = None) -> Density:
    r"""Read and check a noise density (see the module docstring).

    Args:
        noise: a SymPy expression :math:`p(x)` (or a string, parsed safely), or a
            continuous ``sympy.stats`` random variable.
        variable: the variable of the density (a Symbol or its name); by default the
            only symbol, or the one called ``x``.
        timeout: budget in seconds of each bounded SymPy call.

    Raises:
        DomainError: not a density in the variable, a parameter not declared real, a
            negative value (the point is named), or a total mass other than 1 (named).
        ProfileError: a density that cannot be split, integrated or checked.
        AnalysisTimeout: a check did not finish within the budget.

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> read_density(2 * sympy.exp(-x**2 / 2) / sympy.sqrt(2 * sympy.pi))
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        symgdp.errors.DomainError: the density ... integrates to 2 over the real line, not 1
    """
    from sympy.stats.rv import RandomSymbol

    if isinstance(noise, RandomSymbol):
        expr, x, name = _from_random_variable(noise, variable)
    else:
        expr, x, name = _from_expression(noise, variable)
    if expr.has(RandomSymbol):
        raise DomainError(f"the density {expr} contains a random variable; give its "
                          "density, or the random variable itself")
    params = tuple(sorted((s for s in expr.free_symbols if s != x), key=lambda s: s.name))
    for s in params:
        if not isinstance(s, sympy.Symbol):
            raise DomainError(f"the density {expr} has the non-symbol parameter {s}")
        if s.is_real is not True:
            raise DomainError(f"the parameter {s} of the density {expr} is not declared "
                              f"real: declare it, e.g. sympy.Symbol({s.name!r}, "
                              "positive=True) for a scale")
    pieces, signs, _, symmetric = run_bounded(_check, expr, x, timeout=timeout)
    for p, ok in zip(pieces, signs, strict=True):
        if ok:
            continue
        bad = _negative_point(p, x, params)
        if bad is not None:
            point, at = bad
            where = "" if not at else " (with " + ", ".join(
                f"{k} = {v}" for k, v in at.items()) + ")"
            value = sympy.N(p.expr.xreplace({**at, x: point}), 6)
            raise DomainError(f"the density {expr} is negative at {x} = {point}{where}: "
                              f"p = {value}")
        raise ProfileError(f"could not prove the density {p.expr} non-negative on "
                           f"({p.lo}, {p.hi})")
    total, cdf = run_bounded(_integrals, pieces, x, timeout=timeout)
    if not run_bounded(_is_one, total, timeout=timeout):
        value = sympy.N(total, 30)
        if value.is_number and abs(value - 1) > sympy.Float("1e-25"):
            raise DomainError(f"the density {expr} integrates to {total} over the real "
                              "line, not 1")
        raise ProfileError(f"could not prove that the density {expr} integrates to 1 "
                           f"(SymPy gives {total})")
    return Density(x, expr, tuple(pieces), tuple(cdf), params, name, symmetric)


# -- shared by the derivations' reports ------------------------------------------------------
def tex_text(s: str) -> str:
    """Plain text for ``\\text{...}`` (LaTeX specials escaped)."""
    for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"),
                 ("#", r"\#"), ("^", r"\^{}"), ("{", r"\{"), ("}", r"\}")):
        s = s.replace(a, b)
    return s


def aligned_rows(rows: list[tuple[str, Any]]) -> str:
    """``name  value`` lines, the names padded to one width (a derivation's text form)."""
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)



# -- shared by the numeric sources (noise.discrete, noise.gengauss) --------------------------
def log_delta_each(delta_ball: Callable[[float], Any], x: Any, prec: int = 256) -> Any:
    """Proved upper bounds on log delta at the points ``x`` (float64, a float for a scalar):
    at each, the log of the upper end of ``delta_ball(eps)`` (a ball whose upper end bounds
    delta) rounded up, ``-inf`` where that end is at most 0, and at most 0 (delta <= 1).

    Example:
        >>> from flint import arb
        >>> log_delta_each(lambda e: arb(0.5), [0.0, 1.0]).tolist()  # log(1/2), rounded up
        [-0.6931471805599453, -0.6931471805599453]
    """
    import numpy as np
    from flint import arb, ctx

    from symgdp.numerics.rounding import float_above

    xs = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = np.empty(xs.shape)
    for i, e in enumerate(xs.flat):
        b = delta_ball(float(e))
        with ctx.workprec(prec):
            up = arb(b.upper())
            out.flat[i] = -np.inf if up <= 0 else min(float_above(up.log()), 0.0)
    return float(out[0]) if np.ndim(x) == 0 else out


def exact_number(value: Any, what: str) -> sympy.Expr:
    """``value`` as a SymPy expression (a float as the binary number it stores, exactly);
    ``what`` names it in the error.

    Example:
        >>> exact_number(0.5, "q")
        1/2
    """
    if isinstance(value, bool):
        raise DomainError(f"{what} must be a number, got {value!r}")
    try:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise DomainError(f"{what} must be finite, got {value!r}")
            return sympy.Rational(value)
        return sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise DomainError(f"{what} must be a number or a SymPy expression, got "
                          f"{value!r}") from exc


def positive_number(value: Any, what: str, example: str = "s") -> sympy.Expr:
    """:func:`exact_number`, checked positive and finite (a symbol must be declared
    positive; ``example`` is the symbol name the error suggests)."""
    v = exact_number(value, what)
    if v.is_number:
        if not (v.is_real and v.is_finite and v > 0):
            raise DomainError(f"{what} must be a positive finite number, got {value!r}")
        return v
    if v.is_positive is not True or v.is_finite is False:
        raise DomainError(f"{what} = {v} is not proved positive: declare its symbols "
                          f"positive, e.g. sympy.Symbol({example!r}, positive=True)")
    return v
