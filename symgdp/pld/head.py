r"""The head of a numeric profile: measured on :math:`[0, \varepsilon_h]`, with
:math:`\varepsilon_h` where the profile falls to a failure probability.

A numeric profile (a composition, DP-SGD, a PLD) is an upper bound of the mechanism's
profile; where it falls to ``failure_prob`` the measurement stops, and the rest of the line
is the failure probability of the statement.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from symgdp.errors import DomainError
from symgdp.numerics.decimals import Probability
from symgdp.pld.curves import first_eps_below

__all__ = ["head_measure"]


def _head_end(profile: Any, failure_prob: float) -> float:
    """The eps where the upper profile falls to failure_prob (bisection, rounded up)."""
    e = first_eps_below(profile, math.log(failure_prob))
    if e == 0.0:
        return 1e-3
    if math.isinf(e):
        raise DomainError(f"the profile does not reach failure_prob={failure_prob:g}")
    return e


def head_measure(profile: Any, failure_prob: float, tol: float = 1e-4) -> tuple[Any, float]:
    r"""Measure a numeric profile on :math:`[0, \varepsilon_h]`, with
    :math:`\varepsilon_h` where the profile falls to ``failure_prob``.

    Returns the :class:`~symgdp.measurement.measure.Measurement` and its failure probability
    (the same value, ``m.failure_prob``): an upper bound of the profile at :math:`\varepsilon_h`,
    rounded up, which bounds the profile at every larger :math:`\varepsilon`.
    :class:`~symgdp.errors.DomainError` when the profile never falls that low (its floor is
    above ``failure_prob``).

    Example:
        >>> from symgdp import mechanisms
        >>> from symgdp import compose
        >>> m, fp = head_measure(compose(mechanisms.gaussian(0.5), times=4), 1e-9)
        >>> m.upper >= 1.0, fp <= 1e-9
        (True, True)
    """
    from symgdp.measurement.measure import measure

    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    floor = getattr(getattr(profile, "source", None), "floor", 0.0)
    if floor >= fp:
        raise DomainError(f"the profile's floor (mass at infinity) {floor:.3g} is above "
                          f"failure_prob={fp:g}")
    eps_h = _head_end(profile, fp)
    m = measure(profile, eps_h=eps_h, tol=tol, refine=False, identify=False)
    # one failure probability: the profile's own value at eps_h (an upper bound of the
    # mechanism's, rounded up) where it is below the measurement's delta_upper(eps_h)
    own = float(profile.log_delta(eps_h))
    own += 4e-16 * (abs(own) + 1.0)
    lp = min(m.log_failure_prob, own, math.log(fp))
    m = dataclasses.replace(m, log_failure_prob=lp, failure_prob=Probability.from_log(lp))
    return m, m.failure_prob
