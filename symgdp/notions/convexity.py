r"""Certified convexity and monotonicity of a typed trade-off curve.

A trade-off function (Dong, Roth & Su 2021) is convex, continuous and non-increasing on
:math:`[0, 1]`.  :func:`check_curve` proves both properties of a curve :math:`T(\alpha)`
typed as a SymPy expression, or disproves one of them with a rigorous witness, by
branch-and-bound in ball arithmetic (python-flint's ``arb``) over a cover of
:math:`[0, 1]` by closed boxes; or, when its budget runs out or the enclosures blow up
(a singular end such as ``erfcinv(2*alpha)`` at 0), says where it was not proved.

**Pieces.**  ``Max``, ``Min``, ``Abs`` (taken as ``Max(u, -u)``) and ``Piecewise`` make
:math:`T` non-smooth.  On a box, an argument of ``Max`` (``Min``) is dropped when another
one is proved at least as large (as small) on the whole box, by the ball enclosure of
their difference; a branch of ``Piecewise`` is dropped where its condition (one
comparison ``lhs < rhs``, ``<=``, ``>``, ``>=``) is proved false, and the later ones
where it is proved true.  When every node keeps one argument, :math:`T` equals on the
box a *resolved* expression :math:`R` without nodes, and :math:`R'`, :math:`R''` are
SymPy's derivatives.
When exactly one node keeps two arguments :math:`u, v` (a *kink box*), :math:`T` is
:math:`T_u` on one side of the zero of :math:`h = u - v` and :math:`T_v` on the other;
with :math:`h' \ne 0` proved on the box, :math:`h` has at most one zero there, and the
side of each branch follows from the sign of :math:`h'`.  For ``Piecewise`` the two
branches :math:`e_j, e_k` and :math:`h = \mathrm{lhs} - \mathrm{rhs}` of condition
:math:`j`; a ``Piecewise`` may jump, so its switch must be proved continuous first:
SymPy's ``solveset`` gives every point of :math:`[0, 1]` where the condition switches (a
finite set, else not proved) and ``simplify`` proves :math:`e_j = e_k` at each; the slope
jump there is also simplified exactly (Laplace's curve is :math:`C^1` at its switches: a
jump of exactly 0, which no enclosure proves :math:`\ge 0`).  A switch not proved
continuous is tried for a witness just left and right of it (a jump up is an increase, a
jump down is not convex).  Any other box is split.

**Convex on a box.**  Smooth box: :math:`R'' \ge 0` on it (every subexpression of
:math:`R` finite there, so :math:`R` is continuous, and :math:`R'`, :math:`R''` finite).
Kink box: :math:`T_u'' \ge 0`, :math:`T_v'' \ge 0` on the box and the slope's jump at the
kink, :math:`T_{\mathrm{right}}' - T_{\mathrm{left}}'`, :math:`\ge 0` on the box (a convex
kink; ``Max`` of two lines has one, ``Min`` of two lines a concave one).

**From boxes to** :math:`[0, 1]`.  A continuous function convex on each box of a cover of
:math:`[p, q]` by boxes meeting at points :math:`m`, and differentiable at each such
:math:`m`, is convex on :math:`[p, q]` (its right derivative is non-decreasing on each box
and continuous at each :math:`m`).  Every split point :math:`m` is chosen where every
node's choice is *strict* (one argument proved strictly larger at the exact point), so
:math:`T` equals one resolved :math:`R` near :math:`m`, and :math:`R'(m)` is proved
finite: :math:`T` is differentiable at :math:`m`.  Where no such point is found the box
is left unproved.  Near a singular end, a cover of :math:`[2^{-k}, 1 - 2^{-k}]` is *not*
enough: a function convex there and continuous on :math:`[0, 1]` may still be concave on
:math:`[0, 2^{-k}]`; so the end boxes :math:`[0, 2^{-k}]` and :math:`[1 - 2^{-k}, 1]` are
boxes of the cover like any other, proved only where the enclosures of :math:`R''` on
them are finite (the piecewise-linear curves), and otherwise reported as not proved
(``erfcinv(2*alpha)`` at 0): never proved by continuity alone.

**Non-increasing** likewise: :math:`R' \le 0` on smooth boxes, :math:`T_u' \le 0` and
:math:`T_v' \le 0` on kink boxes (:math:`T` is continuous: no jump up at a box's end);
on a box already proved convex, the slopes at its right end :math:`\le 0` suffice
(:math:`T'` is non-decreasing there: :math:`(1 - \alpha)^2` at :math:`\alpha = 1`).

**Disproof.**  A box on which :math:`R'' < 0` is proved (smooth), or a kink box with a
jump :math:`< 0` proved and a sign change of :math:`h` proved at its ends, shows
:math:`T` is not convex; a box with the slopes :math:`> 0` proved shows :math:`T`
increases; an open smooth box whose midpoint has :math:`R'' < 0` (:math:`R' > 0`) is
searched for a small box around it where that is proved (a violation far narrower than
the box).  The error names a witness checked by ball evaluation of :math:`T` at exact
points: :math:`T(b)` above the chord through :math:`(a, T(a))`, :math:`(c, T(c))`, or
:math:`T(c) > T(a)` with :math:`a < c` (when the points' balls cannot separate so finely,
the proved box itself is named).  ``Heaviside``, ``sign`` and functions without a ball
counterpart are not analysed: not proved, never refused here.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.errors import DomainError
from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb
from symgdp.symbolic.budget import TIMEOUT_SCALE

__all__ = ["CurveCheck", "check_curve"]

#: boxes evaluated at most (each one or two compiled ball calls)
MAX_BOXES = 3000
#: the end box [0, 2^-END_BITS] is not split further (nor [1 - 2^-53, 1])
END_BITS = 60
#: boxes narrower than this times their distance to the nearer end are not split further
MIN_WIDTH = 2.0**-40
#: seconds for the symbolic derivatives of every resolved piece together (times
#: symgdp.symbolic.budget.TIMEOUT_SCALE)
SYMBOLIC_BUDGET = 10.0
_PREC = 128
_POINT_PRECS = (128, 256, 512, 1024, 2048)
_NODES = (sympy.Max, sympy.Min, sympy.Piecewise)
_JUMPS = (sympy.Heaviside, sympy.DiracDelta, sympy.sign)
_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class CurveCheck:
    """What :func:`check_curve` proved: ``convexity`` and ``monotonicity`` are
    ``"proved"`` or ``"not proved on ...: why"``; ``boxes`` is the count evaluated."""

    convexity: str
    monotonicity: str
    boxes: int = 0
    #: the intervals where convexity (non-increase) was not proved, merged, as floats
    open_convex: tuple[tuple[float, float], ...] = ()
    open_monotone: tuple[tuple[float, float], ...] = ()

    @property
    def proved(self) -> bool:
        return self.convexity == "proved" and self.monotonicity == "proved"

    def notes(self) -> tuple[str, ...]:
        """The caveats a profile built from the curve carries (empty when proved)."""
        out = []
        both = self.convexity == self.monotonicity
        if self.convexity != "proved":
            what = "convexity and non-increase are" if both else "convexity is"
            out.append(
                f"the trade-off curve's {what} {self.convexity}; the profile is the "
                "conjugate of the curve as typed, which is that of its convex envelope "
                "(still an upper bound on the profile of a mechanism that is T-DP)")
        if self.monotonicity != "proved" and not both:
            out.append(f"the trade-off curve's non-increase is {self.monotonicity}")
        return tuple(out)


class _NotProved(Exception):
    """A piece the check cannot analyse (its box stays open)."""


def _fmt(x: Any) -> str:
    return f"{float(x.mid() if isinstance(x, arb) else x):.10g}"


def _pt(x: arb) -> str:
    """An exact point (a float): its shortest round-trip decimal."""
    return repr(float(x.mid()))


class _Plan:
    """How a box with given node choices is analysed, and its compiled ball functions."""

    def __init__(self, kind: str, fn: Callable[[Any], Any] | None = None, why: str = "",
                 first_right: bool = True) -> None:
        # a kink's first branch lies right of the zero of h where h' > 0 (else left)
        self.kind, self.fn, self.why, self.first_right = kind, fn, why, first_right
        #: T_u' - T_v' at a Piecewise node's switch points, exactly (see _exact_jumps)
        self.exact: list[arb] | None = None

    def at(self, x: Any) -> Any:
        """The compiled ball functions at ``x`` (a "smooth" or "kink" plan: only an
        "open" plan has none, and no caller evaluates one)."""
        assert self.fn is not None, f"an {self.kind!r} plan has no compiled functions"
        return self.fn(x)


class _Checker:
    def __init__(self, expr: sympy.Expr, var: sympy.Symbol,
                 t_funcs: list[Callable[[Any], arb]]) -> None:
        self.var, self.t_funcs, self.shown = var, t_funcs, expr
        expr = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
        self.expr = expr.replace(sympy.Abs, lambda u: sympy.Max(u, -u))
        self.nodes = list(dict.fromkeys(
            n for n in sympy.postorder_traversal(self.expr) if isinstance(n, _NODES)))
        self.index = {n: i for i, n in enumerate(self.nodes)}
        pairs: list[tuple[int, int, int, int]] = []
        diffs: list[sympy.Expr] = []
        #: per Piecewise node: its conditions as (operator, index of lhs - rhs in diffs),
        #: ("T", -1) for True; None when a condition is not one comparison
        self.conds: dict[int, list[tuple[str, int]] | None] = {}
        self.switch: dict[tuple[int, int, int], tuple[sympy.Expr, ...] | None] = {}
        for i, n in enumerate(self.nodes):
            if isinstance(n, sympy.Piecewise):
                conds: list[tuple[str, int]] = []
                comparisons = True
                for _e, c in n.args:
                    if c is sympy.true:
                        conds.append(("T", -1))
                    elif isinstance(c, sympy.core.relational.Relational) and c.rel_op in _OPS:
                        conds.append((c.rel_op, len(diffs)))
                        diffs.append(c.lhs - c.rhs)
                    else:
                        comparisons = False
                        break
                self.conds[i] = conds if comparisons else None
                continue
            for j in range(len(n.args)):
                for k in range(j + 1, len(n.args)):
                    pairs.append((i, j, k, len(diffs)))
                    diffs.append(n.args[j] - n.args[k])
        self.pairs = pairs
        self.diffs = lambdify_arb(sympy.Tuple(*diffs), var, cse=True) if diffs else None
        self.plans: dict[tuple[tuple[int, ...], ...], _Plan] = {}
        self.compiled: dict[Any, Callable[[Any], Any]] = {}
        self.budget = SYMBOLIC_BUDGET * TIMEOUT_SCALE

    # -- node choices on a box -------------------------------------------------------------
    def choices(self, ball: arb, strict: bool) -> tuple[tuple[int, ...], ...]:
        if not self.nodes:
            return ()
        if self.diffs is None:  # only Piecewise nodes whose conditions are not comparisons
            return tuple(self._branches(i, (), strict) for i in range(len(self.nodes)))
        got = self.diffs(ball)
        vals = got if isinstance(got, tuple) else (got,)
        d: dict[tuple[int, int, int], arb] = {}
        for i, j, k, m in self.pairs:
            d[(i, j, k)] = vals[m]
            d[(i, k, j)] = -vals[m]
        out = []
        for i, n in enumerate(self.nodes):
            if isinstance(n, sympy.Piecewise):
                out.append(self._branches(i, vals, strict))
                continue
            is_max = isinstance(n, sympy.Max)
            alive = list(range(len(n.args)))
            for k in range(len(n.args)):
                for j in alive:
                    if j == k:
                        continue
                    v = d[(i, j, k)]        # a_j - a_k
                    if not v.is_finite():
                        continue
                    if is_max:
                        dom = v > 0 if strict else v >= 0
                    else:
                        dom = v < 0 if strict else v <= 0
                    if dom:
                        alive.remove(k)
                        break
            out.append(tuple(alive))
        return tuple(out)

    def _branches(self, i: int, vals: tuple[arb, ...], strict: bool) -> tuple[int, ...]:
        """The branches of the Piecewise node ``i`` that may hold on the box, in order;
        ``-1`` last where no condition may hold (the Piecewise is undefined there)."""
        conds = self.conds[i]
        if conds is None:
            return tuple(range(len(self.nodes[i].args))) + (-1,)
        alive: list[int] = []
        for k, (op, m) in enumerate(conds):
            if op == "T":
                alive.append(k)
                return tuple(alive)
            v = vals[m]             # lhs - rhs on the box
            if not v.is_finite():
                state = None
            elif strict:            # decided in a neighbourhood: v != 0
                below = v < 0
                state = (below == (op in ("<", "<="))) if (below or v > 0) else None
            elif op == "<":
                state = True if v < 0 else (False if v >= 0 else None)
            elif op == "<=":
                state = True if v <= 0 else (False if v > 0 else None)
            elif op == ">":
                state = True if v > 0 else (False if v <= 0 else None)
            else:
                state = True if v >= 0 else (False if v < 0 else None)
            if state is False:
                continue
            alive.append(k)
            if state is True:
                return tuple(alive)
        return tuple(alive) + (-1,)

    def _arg(self, i: int, j: int) -> sympy.Basic:
        n = self.nodes[i]
        return n.args[j].expr if isinstance(n, sympy.Piecewise) else n.args[j]

    def _resolve(self, e: sympy.Basic, choice: dict[int, tuple[int, ...]]) -> sympy.Basic:
        """``e`` with each node of ``choice`` replaced by its kept arguments (one: the
        argument itself; more: the node of those only)."""
        i = self.index.get(e)
        if i is not None and i in choice and isinstance(e, sympy.Piecewise):
            if len(choice[i]) == 1 and choice[i][0] >= 0:
                return self._resolve(e.args[choice[i][0]].expr, choice)
            return e        # kept whole (only the continuity check evaluates it)
        if i is not None and i in choice:
            kept = [self._resolve(e.args[j], choice) for j in choice[i]]
            return kept[0] if len(kept) == 1 else e.func(*kept)
        if e.is_Atom or not e.args:
            return e
        return e.func(*[self._resolve(a, choice) for a in e.args])

    def _open(self, e: sympy.Basic, key: tuple[tuple[int, ...], ...], seen: set[int]) -> None:
        """The nodes still open (more than one argument kept) that ``e`` reaches."""
        i = self.index.get(e)
        if i is not None:
            if len(key[i]) == 1 and key[i][0] >= 0:
                self._open(self._arg(i, key[i][0]), key, seen)
                return
            seen.add(i)
            if isinstance(e, sympy.Piecewise):
                return
        for a in e.args:
            self._open(a, key, seen)

    def _compile(self, items: list[Any]) -> Callable[[Any], tuple[arb, ...]]:
        """One ball function of every item (an expression, or ``(order, expr)`` for a
        derivative).  A derivative is taken in two equal forms, SymPy's and
        :func:`_tidy`'s, and its value is the intersection of their finite enclosures."""
        from symgdp.symbolic.budget import OutOfTime, with_budget

        k = tuple(items)
        hit = self.compiled.get(k)
        if hit is None:
            if self.budget <= 0:
                raise OutOfTime
            t0 = time.perf_counter()
            try:
                hit = with_budget(lambda: self._build(items), self.budget)
            finally:
                self.budget -= time.perf_counter() - t0
            self.compiled[k] = hit
        return hit

    def _build(self, items: list[Any]) -> Callable[[Any], tuple[arb, ...]]:
        exprs: list[sympy.Expr] = []
        groups: list[tuple[int, ...]] = []
        for e in items:
            if isinstance(e, tuple):
                d = sympy.diff(e[1], self.var, e[0])
                forms = list(dict.fromkeys([d, _tidy(d)]))
            else:
                forms = [e]
            groups.append(tuple(range(len(exprs), len(exprs) + len(forms))))
            exprs.extend(forms)
        f = lambdify_arb(sympy.Tuple(*exprs), self.var, cse=True)

        def run(x: Any) -> tuple[arb, ...]:
            got = f(x)
            vals = got if isinstance(got, tuple) else (got,)
            return tuple(_meet([vals[i] for i in g]) for g in groups)

        return run

    def plan(self, key: tuple[tuple[int, ...], ...]) -> _Plan:
        hit = self.plans.get(key)
        if hit is not None:
            return hit
        from symgdp.symbolic.budget import OutOfTime

        seen: set[int] = set()
        self._open(self.expr, key, seen)
        choice = dict(enumerate(key))
        try:
            if not seen:
                r = self._resolve(self.expr, choice)
                subs = [n for n in sympy.preorder_traversal(r) if not n.is_Atom]
                out = _Plan("smooth", self._compile([(2, r), (1, r), *subs]))
            elif len(seen) == 1 and len(key[next(iter(seen))]) == 2 and \
                    min(key[next(iter(seen))]) >= 0:
                i = next(iter(seen))
                n = self.nodes[i]
                j, k = key[i]
                tu = self._resolve(self.expr, {**choice, i: (j,)})
                tv = self._resolve(self.expr, {**choice, i: (k,)})
                exact = None
                if isinstance(n, sympy.Piecewise):
                    # T is e_j where c_j holds, e_k elsewhere: continuous only where they
                    # are proved equal where c_j switches
                    zeros = self._switch(i, j, k)
                    if zeros is None:
                        self._refute_switch(n.args[j].cond)
                        raise _NotProved("a Piecewise switch not proved continuous")
                    exact = self._exact_jumps(tu, tv, zeros)
                    c = n.args[j].cond
                    h = self._resolve(c.lhs - c.rhs, choice)
                    first_right = c.rel_op in (">", ">=")
                    subs = [m for t in (tu, tv) for m in sympy.preorder_traversal(t)
                            if not m.is_Atom]
                else:
                    h = self._resolve(n.args[j] - n.args[k], choice)
                    first_right = isinstance(n, sympy.Max)
                    t = self._resolve(self.expr, choice)
                    subs = [m for m in sympy.preorder_traversal(t) if not m.is_Atom]
                out = _Plan("kink", self._compile([(1, h), (2, tu), (2, tv), (1, tu), (1, tv),
                                                   h, *subs]), first_right=first_right)
                out.exact = exact
            elif any(-1 in key[i] for i in seen):
                out = _Plan("open", why="a Piecewise without a branch for every alpha")
            else:
                out = _Plan("open", why="several non-smooth points in one box")
        except DomainError:
            raise
        except ArbUnsupported as exc:
            out = _Plan("open", why=f"no ball arithmetic ({exc})")
        except _NotProved as exc:
            out = _Plan("open", why=str(exc))
        except OutOfTime:
            # an interrupted assumption query may have left "unknown" in SymPy's cache
            sympy.core.cache.clear_cache()
            out = _Plan("open", why="the symbolic derivatives did not finish in time")
        except (TypeError, ValueError, NotImplementedError, AttributeError):
            out = _Plan("open", why="the symbolic derivatives failed")
        self.plans[key] = out
        return out

    def _switch(self, i: int, j: int, k: int) -> tuple[sympy.Expr, ...] | None:
        r"""The points of :math:`[0, 1]` where condition ``j`` of the Piecewise node ``i``
        switches, when branches ``j`` and ``k`` are proved equal at every one of them
        (SymPy's solveset of lhs = rhs on [0, 1], a finite set, and simplify of the
        difference to 0 there, under the symbolic budget); else ``None``."""
        if (i, j, k) in self.switch:
            return self.switch[(i, j, k)]
        n = self.nodes[i]
        c = n.args[j].cond

        def prove() -> tuple[sympy.Expr, ...] | None:
            zeros = sympy.solveset(c.lhs - c.rhs, self.var, sympy.Interval(0, 1))
            if not isinstance(zeros, sympy.FiniteSet):
                return None
            ok = all(sympy.simplify(n.args[j].expr.subs(self.var, z)
                                    - n.args[k].expr.subs(self.var, z)) == 0 for z in zeros)
            return tuple(zeros) if ok else None

        got = self._symbolic(prove)
        self.switch[(i, j, k)] = got
        return got

    def _refute_switch(self, cond: sympy.Basic) -> None:
        """A Piecewise switch not proved continuous: T evaluated just left and right of
        it; a jump up is an increase, a jump down is not convex (both with witnesses
        checked at exact points, as every refusal)."""
        zeros = self._symbolic(
            lambda: sympy.solveset(cond.lhs - cond.rhs, self.var, sympy.Interval(0, 1)))
        if not isinstance(zeros, sympy.FiniteSet):
            return
        for z in zeros:
            try:
                x0 = float(z)
            except (TypeError, ValueError):
                continue
            for bits in (30, 40):
                eps = max(abs(x0), 1e-300) * 2.0**-bits
                a, c, far = arb(x0 - eps), arb(x0 + eps), arb(x0 - 64 * eps)
                if not 0 <= far < a < c <= 1:
                    continue
                ta, tc = self.value(a), self.value(c)
                if ta is not None and tc is not None and tc > ta:
                    _increase_error(self.shown, a, c, ta, tc)
                got = _chord(self, far, a, c)
                if got is not None:
                    raise _concave_error(self.shown, far, a, c, *got)

    def _symbolic(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` under what is left of the symbolic budget; ``None`` when it runs out
        or fails (a proof that fails is no proof)."""
        from symgdp.symbolic.budget import OutOfTime, with_budget

        if self.budget <= 0:
            return None
        t0 = time.perf_counter()
        try:
            return with_budget(fn, self.budget)
        except OutOfTime:
            sympy.core.cache.clear_cache()
            return None
        except Exception:  # noqa: BLE001 - a proof that fails is no proof
            return None
        finally:
            self.budget -= time.perf_counter() - t0

    def _exact_jumps(self, tu: sympy.Expr, tv: sympy.Expr, zeros: tuple[sympy.Expr, ...]
                     ) -> list[arb] | None:
        r""":math:`T_u'(z) - T_v'(z)` at each switch point, simplified exactly and then
        enclosed: a join that is :math:`C^1` (Laplace's curve) has 0 exactly, which no
        enclosure on a box can prove :math:`\ge 0`."""
        def run() -> list[arb]:
            out = []
            for z in zeros:
                d = sympy.simplify(sympy.diff(tu, self.var).subs(self.var, z)
                                   - sympy.diff(tv, self.var).subs(self.var, z))
                if d == 0:
                    out.append(arb(0))
                    continue
                with ctx.workprec(256):
                    out.append(lambdify_arb(d, self.var)(arb(0)))
            return out

        return self._symbolic(run)

    # -- values of T at exact points -------------------------------------------------------
    def value(self, p: arb) -> arb | None:
        """T at the exact point ``p``, as tight as the forms and precisions give."""
        best = None
        for prec in _POINT_PRECS:
            with ctx.workprec(prec):
                for f in self.t_funcs:
                    v = f(p)
                    if v.is_finite():
                        best = v if best is None else (best.intersection(v)
                                                       if best.overlaps(v) else v)
                if best is not None and best.rad() <= abs(best.mid()) * 2.0**-100 + 2.0**-300:
                    return best
        return best


def _meet(vals: list[arb]) -> arb:
    """The intersection of the finite enclosures among ``vals`` of one value (the first
    value when none is finite)."""
    out = None
    for v in vals:
        if v.is_finite():
            out = v if out is None else (out.intersection(v) if out.overlaps(v) else out)
    return vals[0] if out is None else out


def _tidy(e: sympy.Expr) -> sympy.Expr:
    r"""An equal form of a derivative that cancels less in ball arithmetic: products of
    exponentials as one (``G_mu''``'s :math:`e^{2z^2} e^{-(\sqrt2 z - \mu)^2/2}` becomes
    :math:`e^{z^2 + \sqrt2\mu z - \mu^2/2}`, finite where the factors over- and
    underflow), exponents and polynomial factors expanded (:math:`\sqrt2(\sqrt2 z - 1) -
    2z = -\sqrt2`).  ``e`` itself when SymPy fails."""
    try:
        g = sympy.powsimp(sympy.expand(e), combine="exp")
        g = g.replace(sympy.exp, lambda u: sympy.exp(sympy.expand(u)))
        g = sympy.factor_terms(g)
    except Exception:  # noqa: BLE001 - an alternative form is optional
        return e
    return g if not g.has(sympy.nan, sympy.zoo) else e


def _prec(p: arb, q: arb) -> int:
    """Working precision on [p, q]: more bits near the ends, where T's argument (e.g.
    2 alpha near 2 in erfcinv) carries the small distance to the end."""
    d = float(p.min(1 - q).mid())
    return _PREC + (END_BITS + 8 if d <= 0 else max(0, int(-math.log2(d)) + 8))


def _split(p: arb, q: arb) -> arb:
    """A dyadic point strictly inside [p, q]: geometric towards the ends 0 and 1."""
    if p == 0:
        m = q * q * q * q if q < 0.5 else q / 16
    elif q == 1 and p >= 0.5:
        m = 1 - (1 - p) / 16
    elif q > 4 * p:
        m = (p * q).sqrt()
    elif p >= 0.5 and (1 - p) > 4 * (1 - q):
        m = 1 - ((1 - p) * (1 - q)).sqrt()
    else:
        m = (p + q) / 2
    return arb(float(m.mid()))


def _end(x: arb) -> str:
    """An end of a box: near 1 as ``1 - d`` (so that 1 - 2^-60 does not read as 1)."""
    return f"1 - {_fmt(1 - x)}" if 0.5 < x < 1 else _fmt(x)


def _merge(boxes: list[tuple[arb, arb]]) -> list[tuple[arb, arb]]:
    """The union of the boxes, merged where they touch, in order."""
    boxes = sorted(boxes, key=lambda b: float(b[0].mid()))
    merged: list[list[arb]] = []
    for p, q in boxes:
        if merged and merged[-1][1] == p:
            merged[-1][1] = q
        else:
            merged.append([p, q])
    return [(p, q) for p, q in merged]


def _intervals(merged: list[tuple[arb, arb]]) -> str:
    """Merged boxes as text (at most 3 shown)."""
    txt = ", ".join(f"[{_end(p)}, {_end(q)}]" for p, q in merged[:3])
    return txt + (f" and {len(merged) - 3} more intervals" if len(merged) > 3 else "")


def check_curve(expr: sympy.Expr, var: sympy.Symbol, t_funcs: list[Callable[[Any], arb]],
                *, max_boxes: int = MAX_BOXES) -> CurveCheck:
    r"""Prove that the curve ``expr`` in ``var`` is convex and non-increasing on
    :math:`[0, 1]`, or refuse it with a witness (module notes).

    Args:
        expr: the curve, every parameter bound.
        var: its argument.
        t_funcs: ball functions of equal forms of the curve (their intersection is used
            for the witnesses' values).
        max_boxes: the most boxes evaluated.

    Returns:
        A :class:`CurveCheck`: each property ``"proved"`` or ``"not proved on ...: why"``.

    Raises:
        DomainError: a witness that the curve is not convex, or that it increases.

    Example:
        >>> import sympy
        >>> a = sympy.Symbol("alpha")
        >>> curve = sympy.Max(0, 1 - 2 * a, (1 - a) / 2)
        >>> check_curve(curve, a, [lambdify_arb(curve, a)]).proved
        True
    """
    if expr.has(*_JUMPS):
        why = "not proved: Heaviside, DiracDelta and sign are not analysed"
        return CurveCheck(why, why)
    try:
        ck = _Checker(expr, var, t_funcs)
    except ArbUnsupported as exc:
        why = f"not proved: no ball arithmetic for the curve ({exc})"
        return CurveCheck(why, why)
    open_c: list[tuple[arb, arb, str]] = []
    open_m: list[tuple[arb, arb, str]] = []
    queue: deque[tuple[arb, arb, bool, bool]] = deque([(arb(0), arb(1), True, True)])
    n = 0
    while queue:
        p, q, need_c, need_m = queue.popleft()
        if n >= max_boxes:
            why = f"budget of {max_boxes} boxes exhausted"
            if need_c:
                open_c.append((p, q, why))
            if need_m:
                open_m.append((p, q, why))
            continue
        n += 1
        try:
            conv, mono, why = _box(ck, expr, p, q, need_c, need_m)
        except DomainError:
            raise
        except (ArithmeticError, ValueError, TypeError) as exc:
            conv = mono = None
            why = f"the ball evaluation failed ({type(exc).__name__})"
        if (conv is None and need_c) or (mono is None and need_m):
            # split points are floats: none lies in (1 - 2^-53, 1)
            end = (p == 0 and q <= 2.0**-END_BITS) or (q == 1 and 1 - p <= 2.0**-52)
            narrow = q - p < MIN_WIDTH * p.min(1 - q)
            m = None if end or narrow else _strict_split(ck, p, q)
            if m is None:
                why = why or "no point to split at"
                if end:
                    why = f"the end piece ({why})"
                if conv is None and need_c:
                    open_c.append((p, q, why))
                if mono is None and need_m:
                    open_m.append((p, q, why))
                continue
            queue.append((p, m, need_c and conv is None, need_m and mono is None))
            queue.append((m, q, need_c and conv is None, need_m and mono is None))

    def status(boxes: list[tuple[arb, arb, str]]) -> tuple[str, tuple[tuple[float, float], ...]]:
        if not boxes:
            return "proved", ()
        whys = list(dict.fromkeys(b[2] for b in boxes))
        merged = _merge([(b[0], b[1]) for b in boxes])
        return (f"not proved on {_intervals(merged)}: " + "; ".join(whys[:2]),
                tuple((float(p.mid()), float(q.mid())) for p, q in merged))

    (c_txt, c_open), (m_txt, m_open) = status(open_c), status(open_m)
    return CurveCheck(c_txt, m_txt, n, c_open, m_open)


def _strict_split(ck: _Checker, p: arb, q: arb) -> arb | None:
    """A split point where every node's choice is strict and T is differentiable."""
    m0 = _split(p, q)
    cands = [m0] + [arb(float((p + (q - p) * k / 32).mid())) for k in (15, 17, 13, 19, 11, 21)]
    for m in cands:
        if not p < m < q:
            continue
        with ctx.workprec(_prec(p, q)):
            key = ck.choices(m, strict=True)
            if any(len(c) != 1 for c in key):
                continue
            plan = ck.plan(key)
            if plan.kind != "smooth":
                continue
            got = plan.at(m)
            if all(v.is_finite() for v in got[1:2]):
                return m
    return None


def _box(ck: _Checker, expr: sympy.Expr, p: arb, q: arb, need_c: bool, need_m: bool
         ) -> tuple[bool | None, bool | None, str]:
    """(convex proved, non-increasing proved, why not) on [p, q]: True proved, None open;
    a disproof raises DomainError."""
    with ctx.workprec(_prec(p, q)):
        ball = p.union(q)
        key = ck.choices(ball, strict=False)
        plan = ck.plan(key)
        if plan.kind == "open":
            return None, None, plan.why
        got = plan.at(ball)
        if plan.kind == "smooth":
            d2, d1, subs = got[0], got[1], got[2:]
            if not all(v.is_finite() for v in (d2, d1, *subs)):
                return None, None, "the enclosures are not finite"
            conv = True if d2 >= 0 else None
            mono = True if d1 <= 0 else None
            if mono is None and conv:
                # T' is non-decreasing on the box: at most its value at the right end
                end = plan.at(q)[1]       # (still at the box's precision)
                mono = True if end.is_finite() and end <= 0 else None
            if need_m and d1 > 0:
                _refute_increase(ck, expr, p, q, f"T' >= {_fmt(d1.lower())} > 0")
            if need_c and d2 < 0:
                _refute_concave(ck, expr, p, q, f"T'' <= {_fmt(d2.upper())} < 0")
            if (need_c and conv is None) or (need_m and mono is None):
                _probe(ck, expr, plan, p, q, need_c and conv is None, need_m and mono is None)
            return conv, mono, "" if conv and mono else "the enclosures are too wide"
        hd, tu2, tv2, tu1, tv1, subs = got[0], got[1], got[2], got[3], got[4], got[6:]
        if not all(v.is_finite() for v in (hd, tu2, tv2, tu1, tv1, *subs)):
            return None, None, "the enclosures are not finite"
        if not (hd > 0 or hd < 0):
            return None, None, "a kink not separated"
        # h has at most one zero on the box: T is T_u on one side of it, T_v on the other
        mono = True if (tu1 <= 0 and tv1 <= 0) else None
        if need_m and tu1 > 0 and tv1 > 0:
            _refute_increase(ck, expr, p, q, f"T' >= {_fmt(tu1.lower().min(tv1.lower()))} > 0")
        # which branch lies right of the zero of h (Max: u where h = u - v > 0; Min: v;
        # Piecewise: e_j where its condition holds)
        u_right = (hd > 0) == plan.first_right
        jump = (tu1 - tv1) if u_right else (tv1 - tu1)
        if not jump >= 0 and plan.exact is not None and \
                all((d if u_right else -d) >= 0 for d in plan.exact):
            jump = arb(0)       # every switch point's exact jump is >= 0
        conv = True if (tu2 >= 0 and tv2 >= 0 and jump >= 0) else None
        if mono is None and conv:
            # T' is non-decreasing on the box: at most the larger branch slope at its end
            at_q = plan.at(q)
            if all(v.is_finite() and v <= 0 for v in at_q[3:5]):
                mono = True
        if need_c and jump < 0:
            hp, hq = _h_at(ck, plan, p), _h_at(ck, plan, q)
            if hp is not None and hq is not None and ((hp < 0 < hq) or (hq < 0 < hp)):
                _refute_kink(ck, expr, plan, p, q, jump)
        return conv, mono, "" if conv and mono else "the enclosures are too wide"


def _probe(ck: _Checker, expr: sympy.Expr, plan: _Plan, p: arb, q: arb, conv: bool,
           mono: bool) -> None:
    """On an open smooth box: where T'' < 0 (T' > 0) is proved at its midpoint, look for
    a small box around it where it is proved throughout, and refuse the curve there.
    (A violation on a scale far below the box is found at once, not after the
    branch-and-bound has split down to its scale everywhere.)"""
    m = arb(float(((p + q) / 2).mid()))
    if not p < m < q:
        return
    at = plan.at(m)
    bad_c = conv and at[0].is_finite() and at[0] < 0
    bad_m = mono and at[1].is_finite() and at[1] > 0
    if not (bad_c or bad_m):
        return
    r = (q - p) / 4
    for _ in range(24):
        a, c = arb(float((m - r).mid())), arb(float((m + r).mid()))
        if not p <= a < m < c <= q:
            break
        got = plan.at(a.union(c))
        if all(v.is_finite() for v in got[2:]):
            if bad_m and got[1] > 0:
                _refute_increase(ck, expr, a, c, f"T' >= {_fmt(got[1].lower())} > 0")
            if bad_c and got[0] < 0:
                _refute_concave(ck, expr, a, c, f"T'' <= {_fmt(got[0].upper())} < 0")
        r = r / 4


def _h_at(ck: _Checker, plan: _Plan, x: arb) -> arb | None:
    with ctx.workprec(_prec(x, x)):
        v = plan.at(x)[5]
    return v if v.is_finite() else None


def _chord(ck: _Checker, a: arb, b: arb, c: arb) -> tuple[arb, arb] | None:
    """(T(b), chord value at b) when T(b) is proved above the chord through a and c."""
    ta, tb, tc = ck.value(a), ck.value(b), ck.value(c)
    if ta is None or tb is None or tc is None:
        return None
    with ctx.workprec(_POINT_PRECS[-1]):
        chord = ta + (tc - ta) * (b - a) / (c - a)
        return (tb, chord) if tb > chord else None


def _concave_error(expr: sympy.Expr, a: arb, b: arb, c: arb, tb: arb, chord: arb
                   ) -> DomainError:
    err = DomainError(
        f"the trade-off curve {expr} is not convex near alpha = {_pt(b)}: {_fmt(tb)} lies "
        f"above the chord value {_fmt(chord)} through alpha = {_pt(a)} and {_pt(c)}, by "
        f"at least {float((tb - chord).lower()):.3g} (proved in ball arithmetic; a "
        "trade-off function is convex)")
    err.witness = ("chord", float(a.mid()), float(b.mid()), float(c.mid()))
    return err


def _refute_concave(ck: _Checker, expr: sympy.Expr, p: arb, q: arb, what: str) -> None:
    """T is proved strictly concave on [p, q]: the chord through its ends is below it."""
    m = _split(p, q) if p > 0 and q < 1 else arb(float(((p + q) / 2).mid()))
    got = _chord(ck, p, m, q) if p < m < q else None
    if got is not None:
        raise _concave_error(expr, p, m, q, *got)
    err = DomainError(f"the trade-off curve {expr} is not convex near alpha = {_pt(p)}: "
                      f"{what} on [{_pt(p)}, {_pt(q)}] (proved in ball arithmetic; a "
                      "trade-off function is convex)")
    err.witness = ("concave", float(p.mid()), float(q.mid()))
    raise err


def _refute_kink(ck: _Checker, expr: sympy.Expr, plan: _Plan, p: arb, q: arb, jump: arb
                 ) -> None:
    """A concave kink in [p, q]: find b near it and a chord below T(b)."""
    lo, hi = p, q
    hp = _h_at(ck, plan, p)
    assert hp is not None  # the caller proved h(p) finite (the same call) before calling
    for _ in range(60):                 # bisect h's sign change to a float point
        m = arb(float(((lo + hi) / 2).mid()))
        if not lo < m < hi:
            break
        hm = _h_at(ck, plan, m)
        if hm is None or not (hm > 0 or hm < 0):
            lo = hi = m
            break
        if (hm > 0) == (hp > 0):
            lo = m
        else:
            hi = m
    b = lo if lo == hi else arb(float(((lo + hi) / 2).mid()))
    r = (b - p).min(q - b)
    for _ in range(40):
        a, c = arb(float((b - r).mid())), arb(float((b + r).mid()))
        if a < b < c:
            got = _chord(ck, a, b, c)
            if got is not None:
                raise _concave_error(expr, a, b, c, *got)
        r = r / 4
    err = DomainError(f"the trade-off curve {expr} is not convex near alpha = {_pt(b)}: its "
                      f"slope drops by {_fmt(-jump.upper())} or more at a kink in "
                      f"[{_pt(p)}, {_pt(q)}] (proved in ball arithmetic; a trade-off "
                      "function is convex)")
    err.witness = ("kink", float(p.mid()), float(q.mid()))
    raise err


def _increase_error(expr: sympy.Expr, p: arb, q: arb, tp: arb, tq: arb) -> None:
    err = DomainError(f"the trade-off curve {expr} increases: {_fmt(tp)} at alpha = "
                      f"{_pt(p)} but {_fmt(tq)} at alpha = {_pt(q)} (proved in ball "
                      "arithmetic; a trade-off function is non-increasing)")
    err.witness = ("increase", float(p.mid()), float(q.mid()))
    raise err


def _refute_increase(ck: _Checker, expr: sympy.Expr, p: arb, q: arb, what: str) -> None:
    """T' > 0 is proved on [p, q]: T(q) > T(p)."""
    tp, tq = ck.value(p), ck.value(q)
    if tp is not None and tq is not None and tq > tp:
        _increase_error(expr, p, q, tp, tq)
    err = DomainError(f"the trade-off curve {expr} increases near alpha = {_pt(p)}: {what} "
                      f"on [{_pt(p)}, {_pt(q)}] (proved in ball arithmetic; a trade-off "
                      "function is non-increasing)")
    err.witness = ("slope", float(p.mid()), float(q.mid()))
    raise err
