"""DP-SGD with q = 1 and compositions of Gaussians: the exact closed form.

q = 1 is no sampling: T steps of the Gaussian mechanism with sensitivity c (1 under
add/remove, 2 under replace-one, k for a user with k examples), exactly
c sqrt(sum T_i / sigma_i^2)-GDP (Dong, Roth & Su 2022, Cor. 3.3).  Every reference here is
that closed form evaluated independently in 50-digit mpmath (sigma read as the exact binary
value of its float), the Gaussian profile delta_mu and trade-off curve at 50 digits
(tests/references.py), or the PLD engine itself (a second algorithm, `_engine=True`).
"""

from __future__ import annotations

import math

import mpmath
import pytest
from references import delta_gdp, gdp_curve

import symgdp
from symgdp import mechanisms
from symgdp.errors import DomainError


def _mu(terms) -> mpmath.mpf:
    """Reference: c sqrt(sum T / sigma^2) at 50 digits, terms (T, c, sigma)."""
    with mpmath.workdps(50):
        return mpmath.sqrt(mpmath.fsum(mpmath.mpf(t) * mpmath.mpf(c) ** 2
                                       / mpmath.mpf(s) ** 2 for t, c, s in terms))


def _within_two_ulps(lo: float, up: float) -> bool:
    return lo <= up <= math.nextafter(math.nextafter(lo, math.inf), math.inf)


# the settings that took the engine 20-70 s each (mu = 3.33, 8, 12, 12.65, 16.7, 20)
@pytest.mark.parametrize("sigma, steps", [(0.3, 1), (0.25, 4), (1 / 6, 4), (0.5, 40),
                                          (0.5, 70), (0.1, 4)])
@pytest.mark.parametrize("rel, c", [("add_remove", 1), ("replace_one", 2)])
def test_q_one_bracket_is_the_closed_form(sigma, steps, rel, c):
    # reference: _mu, 50 digits; the bracket is the floats either side of it
    r = symgdp.dpsgd(1.0, sigma, steps, neighbouring=rel, rdp_only=False)
    mu = _mu([(steps, c, sigma)])
    assert r.closed_form and r.tight and r.neighbouring == rel
    assert mpmath.mpf(r.mu_floor) <= mu <= mpmath.mpf(r.mu_upper)
    assert _within_two_ulps(r.mu_floor, r.mu_upper)
    assert r.composed is None and math.isnan(r.pld_floor)
    assert r.certification.startswith("exact:")
    assert r.measurement.covers_tail and r.measurement.lower == r.mu_floor
    # a wrong c (the other relation) would miss the bracket by a factor of 2
    assert not mpmath.mpf(r.mu_floor) <= _mu([(steps, 3 - c, sigma)]) <= r.mu_upper


def test_profile_eps_and_band_against_the_gaussian_profile():
    # reference: delta_mu and the trade-off curve G_mu at 50 digits (tests/references.py)
    # for mu = 12: delta within 1e-9 of 1 near eps = 0, where the engine needed care
    r = symgdp.dpsgd(1.0, 0.25, 9, delta=1e-6)
    mu = _mu([(9, 1, 0.25)])
    with mpmath.workdps(50):
        for e in (0.0, 0.5, 10.0, 60.0, r.eps_h, 300.0):
            d = delta_gdp(mu, e)
            assert r.delta_lower(e) <= d <= r.profile(e), (e, d)
            assert float(r.profile.log_delta_lower(e)) <= mpmath.log(d) \
                <= float(r.profile.log_delta(e))
        assert delta_gdp(mu, r.eps_h) <= r.failure_prob <= 1e-10
        # (eps, delta)-DP at eps_at and eps_certified, also below failure_prob (whole line)
        for d in (1e-20, r.failure_prob, 1e-6, 0.5):
            e = r.eps_at(d)
            assert delta_gdp(mu, e) <= d
            assert delta_gdp(mu, e * (1 - 1e-9)) > d  # and tight
        assert delta_gdp(mu, r.eps_certified) <= r.delta
        b = r.tradeoff([1e-6, 1e-3, 0.3])
        for a, lo, up in zip([1e-6, 1e-3, 0.3], b.lower, b.upper, strict=True):
            g = gdp_curve(float(mu), a, dps=50)
            assert lo <= g <= up and up - lo < 1e-6, (a, lo, g, up)


