r"""Tests of the float64 GDP family (:mod:`symgdp.gaussian.vectorised`) against independent
references.

Reference values are computed in tests/reference.py with mpmath at 40 significant digits from
the textbook formula :math:`\delta_\mu(\varepsilon) = \Phi(a) - e^{\varepsilon}\Phi(b)`
(:math:`a = -\varepsilon/\mu + \mu/2`, :math:`b = -\varepsilon/\mu - \mu/2`, theory §3)
written with ``mpmath.erfc``.  They do not use :mod:`symgdp.gaussian.precise`; that module is
cross-checked against the same reference at the end of the grid tests.

Accuracy targets: log δ relative error ≤ 1e-13 for μ ≤ 10; δ relative error
≤ 5e-13 wherever δ ≥ 1e-300 (including ε ≥ 710); round trips ≤ 1e-12 relative, widened by
the condition number of the inverse problem where it is ill-conditioned (each such
tolerance says how it is derived).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from references import REF_DPS, ref_dlog_deps, ref_dlog_dmu, ref_log_delta, ref_ndtri
from scipy.special import log_ndtr

from symgdp.errors import DomainError
from symgdp.gaussian import precise
from symgdp.gaussian import vectorised as g

# Hypothesis's failure report imports mypy_extensions, whose DeprecationWarning the
# project-wide "warnings are errors" turns into a pytest INTERNALERROR that hides the
# falsifying example; ignore that one third-party warning here.
pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

U = 2.0**-53  # unit roundoff of float64
LOG_TOL = 1e-13  # target: relative error of log delta for mu <= 10
DELTA_TOL = 5e-13  # target: relative error of delta wherever delta >= 1e-300
RT_TOL = 1e-12  # target: relative error of a round trip
SQRT_2PI_HALF = math.sqrt(2.0 * math.pi) / 2.0  # bound on d mu_GDP / d eps (theory §4)


def rel_err(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(x - ref) / np.abs(ref)


def worst(msg: str, err: np.ndarray, tol: np.ndarray, *cols: np.ndarray) -> str:
    """Failure message naming the inputs of the worst violations."""
    ratio = err / tol
    idx = np.argsort(-ratio)[:5]
    rows = [", ".join(f"{c[i]!r}" for c in cols) + f" -> err {err[i]:.3g} tol {tol[i]:.3g}"
            for i in idx if ratio[i] > 1]
    return msg + ":\n  " + "\n  ".join(rows)


# ------------------------------------------------------------------------------- grid

# ε spans [0, 2000] with extra points around exp overflow (ε ≈ 709.78); μ spans [0.05, 30].
_EPS = np.unique(np.concatenate([
    [0.0, 1e-9],
    np.geomspace(1e-6, 2000.0, 22),
    [0.5, 1.0, 2.0, 40.0, 100.0, 709.0, 710.0, 711.0, 1000.0],
]))
_MU = np.unique(np.concatenate([np.geomspace(0.05, 30.0, 12), [1.0, 10.0]]))


@pytest.fixture(scope="module")
def grid() -> dict[str, Any]:
    """The (ε, μ) grid with 40-digit reference log δ (mpf) and its float64 roundings."""
    E, M = (x.ravel() for x in np.meshgrid(_EPS, _MU))
    ref = [ref_log_delta(e, m) for e, m in zip(E, M, strict=True)]
    with mpmath.workdps(REF_DPS):
        delta = np.array([float(mpmath.exp(r)) for r in ref])
    return {
        "eps": E,
        "mu": M,
        "ref": ref,
        "log": np.array([float(r) for r in ref]),
        "delta": delta,
        "dlog_dmu": np.array([ref_dlog_dmu(e, m, r) for e, m, r in zip(E, M, ref, strict=True)]),
        "dlog_deps": np.array([ref_dlog_deps(e, m, r) for e, m, r in zip(E, M, ref, strict=True)]),
    }


def test_grid_covers_the_targets(grid: dict[str, Any]) -> None:
    """The grid is not vacuous: it has ε ≥ 710 with δ ≥ 1e-300, and underflowed δ."""
    E, D = grid["eps"], grid["delta"]
    assert np.sum((E >= 710) & (D >= 1e-300)) >= 3
    assert np.sum(D == 0.0) >= 10
    assert E.max() == 2000.0 and grid["mu"].min() == 0.05 and grid["mu"].max() == 30.0


def test_log_delta_mu_matches_mpmath(grid: dict[str, Any]) -> None:
    E, M, LR = grid["eps"], grid["mu"], grid["log"]
    # the float evaluation's accuracy (the safe-side values: test_conversions_rounding)
    L = g.log_delta_mu(E, M, rounding="nearest")
    err = rel_err(L, LR)
    # Target 1e-13 for mu <= 10; beyond it (not covered by the targets) log delta can be
    # ~1e-50 and rests on Phi(-15); 1e-12 still catches any algorithmic error.
    tol = np.where(M <= 10, LOG_TOL, 1e-12)
    assert np.all(err <= tol), worst("log_delta_mu vs 40-digit mpmath", err, tol, E, M)


def test_delta_mu_matches_mpmath(grid: dict[str, Any]) -> None:
    E, M, DR = grid["eps"], grid["mu"], grid["delta"]
    D = g.delta_mu(E, M, rounding="nearest")  # accuracy; sides: test_conversions_rounding
    normal = DR >= 1e-300
    err = np.where(normal, rel_err(D, np.where(normal, DR, 1.0)), np.abs(D - DR))
    # Below 1e-300 only an absolute error can be asked of a (sub)normal float64.
    tol = np.where(normal, DELTA_TOL, DELTA_TOL * 1e-300)
    assert np.all(err <= tol), worst("delta_mu vs 40-digit mpmath", err, tol, E, M)


def test_mu_gdp_from_log_delta_matches_mpmath(grid: dict[str, Any]) -> None:
    """μ_GDP(ε, log δ_ref) must return the μ the 40-digit reference was computed at.

    The float input log δ carries the rounding of the reference (≤ u|log δ|) and the
    forward error of a float log δ evaluation is ≤ 1e-13 |log δ|; mapped through
    ∂μ/∂log δ = 1/(∂ log δ/∂μ) this widens the 1e-12 target where μ_GDP is ill-conditioned
    (δ within ~1e-50 of 1, where ∂ log δ/∂μ is tiny).
    """
    E, M, LR = grid["eps"], grid["mu"], grid["log"]
    mu = g.mu_gdp(E, log_delta=LR)
    err = np.abs(mu - M)
    tol = RT_TOL * M + LOG_TOL * np.abs(LR) / grid["dlog_dmu"]
    assert np.all(err <= tol), worst("mu_gdp(eps, log_delta=ref)", err, tol, E, M, LR)


def test_mu_gdp_from_delta_matches_mpmath(grid: dict[str, Any]) -> None:
    """Same with δ itself: an underflowed δ gives 0 and a δ rounded to 1.0 gives inf.

    Rounding δ to float64 perturbs log δ by ≤ u absolutely, added to the conditioning.
    """
    E, M, DR, LR = grid["eps"], grid["mu"], grid["delta"], grid["log"]
    mu = g.mu_gdp(E, delta=DR)
    assert np.all(mu[DR == 0.0] == 0.0)
    assert np.all(np.isinf(mu[DR == 1.0]))
    inner = (DR > 0.0) & (DR < 1.0)
    err = np.abs(mu - M)[inner]
    tol = (RT_TOL * M + (LOG_TOL * np.abs(LR) + 2 * U) / grid["dlog_dmu"])[inner]
    assert inner.sum() > 100
    assert np.all(err <= tol), worst("mu_gdp(eps, delta=ref)", err, tol, E[inner], M[inner])


def test_eps_gdp_matches_mpmath(grid: dict[str, Any]) -> None:
    """ε_GDP(μ, log δ_ref) must return the ε of the reference.

    Conditioning as for μ_GDP, through ∂ε/∂ log δ = 1/(∂ log δ/∂ε): at ε = 0 with μ = 30,
    log δ ≈ −7e-51 moves by only ~4e-51 per unit of ε, so the answer there is only
    determined to ~1e-13 absolutely.
    """
    E, M, LR = grid["eps"], grid["mu"], grid["log"]
    # the float root ("nearest"); the default rounds it up, and that side is tested
    # against 50-digit mpmath in test_conversions_safe.py
    eps = g.eps_gdp(M, log_delta=LR, rounding="nearest")
    err = np.abs(eps - E)
    tol = RT_TOL * E + LOG_TOL * np.abs(LR) / np.abs(grid["dlog_deps"])
    assert np.all(err <= tol), worst("eps_gdp(mu, log_delta=ref)", err, tol, E, M, LR)


def test_dlog_delta_dmu_matches_mpmath(grid: dict[str, Any]) -> None:
    """∂ log δ/∂μ = φ(a)/δ against 40 digits.  It is evaluated as exp(−a²/2 − log√(2π) − log δ),
    whose exponent cancels (a²/2 ≈ |log δ| ≈ 8e8 at ε = 2000, μ = 0.05): the rounding of the
    two large terms, ~2u(a²/2 + |log δ|), is the honest accuracy, plus 1e-13."""
    E, M, LR = grid["eps"], grid["mu"], grid["log"]
    got = g.dlog_delta_dmu(E, M)
    a = M / 2 - E / M
    err = rel_err(got, grid["dlog_dmu"])
    tol = 1e-13 + 4 * U * (a * a / 2 + np.abs(LR))
    assert np.all(err <= tol), worst("dlog_delta_dmu", err, tol, E, M)


def test_precise_matches_reference_on_grid(grid: dict[str, Any]) -> None:
    """Cross-check symgdp.gaussian.precise (40 digits) against this file's reference on the grid."""
    E, M = grid["eps"], grid["mu"]
    bad = []
    for i in range(0, E.size, 3):  # a third of the grid keeps this fast
        got = precise.log_delta_mu(float(E[i]), float(M[i]), dps=REF_DPS)
        with mpmath.workdps(REF_DPS):
            ref = grid["ref"][i]
            if abs(got - ref) > mpmath.mpf(10) ** -35 * abs(ref):
                bad.append((float(E[i]), float(M[i]), mpmath.nstr(got, 40),
                            mpmath.nstr(ref, 40)))
    assert not bad, f"precise.log_delta_mu differs at {len(bad)} points, e.g. {bad[:4]}"


