r"""A proved floor for shuffled epochs and random allocation: the max-statistic lower bound of
Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, "How Private are DP-SGD
Implementations?", ICML 2024 (arXiv:2403.17673), certified.

For ``sampling="shuffle"`` and ``"random_allocation"`` :func:`symgdp.dpsgd` proves an upper
bound without amplification (:mod:`symgdp.training.sampling`).  This module gives the other end
of the bracket: a proven lower bound on the mechanism's profile, hence ``mu_floor``.

**The attained pair** (clipping norm 1, noise multiplier :math:`\sigma`, :math:`t` steps per
epoch, :math:`E` epochs; :math:`e_j` the :math:`j`-th unit vector of :math:`\mathbb R^t`).

* Random allocation, add/remove: every other record's clipped gradient is 0, the added
  record's is a fixed unit vector :math:`u`, and it lands in a uniform step :math:`J` of each
  epoch.  The noisy sums of one epoch, projected on :math:`u`, are
  :math:`P = \frac1t\sum_j N(c\,e_j, \sigma^2 I_t)` against :math:`Q = N(0, \sigma^2 I_t)` with
  :math:`c = 1`.  Under replace-one the same pair (:math:`c = 1`) is attained by replacing
  that record by one whose gradient is 0 (no pair with :math:`c = 2` is attained here: the
  replacing record lands in its own uniform step, so the floor is loose by up to a factor 2).
* Shuffle with :math:`t = \lceil n/b\rceil` batches (the last one holding the
  :math:`n - (t-1)b` records left when :math:`b \nmid n`), replace-one: every other
  record's gradient is :math:`-u` and the replaced record's moves from :math:`u` to
  :math:`-u`; batch :math:`j` (of size :math:`b_j`) sums to :math:`-b_j u`, the one holding
  the record to :math:`-(b_j - 2)u`: after the shift by :math:`b_j u` in each coordinate
  (post-processing; the sizes are fixed by position) the pair
  :math:`P = \sum_j w_j N(c\,e_j, \sigma^2 I_t)` against :math:`Q` with :math:`c = 2` and
  :math:`w_j = b_j/n` the chance that the record falls in batch :math:`j`.  The weights do
  not matter below: the law of the largest coordinate is the same under every
  :math:`N(c\,e_j, \sigma^2 I_t)`, so :math:`P(M \le m)` is the same as for equal weights.
* Shuffle, add/remove: :mod:`symgdp.training.sampling` states it as the zero-out relation
  (the record against one whose gradient is 0, the batch sizes kept): every other gradient
  0, the pair above with :math:`c = 1`.

The mechanism is the one the upper bounds are proved for: every step's noisy sum is released
(the model updates are post-processing of them), the loss function is the trainer's (here a
linear one, whose clipped gradients are the constants above).  These are the relations the
upper bounds are stated for (:math:`c\sqrt E/\sigma`, with
:math:`c = 1` add/remove or zero-out, 2 replace-one).  The gradients are fixed, so the epochs
(independent permutations or allocations, independent noise) give the :math:`E`-fold product
:math:`(P^E, Q^E)`, attained in both orders (both are pairs of neighbours).

**The max statistic.**  Chua et al. 2024 lower-bound one epoch of shuffled batches with
tests on the largest coordinate; the multi-epoch lower bounds of shuffling are in Chua,
Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, "Scalable DP-SGD: Shuffling vs. Poisson
Subsampling", NeurIPS 2024 (arXiv:2411.04205).  What is used here is proved here, in full:
no step rests on a numbered result of either paper.  Post-processing each epoch by
:math:`M = \max_j y_j` gives one-dimensional laws with closed-form CDFs

.. math::
    Q(M \le m) = \Phi(m/\sigma)^t, \qquad
    P(M \le m) = \Phi((m - c)/\sigma)\,\Phi(m/\sigma)^{t-1},

and privacy loss

.. math::
    L(m) = \log\frac{p_M(m)}{q_M(m)} = \log\Big[\frac1t\Big(e^{(2mc - c^2)/(2\sigma^2)}
      + (t - 1)\frac{\Phi((m - c)/\sigma)}{\Phi(m/\sigma)}\Big)\Big],

increasing in :math:`m` (the first term grows; :math:`\log\Phi` is concave, so
:math:`\log\Phi(x - c/\sigma) - \log\Phi(x)` grows).  By post-processing the mechanism's
profile is at least the hockey-stick divergence of :math:`(P_M^E, Q_M^E)`,
:math:`\mathbb E_{P_M^E}[(1 - e^{\varepsilon - \sum_i L(M_i)})_+]`, and at least that of the
swapped pair, :math:`\mathbb E_{Q_M^E}[(1 - e^{\varepsilon + \sum_i L(M_i)})_+]`.  For
:math:`t = 1` the pair is the Gaussian :math:`G_{c/\sigma}` itself.

**Theorem (certified lower PLD).**  Let :math:`b_0 < \dots < b_K` be points of the real line,
:math:`w_i \le P_M((b_i, b_{i+1}])` (and :math:`w_K \le P_M((b_K, \infty))`), and
:math:`l_i \le L(b_i)` points of the grid :math:`\Delta\mathbb Z`.  Let :math:`\nu_E` arise
from :math:`\nu_1 = \sum_i w_i\delta_{l_i}` by :math:`E - 1` convolutions, each followed by
rounding masses down, dropping mass and moving mass to smaller losses.  Then for every
:math:`\varepsilon`

.. math:: \delta(\varepsilon) \ge \sum_l \nu_E(l)\,(1 - e^{\varepsilon - l})_+ .

*Proof.*  :math:`f(x) = (1 - e^{\varepsilon - x})_+` is non-negative and non-decreasing.  On
the cell :math:`(b_i, b_{i+1}]` the loss is at least :math:`L(b_i) \ge l_i` (:math:`L`
increases), so the law of :math:`L(M)` under :math:`P_M` arises from :math:`\nu_1` by adding
mass (at least :math:`P_M((-\infty, b_0])`) and moving mass to larger losses; the integral
of any non-negative non-decreasing function does not decrease under either, and convolution
keeps this order (the cone argument of the theorem in :mod:`symgdp.training.dpsgd`, read
downwards).  :math:`\square`  The swapped pair is the same with the loss :math:`-L(M)` under
:math:`Q_M` (a cell's loss is at least :math:`-L(b_{i+1})`, the tail :math:`(-\infty,
b_0]` carries the largest losses and is lumped at :math:`-L(b_0)`).

What is computed: the masses :math:`F(b_{i+1}) - F(b_i)` in ball arithmetic (python-flint
``arb``, :math:`\Phi` from ``erfc``, :math:`\Phi^{t-1}` as :math:`e^{(t-1)\log\Phi}`; the
lower end of each ball, rounded down to :math:`2^{-80}`), the losses :math:`L(b_i)` as balls
rounded down onto the grid (the points :math:`b_i` are float64 preimages of the grid points
:math:`k\Delta`, nudged so that each cell's loss is rounded down by at most about one step
:math:`\Delta`; where a nudge fails the ball still decides, so it costs tightness, never
validity), the :math:`E`-fold composition in exact integers with every product rounded down
(:func:`symgdp.pld.pmf.int_self_compose`, optimistic), and its profile by
:meth:`symgdp.pld.pmf.IntPMF.lower_delta`.  Each epoch's losses are rounded down by at most
about :math:`\Delta`, so the floor's profile sits at most about :math:`E\Delta` to the left
in :math:`\varepsilon` of the max-statistic pair's: the grid is chosen from :math:`E`
(:func:`floor_grid`).  The max statistic itself is a lower bound, not the mechanism: the
bracket ``[mu_floor, mu_upper]`` is proved but not tight (``tight=False``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError

__all__ = ["MaxStatisticFloor", "max_statistic_floor", "max_statistic_loss", "floor_grid",
           "mu_floor_from_lower", "scheme_floor", "THEOREM"]

#: where the pair and the bound come from, in words
THEOREM = ("the max-statistic lower bound of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha "
           "& Zhang 2024 (ICML, arXiv:2403.17673), certified")

# mass of each direction's measure dropped or lumped at either end of its m-range
_TAIL = 1e-17
# the float64 preimages of the grid points are aimed this fraction of a step inside
_AIM = 1e-6
# the arb working precision (bits): Phi^(t-1) keeps about prec - log2(t |log Phi|) bits
_PREC = 200
# at most this many cells per epoch (a coarser grid beyond)
MAX_CELLS = 6000
# one epoch with more cells than this is refused (no floor)
_REFUSE = 40_000
# the E-fold support (grid points) the grid aims to stay under
_SUPPORT = 400_000


def _check(t: Any, c: Any, sigma: Any, epochs: Any) -> tuple[int, float, float, int]:
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
        raise DomainError(f"steps per epoch must be an integer >= 1, got {t!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
        raise DomainError(f"epochs must be an integer >= 1, got {epochs!r}")
    cc, s = float(c), float(sigma)
    if not (math.isfinite(cc) and cc > 0):
        raise DomainError(f"the sensitivity c must be finite and > 0, got {c!r}")
    if not (math.isfinite(s) and s > 0):
        raise DomainError(f"sigma must be finite and > 0, got {sigma!r}")
    return int(t), cc, s, int(epochs)


def max_statistic_loss(m: Any, t: int, c: float, sigma: float) -> Any:
    r"""The privacy loss :math:`L(m)` of the max statistic (module notes), float64,
    vectorised: an estimate (the certified values are balls, computed inside).

    Example:
        >>> # t = 1 is the Gaussian pair: L(m) = (2mc - c^2) / (2 sigma^2)
        >>> float(max_statistic_loss(1.5, 1, 1.0, 2.0))
        0.25
    """
    from scipy.special import log_ndtr

    x = np.asarray(m, dtype=np.float64)
    a = (2.0 * x * c - c * c) / (2.0 * sigma * sigma)
    if t == 1:
        return a
    b = log_ndtr((x - c) / sigma) - log_ndtr(x / sigma) + math.log(t - 1)
    return np.logaddexp(a, b) - math.log(t)


def _log_cdf(m: Any, t: int, c: float, sigma: float, shifted: bool) -> Any:
    """log P(M <= m) (``shifted``) or log Q(M <= m), float64, vectorised."""
    from scipy.special import log_ndtr

    x = np.asarray(m, dtype=np.float64)
    base = log_ndtr(x / sigma)
    if not shifted:
        return t * base
    return log_ndtr((x - c) / sigma) + (t - 1) * base


def _quantile(t: int, c: float, sigma: float, shifted: bool, level: float, upper: bool
              ) -> float:
    """The m where the CDF (``upper``: the survival function) is about ``level`` (float
    bisection; it only sets the range)."""
    lo, hi = -60.0 * sigma - c, 60.0 * sigma + c + sigma * math.sqrt(2 * math.log(t + 1))
    target = math.log(level)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lf = float(_log_cdf(mid, t, c, sigma, shifted))
        v = math.log(-math.expm1(lf)) if upper and lf < 0 else (-math.inf if upper else lf)
        if (v > target) if upper else (v < target):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * (1 + abs(mid)):
            break
    return 0.5 * (lo + hi)


def _range(t: int, c: float, sigma: float, remove: bool) -> tuple[float, float]:
    """The m-range of one direction's measure (P for remove, Q for add) outside which at
    most ``_TAIL`` of its mass lies at either end."""
    return (_quantile(t, c, sigma, remove, _TAIL, False),
            _quantile(t, c, sigma, remove, _TAIL, True))


def loss_range(t: int, c: float, sigma: float) -> tuple[float, float, float, float]:
    """``(lo_remove, hi_remove, lo_add, hi_add)``: the losses at the ends of each
    direction's m-range (float64 estimates: they size the grid)."""
    a, b = _range(t, c, sigma, True)
    a2, b2 = _range(t, c, sigma, False)
    la, lb = (float(max_statistic_loss(v, t, c, sigma)) for v in (a, b))
    la2, lb2 = (float(max_statistic_loss(v, t, c, sigma)) for v in (a2, b2))
    return la, lb, -lb2, -la2


