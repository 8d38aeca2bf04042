r"""Ball functions of a profile and its derivatives, compiled once per expression.

Parameters (Float ones, and rational ones where the symbolic preparation cannot depend on
their values) stay symbols fed as exact balls, and decimal literals are abstracted where
nothing depends on their values (``_shared_form``), so that every point of a parameter
grid shares one compile (``_compiled``, cached).  Higher derivatives are differentiated
and compiled lazily, on first use (``_Lazy``).
"""

from __future__ import annotations

import functools
from typing import Any

import sympy
from flint import arb

from symgdp.errors import AnalysisTimeout
from symgdp.evaluation.interval import (
    CONST_BALLS,
    ArbUnsupported,
    Erfcx,
    ErfcxDiff,
    ParamBall,
    abstract_constants,
    lambdify_arb,
    param_value,
)
from symgdp.measurement.forms import _MAX_OPS, MAX_OPS, _derivatives, _doit_finite
from symgdp.measurement.structure import _Monotone, _monotone_parts, _structure
from symgdp.numerics.balls import RATIONAL_EXP
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.implicit import LogDeltaRoot


def _value_free(expr: sympy.Expr) -> bool:
    """Whether nothing of the symbolic preparation of ``expr`` (derivatives, erfcx forms,
    finite sums) depends on the values of its constants: not with erf/erfc, whose
    rewriting pairs exponents that agree up to a negligible rate (a test on the
    constants' values), nor with finite sums (their limits must stay numbers), nor with
    an implicit root (whether its residual is defined at the origin is decided from its
    numbers)."""
    return not expr.has(sympy.erf, sympy.erfc, Erfcx, ErfcxDiff, sympy.Sum, sympy.Product,
                        LogDeltaRoot)


def _param_ball(v: sympy.Expr) -> Any:
    """A parameter value: an exact rational where it is a number, else its ball."""
    p = param_value(v)
    return p.ball() if isinstance(p, ParamBall) else p


def _shared_form(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...]
                 ) -> tuple[sympy.Expr, tuple[sympy.Symbol, ...], tuple[Any, ...]]:
    """``expr`` with its decimal literals abstracted (``abstract_constants``) where
    nothing of the symbolic preparation depends on their values (``_value_free``)."""
    if not _value_free(expr):
        return expr, (), ()
    out, csyms, cvals = abstract_constants(expr)
    if csyms and any(s.name.startswith(CONST_BALLS) for s in (var, *params)):
        return expr, (), ()
    return out, csyms, cvals


