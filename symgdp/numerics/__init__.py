r"""The shared numerics: directed rounding, exact balls and outward-rounded printing.

Every wing that rounds a bound imports it from here, so that "rounded up" means one thing:

* :mod:`~symgdp.numerics.rounding` -- :func:`~symgdp.numerics.rounding.up`,
  :func:`~symgdp.numerics.rounding.down` (one ulp outwards),
  :func:`~symgdp.numerics.rounding.exp_up` (a delta from its log, rounded up), outward
  intervals, and the
  floor/ceiling of an Arb ball (:func:`~symgdp.numerics.rounding.arb_floor`,
  :func:`~symgdp.numerics.rounding.arb_ceil`);
* :mod:`~symgdp.numerics.balls` -- exact balls of numbers and three-valued comparisons
  (python-flint ``arb``);
* :mod:`~symgdp.numerics.recursions` -- the geometric tail recursion of the PLD
  profiles (:func:`~symgdp.numerics.recursions.geometric_tail`), sequential as its error
  analysis needs;
* :mod:`~symgdp.numerics.bisection` -- the crossing of a monotone function through a
  level bisected with both ends proved at every step
  (:func:`~symgdp.numerics.bisection.proved_crossing`), on the real line or the integers;
* :mod:`~symgdp.numerics.decimals` -- printing bounds so that the printed statement stays
  true (outward decimal rounding, :class:`~symgdp.numerics.decimals.Probability`).

Exports nothing itself: import from the rooms.
"""
