"""Exception hierarchy of symgdp.

Every error raised on purpose by symgdp derives from :class:`SymgdpError`, so a caller
(and the command line) can tell bad input or an inconclusive analysis apart from a bug.
Messages name the offending value and, where possible, say what to do.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "SymgdpError",
    "ParseError",
    "ProfileError",
    "UnboundParameterError",
    "ConvergenceError",
    "AnalysisTimeout",
    "PrecisionError",
    "DomainError",
    "SymgdpWarning",
]


class SymgdpError(Exception):
    """Base class of every error symgdp raises on purpose."""


class ParseError(SymgdpError, ValueError):
    """A user string could not be parsed safely into a SymPy expression."""


class ProfileError(SymgdpError, ValueError):
    """An expression is not a valid privacy profile (negative, complex, increasing, ≥ 1, ...)."""


class UnboundParameterError(ProfileError):
    """Numeric work was asked for while some parameters have no value."""


class ConvergenceError(SymgdpError, ArithmeticError):
    """A numeric algorithm did not reach the requested accuracy."""


class AnalysisTimeout(SymgdpError, TimeoutError):
    """A symbolic step exceeded its time budget and no honest fallback was available."""


class PrecisionError(SymgdpError, ValueError):
    """The requested accuracy is beyond what the arithmetic in use can guarantee."""


class DomainError(SymgdpError, ValueError):
    """A numeric argument lies outside the domain of the function (e.g. a negative mu).

    Attributes:
        witness: the points of a counterexample where the check that raised found one
            (``("chord", a, b, c)`` for a trade-off curve proved not convex, ...), else
            ``None``.
    """

    witness: tuple[Any, ...] | None = None


class SymgdpWarning(UserWarning):
    """A run that will work but may take long, or a result to read with care."""
