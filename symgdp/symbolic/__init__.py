r"""The symbolic wing: the language a guarantee is written in.

Rooms (each imports only :mod:`symgdp.errors` and the rooms listed before it):

* :mod:`~symgdp.symbolic.symbols` -- the canonical symbols :math:`\varepsilon`, :math:`\delta`;
* :mod:`~symgdp.symbolic.budget` -- SymPy calls under a time budget (every symbolic step);
* :mod:`~symgdp.symbolic.parsing` -- safe parsing of user strings (no code is executed);
* :mod:`~symgdp.symbolic.steps` -- Piecewise conditions as unions of intervals;
* :mod:`~symgdp.symbolic.implicit` -- :math:`\log\delta(\varepsilon)` as the root of a
  trade-off equation (a SymPy function with a certified numeric root).

Exports nothing itself: import from the rooms, or the public names from :mod:`symgdp`.
"""
