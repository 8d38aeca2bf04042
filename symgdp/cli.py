r"""The ``symgdp`` command line.

``symgdp analyze EXPR`` reads a privacy profile :math:`\delta(\varepsilon)` (or, with
``--tradeoff``, an equation ``sigma = f(eps, delta)``), binds its parameters with ``--set``,
and prints every derived step of :func:`symgdp.report.report`: as text (default), as one JSON
object (``--json``) or as a LaTeX ``align*`` block (``--latex``); ``--plot FILE`` also
saves the profiles and the GDPT.  ``symgdp convert`` turns two of :math:`\mu`,
:math:`\varepsilon`, :math:`\delta` into the third (comma lists, ``--json``), rounded the
safe way and proved at 40 digits.

Exit status: 0 on success; 2 on bad input (one line on stderr, never a traceback);
1 on an internal error (one line asking for a bug report; ``--debug`` shows the traceback);
130 when interrupted.  Strings are parsed only by :mod:`symgdp.parsing` (no ``eval``).
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

from .errors import ParseError, SymgdpError
from .formatting import json_number

__all__ = ["main", "build_parser"]

_PROG = "symgdp"
_EXAMPLES = """\
examples:
  symgdp analyze "2*exp(-eps**2)"
  symgdp analyze --tradeoff "sigma = sqrt(2*log(1.25/delta))/eps" --set sigma=2
  symgdp analyze "B*exp(-sigma**2*eps**2/A**2)" --set A=1 --set B=2 --set sigma=1.5 --json
