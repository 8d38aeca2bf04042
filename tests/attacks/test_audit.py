"""Audits (symgdp.audit) by seeded simulation of a Gaussian mechanism with known mu.

References: the true mu of the simulated mechanism (outputs N(0, 1) on S and N(mu, 1) on
S', exactly mu-GDP: Dong, Roth & Su 2021, Thm 2.7), and its true eps at delta, the root of
delta_mu(eps) = delta found here with 40-digit mpmath.  Counts of the threshold test
"flag when X > c" are drawn as binomials with the exact rates Phi(mu - c) and Phi(-c).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import stats

from symgdp.attacks.audit import audit as _audit
from symgdp.errors import DomainError


def _counts(rng, mu, n, cs):
    tpr = stats.norm.sf(np.asarray(cs) - mu)
    fpr = stats.norm.sf(np.asarray(cs))
    tp = rng.binomial(n, tpr)
    fp = rng.binomial(n, fpr)
    return dict(tp=tp, fn=n - tp, fp=fp, tn=n - fp)


def _eps_true(mu, delta):
    with mpmath.workdps(40):
        m = mpmath.mpf(mu)

        def d(e):
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

        return float(mpmath.findroot(lambda e: d(e) - delta, (0, 20), solver="bisect"))


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_mu_lower_is_valid_in_repetitions(mu):
    rng = np.random.default_rng(20231)
    reps, conf = 200, 0.95
    bad = 0
    for _ in range(reps):
        r = _audit(**_counts(rng, mu, 2000, [mu / 2]), confidence=conf)
        bad += r.mu_lower > mu
    assert bad <= (1 - conf) * reps


def test_several_thresholds_and_eps_valid_in_repetitions():
    rng = np.random.default_rng(7)
    mu, delta, reps, conf = 1.5, 1e-3, 200, 0.9
    eps = _eps_true(mu, delta)
    bad_mu = bad_eps = 0
    for _ in range(reps):
        r = _audit(**_counts(rng, mu, 5000, [0.0, 0.75, 1.5, 2.5]), confidence=conf,
                    delta=delta)
        bad_mu += r.mu_lower > mu
        bad_eps += r.eps_lower > eps
    assert bad_mu <= (1 - conf) * reps and bad_eps <= (1 - conf) * reps


def test_bound_approaches_mu_as_counts_grow():
    rng = np.random.default_rng(11)
    mu = 1.0
    gaps = []
    for n in (10**3, 10**5, 10**7):
        r = _audit(**_counts(rng, mu, n, [0.5]), confidence=0.95)
        gaps.append(mu - r.mu_lower)
    assert gaps[0] > gaps[1] > gaps[2] >= 0
    assert gaps[2] < 0.01


def test_result_fields_and_scalars():
    r = _audit(tp=900, fn=100, fp=100, tn=900, delta=0.0)
    assert r.best == 0 and len(r.tpr_lower) == 1 and r.delta == 0.0
    # reference: the one-sided Clopper-Pearson bounds at level 0.025 from scipy directly
    assert r.tpr_lower[0] <= stats.beta.ppf(0.025, 900, 101)
    assert r.fpr_upper[0] >= stats.beta.ppf(0.975, 101, 900)
    assert r.eps_lower <= np.log(r.tpr_lower[0] / r.fpr_upper[0]) + 1e-12
    assert _audit(tp=0, fn=10, fp=10, tn=0).mu_lower == 0.0  # an attack that never wins
    with pytest.raises(AttributeError):
        r.mu_lower = 3.0


@pytest.mark.parametrize("kw,word", [
    (dict(tp=-1, fn=10, fp=1, tn=10), "tp"),
    (dict(tp=0, fn=0, fp=1, tn=10), "tp \\+ fn"),
    (dict(tp=1, fn=1, fp=0, tn=0), "fp \\+ tn"),
    (dict(tp=1.5, fn=1, fp=1, tn=1), "tp"),
    (dict(tp=[1, 2], fn=[1], fp=[1, 1], tn=[1, 1]), "same length"),
    (dict(tp=1, fn=1, fp=1, tn=1, confidence=1.0), "confidence"),
    (dict(tp=1, fn=1, fp=1, tn=1, confidence=0.0), "confidence"),
    (dict(tp=1, fn=1, fp=1, tn=1, delta=1.0), "delta"),
    (dict(tp=1, fn=1, fp=1, tn=1, delta=-0.1), "delta"),
])
def test_bad_input(kw, word):
    with pytest.raises(DomainError, match=word):
        _audit(**kw)


# -- one-run audit (Steinke, Nasr & Jagielski 2023) ---------------------------------------
def _one_run(rng, mu, m, k):
    # m canaries, each in with probability 1/2; the mechanism releases Y_i = mu S_i + N(0, 1),
    # so adding or removing one canary shifts one coordinate by mu: exactly mu-GDP.
    s = rng.random(m) < 0.5
    y = mu * s + rng.standard_normal(m)
    order = np.argsort(y)
    guess_in, guess_out = order[-k:], order[:k]
    v = int(np.sum(s[guess_in]) + np.sum(~s[guess_out]))
    return dict(m=m, r=2 * k, v=v)


@pytest.mark.slow  # ~100 audits of 0.1 s
def test_one_run_valid_in_repetitions():
    from symgdp.attacks.audit import audit_one_run

    rng = np.random.default_rng(2023)
    mu, delta, reps, conf = 2.0, 1e-5, 100, 0.95
    eps = _eps_true(mu, delta)
    bad_mu = bad_eps = positive = 0
    for _ in range(reps):
        r = audit_one_run(**_one_run(rng, mu, 1000, 50), confidence=conf, delta=delta)
        bad_mu += r.mu_lower > mu
        bad_eps += r.eps_lower > eps
        positive += r.mu_lower > 0
    assert bad_mu <= (1 - conf) * reps and bad_eps <= (1 - conf) * reps
    assert positive > reps // 2  # the audit finds something


def test_one_run_pure_dp_closed_form():
    # reference: with delta = 0 and all r guesses right, the bound is q^r <= 1 - c with
    # q = e^eps/(1 + e^eps): eps = log(q/(1 - q)), q = (1 - c)^(1/r); grid step 0.025 below
    from symgdp.attacks.audit import audit_one_run

    r = audit_one_run(m=100, r=10, v=10, confidence=0.95, delta=0.0)
    q = 0.05 ** 0.1
    exact = float(np.log(q / (1 - q)))
    assert exact - 0.025 <= r.eps_lower <= exact


@pytest.mark.parametrize("kw,word", [
    (dict(m=10, r=11, v=1), "v <= r <= m"),
    (dict(m=10, r=5, v=6), "v <= r <= m"),
    (dict(m=-1, r=0, v=0), "m"),
    (dict(m=10, r=5, v=1, confidence=2.0), "confidence"),
    (dict(m=10, r=5, v=1, delta=1.0), "delta"),
])
def test_one_run_bad_input(kw, word):
    from symgdp.attacks.audit import audit_one_run

    with pytest.raises(DomainError, match=word):
        audit_one_run(**kw)
