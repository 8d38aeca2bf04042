r"""Conversions between privacy notions and noise calibrations.

* Analytic Gaussian calibration (Balle & Wang, ICML 2018, Thm 8; theory §3): the
  Gaussian mechanism with sensitivity :math:`\Delta` and noise :math:`\sigma` is exactly
  :math:`(\Delta/\sigma)`-GDP, so the smallest :math:`\sigma` giving
  :math:`(\varepsilon, \delta)`-DP is :math:`\sigma = \Delta/\mu_{GDP}(\varepsilon, \delta)`.
* Classical calibration (Dwork & Roth 2014, Thm A.1), proven for
  :math:`0 < \varepsilon < 1`: :math:`\sigma = \Delta\sqrt{2\log(1.25/\delta)}/\varepsilon`.
* Pure DP to Rényi DP: an :math:`\varepsilon`-DP mechanism is
  :math:`(\alpha, \hat\varepsilon(\alpha))`-RDP with

  .. math:: \hat\varepsilon(\alpha) = \varepsilon - \frac{1}{\alpha - 1}
            \log\frac{1 + e^{-\varepsilon}}{1 + e^{-(2\alpha - 1)\varepsilon}},

  the Rényi divergence of randomized response, hence tight (Mironov 2017, Prop. 5 gives
  the bound; Steinke 2022, "Composition of Differential Privacy & Privacy Amplification by
  Subsampling", §4, the closed form).  At :math:`\alpha = 1` it is the KL divergence
  :math:`\varepsilon\tanh(\varepsilon/2)`.
* Pure DP to zCDP: :math:`\rho = \sup_{\alpha > 1}\hat\varepsilon(\alpha)/\alpha` is
  attained as :math:`\alpha \downarrow 1`, so :math:`\rho = \varepsilon\tanh(\varepsilon/2)`
  (tight), against the folklore :math:`\varepsilon^2/2` (Bun & Steinke 2016, Prop. 1.4).
* zCDP to :math:`(\varepsilon, \delta)`-DP (Bun & Steinke 2016, Prop. 1.3):
  :math:`\varepsilon = \rho + 2\sqrt{\rho\log(1/\delta)}`.

Numbers in give floats (arrays in, arrays out); closed-form conversions also accept SymPy
symbols and then return the SymPy expression.  Every float result is rounded to the safe
side of the exact value at the given floats: noise levels :math:`\sigma`, Rényi and zCDP
parameters and :math:`\varepsilon` are upper bounds (each docstring says so).  For
GDP ↔ :math:`(\varepsilon, \delta)` use :func:`symgdp.gaussian.vectorised.mu_gdp` and
:func:`symgdp.gaussian.vectorised.eps_gdp` directly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from symgdp.errors import DomainError
from symgdp.gaussian.core import two_prod
from symgdp.gaussian.vectorised import mu_gdp
from symgdp.notions.renyi import _pure_dp_rdp_up, _up

__all__ = [
    "analytic_gaussian_sigma",
    "classical_gaussian_sigma",
    "rdp_of_pure_dp",
    "zcdp_of_pure_dp",
    "zcdp_to_dp",
]


def _is_symbolic(*args: Any) -> bool:
    return any(isinstance(a, sympy.Basic) and not a.is_number for a in args)


def _arrays(*args: Any) -> tuple[bool, list[np.ndarray]]:
    scalar = all(np.ndim(a) == 0 for a in args)
    arrs = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
    return scalar, [np.array(a) for a in arrs]


def _finish(scalar: bool, x: np.ndarray) -> Any:
    return float(x) if scalar else x


def _require(name: str, x: np.ndarray, ok: np.ndarray, what: str) -> None:
    bad = ~ok
    if np.any(bad):
        raise DomainError(f"{name} must be {what}, got {x[bad].flat[0]!r}")


def analytic_gaussian_sigma(eps: Any, delta: Any, sensitivity: Any = 1.0) -> Any:
    r"""Smallest Gaussian noise :math:`\sigma = \Delta/\mu_{GDP}(\varepsilon, \delta)` that
    makes a query of sensitivity :math:`\Delta` :math:`(\varepsilon, \delta)`-DP (exact;
    Balle & Wang 2018).  :math:`\delta \ge 1` needs no noise (0).

    Rounded up: :math:`\Delta` divided by a lower bound on :math:`\mu_{GDP}`
    (``mu_gdp(..., rounding="down")``), then one ulp up, so the noise is never below the
    exact calibration (and within about 1e-13 relative of it).

    Example:
        >>> round(analytic_gaussian_sigma(1.0, 1e-5), 10)
        3.7306316348
    """
    if all(type(a) in (float, int) for a in (eps, delta, sensitivity)):
        # scalar fast path (no array wrapping): the same checks and the same mu_gdp
        e0, d0, s0 = float(eps), float(delta), float(sensitivity)
        if e0 >= 0 and 0 < d0 <= 1 and 0 < s0 < math.inf:
            mu = mu_gdp(e0, d0, rounding="down")
            if mu == math.inf:
                return 0.0
            return math.nextafter(s0 / mu, math.inf) if mu > 0 else math.inf
    scalar, (e, d, s) = _arrays(eps, delta, sensitivity)
    _require("eps", e, e >= 0, ">= 0")
    _require("delta", d, (d > 0) & (d <= 1), "in (0, 1]")
    _require("sensitivity", s, (s > 0) & np.isfinite(s), "finite and > 0")
    with np.errstate(divide="ignore"):
        mu = mu_gdp(e, d, rounding="down")
        out = np.where(np.isinf(mu), 0.0, np.nextafter(s / mu, np.inf))
    return _finish(scalar, np.asarray(out, dtype=np.float64))


def classical_gaussian_sigma(eps: Any, delta: Any, sensitivity: Any = 1.0) -> Any:
    r"""Classical calibration :math:`\sigma = \Delta\sqrt{2\log(1.25/\delta)}/\varepsilon`
    (Dwork & Roth 2014, Thm A.1).  The theorem needs :math:`0 < \varepsilon < 1`; outside
    that range this raises :class:`~symgdp.errors.DomainError` rather than return a noise
    level that may not be private.  Always at least :func:`analytic_gaussian_sigma`.
    Rounded up (at most 12 u above the formula's value; :math:`\log(1.25/\delta)` is
    formed as :math:`\log 1.25 - \log\delta`, so a subnormal :math:`\delta` does not
    overflow).

    Example:
        >>> round(classical_gaussian_sigma(0.5, 1e-5), 10)
        9.6896105252
    """
    if _is_symbolic(eps, delta, sensitivity):
        e, d, s = (sympy.sympify(a) for a in (eps, delta, sensitivity))
        return s * sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / d)) / e
    scalar, (e, d, s) = _arrays(eps, delta, sensitivity)
    _require("eps", e, (e > 0) & (e < 1), "in (0, 1) for the classical calibration "
             "(Dwork & Roth Thm A.1); use analytic_gaussian_sigma beyond")
    _require("delta", d, (d > 0) & (d < 1), "in (0, 1)")
    _require("sensitivity", s, (s > 0) & np.isfinite(s), "finite and > 0")
    # log(1.25/d) >= log 1.25 = 0.22: the subtraction has no cancellation and the whole
    # chain (log, subtraction, sqrt, product, quotient) stays within 12 u
    val = s * np.sqrt(2.0 * (math.log(1.25) - np.log(d))) / e
    return _finish(scalar, _up(val, 12.0))


def rdp_of_pure_dp(eps: Any, alpha: Any) -> Any:
    r"""Tight Rényi-DP curve :math:`\hat\varepsilon(\alpha)` of an
    :math:`\varepsilon`-DP mechanism (the Rényi divergence of randomized response).

    :math:`\alpha = 1` gives the KL divergence :math:`\varepsilon\tanh(\varepsilon/2)` and
    :math:`\alpha = \infty` gives :math:`\varepsilon`.  Evaluated as
    :math:`\log(1 + 2\sinh^2(w/2) + \tanh(\varepsilon/2)\sinh w)/(\alpha - 1)`,
    :math:`w = (\alpha - 1)\varepsilon`, a sum of non-negative terms (see
    :func:`symgdp.notions.renyi.pure_dp_rdp`), so it does not cancel near :math:`\alpha = 1` or for
    tiny :math:`\varepsilon`.  Rounded up: never below the exact divergence, at most
    :math:`\varepsilon`, and within 3e-15 relative of the exact value.

    Example:
        >>> round(rdp_of_pure_dp(1.0, 2.0), 12)  # log(cosh(3/2)/cosh(1/2))
        0.735325664056
    """
    if _is_symbolic(eps, alpha):
        e, a = sympy.sympify(eps), sympy.sympify(alpha)
        return e - sympy.log((1 + sympy.exp(-e)) / (1 + sympy.exp(-(2 * a - 1) * e))) / (a - 1)
    scalar, (e, a) = _arrays(eps, alpha)
    _require("eps", e, (e >= 0) & np.isfinite(e), "finite and >= 0")
    _require("alpha", a, a >= 1, ">= 1")
    out = np.empty(e.shape)
    one, inf = a == 1, np.isinf(a)
    gen = ~(one | inf)
    out[one] = np.minimum(_up(e[one] * np.tanh(e[one] / 2.0), 4.0), e[one])
    out[inf] = e[inf]
    if np.any(gen):
        out[gen] = _pure_dp_rdp_up(e[gen], a[gen])
    return _finish(scalar, out)


def zcdp_of_pure_dp(eps: Any, *, tight: bool = True) -> Any:
    r"""zCDP parameter :math:`\rho` of an :math:`\varepsilon`-DP mechanism:
    :math:`\varepsilon\tanh(\varepsilon/2)` (tight, the limit of
    :math:`\hat\varepsilon(\alpha)/\alpha` as :math:`\alpha \downarrow 1`), or with
    ``tight=False`` the folklore :math:`\varepsilon^2/2` (Bun & Steinke 2016, Prop. 1.4).
    Rounded up (a few u above the exact value; a square that underflows becomes the
    smallest subnormal, never 0 for :math:`\varepsilon > 0`).

    Example:
        >>> round(zcdp_of_pure_dp(1.0), 12), zcdp_of_pure_dp(1.0, tight=False)
        (0.46211715726, 0.5)
    """
    if _is_symbolic(eps):
        e = sympy.sympify(eps)
        return e * sympy.tanh(e / 2) if tight else e**2 / 2
    scalar, (e,) = _arrays(eps)
    _require("eps", e, (e >= 0) & np.isfinite(e), "finite and >= 0")
    if tight:
        val = _up(e * np.tanh(e / 2.0), 4.0)
    else:
        # e*e with its exact rounding error (Dekker): halving is exact above the
        # subnormals, so only a product rounded down (or a subnormal) moves one ulp up
        p, perr = two_prod(e, e)
        val = p / 2.0
        val = np.where((perr > 0) | (p < 4.0 * np.finfo(np.float64).tiny),
                       np.nextafter(val, np.inf), val)
    return _finish(scalar, np.where(e == 0, 0.0, val))


def zcdp_to_dp(rho: Any, delta: Any) -> Any:
    r""":math:`\rho`-zCDP implies :math:`(\rho + 2\sqrt{\rho\log(1/\delta)}, \delta)`-DP
    (Bun & Steinke 2016, Prop. 1.3).  Rounded up (within 8 u of the formula); the
    square root is taken factor by factor, so :math:`\rho\log(1/\delta)` cannot
    underflow.

    Example:
        >>> round(zcdp_to_dp(0.5, 1e-5), 10)
        5.2985259122
    """
    if _is_symbolic(rho, delta):
        r, d = sympy.sympify(rho), sympy.sympify(delta)
        return r + 2 * sympy.sqrt(r * sympy.log(1 / d))
    scalar, (r, d) = _arrays(rho, delta)
    _require("rho", r, (r >= 0) & np.isfinite(r), "finite and >= 0")
    _require("delta", d, (d > 0) & (d <= 1), "in (0, 1]")
    val = r + 2.0 * (np.sqrt(r) * np.sqrt(-np.log(d)))
    return _finish(scalar, np.where(val == 0, 0.0, _up(val, 8.0)))  # 0 only when exact
