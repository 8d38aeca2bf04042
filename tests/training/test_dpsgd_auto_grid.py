"""The automatic grid and tol of symgdp.dpsgd (symgdp.training.grids).

References (named at each test): a rigorous lower bound on DP-SGD's mu from a post-processing
of the T-fold output (the sum of the T noisy outputs, a one-dimensional mixture of Gaussians:
data processing can only lower the hockey-stick divergence), evaluated in 40-digit mpmath
with mu solved by mpmath bisection on the closed-form Gaussian profile; dp_accounting's
pessimistic connect-the-dots PLD on a fine grid (an upper estimate, float64 FFT); and the
same call with the grid and tol given by hand (bit-identity where the rule keeps the first
run).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symgdp import dpsgd
from symgdp.training.grids import BASE_GRID, MAX_POINTS, REFINE_BELOW, auto_grid


def _mu_gdp_mp(eps: float, delta: mpmath.mpf, dps: int = 40) -> float:
    """The largest mu (to 2^-200 of 10) with delta_mu(eps) <= delta (bisection in ``dps``
    digits on the closed form Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2), increasing in
    mu)."""
    with mpmath.workdps(dps):
        e = mpmath.mpf(eps)

        def f(m):
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

        a, b = mpmath.mpf("1e-8"), mpmath.mpf(10)
        for _ in range(200):
            mid = (a + b) / 2
            if f(mid) > delta:
                b = mid
            else:
                a = mid
        return float(a)


def _mu_lower_by_sum(eps: float, q: float, s: float, T: int) -> float:
    r"""A proved lower bound on every mu for which DP-SGD (add/remove, Poisson) is mu-GDP on
    a head containing ``eps``.  The remove pair's T-fold outputs, post-processed to their
    sum, are :math:`\sum_k \mathrm{Bin}(T, q)(k) N(k, T s^2)` against :math:`N(0, T s^2)`;
    for any set :math:`A = \{x > \hat x\}`, :math:`\delta(\varepsilon) \ge P(A) -
    e^\varepsilon Q(A)`, with :math:`P(A)` summed over k (dropping terms only lowers it) in
    40-digit mpmath.  :math:`\hat x` (where the summed pair's loss is eps) is placed in
    float64: any :math:`\hat x` gives a valid bound."""
    from scipy.stats import binom

    sd = s * math.sqrt(T)
    ks = np.arange(0, int(T * q + 60 * math.sqrt(T * q)) + 1)
    w = binom.pmf(ks, T, q)
    keep = w > 0
    ks, lw = ks[keep], np.log(w[keep])

    def loss(x: float) -> float:
        a = lw + (2 * ks * x - ks * ks) / (2 * sd * sd)
        m = float(a.max())
        return m + math.log(float(np.exp(a - m).sum()))

    lo, hi = -10 * sd, 10 * sd + 10 * T * q
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if loss(mid) > eps else (mid, hi)
    with mpmath.workdps(40):
        x, sdm, qm = mpmath.mpf(hi), mpmath.mpf(sd), mpmath.mpf(q)
        p = mpmath.fsum(mpmath.binomial(T, int(k)) * qm ** int(k) * (1 - qm) ** (T - int(k))
                        * mpmath.ncdf(-(x - int(k)) / sdm) for k in ks)
        d = p - mpmath.exp(mpmath.mpf(eps)) * mpmath.ncdf(-x / sdm)
        assert d > 0
        return _mu_gdp_mp(eps, d)


def _mu_upper_estimate_dp_accounting(r, q: float, s: float, T: int, disc: float) -> float:
    """max over a grid of the head of mu_gdp(eps, delta) of dp_accounting's pessimistic
    (connect-the-dots) PLD: an upper estimate of the mechanism's mu on the head (float64)."""
    from dp_accounting.pld import privacy_loss_distribution as P

    one = P.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=disc,
                                    use_connect_dots=True)
    c = one.self_compose(T)
    # DP-SGD's GDP transformation rises along the head: its maximum is near eps_h
    xs = np.linspace(0.5 * r.eps_h, r.eps_h, 26)
    ds = np.asarray(c.get_delta_for_epsilon(xs), dtype=np.float64)
    return max(_mu_gdp_mp(float(e), mpmath.mpf(float(d)), 25)
               for e, d in zip(xs, ds, strict=True) if d > 0)


def test_small_mu_gets_a_narrow_bracket_containing_the_references():
    # references: the sum-statistic lower bound (40-digit mpmath, proved) and dp_accounting's
    # pessimistic PLD on a 2e-6 grid (an upper estimate); on the old fixed grid 1e-4 this
    # bracket was [0.01497, 0.02051], 27 % wide
    q, s, T = 0.001, 20.0, 100_000
    r = dpsgd(q, s, T)
    assert r.grid_rule.startswith("automatic") and r.discretization < BASE_GRID
    assert r.measurement.tol < 1e-4
    assert (r.mu_upper - r.mu_floor) / r.mu_upper <= 2e-2
    ref_lower = max(_mu_lower_by_sum(e, q, s, T) for e in (0.5 * r.eps_h, 0.99 * r.eps_h))
    ref_upper = _mu_upper_estimate_dp_accounting(r, q, s, T, 2e-6)
    assert ref_lower <= ref_upper
    assert ref_lower <= r.mu_upper and r.mu_floor <= ref_upper
    # the bracket is narrow around the proved lower bound too (not merely containing it)
    assert r.mu_upper <= ref_lower * 1.02


