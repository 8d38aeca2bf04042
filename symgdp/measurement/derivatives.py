r"""Derivatives of :math:`\log\delta_\mu` of any order, in plain ball arithmetic.

:func:`dlog_delta_mu_arb` is the first derivative (non-increasing in
:math:`\varepsilon`: :math:`\delta_\mu` is log-concave); ``_gauss_l`` gives the order
:math:`k \ge 2` from the cumulants of :math:`\log\operatorname{ErfcxDiff}`, each moment
ratio monotone in :math:`z` (theory §11).  No SymPy at run time.
"""

from __future__ import annotations

import math
from typing import Any

from flint import arb, ctx, fmpq

from symgdp.evaluation.interval import delta_mu_arb, erfcx_diff_orders_arb

__all__ = ["dlog_delta_mu_arb"]


def dlog_delta_mu_arb(eps: Any, mu: Any) -> arb:
    r"""Ball of :math:`\partial\log\delta_\mu(\varepsilon)/\partial\varepsilon =
    -e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)/\delta_\mu(\varepsilon)` at the
    precision in force (a point ``eps``; the function is non-increasing in it)."""
    e, m = arb(eps), arb(mu)
    b = -e / m - m / 2
    num = e.exp() * (-b * arb(0.5).sqrt()).erfc() / 2
    return -num / delta_mu_arb(e, m)



# -- derivatives of log delta_mu of order k >= 2 (the Gaussian side of the Taylor bounds) --
#
# With z = (eps/mu - mu/2)/sqrt2, c = mu/sqrt2 and s = dz/deps = 1/(mu sqrt2), exactly
# delta_mu = e^{-z^2} E(z)/2 with E = ErfcxDiff(z, c) = erfcx(z) - erfcx(z + c) (the
# factor e^eps cancels: (z + c)^2 - z^2 = eps), so for k >= 2
#
#     d^k log delta_mu / d eps^k = s^k g_k(z)  (minus 2 s^2 for k = 2),  g_k = (log E)^(k).
#
# E(z) = (2/sqrt(pi)) int_0^inf e^{-t^2 - 2zt} (1 - e^{-2ct}) dt is the Laplace transform
# of a positive weight, so r_n = E^(n)/E = (-2)^n M_n(z) with M_n the n-th moment of t
# under the probability proportional to that weight, and dM_n/dz = -2 (M_{n+1} - M_n M_1)
# <= 0 (Chebyshev's association inequality: t^n and t both increase on t >= 0).  Every
# r_n is monotone in z: on a ball it is the hull of its end-point values, free of the
# dependency problem.  g_k follows from r_1..r_k by the moment-cumulant recursion;
# g_2 = 4 Var(t) >= 0, and g_2 <= 2 since delta_mu is log-concave (see the module
# docstring).  Each g_k on a ball is further intersected with the mean-value forms from
# both end points (with g_{k+1} on the ball) and, where g_{k+1} has a sign there, with
# the hull of its end-point values; orders up to max(k, 4) + _GAUSS_EXTRA are computed
# for that cascade (theory §11).  Plain ball arithmetic: no SymPy at run time.

#: orders computed above the one asked for (they tighten it; see above)
_GAUSS_EXTRA = 2
#: extra working bits (the cumulants cancel, e.g. g_2 - 2 near eps = 0 for a large mu)
_GAUSS_XBITS = 32
_NAN = arb("nan")
# (z, c, top, precision) -> the g_n of _log_erfcx_diff_derivatives
_GAUSS_CACHE: dict[tuple[Any, ...], list[arb]] = {}


def _meet(a: arb, b: arb) -> arb:
    """The intersection of two enclosures of one number (the finite one alone if the
    other is not; NaN if they do not meet, which only a bug could cause)."""
    if not a.is_finite():
        return b
    if not b.is_finite():
        return a
    return a.intersection(b) if a.overlaps(b) else _NAN


