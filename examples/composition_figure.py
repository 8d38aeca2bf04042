r"""Composition of :math:`k` pure :math:`\varepsilon_0`-DP mechanisms: the bounds compared.

The seed paper's composition figure: :math:`\varepsilon` at level :math:`\delta` after
:math:`k`-fold composition by the basic and advanced composition theorems, the optimal
(Kairouz-Oh-Viswanath) bound, and the GDP route (per-step :math:`\mu` from pure DP or
measured from the Laplace mechanism, composed as :math:`\sqrt{k}\mu`), with the GDP summary
of the optimal profile (theory §8).  Left: against :math:`\delta` at fixed
:math:`k`; right: against :math:`k` at fixed :math:`\delta`.  The table itself is printed
by ``examples/composition_table.py``.

Every row has a fixed style (colour-blind-safe colour, marker and line style:
``symgdp.present.plot.ROW_STYLES``) and its human name
(``symgdp.accounting.pure_dp.ROW_LABELS``); one legend outside both panels lists them.
``--rows basic,advanced,optimal,gdp_summary`` draws a selection.  Written as PNG and as a
vector PDF with embedded fonts.
"""

from __future__ import annotations

from pathlib import Path

import _common
import numpy as np
from _common import save_figure
from matplotlib.figure import Figure

from symgdp import composition, plot

EPS0 = 0.2


def main(argv: list[str] | None = None) -> int:
    p = _common.parser(__doc__, Path(__file__).resolve().parent / "out")
    p.add_argument("--rows", default=None,
                   help="rows to draw, comma-separated (default: all): "
                        + ",".join(composition.ROWS))
    args = _common.parse(p, argv)
    rows = None if args.rows is None else [r.strip() for r in args.rows.split(",")]
    unknown = sorted(set(rows or ()) - set(composition.ROWS))
    if unknown:
        p.error(f"unknown rows {', '.join(unknown)}; rows are {', '.join(composition.ROWS)}")
    k_fixed, delta_fixed = 50, 1e-6
    if args.small:
        deltas = [1e-10, 1e-6, 1e-2]
        ks = [10, 50]
        tol = 1e-4
    else:
        deltas = list(np.logspace(-12, -1, 23))
        ks = [5, 10, 20, 30, 50, 75, 100, 150, 200]
        tol = 1e-8

    by_delta = composition.table(EPS0, k_fixed, deltas, tol=tol, rows=rows)
    by_k: dict[str, list[float]] = {}
    for k in ks:
        row = composition.table(EPS0, k, [delta_fixed], tol=tol, rows=rows)
        for name, values in row.items():
            by_k.setdefault(name, []).append(values[0])

    # double-column width (7 in); the legend (all rows) to the right of both panels
    fig = Figure(figsize=(7.0, 3.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot.composition(by_delta, deltas, ax=left, legend="figure",
                     title=rf"$k = {k_fixed}$ steps of $\varepsilon_0 = {EPS0:g}$-DP")
    plot.composition(by_k, ks, xlabel="$k$", ax=right, legend="figure",
                     title=rf"$\delta = 10^{{{int(np.log10(delta_fixed))}}}$, "
                           rf"$\varepsilon_0 = {EPS0:g}$")
    path = save_figure(fig, args, "composition")
    print(f"eps at delta = {delta_fixed:g} after k = {ks[-1]} steps:")
    width = max(len(composition.ROW_LABELS[name]) for name in by_k)
    for name in by_k:
        print(f"  {composition.ROW_LABELS[name]:<{width}}  {by_k[name][-1]:.4f}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
