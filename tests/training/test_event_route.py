"""from_dp_event of DP-SGD-shaped dp_accounting events: routed to the DP-SGD engine, the
same bracket as symgdp.dpsgd on the same question (a second route to the same theorem), and
closed forms (q = 1 is the Gaussian mechanism: 40-digit delta of GDP by bisection)."""

from __future__ import annotations

import math

import dp_accounting as dpa
import mpmath
import pytest
from references import delta_gdp

from symgdp import dpsgd, from_dp_event
from symgdp.accounting.certified import EpsBracket
from symgdp.errors import DomainError
from symgdp.training.event_route import RoutedDPSGD

KW = dict(tol=1e-3, discretization=1e-3)
DP = dict(tol=1e-3, value_discretization_interval=1e-3)


def _poisson(q, s, t=1):
    step = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s))
    return step if t == 1 else dpa.SelfComposedDpEvent(step, t)


def test_self_composed_poisson_is_dpsgd():
    c = from_dp_event(_poisson(0.05, 1.2, 200), **KW)
    r = dpsgd(0.05, 1.2, 200, **DP)
    assert isinstance(c, RoutedDPSGD)
    assert (c.mu_floor, c.mu_upper, c.neighbouring) == (r.mu_floor, r.mu_upper, "add_remove")
    b = c.eps_at(1e-5)
    assert isinstance(b, EpsBracket) and float(b) == b.upper
    assert abs(b.upper - r.eps_certified) <= 1e-8 * r.eps_certified + 1e-9
    assert 0.9 * b.upper < b.lower <= b.upper  # both ends useful


def test_composed_and_nested_sequences_are_schedules():
    ev = dpa.ComposedDpEvent([_poisson(0.1, 2.0, 3), dpa.NoOpDpEvent(),
                              dpa.SelfComposedDpEvent(
                                  dpa.ComposedDpEvent([_poisson(0.2, 1.5),
                                                       _poisson(0.2, 1.5)]), 2)])
    c = from_dp_event(ev, **KW)
    assert c.result.schedule == ((0.1, 2.0, 3), (0.2, 1.5, 4))
    r = dpsgd(schedule=[(0.1, 2.0, 3), (0.2, 1.5, 4)], **DP)
    assert (c.mu_floor, c.mu_upper) == (r.mu_floor, r.mu_upper)


@pytest.mark.parametrize("rel,factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_q_one_is_the_gaussian(rel, factor):
    # closed form: T steps of the Gaussian with sensitivity factor: mu = factor sqrt(T)/s;
    # its exact eps(delta) (40-digit delta of GDP, bisection) lies in the eps bracket
    c = from_dp_event(_poisson(1.0, 4.0, 9), neighbouring=rel, **KW)
    mu = factor * 3.0 / 4.0
    assert c.mu_floor <= mu <= c.mu_upper and c.neighbouring == rel
    lo, hi = mpmath.mpf(0), mpmath.mpf(20)
    for _ in range(80):
        m = (lo + hi) / 2
        lo, hi = (m, hi) if delta_gdp(mu, m) > mpmath.mpf("1e-5") else (lo, m)
    b = c.eps_at(1e-5)
    assert b.lower <= float(lo) and float(hi) <= b.upper <= float(hi) + 0.01


def test_without_replacement_event_under_replace_one():
    # dp_accounting's noise multiplier is over |c - c'|: noise s is our sigma = 2 s
    ev = dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(50, 10, dpa.GaussianDpEvent(1.5)), 3)
    c = from_dp_event(ev, neighbouring="replace_one", **KW)
    r = dpsgd(sampling="without_replacement", dataset_size=50, batch_size=10, sigma=3.0,
              steps=3, **DP)
    assert (c.mu_floor, c.mu_upper, c.sampling) == (r.mu_floor, r.mu_upper,
                                                    "without_replacement")
    with pytest.raises(DomainError, match="SampledWithoutReplacementDpEvent"):
        from_dp_event(ev)  # add/remove: no analysis, refused by name


def test_other_trees_take_the_general_route():
    mixed = dpa.ComposedDpEvent([_poisson(0.5, 2.0, 2), dpa.GaussianDpEvent(3.0)])
    c = from_dp_event(mixed, discretization=1e-3)
    assert not isinstance(c, RoutedDPSGD)
    assert not isinstance(from_dp_event(_poisson(0.5, 2.0, 2), target_width=1e-2),
                          RoutedDPSGD)
    assert math.isfinite(c.mu_upper)
