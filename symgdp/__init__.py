r"""symgdp: from a privacy guarantee written in SymPy to a Gaussian-DP statement.

The package turns a privacy profile :math:`\delta(\varepsilon)` (or a privacy–utility
trade-off equation) into a Gaussian differential privacy guarantee that is derived
symbolically, measured numerically with guaranteed error, and reported as LaTeX.

The house, wing by wing in pipeline order (each imports only the wings before it):
:mod:`~symgdp.symbolic` (symbols, safe parsing, time budgets) → :mod:`~symgdp.numerics`
(directed rounding, balls) → :mod:`~symgdp.gaussian` (the GDP family in float64, mpmath
and balls) → :mod:`~symgdp.evaluation` → :mod:`~symgdp.notions` (RDP, zCDP, f-DP, bands,
groups, conversions) → :mod:`~symgdp.refinement` and :mod:`~symgdp.tail` (partial-order
refinement, tail limit) → :mod:`~symgdp.measurement` (certified brackets, the whole line)
→ :mod:`~symgdp.pld` (the PLD engine) → :mod:`~symgdp.profile` (the value object) and
:mod:`~symgdp.mechanisms` (the catalogue) → :mod:`~symgdp.noise` (profiles derived from
a noise density) → :mod:`~symgdp.training` (DP-SGD) →
:mod:`~symgdp.accounting` (composition, events) → :mod:`~symgdp.planning` (calibration,
sweeps) → :mod:`~symgdp.attacks` (risk, audits) → :mod:`~symgdp.present` (reports,
figures) → :mod:`~symgdp.cli`.  See docs/architecture.md.

Exports every public name (listed in ``__all__``), each imported on first use:
``symgdp.mp`` is :mod:`symgdp.gaussian.precise`, ``symgdp.tradeoff`` is
:mod:`symgdp.notions.fdp`, ``symgdp.composition`` is :mod:`symgdp.accounting.pure_dp`.
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
    "Accountant": ("training.accountant", "Accountant"),
    "additive_noise": ("noise.additive", "additive_noise"),
    "AnalysisTimeout": ("errors", "AnalysisTimeout"),
    "audit": ("attacks.audit", "audit"),
    "audit_one_run": ("attacks.audit", "audit_one_run"),
    "AuditResult": ("attacks.audit", "AuditResult"),
    "Calibration": ("refinement.utility", "Calibration"),
    "calibrate": ("planning.calibrate", "calibrate"),
    "CalibrationResult": ("planning.calibrate", "CalibrationResult"),
    "clip_and_rectify": ("planning.amplify", "clip_and_rectify"),
    "ClipAndRectify": ("planning.amplify", "ClipAndRectify"),
    "compose": ("accounting.certified", "compose"),
    "compose_gdp": ("gaussian.vectorised", "compose_gdp"),
    "from_dp_event": ("accounting.events", "from_dp_event"),
    "composition": ("accounting.pure_dp", None),
    "ConvergenceError": ("errors", "ConvergenceError"),
    "conversions": ("notions.conversions", None),
    "delta": ("symbolic.symbols", "delta"),
    "delta_mu": ("gaussian.vectorised", "delta_mu"),
    "DomainError": ("errors", "DomainError"),
    "dpsgd": ("training.dpsgd", "dpsgd"),
    "DPSGDResult": ("training.dpsgd", "DPSGDResult"),
    "dpsgd_sigma": ("training.sigma", "dpsgd_sigma"),
    "eps": ("symbolic.symbols", "eps"),
    "eps_gdp": ("gaussian.vectorised", "eps_gdp"),
    "gdpt": ("measurement.measure", "gdpt"),
    "Identification": ("tail.limit", "Identification"),
    "log_delta_mu": ("gaussian.vectorised", "log_delta_mu"),
    "measure": ("measurement.measure", "measure"),
    "Measurement": ("measurement.measure", "Measurement"),
    "mechanisms": ("mechanisms", None),
    "mp": ("gaussian.precise", None),
    "mu_from_pure_dp": ("gaussian.vectorised", "mu_from_pure_dp"),
    "mu_gdp": ("gaussian.vectorised", "mu_gdp"),
    "parse_equation": ("symbolic.parsing", "parse_equation"),
    "parse_expression": ("symbolic.parsing", "parse_expression"),
    "ParseError": ("errors", "ParseError"),
    "plot": ("present.plot", None),
    "PrecisionError": ("errors", "PrecisionError"),
    "Profile": ("profile", "Profile"),
    "ProfileError": ("errors", "ProfileError"),
    "ProgressEvent": ("present.progress", "ProgressEvent"),
    "risk": ("attacks.risk", None),
    "refine_calibration": ("refinement.utility", "refine_calibration"),
    "Report": ("present.report", "Report"),
    "report": ("present.report", "report"),
    "sweep": ("planning.sweep", "sweep"),
    "SweepTable": ("planning.sweep", "SweepTable"),
    "SymgdpError": ("errors", "SymgdpError"),
    "SymgdpWarning": ("errors", "SymgdpWarning"),
    "tradeoff": ("notions.fdp", None),
    "tradeoff_gdp": ("gaussian.vectorised", "tradeoff_gdp"),
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
    from symgdp import mechanisms
    from symgdp.accounting import pure_dp as composition
    from symgdp.accounting.certified import compose
    from symgdp.accounting.events import from_dp_event
    from symgdp.attacks import risk
    from symgdp.attacks.audit import AuditResult, audit, audit_one_run
    from symgdp.errors import (
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
    from symgdp.gaussian import precise as mp
    from symgdp.gaussian.vectorised import (
        compose_gdp,
        delta_mu,
        eps_gdp,
        log_delta_mu,
        mu_from_pure_dp,
        mu_gdp,
        tradeoff_gdp,
    )
    from symgdp.measurement.measure import Measurement, gdpt, measure
    from symgdp.noise.additive import additive_noise
    from symgdp.notions import conversions
    from symgdp.notions import fdp as tradeoff
    from symgdp.planning.amplify import ClipAndRectify, clip_and_rectify
    from symgdp.planning.calibrate import CalibrationResult, calibrate
    from symgdp.planning.sweep import SweepTable, sweep
    from symgdp.present import plot
    from symgdp.present.progress import ProgressEvent
    from symgdp.present.report import Report, report
    from symgdp.profile import Profile
    from symgdp.refinement.utility import Calibration, refine_calibration
    from symgdp.symbolic.parsing import parse_equation, parse_expression
    from symgdp.symbolic.symbols import delta, eps
    from symgdp.tail.limit import Identification
    from symgdp.training.accountant import Accountant
    from symgdp.training.dpsgd import DPSGDResult, dpsgd
    from symgdp.training.sigma import dpsgd_sigma

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
    "additive_noise",
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
