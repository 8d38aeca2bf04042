r"""The certified engine of DP-SGD: one-step PMFs in ball arithmetic, their composition over
a schedule in exact integers, and the floor (a proven lower bound on the true profile).

The theorem behind the upper bound (the certified PLD) is stated in :mod:`symgdp.training.dpsgd`.
This module adds the **dominating pairs** of one step and the **floor**.

**Dominating pairs** (one step of the Poisson-subsampled Gaussian with rate :math:`q`
and noise multiplier :math:`\sigma`, clipping norm 1):

* ``add_remove``: the remove pair :math:`P = (1 - q)N(0, \sigma^2) + qN(1, \sigma^2)`,
  :math:`Q = N(0, \sigma^2)` and the add pair :math:`(Q, P)` (Mironov, Talwar & Zhang
  2019; Zhu, Dong & Wang 2022, Poisson subsampling under add/remove).  One pair of
  neighbouring data sets is either an addition or a removal for *every* step, so the
  profile of a schedule is the larger of the all-remove and the all-add compositions.
* ``replace_one``: :math:`P = (1 - q)N(0, \sigma^2) + qN(1, \sigma^2)`,
  :math:`Q = (1 - q)N(0, \sigma^2) + qN(-1, \sigma^2)`: the replaced record is sampled
  with probability :math:`q` in both data sets, its clipped contribution changes from
  :math:`c` to :math:`c'` with :math:`\|c\|, \|c'\| \le 1`, the worst case being
  :math:`c' = -c` (Zhu, Dong & Wang 2022, Poisson subsampling under substitution; the
  pair of dp_accounting's ``REPLACE`` adjacency).  The reflection :math:`x \mapsto -x`
  swaps :math:`P` and :math:`Q`, so both directions have the same profile and one
  composition suffices.  For :math:`q = 1` it is the Gaussian mechanism with
  sensitivity 2, exactly :math:`2\sqrt{T}/\sigma`-GDP.

For both pairs the privacy loss :math:`L(x) = \log(P(x)/Q(x))` is increasing in
:math:`x`, with closed-form inverse :math:`x_l`, so the masses of :math:`P` and
:math:`Q` above a loss :math:`l` are sums of Gaussian tails :math:`\bar\Phi` at
:math:`x_l`, evaluated in balls.

**Theorem (floor).**  Let :math:`\nu` be the composed pessimistic measure of one
direction (connect the dots on :math:`\Delta\mathbb Z`, the theorem in
:mod:`symgdp.training.dpsgd`), :math:`T` the number of steps, :math:`\tau` the mass each step
moves from outside its grid (to the first point or to :math:`+\infty`), :math:`m` the
mass the compositions moved to larger losses (cut tails, and the rests of rounding
down, moved to :math:`+\infty`), and :math:`A = \nu(\text{all}) - 1` the mass they
added by rounding up.  Then for every :math:`\varepsilon` and
:math:`t > 0`, with :math:`g_x(l) = (1 - e^{x - l})_+`,

.. math::
    \delta_T(\varepsilon) \ge \sum_l \nu(l)\, g_{\varepsilon + s}(l)
      - e^{-t^2 / (2(V + \Delta t/3))} - A - 2m - \sum_i \tau_i,
    \quad s = T\frac{(e^\Delta - 1)^2}{8} + t,\ V = T\Big(\frac{\Delta^2}{4}
      + \frac{(e^\Delta - 1)^4}{256}\Big).

*Proof.*  Inside each cell :math:`(a, b]` replace the loss by the point
:math:`m_c = -\log \mathbb E_P[e^{-L} \mid \text{cell}]` (a mean-preserving contraction
in :math:`y = e^{-L}`): by Jensen, coordinate by coordinate, the profile
:math:`\mathbb E[(1 - e^\varepsilon\prod y_i)_+]` does not increase, so the contracted
losses :math:`M_i` give :math:`\delta_M \le \delta_T`.  Connect the dots sends the mass
at :math:`m_c` to :math:`a` or :math:`b` keeping :math:`\mathbb E[y]`: a coupling
:math:`W_i = M_i + d_i` with :math:`d_i \in [a - m_c, b - m_c]`, independent over
steps, :math:`\mathrm{Var}(d_i \mid \text{cell}) \le \Delta^2/4` (Popoviciu) and
:math:`0 \le \mathbb E[d_i \mid \text{cell}] \le (e^\Delta - 1)^2/8` (Jensen's gap for
:math:`-\log y`, :math:`\sup (-\log)'' \le e^{2b}`, :math:`\mathrm{Var}\,y \le
(e^{-a} - e^{-b})^2/4`); outside the grid :math:`W_i = M_i` (:math:`d_i = 0`).  With
:math:`D = \sum d_i`, on :math:`\{D \le s\}` we have :math:`\sum M_i \ge \sum W_i - s`,
and :math:`g` is non-decreasing, :math:`0 \le g \le 1`, so
:math:`\delta_M(\varepsilon) \ge \mathbb E[g_{\varepsilon + s}(\sum W_i)] - P(D > s)`,
and Bernstein's inequality (:math:`d_i - \mathbb E d_i \le \Delta`) bounds
:math:`P(D > s)` by the exponential above.  Finally :math:`\nu` arises from the law of
:math:`\sum W_i` by moving the out-of-grid masses (changing the expectation of a
function with values in :math:`[0, 1]` by at most :math:`\sum \tau_i`), cutting tails
and moving rounding rests (each moved mass, later convolved with measures of total at
most 2, changes it by at most twice that mass) and adding :math:`A` by rounding up. :math:`\square`

**Theorem (the add direction from the remove composition).**  For add/remove the add
pair is :math:`(Q, P)`; its profile after :math:`T` steps is
:math:`\delta_{add}(\varepsilon) = \mathbb E_{P^T}[(\prod_i y_i - e^\varepsilon)_+]`,
:math:`y_i = e^{-L_i}` (change of measure: the loss of :math:`(Q, P)` is :math:`-L`
and :math:`dQ = y\,dP`).  Let :math:`\nu` be the composed remove measure and
:math:`E_y` an upper bound on the :math:`e^{-l}`-weighted mass that its construction
moved to larger losses (one-step tails: the :math:`Q`-mass outside the grid; tail cuts:
:math:`\sum m_l e^{-l}` at the origins :math:`l`, propagated through later convolutions
by the factors' :math:`\max(1, \sum_l \nu(l)e^{-l})`).  Then

.. math::
    \delta_{add}(\varepsilon) \le \sum_l \nu(l)\,(e^{-l} - e^\varepsilon)_+ + E_y
    = \sum_{l'} \nu(-l')e^{l'}(1 - e^{\varepsilon - l'})_+ + E_y .

*Proof.*  :math:`(\prod y_i - e^\varepsilon)_+` is convex and non-decreasing in each
:math:`y_i` and non-negative: the connect-the-dots spread (which keeps
:math:`\mathbb E[y]` per cell) and rounding masses up do not decrease its expectation;
moving mass :math:`m` from :math:`y` to a smaller :math:`y'` decreases it by at most
:math:`m\,y` times the expectation of :math:`\prod` over the other factors, which is what
:math:`E_y` adds back. :math:`\square`  So one composition serves both directions.

The variance term makes the floor's loss about :math:`\sqrt{T}\Delta` in
:math:`\varepsilon` instead of the :math:`T\Delta/2` of rounding every loss down, and the
floor comes from the same composition as the upper bound (no second composition).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from symgdp.contracts import Neighbouring
from symgdp.errors import DomainError
from symgdp.numerics.recursions import geometric_tail
from symgdp.numerics.rounding import arb_ceil, arb_floor
from symgdp.pld.pmf import chained, check_count, check_product, check_support

__all__ = ["NEIGHBOURING", "check_neighbouring", "check_schedule", "one_step_pmfs",
           "pmfs_from_tails", "compose_schedule", "ComposedSGD", "lower_profile",
           "one_step_tail"]

#: the neighbouring relations DP-SGD is accounted under
NEIGHBOURING = ("add_remove", "replace_one")
_U = 2.0**-52


def check_neighbouring(neighbouring: Any) -> Neighbouring:
    """The relation's canonical name; :class:`DomainError` naming an unknown one."""
    key = str(neighbouring).strip().lower().replace("-", "_").replace("/", "_")
    key = {"add_or_remove": "add_remove", "add_or_remove_one": "add_remove",
           "replace": "replace_one", "substitute": "replace_one",
           "substitution": "replace_one"}.get(key, key)
    if key not in NEIGHBOURING or not isinstance(neighbouring, str):
        raise DomainError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}, "
                          f"got {neighbouring!r}")
    return cast(Neighbouring, key)  # one of NEIGHBOURING (checked above)


