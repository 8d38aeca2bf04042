r"""Step profiles: Piecewise conditions as unions of intervals of :math:`\varepsilon`.

A Piecewise whose conditions are built with ``&``, ``|`` and ``~`` from comparisons of
:math:`\varepsilon` with numbers (``(eps < 2) | (eps < 3)``, ``(eps >= 1) & (eps < 3)``,
``~(eps < 1)``) is rewritten as the *chain* of its successive pieces on
:math:`[0, \infty)`, ``Piecewise((f_1, eps < c_1), (f_2, eps <= c_2), ..., (f_n, True))``
with increasing ends -- the form whose branch points and jumps the measurement proves
and crosses (:func:`canonical_steps`).  The rewrite is exact on :math:`[0, \infty)`: every
condition is constant between the roots of its comparisons and is decided exactly at one
point of each such cell; any other condition leaves the expression as it is.
:func:`step_points` lists the numeric points where a condition or a Heaviside argument
changes sign (where refinement must look besides its grid).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import sympy
from sympy.core.relational import Relational

__all__ = ["canonical_steps", "right_limit", "step_points"]

#: largest number of pieces of a chain built from a folded expression
_MAX_PIECES = 64
#: largest number of Piecewise atoms folded into one chain (and their folded product of
#: pieces is at most 4 * _MAX_PIECES: folding multiplies the numbers of pieces)
_MAX_FOLD = 6

def _root(rel: Relational, var: sympy.Symbol) -> tuple[sympy.Expr, bool] | None:
    """``(c, increasing)`` where ``rel`` compares ``a*var + b`` (numbers, ``a != 0``) with
    0: ``c = -b/a``; ``None`` for anything else."""
    e = rel.lhs - rel.rhs
    if e.free_symbols != {var} or not e.is_polynomial(var):
        return None
    poly = sympy.Poly(e, var)
    if poly.degree() != 1:
        return None
    a, b = poly.all_coeffs()
    if not (a.is_number and b.is_number and a.is_extended_real and b.is_extended_real):
        return None
    if a.is_positive:
        return -b / a, True
    if a.is_negative:
        return -b / a, False
    return None


_LOGIC = (Relational, sympy.And, sympy.Or, sympy.Not, sympy.Xor,
          sympy.logic.boolalg.BooleanAtom)


def _logic_of_comparisons(cond: Any) -> bool:
    if isinstance(cond, (Relational, sympy.logic.boolalg.BooleanAtom)):
        return True
    return isinstance(cond, _LOGIC) and all(_logic_of_comparisons(a) for a in cond.args)


def _equal(a: Any, b: Any) -> bool:
    return a == b or sympy.Eq(a, b) is sympy.true


def _breakpoints(pw: sympy.Piecewise, var: sympy.Symbol) -> list[sympy.Expr] | None:
    """The sorted distinct non-negative roots of every comparison in ``pw``'s conditions,
    or ``None`` when a condition is not a Boolean combination of comparisons of ``var``
    with numbers, or there are too many, or two of them cannot be ordered."""
    roots: list[sympy.Expr] = []
    for _b, cond in pw.args:
        if cond in (sympy.true, sympy.false):
            continue
        if not _logic_of_comparisons(cond):
            return None
        for rel in ([cond] if isinstance(cond, Relational) else cond.atoms(Relational)):
            if var not in rel.free_symbols:
                continue
            r = _root(rel, var)
            if r is None:
                return None
            if sympy.Lt(r[0], 0) is not sympy.true and not any(_equal(r[0], q) for q in roots):
                roots.append(r[0])
    if len(roots) > _MAX_PIECES:
        return None
    return sorted(roots, key=functools.cmp_to_key(
        lambda a, b: -1 if sympy.Lt(a, b) is sympy.true else (
            1 if sympy.Lt(b, a) is sympy.true else _undecided())))


def _undecided() -> int:
    raise TypeError("undecided order of two step points")


def _chain(pw: sympy.Piecewise, var: sympy.Symbol) -> sympy.Piecewise | None:
    r"""The chain of ``pw``'s successive pieces on the half-line, or ``None``.

    Every condition is constant on each cell of the partition of :math:`[0, \infty)` by
    the roots of its comparisons (the roots themselves, and the open intervals between
    them), so it is decided exactly at one point of each cell: the root, or a rational
    point inside.  Consecutive cells on the same branch are then merged."""
    bs = _breakpoints(pw, var)
    if bs is None:
        return None
    # cells: (start, start closed, end, end closed, representative point)
    cells: list[tuple[Any, bool, Any, bool, Any]] = []
    left, closed = sympy.S.Zero, True
    for b in bs:
        if _equal(b, left) and closed:
            cells.append((b, True, b, True, b))
            closed = False
            continue
        cells.append((left, closed, b, False, (left + b) / 2))
        cells.append((b, True, b, True, b))
        left, closed = b, False
    cells.append((left, closed, sympy.oo, False, left + 1))
    pieces: list[list[Any]] = []
    for start, sc, end, ec, x in cells:
        branch = sympy.nan
        for b, cond in pw.args:
            v = cond.subs(var, x) if cond not in (sympy.true, sympy.false) else cond
            if v is sympy.true:
                branch = b
                break
            if v is not sympy.false:
                return None  # undecided at that point
        if pieces and pieces[-1][4] == branch:
            pieces[-1][2:4] = [end, ec]
        else:
            pieces.append([start, sc, end, ec, branch])
    pieces = _absorb_points(pieces, var)
    merged: list[list[Any]] = []
    for p in pieces:
        if merged and merged[-1][4] == p[4]:
            merged[-1][2:4] = p[2:4]
        else:
            merged.append(list(p))
    if len(merged) > _MAX_PIECES:
        return None
    args = [(p[4], (var <= p[2]) if p[3] else (var < p[2])) for p in merged[:-1]]
    args.append((merged[-1][4], sympy.true))
    return sympy.Piecewise(*args)


def _value_at(branch: sympy.Expr, var: sympy.Symbol, c: Any) -> sympy.Expr | None:
    try:
        v = branch.subs(var, c)
    except (TypeError, ValueError, RecursionError):
        return None
    return v if v.is_number else None


def _absorb_points(pieces: list[list[Any]], var: sympy.Symbol) -> list[list[Any]]:
    """A one-point piece ``{c}`` whose value equals, exactly, a neighbour's value at ``c``
    becomes part of that neighbour (the same function, one piece fewer: a refined step
    ``Min(naive, flat)`` is such a point at a closed step)."""
    out: list[list[Any]] = []
    i = 0
    while i < len(pieces):
        p = pieces[i]
        if p[1] and p[3] and _equal(p[0], p[2]):
            v = _value_at(p[4], var, p[0])
            nxt = pieces[i + 1] if i + 1 < len(pieces) else None
            if v is not None and nxt is not None and (
                    _value_at(nxt[4], var, p[0]) == v):
                nxt[0], nxt[1] = p[0], True
                i += 1
                continue
            if v is not None and out and _value_at(out[-1][4], var, p[0]) == v:
                out[-1][2], out[-1][3] = p[2], True
                i += 1
                continue
        out.append(p)
        i += 1
    return out


def _simple(pw: sympy.Piecewise, var: sympy.Symbol, strict: bool = True) -> bool:
    """Already a chain: conditions ``var < c`` / ``var <= c`` (numbers, increasing; only
    non-decreasing unless ``strict``: a point piece ``var <= c`` after ``var < c``), then
    possibly ``True``."""
    last = None
    for i, (_b, cond) in enumerate(pw.args):
        if cond is sympy.true:
            return i == len(pw.args) - 1
        if not (isinstance(cond, (sympy.StrictLessThan, sympy.LessThan))
                and cond.lhs == var and cond.rhs.is_number):
            return False
        if last is not None and (sympy.Lt if strict else sympy.Le)(
                last, cond.rhs) is not sympy.true:
            return False
        last = cond.rhs
    return True


def _rewrite_one(pw: sympy.Piecewise, var: sympy.Symbol) -> sympy.Expr:
    if var not in pw.free_symbols or _simple(pw, var):
        return pw
    try:
        out = _chain(pw, var)
    except (TypeError, ValueError, RecursionError, NotImplementedError):
        out = None
    return pw if out is None else out


def canonical_steps(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""``expr`` with each Piecewise in ``var`` whose conditions are not already a chain
    ``var < c_1``, ``var <= c_2``, ... (increasing numbers) rewritten as one, exactly on
    :math:`[0, \infty)`; several such Piecewise in one expression (a sum of steps) are
    folded into one chain when they are few.  Conditions that are not And/Or/Not of
    comparisons of ``var`` with numbers leave their Piecewise unchanged.

    Example:
        >>> x = sympy.Symbol("x", positive=True)
        >>> canonical_steps(sympy.Piecewise((3, (x < 2) | (x < 3)), (1, True)), x)
        Piecewise((3, x < 3), (1, True))
        >>> canonical_steps(sympy.Piecewise((3, (x >= 1) & (x < 2)), (1, True)), x)
        Piecewise((1, x < 1), (3, x < 2), (1, True))
    """
    pws = [p for p in expr.atoms(sympy.Piecewise) if var in p.free_symbols]
    if not pws:
        return expr
    out = expr.replace(lambda e: isinstance(e, sympy.Piecewise),
                       lambda e: _rewrite_one(e, var))
    pws = [p for p in out.atoms(sympy.Piecewise) if var in p.free_symbols]
    if 1 < len(pws) <= _MAX_FOLD and math.prod(len(p.args) for p in pws) <= 4 * _MAX_PIECES:
        try:
            folded = sympy.piecewise_fold(out)
        except RecursionError:
            return out
        if isinstance(folded, sympy.Piecewise) and not any(
                var in p.free_symbols for b, _c in folded.args
                for p in b.atoms(sympy.Piecewise)):
            chained = _rewrite_one(folded, var)
            if chained is not folded or _simple(folded, var):
                return chained
    return out


