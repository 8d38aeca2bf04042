"""``symgdp risk`` and ``symgdp audit``: certified attack risks of a profile or a mu, and
empirical lower bounds from an attack's outcome counts."""

from __future__ import annotations

import argparse
import json
import re
from typing import IO, Any

from symgdp.numerics.decimals import json_number

__all__ = ["_add_risk_parser", "_add_audit_parser"]

from symgdp.cli.shared import UsageError, _checked, _parse_values, _probability


# -- risk and audit -------------------------------------------------------------------------
def _float_list(option: str, text: str, lo: float, hi: float) -> list[float]:
    out = []
    for item in (t.strip() for t in text.split(",")):
        try:
            v = float(item)
        except ValueError:
            raise UsageError(f"{option} {text!r}: {item!r} is not a number") from None
        if not lo <= v <= hi:
            raise UsageError(f"{option} {text!r}: {item} must lie in [{lo:g}, {hi:g}]")
        out.append(v)
    return out


def _add_risk_parser(sub: Any) -> None:
    r = sub.add_parser(
        "risk", help="guaranteed attack risk of a profile or of mu-GDP",
        description="Bounds on what an attacker can do against a mechanism given by a\n"
        "privacy profile EXPR (or --mu): the largest true-positive rate at each --fpr,\n"
        "the largest advantage TPR - FPR, and the Bayes success for each --prior.\n"
        "Intervals are guaranteed (outward rounded).",
        epilog="examples:\n  symgdp risk --mu 1 --fpr 0.01,0.1 --prior 0.5\n"
        "  symgdp risk 'exp(-eps)' --fpr 0.001",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("expr", nargs="?", metavar="EXPR", help="the profile delta(eps)")
    r.add_argument("--mu", type=_checked(float, lambda v: v >= 0, "must be >= 0"),
                   metavar="MU", help="a GDP parameter instead of a profile")
    r.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a parameter (repeatable)")
    r.add_argument("--fpr", default="0.001,0.01,0.1", metavar="LIST",
                   help="false-positive rates (default 0.001,0.01,0.1)")
    r.add_argument("--prior", default="0.5", metavar="LIST",
                   help="prior probabilities of the member dataset (default 0.5)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")
    r.set_defaults(run=_run_risk)


def _run_risk(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.attacks import risk

    if (args.expr is None) == (args.mu is None):
        raise UsageError("give exactly one of EXPR and --mu")
    fprs = _float_list("--fpr", args.fpr, 0.0, 1.0)
    priors = _float_list("--prior", args.prior, 0.0, 1.0)
    if args.mu is not None:
        x: Any = args.mu
        what = f"{args.mu:g}-GDP"
    else:
        from symgdp.profile import Profile

        x = Profile.parse(args.expr, _parse_values(args.set))
        x.require_bound()
        what = f"delta(eps) = {args.expr}"
    adv = risk.advantage(x)
    tpr = risk.max_tpr(x, fprs)
    bay = risk.bayes_success(x, priors)
    rows = [("advantage (TPR - FPR)", adv.lower, adv.upper)]
    rows += [(f"max TPR at FPR {f:g}", lo, up)
             for f, lo, up in zip(fprs, tpr.lower, tpr.upper, strict=True)]
    rows += [(f"Bayes success, prior {p:g}", lo, up)
             for p, lo, up in zip(priors, bay.lower, bay.upper, strict=True)]
    if args.json:
        out = {"command": "risk", "input": what,
               "advantage": [json_number(adv.lower), json_number(adv.upper)],
               "max_tpr": [{"fpr": f, "lower": json_number(float(lo)),
                            "upper": json_number(float(up))}
                           for f, lo, up in zip(fprs, tpr.lower, tpr.upper, strict=True)],
               "bayes_success": [{"prior": p, "lower": json_number(float(lo)),
                                  "upper": json_number(float(up))}
                                 for p, lo, up in zip(priors, bay.lower, bay.upper, strict=True)]}
        stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    lines = [f"attack risk of {what} (guaranteed intervals):"]
    lines += [f"  {name:<32} [{float(lo):.6g}, {float(up):.6g}]" for name, lo, up in rows]
    stdout.write("\n".join(lines) + "\n")
    return 0


def _add_audit_parser(sub: Any) -> None:
    a = sub.add_parser(
        "audit", help="lower bounds on mu (and eps) from an attack's confusion counts",
        description="Clopper-Pearson lower bounds on the GDP mu (and on eps at --delta) of a\n"
        "mechanism from the counts of a membership attack run independently on two\n"
        "neighbouring datasets; comma lists give several thresholds (union bound).",
        epilog="example:\n  symgdp audit --tp 900 --fn 100 --fp 100 --tn 900 --delta 1e-5",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, what in (("tp", "true positives"), ("fn", "false negatives"),
                       ("fp", "false positives"), ("tn", "true negatives")):
        a.add_argument(f"--{name}", required=True, metavar="LIST",
                       help=f"{what}, one per threshold")
    a.add_argument("--confidence", type=_probability(), default=0.95, metavar="C",
                   help="confidence level in (0, 1) (default 0.95)")
    a.add_argument("--delta", type=_checked(float, lambda v: 0 <= v < 1,
                                            "must lie in [0, 1)"),
                   metavar="D", help="also bound eps at this delta")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")
    a.set_defaults(run=_run_audit)


def _run_audit(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.attacks.audit import audit

    counts = {}
    for name in ("tp", "fn", "fp", "tn"):
        items = []
        for item in (t.strip() for t in getattr(args, name).split(",")):
            if not re.fullmatch(r"\d+", item):
                raise UsageError(f"--{name} {getattr(args, name)!r}: {item!r} is not a "
                                 "non-negative whole number")
            items.append(int(item))
        counts[name] = items
    r = audit(**counts, confidence=args.confidence, delta=args.delta)
    if args.json:
        out = {"command": "audit", "mu_lower": json_number(r.mu_lower),
               "eps_lower": json_number(r.eps_lower), "delta": r.delta,
               "confidence": r.confidence, "best_threshold": r.best,
               "tpr_lower": [json_number(v) for v in r.tpr_lower],
               "fpr_upper": [json_number(v) for v in r.fpr_upper]}
        stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    lines = [f"audit at confidence {r.confidence:g} ({len(r.tpr_lower)} threshold(s)):",
             f"  mu >= {r.mu_lower:.6f} (threshold {r.best}: TPR >= "
             f"{r.tpr_lower[r.best]:.6f}, FPR <= {r.fpr_upper[r.best]:.6f})"]
    if r.eps_lower is not None:
        lines.append(f"  eps >= {r.eps_lower:.6f} at delta = {r.delta:g}")
    stdout.write("\n".join(lines) + "\n")
    return 0
