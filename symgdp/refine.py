r"""The exact partial order on :math:`(\varepsilon,\delta)`-DP, refinement and subsampling.

Notation (theory §2, §7; the GDPT paper, "Identification, Amplification and
Measurement: A bridge to Gaussian Differential Privacy", NeurIPS 2022, the partial-order
lemma): :math:`(\varepsilon_0, \delta_0)`-DP implies :math:`(\varepsilon, \delta)`-DP iff

.. math::

    \delta \ge \delta_0 + (1-\delta_0)\,\frac{(e^{\varepsilon_0} - e^{\varepsilon})_+}
        {1 + e^{\varepsilon_0}},

so a naive profile :math:`\tilde\delta` refines to
:math:`\delta_{\text{ref}}(\varepsilon) = \inf_{\varepsilon_0 \ge \varepsilon}
g(\varepsilon, \varepsilon_0)`.  Writing
:math:`R(\varepsilon_0) = (1 - \tilde\delta(\varepsilon_0))/(1 + e^{\varepsilon_0})`
one checks :math:`g(\varepsilon, \varepsilon_0) = 1 - (1 + e^{\varepsilon})
R(\varepsilon_0)`, hence

.. math::

    \delta_{\text{ref}}(\varepsilon) = 1 - (1 + e^{\varepsilon})
        \sup_{\varepsilon_0 \ge \varepsilon} R(\varepsilon_0),

and :math:`R' = -[\tilde\delta' + e^{\varepsilon_0}(1 - \tilde\delta + \tilde\delta')]
/(1+e^{\varepsilon_0})^2`: the stationarity bracket of theory §2 is :math:`-R'` up to a
positive factor.  The refinement is therefore the running maximum of :math:`R` from the
right.  Where :math:`R` is at its running maximum the refined profile is
:math:`\tilde\delta`; on each interval :math:`[a_k, c_k)` left of a local maximum
:math:`c_k` of :math:`R` that dominates everything to its right, it is the flat piece
:math:`\tilde\delta(c_k) + (1 - \tilde\delta(c_k))(e^{c_k} - e^{\varepsilon})
/(1 + e^{c_k})`.  One sign change of the bracket from − to + gives the familiar single
Piecewise; several, or none, are handled by the same sweep.

How :func:`refine` finds the pieces (the sign pattern is checked, never assumed):

0. First it tries to prove that there is nothing to find: that :math:`-(\log R)' =
   \tilde\delta'/(1 - \tilde\delta) + 1/(1 + e^{-\varepsilon})` is (up to
   :math:`10^{-13}`) non-negative on :math:`[0, 700]` and that :math:`\tilde\delta` has
   no jump, in ball arithmetic from the SymPy derivative.  Tight
   profiles (:math:`\delta_\mu`, Laplace, pure DP) then come back unchanged, with
   ``meta["tight"]`` saying so; otherwise the search below decides.
1. :math:`R` on a fine grid (step 0.01 on :math:`[0, 60]`, then geometric to 700).  Since
   :math:`\tilde\delta` is non-increasing, :math:`R \le (1 - \tilde\delta(b))/(1 + e^a)`
   on any cell :math:`[a, b]`; every cell whose bound exceeds the running maximum to its
   right is bisected (all at once, in float64) until the bound settles, which finds
   maxima narrower than the grid and suprema at jumps.  The running maximum from the
   right then locates every flat interval.
2. Each :math:`c_k` is located in mpmath (``dps`` digits) by the same bound-driven
   bisection (where there is a derivative, first only to :math:`10^{-14}` relative in
   :math:`R`), polished by regula falsi on the sign of the bracket where there is a
   derivative; a supremum reached only from the right of a jump gives a :math:`c_k` just
   right of it (rounded so that it stays there).  A flat interval whose gain over
   :math:`\tilde\delta` is below :math:`10^{-20}` relative is dropped (already tight, e.g.
   pure DP, whose :math:`R` is constant).
3. Only when a flat piece exists, SymPy's ``solveset`` of the bracket (time-bounded)
   may supply a closed form for :math:`c_k`.

On each flat piece the result is :math:`\min\{\tilde\delta, g(\cdot, c_k)\}`, so it is
never above the naive profile by construction, and never below the infimum, since every
value is :math:`g(\varepsilon, \varepsilon_0)` for a real :math:`\varepsilon_0 \ge
\varepsilon`.  Gains below :math:`10^{-9}` relative on the float grid are not searched for.

Validation and refinement at many parameter values of one expression (a sweep, a
calibration) share their symbolic work: see ``_Family`` below and the planning page of
the documentation.

Utility refinement (:func:`refine_calibration`) minimises :math:`f(\varepsilon_0,
\delta_0)` over the calibration points that imply the target (theory §2); Poisson
subsampling (:func:`subsample`) is the transform of theory §7.
"""

from __future__ import annotations

import functools
import signal
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy

from ._bounded import resolve_timeout, run_bounded
from .errors import AnalysisTimeout, DomainError, PrecisionError, ProfileError, SymgdpError
from .profile import LogDeltaRoot, Profile, sympify_value
from .symbols import delta as _DELTA
from .symbols import eps as _EPS
from .symbols import sigma as _SIGMA

__all__ = ["Calibration", "check_profile", "implication_delta", "refine",
           "refine_calibration", "subsample"]

# Float grid on which R is scanned.
_GRID = np.unique(np.concatenate([np.arange(0.0, 60.0, 0.01), np.geomspace(60.0, 700.0, 400)]))
# Relative gain of the running maximum over R below which no flat piece is searched for.
_FLAT_RTOL = 1e-9
# Budget (seconds) for rewriting Max/Min as Piecewise before the derivative is taken.
_REWRITE_SECONDS = 2.0
# Float64 error of R on the grid, in ulps of 1/(1 + e^x) (both R and its running maximum).
_R_ULPS = 32.0
# Bisection levels and most cells kept per level in the search for maxima of R
# narrower than the grid.
_PEAK_LEVELS = 48
_PEAK_CELLS = 4096
# A maximum inside a grid cell that exceeds everything to its right by less than this
# (relative) is not searched for: the refinement it would allow gains less than that.
_PEAK_RTOL = 1e-7
# Relative tolerance at which the search for the top of R first stops when the profile
# has a derivative, to polish the best point into the bracket's root: a higher top
# elsewhere in the cell would gain less than this, far below _FLAT_RTOL, under which the
# scan does not look for a flat piece at all.
_SUP_STAGE_RTOL = "1e-14"
# Relative gain (in mpmath) below which a flat piece is dropped as "already tight".
_TIGHT_RTOL = mpmath.mpf("1e-20")
# The no-crossing proof (the fast path for tight profiles): -(log R)' >= -_PROOF_SLOPE on
# [0, _GRID[-1]] and every jump at a Piecewise switch below _PROOF_JUMP * (1 - delta),
# proved in ball arithmetic at _PROOF_PREC bits with at most _PROOF_BUDGET evaluations,
# starting from the cells of _PROOF_START.  Together they bound what a refinement could
# gain by 700 * 1e-13 + 1e-11 per switch, below _FLAT_RTOL (relative), the level below
# which the scan does not search for a flat piece either.
_PROOF_PREC = 128
_PROOF_SLOPE = 1e-13
_PROOF_JUMP = 1e-11
_PROOF_BUDGET = 3000
_PROOF_START = np.unique(np.concatenate([np.arange(0.0, 60.0, 2.0),
                                        np.geomspace(60.0, _GRID[-1], 8)]))
# Grid for the numeric validity check of a profile.
_CHECK_GRID = np.unique(np.concatenate([np.linspace(0.0, 100.0, 20001),
                                        np.geomspace(100.0, 1e4, 2000)]))
# At most this many grid points are re-checked in log space where delta < 1e-12.
_LOG_CHECK_POINTS = 500
# Time budget of that log-space re-check (high-precision values can be slow to resolve).
_LOG_CHECK_SECONDS = 5.0
# At most this many of the most negative float values are re-checked in high precision.
_NEG_RECHECK = 8


def implication_delta(eps0: Any, delta0: Any, eps: Any) -> sympy.Expr:
    r"""The smallest :math:`\delta` with :math:`(\varepsilon_0,\delta_0) \Rightarrow
    (\varepsilon,\delta)` (theory §2), as a SymPy expression.

    Example:
        >>> implication_delta(1, 0, 0)
        (-1 + E)/(1 + E)
    """
    e0, d0, e = (sympy.sympify(v) for v in (eps0, delta0, eps))
    return d0 + (1 - d0) * sympy.Max(sympy.exp(e0) - sympy.exp(e), 0) / (1 + sympy.exp(e0))