def _cumulants(r: list[arb]) -> list[arb]:
    r""":math:`(\log E)^{(n)}` for n = 1..len(r) - 1 from :math:`r_n = E^{(n)}/E` (r[0] =
    1), by :math:`E^{(n)} = \sum_{j<n} \binom{n-1}{j} (\log E)^{(j+1)} E^{(n-1-j)}`."""
    g = [arb(0)] * len(r)
    for n in range(1, len(r)):
        v = r[n]
        for j in range(n - 1):
            v = v - math.comb(n - 1, j) * g[j + 1] * r[n - 1 - j]
        g[n] = v
    return g


def _log_erfcx_diff_at(z: arb, c: arb, top: int) -> tuple[list[arb], list[arb]]:
    """(r_n, g_n), n = 0..top, of E = ErfcxDiff(., c) at the point ``z``."""
    # at least the orders the Taylor bounds of order 4 need: one computation serves all
    e = erfcx_diff_orders_arb(z, c, max(top, 4 + _GAUSS_EXTRA))[:top + 1]
    if not e[0] > 0:
        return [_NAN] * (top + 1), [_NAN] * (top + 1)
    r = [arb(1)] + [v / e[0] for v in e[1:]]
    return r, _cumulants(r)


def _log_erfcx_diff_derivatives(z: arb, c: arb, top: int) -> list[arb]:
    """g_n = (log ErfcxDiff(., c))^(n) on the ball ``z``, n = 1..top (index n; c > 0)."""
    if z.is_exact():
        g = _log_erfcx_diff_at(z, c, top)[1]
    else:
        lo, hi = arb(z.lower()), arb(z.upper())
        ra, ga = _log_erfcx_diff_at(lo, c, top)
        rb, gb = _log_erfcx_diff_at(hi, c, top)
        # every r_n is monotone in z: the hull of its end-point values
        g = _cumulants([arb(1)] + [u.union(v) for u, v in zip(ra[1:], rb[1:], strict=True)])
        t = arb(0).union(hi - lo)
        for n in range(top - 1, 0, -1):
            d = g[n + 1]
            if d.is_finite():
                g[n] = _meet(g[n], _meet(ga[n] + d * t, gb[n] - d * t))
                if d >= 0 or d <= 0:
                    g[n] = _meet(g[n], ga[n].union(gb[n]))
    if top >= 2 and g[2].is_finite():
        g[2] = _meet(g[2], arb(1, 1))  # [0, 2]
    return g


def _gauss_l(k: int, eps: Any, mu: Any) -> arb:
    r"""Ball of :math:`\partial^k\log\delta_\mu(\varepsilon)/\partial\varepsilon^k`
    (k >= 2) on the ball ``eps`` at the precision in force (NaN where not enclosed);
    ``mu`` a positive float or exact ball.

    >>> from flint import arb
    >>> b = _gauss_l(2, arb(50), 1.0)   # mpmath.diff of log delta_1 at 50: -0.999202628816
    >>> round(float(b.mid()), 10), float(b.rad()) < 1e-12
    (-0.9992026288, True)
    """
    prec = ctx.prec
    with ctx.workprec(prec + _GAUSS_XBITS):
        e, m = arb(eps), arb(mu)
        if not (e.is_finite() and m.is_finite() and m > 0):
            return _NAN
        h = arb(fmpq(1, 2)).sqrt()
        s = h / m
        z, c = (e / m - m / 2) * h, m * h
        # the Taylor bounds ask for orders 2..4 on one ball and at one midpoint in turn:
        # one cascade (the same for every k <= 4) serves them all
        top = max(k, 4) + _GAUSS_EXTRA
        key = (z.mid().man_exp(), z.rad().man_exp(), c.mid().man_exp(), c.rad().man_exp(),
               top, ctx.prec)
        gs = _GAUSS_CACHE.get(key)
        if gs is None:
            gs = _log_erfcx_diff_derivatives(z, c, top)
            if len(_GAUSS_CACHE) > 20_000:
                _GAUSS_CACHE.clear()
            _GAUSS_CACHE[key] = gs
        v = s**k * gs[k]
        if k == 2:
            v = v - 2 * s * s
    with ctx.workprec(prec):
        return +v
