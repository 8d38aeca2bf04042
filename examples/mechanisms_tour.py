r"""A tour of the ready-made mechanisms: profile, tail limit, measured GDP parameter.

For every mechanism of :mod:`symgdp.mechanisms` the script prints the profile in LaTeX,
its identification (the tail limit of theory §5) and the measured bracket on the
tightest :math:`\mu` (§6).  Where a trade-off curve exists (:mod:`symgdp.tradeoff`) the
GDP parameter of the curve is printed beside it: the profile route and the trade-off
route must agree.  A last section shows the conversions of :mod:`symgdp.conversions`.

Writes ``mechanisms_tour.md`` and ``mechanisms_tour.json`` to ``--out`` (default
``examples/out/``).  ``--small`` uses a coarse tolerance and skips the slow symbolic
identification of the erfc-form Gaussian profile.

Each mechanism is identified and measured in a child process with a time cap
(:data:`CAP_SECONDS`; ``--small``: :data:`CAP_SECONDS_SMALL`), so that the tour always
finishes: a case that does not finish in time is reported as such in the table, like any
other refusal, and progress of the search is printed on stderr while it runs.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

from _common import parse_args

from symgdp import conversions, mechanisms, tradeoff
from symgdp.errors import SymgdpError

#: wall-clock cap in seconds on identifying and measuring one mechanism
CAP_SECONDS = 12.0
CAP_SECONDS_SMALL = 3.0
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
        # the search on this nested Min/Piecewise profile can be slow: the cap applies
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


def _identify_and_measure(conn: Any, case: dict[str, Any], eps_h: float) -> None:
    """Run in the child process: the row's results (or the refusal) through ``conn``."""
    p, row = case["profile"], {}
    try:
        if case.get("identify", True):
            ident = p.identify()
            row.update(tail_limit=str(ident.limit), is_gdp=bool(ident.is_gdp),
                       mu_tail=float(ident.mu_tail))
        m = p.measure(eps_h=eps_h, tol=case["tol"], refine=case["refine"],
                      progress=_progress(time.perf_counter()))
        row.update(mu_lower=m.lower, mu_upper=m.upper, covers_tail=m.covers_tail,
                   refined=m.refined, eps_h=eps_h)
    except SymgdpError as exc:  # an honest refusal is part of the tour
        row["measure_error"] = f"{type(exc).__name__}: {exc}"
    conn.send(row)
    conn.close()


def identify_and_measure(case: dict[str, Any], eps_h: float, cap: float) -> dict[str, Any]:
    """The case's results, computed in a child process that is stopped after ``cap``
    seconds (then the row says so instead)."""
    methods = multiprocessing.get_all_start_methods()
    mp_ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    recv, send = mp_ctx.Pipe(duplex=False)
    child = mp_ctx.Process(target=_identify_and_measure, args=(send, case, eps_h))
    child.start()
    send.close()
    try:
        if recv.poll(cap):
            return recv.recv()
        return {"measure_error": f"not finished within the tour's cap of {cap:g} s "
                                 "(call measure() without a cap to wait for it)"}
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()


def tour(small: bool) -> list[dict[str, Any]]:
    eps_h = 10.0 if small else 50.0
    cap = CAP_SECONDS_SMALL if small else CAP_SECONDS
    # the modules a measurement loads lazily, loaded once here: every child inherits them
    for name in ("symgdp.measure", "symgdp.measurement.firstorder", "symgdp.tail",
                 "symgdp.interval"):
        importlib.import_module(name)
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
        row.update(identify_and_measure(case, eps_h, cap))
        if case.get("curve") is not None:
            row["mu_tradeoff_route"] = tradeoff.gdp_mu(case["curve"])
        row["seconds"] = time.perf_counter() - t0
        error = row.get("measure_error", "")
        done = ("stopped" if error.startswith("not finished") else
                "refused" if error else "done")
        print(f" {done} after {row['seconds']:.1f} s", file=sys.stderr, flush=True)
        results.append(row)
    return results


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
    md = ["| mechanism | profile | tail limit | μ bracket | trade-off route |",
          "|---|---|---|---|---|"]
    for r in rows:
        bracket = (f"[{r['mu_lower']:.6f}, {r['mu_upper']:.6f}]" if "mu_lower" in r
                   else r.get("measure_error", ""))
        curve = f"{r['mu_tradeoff_route']:.6f}" if "mu_tradeoff_route" in r else ""
        md.append(f"| {r['name']} | ${r['latex']}$ | {r.get('tail_limit', '(skipped)')} | "
                  f"{bracket} | {curve} |")
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
