r"""Composition of mechanisms through dp_accounting's float64 privacy loss distributions.

This is the ``certify=False`` route of :func:`symgdp.compose`; the default, certified
route is :mod:`symgdp.accounting.certified`.

**Composition** (:func:`compose`): PLDs of every argument, composed with
``PrivacyLossDistribution.compose`` / ``self_compose``, and returned as a
numeric profile backed by a :class:`~symgdp.accounting.curves.PLDSource`.  Randomized
response is composed as a PLD, not through
``dp_accounting``'s ``RandomizedResponseDpEvent`` (whose count composes only once in
version 0.6.0).  This route carries the *estimated* FFT margin above.

"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..errors import DomainError
from ..formatting import Probability
from ..profile import Profile
from .connect import DEFAULT_DISCRETIZATION, to_pld
from .curves import _check_discretization, curves_source, first_eps_below
from .pmf import _check_times

__all__ = ["compose", "head_measure", "profile_from_curves"]


def profile_from_curves(curves: Any, *, name: str, pld: Any = None, **meta: Any) -> Profile:
    """A numeric :class:`~symgdp.profile.Profile` whose value is the maximum of the curves."""
    return Profile.from_source(curves_source(curves, pld=pld), name=name, **meta)


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

    Returns the :class:`~symgdp.measure.Measurement` and its failure probability (the same
    value, ``m.failure_prob``): an upper bound of the profile at :math:`\varepsilon_h`,
    rounded up, which bounds the profile at every larger :math:`\varepsilon`.
    :class:`~symgdp.errors.DomainError` when the profile never falls that low (its floor is
    above ``failure_prob``).

    Example:
        >>> from symgdp import mechanisms
        >>> m, fp = head_measure(compose(mechanisms.gaussian(0.5), times=4), 1e-9)
        >>> m.upper >= 1.0, fp <= 1e-9
        (True, True)
    """
    from ..measure import measure

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


# -- composition ---------------------------------------------------------------------------
def compose(*profiles: Any, times: int | None = None,
            value_discretization_interval: float = DEFAULT_DISCRETIZATION,
            tail_mass_truncation: float = 1e-15, **kw: Any) -> Profile:
    r"""Pessimistic composition of mechanisms through their privacy loss distributions.

    ``compose(a, b, c)`` is the adaptive composition of the three; ``compose(a,
    times=k)`` the :math:`k`-fold composition of ``a``; ``compose(a, b, times=k)``
    repeats the pair :math:`k` times.  Arguments may be profiles (known mechanisms use
    their exact PLDs, others connect the dots, see :func:`~symgdp.accounting.connect.to_pld`),
    profiles built from PLDs, or dp_accounting PLDs with the same discretisation.  Extra
    keywords go to :func:`to_pld`.  ``tail_mass_truncation`` is dp_accounting's: at most this much
    probability is cut from the tails of each convolution and (pessimistically) moved to
    the mass at infinity; 0 keeps the whole support (slower for many steps, but a
    mechanism with bounded loss then keeps a profile that is exactly 0 beyond it).

    Returns:
        A numeric :class:`~symgdp.profile.Profile` whose ``source`` is a
        :class:`~symgdp.accounting.curves.PLDSource`: an upper bound on the composition's
        profile, with the mass at infinity as its floor (``profile.source.floor``).

    Example:
        >>> from symgdp import mechanisms, delta_mu
        >>> p = compose(mechanisms.gaussian(0.5), times=4)   # exactly 1-GDP
        >>> delta_mu(1.0, 1.0) <= p(1.0) <= delta_mu(1.0, 1.0) + 1e-4
        True
    """
    if not profiles:
        raise DomainError("compose() needs at least one profile or mechanism")
    k = 1 if times is None else _check_times(times)
    disc = _check_discretization(value_discretization_interval)
    plds = []
    for p in profiles:
        if hasattr(p, "_pmf_remove") and hasattr(p, "self_compose"):
            plds.append(p)
        else:
            plds.append(to_pld(p, disc, **kw))
    tm = float(tail_mass_truncation)
    if not (0 <= tm < 1):
        raise DomainError(f"tail_mass_truncation must lie in [0, 1), got {tail_mass_truncation!r}")
    total = plds[0]
    try:
        for other in plds[1:]:
            total = total.compose(other, tail_mass_truncation=tm)
        if k > 1:
            total = total.self_compose(k, tail_mass_truncation=tm)
    except ValueError as exc:
        raise DomainError(f"these PLDs cannot be composed: {exc}") from exc
    names = [getattr(p, "name", None) or "PLD" for p in profiles]
    label = " ∘ ".join(names) if len(names) > 1 else names[0]
    return Profile.from_pld(total, name=f"({label})^{k}" if k > 1 else label)
