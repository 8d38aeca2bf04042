r"""The tail wing: the symbolic limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))`.

* :mod:`~symgdp.tail.asymptotics` -- dominant-term asymptotics as :math:`\varepsilon\to\infty`;
* :mod:`~symgdp.tail.rules` -- the symbolic routes to the limit;
* :mod:`~symgdp.tail.limit` -- identification: the limit and the GDP verdict
  (:class:`~symgdp.tail.limit.Identification`, :meth:`symgdp.Profile.identify`).

The whole-line certificate of a measurement (a different question: is
:math:`\delta \le \delta_\mu` beyond the head?) lives in
:mod:`symgdp.measurement.whole_line`.  Exports nothing itself.
"""
