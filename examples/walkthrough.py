r"""Walk-through: the GDP guarantee of a new mechanism, from its trade-off equation to LaTeX.

A paper calibrates the noise of its mechanism by a privacy-utility trade-off equation
:math:`\sigma = f(\varepsilon, \delta)` -- "to get :math:`(\varepsilon, \delta)`-DP use
noise :math:`\sigma`".  This script derives what that guarantee means in Gaussian
differential privacy, step by step (the docs' tutorial follows it line by line):

1. parse the equation safely and solve it for :math:`\delta` (the naive profile);
2. find the tail limit with the parameters still symbolic -- a formula that decides
   whether the mechanism is GDP for *every* choice of the parameters;
3. bind the parameters, refine the profile through the partial order and measure the GDP
   parameter with guaranteed error;
4. write a LaTeX report (``report.tex``), Markdown and JSON, and the figures.
"""

from __future__ import annotations

import json
from pathlib import Path

from _common import parse_args

from symgdp import Profile, plot
from symgdp.present.report import format_bracket, format_log_upper, report
from symgdp.symbolic.parsing import parse_equation

EQUATION = "sigma = A/eps*sqrt(log(B/delta))"
VALUES = {"A": 1, "B": 1.25, "sigma": 1.5}
SYMBOLIC_BUDGET = 60.0  # seconds for each time-bounded SymPy step


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    out = args.out
    eps_h, tol = (20.0, 1e-4) if args.small else (100.0, 1e-8)

    # 1. The trade-off equation and the naive profile it implies (parameters symbolic).
    # (a generous budget for the symbolic steps: on a busy machine the default 10 s can
    # run out, and the answer would then be an implicit profile with no closed-form tail)
    equation = parse_equation(EQUATION)
    symbolic = Profile.from_tradeoff(equation, timeout=SYMBOLIC_BUDGET)
    print("1. naive profile:       delta(eps) =", symbolic.expr)

    # 2. The tail limit as a formula: finite for all A, sigma > 0, so the mechanism is GDP
    #    whatever the parameters, with mu >= A / (sqrt(2) sigma).
    print("2. tail limit:          ", symbolic.tail_limit(timeout=SYMBOLIC_BUDGET))

    # 3. With numbers: refine (theory §2) and measure sup G on [0, eps_h] (theory §6).
    naive = Profile.from_tradeoff(equation, VALUES)
    refined = naive.refine()
    m = naive.measure(eps_h=eps_h, tol=tol)
    print(f"3. refinement point:     c = {float(refined.breakpoint):.8f}, "
          f"delta(c) = {float(refined.breakpoint_delta):.8f}")
    lower, upper = format_bracket(m.lower, m.upper)  # rounded outwards
    print(f"   measured:             {lower} <= sup G on [0, {eps_h:g}] <= {upper}  "
          f"({m.method}, {m.evaluations} evaluations)")
    # from the log: the probability itself underflows float64 for a long head
    print(f"   failure probability:  <= {format_log_upper(m.log_failure_prob)} beyond "
          f"eps_h = {eps_h:g}")

    # 4. Everything at once, as a report to paste into the paper.
    rep = report(EQUATION, values=VALUES, tradeoff=True, eps_h=eps_h, tol=tol)
    (out / "report.tex").write_text(rep.to_latex() + "\n", encoding="utf-8")
    (out / "report.md").write_text(rep.to_markdown() + "\n", encoding="utf-8")
    (out / "report.json").write_text(json.dumps(rep.to_dict(), indent=2, allow_nan=False)
                                     + "\n", encoding="utf-8")
    print("4. verdict:             ", rep.verdict, "--", rep.statement)

    plot.summary(rep, eps_max=5.0).savefig(out / "walkthrough.png",
                                           dpi=100 if args.small else 200)
    plot.tradeoff(refined.replace(name="refined profile"), mu=[m.upper],
                  n=100 if args.small else 400).savefig(out / "walkthrough_tradeoff.png",
                                                        dpi=100 if args.small else 200)
    print(f"wrote {', '.join(sorted(p.name for p in out.glob('walkthrough*')))} and "
          f"report.tex/.md/.json to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
