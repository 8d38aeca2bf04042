r"""Naive vs refined privacy profiles, with GDP curves (the seed paper's profile figure).

For two mechanisms whose published guarantee is a trade-off equation -- the "SGD family"
:math:`\sigma = A\varepsilon^{-1}\sqrt{\log(B/\delta)}` and shuffle-model summation
:math:`m = 10\log(n/(\varepsilon\delta))` -- draw the naive profile, its refinement through
the partial order (theory §2), and :math:`\delta_\mu` at the measured upper bound
of the GDP parameter.  Run ``python examples/profiles_figure.py --help`` for the options.
"""

from __future__ import annotations

from pathlib import Path

from _common import parse_args, save_figure
from matplotlib.figure import Figure

from symgdp import mechanisms, plot
from symgdp.present.report import format_bracket

# Parameters of the two mechanisms (illustrative; change them freely).
SGD = {"A": 1.0, "B": 1.25, "sigma": 1.5}
SHUFFLE = {"m": 100, "n": 1000}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    tol, eps_h, n = (1e-3, 20.0, 150) if args.small else (1e-6, 100.0, 600)

    fig = Figure(figsize=(11.5, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, naive, eps_max in [(axes[0], mechanisms.sgd_family(**SGD), 4.0),
                               (axes[1], mechanisms.shuffle_sum(**SHUFFLE), 6.0)]:
        refined = naive.refine()
        m = naive.measure(eps_h=eps_h, tol=tol)
        plot.profiles(naive.replace(name="naive"), refined.replace(name="refined"),
                      mu=[m.upper], eps_max=eps_max, n=n, ax=ax, title=naive.name)
        lower, upper = format_bracket(m.lower, m.upper)
        print(f"{naive.name:>12}: refinement point c = {float(refined.breakpoint):.6f}, "
              f"sup G on [0, {eps_h:g}] in [{lower}, {upper}]")
    path = save_figure(fig, args, "profiles")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
