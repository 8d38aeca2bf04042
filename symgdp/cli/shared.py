"""What the command line's subcommands share: the one-line usage error, checked option
types, ``--set NAME=VALUE`` parsing, and one-line error messages."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from symgdp.errors import ParseError

__all__ = ["UsageError"]


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


def _parse_values(assignments: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings to names and SymPy numbers (parsed safely)."""
    from symgdp.symbolic.parsing import parse_expression
    from symgdp.symbolic.symbols import ALIASES, delta, eps

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


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


