r"""The ``symgdp`` command line.

``symgdp analyze EXPR`` reads a privacy profile :math:`\delta(\varepsilon)` (or, with
``--tradeoff``, an equation ``sigma = f(eps, delta)``), binds its parameters with ``--set``,
and prints every derived step of :func:`symgdp.report`: as text (default), as one JSON
object (``--json``) or as a LaTeX ``align*`` block (``--latex``); ``--plot FILE`` also
saves the profiles and the GDPT.  ``symgdp convert`` turns two of :math:`\mu`,
:math:`\varepsilon`, :math:`\delta` into the third (comma lists, ``--json``), rounded the
safe way and proved at 40 digits.

Exit status: 0 on success; 2 on bad input (one line on stderr, never a traceback);
1 on an internal error (one line asking for a bug report; ``--debug`` shows the traceback);
130 when interrupted.  Strings are parsed only by :mod:`symgdp.symbolic.parsing` (no ``eval``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Sequence
from typing import IO, Any

from symgdp.cli.convert_command import _add_convert_parser
from symgdp.cli.risk_command import _add_audit_parser, _add_risk_parser
from symgdp.cli.shared import (
    UsageError,
    _one_line,
    _parse_values,
    _Parser,
    _positive_float,
    _positive_int,
    _probability,
)
from symgdp.errors import ParseError, SymgdpError
from symgdp.numerics.decimals import json_number

__all__ = ["main", "build_parser"]

_PROG = "symgdp"
_EXAMPLES = """\
examples:
  symgdp analyze "2*exp(-eps**2)"
  symgdp analyze --tradeoff "sigma = sqrt(2*log(1.25/delta))/eps" --set sigma=2
  symgdp analyze "B*exp(-sigma**2*eps**2/A**2)" --set A=1 --set B=2 --set sigma=1.5 --json
  symgdp analyze --notion rdp "alpha/(2*sigma**2)" --set sigma=2
  symgdp analyze --notion curve "Max(0, 1 - exp(1)*alpha, exp(-1)*(1 - alpha))"
  symgdp analyze --noise "exp(-x**2/(2*sigma**2))/(sqrt(2*pi)*sigma)" --set sigma=2 --set Delta=1
