r"""The evaluation wing: the numeric value of a SymPy expression, trusted or proved.

* :mod:`~symgdp.evaluation.interval` -- rigorous ball arithmetic for profiles and the GDP
  family (python-flint ``arb``);
* :mod:`~symgdp.evaluation.trust` -- when a float64 value of an expression is trusted;
* :mod:`~symgdp.evaluation.evaluate` -- float64 first, high precision where needed.

Exports nothing itself: import from the rooms.
"""