def floor_grid(t: int, c: float, sigma: float, epochs: int,
               max_cells: int = MAX_CELLS) -> float:
    r"""The loss grid :math:`\Delta` of the floor: about :math:`\varepsilon`-scale / (100 E)
    (each epoch's losses are rounded down by about :math:`\Delta`, so the floor's profile
    moves by about :math:`E\Delta`) or a 2000th of one epoch's loss range if smaller (many
    steps: small losses), coarser when one epoch would need more than ``max_cells`` cells or
    the :math:`E`-fold support would pass about ``4e5`` points.

    Example:
        >>> 0 < floor_grid(10, 1.0, 2.0, 5) <= 1e-2
        True
    """
    t, c, sigma, epochs = _check(t, c, sigma, epochs)
    lo_r, hi_r, lo_a, hi_a = loss_range(t, c, sigma)
    width = max(hi_r - lo_r, hi_a - lo_a, 1e-12)
    # the scale of the epsilons that matter: that of the Gaussian bound c sqrt(E) / sigma
    scale = max(c * math.sqrt(epochs) / sigma, 0.05)
    # finer where one epoch's losses are all small (many steps: amplification), so that
    # rounding them down does not wipe them out
    disc = min(scale / (100.0 * epochs), width / 2000.0)
    disc = max(disc, width / max_cells)
    # the E-fold support: the tails cut at 1e-19 keep about 20 standard deviations
    spread = min(epochs * width, 20.0 * math.sqrt(epochs) * width / 4.0 + width)
    disc = max(disc, spread / _SUPPORT)
    # a power of two: the grid points k * disc and the loss balls divide exactly
    return 2.0 ** math.floor(math.log2(min(disc, 1.0)))


