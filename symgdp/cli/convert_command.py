"""``symgdp convert``: mu <-> (eps, delta), each answer proved at 40 digits and rounded
to the safe side."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from typing import IO, Any

from symgdp.errors import ParseError

__all__ = ["_add_convert_parser"]

from symgdp.cli.shared import UsageError, _one_line

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
            from symgdp.symbolic.parsing import parse_expression

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

    from symgdp.gaussian import precise as P
    from symgdp.gaussian import vectorised as gaussian

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
            x = float(gaussian.eps_gdp(float(mu), log_delta=float(L), rounding="nearest"))
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
        x = float(gaussian.mu_gdp(float(eps), log_delta=float(L), rounding="nearest"))
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


