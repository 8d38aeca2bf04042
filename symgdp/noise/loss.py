r"""The privacy loss of additive noise, its monotonicity and the threshold :math:`x_\varepsilon`.

For noise :math:`Z` with density :math:`p` and a query of sensitivity :math:`\Delta`, the
two output distributions of neighbouring inputs are :math:`P = \mathcal{L}(Z)` and
:math:`Q = \mathcal{L}(Z + \Delta)` (up to a common translation), and the privacy loss is

.. math:: L(x) = \log p(x) - \log p(x - \Delta).

**Monotonicity.**  :math:`L` is non-increasing in :math:`x` for *every* shift
:math:`\Delta > 0` exactly when :math:`p` is log-concave: the translation kernel
:math:`p(x - y)` is totally positive of order 2 iff :math:`\log p` is concave (Karlin,
*Total Positivity*, 1968, Ch. 1, §2; Saumard & Wellner 2014, Prop. 2.3).  Log-concavity is
proved piece by piece: :math:`(\log p)'' \le 0` on each analytic piece (SymPy's
assumptions, under a time budget), :math:`\log p` continuous at every breakpoint and its
derivative not jumping up there.  Where it fails, the point where
:math:`(\log p)'' > 0` is named and the zeros of :math:`L'` (the ends of the intervals
where :math:`L` is not monotone) are given where SymPy finds them.

**Threshold.**  On each piece where :math:`L` is not constant, :math:`L(x) = \varepsilon`
is solved for :math:`x` (time-bounded ``solve``; every candidate is checked at a random
rational point to 30 digits, and exactly one must pass).  With :math:`L` non-increasing,
:math:`\{L > \varepsilon\} = (-\infty, x_\varepsilon)`.

Example:
    >>> import sympy
    >>> from sympy.stats import Normal
    >>> from symgdp.noise.density import read_density
    >>> s, D = sympy.symbols("sigma Delta", positive=True)
    >>> loss = privacy_loss(read_density(Normal("Z", 0, s)), D)
    >>> loss.pieces[0].expr
    Delta*(Delta - 2*x)/(2*sigma**2)
    >>> loss.thresholds[0].x_eps
    Delta/2 - sigma**2*varepsilon/Delta
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import mpmath
import sympy

from symgdp.errors import ProfileError
from symgdp.noise.density import Density, Piece
from symgdp.symbolic.budget import resolve_timeout, run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["Loss", "Threshold", "log_concavity", "privacy_loss"]

_OO = sympy.oo


@dataclass(frozen=True)
class Threshold:
    r"""On the loss piece ``piece`` (on ``(lo, hi)``), :math:`L(x) = \varepsilon` at
    ``x_eps`` for :math:`\varepsilon` between ``eps_low`` (:math:`L` at ``hi``) and
    ``eps_high`` (:math:`L` at ``lo``)."""

    piece: int
    x_eps: sympy.Expr
    eps_low: sympy.Expr
    eps_high: sympy.Expr


@dataclass(frozen=True)
class Loss:
    r"""The privacy loss :math:`L(x) = \log p(x) - \log p(x - \Delta)` of a density.

    Attributes:
        x: the variable.
        sensitivity: :math:`\Delta`.
        pieces: :math:`L` on the ordered intervals of the breakpoints of :math:`p` and of
            :math:`p(\cdot - \Delta)`.
        monotone: how :math:`L` was proved non-increasing (one sentence).
        sup, inf: :math:`\sup L` and :math:`\inf L` (``oo``/``-oo`` when unbounded).
        thresholds: :math:`x_\varepsilon` on every piece where :math:`L` is not constant.
    """

    x: sympy.Symbol
    sensitivity: sympy.Expr
    pieces: tuple[Piece, ...]
    monotone: str
    sup: sympy.Expr
    inf: sympy.Expr
    thresholds: tuple[Threshold, ...]

    def expr(self) -> sympy.Expr:
        """:math:`L` as one expression (a ``Piecewise`` in ``x`` when it has pieces)."""
        if len(self.pieces) == 1:
            return self.pieces[0].expr
        return sympy.Piecewise(*[(p.expr, sympy.Lt(self.x, p.hi)) for p in self.pieces[:-1]],
                               (self.pieces[-1].expr, True))


def _log(e: sympy.Expr) -> sympy.Expr:
    return sympy.expand_log(sympy.log(e))


def _sign_nonpositive(h: sympy.Expr) -> bool:
    if h.is_nonpositive:
        return True
    h = sympy.simplify(h)
    if h.is_nonpositive:
        return True
    num, den = sympy.fraction(sympy.together(h))
    return bool((num.is_nonpositive and den.is_positive)
                or (num.is_nonnegative and den.is_negative))


def _concavity(density: Density) -> tuple[bool, str]:
    """(proved, reason); runs in a bounded child."""
    x = density.x
    logs = [_log(p.expr) for p in density.pieces]
    grads = [sympy.diff(lp, x) for lp in logs]
    for p, g in zip(density.pieces, grads, strict=True):
        h = sympy.simplify(sympy.diff(g, x))
        if not _sign_nonpositive(h):
            return False, f"(log p)'' = {h} on ({p.lo}, {p.hi}) is not proved <= 0"
    for k in range(len(density.pieces) - 1):
        c = density.pieces[k].hi
        jump = sympy.simplify(logs[k].xreplace({x: c}) - logs[k + 1].xreplace({x: c}))
        if jump != 0:
            return False, f"log p jumps by {jump} at x = {c}"
        kink = sympy.simplify(grads[k].xreplace({x: c}) - grads[k + 1].xreplace({x: c}))
        if not kink.is_nonnegative:
            return False, f"(log p)' jumps by {-kink} at x = {c}, not proved <= 0"
    where = "" if len(density.pieces) == 1 else \
        "; log p continuous with (log p)' not jumping up at the breakpoints"
    return True, ("p is log-concave ((log p)'' <= 0 on every piece" + where + "), so L is "
                  "non-increasing for every shift (Karlin 1968, Ch. 1; Saumard & Wellner "
                  "2014, Prop. 2.3)")


def _positive_point(h: sympy.Expr, x: sympy.Symbol, params: tuple) -> Any:
    at = {s: sympy.Integer(1) for s in params}
    f = sympy.lambdify(x, h.xreplace(at), "mpmath")
    for k in sorted(range(-400, 401), key=abs):
        v = sympy.Rational(k, 20)
        try:
            if f(mpmath.mpf(float(v))) > 0:
                return v, at
        except (ZeroDivisionError, ValueError, TypeError):
            continue
    return None


def _critical_points(density: Density, sensitivity: sympy.Expr) -> list:
    """Real zeros of L' for a one-piece density (runs in a bounded child)."""
    x = density.x
    lp = _log(density.pieces[0].expr)
    g = sympy.diff(lp, x)
    num, _ = sympy.fraction(sympy.together(sympy.simplify(g - g.xreplace(
        {x: x - sensitivity}))))
    sols = sympy.solve(sympy.factor(num), x)
    return [sympy.simplify(s) for s in sols if s.is_real is not False]


