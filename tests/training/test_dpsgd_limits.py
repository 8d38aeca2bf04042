"""Huge step counts, repetition counts and event counts: refused before the work explodes.

Every input here would, composed as asked, need billions of grid points (or a count that
float64 bookkeeping cannot hold).  The contract: a clear DomainError (a SymgdpError) that
names the value and the limit, never a hang, a MemoryError or an OverflowError; on the
CLI exit 2 with one line.  No assertion on wall time: the refusals happen before any
composition, and the guard inside a composition bounds every product.
"""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest

import symgdp
from symgdp import mechanisms
from symgdp.errors import DomainError, SymgdpError
from symgdp.pld import pmf as pmf_mod
from symgdp.pld.pmf import (
    MAX_COUNT,
    MAX_SUPPORT,
    int_pmf,
    int_self_compose,
    support_estimate,
)

HUGE = 10**12
ASTRONOMIC = 10**400  # float(ASTRONOMIC) raises OverflowError


def _refused(fn, *needles):
    with pytest.raises(DomainError) as info:
        fn()
    msg = str(info.value)
    for n in needles:
        assert n in msg, msg
    return msg


def test_dpsgd_huge_steps_refused_with_value_and_limit():
    # reference: the composed loss of DP-SGD q=0.01, sigma=1 has std ~ 0.013 sqrt(T), so
    # T = 10^12 spans ~ 2.6e7 grid points of 1e-2 (2.6e9 of the default 1e-4): beyond
    # MAX_SUPPORT = 10^7 either way.  The refusal comes after the one-step PMF, whose
    # cost grows with the grid's points (5 s of CPU at 1e-4, 17 s of wall time in CI for
    # three of them): the coarse grid reaches the same check in a hundredth of it
    coarse = {"value_discretization_interval": 1e-2}
    _refused(lambda: symgdp.dpsgd(0.01, 1.0, HUGE, **coarse), str(HUGE), f"{MAX_SUPPORT:,}")
    certified_pld = importlib.import_module("symgdp.training.dpsgd").certified_pld
    _refused(lambda: certified_pld(0.01, 1.0, HUGE, **coarse), str(HUGE))
    _refused(lambda: symgdp.dpsgd(schedule=[(0.01, 1.0, 100), (0.02, 1.0, HUGE)], **coarse),
             str(HUGE + 100))


@pytest.mark.parametrize("steps", [ASTRONOMIC, 1e30, MAX_COUNT + 1])
def test_dpsgd_counts_beyond_float64_refused(steps):
    # reference: 2^53 is the largest count exact in float64
    _refused(lambda: symgdp.dpsgd(0.01, 1.0, steps), "2^53")
    _refused(lambda: symgdp.dpsgd_sigma(0.01, steps, target_mu=1.0), "2^53")


def test_compose_huge_times_and_pairs_refused():
    # reference: a Gaussian step mu = 1 composed 10^12 times has a loss std of 10^6: the
    # engine refuses it; compose() answers it in closed form, exactly sqrt(10^12) = 10^6
    # (Dong, Roth & Su 2022, Cor. 3.3; 10^6 is a float, so both ends are it)
    g, lap = mechanisms.gaussian(1.0), mechanisms.laplace(1.0)
    exact = symgdp.compose(g, times=HUGE)
    assert exact.mu_floor == 1e6 == exact.mu_upper
    _refused(lambda: symgdp.compose(g, times=HUGE, _engine=True), str(HUGE),
             f"{MAX_SUPPORT:,}")
    _refused(lambda: symgdp.compose((lap, HUGE)), str(HUGE))
    _refused(lambda: symgdp.compose((lap, 2), (g, HUGE // 2)), "grid points")
    _refused(lambda: symgdp.compose((lap, ASTRONOMIC), times=3), "2^53")
    # the product of a pair's count and times is checked too
    _refused(lambda: symgdp.compose((lap, 2**40), times=2**40), "2^53")


def test_from_dp_event_huge_counts_refused():
    dpa = pytest.importorskip("dp_accounting")
    ev = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), HUGE)
    # the closed form (sqrt(10^12) = 10^6, see above); the engine refuses
    assert symgdp.from_dp_event(ev).mu_upper == 1e6
    _refused(lambda: symgdp.from_dp_event(ev, _engine=True), str(HUGE))
    nested = dpa.SelfComposedDpEvent(ev, HUGE)  # 10^24 steps: beyond 2^53
    _refused(lambda: symgdp.from_dp_event(nested), "2^53")
    sampled = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), HUGE)
    # the grid 1e-2 (2.75e7 points, still beyond MAX_SUPPORT: see the first test) reaches
    # the same refusal after a one-step PMF a hundredth the size of the default 1e-4's
    _refused(lambda: symgdp.from_dp_event(sampled, value_discretization_interval=1e-2),
             "grid points", str(HUGE))


