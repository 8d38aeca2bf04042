r"""Tests of the arbitrary-precision GDP family (:mod:`symgdp.gaussian.precise`, also
``symgdp.mp``).

References are computed with mpmath from independent formulas, never through
:mod:`symgdp.gaussian.precise` itself:

* δ_μ(ε) = Φ(a) − e^ε Φ(b) written with ``mpmath.erfc`` in tests/reference.py (precise
  uses ``mpmath.ncdf``),
  at a working precision raised until the cancellation between the terms is covered,
  with log δ taken through log1p of the complement when δ is close to 1;
* closed forms at ε = 0 (δ_μ(0) = erf(μ/(2√2))), for pure DP, for composition, and for
  the symmetry of the trade-off curve;
* inverse problems by round trips through the reference and by ``mpmath.findroot``.
"""

from __future__ import annotations

import contextlib
import math
import signal
from collections.abc import Iterator
from typing import Any

import mpmath
import pytest
from references import ref_log_delta

import symgdp
from symgdp.errors import DomainError
from symgdp.gaussian import precise


def close(x: Any, ref: Any, digits: int) -> bool:
    """|x − ref| ≤ 10^-digits |ref| (both mpf)."""
    with mpmath.workdps(digits + 20):
        return bool(abs(mpmath.mpf(x) - ref) <= mpmath.mpf(10) ** (-digits) * abs(ref))


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Turn a hang into a test failure (SIGALRM; the suite runs on POSIX CI)."""

    def handler(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_available_as_symgdp_mp() -> None:
    assert symgdp.mp is precise


# (eps, mu) points: the GDP grid corners, exp overflow in float64, delta near 1 and deep tail.
_POINTS = [
    (0, 0.05), (0, 1), (0, 10), (1e-9, 0.05), (0.5, 0.3), (1, 1), (3, 2), (40, 1),
    (100, 1), (709.5, 30), (1000, 30), (2000, 0.05), (2000, 10), (2000, 30),
    (1e-3, 0.05), (5, 10), (1e-3, 20), (0.001, 30), (1, 30),
    # eps = 0 with mu -> 0: precise takes erf(mu/(2 sqrt 2)) there, the reference the
    # difference Phi(mu/2) - Phi(-mu/2) with the 300 digits it cancels restored
    (0, 1e-30), (0, 1e-300),
]


@pytest.mark.parametrize("eps,mu", _POINTS)
def test_log_delta_mu_40_digits(eps: float, mu: float) -> None:
    ref = ref_log_delta(eps, mu, 50)
    got = precise.log_delta_mu(eps, mu, dps=40)
    assert close(got, ref, 38), (mpmath.nstr(got, 40), mpmath.nstr(ref, 40))


@pytest.mark.parametrize("eps,mu", _POINTS)
def test_delta_mu_40_digits(eps: float, mu: float) -> None:
    with mpmath.workdps(60):
        ref = mpmath.exp(ref_log_delta(eps, mu, 50))
    got = precise.delta_mu(eps, mu, dps=40)
    assert close(got, ref, 38), (mpmath.nstr(got, 40), mpmath.nstr(ref, 40))


def test_dps_is_respected() -> None:
    """dps=60 gives 60 digits (not 40 padded): against an 80-digit reference, and the
    global mpmath precision is left untouched."""
    before = (mpmath.mp.dps, mpmath.mp.prec)
    for eps, mu in [(1, 1), (40, 1), (0.5, 0.3)]:
        ref = ref_log_delta(eps, mu, 80)
        got60 = precise.log_delta_mu(eps, mu, dps=60)
        assert close(got60, ref, 58)
        with mpmath.workdps(80):
            d_ref = mpmath.exp(ref)
        assert close(precise.delta_mu(eps, mu, dps=60), d_ref, 58)
        # at dps=20 the answer is 20 digits, not more: it must differ from the truth
        # somewhere beyond digit ~22 (a 20-digit result cannot carry 40 correct digits)
        got20 = precise.log_delta_mu(eps, mu, dps=20)
        assert close(got20, ref, 18)
        assert not close(got20, ref, 40)
    assert (mpmath.mp.dps, mpmath.mp.prec) == before


def test_deep_tail_delta_1_at_2000() -> None:
    """δ_1(2000) ≈ 1.88468e−868162 (theory §10), far below any float."""
    got = precise.delta_mu(2000, 1, dps=40)
    assert mpmath.nstr(got, 6) == "1.88468e-868162"
    with mpmath.workdps(60):
        ref = mpmath.exp(ref_log_delta(2000, 1, 50))
    assert close(got, ref, 38)


def test_eps_zero_closed_form() -> None:
    """δ_μ(0) = erf(μ/(2√2)), including μ → 0 where Φ(μ/2) − Φ(−μ/2) cancels (precise
    takes this closed form at ε = 0; the independent check of it is the difference form of
    the reference at the ε = 0 points of ``_POINTS``).

    μ is passed as a float, which mpmath converts exactly, so both sides see one number.
    """
    for mu in [1e-30, 1e-8, 0.05, 1.0, 7.0]:
        with mpmath.workdps(60):
            ref = mpmath.erf(mpmath.mpf(mu) / (2 * mpmath.sqrt(2)))
        assert close(precise.delta_mu(0, mu, dps=40), ref, 38), mu


def test_high_precision_inputs_are_not_rounded_to_double() -> None:
    """A reference module must use its arguments at the requested precision: μ = "0.1"
    (or a 60-digit mpf) is not the float 0.1, and δ_μ(0) = erf(μ/(2√2)) tells them apart
    from the 17th digit on."""
    with mpmath.workdps(60):
        mu = mpmath.mpf("0.1")
        ref = mpmath.erf(mu / (2 * mpmath.sqrt(2)))
    assert close(precise.delta_mu(0, mu, dps=50), ref, 48)
    assert close(precise.delta_mu(0, "0.1", dps=50), ref, 48)
    with mpmath.workdps(60):
        al = mpmath.mpf("0.05")
    g1 = precise.tradeoff_gdp(al, 1, dps=50)
    assert close(precise.tradeoff_gdp(g1, 1, dps=50), al, 45)  # G_mu(G_mu(a)) = a


@pytest.mark.parametrize("eps,mu", [(0, 0.05), (0.5, 0.3), (1, 1), (50, 2), (577, 30),
                                    (2000, 0.05), (1000, 8)])
def test_mu_gdp_round_trip(eps: float, mu: float) -> None:
    """μ_GDP(ε, log δ_ref(ε, μ)) = μ: the 60-digit reference log δ is the exact input
    whose answer is μ (well-conditioned away from δ ≈ 1)."""
    L = ref_log_delta(eps, mu, 60)
    got = precise.mu_gdp(eps, log_delta=L, dps=40)
    assert close(got, mpmath.mpf(mu), 36), mpmath.nstr(got, 40)


@pytest.mark.parametrize("eps,mu", [(0.5, 0.3), (1, 1), (50, 2), (577, 30), (2000, 0.05)])
def test_eps_gdp_round_trip(eps: float, mu: float) -> None:
    L = ref_log_delta(eps, mu, 60)
    got = precise.eps_gdp(mu, log_delta=L, dps=40)
    assert close(got, mpmath.mpf(eps), 36), mpmath.nstr(got, 40)


def test_eps_gdp_30_at_1e_minus_5() -> None:
    """≈ 577: the root of the reference found by mpmath.findroot."""
    with mpmath.workdps(50):
        target = mpmath.log(mpmath.mpf(1e-5))  # the float 1e-5, exactly as passed below
        root = mpmath.findroot(lambda e: ref_log_delta(e, 30, 50) - target, mpmath.mpf(577))
    got = precise.eps_gdp(30, delta=1e-5, dps=40)
    assert close(got, root, 36)


def test_mu_gdp_at_eps_zero_closed_form() -> None:
    """At ε = 0, δ = erf(μ/(2√2)) so μ = 2√2 erf⁻¹(δ)."""
    for d in ["1e-300", "1e-10", "0.3", "0.99"]:
        with mpmath.workdps(60):
            ref = 2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(d))
        assert close(precise.mu_gdp(0, delta=d, dps=40), ref, 36), d


def test_mu_gdp_delta_within_1e_minus_45_of_one() -> None:
    """At ε = 0 with 1 − δ = −expm1(L) = 1e-45: erfc(μ/(2√2)) = 1 − δ, solved by findroot
    on log erfc (no cancellation).  Needs log δ_μ accurate where δ is near 1."""
    L = mpmath.mpf("-1e-45")
    with mpmath.workdps(60):
        target = mpmath.log(-mpmath.expm1(L))
        x = mpmath.findroot(lambda x: mpmath.log(mpmath.erfc(x)) - target, mpmath.mpf(10))
        ref = 2 * mpmath.sqrt(2) * x
    got = precise.mu_gdp(0, log_delta=L, dps=40)
    assert close(got, ref, 36), (mpmath.nstr(got, 40), mpmath.nstr(ref, 40))


def ref_mu_pure(eps0: Any, dps: int = 50) -> mpmath.mpf:
    """−2Φ⁻¹(p), p = 1/(1 + e^ε₀), by findroot on log Φ (no erfinv, no 1 − 2p)."""
    with mpmath.workdps(dps):
        e = mpmath.mpf(eps0)
        log_p = -(e + mpmath.log1p(mpmath.exp(-e)))
        x0 = -mpmath.sqrt(2 * -log_p) if log_p < -1 else mpmath.mpf(-0.1)
        z = mpmath.findroot(lambda z: mpmath.log(mpmath.ncdf(z)) - log_p, x0)
        return -2 * z


def test_mu_from_pure_dp_closed_forms() -> None:
    # digits quoted in theory §3
    assert mpmath.nstr(precise.mu_from_pure_dp(0.2), 14) == "0.25048390506887"
    assert abs(precise.mu_from_pure_dp(1) - mpmath.mpf("1.2320353853")) < 1e-10
    assert precise.mu_from_pure_dp(0) == 0


@pytest.mark.parametrize("eps0", [1e-10, 0.2, 1.0, 10.0, 60.0, 150.0, 400.0])
def test_mu_from_pure_dp_matches_findroot(eps0: float) -> None:
    got = precise.mu_from_pure_dp(eps0, dps=40)
    ref = ref_mu_pure(eps0)
    assert close(got, ref, 36), (eps0, mpmath.nstr(got, 40), mpmath.nstr(ref, 40))


def test_tradeoff_gdp() -> None:
    """G_μ(α) against erfc and the symmetry G_μ(G_μ(α)) = α, at 40 digits."""
    for alpha, mu in [(0.05, 1.0), (0.5, 0.3), (1e-20, 3.0), (0.9, 10.0)]:
        al, m = mpmath.mpf(alpha), mpmath.mpf(mu)  # exact floats; see the input test above
        with mpmath.workdps(80):
            z = mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * al)  # Phi^{-1}(1 - alpha)
            ref = mpmath.erfc(-(z - m) / mpmath.sqrt(2)) / 2
        got = precise.tradeoff_gdp(al, m, dps=40)
        assert close(got, ref, 36), alpha
        # the 40-digit G is fed back as a float to stay clear of the input-rounding bug
        # tested separately; the symmetry then holds to float precision
        # (skipped for alpha = 1e-20, where G is within 1e-20 of 1 and a float cannot hold it)
        if alpha > 1e-3:
            back = precise.tradeoff_gdp(float(got), m, dps=40)
            assert abs(back - al) <= 1e-14 * al, alpha
    assert precise.tradeoff_gdp(0, 2) == 1
    assert precise.tradeoff_gdp(1, 2) == 0
    assert close(precise.tradeoff_gdp(0.25, 0), mpmath.mpf(0.75), 38)


def test_compose_gdp() -> None:
    assert precise.compose_gdp(3, 4) == 5
    with mpmath.workdps(60):
        ref = mpmath.mpf("1.2")
    assert close(precise.compose_gdp(*["0.3"] * 16, dps=50), ref, 48)


def test_edge_cases() -> None:
    assert precise.delta_mu(1, 0) == 0
    assert precise.delta_mu(1, mpmath.inf) == 1
    assert precise.delta_mu(mpmath.inf, 2) == 0
    assert precise.log_delta_mu(1, 0) == -mpmath.inf
    assert precise.mu_gdp(1, 0) == 0
    assert precise.mu_gdp(1, log_delta=-mpmath.inf) == 0
    assert precise.mu_gdp(1, 1) == mpmath.inf
    assert precise.mu_gdp(mpmath.inf, "0.5") == mpmath.inf
    assert precise.eps_gdp(1, 0) == mpmath.inf
    assert precise.eps_gdp(0, "0.5") == 0
    assert precise.eps_gdp(1, "0.5") == 0  # delta_1(0) = 0.383 <= 0.5


def test_eps_gdp_mu_inf_does_not_hang() -> None:
    """δ_∞ ≡ 1 never reaches δ < 1, so the answer is ∞ (as in the float64 eps_gdp)."""
    with time_limit(3):
        assert precise.eps_gdp(mpmath.inf, "0.5") == mpmath.inf


_DOMAIN_ERRORS = [
    ("delta_mu eps<0", lambda: precise.delta_mu(-1, 1)),
    ("delta_mu mu<0", lambda: precise.delta_mu(1, -1)),
    ("log_delta_mu mu<0", lambda: precise.log_delta_mu(1, -1)),
    ("mu_gdp eps<0", lambda: precise.mu_gdp(-1, "0.1")),
    ("mu_gdp delta>1", lambda: precise.mu_gdp(1, "1.5")),
    ("mu_gdp log_delta>0", lambda: precise.mu_gdp(1, log_delta="0.5")),
    ("eps_gdp mu<0", lambda: precise.eps_gdp(-1, "0.1")),
    ("eps_gdp delta<0", lambda: precise.eps_gdp(1, "-0.1")),
    ("eps_gdp log_delta>0", lambda: precise.eps_gdp(1, log_delta="0.5")),
    ("mu_from_pure_dp", lambda: precise.mu_from_pure_dp(-1)),
    ("tradeoff_gdp mu<0", lambda: precise.tradeoff_gdp("0.1", -1)),
    ("tradeoff_gdp alpha>1", lambda: precise.tradeoff_gdp("1.5", 1)),
    ("tradeoff_gdp alpha<0", lambda: precise.tradeoff_gdp("-0.5", 1)),
    ("nan eps", lambda: precise.delta_mu(math.nan, 1)),
    ("nan delta", lambda: precise.mu_gdp(1, math.nan)),
    ("not a number", lambda: precise.delta_mu("abc", 1)),
]


@pytest.mark.parametrize("name,f", _DOMAIN_ERRORS, ids=[c[0] for c in _DOMAIN_ERRORS])
def test_out_of_domain_raises(name: str, f: Any) -> None:
    """Like the float64 family, bad arguments raise DomainError; NaN, which the scalar
    mpmath functions cannot propagate meaningfully, is refused rather than returned."""
    with pytest.raises(DomainError):
        f()
