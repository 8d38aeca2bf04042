r"""The whole line: proving :math:`\delta(\varepsilon) \le \delta_\mu(\varepsilon)` beyond
the measured head, which makes a head bracket a :math:`\mu`-GDP statement.

* :mod:`~symgdp.measurement.whole_line.implicit_tail` -- the far tail of an implicit profile;
* :mod:`~symgdp.measurement.whole_line.infinity_forms` -- enclosures of a profile's
  logarithm on :math:`[E, \infty)`;
* :mod:`~symgdp.measurement.whole_line.certificate` -- the certificate itself.

Exports nothing itself: :func:`symgdp.measure` uses it.
"""
