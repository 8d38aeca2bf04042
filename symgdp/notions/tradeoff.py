"""Trade-off curves as numeric sources, through their convex conjugate."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx

from ..errors import DomainError
from ..interval import ArbUnsupported, lambdify_arb
from .common import (
    _bind,
    _expression,
    _finish,
    _fmt,
    _require_bound,
    _symbol,
    _xs,
    alpha,
)

# -- trade-off curves -----------------------------------------------------------------------

_PRECS = (64, 128, 256, 512, 1024, 2048)


def _forms(s: sympy.Expr) -> list[sympy.Expr]:
    """Equal forms of ``s`` that cancel less in some range (erfc(z) = 2 - erfc(-z),
    erf(z) = 1 - erfc(z)); every one is evaluated and the balls are intersected."""
    # Floats become their exact binary Rationals first: the ball compiler abstracts Float
    # constants into symbols, and the rebuilt expression would let SymPy turn erfc(-z) back
    s = s.xreplace({f: sympy.Rational(f) for f in s.atoms(sympy.Float)})
    out = [s]
    # erfc(-z) is built unevaluated: SymPy would turn it straight back into 2 - erfc(z)
    for f in (lambda e: e.replace(
            sympy.erfc, lambda z: 2 - sympy.erfc(sympy.expand(-z), evaluate=False)),
              lambda e: e.rewrite(sympy.erfc)):
        try:
            g = sympy.expand(f(s), deep=False)
        except Exception:  # noqa: BLE001, S112 - an alternative form is optional
            continue
        if g != s and g not in out:
            out.append(g)
    return out


def _key(p: arb) -> tuple[int, int]:
    m, e = p.man_exp()
    return int(m), int(e)


class TradeoffSource:
    r"""The profile :math:`1 + T^*(-e^{\varepsilon})` of a trade-off curve :math:`T(\alpha)`,
    certified by branch-and-bound in ball arithmetic (module notes).

    ``log_delta_lower`` is a proved lower bound on the same profile, i.e. on the
    conjugate of the curve as typed (exact when the curve is the mechanism's).

    Example:
        >>> import sympy
        >>> a = alpha
        >>> g = sympy.erfc(sympy.erfcinv(2 * a) - 1 / sympy.sqrt(2)) / 2  # 1 - G_1(alpha)
        >>> s = tradeoff_source(1 - g)
        >>> from symgdp.gaussian import log_delta_mu
        >>> lo, up = s.log_delta_lower(1.0), s.log_delta(1.0)
        >>> bool(lo <= log_delta_mu(1.0, 1.0) <= up) and up - lo < 1e-5
        True
    """

    #: the profile is implied by a notion: an upper bound of the mechanism's only
    implied = True

    kind = "f-DP"

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol, *, symmetric: bool = True,
                 tol: float = 1e-6, max_points: int = 1500, latex: str = "",
                 free: list[sympy.Symbol] | None = None) -> None:
        self.expr, self.var, self.symmetric = expr, var, bool(symmetric)
        if not (tol > 0 and math.isfinite(tol)):
            raise DomainError(f"tol must be a positive number, got {tol!r}")
        self.tol, self.max_points = float(tol), int(max_points)
        self._latex = latex
        self._free = list(free or [])
        self._fs: list[Callable[[Any], arb]] | None = None
        self._ft: list[Callable[[Any], arb]] | None = None
        self._cache: dict[tuple[int, int], tuple[arb, arb, arb, arb]] = {}

    def _compile(self) -> None:
        _require_bound(self._free, "the trade-off curve")
        if self._fs is None:
            self._fs = [lambdify_arb(f, self.var) for f in _forms(1 - self.expr)]
            self._ft = [lambdify_arb(f, self.var) for f in _forms(self.expr)]

    def _values(self, p: arb) -> tuple[arb, arb, arb, arb]:
        """(S_lo, S_up, T_lo, T_up) at the exact point p, S = 1 - T, as exact balls."""
        k = _key(p)
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        best: tuple[arb, arb, arb, arb] | None = None
        for prec in _PRECS:
            with ctx.workprec(prec):
                ss = [f(p) for f in self._fs]
                ts = [f(p) for f in self._ft]
                ss += [1 - t for t in ts]
                ts += [1 - s for s in ss[:len(self._fs)]]
                ss = [s for s in ss if s.is_finite()]
                ts = [t for t in ts if t.is_finite()]
                if not ss or not ts:
                    continue
                s_lo = max((s.lower() for s in ss), key=lambda b: b.mid())
                s_up = min((s.upper() for s in ss), key=lambda b: b.mid())
                t_lo = max((t.lower() for t in ts), key=lambda b: b.mid())
                t_up = min((t.upper() for t in ts), key=lambda b: b.mid())
                best = (s_lo, s_up, t_lo, t_up)
                rel_s = (s_up - s_lo) / abs(s_up) if s_up != 0 else arb(0)
                rel_t = (t_up - t_lo) / abs(t_up) if t_up != 0 else arb(0)
                if rel_s < 2.0**-40 and rel_t < 2.0**-40:
                    break
        if best is None and (p == 0 or p == 1):
            # the curve's end points may be limits (erfcinv(0) = oo): a trade-off function
            # has T(0) in [0, 1] and 0 <= T(1) <= 1 - 1 = 0
            best = (arb(0), arb(1), arb(0), arb(1)) if p == 0 else \
                (arb(1), arb(1), arb(0), arb(0))
        if best is None:
            raise DomainError(f"the trade-off curve {self.expr} is not a finite real number "
                              f"at alpha = {_fmt(p.mid())}")
        self._cache[k] = best
        return best

    def _bounds(self, pts: list[arb], vals: list[tuple[arb, arb, arb, arb]], c: arb
                ) -> tuple[list[arb], arb]:
        """Upper bound of the supremum on each interval, and the best point value."""
        ups = []
        lower = arb(0)
        n = len(pts)
        for i in range(n):
            p = pts[i]
            s_lo, _, _, t_up = vals[i]
            cand = s_lo - c * p
            if not self.symmetric:
                cand = cand.max(1 - p - c * t_up)
            lower = lower.max(cand.lower())
        for i in range(n - 1):
            p, q = pts[i], pts[i + 1]
            _, sq_up, tq_lo, _ = vals[i + 1]
            u = sq_up - c * p                                        # T non-increasing
            if i + 2 < n:                                            # T convex: chord [q, r]
                # T(a) >= ((r - a) T(q) - (q - a) T(r)) / (r - q) on [p, q]; the bound is
                # linear in a, so its end points decide.  Written with one division so that
                # an exactly linear curve gives an exact 0 (eventually-zero profiles)
                r = pts[i + 2]
                s_lo_r, _, _, t_up_r = vals[i + 2]
                conv = (sq_up - c * q).max(
                    ((r - p) * sq_up - (q - p) * s_lo_r) / (r - q) - c * p)
                u = u.min(conv)
            if not self.symmetric:
                u2 = 1 - p - c * tq_lo
                if i + 2 < n:
                    conv2 = (1 - q - c * tq_lo).max(
                        1 - p - c * (((r - p) * tq_lo - (q - p) * t_up_r) / (r - q)))
                    u2 = u2.min(conv2)
                u = u.max(u2)
            ups.append(u.upper())
        return ups, lower

    @staticmethod
    def _split(p: arb, q: arb) -> arb:
        if p == 0:
            m = q * q * q * q if q < 0.5 else q / 16
            return m.mid() if not m.is_exact() else m
        if q > 4 * p:
            e = (_key(p)[1] + _key(q)[1]) // 2
            return arb(2) ** e
        if p >= 0.5 and q == 1:
            return 1 - ((1 - p) / 16)
        if p >= 0.5 and (1 - p) > 4 * (1 - q):
            e = (_key(1 - p)[1] + _key(1 - q)[1]) // 2
            return 1 - arb(2) ** e
        return (p + q) / 2

    def _solve(self, x: float) -> tuple[float, float]:
        """(lower, upper) bounds on log delta(x)."""
        with ctx.workprec(128):
            c = arb(x).exp()
            pts = [arb(0), arb(0.5), arb(1)]
            vals = [self._values(p) for p in pts]
            while True:
                ups, lower = self._bounds(pts, vals, c)
                umax = max(ups, key=lambda b: b.mid())
                if umax <= 0:
                    return -math.inf, -math.inf
                lo_f = float(lower.log().lower()) if lower > 0 else -math.inf
                up_f = min(float(umax.log().upper()), 0.0)
                if (lo_f > -math.inf and up_f - lo_f <= self.tol) or \
                        len(pts) >= self.max_points:
                    return (min(math.nextafter(lo_f, -math.inf), 0.0),
                            math.nextafter(up_f, math.inf) if up_f < 0 else 0.0)
                # split every interval that may still hold the supremum to within tol
                thresh = lower * math.exp(self.tol) if lower > 0 else arb(0)
                new_pts, new_vals = [pts[0]], [vals[0]]
                order = sorted(range(len(ups)), key=lambda i: -ups[i].mid())
                chosen = {i for i in order[:8] if ups[i] > thresh}
                for i in range(len(ups)):
                    if i in chosen:
                        m = self._split(pts[i], pts[i + 1])
                        if pts[i] < m < pts[i + 1]:
                            new_pts.append(m)
                            new_vals.append(self._values(m))
                    new_pts.append(pts[i + 1])
                    new_vals.append(vals[i + 1])
                if len(new_pts) == len(pts):  # no split possible: return what is proved
                    return (min(lo_f, 0.0), math.nextafter(up_f, math.inf) if up_f < 0
                            else 0.0)
                pts, vals = new_pts, new_vals

    def _both(self, x: Any) -> tuple[bool, np.ndarray, np.ndarray, tuple[int, ...]]:
        scalar, xs = _xs(x)
        self._compile()
        lo = np.empty(xs.shape)
        up = np.empty(xs.shape)
        for i, xi in enumerate(xs):
            lo[i], up[i] = self._solve(float(xi))
        return scalar, lo, up, np.shape(x)

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta(x) (vectorised)."""
        scalar, _, up, shape = self._both(x)
        return _finish(scalar, up, shape)

    def log_delta_lower(self, x: Any) -> Any:
        """Proved lower bound on log delta(x) of the curve's conjugate (vectorised)."""
        scalar, lo, _, shape = self._both(x)
        return _finish(scalar, lo, shape)

    def tail_limit(self) -> None:
        """Not derived for a general curve: ``None`` (the profile layer decides)."""
        return None

    def latex(self) -> str:
        return self._latex


def _check_tradeoff_curve(expr: sympy.Expr, var: sympy.Symbol) -> None:
    """DomainError for a curve that is provably outside [0, 1], above 1 - alpha,
    increasing or not convex at points of a grid of balls over [0, 1]."""
    f = lambdify_arb(expr, var)
    inner = np.unique(np.concatenate([np.geomspace(1e-12, 0.5, 60),
                                      1 - np.geomspace(1e-12, 0.5, 60)[::-1],
                                      np.linspace(0, 1, 101)]))
    grid = [arb(float(a)) for a in inner]
    vals = []
    for a in grid:
        with ctx.workprec(256):
            v = f(a)
        if not v.is_finite() and (a == 0 or a == 1):
            # an end point that is a limit (erfcinv(0) = oo): the bounds [0, 1] and
            # T(1) = 0 are what every trade-off function has there
            v = arb(0).union(arb(1)) if a == 0 else arb(0)
        if not v.is_finite():
            raise DomainError(f"the trade-off curve {expr} is not a finite real number at "
                              f"alpha = {_fmt(a.mid())}")
        if v < 0 or v > 1:
            raise DomainError(f"the trade-off curve {expr} leaves [0, 1] at alpha = "
                              f"{_fmt(a.mid())}: {_fmt(v.mid())}")
        if v > 1 - a:
            raise DomainError(f"the trade-off curve {expr} exceeds 1 - alpha at alpha = "
                              f"{_fmt(a.mid())}: {_fmt(v.mid())} (no test does better than "
                              "random guessing's 1 - alpha)")
        vals.append(v)
    for i in range(len(grid) - 1):
        if vals[i + 1] > vals[i]:
            raise DomainError(f"the trade-off curve {expr} increases: {_fmt(vals[i].mid())} at "
                              f"alpha = {_fmt(grid[i].mid())} but {_fmt(vals[i + 1].mid())} "
                              f"at alpha = {_fmt(grid[i + 1].mid())}")
    for i in range(1, len(grid) - 1):
        a0, a1, a2 = grid[i - 1], grid[i], grid[i + 1]
        with ctx.workprec(256):
            chord = vals[i - 1] + (vals[i + 1] - vals[i - 1]) * (a1 - a0) / (a2 - a0)
        if vals[i] > chord:
            raise DomainError(f"the trade-off curve {expr} is not convex near alpha = "
                              f"{_fmt(a1.mid())}: {_fmt(vals[i].mid())} lies above the chord "
                              f"value {_fmt(chord.mid())}")


def tradeoff_source(expr: Any, alpha: Any = alpha, values: Mapping[Any, Any] | None = None,
                    *, symmetric: bool = True, tol: float = 1e-6) -> TradeoffSource:
    r"""A numeric source for the profile of a trade-off curve :math:`T(\alpha)`.

    Args:
        expr: :math:`T` as a SymPy expression or string in ``alpha`` (type I error in
            :math:`[0, 1]`; :math:`T` is the type II error of the best test).
        alpha: the symbol of the argument.
        values: numbers for the other parameters.
        symmetric: ``True`` (default) when the mechanism is :math:`T`-DP in Dong, Roth &
            Su's sense (every neighbouring pair, both orders): the profile is the conjugate
            of :math:`T`.  ``False`` when :math:`T` is the curve of one ordered pair only:
            the profile is the larger of the conjugates of :math:`T` and :math:`T^{-1}`.
        tol: target gap between the proved bounds on :math:`\log\delta`.

    Raises:
        DomainError: the curve is not finite and real, leaves :math:`[0, 1]`, exceeds
            :math:`1 - \alpha`, increases, or is not convex at a point of a grid of balls.

    Example:
        >>> s = tradeoff_source("Max(0, 1 - 2*alpha, (1 - alpha)/2)")
        >>> round(float(s.log_delta(0.0)), 6)   # delta(0) = 1/3, attained at alpha = 1/3
        -1.098612
        >>> s.log_delta(1.0)
        -inf
    """
    var = _symbol(alpha)
    original = _expression(expr, var, "a trade-off curve")
    bound, free = _bind(original, values, var)
    if not free:
        try:
            _check_tradeoff_curve(bound, var)
        except ArbUnsupported as exc:
            raise DomainError(str(exc)) from exc
    latex = rf"T({sympy.latex(var)}) = {sympy.latex(original)}"
    return TradeoffSource(bound, var, symmetric=symmetric, tol=tol, latex=latex, free=free)
