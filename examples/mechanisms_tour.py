r"""A tour of the ready-made mechanisms: profile, tail limit, measured GDP parameter.

For every mechanism of :mod:`symgdp.mechanisms` the script prints the profile in LaTeX,
its identification (the tail limit of theory §5) and the measured bracket on the
tightest :math:`\mu` (§6).  Where a trade-off curve exists (:mod:`symgdp.notions.fdp`) the
GDP parameter of the curve is printed beside it: the profile route and the trade-off
route must agree.  A last section shows the conversions of :mod:`symgdp.notions.conversions`.

Writes ``mechanisms_tour.md`` and ``mechanisms_tour.json`` to ``--out`` (default
``examples/out/``).  ``--small`` uses a coarse tolerance, a shorter head and skips the
symbolic identification of the erfc-form Gaussian profile and the refinement of the
shuffle-amplification profile (its nested Min/Piecewise form makes the refinement the
slowest step of the tour): every row still gets a guaranteed bracket, whatever the
machine's load.  The table says for every row whether the bracket was proved in ball
arithmetic ("certified") and whether it covers the tail (the profile is 0 beyond
:math:`\varepsilon_h`, a full GDP guarantee) or only the head :math:`[0, \varepsilon_h]`.
Progress of each search is printed on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from _common import parse_args

from symgdp import conversions, mechanisms, tradeoff
from symgdp.errors import SymgdpError

#: seconds between two progress lines of a running search
PROGRESS_EVERY = 2.0


def cases(small: bool) -> list[dict[str, Any]]:
    """(profile, whether to refine, tolerance, trade-off curve or None, identify?)."""
    tol = 1e-2 if small else 1e-5
    return [
        dict(profile=mechanisms.laplace(1.0), refine=False, tol=tol,
             curve=tradeoff.laplace(1.0)),
        # delta_mu in erfc form loses digits to cancellation and its GDPT is flat (== mu),
        # so float noise shows directly in the bracket: a looser tolerance
        dict(profile=mechanisms.gaussian(1.0), refine=False, tol=max(tol, 1e-2),
             curve=tradeoff.gaussian(1.0), identify=not small),
        dict(profile=mechanisms.pure_dp(1.0), refine=False, tol=tol,
             curve=tradeoff.randomized_response(1.0)),
        dict(profile=mechanisms.sgd_family(2, 1, 1.5), refine=True, tol=tol),
        dict(profile=mechanisms.shuffle_sum(120, 1000), refine=True, tol=tol),
        dict(profile=mechanisms.projected_noisy_sgd(1, 2), refine=True, tol=tol),
        dict(profile=mechanisms.classical_gaussian(2.0), refine=True, tol=tol),
        # refinement (theory §2) lowers mu a lot here (the eps0-DP part dominates near 0);
        # its symbolic steps on this nested Min/Piecewise profile take seconds (profiled:
        # the Piecewise rewriting and the breakpoint search), so --small measures the
        # naive profile: a valid, looser bracket
        dict(profile=mechanisms.shuffle_amplification(2.0, 10**4), refine=not small,
             tol=tol),
    ]


def _progress(t0: float) -> Any:
    """A ``measure(progress=...)`` callback printing evaluations and gap now and then."""
    last = [t0]

    def report(evaluations: int, gap: float) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            print(f" [{now - t0:.0f} s: {evaluations} evaluations, gap {gap:.2g}]",
                  end="", file=sys.stderr, flush=True)

    return report


def identify_and_measure(case: dict[str, Any], eps_h: float) -> dict[str, Any]:
    """The case's identification and measured bracket (or the library's refusal)."""
    p, row = case["profile"], {}
    try:
        if case.get("identify", True):
            ident = p.identify()
            row.update(tail_limit=str(ident.limit), is_gdp=bool(ident.is_gdp),
                       mu_tail=float(ident.mu_tail))
        m = p.measure(eps_h=eps_h, tol=case["tol"], refine=case["refine"],
                      identify=case.get("identify", True),
                      progress=_progress(time.perf_counter()))
        row.update(mu_lower=m.lower, mu_upper=m.upper, covers_tail=m.covers_tail,
                   certified=m.certified, refined=m.refined, eps_h=eps_h,
                   caveat=m.headline_caveat())
    except SymgdpError as exc:  # an honest refusal is part of the tour
        row["measure_error"] = f"{type(exc).__name__}: {exc}"
    return row


def tour(small: bool) -> list[dict[str, Any]]:
    eps_h = 10.0 if small else 50.0
    results = []
    todo = cases(small)
    for i, case in enumerate(todo, 1):
        p = case["profile"]
        print(f"[{i}/{len(todo)}] {p.name}: "
              f"{'identify, ' if case.get('identify', True) else ''}"
              f"{'refine and ' if case['refine'] else ''}measure ...",
              end="", file=sys.stderr, flush=True)
        row: dict[str, Any] = {"name": p.name, "source": p.meta.get("reference"),
                               "latex": p.latex(), "values": {str(k): str(v) for k, v
                                                             in p.values.items()}}
        if "tradeoff" in p.meta:
            row["tradeoff"] = str(p.meta["tradeoff"])
        t0 = time.perf_counter()
        row.update(identify_and_measure(case, eps_h))
        if case.get("curve") is not None:
            row["mu_tradeoff_route"] = tradeoff.gdp_mu(case["curve"])
        # the time goes to stderr only: the outputs do not depend on the machine's load
        print(f" {'refused' if 'measure_error' in row else 'done'} after "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        results.append(row)
    return results


def guarantee(row: dict[str, Any]) -> str:
    """What the row's bracket guarantees, in words."""
    if "mu_lower" not in row:
        return ""
    how = "certified" if row["certified"] else "float search"
    what = ("covers the tail" if row["covers_tail"]
            else f"head [0, {row['eps_h']:g}] only")
    return f"{how}; {what}" + ("; refined" if row["refined"] else "")


