r"""The DP-SGD engine's grids: the automatic choice of ``value_discretization_interval`` and
``tol`` in :func:`symgdp.dpsgd`, and the floor's own grid.

Every grid gives a proved bracket (the theorems of :mod:`symgdp.training.dpsgd` and
:mod:`symgdp.training.engine` hold on any grid); the grid only sets the bracket's width and
the cost.  On a grid :math:`\Delta` the width of ``[mu_floor, mu_upper]`` is, measured on
DP-SGD runs with :math:`\mu` between 0.015 and 0.6,

.. math:: \frac{\mu_{upper} - \mu_{floor}}{\mu} \approx \alpha\,\frac{\Delta\sqrt T}{\mu},
   \qquad 0.4 \le \alpha \le 1.1,

the floor's shift (about :math:`\Delta\sqrt{11.5\,T}` in :math:`\varepsilon`, on a head of
about :math:`6\mu`) against the head; the upper profile's connect-the-dots spread adds a
variance of at most :math:`T\Delta^2/4` to the composed loss, second order in the same
ratio.  So a grid fixed in absolute terms gives a useless bracket for a small :math:`\mu`
(``dpsgd(0.001, 20, 100000)`` on :math:`10^{-4}`: :math:`[0.01497, 0.02051]`, 27 % wide).

**The automatic rule** (``value_discretization_interval=None`` and/or ``tol=None``, the
defaults of :func:`symgdp.dpsgd`):

1. compose and measure on :data:`BASE_GRID` :math:`= 10^{-4}` with ``tol`` :math:`=
   10^{-4}` (dp_accounting's grid: the published settings are benchmarked there);
2. if that certified :math:`\mu_{upper}` is at least :data:`REFINE_BELOW` :math:`= 0.2`,
   that run is the answer (bit-identical to passing :math:`10^{-4}` and :math:`10^{-4}`:
   every published setting, :math:`\mu` between 0.24 and 2.1, stays as it was);
3. otherwise, with :math:`\hat\mu` that :math:`\mu_{upper}` (at least the mechanism's
   :math:`\mu` on its head, so the grid is never finer than the model asks), the answer is
   the run on

   .. math:: \Delta = \mathrm{clamp}\Big(\rho\,\frac{\hat\mu}{\sqrt T},\;
      \Delta_{cost},\; 10^{-4}\Big), \qquad \mathtt{tol} = \min\big(10^{-4},\,
      \max(10^{-3}\hat\mu,\; 2\cdot10^{-6})\big),

   :math:`\rho` = :data:`TARGET_REL` :math:`= 10^{-2}`, :math:`T` the total number of
   steps, :math:`\Delta_{cost}` the grid on which the composed measure would have
   :data:`MAX_POINTS` points (read from the first composition's length, which scales as
   :math:`1/\Delta`) or a one-step PMF :data:`MAX_STEP_POINTS` points.  The second run
   is skipped when it would be less than a quarter finer.  When the cost clamp binds the
   relative width is above :math:`\rho` (``dpsgd(1e-4, 5, 10**6)``: about 4 %); pass a
   finer grid by hand for more.  The floor's own finer grid (:func:`floor_grid_step`, for
   tiny heads) is then no finer than :math:`\min(\Delta_{cost}, 10^{-4}/32)`, so it costs
   at most what the first grid's floor would.  The absolute floor :data:`TOL_FLOOR` on
   ``tol`` bounds the measurement's cost, which grows like 1/``tol`` for a tiny
   :math:`\mu`: below :math:`\mu \approx 2\cdot10^{-3}` it, not the grid, limits the
   relative width.

With an explicit grid and ``tol=None`` only ``tol`` is chosen (step 3's ``tol``, the same
composition re-measured); with an explicit ``tol`` and no grid only the grid is.  The
result records what was used: ``discretization`` (the grid), ``floor_discretization``,
``measurement.tol`` and ``grid_rule`` (the rule's steps in words); passing
``value_discretization_interval=r.discretization, tol=r.measurement.tol,
floor_discretization=r.floor_discretization`` reproduces ``r`` exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from symgdp.training.engine import _loss_grid, one_step_tail

__all__ = ["BASE_GRID", "BASE_TOL", "REFINE_BELOW", "TARGET_REL", "MAX_POINTS",
           "MAX_STEP_POINTS", "TOL_REL", "TOL_FLOOR", "GridChoice", "auto_grid", "floor_grid_step",
           "step_points"]

#: the first run's grid and tol (dp_accounting's default grid)
BASE_GRID = 1e-4
BASE_TOL = 1e-4
#: refine only when the first run's certified mu_upper is below this
REFINE_BELOW = 0.2
#: the relative width aimed at: the grid is TARGET_REL * mu / sqrt(T)
TARGET_REL = 1e-2
#: the tol aimed at, relative to mu, and its absolute floor (the measurement of a tiny mu
#: costs about 1/tol: 2 s at mu = 2e-4, tol = 2e-6)
TOL_REL = 1e-3
TOL_FLOOR = 2e-6
#: cost clamps: points of the composed measure, of a one-step PMF
MAX_POINTS = 600_000
MAX_STEP_POINTS = 300_000


@dataclass(frozen=True)
class GridChoice:
    """The grid and tol of the answer, and the rule's steps in words (``grid_rule``)."""

    disc: float
    tol: float
    text: str
    #: the floor's own grid is no finer than this (the cost clamp, or the first grid / 32,
    #: the floor's finest grid on the first grid, whichever is finer)
    floor_least: float = 0.0


