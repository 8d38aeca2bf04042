r"""Privacy loss distributions (PLDs): profiles to PLDs and back, and composition.

The public entry points of the accounting wing (:mod:`symgdp.accounting`, where the
mathematics of each step is set out):

* :func:`to_pld` -- a pessimistic dp_accounting ``PrivacyLossDistribution`` for a profile
  (:mod:`symgdp.accounting.connect`);
* :func:`from_pld` -- the numeric profile of a PLD, an upper bound floored by its mass at
  infinity (:meth:`symgdp.profile.Profile.from_pld`, :mod:`symgdp.accounting.curves`);
* :func:`compose` -- certified composition of any profiles, with the mechanism-level bracket
  ``[mu_floor, mu_upper]`` (:mod:`symgdp.accounting.certified`; ``certify=False`` for
  dp_accounting's float64 route, :mod:`symgdp.accounting.compose`);
* :func:`head_measure` -- the measurement of a numeric profile on the head where it is
  above a failure probability;
* :class:`IntPMF`, :func:`int_pmf`, :func:`int_compose`, :func:`int_self_compose` --
  certified composition in integer arithmetic (:mod:`symgdp.accounting.pmf`).
"""

from __future__ import annotations

from typing import Any

from .accounting.certified import Composition, EpsBracket, LazyComposition, compose
from .accounting.compose import head_measure
from .accounting.connect import DEFAULT_DISCRETIZATION, to_pld
from .accounting.pmf import IntPMF, int_compose, int_pmf, int_self_compose
from .profile import Profile

__all__ = ["to_pld", "from_pld", "compose", "Composition", "LazyComposition", "EpsBracket",
           "head_measure", "DEFAULT_DISCRETIZATION",
           "IntPMF", "int_pmf", "int_compose", "int_self_compose"]


def from_pld(pld: Any, *, name: str | None = None) -> Profile:
    r"""The numeric profile of a pessimistic dp_accounting ``PrivacyLossDistribution``
    (:meth:`Profile.from_pld <symgdp.profile.Profile.from_pld>`).

    Example:
        >>> from symgdp import mechanisms
        >>> p = from_pld(to_pld(mechanisms.laplace(1.0), value_discretization_interval=1e-3))
        >>> exact = mechanisms.laplace(1.0)
        >>> all(p(x) >= exact(x) for x in (0.0, 0.3, 0.9))
        True
    """
    return Profile.from_pld(pld, name=name)
