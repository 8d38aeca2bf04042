r"""Random allocation, tight: a certified lower bound on the profile of one epoch's pair,
hence on the trainer's (the pair is attained), beside the upper bound of
:mod:`symgdp.training.allocation_upper`.

Under add/remove the pair :math:`P_t = \frac1t\sum_j N(e_j, \sigma^2 I_t)`,
:math:`Q_t = N(0, \sigma^2 I_t)` dominates one epoch of random allocation
(:mod:`symgdp.training.allocation_upper`, Theorem 1) and is attained by it with fixed
gradients (:mod:`symgdp.training.allocation_floor`: every other record's gradient 0, the
record's a fixed unit vector; the projection on it is post-processing).  So the
mechanism's profile over :math:`E` epochs *is* the pair's, and a lower bound on the pair's
profile is a floor on the mechanism's :math:`\mu`.

**Theorem (the contracted law).**  Let :math:`\mathcal G` be any :math:`\sigma`-algebra and
:math:`\bar S = \mathbb E[S \mid \mathcal G]` (a mean-preserving contraction of the
likelihood ratio :math:`S` under :math:`Q`).  Then for every :math:`\varepsilon` the
:math:`E`-fold remove profile of the pair is at least
:math:`\mathbb E[(\prod_e \bar S_e - e^\varepsilon)_+]` (Jensen, epoch by epoch: the
integrand is convex in each :math:`S_e`), and it does not grow when mass is removed or
moved to smaller :math:`\bar S`.

*The contraction computed.*  One step's :math:`X` is grouped by the cells of the grid
:math:`e^{i\Delta}` (the event that no coordinate exceeds :math:`y_{max}`; the rest is
dropped) and each group replaced by its mass and mean (Gaussian tails in ball arithmetic,
rounded down); averages of blocks group the pairs of atoms by the grid point below the
smallest value their pair can take, keeping each group's mass and first moment (a
conditional expectation given a function of the parts: still a contraction).  Masses and
moments are float64 sums of non-negative products: each is within a relative
:math:`\rho` of its exact value, so masses are divided by :math:`1 + \rho` and positions
(moment over mass) scaled by :math:`(1 - \rho)/(1 + \rho)`: less mass, smaller positions.
The atoms then go through the DP-SGD engine's connect-the-dots and exact integer
composition over the epochs, and its floor theorem (:mod:`symgdp.training.engine`, the
Bernstein bound on the connect-the-dots displacement) gives a proven lower bound on the
contracted law's profile, hence on the mechanism's.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.training.allocation_upper import (
    allocation_grid,
    cell_cdfs,
    diagonals,
    grid_power,
    grid_top,
    on_finer_grid,
    plan_blocks,
)

__all__ = ["PairFloor", "pair_floor"]

_U = 2.0**-52
_PREC = 200
_FLUSH = 1e-200
_ZLO = 13.0
#: the most grid cells of one step's law, or grid points of one epoch's (else refused)
_MAX_CELLS = 1 << 22


@dataclass
class _Atoms:
    k: int
    r: int           # grid step r * disc
    lo: int          # index of m[0] (units r * disc): the group's grid point
    m: np.ndarray    # masses (computed)
    mom: np.ndarray  # first moments (computed)
    rho: float       # computed within a relative rho of the exact (masses and moments)


def _lower_cut(sigma: float, k: int, disc: float, r: int) -> int:
    x = -1.0 / (2.0 * sigma * sigma) - _ZLO / (sigma * math.sqrt(k))
    return int(math.floor(x / (r * disc))) - 1


def _first(sigma: float, disc: float, top: int, r: int) -> _Atoms:
    """X on the event, grouped by the cells of the grid of step r disc: mass and mean of
    each cell, rounded down (ball arithmetic); the cells below the cut dropped."""
    import flint

    lo = _lower_cut(sigma, 1, disc, r)
    hi = top // r
    n = hi - lo
    if n > _MAX_CELLS:  # a user's grid far finer than the default (at most ~4e4 cells)
        raise DomainError(f"the pair floor's grid is too fine: {n} cells of one step's law")
    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        cdfs = cell_cdfs(sigma, disc * r)

        prev = cdfs(lo)
        m, mom = np.zeros(n), np.zeros(n)
        for i in range(n):
            cur = cdfs(lo + i + 1)
            m[i] = max(float((cur[0] - prev[0]).lower()), 0.0)
            mom[i] = max(float((cur[1] - prev[1]).lower()), 0.0)
            prev = cur
    finally:
        flint.ctx.prec = old
    m = np.nextafter(m, 0.0)
    mom = np.nextafter(mom, 0.0)
    # each within a few ulps below its exact value
    return _Atoms(1, r, lo, m, mom, 8 * _U)


@functools.lru_cache(maxsize=64)
def _lower_offsets(alpha_num: int, alpha_den: int, r_in: int, r_out: int, disc: float,
                   dmin: int, dmax: int) -> np.ndarray:
    r"""For d in [dmin, dmax]: the grid index (step :math:`r_{out}\Delta`) at or below
    :math:`\log(\alpha e^{d r_{in}\Delta} + 1 - \alpha)` (any index is valid: it only
    groups atoms; this one groups pairs of similar values)."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = 80
    try:
        a = flint.arb(alpha_num) / alpha_den
        b = flint.arb(1) - a
        din = flint.arb(disc) * r_in
        dout = flint.arb(disc) * r_out
        out = np.empty(dmax - dmin + 1, dtype=np.int64)
        for idx, d in enumerate(range(dmin, dmax + 1)):
            out[idx] = math.floor(float(((a * (din * d).exp() + b).log() / dout).mid()))
    finally:
        flint.ctx.prec = old
    return out