def check_phase(q: Any, sigma: Any, steps: Any) -> tuple[float, float, int]:
    """(q, sigma, steps) checked: q in (0, 1], sigma > 0 finite, steps a positive integer."""
    try:
        qq = float(q)
    except (TypeError, ValueError):
        qq = math.nan
    if not (0 < qq <= 1):
        raise DomainError(f"the sampling rate q must lie in (0, 1], got {q!r}")
    try:
        s = float(sigma)
    except (TypeError, ValueError):
        s = math.nan
    if not (math.isfinite(s) and s > 0):
        raise DomainError(f"sigma must be a finite number > 0, got {sigma!r}")
    ok = not isinstance(steps, bool)
    if ok and isinstance(steps, (int, np.integer)):
        ok = int(steps) >= 1  # exact, however large (float() of it could overflow)
    else:
        try:
            st = float(steps)
            ok = ok and math.isfinite(st) and st.is_integer() and st >= 1
        except (TypeError, ValueError, OverflowError):
            ok = False
    if not ok:
        raise DomainError(f"steps must be a positive integer, got {steps!r}")
    return qq, s, check_count(int(steps), "steps")


def check_schedule(schedule: Any) -> tuple[tuple[float, float, int], ...]:
    """A schedule ``[(q, sigma, steps), ...]`` checked entry by entry."""
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise DomainError(f"a schedule is a list of (q, sigma, steps) triples, got "
                          f"{schedule!r}")
    out = []
    for k, entry in enumerate(schedule):
        if isinstance(entry, (str, bytes)) or not hasattr(entry, "__len__") \
                or len(entry) != 3:
            raise DomainError(f"schedule entry {k} must be a (q, sigma, steps) triple, got "
                              f"{entry!r}")
        out.append(check_phase(*entry))
    if not out:
        raise DomainError("the schedule is empty: give at least one (q, sigma, steps)")
    return tuple(out)


def one_step_tail(failure_prob: float, steps: int) -> float:
    """Mass cut from each one-step PMF (it goes to +infinity): a thousandth of the
    failure probability over all steps, between 1e-30 and 1e-16."""
    return min(max(1e-3 * failure_prob / steps, 1e-30), 1e-16)


# -- one step ------------------------------------------------------------------------------
def _arb_up(x: Any) -> float:
    """A float64 at least the upper end of the ball x (and at least 0)."""
    v = float(x.upper())
    return max(float(np.nextafter(np.nextafter(v, np.inf), np.inf)), 0.0)


def _float_loss(q: float, sigma: float, x: float, relation: str) -> float:
    """The privacy loss log(P(x)/Q(x)) in float64 (only to place the grid)."""
    s2 = sigma * sigma
    lq = math.log1p(-q) if q < 1 else -math.inf
    num = float(np.logaddexp(lq, math.log(q) + (2 * x - 1) / (2 * s2)))
    if relation == "add_remove":
        return num
    return num - float(np.logaddexp(lq, math.log(q) + (-2 * x - 1) / (2 * s2)))


def _loss_grid(q: float, sigma: float, disc: float, tail: float,
               relation: str = "add_remove") -> tuple[int, int]:
    """Grid indices (j0, j1) such that, approximately, P[L <= j0 disc] and P[L > j1 disc]
    are below ``tail`` (the exact masses outside are accounted for rigorously)."""
    from scipy.special import ndtri

    z = float(-ndtri(tail))  # the N(0, 1) quantile of the tail
    lo = _float_loss(q, sigma, -z * sigma, relation)
    if q < 1 and relation == "add_remove":
        lo = max(lo, math.log1p(-q))
    hi = _float_loss(q, sigma, 1.0 + z * sigma, relation)
    return int(math.floor(lo / disc)) - 1, int(math.ceil(hi / disc)) + 1


