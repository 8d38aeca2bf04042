r"""GDPTs with staircase bounds, measured bracket and tail limit (the seed paper's GDPT figure).

Three mechanisms: the Laplace mechanism (pure DP: its profile is 0 beyond
:math:`\varepsilon_0`, so the measured bound is a full GDP guarantee), the "SGD family"
(GDP: finite tail limit) and shuffle-model summation (not GDP: the GDPT grows without
bound, so only a head guarantee exists).  Each panel shows
:math:`G(\varepsilon) = \mu_{\mathrm{GDP}}(\varepsilon, \delta(\varepsilon))` of the refined
profile, the staircase bounds of theory §6, the upper bounds the measurement
proved on its branch-and-bound cover, the guaranteed bracket of
:math:`\sup_{[0,\varepsilon_h]} G` and the tail limit as an asymptote.
"""

from __future__ import annotations

from pathlib import Path

from _common import parse_args, save_figure
from matplotlib.figure import Figure

from symgdp import mechanisms, plot
from symgdp.present.report import format_bracket

LAPLACE_EPS0 = 1.0
SGD = {"A": 1.0, "B": 1.25, "sigma": 1.5}
SHUFFLE = {"m": 100, "n": 1000}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    tol, eps_h, steps, n = (1e-3, 20.0, 12, 150) if args.small else (1e-6, 100.0, 30, 600)

    panels = [(mechanisms.laplace(LAPLACE_EPS0), 3.0),
              (mechanisms.sgd_family(**SGD), 5.0),
              (mechanisms.shuffle_sum(**SHUFFLE), 10.0)]
    # double-column width (7 in): the panels one above the other, each with its legend
    # to its right
    fig = Figure(figsize=(7.0, 7.5), layout="constrained")
    axes = fig.subplots(3, 1)
    print(f"{'mechanism':>12}  {'lower':>10}  {'upper':>10}  lim G     covers tail")
    for ax, (naive, eps_max) in zip(axes, panels, strict=True):
        refined = naive.refine()
        m = naive.measure(eps_h=eps_h, tol=tol)
        plot.gdpt(refined.replace(name=f"{naive.name} (refined)"), measurements=m,
                  eps_max=eps_max, staircase=steps, n=n, ax=ax, title=naive.name,
                  legend="outside")
        lower, upper = format_bracket(m.lower, m.upper)
        print(f"{naive.name:>12}  {lower:>10}  {upper:>10}  {m.mu_tail:<8.6g}  {m.covers_tail}")
    path = save_figure(fig, args, "gdpt")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