def conversion_notes() -> dict[str, float]:
    eps, delta = 0.5, 1e-5
    return {
        "sigma_analytic(0.5, 1e-5)": conversions.analytic_gaussian_sigma(eps, delta),
        "sigma_classical(0.5, 1e-5)": conversions.classical_gaussian_sigma(eps, delta),
        "rdp_of_1_dp(alpha=2)": conversions.rdp_of_pure_dp(1.0, 2.0),
        "zcdp_of_1_dp(tight)": conversions.zcdp_of_pure_dp(1.0),
        "zcdp_of_1_dp(folklore)": conversions.zcdp_of_pure_dp(1.0, tight=False),
        "eps_from_zcdp(rho=0.5, 1e-5)": conversions.zcdp_to_dp(0.5, delta),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    rows = tour(args.small)
    notes = conversion_notes()
    md = ["| mechanism | profile | tail limit | μ bracket | guarantee | trade-off route |",
          "|---|---|---|---|---|---|"]
    for r in rows:
        bracket = (f"[{r['mu_lower']:.6f}, {r['mu_upper']:.6f}]" if "mu_lower" in r
                   else r.get("measure_error", ""))
        curve = f"{r['mu_tradeoff_route']:.6f}" if "mu_tradeoff_route" in r else ""
        tail = r.get("tail_limit", "(not identified with --small)")
        md.append(f"| {r['name']} | ${r['latex']}$ | {tail} | {bracket} | {guarantee(r)} | "
                  f"{curve} |")
    md += ["", "| conversion | value |", "|---|---|"]
    md += [f"| {k} | {v:.6f} |" for k, v in notes.items()]
    (args.out / "mechanisms_tour.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (args.out / "mechanisms_tour.json").write_text(
        json.dumps({"mechanisms": rows, "conversions": notes}, indent=2, default=str),
        encoding="utf-8")
    print("\n".join(md))
    print(f"wrote {args.out / 'mechanisms_tour.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
