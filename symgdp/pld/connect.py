r"""From a privacy profile to a pessimistic privacy loss distribution (PLD).

The arithmetic is Google's ``dp_accounting`` (its ``pld`` package: pessimistic
discretisation on a grid of spacing ``value_discretization_interval``).

**Profile → PLD** (:func:`to_pld`).

* Known mechanisms, recognised from ``profile.meta["mechanism"]`` (set by
  :mod:`symgdp.mechanisms`) *and* checked numerically against the mechanism rebuilt from
  its parameter: the Gaussian and Laplace mechanisms, both also Poisson-subsampled
  (:meth:`Profile.subsample <symgdp.profile.Profile.subsample>`, add and remove
  neighbours), pure DP and randomized response.  They use ``dp_accounting``'s own
  constructors, which discretise the *exact* loss distribution pessimistically.  For a
  subsampled mechanism this PLD is that of the subsampled mechanism itself, which is
  tighter than the profile bound :math:`\gamma\,\delta(\log(1 + (e^\varepsilon - 1)/\gamma))`.
* Any other profile, by *connect the dots* (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi,
  "Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions",
  PETS 2022, Algorithm 1 and its pessimism guarantee): the profile is evaluated on a grid
  :math:`\varepsilon_1 < \dots < \varepsilon_n` of multiples of the discretisation
  interval, and the PLD with mass on the grid points whose profile interpolates these
  values linearly in :math:`e^\varepsilon` (and equals :math:`\delta(\varepsilon_n)`, its
  mass at :math:`+\infty`, beyond the grid) is returned.  Why it is pessimistic: a
  privacy profile is :math:`\sup` of functions affine in :math:`e^\varepsilon`
  (:math:`\delta(\varepsilon) = \sup_S P(S) - e^\varepsilon Q(S)`), hence convex in
  :math:`e^\varepsilon`, and a chord of a convex function lies above it; beyond the grid a
  non-increasing profile is at most its last value.  Negative :math:`\varepsilon` (needed
  for composition) comes from the identity
  :math:`H_{e^{-x}}(P\|Q) = 1 - e^{-x} + e^{-x}H_{e^{x}}(Q\|P)`, true for any pair
  (integrate :math:`(P - \gamma Q)_+ = P - \gamma Q + (\gamma Q - P)_+`), applied to the
  symmetric dominating pair of a profile (Zhu, Dong & Wang, "Optimal Accounting of
  Differential Privacy via Characteristic Function", AISTATS 2022):
  :math:`\delta(-x) = 1 - e^{-x} + e^{-x}\delta(x)`.  A profile that is only an *upper
  bound* (a naive or refined profile) is replaced by the lower convex envelope of its grid
  values, which still lies above the true, convex profile at every grid point (the true
  profile is one of the convex functions below the values), so the chords still
  dominate it.  The grid
  values are inflated by a relative ``1e-12`` to cover float64 evaluation error (the
  profile's own evaluation is trusted to ``1e-13`` relative, as in
  :func:`symgdp.measure`).  The grid ends where the profile falls below
  ``tail_delta``; the rest becomes the mass at infinity, an explicit floor.

"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy

from symgdp.errors import DomainError, ProfileError
from symgdp.gaussian.vectorised import log_delta_mu
from symgdp.pld.curves import check_discretization, pld_module

__all__ = ["to_pld", "DEFAULT_DISCRETIZATION"]

#: default ``value_discretization_interval`` (dp_accounting's own default)
DEFAULT_DISCRETIZATION = 1e-4
# relative inflation of float64 profile values fed to connect-the-dots
_VALUE_INFLATE = 1e-12
_MAX_GRID = 400_001


# -- profile -> PLD ------------------------------------------------------------------------
def _known_log_delta(kind: str, v: float, x: np.ndarray) -> np.ndarray:
    """log delta of a known mechanism at x, from its closed form in float64 (a second
    computation, independent of the profile's SymPy expression)."""
    if kind == "gaussian":
        return np.asarray(log_delta_mu(x, v), dtype=np.float64)
    with np.errstate(divide="ignore"):
        if kind == "laplace":  # (1 - e^{(x - eps0)/2})_+
            return np.where(x < v, np.log(-np.expm1(np.minimum(x - v, 0.0) / 2)), -np.inf)
        # pure DP and randomized response: (e^{eps0} - e^x)_+ / (1 + e^{eps0})
        return np.where(x < v, v + np.log(-np.expm1(np.minimum(x - v, 0.0)))
                        - np.logaddexp(0.0, v), -np.inf)


def _mechanism_of(profile: Any) -> tuple[str, float, float] | None:
    """(kind, parameter, sampling rate) of a recognised mechanism profile, else None.

    The metadata only says what the profile claims to be; the claim is checked against
    the mechanism's closed form on a grid.
    """
    tag = profile.meta.get("mechanism")
    if not (isinstance(tag, tuple) and len(tag) == 2):
        return None
    kind, param = tag
    if kind not in ("gaussian", "laplace", "pure_dp", "randomized_response"):
        return None
    try:
        value = float(sympy.sympify(param).xreplace(dict(profile.values)))
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(value) and value > 0):
        return None
    gamma = profile.meta.get("subsampled")
    g = 1.0
    try:
        xs = np.linspace(0.0, 3.0 * max(value, 1.0), 13)
        a = profile.log_delta(xs)
        if gamma is not None:
            # Poisson subsampling of the profile (Profile.subsample), numerically
            g = float(gamma)
            if not 0 < g <= 1:
                return None
            inner = np.log1p(np.expm1(xs) / g)
            b = math.log(g) + np.minimum(_known_log_delta(kind, value, inner), 0.0)
        else:
            b = _known_log_delta(kind, value, xs)
    except (ProfileError, DomainError, TypeError, ValueError):
        return None
    fin = np.isfinite(a) | np.isfinite(b)
    if not (np.array_equal(np.isfinite(a), np.isfinite(b))
            and np.allclose(a[fin], b[fin], rtol=1e-9, atol=1e-12)):
        return None
    return kind, value, g


