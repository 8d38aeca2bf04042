r"""The exact :math:`k`-fold composition of pure DP, piece by piece.

Kairouz, Oh & Viswanath (2015, Theorem 3.3) give the optimal profile of :math:`k`-fold
:math:`\varepsilon_0`-DP as a finite sum; :class:`KovPieces` holds it as exact pieces
(affine in :math:`e^\varepsilon` between consecutive loss levels) for float64, mpmath and
ball evaluation and for the first-order search of the measurement, and
:func:`optimal_mu` / :func:`laplace_mu` measure its (or the Laplace mechanism's) GDP
parameter by branch and bound on those pieces.  The symbolic KOV sum and its profile
class live in :mod:`symgdp.accounting.pure_dp`.
"""

from __future__ import annotations

import bisect
import fractions
import functools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import sympy
from flint import arb, ctx, fmpq

from symgdp.errors import DomainError, PrecisionError
from symgdp.measurement.firstorder import FirstOrder
from symgdp.symbolic.symbols import eps as _EPS
from symgdp.symbolic.symbols import sympify_value

__all__ = ["optimal_log_delta", "optimal_eps", "laplace_mu", "optimal_mu"]


def check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer, sympy.Integer)):
        if not (isinstance(k, (float, np.floating)) and float(k).is_integer()):
            raise DomainError(f"k must be a positive integer, got {k!r}")
    if int(k) < 1:
        raise DomainError(f"k must be a positive integer, got {k!r}")
    return int(k)


def check_eps0(eps0: Any) -> float:
    e = float(eps0)
    if not (math.isfinite(e) and e > 0):
        raise DomainError(f"eps0 must be a finite number > 0, got {eps0!r}")
    return e


def delta_array(delta: Any) -> tuple[bool, np.ndarray]:
    scalar = np.ndim(delta) == 0
    d = np.atleast_1d(np.asarray(delta, dtype=np.float64))
    bad = ~((d > 0) & (d <= 1))  # delta = 1 is vacuous but legal (answer eps = 0)
    if np.any(bad):
        raise DomainError(f"delta must lie in (0, 1], got {d[bad][0]!r}")
    return scalar, d


def out_array(scalar: bool, x: np.ndarray) -> Any:
    return float(x[0]) if scalar else x