"""


class UsageError(Exception):
    """A command-line usage error (reported as one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would print usage and exit
        raise UsageError(message)


def _checked(parse: Any, ok: Any, requirement: str, kind: str = "a number") -> Any:
    """An argparse ``type``: ``parse(text)``, refused with one line unless ``ok(value)``."""
    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{requirement}, got {text!r}")
        return value

    return convert


def _positive_float() -> Any:
    return _checked(float, lambda v: math.isfinite(v) and v > 0, "must be positive and finite")


def _probability() -> Any:
    return _checked(float, lambda v: 0 < v < 1, "must lie in (0, 1)")


def _positive_int() -> Any:
    return _checked(int, lambda v: v >= 1, "must be at least 1", "a whole number")


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
    from . import __version__

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
    cert = a.add_mutually_exclusive_group()
    cert.add_argument("--certify", action="store_true",
                      help="require bounds proved in interval arithmetic (the default "
                      "whenever the profile has a closed form)")
    cert.add_argument("--no-certify", action="store_true",
                      help="float64 mode: skip the interval-arithmetic proof of the bounds")
    a.add_argument("--method", choices=("auto", "staircase"), default="auto",
                   help="measurement algorithm (default auto; staircase = the published one)")
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
    if command is not None:
        known |= set(sub.choices[command]._option_string_actions)
    for a in argv:
        if a == "--":
            break
        if not a.startswith("-") or a.split("=", 1)[0] in known:
            continue
        if re.fullmatch(r"--[A-Za-z][A-Za-z0-9-]*(=.*)?", a, flags=re.S):
            where = f"symgdp {command}" if command else "symgdp"
            name = a.split("=", 1)[0]
            options = {o[2:]: o for o in known if o.startswith("--")}
            close = _close_match(name[2:], sorted(options))
            guess = f"did you mean {options[close]!r}?" if close else f"see {where} --help"
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
    if argv and argv[0] == "analyze":
        message = re.sub(r"\b(use|pass) certify=True\b", r"\1 --certify", message)
    return message


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else ``""``."""
    close = _close_match(word, choices)
    return f" (did you mean {close!r}?)" if close else ""


def _parse_values(assignments: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings to names and SymPy numbers (parsed safely)."""
    from .parsing import parse_expression
    from .symbols import ALIASES, delta, eps

    values: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name or not text:
            raise UsageError(f"--set expects NAME=VALUE, got {item!r}")
        if not name.isidentifier():
            raise UsageError(f"--set {item!r}: {name!r} is not a parameter name")
        canonical = ALIASES.get(name)
        if canonical is eps or canonical is delta:
            raise UsageError(f"--set {item!r}: {name} is the variable of the profile, "
                             "not a parameter")
        key = canonical.name if canonical is not None else name
        try:
            value = parse_expression(text)
        except ParseError as exc:
            raise UsageError(f"--set {item!r}: {_one_line(exc)}") from None
        if value.free_symbols or not value.is_number:
            raise UsageError(f"--set {item!r}: the value must be a number, got {text!r}")
        number = complex(value.evalf(30))
        if number.imag != 0 or not math.isfinite(number.real):
            raise UsageError(f"--set {item!r}: the value must be a finite real number")
        if key in values:
            raise UsageError(f"--set {name} is given twice")
        values[key] = value
    return values


def _expr_symbols(text: str, tradeoff: bool) -> dict[str, Any]:
    """The parameters of EXPR by name, as the parser makes them (with their assumptions)."""
    from .parsing import parse_equation, parse_expression

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
    otherwise.  A :data:`~symgdp.progress.ProgressCallback` (plain strings work too)."""

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


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_plot_target(path: str) -> None:
    from matplotlib.backend_bases import FigureCanvasBase

    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    supported = FigureCanvasBase.get_supported_filetypes()
    if ext not in supported:
        raise UsageError(f"--plot {path!r}: unknown image format {ext!r}; use one of "
                         + ", ".join(sorted(supported)))


def _analyze(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from .report import report

    values = _parse_values(args.set)
    _check_domain(_expr_symbols(args.expr, args.tradeoff), values, "--set")
    if args.plot:
        _check_plot_target(args.plot)
    progress = _Progress(stderr, enabled=not args.json and _isatty(stderr))
    try:
        rep = report(args.expr, values=values, eps_h=args.eps_h, tol=args.tol,
                     certify=True if args.certify else (False if args.no_certify else None),
                     tradeoff=args.tradeoff,
                     refine=not args.no_refine, method=args.method, progress=progress,
                     strict=True, timeout=args.timeout)
        if args.plot:
            progress("drawing the plot")
            from .plot import summary

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


# -- symgdp convert ----------------------------------------------------------------------------
_CONVERT_EXAMPLES = """\
examples:
  symgdp convert --mu 1 --delta 1e-5            # eps at delta for 1-GDP
  symgdp convert --mu 0.5,1,2 --eps 1,2 --json  # delta at eps, every combination
  symgdp convert --eps 1 --delta 1e-5,1e-10     # the largest mu that gives (eps, delta)-DP
"""
# what is computed from which pair, and the safe rounding direction of the answer
_CONVERT_MODES = {
    frozenset({"mu", "delta"}): ("eps", "up"),
    frozenset({"mu", "eps"}): ("delta", "up"),
    frozenset({"eps", "delta"}): ("mu", "down"),
}
_CONVERT_DIGITS = 10
_CONVERT_PAD = 1e-9  # float64 answer widened by this, then proved at 40 digits
_CONVERT_RANGE = {"mu": ("1e-8", "1e4"), "eps": ("1e-12", "1e8")}  # besides 0


def _add_convert_parser(sub: Any) -> None:
    c = sub.add_parser(
        "convert", help="convert between mu-GDP and (eps, delta)-DP",
        description="Give two of --mu, --eps, --delta (comma lists; every combination is\n"
        "converted) and get the third: eps at delta or delta at eps for mu-GDP, or the\n"
        "largest mu whose GDP gives (eps, delta)-DP.  Answers are checked at 40 digits\n"
        "and rounded the safe way: eps and delta up, mu down.",
        epilog=_CONVERT_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--mu", metavar="LIST", help="GDP parameters, e.g. 0.5,1,2")
    c.add_argument("--eps", metavar="LIST", help="epsilon values, e.g. 1,2")
    c.add_argument("--delta", metavar="LIST", help="delta values, e.g. 1e-5,1e-10 (values "
                   "below float64's range such as 1e-500 are kept exactly)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")
    c.set_defaults(run=_run_convert)


def _convert_values(option: str, text: str) -> list[tuple[str, Any]]:
    """A comma list of ``--mu``/``--eps``/``--delta`` as (text, 40-digit mpf) pairs."""
    import mpmath

    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            raise UsageError(f"--{option} {text!r}: empty entry in the list")
        try:
            with mpmath.workdps(50):
                value = mpmath.mpf(item)  # a decimal keeps every digit, also 1e-500
        except (TypeError, ValueError):
            from .parsing import parse_expression

            try:
                expr = parse_expression(item)
            except ParseError as exc:
                raise UsageError(f"--{option} {item!r}: {_one_line(exc)}") from None
            if expr.free_symbols or not expr.is_number or expr.is_real is False:
                raise UsageError(f"--{option} {item!r}: not a real number") from None
            with mpmath.workdps(50):
                value = mpmath.mpf(str(expr.evalf(50)))
        if mpmath.isnan(value) or mpmath.isinf(value) or value < 0:
            raise UsageError(f"--{option} {item!r}: must be a finite number >= 0")
        low, high = _CONVERT_RANGE.get(option, ("0", "inf"))
        with mpmath.workdps(50):
            inside = mpmath.mpf(low) <= value <= mpmath.mpf(high)
        if value != 0 and not inside:
            # beyond these the float64 first guess or mpmath's erfc breaks down; delta may
            # be as small as wished
            raise UsageError(f"--{option} {item!r}: must be 0 or lie in [{low}, {high}]")
        if option == "delta" and value > 1:
            raise UsageError(f"--delta {item!r}: must lie in [0, 1]")
        out.append((item, value))
    return out


def _convert_one(given: dict[str, Any], target: str) -> Any:
    """The target value at 40 digits, moved the safe way and checked there (theory §3).

    The float64 answer is widened by a relative 1e-9 and proved on the safe side with the
    40-digit profile (delta_mu decreases in eps and increases in mu); when the proof fails,
    the answer is the 40-digit root itself, widened by 1e-30.
    """
    import mpmath

    from . import gaussian
    from . import precise as P

    with mpmath.workdps(50):
        if target == "delta":
            return P.log_delta_mu(given["eps"], given["mu"], dps=40)
        L = mpmath.log(given["delta"]) if given["delta"] > 0 else mpmath.mpf("-inf")
        if target == "eps":
            mu = given["mu"]
            if mu == 0 or L >= P.log_delta_mu(0, mu, dps=40):
                return mpmath.mpf(0)
            if mpmath.isinf(L):
                return mpmath.mpf("inf")
            x = float(gaussian.eps_gdp(float(mu), log_delta=float(L)))
            if math.isfinite(x):
                up = mpmath.mpf(x) * (1 + _CONVERT_PAD)
                if P.log_delta_mu(up, mu, dps=40) <= L:
                    return up
            return P.eps_gdp(mu, log_delta=L, dps=40) * (1 + mpmath.mpf(10) ** -30)
        eps = given["eps"]
        if mpmath.isinf(L):
            return mpmath.mpf(0)
        if L == 0:
            return mpmath.mpf("inf")
        x = float(gaussian.mu_gdp(float(eps), log_delta=float(L)))
        if x > 1e-300:  # else float64 lost it: straight to 40 digits
            down = mpmath.mpf(x) * (1 - _CONVERT_PAD)
            if P.log_delta_mu(eps, down, dps=40) <= L:
                return down
        return P.mu_gdp(eps, log_delta=L, dps=40) * (1 - mpmath.mpf(10) ** -30)


def _convert_text(value: Any, direction: str) -> str:
    """An mpf as decimal text with _CONVERT_DIGITS significant digits, rounded ``direction``
    (``"up"`` towards +inf, ``"down"`` towards -inf)."""
    import mpmath

    if mpmath.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _convert_text(-value, "down" if direction == "up" else "up")
    with mpmath.workdps(50):
        k = int(mpmath.floor(mpmath.log10(value))) - _CONVERT_DIGITS + 1
        scaled = value / mpmath.mpf(10) ** k
        m = int(mpmath.ceil(scaled) if direction == "up" else mpmath.floor(scaled))
    digits = str(m)  # value ~ m * 10**k, m with _CONVERT_DIGITS digits (or one more)
    exp10 = k + len(digits) - 1
    mantissa = digits.rstrip("0") or "0"
    if -5 <= exp10 < 7:  # plain decimal
        if exp10 >= 0:
            whole, frac = digits[:exp10 + 1].ljust(exp10 + 1, "0"), mantissa[exp10 + 1:]
            return whole + ("." + frac if frac else "")
        return "0." + "0" * (-exp10 - 1) + mantissa
    return mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "") + f"e{exp10}"


def _convert_json_number(text: str, direction: str) -> Any:
    """The decimal text as a JSON number that keeps the rounding direction, or the text
    itself where float64 cannot hold it (a positive probability is never written as 0)."""
    from decimal import Decimal

    if text == "inf":
        return "inf"
    x = float(text)
    if text != "0" and (x == 0.0 or not math.isfinite(x) or abs(x) < 2.3e-308):
        return text
    exact = Decimal(text)
    if direction == "up" and Decimal(x) < exact:
        x = math.nextafter(x, math.inf)
    elif direction == "down" and Decimal(x) > exact:
        x = math.nextafter(x, 0.0)
    return x


def _run_convert(args: argparse.Namespace, stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None) -> int:
    """``symgdp convert``: print the table (or JSON) on ``stdout``; the exit status."""
    with contextlib.redirect_stdout(stdout or sys.stdout):
        return _convert(args)


def _convert(args: argparse.Namespace) -> int:
    import itertools

    import mpmath

    given_names = [n for n in ("mu", "eps", "delta") if getattr(args, n) is not None]
    mode = _CONVERT_MODES.get(frozenset(given_names))
    if len(given_names) != 2 or mode is None:
        raise UsageError("give exactly two of --mu, --eps, --delta (got "
                         + (", ".join(f"--{n}" for n in given_names) or "none") + ")")
    target, direction = mode
    lists = [_convert_values(n, getattr(args, n)) for n in given_names]
    rows, records = [], []
    for combo in itertools.product(*lists):
        given = {n: v for n, (_, v) in zip(given_names, combo, strict=True)}
        value = _convert_one(given, target)
        row: dict[str, Any] = {n: t for n, (t, _) in zip(given_names, combo, strict=True)}
        # JSON echoes the inputs as numbers (an input below float64's range as its text)
        record: dict[str, Any] = {
            n: float(v) if v == 0 or 2.3e-308 < v < 1.7e308 else t
            for n, (t, v) in zip(given_names, combo, strict=True)}
        if target == "delta":  # value is log delta: both rounded up
            with mpmath.workdps(50):
                row["delta"] = _convert_text(mpmath.exp(value), "up")
            row["log_delta"] = _convert_text(value, "up")
            record["delta"] = _convert_json_number(row["delta"], "up")
            record["log_delta"] = row["log_delta"] if mpmath.isinf(value) \
                else _convert_json_number(row["log_delta"], "up")
        else:
            row[target] = _convert_text(value, direction)
            record[target] = _convert_json_number(row[target], direction)
        rows.append(row)
        records.append(record)
    safe = {"eps": "eps rounded up: every mu-GDP mechanism is (eps, delta)-DP",
            "delta": "delta rounded up: every mu-GDP mechanism is (eps, delta)-DP",
            "mu": "mu rounded down: a mu-GDP mechanism with at most this mu is "
                  "(eps, delta)-DP"}[target]
    if args.json:
        out = {"given": given_names, "computed": target, "rounding": safe, "rows": records}
        print(json.dumps(out, indent=2, allow_nan=False))
        return 0
    columns = [*given_names, target] + (["log_delta"] if target == "delta" else [])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns}
    print("  ".join(f"{c:<{widths[c]}}" for c in columns).rstrip())
    for r in rows:
        print("  ".join(f"{r[c]:<{widths[c]}}" for c in columns).rstrip())
    print(f"({safe}; checked at 40 digits)")
    return 0


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
        msg = _one_line(message)  # type: ignore[arg-type]
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


def _add_head_options(p: Any) -> None:
    """The options compose and dpsgd share: delta, failure probability, tol, output."""
    p.add_argument("--delta", type=_probability(), default=1e-5, metavar="D",
                   help="report epsilon at this delta (default 1e-5)")
    p.add_argument("--failure-prob", type=_probability(), default=1e-10, metavar="P",
                   help="end the measured head where the profile falls to P (default 1e-10)")
    p.add_argument("--tol", type=_positive_float(), default=1e-4, metavar="T",
                   help="width of the measured mu bracket (default 1e-4)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--debug", action="store_true",
                   help="show the traceback of an internal error")


def _run_compose(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    from .accounting.certified import compose
    from .profile import Profile

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
           "discretization": composed.discretization, "note": note}
    if args.json:
        stdout.write(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    how = ("certified: exact integer composition" if composed.certified else
           "NOT certified: float64 PLD, estimated rounding margin")
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
    from .cli_dpsgd import add_dpsgd_parser

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
    from .profile import Profile

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
    from .calibrate import calibrate

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

    from .parsing import parse_expression

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
    from .sweep import sweep

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
        from .plot import sweep as plot_sweep
        from .plot import sweep_map

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
    from . import risk

    if (args.expr is None) == (args.mu is None):
        raise UsageError("give exactly one of EXPR and --mu")
    fprs = _float_list("--fpr", args.fpr, 0.0, 1.0)
    priors = _float_list("--prior", args.prior, 0.0, 1.0)
    if args.mu is not None:
        x: Any = args.mu
        what = f"{args.mu:g}-GDP"
    else:
        from .profile import Profile

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
    from .audit import audit

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
