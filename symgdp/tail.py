r"""Identification: the tail limit of a privacy profile and the GDP verdict.

Notation and result (shared/math.md §5; "Identification, Amplification and Measurement:
A bridge to Gaussian Differential Privacy", NeurIPS 2022, the identification theorem):
for a privacy profile :math:`\delta_A`,

.. math::

    \lim_{\varepsilon\to\infty} G_A(\varepsilon)^2
        = \lim_{\varepsilon\to\infty} \frac{\varepsilon^2}{-2\log\delta_A(\varepsilon)},

and :math:`A` is GDP (for some finite :math:`\mu`) iff this limit is finite; its square
root :math:`\mu_{\text{tail}}` is a lower bound for the tightest :math:`\mu`.

How the limit is found, in order:

1. *Branch selection.*  SymPy's ``limit`` cannot handle ``Max``, ``Min`` or ``Piecewise``,
   so the expression is first reduced to the branch that holds as
   :math:`\varepsilon\to\infty` (each comparison decided by the eventual sign of a
   difference: polynomial leading coefficients, else a time-bounded ``limit``).
   A profile that is eventually 0 has limit 0 (pure DP, Laplace).
2. *Symbolic limit* of :math:`\varepsilon^2 / (-2\,\mathrm{expand\_log}(\log\delta))`,
   time-bounded (:mod:`symgdp._bounded`); unbound parameters stay symbolic, so
   :math:`B e^{-\sigma^2\varepsilon^2/A^2}` gives :math:`A^2/(2\sigma^2)`.
3. *Numeric fallback* (all parameters bound): the ratio
   :math:`q(\varepsilon) = \varepsilon^2/(-2\log\delta(\varepsilon))` in 50-digit mpmath at
   :math:`\varepsilon = 10^2, 10^4, \dots, 10^{12}`.  It is accepted only when the sequence
   visibly converges (two successive relative changes below :data:`NUMERIC_RTOL`), falls
   geometrically to 0, or grows geometrically; ``method="numeric"`` says so, and a
   converged value is rounded to 10 significant digits.  A limit that
   is approached slower than this (e.g. :math:`e^{-\varepsilon^{1.99}}`) is reported as
   unknown rather than guessed.

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
from .errors import AnalysisTimeout, ConvergenceError, PrecisionError, ProfileError, SymgdpError

__all__ = ["Identification", "identify", "tail_limit", "eventual_branch", "NUMERIC_RTOL"]

#: Relative change between successive numeric tail ratios accepted as convergence.
NUMERIC_RTOL = 1e-6
_NUMERIC_POINTS = tuple(10.0 ** k for k in range(2, 13, 2))
_NUMERIC_DPS = 50


@dataclass(frozen=True, slots=True)
class Identification:
    r"""The GDP verdict of a profile from its tail (shared/math.md §5).

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