def _points(t: int, c: float, sigma: float, disc: float, remove: bool) -> np.ndarray:
    """The cell boundaries b_i: float64 preimages of the grid points k disc, aimed
    ``_AIM`` of a step above (remove: L(b) >= k disc) or below (add: -L(b) >= -k disc)."""
    a, b = _range(t, c, sigma, remove)
    la, lb = float(max_statistic_loss(a, t, c, sigma)), float(max_statistic_loss(b, t, c, sigma))
    if (lb - la) / disc > _REFUSE:  # before any array of that size is built
        raise DomainError(f"the max statistic with t={t}, c={c:g}, sigma={sigma:g} on the "
                          f"grid {disc:g} needs about {(lb - la) / disc:.3g} cells per epoch "
                          f"(more than {_REFUSE}): no floor (a coarser grid, or a larger "
                          "sigma)")
    if remove:
        ks = np.arange(math.ceil(la / disc), math.floor(lb / disc) + 1, dtype=np.float64)
        target = (ks + _AIM) * disc
    else:
        ks = np.arange(math.ceil(la / disc), math.floor(lb / disc) + 1, dtype=np.float64)
        target = (ks - _AIM) * disc
    if ks.size == 0:
        return np.asarray([a, b])
    # bisection, vectorised, on [a, b] (L increases)
    lo = np.full(ks.size, a)
    hi = np.full(ks.size, b)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        below = max_statistic_loss(mid, t, c, sigma) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    pts = hi if remove else lo
    return np.unique(np.concatenate([[a], pts, [b]]))