# -- validation ------------------------------------------------------------------------------
def _symbolic_verdict(expr: sympy.Expr, var: sympy.Symbol) -> str | None:
    if expr.is_extended_real is False:
        return "complex"
    if expr.is_negative:
        return "negative"
    if (expr - 1).is_nonnegative:
        return "at least 1 for every eps (no guarantee at all)"
    if var in expr.free_symbols and sympy.diff(expr, var).is_positive:
        return "increasing"
    return None


def check_profile(profile: Profile, *, timeout: float | None = None) -> None:
    """Raise :class:`ProfileError` when ``profile`` is not a privacy profile.

    See :meth:`symgdp.profile.Profile.validate`.
    """
    expr, var = profile.bound_expr, profile.var
    why = _undefined_piece(expr, var)
    if why:
        raise ProfileError(f"the profile {expr} {why}")
    found = _family_point(profile)
    if found is not None and found[0].cannot_reject(found[1]):
        verdict = None  # proved at these values without a SymPy call
    else:
        try:
            verdict = run_bounded(_symbolic_verdict, expr, var, timeout=timeout)
        except Exception:  # noqa: BLE001 - undecided symbolically; the grid decides
            verdict = None
    if verdict:
        raise ProfileError(f"the profile {expr} is {verdict} (decided symbolically)")
    if profile.unbound_symbols:
        return
    how = "(found on a dense numeric grid)"
    x = _CHECK_GRID
    try:
        y = profile._eval_numpy(x, "numpy")
    except ProfileError as exc:
        raise ProfileError(f"{exc} {how}") from None
    try:
        y = _float_values(profile, x, y)
    except ProfileError as exc:
        raise ProfileError(f"{exc} {how}") from None
    nan = np.isnan(y) & (x > 0)
    if np.any(nan):
        raise ProfileError(f"the profile {expr} is undefined (NaN) at "
                           f"eps={float(x[nan][0])!r} {how}")
    neg = np.flatnonzero(y < -1e-14)
    if neg.size:
        # float64 cancellation (the erf form of the Gaussian profile) can show a negative
        # value where the true one is positive: only a value confirmed in ball arithmetic
        # or at rising mpmath precision rejects the profile.  The most negative points and
        # the first one are re-checked; unconfirmed ones are read as float noise.
        picks = sorted(set(neg[np.argsort(y[neg])[:_NEG_RECHECK]].tolist()) | {int(neg[0])})
        for i in picks:
            v = _confirmed_negative(profile, float(x[i]))
            if v is not None:
                raise ProfileError(f"the profile {expr} is negative at eps={float(x[i])!r}: "
                                   f"{v} (found on a dense numeric grid, confirmed in high "
                                   f"precision)")
        y = np.where(y < 0, 0.0, y)
    c = np.where(np.isnan(y), 1.0, np.clip(y, 0.0, 1.0))
    if np.all(c >= 1.0) and not _below_one_far_out(profile, timeout):
        raise ProfileError(f"the profile {expr} is at least 1 for every eps in [0, "
                           f"{x[-1]:g}], at eps = 1e8, 1e16, ..., 1e256 in mpmath and in "
                           f"its limit as far as SymPy can tell (no guarantee) {how}")
    up = c[1:] > c[:-1] * (1 + 1e-9) + 1e-12
    if np.any(up):
        # as for negative values: a rise seen in float must be confirmed in high precision
        ups = np.flatnonzero(up)
        picks = sorted(set(ups[np.argsort(c[ups] - c[ups + 1])[:_NEG_RECHECK]].tolist())
                       | {int(ups[0])})
        up = np.zeros_like(up)
        for i in picks:
            if _confirmed_rise(profile, float(x[i]), float(x[i + 1])):
                up[i] = True
                break
    if np.any(up):
        i = int(np.argmax(up))
        raise ProfileError(f"the profile {expr} is increasing between eps={float(x[i])!r} "
                           f"and eps={float(x[i + 1])!r} (from {float(c[i])!r} to "
                           f"{float(c[i + 1])!r}) {how}")
    # The absolute slack above hides a rise among tiny values (1e-22 -> 1e-13, say):
    # re-check there in log space, on a subsample of the grid.
    tiny = np.flatnonzero(c < 1e-12)
    if tiny.size > 1:
        xs = x[tiny[:: max(1, tiny.size // _LOG_CHECK_POINTS)]]
        try:
            ld = _numeric_bounded(profile.log_delta, xs, seconds=_LOG_CHECK_SECONDS)
        except (SymgdpError, RuntimeError):
            return  # the value-space verdict stands; measurement re-checks what it uses
        fin = np.isfinite(ld[:-1])
        prev = np.where(fin, ld[:-1], 0.0)
        rise = fin & (ld[1:] > prev + 1e-9 * np.abs(prev) + 1e-12)
        if np.any(rise):
            i = int(np.argmax(rise))
            raise ProfileError(
                f"the profile {expr} is increasing between eps={float(xs[i])!r} and "
                f"eps={float(xs[i + 1])!r} (log delta from {float(ld[i])!r} to "
                f"{float(ld[i + 1])!r}) {how}")


def _numeric_bounded(fn: Any, *args: Any, seconds: float) -> Any:
    """``fn(*args)``, numeric work, under a wall-clock budget (AnalysisTimeout beyond it).

    In the main thread the budget is an interval timer in this process (the work's
    compiled functions stay with the profile); in a worker thread (Dask's) it is a watchdog
    that raises in that thread, also in-process (symgdp._bounded.run_in_thread: a fork
    there cost more than the sweep point itself); otherwise a bounded child process.
    """
    import threading

    from ._bounded import run_in_thread
    from .parsing import _OutOfTime, _with_budget

    if not (hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0):
        return run_in_thread(fn, *args, timeout=seconds)
    try:
        return _with_budget(lambda: fn(*args), seconds)
    except _OutOfTime:
        # an interrupted assumption query may have left "unknown" in SymPy's cache
        sympy.core.cache.clear_cache()
        raise AnalysisTimeout(f"{getattr(fn, '__name__', fn)!r} exceeded its time budget "
                              f"of {seconds:g} s") from None


def _confirmed_below_zero(profile: Profile, ball: Any, point: Any) -> str | None:
    """A quantity built from the profile, as a string when it is provably (ball
    arithmetic: ``ball(f)`` with ``f`` the profile's ball function) or stably (two mpmath
    precisions agreeing: ``point(dps)``) negative, else ``None``."""
    from flint import ctx

    from .interval import ArbUnsupported, profile_arb

    try:
        f = profile_arb(profile)
    except (ArbUnsupported, ProfileError, TypeError, ValueError):
        f = None
    if f is not None:
        for prec in (128, 512, 2048):
            try:
                with ctx.workprec(prec):
                    v = ball(f)
                    if v < 0:
                        return v.str(8)
                    if v >= 0:
                        return None
            except (ArbUnsupported, TypeError, ValueError, ZeroDivisionError):
                break
    prev = None
    for dps in (30, 120, 480):
        try:
            v = point(dps)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        if v >= 0:
            return None
        if prev is not None and abs(v - prev) <= abs(v) * mpmath.mpf("1e-10"):
            return mpmath.nstr(v, 8)
        prev = v
    return None


def _confirmed_negative(profile: Profile, e: float) -> str | None:
    """The value at ``e`` as a string when it is confirmed negative, else ``None``."""
    from flint import arb

    return _confirmed_below_zero(profile, lambda f: f(arb(e)),
                                 lambda dps: profile.mp(e, dps=dps))


def _confirmed_rise(profile: Profile, a: float, b: float) -> bool:
    """Whether min(delta, 1) is confirmed to rise from ``a`` to ``b``."""
    from flint import arb

    def point(dps: int) -> Any:
        va, vb = (min(profile.mp(t, dps=dps), mpmath.mpf(1)) for t in (a, b))
        return va - vb

    return _confirmed_below_zero(profile, lambda f: f(arb(a)) - f(arb(b)), point) is not None


def _undefined_piece(expr: sympy.Expr, var: sympy.Symbol) -> str | None:
    """Why ``expr`` is undefined somewhere by its structure (zoo/nan, a Piecewise that
    covers only some eps), or ``None``."""
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, sympy.S.NegativeInfinity):
        return "contains an undefined or infinite value (zoo, nan or oo)"
    for pw in expr.atoms(sympy.Piecewise):
        if pw.args[-1].cond is sympy.true:
            continue
        conds = sympy.Or(*(c for _, c in pw.args))
        try:
            covered = run_bounded(sympy.simplify, conds, timeout=5)
        except Exception:  # noqa: BLE001 - undecided counts as not covered
            covered = None
        if covered is not sympy.true:
            return (f"has a Piecewise without a default piece (expr, True): it is undefined "
                    f"where {sympy.Not(conds)}")
    return None


def _below_one_far_out(profile: Profile, timeout: float | None) -> bool:
    """Whether a profile that is vacuous on the grid drops below 1 further out.

    ``K/log(1 + eps)^p`` can stay above 1 up to eps = e^143 and still be a profile.
    """
    for k in (8, 16, 32, 64, 128, 256):
        try:
            if profile.mp(10.0**k, dps=30) < 1:
                return True
        except (ProfileError, ZeroDivisionError, ValueError, OverflowError):
            continue
    try:
        lim = run_bounded(sympy.limit, profile.bound_expr, profile.var, sympy.oo,
                          timeout=timeout)
    except Exception:  # noqa: BLE001 - undecided: the grid verdict stands
        return False
    return bool(getattr(lim, "is_number", False) and lim.is_real and lim < 1)


def _float_values(profile: Profile, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Replace float64 artefacts (inf * 0 = NaN, overflow) by 30-digit mpmath values."""
    redo = ~np.isfinite(y) & (x > 0)
    if np.any(redo):
        y = y.copy()
        for i in np.flatnonzero(redo):
            try:
                y[i] = float(profile.mp(float(x[i]), dps=30))
            except (ZeroDivisionError, ValueError, OverflowError) as exc:
                if isinstance(exc, ProfileError):  # complex: a real property, not an artefact
                    raise
                y[i] = np.nan
    return y


# -- refinement ------------------------------------------------------------------------------
def _rewrite_piecewise(expr: sympy.Expr) -> sympy.Expr:
    return sympy.piecewise_fold(expr.rewrite(sympy.Piecewise))


def _piecewise_form(expr: sympy.Expr, timeout: float | None) -> sympy.Expr:
    """Max/Min/Abs/Heaviside as Piecewise (for a usable derivative), under a short budget:
    SymPy's rewrite can take minutes (nested Min/Max of exponentials); without it the
    mpmath evaluation still works and only the derivative search falls back."""
    if not expr.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
        return sympy.piecewise_fold(expr) if expr.has(sympy.Piecewise) else expr
    try:
        return run_bounded(_rewrite_piecewise, expr,
                           timeout=min(resolve_timeout(timeout), _REWRITE_SECONDS))
    except (AnalysisTimeout, Exception):  # noqa: BLE001 - keep the expression as it is
        return expr


def _closed_form_roots(bracket: sympy.Expr, var: sympy.Symbol) -> Any:
    sol = sympy.solveset(bracket, var, sympy.Interval(0, sympy.oo))
    if isinstance(sol, sympy.FiniteSet):
        return [r for r in sol if r.is_real is not False]
    if sol is sympy.S.EmptySet:
        return []
    return None


# -- one expression, many parameter values --------------------------------------------------
# A sweep or a calibration validates and refines the same expression at many parameter
# values.  The symbolic work (Piecewise form, derivative, exact cancellation of the log
# slope, the compiled mpmath and ball functions) is done once per expression with its
# parameters as symbols (a "family") and every value then costs numeric work only.  A
# family is used only for values that are plain numbers (Integer, Rational, Float)
# satisfying every assumption of their symbol, so that a symbolic step that relied on
# an assumption (SymPy may drop a branch of a Piecewise for a positive parameter) holds
# at the value too; other profiles take the per-value path.  Parameters enter the
# compiled functions exactly (a Float as the double it stores), as in the certified
# evaluation (symgdp.interval.profile_arb).
_FAMILY_CACHE = 32
# False: every value takes the per-value path (the reference the tests compare with)
_USE_FAMILIES = True
_NOT_FAMILY = (LogDeltaRoot, sympy.Sum, sympy.Product, sympy.Integral, sympy.Derivative)
# Points at which validation looks for the numeric certificates of _Family.cannot_reject.
_CERT_POINTS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0)
# A value certified below 1 must be below 1 - _CERT_MARGIN: the per-value SymPy call sees
# the bound expression, whose Float constants SymPy may have rounded (1e-16 relative).
_CERT_MARGIN = 1e-9


@dataclass(frozen=True)
class _Point:
    """A family's parameter values, ready for its compiled functions."""

    mp: tuple  # for the mpmath functions (int, or mpf holding the exact value)
    arb: tuple  # for the ball functions


class _Family:
    """The symbolic work on ``expr`` (parameters ``params`` symbolic), done once.

    Each step is computed on first use and kept, except an answer that depends on the
    time budget (a rewrite or cancellation that ran out of time): that one is recomputed
    on the next use, and the caller takes the per-value path meanwhile.
    """

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...]) -> None:
        self.expr, self.var, self.params = expr, var, params
        self._memo: dict[str, Any] = {}

    def naive(self, timeout: float | None) -> tuple | None:
        """``(pw, dd, delta, ddelta)``: the Piecewise form, its derivative (or ``None``) and
        their compiled mpmath functions of ``(eps, *params)``; ``None`` when the family
        cannot serve (the rewrite ran out of time: this once; no mpmath function)."""
        if "naive" not in self._memo:
            built = self._build_naive(timeout)
            if built is None:
                return None  # out of time: the per-value path, this once
            self._memo["naive"] = built  # one assignment: threads see all or nothing
        return self._memo["naive"] or None

    def _build_naive(self, timeout: float | None) -> tuple | None:
        expr, var, args = self.expr, self.var, (self.var, *self.params)
        if expr.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
            try:
                pw = run_bounded(_rewrite_piecewise, expr,
                                 timeout=min(resolve_timeout(timeout), _REWRITE_SECONDS))
            except AnalysisTimeout:
                return None
            except Exception:  # noqa: BLE001 - as _piecewise_form: keep the expression
                pw = expr
        else:
            pw = sympy.piecewise_fold(expr) if expr.has(sympy.Piecewise) else expr
        try:
            delta = sympy.lambdify(args, pw, modules="mpmath")
        except Exception:  # noqa: BLE001 - the per-value path then
            return ()
        dd = ddelta = None
        if not pw.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
            try:
                d = sympy.diff(pw, var)
                if not d.has(sympy.Derivative, sympy.Subs, sympy.DiracDelta):
                    ddelta, dd = sympy.lambdify(args, d, modules="mpmath"), d
            except Exception:  # noqa: BLE001 - no usable derivative: search on R alone
                dd = ddelta = None
        return (pw, dd, delta, ddelta)

    def proof_functions(self, timeout: float | None) -> tuple | None:
        """``_proof_functions`` of the family (after :meth:`naive`)."""
        if "proof" in self._memo:
            return self._memo["proof"]
        pw, dd = self._memo["naive"][:2]
        fns, final = _proof_functions(pw, dd, self.var, self.params, timeout)
        if final:
            self._memo["proof"] = fns
        return fns

    def closed_form_roots(self, values: Any, timeout: float | None) -> tuple | None:
        """``(roots,)``: candidates for the roots of the stationarity bracket in closed
        form at these values (``roots`` ``None`` when SymPy finds none), solved once with
        the parameters symbolic; ``None`` when that solve ran out of time or the
        expression is not one :func:`refine` solves (Floats, Piecewise, Max/Min).  A
        substituted root is used only where it matches the located maximum numerically,
        and the flat piece is built from the profile's own value there, so a root that is
        not one at these values costs tightness at worst, never validity."""
        if self.expr.has(sympy.Piecewise, LogDeltaRoot, sympy.Max, sympy.Min) or \
                self.expr.atoms(sympy.Float):
            return None
        if "roots" not in self._memo:
            e, var = self.expr, self.var
            dp = sympy.diff(e, var)
            try:
                self._memo["roots"] = run_bounded(
                    _root_candidates, dp + sympy.exp(var) * (1 - e + dp), var,
                    timeout=timeout)
            except AnalysisTimeout:
                return None
            except Exception:  # noqa: BLE001 - no closed form
                self._memo["roots"] = None
        roots = self._memo["roots"]
        if roots is None:
            return (None,)
        vals = {s: values[s] for s in self.params}
        return ([r.xreplace(vals) for r in roots],)

    def verdict_functions(self) -> tuple | None:
        """Ball functions of the expression and of its derivative, or ``None``."""
        if "verdict" not in self._memo:
            from .interval import ArbUnsupported, lambdify_arb

            try:
                d = sympy.diff(self.expr, self.var)
                fns = (lambdify_arb(self.expr, self.var, self.params),
                       lambdify_arb(d, self.var, self.params))
            except (ArbUnsupported, TypeError, ValueError, NotImplementedError):
                fns = None
            self._memo["verdict"] = fns
        return self._memo["verdict"]

    def cannot_reject(self, point: _Point) -> bool:
        r"""Whether the symbolic verdict of :func:`check_profile` is proved empty at these
        values by ball arithmetic: SymPy calls the profile complex, negative, at least 1
        or increasing only when that holds at every :math:`\varepsilon > 0`, so one
        point with a real value, one with a value :math:`\ge 0`, one with a value
        :math:`< 1` and one with a derivative :math:`\le 0` rule each verdict out (the
        per-value SymPy call is then skipped)."""
        fns = self.verdict_functions()
        if fns is None:
            return False
        from flint import ctx

        f, df = fns
        need = {"real", "nonneg", "below1", "notinc"}
        with ctx.workprec(_PROOF_PREC):
            for e in _CERT_POINTS:
                try:
                    v = f(e, *point.arb)
                    if v.is_finite():
                        need.discard("real")
                        if bool(v >= 0):
                            need.discard("nonneg")
                        if bool(v < 1 - _CERT_MARGIN):
                            need.discard("below1")
                    if "notinc" in need:
                        dv = df(e, *point.arb)
                        if dv.is_finite() and bool(dv <= 0):
                            need.discard("notinc")
                except (ArithmeticError, TypeError, ValueError):
                    continue
                if not need:
                    return True
        return False


@functools.lru_cache(maxsize=_FAMILY_CACHE)
def _family(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...]) -> _Family:
    return _Family(expr, var, params)


