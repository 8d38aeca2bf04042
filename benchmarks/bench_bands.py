r"""Benchmark of two-sided certified trade-off bands for numeric profiles.

(a) DP-SGD :math:`(q, \sigma, T) = (0.01, 1, 1000)`: the band on 101 type I errors from
    ``dpsgd(...).tradeoff(alpha)`` (target < 5 s, including the optimistic integer
    composition of its lower side), its largest width, and the same with the lower side
    on a four times finer grid (``discretization=2.5e-5``);
(b) compositions: 25-fold randomized response and 25-fold Laplace (:math:`\varepsilon_0 =
    0.2`) and 4 Gaussians of :math:`\mu = 0.5` (:math:`G_1` exactly): band time and width.
(c) implied profiles: ``Profile.from_tradeoff_curve(G_1)`` and ``Profile.from_zcdp(0.5)``
    (lower band only): band time, and the distance of the lower band from :math:`G_1`
    (scipy, a rough check of tightness; the certified checks are in the tests).

The ``dpsgd`` / ``compose`` calls themselves are timed separately (not band time).
Prints one markdown table.  Usage: ``python benchmarks/bench_bands.py``.
"""

from __future__ import annotations

import os
import time

import numpy as np


def main() -> int:
    import scipy.signal  # noqa: F401 - a one-time import (~3 s cold), not band time

    from symgdp import compose, dpsgd, mechanisms

    alpha = np.linspace(0.0, 1.0, 101)
    rows = [f"load average at start: {os.getloadavg()[0]:.2f}", "",
            "| case | setup s | band s | max width | method |", "|---|---|---|---|---|"]
    t0 = time.perf_counter()
    r = dpsgd(0.01, 1.0, 1000, compare=False)
    setup = time.perf_counter() - t0
    for disc in (None, 2.5e-5):
        t0 = time.perf_counter()
        b = r.tradeoff(alpha, discretization=disc)
        sec = time.perf_counter() - t0
        name = "DP-SGD (0.01, 1, 1000)" + ("" if disc is None else f", lower grid {disc:g}")
        rows.append(f"| {name} | {setup:.2f} | {sec:.2f} | {float(b.width.max()):.2e} | "
                    f"{b.method} |")
    cases = [("randomized response(0.2) x25", mechanisms.randomized_response(0.2), 25),
             ("Laplace(0.2) x25", mechanisms.laplace(0.2), 25),
             ("Gaussian(0.5) x4", mechanisms.gaussian(0.5), 4)]
    for name, mech, k in cases:
        t0 = time.perf_counter()
        c = compose(mech, times=k)
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = c.tradeoff(alpha)
        sec = time.perf_counter() - t0
        rows.append(f"| {name} | {setup:.2f} | {sec:.2f} | {float(b.width.max()):.2e} | "
                    f"{b.method} |")
    import sympy
    from scipy.stats import norm

    from symgdp import Profile
    from symgdp.notions import alpha as a_sym

    g1 = sympy.erfc(-(sympy.sqrt(2) * sympy.erfcinv(2 * a_sym) - 1) / sympy.sqrt(2)) / 2
    truth = norm.cdf(norm.ppf(1 - alpha) - 1)
    for name, make in (("from_tradeoff_curve(G_1)", lambda: Profile.from_tradeoff_curve(g1)),
                       ("from_zcdp(0.5)", lambda: Profile.from_zcdp(0.5))):
        t0 = time.perf_counter()
        p = make()
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = p.tradeoff(alpha)
        sec = time.perf_counter() - t0
        gap = float(np.max(truth - b.lower))
        rows.append(f"| {name} | {setup:.2f} | {sec:.2f} | {float(b.width.max()):.2e} "
                    f"(G_1 - lower <= {gap:.1e}) | {b.method} |")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
