r"""The attacks wing: what a guarantee means for an attacker, and what an audit shows.

* :mod:`~symgdp.attacks.risk` -- certified bounds on attack risk (``symgdp.risk``);
* :mod:`~symgdp.attacks.audit` -- empirical lower bounds on :math:`\mu` from an attack's
  counts (:func:`symgdp.audit`, :func:`symgdp.audit_one_run`).

Exports nothing itself.
"""
