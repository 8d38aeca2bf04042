r"""A guaranteed Gaussian-DP bracket for DP-SGD (Poisson-subsampled Gaussian, T steps).

DP-SGD with Poisson sampling rate :math:`q`, noise multiplier :math:`\sigma` and
:math:`T` steps is the :math:`T`-fold composition of the subsampled Gaussian mechanism.
Its GDP parameter is usually quoted from the central limit theorem of Bu, Dong, Long &
Su (2020), :math:`\mu_{CLT} = q\sqrt{T(e^{1/\sigma^2} - 1)}`, an *approximation* that can
be below every valid :math:`\mu` (for :math:`q = 0.01, \sigma = 1, T = 1000` it is
0.4145 while the pessimistic PLD already forces :math:`\mu \ge 0.4514`).

:func:`dpsgd` returns a guaranteed bracket instead.  The profile measured is the minimum
of two upper bounds on the true profile (the minimum of two valid upper bounds is one):

* the pessimistic PLD of dp_accounting (exact subsampled-Gaussian PLD, discretised
  pessimistically, composed by FFT; :mod:`symgdp.pld`), tight in the head but with an
  absolute floor near :math:`10^{-12}` (its mass at infinity plus the rounding margin);
* the exact Rényi curve of the subsampled Gaussian at integer orders, composed over
  :math:`T` steps and converted by the improved RDP → :math:`(\varepsilon, \delta)`
  conversion (:mod:`symgdp.rdp`), computed in log space so it keeps decaying where the
  PLD's floor takes over.

:func:`symgdp.measure` then brackets the supremum of the GDPT of this bound on
:math:`[0, \varepsilon_h]`, with :math:`\varepsilon_h` the point where the upper
profile falls to the requested failure probability; that value bounds the true profile
at every :math:`\varepsilon \ge \varepsilon_h` (a profile is non-increasing), so the
mechanism is :math:`\mu_{upper}`-GDP on :math:`[0, \varepsilon_h]` and :math:`(\varepsilon,
\text{failure\_prob})`-DP for every :math:`\varepsilon \ge \varepsilon_h`.

What "guaranteed" rests on: the pessimistic discretisation of dp_accounting (exact in
exact arithmetic), the rounding margin of :mod:`symgdp.pld` for the float64 FFT (an
estimate with a factor of 24 or more of room over the deviations we measured, not a
proof), and the float64 rounding analysis of :func:`symgdp.measure`.  The Rényi bound
alone needs none of the first two; ``mu_rdp`` reports what it gives on its own.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import DomainError
from .gaussian import eps_gdp

__all__ = ["DPSGDResult", "dpsgd", "mu_clt"]


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
            :math:`[0, \varepsilon_h]` of the GDPT of the upper profile
            ``min(PLD, RDP)``; DP-SGD is ``mu_upper``-GDP on :math:`[0, \varepsilon_h]`.
            No valid head-GDP parameter *provable from this profile* is below
            ``mu_lower`` (the true mechanism's may be slightly smaller: the PLD is
            pessimistic).
        eps_h: end of the head.
        failure_prob: the upper profile's value at :math:`\varepsilon_h` (at most the
            requested one): the true profile is at most this for every
            :math:`\varepsilon \ge \varepsilon_h`.
        mu_clt: the CLT approximation (Bu, Dong, Long & Su 2020). **Not a bound.**
        mu_rdp: upper end of the bracket measured on the Rényi bound alone (the route
            without float PLDs), same head.
        delta: the :math:`\delta` of the ``eps_*`` fields.
        eps_pld: dp_accounting's pessimistic PLD :math:`\varepsilon(\delta)` (direct).
        eps_rdp: the Rényi route's :math:`\varepsilon(\delta)` (improved conversion).
        eps_clt: :math:`\varepsilon(\delta)` of ``mu_clt``-GDP (approximate).
        discretization: the PLD's ``value_discretization_interval``.
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

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "q", "sigma", "steps", "mu_lower", "mu_upper", "eps_h", "failure_prob",
            "mu_clt", "mu_rdp", "delta", "eps_pld", "eps_rdp", "eps_clt", "discretization",
            "seconds")}

    def __str__(self) -> str:
        return (f"DP-SGD q={self.q:g}, sigma={self.sigma:g}, T={self.steps}: "
                f"mu in [{self.mu_lower:.6f}, {self.mu_upper:.6f}] on [0, {self.eps_h:.4g}] "
                f"(failure probability {self.failure_prob:.3g}); CLT approximation "
                f"{self.mu_clt:.4f} (not a bound)")


def dpsgd(q: float, sigma: float, steps: int, *, failure_prob: float = 1e-10,
          delta: float = 1e-5, tol: float = 1e-4,
          value_discretization_interval: float = 1e-4) -> DPSGDResult:
    r"""Guaranteed GDP :math:`\mu` bracket for DP-SGD (see :mod:`symgdp.dpsgd`).

    Args:
        q: Poisson sampling rate in :math:`(0, 1]`.
        sigma: noise multiplier (noise standard deviation over the clipping norm).
        steps: number of steps :math:`T`.
        failure_prob: the largest acceptable :math:`\delta_{\mu}(\varepsilon_h)`.
        delta: the :math:`\delta` at which the ``eps_*`` comparison fields are reported.
        tol: width of the measured bracket.
        value_discretization_interval: the PLD's discretisation.

    Example:
        >>> r = dpsgd(0.01, 1.0, 100, tol=1e-3)
        >>> r.mu_lower <= r.mu_upper <= r.mu_lower + 1e-3, r.failure_prob <= 1e-10
        (True, True)
    """
    from .pld import _pld_module, from_pld, head_measure
    from .rdp import DEFAULT_ORDERS, eps_from_rdp, subsampled_gaussian_log_a

    t0 = time.perf_counter()
    q, sigma, steps = _check(q, sigma, steps)
    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    d = float(delta)
    if not (0 < d < 1):
        raise DomainError(f"delta must lie in (0, 1), got {delta!r}")
    P = _pld_module()
    one = P.from_gaussian_mechanism(sigma, sensitivity=1.0,
                                    value_discretization_interval=value_discretization_interval,
                                    sampling_prob=q, use_connect_dots=True)
    pld = one.self_compose(steps) if steps > 1 else one
    pld_profile = from_pld(pld, name="DP-SGD (PLD)")
    orders = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    total = steps * subsampled_gaussian_log_a(q, sigma, DEFAULT_ORDERS) / (orders - 1.0)
    upper = _UpperProfile(pld_profile, orders, total)
    eps_pld = float(pld.get_epsilon_for_delta(d))
    eps_rdp = eps_from_rdp(orders, total, d)
    m, fail = head_measure(upper, fp, tol)
    m_rdp, _ = head_measure(_RDPOnly(upper), fp, tol)
    clt = mu_clt(q, sigma, steps)
    return DPSGDResult(
        q=q, sigma=sigma, steps=steps, mu_lower=m.lower, mu_upper=m.upper, eps_h=m.eps_h,
        failure_prob=fail, mu_clt=clt, mu_rdp=m_rdp.upper,
        delta=d, eps_pld=eps_pld, eps_rdp=eps_rdp, eps_clt=float(eps_gdp(clt, d)),
        discretization=float(value_discretization_interval), measurement=m, profile=upper,
        seconds=time.perf_counter() - t0)


class _RDPOnly:
    """The Rényi bound alone, for the side-by-side ``mu_rdp``."""

    def __init__(self, upper: _UpperProfile) -> None:
        self._u = upper

    def log_delta(self, eps: Any) -> Any:
        return self._u.rdp_log_delta(eps)

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))