def log_concavity(density: Density, sensitivity: sympy.Expr, *,
                  timeout: float | None = None) -> str:
    """Prove the density log-concave (so the loss is non-increasing for every shift) and
    return the proof in one sentence; ProfileError naming why when it is not proved."""
    proved, why = run_bounded(_concavity, density, timeout=timeout)
    if proved:
        return why
    x = density.x
    detail = why
    lp = _log(density.pieces[0].expr) if len(density.pieces) == 1 else None
    if lp is not None:
        h = sympy.diff(lp, x, 2)
        bad = _positive_point(h, x, density.params)
        if bad is not None:
            at = "" if not bad[1] else " (with " + ", ".join(
                f"{k} = {v}" for k, v in bad[1].items()) + ")"
            detail = f"(log p)'' > 0 at x = {bad[0]}{at}: p is not log-concave"
        try:
            crit = run_bounded(_critical_points, density, sensitivity, timeout=timeout)
        except Exception:  # noqa: BLE001 - the intervals are extra information only
            crit = []
        if crit:
            detail += ("; L'(x) = 0 at x = " + ", ".join(map(str, crit))
                       + ", so L is not monotone (it changes direction there)")
    raise ProfileError(
        f"the privacy loss of {density.name} noise is not proved monotone: {detail}. The "
        "level sets {L > eps} are then not half-lines and the worst-case neighbour is not "
        "proved to sit at the shift +-Delta; this derivation needs log-concave noise")