class _Balls:
    """The closed forms in balls at one precision."""

    def __init__(self, t: int, c: float, sigma: float) -> None:
        import flint

        self.arb = flint.arb
        self.t, self.c, self.s = t, flint.arb(c), flint.arb(sigma)
        self.rt2 = flint.arb(2).sqrt()
        self.log_t = flint.arb(t).log()

    def log_phi(self, x: Any) -> Any:
        """log Phi(x) for a ball x."""
        z = x / self.rt2
        if z < 0 or z.contains(0):
            return ((-z).erfc() / 2).log()
        return (-(z.erfc() / 2)).log1p()

    def log_cdf(self, m: float, shifted: bool) -> Any:
        x = self.arb(m) / self.s
        base = self.log_phi(x)
        if not shifted:
            return base * self.t
        return self.log_phi(x - self.c / self.s) + base * (self.t - 1)

    def loss(self, m: float) -> Any:
        mm = self.arb(m)
        a = (2 * mm * self.c - self.c * self.c) / (2 * self.s * self.s)
        if self.t == 1:
            return a
        x = mm / self.s
        r = (self.log_phi(x - self.c / self.s) - self.log_phi(x)).exp()
        return (a.exp() + (self.t - 1) * r).log() - self.log_t


def _floor_int(x: Any) -> int:
    """floor of the lower end of a finite ball, exactly."""
    m, e = x.lower().man_exp()
    m, e = int(m), int(e)
    return m << e if e >= 0 else m >> -e


def _ceil_int(x: Any) -> int:
    """ceil of the upper end of a finite ball, exactly."""
    m, e = x.upper().man_exp()
    m, e = int(m), int(e)
    return m << e if e >= 0 else -((-m) >> -e)