def step_points(expr: sympy.Expr, var: sympy.Symbol) -> list[sympy.Expr]:
    """The numbers where a Piecewise condition's comparison or a Heaviside argument
    (``a*var + b``, numbers ``a != 0``, ``b``) changes sign, non-negative, sorted.

    Example:
        >>> x = sympy.Symbol("x", positive=True)
        >>> step_points(sympy.Piecewise((1, (x < 2) | (x > 5)), (0, True))
        ...             + sympy.Heaviside(3 - x), x)
        [2, 3, 5]
    """
    rels: list[sympy.Expr] = []
    for pw in expr.atoms(sympy.Piecewise):
        for _b, cond in pw.args:
            if isinstance(cond, sympy.logic.boolalg.Boolean) and var in cond.free_symbols:
                rels += [r.lhs - r.rhs for r in
                         ([cond] if isinstance(cond, Relational) else cond.atoms(Relational))]
    rels += [h.args[0] for h in expr.atoms(sympy.Heaviside)]
    out: dict[Any, sympy.Expr] = {}
    for e in rels:
        r = _root(sympy.Lt(e, 0, evaluate=False), var)
        if r is None:
            continue
        try:
            v = float(r[0])
        except (TypeError, ValueError):
            continue
        if v >= 0:
            out.setdefault(r[0], r[0])
    return sorted(out.values(), key=float)


