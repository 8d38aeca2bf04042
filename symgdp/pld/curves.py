r"""The numeric profile of a privacy loss distribution (PLD): a numeric source.

**PLD → Profile** (:func:`pld_source`, :class:`PLDSource`).  The pessimistic PLD's profile
is piecewise affine in :math:`e^\varepsilon` between consecutive loss values
:math:`L_j` (a multiple of the discretisation interval), so it is given exactly by its
values :math:`v_j` at the losses:
:math:`v_j = v_{j+1} + (e^{L_{j+1}} - e^{L_j}) \sum_{i > j} p_i e^{-L_i}`, a sum of
non-negative terms (with :math:`G_j = e^{L_j}\sum_{i \ge j} p_i e^{-L_i} = p_j +
e^{-\Delta}G_{j+1}`, so no cancellation and no overflow), and :math:`v_{\max} = ` the mass
at infinity; the relative rounding of these sums (at most about :math:`2Nu` each,
recursive summation) is covered by a factor :math:`1 + 8(N + 2)u`.  What float64 cannot
give is the PMF itself:
after FFT convolution its entries carry absolute rounding errors (measured:
:math:`\approx 2\cdot10^{-18}` per entry for DP-SGD with 1000 steps, visible as
negative probabilities; summed over the tail they make the raw
``get_delta_for_epsilon`` of dp_accounting sit near :math:`10^{-14}` where the true
profile is :math:`10^{-30}`).  No proven bound on FFT rounding is used here; instead the
profile adds an explicit *margin* :math:`m(\varepsilon) = 16 s N(\varepsilon)` to its value
at :math:`\varepsilon`, with :math:`N(\varepsilon)` the number of PMF entries with loss
above :math:`\varepsilon` (the terms of the sum) and :math:`s` the per-entry noise scale,
the largest of the absolute value of the most negative entry and
:math:`2^{-52}\max_i p_i\log_2 N`.  This is an estimate of the FFT rounding, not a
proven bound.  For DP-SGD (:math:`q = 0.01, \sigma = 1, T = 1000`, :math:`N \approx 2\cdot10^5`,
:math:`s \approx 6\cdot10^{-18}`) the margin falls from :math:`2\cdot10^{-11}` at
:math:`\varepsilon = 0` to :math:`8\cdot10^{-13}` at :math:`\varepsilon = 8`, while the
aggregate deviation of the raw PLD profile from the truth that we could observe there
(raw value minus a rigorous Rényi upper bound on the truth) is at most
:math:`3.3\cdot10^{-14}`: 24 times or more of room.  In the head, where
:math:`\delta \gg m`, it changes nothing that matters.  The mass at infinity (computed by
dp_accounting without FFT) is the floor of the profile, so every
:func:`~symgdp.measurement.measure.measure` of it reports a ``failure_prob`` at least that large.
Negative PMF entries are set to 0 (which only raises the profile).

"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symgdp.errors import DomainError, ProfileError
from symgdp.numerics.recursions import geometric_tail

__all__ = ["PLDSource", "pld_source", "curves_source", "eps_array", "first_eps_below"]

# relative slack on log delta evaluated from the curves (interpolation in float64)
_LOG_SLACK = 1e-12
_U = 2.0**-52


def pld_module() -> Any:
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError as exc:  # pragma: no cover - dp_accounting is a core dependency
        raise ImportError("privacy loss distributions need dp_accounting: "
                          "pip install dp-accounting") from exc
    return privacy_loss_distribution


def check_discretization(d: Any) -> float:
    v = float(d)
    if not (math.isfinite(v) and 0 < v <= 1):
        raise DomainError(f"value_discretization_interval must lie in (0, 1], got {d!r}")
    return v


def eps_array(eps: Any) -> tuple[bool, np.ndarray]:
    """(is scalar, eps as a float64 array of at least one dimension), refusing NaN and
    negative values the way :meth:`symgdp.profile.Profile.log_delta` does."""
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    bad = np.isnan(x) | (x < 0)
    if np.any(bad):
        raise ProfileError(f"a profile is defined for eps >= 0, got {x[bad][0]!r}")
    return np.ndim(eps) == 0, x



class Curve:
    """The profile of one non-negative PMF on a loss grid, exactly as piecewise affine in
    e^eps (an upper bound: see the module notes for the rounding)."""

    __slots__ = ("losses", "values", "g", "inf_mass", "margin", "size", "inflate", "comp")

    def __init__(self, lower: int, disc: float, probs: np.ndarray, inf_mass: float,
                 margin: float = 0.0, complement: Any = None) -> None:
        n = probs.size
        self.margin = float(margin)  # per PMF entry right of eps (see the module notes)
        p = np.maximum(probs, 0.0)
        # loss values rounded up (two ulps above the rounded product): each term
        # p_i (1 - e^{x - L_i})_+ only grows with L_i, so the curve stays an upper bound
        losses = (lower + np.arange(n, dtype=np.float64)) * disc
        losses = np.nextafter(np.nextafter(losses, np.inf), np.inf)
        # G_j = e^{L_j} sum_{i >= j} p_i e^{-L_i} = p_j + e^{-D} G_{j+1}: a recursion of
        # non-negative terms below the total mass (no overflow, no cancellation)
        r = math.exp(-disc)
        g = geometric_tail(p, r)
        self.g = np.maximum(g, 0.0)
        # v_j = v_{j+1} + G_{j+1} (1 - e^{-D}); v_{n-1} = inf mass
        inc = self.g[1:] * -math.expm1(-disc)
        self.values = inf_mass + np.concatenate([np.cumsum(inc[::-1])[::-1], [0.0]])
        # both recursions are sums of non-negative terms: relative rounding error at most
        # about 2 n u each (recursive summation); covered by this factor
        self.inflate = 1.0 + 8.0 * (n + 2) * _U
        self.losses = losses
        self.inf_mass = float(inf_mass)
        self.size = n
        self.comp = None if complement is None else _complement_arrays(
            lower, disc, *complement)

    @classmethod
    def from_pmf(cls, pmf: Any) -> Curve:
        """The curve of a dp_accounting PMF after FFT composition, with the estimated
        rounding margin of the module notes."""
        dense = pmf.to_dense_pmf()
        try:
            delta_l = float(dense._discretization)
            lower = int(dense._lower_loss)
            probs = np.asarray(dense._probs, dtype=np.float64)
            inf_mass = float(dense._infinity_mass)
        except AttributeError as exc:  # pragma: no cover - guards a dp_accounting change
            raise ProfileError("this version of dp_accounting stores its PMF differently; "
                               "symgdp supports dp_accounting 0.6") from exc
        if not getattr(dense, "_pessimistic_estimate", True):
            raise ProfileError("an optimistic PLD is not an upper bound on the profile; "
                               "build it with pessimistic_estimate=True")
        n = probs.size
        neg = float(-probs.min()) if n and probs.min() < 0 else 0.0
        top = float(probs.max()) if n else 0.0
        noise = max(neg, _U * top * math.log2(max(n, 2)))
        return cls(lower, delta_l, probs, inf_mass, 16.0 * noise)

    def delta(self, x: np.ndarray) -> np.ndarray:
        """Upper bound on the pmf's profile at ``x`` (margin included)."""
        out = np.full(x.shape, self.inf_mass)
        if self.size == 0:
            return out
        idx = np.searchsorted(self.losses, x, side="right")  # first loss > x
        ok = idx < self.size
        j = idx[ok]
        lin = self.g[j] * -np.expm1(x[ok] - self.losses[j])
        out[ok] = (self.values[j] + lin) * self.inflate + self.margin * (self.size - j)
        return out

    def log_delta(self, x: np.ndarray) -> np.ndarray:
        r"""Upper bound on log of the pmf's profile at ``x``: the log of :meth:`delta`, and
        where the curve knows its complement (see :func:`_complement_arrays`) the smaller
        ``log1p(-c)`` with ``c`` a proved lower bound on :math:`1 - \delta`."""
        with np.errstate(divide="ignore"):
            out = np.log(self.delta(x)) * (1.0 - _LOG_SLACK)  # log d <= 0: moves it up
        if self.comp is None or self.size == 0:
            return out
        one_m, prefix, g_low, losses_up = self.comp
        pos = np.full(x.shape, prefix[-1])
        idx = np.searchsorted(losses_up, x, side="right")  # first (rounded-up) loss > x
        ok = idx < self.size
        j = idx[ok]
        # e^{x - L_j} from below: L_j rounded up, the subtraction and exp within 4 ulps
        w = np.exp(x[ok] - losses_up[j]) * (1.0 - 8.0 * _U)
        pos[ok] = prefix[j] + w * g_low[j]
        # the sum of the non-negative terms and the last addition, rounded down
        c = np.nextafter(one_m + pos * (1.0 - 4.0 * _U), -np.inf)
        c = np.minimum(c, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # log1p within 2 ulps: the factor moves the (non-positive) value up
            via = np.where(c > 0.0, np.log1p(-c) * (1.0 - 8.0 * _U), 0.0)
        return np.minimum(out, via)

    @property
    def end(self) -> float:
        return float(self.losses[-1]) if self.size else 0.0


def _complement_arrays(lower: int, disc: float, one_m: float, p_low: np.ndarray
                       ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    r"""The profile near :math:`\delta = 1` in complements.  For a measure :math:`\nu`
    on the losses :math:`L_i = (\mathrm{lower} + i)\Delta` and :math:`+\infty` with total
    mass :math:`M`,

    .. math:: 1 - \delta_\nu(\varepsilon) = (1 - M) + \sum_{L_i \le \varepsilon} \nu_i
        + \sum_{L_i > \varepsilon} \nu_i e^{\varepsilon - L_i}
        = (1 - M) + S_j + e^{\varepsilon - L_j} G_j

    (:math:`L_{j-1} \le \varepsilon < L_j`, :math:`S_j = \sum_{i < j}\nu_i`,
    :math:`G_j = \nu_j + e^{-\Delta}G_{j+1}`): every term but :math:`1 - M` is
    non-negative, so a lower bound needs only ``one_m`` :math:`\le 1 - M` (from exact
    integers) and masses ``p_low`` :math:`\le \nu_i`; losses are rounded up (a term whose
    rounded loss passes :math:`\varepsilon` only shrinks) and :math:`e^{-\Delta}` down;
    both sums are deflated by their worst-case relative rounding :math:`16(N + 4)u`.
    The direct form's factor :math:`1 + 8(N + 2)u` moves :math:`\delta` by more than all
    of :math:`1 - \delta` when a composition's :math:`\mu` is large (:math:`1 -
    \delta_\mu(0) = 2\Phi(-\mu/2)`, :math:`2.6\cdot10^{-10}` at :math:`\mu = 12.6`);
    this form keeps :math:`1 - \delta` to about :math:`10^{-10}` of itself plus
    :math:`|1 - M|` absolutely.  Returns ``(one_m, S, G, losses)``."""
    p = np.maximum(np.asarray(p_low, dtype=np.float64), 0.0)
    n = p.size
    deflate = 1.0 - 16.0 * (n + 4) * _U
    losses = (lower + np.arange(n, dtype=np.float64)) * disc
    losses = np.nextafter(np.nextafter(losses, np.inf), np.inf)
    prefix = np.concatenate([[0.0], np.cumsum(p)]) * deflate
    r_low = float(np.nextafter(np.nextafter(math.exp(-disc), 0.0), 0.0))
    g = geometric_tail(p, r_low)
    g = np.maximum(g, 0.0) * deflate
    return float(one_m), prefix, g, losses


class PLDSource:
    r"""A numeric source (see :meth:`symgdp.profile.Profile.from_source`): the pessimistic
    profile of a privacy loss distribution.

    :math:`\delta(\varepsilon)` is the maximum over the PLD's add and remove PMFs of the
    exact profile of the (pessimistic) PMF, plus the rounding margin described above; it
    is at least ``floor`` (the mass at infinity) everywhere.  It is already a true
    profile (convex in :math:`e^\varepsilon`), so refinement leaves it unchanged, and it
    is not GDP in the tail when ``floor > 0``.

    Example:
        >>> from dp_accounting.pld import privacy_loss_distribution as P
        >>> s = pld_source(P.from_laplace_mechanism(1.0, value_discretization_interval=1e-3))
        >>> s.floor, bool(s.log_delta(np.array([0.0]))[0] < 0)
        (0.0, True)
    """

    kind = "PLD"
    exact = True

    def __init__(self, curves: Any, pld: Any = None, **meta: Any) -> None:
        self.curves = tuple(curves)
        self.pld = pld
        self.floor = float(max(c.inf_mass for c in self.curves))
        self.margin = float(max(c.margin * c.size for c in self.curves))
        self.meta = dict(meta)

    def no_tail(self) -> str:
        """Why the source has no symbolic tail (the message of ``tail_limit``)."""
        return ("a PLD profile is numeric: it has no symbolic tail "
                f"(its floor, the mass at infinity, is {self.floor:.3g})")

    def log_delta(self, x: np.ndarray) -> np.ndarray:
        """An upper bound on log delta at each point of the (1-d, checked) array ``x``."""
        out = self.curves[0].log_delta(x)
        for c in self.curves[1:]:
            out = np.maximum(out, c.log_delta(x))
        return np.minimum(out, 0.0)

    def end(self) -> float:
        """An eps beyond which the profile is constant (its floor)."""
        return max(c.end for c in self.curves)


def curves_source(curves: Any, *, pld: Any = None, **meta: Any) -> PLDSource:
    """A :class:`PLDSource` whose value is the maximum of the given curves."""
    return PLDSource(curves, pld=pld, **meta)


def pld_source(pld: Any) -> PLDSource:
    r"""The numeric source of a pessimistic dp_accounting ``PrivacyLossDistribution``
    (see :class:`PLDSource` and the module notes on the rounding margin)."""
    if not (hasattr(pld, "_pmf_remove") and hasattr(pld, "get_delta_for_epsilon")):
        raise ProfileError(f"not a dp_accounting PrivacyLossDistribution: {pld!r}")
    pmfs = [pld._pmf_remove]
    if not pld._symmetric:
        pmfs.append(pld._pmf_add)
    curves = tuple(Curve.from_pmf(p) for p in pmfs)
    disc = float(pmfs[0]._discretization)
    return curves_source(curves, pld=pld, discretization=disc)


def first_eps_below(profile: Any, log_target: float, rel: float = 1e-12) -> float:
    """Smallest eps >= 0 with ``profile.log_delta(eps) <= log_target`` (bisection to
    ``rel``, rounded up); 0.0 when already there at 0, ``inf`` when not reached by 1e6."""
    if float(profile.log_delta(0.0)) <= log_target:
        return 0.0
    lo, hi = 0.0, 1.0
    while float(profile.log_delta(hi)) > log_target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    while hi - lo > rel * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if float(profile.log_delta(mid)) <= log_target:
            hi = mid
        else:
            lo = mid
    return hi
