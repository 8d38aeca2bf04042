r"""Arbitrary-precision counterparts of :mod:`symgdp.gaussian.vectorised` (mpmath).

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

from symgdp.errors import ConvergenceError, DomainError

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
_LOG10_2 = 0.30103  # above log10(2) = 0.30102999...: the digit counts it gives are upper bounds


def _mpf(x: Any, name: str, dps: int = 40) -> mpmath.mpf:
    """Convert at the working precision (a decimal string keeps all its digits)."""
    with mpmath.workdps(dps + _GUARD):
        try:
            v = mpmath.mpf(x)
        except (TypeError, ValueError) as exc:
            raise DomainError(f"{name} must be a real number, got {x!r}") from exc
    if mpmath.isnan(v):
        raise DomainError(f"{name} is NaN")
    return v


def _delta_parts(eps: mpmath.mpf, mu: mpmath.mpf, dps: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(delta_mu(eps), 1 - delta_mu(eps)), each to `dps` correct digits.

    delta = Phi(a) - e^eps Phi(b) cancels in the tail; 1 - delta = Phi(-a) + e^eps Phi(b)
    is a sum of positive terms.  The working precision is raised by the digits the
    subtraction loses, measured at run time.
    """
    work = dps + _GUARD
    if eps == 0:
        # delta_mu(0) = Phi(mu/2) - Phi(-mu/2) = erf(mu/(2 sqrt 2)) and 1 - delta_mu(0) =
        # erfc(mu/(2 sqrt 2)): no cancellation (the difference lost -log10(mu) digits:
        # 8,700 of them, seconds of work, at log delta = -2e4)
        with mpmath.workdps(work):
            x = mpmath.mpf(mu) / (2 * mpmath.sqrt(2))
            return mpmath.erf(x), mpmath.erfc(x)
    while True:
        with mpmath.workdps(work):
            e, m = mpmath.mpf(eps), mpmath.mpf(mu)
            a = -e / m + m / 2
            b = -e / m - m / 2
            first = mpmath.ncdf(a)
            second = mpmath.exp(e) * mpmath.ncdf(b)
            d = first - second
            comp = mpmath.ncdf(-a) + second
            if d > 0:
                # digits lost, bounded above from the binary exponents alone:
                # |first| <= 2^mag(first) and d > 2^(mag(d) - 3) (mag is never more than 2
                # above the optimal bound), so first/d < 2^(mag(first) - mag(d) + 3).  A
                # log10 at the working precision gave the same digit or one less, but at
                # thousands of digits it cost more than the ncdf terms themselves
                lost = int((mpmath.mag(first) - mpmath.mag(d) + 3) * _LOG10_2) + 1
                if lost + dps + 5 <= work:
                    return +d, +comp
                work = dps + lost + _GUARD
                continue
            work *= 2
            if work > 100000:
                raise ConvergenceError(f"delta_mu({eps}, {mu}): cancellation too severe")


def _edge(e: mpmath.mpf, m: mpmath.mpf) -> mpmath.mpf | None:
    if m == 0 or (mpmath.isinf(e) and not mpmath.isinf(m)):
        return mpmath.mpf(0)
    if mpmath.isinf(m):
        return mpmath.mpf(1) if not mpmath.isinf(e) else mpmath.mpf("nan")
    return None