class KovPieces:
    r"""The KOV profile of :math:`k`-fold :math:`\varepsilon_0`-DP, piece by piece.

    With the positive loss levels :math:`L_u = (k - 2u)\varepsilon_0`,
    :math:`u = 0, \dots, n - 1` (:math:`n = \lceil k/2\rceil`), on the piece
    :math:`[\max(L_{u+1}, 0), L_u]` the profile is

    .. math:: \delta(\varepsilon) = D_u - C_u\,\mathrm{expm1}(\varepsilon - L_u),\qquad
              C_u = \sum_{i \le u} w_i e^{L_u - L_i},\quad
              D_u = \delta(L_u) = \sum_{i < u} w_i (1 - e^{L_u - L_i}),

    and 0 from :math:`L_0 = k\varepsilon_0` on: two non-negative terms, so nothing
    cancels, also as :math:`\delta \to 0` at :math:`k\varepsilon_0` (:math:`D_0 = 0`).
    The constants follow from :math:`C_u = w_u + e^{-2\varepsilon_0} C_{u-1}` and
    :math:`D_u = D_{u-1} - \mathrm{expm1}(-2\varepsilon_0)\,C_{u-1}` (sums of
    non-negative terms), in ball arithmetic at any precision with :math:`\varepsilon_0`
    exact.  On a piece :math:`\delta'' = \delta' < 0`, so :math:`\delta`, :math:`\delta'`
    and :math:`(\log\delta)' = \delta'/\delta` are decreasing there and
    :math:`(\log\delta)'' = (\log\delta)'(1 - (\log\delta)') < 0`: each enclosure on an
    interval is the hull of the end-point values of the pieces it meets.  At a level
    :math:`(\log\delta)'` jumps up (the level's term stops), so ``"l2"`` is only given
    inside one piece.  (A subclass may scale the exponent by a ``rate`` :math:`a`:
    :math:`D_u - C_u\,\mathrm{expm1}(a(\varepsilon - L_u))`, with
    :math:`(\log\delta)'' = (\log\delta)'(a - (\log\delta)')`.)
    """

    #: the profile is D_u - C_u expm1(rate (eps - L_u)) on each piece
    rate = 1.0

    def __init__(self, eps0: sympy.Expr, k: int) -> None:
        from symgdp.evaluation.interval import lambdify_arb

        self.k, self.n = k, (k + 1) // 2
        self.e0 = float(eps0)
        self._e0_ball = lambdify_arb(eps0, _EPS)  # exact, or outward rounded
        self._balls: dict[int, tuple[list[arb], list[arb], list[arb]]] = {}
        mult = k - 2 * np.arange(self.n)
        self.hi = mult * self.e0
        self._neg_hi = (-self.hi).tolist()
        # L_u = hi_u + lo_u exactly for the double eps0 (lo_u has at most ~11 significant
        # bits): x - L_u is then (x - hi_u) - lo_u, accurate to rounding, and its sign exact
        ex = fractions.Fraction(self.e0)
        self.lo = np.array([float(int(m) * ex - fractions.Fraction(float(h)))
                            for m, h in zip(mult, self.hi, strict=True)])
        #: the smallest double >= k eps0 (from there on delta = 0)
        self.top = float(self.hi[0] if self.lo[0] <= 0 else
                         math.nextafter(self.hi[0], math.inf))
        _, c, d = self._consts(128)
        with ctx.workprec(128):
            self.log_c = np.array([float(v.log().mid()) for v in c])
            self.log_d = np.array([-math.inf] + [float(v.log().mid()) for v in d[1:]])

    # -- constants ------------------------------------------------------------------------
    def _consts(self, prec: int) -> tuple[list[arb], list[arb], list[arb]]:
        """Levels L_u, C_u and D_u as balls at ``prec`` bits (cached)."""
        # at least enough bits for (k - 2u) eps0 to be exact for a double eps0: the levels
        # decide which piece a point lies on
        prec = max(prec, 64 + self.k.bit_length())
        v = self._balls.get(prec)
        if v is None:
            k = self.k
            with ctx.workprec(prec):
                e0 = self._e0_ball(0)
                levels = [(k - 2 * u) * e0 for u in range(self.n)]
                r = (-e0).exp()  # q/p
                r2 = r * r
                g = -(-2 * e0).expm1()
                w = (1 / (1 + r)) ** k  # w_0 = p^k
                c, d = [w], [arb(0)]
                for u in range(1, self.n):
                    w = w * (k - u + 1) / u * r  # w_u = binom(k, u) p^(k-u) q^u
                    d.append(d[-1] + g * c[-1])
                    c.append(w + r2 * c[-1])
            v = self._balls[prec] = (levels, c, d)
        return v

    # -- float64 ---------------------------------------------------------------------------
    def _above(self, x: np.ndarray) -> np.ndarray:
        """Number of levels L_u > x, exactly (for the double eps0)."""
        n = self.n
        c = np.searchsorted(-self.hi, -x, side="left")  # float count of hi_u > x
        # only the level nearest x can be misplaced by rounding (levels are 2 eps0 apart)
        prev = np.maximum(c - 1, 0)
        down = (c > 0) & ((x - self.hi[prev]) - self.lo[prev] >= 0)
        nxt = np.minimum(c, n - 1)
        up = (c < n) & ((x - self.hi[nxt]) - self.lo[nxt] < 0)
        return c - down + up

    def log_delta(self, x: np.ndarray) -> np.ndarray:
        """log delta at the points ``x >= 0`` (a 1-d array), -inf from k eps0 on."""
        u = self._above(x) - 1
        out = np.full(x.shape, -np.inf)
        act = u >= 0
        if np.any(act):
            ua, xa = u[act], x[act]
            s = np.minimum((xa - self.hi[ua]) - self.lo[ua], 0.0) * self.rate
            with np.errstate(divide="ignore"):
                t = self.log_c[ua] + np.log(-np.expm1(s))
            out[act] = np.logaddexp(self.log_d[ua], t)
        return np.minimum(out, 0.0)

    def eps_for(self, d: np.ndarray) -> np.ndarray:
        """The eps >= 0 with delta(eps) = d, for each d in (0, 1], exactly per piece."""
        ld = np.log(d)
        log_d0 = float(self.log_delta(np.zeros(1))[0])
        # the piece u with D_u <= d < D_{u+1} (D_u = delta(L_u) increases with u)
        u = np.searchsorted(self.log_d, ld, side="right") - 1
        # d = D_u - C_u expm1(eps - L_u)  =>  eps = L_u + log1p(-(d - D_u)/C_u); targets
        # at or above delta(0) (answer 0) may give NaN here and are masked below
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = ld + np.log(-np.expm1(self.log_d[u] - ld))  # log(d - D_u)
            val = (self.hi[u] + self.lo[u]) + np.log1p(-np.exp(gap - self.log_c[u])) / self.rate
        below = np.where(u + 1 < self.n, self.hi[np.minimum(u + 1, self.n - 1)], 0.0)
        val = np.clip(np.nan_to_num(val, nan=0.0), np.maximum(below, 0.0), self.hi[u])
        return np.where(ld >= log_d0, 0.0, val)

    # -- ball arithmetic --------------------------------------------------------------------
    def ball(self, x: Any, kind: str = "delta") -> arb:
        r"""Enclosure on the ball ``x`` of :math:`\delta` (``"delta"``), :math:`\delta'`
        (``"d1"``), :math:`(\log\delta)'` (``"l1"``) or :math:`(\log\delta)''` (``"l2"``,
        NaN unless ``x`` lies in one piece) at the working precision."""
        parts = self.parts(x, kind)
        out = parts[0]
        for v in parts[1:]:
            out = out.union(v)
        return out

    def parts(self, x: Any, kind: str = "delta") -> tuple[arb, ...]:
        """One enclosure per piece the ball ``x`` meets (see :meth:`ball`), and an exact 0
        for ``[k eps0, inf)`` (``"delta"``, ``"d1"``) where it reaches that far.  The
        profile is continuous, so each of them <= 0 for ``"d1"`` proves it non-increasing
        on ``x`` -- also where their union cannot show it (a ball cannot end exactly at
        0, so the hull of a negative derivative and the 0 beyond k eps0 crosses 0)."""
        levels, c, d = self._consts(ctx.prec)
        x = x if isinstance(x, arb) else arb(x)
        if not x.is_finite():
            return (arb("nan"),)
        lo, hi = x.lower(), x.upper()
        # pieces first..last may meet [lo, hi] (first = -1: so may [k eps0, inf)); an
        # interval ending on a level meets the piece beyond it only at that point, where
        # the one-sided values of the inner piece are the ones that matter (delta is
        # continuous), so only a point on a level takes both sides
        if x.rad() > 0:
            first = self._count(levels, hi, lambda v: bool(v >= hi)) - 1
            last = self._count(levels, lo, lambda v: not bool(v <= lo)) - 1
        else:
            first = self._count(levels, hi, lambda v: bool(v > hi)) - 1
            last = self._count(levels, lo, lambda v: not bool(v < lo)) - 1
        if first < 0 and kind in ("l1", "l2"):
            return (arb("nan"),)  # log delta = -inf from k eps0 on
        if kind == "l2" and first != last:
            return (arb("nan"),)
        out = []
        for u in range(max(first, 0), last + 1):
            a = lo if u == last else levels[u + 1].max(lo)
            b = hi if u == first else levels[u].min(hi)
            v = self._at(u, a, kind, levels[u], c[u], d[u])
            if a is not b:
                v = v.union(self._at(u, b, kind, levels[u], c[u], d[u]))
            out.append(v)
        if first < 0:  # delta = delta' = 0 from k eps0 on
            out.append(arb(0))
        return tuple(out) or (arb("nan"),)

    def _count(self, levels: list[arb], t: arb, pred: Callable[[arb], bool]) -> int:
        """Number of leading levels for which ``pred`` (monotone: true, then false) holds,
        located in float64 and settled by exact comparisons of the neighbours."""
        c = bisect.bisect_left(self._neg_hi, -float(t.mid()))
        while c < self.n and pred(levels[c]):
            c += 1
        while c > 0 and not pred(levels[c - 1]):
            c -= 1
        return c

    def _at(self, u: int, t: arb, kind: str, level: arb, c: arb, d: arb) -> arb:
        # delta'' = rate delta' < 0, so (log delta)'' = (log delta)' (rate - (log delta)')
        a = arb(self.rate)  # exact (1 or 1/2)
        s = (t - level) * a
        em1 = s.expm1()
        if kind == "delta":
            return d - c * em1
        d1 = -a * c * (em1 + 1)  # exp(s), from the same enclosure
        if kind == "d1":
            return d1
        val = d - c * em1
        if not val > 0:
            return arb("nan")
        l1 = d1 / val
        return l1 if kind == "l1" else l1 * (a - l1)

    def arb_delta(self, x: Any) -> arb:
        """Ball of delta at ``x`` (the :func:`~symgdp.evaluation.interval.profile_arb`
        convention)."""
        return self.ball(x).min(arb(1))

    def _exact_point(self, eps: Any) -> arb:
        if isinstance(eps, (int, float, np.floating, np.integer)):
            return arb(float(eps))
        man, exp = mpmath.mpf(eps).man_exp
        return arb(fmpq(int(man) << exp) if exp >= 0 else fmpq(int(man), 1 << -exp))

    def mp(self, eps: Any, dps: int) -> mpmath.mpf:
        """delta(eps) to ``dps`` digits, from the ball evaluation."""
        t = self._exact_point(eps)
        prec = int((dps + 10) * 3.33) + 16
        for p in (prec, 2 * prec, 4 * prec):
            with ctx.workprec(p):
                v = self.ball(t)
                if v.is_exact() or (v > 0 and v.rad() <= abs(v.mid()) * arb(10) ** -(dps + 5)):
                    man, exp = v.mid().man_exp()
                    with mpmath.workdps(dps):
                        return +mpmath.ldexp(mpmath.mpf(int(man)), int(exp))
        raise PrecisionError(f"could not evaluate the KOV profile at eps={eps!r} to "
                             f"{dps} digits")

    def log_float(self, e: float) -> float:
        """log delta(e) to float64 accuracy (-inf from k eps0 on), also where delta is
        within far less than 1e-16 of 1."""
        t = arb(float(e))
        for prec in (128, 256, 1024, 4096, 16384):
            with ctx.workprec(prec):
                v = self.ball(t).min(arb(1))
                if v.is_exact() and v.is_zero():
                    return -math.inf
                if v > 0:
                    lv = v.log()
                    if lv.rad() <= abs(lv.mid()) * arb(2) ** -60:
                        return float(lv.mid())
        raise PrecisionError(f"log delta({e!r}) of the k-fold composition profile is "
                             "too close to 0 to resolve")