def test_schedule_user_level_and_floor_flag():
    # reference: _mu of the phases; k examples per user at q = 1 move the sum by k
    sch = [(1.0, 2.0, 3), (1.0, 1.5, 7), (1.0, 0.7, 2)]
    r = symgdp.dpsgd(schedule=sch, rdp_only=False)
    mu = _mu([(t, 1, s) for _, s, t in sch])
    assert r.closed_form and mpmath.mpf(r.mu_floor) <= mu <= r.mu_upper
    assert math.isnan(r.q) and r.steps == 12
    u = symgdp.dpsgd(1.0, 2.0, 5, examples_per_user=3, rdp_only=False)
    mu3 = _mu([(5, 3, 2.0)])
    assert u.closed_form and mpmath.mpf(u.mu_floor) <= mu3 <= u.mu_upper
    assert u.examples_per_user == 3
    f = symgdp.dpsgd(1.0, 2.0, 5, floor=False, rdp_only=False)
    assert math.isnan(f.mu_floor) and f.mu_upper >= math.sqrt(5) / 2
    # a phase with q < 1 is not a Gaussian composition: the engine
    assert not symgdp.dpsgd(schedule=[(1.0, 2.0, 1), (0.5, 2.0, 1)], tol=1e-3,
                            value_discretization_interval=1e-3, rdp_only=False).closed_form


def test_other_schemes_that_are_q_one():
    # reference: _mu.  b = n without replacement is every record every step (replace-one:
    # sensitivity 2, attained: tight); shuffle and random allocation are bounded by one
    # Gaussian per epoch (a proved bound only, not tight)
    w = symgdp.dpsgd(sampling="without_replacement", dataset_size=50, batch_size=50,
                     sigma=2.0, steps=6)
    mu = _mu([(6, 2, 2.0)])
    assert w.closed_form and w.tight and w.neighbouring == "replace_one"
    assert mpmath.mpf(w.mu_floor) <= mu <= w.mu_upper
    s = symgdp.dpsgd(sampling="shuffle", dataset_size=10, batch_size=10, sigma=3.0,
                     epochs=5)
    assert s.closed_form and not s.tight
    assert _mu([(5, 1, 3.0)]) <= s.mu_upper <= math.nextafter(float(_mu([(5, 1, 3.0)])),
                                                              math.inf)
    # b = n: one batch, so the max-statistic floor's pair is the Gaussian itself: the floor
    # is below the closed form and within its grid's rounding of it
    assert 0.99 * _mu([(5, 1, 3.0)]) <= s.mu_floor <= _mu([(5, 1, 3.0)])
    o = symgdp.dpsgd(sampling="shuffle", dataset_size=11, batch_size=10, sigma=3.0,
                     epochs=5)   # 10 does not divide 11: two batches, the floor of t = 2
    assert 0 < o.mu_floor < s.mu_floor <= _mu([(5, 1, 3.0)]) <= o.mu_upper
    a = symgdp.dpsgd(sampling="random_allocation", sigma=3.0, steps=1, epochs=5,
                     neighbouring="replace_one")
    assert a.closed_form and _mu([(5, 2, 3.0)]) <= a.mu_upper
    # truncated Poisson with q = 1 under replace-one never truncates at B = n
    t = symgdp.dpsgd(1.0, 2.0, 3, sampling="truncated_poisson", dataset_size=20,
                     max_batch_size=20, neighbouring="replace_one")
    assert t.closed_form and mpmath.mpf(t.mu_floor) <= _mu([(3, 2, 2.0)]) <= t.mu_upper
    # ... and always truncates at B < n: refused before any work, as before
    with pytest.raises(DomainError, match="truncation"):
        symgdp.dpsgd(1.0, 2.0, 3, sampling="truncated_poisson", dataset_size=20,
                     max_batch_size=19)


