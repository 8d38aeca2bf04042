r"""symgdp: from a privacy guarantee written in SymPy to a Gaussian-DP statement.

The package turns a privacy profile :math:`\delta(\varepsilon)` (or a privacy–utility
trade-off equation) into a Gaussian differential privacy guarantee that is derived
symbolically, measured numerically with guaranteed error, and reported as LaTeX.

The pipeline, module by module: :mod:`~symgdp.symbols` and :mod:`~symgdp.parsing`
(ε, δ, safe parsing) → :mod:`~symgdp.profile` (the value object) → :mod:`~symgdp.refine`
and :mod:`~symgdp.tail` (partial-order refinement, tail limit) → :mod:`~symgdp.gaussian`,
:mod:`~symgdp.precise` (the GDP family in float64 and mpmath) and :mod:`~symgdp.interval`
(ball arithmetic) → :mod:`~symgdp.measure` → :mod:`~symgdp.mechanisms`,
:mod:`~symgdp.composition`, :mod:`~symgdp.conversions`, :mod:`~symgdp.tradeoff`,
:mod:`~symgdp.amplify` → :mod:`~symgdp.plot`, :func:`~symgdp.report`, the ``symgdp``
command line.  ``symgdp.mp`` is :mod:`symgdp.precise`.  See docs/theory.md and ``docs/``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> (module, attribute; None for the module itself).  Each is imported on first
# use (PEP 562), so ``import symgdp`` and ``symgdp --help`` load neither SymPy nor SciPy, and
# a stage's libraries load with the stage.  A new public name goes here and in __all__ (and
# in the TYPE_CHECKING block below, for type checkers).
_LAZY: dict[str, tuple[str, str | None]] = {
    "Accountant": ("accountant", "Accountant"),
    "AnalysisTimeout": ("errors", "AnalysisTimeout"),
    "audit": ("audit", "audit"),
    "audit_one_run": ("audit", "audit_one_run"),
    "AuditResult": ("audit", "AuditResult"),
    "Calibration": ("refine_calibration", "Calibration"),
    "calibrate": ("calibrate", "calibrate"),
    "CalibrationResult": ("calibrate", "CalibrationResult"),
    "clip_and_rectify": ("amplify", "clip_and_rectify"),
    "ClipAndRectify": ("amplify", "ClipAndRectify"),
    "compose": ("pld", "compose"),
    "compose_gdp": ("gaussian", "compose_gdp"),
    "from_dp_event": ("events", "from_dp_event"),
    "composition": ("composition", None),
    "ConvergenceError": ("errors", "ConvergenceError"),
    "conversions": ("conversions", None),
    "delta": ("symbols", "delta"),
    "delta_mu": ("gaussian", "delta_mu"),
    "DomainError": ("errors", "DomainError"),
    "dpsgd": ("dpsgd", "dpsgd"),
    "DPSGDResult": ("dpsgd", "DPSGDResult"),
    "dpsgd_sigma": ("dpsgd", "dpsgd_sigma"),
    "eps": ("symbols", "eps"),
    "eps_gdp": ("gaussian", "eps_gdp"),
    "gdpt": ("measure", "gdpt"),
    "Identification": ("tail", "Identification"),
    "log_delta_mu": ("gaussian", "log_delta_mu"),
    "measure": ("measure", "measure"),
    "Measurement": ("measure", "Measurement"),
    "mechanisms": ("mechanisms", None),
    "mp": ("precise", None),
    "mu_from_pure_dp": ("gaussian", "mu_from_pure_dp"),
    "mu_gdp": ("gaussian", "mu_gdp"),
    "parse_equation": ("parsing", "parse_equation"),
    "parse_expression": ("parsing", "parse_expression"),
    "ParseError": ("errors", "ParseError"),
    "plot": ("plot", None),
    "PrecisionError": ("errors", "PrecisionError"),
    "Profile": ("profile", "Profile"),
    "ProfileError": ("errors", "ProfileError"),
    "ProgressEvent": ("progress", "ProgressEvent"),
    "risk": ("risk", None),
    "refine_calibration": ("refine_calibration", "refine_calibration"),
    "Report": ("report", "Report"),
    "report": ("report", "report"),
    "sweep": ("sweep", "sweep"),
    "SweepTable": ("sweep", "SweepTable"),
    "SymgdpError": ("errors", "SymgdpError"),
    "SymgdpWarning": ("errors", "SymgdpWarning"),
    "tradeoff": ("tradeoff", None),
    "tradeoff_gdp": ("gaussian", "tradeoff_gdp"),
    "UnboundParameterError": ("errors", "UnboundParameterError"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = importlib.import_module(f"{__name__}.{module}")
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """The package module, keeping a public function that shares its submodule's name.

    Importing a submodule binds it on the package (``symgdp.report = <module>``); where
    the public name is a function of that submodule (``symgdp.report``, ``symgdp.measure``)
    the function is bound instead, as an eager ``from .report import report`` would.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        target = _LAZY.get(name)
        if (isinstance(value, types.ModuleType) and target is not None
                and target[1] is not None and value.__name__ == f"{__name__}.{target[0]}"):
            value = getattr(value, target[1], value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:
    from . import composition, conversions, mechanisms, plot, risk, tradeoff
    from . import precise as mp
    from .accountant import Accountant
    from .amplify import ClipAndRectify, clip_and_rectify
    from .audit import AuditResult, audit, audit_one_run
    from .calibrate import CalibrationResult, calibrate
    from .dpsgd import DPSGDResult, dpsgd, dpsgd_sigma
    from .errors import (
        AnalysisTimeout,
        ConvergenceError,
        DomainError,
        ParseError,
        PrecisionError,
        ProfileError,
        SymgdpError,
        SymgdpWarning,
        UnboundParameterError,
    )
    from .events import from_dp_event
    from .gaussian import (
        compose_gdp,
        delta_mu,
        eps_gdp,
        log_delta_mu,
        mu_from_pure_dp,
        mu_gdp,
        tradeoff_gdp,
    )
    from .measure import Measurement, gdpt, measure
    from .parsing import parse_equation, parse_expression
    from .pld import compose
    from .profile import Profile
    from .progress import ProgressEvent
    from .refine_calibration import Calibration, refine_calibration
    from .report import Report, report
    from .sweep import SweepTable, sweep
    from .symbols import delta, eps
    from .tail import Identification

__all__ = [
    "Accountant",
    "AnalysisTimeout",
    "AuditResult",
    "Calibration",
    "CalibrationResult",
    "ClipAndRectify",
    "ConvergenceError",
    "DPSGDResult",
    "DomainError",
    "Identification",
    "Measurement",
    "ParseError",
    "PrecisionError",
    "Profile",
    "ProfileError",
    "ProgressEvent",
    "Report",
    "SweepTable",
    "SymgdpError",
    "SymgdpWarning",
    "UnboundParameterError",
    "audit",
    "audit_one_run",
    "calibrate",
    "clip_and_rectify",
    "compose",
    "compose_gdp",
    "composition",
    "conversions",
    "delta",
    "delta_mu",
    "dpsgd",
    "dpsgd_sigma",
    "eps",
    "from_dp_event",
    "eps_gdp",
    "gdpt",
    "log_delta_mu",
    "measure",
    "mechanisms",
    "mp",
    "mu_from_pure_dp",
    "mu_gdp",
    "parse_equation",
    "parse_expression",
    "plot",
    "refine_calibration",
    "report",
    "risk",
    "sweep",
    "tradeoff",
    "tradeoff_gdp",
]
