r"""What a privacy guarantee means for an attacker: guaranteed bounds on attack risk.

Each function takes ``x``, a profile (duck-typed, as :func:`symgdp.notions.fdp.band` takes
it) or a GDP parameter :math:`\mu` (a float), and returns an :class:`Interval` with
``.lower`` and ``.upper``, rounded outward.  All three read the mechanism as a hypothesis
test between its outputs on two neighbouring datasets (Wasserman & Zhou 2010; Dong, Roth &
Su 2021, §2), with trade-off curve :math:`f` (the smallest type II error at type I error
:math:`\alpha`):

* :func:`max_tpr` — the largest true-positive rate of any membership test at false-positive
  rate at most :math:`\alpha`: :math:`1 - f(\alpha)` (from the band of :math:`f`);
* :func:`advantage` — :math:`\sup_\alpha\,(1 - f(\alpha) - \alpha)`, the largest
  TPR − FPR (the total variation distance of the two outputs):
  :math:`2\Phi(\mu/2) - 1` for :math:`\mu`-GDP, and :math:`\delta(0)` for a profile;
* :func:`bayes_success` — the largest probability that an adversary who knows the prior
  guesses which of the two datasets was used.

For a profile the intervals assume what :func:`~symgdp.notions.fdp.band` assumes: the profile
is that of a symmetric pair (see there).  The upper ends bound the risk of every mechanism
whose profile is at most the one given.  The lower ends are lower bounds on the risk only
when the profile is the mechanism's *exact* profile (e.g. one of
:mod:`symgdp.mechanisms`); for a profile that is itself an upper bound, such as one
implied by RDP or zCDP, they describe that bound, not the mechanism.  The neighbouring
relation is the profile's own.

Example:
    >>> round(float(advantage(1.0).upper), 6)  # 2 Phi(1/2) - 1
    0.382925
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.notions.bands import BAND_PREC, band, enclosure, mu_value, widen_down, widen_up
from symgdp.numerics.rounding import float_above, float_below

__all__ = ["Interval", "max_tpr", "advantage", "bayes_success"]


@dataclass(frozen=True, slots=True)
class Interval:
    r"""Guaranteed bounds ``lower <= value <= upper`` (floats, or read-only arrays for an
    array input)."""

    lower: Any
    upper: Any

    @property
    def width(self) -> Any:
        """``upper - lower``."""
        return self.upper - self.lower

    def __contains__(self, value: Any) -> bool:
        v = np.asarray(value, dtype=np.float64)
        return bool(np.all((self.lower <= v) & (v <= self.upper)))


def _interval(scalar: bool, lo: np.ndarray, up: np.ndarray) -> Interval:
    lo = np.clip(lo, 0.0, 1.0)
    up = np.clip(up, 0.0, 1.0)
    if scalar:
        return Interval(float(lo), float(up))
    lo.flags.writeable = False
    up.flags.writeable = False
    return Interval(lo, up)


def max_tpr(x: Any, fpr: Any) -> Interval:
    r"""The largest true-positive rate (power) of any test at false-positive rate at most
    ``fpr``: :math:`1 - f(\mathrm{fpr})`, bracketed from :func:`symgdp.notions.fdp.band`.

    Args:
        x: a profile or a GDP parameter :math:`\mu \ge 0`.
        fpr: false-positive rate(s) in [0, 1] (scalar or array).

    Example:
        >>> round(float(max_tpr(1.0, 0.05).lower), 6)  # 1 - G_1(0.05) = Phi(mu - 1.645)
        0.259511
    """
    b = band(x, fpr)
    scalar = np.ndim(fpr) == 0
    lo = widen_down(1.0 - np.asarray(b.upper, dtype=np.float64))
    up = widen_up(1.0 - np.asarray(b.lower, dtype=np.float64))
    return _interval(scalar, np.asarray(lo), np.asarray(up))


def _delta_ball(x: Any, e: Any) -> Any:
    """A ball of delta(e) for x a mu or a profile (at the working precision)."""
    from symgdp.evaluation.interval import delta_mu_arb

    mu = mu_value(x)
    if mu is not None:
        from flint import arb

        return arb(1) if math.isinf(mu) else delta_mu_arb(e, mu)
    enclose, _ = enclosure(x)
    return enclose(e)


def advantage(x: Any) -> Interval:
    r"""The largest advantage of a membership test,
    :math:`\sup_\alpha\,(1 - f(\alpha) - \alpha) = \sup_E\,(P'(E) - P(E))`, the total
    variation distance of the outputs on two neighbours: :math:`\delta(0)` (Dong, Roth &
    Su 2021, Prop. 2.12 at :math:`\varepsilon = 0`), and :math:`2\Phi(\mu/2) - 1` for
    :math:`\mu`-GDP (its :math:`\delta_\mu(0)`).

    Example:
        >>> from symgdp import mechanisms
        >>> a = advantage(mechanisms.randomized_response(1.0))  # (e - 1)/(e + 1)
        >>> a.lower <= 0.46211715726000974 <= a.upper
        True
    """
    from flint import arb, ctx

    with ctx.workprec(BAND_PREC):
        b = _delta_ball(x, arb(0))
        return _interval(True, np.asarray(max(float_below(b), 0.0)), np.asarray(float_above(b)))


def bayes_success(x: Any, prior: Any) -> Interval:
    r"""The largest probability that an adversary guesses right which of two neighbouring
    datasets :math:`S, S'` produced the output, when :math:`S'` has prior probability
    ``prior`` :math:`= \pi` and :math:`S` has :math:`1 - \pi`.

    A guess is a test; with type I error :math:`\alpha` (guessing :math:`S'` under
    :math:`S`) and type II error :math:`\beta` it succeeds with probability
    :math:`(1 - \pi)(1 - \alpha) + \pi(1 - \beta)`, so the Bayes-optimal success is

    .. math:: \max_\alpha\,\bigl[(1 - \pi)(1 - \alpha) + \pi(1 - f(\alpha))\bigr]
              = \max(\pi, 1 - \pi) + \min(\pi, 1 - \pi)\,
              \delta\bigl(\bigl|\log\tfrac{\pi}{1 - \pi}\bigr|\bigr),

    because :math:`\min_\alpha\,(f(\alpha) + e^{\varepsilon}\alpha) = 1 - \delta(\varepsilon)`
    (the conjugacy of Dong, Roth & Su 2021, Prop. 2.12) and :math:`f` is symmetric; the
    hypothesis-testing reading of DP is that of Wasserman & Zhou (2010).  With no
    information the adversary reaches :math:`\max(\pi, 1 - \pi)`; the guarantee bounds the
    excess.  ``prior`` may be an array.

    Example:
        >>> s = bayes_success(1.0, 0.5)  # (1 + delta_1(0))/2 = Phi(1/2)
        >>> round(float(s.upper), 6)
        0.691462
    """
    from flint import arb, ctx

    scalar = np.ndim(prior) == 0
    p = np.atleast_1d(np.asarray(prior, dtype=np.float64))
    bad = ~((p >= 0) & (p <= 1))
    if np.any(bad):
        raise DomainError(f"prior must lie in [0, 1], got {p[bad][0]!r}")
    lo = np.empty(p.shape)
    up = np.empty(p.shape)
    with ctx.workprec(BAND_PREC):
        for i, pi in enumerate(p.flat):
            if pi in (0.0, 1.0):
                lo.flat[i] = up.flat[i] = 1.0
                continue
            a = arb(pi)
            big, small = (a, 1 - a) if pi >= 0.5 else (1 - a, a)
            e = (big / small).log()
            d = _delta_ball(x, e)
            s = big + small * d.max(arb(0)).min(arb(1))
            lo.flat[i], up.flat[i] = float_below(s), float_above(s)
    out = _interval(scalar, lo.reshape(np.shape(prior)), up.reshape(np.shape(prior)))
    return out