def test_published_regime_is_bit_identical_to_the_explicit_grid():
    # reference: the same call with value_discretization_interval=1e-4, tol=1e-4 given (the
    # rule keeps its first run when mu_upper >= 0.2: the published settings' grid)
    auto = dpsgd(0.2, 3.0, 20)
    given = dpsgd(0.2, 3.0, 20, value_discretization_interval=1e-4, tol=1e-4)
    assert given.mu_upper >= REFINE_BELOW
    assert auto.grid_rule.startswith("automatic") and "kept" in auto.grid_rule
    assert given.grid_rule == "given"
    for f in ("mu_floor", "mu_upper", "eps_h", "failure_prob", "surrogate_lower",
              "eps_certified", "mu_rdp", "discretization", "floor_discretization",
              "pld_floor"):
        assert getattr(auto, f) == getattr(given, f), f
    assert auto.measurement.tol == given.measurement.tol == 1e-4


def test_explicit_values_are_used_as_given():
    # reference: the arguments themselves; mu here is about 0.05 (< 0.2), so the automatic
    # rule would change both
    q, s, T = 0.001, 4.0, 10_000
    both = dpsgd(q, s, T, value_discretization_interval=1e-4, tol=1e-4)
    assert both.discretization == 1e-4 and both.measurement.tol == 1e-4
    assert both.grid_rule == "given"
    only_disc = dpsgd(q, s, T, value_discretization_interval=1e-4)
    assert only_disc.discretization == 1e-4 and only_disc.measurement.tol < 1e-4
    assert only_disc.mu_floor == both.mu_floor  # the same composition, re-measured
    only_tol = dpsgd(q, s, T, tol=1e-4)
    assert only_tol.discretization < 1e-4 and only_tol.measurement.tol == 1e-4
    # the finer grid gives the narrower bracket; both are proved, so they overlap
    assert only_tol.width < both.width
    assert max(only_tol.mu_floor, both.mu_floor) <= min(only_tol.mu_upper, both.mu_upper)


def test_the_recorded_grid_reproduces_the_result():
    # reference: a second call with the recorded grid and tol given by hand
    r = dpsgd(0.01, 10.0, 1000)
    assert r.discretization < 1e-4 and "automatic" in r.grid_rule
    again = dpsgd(0.01, 10.0, 1000, value_discretization_interval=r.discretization,
                  tol=r.measurement.tol)
    assert (again.mu_floor, again.mu_upper, again.eps_h) == (r.mu_floor, r.mu_upper, r.eps_h)
    assert again.grid_rule == "given"


def test_the_cost_clamp_bounds_the_composed_points():
    # reference: the rule's own cost model (the composed length scales as 1/grid): the
    # clamped grid keeps it at MAX_POINTS, where the unclamped one would be 4 times more
    c = auto_grid(0.0308, 10**6, 1e-4, 1e-4, 7197, 9)
    assert "cost clamp" in c.text
    assert 7197 * 1e-4 / c.disc <= MAX_POINTS * (1 + 1e-12)
    assert c.disc > 1e-2 * 0.0308 / 1000
    assert auto_grid(0.25, 10**4, 1e-4, 1e-4, 10**5, 10**4).disc == 1e-4


@pytest.mark.parametrize("bad", [0.0, -1e-4, 2.0, math.nan])
def test_bad_explicit_grid_is_refused(bad):
    from symgdp.errors import DomainError

    with pytest.raises(DomainError, match="value_discretization_interval"):
        dpsgd(0.01, 1.0, 10, value_discretization_interval=bad)


def test_cli_chooses_the_grid_unless_given():
    # reference: the Python call with the same arguments (the CLI is a front end to it)
    import io
    import json

    from symgdp.cli.main import main

    def run(*extra):
        out, err = io.StringIO(), io.StringIO()
        status = main(["dpsgd", "--q", "0.01", "--sigma", "10", "--steps", "1000", "--json",
                       *extra], stdout=out, stderr=err)
        assert status == 0, err.getvalue()
        return json.loads(out.getvalue())

    auto = run()
    r = dpsgd(0.01, 10.0, 1000)
    assert auto["grid_rule"].startswith("automatic") and auto["grid_rule"] == r.grid_rule
    assert (auto["mu_floor"], auto["mu_upper"], auto["discretization"]) == (
        r.mu_floor, r.mu_upper, r.discretization)
    given = run("--discretization", "1e-4", "--tol", "1e-4")
    assert given["grid_rule"] == "given" and given["discretization"] == 1e-4
    out, err = io.StringIO(), io.StringIO()
    assert main(["dpsgd", "--q", "0.01", "--sigma", "10", "--steps", "10",
                 "--discretization", "2"], stdout=out, stderr=err) == 2
    assert "value_discretization_interval" in err.getvalue() and "2" in err.getvalue()


@pytest.mark.slow
def test_statement_lets_each_scheme_choose_its_grid():
    # reference: each line's own dpsgd call with the automatic rule (a grid chosen for one
    # scheme's mu is not the grid for another's: replace-one's mu is about twice this one)
    r = dpsgd(sampling="poisson", dataset_size=10000, batch_size=10, sigma=20.0, steps=500)
    st = r.statement()
    rep = st.results["poisson_replace_one"]
    assert rep.grid_rule.startswith("automatic") and rep.discretization != r.discretization
    alone = dpsgd(0.001, 20.0, 500, neighbouring="replace_one")
    assert (rep.mu_floor, rep.mu_upper) == (alone.mu_floor, alone.mu_upper)
