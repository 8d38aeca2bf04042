r"""A guaranteed Gaussian-DP bracket for DP-SGD (Poisson-subsampled Gaussian, T steps).

DP-SGD with Poisson sampling rate :math:`q`, noise multiplier :math:`\sigma` and
:math:`T` steps is the :math:`T`-fold composition of the subsampled Gaussian mechanism.
Its GDP parameter is usually quoted from the central limit theorem of Bu, Dong, Long &
Su (2020), :math:`\mu_{CLT} = q\sqrt{T(e^{1/\sigma^2} - 1)}`, an *approximation* that can
be below every valid :math:`\mu` (for :math:`q = 0.01, \sigma = 1, T = 1000` it is
0.4145 while every :math:`\mu` for which DP-SGD is :math:`\mu`-GDP on the head
:math:`[0, 3.29]` below is at least 0.524, ``mu_floor``).

:func:`dpsgd` returns a guaranteed bracket instead.  The profile measured is the minimum
of two upper bounds on the true profile (the minimum of two valid upper bounds is one):

* the **certified PLD** (:func:`certified_pld`), proven below, tight in the head, with
  an absolute floor (its mass at infinity, about :math:`10^{-15}`);
* the exact Rényi curve of the subsampled Gaussian at integer orders, composed over
  :math:`T` steps and converted by the improved RDP → :math:`(\varepsilon, \delta)`
  conversion (:mod:`symgdp.rdp`), computed in log space so it keeps decaying where the
  PLD's floor takes over.

**Theorem (certified PLD).**  Let :math:`\omega` be the connect-the-dots PMF of one step
on the grid :math:`\Delta\mathbb Z` (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, PETS
2022): the mass of each cell :math:`(a, b]` of the privacy loss :math:`L` under
:math:`P` is split between :math:`a` and :math:`b` so that :math:`\mathbb E[e^{-L}]` is
kept.  Let :math:`\nu_1 \ge \omega` entrywise after mass below the grid is moved to its
first point and mass above it to :math:`+\infty`, and let :math:`\nu_T` be obtained from
:math:`\nu_1` by convolutions, entrywise rounding up, and moves of mass to larger losses
(including :math:`+\infty`).  Then for every :math:`\varepsilon`

.. math:: \delta_T(\varepsilon) \le \sum_l \nu_T(l)\,(1 - e^{\varepsilon - l})_+ .

*Proof.*  :math:`\delta_T(\varepsilon) = \mathbb E[F(y_1, \dots, y_T)]` with
:math:`y_i = e^{-L_i}` independent and :math:`F = (1 - e^{\varepsilon}\prod y_i)_+`,
which is convex and non-increasing in each :math:`y_i` (and :math:`\le 1`, the value at
:math:`L = +\infty`).  Replacing one coordinate's law by a mean-preserving spread within
cells does not decrease the expectation (Jensen, coordinate by coordinate, Fubini): this
gives :math:`\omega^{*T}`.  Every function :math:`g(s) = \mathbb E[f(s + S)]`,
:math:`f(s) = (1 - e^{\varepsilon - s})_+`, is non-negative and non-decreasing in
:math:`s`, so its integral does not decrease when mass is increased entrywise or moved
to larger :math:`s`, and convolution preserves this order (if :math:`\mu \preceq \mu'`
and :math:`\nu \preceq \nu'` for this cone then :math:`\mu * \nu \preceq \mu' * \nu'`).
:math:`\square`  The same holds for the add direction (the swapped pair), and DP-SGD's
profile is the maximum of the two.

What is computed, and how each hypothesis is met:

* one step in **ball arithmetic** (python-flint's ``arb``): the cell masses
  :math:`P_c, Q_c` come from the closed-form tails of the mixture
  (:math:`\bar\Phi`, i.e. ``erfc``), the split in balls, each mass rounded *up* to an
  integer multiple of :math:`2^{-80}`;
* the :math:`T`-fold composition by repeated squaring in **exact integer arithmetic**
  (``fmpz_poly`` products), each product rounded up to :math:`2^{-80}`; tails are cut
  where their exact mass is below :math:`10^{-19}`, the left tail moved onto the first
  kept loss, the right tail to :math:`+\infty` (no FFT, so no rounding margin);
* the profile of :math:`\nu_T` evaluated as an exact piecewise-affine function of
  :math:`e^\varepsilon` with float64 sums of non-negative terms, masses and losses
  rounded up and the sums inflated by their worst-case relative rounding
  (:mod:`symgdp.accounting`).

The same construction rounded *down* (each cell's mass on its lower end, masses rounded
down, tails dropped or moved to smaller losses) gives a lower bound on the true profile,
hence ``mu_floor``: any :math:`\mu` for which DP-SGD is :math:`\mu`-GDP on
:math:`[0, \varepsilon_h]` has :math:`\delta_\mu(\varepsilon) \ge \delta_T(\varepsilon)`
there, so it is at least :math:`\mu_{GDP}(\varepsilon, \text{lower bound})` at every
:math:`\varepsilon`.  Rounding every loss down costs about :math:`T\Delta/2` in
:math:`\varepsilon`, so this floor is loose for large :math:`T` unless its grid is
finer (``floor_discretization``).

:func:`symgdp.measure` then brackets the supremum of the GDPT of the upper profile on
:math:`[0, \varepsilon_h]`, with :math:`\varepsilon_h` the point where the upper profile
falls to the requested failure probability; that value bounds the true profile at every
:math:`\varepsilon \ge \varepsilon_h` (a profile is non-increasing), so the mechanism is
:math:`\mu_{upper}`-GDP on :math:`[0, \varepsilon_h]` and :math:`(\varepsilon,
\text{failure\_prob})`-DP for every :math:`\varepsilon \ge \varepsilon_h`.  The
guarantee rests on the theorem above, on python-flint's ball arithmetic and exact
integers, and on the float64 rounding analysis of :func:`symgdp.measure`.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import DomainError
from .gaussian import eps_gdp

__all__ = ["DPSGDResult", "dpsgd", "mu_clt", "certified_pld"]


def mu_clt(q: float, sigma: float, steps: int) -> float:
    r"""The CLT approximation :math:`q\sqrt{T(e^{1/\sigma^2} - 1)}` of Bu, Dong, Long & Su
    (2020).  **Not a bound**: it can be below every valid :math:`\mu`.

    Example:
        >>> round(mu_clt(0.01, 1.0, 1000), 4)
        0.4145
    """
    q, sigma, steps = _check(q, sigma, steps)
    return q * math.sqrt(steps * math.expm1(1.0 / sigma**2))


def _check(q: Any, sigma: Any, steps: Any) -> tuple[float, float, int]:
    qq, s = float(q), float(sigma)
    if not (0 < qq <= 1):
        raise DomainError(f"the sampling rate q must lie in (0, 1], got {q!r}")
    if not (math.isfinite(s) and s > 0):
        raise DomainError(f"sigma must be a finite number > 0, got {sigma!r}")
    if isinstance(steps, bool) or not float(steps).is_integer() or int(steps) < 1:
        raise DomainError(f"steps must be a positive integer, got {steps!r}")
    return qq, s, int(steps)


def _arb_ceil(x: Any, bits: int) -> int:
    """ceil(max(upper end of the ball x, 0) * 2^bits) as a Python int."""
    m, e = x.upper().man_exp()
    m, e = int(m), int(e) + bits
    if m <= 0:
        return 0
    return m << e if e >= 0 else -((-m) >> -e)


def _arb_floor(x: Any, bits: int) -> int:
    """floor(max(lower end of the ball x, 0) * 2^bits) as a Python int."""
    m, e = x.lower().man_exp()
    m, e = int(m), int(e) + bits
    if m <= 0:
        return 0
    return m << e if e >= 0 else m >> -e


def _loss_grid(q: float, sigma: float, disc: float, tail: float) -> tuple[int, int]:
    """Grid indices (j0, j1) of the remove-direction loss L(x) = log(1 - q + q e^{(2x -
    1)/(2 sigma^2)}) such that, approximately, P[L <= j0 disc] and P[L > j1 disc] are
    below ``tail`` (the exact masses outside are accounted for rigorously)."""
    from scipy.special import ndtri

    z = float(-ndtri(tail))  # the N(0, 1) quantile of the tail
    s2 = sigma * sigma

    def loss(x: float) -> float:
        return float(np.logaddexp(math.log1p(-q) if q < 1 else -math.inf,
                                  math.log(q) + (2 * x - 1) / (2 * s2)))

    lo = loss(-z * sigma)
    if q < 1:
        lo = max(lo, math.log1p(-q))
    hi = loss(1.0 + z * sigma)
    return int(math.floor(lo / disc)) - 1, int(math.ceil(hi / disc)) + 1


@functools.lru_cache(maxsize=8)
def _subsampled_gaussian_pmfs(q: float, sigma: float, disc: float, tail: float,
                              bits: int) -> tuple[Any, Any, Any]:
    r"""Certified one-step PMFs (remove, add, remove-optimistic) of the
    Poisson-subsampled Gaussian, as :class:`~symgdp.accounting.pmf.IntPMF` (in ball arithmetic;
    the first two rounded up, the third down).

    Remove direction: :math:`P = (1 - q)N(0, \sigma^2) + qN(1, \sigma^2)`,
    :math:`Q = N(0, \sigma^2)`, loss :math:`L(x) = \log(1 - q + qe^{(2x - 1)/(2\sigma^2)})`,
    increasing in :math:`x`, with the closed-form tails
    :math:`\bar P(l) = (1 - q)\bar\Phi(x_l/\sigma) + q\bar\Phi((x_l - 1)/\sigma)`,
    :math:`\bar Q(l) = \bar\Phi(x_l/\sigma)`, :math:`x_l = \sigma^2\log((e^l - 1 + q)/q) +
    1/2`.  On the cell :math:`(a, b]` of the grid, with :math:`y = e^{-L}` and the cell's
    masses :math:`P_c, Q_c = \mathbb E_P[y; \text{cell}]`, the mass goes to the two ends
    so that :math:`\mathbb E[y]` is kept: :math:`(Q_c - y_b P_c)/(y_a - y_b)` to
    :math:`a` and :math:`(y_a P_c - Q_c)/(y_a - y_b)` to :math:`b` (the connect-the-dots
    PMF of Doroshenko et al. 2022).  The add direction is the swapped pair: the same
    cells with :math:`P, Q` exchanged and the loss negated.  Mass below the grid moves
    to its first point, mass above it to :math:`+\infty` (moves to larger losses).
    The optimistic PMF puts each cell's mass :math:`P_c` on its lower end (every loss
    rounded down), drops the mass below the grid and puts the mass above it on the last
    point.
    """
    import flint

    from .accounting.pmf import int_pmf

    j0, j1 = _loss_grid(q, sigma, disc, tail)
    old = flint.ctx.prec
    # the split masses cancel about 2 log2(1/disc) bits; the balls stay rigorous at any
    # precision, this only keeps them tight (relative width near 2^-50)
    flint.ctx.prec = min(max(56 + 2 * math.ceil(math.log2(1.0 / disc)), 64), 200)
    try:
        arb = flint.arb
        qa, one = arb(q), arb(1)
        s = arb(sigma)
        s2, rt = s * s, s * arb(2).sqrt()
        half, d = arb(0.5), arb(disc)
        irt = one / rt
        c1, c2 = -((-d).expm1()), d.expm1()  # 1 - e^{-disc}, e^{disc} - 1, no cancellation
        pbar, abar, ey = [], [], []
        for j in range(j0, j1 + 1):
            lj = arb(j) * d
            ey.append(lj.exp())
            t = lj.expm1() + qa  # e^l - (1 - q) > 0 iff x_l is finite
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
        n = j1 - j0 + 1
        rem = [arb(0)] * n
        add = [arb(0)] * n  # add[i]: loss -(j0 + i) disc
        opt = [arb(0)] * n
        iy = [one / e for e in ey]
        for i in range(n - 1):
            pc, qc = pbar[i] - pbar[i + 1], abar[i] - abar[i + 1]
            opt[i] = pc
            ya, yb = iy[i], iy[i + 1]
            inv = ey[i] / c1  # 1 / (y_a - y_b), y_a - y_b = e^{-l_i} (1 - e^{-disc})
            rem[i] += (qc - yb * pc) * inv
            rem[i + 1] += (ya * pc - qc) * inv
            inv2 = iy[i] / c2  # 1 / (e^{l_{i+1}} - e^{l_i})
            add[i] += (ey[i + 1] * qc - pc) * inv2
            add[i + 1] += (pc - ey[i] * qc) * inv2
        rem[0] += one - pbar[0]          # mass with loss <= first point
        rem_inf = pbar[-1]               # mass with loss > last point
        add[n - 1] += abar[-1]           # add losses <= -(j1 disc)
        add_inf = one - abar[0]          # add losses > -(j0 disc)
        r_int = [_arb_ceil(v, bits) for v in rem]
        a_int = [_arb_ceil(v, bits) for v in add]
        r_inf, a_inf = _arb_ceil(rem_inf, bits), _arb_ceil(add_inf, bits)
        opt[n - 1] = rem_inf
        o_int = [_arb_floor(v, bits) for v in opt]
    finally:
        flint.ctx.prec = old
    remove = int_pmf(disc, j0, r_int, r_inf, bits)
    add_pmf = int_pmf(disc, -j1, a_int[::-1], a_inf, bits)
    optimistic = int_pmf(disc, j0, o_int, 0, bits, up=False)
    return remove, add_pmf, optimistic


class _UpperProfile:
    """min(pessimistic PLD profile, RDP bound) as a vectorised log delta."""

    def __init__(self, pld_profile: Any, orders: np.ndarray, total_rdp: np.ndarray) -> None:
        self.pld_profile = pld_profile
        self.orders = orders
        self.total_rdp = total_rdp
        self.name = "min(PLD, RDP)"

    def rdp_log_delta(self, eps: Any) -> Any:
        from .rdp import log_delta_from_rdp

        return log_delta_from_rdp(self.orders, self.total_rdp, eps)

    def log_delta(self, eps: Any) -> Any:
        x = np.asarray(eps, dtype=np.float64)
        a = np.asarray(self.pld_profile.log_delta(x))
        out = np.minimum(a, np.asarray(self.rdp_log_delta(x)))
        return float(out) if np.ndim(eps) == 0 else out

    def __call__(self, eps: Any) -> Any:
        return np.exp(self.log_delta(eps))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


@dataclass(frozen=True)
class DPSGDResult:
    r"""Guaranteed GDP bracket for DP-SGD, with the approximations beside it.

    Attributes:
        q, sigma, steps: the parameters.
        mu_lower, mu_upper: guaranteed bracket on the supremum over
            :math:`[0, \varepsilon_h]` of the GDPT of the *upper profile*
            ``min(certified PLD, RDP)``.  ``mu_upper`` is a guarantee for DP-SGD: it is
            ``mu_upper``-GDP on :math:`[0, \varepsilon_h]`.  ``mu_lower`` bounds only
            what this upper profile can prove (no smaller :math:`\mu` follows from it);
            the mechanism's own smallest valid :math:`\mu` may be below it (the profile
            is pessimistic), so ``mu_lower`` is *not* a lower bound on the mechanism.
        mu_floor: a lower bound on the *mechanism*: every :math:`\mu` for which
            DP-SGD is :math:`\mu`-GDP on :math:`[0, \varepsilon_h]` is at least this
            (from the optimistic integer composition; ``nan`` with ``floor=False``).
            The smallest valid :math:`\mu` lies in ``[mu_floor, mu_upper]``.
        eps_h: end of the head.
        failure_prob: the upper profile's value at :math:`\varepsilon_h` (at most the
            requested one): the true profile is at most this for every
            :math:`\varepsilon \ge \varepsilon_h`.
        mu_clt: the CLT approximation (Bu, Dong, Long & Su 2020). **Not a bound.**
        mu_rdp: upper end of the bracket measured on the Rényi bound alone (the route
            without float PLDs), same head.
        delta: the :math:`\delta` of the ``eps_*`` fields.
        eps_pld: dp_accounting's own pessimistic PLD :math:`\varepsilon(\delta)`
            (float64 FFT, no error bound; ``nan`` with ``compare=False``), for comparison.
        eps_rdp: the Rényi route's :math:`\varepsilon(\delta)` (improved conversion).
        eps_clt: :math:`\varepsilon(\delta)` of ``mu_clt``-GDP (approximate).
        discretization: the PLD's ``value_discretization_interval``.
        eps_certified: the smallest :math:`\varepsilon` at which the upper profile is
            at most ``delta`` (rounded up): DP-SGD is
            :math:`(\varepsilon_{certified}, \delta)`-DP.
        pld_floor: the certified PLD's mass at infinity (its floor).
        measurement: the :class:`~symgdp.measure.Measurement` behind the bracket.
        seconds: wall time.
    """

    q: float
    sigma: float
    steps: int
    mu_lower: float
    mu_upper: float
    eps_h: float
    failure_prob: float
    mu_clt: float
    mu_rdp: float
    delta: float
    eps_pld: float
    eps_rdp: float
    eps_clt: float
    discretization: float
    mu_floor: float = math.nan
    eps_certified: float = math.nan
    pld_floor: float = math.nan
    measurement: Any = field(default=None, compare=False, repr=False)
    profile: Any = field(default=None, compare=False, repr=False)
    seconds: float = field(default=math.nan, compare=False)

    @property
    def width(self) -> float:
        return self.mu_upper - self.mu_lower

    def eps_at(self, delta: float) -> float:
        r""":math:`\varepsilon` with :math:`(\varepsilon, \delta)`-DP from the guaranteed
        ``mu_upper``: :math:`\varepsilon_{GDP}(\mu_{upper}, \delta)`, or
        :math:`\varepsilon_h` when that is smaller (the profile is at most ``failure_prob``
        :math:`\le \delta` from :math:`\varepsilon_h` on).  Below ``failure_prob`` the head
        says nothing and :class:`~symgdp.errors.DomainError` is raised.

        Example:
            >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3)
            >>> r.eps_at(1e-5) >= r.eps_pld
            True
        """
        d = float(delta)
        if not (0 < d <= 1):
            raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
        if d < self.failure_prob:
            raise DomainError(f"delta={d:g} is below the failure probability "
                              f"{self.failure_prob:.3g} of this bracket; ask dpsgd() for a "
                              "smaller failure_prob")
        e = float(eps_gdp(self.mu_upper, d))
        return min(e, self.eps_h)

    def tradeoff(self, alpha: Any, *, discretization: float | None = None,
                 **kw: Any) -> Any:
        r"""Guaranteed bounds on DP-SGD's trade-off curve at the type I errors ``alpha``
        (a :class:`~symgdp.bands.TradeoffBand`; :func:`symgdp.tradeoff.band`, whose
        keywords ``kw`` takes).  The lower band comes from the upper profile
        ``min(certified PLD, RDP)`` (the worse of the add and remove directions), the
        upper band from the optimistic integer composition of ``mu_floor`` (a lower bound
        on the remove direction, hence on the profile), on the grid ``discretization``
        (default: this result's; a finer grid narrows the band, its rounding costs about
        :math:`T\Delta/2` in :math:`\varepsilon`, at a cost proportional to
        :math:`1/\Delta`).  Add/remove neighbours, both orders.

        Example:
            >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3, compare=False)
            >>> b = r.tradeoff([0.01, 0.1])
            >>> bool(((b.lower <= b.upper) & (b.upper - b.lower < 0.01)).all())
            True
        """
        from .bands import band

        if self.profile is None:
            raise DomainError("this DPSGDResult carries no profile (build it with dpsgd())")
        disc = self.discretization if discretization is None else float(discretization)
        if not (math.isfinite(disc) and 0 < disc <= 1):
            raise DomainError(f"discretization must lie in (0, 1], got {discretization!r}")
        low = _lower_pmf(self.q, self.sigma, self.steps, disc,
                         _one_step_tail(max(self.failure_prob, 1e-300), self.steps))
        return band(_Bracketed(self.profile, low), alpha, **kw)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "q", "sigma", "steps", "mu_lower", "mu_upper", "eps_h", "failure_prob",
            "mu_clt", "mu_rdp", "delta", "eps_pld", "eps_rdp", "eps_clt", "discretization",
            "mu_floor", "eps_certified", "pld_floor", "seconds")}

    def __str__(self) -> str:
        return (f"DP-SGD q={self.q:g}, sigma={self.sigma:g}, T={self.steps}: "
                f"mu in [{self.mu_lower:.6f}, {self.mu_upper:.6f}] on [0, {self.eps_h:.4g}] "
                f"(failure probability {self.failure_prob:.3g}); CLT approximation "
                f"{self.mu_clt:.4f} (not a bound)")


def _one_step_tail(failure_prob: float, steps: int) -> float:
    """Mass cut from each one-step PMF (it goes to +infinity): a thousandth of the
    failure probability over all steps, between 1e-30 and 1e-16."""
    return min(max(1e-3 * failure_prob / steps, 1e-30), 1e-16)


def certified_pld(q: float, sigma: float, steps: int, *,
                  value_discretization_interval: float = 1e-4,
                  failure_prob: float = 1e-10) -> Any:
    r"""The certified pessimistic PLD profile of DP-SGD: a
    numeric :class:`~symgdp.profile.Profile` (a PLD source) that is an upper bound on the true profile at every
    :math:`\varepsilon \ge 0` (the theorem in :mod:`symgdp.dpsgd`), with no rounding
    margin: one step in ball arithmetic, the composition in exact integer arithmetic.

    Example:
        >>> p = certified_pld(1.0, 1.0, 4)          # 4-fold 1-GDP is 2-GDP
        >>> from symgdp import delta_mu
        >>> bool(delta_mu(1.0, 2.0) <= p(1.0) <= delta_mu(1.0, 2.0) + 1e-3), p.source.margin
        (True, 0.0)
    """
    from .accounting.compose import profile_from_curves
    from .accounting.curves import _check_discretization
    from .accounting.pmf import SCALE_BITS, int_self_compose

    q, sigma, steps = _check(q, sigma, steps)
    disc = _check_discretization(value_discretization_interval)
    rem, add, _ = _subsampled_gaussian_pmfs(q, sigma, disc,
                                            _one_step_tail(failure_prob, steps), SCALE_BITS)
    curves = [int_self_compose(rem, steps).curve(), int_self_compose(add, steps).curve()]
    return profile_from_curves(curves, name="DP-SGD (certified PLD)", discretization=disc)


def _mu_floor(q: float, sigma: float, steps: int, disc: float, tail: float,
              eps_h: float) -> float:
    """Largest mu_gdp(eps, lower bound on the true delta(eps)) over a grid of [0, eps_h],
    rounded down and checked at 40 digits: every mu for which DP-SGD is mu-GDP on
    [0, eps_h] is at least this."""
    from . import precise
    from .accounting.pmf import SCALE_BITS, int_self_compose
    from .gaussian import mu_gdp

    _, _, opt = _subsampled_gaussian_pmfs(q, sigma, disc, tail, SCALE_BITS)
    low = int_self_compose(opt, steps)
    xs = np.linspace(0.0, eps_h, 161)
    d = low.lower_delta(xs)
    ok = d > 0
    if not np.any(ok):
        return 0.0
    mus = np.asarray(mu_gdp(xs[ok], d[ok]), dtype=np.float64)
    i = int(np.nanargmax(mus))
    e, dl, m = float(xs[ok][i]), float(d[ok][i]), float(mus[i])
    for shrink in (1e-9, 1e-6, 1e-3):
        cand = m * (1.0 - shrink)
        # delta_mu is increasing in mu: delta_cand(e) <= dl <= delta_true(e) forces every
        # valid mu above cand
        if precise.delta_mu(e, cand) <= dl:
            return cand
    return 0.0


def dpsgd(q: float, sigma: float, steps: int, *, failure_prob: float = 1e-10,
          delta: float = 1e-5, tol: float = 1e-4,
          value_discretization_interval: float = 1e-4, floor: bool = True,
          compare: bool = True, floor_discretization: float | None = None) -> DPSGDResult:
    r"""Guaranteed GDP :math:`\mu` bracket for DP-SGD (see :mod:`symgdp.dpsgd`).

    Args:
        q: Poisson sampling rate in :math:`(0, 1]`.
        sigma: noise multiplier (noise standard deviation over the clipping norm).
        steps: number of steps :math:`T`.
        failure_prob: the largest acceptable :math:`\delta(\varepsilon_h)`.
        delta: the :math:`\delta` at which the ``eps_*`` comparison fields are reported.
        tol: width of the measured bracket.
        value_discretization_interval: the PLD's discretisation.
        floor: also compute ``mu_floor``, the mechanism-level lower bound (one more
            composition); ``nan`` otherwise.
        compare: also compute ``eps_pld`` with dp_accounting's own (float64 FFT) PLD;
            ``nan`` otherwise.
        floor_discretization: the grid of the floor's optimistic composition (default:
            ``value_discretization_interval``).  Its rounding costs about
            :math:`T\Delta/2` in :math:`\varepsilon`, so a finer grid tightens
            ``mu_floor`` for large :math:`T`, at a cost proportional to
            :math:`1/\Delta`.

    Example:
        >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3)
        >>> r.mu_floor <= r.mu_lower <= r.mu_upper <= r.mu_lower + 1e-3
        True
        >>> r.failure_prob <= 1e-10
        True
    """
    from .accounting.compose import head_measure
    from .accounting.curves import _pld_module
    from .rdp import DEFAULT_ORDERS, eps_from_rdp, subsampled_gaussian_log_a

    t0 = time.perf_counter()
    q, sigma, steps = _check(q, sigma, steps)
    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    d = float(delta)
    if not (0 < d < 1):
        raise DomainError(f"delta must lie in (0, 1), got {delta!r}")
    disc = float(value_discretization_interval)
    fdisc = disc if floor_discretization is None else float(floor_discretization)
    if floor and not (math.isfinite(fdisc) and 0 < fdisc <= 1):
        raise DomainError(f"floor_discretization must lie in (0, 1], got "
                          f"{floor_discretization!r}")
    pld_profile = certified_pld(q, sigma, steps, value_discretization_interval=disc,
                                failure_prob=fp)
    orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    total = steps * subsampled_gaussian_log_a(q, sigma, DEFAULT_ORDERS) / (orders - 1.0)
    upper = _UpperProfile(pld_profile, orders, total)
    eps_pld = math.nan
    if compare:  # dp_accounting's own pessimistic PLD (FFT, float64), for comparison
        P = _pld_module()
        one = P.from_gaussian_mechanism(sigma, sensitivity=1.0,
                                        value_discretization_interval=disc,
                                        sampling_prob=q, use_connect_dots=True)
        pld = one.self_compose(steps) if steps > 1 else one
        eps_pld = float(pld.get_epsilon_for_delta(d))
    eps_rdp = eps_from_rdp(orders, total, d)
    m, fail = head_measure(upper, fp, tol)
    m_rdp, _ = head_measure(_RDPOnly(upper), fp, tol)
    clt = mu_clt(q, sigma, steps)
    mu_fl = (_mu_floor(q, sigma, steps, fdisc, _one_step_tail(fp, steps), m.eps_h)
             if floor else math.nan)
    return DPSGDResult(
        q=q, sigma=sigma, steps=steps, mu_lower=m.lower, mu_upper=m.upper, eps_h=m.eps_h,
        failure_prob=fail, mu_clt=clt, mu_rdp=m_rdp.upper,
        delta=d, eps_pld=eps_pld, eps_rdp=eps_rdp, eps_clt=float(eps_gdp(clt, d)),
        discretization=disc, mu_floor=mu_fl,
        eps_certified=_eps_for_delta(upper, d), pld_floor=pld_profile.source.floor,
        measurement=m, profile=upper, seconds=time.perf_counter() - t0)


def _eps_for_delta(profile: Any, delta: float) -> float:
    """Smallest eps (to 1e-9, rounded up) where the upper profile is <= delta."""
    from .accounting.curves import first_eps_below

    return first_eps_below(profile, math.log(delta), 1e-9)


class _RDPOnly:
    """The Rényi bound alone, for the side-by-side ``mu_rdp``."""

    def __init__(self, upper: _UpperProfile) -> None:
        self._u = upper

    def log_delta(self, eps: Any) -> Any:
        return self._u.rdp_log_delta(eps)

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


@functools.lru_cache(maxsize=4)
def _lower_pmf(q: float, sigma: float, steps: int, disc: float, tail: float) -> Any:
    """The optimistic T-fold integer composition (remove direction): its ``lower_delta``
    is a proved lower bound on DP-SGD's profile."""
    from .accounting.pmf import SCALE_BITS, int_self_compose

    _, _, opt = _subsampled_gaussian_pmfs(q, sigma, disc, tail, SCALE_BITS)
    return int_self_compose(opt, steps)


class _Bracketed:
    """An upper profile with a proved lower bound beside it (what a band needs)."""

    def __init__(self, upper: Any, low: Any) -> None:
        self._upper, self._low = upper, low

    def log_delta(self, eps: Any) -> Any:
        return self._upper.log_delta(eps)

    def log_delta_lower(self, eps: Any) -> Any:
        with np.errstate(divide="ignore"):
            # np.log is within an ulp: the factor moves the (non-positive) value down
            out = np.log(self._low.lower_delta(eps)) * (1.0 + 2.0**-50)
        return float(out[0]) if np.ndim(eps) == 0 else out
