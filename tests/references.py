r"""Independent mpmath references shared by the tests and the benchmarks; not a test file.

Nothing here calls symgdp: these are the truths the package's answers are compared with.
The tests import it as ``references`` (``tests/`` is on ``sys.path`` through pytest's
``pythonpath`` setting); ``benchmarks/bench_gdp.py`` puts ``tests/`` on ``sys.path`` itself.

**The GDP family.** :math:`\delta_\mu(\varepsilon) = \Phi(a) - e^{\varepsilon}\Phi(b)`, with
:math:`a = -\varepsilon/\mu + \mu/2` and :math:`b = -\varepsilon/\mu - \mu/2`, is written
here from the textbook formula with ``mpmath.erfc``, at a working precision raised until
the cancellation between the two terms is covered; its derivatives and :math:`\Phi^{-1}`
come from their closed forms (:func:`ref_log_delta` and its companions).  It must never
import :mod:`symgdp` (in particular not :mod:`symgdp.gaussian.precise`, which uses
``mpmath.ncdf`` and is itself checked against :func:`ref_log_delta`).

**Trade-off curves and GDPTs** (:func:`gdp_curve`, :func:`probit_sup`, :func:`gdpt_below`):
closed forms and brute-force searches at 40-60 digits.
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


def golden_section(h, lo, hi, *, steps: int | None = None, width=None):
    """Golden-section search for the max of ``h`` on ``[lo, hi]`` (unimodal there):
    ``steps`` contractions (0.618^steps of the bracket) or until it is narrower than
    ``width``; returns ``(lo, hi, inner)`` with ``inner`` the larger of the two last
    evaluations inside."""
    g = (mpmath.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = h(c), h(d)
    k = 0
    while (k < steps) if steps is not None else (hi - lo > width):
        k += 1
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = h(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = h(d)
    return lo, hi, max(fc, fd)


def golden_max(h, xs: list, vals: list, steps: int) -> mpmath.mpf:
    """max of ``h`` near the best of the grid points ``xs`` (values ``vals``): golden
    section between the best point's neighbours, ``steps`` times (0.618^steps of the
    bracket); returns the larger of the two last evaluations (at least the grid's best when
    h is unimodal there)."""
    i = max(range(len(xs)), key=vals.__getitem__)
    return golden_section(h, xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)], steps=steps)[2]



# -- the Poisson-subsampled Gaussian under add/remove -----------------------------------------
def subsampled_gaussian_h(t, q, s, direction: str) -> mpmath.mpf:
    r"""The hockey-stick :math:`h(t) = A[L > t] - e^t B[L > t]` of one step of the
    Poisson-subsampled Gaussian (rate ``q``, noise ``s``, sensitivity 1) at any real ``t``,
    closed form at the caller's precision: ``"remove"`` is :math:`A = (1-q)N(0,s^2) +
    qN(1,s^2)`, :math:`B = N(0,s^2)`, loss :math:`L(x) = \log((1-q) + q e^{(2x-1)/(2s^2)})`
    with inverse :math:`x_t = s^2\log((e^t - 1 + q)/q) + 1/2`; ``"add"`` the swapped pair
    (loss :math:`-L`).  Composition with a step of loss :math:`\ell` under its first
    measure :math:`a`: :math:`\delta(\varepsilon) = \int a(x)\,h(\varepsilon - \ell(x))\,dx`
    (condition on the first step's output)."""
    q, s, t = mpmath.mpf(q), mpmath.mpf(s), mpmath.mpf(t)

    def bar(x, m):  # P(N(m, s^2) > x)
        return mpmath.erfc((x - m) / (s * mpmath.sqrt(2))) / 2

    if direction == "remove":
        if q < 1 and t <= mpmath.log(1 - q):
            return 1 - mpmath.exp(t)  # L > log(1 - q) >= t everywhere
        x = s * s * mpmath.log((mpmath.exp(t) - 1 + q) / q) + mpmath.mpf(1) / 2
        return (1 - q) * bar(x, 0) + q * bar(x, 1) - mpmath.exp(t) * bar(x, 0)
    if q < 1 and -t <= mpmath.log(1 - q):
        return mpmath.mpf(0)  # -L > t never happens
    x = s * s * mpmath.log((mpmath.exp(-t) - 1 + q) / q) + mpmath.mpf(1) / 2  # -L > t: below x
    return (1 - bar(x, 0)) - mpmath.exp(t) * ((1 - q) * (1 - bar(x, 0)) + q * (1 - bar(x, 1)))


def subsampled_gaussian_loss(x, q, s) -> mpmath.mpf:
    """The remove pair's privacy loss L(x) (see :func:`subsampled_gaussian_h`)."""
    q, s = mpmath.mpf(q), mpmath.mpf(s)
    return mpmath.log((1 - q) + q * mpmath.exp((2 * mpmath.mpf(x) - 1) / (2 * s * s)))


def _cuts(lo, hi, xs) -> list:
    """[lo, the points of xs inside (lo, hi), hi], sorted: the integrand's kinks as
    quadrature breakpoints (tanh-sinh then converges to the working precision)."""
    return [lo] + sorted(x for x in xs if lo < x < hi) + [hi]


def subsampled_gaussian_two_steps(eps, q, s, direction: str) -> mpmath.mpf:
    """delta(eps) of two steps of one direction, by tanh-sinh quadrature over the first
    step's output (:func:`subsampled_gaussian_h`) at the caller's precision, on [-14s, 1 +
    14s] (the mass cut off is below 2e-44: the integrand is at most the density), split
    where the inner argument crosses +-log(1 - q) (where h changes form)."""
    q, s, eps = mpmath.mpf(q), mpmath.mpf(s), mpmath.mpf(eps)

    def a(x):  # the first measure of the direction's pair
        n0 = mpmath.npdf(x, 0, s)
        return (1 - q) * n0 + q * mpmath.npdf(x, 1, s) if direction == "remove" else n0

    sign = 1 if direction == "remove" else -1
    kinks = []
    if q < 1:  # the first loss at which the inner argument eps - sign L hits the edge
        edge = eps - mpmath.log(1 - q) if direction == "remove" else -mpmath.log(1 - q) - eps
        if edge > mpmath.log(1 - q):
            kinks.append(s * s * mpmath.log((mpmath.exp(edge) - 1 + q) / q) + 0.5)
    return mpmath.quad(lambda x: a(x) * subsampled_gaussian_h(
        eps - sign * subsampled_gaussian_loss(x, q, s), q, s, direction),
        _cuts(-14 * s, 1 + 14 * s, kinks))


def gaussian_then_subsampled(eps, sg, q, s, direction: str) -> mpmath.mpf:
    """delta(eps) of a Gaussian step (N(1, sg^2) against N(0, sg^2), symmetric) composed
    with one step of the subsampled Gaussian's ``direction``, by tanh-sinh quadrature on
    [1 - 14sg, 1 + 14sg] (the mass cut off is below 2e-44), split where the inner argument
    crosses +-log(1 - q)."""
    sg, q, eps = mpmath.mpf(sg), mpmath.mpf(q), mpmath.mpf(eps)
    kinks = []
    if q < 1:  # eps - (2x - 1)/(2 sg^2) = -+log(1 - q)
        kinks = [((eps - c) * 2 * sg * sg + 1) / 2 for c in (mpmath.log(1 - q), -mpmath.log(1 - q))]
    return mpmath.quad(lambda x: mpmath.npdf(x, 1, sg) * subsampled_gaussian_h(
        eps - (2 * x - 1) / (2 * sg * sg), q, s, direction),
        _cuts(1 - 14 * sg, 1 + 14 * sg, kinks))