def one_epoch_pmf(t: int, c: float, sigma: float, disc: float, remove: bool,
                  bits: int = 80) -> Any:
    r"""The certified lower measure :math:`\nu_1` of one epoch (module theorem) for the
    remove direction (:math:`L(M)` under :math:`P_M`) or the add direction (:math:`-L(M)`
    under :math:`Q_M`): an optimistic :class:`~symgdp.pld.pmf.IntPMF` (masses rounded down
    to :math:`2^{-\text{bits}}`, losses rounded down onto :math:`\Delta\mathbb Z`)."""
    import flint

    from symgdp.numerics.rounding import arb_floor
    from symgdp.pld.pmf import int_pmf

    t, c, sigma, _ = _check(t, c, sigma, 1)
    pts = _points(t, c, sigma, disc, remove)
    if pts.size > _REFUSE:
        raise DomainError(f"the max statistic with t={t}, c={c:g}, sigma={sigma:g} on the "
                          f"grid {disc:g} needs {pts.size} cells per epoch (more than "
                          f"{_REFUSE}): no floor (a coarser grid, or a larger sigma)")
    old = flint.ctx.prec
    flint.ctx.prec = _PREC
    try:
        balls = _Balls(t, c, sigma)
        d = flint.arb(disc)
        cdf = [balls.log_cdf(float(b), remove).exp() for b in pts]
        loss = [balls.loss(float(b)) for b in pts]
        if not all(v.is_finite() for v in cdf + loss):
            raise DomainError(f"the max statistic with t={t}, c={c:g}, sigma={sigma:g}: a "
                              "ball is not finite (no floor)")
        idx, mass = [], []
        n = len(pts)
        for i in range(n - 1):  # the inner cells (b_i, b_{i+1}]
            w = arb_floor(cdf[i + 1] - cdf[i], bits)
            if w <= 0:
                continue
            # remove: loss >= L(b_i); add: loss -L >= -L(b_{i+1})
            idx.append(_floor_int(loss[i] / d) if remove else -_ceil_int(loss[i + 1] / d))
            mass.append(w)
        # the tail on the side of the large losses, lumped at its boundary
        if remove:  # (b_{n-1}, inf): loss >= L(b_{n-1})
            w = arb_floor(1 - cdf[-1], bits)
            k = _floor_int(loss[-1] / d)
        else:  # (-inf, b_0]: loss -L >= -L(b_0)
            w = arb_floor(cdf[0], bits)
            k = -_ceil_int(loss[0] / d)
        if w > 0:
            idx.append(k)
            mass.append(w)
    finally:
        flint.ctx.prec = old
    if not idx:
        raise DomainError("the max statistic's lower measure is empty (no floor)")
    lower = min(idx)
    masses = [0] * (max(idx) - lower + 1)
    for k, w in zip(idx, mass, strict=True):
        masses[k - lower] += w
    return int_pmf(disc, lower, masses, 0, bits, up=False)


@dataclass(frozen=True)
class MaxStatisticFloor:
    r"""The certified lower profile of the max-statistic pair over ``epochs`` epochs
    (module notes): :meth:`delta_lower` is a proved lower bound on the profile of shuffled
    epochs or random allocation under the relation the pair is attained for.

    Attributes:
        steps_per_epoch: :math:`t`.
        sensitivity: :math:`c` (1: add/remove, zero-out, or random allocation under
            replace-one; 2: shuffle under replace-one).
        sigma, epochs: the noise multiplier and :math:`E`.
        disc: the loss grid :math:`\Delta`.
        composed: the :math:`E`-fold optimistic measures ``(remove, add)``.
    """

    steps_per_epoch: int
    sensitivity: float
    sigma: float
    epochs: int
    disc: float
    composed: tuple[Any, ...]

    def delta_lower(self, eps: Any) -> Any:
        r"""A proven lower bound on the mechanism's :math:`\delta(\varepsilon)` (the larger
        of the two directions' certified lower profiles); vectorised."""
        x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        out = np.zeros(x.shape)
        for pmf in self.composed:
            out = np.maximum(out, pmf.lower_delta(x))
        return float(out[0]) if np.ndim(eps) == 0 else out


