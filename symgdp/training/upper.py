r"""The numeric profiles of a :func:`symgdp.dpsgd` result: the certified upper profile
(the smaller of the certified PLD's and the Rényi bound's), the Rényi bound alone (for the
side-by-side ``mu_rdp``), and an upper profile with a proved lower bound beside it (what a
trade-off band needs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from symgdp.numerics.rounding import exp_up

__all__ = ["UpperProfile", "RDPOnly", "Bracketed", "Smaller", "LazyRDPMu"]


class UpperProfile:
    """min(pessimistic PLD profile, RDP bound) as a vectorised log delta (the PLD alone
    when no Rényi curve is given).  Both are proved upper bounds on the true profile
    (the certified PLD's values are rounded up, the Rényi conversion is rounded up and
    ``total_rdp`` is taken one rounding above its float value), so ``proved_values``:
    the measurement trusts these values without a float64 slack (that slack, 1e-13 in
    log delta, is more than all of 1 - delta when mu is large)."""

    proved_values = True

    def __init__(self, pld_profile: Any, orders: Any, total_rdp: Any) -> None:
        self.pld_profile = pld_profile
        self.orders = orders
        # the float sum and division that made total_rdp: a few ulps, rounded up
        if total_rdp is not None:
            t = np.asarray(total_rdp, dtype=np.float64)
            total_rdp = t + 8.0 * 2.0**-52 * np.abs(t)
        self.total_rdp = total_rdp
        self.name = "min(PLD, RDP)" if orders is not None else "PLD"

    def rdp_log_delta(self, eps: Any) -> Any:
        from symgdp.notions.renyi import log_delta_from_rdp

        if self.orders is None:
            return np.zeros(np.shape(eps)) if np.ndim(eps) else 0.0
        return log_delta_from_rdp(self.orders, self.total_rdp, eps)

    def log_delta(self, eps: Any) -> Any:
        x = np.asarray(eps, dtype=np.float64)
        out = np.asarray(self.pld_profile.log_delta(x))
        if self.orders is not None:
            out = np.minimum(out, np.asarray(self.rdp_log_delta(x)))
        return float(out) if np.ndim(eps) == 0 else out

    def __call__(self, eps: Any) -> Any:
        # a certified upper delta: exp of the (upper) log rounded up, never to nearest
        return exp_up(self.log_delta(eps))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


class RDPOnly:
    """The Rényi bound alone, for the side-by-side ``mu_rdp``."""

    def __init__(self, upper: UpperProfile) -> None:
        self._u = upper

    def log_delta(self, eps: Any) -> Any:
        return self._u.rdp_log_delta(eps)

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


class Bracketed:
    """An upper profile with a proved lower bound beside it (what a band needs)."""

    def __init__(self, upper: Any, lower_delta: Any) -> None:
        self._upper, self._lower_delta = upper, lower_delta

    def log_delta(self, eps: Any) -> Any:
        return self._upper.log_delta(eps)

    def log_delta_lower(self, eps: Any) -> Any:
        with np.errstate(divide="ignore"):
            # np.log is within an ulp: the factor moves the (non-positive) value down
            out = np.log(np.asarray(self._lower_delta(eps), dtype=np.float64)) \
                * (1.0 + 2.0**-50)
        return float(np.ravel(out)[0]) if np.ndim(eps) == 0 else out


class Smaller:
    """The smaller of two proved upper profiles (each a valid bound, so their minimum is
    one), as a vectorised log delta: e.g. random allocation's bound without amplification
    and its amplified one (:mod:`symgdp.training.allocation_upper`)."""

    proved_values = True

    def __init__(self, first: Any, second: Any, name: str = "") -> None:
        self.first, self.second = first, second
        self.name = name or f"min({getattr(first, 'name', 'first')}, " \
            f"{getattr(second, 'name', 'second')})"

    def log_delta(self, eps: Any) -> Any:
        x = np.asarray(eps, dtype=np.float64)
        out = np.minimum(np.asarray(self.first.log_delta(x), dtype=np.float64),
                         np.asarray(self.second.log_delta(x), dtype=np.float64))
        return float(out) if np.ndim(eps) == 0 else out

    def __call__(self, eps: Any) -> Any:
        return exp_up(self.log_delta(eps))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))


class LazyRDPMu:
    """``mu_rdp`` of a :func:`symgdp.dpsgd` result, measured on first read: the upper end
    of :func:`~symgdp.pld.head.head_measure` of the Rényi bound alone (:class:`RDPOnly`
    of ``upper``) with the run's failure probability and ``tol``; ``inf`` when that bound
    alone proves no head (huge :math:`\\mu`).  The same call the run made eagerly before,
    so the value read is the same float; it costs a measurement (20-40 ms), which the
    certified numbers never need."""

    __slots__ = ("upper", "failure_prob", "tol", "_value")

    def __init__(self, upper: Any, failure_prob: float, tol: float) -> None:
        self.upper, self.failure_prob, self.tol = upper, failure_prob, tol
        self._value: float | None = None

    def value(self) -> float:
        if self._value is None:
            from symgdp.errors import SymgdpError
            from symgdp.pld.head import head_measure

            try:
                self._value = float(head_measure(RDPOnly(self.upper), self.failure_prob,
                                                 self.tol)[0].upper)
            except SymgdpError:  # the Rényi bound alone proves no head: nothing finite
                self._value = float("inf")
        return self._value
