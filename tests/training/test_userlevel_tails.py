"""The user-level one-step tails (symgdp.training.userlevel._mixture_tails): at every grid
loss l the balls of P(L > l) and Q(L > l) hold the truth.

Reference, independent of the package: 40-digit mpmath.  The crossing x_l of the mixture
pair's loss through l solves log sum_j a_j e^{jv} = l (v = x / sigma^2: a bracket by
doubling, 30 bisections, Newton steps on the convex left side, the residual checked),
and the tails are sums of Gaussian tails by mpmath.erfc.  The settings are the corners of
the enclosure: q = 1 (no unsampled component: log a_0 = -inf), q near 1 with a small
sigma (losses far left), a small q with a small sigma (the first grid point at
(1 - q)^k), and k = 256 with q = 0.001 (binomial weights that underflow float64).
"""

from __future__ import annotations

import flint
import mpmath
import pytest

from symgdp.training.userlevel import _mixture_tails


def _truth(k, q, s, l):
    """(P(L > l), Q(L > l)) of P = sum_j w_j N(j, s^2), Q = N(0, s^2), 40 digits."""
    with mpmath.workdps(40):
        q, s = mpmath.mpf(q), mpmath.mpf(s)
        w = [mpmath.binomial(k, j) * q**j * (1 - q) ** (k - j) for j in range(k + 1)]
        a = [w[j] * mpmath.exp(-mpmath.mpf(j * j) / (2 * s * s)) for j in range(k + 1)]
        if mpmath.exp(l) <= a[0]:
            return mpmath.mpf(1), mpmath.mpf(1)   # the loss exceeds l everywhere

        def g(v):
            return mpmath.log(mpmath.fsum(aj * mpmath.exp(j * v) for j, aj in enumerate(a))) - l

        lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
        while g(lo) > 0:
            lo *= 2
        while g(hi) < 0:
            hi *= 2
        for _ in range(30):   # bisection, then Newton from the right end (g is convex)
            m = (lo + hi) / 2
            lo, hi = (m, hi) if g(m) < 0 else (lo, m)
        v = hi
        for _ in range(12):
            t = [aj * mpmath.exp(j * v) for j, aj in enumerate(a)]
            v -= g(v) * mpmath.fsum(t) / mpmath.fsum(j * tj for j, tj in enumerate(t))
        assert abs(g(v)) < mpmath.mpf(10) ** -35
        x, r2 = s * s * v, s * mpmath.sqrt(2)
        p = mpmath.fsum(wj * mpmath.erfc((x - j) / r2) / 2 for j, wj in enumerate(w))
        return p, mpmath.erfc(x / r2) / 2


def _holds(ball, value):
    """The ball meets the reference ball (its 40 digits: within 1e-38 relative)."""
    with flint.ctx.workprec(200):
        return ball.overlaps(flint.arb(mpmath.nstr(value, 45), 1e-38 * float(value)))


@pytest.mark.parametrize("k, q, s", [(3, 1.0, 1.0), (5, 0.999, 0.7), (8, 0.02, 0.5),
                                     (2, 0.3, 0.4), (256, 0.001, 10.0)])
def test_one_step_tails_hold_the_truth(k, q, s):
    disc = 0.1
    j0, j1, _, pbar, abar, ey = _mixture_tails(k, q, s, disc, 1e-12, 80)
    n = j1 - j0 + 1
    for i in sorted({0, 1, n // 3, n // 2, n - 1}):
        # the grid loss is the exact product (j0 + i) * disc of the binary float disc
        with mpmath.workdps(40):
            el = mpmath.mpf(j0 + i) * mpmath.mpf(disc)
            p, qq = _truth(k, q, s, el)
            assert _holds(pbar[i], p), (i, pbar[i], p)
            assert _holds(abar[i], qq), (i, abar[i], qq)
            assert _holds(ey[i], mpmath.exp(el))
