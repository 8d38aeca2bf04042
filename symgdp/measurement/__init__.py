r"""The measurement wing: guaranteed brackets on :math:`\sup_{[0,\varepsilon_h]} G`.

The public entry is :func:`~symgdp.measurement.measure.measure` (and
:func:`~symgdp.measurement.measure.gdpt`); the rooms of the wing, in pipeline order (each
imports only the ones listed before it):

* :mod:`~symgdp.measurement.forms` -- symbolic preparation of a profile: exact rewrites
  (``normalise``, ``erfcx_form``, ``ErfcxDiff`` pairs), the log-expanded derivatives;
* :mod:`~symgdp.measurement.derivatives` -- derivatives of :math:`\log\delta_\mu` of any order
  from erfcx cumulants, in plain ball arithmetic;
* :mod:`~symgdp.measurement.result` -- the :class:`~symgdp.measurement.result.Measurement`
  dataclass (re-exported by :mod:`symgdp.measurement.measure`);
* :mod:`~symgdp.measurement.structure` -- structural monotonicity proofs for Min, Max and
  Piecewise profiles, branch points and jumps;
* :mod:`~symgdp.measurement.series` -- the series test: Taylor forms of
  :math:`\log\delta` of order 12 in Arb's power series;
* :mod:`~symgdp.measurement.compiled` -- ball functions of a profile and its derivatives,
  compiled once per expression and shared across parameter values;
* :mod:`~symgdp.measurement.firstorder` -- :class:`FirstOrder`, the first-order interval
  tests (monotonicity and :math:`\sup G \le \mu^+` on an interval, proved in balls);
* :mod:`~symgdp.measurement.search` -- the searches: first-order branch-and-bound with its
  sweep, the zeroth-order branch-and-bound, the published staircase;
* :mod:`~symgdp.measurement.finalise` -- finalising a bracket: certification in ball
  arithmetic and the outward rounding of float mode;
* :mod:`~symgdp.measurement.near_gaussian` -- profiles recognised as (nearly) the
  Gaussian profile, bracketed without a search;
* :mod:`~symgdp.measurement.whole_line.certificate` -- the whole line: :math:`\delta \le
  \delta_{\mu}` proved on :math:`[\varepsilon_h, \infty)` (forms at infinity, interval
  subdivision), which makes a head bound a :math:`\mu`-GDP statement;
* :mod:`~symgdp.measurement.measure` -- the entry: :func:`~symgdp.measurement.measure.measure`
  and :func:`~symgdp.measurement.measure.gdpt`.

Exports nothing itself: the public names are :func:`symgdp.measure`, :func:`symgdp.gdpt`
and :class:`symgdp.Measurement`.
"""
