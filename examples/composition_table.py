r"""The composition table: :math:`k`-fold :math:`\varepsilon_0`-DP at several :math:`\delta`.

Rows (theory §8): basic and advanced composition, the GDP route with the per-step
:math:`\mu` of pure DP and of the Laplace mechanism, the exact optimal composition
(Kairouz-Oh-Viswanath) and the GDP summary of the optimal profile.  Also printed: the
optimal :math:`\varepsilon` read only at the loss levels :math:`(k - 2i)\varepsilon_0`
(as KOV's Theorem 3.3 states it), which overstates the exact row.

Writes ``composition_table.md``, ``composition_table.tex`` and ``composition_table.json``
to ``--out`` (default ``examples/out/``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import _common
import numpy as np

from symgdp import composition

#: the table's human row names (symgdp.accounting.pure_dp.ROW_LABELS), and this script's extra row
LABELS = {**composition.ROW_LABELS,
          "optimal_at_levels": "optimal read at KOV loss levels (overstates the exact row)"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The common options, plus the per-step epsilon and the number of steps."""
    p = _common.parser(__doc__, Path(__file__).resolve().parent / "out")
    p.add_argument("--eps0", type=float, default=0.2, help="per-step epsilon (0.2)")
    p.add_argument("--k", type=int, default=50, help="number of steps (50)")
    return _common.parse(p, argv)


def at_levels(eps0: float, k: int, delta: float) -> float:
    """Smallest KOV loss level (k - 2i) eps0 whose delta is at most ``delta``."""
    levels = np.array([(k - 2 * i) * eps0 for i in range(k + 1)])
    levels = levels[levels >= 0]
    ok = composition.optimal_log_delta(eps0, k, levels) <= math.log(delta)
    return float(levels[ok].min())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    deltas = [1e-1, 1e-2, 1e-3, 1e-4]
    tol = 1e-6 if args.small else 1e-9
    t0 = time.perf_counter()
    table = composition.table(args.eps0, args.k, deltas, tol=tol)
    seconds = time.perf_counter() - t0
    rows = {name: list(values) for name, values in table.items()}
    rows["optimal_at_levels"] = [at_levels(args.eps0, args.k, d) for d in deltas]
    # the mu behind each GDP (and CLT) row, as the table computed it
    mus = dict(table.mus)

    def label_of(name: str) -> str:
        text = LABELS.get(name, name)
        if name in table.approximate and "approximate" not in text:
            text += " [not a guarantee]"
        return text

    head = [f"{args.k}-fold {args.eps0:g}-DP"] + [f"δ = {d:g}" for d in deltas]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    tex = [r"\begin{tabular}{l" + "r" * len(deltas) + "}", r"\hline",
           f"{args.k}-fold ${args.eps0:g}$-DP & "
           + " & ".join(rf"$\delta = 10^{{{round(math.log10(d))}}}$" for d in deltas)
           + r" \\", r"\hline"]
    for name, values in rows.items():
        label = label_of(name) + (f" (μ = {mus[name]:.6f})" if name in mus else "")
        md.append(f"| {label} | " + " | ".join(f"{v:.4f}" for v in values) + " |")
        tex_label = label_of(name).replace("&", r"\&").replace("_", r"\_") + (
            f" ($\\mu = {mus[name]:.6f}$)" if name in mus else "")
        tex.append(f"{tex_label} & " + " & ".join(f"{v:.4f}" for v in values) + r" \\")
    tex += [r"\hline", r"\end{tabular}"]

    (args.out / "composition_table.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (args.out / "composition_table.tex").write_text("\n".join(tex) + "\n", encoding="utf-8")
    (args.out / "composition_table.json").write_text(json.dumps(
        {"eps0": args.eps0, "k": args.k, "deltas": deltas, "rows": rows, "mu": mus,
         "tol": tol, "seconds": seconds}, indent=2), encoding="utf-8")
    print("\n".join(md))
    print(f"(table built in {seconds:.3f} s; GDP rows use guaranteed upper bounds on mu, "
          f"bracket width <= {tol:g})")
    print(f"wrote {args.out / 'composition_table.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
