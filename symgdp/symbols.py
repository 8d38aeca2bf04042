r"""The canonical symbols of symgdp.

``eps`` (:math:`\varepsilon`) and ``delta`` (:math:`\delta`) are positive real SymPy
symbols; every function that takes an expression also accepts ``var=`` to name another
symbol for :math:`\varepsilon`.  Safe parsing of user strings lives in
:mod:`symgdp.parsing`.
"""

from __future__ import annotations

import sympy

__all__ = ["eps", "delta", "sigma", "mu", "gamma"]

eps = sympy.Symbol("varepsilon", positive=True, real=True)
delta = sympy.Symbol("delta", positive=True, real=True)
#: a noise scale, as used in trade-off equations ``sigma = f(eps, delta)``
sigma = sympy.Symbol("sigma", positive=True, real=True)
#: the GDP parameter
mu = sympy.Symbol("mu", positive=True, real=True)
#: a sampling rate
gamma = sympy.Symbol("gamma", positive=True, real=True)

# Names a user may type for the canonical symbols.
ALIASES: dict[str, sympy.Symbol] = {
    "eps": eps,
    "epsilon": eps,
    "varepsilon": eps,
    "ε": eps,
    "delta": delta,
    "δ": delta,
    "sigma": sigma,
    "σ": sigma,
    "mu": mu,
    "μ": mu,
    "gamma": gamma,
    "γ": gamma,
}