# ------------------------------------------------------------------------- closed forms


def test_mu_from_pure_dp_closed_forms() -> None:
    # digits quoted in theory §3
    assert g.mu_from_pure_dp(0.2) == pytest.approx(0.2504839050688, abs=1e-13)
    assert g.mu_from_pure_dp(1.0) == pytest.approx(1.2320353853, abs=1e-10)
    assert g.mu_from_pure_dp(0.0) == 0.0


def test_mu_from_pure_dp_matches_mpmath() -> None:
    """−2 Φ⁻¹(1/(1 + e^ε₀)) at 40 digits, up to ε₀ = 1000 (Φ⁻¹ argument ≈ e^-1000)."""
    eps0 = np.array([1e-8, 1e-3, 0.2, 1.0, 5.0, 30.0, 100.0, 300.0, 1000.0])
    got = g.mu_from_pure_dp(eps0)
    with mpmath.workdps(REF_DPS):
        ref = np.array([float(-2 * ref_ndtri(1 / (1 + mpmath.exp(e)))) for e in eps0])
    # Phi^{-1}(1/(1+e^x)) has condition number <= ~1 in x; the float input is exact.
    assert np.all(rel_err(got, ref) <= 1e-13), (got, ref)


def test_mu_from_pure_dp_is_tight_at_eps_zero() -> None:
    """Second algorithm: the worst-case ε₀-DP profile has δ(0) = tanh(ε₀/2) (theory §2),
    and μ_GDP(0, tanh(ε₀/2)) must be the GDP parameter of ε₀-DP (theory §3)."""
    eps0 = np.linspace(0.05, 20.0, 40)
    via_gdpt = g.mu_gdp(0.0, delta=np.tanh(eps0 / 2))
    # conditioning: d mu / d delta at eps = 0 is sqrt(2 pi) e^{mu^2/8} / 2 (delta near 1)
    mu = g.mu_from_pure_dp(eps0)
    tol = RT_TOL * mu + 2 * U * np.sqrt(2 * np.pi) * np.exp(mu * mu / 8) / 2
    assert np.all(np.abs(via_gdpt - mu) <= tol)


