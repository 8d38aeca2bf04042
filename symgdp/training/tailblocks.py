r"""The tails of the Poisson-subsampled Gaussian at many grid losses, in ball arithmetic,
by certified Taylor blocks (the one-step PMFs of DP-SGD, :mod:`symgdp.training.engine`).

Under add/remove the tails at the loss :math:`l` are :math:`F(l) = \bar\Phi(x_l/\sigma)`
(the :math:`Q`-mass above :math:`l`) and :math:`G(l) = \bar\Phi((x_l - 1)/\sigma)`, with
:math:`x_l = \sigma^2\log w(l) + 1/2`, :math:`w(l) = (e^l - 1 + q)/q`.  Evaluating two
``erfc`` per grid point in balls costs about ten microseconds a point; on a block of grid
points around a centre :math:`c` both are instead the values of their Taylor
polynomials, with a proved remainder.

**Theorem (block remainder).**  Let :math:`f` be analytic on a neighbourhood of the
closed box :math:`B = \{z : |\mathrm{Re}(z - c)| \le R, |\mathrm{Im}\,z| \le R\}`, with
:math:`|f| \le M` on :math:`B`, and :math:`f(c + t) = \sum_k a_k t^k`.  Then for real
:math:`|t| \le h < R`,

.. math:: \Big|f(c + t) - \sum_{k < K} a_k t^k\Big| \le M\frac{(h/R)^K}{1 - h/R}.

*Proof.*  The disc :math:`|z - c| \le R` lies in :math:`B`, so Cauchy's estimate gives
:math:`|a_k| \le M R^{-k}`, and the tail of the series is at most the geometric sum.
:math:`\square`

:math:`K` is chosen so that this is at most :math:`2^{-p-6}` for :math:`G` (:math:`p`
the working precision) and :math:`2^{-p-6}\min(1, e^{-l})` for :math:`F` at the
block's right end: the split of a cell multiplies the error of a :math:`Q`-tail by up to
:math:`e^{l}/\Delta` and that of a :math:`P`-tail by about :math:`1/\Delta`, so both
reach the masses as about :math:`2^{-p-6}/\Delta`, far below their unit
:math:`2^{-80}` (the precision is chosen so).

Both :math:`F` and :math:`G` are analytic wherever :math:`\mathrm{Re}\,w(z) > 0` (the
principal logarithm is analytic on the right half-plane and ``erfc`` is entire).  The
code checks :math:`\mathrm{Re}\,w > 0` on :math:`B` and bounds :math:`M` by evaluating
:math:`F` and :math:`G` in complex ball arithmetic (``acb``) on the box itself: a ball
enclosing every value on :math:`B`.  The coefficients :math:`a_k` are ball enclosures
(``arb_series``), the polynomial is evaluated in balls at the exact points
:math:`t = (j - j_c)\Delta`, and the remainder bound is added to the radius: every value
returned is a ball containing the true tail.  Blocks near the pole of :math:`\log w` (the
smallest losses, :math:`l \to \log(1 - q)`) are too small to pay and are evaluated point
by point.
"""

from __future__ import annotations

import math
from typing import Any

from symgdp.errors import DomainError
from symgdp.numerics.balls import SERIES_CAP_LOCK

__all__ = ["addremove_tails"]

#: the box half-width over the block half-width (the remainder falls as RATIO^-K)
RATIO = 16
_MIN_HALF = 8         # blocks of fewer points: point by point
_MAX_HALF = 1024
_MAX_TERMS = 48


def _point(l: Any, qa: Any, s2: Any, half: Any, irt: Any) -> tuple[Any, Any]:
    """(F, G) at one loss, directly (the formula of the module notes)."""
    xs = ((l.expm1() + qa) / qa).log() * s2 + half
    xs = xs * irt
    return xs.erfc() * half, (xs - irt).erfc() * half


