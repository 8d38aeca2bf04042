r"""Refinement recognises tight profiles by a proof, not by a scan (theory §2).

A profile is tight when :math:`R(x) = (1 - \tilde\delta(x))/(1 + e^x)` is non-increasing:
the stationarity bracket never crosses from − to +.  :func:`symgdp.refinement.refine.refine` first
tries to prove that in ball arithmetic and, when it succeeds, returns the profile
unchanged with ``meta["tight"]`` saying so.  The tests assert the path taken (the note),
the result (identical to the input), and, as the independent reference, the infimum
formula :math:`\inf_{\varepsilon_0 \ge \varepsilon} g = 1 - (1 + e^\varepsilon)
\sup_{x \ge \varepsilon} R(x)` evaluated at 40 digits from closed-form mpmath profiles on
a fine grid: it gives back the naive profile (nothing to gain).  Profiles that refinement
does improve must not take the fast path, including one built to defeat it (each branch
tight, a jump between them).
"""

from __future__ import annotations

import mpmath
import pytest
import sympy

from symgdp import Profile, eps, mechanisms
from symgdp.refinement.refine import refine

TIGHT = {
    "gaussian 0.3": (lambda: mechanisms.gaussian(0.3), ("gauss", 0.3)),
    "gaussian 1": (lambda: mechanisms.gaussian(1.0), ("gauss", 1.0)),
    "gaussian 2.5": (lambda: mechanisms.gaussian(2.5), ("gauss", 2.5)),
    "laplace 0.2": (lambda: mechanisms.laplace(0.2), ("laplace", 0.2)),
    "laplace 1": (lambda: mechanisms.laplace(1.0), ("laplace", 1.0)),
    "laplace 3": (lambda: mechanisms.laplace(3.0), ("laplace", 3.0)),
    "pure dp 0.2": (lambda: mechanisms.pure_dp(0.2), ("pure", 0.2)),
    "pure dp 1": (lambda: mechanisms.pure_dp(1.0), ("pure", 1.0)),
}


def _delta_mp(kind: str, p: float, x: mpmath.mpf) -> mpmath.mpf:
    """Closed forms at 40 digits: delta_mu (Dong, Roth & Su 2021, Cor. 2.13), the Laplace
    profile max(0, 1 - e^{(x - eps0)/2}) and pure eps0-DP (e^{eps0} - e^x)_+/(1 + e^{eps0})."""
    p = mpmath.mpf(p)
    if kind == "gauss":
        return mpmath.ncdf(-x / p + p / 2) - mpmath.exp(x) * mpmath.ncdf(-x / p - p / 2)
    if kind == "laplace":
        return max(mpmath.mpf(0), 1 - mpmath.exp((x - p) / 2))
    return max(mpmath.mpf(0), mpmath.exp(p) - mpmath.exp(x)) / (1 + mpmath.exp(p))


@pytest.mark.parametrize("name", sorted(TIGHT))
def test_tight_profile_is_proved_and_returned_unchanged(name):
    make, (kind, param) = TIGHT[name]
    p = make()
    r = refine(p)
    assert r.meta.get("tight", "").startswith("already tight: no crossing")
    assert r.meta["refine_method"] == "proof"
    assert r.expr == p.expr and dict(r.values) == dict(p.values)
    assert r.meta["segments"] == () and r.breakpoint is None
    # reference: the infimum formula at 40 digits gives the naive profile back
    with mpmath.workdps(40):
        grid = [mpmath.mpf(k) / 50 for k in range(0, 501)]
        R = [(1 - _delta_mp(kind, param, x)) / (1 + mpmath.exp(x)) for x in grid]
        sup_right = list(R)
        for i in range(len(R) - 2, -1, -1):
            sup_right[i] = max(R[i], sup_right[i + 1])
        for i in range(0, len(grid), 25):
            inf_g = 1 - (1 + mpmath.exp(grid[i])) * sup_right[i]
            naive = _delta_mp(kind, param, grid[i])
            assert inf_g >= naive - mpmath.mpf(10) ** -30 * (1 + naive)
            assert abs(float(r(float(grid[i]))) - float(naive)) <= 1e-12


def _jump_profile() -> Profile:
    # each branch alone is tight (pure 2-DP, then 0), but delta jumps down at eps = 1, so
    # R jumps up there and refinement improves delta(0) from 0.76 to 1 - 2/(1 + e)
    e2 = sympy.exp(2)
    return Profile(sympy.Piecewise(((e2 - sympy.exp(eps)) / (1 + e2), eps < 1), (0, True)))


IMPROVABLE = {
    "sgd family": lambda: mechanisms.sgd_family(2, 1, 1.5),
    "2 exp(-eps)": lambda: Profile(2 * sympy.exp(-eps)),
    "tight branches with a jump": _jump_profile,
}


@pytest.mark.parametrize("name", sorted(IMPROVABLE))
def test_improvable_profile_takes_the_scan(name):
    p = IMPROVABLE[name]()
    r = refine(p)
    assert "tight" not in r.meta and r.meta["refine_method"] != "proof"
    assert r.meta["segments"], "the refinement should have found a flat piece"
    assert float(r(0.0)) < float(p(0.0)) - 1e-3


def test_jump_profile_refines_to_the_infimum():
    """Reference: R is (1 - delta)/(1 + e^x), largest right of the jump at 1, where
    delta = 0, so the infimum at 0 is 1 - 2/(1 + e) (computed here at 40 digits)."""
    r = refine(_jump_profile())
    with mpmath.workdps(40):
        expected = 1 - 2 / (1 + mpmath.e)
    assert float(expected) - 1e-12 <= float(r(0.0)) <= float(expected) + 1e-9