def _mp_value(v: sympy.Rational | sympy.Float) -> Any:
    """A parameter value for the mpmath functions, exact (a Rational to 512 bits)."""
    if isinstance(v, sympy.Integer):
        return int(v)
    if isinstance(v, sympy.Float):
        with mpmath.workprec(max(53, v._prec)):
            return mpmath.mpf(v)
    with mpmath.workprec(512):
        return mpmath.mpf(int(v.p)) / int(v.q)


def _family_point(profile: Profile) -> tuple[_Family, _Point] | None:
    """The profile's family and its values, or ``None`` (the per-value path)."""
    if not _USE_FAMILIES:
        return None
    cache = profile._cache
    if "family" not in cache:
        cache["family"] = _find_family(profile)
    return cache["family"]


def _find_family(profile: Profile) -> tuple[_Family, _Point] | None:
    expr, var = profile.expr, profile.var
    if (not isinstance(expr, sympy.Expr) or expr.has(*_NOT_FAMILY)
            or profile.unbound_symbols):
        return None
    free = expr.free_symbols
    params = tuple(sorted((s for s in profile.values if s in free),
                          key=lambda s: (s.name, sorted(s.assumptions0.items()))))
    values = [profile.values[s] for s in params]
    for s, v in zip(params, values):
        if not isinstance(v, (sympy.Rational, sympy.Float)) or not v.is_finite:
            return None
        if any(getattr(v, f"is_{fact}") is not truth
               for fact, truth in s.assumptions0.items()):
            return None  # the value breaks an assumption the symbolic work may use
    from .interval import to_arb

    point = _Point(tuple(_mp_value(v) for v in values), tuple(to_arb(v) for v in values))
    return _family(expr, var, params), point


