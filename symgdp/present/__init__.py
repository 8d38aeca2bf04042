r"""The presenting wing: reports, figures and progress.

* :mod:`~symgdp.present.progress` -- progress of long stages (callbacks, tqdm bars);
* :mod:`~symgdp.present.style` -- the figures' house style and matplotlib plumbing;
* :mod:`~symgdp.present.plot` -- figures of profiles, GDPTs, trade-off curves and
  compositions (``symgdp.plot``);
* :mod:`~symgdp.present.report` -- every derived step as text, LaTeX, Markdown and JSON
  (:func:`symgdp.report`).

Exports nothing itself.
"""