def test_compose_gdp_closed_forms() -> None:
    assert g.compose_gdp(3.0, 4.0, rounding="nearest") == 5.0
    assert 5.0 < g.compose_gdp(3.0, 4.0) <= 5.0 * (1 + 1e-15)  # rounded up by default
    assert g.compose_gdp(0.5) == 0.5
    # n-fold composition of mu-GDP is sqrt(n) mu (theory §3)
    assert g.compose_gdp(*[0.3] * 16) == pytest.approx(1.2, rel=1e-15)
    # no overflow in the squares
    assert g.compose_gdp(1e200, 1e200) == pytest.approx(math.sqrt(2) * 1e200, rel=1e-15)
    assert g.compose_gdp(1.0, math.inf) == math.inf
    np.testing.assert_allclose(g.compose_gdp(np.array([3.0, 5.0]), 4.0), [5.0, math.sqrt(41)],
                               rtol=1e-15)
    with pytest.raises(TypeError):
        g.compose_gdp()


def test_eps_gdp_beyond_common_brackets() -> None:
    """eps_gdp(30, 1e-5) ≈ 577, beyond the [0, 500] bracket of common accountants.

    Reference: the root of log δ_30(ε) = log 1e-5 found by mpmath on this file's reference.
    """
    got = g.eps_gdp(30.0, 1e-5)
    with mpmath.workdps(REF_DPS):
        target = mpmath.log(mpmath.mpf(1e-5))
        root = mpmath.findroot(lambda e: ref_log_delta(e, 30) - target, mpmath.mpf(577))
    assert 576 < got < 578
    assert abs(got - float(root)) <= RT_TOL * float(root)


def test_delta_1_at_40_underflows_but_log_is_finite() -> None:
    """δ_1(40) ≈ 3.9e-343 (theory §3) lies below the smallest float64."""
    L = g.log_delta_mu(40.0, 1.0)
    ref = ref_log_delta(40.0, 1.0)
    assert abs(L - float(ref)) <= LOG_TOL * abs(float(ref))
    with mpmath.workdps(REF_DPS):
        assert mpmath.nstr(mpmath.exp(L), 2) == "3.9e-343"
    # documented underflow: 0.0 to nearest or down; rounded up (the default) a subnormal
    assert g.delta_mu(40.0, 1.0, rounding="nearest") == 0.0
    assert g.delta_mu(40.0, 1.0, rounding="down") == 0.0
    assert 0.0 < g.delta_mu(40.0, 1.0) <= 1e-323


