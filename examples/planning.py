r"""Planning a mechanism: calibrate the noise for a target mu, sweep a grid, draw mu.

Three steps a researcher takes before running an experiment:

1. the least noise :math:`\sigma` of the "SGD family" calibration
   :math:`\sigma = A\varepsilon^{-1}\sqrt{\log(B/\delta)}` that gives 1-GDP, for two
   values of :math:`A`, with the guaranteed bracket that proves it;
2. a sweep of the measured :math:`\mu` over :math:`(A, \sigma)` on a process pool, written
   to a JSON-lines file as each point finishes;
3. the figure: :math:`\mu` against :math:`\sigma`, one band per :math:`A` (the band is the
   guaranteed bracket), with the target and the calibrated values, and the 2-D map.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from _common import parse_args, save_figure
from matplotlib.figure import Figure

from symgdp import calibrate, mechanisms, plot, sweep

TARGET_MU = 1.0
A_VALUES = [1.0, 2.0]
B = 1.0


def calibrated(a: float, tol: float, rtol: float) -> str:
    """Step 1 for one value of A, as the line to print (run on the process pool)."""
    r = calibrate(mechanisms.sgd_family(a, B, 1.0), "sigma", TARGET_MU, tol=tol, rtol=rtol)
    return (f"A = {a:g}: sigma = {r.value:.8g} (exact calibration in "
            f"[{r.bracket[0]:.8g}, {r.bracket[1]:.8g}]; mu <= {r.measurement.upper:.8g}, "
            f"{r.measurements} measurements)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    # --small: one calibration, a coarse grid and tolerances; the map adds ``more_a``
    # to A_VALUES
    n_sigma, more_a, tol, rtol, workers = ((4, [1.5], 1e-3, 5e-2, 2) if args.small
                                           else (16, [0.5, 1.5, 2.5], 1e-6, 1e-6, None))
    to_calibrate = A_VALUES[:1] if args.small else A_VALUES

    out = args.out / "planning.jsonl"
    out.unlink(missing_ok=True)
    sigmas = list(np.linspace(0.8, 4.0, n_sigma))
    grid = {"A": A_VALUES, "B": [B], "sigma": sigmas}
    dense = {"A": sorted(A_VALUES + more_a), "B": [B], "sigma": sigmas}
    with ProcessPoolExecutor(workers) as pool:  # one pool for everything
        calibrations = [pool.submit(calibrated, a, tol, rtol) for a in to_calibrate]
        table = sweep(mechanisms.sgd_family, grid, executor=pool, out=out, tol=tol)
        print(f"swept {len(table)} points ({len(table.errors)} failed) into {out}")
        # resume=True: the points of the first sweep are read back from its file
        full = sweep(mechanisms.sgd_family, dense, executor=pool, out=out, resume=True,
                     tol=tol)
        print(f"the map: {len(full)} points, {len(full) - len(table)} of them new")
        for c in calibrations:
            print(c.result())

    # double-column width (7 in); the map is drawn over the swept range only
    fig = Figure(figsize=(7.0, 3.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot.sweep(table, "sigma", by="A", target_mu=TARGET_MU, ax=left,
               title=r"$\mu$ of the SGD family")
    plot.sweep_map(full, "sigma", "A", levels=[0.5, TARGET_MU, 2.0], ax=right,
                   title=r"upper bound on $\mu$")
    path = save_figure(fig, args, "planning")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
