r"""The training wing: DP-SGD with a guaranteed Gaussian-DP bracket.

* :mod:`~symgdp.training.tailblocks` -- one-step tails of the subsampled Gaussian by
  certified Taylor blocks;
* :mod:`~symgdp.training.engine` -- the certified engine: one-step PMFs in balls, their
  composition over schedules, the floor;
* :mod:`~symgdp.training.sampling` -- the sampling schemes of ``dpsgd(sampling=...)``
  as questions for the engine; :mod:`~symgdp.training.symmetrised` -- the one-step
  measure of fixed-size batches without replacement;
* :mod:`~symgdp.training.grids` -- the automatic grid and tol of :func:`symgdp.dpsgd`
  (a relative width for small :math:`\mu`) and the floor's grid;
  :mod:`~symgdp.training.comparison` -- dp_accounting's own PLD beside it
  (``compare=True``);
* :mod:`~symgdp.training.dpsgd` -- :func:`symgdp.dpsgd`,
  :class:`~symgdp.training.dpsgd.DPSGDResult`; :mod:`~symgdp.training.sigma` --
  :func:`symgdp.dpsgd_sigma`;
* :mod:`~symgdp.training.accountant` -- an opacus-style :class:`symgdp.Accountant`.

Exports nothing itself: the public names live on :mod:`symgdp`.
"""