def _root_candidates(bracket: sympy.Expr, var: sympy.Symbol) -> list | None:
    """Closed-form candidates for the roots of ``bracket`` on [0, oo) with parameters
    symbolic: every element of a finite set inside SymPy's answer (which, with symbols,
    is a union of finite sets intersected with conditions), or ``None``."""
    sol = sympy.solveset(bracket, var, sympy.Interval(0, sympy.oo))

    def finite(s: sympy.Basic) -> list:
        if isinstance(s, sympy.FiniteSet):
            return [r for r in s if r.is_real is not False]
        if isinstance(s, (sympy.Union, sympy.Intersection)):
            return [r for a in s.args for r in finite(a)]
        if isinstance(s, sympy.Complement):
            return finite(s.args[0])
        return []

    if sol is sympy.S.EmptySet:
        return []
    found = finite(sol)
    return found or None


class _Naive:
    """The naive profile in mpmath: delta, R and the stationarity bracket.

    Built per value from the profile's :class:`_Family` (the symbolic work done once for
    every parameter value) when there is one, else from the bound expression.
    """

    def __init__(self, profile: Profile, dps: int, timeout: float | None) -> None:
        self.dps = dps
        var = profile.var
        self.var, self.dd, self.has_bracket = var, None, False
        self.family: _Family | None = None
        self.point: _Point | None = None
        found = _family_point(profile)
        built = found[0].naive(timeout) if found is not None else None
        if built is not None:
            self.family, self.point = found
            point = self.point
            self.pw, self.dd, f, fd = built
            self.has_bracket = self.dd is not None
            self.delta = lambda x: f(x, *point.mp)
            if fd is not None:
                self.ddelta = lambda x: fd(x, *point.mp)
            return
        pw = _piecewise_form(profile.bound_expr, timeout)
        self.pw = pw
        self.delta = sympy.lambdify(var, pw, modules="mpmath")
        if pw.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
            return  # no usable derivative: the search uses R alone
        try:
            dd = sympy.diff(pw, var)
            if not dd.has(sympy.Derivative, sympy.Subs, sympy.DiracDelta):
                self.ddelta = sympy.lambdify(var, dd, modules="mpmath")
                self.dd = dd
                self.has_bracket = True
        except Exception:  # noqa: BLE001 - no usable derivative: search on R alone
            self.has_bracket = False

    def _real(self, v: Any) -> mpmath.mpf:
        if isinstance(v, mpmath.mpc):
            v = v.real
        return mpmath.mpf(v)

    def d(self, x: mpmath.mpf) -> mpmath.mpf:
        try:
            v = self._real(self.delta(x))
        except (ZeroDivisionError, ValueError, OverflowError, TypeError):
            # a pole (K/eps at 0) or an undefined point reads as the vacuous value 1
            return mpmath.mpf(1)
        if mpmath.isnan(v):
            return mpmath.mpf(1)
        return min(max(v, mpmath.mpf(0)), mpmath.mpf(1))

    def R(self, x: mpmath.mpf) -> mpmath.mpf:
        return (1 - self.d(x)) / (1 + mpmath.exp(x))

    def bracket(self, x: mpmath.mpf) -> mpmath.mpf:
        d = self._real(self.delta(x))
        dp = self._real(self.ddelta(x))
        return dp + mpmath.exp(x) * (1 - d + dp)

    def sup_R(self, lo: Any, hi: Any) -> mpmath.mpf:
        r"""A point of [lo, hi] where R is (to ~1e-30 relative) at its supremum.

        Branch and bound with the bound :math:`R \le (1 - \tilde\delta(b))/(1 + e^a)` on
        :math:`[a, b]` (the naive profile is non-increasing), which holds across jumps and
        narrow features; the surviving cell is then polished with the derivative where
        there is one.  A supremum approached only from the right of a jump returns a point
        just right of it (a real :math:`\varepsilon_0`, so the bound stays valid).

        With a derivative the search first stops at a coarser tolerance
        (:data:`_SUP_STAGE_RTOL`): when the bracket changes sign around the best point
        found, its root (a smooth maximum, to the working precision) is returned;
        otherwise the search goes on to the full tolerance.
        """
        lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
        cand = [(self.R(p), p) for p in (lo, (lo + hi) / 2, hi)]
        best, best_x = max(cand)
        floor_w = mpmath.mpf(10) ** (-(self.dps + 5)) * (1 + abs(hi))
        tol = mpmath.mpf(10) ** (-(self.dps - 5))

        def bounded(a: mpmath.mpf, b: mpmath.mpf, db: mpmath.mpf, ea: mpmath.mpf) -> tuple:
            # (bound on R over [a, b], a, b, delta(b), e^a): delta(b) and e^a are kept
            # for the halves
            return ((1 - db) / (1 + ea), a, b, db, ea)

        cells = [bounded(lo, hi, self.d(hi), mpmath.exp(lo))]
        stages = [mpmath.mpf(_SUP_STAGE_RTOL), tol] if self.has_bracket else [tol]
        levels = 4 * mpmath.mp.prec
        for stage, t in enumerate(stages):
            while levels > 0 and cells:
                levels -= 1
                nxt = []
                for cell in cells:
                    bound, a, b, db, ea = cell
                    if bound <= best * (1 + tol) or b - a <= floor_w:
                        continue
                    if bound <= best * (1 + t):
                        nxt.append(cell)  # settled at this stage's tolerance
                        continue
                    m = (a + b) / 2
                    dm = self.d(m)
                    em = mpmath.exp(m)
                    rm = (1 - dm) / (1 + em)
                    if rm > best:
                        best, best_x = rm, m
                    nxt += [bounded(a, m, dm, ea), bounded(m, b, db, em)]
                # keep the search narrow: cells are ranked by their bound
                nxt.sort(key=lambda cell: -cell[0])
                settled = all(c[0] <= best * (1 + t) for c in nxt[:8])
                cells = nxt[:8]
                if settled:
                    break
            if self.has_bracket:
                x = self._polished(best_x, best, lo, hi)
                if x is not None:
                    return x
                if stage + 1 < len(stages):
                    continue
        return best_x

    def _polished(self, x: mpmath.mpf, best: mpmath.mpf, lo: mpmath.mpf, hi: mpmath.mpf
                  ) -> mpmath.mpf | None:
        """The root of the bracket near ``x`` when there is one there and R at it is no
        less than ``best`` (at a smooth maximum R is flat to second order: the root is
        the better point even when R cannot tell the two apart), else ``None``."""
        try:
            r = self._polish(x, lo, hi)
            if r is not None and self.R(r) >= best * (1 - mpmath.mpf(10) ** (-(self.dps + 5))):
                return r
        except (ZeroDivisionError, ValueError, TypeError):
            pass
        return None

    def _polish(self, x: mpmath.mpf, lo: mpmath.mpf, hi: mpmath.mpf) -> mpmath.mpf | None:
        """The root of the bracket within 1e-6 of x where it changes sign from - to + (a
        smooth interior maximum of R), to the working precision, or ``None``.

        Regula falsi (Illinois variant) on a sign-changing interval, with bisection as
        the safeguard: the interval always keeps the sign change."""
        w = mpmath.mpf(10) ** -6 * (1 + abs(x))
        a, b = max(lo, x - w), min(hi, x + w)
        fa, fb = self.bracket(a), self.bracket(b)
        if not fa < 0 < fb:
            return None
        eps = mpmath.ldexp(1 + abs(x), -mpmath.mp.prec + 2)
        side = 0
        for k in range(2 * mpmath.mp.prec + 80):
            if b - a <= eps:
                break
            m = (a + b) / 2 if k % 4 == 3 else a - fa * (b - a) / (fb - fa)
            if not a < m < b:
                m = (a + b) / 2
                if m in (a, b):
                    break
            fm = self.bracket(m)
            if fm < 0:
                a, fa = m, fm
                if side == -1:
                    fb /= 2
                side = -1
            elif fm > 0:
                b, fb = m, fm
                if side == 1:
                    fa /= 2
                side = 1
            else:
                return m
        return (a + b) / 2

    def crossing(self, lo: float, hi: float, level: mpmath.mpf) -> mpmath.mpf:
        """Point in [lo, hi] where R falls below ``level``, returned on the 'below' side."""
        a, b = mpmath.mpf(lo), mpmath.mpf(hi)
        if self.R(a) < level:
            return a
        for _ in range(mpmath.mp.prec + 40):
            m = (a + b) / 2
            if m in (a, b):
                break
            if self.R(m) >= level:
                a = m
            else:
                b = m
        return b


