"""Adversarial review of the DP-SGD speed rewrite (Taylor-block tails, exact cuts, chains,
FLINT threads, scale_for).  Every reference is independent of the code under test and
named in a comment."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import flint
import mpmath as mp
import pytest

from symgdp.accounting.sgd import _tails
from symgdp.accounting.tailblocks import addremove_tails


def _mp_tails(q: float, sigma: float, l: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
    """Reference: the add/remove tails P(L > l), Q(L > l) of the subsampled Gaussian in
    40-digit mpmath, from x_l = sigma^2 log((e^l - 1 + q)/q) + 1/2 and erfc."""
    qq, s = mp.mpf(q), mp.mpf(sigma)
    t = mp.expm1(l) + qq
    if t <= 0:
        return mp.mpf(1), mp.mpf(1)
    x = s * s * mp.log(t / qq) + mp.mpf(1) / 2
    f = mp.erfc(x / (s * mp.sqrt(2))) / 2
    g = mp.erfc((x - 1) / (s * mp.sqrt(2))) / 2
    return (1 - qq) * f + qq * g, f


def _contains(ball: flint.arb, v: mp.mpf) -> bool:
    m = mp.mpf(ball.mid().str(60, radius=False))
    r = mp.mpf(ball.rad().str(60, radius=False))
    return abs(v - m) <= r * (1 + mp.mpf(10) ** -30)


def _misses(q: float, sigma: float, disc: float, j0: int, pbar: list, abar: list,
            every: int = 7) -> list[int]:
    out = []
    with mp.workdps(60):
        for i in range(0, len(pbar), every):
            p, f = _mp_tails(q, sigma, mp.mpf(j0 + i) * mp.mpf(disc))
            if not (_contains(pbar[i], p) and _contains(abar[i], f)):
                out.append(j0 + i)
    return out


def test_taylor_blocks_survive_another_thread_restoring_flints_series_cap(monkeypatch):
    # FLINT's series cap (flint.ctx.cap) is process-wide; addremove_tails sets it to 50
    # and a concurrent call (another Python thread) restores its own saved value (10)
    # in the middle of this one's blocks.  Simulated deterministically: every arb_series
    # is built right after such a restore.  The balls must still contain the 40-digit
    # mpmath tails (reference: _mp_tails).  On the speed merge the truncated series kept
    # only 10 of the terms the Cauchy remainder assumed: balls off by ~1e-13 relative.
    real = flint.arb_series

    def racing(*a, **k):
        flint.ctx.cap = 10
        return real(*a, **k)

    monkeypatch.setattr(flint, "arb_series", racing)
    q, sigma, disc = 0.01, 1.0, 1e-3
    old_prec, old_cap = flint.ctx.prec, flint.ctx.cap
    flint.ctx.prec = 100
    try:
        pbar, abar, _ = addremove_tails(q, sigma, disc, -20, 3000, 100)
    finally:
        flint.ctx.prec, flint.ctx.cap = old_prec, old_cap
    assert _misses(q, sigma, disc, -20, pbar, abar) == []


def test_tails_from_python_threads_are_still_rigorous():
    # A thread-pool sweep (the ordinary way to run dpsgd over a grid of parameters)
    # calls _tails concurrently; FLINT's context (prec, cap) is shared.  Reference: the
    # same tails computed serially (rigorous balls of the same quantity must overlap)
    # and 40-digit mpmath at every 7th grid point.
    params = [(0.01 + 0.001 * k, 1.0, 1e-3, 1e-19, "add_remove", 80) for k in range(6)]
    raw = _tails.__wrapped__
    serial = {p: raw(*p) for p in params}
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave often (the race, not the timing, is tested)
    old_prec, old_cap = flint.ctx.prec, flint.ctx.cap
    try:
        with ThreadPoolExecutor(4) as ex:
            par = dict(zip(params, ex.map(lambda p: raw(*p), params), strict=True))
    finally:
        sys.setswitchinterval(old)
        flint.ctx.prec, flint.ctx.cap = old_prec, old_cap
    for p in params:
        j0, _, _, pb, ab, _ = par[p]
        for x, y in zip(serial[p][3] + serial[p][4], pb + ab, strict=True):
            assert x.overlaps(y), (p, x, y)
        assert _misses(p[0], p[1], p[2], j0, pb, ab, every=37) == []
