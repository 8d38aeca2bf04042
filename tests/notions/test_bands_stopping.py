"""The refinement stopping rule of the conjugate band (symgdp.notions.bands) and the cuts of the
trade-off source's search (symgdp.notions.tradeoff).

Every band is checked as lower <= truth <= upper against G_mu(a) = Phi(Phi^{-1}(1 - a) - mu)
(Dong, Roth & Su 2021, Def. 2.4) evaluated independently with mpmath at 40 digits; the
tightness checks compare with the same reference.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy
from flint import arb, ctx
from references import gdp_curve

import symgdp.notions.bands as B
from symgdp import Profile, compose, mechanisms
from symgdp.notions import alpha
from symgdp.notions.tradeoff import TradeoffSource

DPS = 40
ALPHA = np.array([0.0, 1e-8, 1e-4, 0.003, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99,
                  1.0])


def _gdp_curve(mu: float, a: float) -> mpmath.mpf:
    """Reference: G_mu(a) at 40 digits (references.gdp_curve)."""
    return gdp_curve(mu, a, DPS)

def _contains(b, mu: float) -> np.ndarray:
    """The 40-digit truths, after asserting lower <= truth <= upper at every alpha."""
    truth = []
    for a, lo, up in zip(b.alpha, b.lower, b.upper, strict=True):
        t = _gdp_curve(mu, float(a))
        assert lo <= t <= up, (a, lo, float(t), up)
        truth.append(float(t))
    return np.array(truth)


def _g_curve(mu: float) -> sympy.Expr:
    # G_mu written with erfc and erfcinv: Phi(z) = erfc(-z / sqrt 2) / 2
    return sympy.erfc(-(sympy.sqrt(2) * sympy.erfcinv(2 * alpha) - mu) / sympy.sqrt(2)) / 2


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_tradeoff_curve_profile_band(mu):
    """from_tradeoff_curve(G_mu): the band contains G_mu; its lower side is within 1e-5 of
    it (the source is accurate to 1e-6 in log delta: the stopping rule may not stop much
    before that); its upper side is the trivial one (an implied profile says nothing of
    the mechanism from below)."""
    p = Profile.from_tradeoff_curve(_g_curve(mu))
    b = p.tradeoff(ALPHA)
    truth = _contains(b, mu)
    assert b.method == "conjugate, lower only"
    assert float(np.max(truth - b.lower)) < 1e-5
    assert list(b.upper) == pytest.approx(list(1.0 - ALPHA), abs=1e-12)


def test_guide_never_enters_the_band(monkeypatch):
    """A guide that lies (it claims delta exactly equal to its upper bound, or 0 from
    below) steers the refinement only: the band still contains G_1 (40-digit mpmath)."""
    p = Profile.from_tradeoff_curve(_g_curve(1.0))
    real = B._guide

    def exact_liar(profile):
        g = real(profile)

        def guide(e):
            up = g(e).upper()
            return up.union(up)
        return guide

    for liar in (exact_liar, lambda profile: (lambda e: arb(0).union(arb(1)))):
        monkeypatch.setattr(B, "_guide", liar)
        b = p.tradeoff(ALPHA[::2])
        _contains(b, 1.0)
    monkeypatch.setattr(B, "_guide", real)


def test_guide_only_for_implied_profiles():
    """Exact profiles use their own lower bound (no guide); implied ones get the source's."""
    assert B._guide(mechanisms.gaussian(1.0)) is None
    assert B._guide(compose(mechanisms.gaussian(0.5), times=2)) is None
    assert B._guide(Profile.from_tradeoff_curve(_g_curve(1.0))) is not None


def test_exact_symbolic_profile_stays_narrow():
    """An untagged symbolic Gaussian (conjugate route, a proved lower side accurate to a
    few ulps): the stopping rule must not stop early; width <= 1e-9 and G_1 inside."""
    b = B.band(mechanisms.gaussian(1.0).replace(mechanism=None), ALPHA)
    assert b.method == "conjugate"
    _contains(b, 1.0)
    assert float(np.max(b.width)) <= 1e-9


def test_composed_profile_band():
    """4 Gaussians of mu = 1/2 through certified PLDs are exactly G_1: the band (default
    tol, the stopping rule active where the PLD bounds differ) contains it."""
    b = compose(mechanisms.gaussian(0.5), times=4).tradeoff(ALPHA)
    _contains(b, 1.0)
    assert b.method == "conjugate" and float(np.max(b.width)) < 1e-3


def test_split_cuts_strictly_inside():
    """The search's cuts lie strictly inside their interval, for ends whose odd mantissa
    has a small exponent (81/4096: the magnitude is 2^-6, the mantissa exponent -12) and
    for random dyadic ends (reference: exact rational comparison in Arb)."""
    rng = np.random.default_rng(7)
    pairs = [(arb(81) / 4096, arb(3) / 8), (arb(3) / 8, arb(1)), (arb(1) / 2, arb(1)),
             (arb(0), arb(3) / 8), (1 - arb(81) / 4096, 1 - arb(1) / 2**40)]
    with ctx.workprec(128):
        for _ in range(200):
            u, v = sorted(float(t) for t in rng.uniform(0, 1, 2) ** rng.integers(1, 12))
            if 0 < u < v < 1:
                pairs.append((arb(u), arb(v)))
        for p, q in pairs:
            m = TradeoffSource._split(p, q)
            assert m.is_exact() and p < m < q, (p, q, m)