def test_int_self_compose_refuses_and_estimate_tracks_the_real_support():
    # two points 0 and 1 (a fair coin on the grid): the k-fold composition is binomial
    half = 1 << (pmf_mod.SCALE_BITS - 1)
    coin = int_pmf(0.01, 0, [half, half], 0)
    _refused(lambda: int_self_compose(coin, HUGE), str(HUGE))
    # reference: the exact binomial support k + 1, and after the tail cuts the binomial's
    # own width (+-9.2 std keeps all but 1e-19): the estimate is within a factor 3
    for k in (50, 4000):
        real = int_self_compose(coin, k).size
        est = support_estimate([(coin, k)])
        assert real / 3 <= est <= 3 * real, (k, real, est)
    assert support_estimate([(coin, 50)]) == 51  # exact support when smaller


def test_product_guard_inside_a_composition(monkeypatch):
    # the estimate can be passed (rounding dust widens a support): every product is
    # guarded; here with a tiny limit so that the guard, not the estimate, trips
    half = 1 << (pmf_mod.SCALE_BITS - 1)
    coin = int_pmf(0.01, 0, [half, half], 0)
    ten = int_self_compose(coin, 10)  # 11 points, built under the real limit
    assert ten.size == 11
    monkeypatch.setattr(pmf_mod, "MAX_SUPPORT", 10)  # a product may have 20 points
    with pytest.raises(DomainError, match="grew to 21"):
        pmf_mod.int_compose(ten, ten)
    from symgdp.training import engine as sgd

    a = sgd._Tracked(ten)
    with pytest.raises(DomainError, match="grew to 21"):
        sgd._compose2(a, a, 1e-19)


@pytest.mark.parametrize("argv", [
    # --discretization 0.01: the same "grid points" refusal (2.75e7 > MAX_SUPPORT) after a
    # one-step PMF a hundredth the size of the default grid's (6 s of it)
    ["dpsgd", "--q", "0.01", "--sigma", "1", "--steps", str(HUGE), "--discretization", "0.01"],
    ["dpsgd", "--q", "0.01", "--sigma", "1", "--steps", str(ASTRONOMIC)],
    ["dpsgd", "--phase", "0.01:1:1e30"],
    ["dpsgd", "--phase", "0.01:1:1e400"],
    ["dpsgd", "--q", "0.01", "--steps", str(10**21), "--target-mu", "1"],
    ["dpsgd", "--q", "0.01", "--sigma", "1", "--steps", "10**12"],
])
def test_cli_huge_steps_exit_2_one_line(argv):
    from symgdp.cli.main import main

    err = io.StringIO()
    assert main(argv, stdout=io.StringIO(), stderr=err) == 2
    text = err.getvalue()
    assert text.count("\n") == 1 and "Traceback" not in text
    assert "error" in text
    if "--discretization" in argv:
        assert "grid points" in text and str(HUGE) in text


def test_refusal_is_a_symgdp_error_not_overflow():
    # OverflowError / MemoryError are not SymgdpErrors: the refusal must be one
    for fn in (lambda: symgdp.dpsgd(0.01, 1.0, ASTRONOMIC),
               lambda: symgdp.compose(mechanisms.gaussian(1.0), times=ASTRONOMIC)):
        with pytest.raises(SymgdpError):
            fn()
    assert np.isfinite(float(MAX_COUNT))


def test_q_one_with_tiny_sigma_is_a_clear_refusal():
    # q = 1, sigma = 0.05 (the Gaussian mechanism, mu = 20): the one-step losses spread
    # over hundreds, beyond what the balls enclose at the working precision.  The engine
    # refused it as "cannot separate a grid point from log(1-q) for q=1.0" (log(1-q) = -inf
    # there; e^l - 1 + 1 cancelled), then by a ValueError from a NaN ball; now a
    # DomainError naming the parameters.  dpsgd answers q = 1 in closed form: 1/0.05 (the
    # float 0.05 is above 1/20, so mu is just below 20).  The engine's refusal on the grid
    # 0.1: the same non-finite ball at loss -364.6 (pmfs_from_tails), a tenth of the
    # one-step tails the grid 1e-2 built first (17 s)
    import symgdp
    from symgdp.errors import DomainError

    r = symgdp.dpsgd(1.0, 0.05, 1, value_discretization_interval=1e-2, compare=False)
    assert r.closed_form and r.mu_floor <= 20.0 == r.mu_upper
    with pytest.raises(DomainError, match=r"q=1\.0, sigma=0\.05.*no finite enclosure"):
        symgdp.dpsgd(1.0, 0.05, 1, value_discretization_interval=0.1, compare=False,
                     _engine=True)
