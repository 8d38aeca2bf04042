r"""Benchmark of the noise derivations (``symgdp.additive_noise`` and its routes).

For each density of the catalogue the time of the derivation (wall clock, and CPU time of
this process plus its forked, time-bounded SymPy children: one core's work), then the
certified measurement of the derived profile at bound parameters, and beside it the
hand-written profile of the same mechanism where the catalogue has one
(``symgdp.mechanisms.gaussian`` and ``laplace``): the two brackets must overlap (same
bracket semantics) and agree to the measurement's tolerance.

Target (issue "From a noise density to a certified guarantee"): each catalogue derivation
under 5 s on one core; the derived profiles' measured μ within the usual tolerance of the
hand-written ones.

Writes its section of ``docs/benchmarks.md`` (between ``<!-- bench_noise:start -->`` and
``<!-- bench_noise:end -->``).

Usage::

    python benchmarks/bench_noise.py            # every row
    python benchmarks/bench_noise.py --no-write # print only
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from typing import Any

import sympy
from _common import machine, write_section  # benchmarks/ is first on sys.path

START, END = "<!-- bench_noise:start -->", "<!-- bench_noise:end -->"
TARGET_S = 5.0
TOL = 1e-6


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, _cpu() - c0


def _cases() -> list[tuple[str, Callable[[], Any], dict, Any]]:
    """(name, derivation, values to bind, the hand-written profile or None)."""
    import symgdp
    from symgdp import mechanisms
    from symgdp.noise.staircase import optimal_gamma, staircase

    x = sympy.Symbol("x", real=True)
    y = sympy.Symbol("y", real=True)
    k = sympy.Symbol("k", integer=True)
    j = sympy.Symbol("j", integer=True)
    s = sympy.Symbol("sigma", positive=True)
    b = sympy.Symbol("b", positive=True)
    gauss = sympy.exp(-x**2 / (2 * s**2)) / (sympy.sqrt(2 * sympy.pi) * s)
    lap = sympy.exp(-sympy.Abs(x) / b) / (2 * b)
    logistic = sympy.exp(-x / b) / (b * (1 + sympy.exp(-x / b))**2)
    dlap = sympy.tanh(sympy.Rational(1, 2)) * sympy.exp(-sympy.Abs(k))
    dgauss = sympy.exp(-k**2 / 8) / sympy.Sum(sympy.exp(-j**2 / 8), (j, -sympy.oo, sympy.oo))
    vec = sympy.exp(-(x**2 + y**2) / (2 * s**2)) / (2 * sympy.pi * s**2)
    shape = sympy.Symbol("k", positive=True)
    gg = shape / (2 * s * sympy.gamma(1 / shape)) * sympy.exp(-sympy.Abs(x / s) ** shape)
    return [
        ("Gaussian, sigma symbolic (bound: sigma = 2, Delta = 1)",
         lambda: symgdp.additive_noise(gauss, sensitivity=1, variable=x), {"sigma": 2},
         mechanisms.gaussian(sigma=2.0)),
        ("Laplace, b symbolic (bound: b = 1, Delta = 1)",
         lambda: symgdp.additive_noise(lap, sensitivity=1, variable=x), {"b": 1},
         mechanisms.laplace(b=1.0)),
        ("logistic, b symbolic (bound: b = 1/2, Delta = 1)",
         lambda: symgdp.additive_noise(logistic, sensitivity=1, variable=x),
         {"b": sympy.Rational(1, 2)}, None),
        ("discrete Laplace, t = 1 (Delta = 1)",
         lambda: symgdp.additive_noise(dlap, sensitivity=1, variable=k, support="integers"),
         {}, None),
        ("discrete Gaussian, sigma = 2 (Delta = 1)",
         lambda: symgdp.additive_noise(dgauss, sensitivity=1, variable=k,
                                       support="integers"), {}, None),
        ("generalized Gaussian, k and sigma symbolic (bound: k = 3/2, sigma = 1, Delta = 1)",
         lambda: symgdp.additive_noise(gg, sensitivity=1, variable=x),
         {"k": sympy.Rational(3, 2), "sigma": 1}, None),
        ("staircase, eps0 = 1, gamma optimal",
         lambda: staircase(1.0, float(optimal_gamma(1.0))), {}, None),
        ("Cauchy 1/(pi (1 + x^2)) (Delta = 1)",
         lambda: symgdp.additive_noise(1 / (sympy.pi * (1 + x**2)), sensitivity=1,
                                       variable=x), {}, None),
        ("2-D Gaussian, l2 ball (bound: sigma = 2, Delta = 1)",
         lambda: symgdp.additive_noise(vec, sensitivity=1, variable=[x, y]), {"sigma": 2},
         mechanisms.gaussian(sigma=2.0)),
    ]


def run() -> tuple[list[dict], dict]:
    import symgdp  # noqa: F401  (imports before the first timing)
    from symgdp import mechanisms

    info = machine({"sympy": sympy.__version__})
    mechanisms.gaussian(1.0).measure(eps_h=10)  # warm the measurement's compiled paths
    rows = []
    for name, derive, values, hand in _cases():
        prof, wall, cpu = _timed(derive)
        bound = prof.replace(values=values) if values else prof
        m, mwall, _ = _timed(lambda b=bound: b.measure(tol=TOL))
        row = {"name": name, "wall": wall, "cpu": cpu, "lower": m.lower, "upper": m.upper,
               "measure": mwall, "hand": None, "agree": None}
        if hand is not None:
            h = hand.measure(tol=TOL)
            row["hand"] = (h.lower, h.upper)
            row["agree"] = (m.lower <= h.upper and h.lower <= m.upper
                            and abs(m.upper - h.upper) <= 2 * TOL)
        rows.append(row)
        print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU; mu in [{m.lower:.7f}, "
              f"{m.upper:.7f}]" + ("" if hand is None else
                                   f"; hand-written [{row['hand'][0]:.7f}, "
                                   f"{row['hand'][1]:.7f}]"), flush=True)
    return rows, info


def report(rows: list[dict], info: dict) -> str:
    lines = [START, "## Noise derivations (`bench_noise.py`)", "",
             "Run: `python benchmarks/bench_noise.py`.", "", "| machine | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines += ["", "Each derivation timed once, cold (the first of its kind in the process, "
              "after the imports and one warm-up measurement): wall clock, and CPU time of "
              "the process and its forked SymPy children (one core's work).  Then the "
              f"certified measurement of the bound profile (tol {TOL:g}) and, where the "
              "catalogue has the mechanism, its hand-written profile measured alike: the "
              "brackets must overlap and their upper ends agree to 2 tol.  Target: each "
              f"derivation under {TARGET_S:g} s on one core.", "",
              "| noise | derivation wall (s) | derivation CPU (s) | target | derived: mu in "
              "| measure (s) | hand-written: mu in | agree |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        hand = "" if r["hand"] is None else f"[{r['hand'][0]:.7f}, {r['hand'][1]:.7f}]"
        agree = "" if r["agree"] is None else ("yes" if r["agree"] else "**no**")
        meets = "meets" if r["cpu"] < TARGET_S else "**misses**"
        lines.append(f"| {r['name']} | {r['wall']:.2f} | {r['cpu']:.2f} | {meets} | "
                     f"[{r['lower']:.7f}, {r['upper']:.7f}] | {r['measure']:.2f} | {hand} | "
                     f"{agree} |")
    lines.append(END)
    return "\n".join(lines)


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
