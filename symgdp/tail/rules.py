r"""The symbolic routes to the tail limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))`.

Two routes, each proposing a candidate that :mod:`symgdp.tail.limit` checks before it is
returned: the *dominant-term asymptotics* of :mod:`symgdp.tail.asymptotics` (the leading term
of :math:`\log\delta` as :math:`\varepsilon \to \infty`), and the *structural route*,
which takes the limits of sums, products, Max and Min from their parts' decay rates.
Also here: the time budget shared by every SymPy call of one analysis, and the branch of a
Piecewise, Max or Min that holds as :math:`\varepsilon \to \infty`.
"""

from __future__ import annotations

import time
from typing import Any

import sympy

from symgdp.errors import AnalysisTimeout
from symgdp.symbolic import budget as _bounded
from symgdp.symbolic.budget import resolve_timeout, run_bounded


class _Budget:
    """A wall-clock deadline shared by the bounded SymPy calls of one analysis.

    ``total`` is the budget as given; the deadline ``end`` is ``total`` times
    :data:`symgdp.symbolic.budget.TIMEOUT_SCALE` from now, like every bounded call's.  Budgets
    handed on to bounded calls come from :meth:`left`, in the same unscaled seconds."""

    def __init__(self, timeout: float | None) -> None:
        self.total = resolve_timeout(timeout)
        self.scale = float(_bounded.TIMEOUT_SCALE)
        self.end = time.monotonic() + self.total * self.scale
        self.timed_out = False

    def left(self) -> float:
        """The seconds left, unscaled (a bounded call scales them back to ``end``)."""
        return (self.end - time.monotonic()) / self.scale

    def call(self, fn: Any, *args: Any) -> Any:
        left = self.left()
        if left <= 0:
            self.timed_out = True
            raise AnalysisTimeout(f"the tail analysis exceeded its budget of {self.total:g} s")
        try:
            return run_bounded(fn, *args, timeout=left)
        except AnalysisTimeout:
            self.timed_out = True
            raise


def _bad(value: Any) -> bool:
    """True when a SymPy limit result is not a usable answer."""
    if value is None or not isinstance(value, sympy.Basic):
        return True
    return bool(value.has(sympy.Limit, sympy.AccumBounds, sympy.nan, sympy.zoo)
                or value is sympy.nan)


def _limit_at_infinity(expr: sympy.Expr, var: sympy.Symbol, budget: _Budget) -> Any:
    try:
        val = budget.call(sympy.limit, expr, var, sympy.oo)
    except AnalysisTimeout:
        return None
    except Exception:  # noqa: BLE001 - SymPy raises many kinds on unsupported input
        return None
    if _bad(val) or var in val.free_symbols:
        return None
    return val


def _eventual_sign(expr: sympy.Expr, var: sympy.Symbol, budget: _Budget) -> int | None:
    """+1 / -1 when ``expr`` is eventually positive / negative as var -> oo, else None."""
    expr = sympy.sympify(expr)
    if var not in expr.free_symbols:
        if expr.is_positive:
            return 1
        if expr.is_negative:
            return -1
        return 0 if expr.is_zero else None
    if expr.is_polynomial(var):
        poly = sympy.Poly(expr, var)
        return _eventual_sign(poly.LC(), var, budget)
    try:
        s = budget.call(_series_sign, expr, var)
    except AnalysisTimeout:
        return None
    if s is not None:
        return s
    if expr.has(sympy.erf, sympy.erfc) and expr.free_symbols - {var}:
        # SymPy's limit of a difference of Gaussian-type terms with parameters was 0 (no
        # sign) after 3-4 s in every case measured: not worth the budget
        return None
    val = _limit_at_infinity(expr, var, budget)
    if val is None:
        return None
    if val is sympy.oo:
        return 1
    if val is sympy.S.NegativeInfinity:
        return -1
    if val.is_positive:
        return 1
    if val.is_negative:
        return -1
    return None


def _series_sign(expr: sympy.Expr, var: sympy.Symbol) -> int | None:
    """The sign of the leading term of the expansion of ``expr`` (:mod:`symgdp.tail.asymptotics`;
    exact above its floor, so it is the eventual sign), or None when the rules do not decide
    it.  Runs in a bounded child."""
    from symgdp.tail.asymptotics import NotPositive, Unsupported, prepare, value_series

    try:
        series = value_series(prepare(expr, var), var)
        lead = series.leading()
    except (NotPositive, Unsupported, RecursionError, TypeError, ValueError, ArithmeticError):
        return None
    if lead is None:
        return None
    s = _sign(lead[1])
    return s if s in (1, -1) else None


