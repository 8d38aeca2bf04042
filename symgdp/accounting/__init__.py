r"""The accounting wing: privacy loss distributions (PLDs) and their composition.

Rooms, in pipeline order:

* :mod:`~symgdp.accounting.curves` -- the numeric profile of a PLD (a numeric source of
  :class:`~symgdp.profile.Profile`), exactly as piecewise affine in :math:`e^\varepsilon`;
* :mod:`~symgdp.accounting.pmf` -- certified composition of PLDs in exact integer
  arithmetic;
* :mod:`~symgdp.accounting.connect` -- from a profile to a pessimistic PLD (known
  mechanisms exactly, any other profile by connect-the-dots);
* :mod:`~symgdp.accounting.onestep` -- one certified step from a profile's values in
  ball arithmetic (pessimistic connect-the-dots rounded up; the same rounded down with a
  proved reveal probability for the lower side);
* :mod:`~symgdp.accounting.compose` -- dp_accounting's float64 composition of profiles and
  mechanisms through their PLDs, and the head measurement of a numeric profile;
* :mod:`~symgdp.accounting.certified` -- the certified composition of anything, with the
  composed mechanism's bracket ``[mu_floor, mu_upper]`` (:func:`symgdp.compose`).

The user-facing entry points stay at the top of the package: :func:`symgdp.compose`,
:func:`symgdp.from_dp_event`, :mod:`symgdp.pld`, :func:`symgdp.dpsgd`.
"""
