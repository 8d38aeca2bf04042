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
2. *Asymptotic rules* (:mod:`symgdp.asymptotics`): the leading term of
   :math:`\log\delta` from exact rules for sums (with cancellation resolved order by
   order, as in the Gaussian profile in every spelling: ``erfc``, ``erf``, :math:`\Phi`),
   products, powers, ``exp``, ``log``, ``erfc``/``erf``, ``Max``/``Min``.  With free
   parameters the result holds for every admissible value (e.g. :math:`1/(2\min(b, d))`
   for :math:`a e^{-b\varepsilon^2} + c e^{-d\varepsilon^2}`); a sign that depends on the
   parameters gives "unknown", never a formula valid for one ordering only.
3. *SymPy's limit* of :math:`\varepsilon^2 / (-2\,\mathrm{expand\_log}(\log\delta))`,
   time-bounded (:mod:`symgdp._bounded`), used only when the rules do not apply.
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

from ._bounded import resolve_timeout, run_bounded
from .errors import AnalysisTimeout, ConvergenceError, ProfileError, SymgdpError
from .evaluate import evaluator_of

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
    """

    limit: sympy.Expr | None
    is_gdp: bool | None
    mu_tail: float
    method: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.method not in ("symbolic", "numeric", "unknown"):
            raise ValueError(f"method must be 'symbolic', 'numeric' or 'unknown', "
                             f"got {self.method!r}")


class _Budget:
    """A wall-clock deadline shared by the bounded SymPy calls of one analysis."""

    def __init__(self, timeout: float | None) -> None:
        self.total = resolve_timeout(timeout)
        self.end = time.monotonic() + self.total
        self.timed_out = False

    def call(self, fn: Any, *args: Any) -> Any:
        left = self.end - time.monotonic()
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
        if any(a is None for a in args):
            return None
        best = args[0]
        for a in args[1:]:
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


def _asymptotic_limit(expr: sympy.Expr, var: sympy.Symbol) -> tuple[Any, str]:
    """(limit or None, detail) from the expansion of log delta (:mod:`symgdp.asymptotics`).

    Runs in a bounded child process; everything it decides holds for every admissible
    value of the free parameters (undecidable signs give ``None``).
    """
    from fractions import Fraction

    from .asymptotics import NotPositive, Unsupported, log_series, prepare

    two: tuple[Fraction, int] = (Fraction(2), 0)
    if expr.atoms(sympy.Float):
        # decimals as the rationals they spell (as SymPy's limit does): 1.5 -> 3/2, so a
        # limit like A^2/(2 sigma^2) comes out exact; the numeric check uses the Floats
        expr = sympy.nsimplify(expr, rational=True)
    try:
        series = log_series(prepare(expr, var), var)
    except NotPositive as exc:
        return None, f"the tail branch looks eventually negative ({exc})"
    except Unsupported as exc:
        return None, f"no asymptotic rule: {exc}"
    except (RecursionError, TypeError, ValueError, ArithmeticError) as exc:
        return None, f"no asymptotic rule: {type(exc).__name__}"
    lead = series.leading()
    if lead is None:
        if series.floor < two:
            return sympy.oo, "log delta = o(eps^2)"
        return None, "the expansion of log delta has no leading term"
    key, coef = lead
    shown = f"log delta ~ ({coef}) * eps^{key[0]}" + (f" log(eps)^{key[1]}" if key[1] else "")
    from .asymptotics import _sign

    if key < two:
        return sympy.oo, f"{shown}: slower than eps^2 (or vacuous)"
    sg = _sign(coef)
    if sg is None:
        return None, f"{shown}: the sign of the leading coefficient depends on the parameters"
    if sg > 0:
        return sympy.oo, f"{shown}: the profile grows (vacuous)"
    if key > two:
        return sympy.S.Zero, f"{shown}: faster than eps^2"
    lim = 1 / (2 * _negated(coef))
    return lim, shown


# -- numeric cross-check of a symbolic answer -------------------------------------------------
_CHECK_POINTS = ((1e6, 1e16, 1e40), (1e4, 1e8, 1e16), (1e3, 1e4, 1e5))
_CHECK_DRAWS = 3
_CHECK_SECONDS = 5.0  # per parameter draw: the check must not eat the whole budget


def _draws(symbols: set, seed_text: str) -> list[dict]:
    """Random admissible parameter values (log-uniform in [1/4, 4]; integers 1..5)."""
    import random

    if not symbols:
        return [{}]
    rng = random.Random(seed_text)
    out = []
    for _ in range(_CHECK_DRAWS):
        d = {}
        for s in sorted(symbols, key=str):
            if s.is_integer:
                d[s] = sympy.Integer(rng.randint(1, 5))
            else:
                d[s] = sympy.Rational(round(4 ** rng.uniform(-1, 1), 6)).limit_denominator(10**6)
        out.append(d)
    return out


def _q_values(expr: sympy.Expr, var: sympy.Symbol) -> list[Any] | None:
    """q(eps) = eps^2/(-2 log delta) at the check points (mpmath); None if unresolvable."""
    p = evaluator_of(expr, var)
    for points in _CHECK_POINTS:
        qs = []
        for x in points:
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


def _numeric_check(expr: sympy.Expr, var: sympy.Symbol, lim: sympy.Expr,
                   budget: _Budget) -> tuple[bool | None, str]:
    """(True agree / False disagree / None inconclusive, detail) at random parameters."""
    params = (expr.free_symbols | lim.free_symbols) - {var}
    results = []
    for d in _draws(params, str(expr)):
        e, li = expr.xreplace(d), lim.xreplace(d)
        if budget.end - time.monotonic() <= 0:
            results.append(None)
            continue
        try:
            qs = run_bounded(_q_values, e, var,
                             timeout=max(min(_CHECK_SECONDS, budget.end - time.monotonic()),
                                         1e-3))
        except (AnalysisTimeout, SymgdpError, RuntimeError):
            qs = None
        if qs is None:
            results.append(None)
            continue
        ok = _agrees(qs, li)
        where = ", ".join(f"{k}={v}" for k, v in d.items())
        if not ok:
            shown = ", ".join(mpmath.nstr(q, 8) for q in qs)
            return False, (f"numeric check failed{' at ' + where if where else ''}: "
                           f"q(eps) far out is {shown}, limit {li}")
        results.append(True)
    if all(r is True for r in results):
        n = len(results)
        return True, (f"checked numerically far out (eps up to 1e40)"
                      f"{f' for {n} random parameter values' if params else ''}")
    return None, "numeric check inconclusive"


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

    from .interval import ArbUnsupported, profile_arb

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
                    return None, f"numeric tail inconclusive: log delta unresolved at eps = 1e{lx:.4g}"
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


def _analyse(profile: Any, timeout: float | None) -> tuple[Any, str, str, bool]:
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


def _analyse_uncached(profile: Any, timeout: float | None) -> tuple[Any, str, str, bool]:
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
        s = _eventual_sign(tail_expr, var, budget)
        if s is not None and s < 0:
            raise ProfileError(f"the profile is eventually negative: {tail_expr} "
                               f"(decided symbolically)")
        notes = []
        # 1. dominant-term asymptotics (exact rules, valid for every parameter value)
        try:
            val, why = budget.call(_asymptotic_limit, tail_expr, var)
        except AnalysisTimeout:
            val, why = None, "the asymptotic analysis ran out of time"
        except Exception as exc:  # noqa: BLE001 - a failure of the rules is "no answer"
            val, why = None, f"the asymptotic analysis failed ({type(exc).__name__})"
        if val is not None:
            ok, check = _numeric_check(tail_expr, var, val, budget)
            if ok is not False:
                return val, "symbolic", f"asymptotics of the tail branch {tail_expr}: {why}; " \
                    f"{check}", False
            notes.append(f"asymptotic result {val} rejected: {check}")
        else:
            notes.append(why)
        # 2. SymPy's limit, trusted only when a numeric check agrees
        try:
            ratio = var ** 2 / (-2 * sympy.expand_log(sympy.log(tail_expr), force=True))
        except Exception:  # noqa: BLE001
            ratio = None
        val = None if ratio is None else _limit_at_infinity(ratio, var, budget)
        if val is not None:
            if val is sympy.S.NegativeInfinity or val.is_negative:
                val = sympy.oo  # log(delta) > 0 eventually: vacuous (read as 1)
            ok, check = _numeric_check(tail_expr, var, val, budget)
            if ok is True:
                return val, "symbolic", f"SymPy limit of the tail branch {tail_expr}; {check}", \
                    False
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
                                   timeout=max(budget.end - time.monotonic(), _NUMERIC_MIN_SECONDS))
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
        from .implicit import LogDeltaRoot

        return LogDeltaRoot


def tail_limit(profile: Any, *, timeout: float | None = None) -> sympy.Expr:
    r"""The tail limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` (theory §5).

    Args:
        profile: a :class:`~symgdp.profile.Profile`.
        timeout: wall-clock budget in seconds for all SymPy calls of the analysis
            (default :data:`symgdp._bounded.DEFAULT_TIMEOUT`).

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
        val, method, detail, _ = _analyse(profile, timeout)
    except ProfileError:
        raise
    except SymgdpError as exc:  # pragma: no cover - defensive: report, never guess
        return Identification(None, None, math.nan, "unknown", str(exc))
    if val is None:
        return Identification(None, None, math.nan, "unknown", detail)
    return identify_limit(val, method=method, detail=detail)


def identify_limit(val: sympy.Expr, *, method: str = "symbolic", detail: str = ""
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
