r"""Benchmark of random allocation with amplification (``symgdp.dpsgd(sampling=
"random_allocation")``, :mod:`symgdp.training.allocation_upper`) on the published DP-SGD
settings, read as random allocation: each example in exactly one of the
:math:`t = \lceil N/B\rceil` steps of each epoch.

For each setting: the certified bracket and :math:`\varepsilon(\delta)` of random
allocation (add/remove), its time, and beside it, in the same process, the certified
Poisson result for :math:`q = 1/t` over the same steps (``symgdp.dpsgd``, what most
accountants assume: **not a bound** for random allocation, shown for comparison), the bound
without amplification (:math:`\sqrt{E}/\sigma`) and the CLT approximation
:math:`\sqrt{E(e^{1/\sigma^2} - 1)/t}` (not a bound).  dp_accounting 0.6.0 has no event for
random allocation, so there is no peer time to compare with.

Writes its section of ``docs/benchmarks.md`` (between ``<!-- bench_allocation:start -->``
and ``<!-- bench_allocation:end -->``).

Usage::

    python benchmarks/bench_allocation.py            # every row (a minute or two)
    python benchmarks/bench_allocation.py --no-write # print only
"""

from __future__ import annotations

import argparse
import math
import resource
import time
from typing import Any

from _common import machine, write_section  # benchmarks/ is first on sys.path

START, END = "<!-- bench_allocation:start -->", "<!-- bench_allocation:end -->"

#: name -> (sigma, steps per epoch t = ceil(N / B), epochs E, delta)
SETTINGS: dict[str, tuple[float, int, int, float]] = {
    "TF Privacy MNIST tutorial, σ 1.3, 15 epochs": (1.3, math.ceil(60000 / 256), 15, 1e-5),
    "TF Privacy MNIST tutorial, σ 1.1, 60 epochs": (1.1, math.ceil(60000 / 256), 60, 1e-5),
    "TF Privacy MNIST tutorial, σ 0.7, 45 epochs": (0.7, math.ceil(60000 / 256), 45, 1e-5),
    "Bu et al. 2020 MNIST, σ 1.06, 20 epochs": (1.06, math.ceil(60000 / 256), 20, 1e-5),
    "De et al. 2022 CIFAR-10, B 4096, σ 10, 875 steps": (10.0, math.ceil(50000 / 4096),
                                                          math.ceil(875 / 13), 1e-5),
    "De et al. 2022 ImageNet, B 16384, σ 2.5, 71589 steps": (
        2.5, math.ceil(1281167 / 16384), math.ceil(71589 / 79), 8e-7),
}


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def run() -> tuple[list[dict[str, Any]], dict[str, str]]:
    from importlib.metadata import version

    import numpy

    import symgdp

    info = machine({"numpy": numpy.__version__, "dp_accounting": version("dp-accounting")})
    rows = []
    for name, (sigma, t, e, delta) in SETTINGS.items():
        t0 = time.perf_counter()
        r = symgdp.dpsgd(sampling="random_allocation", sigma=sigma, steps=t, epochs=e,
                         delta=delta)
        secs = time.perf_counter() - t0
        t0 = time.perf_counter()
        p = symgdp.dpsgd(1.0 / t, sigma, t * e, delta=delta, rdp_only=False)
        psecs = time.perf_counter() - t0
        rows.append(dict(name=name, sigma=sigma, t=t, e=e, delta=delta, r=r, secs=secs,
                         p=p, psecs=psecs, peak=_peak_gb(),
                         clt=math.sqrt(e * math.expm1(1.0 / sigma**2) / t)))
        print(f"{name}: mu in [{r.mu_floor:.5f}, {r.mu_upper:.5f}], eps <= "
              f"{r.eps_certified:.4f}, {secs:.1f} s; Poisson [{p.mu_floor:.5f}, "
              f"{p.mu_upper:.5f}] eps {p.eps_certified:.4f}", flush=True)
    return rows, info


def report(rows: list[dict[str, Any]], info: dict[str, str]) -> str:
    from symgdp.numerics.decimals import format_bracket, format_upper

    out = [START, "## Random allocation, amplified (`bench_allocation.py`)", "",
           "| machine | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in info.items()]
    out += ["", "Each published setting read as random allocation (each example in exactly "
            "one of the t = ⌈N/B⌉ steps of each epoch, E epochs), add/remove, failure "
            "probability 1e-10: `symgdp.dpsgd(sampling=\"random_allocation\", sigma=σ, "
            "steps=t, epochs=E)`, certified (both ends from the dominating pair of one "
            "epoch, which is attained).  Beside it, in the same "
            "process, the certified Poisson result for q = 1/t over the same tE steps "
            "(**not a bound** for random allocation), the bound without amplification "
            "√E/σ and the CLT approximation √(E(e^{1/σ²} − 1)/t) (not a bound).  "
            "dp_accounting 0.6.0 has no random-allocation event (no peer time).", "",
            "| setting | σ | t | E | δ | ours: μ ∈ | ours: ε ≤ | ours (s) | Poisson q = 1/t: "
            "μ ∈ | Poisson ε ≤ | Poisson (s) | without amplification μ | CLT μ | peak RSS "
            "(GB) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for w in rows:
        r, p = w["r"], w["p"]
        lo, up = format_bracket(r.mu_floor, r.mu_upper)
        plo, pup = format_bracket(p.mu_floor, p.mu_upper)
        out.append(f"| {w['name']} | {w['sigma']:g} | {w['t']} | {w['e']} | {w['delta']:g} "
                   f"| [{lo}, {up}] | {format_upper(r.eps_certified, 4)} | {w['secs']:.1f} "
                   f"| [{plo}, {pup}] | {format_upper(p.eps_certified, 4)} | "
                   f"{w['psecs']:.1f} | {math.sqrt(w['e']) / w['sigma']:.4f} | "
                   f"{w['clt']:.4f} | {w['peak']:.2f} |")
    out.append(END)
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    rows, info = run()
    text = report(rows, info)
    print(text)
    if not args.no_write:
        write_section(text, START, END)


if __name__ == "__main__":
    main()