def _rational_in_exp(t: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether ``t`` is a rational function of exponentials of linear functions of var."""
    fs = t.atoms(sympy.Function)
    return all(f.func is sympy.exp and sympy.diff(f.args[0], var, 2) == 0 for f in fs)


def _cancelled(ts: list[sympy.Expr]) -> list[sympy.Expr]:
    # Floats are exact binary numbers: as Rationals the cancellation is exact
    return [sympy.cancel(t.xreplace({f: sympy.Rational(f) for f in t.atoms(sympy.Float)}))
            for t in ts]


def _log_slope(pw: sympy.Expr, dd: sympy.Expr, var: sympy.Symbol, timeout: float | None
               ) -> tuple[list[tuple] | None, bool]:
    r"""``(delta, T, condition)`` per branch of the naive profile, with
    :math:`T = \tilde\delta'/(1 - \tilde\delta) + 1/(1 + e^{-\varepsilon})`; branches that
    are rational in exponentials are cancelled exactly, in one time-bounded call (pure DP's
    :math:`T \equiv 0`, which no ball enclosure could show).  The flag says whether the
    answer is final (``False`` when the cancellation ran out of time: a larger budget may
    cancel)."""
    pairs = [(pw, dd, sympy.true)]
    if isinstance(pw, sympy.Piecewise):
        if not (isinstance(dd, sympy.Piecewise) and len(dd.args) == len(pw.args)
                and all(c == c2 for (_e, c), (_d, c2) in zip(pw.args, dd.args))):
            return None, True
        pairs = [(e, d, c) for (e, c), (d, _c) in zip(pw.args, dd.args)]
    ts = [d / (1 - e) + 1 / (1 + sympy.exp(-var)) for e, d, _c in pairs]
    todo = [i for i, t in enumerate(ts) if _rational_in_exp(t, var)]
    final = True
    if todo:
        try:
            done = run_bounded(_cancelled, [ts[i] for i in todo],
                               timeout=min(resolve_timeout(timeout), _REWRITE_SECONDS))
        except (AnalysisTimeout, Exception) as exc:  # noqa: BLE001 - keep them as they are
            final = not isinstance(exc, AnalysisTimeout)
            done = [ts[i] for i in todo]
        for i, t in zip(todo, done):
            ts[i] = t
    return [(e, t, c) for (e, _d, c), t in zip(pairs, ts)], final


def _proof_functions(pw: sympy.Expr, dd: sympy.Expr, var: sympy.Symbol,
                     params: tuple[sympy.Symbol, ...], timeout: float | None
                     ) -> tuple[tuple | None, bool]:
    """The ball functions of the no-crossing proof, ``(Ds, Ts, C)`` (per branch: delta,
    the log-slope ``T``; the branch conditions as 0/1), each taking ``(eps, *params)``,
    or ``None``; and whether that answer is final (see :func:`_log_slope`)."""
    from .interval import ArbUnsupported, lambdify_arb

    branches, final = _log_slope(pw, dd, var, timeout)
    if branches is None:
        return None, final
    try:
        # branch by branch: the hull of two balls has a lower end good to ~1e-9 only
        Ds = [lambdify_arb(e, var, params) for e, _t, _c in branches]
        Ts = [lambdify_arb(t, var, params) for _e, t, _c in branches]
        C = lambdify_arb(sympy.Tuple(*[sympy.Piecewise((1, c), (0, True))
                                       for _e, _t, c in branches]), var, params)
    except (ArbUnsupported, TypeError, ValueError):
        return None, final
    return (Ds, Ts, C), final


def _no_crossing(naive: _Naive, timeout: float | None) -> str | None:
    r"""Prove that the stationarity bracket has no crossing, i.e. that :math:`R` is
    non-increasing and the profile already tight (theory §2); a note saying so, or ``None``
    when the proof does not go through (the scan then decides).

    The bracket divided by the positive :math:`(1 + e^{\varepsilon})(1 - \tilde\delta)` is
    :math:`T = -(\log R)' = \tilde\delta'/(1 - \tilde\delta) + 1/(1 + e^{-\varepsilon})`.
    On cells of :math:`[0, 700]` (the range the scan searches) :math:`T` is enclosed in
    ball arithmetic from the SymPy derivative (per ``Piecewise`` branch: an undecided
    switch gives the hull of the branches); a cell is done when the enclosure is
    :math:`\ge -s` and is bisected otherwise.  A cell holding a switch is narrowed to
    width :math:`10^{-25}(1 + \varepsilon)` and the enclosure of :math:`\tilde\delta` on it
    must be narrower than :math:`j(1 - \tilde\delta)`: no jump.  Then :math:`\log R` rises
    by at most :math:`700 s` plus about :math:`j` per switch, so no flat piece gains more
    than about :math:`10^{-10}` relative (with :math:`s = 10^{-13}`, :math:`j = 10^{-11}`),
    below the threshold :math:`10^{-9}` under which the scan does not search for a flat
    piece either (and far below anything a measurement resolves).  Float coefficients
    make pure DP's :math:`T` a rounding error rather than 0, which the tolerance absorbs
    too.  Tight profiles touch zero (:math:`T(0) = 0`
    for :math:`\delta_\mu` and Laplace), which an exact sign test could not prove in balls;
    the tolerance :math:`s` is what makes it provable.  A crossing (an enclosure below
    :math:`-s`), a cell that cannot be decided or more than a few thousand cells return
    ``None``.
    """
    if naive.dd is None:
        return None
    from flint import arb, ctx

    from .interval import ArbUnsupported

    if naive.family is not None and naive.point is not None:
        fns, args = naive.family.proof_functions(timeout), naive.point.arb
    else:
        fns, args = _proof_functions(naive.pw, naive.dd, naive.var, (), timeout)[0], ()
    if fns is None:
        return None
    Ds, Ts, C = fns
    used = 0
    with ctx.workprec(_PROOF_PREC):
        # T is -(log R)' only where delta < 1 (above, R is 0 and rises where delta drops
        # below 1): the naive profile is non-increasing, so delta(0) < 1 is enough
        try:
            d0 = naive.delta(mpmath.mpf(0))
            if not (mpmath.isfinite(d0) and d0 < 1 - mpmath.mpf(10) ** -30):
                return None
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return None
        slope, jump, tiny = arb(_PROOF_SLOPE), arb(_PROOF_JUMP), arb("1e-25")
        # exact cell ends in arb (bisection goes below float64's resolution at a switch);
        # the cells nearest 0 first, where a crossing usually shows
        cells = [(arb(a), arb(b)) for a, b in zip(_PROOF_START[:-1].tolist(),
                                                  _PROOF_START[1:].tolist())][::-1]
        while cells:
            a, b = cells.pop()
            used += 1
            if used > _PROOF_BUDGET:
                return None
            ball = arb.union(a, b)
            try:
                live = []  # the branches that may apply somewhere on the cell
                for i, f in enumerate(C(ball, *args)):
                    if f == 0:
                        continue
                    live.append(i)
                    if f == 1:
                        break
                ts = [Ts[i](ball, *args) for i in live]
            except (ArbUnsupported, TypeError, ValueError, ZeroDivisionError):
                return None
            if any(t.is_finite() and bool(t < -slope) for t in ts):
                return None  # the bracket is negative here: a crossing
            ok = bool(live) and all(t.is_finite() and bool(t >= -slope) for t in ts)
            if ok and len(live) == 1:
                continue
            if bool(b - a <= tiny * (1 + b)):
                if not ok:
                    return None
                ds = [Ds[i](ball, *args) for i in live]
                if not all(d.is_finite() for d in ds):
                    return None
                hi = max((d.upper() for d in ds), key=float)
                lo = min((d.lower() for d in ds), key=float)
                if bool(hi - lo <= jump * (1 - hi)):
                    continue  # no jump at the switch
                return None
            m = (a + b) / 2
            if not (m.rad() == 0 and bool(a < m) and bool(m < b)):
                return None
            cells += [(m, b), (a, m)]
    return (f"already tight: no crossing of the stationarity bracket on [0, {_GRID[-1]:g}] "
            f"(proved in ball arithmetic on {used} intervals; no flat piece could gain more "
            f"than 1e-10 relative)")


def _R_float(profile: Profile, x: np.ndarray) -> np.ndarray:
    raw = _float_values(profile, x, profile._eval_numpy(x, "numpy"))
    d = np.where(np.isnan(raw), 1.0, np.clip(raw, 0.0, 1.0))
    with np.errstate(all="ignore"):
        return (1.0 - d) * np.exp(-np.logaddexp(0.0, x)), d


def _hidden_peaks(profile: Profile, x: np.ndarray, R: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Points inside grid cells where R exceeds everything to their right.

    A naive profile is non-increasing, so on a cell [a, b] R <= (1 - delta(b))/(1 + e^a):
    a cell whose bound exceeds the running maximum of R to its right (and the cell's own
    best value) by more than :data:`_PEAK_RTOL` is bisected, all cells at once in float64,
    until the bound settles.  This finds maxima narrower than the grid and suprema at
    jumps without assuming one crossing of the stationarity bracket.
    """
    M = np.maximum.accumulate(R[::-1])[::-1]
    a, b = x[:-1].copy(), x[1:].copy()
    ref = np.maximum(M[1:], R[:-1])
    db = d[1:].copy()
    found = []
    for _ in range(_PEAK_LEVELS):
        with np.errstate(all="ignore"):
            bound = (1.0 - db) * np.exp(-np.logaddexp(0.0, a))
        keep = (bound > ref * (1 + _PEAK_RTOL)) & (b - a > 1e-13 * (1 + b))
        if not np.any(keep):
            break
        a, b, ref, db = a[keep], b[keep], ref[keep], db[keep]
        if a.size > _PEAK_CELLS:
            order = np.argsort(-(bound[keep] / ref))[:_PEAK_CELLS]
            a, b, ref, db = a[order], b[order], ref[order], db[order]
        m = 0.5 * (a + b)
        Rm, dm = _R_float(profile, m)
        better = Rm > ref * (1 + _PEAK_RTOL)
        if np.any(better):
            found.append(m[better])
        ref = np.maximum(ref, Rm)
        a, b = np.concatenate([a, m]), np.concatenate([m, b])
        ref = np.concatenate([ref, ref])
        db = np.concatenate([dm, db])
    return np.unique(np.concatenate(found)) if found else np.empty(0)


def _segments(profile: Profile, naive: _Naive) -> list[tuple]:
    """Flat intervals (a, c) of the running maximum of R from the right, in mpmath."""
    x = _GRID
    R, d = _R_float(profile, x)
    extra = _hidden_peaks(profile, x, R, d)
    if extra.size:
        x = np.unique(np.concatenate([x, extra]))
        R, d = _R_float(profile, x)
    M = np.maximum.accumulate(R[::-1])[::-1]
    # R's float64 error is a few ulps of 1/(1 + e^x) (1 - delta loses delta's digits near
    # delta = 1): a margin within it is rounding, and the gain it could hide is below
    # 1e-14 absolute in delta, where delta is within 1e-5 of 1 -- far below _FLAT_RTOL
    # relative.  Without this, delta_20 with Float constants showed ~600 noise "flat
    # pieces", each searched in mpmath (a minute)
    with np.errstate(all="ignore"):
        noise = _R_ULPS * np.finfo(np.float64).eps * np.exp(-np.logaddexp(0.0, x))
    flat = M - R > _FLAT_RTOL * M + noise
    out = []
    i = 0
    n = len(x)
    while i < n:
        if not flat[i]:
            i += 1
            continue
        i0 = i
        while i < n and flat[i]:
            i += 1
        i1 = i - 1
        j = i1 + 1  # first index back on the running maximum
        lo, hi = x[max(j - 1, 0)], x[min(j + 1, n - 1)]
        k = i0 + int(np.argmin(R[i0:j]))
        # Cheap mpmath pre-check: a constant R (pure DP) shows float noise as many short
        # "flat" runs; where R is constant to 1e-20 around x_j there is nothing to gain.
        near = [naive.R(mpmath.mpf(t)) for t in (x[k], lo, x[min(j, n - 1)], hi)]
        top = max(near)
        if top > 0 and (top - min(near)) / top <= _TIGHT_RTOL:
            continue
        c = naive.sup_R(lo, hi)
        level = naive.R(c)
        # the least R inside the interval decides whether refining gains anything
        probe = [mpmath.mpf(x[k]), (mpmath.mpf(x[i0]) + c) / 2]
        gain = max((level - naive.R(p)) / level for p in probe) if level > 0 else 0
        if gain <= _TIGHT_RTOL:
            continue
        a = mpmath.mpf(0) if i0 == 0 else naive.crossing(x[i0 - 1], x[i0], level)
        out.append((a, c))
    return out


def _round_c(naive: _Naive, c: mpmath.mpf, dps: int) -> sympy.Float:
    """c rounded to ``dps`` digits without stepping onto the wrong side of a jump."""
    level = naive.R(c)
    best = None
    for shift in (0, 1, 10, 100):
        cand = sympy.Float(c + shift * mpmath.mpf(10) ** (-(dps - 2)) * (1 + abs(c)), dps)
        r = naive.R(mpmath.mpf(cand))
        if best is None or r > best[0]:
            best = (r, cand)
        if r >= level * (1 - mpmath.mpf(10) ** (-(dps - 8))):
            return cand
    return best[1]


def _numeric_flat(var: sympy.Symbol, c: sympy.Float, d: sympy.Float, dps: int
                  ) -> sympy.Expr:
    r"""The flat piece :math:`g(\varepsilon, c)` for a ``dps``-digit ``c`` and
    :math:`d \ge \tilde\delta(c)`, as :math:`\max\{d, A - B e^{\varepsilon}\}`.

    SymPy folds the Float constants of :math:`d + (1 - d)(e^c - e^{\varepsilon})/(1 +
    e^c)` into :math:`A - B e^{\varepsilon}` at ``dps`` digits, rounded to nearest: at
    :math:`\varepsilon = c` the two terms cancel and the result could fall below
    :math:`d` -- below 0 when :math:`d = 0` (a step profile reaching 0 at :math:`c`),
    making the refined profile negative left of :math:`c` and jump *up* at :math:`c`.
    Here :math:`A` is rounded up and :math:`B` down, so the piece is at least
    :math:`g(\varepsilon, c)` on :math:`[0, c]` (still a valid bound), and the maximum
    with :math:`d` keeps it at least :math:`d` everywhere: the refined profile never
    jumps up at :math:`c` and is never negative, in any arithmetic.
    """
    with mpmath.workdps(dps + 10):
        cm, dm = mpmath.mpf(c), mpmath.mpf(d)
        b = (1 - dm) / (1 + mpmath.exp(cm))
        a = dm + b * mpmath.exp(cm)
        # a relative nudge of 10^(2 - dps) exceeds the rounding to dps digits
        nudge = mpmath.mpf(10) ** (2 - dps)
        a_up = sympy.Float(a * (1 + nudge), dps)
        b_down = sympy.Float(b * (1 - nudge), dps)
    return sympy.Max(d, a_up - b_down * sympy.exp(var))


def _matching_root(roots: list, c: mpmath.mpf, dps: int) -> sympy.Expr | None:
    """The closed form among ``roots`` that is the located maximum ``c``, or ``None``."""
    for r in roots:
        try:
            rv = mpmath.mpf(sympy.N(r, dps + 10))
        except (TypeError, ValueError):
            continue
        if abs(rv - c) <= mpmath.mpf("1e-12") * (1 + abs(c)):
            return r
    return None


def _already_refined(profile: Profile) -> bool:
    """A profile produced by :func:`refine` (or marked exact): refining it changes nothing,
    since the refinement is idempotent (its R is already non-increasing)."""
    return bool(profile.meta.get("refined") or profile.meta.get("exact"))


def refine(profile: Profile, *, timeout: float | None = None, dps: int = 40) -> Profile:
    r"""The partial-order refinement of ``profile`` (theory §2) as a SymPy ``Piecewise``.

    Every parameter must be bound.  On each flat piece :math:`\varepsilon < c_k` the
    result is :math:`\min\{\tilde\delta(\varepsilon), g(\varepsilon, c_k)\}`: both are
    valid bounds (the implication from :math:`(c_k, \tilde\delta(c_k))`-DP holds for every
    :math:`\varepsilon \le c_k`), so the refinement is never above the naive profile, by
    construction rather than by sampling.  The result carries ``breakpoint`` (:math:`c`
    of the flat piece nearest 0, a closed form when SymPy finds one, else a ``dps``-digit
    Float), ``breakpoint_delta`` (:math:`\tilde\delta(c)`), and ``meta["segments"]`` with
    every flat piece ``(a, c, delta_naive(c))`` (``a``: where the flat piece starts to
    improve on the naive profile).  Refining a refined profile returns it unchanged; when
    nothing can be gained (pure DP, Laplace, Gaussian) the result is an equal profile,
    and where that was proved (no crossing of the stationarity bracket, see above)
    ``meta["tight"]`` says so and ``meta["refine_method"]`` is ``"proof"``.
    Results are cached on the (immutable) profile.

    Args:
        profile: the naive profile.
        timeout: budget in seconds for each SymPy step (rewrite, ``solveset``).
        dps: decimal digits for :math:`c` and :math:`\tilde\delta(c)`.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> r = refine(Profile(2 * sympy.exp(-eps)))
        >>> r.breakpoint
        log(2 + sqrt(6))
        >>> r(0.0) < 1.0
        True
    """
    if _already_refined(profile):
        return profile
    key = ("refine", dps)
    cache = profile._cache
    if key in cache:
        return cache[key]
    result = _refine_uncached(profile, timeout, dps)
    cache[key] = result
    return result


def _refine_uncached(profile: Profile, timeout: float | None, dps: int) -> Profile:
    profile.require_bound()
    profile.validate(timeout=timeout)
    var = profile.var
    naive = _Naive(profile, dps, timeout)
    proof = _no_crossing(naive, timeout)
    if proof is not None:
        return profile.replace(refined=True, breakpoint=None, breakpoint_delta=None,
                               segments=(), refine_method="proof", tight=proof)
    bound = profile.bound_expr
    with mpmath.workdps(dps + 10):
        segs = _segments(profile, naive)
        if not segs:
            return profile.replace(refined=True, breakpoint=None, breakpoint_delta=None,
                                   segments=())
        roots = None
        # closed forms are sought only when a flat piece exists, and for exact expressions
        # only: with Float coefficients solveset is slow and its "closed form" would be no
        # more exact than the root
        if naive.has_bracket and not bound.has(sympy.Piecewise, LogDeltaRoot, sympy.Max,
                                               sympy.Min) and not bound.atoms(sympy.Float):
            found = None
            if naive.family is not None:
                found = naive.family.closed_form_roots(profile.values, timeout)
            if found is not None:
                roots = found[0]
                if roots is not None and not all(_matching_root(roots, c, dps) is not None
                                                 for _a, c in segs):
                    found = None  # roots, but not of these values: solve for them
            if found is None:
                dp = sympy.diff(bound, var)
                try:
                    roots = run_bounded(_closed_form_roots,
                                        dp + sympy.exp(var) * (1 - bound + dp), var,
                                        timeout=timeout)
                except (AnalysisTimeout, Exception):  # noqa: BLE001 - numeric roots instead
                    roots = None
        one = len(segs) == 1
        pieces = []
        consts: dict[sympy.Symbol, sympy.Expr] = {}
        shown: dict[sympy.Symbol, sympy.Symbol] = {}
        shown_pieces = []
        segments = []
        methods = []
        # the breakpoints enter through Dummies: a parameter of the profile that happens to
        # be called c must not be replaced by the breakpoint's value; the displayed names
        # avoid the profile's own names too
        taken = {s.name for s in bound.free_symbols | profile.expr.free_symbols}
        name = "c"
        while any(n == name or n.startswith(name + "_") for n in taken):
            name += "^{*}"
        for k, (a, c) in enumerate(segs, start=1):
            exact = _matching_root(roots or [], c, dps)
            sub = "" if one else f"_{{{k}}}"
            cs, ds = sympy.Dummy("c", positive=True), sympy.Dummy("d", positive=True)
            shown[cs] = sympy.Symbol(f"{name}{sub}", positive=True)
            shown[ds] = sympy.Symbol(rf"\tilde{{\delta}}({name}{sub})", positive=True)
            if exact is not None:
                c_val = exact
                d_val = bound.subs(var, exact)
            else:
                c_val = _round_c(naive, c, dps)
                # delta~ at the *rounded* c, nudged up by a few units in the last place
                # before rounding, so (c, delta~(c)) stays a valid (eps0, delta0) pair
                d_c = naive.d(mpmath.mpf(c_val))
                d_val = sympy.Float(d_c * (1 + mpmath.mpf(10) ** (2 - dps)), dps)
            methods.append("closed form" if exact is not None else "numeric")
            consts[cs], consts[ds] = c_val, d_val
            flat = ds + (1 - ds) * (sympy.exp(cs) - sympy.exp(var)) / (1 + sympy.exp(cs))
            value = flat.xreplace(consts) if exact is not None else _numeric_flat(
                var, c_val, d_val, dps)
            # below a > 0 the naive profile beats the flat piece (a jump): keep the better
            # of the two there.  Where a = 0 the flat piece is the infimum itself (up to the
            # rounding of c, which keeps it a valid pair), and a Min would only carry the
            # naive profile's singularities (1/eps at 0) into the result.
            piece = sympy.Min(profile.expr, flat, evaluate=False) if a > 0 else flat
            pieces.append((sympy.Min(profile.expr, value, evaluate=False) if a > 0
                           else value, var < c_val))
            shown_pieces.append((piece.xreplace(shown), var < shown[cs]))
            segments.append((sympy.Float(a, dps) if a > 0 else sympy.S.Zero, c_val, d_val))
        pieces.append((profile.expr, True))
        expr = sympy.Piecewise(*pieces, evaluate=False)
    meta = dict(profile.meta)
    meta.update(refined=True, naive=profile.expr, breakpoint=segments[0][1],
                breakpoint_delta=segments[0][2], segments=tuple(segments),
                latex_template=sympy.Piecewise(*shown_pieces, (profile.expr, True),
                                               evaluate=False),
                latex_constants=tuple((shown[s], v) for s, v in consts.items()),
                refine_method=methods[0])
    return Profile(expr, profile.values, var=var, name=profile.name, **meta)


# -- utility refinement --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Calibration:
    r"""Result of :func:`refine_calibration` (theory §2, utility refinement).

    Attributes:
        sigma: the smallest noise that still gives the target :math:`(\varepsilon,\delta)`
            through the partial order (a high-precision SymPy Float).
        eps0: where to calibrate, :math:`\varepsilon_0 \ge \varepsilon`.
        delta0: where to calibrate, :math:`\delta_0`.
        sigma_naive: :math:`f(\varepsilon, \delta)` (exact SymPy value).
    """

    sigma: sympy.Expr
    eps0: sympy.Expr
    delta0: sympy.Expr
    sigma_naive: sympy.Expr

    def __post_init__(self) -> None:
        # at 50 digits: a SymPy comparison would round the naive value to the precision
        # of its Floats (15 digits for a decimal in the equation)
        with mpmath.workdps(50):
            sigma, naive = (mpmath.mpf(sympy.N(x, 50)) for x in (self.sigma, self.sigma_naive))
            worse = sigma > naive * (1 + mpmath.mpf("1e-25"))
        if worse:
            raise PrecisionError(f"refined sigma {self.sigma} exceeds the naive "
                                 f"{self.sigma_naive}")


def refine_calibration(equation: Any, eps: Any, delta: Any,
                       values: Any = None, *, solve_for: sympy.Symbol = _SIGMA,
                       var: sympy.Symbol = _EPS, delta_symbol: sympy.Symbol = _DELTA,
                       timeout: float | None = None, dps: int = 30) -> Calibration:
    r"""The least noise that gives :math:`(\varepsilon,\delta)`-DP through the partial order.

    .. math::

        \sigma_{\min} = \inf\{f(\varepsilon_0,\delta_0) : \delta_0 + (1-\delta_0)
        (e^{\varepsilon_0} - e^{\varepsilon})_+/(1+e^{\varepsilon_0}) \le \delta,\
        \varepsilon_0 \ge \varepsilon\}.

    The noise :math:`f` must not increase with :math:`\delta_0` (checked at the optimum),
    so for each :math:`\varepsilon_0` the best :math:`\delta_0` makes the constraint tight.
    The one-dimensional minimum over :math:`\varepsilon_0` is located on a grid of 4000
    points and polished by golden-section search in mpmath at ``dps`` digits.

    Example:
        >>> c = refine_calibration("sigma = -C*log(delta)/eps", sympy.Rational(1, 5),
        ...                        sympy.exp(-2), {"C": 1})
        >>> c.sigma_naive, round(float(c.sigma), 4)
        (10, 8.0857)

    Floats (decimals in the equation, float values and targets) are read as the exact
    rationals they store, so ``sigma_naive`` is exact and ``sigma`` (rounded up to ``dps``
    digits) is compared with it at full precision.
    """
    from .parsing import parse_equation

    if isinstance(equation, str):
        table = Profile._symbol_table(var, values, (solve_for, delta_symbol))
        equation = parse_equation(equation, symbols=table)
    if not isinstance(equation, sympy.Eq):
        raise ProfileError(f"refine_calibration needs an equation, got {equation!r}")
    from .profile import _match_symbol

    s = _match_symbol(solve_for, equation)
    d = _match_symbol(delta_symbol, equation)
    v = _match_symbol(var, equation)
    if equation.lhs == s and s not in equation.rhs.free_symbols:
        f = equation.rhs
    elif equation.rhs == s and s not in equation.lhs.free_symbols:
        f = equation.lhs
    else:
        sols = run_bounded(sympy.solve, equation, s, timeout=timeout)
        sols = [x for x in sols if x.is_positive is not False]
        if len(sols) != 1:
            raise ProfileError(f"cannot write {equation} as {s} = f(eps, delta): "
                               f"solutions {sols}")
        f = sols[0]
    vals = Profile._normalise_values(f, values or {})
    # every Float (a decimal in the equation, a float value or target) as the exact
    # rational it stores: the naive noise is then exact, and the refined one is compared
    # with it at full precision instead of against a 15-digit rounding of it
    f = _exact_floats(f.xreplace(vals))
    free = f.free_symbols - {v, d}
    if free:
        names = ", ".join(sorted(map(str, free)))
        from .errors import UnboundParameterError

        raise UnboundParameterError(f"refine_calibration needs values for: {names}")
    e_t, d_t = _exact_floats(sympy.sympify(eps)), _exact_floats(sympy.sympify(delta))
    if not (e_t.is_number and d_t.is_number) or e_t < 0 or not (0 < d_t < 1):
        raise DomainError(f"the target must have eps >= 0 and 0 < delta < 1, "
                          f"got eps={eps!r}, delta={delta!r}")
    naive = f.xreplace({v: e_t, d: d_t})  # SymPy's automatic evaluation only: no hang
    f_np = sympy.lambdify((v, d), f, modules=["scipy", "numpy"])
    f_mp = sympy.lambdify((v, d), f, modules="mpmath")
    ef, df = float(e_t), float(d_t)
    e_max = float(np.log((np.exp(ef) + df) / (1 - df)))
    x = np.linspace(ef, e_max, 4001)[:-1]
    with np.errstate(all="ignore"):
        w = (np.exp(x) - np.exp(ef)) / (1 + np.exp(x))
        F = np.asarray(f_np(x, (df - w) / (1 - w)), dtype=np.float64) * np.ones_like(x)
    F = np.where(np.isfinite(F), F, np.inf)
    i = int(np.argmin(F))
    with mpmath.workdps(dps + 10):
        em, dm = mpmath.mpf(sympy.N(e_t, dps + 10)), mpmath.mpf(sympy.N(d_t, dps + 10))

        def d0_of(e0: Any) -> Any:
            w = (mpmath.exp(e0) - mpmath.exp(em)) / (1 + mpmath.exp(e0))
            return (dm - w) / (1 - w)

        def F_mp(e0: Any) -> Any:
            val = f_mp(e0, d0_of(e0))
            return val.real if isinstance(val, mpmath.mpc) else val

        a = mpmath.mpf(x[max(i - 1, 0)]) if i > 0 else em
        b = mpmath.mpf(x[min(i + 1, len(x) - 1)])
        g = (mpmath.sqrt(5) - 1) / 2
        c1, c2 = b - g * (b - a), a + g * (b - a)
        f1, f2 = F_mp(c1), F_mp(c2)
        for _ in range(400):
            if f1 <= f2:
                b, c2, f2 = c2, c1, f1
                c1 = b - g * (b - a)
                f1 = F_mp(c1)
            else:
                a, c1, f1 = c1, c2, f2
                c2 = a + g * (b - a)
                f2 = F_mp(c2)
            if b - a < mpmath.eps * 4:
                break
        cands = [(F_mp(p), p) for p in (a, b, c1, c2)]
        best_f, best_e = min(cands)
        if not best_f < F_mp(em):  # the naive point itself (f(eps, delta)) is the best
            best_f, best_e = F_mp(em), em
        best_d = d0_of(best_e)
        # f must not increase with delta0, else the tight delta0 is not the best choice
        if F_mp(best_e) > f_mp(best_e, best_d * mpmath.mpf("0.999")):
            raise ProfileError(f"the noise {f} increases with delta near "
                               f"eps0={mpmath.nstr(best_e, 8)}; not a trade-off equation")
        # rounded up to dps digits: any noise above the infimum is valid, below it is not
        sigma = sympy.Float(best_f * (1 + mpmath.mpf(10) ** (1 - dps)), dps)
        return Calibration(sigma=sigma, eps0=sympy.Float(best_e, dps),
                           delta0=sympy.Float(best_d, dps), sigma_naive=naive)


def _exact_floats(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every SymPy Float replaced by the rational number it stores."""
    return expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})


# -- subsampling -----------------------------------------------------------------------------
def subsample(profile: Profile, gamma: Any) -> Profile:
    r"""Poisson subsampling with rate :math:`\gamma` (theory §7), symbolically:

    .. math::

        \delta_{\text{sub}}(\varepsilon) = \gamma\,
            \min\{1, \delta(\log(1 + (e^{\varepsilon} - 1)/\gamma))\}.

    The ``min`` with 1 is dropped when SymPy proves :math:`\delta(0) \le 1`.  ``gamma`` may
    be a number in :math:`(0, 1]` or a SymPy symbol.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> subsample(Profile(sympy.exp(-eps)), sympy.Rational(1, 2)).expr
        1/(2*(2*exp(varepsilon) - 1))
    """
    g = sympify_value(gamma)
    if g.is_number:
        if not g.is_real or g <= 0 or g > 1:
            raise DomainError(f"the sampling rate gamma must lie in (0, 1], got {gamma!r}")
        if float(g) == 1.0:
            return profile
    elif g.is_positive is False:
        raise DomainError(f"the sampling rate gamma must be positive, got {gamma!r}")
    var = profile.var
    profile.validate()
    inner = profile.expr.xreplace({var: sympy.log(1 + (sympy.exp(var) - 1) / g)})
    # a validated profile is non-increasing, so delta(0) <= 1 proves delta <= 1 everywhere
    at0 = profile.expr.subs(var, 0)
    if not (at0.is_finite and (at0 - 1).is_nonpositive):
        inner = sympy.Min(1, inner)
    meta = {k: v for k, v in profile.meta.items() if k not in (
        "breakpoint", "breakpoint_delta", "segments", "latex_template", "latex_constants")}
    meta.update(subsampled=g, unsubsampled=profile.expr)
    return Profile(g * inner, profile.values, var=var, name=profile.name, **meta)
