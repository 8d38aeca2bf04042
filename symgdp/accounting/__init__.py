r"""The accounting wing: privacy loss distributions (PLDs) and their composition.

Rooms, in pipeline order:

* :mod:`~symgdp.accounting.curves` -- the numeric profile of a PLD (a numeric source of
  :class:`~symgdp.profile.Profile`), exactly as piecewise affine in :math:`e^\varepsilon`;
* :mod:`~symgdp.accounting.pmf` -- certified composition of PLDs in exact integer
  arithmetic;
* :mod:`~symgdp.accounting.connect` -- from a profile to a pessimistic PLD (known
  mechanisms exactly, any other profile by connect-the-dots);
* :mod:`~symgdp.accounting.compose` -- composition of profiles and mechanisms through
  their PLDs, and the head measurement of a numeric profile.

The user-facing entry points stay at the top of the package: :func:`symgdp.compose`,
:mod:`symgdp.pld`, :func:`symgdp.dpsgd`.
"""
