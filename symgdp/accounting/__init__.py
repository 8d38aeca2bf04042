r"""The accounting wing: composing mechanisms, with a proof.

Rooms, in pipeline order:

* :mod:`~symgdp.accounting.float_route` -- dp_accounting's float64 composition of profiles
  and mechanisms through their PLDs (``compose(..., certify=False)``), and
  :func:`~symgdp.accounting.float_route.from_pld`;
* :mod:`~symgdp.accounting.certified` -- the certified composition of anything, with the
  composed mechanism's bracket ``[mu_floor, mu_upper]`` (:func:`symgdp.compose`);
* :mod:`~symgdp.accounting.pure_dp` -- the :math:`k`-fold composition of pure DP, side by
  side (``symgdp.composition``: Table 1 of the GDPT paper);
* :mod:`~symgdp.accounting.events` -- dp_accounting's ``DpEvent`` trees, accounted with a
  proof (:func:`symgdp.from_dp_event`).

The engine below them (PLDs, integer composition, one certified step) is
:mod:`symgdp.pld`; DP-SGD is :mod:`symgdp.training`.

Exports, resolved on first use: :func:`compose`, :class:`Composition`,
:class:`LazyComposition`, :class:`EpsBracket`, :func:`to_pld`, :func:`from_pld`,
:func:`head_measure`, ``DEFAULT_DISCRETIZATION``, :class:`IntPMF`, :func:`int_pmf`,
:func:`int_compose`, :func:`int_self_compose`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "compose": "symgdp.accounting.certified",
    "Composition": "symgdp.accounting.certified",
    "LazyComposition": "symgdp.accounting.certified",
    "EpsBracket": "symgdp.accounting.certified",
    "from_pld": "symgdp.accounting.float_route",
    "to_pld": "symgdp.pld.connect",
    "DEFAULT_DISCRETIZATION": "symgdp.pld.connect",
    "head_measure": "symgdp.pld.head",
    "IntPMF": "symgdp.pld.pmf",
    "int_pmf": "symgdp.pld.pmf",
    "int_compose": "symgdp.pld.pmf",
    "int_self_compose": "symgdp.pld.pmf",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'symgdp.accounting' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
