r"""Independent mpmath references for the GDP family, shared by the tests and the benchmark.

:math:`\delta_\mu(\varepsilon) = \Phi(a) - e^{\varepsilon}\Phi(b)`, with
:math:`a = -\varepsilon/\mu + \mu/2` and :math:`b = -\varepsilon/\mu - \mu/2`
(theory §3), is written here from the textbook formula with ``mpmath.erfc``, at a
working precision raised until the cancellation between the two terms is covered; its
derivatives and :math:`\Phi^{-1}` come from their closed forms.

This module is the *independent* reference: it must never import :mod:`symgdp` (in
particular not :mod:`symgdp.precise`, which uses ``mpmath.ncdf`` and is itself checked
against :func:`ref_log_delta`).  It is a plain helper, not a test file: the tests import
it as ``reference`` (pytest puts ``tests/`` on ``sys.path``, the folder having no
``__init__.py``), and ``benchmarks/bench_gdp.py`` puts ``tests/`` on ``sys.path`` itself.
"""

from __future__ import annotations

from typing import Any

import mpmath

REF_DPS = 40  # significant digits of the reference


def ref_log_delta(eps: Any, mu: Any, dps: int = REF_DPS) -> mpmath.mpf:
    r"""log δ_μ(ε) to ``dps`` digits from Φ(a) − e^ε Φ(b) with mpmath.erfc.

    The working precision is raised until the digits lost to the cancellation between
    the two terms are covered; when δ > 1/2 the logarithm is taken as
    log1p(−(Φ(−a) + e^ε Φ(b))) so that log δ keeps its relative accuracy even when δ is
    within 1e-50 of 1 (log δ ≈ δ − 1 would otherwise lose all its digits).

    At ε = 0, δ_μ(0) = erf(μ/(2√2)):

    >>> with mpmath.workdps(60):
    ...     exact = mpmath.log(mpmath.erf(mpmath.mpf(3) / (2 * mpmath.sqrt(2))))
    ...     rel_err = abs(ref_log_delta(0, 3) / exact - 1)
    >>> bool(rel_err < mpmath.mpf(10) ** -39)
    True
    """
    work = dps + 20
    while True:
        with mpmath.workdps(work):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a, b = -e / m + m / 2, -e / m - m / 2
            r2 = mpmath.sqrt(2)
            p = mpmath.erfc(-a / r2) / 2
            q = mpmath.exp(e) * mpmath.erfc(-b / r2) / 2
            d = p - q
            if d > 0:
                lost = int(mpmath.log10(p / d)) + 1
                if lost + dps + 10 <= work:
                    if d > 0.5:
                        out = mpmath.log1p(-(mpmath.erfc(a / r2) / 2 + q))
                    else:
                        out = mpmath.log(d)
                    with mpmath.workdps(dps):
                        return +out
                work = dps + lost + 20
            else:
                work *= 2
            if work > 20000:
                raise AssertionError(f"reference failed at eps={eps}, mu={mu}")


def ref_dlog_dmu(eps: float, mu: float, log_delta: mpmath.mpf) -> float:
    r"""∂ log δ_μ(ε)/∂μ = φ(ε/μ − μ/2)/δ_μ(ε) (theory §3), for condition numbers."""
    with mpmath.workdps(REF_DPS):
        a = mpmath.mpf(mu) / 2 - mpmath.mpf(eps) / mpmath.mpf(mu)
        return float(mpmath.exp(-a * a / 2 - mpmath.log(2 * mpmath.pi) / 2 - log_delta))


def ref_dlog_deps(eps: float, mu: float, log_delta: mpmath.mpf) -> float:
    r"""∂ log δ_μ(ε)/∂ε = −e^ε Φ(−ε/μ − μ/2)/δ_μ(ε) (theory §3), for condition numbers."""
    with mpmath.workdps(REF_DPS):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        b = -e / m - m / 2
        return float(-mpmath.exp(e + mpmath.log(mpmath.ncdf(b)) - log_delta))


def ref_ndtri(p: Any) -> mpmath.mpf:
    r"""Φ⁻¹(p) at 40 digits, with the working precision covering 2p − 1 for tiny p."""
    p = mpmath.mpf(p)
    with mpmath.workdps(REF_DPS + 20 + int(max(0, -mpmath.log10(p)))):
        return mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)
