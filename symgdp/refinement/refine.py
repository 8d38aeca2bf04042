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
   maxima narrower than the grid and suprema at jumps.  The grid also holds every step
   point of a Piecewise condition or Heaviside argument and the float just left of it (a
   flat piece narrower than the grid ends at a step).  The running maximum from the
   right then locates every flat interval.
2. Each :math:`c_k` is located in mpmath (``dps`` digits) by the same bound-driven
   bisection (where there is a derivative, first only to :math:`10^{-14}` relative in
   :math:`R`), polished by regula falsi on the sign of the bracket where there is a
   derivative; a supremum reached only from the right of a jump gives a :math:`c_k` just
   right of it (rounded so that it stays there) -- at a step point :math:`s` that is a
   float64 number, the limit :math:`c_k \to s^+` instead: :math:`c_k = s` exactly with
   the exact right limit :math:`\tilde\delta(s^+)` (rounded up), so that the flat piece
   ends exactly at the step in every arithmetic.  A flat interval whose gain over
   :math:`\tilde\delta` is below :math:`10^{-20}` relative is dropped (already tight, e.g.
   pure DP, whose :math:`R` is constant).
3. Only when a flat piece exists, SymPy's ``solveset`` of the bracket (time-bounded)
   may supply a closed form for :math:`c_k`.

On each flat piece the result is :math:`\min\{\tilde\delta, g(\cdot, c_k)\}`, so it is
never above the naive profile by construction, and never below the infimum, since every
value is :math:`g(\varepsilon, \varepsilon_0)` for a real :math:`\varepsilon_0 \ge
\varepsilon`.  Gains below :math:`10^{-9}` relative on the float grid are not searched for.

Validation and refinement at many parameter values of one expression (a sweep, a
calibration) share their symbolic work: see :mod:`symgdp.refinement.family` and the planning page
of the documentation.  What counts as a profile is :mod:`symgdp.refinement.validate`.

Utility refinement (:func:`~symgdp.refinement.utility.refine_calibration`) minimises
:math:`f(\varepsilon_0, \delta_0)` over the calibration points that imply the target
(theory §2); Poisson subsampling (:func:`subsample`) is the transform of theory §7.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mpmath
import numpy as np
import sympy

from symgdp.errors import AnalysisTimeout, DomainError
from symgdp.refinement.family import (
    _PROOF_PREC,
    _REWRITE_SECONDS,
    _Family,
    _family_point,
    _Point,
    _proof_functions,
    _rewrite_piecewise,
    beyond_solveset,
)
from symgdp.refinement.validate import _float_values
from symgdp.symbolic.budget import resolve_timeout, run_bounded
from symgdp.symbolic.implicit import LogDeltaRoot
from symgdp.symbolic.steps import right_limit, step_points
from symgdp.symbolic.symbols import sympify_value

if TYPE_CHECKING:
    from symgdp.profile import Profile

__all__ = ["implication_delta", "refine", "subsample"]

# Float grid on which R is scanned.
_GRID = np.unique(np.concatenate([np.arange(0.0, 60.0, 0.01), np.geomspace(60.0, 700.0, 400)]))
# Relative gain of the running maximum over R below which no flat piece is searched for.
_FLAT_RTOL = 1e-9
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
_PROOF_SLOPE = 1e-13
_PROOF_JUMP = 1e-11
_PROOF_BUDGET = 3000
_PROOF_START = np.unique(np.concatenate([np.arange(0.0, 60.0, 2.0),
                                        np.geomspace(60.0, _GRID[-1], 8)]))


def implication_delta(eps0: Any, delta0: Any, eps: Any) -> sympy.Expr:
    r"""The smallest :math:`\delta` with :math:`(\varepsilon_0,\delta_0) \Rightarrow
    (\varepsilon,\delta)` (theory §2), as a SymPy expression.

    Example:
        >>> implication_delta(1, 0, 0)
        (-1 + E)/(1 + E)
    """
    e0, d0, e = (sympy.sympify(v) for v in (eps0, delta0, eps))
    return d0 + (1 - d0) * sympy.Max(sympy.exp(e0) - sympy.exp(e), 0) / (1 + sympy.exp(e0))


# -- refinement ------------------------------------------------------------------------------
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
    if beyond_solveset(bracket, var):
        return None  # a polynomial of huge degree in a power of e^var: numeric roots
    sol = sympy.solveset(bracket, var, sympy.Interval(0, sympy.oo))
    if isinstance(sol, sympy.FiniteSet):
        return [r for r in sol if r.is_real is not False]
    if sol is sympy.S.EmptySet:
        return []
    return None


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
        if found is not None and built is not None:
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

    from symgdp.evaluation.interval import ArbUnsupported

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
                                                  _PROOF_START[1:].tolist(), strict=True)][::-1]
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


