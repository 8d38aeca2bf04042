"""The fast path of :func:`symgdp.gaussian.vectorised.mu_gdp` (eps > 0): a start where
log Phi(mu/2 - eps/mu) is known, a first step of order 5 in u = log(-log delta) without an
evaluation of log delta, one evaluation of :func:`~symgdp.gaussian.core._log_delta_core`
(with its error bound) and its step of order 4 (up to _FAST_MORE more where that step is
not yet below ``_FAST_STEP``), and the enclosure of the last point
(:func:`~symgdp.gaussian.scalar._enclose`), whose side is proved by the error bound of that
evaluation whatever the point; elements whose last step is not below ``_FAST_STEP`` are
declined to the bracketed iteration of ``mu_gdp``.
:func:`symgdp.gaussian.scalar._mu_fast_scalar` is the same path for one float, the same
operations in the same order (theory §4)."""

from __future__ import annotations

from typing import cast

import numpy as np
from scipy import special

from symgdp.gaussian.core import (
    _A_SWITCH,
    _LOG2,
    _LOG_SQRT_2PI,
    _SQRT2,
    _SUB_SLACK,
    _ULP,
    _log_delta_core,
)
from symgdp.gaussian.scalar import (
    _A_FAR,
    _FAST_CURV,
    _FAST_MORE,
    _FAST_STEP,
    _U_FAR,
    _enclose,
)

# a first step without evaluation (order 5 in u = log(-log delta)), then one evaluation
# (up to _FAST_MORE more where the last step is not yet below _FAST_STEP), each giving a
# step of order 4; the answer is taken from the last evaluated point where its step is
# below _FAST_STEP (the enclosure then adds at most ~1e-15 relative to its distance from
# the root); the scalar path (scalar._mu_fast_scalar) shares these constants.  The
# elements are taken in blocks of _FAST_BLOCK (see _mu_fast_blocks)
_FAST_BLOCK = 16384


