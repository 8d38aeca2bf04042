r"""Composition of mechanisms through dp_accounting's float64 privacy loss distributions.

This is the ``certify=False`` route of :func:`symgdp.compose`; the default, certified
route is :mod:`symgdp.accounting.certified`.

**Composition** (:func:`compose`): PLDs of every argument, composed with
``PrivacyLossDistribution.compose`` / ``self_compose``, and returned as a
numeric profile backed by a :class:`~symgdp.pld.curves.PLDSource`.  Randomized
response is composed as a PLD, not through
``dp_accounting``'s ``RandomizedResponseDpEvent`` (whose count composes only once in
version 0.6.0).  This route carries the *estimated* FFT margin above.

"""

from __future__ import annotations

from typing import Any

from symgdp.errors import DomainError
from symgdp.pld.connect import DEFAULT_DISCRETIZATION, to_pld
from symgdp.pld.curves import check_discretization, curves_source
from symgdp.pld.pmf import check_times
from symgdp.profile import Profile

__all__ = ["compose", "from_pld", "profile_from_curves"]


def profile_from_curves(curves: Any, *, name: str, pld: Any = None, **meta: Any) -> Profile:
    """A numeric :class:`~symgdp.profile.Profile` whose value is the maximum of the curves."""
    return Profile.from_source(curves_source(curves, pld=pld), name=name, **meta)


def from_pld(pld: Any, *, name: str | None = None) -> Profile:
    r"""The numeric profile of a pessimistic dp_accounting ``PrivacyLossDistribution``
    (:meth:`Profile.from_pld <symgdp.profile.Profile.from_pld>`).

    Example:
        >>> from symgdp import mechanisms
        >>> from symgdp.pld.connect import to_pld
        >>> p = from_pld(to_pld(mechanisms.laplace(1.0), value_discretization_interval=1e-3))
        >>> exact = mechanisms.laplace(1.0)
        >>> all(p(x) >= exact(x) for x in (0.0, 0.3, 0.9))
        True
    """
    return Profile.from_pld(pld, name=name)


# -- composition ---------------------------------------------------------------------------
def compose(*profiles: Any, times: int | None = None,
            value_discretization_interval: float = DEFAULT_DISCRETIZATION,
            tail_mass_truncation: float = 1e-15, **kw: Any) -> Profile:
    r"""Pessimistic composition of mechanisms through their privacy loss distributions.

    ``compose(a, b, c)`` is the adaptive composition of the three; ``compose(a,
    times=k)`` the :math:`k`-fold composition of ``a``; ``compose(a, b, times=k)``
    repeats the pair :math:`k` times.  Arguments may be profiles (known mechanisms use
    their exact PLDs, others connect the dots, see :func:`~symgdp.pld.connect.to_pld`),
    profiles built from PLDs, or dp_accounting PLDs with the same discretisation.  Extra
    keywords go to :func:`to_pld`.  ``tail_mass_truncation`` is dp_accounting's: at most this much
    probability is cut from the tails of each convolution and (pessimistically) moved to
    the mass at infinity; 0 keeps the whole support (slower for many steps, but a
    mechanism with bounded loss then keeps a profile that is exactly 0 beyond it).

    Returns:
        A numeric :class:`~symgdp.profile.Profile` whose ``source`` is a
        :class:`~symgdp.pld.curves.PLDSource`: an upper bound on the composition's
        profile, with the mass at infinity as its floor (``profile.source.floor``).

    Example:
        >>> from symgdp import mechanisms, delta_mu
        >>> p = compose(mechanisms.gaussian(0.5), times=4)   # exactly 1-GDP
        >>> delta_mu(1.0, 1.0) <= p(1.0) <= delta_mu(1.0, 1.0) + 1e-4
        True
    """
    if not profiles:
        raise DomainError("compose() needs at least one profile or mechanism")
    k = 1 if times is None else check_times(times)
    disc = check_discretization(value_discretization_interval)
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