def test_log_delta_doctest_value() -> None:
    # delta_1(100) ~ 6.1e-2155 (theory §3)
    L = g.log_delta_mu(100.0, 1.0)
    assert abs(L - float(ref_log_delta(100.0, 1.0))) <= LOG_TOL * abs(L)
    with mpmath.workdps(REF_DPS):
        assert mpmath.nstr(mpmath.exp(L), 2) == "6.1e-2155"


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("eps", [0.0, 1.0, 1000.0, math.inf])
def test_delta_zero_gives_mu_zero(eps: float) -> None:
    assert g.mu_gdp(eps, 0.0) == 0.0
    assert g.mu_gdp(eps, log_delta=-math.inf) == 0.0


@pytest.mark.parametrize("eps", [0.0, 1.0, 1000.0, math.inf])
def test_delta_one_gives_mu_inf(eps: float) -> None:
    assert g.mu_gdp(eps, 1.0) == math.inf
    assert g.mu_gdp(eps, log_delta=0.0) == math.inf


def test_eps_inf_gives_mu_inf_for_positive_delta() -> None:
    assert g.mu_gdp(math.inf, 1e-300) == math.inf
    assert g.mu_gdp(math.inf, log_delta=-1e6) == math.inf


def test_eps_zero_closed_forms() -> None:
    """δ_μ(0) = erf(μ/(2√2)) = 2Φ(μ/2) − 1; μ_GDP(0, δ) = 2√2 erf⁻¹(δ) (40-digit mpmath)."""
    mus = np.array([1e-12, 1e-6, 0.05, 0.5, 1.0, 3.0, 8.0])
    with mpmath.workdps(REF_DPS):
        ref = np.array([float(mpmath.erf(m / (2 * mpmath.sqrt(2)))) for m in mus])
    assert np.all(rel_err(g.delta_mu(0.0, mus), ref) <= DELTA_TOL)
    deltas = np.array([1e-300, 1e-12, 1e-3, 0.1, 0.5, 0.9, 0.999])
    with mpmath.workdps(REF_DPS):
        ref_mu = np.array([float(2 * mpmath.sqrt(2) * mpmath.erfinv(d)) for d in deltas])
    # conditioning: d mu/d delta = sqrt(2 pi) e^{mu^2/8}/2 times the input rounding u delta
    tol = RT_TOL * ref_mu + U * deltas * np.sqrt(2 * np.pi) * np.exp(ref_mu**2 / 8) / 2
    assert np.all(np.abs(g.mu_gdp(0.0, delta=deltas) - ref_mu) <= tol)


def test_eps_gdp_is_zero_when_delta_mu_zero_suffices() -> None:
    # delta_mu(0) = erf(mu/(2 sqrt 2)) <= delta: already (0, delta)-DP
    assert g.eps_gdp(1.0, 0.5) == 0.0  # delta_1(0) = 0.3829...
    assert g.eps_gdp(1.0, 1.0) == 0.0
    assert g.eps_gdp(0.0, 0.0) == 0.0  # mu = 0 gives 0 (documented)
    assert g.eps_gdp(0.0, 1e-300) == 0.0


def test_eps_gdp_delta_zero_and_mu_inf() -> None:
    assert g.eps_gdp(1.0, 0.0) == math.inf  # documented: delta = 0 gives inf for mu > 0
    assert g.eps_gdp(1.0, log_delta=-math.inf) == math.inf
    # delta_inf == 1 (documented convention): no finite eps reaches delta < 1
    assert g.eps_gdp(math.inf, 0.5) == math.inf
    assert g.eps_gdp(math.inf, 1.0) == 0.0


def test_mu_to_zero_and_mu_inf() -> None:
    # documented: mu = 0 means delta == 0, mu = inf means delta == 1
    assert g.delta_mu(1.0, 0.0) == 0.0 and g.log_delta_mu(1.0, 0.0) == -math.inf
    assert g.delta_mu(0.0, 0.0) == 0.0
    assert g.delta_mu(5.0, math.inf) == 1.0 and g.log_delta_mu(5.0, math.inf) == 0.0
    # continuity as mu -> 0: small mu against the 40-digit reference
    for eps, mu in [(0.0, 1e-10), (1e-12, 1e-6), (1e-6, 1e-3), (0.01, 0.01), (2.0, 0.01)]:
        ref = ref_log_delta(eps, mu)
        got = g.log_delta_mu(eps, mu, rounding="nearest")
        assert abs(got - float(ref)) <= LOG_TOL * abs(float(ref))
    # far below any float: delta underflows to exactly 0, log delta is -inf or finite
    assert g.delta_mu(1.0, 1e-300, rounding="nearest") == 0.0
    assert g.log_delta_mu(1.0, 1e-300) <= -1e300 or g.log_delta_mu(1.0, 1e-300) == -math.inf


@pytest.mark.parametrize("mu", [5e-324, 1e-300, 1e-100, 1e-20])
def test_log_delta_at_eps_zero_for_tiny_mu(mu: float) -> None:
    """μ → 0 at ε = 0: log δ_μ(0) = log erf(μ/(2√2)) ≈ log(μ/√(2π)) stays finite (it is
    about −745 even for the smallest subnormal μ); 40-digit mpmath reference."""
    with mpmath.workdps(REF_DPS):
        ref = float(mpmath.log(mpmath.erf(mpmath.mpf(mu) / (2 * mpmath.sqrt(2)))))
    assert abs(g.log_delta_mu(0.0, mu) - ref) <= LOG_TOL * abs(ref)