def _numeric_tail(profile: Any) -> tuple[sympy.Expr | None, str]:
    """Estimate the limit from q(eps) at eps = 1e2 ... 1e12 (mpmath, precision raised until
    each log delta is resolved; an unresolvable value makes the estimate inconclusive)."""
    qs: list[mpmath.mpf] = []
    with mpmath.workdps(_NUMERIC_DPS):
        for x in _NUMERIC_POINTS:
            # log delta with the precision raised until it is resolved: a value that
            # cancels to 0 at 50 digits (e.g. 1 - (1 - e^{-eps})^3) must not read as 0
            try:
                ld = profile._mp_log(x)
            except PrecisionError as exc:
                return None, f"numeric tail inconclusive: {exc}"
            if ld >= 0:
                qs.append(mpmath.inf)
            elif ld == -math.inf:
                qs.append(mpmath.mpf(0))
            else:
                qs.append(mpmath.mpf(x) ** 2 / (-2 * mpmath.mpf(ld)))
    shown = ", ".join(mpmath.nstr(q, 8) for q in qs)
    where = f"q(eps) = eps^2/(-2 log delta) at eps = 1e2..1e12: {shown}"
    last = qs[-3:]
    if all(q == mpmath.inf for q in last):
        return sympy.oo, f"numeric: the profile is vacuous (>= 1) far out; {where}"
    if all(q == 0 for q in last):
        return sympy.S.Zero, f"numeric: the profile is 0 far out; {where}"
    if any(q == mpmath.inf or q == 0 for q in last):
        return None, f"numeric tail inconclusive; {where}"
    r1 = abs(last[1] - last[0]) / last[1]
    r2 = abs(last[2] - last[1]) / last[2]
    # changes must shrink, unless both are at the rounding level of log delta (resolved
    # to 1e-13 relative by Profile._mp_log)
    if r1 <= NUMERIC_RTOL and r2 <= NUMERIC_RTOL and r2 <= max(r1 * 1.0001, 1e-12):
        # q(eps) typically converges like 1/eps (GDP profiles: q = mu^2 (1 + mu^2/eps)),
        # so at eps = 1e12 about 10 significant digits are right; report no more.
        val = sympy.Float(mpmath.nstr(last[2], 10), 10)
        return val, f"numeric: converged to {mpmath.nstr(last[2], 10)}; {where}"
    ratios = [qs[i + 1] / qs[i] for i in range(len(qs) - 4, len(qs) - 1)]
    if all(r <= 0.5 for r in ratios) and last[2] <= 1e-6 * qs[0]:
        return sympy.S.Zero, f"numeric: falls geometrically to 0; {where}"
    if all(r >= 1.5 for r in ratios):
        return sympy.oo, f"numeric: grows geometrically without bound; {where}"
    return None, f"numeric tail inconclusive; {where}"


def _analyse(profile: Any, timeout: float | None) -> tuple[Any, str, str, bool]:
    """(limit or None, method, detail, timed_out), cached on the (immutable) profile."""
    cache = getattr(profile, "_cache", None)
    key = ("tail", resolve_timeout(timeout))
    if cache is not None and key in cache:
        return cache[key]
    result = _analyse_uncached(profile, timeout)
    if cache is not None:
        cache[key] = result
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
    if tail_expr is not None:
        if tail_expr.is_zero:
            return sympy.S.Zero, "symbolic", "the profile is eventually 0", False
        s = _eventual_sign(tail_expr, var, budget)
        if s is not None and s < 0:
            raise ProfileError(f"the profile is eventually negative: {tail_expr} "
                               f"(decided symbolically)")
        try:
            ratio = var ** 2 / (-2 * sympy.expand_log(sympy.log(tail_expr), force=True))
        except Exception:  # noqa: BLE001
            ratio = None
        val = None if ratio is None else _limit_at_infinity(ratio, var, budget)
        if val is not None:
            if val is sympy.S.NegativeInfinity or val.is_negative:
                # log(delta) > 0 eventually: the tail is vacuous (delta >= 1 read as 1)
                return sympy.oo, "symbolic", "the profile is eventually >= 1", False
            return val, "symbolic", f"SymPy limit of the tail branch {tail_expr}", False
        detail = f"SymPy could not find the limit of the tail branch {tail_expr}"
    elif implicit:
        detail = "the profile is defined implicitly (numeric inversion), no symbolic limit"
    else:
        detail = "SymPy could not select the branch that holds as eps -> oo"
    if budget.timed_out:
        detail += f" within {budget.total:g} s"
    if profile.unbound_symbols:
        names = ", ".join(sorted(str(s) for s in profile.unbound_symbols))
        return None, "unknown", (f"{detail}; no numeric fallback because parameters are "
                                 f"unbound: {names}"), budget.timed_out
    val, ndetail = _numeric_tail(profile)
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
    r"""The tail limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` (math §5).

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
    r"""The GDP verdict of ``profile`` from its tail limit (math §5).

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
