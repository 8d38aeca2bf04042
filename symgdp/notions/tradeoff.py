"""Trade-off curves as numeric sources, through their convex conjugate."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx

from symgdp.errors import DomainError
from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb
from symgdp.notions.common import (
    _bind,
    _expression,
    _finish,
    _fmt,
    _require_bound,
    _symbol,
    _xs,
    alpha,
)
from symgdp.notions.convexity import CurveCheck, check_curve
from symgdp.notions.tradeoff_mu import GdpBracket, gdp_bracket

# -- trade-off curves -----------------------------------------------------------------------

_PRECS = (64, 128, 256, 512, 1024, 2048)


def _inverse_complement(e: sympy.Expr) -> sympy.Expr:
    """erfinv(u) as erfcinv(1 - u) and erfcinv(u) as erfinv(1 - u) (erf(x) = u is
    erfc(x) = 1 - u): ``erfinv(1 - 2*alpha)`` becomes ``erfcinv(2*alpha)``, which needs no
    more bits at a tiny alpha than alpha itself (1 - 2 alpha needs log2(1/alpha) of them)."""
    return e.replace(lambda x: isinstance(x, (sympy.erfinv, sympy.erfcinv)),
                     lambda x: sympy.erfcinv(1 - x.args[0]) if isinstance(x, sympy.erfinv)
                     else sympy.erfinv(1 - x.args[0]))


def _complements(forms: list[sympy.Expr]) -> list[sympy.Expr]:
    """The forms with :func:`_inverse_complement` applied, those that differ."""
    out: list[sympy.Expr] = []
    for f in forms:
        g = _inverse_complement(f)
        if g != f and g not in forms and g not in out:
            out.append(g)
    return out


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


def _mag(p: arb) -> int:
    """The binary magnitude of the exact ``p > 0``: 2^(k-1) <= p < 2^k."""
    m, e = p.man_exp()
    return int(e) + int(m).bit_length()


def _enclose(fs: list[Callable[[Any], arb]], ft: list[Callable[[Any], arb]], b: arb
             ) -> tuple[arb, arb, arb, arb] | None:
    """(S_lo, S_up, T_lo, T_up) on the ball ``b`` from every form of S = 1 - T and of T
    (each an enclosure of the same function: their intersection is one), or ``None``."""
    ss = [f(b) for f in fs]
    ts = [f(b) for f in ft]
    ss += [1 - t for t in ts]
    ts += [1 - s for s in ss[:len(fs)]]
    ss = [s for s in ss if s.is_finite()]
    ts = [t for t in ts if t.is_finite()]
    if not ss or not ts:
        return None
    return (max((s.lower() for s in ss), key=lambda v: v.mid()),
            min((s.upper() for s in ss), key=lambda v: v.mid()),
            max((t.lower() for t in ts), key=lambda v: v.mid()),
            min((t.upper() for t in ts), key=lambda v: v.mid()))


#: functions whose every value on a ball is a hull of their values there, not of a
#: function continuous in between: no derivative bound across them
_JUMPS = (sympy.Piecewise, sympy.Heaviside, sympy.DiracDelta)


def _derivatives(expr: sympy.Expr, var: sympy.Symbol, s_forms: list[sympy.Expr],
                 t_forms: list[sympy.Expr]
                 ) -> tuple[list[Callable[[Any], arb]], list[Callable[[Any], arb]],
                            Callable[[Any], Any] | None]:
    r"""Ball functions of :math:`S' = -T'` and :math:`S'' = -T''` (one per form that
    compiles) and of every subexpression of :math:`T` (the continuity check of
    :func:`_continuous`); empty when :math:`T` may jump (``Piecewise``, ``Heaviside``) or
    nothing compiles."""
    if expr.has(*_JUMPS):
        return [], [], None
    nodes = list(dict.fromkeys(n for n in sympy.preorder_traversal(expr) if not n.is_Atom))
    try:
        check = lambdify_arb(sympy.Tuple(*nodes), var, cse=True) if nodes else None
    except ArbUnsupported:
        return [], [], None
    first: list[Any] = []
    second: list[Any] = []
    for f, sign in [(f, 1) for f in s_forms] + [(f, -1) for f in t_forms]:
        for order, out in ((1, first), (2, second)):
            try:
                d = sign * sympy.diff(f, var, order)
                if not d.has(sympy.Derivative, sympy.Subs):
                    out.append(lambdify_arb(d, var, cse=True))
            except (ArbUnsupported, TypeError, ValueError):
                continue
    return first, second, check


def _continuous(nodes: Callable[[Any], Any] | None, b: arb) -> bool:
    r"""True when every subexpression of :math:`T` has a finite enclosure on the ball
    ``b``.  Its functions (arithmetic, powers, exp, log, erf, erfc and their inverses,
    trigonometric, gamma, Max, Min, Abs) are continuous wherever Arb gives them a finite
    value on a ball (a division by a ball holding 0, a logarithm or square root of a
    ball reaching below 0, a pole of gamma give a non-finite one), so :math:`T` is then
    continuous on ``b``, and piecewise differentiable: the mean-value bound applies."""
    if nodes is None:
        return True     # T is a bare symbol or number
    got = nodes(b)
    vals = got if isinstance(got, tuple) else (got,)
    return all(v.is_finite() for v in vals)


def _min(a: arb | None, b: arb) -> arb:
    return b if a is None else a.min(b)


def _mean_value(gp: arb, gq: arb, lo: arb, up: arb, h: arb) -> arb:
    r"""Upper bound of a continuous :math:`g` on :math:`[p, q]`, :math:`h = q - p`, from
    :math:`g(p) \le g_p`, :math:`g(q) \le g_q` and :math:`lo \le g' \le up` (almost
    everywhere): :math:`g \le \min(g_p + up\,(a - p),\ g_q + lo\,(a - q))`, whose maximum
    is at an end or where the two lines cross."""
    gp, gq, lo, up = gp.upper(), gq.upper(), lo.lower(), up.upper()
    if up <= 0:
        return gp
    if lo >= 0:
        return gq
    # the lines cross at gp + up x = gq - lo (h - x): the value there (increasing in gp,
    # gq and h, so their upper ends are used)
    return ((-lo) * gp + up * gq - up * lo * h) / (up - lo)


class TradeoffSource:
    r"""The profile :math:`1 + T^*(-e^{\varepsilon})` of a trade-off curve :math:`T(\alpha)`,
    certified by branch-and-bound in ball arithmetic.

    The bounds on an interval :math:`[p, q]` never assume that the typed :math:`T` is
    convex or monotone (the input check may leave them not proved, see ``convexity``):
    they are :math:`T`'s ball enclosure on :math:`[p, q]`, a mean-value bound with
    :math:`T'` enclosed (where
    every subexpression of :math:`T` is finite on the interval, so :math:`T` is
    continuous there; :math:`T'` between its end values where :math:`T'' \ge 0` is
    proved), and :math:`T(a) \ge T(q)` where :math:`T' \le 0` is proved.  Only where
    :math:`T` has no finite enclosure (a box reaching a singular end point) is the bound
    that of the mechanism's curve :math:`f \ge T`, non-increasing as every trade-off
    function: valid for every mechanism that is :math:`T`-DP, though a dip of the typed
    curve inside such a box is not seen.

    ``log_delta_lower`` is a proved lower bound on the same profile, i.e. on the
    conjugate of the curve as typed (exact when the curve is the mechanism's).

    Example:
        >>> import sympy
        >>> a = alpha
        >>> g = sympy.erfc(sympy.erfcinv(2 * a) - 1 / sympy.sqrt(2)) / 2  # 1 - G_1(alpha)
        >>> s = tradeoff_source(1 - g)
        >>> from symgdp.gaussian.vectorised import log_delta_mu
        >>> lo, up = s.log_delta_lower(1.0), s.log_delta(1.0)
        >>> bool(lo <= log_delta_mu(1.0, 1.0) <= up) and up - lo < 1e-5
        True
        >>> s.convexity.startswith("not proved on [0, ")   # erfcinv(0) = oo: singular end
        True
    """

    #: the profile is implied by a notion: an upper bound of the mechanism's only
    implied = True

    kind = "f-DP"

    #: log_delta and log_delta_lower come from one cached search: the second is free
    #: (symgdp.notions.bands reads it to know when refining its grid stops paying)
    shares_bounds = True

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol, *, symmetric: bool = True,
                 tol: float = 1e-6, max_points: int = 1500, latex: str = "",
                 free: list[sympy.Symbol] | None = None,
                 check: CurveCheck | None = None) -> None:
        self.expr, self.var, self.symmetric = expr, var, bool(symmetric)
        why = "not checked (free parameters)" if free else "not checked"
        #: what was proved of the curve's shape (:func:`tradeoff_source` checks it):
        #: ``convexity`` and ``monotonicity`` are "proved" or "not proved on ...: why"
        self.check = check if check is not None else CurveCheck(why, why)
        self.convexity, self.monotonicity = self.check.convexity, self.check.monotonicity
        #: caveats for a measurement of the profile (empty when both are proved)
        self.notes = self.check.notes()
        if not (tol > 0 and math.isfinite(tol)):
            raise DomainError(f"tol must be a positive number, got {tol!r}")
        self.tol, self.max_points = float(tol), int(max_points)
        self._latex = latex
        self._free = list(free or [])
        self._fs: list[Callable[[Any], arb]] | None = None
        self._ft: list[Callable[[Any], arb]] | None = None
        self._fs_at: list[Callable[[Any], arb]] = []
        self._ft_at: list[Callable[[Any], arb]] = []
        self._cache: dict[tuple[int, int], tuple[arb, arb, arb, arb]] = {}
        self._icache: dict[tuple[tuple[int, int], tuple[int, int]], tuple[Any, ...]] = {}
        self._results: dict[float, tuple[float, float]] = {}
        self._ds: list[Callable[[Any], arb]] = []
        self._dds: list[Callable[[Any], arb]] = []
        self._dcache: dict[tuple[int, int], tuple[arb, arb] | None] = {}
        self._nodes: Callable[[Any], Any] | None = None

    def finer(self, tol: float) -> TradeoffSource:
        """The same profile with the proved bounds on log delta searched to ``tol`` (what a
        measurement asks when its own tol on mu is finer than this source's)."""
        return TradeoffSource(self.expr, self.var, symmetric=self.symmetric, tol=tol,
                              max_points=self.max_points, latex=self._latex,
                              free=self._free, check=self.check)

    def _compile(self) -> None:
        _require_bound(self._free, "the trade-off curve")
        if self._fs is None:
            s_forms, t_forms = _forms(1 - self.expr), _forms(self.expr)
            self._fs = [lambdify_arb(f, self.var) for f in s_forms]
            self._ft = [lambdify_arb(f, self.var) for f in t_forms]
            # at points only: erfcinv(2 alpha) for erfinv(1 - 2 alpha), exact at a tiny alpha
            # in 64 bits where the typed form needs log2(1/alpha) of them (an enclosure over
            # an interval is left to the forms above)
            self._fs_at = self._fs + [lambdify_arb(g, self.var) for g in
                                      _complements(s_forms)]
            self._ft_at = self._ft + [lambdify_arb(g, self.var) for g in
                                      _complements(t_forms)]
            self._ds, self._dds, self._nodes = _derivatives(self.expr, self.var, s_forms, t_forms)

    def _values(self, p: arb) -> tuple[arb, arb, arb, arb]:
        """(S_lo, S_up, T_lo, T_up) at the exact point p, S = 1 - T, as exact balls."""
        k = _key(p)
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        best: tuple[arb, arb, arb, arb] | None = None
        precs: tuple[int, ...] = _PRECS
        if 0 < p < 1:
            # 1 - 2 alpha (say) keeps a tiny alpha only with about log2(1/alpha) bits
            need = 128 + max(-_mag(p), -_mag(1 - p) if p > 0.5 else 0)
            if need > _PRECS[-1]:
                precs = _PRECS + (need,)
        assert self._fs is not None and self._ft is not None  # _both ran _compile() first
        for prec in precs:
            with ctx.workprec(prec):
                got = _enclose(self._fs_at, self._ft_at, p)
                if got is None:
                    continue
                best = got
                s_lo, s_up, t_lo, t_up = got
                rel_s = (s_up - s_lo) / abs(s_up) if s_up != 0 else arb(0)
                rel_t = (t_up - t_lo) / abs(t_up) if t_up != 0 else arb(0)
                if rel_s < 2.0**-40 and rel_t < 2.0**-40:
                    break
        if best is None and (p == 0 or p == 1):
            # the curve's end points may be limits (erfcinv(0) = oo).  The bounds used
            # are those of the mechanism's curve f, whatever T is: 0 <= f <= 1 (S_up = 1
            # and T_lo = 0 are all the upper bounds use); the lower ends (T_up = 1 at 0)
            # only make the proved lower bound smaller
            best = (arb(0), arb(1), arb(0), arb(1)) if p == 0 else \
                (arb(1), arb(1), arb(0), arb(0))
        if best is None:
            raise DomainError(f"the trade-off curve {self.expr} is not a finite real number "
                              f"at alpha = {_fmt(p.mid())}")
        self._cache[k] = best
        return best

    def _interval(self, p: arb, q: arb) -> tuple[arb | None, arb | None, arb | None,
                                                  arb | None]:
        """Enclosures over the whole interval [p, q], independent of eps (cached):
        (S_up, T_lo, S'_lo, S'_up); ``None`` where no finite enclosure is proved (the
        derivative also needs the curve proved continuous on [p, q])."""
        k = (_key(p), _key(q))
        hit = self._icache.get(k)
        if hit is not None:
            return hit
        with ctx.workprec(128):
            ball = p.union(q)
            d_lo = d_up = None
            if self._ds and _continuous(self._nodes, ball):
                # where S'' <= 0 is proved on [p, q] (T convex there), S' lies between its
                # values at the ends: far tighter than S' on the ball
                dp, dq = self._slope(p), self._slope(q)
                if dp is not None and dq is not None and any(
                        v.is_finite() and v <= 0 for v in (f(ball) for f in self._dds)):
                    d_lo, d_up = dq[0], dp[1]
                else:
                    ds = [d for d in (f(ball) for f in self._ds) if d.is_finite()]
                    if ds:
                        d_lo = max((d.lower() for d in ds), key=lambda v: v.mid())
                        d_up = min((d.upper() for d in ds), key=lambda v: v.mid())
            s_up = t_lo = None
            if d_lo is None:    # T's own enclosure over [p, q] (first order)
                assert self._fs is not None and self._ft is not None  # _compile() ran (_both)
                got = _enclose(self._fs, self._ft, ball)
                if got is not None:
                    s_up, t_lo = got[1], got[2]
        out = (s_up, t_lo, d_lo, d_up)
        self._icache[k] = out
        return out

    def _slope(self, p: arb) -> tuple[arb, arb] | None:
        """Bounds (lower, upper) of S' = -T' at the exact point p, or ``None``."""
        k = _key(p)
        if k in self._dcache:
            return self._dcache[k]
        out = None
        with ctx.workprec(128):
            for f in self._ds:      # every form encloses S'(p): intersect until tight
                d = f(p)
                if not d.is_finite():
                    continue
                out = (d.lower(), d.upper()) if out is None else \
                    (out[0].max(d.lower()), out[1].min(d.upper()))
                if out[1] - out[0] <= abs(out[1]) * 2.0**-60:
                    break
        self._dcache[k] = out
        return out

    def _upper(self, p: arb, q: arb, vp: tuple[arb, arb, arb, arb],
               vq: tuple[arb, arb, arb, arb], c: arb) -> arb:
        r"""Upper bound of :math:`\sup_{[p, q]} 1 - f(a) - c a` (and of
        :math:`1 - a - c f(a)` when not symmetric) for every curve :math:`f \ge T` that is
        non-increasing: the bounds rely on the *mechanism's* curve being a trade-off
        function, never on the typed :math:`T` being one (module notes)."""
        s_up_i, t_lo_i, d_lo, d_up = self._interval(p, q)
        sp_up, tp_lo = vp[1], vp[2]
        sq_up, tq_lo = vq[1], vq[2]
        h = q - p
        # T non-increasing on [p, q] (proved by its derivative), or, where T has no
        # enclosure at all there (a singular end, erfcinv(0) = oo), the mechanism's own
        # curve f >= T, non-increasing as every trade-off function: then
        # 1 - f(a) - c a <= S(q) - c p on [p, q]
        mono = (s_up_i is None and d_lo is None) or (d_lo is not None and d_lo >= 0)
        u = sq_up - c * p if mono else None
        if s_up_i is not None:                       # T's enclosure over [p, q]
            u = _min(u, s_up_i - c * p)
        # (_interval sets d_lo and d_up together, s_up_i and t_lo_i together)
        if d_lo is not None and d_up is not None:    # the mean-value bound (g' = S' - c)
            u = _min(u, _mean_value(sp_up - c * p, sq_up - c * q, d_lo - c, d_up - c, h))
        # u is set: with neither enclosure over [p, q] (s_up_i, d_lo None) mono holds
        assert u is not None
        if not self.symmetric:
            u2 = 1 - p - c * tq_lo if mono else None
            if t_lo_i is not None:
                u2 = _min(u2, 1 - p - c * t_lo_i)
            if d_lo is not None and d_up is not None:  # g2 = 1 - a - c T, g2' = c S' - 1
                u2 = _min(u2, _mean_value(1 - p - c * tp_lo, 1 - q - c * tq_lo,
                                          c * d_lo - 1, c * d_up - 1, h))
            assert u2 is not None  # as u: t_lo_i is set exactly when s_up_i is
            u = u.max(u2)
        return u.upper()

    @staticmethod
    def _split(p: arb, q: arb) -> arb:
        # geometric cuts take a power of two between the binary magnitudes of the ends
        # (the exponent of man_exp() is that of the odd mantissa, not the magnitude: for
        # an end like 81/4096 it put the cut outside [p, q], and the interval was never
        # split)
        if p == 0:
            m = q * q * q * q if q < 0.5 else q / 16
            return m.mid() if not m.is_exact() else m
        if q > 4 * p:   # 2^k, mag(p) <= k <= mag(q) - 2: strictly inside
            return arb(2) ** ((_mag(p) + _mag(q) - 1) // 2)
        if p >= 0.5 and q == 1:
            return 1 - ((1 - p) / 16)
        if p >= 0.5 and (1 - p) > 4 * (1 - q):
            return 1 - arb(2) ** ((_mag(1 - q) + _mag(1 - p) - 1) // 2)
        return (p + q) / 2

    def _solve(self, x: float) -> tuple[float, float]:
        """(lower, upper) bounds on log delta(x), by best-first branch-and-bound."""
        hit = self._results.get(x)
        if hit is not None:
            return hit
        out = self._search(x)
        self._results[x] = out
        return out

    def _search(self, x: float) -> tuple[float, float]:
        with ctx.workprec(128):
            c = arb(x).exp()
            lower = arb(0)          # delta >= 0; raised by the value at every point seen

            def seen(p: arb, v: tuple[arb, arb, arb, arb]) -> None:
                nonlocal lower
                cand = v[0] - c * p
                if not self.symmetric:
                    cand = cand.max(1 - p - c * v[3])
                lower = lower.max(cand.lower())

            pts = [arb(0), arb(0.5), arb(1)]
            vals = [self._values(p) for p in pts]
            for p, v in zip(pts, vals, strict=True):
                seen(p, v)
            # active intervals (upper bound, p, q, values at p and q); an interval whose
            # bound is at most the proved lower bound cannot hold more than it: dropped
            active = [(self._upper(pts[i], pts[i + 1], vals[i], vals[i + 1], c), pts[i],
                       pts[i + 1], vals[i], vals[i + 1]) for i in range(2)]
            dropped = arb(-1)
            n = len(pts)
            while True:
                keep = []
                for iv in active:
                    if iv[0] > lower:
                        keep.append(iv)
                    else:
                        dropped = dropped.max(iv[0])
                active = keep
                umax = max([iv[0] for iv in active] + [dropped], key=lambda b: b.mid())
                if umax <= 0:
                    return -math.inf, -math.inf
                lo_f = float(lower.log().lower()) if lower > 0 else -math.inf
                up_f = min(float(umax.log().upper()), 0.0)
                up_r = math.nextafter(up_f, math.inf) if up_f < 0 else 0.0
                if (lo_f > -math.inf and up_f - lo_f <= self.tol) or n >= self.max_points:
                    return min(math.nextafter(lo_f, -math.inf), 0.0), up_r
                # split the (up to 8) highest intervals that may still hold the supremum
                # to within tol
                thresh = lower * math.exp(self.tol) if lower > 0 else arb(0)
                active.sort(key=lambda iv: -iv[0].mid())
                grown = []
                rest = []
                for j, iv in enumerate(active):
                    _, p, q, vp, vq = iv
                    m = self._split(p, q) if j < 8 and iv[0] > thresh else None
                    if m is None or not p < m < q:
                        rest.append(iv)
                        continue
                    vm = self._values(m)
                    n += 1
                    seen(m, vm)
                    grown.append((self._upper(p, m, vp, vm, c), p, m, vp, vm))
                    grown.append((self._upper(m, q, vm, vq, c), m, q, vm, vq))
                if not grown:           # no split possible: return what is proved
                    return min(lo_f, 0.0), up_r
                active = rest + grown

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

    def gdp_bracket(self, eps_h: float, tol: float, *,
                    check: Callable[[], None] | None = None,
                    timeout: float | None = None) -> GdpBracket:
        r"""A certified bracket on :math:`\sup_{[0, \varepsilon_h]} G` of this profile,
        found in the :math:`\alpha` domain (:func:`symgdp.notions.tradeoff_mu.gdp_bracket`:
        :math:`\sup_\alpha \Phi^{-1}(1 - \alpha) - \Phi^{-1}(T(\alpha))`, no search over
        :math:`\varepsilon`); ``upper is None`` (with ``reason``) when that route gave up.
        :func:`symgdp.measurement.measure.measure` takes it first.

        The route bounds boxes and the part below :math:`\alpha_h` with the monotonicity
        of the mechanism's curve, so it is taken only where the typed curve was proved
        non-increasing, up to end pieces of width at most :math:`2^{-40}` at 0 or 1
        (singular ends such as :math:`\operatorname{erfcinv}(0)`, where the bounds of
        this source use that monotonicity too); otherwise it gives up and the search
        over :math:`\varepsilon` measures the conjugate of the curve as typed.

        Example:
            >>> import sympy
            >>> s = tradeoff_source(1 - sympy.erfc(sympy.erfcinv(2 * alpha) - 1)/2)
            >>> b = s.gdp_bracket(100.0, 1e-6)    # G_mu with mu = sqrt(2)
            >>> b.lower <= 2**0.5 <= b.upper
            True
        """
        _require_bound(self._free, "the trade-off curve")
        chk = self.check
        ends_only = bool(chk.open_monotone) and all(
            (a == 0.0 or b == 1.0) and b - a <= 2.0**-40 for a, b in chk.open_monotone)
        if chk.monotonicity != "proved" and not ends_only:
            return GdpBracket(eps_h=eps_h, reason="the curve's non-increase is "
                              f"{chk.monotonicity}, which the alpha route would assume")
        return gdp_bracket(self.expr, self.var, eps_h, tol, symmetric=self.symmetric,
                           check=check, timeout=10.0 if timeout is None else timeout)

    def latex(self) -> str:
        return self._latex


def _check_tradeoff_curve(expr: sympy.Expr, var: sympy.Symbol) -> None:
    """DomainError for a curve that is provably outside [0, 1], above 1 - alpha,
    increasing or not convex at points of a grid of balls over [0, 1]: the quick first
    check (a grossly mistyped curve is named at a grid point); convexity and
    non-increase between the points are proved or refused by
    :func:`symgdp.notions.convexity.check_curve`.  Not a premise: the bounds of
    TradeoffSource hold for any curve."""
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
            err = DomainError(f"the trade-off curve {expr} increases: {_fmt(vals[i].mid())} at "
                              f"alpha = {_fmt(grid[i].mid())} but {_fmt(vals[i + 1].mid())} "
                              f"at alpha = {_fmt(grid[i + 1].mid())}")
            # the grid points are floats: the exact points of the witness
            err.witness = ("increase", float(grid[i].mid()), float(grid[i + 1].mid()))
            raise err
    for i in range(1, len(grid) - 1):
        a0, a1, a2 = grid[i - 1], grid[i], grid[i + 1]
        with ctx.workprec(256):
            chord = vals[i - 1] + (vals[i + 1] - vals[i - 1]) * (a1 - a0) / (a2 - a0)
        if vals[i] > chord:
            err = DomainError(f"the trade-off curve {expr} is not convex near alpha = "
                              f"{_fmt(a1.mid())}: {_fmt(vals[i].mid())} lies above the chord "
                              f"value {_fmt(chord.mid())}")
            err.witness = ("chord", float(a0.mid()), float(a1.mid()), float(a2.mid()))
            raise err


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
        DomainError: the curve is not finite and real, leaves :math:`[0, 1]` or exceeds
            :math:`1 - \alpha` at a point of a grid of balls; or it is proved not convex
            (a point proved above a chord, or a box where :math:`T'' < 0` or a concave
            kink is proved) or proved to increase (:math:`T(c) > T(a)` at :math:`a < c`,
            or :math:`T' > 0` proved on a box), anywhere in :math:`[0, 1]`: the message
            names :math:`\alpha` and the values (and ``exc.witness`` holds the points).

    Convexity and non-increase are *proved* by branch-and-bound in ball arithmetic
    (:mod:`symgdp.notions.convexity`): :math:`T'' \ge 0` and :math:`T' \le 0` on every box
    of a cover of :math:`[0, 1]`, kinks of ``Max``/``Min``/``Abs`` and switches of
    ``Piecewise`` (proved continuous by SymPy) checked to be convex, the boxes joined where
    :math:`T` is differentiable.  What could not be proved (a singular end such as
    ``erfcinv(2*alpha)`` at 0 and 1, the budget of boxes spent, a ``Piecewise`` switch
    SymPy cannot place, ``Heaviside``) is accepted and recorded: ``source.convexity`` and
    ``source.monotonicity`` say ``"proved"`` or ``"not proved on [a, b]: why"``, and
    ``source.notes`` (shown in a measurement's notes) says that the profile is then
    the conjugate of the curve's convex envelope, still an upper bound on the profile of
    a mechanism that is :math:`T`-DP.  With free parameters (``values`` missing) nothing
    is checked.

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
    check = None
    if not free:
        try:
            _check_tradeoff_curve(bound, var)
        except ArbUnsupported as exc:
            raise DomainError(str(exc)) from exc
        check = check_curve(bound, var, [lambdify_arb(f, var) for f in _forms(bound)])
    latex = rf"T({sympy.latex(var)}) = {sympy.latex(original)}"
    return TradeoffSource(bound, var, symmetric=symmetric, tol=tol, latex=latex, free=free,
                          check=check)
