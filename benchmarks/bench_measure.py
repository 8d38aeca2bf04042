r"""Benchmark of guaranteed measurement: first-order search, zeroth-order B&B, staircase.

For each profile and :math:`\varepsilon_h = 100`, side by side in one run:

* **old** -- the zeroth-order branch-and-bound (``method="branch-and-bound"``,
  ``certify=False``) at tol 1e-6, with a budget of ``--old-budget`` evaluations (a flat
  GDPT then stops at once with its predicted need, reported as "fails");
* **new** -- the default search (``method="auto"``: the first-order search, or the exact
  recognition of the Gaussian profile) in float mode (``certify=False``) and certified
  (``certify=True``) at tol 1e-6, and certified at tol 1e-9 where the 1e-6 run took less
  than ``--cap-1e9`` seconds;
* **staircase** -- the published algorithm needs exactly
  :math:`n + 2 = \lceil\sqrt{8\pi}\,\varepsilon_h/\mathrm{tol}\rceil + 2` evaluations
  (5·10⁸ at tol 1e-6).  That does not finish within a sane cap on a shared machine, so it
  is run for real on one profile at tol 1e-3 (n ≈ 5·10⁵) to give its evaluation rate, and
  the tol-1e-6 count is the exact formula.

Each profile is refined once beforehand and measured with ``refine=False`` and
``identify=False``: the times are those of the measurement alone (one process, wall clock,
one run each: the machine is shared, see the load in the table).  Every bracket of the new
search is checked against the old one where both finished (they must intersect).

The results go into the section of ``docs/benchmarks.md`` between
``<!-- bench_measure:start -->`` and ``<!-- bench_measure:end -->``.

Usage::

    python benchmarks/bench_measure.py            # full run
    python benchmarks/bench_measure.py --quick    # a few profiles only
    python benchmarks/bench_measure.py --only RR  # some rows, printed only
    python benchmarks/bench_measure.py --whole-line [--only X]  # the whole-line section only

*Whole line*: for each profile, whether the certified measurement (tol 1e-6) proved
:math:`\delta \le \delta_{upper}` on the whole line (``covers_tail``; ``0`` when the
profile is exactly 0 beyond ε_h, ``proof`` when by the tail certificate, ``tail max`` when
the tail is the maximum of G) and the extra time of that proof: the same certified
measurement with the whole-line hook switched off is timed beside it (both after one
warm-up run, so compiles are not counted; best of three each).  Written to its own section
(``<!-- bench_measure_wholeline:start -->``) unless ``--no-write`` or ``--only``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any

import flint
import mpmath
import numpy as np
import scipy
import sympy
from _common import machine, write_section  # benchmarks/ is first on sys.path

from symgdp import Profile, composition, eps, mechanisms
from symgdp.errors import SymgdpError
from symgdp.measurement.firstorder import FirstOrder
from symgdp.measurement.measure import measure

START, END = "<!-- bench_measure:start -->", "<!-- bench_measure:end -->"
EPS_H = 100.0
TOL = 1e-6
SQRT_8PI = math.sqrt(8.0 * math.pi)


def _gauss_erf(mu: float) -> Profile:
    m = sympy.Symbol("m", positive=True)

    def phi(t: sympy.Expr) -> sympy.Expr:
        return (1 + sympy.erf(t / sympy.sqrt(2))) / 2

    return Profile(phi(-eps / m + m / 2) - sympy.exp(eps) * phi(-eps / m - m / 2), {"m": mu})


def _gauss_literal(mu: float) -> Profile:
    text = (f"erfc((eps/{mu} - {mu / 2})/sqrt(2))/2 "
            f"- exp(eps)*erfc((eps/{mu} + {mu / 2})/sqrt(2))/2")
    return Profile.parse(text)


def profiles(quick: bool) -> list[tuple[str, Any]]:
    """(label, profile to measure with refine=False); refinement done here, untimed."""
    items: list[tuple[str, Any]] = []
    for mu in ((1.5,) if quick else (0.3, 1.0, 1.5, 4.0)):
        items += [(f"Gaussian μ = {mu:g}, mechanism (Φ form)", mechanisms.gaussian(mu)),
                  (f"Gaussian μ = {mu:g}, erf form, μ a parameter", _gauss_erf(mu)),
                  (f"Gaussian μ = {mu:g}, erfc form, float literals", _gauss_literal(mu))]
    if quick:
        return items + [("Laplace ε₀ = 1", mechanisms.laplace(1.0))]
    items += [(f"Laplace ε₀ = {e:g}", mechanisms.laplace(e)) for e in (0.2, 1.0, 2.0)]
    items += [("pure DP ε₀ = 1", mechanisms.pure_dp(1.0)),
              ("SGD family A = B = σ = 1, refined", mechanisms.sgd_family(1, 1, 1).refine()),
              ("ICEA m = 100, n = 1000, refined", mechanisms.shuffle_sum(100, 1000).refine())]
    items += [(f"{k}-fold RR, ε₀ = 0.2", composition.optimal_pure_dp(0.2, k))
              for k in (10, 50, 200, 1000)]
    items += [(f"subsampled Laplace ε₀ = 1, γ = {g:g}", mechanisms.laplace(1.0).subsample(g))
              for g in (0.2, 0.5)]
    items += [(f"subsampled Gaussian μ = 1, γ = {g:g}",
               mechanisms.gaussian(1.0).subsample(g)) for g in (0.2, 0.5)]
    return items


def run(p: Any, **kw: Any) -> tuple[Any, float, str]:
    t = time.perf_counter()
    try:
        m = measure(p, EPS_H, refine=False, identify=False, **kw)
        return m, time.perf_counter() - t, ""
    except SymgdpError as exc:
        return None, time.perf_counter() - t, f"{type(exc).__name__}"
    except (OverflowError, ValueError) as exc:  # outside the measurement's own contract
        return None, time.perf_counter() - t, f"{type(exc).__name__} (not a SymgdpError)"


def bench_one(p: Any, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {}
    # the first measurement of the profile in this process: it pays the one-time
    # preparation of this expression (float evaluator, symbolic derivatives, series form,
    # compiled ball functions); the second one is the measurement proper
    row["float"] = run(p, tol=TOL, certify=False)
    row["float2"] = run(p, tol=TOL, certify=False)
    row["old"] = run(p, tol=TOL, method="branch-and-bound", certify=False,
                     max_evaluations=args.old_budget)
    row["cert"] = run(p, tol=TOL, certify=True)
    cm, ct, _ = row["cert"]
    row["cert9"] = (run(p, tol=1e-9, certify=True) if cm is not None and ct < args.cap_1e9
                    else (None, math.nan, "skipped"))
    # every two finished brackets must intersect (each contains the supremum)
    done = [r[0] for r in (row["old"], row["float"], row["float2"], row["cert"],
                           row["cert9"]) if r[0] is not None]
    row["agree"] = (not done) or max(m.lower for m in done) <= min(m.upper for m in done)
    return row


def staircase_rate() -> tuple[float, int, float]:
    p = mechanisms.sgd_family(1, 1, 1).refine()
    t = time.perf_counter()
    m = measure(p, EPS_H, 1e-3, refine=False, identify=False, method="staircase",
                certify=False)
    dt = time.perf_counter() - t
    return m.evaluations / dt, m.evaluations, dt


#: (A, σ) points of the refined SGD family timed by shared_compiles
SGD_POINTS = ((1.0, 2.0), (1.3, 2.5), (0.7, 1.5), (2.0, 3.1), (1.1, 4.0))


def shared_compiles() -> list[tuple[str, float, float]]:
    """Per point of a small (A, σ) grid of the refined SGD family (refined beforehand,
    untimed): the build of the first-order machinery -- symbolic derivative and ball
    functions, compiled at the first point and shared by the others, whose refined
    profiles differ only in their decimal constants -- and a float measurement."""
    out = []
    for a, s in SGD_POINTS:
        p = mechanisms.sgd_family(a, 1, s).refine()
        t = time.perf_counter()
        FirstOrder(p)
        build = time.perf_counter() - t
        t = time.perf_counter()
        measure(p, EPS_H, TOL, refine=False, identify=False, certify=False)
        out.append((f"A = {a:g}, σ = {s:g}", build, time.perf_counter() - t))
    return out


def _cell(r: tuple[Any, float, str], evals: bool = True) -> str:
    m, t, err = r
    if m is None:
        return f"{err or 'fails'} | {t:.2f}" if evals else f"{err} ({t:.2f} s)"
    return f"{m.evaluations:,} | {t:.3f}"


def render(results: list[tuple[str, dict[str, Any]]], info: dict[str, str],
           rate: tuple[float, int, float], args: argparse.Namespace,
           shared: list[tuple[str, float, float]]) -> str:
    n_stair = math.ceil(SQRT_8PI * EPS_H / TOL) + 2
    out = [START, "", "## Measurement (`benchmarks/bench_measure.py`)", ""]
    out += [f"Run: `python benchmarks/bench_measure.py{' --quick' if args.quick else ''}`"
            f" ({'quick run' if args.quick else 'full run'}).", ""]
    out += ["| machine | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in info.items()]
    out += ["", "The machine is shared by several developers running tests at the same "
            "time (see the load above): wall times are noisy and pessimistic, one run "
            "each.  Evaluation counts are exact.  *First call*: the first measurement of "
            "the profile in the process, which pays the one-time preparation of its "
            "expression (float evaluator, symbolic derivatives and series form in a bounded "
            "child process, compiled ball functions), cached for every later measurement "
            "and shared by profiles that differ only in numbers (e.g. the Laplace and "
            "subsampled Laplace rows after the first of each; the refined SGD row reuses "
            "the compile of the shared-compile runs at the end, which run first).  "
            "*Again*: the same measurement repeated, i.e. the measurement proper, as in a "
            "sweep, a calibration or any second profile of the same form.", ""]
    out += [f"ε_h = {EPS_H:g}, tol = {TOL:g}. *Old*: the zeroth-order branch-and-bound "
            f"(float, budget {args.old_budget:,} evaluations; a flat GDPT stops at once with "
            "ConvergenceError). *New*: the default search (first-order; or the exact "
            "recognition of δ_μ, and for a Gaussian whose μ is written in decimals, which "
            "is δ_μ only up to the rounding of its literals, the perturbation bound: 0 "
            "evaluations). Evaluations are the profile values "
            "that steer the search: float64 values, or in the certified columns the "
            "midpoints of the point balls the proofs use anyway (the new search also "
            "evaluates the profile and its derivative on balls: the 'ball evals' column "
            "counts the profile's point enclosures). *Staircase*: exactly n + 2 = "
            f"{n_stair:,} evaluations at tol "
            f"1e-6; at the rate measured on a real staircase run ({rate[1]:,} steps at tol "
            f"1e-3 in {rate[2]:.1f} s, {rate[0]:,.0f} evaluations/s) that is about "
            f"{n_stair / rate[0]:,.0f} s per profile, so it is not run at 1e-6.", ""]
    out += ["| profile | sup G ∈ (new, certified) | old evals | old s | new float evals | "
            "new float s, first call | new float s, again | new cert. evals | new cert. s | "
            "ball evals | cert. 1e-9 s | staircase / new evals |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, r in results:
        cm = r["cert"][0] or r["float"][0]
        br = f"[{cm.lower:.9f}, {cm.upper:.9f}]" if cm is not None else "—"
        c9 = r["cert9"]
        c9s = f"{c9[1]:.2f}" if c9[0] is not None else c9[2]
        ev = cm.evaluations if cm is not None else 0
        ratio = f"{n_stair / ev:,.0f}×" if ev else "∞ (0 evals)"
        ball = f"{r['cert'][0].certify_evaluations:,}" if r["cert"][0] is not None else "—"
        again = f"{r['float2'][1]:.3f}" if r["float2"][0] is not None else r["float2"][2]
        out.append(f"| {label} | {br} | {_cell(r['old'])} | {_cell(r['float'])} | {again} | "
                   f"{_cell(r['cert'])} | {ball} | {c9s} | {ratio} |"
                   + ("" if r["agree"] else " **DISAGREE** |"))
    out += ["", "Targets: no ConvergenceError at tol 1e-6, ε_h = 100; Gaussian tol 1e-6 "
            "< 100 ms and ≤ 5,000 evaluations; every profile float 1e-6 < 100 ms (the "
            "measurement proper: 'again'), "
            "certified 1e-6 < 300 ms, certified 1e-9 < 2 s; ≥ 10⁵× fewer evaluations "
            "than the staircase at 1e-6.", ""]
    out += ["Compiles shared between parameter points (run first, in a fresh process): "
            "the refined SGD family at five (A, σ) points, whose refined profiles differ "
            "only in their 40-digit constants.  *Build*: the first-order machinery "
            "(symbolic derivative in a bounded child process and ball functions; compiled "
            "at the first point, shared by the others); *float measure*: "
            f"`measure(tol={TOL:g}, certify=False)` of the refined profile, including its "
            "validation and float evaluator.", "",
            "| point | build s | float measure s |", "|---|---|---|"]
    out += [f"| {label} | {b:.3f} | {m:.3f} |" for label, b, m in shared]
    out += ["", END]
    return "\n".join(out)


def whole_line_rows(quick: bool, only: str) -> str:
    """The whole-line column: proved or not, and the extra time of the proof."""
    import importlib

    measure_mod = importlib.import_module("symgdp.measurement.measure")

    hook = measure_mod._whole_line
    out = ["| profile | whole line | extra ms | certified ms without | extra % |",
           "|---|---|---|---|---|"]
    for label, p in profiles(quick):
        if only and only not in label:
            continue
        run(p, tol=TOL, certify=True)  # warm-up: compiles and caches
        runs = [run(p, tol=TOL, certify=True) for _ in range(REPEAT)]
        m, _, err = runs[0]
        t_with = min(r[1] for r in runs)  # best of REPEAT: the machine is shared
        measure_mod._whole_line = lambda m, *a, **k: m
        try:
            t_without = min(run(p, tol=TOL, certify=True)[1] for _ in range(REPEAT))
        finally:
            measure_mod._whole_line = hook
        if m is None:
            out.append(f"| {label} | {err} | — | {1e3 * t_without:.2f} | — |")
            continue
        how = ("no" if not m.covers_tail else "tail max" if "maximum" in m.tail_proof
               else "0" if not m.tail_proof or "is 0" in m.tail_proof else "proof")
        extra = t_with - t_without
        out.append(f"| {label} | {how} | {1e3 * extra:.2f} | {1e3 * t_without:.2f} | "
                   f"{100 * extra / t_without:.0f}% |")
        print(out[-1], flush=True)
    return "\n".join(out)


REPEAT = 3  # runs with and without the whole-line step; the best of each is kept
WL_START, WL_END = "<!-- bench_measure_wholeline:start -->", "<!-- bench_measure_wholeline:end -->"


def render_whole_line(table: str, info: dict[str, str], total: float, quick: bool) -> str:
    """The whole-line section of ``docs/benchmarks.md``."""
    load_end = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    out = [WL_START, "", "## Whole line (`benchmarks/bench_measure.py --whole-line`)", "",
           "| machine | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in info.items()]
    out += [f"| load (1/5/15 min) at end | {load_end} |", ""]
    out += [f"Run: `python benchmarks/bench_measure.py --whole-line{' --quick' if quick else ''}`"
            f" ({total:.0f} s in all).  For each profile of the measurement table, the "
            f"certified measurement at tol {TOL:g}, ε_h = {EPS_H:g}: whether it proved "
            "δ ≤ δ_upper on the whole line [0, ∞) (`covers_tail`): *0* when the profile "
            "is exactly 0 beyond ε_h, *proof* by the tail certificate, *tail max* when the "
            "tail is the maximum of G, *no* when not proved (the bracket then holds on "
            "[0, ε_h] only).  *Extra ms*: the time of the certified measurement minus the "
            "same measurement with the whole-line step switched off (both after one "
            f"warm-up run, so compiles are not counted; best of {REPEAT} each on a shared "
            "machine, so differences of a few ms are noise and can be negative).", "", table, "",
            WL_END]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few profiles only")
    ap.add_argument("--old-budget", type=int, default=300_000,
                    help="evaluation budget of the zeroth-order search (default 300000)")
    ap.add_argument("--cap-1e9", type=float, default=3.0,
                    help="run certified tol 1e-9 only where tol 1e-6 took below this (s)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--only", default="",
                    help="only the profiles whose label contains this text (print only)")
    ap.add_argument("--whole-line", action="store_true",
                    help="only the whole-line column (proved or not, extra time)")
    args = ap.parse_args(argv)
    info = machine({"NumPy": np.__version__, "SciPy": scipy.__version__,
                    "SymPy": sympy.__version__, "mpmath": mpmath.__version__,
                    "python-flint": flint.__version__})
    if args.whole_line:
        t0 = time.perf_counter()
        table = whole_line_rows(args.quick, args.only)
        section = render_whole_line(table, info, time.perf_counter() - t0, args.quick)
        print(section)
        if not (args.no_write or args.only):
            write_section(section, WL_START, WL_END)
        return
    shared = shared_compiles()
    rate = staircase_rate()
    results = []
    for label, p in profiles(args.quick):
        if args.only and args.only not in label:
            continue
        results.append((label, bench_one(p, args)))
        print(f"{label}: done", flush=True)
    section = render(results, info, rate, args, shared)
    print(section)
    if not (args.no_write or args.only):
        write_section(section, START, END)


if __name__ == "__main__":
    main()