@dataclass(frozen=True)
class StepPMFs:
    """The certified one-step PMFs of one phase: ``directions`` (remove and add for
    add/remove, one for replace-one; rounded up), ``moved`` (per direction: float upper
    bound on the mass each step moves from outside the grid), ``optimistic`` (remove
    direction, every loss and mass rounded down: a lower-bound measure), and for the add
    direction derived from the remove one (:func:`compose_schedule`) ``ey`` and
    ``qmoved``."""

    directions: tuple[Any, ...]
    moved: tuple[float, ...]
    optimistic: Any
    ey: float = math.inf      # upper bound on sum_l nu_remove(l) e^{-l}
    qmoved: float = math.inf  # upper bound on the Q-mass the remove PMF's tails moved


@functools.lru_cache(maxsize=16)
def one_step_pmfs(q: float, sigma: float, disc: float, tail: float, bits: int,
                  relation: str = "add_remove", full: bool = True) -> StepPMFs:
    r"""Certified one-step PMFs of the Poisson-subsampled Gaussian (ball arithmetic).

    With :math:`x_l` the point where the loss is :math:`l`, the tails
    :math:`\bar P(l) = (1 - q)\bar\Phi(x_l/\sigma) + q\bar\Phi((x_l - 1)/\sigma)` and
    :math:`\bar Q(l) = \bar\Phi(x_l/\sigma)` (remove) or :math:`(1 - q)\bar\Phi(x_l/\sigma)
    + q\bar\Phi((x_l + 1)/\sigma)` (replace-one); remove:
    :math:`x_l = \sigma^2\log((e^l - 1 + q)/q) + 1/2`; replace-one: :math:`x_l =
    \sigma^2\log a` with :math:`a` the positive root of :math:`qka^2 + (1-q)(1-e^l)a -
    e^l qk = 0`, :math:`k = e^{-1/(2\sigma^2)}`.  On the cell :math:`(a, b]` with
    :math:`y = e^{-L}` and the cell's masses :math:`P_c, Q_c = \mathbb E_P[y;
    \text{cell}]`, the mass goes to the two ends keeping :math:`\mathbb E[y]`:
    :math:`(Q_c - y_b P_c)/(y_a - y_b)` to :math:`a` and :math:`(y_a P_c - Q_c)/(y_a -
    y_b)` to :math:`b` (connect the dots, Doroshenko et al. 2022).  The add direction is
    the swapped pair (the same cells, :math:`P, Q` exchanged, the loss negated).  Mass
    below the grid moves to its first point, mass above it to :math:`+\infty`.  With
    ``full`` false only the remove (replace-one) direction is built (no add direction, no
    optimistic PMF).
    """
    return pmfs_from_tails(_tails(q, sigma, disc, tail, relation, bits), disc, bits,
                           relation == "replace_one", full,
                           f"DP-SGD one step (q={q!r}, sigma={sigma!r}, discretization "
                           f"{disc!r})")


def pmfs_from_tails(tails: Any, disc: float, bits: int, rep: bool, full: bool,
                    what: str) -> StepPMFs:
    r"""The certified one-step PMFs (connect the dots, :func:`one_step_pmfs`) of any pair
    whose privacy loss is increasing in the output, from ``tails = (j0, j1, prec, pbar,
    abar, ey)``: the grid indices, the ball precision, and at each grid loss :math:`l_j`
    the balls :math:`P(L > l_j)`, :math:`Q(L > l_j)` and :math:`e^{l_j}` (``rep``: one
    direction only, as for the symmetric replace-one pair; ``what`` names the pair in
    errors)."""
    import flint

    from symgdp.pld.pmf import connect_cells, int_pmf

    j0, j1, prec, pbar, abar, ey = tails
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        arb = flint.arb
        one, d = arb(1), arb(disc)
        c2 = d.expm1()  # e^{disc} - 1, no cancellation
        want_add = full and not rep
        n = j1 - j0 + 1
        rem = connect_cells(pbar, abar, ey, disc)
        add = [arb(0)] * n  # add[i]: loss -(j0 + i) disc
        if want_add:
            iy = [one / e for e in ey]
            for i in range(n - 1):
                pc, qc = pbar[i] - pbar[i + 1], abar[i] - abar[i + 1]
                inv2 = iy[i] / c2  # 1 / (e^{l_{i+1}} - e^{l_i})
                add[i] += (ey[i + 1] * qc - pc) * inv2
                add[i + 1] += (pc - ey[i] * qc) * inv2
        below = one - pbar[0]            # mass with loss <= first point, moved onto it
        rem[0] += below
        rem_inf = pbar[-1]               # mass with loss > last point
        bad = next((i for i, v in enumerate(rem) if not v.is_finite()), None)
        if bad is not None:
            raise DomainError(
                f"{what}: the probability at loss {(j0 + bad) * disc:.6g} has no finite "
                "enclosure in ball arithmetic; a loss range this wide is beyond the certified "
                "route")
        r_int = [arb_ceil(v, bits) for v in rem]
        r_inf = arb_ceil(rem_inf, bits)
        moved = [_arb_up(below + rem_inf)]
        qmoved = _arb_up((one - abar[0]) + abar[-1])
        if want_add:
            add[n - 1] += abar[-1]       # add losses <= -(j1 disc)
            add_inf = one - abar[0]      # add losses > -(j0 disc)
            a_int = [arb_ceil(v, bits) for v in add]
            a_inf = arb_ceil(add_inf, bits)
            moved.append(_arb_up(abar[-1] + add_inf))
        if full:  # every cell's P-mass on its lower end, the right tail on the last point
            opt = [pbar[i] - pbar[i + 1] for i in range(n - 1)] + [rem_inf]
            o_int = [arb_floor(v, bits) for v in opt]
    finally:
        flint.ctx.prec = old
    dirs = [int_pmf(disc, j0, r_int, r_inf, bits)]
    if want_add:
        dirs.append(int_pmf(disc, -j1, a_int[::-1], a_inf, bits))
    optimistic = int_pmf(disc, j0, o_int, 0, bits, up=False) if full else None
    return StepPMFs(tuple(dirs), tuple(moved), optimistic, _ey_upper(dirs[0]), qmoved)