@functools.lru_cache(maxsize=32)
def kov_pieces(eps0: Any, k: int) -> KovPieces:
    return KovPieces(sympify_value(eps0), k)


@functools.lru_cache(maxsize=32)
def _laplace_piece(eps0: Any) -> _LaplacePiece:
    return _LaplacePiece(sympify_value(eps0))


def kov_first_order(kov: KovPieces) -> FirstOrder:
    """:class:`~symgdp.measurement.firstorder.FirstOrder` for the KOV profile: the ball
    functions of the profile and its derivatives are those of :class:`KovPieces` (tight, from the
    end points of each piece) instead of compiled SymPy derivatives.  Only k eps0
    (rounded up), where delta reaches 0, splits the search; the other levels are not
    needed as cuts (an enclosure across a level is the hull of both sides)."""
    return FirstOrder.from_balls(
        functools.partial(kov.ball, kind="delta"), functools.partial(kov.ball, kind="d1"),
        functools.partial(kov.ball, kind="l1"), functools.partial(kov.ball, kind="l2"),
        parts=functools.partial(kov.parts, kind="d1"), branch_points=(kov.top,))


def optimal_log_delta(eps0: float, k: int, eps: Any) -> Any:
    r""":math:`\log\delta(\varepsilon)` of :func:`optimal_pure_dp`, vectorised over
    :math:`\varepsilon \ge 0`, in log space and without cancellation: on each piece
    between consecutive loss levels the profile is a sum of two non-negative terms with
    constants computed once in ball arithmetic; ``-inf`` from :math:`k\varepsilon_0` on.
    Cost :math:`O(k)` once per :math:`(\varepsilon_0, k)`, then :math:`O(\log k)` per point.

    Example:
        >>> round(math.exp(optimal_log_delta(0.2, 50, 1.0)), 12)
        0.288097646937
    """
    e0, kk = check_eps0(eps0), check_k(k)
    scalar = np.ndim(eps) == 0
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    if np.any(~(x >= 0)):
        raise DomainError(f"eps must be >= 0, got {x[~(x >= 0)][0]!r}")
    out = kov_pieces(e0, kk).log_delta(x.reshape(-1)).reshape(x.shape)
    return float(out[0]) if scalar else out