def _refine(b: _Atoms, r: int) -> _Atoms:
    if b.r == r:
        return b
    f = b.r // r
    return _Atoms(b.k, r, b.lo * f, on_finer_grid(b.m, f), on_finer_grid(b.mom, f), b.rho)


def _combine(a: _Atoms, b: _Atoms, sigma: float, disc: float, p_out: int) -> _Atoms:
    """The contraction of (k_a S_a + k_b S_b)/k grouped by the grid point below each pair's
    smallest value (module notes); below the cut dropped; tiny masses dropped."""
    k = a.k + b.k
    r_in = min(a.r, b.r)
    a, b = _refine(a, r_in), _refine(b, r_in)
    r_out = 1 << p_out
    s = r_in // r_out
    na, nb = a.m.size, b.m.size
    dmin, dmax = a.lo - (b.lo + nb - 1), a.lo + na - 1 - b.lo
    off = _lower_offsets(a.k, k, r_in, r_out, disc, dmin, dmax)
    alpha, beta = a.k / k, b.k / k
    emin = int(np.min(off)) + b.lo * s
    emax = int(np.max(off)) + (b.lo + nb - 1) * s
    m = np.zeros(emax - emin + 1)
    mom = np.zeros(m.size)
    with np.errstate(under="ignore"):
        for idx, i0, j0, n, e0 in diagonals(a.lo, na, b.lo, nb, s):
            ma, mb = a.m[i0:i0 + n], b.m[j0:j0 + n]
            base = e0 + int(off[idx]) - emin
            sl = slice(base, base + (n - 1) * s + 1, s)
            m[sl] += ma * mb
            mom[sl] += alpha * a.mom[i0:i0 + n] * mb + beta * ma * b.mom[j0:j0 + n]
    c = _lower_cut(sigma, k, disc, r_out)
    if emin < c:
        m, mom = m[c - emin:].copy(), mom[c - emin:].copy()
        emin = c
    keep = m >= _FLUSH
    m, mom = np.where(keep, m, 0.0), np.where(keep, mom, 0.0)
    nz = np.flatnonzero(m)
    if nz.size == 0:
        raise DomainError("internal: a block of random allocation lost all its mass")
    m, mom = m[nz[0]:nz[-1] + 1], mom[nz[0]:nz[-1] + 1]
    # each entry: at most 2 (off.size) additions of terms with 3 roundings each
    eta = (off.size + 8) * _U * 2.0
    rho = (1.0 + a.rho) * (1.0 + b.rho) * (1.0 + eta) - 1.0
    return _Atoms(k, r_out, emin + int(nz[0]), m, mom, float(np.nextafter(rho * 1.01, 1)))


