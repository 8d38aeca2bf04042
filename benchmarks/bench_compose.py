r"""Benchmark of composition through privacy loss distributions and of DP-SGD's GDP bracket.

One run measures, side by side with dp_accounting and the CLT:

(a) DP-SGD (Poisson rate q, noise multiplier σ, T steps) at failure probability 1e-10:
    the guaranteed bracket [μ_floor, μ_upper] of :func:`symgdp.dpsgd` and its time (cold:
    one step in ball arithmetic, the certified integer composition, the Rényi curve, the
    measurement and the proven floor),
    the Rényi-only bound, the CLT approximation, and dp_accounting's optimistic-PLD
    floor (float64, not proven) for the same head; ε at δ = 1e-5 from each route; for
    the base case
    q = 0.01, σ = 1, T = 1000 and one parameter varied at a time
    (q ∈ {0.001, 0.1}, σ ∈ {0.8, 2}, T ∈ {100, 10⁴});
(b) μ against the failure probability (1e-6 … 1e-30) for the base case;
(c) 50-fold Laplace (ε₀ = 0.2): ε from our PLD profile against dp_accounting's pessimistic
    PLD at the same discretisation;
(d) ``composition.table(0.2, 50, ...)`` with every row, cold and warm;

and writes a markdown report with machine, load and date into its own section of
``docs/benchmarks.md`` (between ``<!-- bench_compose:start -->`` and
``<!-- bench_compose:end -->``).

Usage::

    python benchmarks/bench_compose.py           # full run
    python benchmarks/bench_compose.py --quick   # smoke run (base case only)
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib.metadata import version
from typing import Any

import numpy as np
from _common import machine, write_section  # benchmarks/ is first on sys.path

START, END = "<!-- bench_compose:start -->", "<!-- bench_compose:end -->"
BASE = (0.01, 1.0, 1000)
VARIED = [(0.001, 1.0, 1000), (0.1, 1.0, 1000), (0.01, 0.8, 1000), (0.01, 2.0, 1000),
          (0.01, 1.0, 100), (0.01, 1.0, 10_000)]
FAILURES = [1e-6, 1e-8, 1e-10, 1e-15, 1e-20, 1e-25, 1e-30]


def optimistic(q: float, sigma: float, steps: int) -> Any:
    from dp_accounting.pld import privacy_loss_distribution as P

    one = P.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=False,
                                    use_connect_dots=False)
    return one.self_compose(steps)


def mu_floor(opt: Any, eps_h: float) -> float:
    """Largest GDPT of the optimistic PLD on [0, eps_h] (values above its float floor)."""
    from symgdp.gaussian import mu_gdp

    xs = np.linspace(0.0, eps_h, 400)
    d = np.asarray(opt.get_delta_for_epsilon(xs))
    ok = d > 1e-12
    return float(np.max(mu_gdp(xs[ok], d[ok]))) if np.any(ok) else float("nan")


def dpsgd_rows(cases: list[tuple[float, float, int]]) -> tuple[list[str], dict]:
    from dp_accounting.pld import privacy_loss_distribution as P

    from symgdp import dpsgd
    from symgdp.accounting.sgd import one_step_pmfs

    rows = ["| q | σ | T | μ_floor (proven) | μ_upper | headline width | ε_h | time (s) | "
            "surrogate lower | μ floor, dp_accounting optimistic (not proven) | "
            "μ Rényi only | μ_CLT | ε(1e-5): ours, certified | ours, from μ_upper | "
            "dp_accounting pessimistic | optimistic | Rényi | CLT |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {}
    for q, s, t in cases:
        one_step_pmfs.cache_clear()  # cold: the one step is part of the time
        r = dpsgd(q, s, t, failure_prob=1e-10, tol=1e-4)
        opt = optimistic(q, s, t)
        pess = P.from_gaussian_mechanism(s, sampling_prob=q, use_connect_dots=True
                                         ).self_compose(t)
        floor = mu_floor(opt, r.eps_h)
        rows.append(
            f"| {q:g} | {s:g} | {t} | {r.mu_floor:.4f} | {r.mu_upper:.4f} | "
            f"{r.mu_upper - r.mu_floor:.1e} | {r.eps_h:.3f} | {r.seconds:.2f} | "
            f"{r.surrogate_lower:.4f} | {floor:.4f} | {r.mu_rdp:.4f} | {r.mu_clt:.4f} | "
            f"{r.eps_certified:.3f} | {r.eps_at(1e-5):.3f} | "
            f"{float(pess.get_epsilon_for_delta(1e-5)):.3f} | "
            f"{float(opt.get_epsilon_for_delta(1e-5)):.3f} | "
            f"{r.eps_rdp:.3f} | {r.eps_clt:.3f} |")
        print(rows[-1], flush=True)
        base[(q, s, t)] = r
    return rows, base


def failure_rows(r: Any) -> list[str]:
    from symgdp.pld import head_measure

    rows = ["| failure probability | ε_h | μ_lower | μ_upper | μ_CLT | CLT below μ_lower? |",
            "|---|---|---|---|---|---|"]
    for fp in FAILURES:
        m, got = head_measure(r.profile, fp, tol=1e-4)
        rows.append(f"| {fp:g} | {m.eps_h:.3f} | {m.lower:.4f} | {m.upper:.4f} | "
                    f"{r.mu_clt:.4f} | {'yes' if r.mu_clt < m.lower else 'no'} |")
        print(rows[-1], flush=True)
    return rows


def laplace_rows() -> list[str]:
    from symgdp import compose, mechanisms

    t0 = time.perf_counter()
    p = compose(mechanisms.laplace(0.2), times=50, certify=False)  # dp_accounting's route
    sec = time.perf_counter() - t0
    rows = ["| δ | ε, ours (PLD profile) | ε, dp_accounting | difference |",
            "|---|---|---|---|"]
    for d in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5):
        a, b = p.eps_for_delta(d), p.source.pld.get_epsilon_for_delta(d)
        rows.append(f"| {d:g} | {a:.6f} | {b:.6f} | {a - b:.1e} |")
    rows.append(f"\n(composition and conversion: {sec:.2f} s, discretisation 1e-4)")
    return rows


def table_rows() -> list[str]:
    from symgdp import composition

    t0 = time.perf_counter()
    tab = composition.table(0.2, 50, [1e-1, 1e-2, 1e-3, 1e-4])
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    composition.table(0.2, 50, [1e-1, 1e-2, 1e-3, 1e-4])
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    composition.table(0.25, 50, [1e-1, 1e-2, 1e-3, 1e-4])
    new = time.perf_counter() - t0
    # the rows of the original comparison (GDP routes against the classic bounds and the
    # optimal composition), without the Rényi, CLT and PLD rows
    base = ("basic", "advanced", "gdp", "gdp_laplace", "optimal", "gdp_summary")
    times = []
    for e0 in (0.2, 0.3):
        t0 = time.perf_counter()
        composition.table(e0, 50, [1e-1, 1e-2, 1e-3, 1e-4], rows=base)
        times.append(time.perf_counter() - t0)
    return [tab.to_markdown(), "",
            f"`composition.table(0.2, 50, [1e-1, 1e-2, 1e-3, 1e-4])`, all {len(tab)} rows: "
            f"{cold:.2f} s on its first call in this run (after the sections above, which "
            f"import dp_accounting), {warm:.2f} s again, {new:.2f} s for "
            "new numbers (ε₀ = 0.25; two PLD compositions by FFT and the measurement of "
            "the Laplace PLD's GDP summary are most of it).  With the rows of the "
            f"original comparison only (`rows={base}`): {times[0] * 1e3:.0f} ms "
            f"(ε₀ = 0.2), {times[1] * 1e3:.0f} ms (ε₀ = 0.3, new numbers); target < 100 ms."]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    mach = machine({"dp_accounting": version("dp-accounting"), "numpy": np.__version__})
    t0 = time.perf_counter()
    cases = [BASE] if args.quick else [BASE, *VARIED]
    a, base = dpsgd_rows(cases)
    b = [] if args.quick else failure_rows(base[BASE])
    c = laplace_rows()
    d = table_rows()
    total = time.perf_counter() - t0
    lines = [START, "## Composition through PLDs and DP-SGD (`bench_compose.py`)", "",
             "| machine | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in mach.items()]
    lines += ["", f"Total run time {total:.0f} s. The machine is shared by several jobs: "
              "times are wall-clock under the load shown above and vary between runs.", "",
              "### DP-SGD at failure probability 1e-10", "",
              "Our bracket is guaranteed (see the DP-SGD page: one step in ball arithmetic, "
              "the composition in exact integers, no FFT); *μ_floor (proven)* is our "
              "mechanism-level lower bound (every μ for which DP-SGD is μ-GDP on [0, ε_h] "
              "is at least this), so the smallest valid μ lies in [μ_floor, μ_upper] (the "
              "headline); the surrogate lower end bounds only what the upper profile "
              "proves; the "
              "dp_accounting floor is the largest GDPT of its optimistic PLD on the same "
              "head (float64 FFT, not proven); μ_CLT is an approximation, not a bound.  "
              "The bracket time is cold (the one-step PMF is rebuilt).  For comparison, "
              "gdpnum 0.1.2 publishes μ = 0.4394 with a \"regret\" of 0.0064 for the base "
              "case (a best fit with additive slack on the trade-off curve, not a μ-GDP "
              "guarantee; quoted, not run here).", ""] + a
    if b:
        lines += ["", "### μ against the failure probability (q = 0.01, σ = 1, T = 1000)", ""]
        lines += b
    lines += ["", "Our floor shifts the certified composition by a proven bound on the "
              "connect-the-dots displacement (about √T·Δ in ε); dp_accounting's optimistic "
              "PLD rounds every loss down (about TΔ/2).  μ Rényi only = inf means the Rényi "
              "bound alone is vacuous (δ ≥ 1) near ε = 0."]
    lines += ["", "### 50-fold Laplace (ε₀ = 0.2) through PLDs", ""] + c
    lines += ["", "### Table 1, every row", ""] + d + [END]
    if not args.quick:
        write_section("\n".join(lines), START, END)
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
