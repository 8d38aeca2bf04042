r"""One step of a certified composition: a profile's values -> integer PMFs on a grid.

Only the profile :math:`\delta(\varepsilon)` of a step is known here (a SymPy profile
evaluated in ball arithmetic by :func:`symgdp.evaluation.interval.profile_arb`, or a proved upper
bound from a numeric source), not its privacy loss distribution.  The *neighbouring
relation* is add/remove and the profile is assumed to cover both directions: for every
neighbouring pair :math:`(P, Q)` of the step, :math:`H_{e^x}(P\|Q) \le \delta(x)` and
:math:`H_{e^x}(Q\|P) \le \delta(x)` for :math:`x \ge 0`, with :math:`H_\gamma(P\|Q) =
\sup_S P(S) - \gamma Q(S)` (this is what a privacy profile of a mechanism states).

**The extended profile.**  For :math:`x > 0`, :math:`H_{e^{-x}}(P\|Q) = 1 - e^{-x} +
e^{-x}H_{e^x}(Q\|P)` (integrate :math:`(P - \gamma Q)_+ = P - \gamma Q + (\gamma Q -
P)_+`), so :math:`\bar\delta(-x) = 1 - e^{-x} + e^{-x}\delta(x)` bounds both directions at
negative :math:`\varepsilon` too.  As a function of :math:`y = e^\varepsilon \in (0,
\infty)`, :math:`H_y(P\|Q) = \sup_S P(S) - yQ(S)` is convex, non-increasing, at most 1,
and tends to :math:`P(L > -\infty) \le 1` as :math:`y \to 0`.

**Upper side (pessimistic connect-the-dots, Doroshenko, Ghazi, Kamath, Kumar &
Manurangsi, PETS 2022).**  Let :math:`y_0 < \dots < y_m` be points :math:`e^{j\Delta}`
(multiples :math:`j` of the grid :math:`\Delta`, both signs) and :math:`V_i \ge
\bar\delta(\log y_i)` upper values (the upper ends of balls, rounded up to float64).  Let
:math:`I` be the piecewise-linear function through :math:`(0, 1)`, the points
:math:`(y_i, V_i)`, and constant :math:`V_m` beyond :math:`y_m`.  *Claim:* if :math:`I`
is convex, :math:`I \ge H_y(P\|Q)` for every :math:`y > 0` and both directions.  Indeed a
chord of a convex function lies above it; on :math:`(0, y_0]` the chord starts at
:math:`(0, 1)` and :math:`H \le 1`; beyond :math:`y_m`, :math:`H` is non-increasing.  Any
subset of the points keeps the claim (a chord over a dropped point is still a chord), so
points are dropped until the remaining ones are *proved* (in balls) to be in convex
position; which ones are dropped affects tightness only.  :math:`I` is the profile
:math:`\sum_l \nu(l)(1 - y e^{-l})_+ + \nu(\infty)` of the measure with masses
:math:`\nu(\log y_i) = y_i(s_i - s_{i-1})`, differences of the slopes :math:`s_i` of
:math:`I` (:math:`s_{-1} = V_0 - 1)/y_0`, :math:`s_m = 0`), and :math:`\nu(\infty) =
V_m`: non-negative by convexity, total mass :math:`I(0) = 1`, and :math:`\mathbb
E_\nu[e^{-L}] = -s_{-1} \le 1` because :math:`V_0 \ge \bar\delta(\log y_0) \ge 1 - y_0`.
So :math:`\nu` is the privacy-loss distribution of a genuine pair :math:`(P', Q')` (with
:math:`Q'` the rest of its mass at loss :math:`-\infty`) whose hockey-stick curve
dominates that of every neighbouring pair of the step at every :math:`\gamma > 0`.  By
Blackwell's theorem (Blackwell 1953; Dong, Roth & Su 2022, Thm 2.10) each such pair is a
post-processing of :math:`(P', Q')`, and so is any composition of such pairs a
post-processing of the composition of the dominating pairs: the composed profile is at
most :math:`\sum_l \nu_T(l)(1 - e^{\varepsilon - l})_+ + \nu_T(\infty)` with
:math:`\nu_T` the convolution of the steps' :math:`\nu`.  **Rounding direction:** each
mass is rounded *up* to an integer multiple of :math:`2^{-b}` (the upper end of its ball);
the profile integrates the non-negative, non-decreasing function :math:`(1 -
e^{\varepsilon - l})_+` of the loss, so entrywise increases (and moves to larger losses)
only raise it, and convolution preserves this order (:mod:`symgdp.pld.pmf`).  For
an *exact* profile the interpolant's PMF is exactly the connect-the-dots split of the true
loss distribution (each cell's mass split between its ends keeping
:math:`\mathbb E[e^{-L}]`), as for the subsampled Gaussian in :mod:`symgdp.training.dpsgd`.

**Lower side.**  The same pair :math:`(P', Q')` is *almost* dominated by the step: let
:math:`g \ge \sup_y (I(y) - \delta^\star(y))/(1 - \delta^\star(y))`, where
:math:`\delta^\star` is the (convex) hockey-stick curve of a pair whose profile is *exactly*
the given :math:`\delta` in both directions.  Then :math:`I \le (1 - g)\delta^\star + g`,
the curve of the pair that with probability :math:`g` reveals itself (a mutually singular
component, curve 1) and otherwise is :math:`\delta^\star`; by Blackwell again the
:math:`T`-fold composition satisfies :math:`\delta_{\nu_T} \le \delta^\star_T + G`,
:math:`G = 1 - \prod_i (1 - g_i)`, i.e. :math:`\delta^\star_T \ge \delta_{\nu_T} - G`.
:math:`\delta_{\nu_T}` is bounded below by the same masses rounded *down*, composed
rounding down (:func:`~symgdp.pld.pmf.int_compose` with ``up=False``).  The chord
gap is bounded from the grid values alone, with upper ends :math:`V` and lower ends
:math:`A` of the balls: on the cell :math:`[y_i, y_{i+1}]` a convex :math:`\delta^\star`
lies above the line through :math:`(y_{i-1}, V_{i-1})` and :math:`(y_i, A_i)` extended to
the right, above the line through :math:`(y_{i+1}, A_{i+1})` and :math:`(y_{i+2},
V_{i+2})` extended to the left, above :math:`A_{i+1}` (it is non-increasing) and above
:math:`1 - y`; the gap is at most the largest difference between the chord and the
maximum of these lines, taken at their crossings.  **What it lower-bounds:** the
composition of *symmetric* mechanisms whose profiles *are* the given ones (the same
curve in both directions).  For a known symmetric mechanism (Gaussian, Laplace,
randomized response, pure DP) that is the mechanism; for a profile that is only an upper
bound (a naive or refined bound) it is the worst mechanism that bound allows.  For an
asymmetric mechanism (Poisson subsampling under add/remove: its profile is the maximum
of two different directional curves) the symmetric pair composes strictly worse than the
mechanism, so the lower side does not bound the mechanism and is not used for it.  When the grid
values prove the profile is not convex in :math:`e^\varepsilon` no mechanism has it and
the lower side is unavailable (``g = inf``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import PrecisionError
from symgdp.numerics.rounding import arb_ceil, arb_floor
from symgdp.pld.pmf import IntPMF, int_pmf

__all__ = ["StepPMFs", "profile_step", "grid_values"]

# absolute slack on float64 gap computations (values are in [0, 1])
_GAP_SLACK = 1e-14


@dataclass(frozen=True)
class StepPMFs:
    """Integer PMFs of one step: ``remove``/``add`` (upper, rounded up; ``add`` is
    ``remove`` for a symmetric step), ``low`` (lower, rounded down, remove direction) and
    ``g`` (the lower side's reveal probability, see the module notes; ``inf`` when
    there is no lower side)."""

    remove: IntPMF
    add: IntPMF
    low: IntPMF | None
    g: float
    symmetric: bool = True


def _up(v: Any) -> float:
    """A float64 >= the upper end of the ball v (clipped to [0, 1])."""
    f = float(v.upper()) if hasattr(v, "upper") else float(v)
    return min(max(float(np.nextafter(f, np.inf)), 0.0), 1.0)


def _down(v: Any) -> float:
    f = float(v.lower()) if hasattr(v, "lower") else float(v)
    return min(max(float(np.nextafter(f, -np.inf)), 0.0), 1.0)


def grid_values(profile: Any, disc: float, tail: float, max_points: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions ``pos`` (multiples of ``disc``, from 0 to where the upper profile falls
    below ``tail``), upper values ``V`` and lower values ``A`` of the profile there
    (``A`` is all zeros for a numeric source: it has no lower values), and the
    complements ``Cv <= 1 - delta <= Ca`` (precise near delta = 1)."""
    lg = math.log(tail)

    def above(x: float) -> bool:
        # only where the grid ends: a point whose float value cannot be resolved (a
        # value that cancels to 0, e.g. randomized response at its eps0) counts as above
        # the tail, which only extends the grid; the grid values are balls (below)
        try:
            return float(profile.log_delta(x)) > lg
        except PrecisionError:
            return True

    # the grid ends by 512 (e^512 is a finite float64: the hull and the gap take exp of the
    # positions); beyond its last point the interpolant is constant, an upper bound still
    end = 1.0
    while end < 512.0 and above(end):
        end *= 2.0
    lo, hi = 0.0, end
    if above(0.0):
        while hi - lo > max(1e-3 * hi, disc):
            mid = 0.5 * (lo + hi)
            if above(mid):
                lo = mid
            else:
                hi = mid
    n_end = max(int(math.ceil(hi / disc)), 1)
    # every grid point where the profile carries the most loss mass (near 0), then a
    # stride that fits the rest into the budget (any subset of the grid is valid)
    half = max(max_points // 2, 2)
    if n_end <= max_points:
        pos = np.arange(0, n_end + 1, dtype=np.int64)
    else:
        stride = max(1, int(math.ceil((n_end - half) / half)))
        pos = np.concatenate([np.arange(0, half, dtype=np.int64),
                              np.arange(half, n_end + stride, stride, dtype=np.int64)])
    source = getattr(profile, "source", None)
    bounds = getattr(source, "delta_bounds", None)
    if source is not None and callable(bounds):
        # a numeric source that bounds the exact profile on both sides (generalized
        # Gaussian noise): its lower values give the step a lower side (a floor)
        import flint

        V, A, Cv, Ca = (np.empty(pos.size) for _ in range(4))
        d = flint.arb(disc)
        with flint.ctx.workprec(256):
            for i, p in enumerate(pos):
                # at the grid point itself, p times the float disc exactly (a ball of radius
                # 0: 53 + 64 bits at most); the float product p * disc is rounded, either
                # way, and delta(eps) at a rounded-up eps is below delta at the grid point
                lo, up = bounds(flint.arb(int(p)) * d)
                V[i], A[i] = _up(up), _down(lo)
                Cv[i], Ca[i] = _down(1 - up), _up(1 - lo)
        return _monotone(pos, V, A, Cv, Ca)
    if source is not None:
        x = pos * disc
        with np.errstate(over="ignore"):
            up = np.exp(np.asarray(profile.log_delta(x), dtype=np.float64))
        up = np.minimum.accumulate(np.minimum(np.nextafter(up, np.inf) * (1 + 1e-12), 1.0))
        zero = np.zeros_like(up)
        return (pos, up, zero, np.maximum(np.nextafter(1.0 - up, -np.inf), 0.0),
                np.ones_like(up))
    import flint

    from symgdp.evaluation.interval import profile_arb

    f = profile_arb(profile)
    d = flint.arb(disc)
    V = np.empty(pos.size)
    A = np.empty(pos.size)
    Cv = np.empty(pos.size)
    Ca = np.empty(pos.size)
    with flint.ctx.workprec(128):
        # 128 bits: the complements 1 - delta keep their relative precision near 1
        for i, p in enumerate(pos):
            v = f(flint.arb(int(p)) * d)
            V[i], A[i] = _up(v), _down(v)
            Cv[i], Ca[i] = _down(1 - v), _up(1 - v)
    return _monotone(pos, V, A, Cv, Ca)


def _monotone(pos: np.ndarray, V: np.ndarray, A: np.ndarray, Cv: np.ndarray, Ca: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A profile is non-increasing: delta_j <= V_i (i <= j) and delta_j >= A_i (i >= j)."""
    V = np.minimum.accumulate(V)
    A = np.maximum.accumulate(A[::-1])[::-1]
    Cv = np.maximum.accumulate(Cv)
    Ca = np.minimum.accumulate(Ca[::-1])[::-1]
    return pos, V, A, Cv, Ca


def _extended(pos: np.ndarray, V: np.ndarray, A: np.ndarray, Cp: np.ndarray,
              Cap: np.ndarray, disc: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Grid on both signs with upper/lower values of the extended profile,
    delta(-x) = 1 - e^{-x}(1 - delta(x)), the upper (lower) end rounded outward, and
    their complements ``Cv`` (<= 1 - upper value) and ``Ca`` (>= 1 - lower value), from
    the complements ``Cp``/``Cap`` at the positive points: near delta = 1 (every
    negative eps, and the head of a large mu) float64 values keep almost no digits of
    1 - delta, the complements keep them all."""
    import flint

    xs = pos[1:][::-1]
    Cn = np.empty(xs.size)
    Can = np.empty(xs.size)
    d = flint.arb(disc)
    for i, (p, c, ca) in enumerate(zip(xs, Cp[1:][::-1], Cap[1:][::-1], strict=True)):
        e = (-(flint.arb(int(p)) * d)).exp()
        Cn[i] = _down(e * flint.arb(float(c)))
        Can[i] = _up(e * flint.arb(float(ca)))
    # float views of the values (1 - Cn rounded up, 1 - Can rounded down)
    Vn = np.minimum(np.nextafter(1.0 - Cn, np.inf), 1.0)
    An = np.maximum(np.nextafter(1.0 - Can, -np.inf), 0.0)
    return (np.concatenate([-xs, pos]), np.concatenate([Vn, V]),
            np.concatenate([An, A]), np.concatenate([Cn, Cp]), np.concatenate([Can, Cap]))


def _hull(y: np.ndarray, v: np.ndarray, c: np.ndarray | None = None) -> list[int]:
    """Indices of the lower convex hull of (0, 1) and the points (y, v), (0, 1) excluded
    (float64: only a first choice, the masses are then checked in balls).  With ``c``
    (the complements 1 - v, precise where v is near 1), differences of values near 1
    are taken from the complements."""
    hull: list[int] = [-1]
    yy = np.concatenate([[0.0], y])
    vv = np.concatenate([[1.0], v])
    cc = np.concatenate([[0.0], c]) if c is not None else None
    near = (vv > 0.5) if cc is not None else np.zeros(vv.size, dtype=bool)

    def diff(i: int, j: int) -> float:  # v_j - v_i
        if near[i] and near[j]:
            assert cc is not None
            return float(cc[i] - cc[j])
        return float(vv[j] - vv[i])

    for i in range(y.size):
        while len(hull) >= 2:
            a, b = hull[-2] + 1, hull[-1] + 1
            c_ = i + 1
            if diff(a, b) * (yy[c_] - yy[a]) >= diff(a, c_) * (yy[b] - yy[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return hull[1:]


def _value_arb(x: float, c: float) -> Any:
    """The interpolant's exact value at a point: 1 - c at negative eps (c is its
    complement there), x elsewhere (c is NaN)."""
    import flint

    return flint.arb(float(x)) if math.isnan(c) else 1 - flint.arb(float(c))


def _masses(ipos: np.ndarray, vals: np.ndarray, disc: float,
            comp: np.ndarray | None = None) -> tuple[list[Any], Any]:
    """Ball masses y_i (s_i - s_{i-1}) of the interpolant through (0, 1) and the points,
    and its mass at infinity (the last value)."""
    import flint

    arb = flint.arb
    d = arb(disc)
    y = [(arb(int(p)) * d).exp() for p in ipos]
    if comp is None:
        v = [arb(float(x)) for x in vals]
    else:
        v = [_value_arb(x, c) for x, c in zip(vals, comp, strict=True)]
    n = len(y)
    slopes = [(v[0] - 1) / y[0]]
    for i in range(n - 1):
        h = y[i] * (arb(int(ipos[i + 1] - ipos[i])) * d).expm1()
        slopes.append((v[i + 1] - v[i]) / h)
    slopes.append(arb(0))
    masses = [y[i] * (slopes[i + 1] - slopes[i]) for i in range(n)]
    return masses, v[-1]


def _convex_masses(ipos: np.ndarray, vals: np.ndarray, disc: float,
                   comp: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, list[Any], Any]:
    """Drop points until every mass is proved non-negative (any subset is valid)."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = 128
    try:
        while True:
            masses, inf = _masses(ipos, vals, disc, comp)
            bad = [i for i, m in enumerate(masses) if not m >= 0 and i < len(masses) - 1]
            if not bad:
                return ipos, vals, masses, inf
            keep = np.ones(ipos.size, dtype=bool)
            keep[bad[::2]] = False  # never two neighbours at once
            ipos, vals = ipos[keep], vals[keep]
            if comp is not None:
                comp = comp[keep]
    finally:
        flint.ctx.prec = old


_U = 2.0**-52


def _gap(ipos: np.ndarray, disc: float, V: np.ndarray, Cv: np.ndarray, Ca: np.ndarray,
         keep: np.ndarray) -> float:
    r"""Upper bound on :math:`\sup_y (I - \delta^\star)/(1 - \delta^\star)` (module
    notes, lower side); inf when the grid values contradict convexity.

    Worked in complements :math:`C = 1 - \cdot` (``Cv`` <= 1 - the interpolant at the
    points, ``Ca`` >= 1 - the lower values), where the ratio is :math:`1 - (1 - I)/(1 -
    \delta^\star)`: :math:`1 - I` is the chord of the complements between kept points and
    :math:`1 - \delta^\star` is at most every line of the notes (complemented), taken on
    every cell :math:`[y_j, y_{j+1}]` of the whole grid (a chord over dropped points is
    compared with the lines of its own cells).  Near :math:`\delta = 1` (negative
    :math:`\varepsilon`, or a large :math:`\mu`) these complements keep full relative
    precision where the values do not.  A cell is parametrised as :math:`t = y_j(1 + \tau
    w_j)`, :math:`w_j = e^{k\Delta} - 1`, so chord and lines are affine in :math:`\tau \in
    [0, 1]` with coefficients from differences of exact floats, ``exp`` and ``expm1`` (no
    float :math:`y` subtracted).  On each piece between the lines' crossings one line (the
    smallest at the piece's midpoint) bounds :math:`1 - \delta^\star` on the whole piece,
    and the ratio of an affine chord to an affine line is monotone, so the piece's ends
    bound it (whatever the float crossings).  Values carry a float64 error bound of the
    standard model (16u times the sum of the absolute terms): chord down, lines up."""
    u16 = 16.0 * _U
    idx = np.flatnonzero(keep)
    n = ipos.size
    p = ipos.astype(np.float64)
    # left of the first kept point: chord of the complement from (0, 0); 1 - delta* <= t
    a0 = idx[0]
    y0 = math.exp(p[a0] * disc) * (1.0 + 64.0 * _U)
    worst = max(0.0, 1.0 - float(Cv[a0]) * (1.0 - u16) / y0)
    # beyond the last: I = V_m, delta* >= 0
    worst = max(worst, float(V[idx[-1]]) * (1.0 + u16))
    # the cells [j, j+1] between the first and the last kept point, each inside the hull
    # cell [a, b] (kept points a <= j < j + 1 <= b)
    j = np.arange(idx[0], idx[-1])
    if j.size == 0:
        return float(worst * (1.0 + 1e-9) + 4.0 * _U)
    cell_of = np.searchsorted(idx, j, side="right") - 1
    a, b = idx[cell_of], idx[cell_of + 1]
    w = np.expm1((p[j + 1] - p[j]) * disc)
    # chord of the hull cell at t = y_j (1 + tau w): Cv_a + D (t - y_a) / (y_b - y_a)
    W = np.expm1((p[b] - p[a]) * disc)
    D = Cv[b] - Cv[a]
    ej = np.exp((p[j] - p[a]) * disc)
    c0 = Cv[a] + D * (np.expm1((p[j] - p[a]) * disc) / W)
    c1 = D * ej * w / W
    cabs0 = np.abs(Cv[a]) + np.abs(D * np.expm1((p[j] - p[a]) * disc) / W)
    cabs1 = np.abs(c1)
    yj = np.exp(p[j] * disc)
    big = np.inf
    # lines alpha + beta tau with error bounds e0 + e1 tau
    al = [Ca[j + 1], yj]
    be = [np.zeros(j.size), yj * w]
    er0 = [np.zeros(j.size), 64.0 * _U * yj]
    er1 = [np.zeros(j.size), 64.0 * _U * yj * w]
    # through (y[j-1], Cv[j-1]) and (y[j], Ca[j]), to the right
    has = j >= 1
    jm = np.maximum(j - 1, 0)
    E = Ca[j] - Cv[jm]
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = w / -np.expm1(-(p[j] - p[jm]) * disc)
        al.append(np.where(has, Ca[j], big))
        be.append(np.where(has, E * r1, 0.0))
        er0.append(u16 * np.abs(Ca[j]))
        er1.append(np.where(has, u16 * np.abs(E * r1), 0.0))
        # through (y[j+1], Ca[j+1]) and (y[j+2], Cv[j+2]), to the left:
        # Ca[j+1] - F r2 (1 - tau)
        has = j + 2 < n
        jp = np.minimum(j + 2, n - 1)
        F = Cv[jp] - Ca[j + 1]
        r2 = w / ((1.0 + w) * np.expm1((p[jp] - p[j + 1]) * disc))
        Fr = np.where(has, F * r2, 0.0)
        al.append(np.where(has, Ca[j + 1] - Fr, big))
        be.append(Fr)
        er0.append(u16 * (np.abs(Ca[j + 1]) + np.abs(Fr)))
        er1.append(np.zeros(j.size))
    AL, BE = np.stack(al, axis=1), np.stack(be, axis=1)
    ER0, ER1 = np.stack(er0, axis=1), np.stack(er1, axis=1)
    m = AL.shape[1]
    cand = [np.zeros(j.size), np.ones(j.size)]
    with np.errstate(divide="ignore", invalid="ignore"):
        for q in range(m):
            for r in range(q + 1, m):
                t = (AL[:, r] - AL[:, q]) / (BE[:, q] - BE[:, r])
                cand.append(np.where((t > 0.0) & (t < 1.0), t, 1.0))
    T = np.sort(np.stack(cand, axis=1), axis=1)
    rows = np.arange(j.size)
    cell = np.full(j.size, -np.inf)
    for k in range(T.shape[1] - 1):
        t0, t1 = T[:, k], T[:, k + 1]
        mid = 0.5 * (t0 + t1)
        act = np.argmin(AL + BE * mid[:, None], axis=1)
        al_, be_ = AL[rows, act], BE[rows, act]
        e0_, e1_ = ER0[rows, act], ER1[rows, act]
        for t in (t0, t1):
            lhi = al_ + be_ * t + e0_ + e1_ * t + u16 * (np.abs(al_) + np.abs(be_ * t))
            clo = c0 + c1 * t - u16 * (cabs0 + cabs1 * t)
            if np.any(np.isnan(lhi) | np.isnan(clo)):
                return math.inf  # an overflow (exp beyond 709): the gap is not bounded here
            if np.any((lhi <= 0.0) & (clo > 0.0)):
                return math.inf  # 1 - I > 0 >= 1 - delta*: not convex
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(lhi > 0.0, 1.0 - clo / lhi, -np.inf)  # else delta* = I = 1
            cell = np.maximum(cell, ratio)
    finite = np.isfinite(cell)
    if np.any(finite & (cell < -1e-6)):
        return math.inf  # the chord below a proved lower bound of delta*: not convex
    if np.any(finite):
        worst = max(worst, float(cell[finite].max()))
    return float(worst * (1.0 + 1e-9) + 4.0 * _U)


def profile_step(profile: Any, disc: float, bits: int, *, tail: float = 1e-16,
                 max_points: int = 8001, lower: bool = True) -> StepPMFs:
    r"""The integer PMFs of one step of a profile on the grid :math:`\Delta\mathbb Z`
    (module notes): the pessimistic connect-the-dots measure rounded up, the same rounded
    down with its reveal probability :math:`g` for the lower side.

    Example:
        >>> from symgdp import mechanisms
        >>> s = profile_step(mechanisms.laplace(0.5), 0.05, 80)
        >>> s.remove.total() + s.remove.inf >= 1 << 80, s.g < 1e-3
        (True, True)
    """
    pos, V, A, Cp, Cap = grid_values(profile, disc, tail, max_points)
    ipos, Ve, Ae, Cv, Ca = _extended(pos, V, A, Cp, Cap, disc)
    y = np.exp(ipos * disc)
    # the interpolant passes through 1 - Cv exactly where that is at least 1/2 (values
    # near 1 keep their digits there), through the float Ve elsewhere (NaN in comp);
    # there Cv is the float complement of Ve rounded down, so Cv <= 1 - I everywhere
    near = Cv <= 0.5
    comp = np.where(near, Cv, np.nan)
    Cv = np.where(near, Cv, np.maximum(np.nextafter(1.0 - Ve, -np.inf), 0.0))
    Ve = np.where(near, np.minimum(np.nextafter(1.0 - Cv, np.inf), 1.0), Ve)
    h = _hull(y, Ve, Cv)
    kpos, kval, masses, inf = _convex_masses(ipos[h], Ve[h], disc, comp[h])
    lo = int(kpos[0])
    size = int(kpos[-1]) - lo + 1
    up_int = [0] * size
    low_int = [0] * size
    for p, m in zip(kpos, masses, strict=True):
        up_int[int(p) - lo] = arb_ceil(m, bits)
        low_int[int(p) - lo] = arb_floor(m, bits)
    upper = int_pmf(disc, lo, up_int, arb_ceil(inf, bits), bits)
    if not lower or not np.any(Ae > 0):
        return StepPMFs(upper, upper, None, math.inf)
    keep = np.isin(ipos, kpos)
    # a lower value above the interpolant proves the profile is not convex in e^eps: no
    # mechanism has it, and there is no lower side
    interp = np.interp(y, np.concatenate([[0.0], y[keep]]), np.concatenate([[1.0], Ve[keep]]))
    g = (math.inf if np.any(Ae > interp * (1 + 1e-12) + 1e-15)
         else _gap(ipos, disc, Ve, Cv, Ca, keep))
    low = int_pmf(disc, lo, low_int, arb_floor(inf, bits), bits, up=False)
    return StepPMFs(upper, upper, low, g)
