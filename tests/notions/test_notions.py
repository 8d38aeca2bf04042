r"""Tests of symgdp.notions: RDP, zCDP and trade-off curves as numeric sources.

References (all independent of the code under test):

* the Gaussian profile :math:`\delta_\mu` to 50 digits from ``tests/reference.py``
  (mpmath erfc, never symgdp);
* the RDP -> (eps, delta) infimum of a linear curve :math:`\xi + \rho\alpha` to 50 digits:
  the root of :math:`f'(\alpha) = \xi + \rho(2\alpha - 1) - \varepsilon + \log(1 - 1/\alpha)`
  by mpmath bisection (f is convex), then :math:`f` at it (written here from the formula);
* Mironov's conversion in closed form, :math:`\log\delta = -(\varepsilon-\xi-\rho)^2/(4\rho)`;
* the exact profile of the trade-off curve :math:`f_{\varepsilon_0,\delta_0}` (the partial
  order of (eps, delta)-DP conditions, Kairouz, Oh & Viswanath 2015):
  :math:`\delta_0 + (1-\delta_0)(e^{\varepsilon_0} - e^{\varepsilon})_+/(1 + e^{\varepsilon_0})`;
* hand-derived conjugates of :math:`T(\alpha) = (1 - \alpha)^2` and its inverse
  :math:`1 - \sqrt{\alpha}`: :math:`(2 - e^\varepsilon)_+^2/4` and :math:`e^{-\varepsilon}/4`.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from references import ref_log_delta

from symgdp import notions as N
from symgdp.errors import DomainError, UnboundParameterError

DPS = 50
SIGMA = sympy.Symbol("sigma", positive=True)
MU = sympy.Symbol("mu", positive=True)
EPS_GRID = [0.0, 0.01, 0.1, 0.3, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 35.0, 60.0,
            100.0]
G_MU = "Phi(sqrt(2)*erfcinv(2*alpha) - mu)"   # G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)


def mp_linear_inf(rho: float, xi: float, eps: float) -> mpmath.mpf:
    """50-digit log of inf_alpha exp(f(alpha)) for the RDP curve xi + rho*alpha (<= 0)."""
    with mpmath.workdps(DPS + 20):
        r, x, e = mpmath.mpf(rho), mpmath.mpf(xi), mpmath.mpf(eps)

        def f(a: mpmath.mpf) -> mpmath.mpf:
            return ((a - 1) * (x + r * a - e) + (a - 1) * mpmath.log(1 - 1 / a)
                    - mpmath.log(a))

        def df(a: mpmath.mpf) -> mpmath.mpf:
            return x + r * (2 * a - 1) - e + mpmath.log(1 - 1 / a)

        lo, hi = mpmath.mpf(1) + mpmath.mpf(10) ** -40, (e + 1) / r + 2
        assert df(lo) < 0 < df(hi)
        for _ in range(400):
            mid = (lo + hi) / 2
            if df(mid) < 0:
                lo = mid
            else:
                hi = mid
        return min(f((lo + hi) / 2), mpmath.mpf(0))


# -- zCDP and linear RDP curves ---------------------------------------------------------------

@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 10.0])
def test_gaussian_through_rdp_and_zcdp(sigma):
    rho = 1 / (2 * sigma**2)
    z = N.zcdp_source(1 / (2 * SIGMA**2), values={"sigma": sigma})
    r = N.rdp_source(N.alpha / (2 * SIGMA**2), values={SIGMA: sigma})
    x = np.array(EPS_GRID)
    up, lo = z.log_delta(x), z.log_delta_lower(x)
    # from_rdp(alpha/(2 sigma^2)) and from_zcdp(1/(2 sigma^2)) are one and the same profile
    np.testing.assert_array_equal(r.log_delta(x), up)
    for e, u, low in zip(EPS_GRID, up, lo, strict=True):
        ref = mp_linear_inf(rho, 0.0, e)
        assert low <= ref <= u                                    # proved bracket
        assert u - low <= 1e-9 * (1 + abs(float(ref)))           # and a tight one
        # the RDP curve of N(0, sigma^2) is alpha/(2 sigma^2), so the implied profile is
        # never below the Gaussian mechanism's (1/sigma-GDP) ...
        assert u >= float(ref_log_delta(e, 1 / sigma, dps=DPS))
        # ... and never above Mironov's conversion
        if e > rho:
            assert u <= -((e - rho) ** 2) / (4 * rho) + 1e-12 * (1 + e * e / rho)


def test_rdp_route_is_loose_by_a_known_amount():
    r"""How loose the RDP route is for the Gaussian (sigma = 1, mu = 1), derived: the
    Gaussian tail is log delta_1 = -a^2/2 - log(2 pi)/2 - log(a b) + o(1), a = eps - 1/2,
    b = eps + 1/2 (Mills ratio); the conversion at alpha = eps + 1/2 (Mironov's optimum,
    first order) gives -a^2/2 - 1 - log b + o(1).  So the gap in log delta is
    log(eps - 1/2) + log(2 pi)/2 - 1 + O(1/eps): it grows like log eps, the price of
    going through Rényi divergences.  Checked against the 50-digit references."""
    z = N.zcdp_source(0.5)
    for e in [0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0]:
        gap = z.log_delta(e) - float(ref_log_delta(e, 1.0, dps=DPS))
        ref_gap = float(mp_linear_inf(0.5, 0.0, e) - ref_log_delta(e, 1.0, dps=DPS))
        assert gap > 0
        assert abs(gap - ref_gap) < 1e-9 * (1 + e * e)
        if e >= 10:
            assert abs(gap - (math.log(e - 0.5) + 0.5 * math.log(2 * math.pi) - 1)) < 1 / e


@pytest.mark.parametrize(("rho", "xi"), [(0.01, 0.0), (0.5, 0.2), (3.0, 1.0), (1e-4, 0.0)])
def test_zcdp_with_xi_bracket(rho, xi):
    s = N.zcdp_source(rho, xi)
    for e in [0.0, 0.5, 2.0, 10.0, 50.0, 1000.0]:
        ref = mp_linear_inf(rho, xi, e)
        u, low = s.log_delta(e), s.log_delta_lower(e)
        assert low <= ref <= u
        assert u - low <= 1e-9 * (1 + abs(float(ref)))


def test_closed_form_sits_between_the_infimum_and_mironov():
    s = N.zcdp_source(sympy.Rational(1, 8), sympy.Rational(1, 10))
    cf = s.closed_form()
    e = sympy.Symbol("varepsilon", positive=True)
    cf = cf.subs(list(cf.free_symbols)[0], e) if cf.free_symbols else cf
    for x in [0.1, 0.3, 1.0, 4.0, 20.0]:
        val = float(sympy.log(cf.subs(e, x)).evalf(30))
        ref = float(mp_linear_inf(0.125, 0.1, x))
        assert val >= ref - 1e-12
        if x > 0.225:
            assert val <= -((x - 0.225) ** 2) / 0.5 + 1e-12


def test_tail_limit_of_the_gaussian_curve():
    # symbolic: lim eps^2 / (-2 log delta) = 2 rho = 1/sigma^2
    assert sympy.simplify(N.rdp_source(N.alpha / (2 * SIGMA**2)).tail_limit()
                          - 1 / SIGMA**2) == 0
    assert sympy.simplify(N.zcdp_source(1 / (2 * SIGMA**2)).tail_limit() - 1 / SIGMA**2) == 0
    # against the 50-digit infimum at large eps (sigma = 2: the limit is 1/4); the
    # approach is like 2 rho (1 + O(1/eps)), so the relative error shrinks tenfold per decade
    prev = None
    for e in [1e3, 1e4, 1e5]:
        ratio = e * e / (-2 * mp_linear_inf(0.125, 0.0, e))
        err = abs(ratio / mpmath.mpf("0.25") - 1)
        assert err < 10 / e
        if prev is not None:
            assert err < prev
        prev = err


def test_zero_rho_is_pure_and_eventually_zero():
    s = N.zcdp_source(0, xi=0.5)
    assert s.log_delta(0.6) == -math.inf         # delta = 0 beyond xi (alpha -> infinity)
    assert s.log_delta(0.0) < 0
    assert s.tail_limit() == 0


def test_unbound_parameters_are_named():
    s = N.zcdp_source(1 / (2 * SIGMA**2))
    with pytest.raises(UnboundParameterError, match="sigma"):
        s.log_delta(1.0)


# -- general RDP curves and tables -------------------------------------------------------

def test_general_path_agrees_with_the_linear_one():
    """The lattice search of RdpSource on the curve alpha/2 (forced through the general
    class) is a proved upper bound and within the lattice's loss of the 50-digit
    infimum (relative 1e-5 of log delta: step 2^(1/256) in alpha - 1)."""
    g = N.RdpSource(N.alpha / 2, N.alpha)
    for e in [0.0, 0.5, 2.0, 10.0, 40.0, 100.0]:
        ref = float(mp_linear_inf(0.5, 0.0, e))
        u = g.log_delta(e)
        assert u >= ref
        assert u - ref <= 1e-5 * (1 + abs(ref))


def test_general_curve_tail_and_monotone():
    s = N.rdp_source("alpha/2 + log(alpha)/10")
    assert s.tail_limit() == 1                   # 2 * lim (alpha/2 + log(alpha)/10)/alpha
    x = np.linspace(0, 60, 61)
    v = s.log_delta(x)
    assert v.shape == x.shape and np.all(v <= 0) and np.all(np.diff(v) <= 1e-9 * np.abs(v[1:]))
    # the curve is above alpha/2 pointwise, so its profile is above the Gaussian's (mu = 1)
    for e, u in zip(x[::10], v[::10], strict=True):
        assert u >= float(ref_log_delta(float(e), 1.0, dps=DPS))
    # the ratio approaches the limit 1 (slowly: the log(alpha) term costs O(log eps / eps))
    big = 2000.0
    assert abs(big * big / (-2 * s.log_delta(big)) - 1) < 0.05


def test_table_is_a_valid_and_exponential_tail():
    orders = [1.5, 2, 3, 5, 8, 16, 32, 64]
    tab = N.rdp_source({o: o / 2 for o in orders})
    assert tab.tail_limit() == sympy.oo
    for e in [0.0, 1.0, 3.0, 10.0]:
        # finitely many orders: never below the infimum over all orders
        assert tab.log_delta(e) >= float(mp_linear_inf(0.5, 0.0, e))
    # the table's bound at one order, by hand: alpha = 2, value 1, eps = 3:
    # (alpha-1)(1 - 3) + (alpha - 1) log(1/2) - log 2 = -2 - 2 log 2
    one = N.rdp_source([(2, 1.0)])
    assert one.log_delta(3.0) == pytest.approx(-2 - 2 * math.log(2), rel=1e-14)
    assert one.log_delta(3.0) >= -2 - 2 * math.log(2)


@pytest.mark.parametrize(("curve", "match"), [
    ("-alpha", "negative"),
    ("1/alpha", "decreas"),
    ("alpha - 3", "negative"),
    ("log(alpha - 2)", "not a finite real"),
])
def test_bad_rdp_curves(curve, match):
    with pytest.raises(DomainError, match=match):
        N.rdp_source(curve)


@pytest.mark.parametrize(("table", "match"), [
    ({1: 0.5}, "orders must be > 1"),
    ({2: -0.1}, "negative"),
    ({2: 1.0, 3: 0.5}, "decreases"),
    ([], "at least one"),
])
def test_bad_rdp_tables(table, match):
    with pytest.raises(DomainError, match=match):
        N.rdp_source(table if table else [])


@pytest.mark.parametrize(("rho", "xi"), [(-1, 0), (1, -0.5), (sympy.I, 0)])
def test_bad_zcdp(rho, xi):
    with pytest.raises(DomainError):
        N.zcdp_source(rho, xi)


def test_eps_must_be_nonnegative():
    with pytest.raises(DomainError, match="-1"):
        N.zcdp_source(0.5).log_delta(-1.0)


# -- trade-off curves -----------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_gaussian_tradeoff_curve_brackets_delta_mu(mu):
    s = N.tradeoff_source(G_MU, values={"mu": mu})
    x = np.array([0.0, 0.2, 1.0, 2.5, 6.0, 15.0, 30.0])
    up, lo = s.log_delta(x), s.log_delta_lower(x)
    for e, u, low in zip(x, up, lo, strict=True):
        ref = ref_log_delta(float(e), mu, dps=DPS)
        assert low <= ref <= u                       # the exact curve's conjugate is delta_mu
        assert u - low <= s.tol * 1.01 + 1e-12       # within the branch-and-bound's gap


def test_f_eps_delta_curve_gives_the_partial_order_profile():
    e0, d0 = 0.8, 0.01
    curve = f"Max(0, 1 - {d0} - exp({e0})*alpha, exp(-{e0})*(1 - {d0} - alpha))"
    s = N.tradeoff_source(curve)
    for e in [0.0, 0.2, 0.5, 0.79, 1.0, 3.0]:
        with mpmath.workdps(DPS):
            exact = mpmath.log(d0 + (1 - d0) * max(mpmath.exp(e0) - mpmath.exp(e), 0)
                               / (1 + mpmath.exp(e0)))
        assert s.log_delta_lower(e) <= exact <= s.log_delta(e)
    pure = N.tradeoff_source(f"Max(0, 1 - exp({e0})*alpha, exp(-{e0})*(1 - alpha))")
    assert pure.log_delta(1.0) == -math.inf       # proved: delta = 0 beyond eps0
    assert pure.log_delta(0.5) > -math.inf


def test_asymmetric_curve_takes_the_inverse_conjugate():
    # T = (1 - alpha)^2: conjugate (2 - c)_+^2 / 4; its inverse 1 - sqrt(beta): 1/(4c)
    sym = N.tradeoff_source("(1 - alpha)**2")
    asym = N.tradeoff_source("(1 - alpha)**2", symmetric=False)
    for e in [0.0, 0.3, 0.69, 1.0, 2.0]:
        c = mpmath.exp(mpmath.mpf(e))
        own = mpmath.log(max(2 - c, 0) ** 2 / 4) if c < 2 else -mpmath.inf
        inv = mpmath.log(1 / (4 * c))
        assert sym.log_delta_lower(e) <= own <= sym.log_delta(e)
        assert asym.log_delta_lower(e) <= max(own, inv) <= asym.log_delta(e)


@pytest.mark.parametrize(("curve", "match"), [
    ("Min(0.5 - 0.2*alpha, 1 - alpha)", "not convex"),
    ("Max(0, 0.3 - alpha) + Max(0, Min(alpha - 0.5, 0.6 - alpha))", "increases"),
    ("1.5 - alpha", "leaves"),
    ("-alpha", "leaves"),
    ("1 - alpha**2", "exceeds 1 - alpha"),
    ("sqrt(0.5 - alpha)", "not a finite real"),
])
def test_bad_tradeoff_curves(curve, match):
    with pytest.raises(DomainError, match=match):
        N.tradeoff_source(curve)


def test_tradeoff_unbound_and_latex():
    s = N.tradeoff_source(G_MU)
    with pytest.raises(UnboundParameterError, match="mu"):
        s.log_delta(1.0)
    assert s.latex().startswith(r"T(\alpha) = ")
    assert s.tail_limit() is None
    assert N.zcdp_source(1 / (2 * SIGMA**2)).latex() == r"\rho = \frac{1}{2 \sigma^{2}}"
    assert N.rdp_source("alpha/2").latex().startswith(r"\hat\varepsilon(\alpha) = ")
