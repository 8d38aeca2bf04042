r"""Benchmark of the everyday paths: what a researcher meets in the first hour.

One run measures, in CPU time (``time.process_time`` in this process; ``getrusage`` of the
children for subprocesses and forks), which depends far less on the machine's load than
wall time:

(a) ``Profile.log_delta`` on 10⁶ points of ε ∈ [0, 100]: plain and refined (Piecewise)
    profiles, among them the tutorial's trade-off profile; target: a refined profile
    within 3× of its unrefined expression;
(b) one scalar call of the GDP family (``log_delta_mu``, ``delta_mu``, ``mu_gdp``,
    ``eps_gdp``) and of ``conversions.analytic_gaussian_sigma``; target ≤ 20 µs;
(c) ``python -m symgdp --help`` and ``import symgdp`` in a fresh interpreter (target:
    --help < 0.3 s), and which heavy libraries ``import symgdp`` loads;
(d) one time-bounded SymPy call (``symgdp.symbolic.budget.run_bounded``): the fork round trip,
    and a first and second ``solve`` of the same kind;
(e) every example script at default settings (target < 30 s) and with ``--small``
    (target < 10 s), one row per script (about three minutes on a quiet machine).

and writes a markdown report, with machine, load and date, into its own section of
``docs/benchmarks.md`` (between ``<!-- bench_everyday:start -->`` and
``<!-- bench_everyday:end -->``).

Usage::

    python benchmarks/bench_everyday.py              # (a)-(e)
    python benchmarks/bench_everyday.py --quick      # examples with --small only
    python benchmarks/bench_everyday.py --no-write   # print only
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy
import sympy
from _common import DOC, ROOT, machine, write_section  # benchmarks/ is first on sys.path

START, END = "<!-- bench_everyday:start -->", "<!-- bench_everyday:end -->"
N_POINTS = 1_000_000
SCALAR_CALLS = 2000
FORKS = 30
TUTORIAL = "sigma = A/eps*sqrt(log(B/delta))"
TUTORIAL_VALUES = {"A": 1, "B": 1.25, "sigma": 1.5}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_of(fn: Callable[[], Any]) -> tuple[float, float]:
    """(CPU seconds of this process and its reaped children, wall seconds) of one call."""
    c0, k0, w0 = time.process_time(), _children_cpu(), time.perf_counter()
    fn()
    return time.process_time() - c0 + _children_cpu() - k0, time.perf_counter() - w0


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                MPLBACKEND="Agg")


# ------------------------------------------------------------------------------ (a)
def bench_log_delta() -> list[tuple[str, float, float]]:
    from symgdp import Profile, eps

    x = np.linspace(0.0, 100.0, N_POINTS)
    naive2 = Profile(2 * sympy.exp(-eps**2))
    tut = Profile.from_tradeoff(TUTORIAL, TUTORIAL_VALUES)
    cases = [("exp(-eps^2)", Profile(sympy.exp(-eps**2))),
             ("2 exp(-eps^2)", naive2), ("2 exp(-eps^2), refined", naive2.refine()),
             ("tutorial SGD profile", tut), ("tutorial SGD profile, refined", tut.refine())]
    rows = []
    for name, p in cases:
        p.log_delta(x[:100])  # compile once (lambdify): not what is measured
        rows.append((name, *cpu_of(lambda p=p: p.log_delta(x))))
    return rows


# ------------------------------------------------------------------------------ (b)
def bench_scalar() -> list[tuple[str, float]]:
    from symgdp import conversions
    from symgdp.gaussian import vectorised as g

    calls = [("log_delta_mu(1.0, 1.0)", lambda: g.log_delta_mu(1.0, 1.0)),
             ("delta_mu(1.0, 1.0)", lambda: g.delta_mu(1.0, 1.0)),
             ("mu_gdp(1.0, 1e-5)", lambda: g.mu_gdp(1.0, 1e-5)),
             ("mu_gdp(10.0, log_delta=-1000.0)", lambda: g.mu_gdp(10.0, log_delta=-1000.0)),
             ("eps_gdp(1.0, 1e-5)", lambda: g.eps_gdp(1.0, 1e-5)),
             ("analytic_gaussian_sigma(1.0, 1e-5)",
              lambda: conversions.analytic_gaussian_sigma(1.0, 1e-5))]
    rows = []
    for name, f in calls:
        f()

        def loop(f: Callable[[], Any] = f) -> None:
            for _ in range(SCALAR_CALLS):
                f()

        rows.append((name, cpu_of(loop)[0] / SCALAR_CALLS))
    return rows


# ------------------------------------------------------------------------------ (c)
def bench_startup() -> dict[str, Any]:
    def run(code: list[str]) -> tuple[float, float, str]:
        out: dict[str, str] = {}

        def go() -> None:
            proc = subprocess.run([sys.executable, *code], capture_output=True, text=True,
                                  env=env(), cwd=ROOT, timeout=300)
            out["stdout"] = proc.stdout
        cpu, wall = cpu_of(go)
        return cpu, wall, out["stdout"]

    heavy = ["sympy", "scipy", "scipy.stats", "scipy.optimize", "matplotlib"]
    check = f"import symgdp, sys; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    every = ("import symgdp, sys\nfor n in symgdp.__all__: getattr(symgdp, n)\n"
             f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    help_cpu, help_wall, _ = run(["-m", "symgdp", "--help"])
    imp_cpu, imp_wall, loaded = run(["-c", check])
    all_cpu, all_wall, loaded_all = run(["-c", every])
    return {"help": (help_cpu, help_wall), "import": (imp_cpu, imp_wall, loaded.strip()),
            "all": (all_cpu, all_wall, loaded_all.strip())}


# ------------------------------------------------------------------------------ (d)
def bench_bounded() -> dict[str, tuple[float, float]]:
    from symgdp.symbolic.budget import run_bounded

    def forks() -> None:
        for _ in range(FORKS):
            run_bounded(int, 1)

    cpu, wall = cpu_of(forks)
    x, d, s = sympy.symbols("x d s", positive=True)
    first = cpu_of(lambda: run_bounded(sympy.solve, x - sympy.sqrt(sympy.log(1 / d)), d))
    second = cpu_of(lambda: run_bounded(sympy.solve, s - sympy.sqrt(2 * sympy.log(3 / d)), d))
    return {"fork": (cpu / FORKS, wall / FORKS), "solve 1st": first, "solve 2nd": second}


# ------------------------------------------------------------------------------ (e)
EXAMPLE_TIMEOUT = 300  # seconds; a script still running then is recorded as such


def bench_examples(default_too: bool) -> list[tuple[str, dict[str, tuple[float, float, str]]]]:
    """Per script: settings ("--small", "default") -> (CPU s, wall s, exit status)."""
    rows = []
    scripts = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))
    modes = {"--small": ["--small"], "default": []} if default_too else {"--small": ["--small"]}
    with tempfile.TemporaryDirectory() as out:
        for script in scripts:
            runs = {}
            for label, mode in modes.items():
                code: dict[str, str] = {}

                def go(script: Any = script, mode: list[str] = mode,
                       code: dict[str, str] = code) -> None:
                    try:
                        proc = subprocess.run([sys.executable, str(script), "--out", out,
                                               *mode], capture_output=True, text=True,
                                              env=env(), cwd=ROOT, timeout=EXAMPLE_TIMEOUT)
                        code["rc"] = str(proc.returncode)
                    except subprocess.TimeoutExpired:
                        code["rc"] = f"killed after {EXAMPLE_TIMEOUT} s"
                cpu, wall = cpu_of(go)
                runs[label] = (cpu, wall, code["rc"])
                print(f"  {script.name} {label}: {runs[label]}", file=sys.stderr, flush=True)
            rows.append((script.name, runs))
    return rows


# ------------------------------------------------------------------------------ report
def verdict(ok: bool) -> str:
    return "meets target" if ok else "**misses target**"


def render(mach: dict[str, str], ld: list, sc: list, st: dict, bd: dict, ex: list) -> str:
    out = [START, "", "## Everyday paths (`bench_everyday.py`)", "",
           "CPU time (user + system, of this process and of the subprocesses and forks it "
           "waited for); wall time is given where the target is one, but **the machine was "
           "shared with other jobs during the run** (see the load below), so wall times "
           "are inflated by waiting for a core; CPU times much less so.", "",
           "| machine | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in mach.items()]
    base = {"2 exp(-eps^2), refined": "2 exp(-eps^2)",
            "tutorial SGD profile, refined": "tutorial SGD profile"}
    cpu = {name: c for name, c, _ in ld}
    out += ["", f"### (a) `Profile.log_delta` on {N_POINTS:,} points, ε ∈ [0, 100]", "",
            "| profile | CPU s | wall s | refined / unrefined | |", "|---|---|---|---|---|"]
    for name, c, w in ld:
        if name in base:
            r = c / cpu[base[name]]
            out.append(f"| {name} | {c:.3f} | {w:.3f} | {r:.2f}× | {verdict(r <= 3)} |")
        else:
            out.append(f"| {name} | {c:.3f} | {w:.3f} | | |")
    out += ["", "### (b) one scalar call", "", "| call | CPU µs per call | |",
            "|---|---|---|"]
    out += [f"| `{name}` | {t * 1e6:.1f} | {verdict(t <= 20e-6)} |" for name, t in sc]
    h, i, a = st["help"], st["import"], st["all"]
    out += ["", "### (c) start-up (fresh interpreter)", "",
            "| command | CPU s | wall s | heavy modules loaded | |", "|---|---|---|---|---|",
            f"| `python -m symgdp --help` | {h[0]:.2f} | {h[1]:.2f} | | "
            f"{verdict(h[0] < 0.3)} |",
            f"| `import symgdp` | {i[0]:.2f} | {i[1]:.2f} | {i[2] or 'none'} | |",
            f"| `import symgdp` + every public name | {a[0]:.2f} | {a[1]:.2f} | "
            f"{a[2] or 'none'} | "
            f"{verdict('scipy.stats' not in a[2] and 'matplotlib' not in a[2])} |"]
    out += ["", "### (d) time-bounded SymPy calls (`run_bounded`)", "",
            "| call | CPU ms | wall ms |", "|---|---|---|",
            f"| fork round trip (`run_bounded(int, 1)`, mean of {FORKS}) | "
            f"{bd['fork'][0] * 1e3:.1f} | {bd['fork'][1] * 1e3:.1f} |",
            f"| `solve` in a child, first of the session | {bd['solve 1st'][0] * 1e3:.0f} | "
            f"{bd['solve 1st'][1] * 1e3:.0f} |",
            f"| `solve` in a child, second (inherits SymPy's lazy imports) | "
            f"{bd['solve 2nd'][0] * 1e3:.0f} | {bd['solve 2nd'][1] * 1e3:.0f} |"]
    out += ["", "### (e) examples", "",
            "Each script run as `python examples/NAME.py [--small]`; targets: < 10 s with "
            "`--small`, < 30 s at default settings.  CPU counts the script and the "
            "processes it waited for (pool workers; a Dask cluster's workers are not "
            "counted).", "",
            "| example | default CPU s | default wall s | --small CPU s | --small wall s | |",
            "|---|---|---|---|---|---|"]

    def cells(run: tuple[float, float, str] | None) -> tuple[str, str]:
        if run is None:
            return "not run", ""
        cpu_s, wall_s, rc = run
        return f"{cpu_s:.1f}", f"{wall_s:.1f}" + ("" if rc == "0" else f" (exit {rc})")

    for name, runs in ex:
        d, sm = runs.get("default"), runs.get("--small")
        misses = [f"{label} over {limit} s" for label, run, limit in
                  (("default", d, 30), ("--small", sm, 10))
                  if run is not None and (run[2] != "0" or run[1] >= limit)]
        note = "meets targets" if not misses else "**" + "; ".join(misses) + " (wall)**"
        out.append(f"| `{name}` | {' | '.join(cells(d))} | {' | '.join(cells(sm))} | {note} |")
    out += ["", END]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="run the examples with --small only (not at default settings)")
    ap.add_argument("--no-write", action="store_true", help="print only, do not edit docs/")
    args = ap.parse_args(argv)
    mach = machine({"NumPy": np.__version__, "SciPy": scipy.__version__,
                    "SymPy": sympy.__version__})
    print("(c) start-up", file=sys.stderr, flush=True)
    st = bench_startup()
    print("(d) bounded calls", file=sys.stderr, flush=True)
    bd = bench_bounded()  # first: its "first solve" must be the session's first
    print("(a) log_delta", file=sys.stderr, flush=True)
    ld = bench_log_delta()
    print("(b) scalar calls", file=sys.stderr, flush=True)
    sc = bench_scalar()
    print("(e) examples", file=sys.stderr, flush=True)
    ex = bench_examples(not args.quick)
    section = render(mach, ld, sc, st, bd, ex)
    print(section)
    if not args.no_write:
        write_section(section, START, END)
        print(f"\nwritten to {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