def max_statistic_floor(t: int, c: float, sigma: float, epochs: int,
                        disc: float | None = None) -> MaxStatisticFloor:
    r"""The certified lower profile of the :math:`E`-fold max-statistic pair with :math:`t`
    steps per epoch, sensitivity :math:`c` and noise :math:`\sigma` (module theorem).

    Example:
        >>> from symgdp.gaussian.vectorised import delta_mu
        >>> f = max_statistic_floor(1, 1.0, 2.0, 4)       # t = 1: the Gaussian G_{1/2}, 4-fold
        >>> d = f.delta_lower(0.5)                       # 4-fold G_{1/2} is G_1
        >>> bool(0.9 * delta_mu(0.5, 1.0) <= d <= delta_mu(0.5, 1.0))
        True
    """
    from symgdp.pld.pmf import int_self_compose

    t, c, sigma, epochs = _check(t, c, sigma, epochs)
    if disc is None:
        disc = floor_grid(t, c, sigma, epochs)
    disc = float(disc)
    if not (math.isfinite(disc) and 0 < disc <= 1):
        raise DomainError(f"the floor's grid must lie in (0, 1], got {disc!r}")
    out = []
    for remove in (True, False):
        one = one_epoch_pmf(t, c, sigma, disc, remove)
        out.append(one if epochs == 1 else int_self_compose(one, epochs))
    return MaxStatisticFloor(t, c, sigma, epochs, disc, tuple(out))


def mu_floor_from_lower(eps: Any, delta_lower: Any) -> float:
    r"""The largest :math:`\mu_{GDP}(\varepsilon, \delta_{lower}(\varepsilon))` over the
    points ``eps`` (rounded down, then checked in ball arithmetic): when ``delta_lower`` are
    proven lower bounds on a mechanism's profile at ``eps``, every :math:`\mu` for which
    it is :math:`\mu`-GDP at those points is at least this (:math:`\delta_\mu` grows with
    :math:`\mu`).  0 when no point proves anything.

    Example:
        >>> from symgdp.gaussian.vectorised import delta_mu
        >>> xs = np.linspace(0.0, 3.0, 31)
        >>> m = mu_floor_from_lower(xs, delta_mu(xs, 1.0, rounding="down"))
        >>> bool(0.999999 <= m <= 1.0)
        True
    """
    from symgdp.gaussian.gdp_balls import delta_mu_proved_at_most
    from symgdp.gaussian.vectorised import mu_gdp

    xs = np.asarray(eps, dtype=np.float64)
    d = np.asarray(delta_lower, dtype=np.float64)
    ok = (d > 0) & np.isfinite(d)
    if not np.any(ok):
        return 0.0
    mus = np.asarray(mu_gdp(xs[ok], d[ok], rounding="down"), dtype=np.float64)
    for i in np.argsort(-mus)[:3]:
        e, dl, m = float(xs[ok][i]), float(d[ok][i]), float(mus[i])
        for shrink in (1e-9, 1e-6, 1e-3):
            cand = m * (1.0 - shrink)
            # delta_mu is increasing in mu: delta_cand(e) <= dl <= delta_true(e) forces
            # every valid mu above cand
            if delta_mu_proved_at_most(e, cand, dl):
                return cand
    return 0.0


def scheme_floor(plan: Any, eps_h: float, disc: float | None = None
                 ) -> tuple[float, float, MaxStatisticFloor | None, str]:
    r"""``(mu_floor, grid, floor, note)`` of a sampling plan with a ``floor_pair``
    (:class:`~symgdp.training.sampling.SamplingPlan`: shuffle, random allocation): the
    largest proved :math:`\mu` over 161 points of :math:`[0, \varepsilon_h]`;
    ``(nan, nan, None, "")`` for a plan without a pair, and ``note`` the reason when the
    floor is refused (too many cells for the grid: ``nan``, never a guess)."""
    pair = getattr(plan, "floor_pair", None)
    if pair is None:
        return math.nan, math.nan, None, ""
    t, c = pair
    epochs = int(plan.phases[0][2])
    try:
        f = max_statistic_floor(int(t), float(c), float(plan.sigma), epochs, disc)
    except DomainError as exc:
        return math.nan, math.nan, None, f" (floor not computed: {exc})"
    xs = np.linspace(0.0, float(eps_h), 161)
    return mu_floor_from_lower(xs, f.delta_lower(xs)), f.disc, f, ""