@functools.lru_cache(maxsize=16)
def _tails(q: float, sigma: float, disc: float, tail: float, relation: str, bits: int = 80
           ) -> tuple[int, int, int, list[Any], list[Any], list[Any]]:
    """(j0, j1, precision, P-tails, Q-tails, e^{l}) at the grid points, in balls."""
    import flint

    j0, j1 = _loss_grid(q, sigma, disc, tail, relation)
    if j1 - j0 > 4_000_000:
        raise DomainError(f"sigma={sigma!r} is too small for the discretisation {disc:g}: "
                          f"one step would need {j1 - j0} grid points (use a coarser "
                          "value_discretization_interval)")
    old = flint.ctx.prec
    # the split masses cancel about 2 log2(1/disc) bits; the balls stay rigorous at any
    # precision, this only keeps them tight (relative width near 2^-50)
    prec = min(max(56 + 2 * math.ceil(math.log2(1.0 / disc)), 64), 200)
    # below the loss 0 the tails are near 1 and known to about 2^-prec absolutely, while
    # the add direction read from this measure weights its masses by e^{-l}: add the bits
    # that weight costs (q near 1 with a small sigma reaches losses of -20 and below)
    prec += min(math.ceil(max(0.0, -j0 * disc) / math.log(2.0)) + 8, 400)
    prec += max(int(bits) - 80, 0)  # a finer integer scale (large mu) wants tighter balls
    flint.ctx.prec = prec
    try:
        arb = flint.arb
        qa, one = arb(q), arb(1)
        s = arb(sigma)
        s2, rt = s * s, s * arb(2).sqrt()
        half, d = arb(0.5), arb(disc)
        irt = one / rt
        rep = relation == "replace_one"
        if rep:
            k2 = (-one / (2 * s2)).exp() * qa  # q e^{-1/(2 sigma^2)}
            omq = one - qa
        if not rep:  # certified Taylor blocks (symgdp.training.tailblocks)
            from symgdp.training.tailblocks import addremove_tails

            pbar, abar, ey = addremove_tails(q, sigma, disc, j0, j1, prec)
            return j0, j1, prec, pbar, abar, ey
        pbar, abar, ey = [], [], []
        for j in range(j0, j1 + 1):
            lj = arb(j) * d
            ey.append(lj.exp())
            if rep:
                w = ey[-1]
                em1 = lj.expm1()
                if em1 >= 0:   # (1-q)(w - 1) >= 0: the usual root, no cancellation
                    bq = omq * em1
                    root = (bq + (bq * bq + 4 * k2 * k2 * w).sqrt()) / (2 * k2)
                else:          # (1-q)(1 - w) > 0: the conjugate form
                    bq = -omq * em1
                    root = 2 * w * k2 / (bq + (bq * bq + 4 * k2 * k2 * w).sqrt())
                xs = root.log() * s2 * irt  # x_l / (sigma sqrt 2)
                a = xs.erfc() * half
                b = (xs - irt).erfc() * half
                c = (xs + irt).erfc() * half
                pbar.append(omq * a + qa * b)
                abar.append(omq * a + qa * c)
                continue
            # e^l - (1 - q) > 0 iff x_l is finite (at q = 1 it is e^l: no cancellation
            # with the 1 of expm1 far to the left)
            t = lj.exp() if q == 1 else lj.expm1() + qa
            if t < 0:
                pbar.append(one)
                abar.append(one)
                continue
            if not t > 0:
                raise DomainError(f"cannot separate a grid point from log(1-q) for q={q!r}")
            xs = ((t / qa).log() * s2 + half) * irt
            a = xs.erfc() * half
            b = (xs - irt).erfc() * half
            pbar.append((one - qa) * a + qa * b)
            abar.append(a)
    finally:
        flint.ctx.prec = old
    return j0, j1, prec, pbar, abar, ey


def _ey_upper(pmf: Any) -> float:
    """An upper bound on sum_l nu(l) e^{-l} over the finite losses of an IntPMF (float64
    terms of non-negative values, inflated by their worst-case relative rounding)."""
    c = np.asarray([int(v) for v in pmf.poly.coeffs()], dtype=np.float64)
    if c.size == 0:
        return 0.0
    e = np.exp(-(pmf.lower + np.arange(c.size, dtype=np.float64)) * pmf.disc)
    return math.ldexp(float(np.sum(c * e)), -pmf.bits) * (1.0 + 4.0 * (c.size + 16) * _U)


# -- composition over a schedule, with the bookkeeping of the floor --------------------------
class _Tracked:
    r"""An IntPMF with float upper bounds on: the mass its tail cuts and roundings moved
    (``cut``), its :math:`\sum_l \nu(l)e^{-l}` (``ey``) and the :math:`e^{-l}`-weighted
    mass moved to larger losses since the exact law (``erry``; it bounds how much the add
    direction read from this measure can miss, see :func:`compose_schedule`); ``coarse``:
    a float64 sketch of the measure in blocks (:func:`_coarse`; only to guess where to cut
    tails)."""

    __slots__ = ("pmf", "cut", "ey", "erry", "_coarse")

    def __init__(self, pmf: Any, cut: float = 0.0, ey: float = math.inf,
                 erry: float = math.inf, coarse: Any = None) -> None:
        self.pmf, self.cut, self.ey, self.erry = pmf, float(cut), float(ey), float(erry)
        self._coarse = coarse

    @property
    def coarse(self) -> Sketch:
        if self._coarse is None:
            p = self.pmf
            m = np.asarray(p.approx, dtype=np.float64)
            self._coarse = _rebin((1, p.lower, m, np.zeros(m.size)))
        return self._coarse


#: the longest block sketch of a measure (blocks of 2^k grid points)
_SKETCH = 1024
#: a sketch ``(B, s, m, r)``: ``m[k]`` the mass of the grid indices j with floor(j / B) =
#: s + k and ``r[k]`` its first moment about the block's first index (sum of mass times
#: j - (s + k) B, so ``r[k] / m[k]`` in [0, B) is the block's centre of mass)
Sketch = tuple[int, int, np.ndarray, np.ndarray]


