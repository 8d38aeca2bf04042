r"""The same sweep on a Dask cluster: a ``LocalCluster`` here, any cluster in practice.

:func:`symgdp.sweep` takes any :class:`concurrent.futures.Executor`; Dask's
``Client.get_executor()`` is one.  On a real cluster replace the ``LocalCluster`` by the
scheduler's address (``Client("tcp://scheduler:8786")``) or by a cluster manager
(dask-jobqueue's ``SLURMCluster``, ...); nothing else changes.  The script checks that
the cluster returns the very records of a run in this process (on the first few points),
and that a sweep resumed from its results file recomputes nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from _common import parse_args

from symgdp import mechanisms, sweep


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    n_sigma, workers, n_check = (1, 2, 1) if args.small else (10, 2, 3)
    grid = {"A": [1.0, 1.5], "B": [1.0], "sigma": list(np.linspace(0.8, 4.0, n_sigma))}
    settings = {"tol": 1e-6, "eps_h": 100.0}

    from distributed import Client, LocalCluster

    out = args.out / "sweep_dask.jsonl"
    out.unlink(missing_ok=True)
    # silence_logs: the workers' own log lines; a worker slow to exit on a busy machine
    # otherwise logs its failed heartbeat (with a traceback) while the cluster closes.
    # A failed point still comes back through its future (sweep records the error).
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        on_dask = sweep(mechanisms.sgd_family, grid, executor=client.get_executor(), out=out,
                        **settings)
    print(f"{len(on_dask)} points on {workers} Dask workers, written to {out}")

    # the first points again, in this process (a list of points is a grid too)
    points = [r["point"] for r in on_dask[:n_check]]
    here = sweep(mechanisms.sgd_family, points, executor="serial", **settings)

    def strip(records: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k not in ("seconds", "index")}
                for r in records]

    if strip(on_dask[:n_check]) != strip(here):
        raise SystemExit("the Dask records differ from the serial ones")
    print(f"the first {n_check} points are identical to a run in this process")
    resumed = sweep(mechanisms.sgd_family, grid, executor="serial", out=out, resume=True,
                    **settings)
    if strip(resumed) != strip(on_dask):
        raise SystemExit("the resumed records differ")
    print("resumed from the results file: nothing recomputed")
    for r in on_dask[:3]:
        print(r["point"], f"mu in [{r['mu_lower']:.7f}, {r['mu_upper']:.7f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