def _eventually_true(cond: Any, var: sympy.Symbol, budget: _Budget) -> bool | None:
    if cond is sympy.true or cond is True:
        return True
    if cond is sympy.false or cond is False:
        return False
    if isinstance(cond, sympy.And):
        vals = [_eventually_true(c, var, budget) for c in cond.args]
        if any(v is False for v in vals):
            return False
        return True if all(v is True for v in vals) else None
    if isinstance(cond, sympy.Or):
        vals = [_eventually_true(c, var, budget) for c in cond.args]
        if any(v is True for v in vals):
            return True
        return False if all(v is False for v in vals) else None
    if isinstance(cond, sympy.Not):
        v = _eventually_true(cond.args[0], var, budget)
        return None if v is None else not v
    if isinstance(cond, sympy.Rel):
        s = _eventual_sign(cond.lhs - cond.rhs, var, budget)
        if s is None or s == 0:
            return None
        if isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
            return s > 0
        if isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
            return s < 0
        if isinstance(cond, sympy.Eq):
            return False
        if isinstance(cond, sympy.Ne):
            return True
    return None


def _eventual(expr: sympy.Expr, var: sympy.Symbol, budget: _Budget) -> sympy.Expr | None:
    if var not in expr.free_symbols:
        return expr
    if isinstance(expr, sympy.Piecewise):
        for e, c in expr.args:
            holds = _eventually_true(c, var, budget)
            if holds is True:
                return _eventual(e, var, budget)
            if holds is None:
                return None
        return None
    if isinstance(expr, (sympy.Max, sympy.Min)):
        args = [_eventual(a, var, budget) for a in expr.args]
        known = [a for a in args if a is not None]
        if len(known) < len(args):
            return None
        best = known[0]
        for a in known[1:]:
            s = _eventual_sign(a - best, var, budget)
            if s is None and a.is_positive and best.is_positive:
                # both vanish (difference -> 0): compare by their ratio instead
                s = _eventual_sign(a / best - 1, var, budget)
            if s is None or s == 0:
                return None
            if (s > 0) == isinstance(expr, sympy.Max):
                best = a
        return best
    if not expr.args:
        return expr
    args = [_eventual(a, var, budget) for a in expr.args]
    if any(a is None for a in args):
        return None
    return expr.func(*args)


def eventual_branch(expr: sympy.Expr, var: sympy.Symbol, *,
                    timeout: float | None = None) -> sympy.Expr | None:
    r"""The expression that ``expr`` equals for all large ``var``, or ``None`` if undecided.

    ``Max``, ``Min`` and ``Piecewise`` are replaced by the branch that holds as
    :math:`\varepsilon \to \infty`.

    Example:
        >>> import sympy
        >>> from symgdp import eps
        >>> eventual_branch(sympy.Max(1 - sympy.exp(eps / 2 - 1), 0), eps)
        0
    """
    return _eventual(sympy.sympify(expr), var, _Budget(timeout))


# -- the symbolic route: dominant-term asymptotics ------------------------------------------
def _negated(c: sympy.Expr) -> sympy.Expr:
    """-c with -Max(-b, -d) written as Min(b, d) (and vice versa)."""
    if isinstance(c, sympy.Max):
        return sympy.Min(*[_negated(a) for a in c.args])
    if isinstance(c, sympy.Min):
        return sympy.Max(*[_negated(a) for a in c.args])
    return -c


def _rules_lead(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Any, Any, str]:
    """(leading key or None, coefficient, detail) of the expansion of log delta.

    Raises :class:`~symgdp.tail.asymptotics.NotPositive` / ``Unsupported`` (and the errors of a
    failed expansion) like :func:`~symgdp.tail.asymptotics.log_series`."""
    from fractions import Fraction

    from symgdp.tail.asymptotics import HUGE, log_series, prepare

    if expr.atoms(sympy.Float):
        # decimals as the rationals they spell (as SymPy's limit does): 1.5 -> 3/2, so a
        # limit like A^2/(2 sigma^2) comes out exact; the numeric check uses the Floats
        expr = sympy.nsimplify(expr, rational=True)
    series = log_series(prepare(expr, var), var)
    lead = series.leading()
    if lead is None:
        if series.floor < (Fraction(2), 0):
            return (Fraction(0), 0), sympy.S.Zero, "log delta = o(eps^2)"
        return None, None, "the expansion of log delta has no leading term"
    key, coef = lead
    if key >= HUGE:
        return key, coef, f"log delta ~ ({coef}) * (a quantity larger than every power of eps)"
    shown = f"log delta ~ ({coef}) * eps^{key[0]}" + (f" log(eps)^{key[1]}" if key[1] else "")
    return key, coef, shown