@functools.lru_cache(maxsize=32)
def _compiled(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...],
              timeout: float | None) -> tuple[Any, ...]:
    """Ball functions of the profile and its derivatives, compiled once per expression
    (Float parameters stay symbols, so e.g. every ``laplace(eps0)`` shares them)."""
    expr = _doit_finite(expr)
    if sympy.count_ops(expr) > MAX_OPS:
        raise ArbUnsupported(f"the profile has more than {MAX_OPS} operations: too large "
                             "for the symbolic derivative of the first-order search")
    # decimal literals as the exact binary numbers they store: SymPy would otherwise
    # round e.g. exp(-0.28125) or 1 - 1.5*0.666666666666667 to 53 bits while the
    # derivatives are built, and the ball functions would enclose a nearby expression
    # (a Float whose binary exponent is beyond a rational's reach, e.g. exp(-1e308)
    # evaluated, stays: the printer makes it the exact ball it stores)
    expr = expr.xreplace({c: sympy.Rational(c) for c in expr.atoms(sympy.Float)
                          if abs(c._mpf_[2]) <= RATIONAL_EXP})
    f = lambdify_arb(expr, var, params)
    structure = _structure(expr, var, params)
    if structure is not None and len(structure.leaves()) > 1:
        # a Min/Max/Piecewise of smooth pieces: differentiate the pieces one by one (the
        # derivative of the whole is large, slow to build and loose on a ball)
        pieces = list(dict.fromkeys(structure.leaves()))
        try:
            ders = run_bounded(_piece_derivatives, pieces, var, timeout=timeout)
        except AnalysisTimeout as exc:
            raise ArbUnsupported(f"the derivative of the profile timed out: {exc}") from exc
        for q, (d1, l1, l2) in zip(pieces, ders, strict=True):
            structure.piece_d1[q] = d1

            structure.pieces[q] = (lambdify_arb(d1, var, params),
                                   lambdify_arb(l1, var, params, cse=True),
                                   lambdify_arb(l2, var, params, cse=True),
                                   _Lazy(l2, var, params))
            structure.pieces[q] += (structure.pieces[q][3].next(),)
        return (f, functools.partial(_structured, structure, 0), [],
                functools.partial(_structured, structure, 1),
                functools.partial(_structured, structure, 2), None, structure,
                (functools.partial(_structured, structure, 3),
                 functools.partial(_structured, structure, 4)))
    try:
        d1, l1, l2 = run_bounded(_derivatives, expr, var, timeout=timeout)
    except AnalysisTimeout as exc:
        raise ArbUnsupported(f"the derivative of the profile timed out: {exc}") from exc
    d1_fn = lambdify_arb(d1, var, params)
    d1_terms = []
    if d1.has(sympy.Heaviside):
        # one compiled function: the Heaviside-free factor of each term and the
        # Heaviside arguments, evaluated together on a ball
        rests, hargs = [], []
        for t in sympy.Add.make_args(d1):
            fs = sympy.Mul.make_args(t)
            rests.append(sympy.Mul(*[g for g in fs if not isinstance(g, sympy.Heaviside)]))
            hargs.append([g.args[0] for g in fs if isinstance(g, sympy.Heaviside)])
        flat = [*rests, *(h for hs in hargs for h in hs)]
        fn = lambdify_arb(sympy.Tuple(*flat), var, params)
        d1_terms = [(fn, [len(hs) for hs in hargs])]
    l1_fn = lambdify_arb(l1, var, params, cse=True)
    l2_fn = lambdify_arb(l2, var, params, cse=True)
    parts = _monotone_parts(expr, var)
    parts_fn = None
    if len(parts) > 1 or (parts and parts[0] != expr):
        parts_fn = lambdify_arb(sympy.Tuple(*[sympy.diff(q, var) for q in parts]), var,
                                params)
    l3_fn = _Lazy(l2, var, params)
    return f, d1_fn, d1_terms, l1_fn, l2_fn, parts_fn, structure, (l3_fn, l3_fn.next())


class _Lazy:
    """The ball function of the derivative of ``expr`` (or of ``parent``'s derivative),
    differentiated and compiled on first use; :meth:`next` is the derivative after it."""

    def __init__(self, expr: sympy.Expr | None, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...], parent: _Lazy | None = None) -> None:
        self._args = (expr, var, params)
        self._fn: Any = None  # None: not compiled yet; False: not compilable
        self._d: Any = None  # None: not derived yet; False: too large
        self._parent = parent
        self._next: _Lazy | None = None

    def derivative(self) -> sympy.Expr | None:
        if self._d is None:
            expr, var, _ = self._args
            if self._parent is not None:
                expr = self._parent.derivative()
            d = sympy.diff(expr, var) if expr is not None else None
            self._d = d if d is not None and sympy.count_ops(d) <= _MAX_OPS else False
        return self._d if self._d is not False else None

    def next(self) -> _Lazy:
        if self._next is None:
            self._next = _Lazy(None, *self._args[1:], parent=self)
        return self._next

    def __call__(self, ball: arb, *pvals: arb) -> arb:
        if self._fn is None:
            _, var, params = self._args
            try:
                d = self.derivative()
                self._fn = lambdify_arb(d, var, params, cse=True) if d is not None else False
            except (ArbUnsupported, TypeError, ValueError):
                self._fn = False
        if self._fn is False:
            return arb("nan")
        return self._fn(ball, *pvals)


def _structured(structure: _Monotone, which: int, ball: arb, *pvals: arb) -> arb:
    return structure.derivative(which, ball, pvals)


def _piece_derivatives(pieces: list[sympy.Expr], var: sympy.Symbol
                       ) -> list[tuple[sympy.Expr, ...]]:
    out = []
    for q in pieces:
        if var not in q.free_symbols:
            out.append((sympy.Integer(0),) * 3)
        else:
            # delta' normalised only where exactly cancelling Gaussian terms are expected
            # (expanding it can blow up elsewhere, e.g. exp(-n s^2))
            out.append(_derivatives(q, var, normalised=q.has(sympy.erf, sympy.erfc)))
    return out