def delta_mu(eps: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`\delta_\mu(\varepsilon)` to ``dps`` significant digits (mpmath).

    Raises:
        DomainError: for negative or NaN input.
    """
    e, m = _mpf(eps, "eps", dps), _mpf(mu, "mu", dps)
    if e < 0 or m < 0:
        raise DomainError(f"eps and mu must be >= 0, got eps={eps!r}, mu={mu!r}")
    edge = _edge(e, m)
    if edge is not None:
        return edge
    d, _ = _delta_parts(e, m, dps)
    with mpmath.workdps(dps):
        return +d


def log_delta_mu(eps: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`\log\delta_\mu(\varepsilon)` to ``dps`` significant digits (mpmath).

    Near :math:`\delta = 1` it is computed as :math:`\log(1 - c)` from the complement
    :math:`c = \Phi(-a) + e^{\varepsilon}\Phi(b)`, so tiny negative logs keep their digits.
    """
    e, m = _mpf(eps, "eps", dps), _mpf(mu, "mu", dps)
    if e < 0 or m < 0:
        raise DomainError(f"eps and mu must be >= 0, got eps={eps!r}, mu={mu!r}")
    edge = _edge(e, m)
    if edge is not None:
        with mpmath.workdps(dps):
            return mpmath.log(edge) if edge > 0 else (
                mpmath.mpf("-inf") if edge == 0 else edge)
    d, comp = _delta_parts(e, m, dps + 5)
    with mpmath.workdps(dps + _GUARD):
        r = mpmath.log(d) if d < mpmath.mpf(1) / 2 else mpmath.log1p(-comp)
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


def _log_input(delta: Any, log_delta: Any, dps: int) -> mpmath.mpf:
    """log(delta) from exactly one of delta / log_delta, validated."""
    if (delta is None) == (log_delta is None):
        raise TypeError("give exactly one of delta= and log_delta=")
    with mpmath.workdps(dps + _GUARD):
        if delta is not None:
            d = _mpf(delta, "delta", dps)
            if d < 0 or d > 1:
                raise DomainError(f"delta must lie in [0, 1], got {delta!r}")
            return mpmath.log(d) if d > 0 else mpmath.mpf("-inf")
        L = _mpf(log_delta, "log_delta", dps)
        if L > 0:
            raise DomainError(f"log_delta must be <= 0 (delta <= 1), got {log_delta!r}")
        return L


def _norm_quantile_log(L: mpmath.mpf, dps: int) -> mpmath.mpf:
    """x with log Phi(x) = L (L <= 0), to `dps` digits, for any L (no 2p - 1 rounding)."""
    with mpmath.workdps(dps + _GUARD):
        if mpmath.isinf(L):
            return mpmath.mpf("-inf")
        if L == 0:
            return mpmath.mpf("inf")
        if L > -mpmath.log(2):
            # upper half: x = -Phi^{-1}(1 - e^L), with 1 - e^L = -expm1(L) kept exact
            return -_norm_quantile_log(mpmath.log(-mpmath.expm1(L)), dps)
        # log Phi is concave and increasing: Newton converges monotonically after one step
        x = -mpmath.sqrt(-2 * L) if L < -2 else mpmath.sqrt(2) * mpmath.erfinv(
            2 * mpmath.exp(L) - 1)
        tol = mpmath.mpf(10) ** (-(dps + 5))
        for _ in range(200):
            lp = mpmath.log(mpmath.ncdf(x))
            step = (lp - L) * mpmath.ncdf(x) / mpmath.npdf(x)
            x -= step
            if abs(step) <= tol * max(1, abs(x)):
                return x
        raise ConvergenceError(f"normal quantile of exp({mpmath.nstr(L, 10)}) did not converge")


def mu_gdp(eps: Any, delta: Any = None, *, log_delta: Any = None, dps: int = 40) -> mpmath.mpf:
    r""":math:`\mu_{GDP}(\varepsilon, \delta)` to ``dps`` digits.

    Give exactly one of ``delta`` and ``log_delta``.  ``delta = 0`` gives 0 and
    ``delta = 1`` (or :math:`\varepsilon = \infty`) gives ``inf``.

    Raises:
        DomainError: negative or NaN ``eps``, ``delta`` outside [0, 1], ``log_delta > 0``.
    """
    e = _mpf(eps, "eps", dps)
    if e < 0:
        raise DomainError(f"eps must be >= 0, got {eps!r}")
    L = _log_input(delta, log_delta, dps)
    with mpmath.workdps(dps + _GUARD):
        if mpmath.isinf(L):
            return mpmath.mpf(0)
        if L == 0 or mpmath.isinf(e):
            return mpmath.mpf("inf")

        def f(m: mpmath.mpf) -> mpmath.mpf:
            return log_delta_mu(e, m, dps=dps + _GUARD) - L

        # lower bound: Phi(mu/2 - eps/mu) > delta_mu(eps), so Phi(mu/2 - eps/mu) = delta
        # (mu = q + sqrt(q^2 + 2 eps), written without cancellation) is below the root.
        q = _norm_quantile_log(L, dps + _GUARD)
        r = mpmath.sqrt(q * q + 2 * e)
        lo = 2 * e / (r - q) if q < 0 else q + r
        if not lo > 0:
            lo = mpmath.sqrt(2 * mpmath.pi) * mpmath.exp(L) / 2
        while f(lo) > 0:
            lo /= 2
        hi = 2 * lo
        while f(hi) < 0:
            lo, hi = hi, 2 * hi
        root = _solve_monotone(f, lo, hi, dps)
    with mpmath.workdps(dps):
        return +root


def eps_gdp(mu: Any, delta: Any = None, *, log_delta: Any = None, dps: int = 40) -> mpmath.mpf:
    r"""The :math:`\varepsilon \ge 0` with :math:`\delta_\mu(\varepsilon) = \delta`.

    Accurate to ``dps`` digits; give exactly one of ``delta`` and ``log_delta``.  Returns 0
    when :math:`\delta_\mu(0) \le \delta`, and ``inf`` for :math:`\delta = 0 < \mu` or
    :math:`\mu = \infty > \ldots` with :math:`\delta < 1`.
    """
    m = _mpf(mu, "mu", dps)
    if m < 0:
        raise DomainError(f"mu must be >= 0, got {mu!r}")
    L = _log_input(delta, log_delta, dps)
    with mpmath.workdps(dps + _GUARD):
        if m == 0:
            return mpmath.mpf(0)
        if mpmath.isinf(m):
            return mpmath.mpf(0) if L == 0 else mpmath.mpf("inf")
        if log_delta_mu(0, m, dps=dps + _GUARD) <= L:
            return mpmath.mpf(0)
        if mpmath.isinf(L):
            return mpmath.mpf("inf")

        def f(e: mpmath.mpf) -> mpmath.mpf:
            return L - log_delta_mu(e, m, dps=dps + _GUARD)  # increasing in eps

        # upper bound: delta_mu(eps) < Phi(mu/2 - eps/mu), so the eps with
        # Phi(mu/2 - eps/mu) = delta lies above the root (a start at eps = 1 made erfc
        # overflow for tiny mu, whose root is near mu sqrt(-2 log delta))
        q = _norm_quantile_log(L, dps + _GUARD)
        hi = max(m * (m / 2 - q), mpmath.mpf(0)) * (1 + mpmath.mpf(10) ** -10) \
            + mpmath.mpf(10) ** -(dps + _GUARD) * m
        while f(hi) < 0:
            hi *= 2
        root = _solve_monotone(f, mpmath.mpf(0), hi, dps)
    with mpmath.workdps(dps):
        return +root


def mu_from_pure_dp(eps0: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`-2\Phi^{-1}(1/(1+e^{\varepsilon_0}))` to ``dps`` digits, for any
    :math:`\varepsilon_0 \ge 0` (small: :math:`2\sqrt2\,\mathrm{erf}^{-1}(\tanh(\varepsilon_0/2))`;
    large: the quantile solved in log space)."""
    e = _mpf(eps0, "eps0", dps)
    if e < 0:
        raise DomainError(f"eps0 must be >= 0, got {eps0!r}")
    with mpmath.workdps(dps + _GUARD):
        if mpmath.isinf(e):
            return mpmath.mpf("inf")
        if e < 1:
            r = 2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(e / 2))
        else:
            r = -2 * _norm_quantile_log(-mpmath.log1p(mpmath.exp(e)), dps + _GUARD)
    with mpmath.workdps(dps):
        return +r


def tradeoff_gdp(alpha: Any, mu: Any, *, dps: int = 40) -> mpmath.mpf:
    r""":math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)` to ``dps`` digits.

    :math:`G_\mu(0) = 1` for every :math:`\mu` (also :math:`\infty`, by continuity in
    :math:`\alpha`); :math:`G_\infty(\alpha) = 0` for :math:`\alpha > 0`.
    """
    al, m = _mpf(alpha, "alpha", dps), _mpf(mu, "mu", dps)
    if al < 0 or al > 1:
        raise DomainError(f"alpha must lie in [0, 1], got {alpha!r}")
    if m < 0:
        raise DomainError(f"mu must be >= 0, got {mu!r}")
    with mpmath.workdps(dps + _GUARD):
        if al == 0:
            return mpmath.mpf(1)
        if al == 1 or mpmath.isinf(m):
            return mpmath.mpf(0)
        z = -_norm_quantile_log(mpmath.log(al), dps + _GUARD)  # Phi^{-1}(1 - alpha)
        r = mpmath.ncdf(z - m)
    with mpmath.workdps(dps):
        return +r


def compose_gdp(*mus: Any, dps: int = 40) -> mpmath.mpf:
    r""":math:`\sqrt{\sum_i \mu_i^2}` to ``dps`` digits."""
    vals = [_mpf(m, "mu", dps) for m in mus]
    if any(v < 0 for v in vals):
        raise DomainError(f"every mu must be >= 0, got {mus!r}")
    with mpmath.workdps(dps + 5):
        r = mpmath.sqrt(mpmath.fsum(v ** 2 for v in vals))
    with mpmath.workdps(dps):
        return +r
