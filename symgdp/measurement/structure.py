r"""Structural proofs that a profile is monotone on a ball (theory §6).

Profiles built from ``Min``, ``Max`` and ``Piecewise`` (shuffling, subsampling caps,
refined profiles) are handled by their structure: a Min/Max of non-increasing arguments
is non-increasing (arguments provably above (Min) or below (Max) another one on the ball
are inactive and skipped), a Piecewise is that branch where only one branch can apply,
and with two it is crossed once at most when its condition is monotone, with no jump the
wrong way; the smooth pieces are differentiated one by one, and the derivative of the
whole on a ball is the hull over the active pieces (Clarke's generalised gradient, with
Lebourg's mean-value theorem).  Branch points and possible jumps of a Piecewise are found
by ``_split_points``.

The prover :class:`_Monotone` stands on two layers: :class:`_BallValues` (sub-expressions
and conditions evaluated on a ball) and :class:`_PieceHull` (the active smooth pieces and
the hull of their derivatives).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Literal

import sympy
from flint import arb, ctx

from symgdp.evaluation.interval import ArbUnsupported, Erfcx, lambdify_arb
from symgdp.measurement.forms import _PREC, MAX_OPS, _doit_finite


def _positive(b: arb) -> bool:
    return bool(b > 0)


# relative jump at a branch point below which it counts as continuous: it moves
# log delta by < 1e-29, far inside the outward-rounding margins of the bracket
_JUMP_RTOL = 1e-30


def _split_points(expr: sympy.Expr, var: sympy.Symbol
                  ) -> tuple[list[sympy.Expr], list[sympy.Expr], list[sympy.Expr]]:
    """Branch points ``c`` of simple conditions ``var < c`` of the (folded) top-level
    Piecewise where the profile is continuous, those where it jumps down (both checked
    at 256 bits), and the left-minus-right sides of every other condition or Heaviside
    argument (where the profile may jump either way).  A condition is simple only in the
    leading run of increasing ends (:func:`_increasing_ends`): elsewhere the next branch
    need not be the one that applies right of ``c``."""
    jumps: list[sympy.Expr] = []
    points: list[sympy.Expr] = []
    downs: list[sympy.Expr] = []
    try:
        folded = sympy.piecewise_fold(expr)
    except RecursionError:
        # SymPy recurses without end on some near-equal Float conditions (a refined step
        # profile with eps < 1.1 inside eps < 1.100000000000000088817841970012523233891);
        # unfolded, every nested condition is a possible jump: coarser, still sound
        folded = expr
    for h in folded.atoms(sympy.Heaviside):
        if var in h.args[0].free_symbols:
            jumps.append(h.args[0])
    pws = [folded] if isinstance(folded, sympy.Piecewise) else []
    nested = [q for q in folded.atoms(sympy.Piecewise) if q is not folded]
    for pw in pws + nested:
        args = pw.args
        ends = _increasing_ends(args, var) if pw is folded else []
        # the mirror image: var >= c_k (or >) with c_k decreasing, branch i right of c_i
        # and branch i + 1 left of it (a pure-DP profile: Piecewise((0, eps >= eps0), ...))
        mirrored = pw is folded and len(ends) < 2
        if mirrored:
            ends = _increasing_ends(args, var, mirror=True)
        for i, (branch, cond) in enumerate(args):
            if cond is sympy.true or var not in cond.free_symbols:
                continue
            rel = cond
            # branch i holds left of its end c and branch i + 1 right of it only when the
            # conditions up to i + 1 are var < c_k (or <=) with c_k increasing (or the
            # last is True): Piecewise((f, x < 2), (g, x < 1), (h, True)) switches from f
            # to h at 2, and comparing f with g there would call a jump continuous
            simple = i + 1 < len(ends)
            left, right = (args[i + 1][0], branch) if mirrored else (branch, args[i + 1][0])
            kind = _continuous(left, right, var, rel.rhs) if simple else None
            if kind is not None:
                (points if kind == "continuous" else downs).append(rel.rhs)
                continue
            for r in ([rel] if isinstance(rel, sympy.core.relational.Relational)
                      else list(rel.atoms(sympy.core.relational.Relational))):
                jumps.append(r.lhs - r.rhs)
            if not isinstance(rel, sympy.core.relational.Relational) and not rel.atoms(
                    sympy.core.relational.Relational):
                jumps.append(var - var)  # unknown condition: never trusted (never decided)
    return points, downs, jumps


def _increasing_ends(args: tuple, var: sympy.Symbol, mirror: bool = False) -> list[Any]:
    """The longest run of leading conditions ``var < c_k`` / ``var <= c_k`` (numeric
    ``c_k``, proved strictly increasing at 256 bits), then a ``True`` if one follows:
    the branches of that run are the successive pieces of the profile.  With ``mirror``
    the conditions are ``var > c_k`` / ``var >= c_k`` with ``c_k`` strictly decreasing
    (the pieces from right to left)."""
    ends: list[Any] = []
    kinds = (sympy.StrictGreaterThan, sympy.GreaterThan) if mirror else \
        (sympy.StrictLessThan, sympy.LessThan)
    for _branch, cond in args:
        if cond is sympy.true:
            ends.append(None)
            break
        if not (isinstance(cond, kinds) and cond.lhs == var and cond.rhs.is_number):
            break
        try:
            with ctx.workprec(256):
                c = lambdify_arb(cond.rhs, var)(0)
        except (ArbUnsupported, ValueError, TypeError, ZeroDivisionError):
            break
        if not c.is_finite() or (ends and not bool((c < ends[-1]) if mirror
                                                    else (c > ends[-1]))):
            break
        ends.append(c)
    return ends


def _continuous(left: sympy.Expr, right: sympy.Expr, var: sympy.Symbol,
                c: sympy.Expr) -> str | None:
    r""""continuous", "down" (a proved downward jump) or None (undecided / upward).

    Continuity is first proved exactly where SymPy's own evaluation makes the two
    branches equal at ``c`` (a profile that reaches 0 there, e.g. the logistic noise's
    :math:`(e^{\varepsilon/2} - e^{\Delta/2b})^2 \cdot c` at :math:`\varepsilon_0 =
    \Delta/b`: its ball is :math:`0 \pm 10^{-77}`, which no relative tolerance
    separates from a jump); else by balls at 256 bits."""
    try:
        gap = left.xreplace({var: c}) - right.xreplace({var: c})
        if gap == 0 or (sympy.count_ops(gap) <= 200 and sympy.expand(gap) == 0):
            return "continuous"
    except (TypeError, ValueError, ZeroDivisionError):
        pass
    try:
        fl, fr = lambdify_arb(left, var), lambdify_arb(right, var)
        with ctx.workprec(256):
            cb = lambdify_arb(c, var)(0)
            a, b = fl(cb), fr(cb)
            if bool(abs(a - b) <= _JUMP_RTOL * abs(a)):
                return "continuous"
            return "down" if bool(b < a) else None
    except (ArbUnsupported, ValueError, TypeError, ZeroDivisionError):
        return None


def _monotone_parts(expr: sympy.Expr, var: sympy.Symbol) -> list[sympy.Expr]:
    """Parts whose being non-increasing makes ``expr`` non-increasing: the arguments of
    Max/Min, the terms of a sum, the factor of a positive constant (recursively)."""
    if var not in expr.free_symbols:
        return []
    if isinstance(expr, (sympy.Max, sympy.Min, sympy.Add)):
        return [q for a in expr.args for q in _monotone_parts(a, var)]
    if isinstance(expr, sympy.Mul):
        const = [f for f in expr.args if var not in f.free_symbols]
        rest = [f for f in expr.args if var in f.free_symbols]
        c = sympy.Mul(*const)
        if len(rest) == 1 and c.is_positive:
            return _monotone_parts(rest[0], var)
    return [expr]


_INCREASING = {sympy.erf: 1, sympy.erfc: -1, Erfcx: -1, sympy.atan: 1, sympy.tanh: 1,
               sympy.sinh: 1, sympy.Heaviside: 1, sympy.exp: 1, sympy.log: 1}


class _BallValues:
    """Sub-expressions of a profile on a ball of epsilon: their values, derivatives and
    signs, and the truth of Piecewise conditions, compiled lazily (once per
    sub-expression) and evaluated at the parameter values of the call in progress."""

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...]) -> None:
        self.var, self.params = var, params
        self._fns: dict[sympy.Expr, Any] = {}
        self._dfns: dict[sympy.Expr, Any] = {}
        self._hv: dict[sympy.Expr, bool] = {}
        self.expr = expr
        # the parameter values of the call in progress: the prover is shared by every
        # profile of the same structure, so they are per thread, set by each entry point
        self._local = threading.local()
        #: piece -> ball functions of (delta', (log delta)', (log delta)'',
        #: (log delta)''') (see derivative), and delta' of each piece
        self.pieces: dict[sympy.Expr, tuple[Any, ...]] = {}
        self.piece_d1: dict[sympy.Expr, sympy.Expr] = {}

    @property
    def pvals(self) -> tuple[Any, ...]:
        return getattr(self._local, "pvals", ())

    @pvals.setter
    def pvals(self, values: tuple[Any, ...]) -> None:
        self._local.pvals = values

    def _has(self, e: sympy.Expr) -> bool:
        v = self._hv.get(e)
        if v is None:
            v = self._hv[e] = self.var in e.free_symbols
        return v

    def _value(self, e: sympy.Expr, ball: arb) -> arb:
        return self._eval(self._fns, e, ball, False)

    def _slope(self, e: sympy.Expr, ball: arb) -> arb:
        return self._eval(self._dfns, e, ball, True)

    def _eval(self, cache: dict[sympy.Expr, Any], e: sympy.Expr, ball: arb,
              derivative: bool) -> arb:
        """``e`` (or its derivative) on ``ball``, compiled once; NaN where undefined."""
        fn: Callable[..., arb] | Literal[False] | None = cache.get(e)
        if fn is None:
            try:
                f = e
                if derivative:
                    f = sympy.diff(e, self.var) if sympy.count_ops(e) <= MAX_OPS else None
                fn = lambdify_arb(f, self.var, self.params) if f is not None else False
            except (ArbUnsupported, TypeError, ValueError):
                fn = False
            cache[e] = fn

        if fn is False:
            return arb("nan")
        try:
            return fn(ball, *self.pvals)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return arb("nan")

    def _sign(self, e: sympy.Expr, ball: arb) -> int:
        v = self._value(e, ball)
        if v.is_finite():
            if v >= 0:
                return 1
            if v <= 0:
                return -1
        return 0

    def _signed(self, e: sympy.Expr, ball: arb, s: int) -> bool:
        """``e`` >= 0 (s = 1) or <= 0 (s = -1) on ``ball``, from the signs of the terms of a
        sum and of the factors of each product: the midpoint-radius product of two
        positive balls with large relative radii may contain 0, the signs of the factors
        do not lose that."""
        if isinstance(e, sympy.Add):
            return all(self._signed(a, ball, s) for a in e.args)
        if isinstance(e, sympy.Mul):
            sign = 1
            for f in e.args:
                sf = self._sign(f, ball)
                if sf == 0:
                    break
                sign *= sf
            else:
                return sign == s
        v = self._value(e, ball)
        return bool(v.is_finite() and (v >= 0 if s == 1 else v <= 0))

    def _cond(self, c: Any, ball: arb) -> tuple[bool | None, sympy.Expr | None, int]:
        """(decided value, left side u of ``u < 0``-type condition, +1 for u < 0 / u <= 0,
        -1 for u > 0 / u >= 0)."""
        if c is sympy.true:
            return True, None, 0
        if c is sympy.false:
            return False, None, 0
        if not isinstance(c, (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan,
                              sympy.GreaterThan)):
            return None, None, 0
        u = c.lhs - c.rhs
        v = self._value(u, ball)
        if not v.is_finite():
            return None, u, 0
        strict = isinstance(c, (sympy.StrictLessThan, sympy.StrictGreaterThan))
        if isinstance(c, (sympy.StrictLessThan, sympy.LessThan)):
            yes = (v < 0) if strict else (v <= 0)
            no = (v >= 0) if strict else (v > 0)
            side = 1
        else:
            yes = (v > 0) if strict else (v >= 0)
            no = (v <= 0) if strict else (v < 0)
            side = -1
        return (True if yes else False if no else None), u, side


class _PieceHull(_BallValues):
    """The smooth pieces below the Min/Max/Piecewise nodes, those active on a ball, and
    the derivatives of the whole as the hull over the active pieces."""

    # -- the derivative as the hull over the active smooth pieces ---------------------
    # A Min/Max of smooth pieces is locally Lipschitz, and its Clarke gradient lies in the
    # hull of the gradients of the pieces active there (Clarke 1983, Prop. 2.3.12); the
    # mean-value theorem of Lebourg (1975) then bounds it like a smooth function.  Jumps
    # of a Piecewise are excluded by the caller (FirstOrder.smooth).

    def leaves(self, e: sympy.Expr | None = None) -> list[sympy.Expr]:
        """The smooth pieces: what is left below the Min/Max/Piecewise nodes."""
        e = self.expr if e is None else e
        if self._has(e):
            if isinstance(e, (sympy.Min, sympy.Max)) and not any(
                    a.is_zero for a in e.args):
                return [q for a in e.args for q in self.leaves(a)]
            if isinstance(e, sympy.Piecewise):
                return [q for b, _ in e.args for q in self.leaves(b)]
        return [e]

    def active(self, e: sympy.Expr, ball: arb) -> list[sympy.Expr] | None:
        """The pieces that may give the value of ``e`` somewhere on ``ball``."""
        if self._has(e):
            if isinstance(e, (sympy.Min, sympy.Max)) and not any(
                    a.is_zero for a in e.args):
                out: list[sympy.Expr] = []
                for a in self._active_args(e, ball):
                    q = self.active(a, ball)
                    if q is None:
                        return None
                    out += q
                return out
            if isinstance(e, sympy.Piecewise):
                out = []
                for branch, c in e.args:
                    val = self._cond(c, ball)[0]
                    if val is False:
                        continue
                    q = self.active(branch, ball)
                    if q is None:
                        return None
                    out += q
                    if val is True:
                        return out
                return None
        return [e]

    def derivative(self, which: int, ball: arb, pvals: tuple[arb, ...]) -> arb:
        """Hull of the derivative ``which`` (0: delta', 1: (log delta)', 2 and 3: the
        second and third derivatives of log delta) of the pieces active on ``ball``; the
        higher derivatives only where one piece is active (a kink has none)."""

        self.pvals = pvals
        act = self.active(self.expr, ball)
        if not act:
            return arb("nan")
        act = list(dict.fromkeys(act))
        if which >= 2 and len(act) > 1:
            return arb("nan")
        out: arb | None = None
        for q in act:
            fn = self.pieces.get(q)
            if fn is None:
                return arb("nan")
            try:
                v = fn[which](ball, *pvals)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                return arb("nan")
            if not v.is_finite():
                return arb("nan")
            out = v if out is None else out.union(v)
        assert out is not None  # act is not empty (checked above)
        return out

    def _active_args(self, e: sympy.Expr, ball: arb) -> list[sympy.Expr]:
        """The arguments of a Min (Max) not provably above (below) another on ``ball``."""
        vals = [self._value(a, ball) for a in e.args]
        if not all(v.is_finite() for v in vals):
            return list(e.args)
        if isinstance(e, sympy.Min):
            ceil = min(vals, key=lambda v: float(v.upper()))
            return [a for a, v in zip(e.args, vals, strict=True) if not bool(v > ceil)]
        floor = max(vals, key=lambda v: float(v.lower()))
        return [a for a, v in zip(e.args, vals, strict=True) if not bool(v < floor)]


class _Monotone(_PieceHull):
    r"""Structural proof that an expression is monotone on a ball (theory §6).

    Sums, products of non-negative factors, increasing functions of monotone arguments
    and Min/Max of monotone arguments are monotone in the same direction -- no need to
    locate kinks or crossings.  A Min/Max argument that is provably above (Min) or below
    (Max) another one on the ball is not active there and is skipped.  A Piecewise with
    one possible branch on the ball is that branch; with two, the boundary is crossed
    once when the condition's left side is monotone, and the branches must not jump the
    wrong way there (decided from their values on the ball or at a constant boundary
    point).  Anything else is proved by the sign of its SymPy derivative on the ball.
    Values and derivatives of the sub-expressions are compiled lazily, once.
    """

    def prove(self, ball: arb, pvals: tuple[arb, ...]) -> bool:
        """Non-increasing on ``ball`` (proved)."""
        self.pvals = pvals
        with ctx.workprec(_PREC):
            return self._mono(self.expr, ball, -1)

    def _mono(self, e: sympy.Expr, ball: arb, d: int) -> bool:
        """``e`` non-decreasing (d = 1) or non-increasing (d = -1) on ``ball``."""
        var = self.var
        if not self._has(e):
            return True
        if e == var:
            return d == 1
        if isinstance(e, sympy.Add):
            if all(self._mono(a, ball, d) for a in e.args):
                return True
        elif isinstance(e, sympy.Mul):
            if self._mono_mul(e, ball, d):
                return True
        elif isinstance(e, sympy.Pow):
            if self._mono_pow(e, ball, d):
                return True
        elif isinstance(e, (sympy.Min, sympy.Max)):
            return self._mono_minmax(e, ball, d)
        elif isinstance(e, sympy.Piecewise):
            return self._mono_piecewise(e, ball, d)
        elif type(e) in _INCREASING and len(e.args) == 1 or isinstance(e, Erfcx) and (
                len(e.args) == 1 or e.args[1] == 0):
            if self._mono(e.args[0], ball, d * _INCREASING[type(e)]):
                return True
        fns = self.pieces.get(e)
        if fns is not None and d == -1:
            # a piece's log-derivative (cancellation-free forms): <= 0 where it is > 0,
            # and a factor Max(0, f) dropped from it is constant where f <= 0
            try:
                s = fns[1](ball, *self.pvals)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                s = arb("nan")
            if s.is_finite() and s <= 0:
                return True
            d1 = self.piece_d1.get(e)
            if d1 is not None and self._signed(d1, ball, -1):
                return True

        if e.has(sympy.Piecewise):
            return False  # its derivative would ignore the jumps between branches
        s = self._slope(e, ball)
        return bool(s.is_finite() and (s >= 0 if d == 1 else s <= 0))

    def _mono_mul(self, e: sympy.Mul, ball: arb, d: int) -> bool:
        const = sympy.Mul(*[f for f in e.args if not self._has(f)])
        rest = [f for f in e.args if self._has(f)]
        c = self._sign(const, ball)
        if c == 0:
            return False
        d *= c
        if len(rest) == 1:
            return self._mono(rest[0], ball, d)
        # a product of non-negative factors, each monotone in the same direction
        return all(self._sign(f, ball) == 1 and self._mono(f, ball, d) for f in rest)

    def _mono_pow(self, e: sympy.Pow, ball: arb, d: int) -> bool:
        b, x = e.args
        if self._has(x):
            if self._has(b):
                return False
            # b**x = exp(x log b): monotone in x with the sign of log b
            s = self._sign(b - 1, ball)
            return s != 0 and self._sign(b, ball) == 1 and self._mono(x, ball, d * s)
        sb = self._sign(b, ball)
        if x.is_positive:
            if x.is_integer and x.is_odd:
                return self._mono(b, ball, d)
            if sb == 1:
                return self._mono(b, ball, d)
            if sb == -1 and x.is_integer and x.is_even:
                return self._mono(b, ball, -d)
            return False
        if x.is_negative:
            v = self._value(b, ball)
            if v.is_finite() and v > 0:
                return self._mono(b, ball, -d)
        return False

    def _mono_minmax(self, e: sympy.Expr, ball: arb, d: int) -> bool:
        return all(self._mono(a, ball, d) for a in self._active_args(e, ball))

    def _mono_piecewise(self, e: sympy.Piecewise, ball: arb, d: int) -> bool:
        cands: list[tuple[sympy.Expr, sympy.Expr | None, int]] = []
        for branch, c in e.args:
            val, u, side = self._cond(c, ball)
            if val is False:
                continue
            cands.append((branch, u, side))
            if val is True:
                break
        else:
            return False  # possibly no branch applies
        if len(cands) == 1:
            return self._mono(cands[0][0], ball, d)
        if len(cands) != 2:
            return False
        (a, u, side), (b, _, _) = cands
        if u is None:
            return False
        if not (self._mono(a, ball, d) and self._mono(b, ball, d)):
            return False
        # the set {u < 0} (side 1) or {u > 0} (side -1) is an initial segment of the ball
        # when u is non-decreasing (side 1) or non-increasing (side -1); a final one in the
        # other two cases
        if self._mono(u, ball, side):
            left, right = a, b
        elif self._mono(u, ball, -side):
            left, right = b, a
        else:
            return False
        # the value must not jump the wrong way where the boundary is crossed
        lv, rv = self._value(left, ball), self._value(right, ball)
        if lv.is_finite() and rv.is_finite() and (lv >= rv if d == -1 else lv <= rv):
            return True
        # a boundary var = c (u = +-(var - c)): compare the branches at c itself
        rest, dep = u.as_independent(self.var, as_Add=True)
        if dep not in (self.var, -self.var):
            return False
        with ctx.workprec(256):
            cb = self._value(-rest if dep == self.var else rest, ball)
            if not (cb.is_finite() and cb.rad() <= 2.0**-200 * (1 + abs(cb.mid()))):
                return False
            lv, rv = self._value(left, cb), self._value(right, cb)
            if not (lv.is_finite() and rv.is_finite()):
                return False
            # within the relative jump treated as continuity elsewhere (_JUMP_RTOL)
            slack = _JUMP_RTOL * abs(lv)
            return bool(lv + slack >= rv if d == -1 else lv - slack <= rv)


@functools.lru_cache(maxsize=32)
def _structure(expr: sympy.Expr, var: sympy.Symbol,
               params: tuple[sympy.Symbol, ...]) -> _Monotone | None:
    """The structural monotonicity prover, for profiles built from Min, Max or
    Piecewise (where the derivative of the whole expression is large and loose)."""
    if not expr.has(sympy.Min, sympy.Max, sympy.Piecewise):
        return None
    return _Monotone(_distribute(_doit_finite(expr), var), var, params)


def _distribute(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """Positive constant factors moved into Min/Max/Piecewise (c Min(a, b) = Min(c a,
    c b)), so that the pieces below them are the smooth parts."""
    if isinstance(e, (sympy.Min, sympy.Max)):
        return e.func(*[_distribute(a, var) for a in e.args], evaluate=False)
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(_distribute(b, var), c) for b, c in e.args])
    if isinstance(e, sympy.Mul):
        rest = [f for f in e.args if var in f.free_symbols]
        c = sympy.Mul(*[f for f in e.args if var not in f.free_symbols])
        if len(rest) == 1 and c.is_positive and isinstance(
                rest[0], (sympy.Min, sympy.Max, sympy.Piecewise)):
            inner = rest[0]
            if isinstance(inner, sympy.Piecewise):
                return sympy.Piecewise(*[(_distribute(c * b, var), k)
                                         for b, k in inner.args])
            return inner.func(*[_distribute(c * a, var) for a in inner.args],
                              evaluate=False)
    return e