def _rate_of_lead(key: Any, coef: Any) -> Any:
    r"""The rate :math:`\lim -2\log\delta/\varepsilon^2` in :math:`[-\infty, \infty]` from
    the leading term of log delta, or None when its sign depends on the parameters."""
    from fractions import Fraction

    if key < (Fraction(2), 0):
        return sympy.S.Zero
    sg = _sign(coef)
    if sg is None:
        return None
    if key > (Fraction(2), 0):
        return sympy.oo if sg < 0 else sympy.S.NegativeInfinity
    return 2 * _negated(coef) if sg < 0 else -2 * coef


def _asymptotic_limit(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Any, str]:
    """(limit or None, detail) from the expansion of log delta (:mod:`symgdp.tail.asymptotics`).

    Runs in a bounded child process; undecidable signs give ``None``.  The result is a
    candidate: :func:`_check` verifies it before it is returned.
    """
    from fractions import Fraction

    from symgdp.tail.asymptotics import NotPositive, Unsupported

    try:
        key, coef, shown = _rules_lead(expr, var)
    except NotPositive as exc:
        return None, f"the tail branch looks eventually negative ({exc})"
    except Unsupported as exc:
        return None, f"no asymptotic rule: {exc}"
    except (RecursionError, TypeError, ValueError, ArithmeticError) as exc:
        return None, f"no asymptotic rule: {type(exc).__name__}"
    if key is None:
        return None, shown
    rate = _rate_of_lead(key, coef)
    if rate is None:
        return None, f"{shown}: the sign of the leading coefficient depends on the parameters"
    if key < (Fraction(2), 0):
        return sympy.oo, f"{shown}: slower than eps^2 (or vacuous)"
    # a rate at key (2, 0) means _sign(coef) was decided (-1, 0 or 1, never None)
    if rate is sympy.S.NegativeInfinity or (key == (Fraction(2), 0) and _sign(coef) == 1):
        return sympy.oo, f"{shown}: the profile grows (vacuous)"
    if rate is sympy.oo:
        return sympy.S.Zero, f"{shown}: faster than eps^2"
    return 1 / rate, shown


def _sign(c: Any) -> int | None:
    from symgdp.tail.asymptotics import _sign as sign

    return sign(c)


# -- the structural route: limits of sums, products, Max and Min from their parts -------------
def _recip(r: sympy.Expr) -> sympy.Expr:
    """1/r for r > 0, with 1/Max = Min of reciprocals (and vice versa), 1/oo = 0."""
    if isinstance(r, sympy.Max):
        return sympy.Min(*[_recip(a) for a in r.args])
    if isinstance(r, sympy.Min):
        return sympy.Max(*[_recip(a) for a in r.args])
    if isinstance(r, sympy.Piecewise):
        return sympy.Piecewise(*[(_recip(e), c) for e, c in r.args])
    if r is sympy.oo:
        return sympy.S.Zero
    return 1 / r


def _components(e: sympy.Expr, var: sympy.Symbol) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """A sum split as sum_k c_k g_k: terms grouped by the parameters of their eps-dependent
    part (the two terms of one Gaussian profile stay together), c_k free of eps, and within
    a group by weights that are constant multiples of each other (g_k has no parameter-
    dependent weight inside)."""
    groups: dict[frozenset, list] = {}
    for t in sympy.Add.make_args(e):
        _, g = t.as_independent(var, as_Add=False)
        groups.setdefault(frozenset(g.free_symbols - {var}), []).append(t)
    out = []
    for terms in groups.values():
        parts: dict[sympy.Expr, sympy.Expr] = {}
        for t in terms:
            c, g = t.as_independent(var, as_Add=False)
            parts[g] = parts.get(g, sympy.S.Zero) + c
        items = [(g, sympy.factor(c)) for g, c in parts.items() if c != 0]
        # one component per set of terms whose weights are constant multiples of each
        # other: dividing by a weight that depends on the parameters could divide by 0
        # ((w - 2)^2 e^{-eps^2} + e^{-2 eps^2} is not (w - 2)^2 (e^{-eps^2} + ...), whose
        # vanishing at w = 2 would drop the e^{-2 eps^2} term too)
        while items:
            c0 = items[0][1]
            same: list[tuple] = []
            rest: list[tuple] = []
            for gi, c in items:
                ratio = sympy.cancel(c / c0)
                (same if not ratio.free_symbols else rest).append((gi, ratio, c))
            out.append((c0, sympy.Add(*[ratio * gi for gi, ratio, _ in same])))
            items = [(gi, c) for gi, _, c in rest]
    return out