_DISCONTINUOUS = (sympy.Piecewise, sympy.Heaviside, sympy.floor, sympy.ceiling, sympy.sign,
                  sympy.frac, sympy.DiracDelta)


def right_limit(expr: sympy.Expr, var: sympy.Symbol, s: sympy.Expr) -> sympy.Expr | None:
    r"""The exact right limit :math:`\lim_{\varepsilon \downarrow s} f(\varepsilon)` of a
    step profile at a step point ``s``: the branch of its chain (:func:`canonical_steps`,
    Heaviside steps included) that holds just right of ``s``, at ``s``.  ``None`` when the
    expression is not such a chain or that branch could itself jump at ``s``.

    Example:
        >>> x = sympy.Symbol("x", positive=True)
        >>> right_limit(sympy.Piecewise((sympy.S(1)/2, x <= 1), (sympy.exp(-x), True)), x, 1)
        exp(-1)
        >>> right_limit(sympy.Heaviside(2 - x) / 4 + sympy.Heaviside(3 - x) / 4, x, 2)
        1/4
    """
    e = expr.replace(lambda u: isinstance(u, sympy.Heaviside) and var in u.free_symbols,
                     lambda u: sympy.Piecewise((0, u.args[0] < 0), (1, u.args[0] > 0),
                                               (u.args[1] if len(u.args) > 1
                                                else sympy.S.Half, True)))
    try:
        chain = canonical_steps(sympy.piecewise_fold(e), var)
    except RecursionError:
        return None
    branch = chain
    if isinstance(chain, sympy.Piecewise):
        if not _simple(chain, var, strict=False):
            return None
        branch = None
        for b, cond in chain.args:
            if cond is sympy.true or sympy.Lt(s, cond.rhs) is sympy.true:
                branch = b
                break
    if branch is None or any(var in f.free_symbols for f in branch.atoms(*_DISCONTINUOUS)):
        return None
    return branch.subs(var, s)
