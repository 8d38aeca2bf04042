"""What symgdp.dpsgd computes only when it is read, and the Rényi curve's table form.

References (named at each test): the eager measurement that ``mu_rdp`` was before it became
lazy (the same call on the result's own upper profile: what "lazy equals eager" means);
the closed form :math:`\\sqrt T/\\sigma` of the unsampled Gaussian (every upper bound on
its head lies above it); :math:`\\log A_\\alpha` summed term by term in 40-digit mpmath with
exact binomials.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import pytest

from symgdp import dpsgd
from symgdp.notions import renyi as R
from symgdp.pld.head import head_measure
from symgdp.training.upper import LazyRDPMu, RDPOnly

FP = 1e-10  # dpsgd's default failure probability


@pytest.fixture(scope="module")
def run():
    return dpsgd(0.05, 1.0, 40, tol=1e-3, value_discretization_interval=1e-3)


def test_mu_rdp_is_measured_when_read_and_equals_the_eager_measurement(run):
    lazy = run._mu_rdp
    assert isinstance(lazy, LazyRDPMu) and lazy._value is None  # not measured by dpsgd
    # reference: the eager call dpsgd made before (head_measure of the Rényi bound alone on
    # the run's upper profile, the requested failure probability, the first tol)
    eager = head_measure(RDPOnly(run.profile), FP, run.measurement.tol)[0].upper
    assert run.mu_rdp == eager
    assert lazy._value == eager and run.mu_rdp == eager  # measured once, then cached
    assert run.as_dict()["mu_rdp"] == eager
    # the minimum of the PLD and the Rényi bound is never worse than the Rényi bound alone
    assert run.mu_floor <= run.mu_upper <= run.mu_rdp


def test_replaced_results_keep_the_lazy_value(run):
    other = dataclasses.replace(run, eps_h=run.eps_h)
    assert other.mu_rdp == run.mu_rdp
    assert other == run  # mu_rdp (a function of the other fields) is not in ==


def test_mu_rdp_nan_where_no_renyi_curve_is_asked_or_known():
    kw = dict(tol=1e-3, value_discretization_interval=1e-3)
    assert math.isnan(dpsgd(0.05, 1.0, 40, rdp_only=False, **kw).mu_rdp)
    assert math.isnan(dpsgd(0.05, 1.0, 40, neighbouring="replace_one", **kw).mu_rdp)


@pytest.mark.parametrize("sigma,steps", [(2.0, 4), (4.0, 9)])
def test_closed_form_mu_rdp_is_above_the_exact_mu(sigma, steps):
    r = dpsgd(1.0, sigma, steps, tol=1e-3)
    assert isinstance(r._mu_rdp, LazyRDPMu)
    # reference: q = 1 is sqrt(T)/sigma-GDP exactly; the Rényi bound proves no less
    assert r.mu_rdp >= math.sqrt(steps) / sigma
    assert r.mu_rdp < 2 * math.sqrt(steps) / sigma  # and it is a measurement, not inf


def _mp_log_a(q: float, sigma: float, a: int) -> float:
    """log A_alpha term by term, exact binomials, 40 digits."""
    with mpmath.workdps(40):
        qq, s = mpmath.mpf(q), mpmath.mpf(sigma)
        return float(mpmath.log(mpmath.fsum(
            math.comb(a, k) * (1 - qq)**(a - k) * qq**k * mpmath.exp((k * k - k) / (2 * s * s))
            for k in range(a + 1))))


@pytest.mark.parametrize("q,sigma", [(0.01, 1.0), (1.0, 3.0), (0.3, 40.0)])
def test_log_a_table_slices_match_mpmath_for_orders_in_any_sequence(q, sigma):
    # the orders share one table over k = 0..max order; an order far below the largest, an
    # unsorted sequence and a repeated order each read their own slice
    orders = [3000, 2, 517, 3, 2]
    got = R.subsampled_gaussian_log_a(q, sigma, orders)
    for a, g in zip(orders, got, strict=True):
        ref = _mp_log_a(q, sigma, a)  # reference: 40-digit mpmath
        assert g >= ref  # rounded up
        assert g - ref <= 1e-9 * max(1.0, abs(ref))
    assert got[1] == got[4]