def optimal_eps(eps0: float, k: int, delta: Any) -> Any:
    r"""The :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) = \delta` for the
    optimal composition profile, solved exactly: on :math:`[L_{u+1}, L_u]`,
    :math:`\delta(\varepsilon) = \delta(L_u) - C_u\,\mathrm{expm1}(\varepsilon - L_u)`
    with :math:`C_u = \sum_{i\le u} w_i e^{L_u - L_i}`.

    Example:
        >>> e = optimal_eps(0.2, 50, 1e-3)
        >>> round(math.exp(optimal_log_delta(0.2, 50, e)), 15)
        0.001
    """
    e0, kk = check_eps0(eps0), check_k(k)
    scalar, d = delta_array(delta)
    return out_array(scalar, kov_pieces(e0, kk).eps_for(d))


# -- GDP measurement by branch and bound --------------------------------------------------
class _LaplacePiece(KovPieces):
    r"""The Laplace profile :math:`(1 - e^{(\varepsilon - \varepsilon_0)/2})_+`
    (:func:`symgdp.mechanisms.laplace`) in the same form: one piece, :math:`D_0 = 0`,
    :math:`C_0 = 1`, :math:`L_0 = \varepsilon_0`, rate 1/2."""

    rate = 0.5

    def __init__(self, eps0: sympy.Expr) -> None:
        super().__init__(eps0, 1)

    def _consts(self, prec: int) -> tuple[list[arb], list[arb], list[arb]]:
        prec = max(prec, 64)
        v = self._balls.get(prec)
        if v is None:
            with ctx.workprec(prec):
                v = self._balls[prec] = ([self._e0_ball(0)], [arb(1)], [arb(0)])
        return v


