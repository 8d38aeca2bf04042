r"""Tests of symgdp.tail.limit: the tail limit lim eps^2/(-2 log delta) and the GDP verdict.

Reference values are closed forms derived by hand from -2 log delta(eps) (theory §5); the
derivation is given next to each entry.  Numeric-fallback results are compared against
the same closed forms.
"""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy

from symgdp.errors import AnalysisTimeout, ConvergenceError, ProfileError
from symgdp.profile import Profile
from symgdp.refinement.refine import subsample
from symgdp.symbolic.symbols import eps, sigma
from symgdp.tail.limit import Identification, eventual_branch, identify, tail_limit

A, B, K, k = sympy.symbols("A B K k", positive=True)
R = sympy.Rational
E = sympy.exp
oo = sympy.oo
gam = R(1, 10)

# (profile, expected limit, why).  Every "why" is the hand derivation of the reference.
CORPUS = [
    (Profile(E(-eps**2)), R(1, 2), "-2 log d = 2 eps^2"),
    (Profile(B * E(-sigma**2 * eps**2 / A**2)), A**2 / (2 * sigma**2),
     "-2 log d = 2 sigma^2 eps^2/A^2 - 2 log B"),
    (Profile(K / eps), oo, "-2 log d = 2 log(eps/K) grows slower than eps^2"),
    (Profile(R(5, 4) * E(-sigma**2 * eps**2 / 2), {"sigma": 2}), R(1, 4),
     "classical Gaussian: -2 log d = sigma^2 eps^2 + O(1), sigma = 2"),
    (Profile(R(5, 4) * E(-sigma**2 * eps**2 / (2 * k))), k / sigma**2,
     "k-fold composed classical Gaussian, variance k/sigma^2"),
    (Profile(E(-eps**3)), 0, "-2 log d = 2 eps^3 outgrows eps^2"),
    (Profile(E(-eps)), oo, "-2 log d = 2 eps"),
    (Profile((1 + eps**2) * E(-eps**2)), R(1, 2),
     "polynomial factor: -2 log d = 2 eps^2 - 2 log(1 + eps^2)"),
    (Profile(1 / (1 + eps**2)), oo, "polynomial decay: -2 log d ~ 4 log eps"),
    (Profile(sympy.Max(1 - E(eps / 2 - 1), 0)), 0, "Laplace eps0 = 2: eventually 0"),
    (Profile(sympy.Max(E(1) - E(eps), 0) / (1 + E(1))), 0, "pure 1-DP: eventually 0"),
    (Profile(sympy.Min(1, 4 * E(-2) / eps)), oo, "shuffle sum n=4, m=20, clipped by Min"),
    (Profile(sympy.Min(1, 2 * E(-eps**2 / 4))), 2, "-2 log d = eps^2/2 - 2 log 2"),
    (Profile(sympy.Piecewise((1, eps < 1), (E(-eps**2 / 2), True))), 1, "tail branch e^-eps^2/2"),
    (Profile(sympy.Piecewise((E(-eps), eps < 5), (0, True))), 0, "eventually 0 (Piecewise)"),
    (Profile(gam * E(-sympy.log(1 + (E(eps) - 1) / gam) ** 2)), R(1, 2),
     "subsampled e^-eps^2 with gamma = 1/10: log(1 + (e^eps - 1)/gamma) = eps + O(1)"),
    (Profile(E(-eps**2 / 2) + E(-eps**2 / 8)), 4, "composed sum, dominated by e^-eps^2/8"),
    (Profile(sympy.Max(E(-eps**2), E(-eps**2 / 2))), 1, "Max of two vanishing branches"),
    (Profile(sympy.Min(E(-eps**2), E(-eps**2 / 2))), R(1, 2), "Min of two vanishing branches"),
]


@pytest.mark.parametrize("profile, expected, why", CORPUS, ids=[c[2] for c in CORPUS])
def test_corpus_symbolic(profile, expected, why):
    got = profile.tail_limit(timeout=20)
    assert sympy.simplify(got - expected) == 0 if expected is not oo else got is oo
    ident = profile.identify(timeout=20)
    assert ident.method == "symbolic"
    assert ident.limit == got
    assert ident.is_gdp is (expected is not oo)


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 15


def test_symbolic_parameters_stay_symbolic():
    # the documented example: the tail limit of B e^{-sigma^2 eps^2/A^2} is A^2/(2 sigma^2)
    got = Profile(B * E(-sigma**2 * eps**2 / A**2)).tail_limit()
    assert got == A**2 / (2 * sigma**2)


def test_bound_values_are_substituted():
    p = Profile(B * E(-sigma**2 * eps**2 / A**2), {"A": 2, "B": 1, "sigma": 2})
    assert p.tail_limit() == R(1, 2)  # A^2/(2 sigma^2) = 4/8


def test_identify_fields():
    r = Profile(E(-eps**2)).identify()
    assert isinstance(r, Identification)
    assert r.limit == R(1, 2) and r.is_gdp is True
    assert r.mu_tail == pytest.approx(math.sqrt(0.5), rel=1e-15)  # sqrt of the limit
    not_gdp = Profile(K / eps, {"K": 1}).identify()
    assert not_gdp.is_gdp is False and not_gdp.mu_tail == math.inf
    zero = Profile(sympy.Max(1 - E(eps / 2 - 1), 0)).identify()
    assert zero.limit == 0 and zero.is_gdp is True and zero.mu_tail == 0.0