@pytest.mark.parametrize("L", [-50.0, -300.0, -700.0, -745.0, -2000.0])
def test_mu_gdp_at_eps_zero_for_tiny_delta(L: float) -> None:
    """μ_GDP(0, δ) = 2√2 erf⁻¹(δ) for δ = e^L down to below the float range, where μ
    underflows to 0 (40-digit mpmath reference)."""
    with mpmath.workdps(REF_DPS):
        ref = float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.exp(L)))
    got = g.mu_gdp(0.0, log_delta=L)
    # subnormal answers only have absolute accuracy
    assert abs(got - ref) <= RT_TOL * ref + 5e-324


def test_mu_gdp_tiny_mu_deep_tail() -> None:
    """μ_GDP(1e-10, log δ = −1e5) ≈ 2.2365e-13: a valid input that must not raise.
    Reference: bracketed mpmath root of this file's 40-digit reference."""
    with mpmath.workdps(REF_DPS):
        root = float(mpmath.findroot(lambda m: ref_log_delta(1e-10, m) + 100000,
                                     (mpmath.mpf(2.0e-13), mpmath.mpf(2.5e-13)),
                                     solver="anderson"))
    assert abs(g.mu_gdp(1e-10, log_delta=-1e5) - root) <= RT_TOL * root


def test_mu_gdp_delta_within_subnormal_of_one() -> None:
    """log δ = −5e-324 (δ = 1 − 5e-324 < 1) has a finite answer, μ ≈ 76.97: at ε = 0,
    erfc(μ/(2√2)) = −expm1(L), solved by mpmath.  log δ is subnormal there, so only 1e-6
    relative is asked; the point is that a valid input must not raise."""
    with mpmath.workdps(REF_DPS):
        target = mpmath.log(-mpmath.expm1(mpmath.mpf(-5e-324)))
        x = mpmath.findroot(lambda x: mpmath.log(mpmath.erfc(x)) - target,
                            (mpmath.mpf(20), mpmath.mpf(30)), solver="anderson")
        ref = float(2 * mpmath.sqrt(2) * x)
    assert g.mu_gdp(0.0, log_delta=-5e-324) == pytest.approx(ref, rel=1e-6)


def test_eps_gdp_zero_when_delta_exceeds_delta_mu_zero_near_one() -> None:
    """δ_30(0) = 1 − 7.3e-51 < 1 − 1e-100 = δ: already (0, δ)-DP, so ε_GDP = 0 (documented),
    even though erf(30/(2√2)) rounds to 1.0 in float64."""
    assert g.eps_gdp(30.0, log_delta=-1e-100) == 0.0


@pytest.mark.parametrize("mu", [5e-324, 1e-300])
def test_eps_gdp_delta_zero_tiny_mu(mu: float) -> None:
    """Documented: δ = 0 gives ε = inf for every μ > 0, however small (δ_μ(ε) > 0)."""
    assert g.eps_gdp(mu, log_delta=-math.inf) == math.inf
    assert g.eps_gdp(mu, 0.0) == math.inf


def test_eps_inf() -> None:
    assert g.delta_mu(math.inf, 2.0) == 0.0
    assert g.log_delta_mu(math.inf, 2.0) == -math.inf


@pytest.mark.filterwarnings("error")
def test_large_eps_no_overflow() -> None:
    """exp(ε) overflows at ε ≈ 709.78: the profile must not (warnings are errors)."""
    eps = np.array([709.0, 709.8, 710.0, 711.0, 745.0, 1000.0, 2000.0])
    for mu in [30.0, 60.0]:
        D = g.delta_mu(eps, mu, rounding="nearest")
        L = g.log_delta_mu(eps, mu, rounding="nearest")
        ref = [ref_log_delta(e, mu) for e in eps]
        with mpmath.workdps(REF_DPS):
            DR = np.array([float(mpmath.exp(r)) for r in ref])
        LR = np.array([float(r) for r in ref])
        assert np.all(np.isfinite(L)) and np.all(np.isfinite(D))
        assert np.all(rel_err(L, LR) <= 1e-12)
        normal = DR >= 1e-300
        assert normal.sum() >= 5
        assert np.all(rel_err(D[normal], DR[normal]) <= DELTA_TOL)


_ONE_ARG_NAN_CASES = [
    ("log_delta_mu", lambda x: g.log_delta_mu(x, 1.0)),
    ("log_delta_mu(mu)", lambda x: g.log_delta_mu(1.0, x)),
    ("delta_mu", lambda x: g.delta_mu(x, 1.0)),
    ("delta_mu(mu)", lambda x: g.delta_mu(1.0, x)),
    ("mu_gdp", lambda x: g.mu_gdp(x, 0.1)),
    ("mu_gdp(delta)", lambda x: g.mu_gdp(1.0, x)),
    ("mu_gdp(log_delta)", lambda x: g.mu_gdp(1.0, log_delta=-x)),
    ("eps_gdp", lambda x: g.eps_gdp(x, 0.1)),
    ("eps_gdp(delta)", lambda x: g.eps_gdp(1.0, x)),
    ("eps_gdp(log_delta)", lambda x: g.eps_gdp(1.0, log_delta=-x)),
    ("mu_from_pure_dp", lambda x: g.mu_from_pure_dp(x)),
    ("compose_gdp", lambda x: g.compose_gdp(x, 1.0)),
    ("tradeoff_gdp(alpha)", lambda x: g.tradeoff_gdp(x, 1.0)),
    ("tradeoff_gdp(mu)", lambda x: g.tradeoff_gdp(0.1, x)),
]