def _order(points: list[sympy.Expr]) -> list[sympy.Expr]:
    out: list[sympy.Expr] = []
    for p in points:
        if any(sympy.simplify(p - q) == 0 for q in out):
            continue
        k = 0
        while k < len(out):
            d = (p - out[k]).is_positive
            if d is None:
                raise ProfileError(f"cannot order the breakpoints {p} and {out[k]} of the "
                                   "privacy loss for every parameter value")
            if not d:
                break
            k += 1
        out.insert(k, p)
    return out


def _positive(a: sympy.Expr) -> bool:
    """``a > 0`` proved: SymPy's assumptions, else with each ``c*exp(y)`` (``c > 0``) of
    the sum replaced by its lower bound ``c*(1 + y)`` (``exp(y) >= 1 + y``)."""
    if a.is_positive:
        return True
    lower = []
    for t in sympy.Add.make_args(sympy.expand(a)):
        c, rest = t.as_independent(sympy.exp, as_Add=False)
        if isinstance(rest, sympy.exp) and c.is_positive:
            lower.append(c * (1 + rest.args[0]))
        else:
            lower.append(t)
    return bool(sympy.Add(*lower).is_positive)


def _limit(e: sympy.Expr, x: sympy.Symbol, at: sympy.Expr, side: str) -> sympy.Expr:
    """L at a breakpoint, or its limit at an infinite end, with signs resolved; a value
    that stays undecided (``oo*sign(...)``) is refused."""
    if at not in (_OO, -_OO):
        return sympy.simplify(e.xreplace({x: at}))
    value = sympy.limit(e, x, at, "+" if at == -_OO else "-")
    signs = {}
    for f in value.atoms(sympy.sign):
        if _positive(f.args[0]):
            signs[f] = sympy.S.One
        elif _positive(-f.args[0]):
            signs[f] = sympy.S.NegativeOne
    value = value.xreplace(signs) if signs else value
    if value in (_OO, -_OO) or not value.has(_OO, -_OO, sympy.zoo, sympy.nan, sympy.sign,
                                                sympy.AccumBounds, sympy.Limit):
        return value
    raise ProfileError(f"cannot decide the limit of the privacy loss {e} as {x} -> {at}: "
                       f"SymPy gives {value}")


def _samples(free: set, lo: sympy.Expr, hi: sympy.Expr) -> list[dict]:
    """Two rational parameter points, each with an eps inside the piece's loss range."""
    out = []
    for seed in (20180712, 2021):
        rng = random.Random(seed)
        at = {s: sympy.Rational(rng.randint(7, 29), rng.randint(5, 13))
              for s in sorted(free - {_EPS}, key=str)}
        top, bottom = hi.xreplace(at), lo.xreplace(at)
        top = sympy.Integer(3) if top == _OO else top
        bottom = sympy.Integer(0) if bottom == -_OO else sympy.Max(bottom, 0)
        at[_EPS] = (2 * bottom + top) / 3
        out.append(at)
    return out


def _exp_variable(L: sympy.Expr, x: sympy.Symbol) -> sympy.Expr | None:
    """The rate k with every exponential of L of the form exp(q k x + r), q rational."""
    rates = []
    for a in L.atoms(sympy.exp):
        if not a.has(x):
            continue
        arg = sympy.expand(a.args[0])
        k = arg.coeff(x)
        if k == 0 or (arg - k * x).has(x):
            return None
        rates.append(k)
    if not rates:
        return None
    k0 = rates[0]
    return k0 if all(sympy.simplify(k / k0).is_Rational for k in rates) else None


