r"""Random allocation with amplification: a certified upper bound on the profile of DP-SGD
whose records each land in exactly one uniformly random step of each epoch.

:func:`symgdp.dpsgd` with ``sampling="random_allocation"`` (add/remove) takes the smaller of
two proved upper profiles: the bound without amplification (each epoch one use of the
Gaussian, :mod:`symgdp.training.sampling`) and the one of this module, which keeps the
amplification.  Clipping norm 1, noise multiplier :math:`\sigma`, :math:`t` steps per epoch,
:math:`E` epochs.

**The pair of one epoch.**  With :math:`e_j` the unit vectors of :math:`\mathbb R^t`,

.. math:: P_t = \frac1t\sum_{j=1}^t N(e_j, \sigma^2 I_t), \qquad Q_t = N(0, \sigma^2 I_t),

the pair of Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha & Zhang,
"Balls-and-Bins Sampling for DP-SGD" (AISTATS 2025, arXiv:2412.16802, Section 3), analysed by
Feldman & Shenfeld, "Privacy amplification by random allocation" (2025, arXiv:2502.08202).
What is used is proved here in full.  Under :math:`Q_t` the likelihood ratio is

.. math:: S = \frac{dP_t}{dQ_t}(y) = \frac1t\sum_j X_j,\qquad
   X_j = e^{(y_j - 1/2)/\sigma^2},

the :math:`X_j` independent, :math:`\log X_j \sim N(-1/(2\sigma^2), 1/\sigma^2)`,
:math:`\mathbb E X_j = 1`.  Both directions are expectations of convex functions of
:math:`S` under :math:`Q_t`: :math:`\delta_{P\|Q}(\varepsilon) = \mathbb E[(S -
e^\varepsilon)_+]` (remove) and :math:`\delta_{Q\|P}(\varepsilon) = \mathbb E[(1 -
e^\varepsilon S)_+]` (add); over :math:`E` epochs, :math:`\mathbb E[(\prod_e S_e -
e^\varepsilon)_+]` and :math:`\mathbb E[(1 - e^\varepsilon\prod_e S_e)_+]`, convex in each
:math:`S_e`.

**Theorem 1 (the pair dominates the trainer, add/remove).**  For every :math:`\varepsilon`
the profile of DP-SGD with random allocation (adaptive gradients, any data) is at most the
larger of the two :math:`E`-fold expressions above.  The trainer assumed: each record's
step is drawn uniformly and independently of the other records' (balls in bins, not a
shuffle cut into fixed batches), each step releases the sum of its records' clipped
gradients plus :math:`N(0, \sigma^2 I)` (scaled by a fixed constant, not by the realised
batch size), and the model is post-processing of these sums.

*Proof.*  Fix the other records' allocations (the hockey-stick divergence is jointly convex,
and they are drawn the same way on both data sets).  Subtracting what the other records
contribute at each step (a function of the past outputs) is invertible post-processing, so
under the smaller data set the outputs are i.i.d. :math:`N(0, \sigma^2 I)` and under the
larger one step :math:`J` (uniform) also gets the record's clipped gradient :math:`v_J`,
:math:`\|v_j\| \le 1`, :math:`v_j` a function of the outputs before step :math:`j`.  The
likelihood ratio of the epoch is :math:`\frac1t\sum_j X'_j` with
:math:`X'_j = e^{(\langle v_j, y_j\rangle - \|v_j\|^2/2)/\sigma^2}`; given the past,
:math:`X'_j` is lognormal with mean 1 and log-variance :math:`\|v_j\|^2/\sigma^2 \le
1/\sigma^2`, which is below :math:`X_j` in the convex order (:math:`X_j = X'_j X''` with an
independent mean-1 lognormal :math:`X''` is a martingale coupling).  Going backwards over the
steps of all epochs, each conditional expectation of a function convex in the step's term is
at most the same expectation with :math:`X_j` in its place, and the result is again convex in
the earlier terms (an average of convex functions). :math:`\square`

**Theorem 2 (a certified law of S).**  Let :math:`\hat Q` be a measure on
:math:`\{0\} \cup \{e^{i\Delta}\}` with :math:`\hat Q \ge Q^*` entrywise, where :math:`Q^*`
arises from the law of :math:`S` by restricting to the event :math:`A` that no coordinate
exceeds :math:`y_{max}` and then by mean-preserving spreads, and let the :math:`Q`-mass and
the :math:`P`-mass of the complement be put at :math:`S = 0` and at :math:`S = +\infty`
(loss :math:`+\infty`).  Then the PLD of :math:`(\hat P, \hat Q)` with
:math:`\hat P(s) = s\hat Q(s)` bounds both directions' :math:`E`-fold profiles from above.

*Proof.*  Splitting the pair on :math:`A^c` into a :math:`P`-only and a :math:`Q`-only atom
gives a pair from which the original is recovered by post-processing (each atom outputs a
draw of the pair's restriction to :math:`A^c`).  Mean-preserving spreads of the law of
:math:`S` under :math:`Q` do not decrease the expectation of a function convex in :math:`S`
(Jensen, epoch by epoch), and both directions' integrands are non-negative, so entrywise
larger masses do not decrease them either. :math:`\square`

**The spreads** (one epoch, :math:`S = \frac1t\sum_j X_j`).  The law of :math:`X` on the
event is split cell by cell onto the grid points :math:`e^{i\Delta}` keeping each cell's mass
and mean (the cell masses and means are Gaussian tails, :math:`\mathbb E[X; a < Y \le b] =
\Phi((b - 1)/\sigma) - \Phi((a - 1)/\sigma)`, in ball arithmetic); the mass below the
grid goes to :math:`\{0, e^{i_0\Delta}\}` keeping its mean.  Averages of blocks,
:math:`S_k = \frac{k_1}{k}S_{k_1} + \frac{k_2}{k}S_{k_2}` (:math:`k_1 = \lfloor k/2\rfloor`),
are formed pair of grid points by pair of grid points, each value split onto its two
neighbouring grid points keeping its mean; each block's grid is coarser by a power of 2 than
the final one when it averages few steps (its spread is divided by the later averaging); the
mass of a block below :math:`e^{-1/(2\sigma^2) - 13/(\sigma\sqrt k)}` (below the geometric
mean's :math:`13`-sigma point: at most :math:`\Phi(-13)` by the inequality of arithmetic and
geometric means) is spread onto :math:`\{0, \text{that point}\}`.  The split weights are balls
(python-flint ``arb``, 200 bits) rounded to float64; the masses are float64 products and sums
of non-negative terms, so each computed mass is within a relative :math:`(N + 8)2^{-52}` of
its exact value (:math:`N` the additions into it) plus what underflows or is flushed below
:math:`10^{-120}`: the computation carries a relative bound :math:`\rho` and an absolute
residual :math:`R` (mass whose place is unknown), and :math:`\hat Q = (1 + \rho)\tilde Q`,
with :math:`R` added to both atoms (:math:`R\,e^{i_{max}\Delta}` to the :math:`P`-atom).
The :math:`E`-fold composition is the DP-SGD engine's exact integer composition
(:mod:`symgdp.training.engine`, both directions composed).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError

__all__ = ["EpochLaw", "epoch_law", "allocation_upper", "allocation_grid", "grid_top",
           "plan_blocks", "grid_power", "cell_cdfs", "on_finer_grid", "diagonals",
           "THEOREM"]

#: where the pair comes from, in words
THEOREM = ("amplified: the dominating pair of one epoch of random allocation (Chua et al. 2025, "
           "balls-and-bins, arXiv:2412.16802; Feldman & Shenfeld 2025, arXiv:2502.08202), "
           "its likelihood ratio's law certified by mean-preserving spreads")

_U = 2.0**-52
_PREC = 200            # bits of the split weights' balls (more on grids finer than 2^-13)
_RAD = 2.0**-182       # the largest radius of a split weight's ball the residual allows
_FLUSH = 1e-120        # computed masses below this are flushed into the residual
_ZLO = 13.0            # the lower cut of a block, in standard deviations of its mean log
_MAX_POINTS = 60_000   # a block on more grid points than this is refused
_COARSEST = 6          # blocks of few steps use grids up to 2^6 times coarser


@dataclass(frozen=True)
class EpochLaw:
    r"""An upper bound on the (spread) law of one epoch's likelihood ratio :math:`S` under
    :math:`Q` (module notes): ``q[i]`` bounds the mass at :math:`e^{(lower + i)\Delta}`,
    ``zero`` the mass at :math:`S = 0` (with the event's complement and the residual),
    ``p_inf`` the :math:`P`-mass at :math:`S = +\infty`."""

    disc: float
    lower: int
    q: np.ndarray
    zero: float
    p_inf: float
    steps: int
    sigma: float


@dataclass
class _Block:
    k: int          # steps averaged
    r: int          # grid step r * disc
    lo: int         # exponent (units r * disc) of m[0]
    m: np.ndarray   # computed masses
    zero: float     # computed mass at S = 0
    rho: float      # exact <= (1 + rho) * computed, entrywise (plus the residual)
    res: float      # residual: total mass of unknown place


def _check_int(name: str, value: Any, low: int) -> int:
    """An integer >= low (2.5 epochs are not 2, and True is not 1): else a DomainError."""
    ok = not isinstance(value, bool) and isinstance(value, (int, np.integer))
    if not ok and isinstance(value, float) and value.is_integer():
        ok, value = True, int(value)
    if not ok or int(value) < low:
        what = "at least 2 steps per epoch" if name == "steps" else f"{name} >= {low}"
        raise DomainError(f"random allocation needs {what} (an integer), got {value!r}")
    return int(value)


def _check_sigma(sigma: Any) -> float:
    """sigma finite and > 0, with 1/sigma^2 finite in float64 (else a DomainError)."""
    try:
        s = float(sigma)
    except (TypeError, ValueError):
        raise DomainError(f"sigma must be finite and > 0, got {sigma!r}") from None
    if not (math.isfinite(s) and s > 0):
        raise DomainError(f"sigma must be finite and > 0, got {sigma!r}")
    if not (s * s > 0 and math.isfinite(s * s)):
        raise DomainError(f"sigma={sigma!r} is outside what float64 can square (sigma too "
                          "small or too large for the certified amplified bound)")
    return s


def _up(x: float, k: int = 1) -> float:
    for _ in range(k):
        x = float(np.nextafter(x, np.inf))
    return x


def grid_power(t: int, k: int) -> int:
    """log2 of how much coarser than the final grid the grid of a block of k steps is."""
    return max(0, min(_COARSEST, int(math.floor(0.5 * math.log2(t / k))))) if k < t else 0


def _cut(sigma: float, k: int, disc: float, r: int) -> int:
    """The lower cut of a block of k steps (exponent in units r * disc, rounded down)."""
    x = -1.0 / (2.0 * sigma * sigma) - _ZLO / (sigma * math.sqrt(k))
    return int(math.floor(x / (r * disc))) - 1


def _prec(step: float) -> int:
    """Bits of the split weights' balls on a grid of this step: their radius grows like
    1/step^2 (a logarithm divided by the step, then an expm1 divided by the step's), so a
    grid finer than the default's finest, 2^-13, gets two bits more per halving."""
    return _PREC + 2 * max(0, math.ceil(-math.log2(step)) - 13)


def _split(ratio: Any, step: Any) -> tuple[int, float, float]:
    """(o, w_lo, w_hi): the split of the point ``ratio`` (a ball, > 0) onto its neighbours
    e^{o step} <= ratio <= e^{(o+1) step} keeping the mean (w_lo + w_hi = 1 and
    w_lo e^{o step} + w_hi e^{(o+1) step} = ratio), the weights rounded to float64."""
    import flint

    lr = ratio.log() / step
    o = math.floor(float(lr.mid()))
    for _ in range(3):
        w_hi = ((lr - o) * step).expm1() / step.expm1()
        if w_hi.lower() < -1e-40:
            o -= 1
        elif w_hi.upper() > 1 + 1e-40:
            o += 1
        else:
            break
    else:  # pragma: no cover - a ratio whose logarithm the balls cannot place
        raise DomainError(f"cannot place the ratio {ratio} on the grid")
    w_lo = flint.arb(1) - w_hi
    # each weight is off by at most its radius (absolute) besides its float64 rounding: the
    # residual of _combine budgets 2^-180 for the two weights of a pair
    rad = max(float(w_hi.rad()), float(w_lo.rad()))
    if not rad <= _RAD:
        raise DomainError(f"internal: a split weight's ball has radius {rad!r}, above the "
                          f"{_RAD!r} the error bound of random allocation assumes")
    hi = min(max(float(w_hi.mid()), 0.0), 1.0)
    lo = min(max(float(w_lo.mid()), 0.0), 1.0)
    return o, lo, hi


@functools.lru_cache(maxsize=64)
def _weights(alpha_num: int, alpha_den: int, r_in: int, r_out: int, disc: float,
             dmin: int, dmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""For d in [dmin, dmax]: the split of :math:`\alpha e^{d r_{in}\Delta} + (1 -
    \alpha)` on the grid of step :math:`r_{out}\Delta`: (offsets, w_lo, w_hi)."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = _prec(disc * r_out)
    try:
        a = flint.arb(alpha_num) / alpha_den
        b = flint.arb(1) - a
        din = flint.arb(disc) * r_in
        dout = flint.arb(disc) * r_out
        n = dmax - dmin + 1
        off = np.empty(n, dtype=np.int64)
        wl = np.empty(n)
        wh = np.empty(n)
        for idx, d in enumerate(range(dmin, dmax + 1)):
            o, lo, hi = _split(a * (din * d).exp() + b, dout)
            off[idx], wl[idx], wh[idx] = o, lo, hi
    finally:
        flint.ctx.prec = old
    return off, wl, wh


def _scalar_split(ratio_num: int, ratio_den: int, r_out: int, disc: float
                  ) -> tuple[int, float, float]:
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = _prec(disc * r_out)
    try:
        return _split(flint.arb(ratio_num) / ratio_den, flint.arb(disc) * r_out)
    finally:
        flint.ctx.prec = old


@functools.lru_cache(maxsize=64)
def _fold_weights(n: int, r: int, disc: float) -> np.ndarray:
    r""":math:`e^{-i r\Delta}` for i = 1..n (the share of a mass i steps below the cut that
    goes to the cut point), each rounded to float64."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        step = flint.arb(disc) * r
        return np.asarray([min(float((-step * i).exp().mid()), 1.0) for i in range(1, n + 1)])
    finally:
        flint.ctx.prec = old


def _first_block(sigma: float, t: int, disc: float, top: int, p: int) -> _Block:
    """The law of X on the event (no coordinate above y_max), spread onto the grid of step
    2^p disc, in balls."""
    import flint

    r = 1 << p
    lo = _cut(sigma, 1, disc, r)
    hi = top // r
    n = hi - lo + 1
    if n > _MAX_POINTS:
        raise DomainError(f"random allocation with sigma={sigma!r}: one step's likelihood "
                          f"ratio needs {n} grid points (sigma too small for the certified "
                          "amplified bound)")
    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        cell = cell_cdfs(sigma, disc * r)

        def cdfs(i: int) -> tuple[Any, Any, Any]:
            return (*cell(i), (flint.arb(disc) * r * i).exp())

        m = [flint.arb(0)] * n
        prev = cdfs(lo)
        # below the grid: mass F0, mean E0, onto {0, g_lo}
        f0, e0, g0 = prev
        zero = f0 - e0 / g0
        m[0] = e0 / g0
        for i in range(n - 1):
            cur = cdfs(lo + i + 1)
            mass, mean = cur[0] - prev[0], cur[1] - prev[1]
            ga, gb = prev[2], cur[2]
            width = gb - ga
            m[i] += (gb * mass - mean) / width
            m[i + 1] += (mean - ga * mass) / width
            prev = cur
        masses = np.asarray([_up(max(float(v.upper()), 0.0)) for v in m])
        z = _up(max(float(zero.upper()), 0.0))
    finally:
        flint.ctx.prec = old
    return _Block(1, r, lo, masses, z, 0.0, 0.0)


def cell_cdfs(sigma: float, step: float) -> Any:
    r"""``i -> (Q(X <= x_i), E_Q[X; X <= x_i])`` at the grid point :math:`x_i = e^{i\,
    step}` of one step's :math:`X = e^{(Y - 1/2)/\sigma^2}`, :math:`Y \sim N(0,
    \sigma^2)`: :math:`\Phi(y/\sigma)` and :math:`\Phi((y - 1)/\sigma)` with
    :math:`y = \sigma^2 i\,step + 1/2` (balls at the caller's precision)."""
    import flint

    s = flint.arb(sigma)
    s2, rt, half = s * s, s * flint.arb(2).sqrt(), flint.arb(1) / 2
    st = flint.arb(step)

    def cdfs(i: int) -> tuple[Any, Any]:
        y = s2 * st * i + half
        return (-(y / rt)).erfc() * half, (-((y - 1) / rt)).erfc() * half

    return cdfs


def on_finer_grid(values: np.ndarray, f: int) -> np.ndarray:
    """Masses on a grid ``f`` times finer (every old point is a new point: exact)."""
    out = np.zeros((values.size - 1) * f + 1)
    out[::f] = values
    return out


def diagonals(a_lo: int, na: int, b_lo: int, nb: int, s: int) -> Any:
    """The pairs (i, j) of two blocks' grid points by d = (a_lo + i) - (b_lo + j): for each d
    (from the smallest) with pairs, ``(idx, i0, j0, n, e0)``: the pairs are (i0 + m, j0 + m)
    for m < n, and e0 = (b_lo + j0) s the output exponent of the first before its offset."""
    dmin = a_lo - (b_lo + nb - 1)
    for idx, d in enumerate(range(dmin, a_lo + na - b_lo)):
        j0 = max(0, a_lo - b_lo - d)
        j1 = min(nb - 1, a_lo + na - 1 - b_lo - d)
        if j1 >= j0:
            yield idx, j0 + b_lo + d - a_lo, j0, j1 - j0 + 1, (b_lo + j0) * s


def _refine(b: _Block, r: int) -> _Block:
    """The same block on a finer grid."""
    if b.r == r:
        return b
    f = b.r // r
    return _Block(b.k, r, b.lo * f, on_finer_grid(b.m, f), b.zero, b.rho, b.res)


def _combine(a: _Block, b: _Block, sigma: float, disc: float, p_out: int) -> _Block:
    r"""The law of :math:`(k_a S_a + k_b S_b)/(k_a + k_b)` for independent blocks, each value
    split onto its neighbouring points of the grid of step :math:`2^{p}\Delta` keeping its
    mean, the part below the block's cut spread onto {0, cut}."""
    k = a.k + b.k
    r_in = min(a.r, b.r)
    a, b = _refine(a, r_in), _refine(b, r_in)
    r_out = 1 << p_out
    if r_in % r_out:
        raise DomainError("internal: a block's grid must refine the grids it combines")
    s = r_in // r_out
    na, nb = a.m.size, b.m.size
    dmin, dmax = a.lo - (b.lo + nb - 1), a.lo + na - 1 - b.lo
    off, wl, wh = _weights(a.k, k, r_in, r_out, disc, dmin, dmax)
    oa, la, ha = _scalar_split(a.k, k, r_out, disc)   # a's mass with b at 0: ratio k_a / k
    ob, lb, hb = _scalar_split(b.k, k, r_out, disc)   # b's mass with a at 0
    # exponents (units r_out) reached: from min over pairs to max + 1
    emin = min(int(np.min(off)) + b.lo * s, a.lo * s + oa, b.lo * s + ob)
    emax = max(int(np.max(off)) + (b.lo + nb - 1) * s, (a.lo + na - 1) * s + oa,
               (b.lo + nb - 1) * s + ob) + 1
    out = np.zeros(emax - emin + 1)
    with np.errstate(under="ignore"):
        for idx, i0, j0, n, e0 in diagonals(a.lo, na, b.lo, nb, s):
            prod = a.m[i0:i0 + n] * b.m[j0:j0 + n]
            base = e0 + int(off[idx]) - emin
            stop = base + (n - 1) * s + 1
            out[base:stop:s] += prod * wl[idx]
            out[base + 1:stop + 1:s] += prod * wh[idx]
        # the atoms at 0
        if a.zero:
            base = b.lo * s + ob - emin
            stop = base + (nb - 1) * s + 1
            out[base:stop:s] += a.zero * b.m * lb
            out[base + 1:stop + 1:s] += a.zero * b.m * hb
        if b.zero:
            base = a.lo * s + oa - emin
            stop = base + (na - 1) * s + 1
            out[base:stop:s] += b.zero * a.m * la
            out[base + 1:stop + 1:s] += b.zero * a.m * ha
    zero = a.zero * b.zero
    n_adds = 2 * (off.size + 2)
    # the cut: mass below exponent c spread onto {0, e^{c r_out disc}}
    c = _cut(sigma, k, disc, r_out)
    folded = 0
    flushed_extra = 0.0
    if emin < c:
        below = out[:c - emin]
        w = _fold_weights(below.size, r_out, disc)[::-1]   # e^{-(c - e) step}
        to_cut = math.fsum(below * w)
        # (1 - w) by difference: off by at most a few ulps of the sum, into the residual
        zero += max(math.fsum(below) - to_cut, 0.0)
        flushed_extra = 4.0 * _U * math.fsum(below)
        out = out[c - emin:].copy()
        out[0] += to_cut
        folded = below.size
        emin = c
    # flush what is below _FLUSH, trim the ends
    small = out < _FLUSH
    flushed = math.fsum(out[small])
    out[small] = 0.0
    nz = np.flatnonzero(out)
    if nz.size == 0:
        raise DomainError("internal: a block of random allocation lost all its mass")
    out = out[nz[0]:nz[-1] + 1]
    lo = emin + int(nz[0])
    if out.size > _MAX_POINTS:
        raise DomainError(f"random allocation with sigma={sigma!r}: a block of {k} steps needs "
                          f"{out.size} grid points (sigma too small for the certified "
                          "amplified bound)")
    # error bounds: each computed mass is a sum of at most n_adds + folded + 2 roundings of
    # non-negative terms, each term two products off by a relative 2^-53 and a weight off
    # by a relative 2^-53 and an absolute 2^-190 (the ball's radius)
    eta = (n_adds + folded + 16) * _U
    grow = (1.0 + a.rho) * (1.0 + b.rho) * (1.0 + eta)
    rho = _up(grow - 1.0 + 4 * _U, 2)
    ma, mb = math.fsum(a.m) + a.zero, math.fsum(b.m) + b.zero
    absolute = grow * (ma * mb * 2.0**-180 + 4.0 * (na + 1) * (nb + 1) * 2.0**-1070)
    res = (absolute + a.res * (1 + b.rho) * mb + b.res * (1 + a.rho) * ma + a.res * b.res
           + flushed + flushed_extra) * (1 + 1e-9)
    return _Block(k, r_out, lo, out, zero, rho, _up(res, 2))


def plan_blocks(t: int) -> list[int]:
    """The block sizes to build, smallest first: k from t by halving."""
    sizes = {t}
    frontier = [t]
    while frontier:
        k = frontier.pop()
        if k > 1:
            for c in (k // 2, k - k // 2):
                if c not in sizes:
                    sizes.add(c)
                    frontier.append(c)
    return sorted(sizes)


def grid_top(sigma: float, t: int, disc: float, tail: float) -> int:
    r"""The top grid index (units :math:`\Delta`, a multiple of :math:`2^6`) of one step's
    :math:`X`: :math:`x_{max} = e^{top\,\Delta}`, i.e. :math:`y_{max} = \sigma^2 top\,\Delta
    + 1/2`, with the :math:`P`-mass of some coordinate above :math:`y_{max}` at most
    about ``tail``."""
    from scipy.special import ndtri

    z = float(-ndtri(tail / (2.0 * t)))
    unit = disc * (1 << _COARSEST)
    return (1 << _COARSEST) * math.ceil(((1.0 + sigma * z) - 0.5) / (sigma * sigma) / unit)


def allocation_grid(sigma: float, t: int) -> float:
    r"""The default grid step :math:`\Delta` of the epoch's log-likelihood ratio: a
    fortieth of its standard deviation :math:`\sqrt{(e^{1/\sigma^2} - 1)/t}`, as a power of
    2 in [2^-13, 2^-8] (it only sets tightness and cost)."""
    sd = math.sqrt(math.expm1(min(1.0 / (sigma * sigma), 700.0)) / t)
    target = min(max(sd / 40.0, 2.0**-13), 2.0**-8)
    return 2.0 ** math.floor(math.log2(target))


@functools.lru_cache(maxsize=8)
def epoch_law(sigma: float, t: int, disc: float, tail: float = 1e-18) -> EpochLaw:
    r"""A certified upper bound on the law of one epoch's likelihood ratio (module notes):
    ``t`` steps of noise multiplier ``sigma``, grid :math:`e^{i\Delta}`, the event's
    complement of :math:`P`-mass at most about ``tail``.

    Example:
        >>> law = epoch_law(2.0, 4, 2.0**-9)
        >>> bool(abs(float(np.sum(law.q)) + law.zero - 1.0) < 1e-6)
        True
    """
    import flint

    s = _check_sigma(sigma)
    t = _check_int("steps", t, 2)
    top = grid_top(s, t, disc, tail)
    y_max_num = top  # y_max = sigma^2 top disc + 1/2 (exact in balls)
    plan = plan_blocks(t)
    blocks: dict[int, _Block] = {}
    for k in plan:
        if k == 1:
            blocks[1] = _first_block(s, t, disc, y_max_num, grid_power(t, 1))
            continue
        blocks[k] = _combine(blocks[k // 2], blocks[k - k // 2], s, disc, grid_power(t, k))
    fin = blocks[t]
    if fin.r != 1:
        raise DomainError("internal: the epoch's block must be on the final grid")
    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        sa = flint.arb(s)
        rt = sa * flint.arb(2).sqrt()
        half = flint.arb(1) / 2
        y = sa * sa * flint.arb(disc) * top + half
        phi_bar = (y / rt).erfc() * half              # P(Y > y_max) under Q
        phi_bar1 = ((y - 1) / rt).erfc() * half       # under the shifted coordinate
        # complement of the event: Q <= t phi_bar, P <= phi_bar1 + (t - 1) phi_bar
        q_out = _up(float((phi_bar * t).upper()), 2)
        p_out = _up(float((phi_bar1 + phi_bar * (t - 1)).upper()), 2)
        # the residual's place is unknown: at most the largest value on the event
        x_top = _up(float((flint.arb(disc) * top).exp().upper()), 2)
    finally:
        flint.ctx.prec = old
    scale = _up(1.0 + fin.rho, 2)
    q = fin.m * scale
    q = np.nextafter(q, np.inf)
    zero = _up((fin.zero * scale + q_out + fin.res) * (1 + 4 * _U), 2)
    p_inf = _up((p_out + fin.res * x_top) * (1 + 4 * _U), 2)
    return EpochLaw(disc, fin.lo, q, zero, p_inf, t, s)


def _int_pmfs(law: EpochLaw, bits: int) -> tuple[Any, Any]:
    """The remove and add one-epoch IntPMFs (masses rounded up to 2^-bits)."""
    from symgdp.pld.pmf import int_pmf

    n = law.q.size
    i = np.arange(n, dtype=np.float64) + law.lower
    # e^{i disc} rounded up: float64 exp with a generous margin over its error (<= 1 ulp)
    g = np.exp(i * law.disc) * (1.0 + 2.0**-40)
    with np.errstate(under="ignore"):
        p = law.q * g * (1.0 + 2.0**-40)
    scale = float(2**bits)
    p_int = [int(v) for v in np.ceil(p * scale)]
    q_int = [int(v) for v in np.ceil(law.q * scale)]
    p_inf = int(math.ceil(law.p_inf * scale)) + 1
    q_inf = int(math.ceil(law.zero * scale)) + 1
    rem = int_pmf(law.disc, law.lower, p_int, p_inf, bits)
    add = int_pmf(law.disc, -(law.lower + n - 1), q_int[::-1], q_inf, bits)
    return rem, add


@dataclass(frozen=True)
class AllocationUpper:
    """The amplified upper profile of random allocation and what it was made from."""

    profile: Any
    disc: float
    steps: int
    epochs: int
    sigma: float
    law: EpochLaw


def allocation_upper(sigma: float, steps: int, epochs: int, failure_prob: float = 1e-10,
                     disc: float | None = None) -> AllocationUpper:
    r"""A certified upper profile of DP-SGD with random allocation under add/remove
    (``steps`` per epoch, ``epochs``; module notes), as a numeric
    :class:`~symgdp.profile.Profile` (both directions composed).

    Example:
        >>> up = allocation_upper(2.0, 4, 2)
        >>> from symgdp import delta_mu
        >>> # below the Gaussian without amplification, sqrt(2)/2-GDP
        >>> bool(up.profile(1.0) < delta_mu(1.0, 2**0.5 / 2, rounding="nearest"))
        True
    """
    from symgdp.pld.curves import curves_source
    from symgdp.profile import Profile
    from symgdp.training.engine import _Tracked, compose_phases, one_step_tail, scale_for

    s = _check_sigma(sigma)
    t = _check_int("steps", steps, 2)
    e = _check_int("epochs", epochs, 1)
    if disc is None:
        d = allocation_grid(s, t)
    else:
        d = float(disc)
        if not (math.isfinite(d) and 0 < d <= 1):
            raise DomainError(f"disc must lie in (0, 1], got {disc!r}")
    tail = min(one_step_tail(failure_prob, e), 1e-18)
    law = epoch_law(s, t, d, tail)
    bits, cut = scale_for(((1.0, s, e),), "add_remove", float(law.q.size) * math.sqrt(e))
    rem, add = _int_pmfs(law, bits)
    pmfs = []
    for pmf in (rem, add):
        acc, _ = compose_phases([(_Tracked(pmf), e, 0.0)], cut, bits > 80 or cut < 1e-19)
        pmfs.append(acc.pmf)
    src = curves_source([p.curve() for p in pmfs])
    prof = Profile.from_source(src, name="random allocation (amplified, certified PLD)",
                               discretization=d)
    return AllocationUpper(prof, d, t, e, s, law)
