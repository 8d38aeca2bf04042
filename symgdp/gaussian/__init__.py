r"""The Gaussian differential privacy (GDP) family, in float64, mpmath and balls.

:math:`\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) - e^{\varepsilon}
\Phi(-\varepsilon/\mu - \mu/2)` (Dong, Roth & Su 2022, Cor. 2.13) and its inverses.  Rooms:

* :mod:`~symgdp.gaussian.precise` -- the family in mpmath (``symgdp.mp``): references;
* :mod:`~symgdp.gaussian.core` -- :math:`\log\delta_\mu` in float64 with its error bound;
* :mod:`~symgdp.gaussian.scalar` -- the scalar fast path;
* :mod:`~symgdp.gaussian.mu_fast` -- the fast path of ``mu_gdp`` on arrays;
* :mod:`~symgdp.gaussian.vectorised` -- the public, vectorised functions
  (:func:`~symgdp.gaussian.vectorised.delta_mu`, :func:`~symgdp.gaussian.vectorised.mu_gdp`,
  ...), re-exported here and from :mod:`symgdp`;
* :mod:`~symgdp.gaussian.gdp_balls` -- erfcx and :math:`\delta_\mu` in ball arithmetic.

``symgdp.gaussian.delta_mu`` and the other names of
:mod:`~symgdp.gaussian.vectorised` resolve here on first use (nothing is imported before).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["compose_gdp", "delta_mu", "eps_gdp", "log_delta_mu", "mu_from_pure_dp",
           "mu_gdp", "tradeoff_gdp"]


def __getattr__(name: str) -> Any:
    room = importlib.import_module("symgdp.gaussian.vectorised")
    try:
        value = getattr(room, name)
    except AttributeError:
        raise AttributeError(f"module 'symgdp.gaussian' has no attribute {name!r}") from None
    globals()[name] = value
    return value
