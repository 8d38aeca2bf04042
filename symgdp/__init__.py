r"""symgdp: from a privacy guarantee written in SymPy to a Gaussian-DP statement.

The package turns a privacy profile :math:`\delta(\varepsilon)` (or a privacy–utility
trade-off equation) into a Gaussian differential privacy guarantee that is derived
symbolically, measured numerically with guaranteed error, and reported as LaTeX.
See ``docs/`` and shared/math.md for the mathematics.
"""

from __future__ import annotations

from . import precise as mp
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
from .profile import Profile
from .symbols import delta, eps

__version__ = "0.1.0"

__all__ = [
    "AnalysisTimeout",
    "ConvergenceError",
    "DomainError",
    "ParseError",
    "PrecisionError",
    "Profile",
    "ProfileError",
    "SymgdpError",
    "UnboundParameterError",
    "compose_gdp",
    "delta",
    "delta_mu",
    "eps",
    "eps_gdp",
    "log_delta_mu",
    "mp",
    "mu_from_pure_dp",
    "mu_gdp",
    "tradeoff_gdp",
]
