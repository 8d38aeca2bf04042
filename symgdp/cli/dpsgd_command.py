"""The ``symgdp dpsgd`` subcommand: the certified DP-SGD bracket for one run or a schedule,
under either neighbouring relation, and the least noise multiplier for a target."""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

from symgdp.numerics.decimals import json_number

__all__ = ["add_dpsgd_parser", "run_dpsgd"]


def add_dpsgd_parser(sub: Any, *, positive_float: Any, positive_int: Any,
                     head_options: Any) -> None:
    """Register ``symgdp dpsgd`` (the argument types and the shared head options are
    passed in by :mod:`symgdp.cli.main`)."""
    d = sub.add_parser(
        "dpsgd", help="guaranteed GDP mu of DP-SGD (Poisson sampling)",
        description="A guaranteed GDP bracket [mu_floor, mu_upper] for DP-SGD with Poisson "
        "sampling rate Q, noise multiplier S and T steps (or phases given by --phase), "
        "which contains the mechanism's own mu on the head; beside it the CLT "
        "approximation.  With --target-mu or --target-eps: the least noise multiplier "
        "proved to meet the target.",
        epilog="examples:\n  symgdp dpsgd --q 0.01 --sigma 1 --steps 1000\n"
        "  symgdp dpsgd --phase 0.01:1:500 --phase 0.02:1.2:300 --neighbouring replace_one\n"
        "  symgdp dpsgd --q 0.01 --steps 1000 --target-mu 1\n"
        "  symgdp dpsgd --q 0.01 --steps 1000 --target-eps 2 --delta 1e-5\n"
        "  symgdp dpsgd --sampling shuffle --dataset-size 60000 --batch-size 256 "
        "--sigma 1.1 --epochs 60\n"
        "  symgdp dpsgd --statement --dataset-size 10000 --batch-size 64 --sigma 1 "
        "--epochs 5 --delta 1e-6\n"
        "  symgdp dpsgd --q 0.01 --sigma 1 --steps 100 --examples-per-user 4",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("--q", type=positive_float(), metavar="Q",
                   help="Poisson sampling rate in (0, 1]")
    d.add_argument("--sigma", type=positive_float(), metavar="S",
                   help="noise multiplier")
    d.add_argument("--steps", type=positive_int(), metavar="T",
                   help="number of steps")
    d.add_argument("--phase", action="append", default=[], metavar="Q:S:T",
                   help="one phase of a schedule (repeatable, in order) instead of "
                   "--q/--sigma/--steps; with --sampling without_replacement and "
                   "--dataset-size N a phase is B:S:T, batch size B")
    d.add_argument("--neighbouring", default="auto", metavar="REL",
                   help="add_remove or replace_one (default: the relation the sampling "
                   "scheme is stated for: replace_one for without_replacement, else "
                   "add_remove)")
    d.add_argument("--sampling", default="poisson", metavar="SCHEME",
                   help="poisson (default), without_replacement, shuffle, "
                   "random_allocation or truncated_poisson")
    d.add_argument("--dataset-size", type=positive_int(), default=None, metavar="N",
                   help="number of records (without_replacement, shuffle, "
                   "truncated_poisson; with --batch-size, q = B/N for poisson)")
    d.add_argument("--batch-size", type=positive_int(), default=None, metavar="B",
                   help="batch size (without_replacement, shuffle)")
    d.add_argument("--epochs", type=positive_int(), default=None, metavar="E",
                   help="epochs (shuffle, random_allocation; poisson with --dataset-size "
                   "and --batch-size: T = E ceil(N/B))")
    d.add_argument("--max-batch-size", type=positive_int(), default=None, metavar="M",
                   help="the largest batch (truncated_poisson)")
    d.add_argument("--examples-per-user", type=int, default=1, metavar="K",
                   help="examples per user (default 1: record level); K > 1: user-level "
                   "DP-SGD with Poisson sampling, each example sampled independently, "
                   "add/remove of one user with all K examples (mixture of Gaussians, "
                   "Ganesh 2024); with --statement the user-level line comes first")
    d.add_argument("--statement", action="store_true",
                   help="print a privacy statement: the certified (eps, delta) and mu "
                   "under each sampling assumption, each line naming its assumption "
                   "and neighbouring relation (needs --dataset-size and --batch-size)")
    d.add_argument("--target-mu", type=positive_float(), default=None, metavar="X",
                   help="print the least noise multiplier proved to give mu <= X")
    d.add_argument("--target-eps", type=positive_float(), default=None, metavar="E",
                   help="print the least noise multiplier proved to give (E, --delta)-DP")
    d.add_argument("--compare", action="store_true",
                   help="also run dp_accounting's own (float64) PLD for comparison")
    d.add_argument("--discretization", type=positive_float(), default=None, metavar="D",
                   help="the PLD's grid (default automatic: 1e-4, or about 1e-2 mu/sqrt(T) "
                   "for mu below 0.2; symgdp.training.grids)")
    head_options(d, auto_tol=True)
    d.set_defaults(run=run_dpsgd)


def _dpsgd_phases(args: argparse.Namespace) -> list[tuple[float, float, Any]] | None:
    from symgdp.errors import DomainError

    if not args.phase:
        return None
    if args.q is not None or args.sigma is not None or args.steps is not None:
        raise DomainError("give either --phase ... or --q/--sigma/--steps, not both")
    out = []
    for text in args.phase:
        parts = text.split(":")
        if len(parts) != 3:
            raise DomainError(f"--phase must be Q:SIGMA:STEPS (B:SIGMA:STEPS without "
                              f"replacement), got {text!r}")
        try:
            q, s = float(parts[0]), float(parts[1])
            t: Any = float(parts[2])
        except ValueError:
            raise DomainError(f"--phase must be Q:SIGMA:STEPS with numbers, got "
                              f"{text!r}") from None
        out.append((q, s, int(t) if t.is_integer() else t))
    return out


def run_dpsgd(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.errors import DomainError
    from symgdp.training.dpsgd import dpsgd
    from symgdp.training.sigma import dpsgd_sigma

    if args.q is not None and args.q > 1:
        raise DomainError(f"--q must lie in (0, 1], got {args.q!r}")
    scheme_args = dict(sampling=args.sampling, dataset_size=args.dataset_size,
                       batch_size=args.batch_size, epochs=args.epochs,
                       max_batch_size=args.max_batch_size,
                       examples_per_user=args.examples_per_user)
    plain = (args.sampling == "poisson" and args.examples_per_user == 1
             and all(v is None for v in (args.dataset_size, args.batch_size, args.epochs,
                                        args.max_batch_size)))
    user_calibration = (args.examples_per_user != 1 and args.sampling == "poisson"
                        and not args.statement and not args.phase
                        and all(v is None for v in (args.dataset_size, args.batch_size,
                                                    args.epochs, args.max_batch_size))
                        and (args.target_mu is not None or args.target_eps is not None))
    if (not plain or args.statement) and not user_calibration:
        user_phases = (args.phase and args.sampling == "poisson"
                       and args.examples_per_user != 1
                       and all(v is None for v in (args.dataset_size, args.batch_size,
                                                   args.epochs, args.max_batch_size)))
        wor_phases = (args.phase and args.sampling == "without_replacement"
                      and args.examples_per_user == 1 and not args.statement
                      and all(v is None for v in (args.batch_size, args.epochs,
                                                  args.max_batch_size)))
        if args.target_mu is not None or args.target_eps is not None \
                or (args.phase and not (user_phases or wor_phases)):
            raise DomainError("--target-mu, --target-eps and --phase are for Poisson "
                              "sampling given by --q/--steps (--phase and the targets "
                              "also with --examples-per-user; --phase B:S:T also with "
                              "--sampling without_replacement --dataset-size N), not with "
                              "--sampling, --dataset-size, --batch-size, --epochs or "
                              "--statement")
        if user_phases:  # user-level phases
            r = dpsgd(schedule=_dpsgd_phases(args), failure_prob=args.failure_prob,
                      delta=args.delta, tol=args.tol, neighbouring=args.neighbouring,
                      value_discretization_interval=args.discretization,
                      examples_per_user=args.examples_per_user)
        elif wor_phases:  # phases (batch_size, sigma, steps) of fixed-size batches
            schedule = [(int(b) if float(b).is_integer() else b, s, t)
                        for b, s, t in _dpsgd_phases(args) or []]
            r = dpsgd(schedule=schedule, sampling="without_replacement",
                      dataset_size=args.dataset_size, failure_prob=args.failure_prob,
                      delta=args.delta, tol=args.tol, neighbouring=args.neighbouring,
                      value_discretization_interval=args.discretization)
        else:
            r = dpsgd(args.q, args.sigma, args.steps, failure_prob=args.failure_prob,
                      delta=args.delta, tol=args.tol, neighbouring=args.neighbouring,
                      value_discretization_interval=args.discretization,
                      **scheme_args)
        st = r.statement() if args.statement else None
        text = str(st) if st is not None else str(r)
        if args.json:
            out = {k: (json_number(v) if isinstance(v, float) else v)
                   for k, v in r.as_dict().items()}
            out.update(command="dpsgd")
            if st is not None:
                out["statement"] = list(st.lines)
                out["statements"] = {
                    k: {kk: (json_number(vv) if isinstance(vv, float) else vv)
                        for kk, vv in v.as_dict().items()} for k, v in st.results.items()}
            stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
            return 0
        stdout.write(text + "\n")
        return 0
    if args.neighbouring == "auto":
        args.neighbouring = "add_remove"
    if args.target_mu is not None or args.target_eps is not None:
        if args.target_mu is not None and args.target_eps is not None:
            raise DomainError("give one of --target-mu and --target-eps")
        if args.q is None or args.steps is None or args.phase or args.sigma is not None:
            raise DomainError("calibration needs --q and --steps (and no --sigma or "
                              "--phase)")
        target = None if args.target_eps is None else (args.target_eps, args.delta)
        c = dpsgd_sigma(args.q, args.steps, args.target_mu, target=target,
                        failure_prob=args.failure_prob, neighbouring=args.neighbouring,
                        examples_per_user=args.examples_per_user,
                        **({} if args.discretization is None
                           else {"value_discretization_interval": args.discretization}))
        if args.json:
            out = {"command": "dpsgd", "sigma": json_number(c.value),
                   "sigma_below": json_number(c.sigma_below),
                   "bound_at_value": json_number(c.bound_at_value),
                   "floor_below": json_number(c.floor_below), "within_rel": c.within_rel,
                   "rel": c.rel, "q": c.q, "steps": c.steps,
                   "target_mu": json_number(c.target_mu),
                   "target_eps": json_number(None if c.target is None else c.target[0]),
                   "delta": json_number(None if c.target is None else c.target[1]),
                   "failure_prob": json_number(c.failure_prob),
                   "neighbouring": c.neighbouring,
                   "examples_per_user": c.examples_per_user, "evaluations": c.evaluations}
            stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
            return 0
        stdout.write(str(c) + "\n")
        return 0
    phases = _dpsgd_phases(args)
    if phases is None and (args.q is None or args.sigma is None or args.steps is None):
        raise DomainError("dpsgd needs --q, --sigma and --steps (or --phase Q:S:T ...)")
    kw = dict(failure_prob=args.failure_prob, delta=args.delta, tol=args.tol,
              value_discretization_interval=args.discretization,
              neighbouring=args.neighbouring, compare=args.compare)
    r = (dpsgd(schedule=phases, **kw) if phases is not None
         else dpsgd(args.q, args.sigma, args.steps, **kw))
    eps = r.eps_at(args.delta) if args.delta >= r.failure_prob else None
    if args.json:
        out = {k: (json_number(v) if isinstance(v, float) else v)
               for k, v in r.as_dict().items()}
        out.update(command="dpsgd", eps_guaranteed=json_number(eps),
                   mu_clt_is_bound=False)
        stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    lines = [str(r),
             f"  mu_upper: DP-SGD is mu_upper-GDP on the head; mu_floor: every valid mu "
             f"on the head is at least this (neighbouring: {r.neighbouring})",
             f"  epsilon at delta={args.delta:g}: guaranteed {r.eps_certified:.4f} "
             "(certified profile), "
             + (f"{eps:.4f}" if eps is not None else "n/a") + " (from mu_upper)"
             + (f"; dp_accounting PLD {r.eps_pld:.4f} (float64, no error bound)"
                if r.eps_pld == r.eps_pld else "")
             + (f"; Renyi {r.eps_rdp:.4f}; CLT {r.eps_clt:.4f} (approximate)"
                if r.eps_rdp == r.eps_rdp else "")]
    if r.mu_rdp == r.mu_rdp:
        lines.append(f"  Renyi bound alone: mu <= {r.mu_rdp:.6f}")
    stdout.write("\n".join(lines) + "\n")
    return 0
