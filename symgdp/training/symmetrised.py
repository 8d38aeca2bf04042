r"""The symmetrised subsampled Gaussian: the one-step measure that composes fixed-size
batches drawn without replacement under replace-one (``sampling="without_replacement"``).

**Why not the two directions.**  One step with a batch of :math:`b` of :math:`n` records
drawn without replacement, replace-one neighbours, is :math:`C_\gamma(f)`-DP with
:math:`\gamma = b/n`, :math:`f = G_{2/\sigma}` (Dong, Roth & Su 2022, Theorem 4.2: the
subsampling theorem, sampling without replacement, data sets of equal size), where
:math:`C_\gamma(f) = \min\{f_\gamma, f_\gamma^{-1}\}^{**}`, :math:`f_\gamma = \gamma f +
(1 - \gamma)\mathrm{Id}` is the trade-off of the pair :math:`R = (\gamma N(2, \sigma^2) +
(1 - \gamma)N(0, \sigma^2), N(0, \sigma^2))` and :math:`f_\gamma^{-1}` that of its swap
:math:`A`.  An adversary who picks the clipped gradients at every step (DP-SGD's are
adaptive) can make one step look like :math:`R` and the next like :math:`A` for the *same*
pair of data sets, so the largest of the all-:math:`R` and all-:math:`A` compositions is
not a bound; the composition of :math:`C_\gamma(f)` is (Dong, Roth & Su 2022, Theorem
3.2).

**The symmetric measure.**  :math:`C_\gamma(f)` is symmetric; it equals
:math:`f_\gamma` up to the point where its slope is :math:`-1`, then a segment of slope
:math:`-1`, then :math:`f_\gamma^{-1}` (the same paper, Section 4.2), so its privacy
profile at :math:`\varepsilon \ge 0` (tangent slopes :math:`-e^\varepsilon \le -1`) is
:math:`R`'s.  A symmetric pair with the privacy loss distribution :math:`\omega` has
:math:`\omega(-l) = e^{-l}\omega(l)`, and :math:`\omega` on :math:`(0, \infty]` is fixed
by the profile on :math:`\varepsilon \ge 0`; so :math:`C_\gamma(f)` is the trade-off of
the pair whose loss distribution :math:`\omega_S` is :math:`R`'s on :math:`(0, \infty]`,
its mirror image weighted by :math:`e^{-l}` on :math:`[-\infty, 0)` (the :math:`Q`-mass
of :math:`R`'s cells), and the rest, :math:`1 - P_R(L > 0) - Q_R(L > 0)`, at 0.

:func:`symmetric_step` builds the connect-the-dots PMF of :math:`\omega_S` in ball
arithmetic from :math:`R`'s tails (:mod:`symgdp.training.engine`), each mass rounded up:
the cells of :math:`R` with positive losses split as for :math:`R`, their mirrors split
keeping :math:`\mathbb E[e^{-L}]` (mass :math:`Q_c`, :math:`\mathbb E[y] = P_c`), the
mirror of :math:`R`'s mass beyond the grid moved onto the first point (a move to a larger
loss), :math:`R`'s mass beyond the grid to :math:`+\infty`.  The theorem of
:mod:`symgdp.training.dpsgd` then makes its composition an upper bound.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from symgdp.errors import DomainError
from symgdp.numerics.rounding import arb_ceil
from symgdp.training.engine import (
    ComposedSGD,
    _tails,
    _Tracked,
    compose_phases,
    one_step_tail,
    scale_for,
)

__all__ = ["symmetric_step", "compose_symmetric", "compose_symmetric_schedule"]


@functools.lru_cache(maxsize=8)
def symmetric_step(q: float, sigma: float, disc: float, tail: float, bits: int
                   ) -> tuple[Any, float]:
    r"""The certified one-step PMF of :math:`\omega_S` (module notes) for the remove pair
    of the Poisson-subsampled Gaussian with rate ``q`` and noise ``sigma`` (for sampling
    without replacement: :math:`b/n` and :math:`\sigma/2`), and a float upper bound on
    the mass moved from outside the grid.

    Example:
        >>> pmf, moved = symmetric_step(1.0, 1.0, 0.05, 1e-12, 80)
        >>> abs(float(sum(pmf.approx)) - 1.0) < 1e-9 and moved < 1e-9
        True
    """
    import flint

    from symgdp.pld.pmf import int_pmf

    j0, j1, prec, pbar, abar, ey = _tails(q, sigma, disc, tail, "add_remove", bits)
    if not (j0 < 0 < j1):
        raise DomainError(f"the loss grid of q={q!r}, sigma={sigma!r} does not straddle 0")
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        arb = flint.arb
        one, d = arb(1), arb(disc)
        c1, c2 = -((-d).expm1()), d.expm1()
        edm = (-d).exp()
        i0 = -j0                       # the index of the loss 0
        m = j1                         # points 1..m on each side
        pos = [arb(0)] * (m + 1)       # pos[k]: loss k disc, k = 0..m
        neg = [arb(0)] * (m + 1)       # neg[k]: loss -k disc
        for k in range(m):
            i = i0 + k                 # R's cell (k disc, (k + 1) disc]
            pc = pbar[i] - pbar[i + 1]
            qc = abar[i] - abar[i + 1]
            qt = qc * ey[i]
            pos[k] += (qt - edm * pc) / c1
            pos[k + 1] += (pc - qt) / c1
            inv2 = (one / ey[i]) / c2  # 1 / (e^{l_{k+1}} - e^{l_k})
            neg[k] += (ey[i + 1] * qc - pc) * inv2
            neg[k + 1] += (pc - ey[i] * qc) * inv2
        zero = one - pbar[i0] - abar[i0]
        neg[m] += abar[-1]             # the mirror of R's mass beyond the grid
        inf = pbar[-1]
        masses = [neg[k] for k in range(m, 0, -1)] + [pos[0] + neg[0] + zero] + pos[1:]
        if not all(v.is_finite() for v in masses):
            raise DomainError(f"one step of sampling without replacement (q={q!r}, "
                              f"sigma={sigma!r}) has no finite enclosure in ball arithmetic")
        ints = [max(arb_ceil(v, bits), 0) for v in masses]
        moved = float((abar[-1] + pbar[-1]).upper())
    finally:
        flint.ctx.prec = old
    return int_pmf(disc, -m, ints, max(arb_ceil(inf, bits), 0), bits), \
        math.nextafter(moved, math.inf) * (1 + 1e-12)


def compose_symmetric(q: float, sigma: float, steps: int, disc: float,
                      failure_prob: float) -> ComposedSGD:
    r"""The ``steps``-fold composition of :func:`symmetric_step` (one direction: the
    measure is symmetric), in exact integers as :func:`symgdp.training.engine.compose_schedule`."""
    return compose_symmetric_schedule(((q, sigma, steps),), disc, failure_prob)


def compose_symmetric_schedule(phases: Any, disc: float, failure_prob: float) -> ComposedSGD:
    r"""The phases' symmetrised measures composed in order (each phase ``(q, sigma,
    steps)`` of the dominating pair :math:`R`, its :func:`symmetric_step` composed
    ``steps`` times, the phases convolved): the trade-off of each step is
    :math:`C_{\gamma_i}(G_{2/\sigma_i})`, and adaptive composition of trade-off functions
    (Dong, Roth & Su 2022, Theorem 3.2) holds for different ones step by step, so the
    composed measure is an upper bound for any order of phases given in advance."""
    from symgdp.training.engine import _loss_grid

    total = sum(t for _, _, t in phases)
    tau = one_step_tail(failure_prob, total)
    width = sum(2 * _loss_grid(q, s, disc, tau, "add_remove")[1] + 1 for q, s, _ in phases)
    bits, tail = scale_for(tuple(phases), "replace_one", float(width) * math.sqrt(total))
    keep_left = bits > 80 or tail < 1e-19
    leaves = []
    for q, s, t in phases:
        pmf, mv = symmetric_step(q, s, disc, tau, bits)
        leaves.append((_Tracked(pmf), t, mv))
    acc, moved = compose_phases(leaves, tail, keep_left)
    return ComposedSGD((acc.pmf,), (moved,), (acc.cut,), total, disc, "replace_one")
