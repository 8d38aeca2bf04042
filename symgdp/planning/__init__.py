r"""The planning wing: choosing a mechanism's parameters.

* :mod:`~symgdp.planning.amplify` -- a head measurement to a full GDP guarantee;
* :mod:`~symgdp.planning.calibrate` -- the least noise for a target :math:`\mu` or
  :math:`(\varepsilon, \delta)` (:func:`symgdp.calibrate`);
* :mod:`~symgdp.planning.sweep` -- parameter grids on any executor (:func:`symgdp.sweep`).

Exports nothing itself: the public names live on :mod:`symgdp`.
"""
