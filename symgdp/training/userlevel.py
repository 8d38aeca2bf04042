r"""User-level DP-SGD with Poisson sampling: each user contributes :math:`k` examples
(``dpsgd(..., examples_per_user=k)``), certified by the engine of
:mod:`symgdp.training.engine` with the one step of a mixture of Gaussians.

**The pair.**  Each of the user's :math:`k` examples is sampled independently with
probability :math:`q` and clipped to norm 1, so one step moves the noisy sum by at most
:math:`J` with :math:`J \sim \mathrm{Bin}(k, q)`.  Under add/remove of a *user*, the
dominating pair of one step is

.. math:: P = \sum_{j=0}^{k} w_j\,N(j, \sigma^2), \quad Q = N(0, \sigma^2), \quad
   w_j = \binom{k}{j} q^j (1 - q)^{k - j},

in both directions :math:`(P, Q)` (remove) and :math:`(Q, P)` (add) (Ganesh 2024,
"Tight group-level DP guarantees for DP-SGD with sampling via mixture of Gaussians
mechanisms", arXiv:2401.10294, its theorem for Poisson sampling; dp_accounting's
``MixtureOfGaussiansDpEvent`` with sensitivities :math:`0, \dots, k` and these weights).
For :math:`k = 1` it is the engine's own add/remove pair.  The profile of :math:`T`
adaptive steps is the larger of the all-remove and all-add compositions, as for
:math:`k = 1`.  **Replace-one** at user level is not analysed here and is refused by name.

**The privacy loss is increasing.**  With :math:`u = e^{x/\sigma^2}`,
:math:`e^{L(x)} = P(x)/Q(x) = \sum_j a_j u^j`, :math:`a_j = w_j e^{-j^2/(2\sigma^2)}`:
a polynomial in :math:`u` with non-negative coefficients, strictly increasing for
:math:`u > 0` (:math:`q > 0`), with :math:`e^{L} \to a_0 = (1 - q)^k` as
:math:`x \to -\infty`.  So the loss level :math:`l > \log a_0` is crossed at one point
:math:`x_l = \sigma^2 \log u_l`, :math:`u_l` the positive root of
:math:`\sum_j a_j u^j = e^l`, and the masses above it are Gaussian tails:
:math:`P(L > l) = \sum_j w_j \bar\Phi((x_l - j)/\sigma)`,
:math:`Q(L > l) = \bar\Phi(x_l/\sigma)` (both 1 for :math:`l \le \log a_0`).

**Certified.**  :math:`v_l = \log u_l` is found in float64 (Newton on the convex
increasing :math:`\log\sum_j a_j e^{jv}` from the right), refined by Newton steps in ball
arithmetic, and *enclosed*: a ball :math:`[v - r, v + r]` is accepted only when ball
arithmetic proves :math:`\sum_j a_j e^{j(v - r)} < e^l < \sum_j a_j e^{j(v + r)}`
(monotonicity then puts :math:`v_l` inside).  The tails are evaluated on that ball
(``erfc`` in balls), and the connect-the-dots split, the rounding up to integers, the
moves of out-of-grid mass and the integer composition are the engine's
(:func:`symgdp.training.engine.pmfs_from_tails`; the theorem of
:mod:`symgdp.training.dpsgd` and the floor theorem of :mod:`symgdp.training.engine`
hold for any pair with an increasing loss, their proofs using only the cells).  Both
directions are composed (the add direction is not read from the remove one).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.training.engine import (
    ComposedSGD,
    StepPMFs,
    _Tracked,
    check_schedule,
    compose_phases,
    one_step_tail,
    pmfs_from_tails,
    scale_for,
)

__all__ = ["check_examples_per_user", "mixture_step_pmfs", "compose_user_level",
           "binomial_weights", "check_weights", "floor_grid_step"]

#: the largest examples_per_user accepted (the mixture has k + 1 Gaussians per point)
MAX_EXAMPLES_PER_USER = 256


def check_examples_per_user(k: Any) -> int:
    """``k`` checked: an integer in [1, 256]; :class:`DomainError` naming it otherwise.

    Example:
        >>> check_examples_per_user(3)
        3
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise DomainError(f"examples_per_user must be an integer >= 1, got {k!r}")
    if not 1 <= int(k) <= MAX_EXAMPLES_PER_USER:
        raise DomainError(f"examples_per_user must be an integer in [1, "
                          f"{MAX_EXAMPLES_PER_USER}], got {k!r}")
    return int(k)


