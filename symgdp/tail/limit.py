r"""Identification: the tail limit of a privacy profile and the GDP verdict.

Notation and result (theory §5; "Identification, Amplification and Measurement:
A bridge to Gaussian Differential Privacy", NeurIPS 2022, the identification theorem):
for a privacy profile :math:`\delta_A`,

.. math::

    \lim_{\varepsilon\to\infty} G_A(\varepsilon)^2
        = \lim_{\varepsilon\to\infty} \frac{\varepsilon^2}{-2\log\delta_A(\varepsilon)},

and :math:`A` is GDP (for some finite :math:`\mu`) iff this limit is finite; its square
root :math:`\mu_{\text{tail}}` is a lower bound for the tightest :math:`\mu`.

How the limit is found, in order:

1. *Branch selection.*  ``Piecewise`` (and ``Max``/``Min`` where the order is decidable)
   is reduced to the branch that holds as :math:`\varepsilon\to\infty`.  A profile that
   is eventually 0 has limit 0 (pure DP, Laplace).
2. *Asymptotic rules* (:mod:`symgdp.tail.asymptotics`): the leading term of
   :math:`\log\delta` from exact rules for sums (with cancellation resolved order by
   order, as in the Gaussian profile in every spelling: ``erfc``, ``erf``, :math:`\Phi`),
   products, powers, ``exp``, ``log``, ``erfc``/``erf``, ``Max``/``Min``.  With free
   parameters the result holds for every admissible value (e.g. :math:`1/(2\min(b, d))`
   for :math:`a e^{-b\varepsilon^2} + c e^{-d\varepsilon^2}`); a sign that depends on the
   parameters gives "unknown", never a formula valid for one ordering only.
3. *SymPy's limit* of :math:`\varepsilon^2 / (-2\,\mathrm{expand\_log}(\log\delta))`,
   time-bounded (:mod:`symgdp.symbolic.budget`), used only when the rules do not apply.
4. *Numeric cross-check.*  Every symbolic answer is compared with
   :math:`q(\varepsilon) = \varepsilon^2/(-2\log\delta(\varepsilon))` in high precision
   far out (:math:`\varepsilon` up to :math:`10^{40}`) at random admissible parameter
   values; a disagreement discards it, and an answer of SymPy's limit must be confirmed.
5. *Numeric fallback* (all parameters bound): see :func:`_numeric_tail`; a ratio that
   drifts (like :math:`\log\varepsilon`) or oscillates is "unknown", never a limit.

Every step runs under the ``timeout`` budget; running out of time gives "unknown", never
"not GDP".

When nothing is conclusive, :func:`identify` returns an :class:`Identification` with
``is_gdp=None`` and ``method="unknown"``; :func:`tail_limit` raises
:class:`~symgdp.errors.AnalysisTimeout` if a SymPy step ran out of time, else
:class:`~symgdp.errors.ConvergenceError`.  Both derive from
:class:`~symgdp.errors.SymgdpError`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import mpmath
import sympy

from symgdp.contracts import LimitMethod
from symgdp.errors import AnalysisTimeout, ConvergenceError, ProfileError, SymgdpError
from symgdp.evaluation.evaluate import evaluator_of
from symgdp.symbolic import budget as _bounded
from symgdp.symbolic.budget import resolve_timeout, run_bounded
from symgdp.tail.rules import (
    _asymptotic_limit,
    _Budget,
    _eventual,
    _eventual_sign,
    _limit_at_infinity,
    _rate_of_lead,
    _rules_lead,
    _structural_limit,
    eventual_branch,
)

__all__ = ["Identification", "identify", "tail_limit", "eventual_branch", "NUMERIC_RTOL"]

#: Largest relative change between the last numeric tail ratios accepted as convergence.
NUMERIC_RTOL = 1e-12


@dataclass(frozen=True, slots=True)
class Identification:
    r"""The GDP verdict of a profile from its tail (theory §5).

    Attributes:
        limit: :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` as a SymPy expression
            (``sympy.oo`` when not GDP), or ``None`` when the analysis was inconclusive.
        is_gdp: ``True``/``False``, or ``None`` when undecided (inconclusive analysis, or
            a symbolic limit whose finiteness depends on unbound parameters).
        mu_tail: :math:`\sqrt{\text{limit}}` as a float; ``inf`` when not GDP and ``nan``
            when unknown or still symbolic.
        method: ``"symbolic"``, ``"numeric"`` or ``"unknown"``.
        detail: one line on how the verdict was reached.
        timed_out: ``True`` when an inconclusive analysis ran out of its time budget (a
            larger ``timeout`` may decide it), ``False`` when it finished without a rule.
    """

    limit: sympy.Expr | None
    is_gdp: bool | None
    mu_tail: float
    method: LimitMethod
    detail: str = ""
    timed_out: bool = False

    def __post_init__(self) -> None:
        if self.method not in ("symbolic", "numeric", "unknown"):
            raise ValueError(f"method must be 'symbolic', 'numeric' or 'unknown', "
                             f"got {self.method!r}")


# -- numeric cross-check of a symbolic answer -------------------------------------------------
_CHECK_POINTS = ((1e6, 1e16, 1e40), (1e4, 1e8, 1e16), (1e3, 1e4, 1e5))
_CHECK_SECONDS = 5.0  # the check of a limit without parameters
# The parameter check (theory §5): every ordering of the parameters over these values,
# ties, a common scale and extremes.
_GRID = (sympy.Rational(3, 10), sympy.Integer(1), sympy.Integer(3), sympy.Integer(10))
_GRID_INT = (sympy.Integer(1), sympy.Integer(2), sympy.Integer(3), sympy.Integer(10))
_EXTREMES = (sympy.Rational(1, 1000), sympy.Integer(1000))
_EXTREMES_INT = (sympy.Integer(1), sympy.Integer(100))
_SCALES = (sympy.Rational(1, 100), sympy.Integer(100))
_MAX_ORDERINGS = 48
#: Seconds the parameter check may take at least, even when the budget is spent (and per
#: point for the numeric fallback of a point).
_CHECK_MIN_SECONDS = 5.0
_POINT_SECONDS = 2.0


def _parameter_points(params: set) -> list[dict]:
    r"""Parameter values covering every ordering of the parameters: all injective
    assignments of :math:`\{0.3, 1, 3, 10\}` (integers: 1, 2, 3, 10), every pair tied,
    the orderings scaled by 1/100 and 100, each parameter at 1/1000 and 1000 with the
    others at 1, and all at once at the extremes.  A parameter declared negative gets the
    negated values; one of unknown sign also gets -1 and 0."""
    import itertools
    import random

    syms = sorted(params, key=str)
    if not syms:
        return [{}]
    n = len(syms)

    def val(s: sympy.Symbol, v: sympy.Expr, integer_v: sympy.Expr) -> sympy.Expr:
        x = integer_v if s.is_integer else v
        return -x if s.is_negative else x

    def grid(i: int) -> tuple:
        return _GRID_INT if syms[i].is_integer else _GRID

    pts: list[dict] = []
    base = list(range(len(_GRID)))
    if n <= len(_GRID):
        orders = list(itertools.permutations(base, n))
    else:
        rng = random.Random(n)
        orders = [tuple(rng.choice(base) for _ in range(n)) for _ in range(_MAX_ORDERINGS)]
    for o in orders:
        pts.append({s: val(s, grid(i)[o[i]], _GRID_INT[o[i]]) for i, s in enumerate(syms)})
    for i, j in itertools.combinations(range(n), 2):
        for tie in (1, 2):
            others = iter([k for k in (0, 3, 1, 2) if k != tie] * n)
            d = {}
            for m, s in enumerate(syms):
                k = tie if m in (i, j) else next(others)
                d[s] = val(s, grid(m)[k], _GRID_INT[k])
            pts.append(d)
    for f in _SCALES:
        for o in (tuple(range(min(n, 4))), tuple(reversed(range(min(n, 4))))):
            pts.append({s: val(s, grid(m)[o[m % len(o)]] * f, _GRID_INT[o[m % len(o)]])
                        for m, s in enumerate(syms)})
    for s in syms:
        for k in (0, 1):
            d = {t: val(t, sympy.Integer(1), sympy.Integer(1)) for t in syms}
            d[s] = val(s, _EXTREMES[k], _EXTREMES_INT[k])
            pts.append(d)
    for k in (0, 1):
        pts.append({s: val(s, _EXTREMES[k], _EXTREMES_INT[k]) for s in syms})
    for s in syms:
        if s.is_positive or s.is_negative:
            continue
        for v in (sympy.Integer(-1), sympy.S.Zero):
            if (v == 0 and s.is_nonzero) or (v < 0 and s.is_nonnegative):
                continue
            d = {t: val(t, sympy.Integer(3), sympy.Integer(3)) for t in syms}
            d[s] = v
            pts.append(d)
    out, seen = [], set()
    for d in pts:
        key = tuple(d[s] for s in syms)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


_MAX_ZERO_POINTS = 12


def _weight_zero_points(expr: sympy.Expr, var: sympy.Symbol, params: set) -> list[dict]:
    """Parameter values where a weight of the profile vanishes: for each term's factor free
    of ``var`` that is a rational function of the parameters, its roots in each parameter
    (within the parameter's assumptions), the other parameters at 1 and at 3.  A weight
    like (w - 2)^2 vanishes at no grid value of :func:`_parameter_points`, and SymPy's limit
    treats it as non-zero: there the limit can jump ((w - 2)^2 e^{-eps^2} + e^{-2 eps^2}:
    1/2, but 1/4 at w = 2)."""
    syms = sorted(params, key=str)
    weights = set()
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Add, sympy.Mul)):
            for t in node.args:
                c, _ = t.as_independent(var, as_Add=False)
                if c.free_symbols and c.free_symbols <= params:
                    weights.add(c)
    out: list[dict] = []
    for c in sorted(weights, key=sympy.default_sort_key):
        if not c.is_rational_function(*syms):
            continue
        for x in sorted(c.free_symbols, key=str):
            try:
                sols = sympy.solve(c, x)
            except (NotImplementedError, TypeError, ValueError):
                continue
            for sol in sols if isinstance(sols, list) else []:
                for base in (sympy.Integer(1), sympy.Integer(3)):
                    d = {t: base for t in syms if t != x}
                    v = sympy.sympify(sol).xreplace(d) if isinstance(sol, sympy.Basic) else None
                    if v is None or not v.is_number or not v.is_real:
                        continue
                    d[x] = sympy.nsimplify(v) if v.is_Float else v
                    if all(_admissible(t, d[t]) for t in syms) and d not in out:
                        out.append(d)
                    if len(out) >= _MAX_ZERO_POINTS:
                        return out
    return out


def _admissible(s: sympy.Symbol, v: sympy.Expr) -> bool:
    """Whether the value v meets the symbol's declared sign and integrality."""
    return not ((s.is_positive and not v.is_positive) or (s.is_negative and not v.is_negative)
                or (s.is_nonnegative and v.is_negative) or (s.is_integer and not v.is_integer)
                or (s.is_nonzero and v.is_zero))


def _bound_truth(expr: sympy.Expr, var: sympy.Symbol, left: float) -> tuple[str, Any]:
    """The tail limit of ``expr`` with every parameter bound, by the exact rules:
    ("limit", value), ("inadmissible", why) when the profile is eventually negative there,
    or ("none", why)."""
    from symgdp.tail.asymptotics import NotPositive, Unsupported

    try:
        e = expr
        if e.has(sympy.nan, sympy.zoo):
            return "inadmissible", "undefined"
        try:
            if e.has(sympy.Piecewise):
                raise Unsupported("Piecewise")
            key, coef, shown = _rules_lead(e, var)
        except (NotPositive, Unsupported):
            if not e.has(sympy.Piecewise, sympy.Max, sympy.Min):
                raise
            # the branch that holds far out (an eventually-0 Laplace profile, ...)
            e = _eventual(e, var, _Budget(max(left, 0.5)))
            if e is None:
                return "none", "branch undecided"
            if e.is_zero:
                return "limit", sympy.S.Zero
            key, coef, shown = _rules_lead(e, var)
    except NotPositive as exc:
        return "inadmissible", f"eventually negative ({exc})"
    except (Unsupported, SymgdpError) as exc:
        return "none", str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure of the rules is "no answer"
        return "none", type(exc).__name__
    if key is None:
        return "none", shown
    rate = _rate_of_lead(key, coef)
    if rate is None:
        return "none", shown
    if rate is sympy.oo:
        return "limit", sympy.S.Zero
    if not rate.is_positive:
        return "limit", sympy.oo
    return "limit", 1 / rate


def _bound_truths(expr: sympy.Expr, var: sympy.Symbol, points: list[dict],
                  end: float) -> list[tuple[str, Any]]:
    """:func:`_bound_truth` at every point (one bounded child runs them all)."""
    scale = float(_bounded.TIMEOUT_SCALE)  # ``end`` is a wall-clock deadline, scaled
    return [_bound_truth(expr.xreplace(d), var, (end - time.monotonic()) / scale)
            for d in points]


def _same_value(formula: Any, truth: sympy.Expr) -> bool | None:
    """Whether the formula's value at a point equals the exact bound limit (30 digits)."""
    if formula is sympy.oo or truth is sympy.oo:
        return formula is truth
    try:
        f, t = sympy.N(formula, 30), sympy.N(truth, 30)
    except (TypeError, ValueError, ArithmeticError):
        return False
    if not (f.is_Number and t.is_Number) or f.has(sympy.nan) or not f.is_finite:
        return False
    if t == 0:
        return f == 0
    return bool(abs(f - t) <= sympy.Float("1e-20", 30) * abs(t))


def _parameter_check(expr: sympy.Expr, var: sympy.Symbol, lim: sympy.Expr,
                     budget: _Budget) -> tuple[bool | None, str]:
    """(True agree / False disagree / None inconclusive, detail): the formula ``lim`` at
    every point of :func:`_parameter_points` and of :func:`_weight_zero_points` against the
    limit of the profile with the values substituted first (exact rules; a 60-digit q(eps)
    far out where they fail)."""
    params = (expr.free_symbols | lim.free_symbols) - {var}
    points = _parameter_points(params)
    try:
        extra = run_bounded(_weight_zero_points, expr, var, params,
                            timeout=max(min(_POINT_SECONDS, budget.left()), 0.5))
    except Exception:  # noqa: BLE001 - no extra points: the grid alone
        extra = []
    points += [d for d in extra if d not in points]
    allowance = max(budget.left(), _CHECK_MIN_SECONDS)
    end = time.monotonic() + allowance * budget.scale
    try:
        truths = run_bounded(_bound_truths, expr, var, points, end, timeout=allowance)
    except (AnalysisTimeout, SymgdpError, RuntimeError, MemoryError):
        return None, f"parameter check ran out of its {allowance:.3g} s"
    agreed = inadmissible = 0
    for d, (kind, truth) in zip(points, truths, strict=True):
        where = ", ".join(f"{k}={v}" for k, v in d.items())
        li = lim.xreplace(d)
        if kind == "inadmissible":
            inadmissible += 1
            continue
        if kind == "limit":
            ok = _same_value(li, truth)
            if not ok:
                return False, (f"parameter check failed at {where}: the limit with these "
                               f"values is {truth}, the formula gives {li}")
            agreed += 1
            continue
        left = (end - time.monotonic()) / budget.scale
        if left <= 0:
            return None, f"parameter check ran out of its {allowance:.3g} s"
        try:
            qs = run_bounded(_q_values, expr.xreplace(d), var,
                             timeout=min(_POINT_SECONDS, left))
        except Exception:  # noqa: BLE001 - an unresolvable point is inconclusive
            qs = None
        if qs is None:
            return None, f"parameter check inconclusive at {where} ({truth})"
        if not _agrees(qs, li):
            shown = ", ".join(mpmath.nstr(q, 8) for q in qs)
            return False, (f"parameter check failed at {where}: q(eps) far out is {shown}, "
                           f"the formula gives {li}")
        agreed += 1
    if not agreed:
        return None, "parameter check inconclusive: no admissible point"
    return True, (f"checked against the bound-value limit at {agreed} parameter points "
                  f"(every ordering, ties, extremes)"
                  f"{f'; {inadmissible} inadmissible' if inadmissible else ''}")


#: below this log delta the check reads q as 0 (q < 1e40^2 / 2e150 = 5e-71 at every check
#: point): mpmath stalls reaching such values (exp(-e^(1e6))), and Arb's enclosure of
#: exp(-X) for a huge X stops at an upper end near exp(-9.3e153), whatever X is
_LOG_BEYOND = -1e150


def _proved_beyond_float(ball: Any, x: float) -> bool:
    """Whether the ball enclosure of delta proves log delta(x) < :data:`_LOG_BEYOND`.

    Only the ball's upper end is used: a wide ball (Arb's radius control far out) is still
    an enclosure, so its upper end bounds delta from above."""
    from flint import arb, ctx

    if ball is None:
        return False
    try:
        with ctx.workprec(256):
            up = ball(arb(x)).upper()
            return bool(up > 0 and arb(up).log() < _LOG_BEYOND) or \
                bool(up.is_exact() and up.is_zero())
    except Exception:  # noqa: BLE001 - no ball value: the point evaluation decides
        return False


def _q_values(expr: sympy.Expr, var: sympy.Symbol) -> list[Any] | None:
    """q(eps) = eps^2/(-2 log delta) at the check points (mpmath); None if unresolvable.

    Where ball arithmetic proves delta(x) < exp(-1e150), q(x) < 5e-71 is read as 0
    (mpmath's exp of -e^(1e6) does not finish: the check of exp(-e^eps) used to spend its
    whole budget there and end inconclusive)."""
    from symgdp.evaluation.interval import lambdify_arb

    p = evaluator_of(expr, var)
    try:
        ball = lambdify_arb(expr, var)
    except Exception:  # noqa: BLE001 - no ball version: point evaluations only
        ball = None
    for points in _CHECK_POINTS:
        qs = []
        for x in points:
            if _proved_beyond_float(ball, x):
                qs.append(mpmath.mpf(0))
                continue
            try:
                ld = p.mp_log(x)
            except (SymgdpError, ArithmeticError, ValueError, TypeError, OverflowError):
                break
            if ld >= 0:
                qs.append(mpmath.inf)
            elif ld == -math.inf:
                qs.append(mpmath.mpf(0))
            else:
                qs.append(mpmath.mpf(x) ** 2 / (-2 * mpmath.mpf(ld)))
        else:
            return qs
    return None


def _agrees(qs: list[Any], lim: sympy.Expr) -> bool:
    near, mid, far = qs
    # The rules are exact; this check catches gross errors (a limit of 0 where q tends to
    # 1, a formula valid for one parameter ordering only), so the trend suffices for 0/oo.
    if lim is sympy.oo:
        return far == mpmath.inf or (far >= mid >= near and far > near)
    val = mpmath.mpf(sympy.N(lim, 30))
    if val == 0:
        return far == 0 or (far <= mid <= near and far < near)
    if far in (0, mpmath.inf):
        return False
    err_far, err_mid = abs(far - val), abs(mid - val)
    return err_far <= 1e-2 * val and err_far <= err_mid * (1 + 1e-9) + 1e-12 * val


def _check(expr: sympy.Expr, var: sympy.Symbol, lim: sympy.Expr,
           budget: _Budget) -> tuple[bool | None, str]:
    """(True agree / False disagree / None inconclusive, detail) for a symbolic limit:
    the parameter check when there are free parameters, else q(eps) far out."""
    if (expr.free_symbols | lim.free_symbols) - {var}:
        return _parameter_check(expr, var, lim, budget)
    try:
        qs = run_bounded(_q_values, expr, var,
                         timeout=max(min(_CHECK_SECONDS, budget.left()), 1e-3))
    except Exception:  # noqa: BLE001 - an unresolvable check is inconclusive
        qs = None
    if qs is None:
        return None, "numeric check inconclusive"
    if not _agrees(qs, lim):
        shown = ", ".join(mpmath.nstr(q, 8) for q in qs)
        return False, f"numeric check failed: q(eps) far out is {shown}, limit {lim}"
    return True, "checked numerically far out (eps up to 1e40)"


_numeric_check = _check  # the earlier name of the check


# -- the numeric route ---------------------------------------------------------------------
_PHI = 1.6180339887498949
# Below log delta = this, point values in mpmath are used instead of balls.
_ARB_FLOOR = -1e9
# The numeric fallback gets at least this many seconds even when the budget is spent.
_NUMERIC_MIN_SECONDS = 5.0
_NUM_SETS = (tuple(2.0 ** k for k in range(1, 7)), tuple(_PHI * 2.0 ** k for k in range(0, 6)))


def _arb_log_delta(profile: Any, log10x: float) -> Any:
    """log delta at eps = 10^log10x from ball arithmetic, resolved to 1e-40 relative.

    ``False`` when the expression has no ball version; ``None`` when unresolved.  Unlike a
    point evaluation, a ball shows a cancellation hidden inside Max/Min or a Piecewise
    (1 - (1 - e^{-eps})^3 reads as 0 at 60 digits, but its ball contains both signs)."""
    from flint import arb, ctx

    from symgdp.evaluation.interval import ArbUnsupported, profile_arb

    try:
        f = profile_arb(profile)
    except (ArbUnsupported, SymgdpError, TypeError, ValueError):
        return False
    for prec in (256, 1024, 4096, 16384):
        with ctx.workprec(prec):
            try:
                # the exponent exactly as the float the mpmath route reads (a 30-digit
                # rounding would move eps by 1e-30 and show as drift in q)
                x = arb(10) ** arb(float(log10x))
                v = f(x)
            except (ArbUnsupported, TypeError, ValueError, ZeroDivisionError):
                return False
            if v.is_exact() and v.is_zero():
                return mpmath.mpf("-inf")
            if v.rad() > 1:
                return False  # overflowing intermediates (e^eps far out): no information
            if v > 0:
                if v >= 1:
                    return mpmath.mpf(0)
                lv = v.log()
                mid, rad = mpmath.mpf(lv.mid().str(50, radius=False)), lv.rad()
                if mid != 0 and float(rad) <= 1e-40 * abs(float(mid)):
                    return mid
            elif v < 0:
                lo = abs(v.lower())
                if lo > 0 and float(arb(lo).log().mid()) < _ARB_FLOOR:
                    return False  # radius control lost far out: not evidence of a sign
                return None
            # Arb's balls lose radius control at astronomically small magnitudes (below
            # about exp(-1e9)); there mpmath's point values decide, as in the evaluator
            up = v.upper()
            if up > 0 and float(arb(up).log().mid()) < _ARB_FLOOR:
                return False
    return None


def _mp_log_delta(profile: Any, log10x: float) -> Any:
    """log delta at eps = 10^log10x to ~40 digits (ball arithmetic where available, else
    two mpmath precisions agreeing), or None."""
    via_arb = _arb_log_delta(profile, log10x)
    if via_arb is not False:
        return via_arb
    x = mpmath.mpf(10) ** mpmath.mpf(log10x)
    prev = None
    for dps in (60, 120, 240, 480):
        try:
            v = profile.mp(x, dps=dps)
        except (SymgdpError, ZeroDivisionError, ValueError, OverflowError, TypeError):
            return None
        with mpmath.workdps(dps):
            if v >= 1:
                cur = mpmath.mpf(0)
            elif v <= 0:
                # a cancelled value (0 or a negative rounding artefact) is not resolved at
                # this precision; only a provable zero counts as one
                if v == 0 and x < 1e300 and profile._evaluator().exact_zero(float(x)):
                    return mpmath.mpf("-inf")
                prev = None
                continue
            else:
                cur = mpmath.log(v)
        if prev is not None and (cur == prev or abs(cur - prev) <= 1e-40 * abs(cur)):
            return cur
        prev = cur
    return None


def _numeric_tail(profile: Any) -> tuple[sympy.Expr | None, str]:
    r"""Estimate the limit from q(eps) = eps^2/(-2 log delta) far out, in mpmath.

    Two interleaved sequences of points, :math:`\log_{10}\varepsilon = 2^k` and
    :math:`1.618\ldots\cdot 2^k` (up to :math:`10^{64}`), each resolved to ~40
    digits.  A limit is accepted only when, along *both* sequences, the successive changes
    of q shrink by a factor 100 or more per step (the drift of a ratio that approaches its
    limit like a power of :math:`1/\varepsilon`) to below 1e-12 relative, and the two
    agree; a ratio drifting like :math:`\log\varepsilon` or :math:`\log\log\varepsilon`,
    or oscillating, fails this and is "unknown".  Geometric decay to 0 / growth without
    bound (factor 2 or more per step along both sequences) give 0 / infinity.
    """
    seqs = []
    with mpmath.workdps(60):
        for pts in _NUM_SETS:
            qs = []
            for lx in pts:
                ld = _mp_log_delta(profile, lx)
                if ld is None:
                    return None, ("numeric tail inconclusive: log delta unresolved at "
                                  f"eps = 1e{lx:.4g}")
                x = mpmath.mpf(10) ** mpmath.mpf(lx)
                if ld >= 0:
                    qs.append(mpmath.inf)
                elif ld == mpmath.ninf:
                    qs.append(mpmath.mpf(0))
                else:
                    qs.append(x ** 2 / (-2 * ld))
            seqs.append(qs)
        shown = "; ".join(", ".join(mpmath.nstr(q, 6) for q in qs) for qs in seqs)
        where = f"q(eps) = eps^2/(-2 log delta) at eps = 10^(2^k), 10^(1.618*2^k): {shown}"
        lasts = [qs[-3:] for qs in seqs]
        if all(q == mpmath.inf for last in lasts for q in last):
            return sympy.oo, f"numeric: the profile is vacuous (>= 1) far out; {where}"
        if all(q == 0 for last in lasts for q in last):
            return sympy.S.Zero, f"numeric: the profile is 0 far out; {where}"
        if any(q in (0, mpmath.inf) for last in lasts for q in last):
            return None, f"numeric tail inconclusive; {where}"

        def converges(qs: list) -> bool:
            d = [abs(qs[i + 1] - qs[i]) for i in range(len(qs) - 4, len(qs) - 1)]
            tiny = mpmath.mpf("1e-38") * qs[-1]
            shrinking = all(d[i + 1] <= max(d[i] / 100, tiny) for i in range(len(d) - 1))
            return shrinking and d[-1] <= NUMERIC_RTOL * qs[-1]

        if all(converges(qs) for qs in seqs):
            a, b = seqs[0][-1], seqs[1][-1]
            if abs(a - b) <= NUMERIC_RTOL * a:
                val = sympy.Float(mpmath.nstr(a, 10), 10)
                return val, f"numeric: converged to {mpmath.nstr(a, 10)}; {where}"
        ratios = [[qs[i + 1] / qs[i] for i in range(len(qs) - 4, len(qs) - 1)] for qs in seqs]
        if all(r <= 0.5 for rs in ratios for r in rs) and all(
                qs[-1] <= 1e-6 * qs[0] for qs in seqs):
            return sympy.S.Zero, f"numeric: falls geometrically to 0; {where}"
        if all(r >= 2 for rs in ratios for r in rs):
            return sympy.oo, f"numeric: grows geometrically without bound; {where}"
    return None, f"numeric tail inconclusive (no convergence faster than the drift); {where}"


def _analyse(profile: Any, timeout: float | None) -> tuple[Any, LimitMethod, str, bool]:
    """(limit or None, method, detail, timed_out), cached on the (immutable) profile."""
    cache = getattr(profile, "_cache", None)
    key = ("tail", resolve_timeout(timeout))
    if cache is not None:
        # a conclusive answer does not depend on the budget it was found in
        for k in (("tail", None), key):
            if k in cache:
                return cache[k]
    result = _analyse_uncached(profile, timeout)
    if cache is not None:
        cache[("tail", None) if result[0] is not None else key] = result
    return result


def _analyse_uncached(profile: Any, timeout: float | None
                      ) -> tuple[Any, LimitMethod, str, bool]:
    budget = _Budget(timeout)
    var = profile.var
    expr = profile.bound_expr
    detail = ""
    tail_expr = None
    implicit = expr.has(_ImplicitMarker.cls())
    if not implicit:
        try:
            tail_expr = _eventual(expr, var, budget)
        except AnalysisTimeout:
            tail_expr = None
    if tail_expr is None and not implicit and not expr.has(sympy.Piecewise):
        # Max/Min whose order depends on the parameters: the asymptotic rules handle them
        tail_expr = expr
    if tail_expr is not None:
        if tail_expr.is_zero:
            return sympy.S.Zero, "symbolic", "the profile is eventually 0", False
        notes = []
        parametric = bool(tail_expr.free_symbols - {var})
        # 1. dominant-term asymptotics (exact rules); with parameters a candidate that the
        #    parameter check must confirm
        try:
            val, why = budget.call(_asymptotic_limit, tail_expr, var)
        except AnalysisTimeout:
            val, why = None, "the asymptotic analysis ran out of time"
        except Exception as exc:  # noqa: BLE001 - a failure of the rules is "no answer"
            val, why = None, f"the asymptotic analysis failed ({type(exc).__name__})"
        if val is not None:
            ok, check = _check(tail_expr, var, val, budget)
            if ok is True or (ok is None and not parametric):
                return val, "symbolic", f"asymptotics of the tail branch {tail_expr}: {why}; " \
                    f"{check}", False
            notes.append(f"asymptotic result {val} {'rejected' if ok is False else 'unconfirmed'}"
                         f": {check}")
        else:
            notes.append(why)
        # 2. the structure: sums/Max of parts decay like the slowest part, products add
        #    rates (a Max/Min over the parameters where their order is not known)
        if parametric:
            try:
                val, why = budget.call(_structural_limit, tail_expr, var)
            except AnalysisTimeout:
                val, why = None, "the structural analysis ran out of time"
            except Exception as exc:  # noqa: BLE001
                val, why = None, f"the structural analysis failed ({type(exc).__name__})"
            if val is not None:
                ok, check = _check(tail_expr, var, val, budget)
                if ok is True:
                    return val, "symbolic", f"structure of the tail branch {tail_expr}: " \
                        f"{why}; {check}", False
                notes.append(f"structural result {val} "
                             f"{'rejected' if ok is False else 'unconfirmed'}: {check}")
            else:
                notes.append(why)
        # the rules found no answer: is the tail branch negative?  (When they do find
        # one, log delta was expanded, so the branch is positive.)
        s = _eventual_sign(tail_expr, var, budget)
        if s is not None and s < 0:
            raise ProfileError(f"the profile is eventually negative: {tail_expr} "
                               f"(decided symbolically)")
        # 3. SymPy's limit, trusted only when a check agrees.  Not with parameters inside
        #    erf/erfc: there SymPy 1.14 spent 30-70 s of the budget and answered a**2 for
        #    (delta_a + delta_b)/2 (erf spelling) and for w delta_a + (1 - w) delta_b, both
        #    wrong at b > a; the check rejected them, so the time bought nothing
        if parametric and tail_expr.has(sympy.erf, sympy.erfc):
            notes.append("no rule applies, and SymPy's limit is not used with parameters "
                         "inside erf/erfc")
        else:
            try:
                ratio = var ** 2 / (-2 * sympy.expand_log(sympy.log(tail_expr), force=True))
            except Exception:  # noqa: BLE001
                ratio = None
            val = None if ratio is None else _limit_at_infinity(ratio, var, budget)
            if val is not None:
                if val is sympy.S.NegativeInfinity or val.is_negative:
                    val = sympy.oo  # log(delta) > 0 eventually: vacuous (read as 1)
                ok, check = _check(tail_expr, var, val, budget)
                if ok is True:
                    return val, "symbolic", \
                        f"SymPy limit of the tail branch {tail_expr}; {check}", False
                notes.append(f"SymPy's limit {val} not confirmed: {check}")
            else:
                notes.append(f"SymPy could not find the limit of the tail branch {tail_expr}")
        detail = "; ".join(notes)
    elif implicit:
        detail = "the profile is defined implicitly (numeric inversion), no symbolic limit"
    else:
        detail = "SymPy could not select the branch that holds as eps -> oo"
    if budget.timed_out:
        detail += f" within {budget.total:g} s"
    if profile.unbound_symbols:
        names = ", ".join(sorted(str(s) for s in profile.unbound_symbols))
        return None, "unknown", (f"{detail}; no numeric fallback because parameters are "
                                 f"unbound: {names} (the answer may depend on them)"), \
            budget.timed_out
    try:
        # bounded like every other step: a double exponential can stall mpmath far out
        val, ndetail = run_bounded(_numeric_tail, profile,
                                   timeout=max(budget.left(), _NUMERIC_MIN_SECONDS))
    except AnalysisTimeout:
        val, ndetail = None, "the numeric tail ran out of time"
        budget.timed_out = True
    except (SymgdpError, RuntimeError) as exc:
        val, ndetail = None, f"numeric tail failed: {exc}"
    if val is None:
        return None, "unknown", f"{detail}; {ndetail}", budget.timed_out
    return val, "numeric", f"{detail}; {ndetail}", budget.timed_out


class _ImplicitMarker:
    """Late import of the implicit-root function class (defined in implicit.py)."""

    @staticmethod
    def cls() -> Any:
        from symgdp.symbolic.implicit import LogDeltaRoot

        return LogDeltaRoot


def tail_limit(profile: Any, *, timeout: float | None = None) -> sympy.Expr:
    r"""The tail limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` (theory §5).

    Args:
        profile: a :class:`~symgdp.profile.Profile`.
        timeout: wall-clock budget in seconds for all SymPy calls of the analysis
            (default :data:`symgdp.symbolic.budget.DEFAULT_TIMEOUT`).

    Returns:
        A SymPy expression, ``sympy.oo`` when the profile is not GDP.  Unbound
        parameters stay symbolic.  A numeric estimate (see module docstring) is a
        ``sympy.Float``; use :func:`identify` to learn which method produced it.

    Raises:
        AnalysisTimeout: a SymPy step ran out of time and no numeric fallback settled it.
        ConvergenceError: neither SymPy nor the numeric fallback was conclusive.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> A, B, s = sympy.symbols("A B sigma", positive=True)
        >>> tail_limit(Profile(B * sympy.exp(-s**2 * eps**2 / A**2)))
        A**2/(2*sigma**2)
    """
    val, method, detail, timed_out = _analyse(profile, timeout)
    if val is None:
        cls = AnalysisTimeout if timed_out else ConvergenceError
        raise cls(f"the tail limit of {profile.bound_expr} is unknown: {detail}")
    return val


def identify(profile: Any, *, timeout: float | None = None) -> Identification:
    r"""The GDP verdict of ``profile`` from its tail limit (theory §5).

    Never raises for an inconclusive analysis: the result then has ``is_gdp=None`` and
    ``method="unknown"``.  An invalid profile still raises
    :class:`~symgdp.errors.ProfileError`.

    Example:
        >>> from symgdp import Profile, eps
        >>> import sympy
        >>> r = identify(Profile(sympy.exp(-eps**2)))
        >>> r.limit, r.is_gdp, round(r.mu_tail, 12), r.method
        (1/2, True, 0.707106781187, 'symbolic')
    """
    try:
        val, method, detail, timed_out = _analyse(profile, timeout)
    except ProfileError:
        raise
    except SymgdpError as exc:  # pragma: no cover - defensive: report, never guess
        return Identification(None, None, math.nan, "unknown", str(exc))
    if val is None:
        return Identification(None, None, math.nan, "unknown", detail, bool(timed_out))
    return identify_limit(val, method=method, detail=detail)


def identify_limit(val: sympy.Expr, *, method: LimitMethod = "symbolic", detail: str = ""
                   ) -> Identification:
    """The GDP verdict from a known tail limit ``val`` (e.g. a numeric source's)."""
    if val is sympy.oo:
        return Identification(val, False, math.inf, method, detail)
    is_gdp = True if val.is_finite else None
    mu_tail = math.nan
    if not val.free_symbols:
        try:
            mu_tail = math.sqrt(float(val))
        except (TypeError, ValueError):
            mu_tail = math.nan
    return Identification(val, is_gdp, mu_tail, method, detail)
