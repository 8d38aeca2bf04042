r"""Arbitrary-precision counterparts of :mod:`symgdp.gaussian` (mpmath).

These are the reference implementations: slow, scalar, and accurate to the requested
number of decimal digits ``dps``.  Precision is always scoped with ``mpmath.workdps``;
the global ``mpmath.mp.dps`` is never changed.  The module is also available as
``symgdp.mp``::

    >>> import symgdp
    >>> symgdp.mp.delta_mu(40, 1, dps=20)  # doctest: +ELLIPSIS
    mpf('3.9...e-343')

Cancellation in :math:`\delta_\mu(\varepsilon) = \Phi(a) - e^{\varepsilon}\Phi(b)` is
measured at run time and the working precision is raised until the requested digits
survive, so the results hold deep in the tail (:math:`\delta_1(2000)`).
"""

from __future__ import annotations

from typing import Any

import mpmath

from .errors import ConvergenceError, DomainError

__all__ = [
    "delta_mu",
    "log_delta_mu",
    "mu_gdp",
    "eps_gdp",
    "mu_from_pure_dp",
    "tradeoff_gdp",
    "compose_gdp",
]

_GUARD = 15  # extra decimal digits carried beyond the requested precision


def _mpf(x: Any, name: str) -> mpmath.mpf:
    try:
        v = mpmath.mpf(x)
    except (TypeError, ValueError) as exc:
        raise DomainError(f"{name} must be a real number, got {x!r}") from exc
    if mpmath.isnan(v):
        raise DomainError(f"{name} is NaN")
    return v


def _delta_raw(eps: mpmath.mpf, mu: mpmath.mpf, dps: int) -> mpmath.mpf:
    """delta_mu(eps) at `dps` correct digits, raising precision against cancellation."""
    work = dps + _GUARD
    while True:
        with mpmath.workdps(work):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a = -e / m + m / 2
            b = -e / m - m / 2
            first = mpmath.ncdf(a)
            second = mpmath.exp(e) * mpmath.ncdf(b)
            d = first - second
            if d > 0:
                lost = int(mpmath.log10(first / d)) + 1
                if lost + dps + 5 <= work:
                    return +d
                work = dps + lost + _GUARD
                continue
            work *= 2
            if work > 100000:
                raise ConvergenceError(f"delta_mu({eps}, {mu}): cancellation too severe")


def delta_mu(eps: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`\delta_\mu(\varepsilon)` to ``dps`` significant digits (mpmath)."""
    e, m = _mpf(eps, "eps"), _mpf(mu, "mu")
    if e < 0 or m < 0:
        raise DomainError(f"eps and mu must be >= 0, got eps={eps!r}, mu={mu!r}")
    with mpmath.workdps(dps):
        if m == 0 or mpmath.isinf(e):
            return mpmath.mpf(0) if not mpmath.isinf(m) else mpmath.mpf("nan")
        if mpmath.isinf(m):
            return mpmath.mpf(1)
    d = _delta_raw(e, m, dps)
    with mpmath.workdps(dps):
        return +d


def log_delta_mu(eps: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`\log\delta_\mu(\varepsilon)` to ``dps`` significant digits (mpmath)."""
    d = delta_mu(eps, mu, dps=dps + 5)
    with mpmath.workdps(dps + 5):
        r = mpmath.log(d) if d > 0 else mpmath.mpf("-inf")
    with mpmath.workdps(dps):
        return +r


def _solve_monotone(f: Any, lo: mpmath.mpf, hi: mpmath.mpf, dps: int) -> mpmath.mpf:
    """Root of an increasing f on [lo, hi] (f(lo) < 0 < f(hi)) by bisection + secant."""
    with mpmath.workdps(dps + _GUARD):
        flo, fhi = f(lo), f(hi)
        if not (flo <= 0 <= fhi):
            raise ConvergenceError(f"root not bracketed in [{lo}, {hi}]")
        tol = mpmath.mpf(10) ** (-(dps + 3))
        for _ in range(20 * (dps + _GUARD)):
            if hi - lo <= tol * abs(hi):
                return (lo + hi) / 2
            # Illinois-style false position, with a bisection fallback
            x = hi - fhi * (hi - lo) / (fhi - flo) if fhi != flo else (lo + hi) / 2
            if not (lo < x < hi):
                x = (lo + hi) / 2
            fx = f(x)
            if fx == 0:
                return x
            if fx < 0:
                lo, flo = x, fx
                fhi /= 2
            else:
                hi, fhi = x, fx
                flo /= 2
            mid = (lo + hi) / 2
            fm = f(mid)
            if fm < 0:
                lo, flo = mid, fm
            else:
                hi, fhi = mid, fm
        raise ConvergenceError("monotone root finding did not converge")


def mu_gdp(eps: Any, delta: Any = None, *, log_delta: Any = None, dps: int = 40) -> mpmath.mpf:
    r""":math:`\mu_{GDP}(\varepsilon, \delta)` to ``dps`` digits.

    Give exactly one of ``delta`` and ``log_delta``.
    """
    if (delta is None) == (log_delta is None):
        raise TypeError("give exactly one of delta= and log_delta=")
    e = _mpf(eps, "eps")
    if e < 0:
        raise DomainError(f"eps must be >= 0, got {eps!r}")
    with mpmath.workdps(dps + _GUARD):
        if delta is not None:
            d = _mpf(delta, "delta")
            if d < 0 or d > 1:
                raise DomainError(f"delta must lie in [0, 1], got {delta!r}")
            L = mpmath.log(d) if d > 0 else mpmath.mpf("-inf")
        else:
            L = _mpf(log_delta, "log_delta")
            if L > 0:
                raise DomainError(f"log_delta must be <= 0, got {log_delta!r}")
        if mpmath.isinf(L):
            return mpmath.mpf(0)
        if L == 0 or mpmath.isinf(e):
            return mpmath.mpf("inf")

        def f(m: mpmath.mpf) -> mpmath.mpf:
            return log_delta_mu(e, m, dps=dps + _GUARD) - L

        # lower bound from Phi(mu/2 - eps/mu) >= delta_mu(eps); then double for the upper
        q = mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.exp(L) - 1) if L > -dps else \
            -mpmath.sqrt(-2 * L)
        lo = q + mpmath.sqrt(q * q + 2 * e)
        if not lo > 0:
            lo = mpmath.mpf(10) ** (-(dps + 5))
        while f(lo) > 0:
            lo /= 2
        hi = 2 * lo
        while f(hi) < 0:
            lo, hi = hi, 2 * hi
        r = _solve_monotone(f, lo, hi, dps)
    with mpmath.workdps(dps):
        return +r