def test_engine_contains_the_closed_form():
    # reference: the closed form (_mu), against the PLD engine (a second algorithm) on the
    # same question: the engine's bracket must contain it, on both relations
    for rel, c in (("add_remove", 1), ("replace_one", 2)):
        e = symgdp.dpsgd(1.0, 1.5, 3, neighbouring=rel, value_discretization_interval=1e-3,
                         tol=1e-3, rdp_only=False, _engine=True)
        assert not e.closed_form
        mu = _mu([(3, c, 1.5)])
        assert e.mu_floor <= mu <= e.mu_upper and e.mu_upper - e.mu_floor < 1e-2


def test_compose_of_gaussians_is_the_closed_form():
    # reference: sqrt(sum k_i mu_i^2) at 50 digits (Dong, Roth & Su 2022, Cor. 3.3), the
    # Gaussian profile at 50 digits; sigma=0.3 is the float, read exactly
    c = symgdp.compose(mechanisms.gaussian(7.5), times=4)
    assert c.certified and c.certification.startswith("certified: exact closed form")
    assert c.mu_floor == 15.0 == c.mu_upper  # 15 is a float: both ends are it
    c2 = symgdp.compose(mechanisms.gaussian(0.5), (mechanisms.gaussian(sigma=0.3), 3),
                        neighbouring="replace_one")
    mu = _mu([(1, 1, 2.0), (3, 1, 0.3)])
    assert c2.neighbouring == "replace_one"  # a label: the same theorem
    assert mpmath.mpf(c2.mu_floor) <= mu <= c2.mu_upper
    assert _within_two_ulps(c2.mu_floor, c2.mu_upper)
    with mpmath.workdps(50):
        for e in (0.0, 1.0, 4.0, c2.eps_h):
            d = delta_gdp(mu, e)
            assert c2.lower_delta(e) <= d <= c2(e)
        b = c2.eps_at(1e-5)
        assert delta_gdp(mu, b.upper) <= 1e-5 <= delta_gdp(mu, b.lower)
    # a SubsampledGaussian with q = 1 is the Gaussian of sensitivity 1 or 2 (its relation)
    from symgdp.accounting.certified import SubsampledGaussian

    c4 = symgdp.compose(SubsampledGaussian(1.0, 0.3, neighbouring="replace_one"),
                        (mechanisms.gaussian(0.5), 2))
    assert c4.certification.startswith("certified: exact closed form")
    assert mpmath.mpf(c4.mu_floor) <= _mu([(1, 2, 0.3), (2, 1, 2.0)]) <= c4.mu_upper
    assert not symgdp.compose(SubsampledGaussian(0.5, 2.0), discretization=1e-2,
                              tol=1e-2).certification.startswith("certified: exact closed")
    # nested: a composition's Gaussian atoms are still Gaussian
    c3 = symgdp.compose(c2, mechanisms.gaussian(1.0))
    assert mpmath.mpf(c3.mu_floor) <= _mu([(1, 1, 2.0), (3, 1, 0.3), (1, 1, 1.0)]) \
        <= c3.mu_upper


def test_compose_closed_form_only_for_the_catalogue_gaussian():
    # a subsampled or otherwise changed Gaussian, a Laplace step, or the engine switch
    # leave the closed form; reference: the closed form above them is not claimed
    g = mechanisms.gaussian(1.0)
    for items in ((g.subsample(0.5),), (g, mechanisms.laplace(1.0)),
                  (g.replace(expr=g.expr / 2),)):
        c = symgdp.compose(*items, discretization=1e-2, tol=1e-2)
        assert not c.certification.startswith("certified: exact closed form"), items
    e = symgdp.compose(mechanisms.gaussian(0.5), times=4, discretization=4e-3, tol=1e-3,
                       _engine=True)
    assert e.discretization == 4e-3 and "integer composition" in e.certification
    assert e.mu_floor <= 1.0 <= e.mu_upper <= e.mu_floor + 1e-2