class _PiecesProfile:
    """What :func:`symgdp.measurement.measure.measure` needs of a profile, from exact pieces alone
    (no SymPy expression to build): float and high-precision values, the ball
    evaluation and the first-order machinery."""

    def __init__(self, pieces: KovPieces) -> None:
        self._pieces = pieces

    def log_delta(self, eps: Any) -> np.ndarray:
        x = np.asarray(eps, dtype=np.float64)
        return self._pieces.log_delta(x.reshape(-1)).reshape(x.shape)

    def mp(self, eps: Any, *, dps: int = 40) -> mpmath.mpf:
        return self._pieces.mp(eps, dps)

    def _mp_log(self, e: float) -> float:
        return self._pieces.log_float(e)

    def arb_delta(self) -> Callable[[Any], arb]:
        return self._pieces.arb_delta

    def first_order(self, *, timeout: float | None = None) -> Any:
        return kov_first_order(self._pieces)


def _sup_gdpt(pieces: KovPieces, tol: float) -> tuple[float, float]:
    """Certified (lower, upper) of sup G over [0, inf) for a profile given by exact
    pieces: :func:`symgdp.measurement.measure.measure` on [0, L_0] (the profile is 0 beyond)."""
    from symgdp.measurement.measure import measure

    m = measure(_PiecesProfile(pieces), eps_h=pieces.top, tol=tol, refine=False,
                identify=False)
    return m.lower, m.upper


def laplace_mu(eps0: float, *, tol: float = 1e-8) -> tuple[float, float]:
    r"""Guaranteed bounds (lower, upper) on the tightest GDP :math:`\mu` of the Laplace
    mechanism with :math:`\varepsilon_0 = \Delta/b`, measured (certified, gap at most
    ``tol``) from its exact profile :math:`(1 - e^{(\varepsilon - \varepsilon_0)/2})_+`
    (:func:`symgdp.mechanisms.laplace`).
    The closed form :math:`-2\Phi^{-1}(e^{-\varepsilon_0/2}/2)` (the GDPT at
    :math:`\varepsilon = 0`) lies in the bracket; the tests check it independently.

    Example:
        >>> lo, up = laplace_mu(0.2)
        >>> round(lo, 9), up - lo < 1e-8
        (0.239105584, True)
    """
    return _sup_gdpt(_laplace_piece(check_eps0(eps0)), tol)


def optimal_mu(eps0: float, k: int, *, tol: float = 1e-8) -> tuple[float, float]:
    r"""Guaranteed bounds (lower, upper) on the tightest GDP :math:`\mu` of the optimal
    :math:`k`-fold composition profile (the "GDP summary" of theory §8):
    :math:`\sup_\varepsilon \mu_{GDP}(\varepsilon, \delta(\varepsilon))`, measured by
    :func:`symgdp.measurement.measure.measure` on the exact pieces of :func:`optimal_pure_dp` over
    :math:`[0, k\varepsilon_0]` (the profile is 0 beyond), certified in ball
    arithmetic; gap at most ``tol``.

    Example:
        >>> lo, up = optimal_mu(0.2, 50)
        >>> up - lo < 1e-8
        True
    """
    return _sup_gdpt(kov_pieces(check_eps0(eps0), check_k(k)), tol)


#: human names of the rows of :func:`table` (for tables and figure legends), keyed by row
#: name; :meth:`CompositionTable.to_markdown`, :meth:`CompositionTable.to_latex` and
#: :func:`symgdp.present.plot.composition` use them