def auto_grid(mu_upper: float, steps: int, disc: float, tol: float, composed_points: int,
              step_pts: int | None, *, auto: tuple[bool, bool] = (True, True)) -> GridChoice:
    r"""Steps 2 and 3 of the module's rule: the grid and tol of the answer after a first run
    on ``disc`` with ``tol`` whose certified upper end is ``mu_upper`` and whose composed
    measure has ``composed_points`` points (``step_pts``: its one-step PMFs' points,
    ``None`` if unknown); ``auto``: whether the grid, the tol are chosen.  The choice's
    ``disc`` and ``tol`` are the first run's when it is the answer.

    Example:
        >>> c = auto_grid(0.0205, 100_000, 1e-4, 1e-4, 3680, 12)
        >>> round(c.disc, 9), round(c.tol, 8)
        (6.48e-07, 2.05e-05)
        >>> auto_grid(0.53, 1000, 1e-4, 1e-4, 10**5, 10**4).disc
        0.0001
    """
    first = f"automatic: first run on the grid {disc:.3g} with tol {tol:.3g}"
    if not (0 < mu_upper < REFINE_BELOW):
        return GridChoice(disc, tol, f"{first} kept: its mu_upper {mu_upper:.4g} is not "
                                     f"below {REFINE_BELOW:g}")
    new_disc, new_tol = disc, tol
    why = [f"{first}: mu_upper {mu_upper:.4g} < {REFINE_BELOW:g}"]
    least = disc * max(composed_points, 1) / MAX_POINTS
    if step_pts is not None:
        least = max(least, disc * max(step_pts, 1) / MAX_STEP_POINTS)
    if auto[0]:
        want = TARGET_REL * mu_upper / math.sqrt(steps)
        cand = min(max(want, least), disc)
        if cand < 0.75 * disc:
            new_disc = cand
            why.append(f"grid {TARGET_REL:g} mu_upper / sqrt(T) = {want:.3g}, used "
                       f"{new_disc:.3g}" + (" (cost clamp)" if least > want else ""))
    if auto[1]:
        new_tol = min(tol, max(TOL_REL * mu_upper, TOL_FLOOR))
        if new_tol < tol:
            why.append(f"tol {TOL_REL:g} mu_upper = {new_tol:.3g}")
    if new_disc == disc and new_tol == tol:
        why.append("kept (no finer grid or tol within the clamps)")
    return GridChoice(new_disc, new_tol, "; ".join(why), min(least, disc / 32.0))


def floor_grid_step(phases: Any, disc: float, fp: float, rel: str, eps_h: float,
                    least: float = 0.0) -> float:
    r"""The floor's grid: ``disc`` unless its shift (about :math:`\Delta\sqrt{11.5\,T}` in
    :math:`\varepsilon`, the Bernstein deviation at :math:`e^{-23}`) exceeds a twentieth of
    the head, as for tiny heads (small :math:`q`, large :math:`\sigma`); then a finer grid
    (at most 32 times finer, at most about :math:`3\cdot10^5` one-step points, and no
    finer than ``least``: the automatic rule's :attr:`GridChoice.floor_least`).

    Example:
        >>> floor_grid_step([(0.01, 1.0, 1000)], 1e-4, 1e-10, "add_remove", 3.29)
        0.0001
    """
    total = sum(t for _, _, t in phases)
    shift = disc * math.sqrt(11.5 * total)
    if shift <= eps_h / 20.0:
        return disc
    fine = max(disc / 32.0, eps_h / (20.0 * math.sqrt(11.5 * total)), least)
    tau = one_step_tail(fp, total)
    points = sum(j1 - j0 for j0, j1 in (_loss_grid(q, s, fine, tau, rel) for q, s, _ in phases))
    if points > MAX_STEP_POINTS:
        fine *= points / MAX_STEP_POINTS
    return fine if fine < disc * 0.75 else disc


def step_points(phases: Any, disc: float, fp: float, rel: str) -> int:
    """The one-step PMFs' points on ``disc`` (record level), summed over the phases."""
    tau = one_step_tail(fp, sum(t for _, _, t in phases))
    return sum(j1 - j0 for j0, j1 in (_loss_grid(q, s, disc, tau, rel) for q, s, _ in phases))