def _candidates(L: sympy.Expr, x: sympy.Symbol, timeout: float | None) -> list:
    """Solutions of L = eps: in u = exp(k x) for a loss made of exponentials of x (a
    rational equation in u), else SymPy's solve."""
    k = _exp_variable(L, x)
    if k is not None:
        u = sympy.Dummy("u", positive=True)
        ratio = sympy.simplify(sympy.powsimp(sympy.expand_power_exp(
            sympy.exp(L).subs(x, sympy.log(u) / k))))
        try:
            sols = run_bounded(sympy.solve, sympy.Eq(ratio, sympy.exp(_EPS)), u,
                               timeout=timeout)
            return [sympy.log(s) / k for s in sols]
        except Exception:  # noqa: BLE001 - SymPy's solve on L itself instead
            pass
    return list(run_bounded(sympy.solve, sympy.Eq(L, _EPS), x, timeout=timeout))


def _solve_threshold(L: sympy.Expr, x: sympy.Symbol, lo: sympy.Expr, hi: sympy.Expr,
                     timeout: float | None) -> sympy.Expr | None:
    cands = _candidates(L, x, timeout)
    good = []
    for c in cands:
        ok = True
        for at in _samples((L.free_symbols | c.free_symbols) - {x}, lo, hi):
            try:
                r = sympy.N((L.xreplace({x: c}) - _EPS).xreplace(at), 40)
                im = sympy.N(c.xreplace(at), 40).as_real_imag()[1]
            except (TypeError, ValueError):
                ok = False
                break
            if not (r.is_number and abs(r) < 1e-30 and abs(im) < 1e-30):
                ok = False
                break
        if ok:
            good.append(sympy.simplify(c))
    return good[0] if len(good) == 1 else None


def _pieces_and_thresholds(density: Density, sensitivity: sympy.Expr,
                           timeout: float | None) -> tuple:
    """Loss pieces, sup, inf, thresholds (runs in a bounded child)."""
    x = density.x
    inner = [p.hi for p in density.pieces[:-1]]
    points = _order(inner + [b + sensitivity for b in inner])
    ends = [-_OO, *points, _OO]
    pieces, thresholds = [], []
    seen: dict = {}

    def limit(e: sympy.Expr, at: sympy.Expr, side: str) -> sympy.Expr:
        # the end limits of the first and last pieces are also sup L and inf L: each
        # limit is computed once
        key = (e, at, side)
        if key not in seen:
            seen[key] = _limit(e, x, at, side)
        return seen[key]

    for k, (a, c) in enumerate(pairwise(ends)):
        i = density.piece_index(a, c)
        j = density.piece_index(a - sensitivity, c - sensitivity)
        L = sympy.simplify(_log(density.pieces[i].expr)
                           - _log(density.pieces[j].expr).xreplace({x: x - sensitivity}))
        pieces.append(Piece(L, a, c))
        if sympy.simplify(sympy.diff(L, x)) == 0:
            continue
        low, high = limit(L, c, "-"), limit(L, a, "+")
        xe = _solve_threshold(L, x, low, high, timeout)
        if xe is None:
            raise ProfileError(f"SymPy finds no unique solution of L(x) = eps for the loss "
                               f"{L} on ({a}, {c})")
        thresholds.append(Threshold(k, xe, low, high))
    sup = limit(pieces[0].expr, -_OO, "+")
    inf = limit(pieces[-1].expr, _OO, "-")
    return tuple(pieces), sup, inf, tuple(thresholds)


def privacy_loss(density: Density, sensitivity: sympy.Expr, *,
                 timeout: float | None = None) -> Loss:
    r"""The privacy loss of ``density`` for the shift ``sensitivity``, proved
    non-increasing, with its thresholds :math:`x_\varepsilon` (see the module docstring).

    Raises:
        ProfileError: the density is not proved log-concave (the message names the point
            and the turning points of the loss), the breakpoints cannot be ordered, or
            :math:`L(x) = \varepsilon` has no unique closed-form solution.
        AnalysisTimeout: a step did not finish within the budget.
    """
    monotone = log_concavity(density, sensitivity, timeout=timeout)
    pieces, sup, inf, thresholds = run_bounded(_pieces_and_thresholds, density,
                                               sympy.sympify(sensitivity), timeout,
                                               timeout=3 * resolve_timeout(timeout))
    return Loss(density.x, sympy.sympify(sensitivity), pieces, monotone, sup, inf, thresholds)