"""


def _add_measure_options(p: argparse.ArgumentParser, each: bool = False) -> None:
    """The options ``analyze``, ``calibrate`` and ``sweep`` share: the profile (or trade-off
    equation), its parameters, and how to refine and measure it (``each``: per point)."""
    one = "each" if each else "the"
    p.add_argument("expr", metavar="EXPR",
                   help="the profile delta(eps), e.g. '2*exp(-eps**2)'; with --tradeoff an "
                   "equation 'sigma = f(eps, delta)'")
    p.add_argument("--tradeoff", action="store_true",
                   help="EXPR is a privacy-utility trade-off equation sigma = f(eps, delta)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a parameter (repeatable); VALUE may be an expression like "
                   "'sqrt(2)' or '1/3'")
    p.add_argument("--eps-h", type=_positive_float(), default=100.0, metavar="X",
                   help=f"head end point of {one} measurement (default 100)")
    p.add_argument("--tol", type=_positive_float(), default=1e-6, metavar="T",
                   help=f"width of {one} measured bracket on mu (default 1e-6)")
    p.add_argument("--no-refine", action="store_true",
                   help="measure the profile exactly as given, without refinement")
    p.add_argument("--timeout", type=_positive_float(), default=None, metavar="SECONDS",
                   help="time budget of each symbolic step" + ("" if each else
                   " (refinement, tail limit); when the tail analysis runs out of time the "
                   "verdict is 'unknown'"))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``symgdp`` (its errors raise :class:`UsageError`)."""
    from symgdp import __version__

    parser = _Parser(prog=_PROG, description="Derive, identify and measure Gaussian-DP "
                     "guarantees of privacy profiles.", epilog=_EXAMPLES,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    a = sub.add_parser(
        "analyze", help="analyse a privacy profile or trade-off equation",
        description="Refine a privacy profile, find its tail limit and measure its GDP "
        "parameter with guaranteed error.", epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_measure_options(a)
    a.add_argument("--notion", choices=("profile", "rdp", "zcdp", "curve"),
                   default="profile",
                   help="what EXPR is: a privacy profile delta(eps) (default); a Renyi-DP "
                   "curve eps(alpha) in the order alpha; a zCDP rho; or an f-DP trade-off "
                   "curve T(alpha), alpha the type I error (each becomes the profile it "
                   "implies, then is analysed)")
    a.add_argument("--noise", action="store_true",
                   help="EXPR is the density p(x) of additive noise Z: the profile of "
                   "f(D) + Z is derived from it (symgdp.additive_noise; sensitivity "
                   "Delta, bound with --set Delta=VALUE) and the derivation is reported")
    a.add_argument("--support", choices=("reals", "integers"), default="reals",
                   help="with --noise: EXPR is a density on the real line (default) or a "
                   "PMF on the integers (write a normaliser as Sum(w(j), (j, -oo, oo)); the "
                   "--set values are bound in the PMF first, Delta an integer, default 1)")
    a.add_argument("--variables", metavar="X1,X2,...",
                   help="with --noise: EXPR is a density on R^d in these variables (a "
                   "Gaussian with any positive definite covariance, reduced exactly to the "
                   "1-D shift; other multivariate densities are refused by name)")
    a.add_argument("--norm", choices=("l2", "l1", "linf"), default="l2",
                   help="with --variables: the norm of the sensitivity ball (default l2)")
    cert = a.add_mutually_exclusive_group()
    cert.add_argument("--certify", action="store_true",
                      help="require bounds proved in interval arithmetic (the default "
                      "whenever the profile has a closed form)")
    cert.add_argument("--no-certify", action="store_true",
                      help="float64 mode: skip the interval-arithmetic proof of the bounds")
    a.add_argument("--method", choices=("auto", "staircase"), default="auto",
                   help="measurement algorithm (default auto; staircase = the published one)")
    a.add_argument("--time-limit", type=_positive_float(), default=None, metavar="SECONDS",
                   help="wall-clock budget of the measurement (default 300); past it the "
                   "run stops with exit 2 and claims nothing")
    out = a.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--latex", action="store_true", help="print a LaTeX align* block")
    a.add_argument("--plot", metavar="FILE",
                   help="save the profiles and GDPT to FILE (.png, .pdf, .svg, ...)")
    a.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")
    _add_compose_parser(sub)
    _add_dpsgd_parser(sub)
    _add_convert_parser(sub)
    _add_calibrate_parser(sub)
    _add_sweep_parser(sub)
    _add_risk_parser(sub)
    _add_audit_parser(sub)
    parser.set_defaults(command_names=tuple(sub.choices))
    return parser


def _dash_hint(argv: Sequence[str], parser: argparse.ArgumentParser,
               message: str = "") -> str:
    """A hint for a usage error: "did you mean" for a misspelt command, option or choice;
    for the first argument starting with '-' that the (sub)command does not know, an
    expression taken for an option ("-exp(-eps)") goes after '--'.  An option that
    refused its own value already said why: no hint beyond how to write a value that
    starts with '-'."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
               None)
    command = argv[0] if argv and sub is not None and argv[0] in sub.choices else None
    choice = re.match(r"argument (\S+): invalid choice: '(.*?)' \(choose from (.*)\)$",
                      message, flags=re.S)
    if choice is not None:
        options = re.findall(r"'([^']*)'", choice.group(3))
        return _did_you_mean(choice.group(2), options)
    own = re.match(r"argument (-[^\s:/]+)(?:/\S+)?: (.*)", message, flags=re.S)
    if own is not None:
        option = own.group(1)
        if "expected one argument" in own.group(2):
            values = [b for a, b in zip(argv, argv[1:], strict=False) if a == option]
            if values and values[0].startswith("-"):
                return f" (a value that starts with '-' is written {option}={values[0]})"
        return ""
    if command is None and argv and not argv[0].startswith("-"):
        return _did_you_mean(argv[0], list(sub.choices) if sub is not None else [])
    known = set(parser._option_string_actions)
    if command is not None and sub is not None:  # (a command is only found through sub)
        known |= set(sub.choices[command]._option_string_actions)
    for a in argv:
        if a == "--":
            break
        if not a.startswith("-") or a.split("=", 1)[0] in known:
            continue
        if re.fullmatch(r"--[A-Za-z][A-Za-z0-9-]*(=.*)?", a, flags=re.S):
            where = f"symgdp {command}" if command else "symgdp"
            name = a.split("=", 1)[0]
            longs = {o[2:]: o for o in known if o.startswith("--")}
            close = _close_match(name[2:], sorted(longs))
            guess = f"did you mean {longs[close]!r}?" if close else f"see {where} --help"
            return f" ({name!r} is not an option of {where}; {guess})"
        if command == "dpsgd":
            return ""  # dpsgd takes no EXPR
        return (f" (an EXPR that starts with '-' goes after '--': "
                f"symgdp {command or 'analyze'} [options] -- {a!r})")
    return ""


def _close_match(word: str, choices: Sequence[str]) -> str | None:
    """The closest of ``choices`` to a misspelt ``word`` (difflib), else ``None``."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.7)
    return close[0] if close else None


def _cli_wording(message: str, argv: Sequence[str]) -> str:
    """A library message in the command line's words: ``tradeoff=True`` is ``--tradeoff``,
    ``resume=True`` is ``--resume``, ``certify=True`` is ``--certify`` (``analyze`` only:
    the other commands certify when they can, or not at all with ``--no-certify``)."""
    message = re.sub(r"pass (\w+)=True \((--[\w-]+) on the command line\)", r"pass \2",
                     message)
    message = re.sub(r"\bpass resume=True\b", "add --resume", message)
    message = re.sub(r"unbound parameters ([\w, ]+): give them values= for numeric work",
                     lambda m: f"parameters without values: {m.group(1)}; give them with "
                     + " ".join(f"--set {n.strip()}=VALUE" for n in m.group(1).split(",")),
                     message)
    if argv and argv[0] == "analyze":
        message = re.sub(r"\b(use|pass) certify=True\b", r"\1 --certify", message)
    return message


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else ``""``."""
    close = _close_match(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _expr_symbols(text: str, tradeoff: bool) -> dict[str, Any]:
    """The parameters of EXPR by name, as the parser makes them (with their assumptions)."""
    from symgdp.symbolic.parsing import parse_equation, parse_expression

    try:
        parsed = parse_equation(text) if tradeoff else parse_expression(text)
    except SymgdpError:
        return {}  # the analysis itself reports what is wrong with EXPR, in its words
    return {s.name: s for s in parsed.free_symbols}


def _check_domain(symbols: dict[str, Any], values: dict[str, Any], option: str) -> None:
    """Every value respects its parameter's assumptions (positive, nonnegative, integer):
    ``--set sigma=-1.5`` for a positive sigma is bad input naming both, not a run that
    quietly uses the square of -1.5."""
    import sympy

    for name, given in values.items():
        sym = symbols.get(name)
        if sym is None:
            continue
        for value in (given if isinstance(given, (list, tuple)) else [given]):
            v = sympy.sympify(value)
            shown = f"{float(v):g}" if v.is_Float else str(v)
            what = ("positive" if sym.is_positive and not v.is_positive else
                    "nonnegative" if sym.is_nonnegative and v.is_negative else
                    "an integer" if sym.is_integer and v.is_integer is False else None)
            if what is not None:
                where = f"--set {name}={shown}" if option == "--set" else option
                raise UsageError(f"{where}: {name} must be {what} (every parameter of EXPR "
                                 f"is a positive real), got {shown}")


class _Progress:
    """Stages and counts on a terminal's stderr, one line overwritten in place; silent
    otherwise.  A :data:`~symgdp.present.progress.ProgressCallback` (plain strings work too)."""

    _EVERY = 0.1  # seconds between two updates of the counts inside a stage

    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream, self.enabled, self.shown = stream, enabled, False
        self._last = 0.0

    def __call__(self, event: Any) -> None:
        if not self.enabled or getattr(event, "kind", "start") == "end":
            return
        import time

        now = time.monotonic()
        if getattr(event, "kind", "start") == "advance" and now - self._last < self._EVERY:
            return
        self._last = now
        self.stream.write(f"\r\033[K{_PROG}: {event}...")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _check_plot_target(path: str) -> None:
    from matplotlib.backend_bases import FigureCanvasBase

    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    supported = FigureCanvasBase.get_supported_filetypes()
    if ext not in supported:
        raise UsageError(f"--plot {path!r}: unknown image format {ext!r}; use one of "
                         + ", ".join(sorted(supported)))


def _notion_profile(notion: str, text: str, values: dict[str, Any]) -> Any:
    """The profile implied by EXPR read as ``notion`` (``--notion``), parameters bound."""
    from symgdp.profile import Profile

    if notion == "rdp":
        return Profile.from_rdp(text, values=values)
    if notion == "zcdp":
        return Profile.from_zcdp(text, values=values)
    return Profile.from_tradeoff_curve(text, values=values)


def _integer_noise(text: str, values: dict[str, Any], timeout: float | None
                   ) -> tuple[Any, dict[str, Any]]:
    """The profile of integer noise with PMF ``text``, the ``--set`` values bound first."""
    import sympy

    from symgdp.noise.additive import additive_noise
    from symgdp.symbolic.parsing import parse_expression

    shift = values.pop("Delta", sympy.Integer(1))
    if not (shift.is_Integer and shift > 0):
        raise UsageError(f"--support integers: Delta must be a positive integer, got {shift}")
    # x real (a positive x would read |x| as x), decimals exact, as additive_noise reads it
    pmf = parse_expression(text, symbols={"x": sympy.Symbol("x", real=True)}, rational=True)
    bound = {s: values[s.name] for s in pmf.free_symbols if s.name in values}
    unknown = sorted(set(values) - {s.name for s in bound})
    if unknown:
        raise UsageError(f"--set {', '.join(unknown)}: not a parameter of the PMF {text!r}")
    return additive_noise(pmf.subs(bound), sensitivity=int(shift), support="integers",
                          timeout=timeout), {}


def _analyze(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.present.report import report

    values = _parse_values(args.set)
    _check_domain(_expr_symbols(args.expr, args.tradeoff), values, "--set")
    if args.notion != "profile" and args.tradeoff:
        raise UsageError("--tradeoff (an equation sigma = f(eps, delta)) and "
                         f"--notion {args.notion} are two readings of EXPR: give one")
    if args.plot:
        _check_plot_target(args.plot)
    subject: Any = args.expr
    if args.noise:
        if args.notion != "profile" or args.tradeoff:
            raise UsageError("--noise reads EXPR as a noise density: give neither "
                             "--tradeoff nor --notion with it")
        if args.support == "integers":
            subject, values = _integer_noise(args.expr, values, args.timeout)
        else:
            from symgdp.noise.additive import additive_noise

            variable = None
            if args.variables:
                variable = [v.strip() for v in args.variables.split(",") if v.strip()]
            subject = additive_noise(args.expr, variable=variable, norm=args.norm,
                                     timeout=args.timeout)
    elif args.variables or args.norm != "l2":
        raise UsageError("--variables and --norm describe a vector noise: give --noise "
                         "with them")
    elif args.support != "reals":
        raise UsageError(f"--support {args.support} describes a noise: give --noise with it")
    elif args.notion != "profile":
        subject, values = _notion_profile(args.notion, args.expr, values), {}
    progress = _Progress(stderr, enabled=not args.json and _isatty(stderr))
    try:
        rep = report(subject, values=values, eps_h=args.eps_h, tol=args.tol,
                     certify=True if args.certify else (False if args.no_certify else None),
                     tradeoff=args.tradeoff,
                     refine=not args.no_refine, method=args.method, progress=progress,
                     strict=True, timeout=args.timeout,
                     time_limit="default" if args.time_limit is None else args.time_limit)
        if args.plot:
            progress("drawing the plot")
            from symgdp.present.plot import summary

            fig = summary(rep)
            try:
                fig.savefig(args.plot, dpi=150)
            except OSError as exc:
                raise UsageError(f"--plot: cannot write {args.plot!r}: "
                                 f"{exc.strerror or exc}") from None
    finally:
        progress.clear()
    if args.json:
        stdout.write(json.dumps(rep.to_dict(), indent=2, allow_nan=False) + "\n")
    elif args.latex:
        stdout.write(rep.to_latex() + "\n")
    else:
        stdout.write(rep.to_text() + "\n")
        if args.plot:
            stdout.write(f"plot written to {args.plot}\n")
    return 0


def _isatty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 internal error, 2 bad input).

    Example:
        >>> import io
        >>> err = io.StringIO()
        >>> main(["analyze", "1 +* eps"], stderr=err)
        2
        >>> err.getvalue().count("\\n")
        1
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    caught: list[str] = []
    seen: set[str] = set()
    live = _isatty(err)

    def show(message: Any, *_: Any, **__: Any) -> None:
        # On a terminal a warning is shown when it is raised (a run predicted to be long
        # says so before it starts); otherwise warnings follow the output, each once.
        msg = _one_line(message)
        if msg in seen:
            return
        seen.add(msg)
        if live:
            err.write(f"\r\033[K{_PROG}: warning: {msg}\n")
            err.flush()
        else:
            caught.append(msg)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            parser = build_parser()
            try:
                with contextlib.redirect_stdout(out):
                    args = parser.parse_args(argv)
            except SystemExit as exc:  # --help / --version printed their text
                return int(exc.code or 0)
            except UsageError as exc:
                raise UsageError(str(exc) + _dash_hint(argv, parser, str(exc))) from None
            if args.command is None:
                raise UsageError("choose a command: " + ", ".join(args.command_names)
                                 + " (see symgdp --help)")
            run = getattr(args, "run", None)
            status = run(args, out, err) if run is not None else _analyze(args, out, err)
        for msg in caught:
            err.write(f"{_PROG}: warning: {msg}\n")
        return status
    except (UsageError, SymgdpError) as exc:
        if debug:
            raise
        err.write(f"{_PROG}: error: {_cli_wording(_one_line(exc), argv)}\n")
        return 2
    except KeyboardInterrupt:
        err.write(f"{_PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader (e.g. `head`) has all it wanted; keep the interpreter's final flush quiet.
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the command line must not show a traceback
        if debug:
            raise
        err.write(f"{_PROG}: internal error ({type(exc).__name__}: {_one_line(exc)}); "
                  "this is a bug in symgdp, please report it with the output of the same "
                  "command run with --debug\n")
        return 1


# -- compose and dpsgd ----------------------------------------------------------------------


def _add_compose_parser(sub: Any) -> None:
    c = sub.add_parser(
        "compose", help="compose a privacy profile K times, with a proof",
        description="Compose a privacy profile K times (certified: connect-the-dots "
        "loss distributions in ball arithmetic, composed in exact integers), report "
        "epsilon at delta and the composed mechanism's GDP bracket [mu_floor, mu_upper] on "
        "the head where the composed profile falls to the failure probability.")
    c.add_argument("expr", metavar="EXPR", help="the profile delta(eps) of one step")
    c.add_argument("--times", type=_positive_int(), required=True, metavar="K",
                   help="number of compositions")
    c.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a parameter (repeatable)")
    c.add_argument("--discretization", type=_probability(), default=None, metavar="D",
                   help="the loss grid (default: adaptive, until the mu bracket is 1e-3 "
                   "wide)")
    c.add_argument("--no-certify", action="store_true",
                   help="dp_accounting's float64 route (estimated margin, no floor)")
    _add_head_options(c)
    c.set_defaults(run=_run_compose)


def _add_head_options(p: Any, auto_tol: bool = False) -> None:
    """The options compose and dpsgd share: delta, failure probability, tol, output
    (``auto_tol``: no default tol, the command chooses it)."""
    p.add_argument("--delta", type=_probability(), default=1e-5, metavar="D",
                   help="report epsilon at this delta (default 1e-5)")
    p.add_argument("--failure-prob", type=_probability(), default=1e-10, metavar="P",
                   help="end the measured head where the profile falls to P (default 1e-10)")
    p.add_argument("--tol", type=_positive_float(), default=None if auto_tol else 1e-4,
                   metavar="T", help="width of the measured mu bracket (default "
                   + ("automatic: 1e-4, or 1e-3 mu for mu below 0.2)" if auto_tol
                      else "1e-4)"))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")


def _run_compose(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.accounting.certified import compose
    from symgdp.profile import Profile

    values = _parse_values(args.set)
    _check_domain(_expr_symbols(args.expr, False), values, "--set")
    step = Profile.parse(args.expr, values)
    composed = compose(step, times=args.times, certify=not args.no_certify,
                       discretization=args.discretization, failure_prob=args.failure_prob,
                       tol=args.tol)
    eps = composed.eps_at(args.delta)
    try:
        mu = (composed.mu_floor, composed.mu_upper, composed.eps_h, composed.failure_prob)
        note = None
    except SymgdpError as exc:
        mu, note = (None, None, None, None), _one_line(exc)
    floor = mu[0] if mu[0] is not None and math.isfinite(mu[0]) else None
    out = {"command": "compose", "expr": args.expr, "times": args.times,
           "delta": args.delta, "eps": json_number(eps.upper),
           "eps_lower": json_number(eps.lower),
           "mu_floor": json_number(floor), "mu_upper": json_number(mu[1]),
           "mu_lower": json_number(floor), "eps_h": json_number(mu[2]),
           "failure_prob": json_number(mu[3]), "certified": composed.certified,
           "neighbouring": composed.neighbouring,
           "floor": json_number(composed.source.floor),
           "margin": json_number(composed.source.margin),
           "discretization": json_number(composed.discretization), "note": note}
    if args.json:
        stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    how = composed.certification
    lines = [f"{args.times}-fold composition of {args.expr} ({how}, discretisation "
             f"{composed.discretization:g}, {composed.neighbouring.replace('_', '/')} "
             "neighbours)",
             f"  ({eps.upper:.6g}, {args.delta:g})-DP; the smallest such eps is in "
             f"[{eps.lower:.6g}, {eps.upper:.6g}]"]
    if mu[1] is not None:
        lo = f"{floor:.6f}" if floor is not None else "unknown"
        lines.append(f"  mu in [{lo}, {mu[1]:.6f}] on [0, {mu[2]:.4g}] (the mechanism's "
                     f"mu: floor and guaranteed upper bound), failure probability "
                     f"{mu[3]:.3g}")
    else:
        lines.append(f"  mu: unknown ({note})")
    stdout.write("\n".join(lines) + "\n")
    return 0


def _add_dpsgd_parser(sub: Any) -> None:
    from symgdp.cli.dpsgd_command import add_dpsgd_parser

    add_dpsgd_parser(sub, positive_float=_positive_float, positive_int=_positive_int,
                     head_options=_add_head_options)


# -- calibrate and sweep -------------------------------------------------------------------------
def _add_planning_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``calibrate`` and ``sweep``: the profile and how to measure it."""
    _add_measure_options(p, each=True)
    p.add_argument("--no-certify", action="store_true",
                   help="float64 brackets only (no ball-arithmetic certification)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")


def _planning_profile(args: argparse.Namespace, values: dict[str, Any]) -> Any:
    from symgdp.profile import Profile

    if args.tradeoff:
        return Profile.from_tradeoff(args.expr, values, timeout=args.timeout)
    return Profile.parse(args.expr, values)


def _add_calibrate_parser(sub: Any) -> None:
    c = sub.add_parser(
        "calibrate", help="the least noise (or largest rate/steps) for a target mu",
        description="Find the smallest (or largest, by the parameter's direction, detected) "
        "value of a parameter whose guaranteed GDP bracket meets a target: upper <= "
        "target mu, or (eps, delta)-DP.",
        epilog="examples:\n"
        "  symgdp calibrate \"B*exp(-sigma**2*eps**2/A**2)\" --param sigma --target-mu 1 "
        "--set A=1 --set B=1\n"
        "  symgdp calibrate --tradeoff \"sigma = sqrt(2*log(1.25/delta))/eps\" --param sigma "
        "--target-eps 1 --target-delta 1e-5\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.set_defaults(run=_run_calibrate)
    _add_planning_options(c)
    c.add_argument("--param", required=True, metavar="NAME",
                   help="the parameter to calibrate (left unbound by --set)")
    c.add_argument("--target-mu", type=_positive_float(), default=None, metavar="MU",
                   help="the target GDP parameter")
    c.add_argument("--target-eps", type=_positive_float(), default=None, metavar="EPS",
                   help="target (eps, delta)-DP: eps (with --target-delta)")
    c.add_argument("--target-delta", type=_probability(), default=None, metavar="DELTA",
                   help="target (eps, delta)-DP: delta (with --target-eps)")
    c.add_argument("--bracket", default=None, metavar="LOW,HIGH",
                   help="search between these values of the parameter")
    c.add_argument("--integer", action="store_true",
                   help="the parameter is an integer (a number of steps)")
    c.add_argument("--rtol", type=_positive_float(), default=1e-6, metavar="R",
                   help="relative width at which the search stops (default 1e-6)")


def _run_calibrate(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.planning.calibrate import calibrate

    values = _parse_values(args.set)
    symbols = _expr_symbols(args.expr, args.tradeoff)
    _check_domain(symbols, values, "--set")
    if args.param in values:
        raise UsageError(f"--param {args.param} is also given a value with --set")
    pair = (args.target_eps, args.target_delta)
    if (args.target_mu is None) == (pair == (None, None)):
        raise UsageError("give either --target-mu or --target-eps with --target-delta")
    if args.target_mu is None and None in pair:
        raise UsageError("--target-eps and --target-delta go together")
    bracket = None
    if args.bracket is not None:
        try:
            bracket = tuple(float(v) for v in args.bracket.split(","))
        except ValueError:
            raise UsageError(f"--bracket expects LOW,HIGH, got {args.bracket!r}") from None
        if len(bracket) != 2 or not all(map(math.isfinite, bracket)):
            raise UsageError(f"--bracket expects LOW,HIGH (finite numbers), got "
                             f"{args.bracket!r}")
        if not bracket[0] < bracket[1]:
            raise UsageError(f"--bracket {args.bracket}: LOW must be below HIGH")
        _check_domain(symbols, {args.param: list(bracket)}, f"--bracket {args.bracket}")
    kw = dict(bracket=bracket, integer=args.integer, rtol=args.rtol, eps_h=args.eps_h,
              tol=args.tol, refine=not args.no_refine, timeout=args.timeout,
              certify=False if args.no_certify else None)
    if args.tradeoff and args.target_mu is None:
        # the direct route: the least noise through the partial order
        result = calibrate(args.expr, args.param, target=pair, values=values, **kw)
    else:
        p = _planning_profile(args, values)
        result = calibrate(p, args.param, args.target_mu,
                           target=None if args.target_mu is not None else pair, **kw)
    if args.json:
        data = {"profile": args.expr, **result.to_dict()}
        stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")
    else:
        stdout.write(str(result) + "\n")
        for note in result.notes:
            stdout.write(f"  note: {note}\n")
    return 0


def _grid_values(spec: str) -> tuple[str, list[Any]]:
    """``NAME=a:b:n`` (n values from a to b), ``NAME=v1,v2,...`` or ``NAME=v``."""
    import numpy as np

    from symgdp.symbolic.parsing import parse_expression

    name, sep, text = spec.partition("=")
    name, text = name.strip(), text.strip()
    if not sep or not name.isidentifier() or not text:
        raise UsageError(f"--grid expects NAME=LOW:HIGH:COUNT or NAME=V1,V2,..., got {spec!r}")

    def number(t: str) -> Any:
        try:
            v = parse_expression(t.strip())
        except ParseError as exc:
            raise UsageError(f"--grid {spec!r}: {_one_line(exc)}") from None
        if v.free_symbols or not v.is_number or not v.is_real or not v.is_finite:
            raise UsageError(f"--grid {spec!r}: {t.strip()!r} is not a finite real number")
        return int(v) if v.is_Integer else float(v)

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise UsageError(f"--grid {spec!r}: a range is LOW:HIGH:COUNT")
        lo, hi, n = number(parts[0]), number(parts[1]), number(parts[2])
        if not isinstance(n, int) or n < 1:
            raise UsageError(f"--grid {spec!r}: COUNT must be a positive integer, got {n!r}")
        if n > 1_000_000:
            raise UsageError(f"--grid {spec!r}: COUNT {n} is too large")
        return name, [float(v) for v in np.linspace(float(lo), float(hi), n)]
    return name, [number(t) for t in text.split(",")]


def _add_sweep_parser(sub: Any) -> None:
    s = sub.add_parser(
        "sweep", help="measure a profile over a grid of parameter values",
        description="Measure the GDP bracket of a profile at every point of a grid (the "
        "Cartesian product of the --grid values), in parallel; results stream to a "
        "JSON-lines file that --resume continues.",
        epilog="examples:\n"
        "  symgdp sweep \"B*exp(-sigma**2*eps**2/A**2)\" --set B=1 --grid sigma=0.5:4:50 "
        "--grid A=1,2 --out mu.jsonl --plot mu.png\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    s.set_defaults(run=_run_sweep)
    _add_planning_options(s)
    s.add_argument("--grid", action="append", default=[], metavar="NAME=SPEC",
                   help="values of a parameter: LOW:HIGH:COUNT or V1,V2,... (repeatable)")
    s.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (default: one per core; 1 = serial)")
    s.add_argument("--out", default=None, metavar="FILE",
                   help="append one JSON record per point to FILE as it finishes")
    s.add_argument("--resume", action="store_true",
                   help="continue the sweep in --out, computing only the missing points")
    s.add_argument("--task", choices=("measure", "identify"), default="measure",
                   help="what to compute at each point (default measure)")
    s.add_argument("--plot", metavar="FILE",
                   help="save mu against the first grid parameter (curves by the second)")


def _run_sweep(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from symgdp.planning.sweep import sweep

    values = _parse_values(args.set)
    if not args.grid:
        raise UsageError("sweep needs at least one --grid NAME=SPEC")
    grid: dict[str, list[Any]] = {}
    specs: dict[str, str] = {}
    for spec in args.grid:
        name, vals = _grid_values(spec)
        if name in grid or name in values:
            raise UsageError(f"--grid {name} is given twice (or also with --set)")
        grid[name] = vals
        specs[name] = spec
    symbols = _expr_symbols(args.expr, args.tradeoff)
    _check_domain(symbols, values, "--set")
    for name, vals in grid.items():
        _check_domain(symbols, {name: vals}, f"--grid {specs[name]}")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be a positive integer, got {args.workers}")
    if args.resume and not args.out:
        raise UsageError("--resume needs --out FILE")
    if args.out and not args.resume and os.path.exists(args.out) and \
            os.path.getsize(args.out) > 0:
        raise UsageError(f"--out {args.out} already exists; add --resume to continue that "
                         "sweep, or choose another file")
    if args.plot:
        _check_plot_target(args.plot)
        if args.task != "measure":
            raise UsageError("--plot draws measured mu; use it with --task measure")
    p = _planning_profile(args, values)
    table = sweep(p, grid, workers=args.workers, out=args.out, resume=args.resume,
                  task=args.task, eps_h=args.eps_h, tol=args.tol, refine=not args.no_refine,
                  certify=False if args.no_certify else None, timeout=args.timeout)
    failed = table.errors
    if failed and len(failed) == len(table):
        raise UsageError(f"every point failed; the first: {failed[0]['error']}")
    if args.plot:
        from symgdp.present.plot import sweep as plot_sweep
        from symgdp.present.plot import sweep_map

        names = list(grid)
        many = len(names) >= 2 and len(grid[names[1]]) > 8 and len(grid[names[0]]) > 1
        fig = (sweep_map(table, names[0], names[1]) if many else
               plot_sweep(table, names[0], by=names[1] if len(names) >= 2 else None))
        try:
            fig.savefig(args.plot, dpi=150)
        except OSError as exc:
            raise UsageError(f"--plot: cannot write {args.plot!r}: {exc.strerror or exc}") \
                from None
    if args.json:
        stdout.write(json.dumps(list(table), indent=1, allow_nan=False) + "\n")
    else:
        keys = ("mu_lower", "mu_upper", "certified") if args.task == "measure" else \
            ("is_gdp", "mu_tail", "limit")
        names = list(grid)
        stdout.write("\t".join([*names, *keys, "error"]) + "\n")
        for r in table:
            cells = [str(r["point"][n]) for n in names]
            cells += ["" if r.get(k) is None else str(r.get(k)) for k in keys]
            cells.append(r.get("error") or "")
            stdout.write("\t".join(cells) + "\n")
        if args.plot:
            stdout.write(f"plot written to {args.plot}\n")
    if failed:
        stderr.write(f"{_PROG}: warning: {len(failed)} of {len(table)} points failed "
                     f"(see their error field); the first: {failed[0]['error']}\n")
    return 0