@pytest.mark.parametrize("name,f", _ONE_ARG_NAN_CASES, ids=[c[0] for c in _ONE_ARG_NAN_CASES])
def test_nan_propagates_elementwise(name: str, f: Any) -> None:
    """Documented: NaN in gives NaN out, element by element, never raising or warning.

    (pytest turns warnings into errors, so a RuntimeWarning fails this test.)
    """
    assert math.isnan(f(math.nan))
    out = f(np.array([math.nan, 0.5]))
    assert np.isnan(out[0]) and np.isfinite(out[1])


_NEGATIVE_CASES = [
    ("log_delta_mu eps", lambda: g.log_delta_mu(-1.0, 1.0)),
    ("log_delta_mu mu", lambda: g.log_delta_mu(1.0, -1.0)),
    ("delta_mu eps", lambda: g.delta_mu(np.array([1.0, -1e-300]), 1.0)),
    ("delta_mu mu", lambda: g.delta_mu(1.0, -math.inf)),
    ("mu_gdp eps", lambda: g.mu_gdp(-1.0, 0.1)),
    ("mu_gdp delta", lambda: g.mu_gdp(1.0, -0.1)),
    ("mu_gdp delta>1", lambda: g.mu_gdp(1.0, 1.5)),
    ("mu_gdp log_delta>0", lambda: g.mu_gdp(1.0, log_delta=0.5)),
    ("eps_gdp mu", lambda: g.eps_gdp(-1.0, 0.1)),
    ("eps_gdp delta", lambda: g.eps_gdp(1.0, -0.1)),
    ("eps_gdp delta>1", lambda: g.eps_gdp(1.0, 1.5)),
    ("eps_gdp log_delta>0", lambda: g.eps_gdp(1.0, log_delta=0.5)),
    ("mu_from_pure_dp", lambda: g.mu_from_pure_dp(-0.1)),
    ("compose_gdp", lambda: g.compose_gdp(1.0, -1.0)),
    ("tradeoff_gdp mu", lambda: g.tradeoff_gdp(0.1, -1.0)),
    ("tradeoff_gdp alpha<0", lambda: g.tradeoff_gdp(-0.1, 1.0)),
    ("tradeoff_gdp alpha>1", lambda: g.tradeoff_gdp(1.1, 1.0)),
]


@pytest.mark.parametrize("name,f", _NEGATIVE_CASES, ids=[c[0] for c in _NEGATIVE_CASES])
def test_out_of_domain_raises(name: str, f: Any) -> None:
    with pytest.raises(DomainError):
        f()


def test_exactly_one_of_delta_and_log_delta() -> None:
    for fn in (g.mu_gdp, g.eps_gdp):
        with pytest.raises(TypeError):
            fn(1.0)
        with pytest.raises(TypeError):
            fn(1.0, 0.1, log_delta=-1.0)


def test_scalar_in_python_float_out() -> None:
    calls = [
        g.log_delta_mu(1.0, 1.0), g.delta_mu(np.float64(1.0), 1), g.mu_gdp(1, 0.1),
        g.mu_gdp(1.0, log_delta=np.float32(-3.0)), g.eps_gdp(1.0, 0.1),
        g.eps_gdp(1.0, log_delta=-3.0), g.mu_from_pure_dp(1), g.compose_gdp(1.0, 2),
        g.tradeoff_gdp(0.1, 1.0), g.delta_mu(np.array(1.0), 1.0),
        g.mu_gdp(1.0, 0.0), g.mu_gdp(1.0, 1.0), g.eps_gdp(1.0, 0.0),
    ]
    assert all(type(c) is float for c in calls), [type(c) for c in calls]


def test_arrays_broadcast() -> None:
    eps = np.array([[0.0], [1.0], [5.0]])
    mu = np.array([0.5, 1.0, 2.0, 4.0])
    for f in (g.log_delta_mu, g.delta_mu):
        out = f(eps, mu)
        assert isinstance(out, np.ndarray) and out.shape == (3, 4)
        ref = [[f(float(e), float(m)) for m in mu] for e in eps[:, 0]]
        np.testing.assert_allclose(out, ref, rtol=1e-14)
    d = g.delta_mu(eps, mu)
    # an array round trip keeps the shape; elementwise values are checked on the grid
    assert g.mu_gdp(eps, delta=d).shape == (3, 4)
    assert g.mu_gdp(eps, log_delta=g.log_delta_mu(eps, mu)).shape == (3, 4)
    assert g.eps_gdp(mu, delta=np.array([[1e-3], [1e-6]])).shape == (2, 4)
    assert g.tradeoff_gdp(np.array([[0.1], [0.5]]), mu).shape == (2, 4)
    assert g.mu_from_pure_dp(np.array([0.1, 1.0])).shape == (2,)
    assert g.compose_gdp(eps, mu).shape == (3, 4)


