r"""Rényi differential privacy: exact Rényi curves, composition and conversion to (ε, δ).

A mechanism is :math:`(\alpha, \hat\varepsilon(\alpha))`-RDP when the Rényi divergence of
order :math:`\alpha` between its outputs on neighbouring inputs is at most
:math:`\hat\varepsilon(\alpha)` (Mironov, CSF 2017); RDP composes by adding
:math:`\hat\varepsilon` at every order.  Two curves are exact here:

* :math:`\varepsilon_0`-DP (Mironov 2017; randomized response attains it, and the
  output pair of every :math:`\varepsilon_0`-DP mechanism is a post-processing of
  randomized response's, Kairouz, Oh & Viswanath 2015):
  :math:`\hat\varepsilon(\alpha) = \frac{1}{\alpha - 1}\log\Bigl(
  \frac{e^{\alpha\varepsilon_0} + e^{\varepsilon_0} e^{-\alpha\varepsilon_0}}
  {e^{\varepsilon_0} + 1}\Bigr)` for every real :math:`\alpha > 1`.
* The Poisson-subsampled Gaussian mechanism (rate :math:`q`, noise multiplier
  :math:`\sigma`, add or remove one record) at integer :math:`\alpha \ge 2` (Mironov,
  Talwar & Zhang, "Rényi Differential Privacy of the Sampled Gaussian Mechanism", 2019):
  :math:`(\alpha - 1)\hat\varepsilon(\alpha) = \log A_\alpha`,
  :math:`A_\alpha = \sum_{k=0}^{\alpha}\binom{\alpha}{k}(1-q)^{\alpha-k}q^k
  e^{(k^2 - k)/(2\sigma^2)}`.

The conversion to a privacy profile is the improved one (Canonne, Kamath & Steinke 2020;
Asoodeh, Liao, Calmon, Kosut & Sankar 2021): :math:`(\alpha, \hat\varepsilon)`-RDP
implies :math:`(\varepsilon, \delta)`-DP with
:math:`\varepsilon = \hat\varepsilon + \log\frac{\alpha - 1}{\alpha} -
\frac{\log\delta + \log\alpha}{\alpha - 1}`, i.e.

.. math:: \log\delta(\varepsilon) \le (\alpha - 1)(\hat\varepsilon(\alpha) - \varepsilon)
          + (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha ,

and the minimum over any set of orders is again an upper bound.  Everything is computed
in log space: :math:`A_\alpha` is a sum of positive terms (log-sum-exp, no
cancellation), so :math:`\log\delta` stays finite far below the float64 range.  Float64
rounding of :math:`\log A_\alpha` is covered by an explicit upward slack of
:math:`64 u (\max_k |t_k| + \alpha\log\alpha)` (:math:`u = 2^{-52}`, :math:`t_k` the
log-terms), far above the error of a log-sum-exp of :math:`\alpha + 1` terms and of
``gammaln``; the tests check the curve against 40-digit mpmath.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from symgdp.errors import DomainError
from symgdp.notions.common import log1m_inv

__all__ = [
    "pure_dp_rdp",
    "subsampled_gaussian_log_a",
    "log_delta_from_rdp",
    "eps_from_rdp",
    "DEFAULT_ORDERS",
]

UNIT_ROUNDOFF = 2.0**-52

#: integer orders used for the subsampled Gaussian: every order to 256, then geometric
DEFAULT_ORDERS = tuple(range(2, 257)) + tuple(
    sorted({int(round(256 * 1.1**i)) for i in range(1, 60)} - set(range(2, 257))))


def _up(x: np.ndarray, ulps: float) -> np.ndarray:
    """``x`` raised by a relative ``ulps`` units of roundoff and then by one more ulp
    (towards +inf), so a value whose relative error is at most ``ulps`` u becomes an upper
    bound.  Zero and infinities stay; NaN stays NaN."""
    return np.nextafter(x + np.abs(x) * (ulps * UNIT_ROUNDOFF), np.inf)


def _pure_dp_rdp_up(e: np.ndarray, a: np.ndarray) -> np.ndarray:
    r"""Upper bound on :math:`\hat\varepsilon(\alpha)` of :math:`\varepsilon`-DP for
    finite :math:`\varepsilon \ge 0` and real :math:`1 < \alpha < \infty` (arrays of one
    shape), within a relative 24 u of it.

    With :math:`u = \varepsilon/2`, :math:`w = (\alpha - 1)\varepsilon` the curve is
    :math:`\log(\cosh(u + w)/\cosh u)/(\alpha - 1)`, and
    :math:`\cosh(u + w)/\cosh u - 1 = 2\sinh^2(w/2) + \tanh(u)\sinh(w)` is a sum of
    non-negative terms: no cancellation however close :math:`\alpha` is to 1 or
    :math:`\varepsilon` to 0 (the form :math:`\varepsilon - \ldots/(\alpha - 1)`
    cancels catastrophically there).  For :math:`w \ge 1` the logarithm is
    :math:`w + \log(1 + e^{-2(u+w)}) - \log(1 + e^{-2u})`, whose last two terms lie in
    :math:`[-\log 2, \log 2]` and so cannot cancel against :math:`w \ge 1` by more than a
    factor 4; nothing overflows.  Every step (``alpha - 1`` is exact for
    :math:`\alpha \le 2`) costs a few u, so a relative slack of 24 u is an upper bound.
    """
    t = a - 1.0
    w = t * e
    hu = 0.5 * e
    out = np.empty(e.shape)
    small = w < 1.0
    if np.any(small):
        ws, us = w[small], hu[small]
        sh = np.sinh(0.5 * ws)
        out[small] = np.log1p(2.0 * sh * sh + np.tanh(us) * np.sinh(ws)) / t[small]
    big = ~small
    if np.any(big):
        wb, ub = w[big], hu[big]
        lr = wb + (np.log1p(np.exp(-2.0 * (ub + wb))) - np.log1p(np.exp(-2.0 * ub)))
        out[big] = lr / t[big]
    # the curve is at most eps (its value at alpha = inf): a rounding above it is cut
    return np.minimum(_up(out, 24.0), e)


def pure_dp_rdp(eps0: float, alpha: Any) -> Any:
    r"""Exact :math:`\hat\varepsilon(\alpha)` of :math:`\varepsilon_0`-DP (vectorised over
    real :math:`\alpha > 1`), rounded up: the float is never below the true Rényi
    divergence at the given float :math:`\alpha` and within a relative 3e-15 of it
    (computed as a sum of non-negative terms, see the module notes), also for
    :math:`\alpha \to 1` and tiny :math:`\varepsilon_0`.  :math:`\alpha = \infty` gives
    :math:`\varepsilon_0`.

    Example:
        >>> round(float(pure_dp_rdp(0.2, 2.0)), 12)
        0.039349081104
        >>> pure_dp_rdp(1e-6, 1.0001) > 0   # 5.0e-13: no cancellation near alpha = 1
        True
    """
    e0 = float(eps0)
    if not (math.isfinite(e0) and e0 > 0):
        raise DomainError(f"eps0 must be a finite number > 0, got {eps0!r}")
    a = np.asarray(alpha, dtype=np.float64)
    if np.any(~(a > 1)):
        raise DomainError(f"Rényi orders must be > 1, got {a[~(a > 1)].flat[0]!r}")
    scalar = a.ndim == 0
    a = np.atleast_1d(a)
    e = np.full(a.shape, e0)
    out = np.full(a.shape, e0)
    fin = np.isfinite(a)
    if np.any(fin):
        out[fin] = _pure_dp_rdp_up(e[fin], a[fin])
    return float(out[0]) if scalar else out


def subsampled_gaussian_log_a(q: float, sigma: float, orders: Any = DEFAULT_ORDERS
                              ) -> np.ndarray:
    r""":math:`\log A_\alpha` of the Poisson-subsampled Gaussian at integer orders,
    rounded up by the slack described in the module notes (so :math:`T\log A_\alpha`
    is an upper bound on :math:`(\alpha - 1)\hat\varepsilon_T(\alpha)` after
    :math:`T` steps).

    Example:
        >>> float(subsampled_gaussian_log_a(1.0, 1.0, [2])[0]) > 1.0   # q = 1: log e^1
        True
    """
    qq, s = float(q), float(sigma)
    if not (0 < qq <= 1):
        raise DomainError(f"the sampling rate q must lie in (0, 1], got {q!r}")
    if not (math.isfinite(s) and s > 0):
        raise DomainError(f"sigma must be a finite number > 0, got {sigma!r}")
    ords = [int(a) for a in orders]
    bad = [a for a in ords if a < 2]
    if bad:
        raise DomainError(f"integer Rényi orders must be >= 2, got {bad[0]!r}")
    if not ords:
        return np.asarray([])
    lq = math.log(qq)
    l1q = math.log1p(-qq) if qq < 1 else -math.inf
    # the per-order arrays are slices of tables over k = 0..max order, each entry the
    # same float operations on the same floats as the terms of one order computed alone
    # (a - k is the reversed k, gammaln(a + 1) an entry of the k table), so the result is
    # bit-identical to the loop over orders; only gammaln is no longer re-evaluated per
    # order (the Rényi curve of DP-SGD: 314 orders, 809,552 terms, 45 -> 15 ms)
    kk = np.arange(max(ords) + 1, dtype=np.float64)
    s2 = 2 * s * s
    with np.errstate(invalid="ignore"):
        gl = special.gammaln(kk + 1.0)
        wq = kk * lq
        w1 = kk * l1q
        w1[0] = 0.0  # the term k = a has no factor (1 - q)^0 (q = 1: 0 * -inf)
        wk = (kk * kk - kk) / s2
    out = []
    with np.errstate(invalid="ignore"):
        for a in ords:
            lb = gl[a] - gl[:a + 1] - gl[a::-1]
            t = lb + w1[a::-1] + wq[:a + 1] + wk[:a + 1]
            t = t[np.isfinite(t)]
            m = float(t.max())
            val = m + math.log(float(np.sum(np.exp(t - m))))
            out.append(val + 64 * UNIT_ROUNDOFF * (float(np.abs(t).max()) + a * math.log(a)))
    return np.asarray(out)


def log_delta_from_rdp(orders: Any, total_rdp: Any, eps: Any) -> Any:
    r""":math:`\log\delta(\varepsilon)` from a composed Rényi curve by the improved
    conversion, minimised over the given orders (vectorised over :math:`\varepsilon`),
    rounded up (an upper bound on the conversion's exact value, within a few u of the
    absolute size of its terms).

    ``total_rdp[i]`` is :math:`\hat\varepsilon(\alpha_i)` of the whole composition.

    Example:
        >>> a = np.arange(2, 200)
        >>> ld = log_delta_from_rdp(a, 50 * pure_dp_rdp(0.2, a), 4.0)
        >>> round(float(np.exp(ld)), 6)
        0.015711
    """
    a = np.asarray(orders, dtype=np.float64)[:, None]
    r = np.asarray(total_rdp, dtype=np.float64)[:, None]
    scalar = np.ndim(eps) == 0
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))[None, :]
    t1 = (a - 1.0) * (r - x)
    v, verr = log1m_inv(a)   # log(1 - 1/alpha) and its absolute error (alpha near 1 too)
    t2 = (a - 1.0) * v
    t3 = np.log(a)
    # t1 and t3 within 3 u of their values, t2 within 3 u plus (alpha - 1) times the
    # error of log(1 - 1/alpha); 8 u of the absolute sum of the terms (and one ulp) bounds
    # the rest, so ``val`` is rounded up
    val = (_up(t1 + t2 - t3, 0.0) + 8.0 * UNIT_ROUNDOFF * (np.abs(t1) + np.abs(t2) + np.abs(t3))
           + 2.0 * np.abs(a - 1.0) * verr)
    out = np.minimum(val.min(axis=0), 0.0)
    return float(out[0]) if scalar else out.reshape(np.shape(eps))


def eps_from_rdp(orders: Any, total_rdp: Any, delta: float) -> float:
    r""":math:`\min_\alpha \hat\varepsilon(\alpha) + \log\frac{\alpha-1}{\alpha} -
    \frac{\log\delta + \log\alpha}{\alpha - 1}` over the given orders (at least 0),
    rounded up: never below the exact minimum over the given orders of the given curve.

    Example:
        >>> a = np.arange(2, 200)
        >>> round(eps_from_rdp(a, 50 * pure_dp_rdp(0.2, a), 1e-3), 3)
        5.257
    """
    d = float(delta)
    if not (0 < d <= 1):
        raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
    a = np.asarray(orders, dtype=np.float64)
    r = np.asarray(total_rdp, dtype=np.float64)
    t2, t2err = log1m_inv(a)   # log(1 - 1/alpha) and its absolute error (alpha near 1 too)
    ld, la = math.log(d), np.log(a)
    t3 = (ld + la) / (a - 1.0)
    # errors: t2's own; the two logarithms' (4 u of their sizes, not of their sum, which
    # may cancel) divided by alpha - 1; 8 u of the absolute sum of the terms for the
    # division, alpha - 1 and the sum; then one ulp up
    t3err = 4.0 * UNIT_ROUNDOFF * (abs(ld) + np.abs(la)) / (a - 1.0) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    e = (_up(r + t2 - t3, 0.0) + 8.0 * UNIT_ROUNDOFF * (np.abs(r) + np.abs(t2) + np.abs(t3))
         + t2err + t3err)
    return max(float(e.min()), 0.0)
