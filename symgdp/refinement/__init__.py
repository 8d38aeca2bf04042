r"""The refinement wing: what counts as a profile, and its refinement by the partial order.

* :mod:`~symgdp.refinement.family` -- symbolic work shared across parameter values;
* :mod:`~symgdp.refinement.validate` -- :func:`~symgdp.refinement.validate.check_profile`;
* :mod:`~symgdp.refinement.refine` -- the exact partial order on :math:`(\varepsilon,\delta)`-DP,
  refinement and Poisson subsampling;
* :mod:`~symgdp.refinement.utility` -- utility refinement: the least noise for a target
  (:func:`symgdp.refine_calibration`).

Exports nothing itself: the public names are :meth:`symgdp.Profile.refine` and
:func:`symgdp.refine_calibration`.
"""