def eps_gdp(mu: Any, delta: Any = None, *, log_delta: Any = None, dps: int = 40) -> mpmath.mpf:
    r"""The :math:`\varepsilon \ge 0` with :math:`\delta_\mu(\varepsilon) = \delta`.

    Accurate to ``dps`` digits; give exactly one of ``delta`` and ``log_delta``.
    """
    if (delta is None) == (log_delta is None):
        raise TypeError("give exactly one of delta= and log_delta=")
    m = _mpf(mu, "mu")
    if m < 0:
        raise DomainError(f"mu must be >= 0, got {mu!r}")
    with mpmath.workdps(dps + _GUARD):
        if delta is not None:
            d = _mpf(delta, "delta")
            if d < 0 or d > 1:
                raise DomainError(f"delta must lie in [0, 1], got {delta!r}")
            L = mpmath.log(d) if d > 0 else mpmath.mpf("-inf")
        else:
            L = _mpf(log_delta, "log_delta")
        if m == 0:
            return mpmath.mpf(0)
        if log_delta_mu(0, m, dps=dps + _GUARD) <= L:
            return mpmath.mpf(0)
        if mpmath.isinf(L):
            return mpmath.mpf("inf")

        def f(e: mpmath.mpf) -> mpmath.mpf:
            return L - log_delta_mu(e, m, dps=dps + _GUARD)  # increasing in eps

        hi = mpmath.mpf(1)
        while f(hi) < 0:
            hi *= 2
        r = _solve_monotone(f, mpmath.mpf(0), hi, dps)
    with mpmath.workdps(dps):
        return +r


def mu_from_pure_dp(eps0: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`-2\Phi^{-1}(1/(1+e^{\varepsilon_0}))` to ``dps`` digits."""
    e = _mpf(eps0, "eps0")
    if e < 0:
        raise DomainError(f"eps0 must be >= 0, got {eps0!r}")
    with mpmath.workdps(dps + _GUARD):
        p = 1 / (1 + mpmath.exp(e))
        r = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)
    with mpmath.workdps(dps):
        return +r


def tradeoff_gdp(alpha: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)` to ``dps`` digits."""
    al, m = _mpf(alpha, "alpha"), _mpf(mu, "mu")
    with mpmath.workdps(dps + _GUARD):
        if al <= 0:
            return mpmath.mpf(1)
        if al >= 1:
            return mpmath.mpf(0)
        z = -mpmath.sqrt(2) * mpmath.erfinv(2 * al - 1)
        r = mpmath.ncdf(z - m)
    with mpmath.workdps(dps):
        return +r


def compose_gdp(*mus: Any, dps: int = 40) -> mpmath.mpf:
    r""":math:`\sqrt{\sum_i \mu_i^2}` to ``dps`` digits."""
    with mpmath.workdps(dps + 5):
        r = mpmath.sqrt(mpmath.fsum(_mpf(m, "mu") ** 2 for m in mus))
    with mpmath.workdps(dps):
        return +r
