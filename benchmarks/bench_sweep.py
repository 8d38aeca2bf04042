r"""Benchmark of planning: sweeps on executors, resuming a killed sweep, calibration.

1. **Sweep** of the "SGD family" profile :math:`B e^{-\sigma^2\varepsilon^2/A^2}` (refined,
   measured at tol 1e-6, :math:`\varepsilon_h = 100`) over an (A, σ) grid, ``--points``
   points (default 1000): wall time in this process (``executor="serial"``), on a process
   pool of 2 workers (the default executor) and on a Dask ``LocalCluster`` of 2 worker
   processes (cluster start-up timed separately); the three must give identical records
   (timing fields aside).
2. **Kill and resume**: ``python -m symgdp sweep ... --out FILE`` runs in a child process
   that is killed (SIGKILL) once about half of its records are in the file; the sweep is
   then resumed from the file, counting the points submitted to the executor: it must be
   exactly the points without a complete record.
3. **Calibration** of the Gaussian mechanism (noise :math:`\sigma`, closed form
   :math:`\sigma = \Delta/\mu`) and of the Laplace mechanism (budget :math:`\varepsilon_0`,
   closed form :math:`-2\log(2\Phi(-\mu/2))`) to :math:`\mu = 1`: wall time, measurements used,
   and whether the closed form lies in the returned bracket.

The machine is shared (its load is recorded at the start): parallel speed-ups measured
under load understate what an idle machine gives.

Usage::

    python benchmarks/bench_sweep.py                 # 1000 points
    python benchmarks/bench_sweep.py --points 200    # a smaller grid under heavy load
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import dask
import numpy as np
import sympy
from _common import ROOT, machine, write_section  # benchmarks/ is first on sys.path

from symgdp import calibrate, mechanisms, sweep

START, END = "<!-- bench_sweep:start -->", "<!-- bench_sweep:end -->"
SETTINGS = {"tol": 1e-6, "eps_h": 100.0}
WORKERS = 2


def grid(points: int) -> dict[str, list[float]]:
    n_a = max(1, int(round(math.sqrt(points / 2.5))))
    n_s = max(1, points // n_a)
    return {"A": [float(a) for a in np.linspace(0.5, 2.0, n_a)], "B": [1.0],
            "sigma": [float(s) for s in np.linspace(0.5, 4.0, n_s)]}


def strip(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


class CountingPool(ProcessPoolExecutor):
    """A process pool that counts the grid points submitted to it (a task carries a
    batch of points)."""

    submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted += len(args[0]) if isinstance(args[0], list) else 1
        return super().submit(fn, *args, **kwargs)


def _autogroup() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


def _load() -> float:
    return os.getloadavg()[0]


def bench_executors(points: int) -> dict[str, Any]:
    g = grid(points)
    n = len(g["A"]) * len(g["sigma"])
    load: dict[str, float] = {}
    load["serial"] = _load()
    t0 = time.perf_counter()
    serial = sweep(mechanisms.sgd_family, g, executor="serial", **SETTINGS)
    t_serial = time.perf_counter() - t0
    load["pool"] = _load()
    t0 = time.perf_counter()
    pooled = sweep(mechanisms.sgd_family, g, workers=WORKERS, **SETTINGS)
    t_pool = time.perf_counter() - t0
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    # Dask's statistical profiler samples every worker thread's stack every 10 ms, about
    # 4% of a pure-Python point (53.7 against 51.6 ms a point, measured alternately): off,
    # as the planning page recommends for sweeps
    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(WORKERS)
        t_start = time.perf_counter() - t0
        load["dask"] = _load()
        t0 = time.perf_counter()
        on_dask = sweep(mechanisms.sgd_family, g, executor=client.get_executor(), **SETTINGS)
        t_dask = time.perf_counter() - t0
        # the same cluster with one point per task (the sweep before batching)
        load["dask1"] = _load()
        t0 = time.perf_counter()
        on_dask1 = sweep(mechanisms.sgd_family, g, executor=client.get_executor(),
                         chunksize=1, **SETTINGS)
        t_dask1 = time.perf_counter() - t0
    load["end"] = _load()

    def per_point(t: list[dict[str, Any]]) -> float:
        return sum(r["seconds"] for r in t) / len(t)

    return {
        "per": {"serial": per_point(serial), "pool": per_point(pooled),
                "dask": per_point(on_dask), "dask1": per_point(on_dask1)},
        "n": n, "grid": f"{len(g['A'])} values of A in [0.5, 2] × {len(g['sigma'])} of σ "
        "in [0.5, 4], B = 1",
        "serial": t_serial, "pool": t_pool, "dask": t_dask, "dask1": t_dask1,
        "dask_start": t_start, "load": load,
        "pool_same": strip(pooled) == strip(serial), "dask_same": strip(on_dask) == strip(serial),
        "dask1_same": strip(on_dask1) == strip(serial),
        "errors": len(serial.errors),
    }


def bench_resume(points: int) -> dict[str, Any]:
    a_vals = ",".join(f"{a:g}" for a in np.linspace(0.5, 2.0, 4))
    n_s = max(2, points // 4)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep.jsonl"
        cmd = [sys.executable, "-m", "symgdp", "sweep", "B*exp(-sigma**2*eps**2/A**2)",
               "--set", "B=1", "--grid", f"A={a_vals}", "--grid", f"sigma=0.5:4:{n_s}",
               "--tol", "1e-6", "--workers", str(WORKERS), "--out", str(out)]
        total = 4 * n_s
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        deadline = time.time() + 600
        while time.time() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= total // 2:
                break
            time.sleep(0.05)
        killed = proc.poll() is None
        if killed:
            os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
        proc.wait()
        data = out.read_bytes()
        complete = data.count(b"\n")
        torn = not data.endswith(b"\n") and len(data) > 0
        with CountingPool(max_workers=WORKERS) as pool:
            # the same sweep as the command line's: its profile text, grid and settings
            from symgdp import Profile

            p = Profile.parse("B*exp(-sigma**2*eps**2/A**2)", {"B": 1})
            from symgdp.cli.main import _grid_values

            g = dict([_grid_values(f"A={a_vals}"), _grid_values(f"sigma=0.5:4:{n_s}")])
            resumed = sweep(p, g, executor=pool, out=out, resume=True, tol=1e-6)
            submitted = pool.submitted
        indices = sorted(json.loads(line)["index"] for line in out.read_text().splitlines())
    return {"total": total, "killed": killed, "complete": complete, "torn": torn,
            "submitted": submitted, "ok": submitted == total - complete
            and indices == list(range(total)) and not resumed.errors}


def bench_calibrate() -> list[dict[str, Any]]:
    from scipy.special import ndtr

    s, out = sympy.Symbol("sigma", positive=True), []
    cases = [
        ("Gaussian, noise σ (Δ = 1)", lambda: calibrate(
            mechanisms.gaussian(1 / s), "sigma", 1.0, bracket=(0.5, 4.0), refine=False),
         1.0, "eps_h = 100, tol = 1e-6, refine=False"),
        ("Laplace, budget ε₀", lambda: calibrate(
            mechanisms.laplace(1.0), "varepsilon_0", 1.0, eps_h=20),
         -2 * math.log(2 * ndtr(-0.5)), "eps_h = 20, tol = 1e-6"),
    ]
    for label, run, truth, how in cases:
        t0 = time.perf_counter()
        r = run()
        dt = time.perf_counter() - t0
        out.append({"label": label, "seconds": dt, "value": r.value, "bracket": r.bracket,
                    "truth": truth, "inside": r.bracket[0] <= truth <= r.bracket[1],
                    "measurements": r.measurements, "how": how,
                    "certified": r.measurement.certified})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1000, help="grid points of the sweep")
    ap.add_argument("--resume-points", type=int, default=120,
                    help="grid points of the kill-and-resume run")
    args = ap.parse_args()
    import distributed

    mach = machine({"NumPy": np.__version__, "SymPy": sympy.__version__,
                    "Dask": dask.__version__, "distributed": distributed.__version__})
    print(mach)
    ex = bench_executors(args.points)
    print(ex)
    rs = bench_resume(args.resume_points)
    print(rs)
    cal = bench_calibrate()
    print(cal)
    load_end = " / ".join(f"{x:.2f}" for x in os.getloadavg())

    lines = [START, "## Planning: sweeps and calibration (`bench_sweep.py`)", ""]
    lines += ["| machine | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in mach.items()]
    lines += [f"| load (1/5/15 min) at end | {load_end} |", ""]
    dask_x, pool_x = ex["serial"] / ex["dask"], ex["serial"] / ex["pool"]

    def busy(name: str, workers: int) -> str:
        return f"{ex['n'] * ex['per'][name] / (ex[name] * workers):.2f}"

    load_start = float(mach["load (1/5/15 min) at start"].split(" / ")[0])
    lines += [
        ("The machine was shared by several jobs while this ran (see the load): the "
         "parallel speed-ups below are lower than on an idle machine, and the targets "
         "(< 60 s on 2 cores, ≥ 1.7× over serial) assume 2 otherwise free cores."
         if load_start >= 1.0 else
         "The machine was nearly idle at the start (see the load); the targets (< 60 s "
         "on 2 cores, ≥ 1.7× over serial) assume 2 otherwise free cores."), "",
        f"Targets: Dask ≥ 1.7× serial — {'met' if dask_x >= 1.7 else '**missed**'} "
        f"({dask_x:.2f}×); process pool {pool_x:.2f}×; 1000 points < 60 s on 2 workers — "
        f"Dask {'met' if ex['dask'] < 60 else '**missed**'} ({ex['dask']:.1f} s), pool "
        f"{'met' if ex['pool'] < 60 else '**missed**'} ({ex['pool']:.1f} s).", "",
        f"**Sweep** of the refined SGD family at tol 1e-6, ε_h = 100: {ex['n']} points "
        f"({ex['grid']}); {ex['errors']} failed points.", "",
        "| executor | wall time | speed-up over serial | mean wall time of one point "
        "inside its task | workers busy | records identical to serial |",
        "|---|---|---|---|---|---|",
        f"| serial (this process) | {ex['serial']:.1f} s | 1 | "
        f"{ex['per']['serial'] * 1e3:.0f} ms | {busy('serial', 1)} | — |",
        f"| process pool, {WORKERS} workers | {ex['pool']:.1f} s | "
        f"{ex['serial'] / ex['pool']:.2f}× | {ex['per']['pool'] * 1e3:.0f} ms | "
        f"{busy('pool', WORKERS)} | {'yes' if ex['pool_same'] else '**no**'} |",
        f"| Dask LocalCluster, {WORKERS} worker processes, profiler off "
        f"(+ {ex['dask_start']:.1f} s start) "
        f"| {ex['dask']:.1f} s | {ex['serial'] / ex['dask']:.2f}× | "
        f"{ex['per']['dask'] * 1e3:.0f} ms | {busy('dask', WORKERS)} | "
        f"{'yes' if ex['dask_same'] else '**no**'} |",
        f"| the same cluster, one point per task (`chunksize=1`) | {ex['dask1']:.1f} s | "
        f"{ex['serial'] / ex['dask1']:.2f}× | {ex['per']['dask1'] * 1e3:.0f} ms | "
        f"{busy('dask1', WORKERS)} | {'yes' if ex['dask1_same'] else '**no**'} |", "",
        "*Workers busy*: the points' own wall time summed, over the wall time times the "
        "workers — the share of the sweep's time its workers spent inside points, what is "
        "left being the executor's own cost and the wait for the last task; unlike the "
        "speed-up it does not depend on how much CPU the other jobs left.", "",
        "The executors ran one after the other in this order, in one run; the 1-minute "
        "load average when each started: "
        + ", ".join(f"{k} {v:.2f}" for k, v in ex["load"].items() if k != "end")
        + f"; at the end {ex['load']['end']:.2f}.  By default a task carries a batch of "
        "points (about 4 tasks per worker, at most 32 points each: here "
        f"{min(32, -(-ex['n'] // (4 * WORKERS)))} points a task), so an executor's cost per "
        "task is paid once per batch.", "",
        "A point's own wall time grows when its worker shares a core with other jobs: the "
        "ratio of the per-point times shows how much of the two cores the workers "
        "actually got.  Linux schedules by session here (autogroup "
        f"{'enabled' if _autogroup() else 'disabled'}): when other sessions keep the cores "
        "busy, all processes of one job share a single session's share of the CPU, and "
        "two workers cannot get more CPU time than one serial process did.", "",
        f"**Kill and resume**: `symgdp sweep` over {rs['total']} points in a child process, "
        f"killed with SIGKILL after {rs['complete']} complete records"
        f"{' and a torn one' if rs['torn'] else ''}"
        f"{'' if rs['killed'] else ' (it finished before the kill)'}; the resumed sweep "
        f"submitted {rs['submitted']} points (expected {rs['total'] - rs['complete']}): "
        f"{'no finished point recomputed' if rs['ok'] else '**MISMATCH**'}.", "",
        "**Calibration** to μ = 1 (first call, compilation of the profile included):", "",
        "| mechanism | settings | value | bracket | closed form | inside | measurements | time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cal:
        lines.append(
            f"| {c['label']} | {c['how']} | {c['value']:.10g} | [{c['bracket'][0]:.10g}, "
            f"{c['bracket'][1]:.10g}] | {c['truth']:.10g} | "
            f"{'yes' if c['inside'] else '**no**'} | {c['measurements']} | "
            f"{c['seconds']:.2f} s |")
    lines += ["", "Every calibration's own measurement is certified in ball arithmetic "
              f"({', '.join('yes' if c['certified'] else 'no' for c in cal)}).", END]
    write_section("\n".join(lines), START, END)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