def _rebin(c: Sketch, block: int = 1) -> Sketch:
    """A sketch in blocks of at least ``block`` and at most :data:`_SKETCH` of them (pairs
    of blocks merged: masses and moments added, the odd block's moment shifted by B)."""
    b, s, m, r = c
    while b < block or m.size > _SKETCH:
        if s % 2:  # align to even block indices, then merge pairs
            m, r = np.concatenate([[0.0], m]), np.concatenate([[0.0], r])
            s -= 1
        if m.size % 2:
            m, r = np.concatenate([m, [0.0]]), np.concatenate([r, [0.0]])
        m, r = m[0::2] + m[1::2], r[0::2] + r[1::2] + b * m[1::2]
        b, s = 2 * b, s // 2
    return b, s, m, r


def _sketch_product(x: Sketch, y: Sketch) -> Sketch:
    """The sketch of the convolution, keeping every block's centre of mass: the pairs of
    blocks (i, j) reach the grid indices from (s_x + s_y + i + j) B on, with first moment
    about there ``r_i m_j + m_i r_j`` (direct convolutions of non-negative terms, so tiny
    tail masses keep their relative accuracy); each sum of pairs goes, whole, to the block
    holding its centre of mass.  Splitting each product evenly between the two blocks it
    reaches (the sketch before) treats every block as uniform: a one-step measure whose
    mass sits at one end of its block (the subsampled Gaussian near the loss 0) then drifts
    by up to half a block per step, thousands of blocks over a long run, and the sketch
    lost its mass to the clipping (the cuts guessed nowhere, the tails never cut: DP-SGD
    with q = 256/60000, sigma = 0.7 grew to 4.5 million points instead of 0.3 million)."""
    b = max(x[0], y[0])
    x, y = _rebin(x, b), _rebin(y, b)
    mass = np.convolve(x[2], y[2])
    mom = np.convolve(x[3], y[2]) + np.convolve(x[2], y[3])
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(mass > 0, mom >= b * mass, False)  # centre in the second block
    m = np.zeros(mass.size + 1)
    r = np.zeros(mass.size + 1)
    m[:-1] += np.where(up, 0.0, mass)
    r[:-1] += np.where(up, 0.0, mom)
    m[1:] += np.where(up, mass, 0.0)
    r[1:] += np.where(up, np.maximum(mom - b * mass, 0.0), 0.0)
    return _rebin((b, x[1] + y[1], m, np.minimum(r, (b - 1) * m)))