def test_symbolic_limit_with_unbound_parameters_has_nan_mu():
    r = Profile(B * E(-sigma**2 * eps**2 / A**2)).identify()
    assert r.is_gdp is True and math.isnan(r.mu_tail)


def test_subsampling_keeps_the_tail_limit():
    # theory §7: subsampling does not change the tail limit
    for expr, lim in [(E(-eps**2), R(1, 2)), (R(5, 4) * E(-eps**2 / 8), 4)]:
        p = Profile(expr)
        assert subsample(p, R(1, 5)).tail_limit() == lim == p.tail_limit()


def test_refined_profile_keeps_the_tail_limit():
    p = Profile(E(-eps**2))
    assert p.refine().tail_limit() == R(1, 2)


def test_eventual_branch():
    assert eventual_branch(sympy.Max(1 - E(eps / 2 - 1), 0), eps) == 0
    pw = sympy.Piecewise((1, eps < 3), (E(-eps), eps < 10), (E(-eps**2), True))
    assert eventual_branch(pw, eps) == E(-eps**2)
    assert eventual_branch(sympy.Min(1, K / eps), eps) == K / eps


def _gaussian_delta(mu):
    """delta_mu(eps) (theory §3) written with erfc, as a user would type it."""
    Phi = lambda x: sympy.erfc(-x / sympy.sqrt(2)) / 2  # noqa: E731
    return Phi(-eps / mu + mu / 2) - E(eps) * Phi(-eps / mu - mu / 2)


def test_numeric_fallback_on_the_gaussian_profile():
    # SymPy's limit is slow on the erfc form; with a 1 s budget the numeric fallback must
    # give mu^2 (theory §5: -2 log delta_mu = eps^2/mu^2 - eps + O(log eps)).
    mu = R(3, 2)
    r = Profile(_gaussian_delta(mu)).identify(timeout=1)
    assert r.method in ("numeric", "symbolic")
    assert float(r.limit) == pytest.approx(2.25, rel=1e-9)
    assert r.is_gdp is True
    assert r.mu_tail == pytest.approx(1.5, rel=1e-9)


def test_numeric_fallback_on_an_implicit_profile():
    # SGD trade-off inverted numerically: delta = e^{-eps^2}, limit 1/2 (closed form)
    p = Profile.from_tradeoff("sigma = A/eps*sqrt(log(B/delta))", {"A": 2, "B": 1, "sigma": 2},
                              method="numeric")
    r = p.identify()
    assert r.method == "numeric"
    assert float(r.limit) == pytest.approx(0.5, rel=1e-9)


def test_inconclusive_is_reported_not_guessed():
    # delta = exp(-eps^1.99): the limit is oo but q(eps) = eps^0.01/2 creeps up by 4.7%
    # per factor 100 of eps; neither convergence nor divergence is visible numerically.
    p = Profile.from_tradeoff("sigma = log(1/delta)**(100/199)/eps", {"sigma": 1},
                              method="numeric")
    r = p.identify()
    assert r.method == "unknown" and r.is_gdp is None and r.limit is None
    assert math.isnan(r.mu_tail)
    with pytest.raises(ConvergenceError, match="unknown"):
        p.tail_limit()


def test_timeout_without_fallback_raises_analysis_timeout():
    # a budget no analysis can meet (the rules now answer mu**2 in about 0.5 s, which a
    # budget of that size would make a race with the machine's load)
    mu = sympy.Symbol("mu", positive=True)
    p = Profile(_gaussian_delta(mu))
    with pytest.raises(AnalysisTimeout, match="unbound"):
        p.tail_limit(timeout=1e-6)
    r = p.identify(timeout=1e-6)
    assert r.method == "unknown" and r.is_gdp is None
    # with time, the answer (closed form: the Gaussian profile's limit is mu^2)
    assert Profile(_gaussian_delta(mu)).tail_limit(timeout=60) == mu**2


def test_numeric_check_of_q_against_mpmath():
    # the numeric fallback's own ratio, recomputed independently at 60 digits
    p = Profile(_gaussian_delta(1))
    with mpmath.workdps(60):
        x = mpmath.mpf(10) ** 12
        a, b = -x + mpmath.mpf(1) / 2, -x - mpmath.mpf(1) / 2
        d = mpmath.ncdf(a) - mpmath.exp(x) * mpmath.ncdf(b)
        q = x**2 / (-2 * mpmath.log(d))
    r = p.identify(timeout=0.5)
    if r.method == "numeric":
        assert float(r.limit) == pytest.approx(float(q), rel=1e-9)


def test_invalid_profiles_raise():
    with pytest.raises(ProfileError, match="increasing"):
        Profile(1 - E(-eps)).tail_limit()
    with pytest.raises(ProfileError, match="negative"):
        Profile(-E(-eps)).identify()
    with pytest.raises(ProfileError, match="negative"):
        identify(Profile(-E(-eps)).validate())


def test_module_level_functions_match_methods():
    p = Profile(E(-eps**2 / 2))
    assert tail_limit(p) == p.tail_limit() == 1
