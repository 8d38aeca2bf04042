"""Independent mpmath references shared by several test files; not a test file.

The tests import it as ``references`` (pytest puts ``tests/`` on ``sys.path``, the folder
having no ``__init__.py``).  Nothing here calls symgdp: these are the truths the package's
answers are compared with.
"""

from __future__ import annotations

import mpmath


def gdp_curve(mu: float, a: float, dps: int = 40) -> mpmath.mpf:
    """G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) at ``dps`` digits, Phi^{-1}(1 - a) =
    sqrt(2) erfinv(1 - 2a) (20 guard digits, so that 1 - 2a keeps a tiny a)."""
    with mpmath.workdps(dps + 20):
        a = mpmath.mpf(a)
        if a == 0:
            return mpmath.mpf(1)
        if a == 1:
            return mpmath.mpf(0)
        z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a)
        return mpmath.ncdf(z - mu)


def log_grid(a: float, b: float = 1e4, n: int = 60, dps: int = 60) -> list[mpmath.mpf]:
    """n points of a logarithmic grid on [a, b] (mpmath numbers at ``dps`` digits)."""
    with mpmath.workdps(dps):
        la, lb = mpmath.log(a), mpmath.log(b)
        return [mpmath.exp(la + (lb - la) * i / (n - 1)) for i in range(n)]


def probit_sup(g, lo: float, hi: float, n: int = 2001, iterations: int = 120) -> mpmath.mpf:
    """sup of ``g(u)`` over [lo, hi] (u a probit coordinate, u = Phi^{-1}(1 - alpha)): the
    best of ``n`` grid points, then golden-section search between its neighbours (for a
    function unimodal there); at the caller's working precision."""
    us = [mpmath.mpf(lo) + (mpmath.mpf(hi) - lo) * k / (n - 1) for k in range(n)]
    vals = [g(u) for u in us]
    k = max(range(n), key=lambda i: vals[i])
    a, b = us[max(k - 1, 0)], us[min(k + 1, n - 1)]
    r = (mpmath.sqrt(5) - 1) / 2
    for _ in range(iterations):
        c, d = b - r * (b - a), a + r * (b - a)
        if g(c) >= g(d):
            b = d
        else:
            a = c
    return max(vals[k], g((a + b) / 2))


def gdp_curve_expr(mu, alpha):
    """G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) as a SymPy expression, written with erfc
    and erfcinv (the spelling whose ball enclosures stay tight at tiny alpha)."""
    import sympy

    return sympy.erfc(-(sympy.sqrt(2) * sympy.erfcinv(2 * alpha) - mu) / sympy.sqrt(2)) / 2


def delta_gdp(mu, eps) -> mpmath.mpf:
    """The profile of mu-GDP, delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    (Dong, Roth & Su 2022, Cor. 2.13), at the caller's working precision."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def gdpt_below(eps, d, iterations: int = 90) -> mpmath.mpf:
    """G(eps, d) from below: the bisection end mu with delta_mu(eps) < d (delta_mu increases
    with mu); 0 for d <= 0."""
    if d <= 0:
        return mpmath.mpf(0)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while delta_gdp(hi, eps) < d:
        hi *= 2
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if delta_gdp(mid, eps) < d:
            lo = mid
        else:
            hi = mid
    return lo