def _clip(sk: Sketch, lo: int, hi: int) -> Sketch:
    """The sketch restricted to the blocks meeting the grid indices [lo, hi) (the masses
    outside, the cut tails, folded onto the first and last kept blocks: at most the tail
    when the sketch is right, and kept when it is not)."""
    b, s, m, r = sk
    k0 = min(max(lo // b - s, 0), m.size - 1)
    k1 = min(max((hi - 1) // b - s + 1, k0 + 1), m.size)
    mm, rr = m[k0:k1].copy(), r[k0:k1].copy()
    mm[0] += m[:k0].sum()
    tail = m[k1:].sum()
    mm[-1] += tail
    rr[-1] += (b - 1) * tail
    return _rebin((b, s + k0, mm, rr))


def _guess_cuts(sk: Sketch, lower: int, size: int, tail: float) -> tuple[int, int, int]:
    """Guesses (cl, cr, width) of the cuts from the sketch of the product (relative to
    ``lower``), and how far off they may be (checked exactly afterwards)."""
    b, s, m = sk[:3]
    if m.size == 0 or not np.all(np.isfinite(m)):
        return 0, size, size
    pre = np.cumsum(m)
    suf = np.cumsum(m[::-1])[::-1]
    ok_l = np.flatnonzero(pre <= tail)
    ok_r = np.flatnonzero(suf <= tail)
    kl = int(ok_l[-1]) + 1 if ok_l.size else 0       # blocks < kl carry at most tail
    kr = int(ok_r[0]) if ok_r.size else m.size       # blocks >= kr carry at most tail
    cl = min(max((s + kl) * b - lower, 0), size - 1)
    cr = min(max((s + kr + 2) * b - lower, cl + 1), size)
    return cl, cr, 2 * b + 64


def _cut_window(poly: Any, size: int, cl: int, cr: int, width: int, limit: int
                ) -> tuple[int, int, int, int]:
    """The cuts ``(cl, cr, low, high)`` searched exactly near the guesses: the largest
    ``cl`` whose prefix mass ``low`` is at most ``limit`` and the smallest ``cr`` whose
    suffix mass ``high`` is (windows of exact coefficients around the guesses, moved
    until they contain the answer)."""
    w = max(int(width), 16)

    def beyond(m: int) -> int:
        return int(poly.right_shift(m)(1)) if m < size else 0

    # right: a window [a, e) with the exact mass from e on
    e = min(cr + w, size)
    high = beyond(e)
    step = 2 * w
    while high > limit:  # the guess was too far in: move out, doubling the step
        e = min(e + step, size)
        high = beyond(e)
        step *= 2
    cut_r = e
    while True:
        a = max(e - 2 * w, cl + 1, 1)
        seg = [int(v) for v in poly.truncate(e).right_shift(a).coeffs()] if a < 2 * w \
            else [int(v) for v in poly.right_shift(a).truncate(e - a).coeffs()]
        seg += [0] * (e - a - len(seg))
        # suffix sums from e leftward: the first one beyond the limit stops the cut
        suf = list(itertools.accumulate(reversed(seg), initial=high))
        k = bisect.bisect_right(suf, limit) - 1  # suf[k] <= limit < suf[k + 1]
        cut_r, high = e - k, suf[k]
        if k < len(seg) or a <= max(cl + 1, 1):
            break
        e = a
    # left: a window [a, e) with the exact mass below a
    a = max(cl - w, 0)
    low = int(poly.truncate(a)(1)) if a else 0
    while low > limit and a > 0:
        a = max(a - 4 * w, 0)
        low = int(poly.truncate(a)(1)) if a else 0
    cut_l = a
    while True:
        e = min(a + 2 * w, cut_r - 1)
        if e <= a:
            break
        seg = [int(v) for v in poly.truncate(e).right_shift(a).coeffs()]
        seg += [0] * (e - a - len(seg))
        pre = list(itertools.accumulate(seg, initial=low))
        k = bisect.bisect_right(pre, limit) - 1  # pre[k] <= limit < pre[k + 1]
        cut_l, low = a + k, pre[k]
        if k < len(seg):
            break
        a = e
    return cut_l, cut_r, low, high


def _weighted_upper(poly: Any, lower: int, disc: float, bits: int) -> float:
    r"""A float64 upper bound on :math:`2^{-b}\sum_i c_i e^{-(\mathrm{lower} + i)\Delta}`
    for a non-negative ``fmpz_poly`` (ball arithmetic: the polynomial at
    :math:`e^{-\Delta}`)."""
    import flint

    if poly.length() == 0:
        return 0.0
    old = flint.ctx.prec
    flint.ctx.prec = 64
    try:
        d = flint.arb(disc)
        v = flint.arb_poly(poly)((-d).exp()) * (-d * lower).exp() * flint.arb(2) ** (-bits)
        return _arb_up(v)
    finally:
        flint.ctx.prec = old


def _compose2(a: _Tracked, b: _Tracked, tail: float, keep_left: bool = False) -> _Tracked:
    r"""The convolution of two tracked measures: the exact product, tails cut where their
    exact masses are at most ``tail`` (the right one moved to :math:`+\infty`, the left
    one too, or with ``keep_left`` onto the first kept loss), then every
    coefficient rounded *down* to the scale and the mass so removed moved to
    :math:`+\infty` (exact, rounded up).  Each is a move of
    mass to larger losses, so the result dominates the convolution of the inputs (the
    module notes of :mod:`symgdp.pld.pmf`); the moved masses go into ``cut`` (the
    floor's :math:`m`) and, weighted by :math:`e^{-l}` at their origins, into ``erry``.
    Where to cut is guessed from block sketches of the factors (:func:`_sketch_product`)
    and found on the exact sums (:func:`_cut_window`): the guess affects only speed."""
    from symgdp.pld.pmf import IntPMF, floor_scale, product

    x, y = a.pmf, b.pmf
    if x.disc != y.disc or x.bits != y.bits or x.up != y.up or not x.up:
        raise DomainError("these PMFs live on different grids")
    bits, disc = x.bits, x.disc
    check_product(x.size, y.size)
    poly = product(x.poly, y.poly) if a is not b else product(x.poly, x.poly)
    tx, ty = x.total(), y.total()
    inf = x.inf * (ty + y.inf) + y.inf * tx  # units of 2^-2bits
    lower, n = x.lower + y.lower, x.size + y.size - 1
    sk = _sketch_product(a.coarse, b.coarse)
    if tail > 0 and n >= 3:
        gl, gr, width = _guess_cuts(sk, lower, n, tail)
        cl, cr, left, right = _cut_window(poly, n, gl, gr, width,
                                          int(tail * float(2 ** (2 * bits))))
    else:
        cl, cr, left, right = 0, n, 0, 0
    kept = poly.truncate(cr).right_shift(cl) if cl else poly.truncate(cr)
    to_inf = right  # the masses moved to +infinity
    if left and keep_left:
        kept = kept + left  # the left tail onto the first kept loss (a negative one, as a
        # rule: near eps = 0, where a large mu's 1 - delta is tiny, it then adds nothing)
    else:  # to +infinity: one copy of the polynomial less
        to_inf += left
    lower2, n2 = lower + cl, cr - cl
    # the product's sum is tx * ty exactly
    f, tf, rest = floor_scale(kept, bits, tx * ty - to_inf)
    inf2 = inf + to_inf + rest
    out = IntPMF(disc, bits, lower2, f, (inf2 + (1 << bits) - 1) >> bits, None, True,
                 size=n2, total=tf)
    moved = left + right + rest  # exact, in units of 2^-2bits
    cut = a.cut + b.cut + (math.ldexp(float(moved), -2 * bits) * (1 + 4 * _U) if moved
                           else 0.0)
    ey, erry = math.inf, math.inf
    if math.isfinite(a.ey) and math.isfinite(b.ey):
        # every move above is to larger losses and adds no mass:
        # the weighted sum only falls
        ey = a.ey * b.ey * (1 + 16 * _U)
        wl = _weighted_upper(poly.truncate(cl), lower, disc, 2 * bits) if cl else 0.0
        # the right cut went to +infinity from losses at or above the first cut one
        wr = (math.ldexp(float(right), -2 * bits) * math.exp(-(lower2 + n2) * disc)
              * (1 + 16 * _U))
        # the rounding's rest went to +infinity from the kept losses (at least lower2)
        wrest = (math.ldexp(float(rest), -2 * bits) * math.exp(-lower2 * disc)
                 * (1 + 16 * _U))
        # swap the factors for their measures one at a time: the first swap's error is
        # weighted by the other factor's exact E[y] = 1, the second by its measure's ey;
        # ey can fall below 1 (tails moved to larger losses), so max(ey, 1) covers both
        erry = (a.erry * max(b.ey, 1.0) + b.erry * max(a.ey, 1.0) + wl + wr + wrest) \
            * (1 + 16 * _U)
    return _Tracked(out, cut, ey, erry, _clip(sk, lower2, lower2 + n2))


def _power(p: _Tracked, times: int, tail: float, keep_left: bool = False) -> _Tracked:
    """The ``times``-fold composition along a short addition chain."""
    return chained(p, times, lambda a, b: _compose2(a, b, tail, keep_left))


def compose_phases(leaves: Sequence[tuple[_Tracked, int, float]], tail: float,
                   keep_left: bool = False) -> tuple[_Tracked, float]:
    """One direction of a schedule: each phase's (one step's measure, steps, mass a step
    moved from outside its grid) composed ``steps`` times, convolved onto the phases before
    (lazily: one phase's power at a time); returns the measure and sum_i steps_i moved_i
    (float64, inflated by 1e-12)."""
    mv = math.fsum(t * m for _, t, m in leaves)
    acc = functools.reduce(lambda a, b: _compose2(a, b, tail, keep_left),
                           (_power(leaf, t, tail, keep_left) for leaf, t, _ in leaves))
    return acc, mv * (1 + 1e-12)


@dataclass(frozen=True)
class ComposedSGD:
    """The composed pessimistic measures of a schedule (one per direction) with what the
    floor needs: the steps, the grid, and per direction the mass moved from outside the
    one-step grids (``moved``) and by the tail cuts (``cut``)."""

    pmfs: tuple[Any, ...]
    moved: tuple[float, ...]
    cut: tuple[float, ...]
    steps: int
    disc: float
    neighbouring: Neighbouring
    add_error: float | None = None  # set when the add direction is read from remove

    def curves(self) -> list[Any]:
        out = [p.curve() for p in self.pmfs]
        if self.add_error is not None:
            out.append(_add_curve(self.pmfs[0], self.add_error))
        return out


def _add_curve(rem: Any, err: float) -> Any:
    r"""The add direction's upper curve read from the composed remove measure
    :math:`\nu`: mass :math:`\nu(l)e^{-l}` at loss :math:`-l`, plus ``err`` everywhere
    (carried as the curve's mass at infinity)."""
    from symgdp.pld.curves import Curve

    p = rem.upper_probs()
    n = p.size
    losses = (rem.lower + np.arange(n, dtype=np.float64)) * rem.disc
    q = p * np.exp(-losses) * (1 + 16 * _U)
    # near delta = 1 (the complement form of the curve): masses nu(l) e^{-l} from below,
    # and 1 - (sum_l nu(l) e^{-l} + err) from the exact integers in ball arithmetic
    q_low = rem.lower_probs() * np.exp(-losses) * (1 - 16 * _U)
    one_m = _one_minus_ey(rem) - float(np.nextafter(err, np.inf))
    return Curve(-(rem.lower + n - 1), rem.disc, q[::-1].copy(), float(err),
                  complement=(float(np.nextafter(one_m, -np.inf)), q_low[::-1].copy()))


def _one_minus_ey(pmf: Any) -> float:
    r"""A float64 lower bound on :math:`1 - \sum_l \nu(l)e^{-l}` for an IntPMF, evaluated
    exactly in ball arithmetic (:math:`e^{-\mathrm{lower}\,\Delta}` times the integer
    polynomial at :math:`e^{-\Delta}`, scaled by :math:`2^{-b}`)."""
    import flint

    if pmf.size == 0:
        return 1.0
    old = flint.ctx.prec
    flint.ctx.prec = 128 + pmf.bits + int(abs(pmf.lower) * pmf.disc / math.log(2.0))
    try:
        d = flint.arb(pmf.disc)
        val = flint.arb_poly(pmf.poly)((-d).exp()) * (-d * pmf.lower).exp()
        val = val * flint.arb(2) ** (-pmf.bits)
        low = (flint.arb(1) - val).lower()
    finally:
        flint.ctx.prec = old
    v = float(low)
    return float(np.nextafter(np.nextafter(v, -np.inf), -np.inf))


def scale_for(phases: Any, relation: str, support: float) -> tuple[int, float]:
    r"""The integer scale (bits) and the tail cut of a composition, from a guess of its
    :math:`\mu`: 80 bits and :math:`10^{-19}` unless the guessed :math:`1 - \delta(0)
    = 2\Phi(-\mu/2)` is so small that the composition's dust would reach a thousandth of
    it (large :math:`\mu`, beyond about 14).  The dust: each of the :math:`T` one-step
    roundings and of the (at most :math:`2\log_2 T` a phase) products moves or adds at
    most ``support`` units of :math:`2^{-b}`, each cut at most the tail; near
    :math:`\varepsilon = 0` it raises :math:`\delta` by as much.  The guess is the
    smaller of the phases' unsampled Gaussian composition :math:`\sqrt{\sum_i T_i /
    \sigma_i^2}` (twice that for replace-one) and the CLT's
    :math:`\sqrt{\sum_i T_i q_i^2(e^{1/\sigma_i^2} - 1)}`; it only tunes tightness and
    cost, never validity.

    Example:
        >>> scale_for([(0.01, 1.0, 1000)], "add_remove", 1e5)
        (80, 1e-19)
        >>> bits, tail = scale_for([(1.0, 0.5, 70)], "add_remove", 3e6)
        >>> bits > 80 and tail < 1e-19
        True
    """
    from scipy.special import ndtr

    k = 2.0 if relation == "replace_one" else 1.0
    mu_g = k * math.sqrt(sum(t / (s * s) for _, s, t in phases))
    mu_c = k * math.sqrt(sum(t * q * q * math.expm1(min(1.0 / (s * s), 700.0))
                             for q, s, t in phases))
    mu = min(mu_g, mu_c)
    room = 1e-3 * 2.0 * float(ndtr(-mu / 2.0))  # a thousandth of 1 - delta(0)
    ops = sum(t + 2 * max(int(t).bit_length(), 1) for _, _, t in phases) + len(phases)
    if not room > 0:
        room = 1e-300
    bits = 80
    while bits < 256 and ops * max(support, 1.0) * 2.0**-bits > room / 2:
        bits += 1
    tail = min(1e-19, room / (4.0 * ops))
    return bits, max(tail, 1e-300)


def compose_schedule(schedule: Any, disc: float, failure_prob: float,
                     neighbouring: Neighbouring = "add_remove", bits: int | None = None,
                     tail: float | None = None, derive_add: bool = True) -> ComposedSGD:
    r"""Compose the phases: ``int_self_compose`` per phase (repeated squaring), the phases
    convolved in order, for each direction of the relation.

    With ``derive_add`` (add/remove only) the add direction is not composed but read from
    the composed remove measure :math:`\nu` (the add-direction theorem in the module
    notes), which halves the work; when the error term of that reading exceeds a
    hundredth of ``failure_prob`` (a remove measure whose left tail, weighted by
    :math:`e^{-l}`, is heavy, as for :math:`q = 1`), the add direction is composed
    itself.  ``bits`` and ``tail`` default to :func:`scale_for`'s choice."""
    phases = check_schedule(schedule)
    rel = check_neighbouring(neighbouring)
    total = sum(p[2] for p in phases)
    tau = one_step_tail(failure_prob, total)
    derive = derive_add and rel == "add_remove"
    if bits is None or tail is None:
        width = sum(np.diff(_loss_grid(q, s, disc, tau, rel))[0] + 1 for q, s, _ in phases)
        b, tl = scale_for(phases, rel, float(width) * math.sqrt(total))
        bits = b if bits is None else bits
        tail = tl if tail is None else tail
    if derive and _amplified_rounding(phases, disc, tau, bits) > 1e-2 * failure_prob:
        # reading add from remove weights each rounded-up remove mass by e^{-l}: far left
        # losses (q near 1, small sigma) amplify the rounding past the failure
        # probability; composing the add direction itself is tight (dpsgd(1, 0.3, 1) read
        # 3.576 for the exact 3.333)
        derive = False
    # a large mu (a finer scale or smaller cuts): left tails onto the first kept loss
    keep_left = bits > 80 or tail < 1e-19
    steps = [one_step_pmfs(q, s, disc, tau, bits, rel, not derive) for q, s, _ in phases]
    # refuse before composing what would exhaust memory (the products cost log2 T each)
    check_support([(st.directions[0], t) for st, (_, _, t) in zip(steps, phases, strict=True)],
                  f"DP-SGD with {total} steps on the grid {disc:g}",
                  "use a coarser value_discretization_interval or fewer steps")
    ndir = 2 if rel == "add_remove" else 1
    pmfs, moved, cut = [], [], []
    add_error = None
    for k in range(ndir):
        if k and add_error is not None:
            if add_error <= 1e-2 * failure_prob:
                break
            add_error = None  # too large to be useful: compose the add direction itself
            derive = False
            steps = [one_step_pmfs(q, s, disc, tau, bits, rel) for q, s, _ in phases]
        acc, mv = compose_phases([(_Tracked(st.directions[k], 0.0, st.ey, st.qmoved) if derive
                                   else _Tracked(st.directions[k]), t, st.moved[k])
                                  for (_, _, t), st in zip(phases, steps, strict=True)],
                                 tail, keep_left)
        pmfs.append(acc.pmf)
        moved.append(mv)
        cut.append(acc.cut)
        if derive:
            if not math.isfinite(acc.erry):
                raise DomainError("the add direction's error bound overflowed")
            add_error = acc.erry
    return ComposedSGD(tuple(pmfs), tuple(moved), tuple(cut), total, disc, rel, add_error)


def _amplified_rounding(phases: Any, disc: float, tail: float, bits: int) -> float:
    """An estimate of the rounding the add direction read from the remove measure picks
    up: each remove mass rounded up by at most ``2^-bits``, weighted by ``e^{-l}`` down to
    the grid's left end, per step (it only chooses the route: both are upper bounds)."""
    out = 0.0
    for q, s, t in phases:
        j0, j1 = _loss_grid(q, s, disc, tail, "add_remove")
        log_w = min(-j0 * disc, 700.0) + math.log(j1 - j0 + 1) - bits * math.log(2.0)
        out += t * math.exp(min(log_w, 700.0))
    return out


# -- the floor -----------------------------------------------------------------------------
def _lower_curve(pmf: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """(losses rounded down, G, values, inf mass, deflation) of the measure's profile,
    every quantity a lower bound (the mirror image of the upper curve)."""
    p = pmf.lower_probs()
    n = p.size
    losses = (pmf.lower + np.arange(n, dtype=np.float64)) * pmf.disc
    losses = np.nextafter(np.nextafter(losses, -np.inf), -np.inf)
    r = math.exp(-pmf.disc)
    g = geometric_tail(p, r)
    g = np.maximum(g, 0.0)
    inf = max(math.ldexp(float(pmf.inf), -pmf.bits) * (1 - 4 * _U), 0.0)
    inc = g[1:] * -math.expm1(-pmf.disc)
    values = inf + np.concatenate([np.cumsum(inc[::-1])[::-1], [0.0]])
    return losses, g, values, inf, 1.0 - 8.0 * (n + 8) * _U


def _lower_sum(curve: Any, x: np.ndarray) -> np.ndarray:
    r"""A lower bound on :math:`\sum_l \nu(l)(1 - e^{x - l})_+` (plus the mass at
    infinity) at each x."""
    losses, g, values, inf, deflate = curve
    out = np.full(x.shape, inf)
    if losses.size == 0:
        return out * deflate
    idx = np.searchsorted(losses, x, side="right")
    ok = idx < losses.size
    j = idx[ok]
    lin = g[j] * -np.expm1(x[ok] - losses[j])
    out[ok] = (values[j] + np.maximum(lin, 0.0)) * deflate
    return np.maximum(out * (1.0 - 4 * _U), 0.0)


def lower_profile(comp: ComposedSGD, eps: Any, added: float | None = None) -> np.ndarray:
    r"""A proven lower bound on DP-SGD's true profile at each ``eps`` (the floor theorem
    in :mod:`symgdp.training.engine`), the largest over the directions and over a ladder
    of deviations :math:`t`; ``added`` bounds :math:`A` of a sub-probability law."""
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    T, D = comp.steps, comp.disc
    em = math.expm1(D)
    mean = T * em * em / 8.0 * (1 + 1e-12)
    var = T * (D * D / 4.0 + em**4 / 256.0) * (1 + 1e-12)
    best = np.zeros(x.shape)
    # deviations t with Bernstein tails exp(-k) for k in a ladder
    ts = []
    for k in (5.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0, 38.0, 46.0, 56.0, 70.0):
        # smallest t with t^2 / (2 (V + D t / 3)) >= k
        b = 2.0 * k * D / 3.0
        t = 0.5 * (b + math.sqrt(b * b + 8.0 * k * var)) * (1 + 1e-12)
        ts.append((t, math.exp(-k) * (1 + 1e-12)))
    for pmf, mv, ct in zip(comp.pmfs, comp.moved, comp.cut, strict=True):
        curve = _lower_curve(pmf)
        add = float(added) if added is not None else max(math.ldexp(float(
            pmf.total() + pmf.inf - (1 << pmf.bits)), -pmf.bits), 0.0) * (1 + 1e-12)
        const = add + 2.0 * ct + mv
        for t, pt in ts:
            # g_x(l) falls with x: the shifted point is rounded up
            xs = np.nextafter(x + (mean + t), np.inf)
            v = _lower_sum(curve, xs) - pt - const
            best = np.maximum(best, v)
    return np.maximum(best, 0.0)