def _mu_fast_blocks(e: np.ndarray, L: np.ndarray, up: bool | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_mu_fast` on blocks of _FAST_BLOCK elements: the forty-odd temporaries of a
    step then stay in cache (about 1.4x faster on 1e6 elements than one pass)."""
    if e.size <= _FAST_BLOCK:
        return _mu_fast(e, L, up)
    out = np.empty(e.shape)
    left = []
    for i in range(0, e.size, _FAST_BLOCK):
        out[i:i + _FAST_BLOCK], bad = _mu_fast(e[i:i + _FAST_BLOCK], L[i:i + _FAST_BLOCK], up)
        left.append(bad + i)
    return out, np.concatenate(left)


def _mu_fast(e: np.ndarray, L: np.ndarray, up: bool | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """mu_gdp for regular eps > 0 and finite L < 0, without brackets: (roots, indices of
    the elements declined, whose entries are to be overwritten).

    F(s) = log delta_mu(eps) - L in s = log mu has closed-form derivatives: with
    a = mu/2 - eps/mu, c = mu/2 + eps/mu (da/ds = c, dc/ds = a), G = log(mu phi(a))
    (G1 = 1 - a c, G2 = -(a^2 + c^2), G3 = -4 a c its derivatives) and
    g = exp(G - log delta) = F1, h = G1 - g: F2 = g h, F3 = g (h^2 + G2 - g h),
    F4 = h F3 + g (2 h (G2 - g h) + G3 - F3).  So one value of log delta gives the
    step of the series reversion of F to fourth order (error ~ step^5) (:func:`_step4`),
    or of u = log(-log delta) to order 5 (:func:`_step_u_arr`).

    The first step needs no evaluation of log delta: the start is placed where
    log Phi(a) is known (:func:`_mu_start_fast`; where |a| > _A_FAR it is evaluated
    there, as ndtri_exp is not accurate enough to take it as L), and there
    log delta = log Phi(a) + log1p(-R) with R = e^eps Phi(b)/Phi(a)
    = exp(-a^2/2 - log 2 - log Phi(a)) erfcx(-b/sqrt2) (as e^eps phi(b) = phi(a)), one
    erfcx instead of the two of the erfcx form or the four special functions of the
    direct form (R near 1 loses digits: only the step suffers; log1p(-R) in Goldberg's
    form log(w) (-R)/(w - 1), w = 1 - R).  That step is taken in u, of order 5 (u is much
    closer to linear in s than log delta: on the benchmark's points it lands within
    _FAST_STEP of the root for about 4 in 5, against 1 in 4 for the fourth-order step in
    log delta); it is left out where a^2 + c^2 > _U_FAR (its derivatives cancel in
    float64; the start is already close there).  Then one evaluation of
    :func:`_log_delta_core`, with its error bound unless rounding to nearest, and its
    fourth-order step in F; where that step is not below _FAST_STEP (or the enclosure's
    second-order term |F2/F1| step^2 not below _FAST_CURV), up to _FAST_MORE more (each on
    those elements only).  Nothing here needs a bracket: an answer is only taken
    where the last step is below _FAST_STEP, and rounded by the enclosure of
    :func:`_enclose` at the evaluated point, whose side does not depend on how that point
    was found; the rest is declined.
    """
    x, lp = _mu_start_fast(e, L)
    ok = (x > 0) & (x < np.inf)  # a start that underflowed (or NaN): declined
    if not np.all(ok):
        x[~ok] = 1.0  # (evaluated, not taken: log delta at mu = 0 would go to mpmath)
    s = np.log(x)
    a = 0.5 * x - e / x
    far = np.abs(a) > _A_FAR
    if far.any():
        lp[far] = special.log_ndtr(a[far])
    # log delta = log Phi(a) + log1p(-R), R = exp(-a^2/2 - log 2 - log Phi(a)) erfcx(c/sqrt2)
    aa = a * a
    R = aa * -0.5
    R -= _LOG2
    R -= lp
    np.exp(R, out=R)
    c = x - a
    cx = c / _SQRT2
    R *= special.erfcx(cx, out=cx)
    # log1p(-R) as log(w) (-R)/(w - 1), w = 1 - R rounded (-R where w = 1: Goldberg's
    # form, a few ulps; NumPy's log1p costs three logs), the same in the scalar path
    w = np.subtract(1.0, R)
    ld = np.log(w)
    ld *= R
    np.negative(ld, out=ld)
    w -= 1.0
    ld /= w
    np.copyto(ld, np.negative(R), where=w == 0.0)
    ld += lp
    g = aa * -0.5  # g = exp(-a^2/2 + s - log sqrt(2 pi) - ld), as in _step4
    g += s
    g -= _LOG_SQRT_2PI
    g -= ld
    np.exp(g, out=g)
    t = np.divide(L, ld)  # u(root) - u(here) = log(L/ld)
    np.log(t, out=t)
    d = _step_u_arr(a, c, g, ld, t)
    d[~((R < 1.0) & (ld < 0.0) & (aa + c * c <= _U_FAR))] = 0.0  # (as the scalar path)
    _advance(s, x, d, ok)
    # the iterates now sit at the root's branch of the log delta evaluation (a <= 0 or
    # not): the elements ordered by it once, so that the evaluations work on two slices
    # (no gather and scatter per branch); the arithmetic of every element is unchanged
    order = np.argsort(0.5 * x - e / x > _A_SWITCH, kind="stable")
    e, L, s, x, ok = e[order], L[order], s[order], x[order], ok[order]
    err = None if up is None else np.empty(x.shape)
    ld = _log_delta_core(e, x, err)
    d, g, gh = _step4(e, L, s, x, 0.5 * x - e / x, ld)
    # one more evaluation where the last step was not yet small (or its second-order term,
    # which the enclosure adds, not yet below _FAST_CURV): on those elements only (j), each
    # element's arithmetic the same whatever its neighbours
    j = np.flatnonzero(_more(ok, d, g, gh))
    for rnd in range(_FAST_MORE):
        if j.size == 0:
            break
        ej, Lj, sj, xj, dj, okj = e[j], L[j], s[j], x[j], d[j], ok[j]
        _advance(sj, xj, dj, okj)
        errj = None if err is None else np.empty(j.size)
        ldj = _log_delta_core(ej, xj, errj)
        dj, gj, ghj = _step4(ej, Lj, sj, xj, 0.5 * xj - ej / xj, ldj)
        d[j], g[j], gh[j], x[j], ld[j], ok[j] = dj, gj, ghj, xj, ldj, okj
        if err is not None:
            err[j] = errj
        if rnd < _FAST_MORE - 1:
            s[j] = sj
            j = j[_more(okj, dj, gj, ghj)]
    ok &= np.isfinite(d) & (np.abs(d) <= _FAST_STEP) & (x > 0) & np.isfinite(x)
    if up is None:
        y = x * np.exp(d)
    else:
        y, bad = _enclose(x, ld - L, g, gh, cast(np.ndarray, err) + 2.0 * _ULP * np.abs(L)
                          + _SUB_SLACK, up, True)
        ok &= ~bad
    out = np.empty(y.shape)
    out[order] = y
    return out, np.sort(order[~ok])


def _more(ok: np.ndarray, d: np.ndarray, g: np.ndarray, gh: np.ndarray) -> np.ndarray:
    """Where another evaluation is taken: the step d (with F1 = g, F2 = gh) is finite and
    above _FAST_STEP, or the enclosure's second-order term |F2/F1| d^2 above _FAST_CURV."""
    return ok & np.isfinite(d) & ((np.abs(d) > _FAST_STEP)
                                  | (np.abs(gh / g) * (d * d) > _FAST_CURV))


def _advance(s: np.ndarray, x: np.ndarray, d: np.ndarray, ok: np.ndarray) -> None:
    """s += d and x = exp(s) in place, d clipped to [-2, 2] and 0 where it is NaN; an x
    that under- or overflows is declined (``ok`` False) and set to 1, where it is evaluated
    but not taken (log delta at mu = 0 would go to mpmath)."""
    np.clip(d, -2.0, 2.0, out=d)
    np.copyto(d, 0.0, where=np.isnan(d))  # (clipped: no infinity is left)
    s += d
    np.exp(s, out=x)
    out = ~((x > 0) & (x < np.inf))
    if out.any():
        ok[out] = False
        x[out] = 1.0
        s[out] = 0.0


def _step_u_arr(a: np.ndarray, c: np.ndarray, g: np.ndarray, ld: np.ndarray, t: np.ndarray
                ) -> np.ndarray:
    """:func:`~symgdp.gaussian.scalar._step_u` (the fifth-order step in u = log(-log delta))
    for arrays: the same operations in the same order (up to the order of the two terms of
    a sum, which does not change a rounding), formed in place (a fresh array per operation
    would cost more than the arithmetic); the inputs are left unchanged."""
    p = a * c
    q2 = a * a
    w = np.multiply(c, c)
    q2 += w
    G1 = np.subtract(1.0, p)
    G4 = q2 * -4.0  # e4 is formed in its place
    G2 = np.negative(q2, out=q2)
    G3 = p
    G3 *= -4.0
    e2 = np.multiply(G1, G1)
    e2 += G2
    e3 = G1 * e2  # G3 + G1 e2 + (2 G2) G1
    e3 += G3
    np.multiply(G2, 2.0, out=w)
    w *= G1
    e3 += w
    e4 = G4  # G4 + G1 e3 + (3 G2) e2 + (3 G3) G1
    np.multiply(G1, e3, out=w)
    e4 += w
    np.multiply(G2, 3.0, out=w)
    w *= e2
    e4 += w
    np.multiply(G3, 3.0, out=w)
    w *= G1
    e4 += w
    v = G2  # G2, G3: scratch arrays from here
    L2, L3, L4, L5 = _log_rule(G1, e2, e3, e4, g, w, v)  # L5 in e4's place
    gam = g / ld
    M2, M3, M4, M5 = _log_rule(L2, L3, L4, L5, gam, w, v)  # M5 in L5's place
    A2 = np.multiply(M2, 0.5, out=M2)
    A3 = np.multiply(M3, 1.0 / 6.0, out=M3)
    A4 = np.multiply(M4, 1.0 / 24.0, out=M4)
    A5 = np.multiply(M5, 1.0 / 120.0, out=M5)
    A22 = np.multiply(A2, A2, out=L2)
    d = A2 * A4  # 6 A2 A4 + 3 A3^2 - 21 A2^2 A3 + 14 A2^4 - A5
    d *= 6.0
    np.multiply(A3, A3, out=w)
    w *= 3.0
    d += w
    np.multiply(A22, A3, out=w)
    w *= 21.0
    d -= w
    np.multiply(A22, A22, out=w)
    w *= 14.0
    d += w
    d -= A5
    tt = np.divide(t, gam, out=gam)
    d *= tt  # + (A3 - A22) A2 5 - A4
    np.subtract(A3, A22, out=w)
    w *= A2
    w *= 5.0
    w -= A4
    d += w
    d *= tt  # + 2 A22 - A3
    np.multiply(A22, 2.0, out=w)
    w -= A3
    d += w
    d *= tt
    d -= A2
    d *= tt
    d += 1.0
    d *= tt
    return d


def _step4(e: np.ndarray, L: np.ndarray, s: np.ndarray, x: np.ndarray, a: np.ndarray,
           ld: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fourth-order step of :func:`_mu_fast` from s = log x (a = x/2 - e/x, ld the
    value of log delta there): (step, F1, F2).

    With p = a c, k = F3/g = h^2 + h1 (h1 = G2 - g h) the reversion
    d = t (1 + t (-A2 + t ((2 A2^2 - A3) + t (A2 (5 A3 - 5 A2^2) - A4)))),
    A_j = F_j/(j! g), t = (L - ld)/g, reads
    d = t (1 + t (-h/2 + t ((h^2/2 - k/6) + t (h (3k/8 - 5h^2/8 - h1/12) + p/6 + g k/24)))).
    Formed in place: on blocks of _FAST_BLOCK elements a fresh array per operation costs
    more than the arithmetic.  F1 = g and F2 = g h are formed in the order of the error
    model (the enclosure uses them); d only places the next point (or, below _FAST_STEP,
    the last correction of a "nearest" root).
    """
    c = x - a
    p = a * c
    aa = a * a
    g = aa * -0.5  # g = exp(s - a^2/2 - log sqrt(2 pi) - ld)
    g += s
    g -= _LOG_SQRT_2PI
    g -= ld
    np.exp(g, out=g)
    h = 1.0 - p
    h -= g
    gh = g * h
    h1 = c * c  # h1 = -(a^2 + c^2) - g h
    h1 += aa
    h1 += gh
    np.negative(h1, out=h1)
    hh = h * h
    t = L - ld
    t /= g
    k = hh + h1  # F3 / g
    d = k * 0.375  # the coefficient of t^4, then Horner in t
    np.multiply(hh, 0.625, out=c)  # c is free: a scratch array from here
    d -= c
    np.multiply(h1, 1.0 / 12.0, out=c)
    d -= c
    d *= h
    np.multiply(p, 1.0 / 6.0, out=c)
    d += c
    np.multiply(k, g, out=c)
    c *= 1.0 / 24.0
    d += c
    d *= t
    np.multiply(hh, 0.5, out=c)
    d += c
    k *= 1.0 / 6.0
    d -= k
    d *= t
    np.multiply(h, 0.5, out=c)
    d -= c
    d *= t
    d += 1.0
    d *= t
    return d, g, gh


def _log_rule(r1: np.ndarray, r2: np.ndarray, r3: np.ndarray, r4: np.ndarray,
              h: np.ndarray, w: np.ndarray, v: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~symgdp.gaussian.scalar._log_rule` for arrays (the derivatives of a
    logarithm), the same operations in the same order; ``w``, ``v`` are scratch arrays and
    the fourth output is formed in ``r4``'s place."""
    o1 = r1 - h
    np.multiply(o1, 2.0, out=w)  # o2 = r2 - h (r1 + 2 o1)
    w += r1
    w *= h
    o2 = r2 - w
    np.multiply(o1, 3.0, out=w)  # o3 = r3 - h (r2 + (3 o1) r1 + 3 o2)
    w *= r1
    w += r2
    np.multiply(o2, 3.0, out=v)
    w += v
    w *= h
    o3 = r3 - w
    np.multiply(o1, 4.0, out=w)  # o4 = r4 - h (r3 + (4 o1) r2 + (6 o2) r1 + 4 o3)
    w *= r2
    w += r3
    np.multiply(o2, 6.0, out=v)
    v *= r1
    w += v
    np.multiply(o3, 4.0, out=v)
    w += v
    w *= h
    return o1, o2, o3, np.subtract(r4, w, out=r4)


def _mu_start_fast(e: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The start of :func:`_mu_fast` and log Phi(a) there (a = mu/2 - eps/mu).

    The larger of the lower bound 1 of :func:`_mu_start` (Phi(a) = delta: there
    log Phi(a) = L by construction; scipy's ndtri_exp takes -ndtri(-expm1(L)) itself
    near L = 0) and, in place of its lower bound 2, sqrt(2 pi) delta <= 2 sqrt2
    erfinv(delta) (erfinv is convex on [0, 1)) while delta < 1/2, lower bound 2 itself
    above (in its form for delta near 1); where that one is the larger, log Phi(a) is
    evaluated.  Nothing depends on these being bounds: they only place the first step."""
    q = special.ndtri_exp(L)
    r = np.sqrt(q * q + 2.0 * e)
    x = np.where(q < 0, 2.0 * e / (r - q), q + r)
    mu_head = np.exp(L + _LOG_SQRT_2PI)
    big = L >= -0.6931471805599453
    if np.any(big):
        # for delta >= 1/2 (q >= 0): 2 Phi^-1((1 + delta)/2) <= 2 q + 1.349 (the difference
        # Phi^-1(1 - p/2) - Phi^-1(1 - p) is largest at p = 1/2, 0.6745), below the tail
        # bound q + sqrt(q^2 + 2 eps) unless 2 eps < 2.698 q + 1.82: only there is it formed
        # (the start is the same)
        mu_head[big] = 0.0
        need = big & (2.0 * e < 2.7 * q + 1.83)
        if np.any(need):
            mu_head[need] = -2.0 * special.ndtri_exp(np.log(-np.expm1(L[need])) - _LOG2)
    head = ~(x >= mu_head)  # (NaN: the head bound)
    lp = L.copy()
    if np.any(head):
        xh = mu_head[head]
        lp[head] = special.log_ndtr(0.5 * xh - e[head] / xh)
        x[head] = xh
    return x, lp