def _structural_rate(e: sympy.Expr, var: sympy.Symbol, depth: int = 0) -> sympy.Expr:
    r"""The rate :math:`r = \lim -2\log e/\varepsilon^2` of an eventually positive ``e``
    from its structure (theory §5): for positive terms a sum decays like its slowest term
    (:math:`r = \min_k r_k`), a product adds rates, ``Max``/``Min`` take the min/max rate,
    a positive power scales it.  Parts without structure use the asymptotic rules.

    Raises :class:`~symgdp.tail.asymptotics.Unsupported` (or ``NotPositive``) when a step is
    not provable for every parameter value (a coefficient of undecided sign)."""
    from symgdp.tail.asymptotics import NotPositive, Unsupported
    from symgdp.tail.weights import undecided_weight_rate

    if depth > 12:
        raise Unsupported("structure too deep")
    if var not in e.free_symbols:
        if _sign(e) == 1:
            return sympy.S.Zero
        raise Unsupported(f"the factor {e} is not provably positive")
    if isinstance(e, (sympy.Max, sympy.Min)):
        rates = [_structural_rate(a, var, depth + 1) for a in e.args]
        return sympy.Min(*rates) if isinstance(e, sympy.Max) else sympy.Max(*rates)
    if isinstance(e, sympy.Mul):
        total = sympy.S.Zero
        for f in e.args:
            total = total + _structural_rate(f, var, depth + 1)
        if total is sympy.nan or total.has(sympy.nan):
            raise Unsupported("rates +oo and -oo in one product")
        return total
    if isinstance(e, sympy.Pow) and var not in e.exp.free_symbols and e.exp.is_positive:
        return e.exp * _structural_rate(e.base, var, depth + 1)
    if isinstance(e, sympy.Add):
        comps = _components(e, var)
        if len(comps) > 1:
            rates, signed, undecided = [], [], False
            for c, g in comps:
                try:
                    r = _structural_rate(g, var, depth + 1)
                except NotPositive:
                    c, g = -c, -g
                    r = _structural_rate(g, var, depth + 1)
                signed.append((c, g, r))
                if c.is_positive:
                    rates.append(r)
                elif c.is_nonnegative:
                    # the term vanishes where c = 0 and then does not count
                    rates.append(sympy.Piecewise((sympy.oo, sympy.Eq(c, 0)), (r, True)))
                elif _sign(c) == 1:
                    rates.append(r)
                else:
                    undecided = True
            if undecided:
                # a weight that may be negative or 0 (w delta_a + (1 - w) delta_b):
                # symgdp.tail.weights, or Unsupported
                return undecided_weight_rate(signed, var)
            return sympy.Min(*rates)
    key, coef, shown = _rules_lead(e, var)
    if key is None:
        raise Unsupported(shown)
    rate = _rate_of_lead(key, coef)
    if rate is None:
        raise Unsupported(f"{shown}: the sign depends on the parameters")
    return rate


def _structural_limit(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Any, str]:
    """(limit or None, detail) from :func:`_structural_rate`; runs in a bounded child."""
    from symgdp.tail.asymptotics import NotPositive, Unsupported, prepare

    try:
        try:
            r = _structural_rate(expr, var)
        except (NotPositive, Unsupported):
            if not expr.has(sympy.erf, sympy.erfc):
                raise
            # erf as 1 - erfc and erfc of arguments tending to -oo as 2 - erfc: the
            # constants of the erf / Phi spellings then cancel, and each Gaussian profile's
            # terms form one component again (only as a second try: the expansion also
            # flattens products that the structure handles better as they are)
            r = _structural_rate(prepare(expr, var), var)
    except (NotPositive, Unsupported) as exc:
        return None, f"no structural rule: {exc}"
    except (RecursionError, TypeError, ValueError, ArithmeticError) as exc:
        return None, f"no structural rule: {type(exc).__name__}"
    if r is sympy.oo:
        return sympy.S.Zero, "structure: every part decays faster than eps^2"
    if r.is_positive:
        return _recip(r), f"structure: rate -2 log delta/eps^2 -> {r}"
    if r.is_nonpositive:
        return sympy.oo, f"structure: rate {r} <= 0 (slower than eps^2 or vacuous)"
    return sympy.Piecewise((sympy.oo, r <= 0), (_recip(r), True)), \
        f"structure: rate -2 log delta/eps^2 -> {r}"