def addremove_tails(q: float, sigma: float, disc: float, j0: int, j1: int, prec: int
                    ) -> tuple[list[Any], list[Any], list[Any]]:
    r"""Balls ``(pbar, abar, ey)`` at the losses :math:`l_j = j\Delta`, :math:`j_0 \le j
    \le j_1`: the :math:`P`-tail :math:`(1 - q)F + qG`, the :math:`Q`-tail :math:`F` (both
    1 where :math:`e^{l} - 1 + q \le 0`, no loss lies that low) and :math:`e^{l_j}`, at
    working precision ``prec`` (the caller sets ``flint.ctx.prec``).

    Example:
        >>> import flint
        >>> flint.ctx.prec = 100
        >>> p, a, e = addremove_tails(0.5, 1.0, 0.01, -80, 400, 100)
        >>> l = flint.arb(300) * flint.arb(0.01)                    # the grid loss j = 300
        >>> x = ((l.expm1() + 0.5) / 0.5).log() + 0.5               # x_l, sigma = 1
        >>> bool((a[380] - (x / flint.arb(2).sqrt()).erfc() / 2).contains(0))
        True
        >>> flint.ctx.prec = 53
    """
    import flint

    arb, acb = flint.arb, flint.acb
    qa, one, half = arb(q), arb(1), arb(0.5)
    s = arb(sigma)
    s2 = s * s
    irt = one / (s * arb(2).sqrt())
    d = arb(disc)
    omq = one - qa
    n = j1 - j0 + 1
    F: list[Any] = [None] * n
    G: list[Any] = [None] * n
    ey: list[Any] = [None] * n
    eps = arb(2) ** (-prec - 6)
    # the series cap is process-wide: held under the lock every series computation takes
    # (a block the cap truncated anyway is refused by _block, point by point instead)
    SERIES_CAP_LOCK.acquire()
    old_cap, old_prec = flint.ctx.cap, flint.ctx.prec
    flint.ctx.cap = _MAX_TERMS + 2
    # the blocks work 24 bits above prec: their sums of terms with large coefficients near
    # the pole would otherwise widen the balls beyond the point-by-point ones
    flint.ctx.prec = prec + 24
    try:
        j = j0
        # below the pole of log w: no loss there (tails 1)
        while j <= j1:
            # e^l - (1 - q); at q = 1 it is e^l (expm1 + 1 cancels far to the left)
            t = (arb(j) * d).exp() if q == 1 else (arb(j) * d).expm1() + qa
            if t < 0:
                F[j - j0], G[j - j0] = one, one
                j += 1
                continue
            if not t > 0:
                raise DomainError(f"cannot separate a grid point from log(1-q) for q={q!r}")
            break
        hw = 1  # the next block's half-width, grown while blocks succeed
        while j <= j1:
            done = False
            hw = min(max(hw, 1), _MAX_HALF, (j1 - j) // 2 + 1)
            while hw >= _MIN_HALF and not done:
                done = _block(j, hw, j0, j1, F, G, arb, acb, qa, s2, half, irt, d, eps)
                if not done:
                    hw //= 2
            if done:
                j += 2 * hw + 1
                hw *= 2
            else:  # point by point until blocks pay
                for k in range(j, min(j + 2 * _MIN_HALF, j1 + 1)):
                    F[k - j0], G[k - j0] = _point(arb(k) * d, qa, s2, half, irt)
                j += 2 * _MIN_HALF
                hw = 2 * _MIN_HALF
        # e^{l_j}: exactly at each block of 512, by the exact ratio e^{Delta} inside
        ed = d.exp()
        for k in range(n):
            ey[k] = (arb(j0 + k) * d).exp() if k % 512 == 0 else ey[k - 1] * ed
        pbar = [omq * f + qa * g for f, g in zip(F, G, strict=True)]
    finally:
        flint.ctx.cap, flint.ctx.prec = old_cap, old_prec
        SERIES_CAP_LOCK.release()
    return pbar, F, ey


def _block(j: int, hw: int, j0: int, j1: int, F: list[Any], G: list[Any], arb: Any,
           acb: Any, qa: Any, s2: Any, half: Any, irt: Any, d: Any, eps: Any) -> bool:
    """Fill F, G on the grid indices [j, j + 2 hw] (clipped to j1) from the Taylor
    polynomials at the centre j + hw; False (nothing filled) when the box leaves the
    half-plane Re w > 0 or the remainder would need more than _MAX_TERMS terms."""
    import flint

    jc = j + hw
    c = arb(jc) * d
    h = arb(hw) * d
    big_r = h * RATIO
    box = acb(c) + acb(arb(0, big_r), arb(0, big_r))
    w = (box.exp() - 1 + qa) / qa
    if not w.real > 0:
        return False
    xs = (w.log() * s2 + half) * irt
    mf, mg = abs(xs.erfc() * half).upper(), abs((xs - irt).erfc() * half).upper()
    if not (mf.is_finite() and mg.is_finite()):
        return False
    # accuracy targets: G (in P's tails) absolutely; F (the Q-tails) relative to e^{-l} at
    # the block's right end, since the split multiplies a Q-tail's error by e^{l}/Delta
    # (and F(l) <= e^{-l} P(L > l): F's own size is never needed)
    end = min(jc + hw, j1)
    tf = eps * min(arb(1), (-(arb(end) * d)).exp())
    terms, rems = [], []
    for m, target in ((mf, tf), (mg, eps)):
        # terms K with M RATIO^-K / (1 - 1/RATIO) <= target
        need = (float(m.log()) - float(target.log()) + 1.0) / math.log(RATIO)
        if not math.isfinite(need) or need > _MAX_TERMS:
            return False
        k = max(int(math.ceil(need)), 2)
        rem = m * arb(RATIO) ** (-k) * RATIO / (RATIO - 1)
        if not rem <= target * 2:  # the float estimate of the terms was off: refuse
            return False
        terms.append(k)
        rems.append(rem)
    # the series in u = (l - c) / Delta (the integer offsets of the grid points), each
    # remainder's ball added to its constant term
    z = flint.arb_series([c, d], prec=max(terms))
    xz = (((z.exp() - 1) + qa) / qa).log() * s2 + half
    xz = xz * irt
    sf, sg = xz.erfc() * half, (xz - irt).erfc() * half
    # FLINT's series cap is process-wide: another Python thread may have restored it
    # below the terms needed since it was set above (a truncated series would drop terms
    # the remainder bound assumes present), so refuse the block then
    if sf.prec < terms[0] or sg.prec < terms[1]:
        return False
    cf = sf.coeffs()[:terms[0]]
    cg = sg.coeffs()[:terms[1]]
    cf[0] += arb(0, rems[0].upper())
    cg[0] += arb(0, rems[1].upper())
    pf, pg = flint.arb_poly(cf), flint.arb_poly(cg)
    lo, hi = j - j0, min(jc + hw, j1) - j0 + 1
    F[lo:hi] = [pf(u) for u in range(j - jc, hi - lo + j - jc)]
    G[lo:hi] = [pg(u) for u in range(j - jc, hi - lo + j - jc)]
    return True