def _connect_the_dots(profile: Any, disc: float, tail_delta: float,
                      max_eps: float, grid_points: int) -> Any:
    P = pld_module()
    from dp_accounting.pld import pld_pmf

    profile.require_bound()
    # the end of the grid: where the profile falls below tail_delta (or max_eps)
    end = 1.0
    while end < max_eps and float(profile.log_delta(end)) > math.log(tail_delta):
        end = min(2.0 * end, max_eps)
    n_end = int(math.ceil(end / disc))
    stride = max(1, int(math.ceil(n_end / max(grid_points // 2, 1))))
    pos = np.arange(0, n_end + stride, stride, dtype=np.int64)
    pos = np.unique(np.minimum(pos, max(n_end, stride)))
    x = pos * disc
    with np.errstate(over="ignore"):
        dpos = np.minimum(np.exp(np.asarray(profile.log_delta(x))) * (1 + _VALUE_INFLATE), 1.0)
    dpos = np.minimum.accumulate(dpos)  # a profile is non-increasing
    # symmetric extension to eps < 0: delta(-x) = 1 - e^{-x} + e^{-x} delta(x)
    xn = x[1:][::-1]
    dneg = np.minimum(-np.expm1(-xn) + np.exp(-xn) * dpos[1:][::-1], 1.0)
    eps_int = np.concatenate([-pos[1:][::-1], pos])
    eps_val = eps_int * disc
    vals = np.concatenate([dneg, dpos])
    vals = _lower_convex_envelope(np.exp(eps_val), vals)
    vals = np.minimum.accumulate(np.minimum(vals, 1.0))
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(disc, eps_int, vals)
    return P.PrivacyLossDistribution(pmf)


def _lower_convex_envelope(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Values at the points y (increasing) of the largest convex function <= v there."""
    hull: list[int] = []
    for i in range(y.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or above the chord from a to i
            if (v[b] - v[a]) * (y[i] - y[a]) >= (v[i] - v[a]) * (y[b] - y[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    h = np.asarray(hull)
    return np.interp(y, y[h], v[h])


def to_pld(profile: Any, value_discretization_interval: float = DEFAULT_DISCRETIZATION, *,
           tail_delta: float = 1e-15, max_eps: float = 64.0,
           grid_points: int = 20_001) -> Any:
    r"""A pessimistic dp_accounting ``PrivacyLossDistribution`` for a profile.

    Args:
        profile: a :class:`~symgdp.profile.Profile` with every parameter bound (a
            profile built from a PLD returns its own PLD).
        value_discretization_interval: spacing of the loss grid (smaller is tighter and
            slower).
        tail_delta: connect-the-dots grids end where the profile falls below this (the
            rest becomes mass at infinity).
        max_eps: connect-the-dots grids end at this :math:`\varepsilon` at the latest.
        grid_points: at most this many connect-the-dots points (on multiples of the
            discretisation interval).

    Known mechanisms use dp_accounting's exact constructors; everything else connect the
    dots (see above for why the result dominates the profile).

    Example:
        >>> from symgdp import mechanisms
        >>> pld = to_pld(mechanisms.gaussian(1.0))
        >>> bool(pld.get_delta_for_epsilon(1.0) >= mechanisms.gaussian(1.0)(1.0))
        True
    """
    own = getattr(getattr(profile, "source", None), "pld", None)
    if own is not None:
        return own
    if not (hasattr(profile, "log_delta") and hasattr(profile, "meta")):
        raise ProfileError(f"expected a Profile, got {type(profile).__name__}")
    disc = check_discretization(value_discretization_interval)
    if not (0 < tail_delta < 1):
        raise DomainError(f"tail_delta must lie in (0, 1), got {tail_delta!r}")
    if not (math.isfinite(max_eps) and max_eps > 0):
        raise DomainError(f"max_eps must be a finite number > 0, got {max_eps!r}")
    if int(grid_points) < 3 or int(grid_points) > _MAX_GRID:
        raise DomainError(f"grid_points must lie in [3, {_MAX_GRID}], got {grid_points!r}")
    P = pld_module()
    known = _mechanism_of(profile)
    if known is not None:
        kind, v, g = known
        if kind == "gaussian":
            return P.from_gaussian_mechanism(1.0 / v, sensitivity=1.0,
                                             value_discretization_interval=disc,
                                             sampling_prob=g, use_connect_dots=True)
        if kind == "laplace" and v > 0:
            return P.from_laplace_mechanism(1.0 / v, sensitivity=1.0,
                                            value_discretization_interval=disc,
                                            sampling_prob=g, use_connect_dots=True)
        if kind in ("pure_dp", "randomized_response") and g == 1.0:
            from dp_accounting.pld.common import DifferentialPrivacyParameters

            return P.from_privacy_parameters(DifferentialPrivacyParameters(v, 0.0), disc)
    profile.validate()
    return _connect_the_dots(profile, disc, float(tail_delta), float(max_eps),
                             int(grid_points))