def binomial_weights(k: int, q: float) -> np.ndarray:
    r"""The float64 weights :math:`\binom{k}{j}q^j(1-q)^{k-j}` (only to place the grid;
    the certified route computes them in balls).

    Example:
        >>> [round(float(w), 4) for w in binomial_weights(2, 0.5)]
        [0.25, 0.5, 0.25]
    """
    lq = math.log(q)
    lp = math.log1p(-q) if q < 1 else -math.inf
    out = []
    for j in range(k + 1):
        if q == 1:
            out.append(1.0 if j == k else 0.0)
            continue
        out.append(math.exp(math.log(math.comb(k, j)) + j * lq + (k - j) * lp))
    return np.asarray(out, dtype=np.float64)


def _fweights(k: int, q: float, weights: Any) -> np.ndarray:
    """The float64 weights: binomial, or the given ones normalised (grid placement only)."""
    if weights is None:
        return binomial_weights(k, q)
    w = np.asarray(weights, dtype=np.float64)
    return w / np.sum(w)


def _float_loss(k: int, q: float, sigma: float, x: Any, weights: Any = None) -> Any:
    """The privacy loss log(P(x)/Q(x)) in float64 (only to place the grid)."""
    from scipy.special import logsumexp

    j = np.arange(k + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        lw = np.log(_fweights(k, q, weights))
    xx = np.atleast_1d(np.asarray(x, dtype=np.float64))[:, None]
    out = logsumexp(lw[None, :] + (2.0 * j * xx - j * j) / (2.0 * sigma * sigma), axis=1)
    return out if np.ndim(x) else float(out[0])


def _grid(k: int, q: float, sigma: float, disc: float, tail: float, weights: Any = None
          ) -> tuple[int, int]:
    r"""Grid indices (j0, j1): below :math:`x = -z\sigma` the :math:`Q`-mass (and the
    smaller :math:`P`-mass) is about ``tail``; above :math:`x_{hi}` each component
    :math:`w_j N(j, \sigma^2)` has mass at most ``tail/(k + 1)``.  Only placement: the
    masses outside are accounted for rigorously."""
    from scipy.special import ndtri

    z = float(-ndtri(tail))
    w = _fweights(k, q, weights)
    lo = _float_loss(k, q, sigma, -z * sigma, weights)
    if w[0] > 0:
        lo = max(lo, math.log(w[0]))
    x_hi = 1.0
    for j in range(1, k + 1):
        # p = tail / ((k + 1) w_j) < 1/2 asked without dividing: a tiny w_j (k = 256,
        # q = 0.001: w_256 ~ 1e-768 is 0, w_200 a subnormal) overflowed the quotient
        if w[j] > 0 and tail < 0.5 * (k + 1) * w[j]:
            x_hi = max(x_hi, j + sigma * float(-ndtri(tail / ((k + 1) * w[j]))))
        elif w[j] > 0:
            x_hi = max(x_hi, float(j))
    hi = _float_loss(k, q, sigma, x_hi, weights)
    return int(math.floor(lo / disc)) - 1, int(math.ceil(hi / disc)) + 1


def _float_roots(k: int, q: float, sigma: float, ls: np.ndarray, weights: Any = None
                 ) -> np.ndarray:
    r"""Float64 guesses of :math:`v_l = \log u_l` (``-inf`` where :math:`e^l \le a_0`):
    Newton on the convex increasing :math:`f(v) = \log\sum_j a_j e^{jv} - l` from the
    right (where a single term already reaches :math:`e^l`)."""
    from scipy.special import logsumexp

    j = np.arange(k + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        la = np.log(_fweights(k, q, weights)) - j * j / (2.0 * sigma * sigma)
    pos = np.isfinite(la[1:])
    has = ls > la[0]  # else no root: the loss never falls to l
    out = np.full(ls.shape, -np.inf)
    lv = ls[has]
    v = np.min(np.where(pos[None, :], (lv[:, None] - la[None, 1:]) / j[None, 1:], np.inf),
               axis=1)
    live = np.arange(lv.size)
    for _ in range(100):
        if live.size == 0:
            break
        t = la[None, :] + j[None, :] * v[live, None]
        lse = logsumexp(t, axis=1)
        slope = np.sum(np.exp(t - lse[:, None]) * j[None, :], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = (lse - lv[live]) / slope
        step = np.where(np.isfinite(step), step, 0.0)
        v[live] -= step
        live = live[np.abs(step) > 1e-15 * np.maximum(1.0, np.abs(v[live]))]
    out[has] = v
    return out


@functools.lru_cache(maxsize=8)
def _mixture_tails(k: int, q: float, sigma: float, disc: float, tail: float, bits: int,
                   weights: tuple[float, ...] | None = None
                   ) -> tuple[int, int, int, list[Any], list[Any], list[Any]]:
    r"""(j0, j1, precision, P-tails, Q-tails, e^{l}) at the grid points, in balls (the
    module notes); ``weights``: the mixture's own weights of :math:`N(j, \sigma^2)`,
    normalised exactly in balls, instead of the binomial ones."""
    import flint

    j0, j1 = _grid(k, q, sigma, disc, tail, weights)
    if j1 - j0 > 4_000_000:
        raise DomainError(f"examples_per_user={k}, sigma={sigma!r}: one step would need "
                          f"{j1 - j0} grid points on the grid {disc:g} (use a coarser "
                          "value_discretization_interval)")
    prec = min(max(56 + 2 * math.ceil(math.log2(1.0 / disc)), 64), 200)
    prec += min(math.ceil(max(0.0, -j0 * disc) / math.log(2.0)) + 8, 400)
    prec += max(int(bits) - 80, 0) + 2 * k.bit_length()
    ls = np.arange(j0, j1 + 1, dtype=np.float64) * disc
    guess = _float_roots(k, q, sigma, ls, weights)
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        arb = flint.arb
        one, half, d = arb(1), arb(0.5), arb(disc)
        s = arb(sigma)
        qa = arb(q)
        if weights is None:
            w = [arb(math.comb(k, j)) * qa**j * (one - qa) ** (k - j) for j in range(k + 1)]
        else:  # exact floats, normalised in balls
            w = [arb(float(p)) for p in weights]
            tot = sum(w, arb(0))
            w = [x / tot for x in w]
        a = [w[j] * (-arb(j * j) / (2 * s * s)).exp() for j in range(k + 1)]
        srt = s / arb(2).sqrt()                # x/(sigma sqrt 2) = v sigma / sqrt 2
        shift = [arb(j) / (s * arb(2).sqrt()) for j in range(k + 1)]
        pbar, abar, ey = [], [], []
        for i, jj in enumerate(range(j0, j1 + 1)):
            el = (arb(jj) * d).exp()
            ey.append(el)
            if not (el > a[0]):
                if not (el <= a[0]):  # the ball straddles log a_0
                    raise DomainError(f"examples_per_user={k}, q={q!r}: cannot separate "
                                      f"the loss {jj * disc:.6g} from log (1 - q)^k")
                pbar.append(one)  # the loss exceeds l everywhere
                abar.append(one)
                continue
            v0 = float(guess[i])
            if not math.isfinite(v0):  # float64 put l at or below log a_0, the balls above
                j1st = next(j for j in range(1, k + 1) if a[j] > 0)
                v0 = float(((el - a[0]) / a[j1st]).log().mid()) / j1st
            v = _enclose(a, el, v0, prec)
            if v is None:
                raise DomainError(f"examples_per_user={k}, q={q!r}, sigma={sigma!r}: the "
                                  f"point of loss {jj * disc:.6g} could not be enclosed")
            xs = v * srt
            pbar.append(sum((w[j] * (xs - shift[j]).erfc() * half for j in range(k + 1)),
                            arb(0)))
            abar.append(xs.erfc() * half)
    finally:
        flint.ctx.prec = old
    return j0, j1, prec, pbar, abar, ey


def _poly(a: list[Any], e: Any) -> tuple[Any, Any]:
    """(sum_j a_j e^j, sum_j j a_j e^j) for a ball e = e^v."""
    import flint

    g, dg, p = flint.arb(0), flint.arb(0), flint.arb(1)
    for j, aj in enumerate(a):
        if j:
            p = p * e
        g += aj * p
        dg += j * aj * p
    return g, dg


def _enclose(a: list[Any], el: Any, v0: float, prec: int) -> Any:
    """A ball containing the root v of sum_j a_j e^{jv} = el, proved by the signs at its
    ends (the sum is increasing in v), or None."""
    import flint

    arb = flint.arb
    v = arb(v0)
    for _ in range(2 if prec <= 100 else 3):  # Newton at midpoints (quadratic from 53 bits)
        g, dg = _poly(a, v.exp())
        v = (v - (g - el) / dg).mid()
    r = arb(2) ** (-(prec - 12)) * max(1.0, abs(float(v)))
    ev = v.exp()
    for _ in range(8):
        # e^{v -+ r} as balls contain the exact values at the end points: the signs there
        # (the sum is increasing) put the root inside the ball [v - r, v + r]
        er = r.exp()
        if _poly(a, ev / er)[0] < el and _poly(a, ev * er)[0] > el:
            return arb(v, r)
        r = r * arb(2) ** 16
    return None


def mixture_step_pmfs(k: int, q: float, sigma: float, disc: float, tail: float,
                      bits: int, weights: tuple[float, ...] | None = None) -> StepPMFs:
    r"""Certified one-step PMFs (remove, add) of the user-level pair (module notes).

    Example:
        >>> st = mixture_step_pmfs(2, 1.0, 2.0, 0.05, 1e-12, 80)  # N(2, 4) vs N(0, 4)
        >>> len(st.directions), abs(float(sum(st.directions[0].approx)) - 1.0) < 1e-9
        (2, True)
    """
    return pmfs_from_tails(_mixture_tails(k, q, sigma, disc, tail, bits, weights), disc, bits,
                           False, True,
                           f"user-level DP-SGD one step (examples_per_user={k}, q={q!r}, "
                           f"sigma={sigma!r}, discretization {disc!r})")


def compose_user_level(schedule: Any, k: int, disc: float, failure_prob: float,
                       weights: tuple[float, ...] | None = None) -> ComposedSGD:
    r"""The phases' user-level steps composed, both directions, in exact integers as
    :func:`symgdp.training.engine.compose_schedule` (add/remove of one user with ``k``
    examples; ``weights``: the law of :math:`J` given as ``k + 1`` non-negative floats,
    normalised exactly, instead of :math:`\mathrm{Bin}(k, q)`, for every phase)."""
    phases = check_schedule(schedule)
    k = check_examples_per_user(k)
    total = sum(p[2] for p in phases)
    tau = one_step_tail(failure_prob, total)
    weights = check_weights(weights, k)
    width = sum(np.diff(_grid(k, q, s, disc, tau, weights))[0] + 1 for q, s, _ in phases)
    # the scale's guess of mu: the unsampled user moves the sum by k (sigma / k per unit)
    bits, tail = scale_for([(q, s / k, t) for q, s, t in phases], "add_remove",
                           float(width) * math.sqrt(total))
    keep_left = bits > 80 or tail < 1e-19
    steps = [mixture_step_pmfs(k, q, s, disc, tau, bits, weights) for q, s, _ in phases]
    from symgdp.pld.pmf import check_support

    check_support([(st.directions[0], t) for st, (_, _, t) in zip(steps, phases, strict=True)],
                  f"user-level DP-SGD with {total} steps on the grid {disc:g}",
                  "use a coarser value_discretization_interval or fewer steps")
    both = [compose_phases([(_Tracked(st.directions[d]), t, st.moved[d])
                            for (_, _, t), st in zip(phases, steps, strict=True)],
                           tail, keep_left) for d in range(2)]   # remove, add
    return ComposedSGD(tuple(acc.pmf for acc, _ in both), tuple(mv for _, mv in both),
                       tuple(acc.cut for acc, _ in both), total, disc, "add_remove")


def check_weights(weights: Any, k: int) -> tuple[float, ...] | None:
    """``None``, or ``k + 1`` finite non-negative floats with a positive weight beyond the
    first and a sum within 1e-9 of 1 (they are normalised exactly); :class:`DomainError`
    naming them otherwise."""
    if weights is None:
        return None
    try:
        w = tuple(float(v) for v in weights)
    except (TypeError, ValueError):
        raise DomainError(f"mixture weights must be numbers, got {weights!r}") from None
    if len(w) != k + 1 or not all(math.isfinite(v) and v >= 0 for v in w) \
            or not any(v > 0 for v in w[1:]) or abs(math.fsum(w) - 1.0) > 1e-9:
        raise DomainError(f"mixture weights must be {k + 1} non-negative numbers summing to "
                          f"1 with one beyond the first positive, got {weights!r}")
    return w


def floor_grid_step(phases: Any, k: int, disc: float, failure_prob: float, eps_h: float,
                    weights: tuple[float, ...] | None = None, least: float = 0.0) -> float:
    r"""The floor's grid at user level, as the record-level one
    (:func:`symgdp.training.grids.floor_grid_step`): ``disc`` unless the floor's shift
    (about :math:`\Delta\sqrt{11.5\,T}`) exceeds a twentieth of the head, then a finer
    grid, at most 32 times finer and at most about :math:`3\cdot10^5` one-step points of
    the *mixture's* grid, and no finer than ``least``: it only chooses the grid; every grid
    gives a proved floor)."""
    total = sum(t for _, _, t in phases)
    if disc * math.sqrt(11.5 * total) <= eps_h / 20.0:
        return disc
    fine = max(disc / 32.0, eps_h / (20.0 * math.sqrt(11.5 * total)), least)
    tau = one_step_tail(failure_prob, total)
    points = sum(j1 - j0 for j0, j1 in (_grid(k, q, s, fine, tau, weights)
                                        for q, s, _ in phases))
    if points > 300_000:
        fine *= points / 300_000
    return fine if fine < disc * 0.75 else disc
