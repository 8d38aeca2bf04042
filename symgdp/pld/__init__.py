r"""The PLD engine: privacy loss distributions, built and composed with a proof.

Below the profile (which uses it for :meth:`~symgdp.Profile.from_pld` and
:meth:`~symgdp.Profile.to_pld`); rooms in pipeline order:

* :mod:`~symgdp.pld.curves` -- the numeric profile of a PLD (a numeric source), exactly as
  piecewise affine in :math:`e^\varepsilon`;
* :mod:`~symgdp.pld.head` -- the head measurement of a numeric profile, where it is above a
  failure probability;
* :mod:`~symgdp.pld.pmf` -- composition of PLDs in exact integer arithmetic;
* :mod:`~symgdp.pld.connect` -- from a profile to a pessimistic dp_accounting PLD;
* :mod:`~symgdp.pld.onestep` -- one certified step from a profile's values in ball arithmetic;
* :mod:`~symgdp.pld.kov` -- the exact :math:`k`-fold composition of pure DP, piece by piece.

Composing *mechanisms* is :mod:`symgdp.accounting` (:func:`symgdp.compose`); DP-SGD is
:mod:`symgdp.training`.  Exports nothing itself.
"""
