r"""Designing the noise: mu of generalized Gaussian noise exp(-|x/sigma|^k) against its shape k.

At equal variance 1 and sensitivity 1, the certified profile of
:func:`symgdp.noise.generalized_gaussian` is measured for shapes k from 1 (Laplace) to 2
(Gaussian), and a few above 2.  Each point is the guaranteed bracket of the head GDP
on :math:`[0, \varepsilon_h]` with its tail failure probability (the source has no
symbolic tail limit); for k > 2 the profile decays like :math:`e^{-c\varepsilon^{k/(k-1)}}`,
slower than any Gaussian's, so the head mu grows with :math:`\varepsilon_h` and no mu-GDP
statement holds (docs/noise.md, "Designing the noise").  Runs in seconds with --small.
"""

from __future__ import annotations

import math
from pathlib import Path

from _common import parse_args, save_figure
from matplotlib.figure import Figure

from symgdp.noise import generalized_gaussian
from symgdp.noise.gengauss import variance


def mu_bracket(k: float, eps_h: float, tol: float) -> tuple[float, float]:
    """The measured bracket of mu at variance 1 and sensitivity 1."""
    p = generalized_gaussian(k, scale=math.sqrt(1.0 / variance(k, 1.0)), sensitivity=1)
    m = p.measure(eps_h=eps_h, tol=tol)
    return m.lower, m.upper


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    ks = [1.0, 1.25, 1.5, 1.75, 2.0] if args.small else \
        [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0]
    above = [2.5, 3.0] if args.small else [2.25, 2.5, 3.0, 4.0]
    tol = 2e-2 if args.small else 2e-3
    rows = []
    for k in ks + above:
        lo, up = mu_bracket(k, 8.0, tol)
        rows.append((k, lo, up))
        print(f"k = {k:4.2f}: {lo:.4f} <= mu <= {up:.4f} on eps in [0, 8]")
    fig = Figure(figsize=(5.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    for group, style, label in ((ks, "o-", "1 <= k <= 2"),
                                (above, "s--", "k > 2 (mu grows with eps_h)")):
        pts = [(k, lo, up) for k, lo, up in rows if k in group]
        ax.errorbar([k for k, _, _ in pts], [(lo + up) / 2 for _, lo, up in pts],
                    yerr=[[(up - lo) / 2 for _, lo, up in pts]] * 2, fmt=style, ms=4,
                    capsize=2, label=label)
    ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    ax.annotate("Gaussian: mu = 1", (1.02, 1.0), va="bottom", fontsize=8)
    ax.set_xlabel("shape k of exp(-|x/sigma|^k), variance 1")
    ax.set_ylabel("mu on eps in [0, 8] (sensitivity 1)")
    ax.legend(fontsize=8)
    path = save_figure(fig, args, "noise_shape")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