@functools.lru_cache(maxsize=8)
def _epoch_atoms(sigma: float, t: int, disc: float, tail: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(Q-masses, positions) of the contracted law of one epoch's S: lower bounds (module
    notes), sorted by position."""
    top = grid_top(sigma, t, disc, tail)
    blocks: dict[int, _Atoms] = {}
    for k in plan_blocks(t):
        if k == 1:
            blocks[1] = _first(sigma, disc, top, 1 << grid_power(t, 1))
            continue
        blocks[k] = _combine(blocks[k // 2], blocks[k - k // 2], sigma, disc,
                             grid_power(t, k))
    fin = blocks[t]
    ok = (fin.m > 0) & (fin.mom > 0)  # (dropping an atom only lowers the profile)
    m, mom = fin.m[ok], fin.mom[ok]
    rho = fin.rho
    q = m / (1.0 + rho) * (1.0 - 4 * _U)
    pos = mom / m * ((1.0 - rho) / (1.0 + rho)) * (1.0 - 8 * _U)
    order = np.argsort(pos, kind="stable")
    return q[order], pos[order]


def _ctd(pbar: list, abar: list, ey: list, j0: int, disc: float, bits: int
         ) -> tuple[Any, float]:
    r"""Connect the dots of a sub-probability law given by its tails at the grid points
    (no mass below the first point or above the last): each cell's :math:`P`-mass to its
    two ends keeping :math:`\mathbb E_P[e^{-L}]`, rounded up to :math:`2^{-bits}`; and an
    upper bound on the mass the rounding added."""
    import flint

    from symgdp.numerics.rounding import arb_ceil
    from symgdp.pld.pmf import connect_cells, int_pmf

    old = flint.ctx.prec
    flint.ctx.prec = 120
    try:
        arb = flint.arb
        out = connect_cells(pbar, abar, ey, disc)
        ints = [max(arb_ceil(v, bits), 0) for v in out]
        scale = arb(2) ** (-bits)
        extra = sum(((arb(k) * scale - v).upper() for k, v in zip(ints, out, strict=True)),
                    start=arb(0))
        a_up = max(float(arb(extra).upper()), 0.0)
    finally:
        flint.ctx.prec = old
    return int_pmf(disc, j0, ints, 0, bits), float(np.nextafter(a_up, np.inf))


class PairFloor:
    """The certified lower profile of random allocation's pair over the epochs (module
    notes): ``delta_lower(eps)`` (vectorised) and the composition behind it."""

    def __init__(self, comp: Any, disc: float, added: float) -> None:
        self.comp, self.disc, self.added = comp, disc, added

    def delta_lower(self, eps: Any) -> Any:
        from symgdp.training.engine import lower_profile

        out = lower_profile(self.comp, eps, added=self.added)
        return float(out[0]) if np.ndim(eps) == 0 else out


def pair_floor(sigma: float, steps: int, epochs: int, failure_prob: float = 1e-10,
               disc: float | None = None, refine: int = 8) -> PairFloor:
    r"""A proven lower bound on the profile of DP-SGD with random allocation under
    add/remove (module notes; the remove direction).

    Example:
        >>> f = pair_floor(2.0, 4, 2)
        >>> from symgdp.training.allocation_upper import allocation_upper
        >>> bool(0 < f.delta_lower(0.5) <= allocation_upper(2.0, 4, 2).profile(0.5))
        True
    """
    import flint

    from symgdp.training.allocation_upper import _check_int, _check_sigma
    from symgdp.training.engine import (
        ComposedSGD,
        _Tracked,
        compose_phases,
        one_step_tail,
        scale_for,
    )

    s = _check_sigma(sigma)
    t = _check_int("steps", steps, 2)
    e = _check_int("epochs", epochs, 1)
    rf = _check_int("refine", refine, 1)  # 2.5 is not 2: the grid d / refine must be exact
    d = allocation_grid(s, t) if disc is None else float(disc)
    if not (0 < d <= 1 and math.frexp(d)[0] == 0.5 and math.frexp(rf)[0] == 0.5):
        raise DomainError(f"the pair floor's grid must be a power of 2 in (0, 1] refined by "
                          f"a power of 2, got disc={disc!r}, refine={refine!r}")
    tail = min(one_step_tail(failure_prob, e), 1e-18)
    q, pos = _epoch_atoms(s, t, d, tail)
    d = d / rf  # the composition's grid: finer than the atoms' (the floor's shift ~ d)
    loss = np.log(pos) - 4 * _U * np.maximum(np.abs(np.log(pos)), 1.0)  # rounded down
    p = q * pos * (1.0 - 4 * _U)  # P-masses, rounded down: less mass at smaller losses
    order = np.argsort(loss, kind="stable")
    loss, p = loss[order], p[order]
    j0 = int(math.floor(loss[0] / d)) - 1
    j1 = int(math.ceil(loss[-1] / d)) + 1
    if j1 - j0 > _MAX_CELLS:
        raise DomainError(f"the pair floor's grid is too fine: {j1 - j0} points of one epoch")
    # the law is now (p_i, loss_i) exactly (floats are exact rationals); its tails at the
    # grid points, P(L > l_j) and E_P[e^{-L}; L > l_j], summed exactly enough in balls
    old = flint.ctx.prec
    flint.ctx.prec = 120
    try:
        arb = flint.arb
        dd = arb(d)
        pbar: list[Any] = []
        abar: list[Any] = []
        ps, ys = arb(0), arb(0)
        k = loss.size - 1
        for j in range(j1, j0 - 1, -1):
            lj = j * d  # exact: d is a power of 2; atoms with loss > l_j (a tie goes below)
            while k >= 0 and loss[k] > lj:
                ps += arb(float(p[k]))
                ys += arb(float(p[k])) * (-arb(float(loss[k]))).exp()
                k -= 1
            pbar.append(ps)
            abar.append(ys)
        pbar.reverse()
        abar.reverse()
        step = dd.exp()
        ey = [(dd * j0).exp()]
        for _ in range(j1 - j0):
            ey.append(ey[-1] * step)
    finally:
        flint.ctx.prec = old
    bits, cut = scale_for(((1.0, s, e),), "add_remove", float(j1 - j0 + 1) * math.sqrt(e))
    pmf, a_up = _ctd(pbar, abar, ey, j0, d, bits)
    acc, _ = compose_phases([(_Tracked(pmf), e, 0.0)], cut, bits > 80 or cut < 1e-19)
    comp = ComposedSGD((acc.pmf,), (0.0,), (acc.cut,), e, d, "add_remove")
    # A of the floor theorem: nu(all) - M^E, M the one-epoch law's exact total (the cuts
    # and rounding rests of the composition went to +oo and stay in nu(all)).  Not only
    # the one-epoch rounding up (a_up): each composition rounds its mass at +oo *up* to
    # the scale (< 2^-bits, then doubled by every later squaring), which a bound built
    # from a_up alone missed (~1e-22 at 200 epochs).  M >= T 2^-bits - a_up, T = sum of
    # the one-epoch integers; evaluated exactly enough in balls.
    total = int(pmf.total())
    nu_all = int(acc.pmf.total()) + int(acc.pmf.inf)
    old = flint.ctx.prec
    flint.ctx.prec = 256
    try:
        arb = flint.arb
        scale = arb(2) ** (-bits)
        m_low = arb(total) * scale - arb(a_up)
        m_low_e = m_low ** e if float(m_low.lower()) > 0 else arb(0)
        added = max(float((arb(nu_all) * scale - m_low_e).upper()), 0.0)
    finally:
        flint.ctx.prec = old
    return PairFloor(comp, d, float(np.nextafter(added, np.inf)))
