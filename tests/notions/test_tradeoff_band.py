"""Certified trade-off bands (symgdp.notions.fdp.band) and the GDP bracket of a curve.

Independent references, all 40-digit mpmath written here from the mechanisms' output laws:

* Gaussian: G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) (Dong, Roth & Su 2021, Def. 2.4), with
  Phi^{-1} from mpmath.erfinv;
* Laplace (P = Lap(0, 1), Q = Lap(eps0, 1)): the likelihood ratio is monotone in x, so the
  optimal tests are thresholds c: a = P[X > c], beta = Q[X <= c], solved for c in closed form;
* k-fold randomized response: the Neyman-Pearson tests between Bin(k, q) and Bin(k, p)
  (the count of ones is sufficient), randomised at the threshold, binomials summed exactly.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy

from symgdp import mechanisms as M
from symgdp import tradeoff as T
from symgdp.accounting.pure_dp import optimal_pure_dp
from symgdp.errors import DomainError

DPS = 40
ALPHA = np.linspace(0.0, 1.0, 10_001)


def _gauss_ref(mu: float, a: np.ndarray) -> np.ndarray:
    out = []
    with mpmath.workdps(DPS):
        m = mpmath.mpf(mu)
        for x in a:
            x = mpmath.mpf(float(x))
            if x == 0:
                out.append(1.0)
            elif x == 1:
                out.append(0.0)
            else:
                # 1 - 2a must not round to 1: raise the precision for tiny a
                with mpmath.workdps(DPS + max(0, -int(mpmath.log10(x)))):
                    z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * x)  # Phi^{-1}(1 - a)
                    out.append(float(mpmath.ncdf(z - m)))
    return np.array(out)


def _laplace_ref(eps0: float, a: np.ndarray) -> np.ndarray:
    def cdf(x):  # Laplace(0, 1) distribution function
        return mpmath.exp(x) / 2 if x < 0 else 1 - mpmath.exp(-x) / 2

    out = []
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        for x in a:
            x = mpmath.mpf(float(x))
            if x == 0:
                out.append(1.0)
                continue
            # P[X > c] = x  with X ~ Lap(0, 1)
            c = -mpmath.log(2 * x) if x <= mpmath.mpf(1) / 2 else mpmath.log(2 * (1 - x))
            out.append(float(cdf(c - e)))
    return np.array(out)


def _rr_ref(eps0: float, k: int, a: np.ndarray) -> np.ndarray:
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        q = 1 - p
        pmf_q = [mpmath.binomial(k, j) * q**j * p**(k - j) for j in range(k + 1)]
        pmf_p = [mpmath.binomial(k, j) * p**j * q**(k - j) for j in range(k + 1)]
        out = []
        for x in a:
            x = mpmath.mpf(float(x))
            # reject for J > t, and with probability g at J = t, so that the size is x
            tail, t = mpmath.mpf(0), k
            while t >= 0 and tail + pmf_q[t] < x:
                tail += pmf_q[t]
                t -= 1
            if t < 0:
                out.append(0.0)
                continue
            g = (x - tail) / pmf_q[t]
            power = sum(pmf_p[t + 1:]) + g * pmf_p[t]
            out.append(float(1 - power))
    return np.array(out)


def _check(band: T.TradeoffBand, ref: np.ndarray, width: float = 1e-9) -> None:
    # the reference is rounded to float64 (half an ulp) from 40 digits (1e-30 absolute:
    # the binomial sums at alpha = 1 leave ~1e-41 instead of 0)
    slack = np.abs(ref) * 2.3e-16 + 1e-30
    assert np.all(band.lower <= ref + slack), np.max(band.lower - ref)
    assert np.all(ref - slack <= band.upper), np.max(ref - band.upper)
    big = ref >= 1e-6
    assert np.max(band.width[big]) <= width


@pytest.fixture(scope="module")
def gauss_ref():
    return _gauss_ref(1.0, ALPHA)


@pytest.fixture(scope="module")
def laplace_ref():
    return _laplace_ref(1.0, ALPHA)


@pytest.mark.slow  # the 10^4-point 40-digit reference takes ~10 s
def test_band_of_mu(gauss_ref):
    b = T.band(1.0, ALPHA)
    assert b.method == "gdp"
    _check(b, gauss_ref, width=1e-15)


@pytest.mark.slow  # the 10^4-point 40-digit reference takes ~10 s
def test_band_gaussian_profile_by_tag(gauss_ref):
    b = T.band(M.gaussian(1.0), ALPHA)
    assert b.method == "gdp"
    _check(b, gauss_ref, width=1e-15)


@pytest.mark.slow  # the 10^4-point 40-digit reference takes ~10 s
def test_band_gaussian_profile_generic(gauss_ref):
    # the tag removed: the conjugate route of Prop. 2.12 with refinement
    b = T.band(M.gaussian(1.0).replace(mechanism=None), ALPHA)
    assert b.method == "conjugate"
    _check(b, gauss_ref)


def test_band_laplace_by_tag_and_generic(laplace_ref):
    b = T.band(M.laplace(1.0), ALPHA)
    assert b.method == "closed form (laplace)"
    _check(b, laplace_ref, width=1e-15)
    g = T.band(M.laplace(1.0).replace(mechanism=None), ALPHA)
    assert g.method == "conjugate"
    _check(g, laplace_ref)


@pytest.mark.parametrize("eps0,k", [(0.5, 6), (1.0, 1), (0.2, 30)])
def test_band_k_fold_randomized_response(eps0, k):
    a = np.linspace(0.0, 1.0, 2001) if k == 30 else ALPHA
    ref = _rr_ref(eps0, k, a)
    b = T.band(optimal_pure_dp(eps0, k), a)
    assert b.method == "conjugate"
    _check(b, ref)


def test_band_randomized_response_tag():
    a = np.linspace(0.0, 1.0, 1001)
    ref = _rr_ref(math.log(3), 1, a)
    b = T.band(M.randomized_response(sympy.log(3)), a)
    assert b.method == "closed form (randomized_response)"
    _check(b, ref, width=1e-15)


def test_stale_tag_is_not_trusted():
    # a transformed profile keeping its tag: the closed form must not be used
    p = M.laplace(1.0)
    q = p.replace(expr=p.expr / 2)
    assert q.meta["mechanism"] == p.meta["mechanism"]
    b = T.band(q, 0.3)
    assert b.method == "conjugate"
    # reference: at eps >= eps0 the halved profile is 0 as well, so f(a) >= 1 - e a there;
    # and the halved profile is below the original, so its curve is above Laplace's
    assert b.upper >= _laplace_ref(1.0, np.array([0.3]))[0]


class _Numeric:
    """A numeric profile giving only log_delta (an upper bound), optionally a lower one."""

    def __init__(self, mu: float, lower: bool) -> None:
        self._p = M.gaussian(mu)
        if lower:
            self.log_delta_lower = self._lower

    def log_delta(self, x):
        # an upper bound: the exact value plus 1e-12 relative
        return np.log(np.asarray(self._p(x))) + 1e-12

    def _lower(self, x):
        return np.log(np.asarray(self._p(x))) - 1e-12


@pytest.mark.slow  # the 10^4-point 40-digit reference takes ~10 s
def test_numeric_profile_upper_only(gauss_ref):
    a = ALPHA[::200]
    b = T.band(_Numeric(1.0, lower=False), a, tol=1e-8)
    assert b.method == "conjugate, lower only"
    ref = gauss_ref[::200]
    assert np.all(b.lower <= ref + 1e-15)
    assert np.all(b.upper >= 1 - a - 1e-15)   # the trivial upper band
    assert np.max(ref - b.lower) < 1e-6


@pytest.mark.slow  # the 10^4-point 40-digit reference takes ~10 s
def test_numeric_profile_with_lower(gauss_ref):
    a = ALPHA[::200]
    b = T.band(_Numeric(1.0, lower=True), a, tol=1e-8)
    assert b.method == "conjugate"
    _check(b, gauss_ref[::200], width=1e-8)


def test_band_special_values():
    # references: G_0(a) = 1 - a; G_inf = 0; every curve has f(0) = 1 (GDP), f(1) = 0
    b = T.band(0.0, [0.0, 1e-20, 0.3, 1.0])
    assert np.all(b.lower <= 1 - b.alpha) and np.all(1 - b.alpha <= b.upper)
    assert T.band(math.inf, 0.3).upper == 0.0
    s = T.band(2.0, 0.0)
    assert (s.lower, s.upper) == (1.0, 1.0)
    assert isinstance(T.band(2.0, 0.5).lower, float)
    with pytest.raises(AttributeError):
        T.band(1.0, 0.5).lower = 0.0  # frozen
    arr = T.band(1.0, [0.1, 0.2])
    with pytest.raises(ValueError):
        arr.lower[0] = 0.0  # read-only


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_band_bad_alpha(bad):
    with pytest.raises(DomainError, match="alpha"):
        T.band(1.0, bad)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), True, "x"])
def test_band_bad_input(bad):
    with pytest.raises(DomainError):
        T.band(bad, 0.5)


def test_band_tiny_alpha_and_large_mu():
    # reference: G_mu in mpmath at extreme arguments (float64 ndtri would be inaccurate)
    a = np.array([1e-300, 1e-30, 1e-8, 1 - 1e-12])
    for mu in (0.01, 5.0, 30.0):
        _check(T.band(mu, a), _gauss_ref(mu, a), width=1e-15)


# -- gdp_mu brackets --------------------------------------------------------------------
@pytest.mark.parametrize("eps0", [0.01, 0.7, 6.0])
def test_gdp_mu_brackets_closed_forms(eps0):
    # references: -2 Phi^{-1}(1/(1 + e^eps0)) and -2 Phi^{-1}(e^{-eps0/2}/2) in mpmath
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps0)
        rr = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(e)) - 1)
        lap = -2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.exp(-e / 2) - 1)
        for curve, ref in ((T.randomized_response(eps0), rr), (T.laplace(eps0), lap)):
            m = T.gdp_mu(curve)
            assert mpmath.mpf(m.lower) <= ref <= mpmath.mpf(m.upper)
            assert m.width < 1e-15 * (1 + float(ref))


@pytest.mark.parametrize("eps0,k", [(0.2, 50), (0.5, 8)])
def test_gdp_mu_bracket_piecewise_linear(eps0, k):
    # reference: sup over kinks of the curve recomputed in mpmath from exact binomials
    a = T.randomized_response_composition(eps0, k).kinks
    ref = _rr_ref(eps0, k, np.array(a[1:-1]))
    with mpmath.workdps(DPS):
        best = max(mpmath.sqrt(2) * (mpmath.erfinv(1 - 2 * mpmath.mpf(r))
                                     + mpmath.erfinv(1 - 2 * mpmath.mpf(al)))
                   for r, al in zip(ref, a[1:-1], strict=True))
    m = T.gdp_mu(T.randomized_response_composition(eps0, k))
    assert m.certified
    assert m.lower - 1e-12 <= float(best) <= m.upper + 1e-12
    assert m.width < 1e-12


def test_gdp_mu_other_curves_lower_only():
    # a user curve without a closed form: only the lower end is proved
    g = T.gaussian(0.8)
    c = T.TradeoffCurve("user", g.fn, g.power)
    m = T.gdp_mu(c)
    assert not m.certified and m.upper == math.inf
    assert m.lower <= 0.8 and m == pytest.approx(0.8, rel=1e-9)
    assert T.gdp_mu(T.eps_delta(1.0, 1e-6)).lower == math.inf


def test_plot_draws_band_and_bracket_ends():
    # a band is a shaded region; a bracket with two distinct ends gives two G_mu curves
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from symgdp import plot

    b = T.band(M.laplace(1.0), np.linspace(0.0, 1.0, 51))
    bracket = T.MuBracket(1.0, 0.9, 1.1, "test")
    fig = plot.tradeoff(b, mu=bracket)
    ax = fig.axes[0]
    assert len(ax.collections) == 1
    # the diagonal, the band's two opaque edges (so that a narrow band shows), G_0.9, G_1.1
    assert len(ax.lines) == 5
    ys = sorted(float(line.get_ydata()[len(line.get_ydata()) // 2]) for line in ax.lines[-2:])
    assert ys[0] < ys[1]  # G_1.1(1/2) < G_0.9(1/2)


def test_profile_not_convex_in_e_eps_falls_back():
    # delta = exp(-eps^2) is not convex in t = e^eps (flat at eps = 0): not the exact
    # profile of any pair.  Reference: the supremum of Prop. 2.12 over a fine eps grid in
    # mpmath (a lower estimate of f), which the upper band must still dominate.
    from symgdp.profile import Profile

    p = Profile.parse("exp(-eps^2)")
    a = np.linspace(0.0, 1.0, 21)
    b = T.band(p, a)
    assert b.method == "conjugate, monotone"
    with mpmath.workdps(30):
        es = [mpmath.mpf(i) / 400 for i in range(0, 4001)]
        ds = [mpmath.exp(-e * e) for e in es]
        for al, up in zip(a, b.upper, strict=True):
            al = mpmath.mpf(float(al))
            ref = max(max(0, 1 - d - mpmath.exp(e) * al, mpmath.exp(-e) * (1 - d - al))
                      for e, d in zip(es, ds, strict=True))
            assert up >= ref


def test_gaussian_tag_with_irrational_mu():
    # mu = sqrt(2) is a ball, not a float: the band encloses G_mu for every mu in it
    a = np.linspace(0.0, 1.0, 41)
    b = T.band(M.gaussian(sympy.sqrt(2)), a)
    assert b.method == "gdp"
    sqrt2 = "1.4142135623730950488016887242096980785696718753769"  # 50 digits of sqrt(2)
    _check(b, _gauss_ref(sqrt2, a), width=1e-14)  # reference: mpmath at sqrt(2)
