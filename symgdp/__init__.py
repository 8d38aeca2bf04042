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
command line.  ``symgdp.mp`` is :mod:`symgdp.precise`.  See shared/math.md and ``docs/``.
"""

from __future__ import annotations

from . import composition, conversions, mechanisms, plot, tradeoff
from . import precise as mp
from .amplify import ClipAndRectify, clip_and_rectify
from .calibrate import CalibrationResult, calibrate
from .errors import (
    AnalysisTimeout,
    ConvergenceError,
    DomainError,
    ParseError,
    PrecisionError,
    ProfileError,
    SymgdpError,
    UnboundParameterError,
)
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
from .profile import Profile
from .refine import Calibration, refine_calibration
from .report import Report, report
from .sweep import SweepTable, sweep
from .symbols import delta, eps
from .tail import Identification

__version__ = "0.1.0"

__all__ = [
    "AnalysisTimeout",
    "Calibration",
    "CalibrationResult",
    "ClipAndRectify",
    "ConvergenceError",
    "DomainError",
    "Identification",
    "Measurement",
    "ParseError",
    "PrecisionError",
    "Profile",
    "ProfileError",
    "Report",
    "SweepTable",
    "SymgdpError",
    "UnboundParameterError",
    "calibrate",
    "clip_and_rectify",
    "compose_gdp",
    "composition",
    "conversions",
    "delta",
    "delta_mu",
    "eps",
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
    "sweep",
    "tradeoff",
    "tradeoff_gdp",
]