# ------------------------------------------------------------------------- tradeoff_gdp


def test_tradeoff_gdp_matches_mpmath() -> None:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) against 40-digit mpmath.

    Tolerance: an error of one ulp in z = Φ⁻¹(1 − α) moves log G by |z − μ|·|z|·u, which
    reaches ~1e-13 for |z| ≈ 30; 1e-12 relative covers it where G ≥ 1e-300.
    """
    alpha = np.concatenate([np.geomspace(1e-60, 0.5, 9), 1 - np.geomspace(1e-15, 0.4, 7)])
    mus = np.array([0.05, 1.0, 3.0, 10.0, 30.0])
    A, M = (x.ravel() for x in np.meshgrid(alpha, mus))
    got = g.tradeoff_gdp(A, M, rounding="nearest")  # accuracy of the float evaluation
    ref = np.empty_like(got)
    for i, (a, m) in enumerate(zip(A, M, strict=True)):
        z = -ref_ndtri(a)  # Phi^{-1}(1 - a) = -Phi^{-1}(a)
        with mpmath.workdps(REF_DPS):
            ref[i] = float(mpmath.ncdf(z - m))
    normal = ref >= 1e-300
    assert normal.sum() > 60
    err = rel_err(got[normal], ref[normal])
    assert np.all(err <= 1e-12), worst("tradeoff_gdp", err, np.full(err.shape, 1e-12),
                                       A[normal], M[normal])


def test_tradeoff_gdp_edges_and_symmetry() -> None:
    mus = np.array([0.0, 0.5, 2.0, 8.0])
    assert np.all(g.tradeoff_gdp(0.0, mus) == 1.0)  # G(0) = 1
    assert np.all(g.tradeoff_gdp(1.0, mus) == 0.0)  # G(1) = 0
    al = np.linspace(0.0, 1.0, 11)
    np.testing.assert_allclose(g.tradeoff_gdp(al, 0.0), 1.0 - al, atol=1e-15)  # G_0 = 1 - α
    assert np.all(g.tradeoff_gdp(al[1:], math.inf) == 0.0)  # perfectly distinguishable
    # G_mu is symmetric (its own inverse): G(G(α)) = α (Dong, Roth & Su 2021, Prop. 2.4)
    al = np.linspace(0.05, 0.95, 19)
    for mu in [0.3, 1.0, 2.0]:
        gg = g.tradeoff_gdp(g.tradeoff_gdp(al, mu, rounding="nearest"), mu, rounding="nearest")
        np.testing.assert_allclose(gg, al, rtol=1e-13)


def test_tradeoff_gdp_alpha_zero_mu_inf() -> None:
    """G_μ(0) = 1 for every μ, so the limit μ → ∞ at α = 0 is 1 (precise.tradeoff_gdp
    returns 1 there too); NaN would be a silent non-answer."""
    assert g.tradeoff_gdp(0.0, math.inf) == 1.0


# ---------------------------------------------------------------------------- properties

eps_st = st.floats(0.0, 2000.0)
mu_st = st.floats(0.05, 30.0)
mu10_st = st.floats(0.05, 10.0)


@given(eps_st, eps_st, mu_st)
@example(0.0, 1e-300, 0.05)
@example(709.0, 711.0, 30.0)
@example(1999.0, 2000.0, 0.05)
def test_monotone_decreasing_in_eps(e1: float, e2: float, mu: float) -> None:
    lo, hi = min(e1, e2), max(e1, e2)
    L1, L2 = g.log_delta_mu([lo, hi], mu)
    # rounding noise (<= the 1e-13 accuracy target) may reorder values that are equal
    assert L1 >= L2 - 1e-13 * abs(L2)
    d1, d2 = g.delta_mu([lo, hi], mu)
    assert d1 >= d2 * (1 - DELTA_TOL)


@given(eps_st, mu_st, mu_st)
@example(0.0, 0.05, 30.0)
@example(2000.0, 0.05, 0.0500001)
@example(1e-9, 29.0, 30.0)
def test_monotone_increasing_in_mu(eps: float, m1: float, m2: float) -> None:
    lo, hi = min(m1, m2), max(m1, m2)
    L1, L2 = g.log_delta_mu(eps, [lo, hi])
    assert L1 <= L2 + 1e-13 * abs(L1)


def _mu_cond_tol(eps: float, mu: float, L: float, extra: float = 0.0) -> float:
    """|Δμ| allowed in μ_GDP(ε, log δ_μ(ε)): 1e-12 μ plus the forward error of log δ
    (≤ 1e-13|L|, the target, plus ``extra``) divided by ∂ log δ/∂μ = φ(a)/δ."""
    a = mu / 2 - eps / mu
    dlog = math.exp(-0.5 * a * a - 0.5 * math.log(2 * math.pi) - L)
    return RT_TOL * mu + (LOG_TOL * abs(L) + extra) / dlog


@given(eps_st, mu10_st)
@example(0.0, 0.05)
@example(0.0, 10.0)
@example(2000.0, 0.05)
@example(710.0, 1.0)
@example(1e-300, 3.0)
@example(1.90625, 0.05)  # delta = 8.4e-321 is subnormal
def test_round_trip_eps_delta_mu(eps: float, mu: float) -> None:
    """ε, μ → log δ → μ and → ε, with the condition-number-aware tolerance."""
    L = g.log_delta_mu(eps, mu, rounding="nearest")
    assert abs(g.mu_gdp(eps, log_delta=L) - mu) <= _mu_cond_tol(eps, mu, L)
    if L < 0:
        b = -eps / mu - mu / 2
        # |d log delta / d eps| = e^eps Phi(b) / delta (theory §3), for the tolerance only
        dlog = math.exp(eps + float(log_ndtr(b)) - L)
        tol_e = RT_TOL * eps + LOG_TOL * abs(L) / dlog
        assert abs(g.eps_gdp(mu, log_delta=L, rounding="nearest") - eps) <= tol_e
    d = g.delta_mu(eps, mu, rounding="nearest")
    if 0.0 < d < 1.0:
        # rounding delta itself costs u in log delta, or 2^-1074/delta for a subnormal delta
        extra = 2 * U + 2.0**-1074 / d
        assert abs(g.mu_gdp(eps, delta=d, rounding="nearest") - mu) <= _mu_cond_tol(eps, mu, L,
                                                                           extra)


@settings(database=None, deadline=None, derandomize=True)
@given(st.floats(0.0, 2000.0), st.floats(-1e5, -1e-50))
@example(1.98e-305, -707.0)  # mu near 1e-305: the iteration once stopped at 1.45e-306
@example(0.0, -1e-50)
@example(0.0, -1e-20)
@example(2000.0, -1e5)
@example(710.0, -math.log(1e10))
@example(0.015625, -5.0)  # "up" both ways once moved it by 2.9e-12 (the rounding, not error)
def test_round_trip_delta_mu_delta(eps: float, L: float) -> None:
    """log δ → μ → log δ: the forward map undoes the inverse.

    log δ ≥ −1e-50 (δ within 1e-50 of 1, μ > 30 at ε = 0) is left out: there 1 − δ ≈ Φ(−μ/2)
    approaches the float64 subnormal range and log δ cannot keep relative accuracy.
    """
    # the accuracy of the maps themselves: both rounded to nearest (the defaults round up,
    # each by its proved error bound, which is no inverse of the other)
    mu = g.mu_gdp(eps, log_delta=L, rounding="nearest")
    if mu < 2.2250738585072014e-308:
        # mu underflowed to 0 or into the subnormals, which carry fewer significant bits:
        # no relative round trip is possible there
        return
    back = g.log_delta_mu(eps, mu, rounding="nearest")
    # mu may be off by the 1e-12 relative target, which moves log delta by
    # (d log delta/d mu) 1e-12 mu: large against |L| when delta is within 1e-100 of 1.
    a = mu / 2 - eps / mu
    dlog = math.exp(-0.5 * a * a - 0.5 * math.log(2 * math.pi) - back)
    assert abs(back - L) <= LOG_TOL * abs(L) + RT_TOL * mu * dlog


@given(eps_st, st.floats(1e-300, 1.0), st.floats(1e-300, 1.0))
@example(0.0, 1e-300, 1.0)
@example(1000.0, 1e-10, 1e-9)
@example(5.0, 0.5, 0.5000001)
def test_mu_gdp_order_preserving_in_delta(eps: float, d1: float, d2: float) -> None:
    lo, hi = min(d1, d2), max(d1, d2)
    m1, m2 = g.mu_gdp(eps, delta=[lo, hi])
    assert m1 <= m2 * (1 + 1e-13)


@given(eps_st, eps_st, st.floats(-1e4, -1e-12))
@example(0.0, 2000.0, -1e4)
@example(0.0, 1e-9, -1e-12)
@example(0.0, 5.099863258172475e-25, -255.0)
@example(0.0, 0.0, -25.0)
def test_mu_gdp_order_preserving_in_eps(e1: float, e2: float, L: float) -> None:
    lo, hi = min(e1, e2), max(e1, e2)
    m1, m2 = g.mu_gdp([lo, hi], log_delta=L)
    assert m1 <= m2 * (1 + 1e-13)


@given(st.floats(0.0, 500.0), st.floats(-1e4, -1e-10))
@example(0.0, -1e-10)
@example(0.0, -1e4)
@example(500.0, -1.0)
@example(0.0, -37.0)
def test_mu_gdp_slope_in_eps_is_bounded(eps: float, L: float) -> None:
    """0 ≤ ∂μ_GDP/∂ε ≤ √(2π)/2 (theory §4), as a difference quotient.

    The quotient over [ε, ε + h] is a mean of the derivative, so it obeys the same bounds;
    h is large enough that the 1e-12 relative error of each μ is small against it.
    """
    h = max(1e-2, 1e-3 * eps)
    m1, m2 = g.mu_gdp([eps, eps + h], log_delta=L)
    slack = 2 * RT_TOL * m2 / h
    slope = (m2 - m1) / h
    assert -slack <= slope <= SQRT_2PI_HALF + slack