def _R_float(profile: Profile, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _step_grid(steps: list[sympy.Expr]) -> np.ndarray:
    """Float points at and around each step point ``s``: ``fl(s)``, its neighbours, and
    the float just left of ``s`` for sure (``fl(s)`` is within half an ulp of ``s``):
    a flat piece of the refinement narrower than the grid ends at a step."""
    pts = []
    for st in steps:
        v = float(st)
        if 0.0 <= v <= _GRID[-1]:
            pts += [np.nextafter(v, -np.inf), v, np.nextafter(v, np.inf)]
    return np.array([p for p in pts if p >= 0.0], dtype=np.float64)


def _snapped(naive: _Naive, c: mpmath.mpf, steps: list[sympy.Expr], bound: sympy.Expr,
             dps: int) -> tuple[sympy.Expr, sympy.Expr] | None:
    """``(s, right limit of the naive profile at s)`` when the located top ``c`` of R is
    a step point ``s`` (or the float search's point just right of it): the flat piece is
    then the limit ``c -> s+`` of valid ones, exact at the step."""
    for st in steps:
        if sympy.Rational(float(st)) - st != 0:
            # a step point that is no float64 (1/10, sqrt(2)): float comparisons with it
            # may take the wrong side at fl(s), so the flat piece keeps its numeric end
            continue
        sm = mpmath.mpf(sympy.N(st, dps + 10))
        if abs(c - sm) <= mpmath.mpf(10) ** (-(dps - 10)) * (1 + abs(sm)):
            try:
                r = right_limit(bound, naive.var, st)
            except (TypeError, ValueError, RecursionError, NotImplementedError):
                r = None
            if r is None or not r.is_number:
                return None
            return st, r
    return None


def _segments(profile: Profile, naive: _Naive) -> list[tuple]:
    """Flat intervals (a, c, snap) of the running maximum of R from the right, in mpmath;
    ``snap`` is ``(s, right limit)`` where ``c`` is a step point ``s`` (see _snapped)."""
    steps = step_points(profile.bound_expr, profile.var)
    x = np.unique(np.concatenate([_GRID, _step_grid(steps)])) if steps else _GRID
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
        out.append((a, c, _snapped(naive, c, steps, profile.bound_expr, naive.dps)))
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
    assert best is not None  # set in the loop's first pass
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
                                                 for _a, c, _s in segs):
                    found = None  # roots, but not of these values: solve for them
            if found is None and naive.family is not None \
                    and naive.family.solve_timed_out(bound):
                # the family just spent the budget solving this very bracket (no
                # parameters): a second solve would time out again (the refine-infimum
                # test profiles spent 40 s on it); numeric roots, as after a timeout
                roots = None
            elif found is None:
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
        for k, (a, c, snap) in enumerate(segs, start=1):
            exact = None if snap else _matching_root(roots or [], c, dps)
            sub = "" if one else f"_{{{k}}}"
            cs, ds = sympy.Dummy("c", positive=True), sympy.Dummy("d", positive=True)
            shown[cs] = sympy.Symbol(f"{name}{sub}", positive=True)
            shown[ds] = sympy.Symbol(rf"\tilde{{\delta}}({name}{sub})", positive=True)
            if snap is not None:
                # the top of R is approached at the step point s from the right: the flat
                # piece is the limit c -> s+ of the valid pieces for (c, delta~(c)), with
                # delta~(s+) (the exact right limit, rounded up) and the step point kept
                # exact, so that it ends exactly at the step (eps <= s), in every arithmetic
                c_val = snap[0]
                with mpmath.workdps(dps + 10):
                    d_r = mpmath.mpf(sympy.N(snap[1], dps + 10))
                    d_val = sympy.Float(min(mpmath.mpf(1), d_r * (1 + mpmath.mpf(10) ** (
                        2 - dps))), dps)
            elif exact is not None:
                c_val = exact
                d_val = bound.subs(var, exact)
            else:
                c_val = _round_c(naive, c, dps)
                # delta~ at the *rounded* c, nudged up by a few units in the last place
                # before rounding, so (c, delta~(c)) stays a valid (eps0, delta0) pair
                d_c = naive.d(mpmath.mpf(c_val))
                d_val = sympy.Float(d_c * (1 + mpmath.mpf(10) ** (2 - dps)), dps)
            methods.append("step point" if snap is not None else
                           "closed form" if exact is not None else "numeric")
            consts[cs], consts[ds] = c_val, d_val
            flat = ds + (1 - ds) * (sympy.exp(cs) - sympy.exp(var)) / (1 + sympy.exp(cs))
            value = flat.xreplace(consts) if exact is not None else _numeric_flat(
                var, sympy.N(c_val, dps + 10) if snap is not None else c_val, d_val,
                dps)
            # at a closed step (the naive value at s is the left one) the flat piece
            # holds at s itself; at an open one the naive value there is the right limit
            # already, and the next piece takes over (no one-point piece, whose value
            # would differ from both sides by the nudge of d and look like a jump)
            closed = snap is not None and naive.d(mpmath.mpf(sympy.N(c_val, dps + 10))) > (
                mpmath.mpf(sympy.N(d_val, dps + 10)))
            ends = (var <= c_val, var <= shown[cs]) if closed else (var < c_val,
                                                                    var < shown[cs])
            # below a > 0 the naive profile beats the flat piece (a jump): keep the better
            # of the two there.  Where a = 0 the flat piece is the infimum itself (up to the
            # rounding of c, which keeps it a valid pair), and a Min would only carry the
            # naive profile's singularities (1/eps at 0) into the result.
            piece = sympy.Min(profile.expr, flat, evaluate=False) if a > 0 else flat
            if closed and a > 0 and (m := np.nextafter(float(c_val), -np.inf)) > a:
                # at a closed step the naive value at s is the left one, so the Min at s
                # itself would rest on the naive profile's step there (which ball
                # arithmetic cannot always tell apart, e.g. a Heaviside's value 1/2):
                # the flat piece alone from the float just left of s -- valid on all of
                # [0, s], and below the naive profile there (its level is R's supremum)
                pieces.append((sympy.Min(profile.expr, value, evaluate=False),
                               var < sympy.Float(m, 53)))
                pieces.append((value, ends[0]))
            else:
                pieces.append((sympy.Min(profile.expr, value, evaluate=False) if a > 0
                               else value, ends[0]))
            shown_pieces.append((piece.xreplace(shown), ends[1]))
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
    return profile.derived(expr, name=profile.name, **meta)


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
    return profile.derived(g * inner, name=profile.name, **meta)
