r"""Privacy loss distributions (PLDs): profiles to PLDs and back, and composition.

A dominating pair :math:`(P, Q)` with privacy loss :math:`L = \log(dP/dQ)` has the profile
:math:`\delta(\varepsilon) = \mathbb E_P[(1 - e^{\varepsilon - L})_+] + P[L = \infty]`, and
composing mechanisms adds their losses (the PLDs convolve).  The arithmetic is Google's
``dp_accounting`` (its ``pld`` package: pessimistic discretisation on a grid of spacing
``value_discretization_interval``, FFT convolution, connect-the-dots); this module builds
PLDs from :class:`~symgdp.profile.Profile` objects and turns a PLD back into a numeric
profile that :func:`symgdp.measure` can measure.

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

**PLD → Profile** (:func:`from_pld`, :class:`PLDProfile`).  The pessimistic PLD's profile
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
:func:`~symgdp.measure.measure` of it reports a ``failure_prob`` at least that large.
Negative PMF entries are set to 0 (which only raises the profile).

**Composition** (:func:`compose`): PLDs of every argument, composed with
``PrivacyLossDistribution.compose`` / ``self_compose``, and returned as a
:class:`PLDProfile`.  Randomized response is composed as a PLD, not through
``dp_accounting``'s ``RandomizedResponseDpEvent`` (whose count composes only once in
version 0.6.0).  This route carries the *estimated* FFT margin above.

**Certified composition** (:class:`IntPMF`, :func:`int_compose`,
:func:`int_self_compose`): the route without an estimate, used by
:func:`symgdp.dpsgd.certified_pld`.  A PMF is held exactly as non-negative integers in
units of :math:`2^{-80}` (a ``flint.fmpz_poly``, coefficient :math:`i` the mass at loss
:math:`(\mathrm{lower} + i)\Delta`, plus the mass at :math:`+\infty`).  Composition
is the exact integer product of the polynomials, each coefficient then rounded *up* to
the scale (``ceil``); the tails are cut where their exact mass is below ``tail``, the
left tail's mass moved onto the first kept loss and the right tail's to
:math:`+\infty`.  Every step increases the measure entrywise or moves mass to larger
losses, and :math:`\delta(\varepsilon) = \sum_l \nu(l)(1 - e^{\varepsilon - l})_+`
is non-decreasing under both (it integrates a non-negative, non-decreasing function),
and convolution preserves this order, so the composed measure's profile bounds the
exact composition of its inputs from above; the theorem in :mod:`symgdp.dpsgd` starts
the chain from the true mechanism.  Where to cut is chosen from a float64 approximation
(FFT of exponentially tilted copies, which resolves the right tail) and checked on the
exact tail sums: the choice affects only speed and the floor, never validity.  The
optimistic variant (``up=False``) rounds down, drops the left tail and moves the right
tail onto the last kept loss, and gives lower bounds (:meth:`IntPMF.lower_delta`).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy

from .errors import DomainError, ProfileError
from .profile import Profile
from .symbols import eps as _EPS

__all__ = ["PLDProfile", "to_pld", "from_pld", "compose", "head_measure",
           "DEFAULT_DISCRETIZATION", "IntPMF", "int_pmf", "int_compose", "int_self_compose"]

#: default ``value_discretization_interval`` (dp_accounting's own default)
DEFAULT_DISCRETIZATION = 1e-4
# relative inflation of float64 profile values fed to connect-the-dots
_VALUE_INFLATE = 1e-12
# relative slack on log delta evaluated by PLDProfile (interpolation in float64)
_LOG_SLACK = 1e-12
_MAX_GRID = 400_001
_U = 2.0**-52


def _pld_module() -> Any:
    try:
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError as exc:  # pragma: no cover - dp_accounting is a core dependency
        raise ImportError("privacy loss distributions need dp_accounting: "
                          "pip install dp-accounting") from exc
    return privacy_loss_distribution


def _check_discretization(d: Any) -> float:
    v = float(d)
    if not (math.isfinite(v) and 0 < v <= 1):
        raise DomainError(f"value_discretization_interval must lie in (0, 1], got {d!r}")
    return v


def eps_array(eps: Any) -> tuple[bool, np.ndarray]:
    """(is scalar, eps as a float64 array of at least one dimension), refusing NaN and
    negative values the way :meth:`Profile.log_delta` does."""
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    bad = np.isnan(x) | (x < 0)
    if np.any(bad):
        raise ProfileError(f"a profile is defined for eps >= 0, got {x[bad][0]!r}")
    return np.ndim(eps) == 0, x


# -- PLD -> profile ------------------------------------------------------------------------
class _Curve:
    """The profile of one non-negative PMF on a loss grid, exactly as piecewise affine in
    e^eps (an upper bound: see the module notes for the rounding)."""

    __slots__ = ("losses", "values", "g", "inf_mass", "margin", "size", "inflate")

    def __init__(self, lower: int, disc: float, probs: np.ndarray, inf_mass: float,
                 margin: float = 0.0) -> None:
        n = probs.size
        self.margin = float(margin)  # per PMF entry right of eps (see the module notes)
        p = np.maximum(probs, 0.0)
        # loss values rounded up (two ulps above the rounded product): each term
        # p_i (1 - e^{x - L_i})_+ only grows with L_i, so the curve stays an upper bound
        losses = (lower + np.arange(n, dtype=np.float64)) * disc
        losses = np.nextafter(np.nextafter(losses, np.inf), np.inf)
        # G_j = e^{L_j} sum_{i >= j} p_i e^{-L_i} = p_j + e^{-D} G_{j+1}: a recursion of
        # non-negative terms below the total mass (no overflow, no cancellation)
        from scipy.signal import lfilter

        r = math.exp(-disc)
        g = lfilter([1.0], [1.0, -r], p[::-1])[::-1] if n else p
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

    @classmethod
    def from_pmf(cls, pmf: Any) -> _Curve:
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

    @property
    def end(self) -> float:
        return float(self.losses[-1]) if self.size else 0.0


class PLDProfile(Profile):
    r"""A numeric privacy profile: the pessimistic profile of a privacy loss distribution.

    :math:`\delta(\varepsilon)` is the maximum over the PLD's add and remove PMFs of the
    exact profile of the (pessimistic) PMF, plus the rounding margin described in
    :mod:`symgdp.pld`; it is at least ``floor`` (the mass at infinity) everywhere.  It
    is a :class:`~symgdp.profile.Profile` whose expression is the opaque symbol
    :math:`\delta_{\mathrm{PLD}}(\varepsilon)`: numeric methods (``__call__``,
    :meth:`log_delta`, :meth:`measure`, :meth:`gdpt`) work, symbolic ones do not apply.
    It is already a true profile (convex in :math:`e^\varepsilon`), so :meth:`refine`
    returns it unchanged, and it is not GDP in the tail when ``floor > 0``.

    Build it with :func:`from_pld` (or :meth:`Profile.from_pld`).

    Example:
        >>> from symgdp import mechanisms
        >>> p = from_pld(to_pld(mechanisms.laplace(1.0), value_discretization_interval=1e-3))
        >>> exact = mechanisms.laplace(1.0)
        >>> all(p(x) >= exact(x) for x in (0.0, 0.3, 0.9))
        True
        >>> p.floor
        0.0
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    @property
    def pld(self) -> Any:
        """The dp_accounting ``PrivacyLossDistribution``."""
        return self.meta["pld"]

    @property
    def floor(self) -> float:
        """The mass at infinity: the profile is at least this everywhere."""
        return float(self.meta["floor"])

    @property
    def margin(self) -> float:
        """The largest added rounding margin, at eps = 0 (see :mod:`symgdp.pld`)."""
        return float(self.meta["margin"])

    def validate(self, *, timeout: float | None = None) -> PLDProfile:
        return self

    def refine(self, *, timeout: float | None = None, dps: int = 40) -> PLDProfile:
        return self

    def identify(self, *, timeout: float | None = None) -> Any:
        raise ProfileError("a PLD profile is numeric: it has no symbolic tail "
                           f"(its floor, the mass at infinity, is {self.floor:.3g})")

    def tail_limit(self, *, timeout: float | None = None) -> Any:
        return self.identify(timeout=timeout)

    def subsample(self, gamma: Any) -> Profile:
        raise ProfileError("subsample the mechanism before building its PLD")

    def to_pld(self, value_discretization_interval: float | None = None,
               **kw: Any) -> Any:
        return self.pld

    def log_delta(self, eps: Any) -> Any:
        scalar, x = eps_array(eps)
        curves = self.meta["curves"]
        d = curves[0].delta(x.ravel())
        for c in curves[1:]:
            d = np.maximum(d, c.delta(x.ravel()))
        with np.errstate(divide="ignore"):
            out = np.log(d) * (1.0 - _LOG_SLACK)  # log d <= 0: moves it up
        out = np.minimum(out, 0.0).reshape(x.shape)
        return float(out[0]) if scalar else out.reshape(np.shape(eps))

    def __call__(self, eps: Any) -> Any:
        y = np.exp(self.log_delta(eps))
        return float(y) if np.ndim(eps) == 0 else y

    def mp(self, eps: Any, *, dps: int = 40) -> mpmath.mpf:
        with mpmath.workdps(dps):
            return mpmath.exp(mpmath.mpf(self.log_delta(float(eps))))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))

    def eps_for_delta(self, delta: Any) -> Any:
        r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon) \le \delta`
        (``inf`` when ``delta`` is below the floor), by bisection to 1e-12 on this
        profile; rounded up, so :math:`(\varepsilon, \delta)`-DP holds.

        Example:
            >>> from symgdp import mechanisms
            >>> p = compose(mechanisms.laplace(0.2), times=50)
            >>> round(p.eps_for_delta(1e-3), 2)
            4.55
        """
        scalar = np.ndim(delta) == 0
        d = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        if np.any(~((d > 0) & (d <= 1))):
            raise DomainError(f"delta must lie in (0, 1], got {d[~((d > 0) & (d <= 1))][0]!r}")
        ld = np.log(d)
        hi_end = max(c.end for c in self.meta["curves"]) + 1.0
        out = np.empty(d.shape)
        for i, t in enumerate(ld):
            if self.log_delta(0.0) <= t:
                out[i] = 0.0
                continue
            if self.log_delta(hi_end) > t:
                out[i] = math.inf
                continue
            lo, hi = 0.0, hi_end
            while hi - lo > 1e-12 * max(1.0, hi):
                mid = 0.5 * (lo + hi)
                if self.log_delta(mid) <= t:
                    hi = mid
                else:
                    lo = mid
            out[i] = hi
        return float(out[0]) if scalar else out


def from_pld(pld: Any, *, name: str | None = None) -> PLDProfile:
    r"""The numeric profile of a pessimistic dp_accounting ``PrivacyLossDistribution``
    (see :class:`PLDProfile` and the module notes on the rounding margin).

    Example:
        >>> from dp_accounting.pld import privacy_loss_distribution as pld
        >>> p = from_pld(pld.from_gaussian_mechanism(1.0).self_compose(4))
        >>> from symgdp import delta_mu
        >>> p(1.0) >= delta_mu(1.0, 2.0)   # 4-fold 1-GDP is 2-GDP
        True
    """
    if not (hasattr(pld, "_pmf_remove") and hasattr(pld, "get_delta_for_epsilon")):
        raise ProfileError(f"not a dp_accounting PrivacyLossDistribution: {pld!r}")
    pmfs = [pld._pmf_remove]
    if not pld._symmetric:
        pmfs.append(pld._pmf_add)
    curves = tuple(_Curve.from_pmf(p) for p in pmfs)
    disc = float(pmfs[0]._discretization)
    return profile_from_curves(curves, name=name or "PLD", pld=pld, discretization=disc)


# -- certified composition in integer arithmetic -------------------------------------------
#: scale of the integer PMFs: probabilities are counted in units of 2^-SCALE_BITS
SCALE_BITS = 80
# entries of a float64 FFT convolution below this fraction of its largest are noise
_NOISE = 1e-14


class IntPMF:
    r"""A non-negative measure on the loss grid :math:`\{(\mathrm{lower} + i)\Delta\}`
    and :math:`+\infty`, held exactly as integers in units of :math:`2^{-b}`.

    ``poly`` is a ``flint.fmpz_poly`` whose coefficient :math:`i` is the mass at loss
    :math:`(\mathrm{lower} + i)\Delta` and ``inf`` the mass at :math:`+\infty`;
    ``approx`` is a float64 copy used only to choose where to truncate.  Built by
    :func:`int_pmf`; composed by :func:`int_compose` and :func:`int_self_compose`, which
    only ever round up and move mass to larger losses (see :mod:`symgdp.pld`, "Certified
    composition").
    """

    __slots__ = ("disc", "bits", "lower", "poly", "inf", "approx", "up")

    def __init__(self, disc: float, bits: int, lower: int, poly: Any, inf: int,
                 approx: np.ndarray, up: bool = True) -> None:
        self.disc, self.bits, self.lower = float(disc), int(bits), int(lower)
        self.poly, self.inf, self.approx = poly, int(inf), approx
        self.up = bool(up)  # True: entries are upper bounds (pessimistic); else lower

    @property
    def size(self) -> int:
        return int(self.approx.size)

    def total(self) -> int:
        """The finite mass, exactly (units of 2^-bits)."""
        return int(self.poly(1)) if self.size else 0

    def upper_probs(self) -> np.ndarray:
        """Float64 upper bounds on the masses (each rounded up by two ulps)."""
        out = self._floats()
        return np.nextafter(np.nextafter(out, np.inf), np.inf) * (out > 0)

    def lower_probs(self) -> np.ndarray:
        """Float64 lower bounds on the masses (each rounded down by two ulps)."""
        out = self._floats()
        return np.maximum(np.nextafter(np.nextafter(out, 0.0), 0.0), 0.0)

    def _floats(self) -> np.ndarray:
        c = [int(v) for v in self.poly.coeffs()]
        out = np.zeros(self.size)
        out[:len(c)] = np.asarray(c, dtype=np.float64)
        return np.ldexp(out, -self.bits)

    def lower_delta(self, eps: Any) -> np.ndarray:
        r"""A lower bound on :math:`\sum_{L_i > \varepsilon} p_i(1 - e^{\varepsilon -
        L_i})` (+ the mass at infinity) at each ``eps``, for an optimistic measure
        (``up`` false): masses and losses rounded down, the float64 sum of non-negative
        terms deflated by its worst-case relative rounding."""
        if self.up:
            raise DomainError("lower_delta needs an optimistic (lower-bound) measure")
        x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        p = self.lower_probs()
        losses = (self.lower + np.arange(self.size, dtype=np.float64)) * self.disc
        losses = np.nextafter(np.nextafter(losses, -np.inf), -np.inf)
        inf = max(math.ldexp(float(self.inf), -self.bits) * (1 - 4 * _U), 0.0)
        out = np.empty(x.shape)
        for i, e in enumerate(x):
            j = int(np.searchsorted(losses, e, side="right"))
            terms = p[j:] * -np.expm1(e - losses[j:])
            out[i] = (float(np.sum(terms)) * (1.0 - 4.0 * (terms.size + 4) * _U)
                      + inf) * (1.0 - 4 * _U)
        return np.maximum(out, 0.0)

    def upper_inf(self) -> float:
        if not self.inf:
            return 0.0
        v = math.ldexp(float(self.inf), -self.bits)  # float(int) rounds to nearest
        return float(np.nextafter(np.nextafter(v, np.inf), np.inf))

    def curve(self) -> _Curve:
        """The profile of this measure as an upper-bound curve (no rounding margin)."""
        return _Curve(self.lower, self.disc, self.upper_probs(), self.upper_inf())


def int_pmf(disc: float, lower: int, masses: Any, inf: int, bits: int = SCALE_BITS,
            up: bool = True) -> IntPMF:
    """An :class:`IntPMF` from non-negative integer masses (units of 2^-bits); ``up``
    says whether they are upper bounds (pessimistic) or lower bounds (optimistic)."""
    import flint

    ints = [int(m) for m in masses]
    if any(m < 0 for m in ints) or int(inf) < 0:
        raise DomainError("PMF masses must be non-negative")
    approx = np.ldexp(np.asarray(ints, dtype=np.float64), -int(bits))
    return IntPMF(disc, bits, lower, flint.fmpz_poly(ints), int(inf), approx, up)


def _shift(v: Any, bits: int, up: bool) -> Any:
    """ceil (``up``) or floor of v / 2^bits for an fmpz_poly or an integer with
    non-negative coefficients.  Only non-negative numerators are ever divided (the ceil
    adds 2^bits - 1 first), so the result does not depend on how the library rounds a
    negative quotient (python-flint's ``fmpz_poly // fmpz`` truncates some toward zero)."""
    import flint

    d = 1 << bits
    if isinstance(v, int):
        return (v + d - 1) >> bits if up else v >> bits
    if up:
        n = v.length()
        if n == 0:
            return v
        v = v + flint.fmpz_poly([d - 1] * n)
    return v // flint.fmpz(d)


def _truncate(poly: Any, approx: np.ndarray, lower: int, inf: int, tail: float,
              bits: int, up: bool = True) -> tuple[Any, np.ndarray, int, int]:
    """Cut the tails: on the left where the float approximation falls below ``tail``
    times its largest entry (that exact mass moves to the first kept loss), on the right
    where the exact remaining mass falls below ``tail`` (it moves to +infinity).  Both
    are moves to larger losses.  Where to cut only affects tightness and speed; the
    masses moved are exact.  ``poly`` is at scale 2^-2bits here.  For an optimistic
    measure (``up`` false) the left tail is dropped and the right tail moves to the last
    kept loss instead (moves to smaller losses, or removal)."""
    n = approx.size
    if tail <= 0 or n < 3:
        return poly, approx, lower, inf
    top = float(approx.max())
    vis = np.flatnonzero(approx > _NOISE * top)
    if vis.size == 0:
        return poly, approx, lower, inf
    cl = min(int(vis[0]), n - 2)
    if cl > 0:
        low = int(poly.truncate(cl)(1)) if up else 0
        poly = poly.right_shift(cl) + low  # + adds to the first kept coefficient
        approx = approx[cl:].copy()
        lower += cl
    # right: the cut is guessed from the (tilted, see _approx_conv) approximation and
    # checked on exact tail sums; galloping and bisection if the guess fails
    size = approx.size
    limit = tail * float(2 ** (2 * bits))

    def beyond(m: int) -> int:
        return int(poly.right_shift(m)(1)) if m < size else 0

    last = int(vis[-1]) - cl
    from_right = np.cumsum(approx[::-1])[::-1]
    over = np.flatnonzero(from_right > 0.5 * tail)
    good = max(int(over[-1]) + 1 if over.size else 0, last + 1)
    if good < size and beyond(good) > limit:
        step = 1
        bad = good
        while bad + step < size and beyond(bad + step) > limit:
            bad += step
            step *= 2
        good = min(bad + step, size)
        while good - bad > 1:
            mid = (good + bad) // 2
            if beyond(mid) <= limit:
                good = mid
            else:
                bad = mid
    if good < size:
        cut = beyond(good)
        poly = poly.truncate(good)
        approx = approx[:good]
        if up:
            inf += cut
        else:  # onto the last kept loss
            import flint

            poly = poly + flint.fmpz_poly([cut]).left_shift(good - 1)
    return poly, approx, lower, inf


def _approx_conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float64 approximation of a * b that resolves the right tail: the FFT convolution
    of exponentially tilted sequences (a_i e^{t i}, tilting commutes with convolution)
    at several tilts t, each entry untilted from the tilt that resolves it best (its
    value largest against that convolution's largest, i.e. its rounding noise)."""
    from scipy.signal import fftconvolve

    n = a.size + b.size - 1
    k = np.arange(n, dtype=np.float64)
    best = np.zeros(n)
    quality = np.full(n, -np.inf)
    for frac in (0.0, 1 / 32, 1 / 8, 1 / 2):
        t = 300.0 * frac / max(n, 1)
        c = np.maximum(fftconvolve(a * np.exp(t * k[:a.size]), b * np.exp(t * k[:b.size])),
                       0.0)
        top = float(c.max(initial=0.0))
        if top <= 0:
            continue
        with np.errstate(divide="ignore"):
            qual = np.log(c / top)
        better = qual > quality
        quality[better] = qual[better]
        best[better] = c[better] * np.exp(-t * k[better])
    best[quality < math.log(_NOISE)] = 0.0
    return best


def int_compose(a: IntPMF, b: IntPMF, tail: float = 1e-19) -> IntPMF:
    r"""The convolution of two :class:`IntPMF`, exact, then rounded up to the common scale,
    with tails of mass at most about ``tail`` each moved to larger losses.

    Example:
        >>> p = int_pmf(0.5, 0, [1 << 79, 1 << 79], 0)          # half at 0, half at 0.5
        >>> [int(c) >> 78 for c in int_compose(p, p, tail=0).poly.coeffs()]
        [1, 2, 1]
    """
    if a.disc != b.disc or a.bits != b.bits or a.up != b.up:
        raise DomainError("these PMFs live on different grids (discretisation or scale) "
                          "or bound from different sides")
    bits = a.bits
    poly = a.poly * b.poly
    ta, tb = a.total(), b.total()
    inf = a.inf * (tb + b.inf) + b.inf * ta
    approx = _approx_conv(a.approx, b.approx)
    lower = a.lower + b.lower
    poly, approx, lower, inf = _truncate(poly, approx, lower, inf, tail, bits, a.up)
    return IntPMF(a.disc, bits, lower, _shift(poly, bits, a.up),
                  int(_shift(inf, bits, a.up)), approx, a.up)


def int_self_compose(p: IntPMF, times: int, tail: float = 1e-19) -> IntPMF:
    """The ``times``-fold composition by repeated squaring (see :func:`int_compose`)."""
    k = _check_times(times)
    result: IntPMF | None = None
    base = p
    while True:
        if k & 1:
            result = base if result is None else int_compose(result, base, tail)
        k >>= 1
        if not k:
            break
        base = int_compose(base, base, tail)
    assert result is not None
    return result


def profile_from_curves(curves: Any, *, name: str, pld: Any = None, **meta: Any
                        ) -> PLDProfile:
    """A :class:`PLDProfile` whose value is the maximum of the given curves."""
    curves = tuple(curves)
    floor = max(c.inf_mass for c in curves)
    margin = max(c.margin * c.size for c in curves)
    return PLDProfile(sympy.Function("delta_PLD")(_EPS), name=name, pld=pld, curves=curves,
                      floor=floor, margin=margin, **meta)


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


def _head_end(profile: Any, failure_prob: float) -> float:
    """The eps where the upper profile falls to failure_prob (bisection, rounded up)."""
    e = first_eps_below(profile, math.log(failure_prob))
    if e == 0.0:
        return 1e-3
    if math.isinf(e):
        raise DomainError(f"the profile does not reach failure_prob={failure_prob:g}")
    return e


def head_measure(profile: Any, failure_prob: float, tol: float = 1e-4) -> tuple[Any, float]:
    r"""Measure a numeric profile on :math:`[0, \varepsilon_h]`, with
    :math:`\varepsilon_h` where the profile falls to ``failure_prob``.

    Returns the :class:`~symgdp.measure.Measurement` and the failure probability, the
    profile's value at :math:`\varepsilon_h` (it bounds the profile at every larger
    :math:`\varepsilon`).  :class:`~symgdp.errors.DomainError` when the profile never
    falls that low (its floor is above ``failure_prob``).

    Example:
        >>> from symgdp import mechanisms
        >>> m, fp = head_measure(compose(mechanisms.gaussian(0.5), times=4), 1e-9)
        >>> m.upper >= 1.0, fp <= 1e-9
        (True, True)
    """
    from .measure import measure

    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    floor = getattr(profile, "floor", 0.0)
    if floor >= fp:
        raise DomainError(f"the profile's floor (mass at infinity) {floor:.3g} is above "
                          f"failure_prob={fp:g}")
    eps_h = _head_end(profile, fp)
    m = measure(profile, eps_h=eps_h, tol=tol, refine=False, identify=False)
    return m, min(math.exp(float(profile.log_delta(eps_h))), fp)


# -- profile -> PLD ------------------------------------------------------------------------
def _mechanism_of(profile: Profile) -> tuple[str, float, float] | None:
    """(kind, parameter, sampling rate) of a recognised mechanism profile, else None.

    The metadata only says what the profile claims to be; the claim is checked by
    rebuilding the mechanism and comparing the two profiles on a grid.
    """
    from . import mechanisms

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
    gamma = profile.meta.get("subsampled")
    g = 1.0
    try:
        rebuilt = getattr(mechanisms, kind)(value)
        if gamma is None and rebuilt == profile:
            return kind, value, g  # the same expression and values: nothing to check
        xs = np.linspace(0.0, 3.0 * max(value, 1.0), 13)
        a = profile.log_delta(xs)
        if gamma is not None:
            # Poisson subsampling of the profile (Profile.subsample), numerically
            g = float(gamma)
            if not 0 < g <= 1:
                return None
            inner = np.log1p(np.expm1(xs) / g)
            b = math.log(g) + np.minimum(rebuilt.log_delta(inner), 0.0)
        else:
            b = rebuilt.log_delta(xs)
    except (ProfileError, DomainError, TypeError, ValueError):
        return None
    fin = np.isfinite(a) | np.isfinite(b)
    if not (np.array_equal(np.isfinite(a), np.isfinite(b))
            and np.allclose(a[fin], b[fin], rtol=1e-9, atol=1e-12)):
        return None
    return kind, value, g


def _connect_the_dots(profile: Profile, disc: float, tail_delta: float,
                      max_eps: float, grid_points: int) -> Any:
    P = _pld_module()
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
            :class:`PLDProfile` returns its own PLD).
        value_discretization_interval: spacing of the loss grid (smaller is tighter and
            slower).
        tail_delta: connect-the-dots grids end where the profile falls below this (the
            rest becomes mass at infinity).
        max_eps: connect-the-dots grids end at this :math:`\varepsilon` at the latest.
        grid_points: at most this many connect-the-dots points (on multiples of the
            discretisation interval).

    Known mechanisms use dp_accounting's exact constructors; everything else connect the
    dots (see :mod:`symgdp.pld` for why the result dominates the profile).

    Example:
        >>> from symgdp import mechanisms
        >>> pld = to_pld(mechanisms.gaussian(1.0))
        >>> bool(pld.get_delta_for_epsilon(1.0) >= mechanisms.gaussian(1.0)(1.0))
        True
    """
    if isinstance(profile, PLDProfile):
        return profile.pld
    if not isinstance(profile, Profile):
        raise ProfileError(f"expected a Profile, got {type(profile).__name__}")
    disc = _check_discretization(value_discretization_interval)
    if not (0 < tail_delta < 1):
        raise DomainError(f"tail_delta must lie in (0, 1), got {tail_delta!r}")
    if not (math.isfinite(max_eps) and max_eps > 0):
        raise DomainError(f"max_eps must be a finite number > 0, got {max_eps!r}")
    if int(grid_points) < 3 or int(grid_points) > _MAX_GRID:
        raise DomainError(f"grid_points must lie in [3, {_MAX_GRID}], got {grid_points!r}")
    P = _pld_module()
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


# -- composition ---------------------------------------------------------------------------
def _check_times(times: Any) -> int:
    if isinstance(times, bool) or not isinstance(times, (int, np.integer)):
        if not (isinstance(times, (float, np.floating)) and float(times).is_integer()):
            raise DomainError(f"times must be a positive integer, got {times!r}")
    if int(times) < 1:
        raise DomainError(f"times must be a positive integer, got {times!r}")
    return int(times)


def compose(*profiles: Any, times: int | None = None,
            value_discretization_interval: float = DEFAULT_DISCRETIZATION,
            tail_mass_truncation: float = 1e-15, **kw: Any) -> PLDProfile:
    r"""Pessimistic composition of mechanisms through their privacy loss distributions.

    ``compose(a, b, c)`` is the adaptive composition of the three; ``compose(a,
    times=k)`` the :math:`k`-fold composition of ``a``; ``compose(a, b, times=k)``
    repeats the pair :math:`k` times.  Arguments may be profiles (known mechanisms use
    their exact PLDs, others connect the dots, see :func:`to_pld`), :class:`PLDProfile`
    objects or dp_accounting PLDs with the same discretisation.  Extra keywords go to
    :func:`to_pld`.  ``tail_mass_truncation`` is dp_accounting's: at most this much
    probability is cut from the tails of each convolution and (pessimistically) moved to
    the mass at infinity; 0 keeps the whole support (slower for many steps, but a
    mechanism with bounded loss then keeps a profile that is exactly 0 beyond it).

    Returns:
        A :class:`PLDProfile`: an upper bound on the composition's profile, with the
        mass at infinity as its floor.

    Example:
        >>> from symgdp import mechanisms, delta_mu
        >>> p = compose(mechanisms.gaussian(0.5), times=4)   # exactly 1-GDP
        >>> delta_mu(1.0, 1.0) <= p(1.0) <= delta_mu(1.0, 1.0) + 1e-4
        True
    """
    if not profiles:
        raise DomainError("compose() needs at least one profile or mechanism")
    k = 1 if times is None else _check_times(times)
    disc = _check_discretization(value_discretization_interval)
    plds = []
    for p in profiles:
        if hasattr(p, "_pmf_remove") and hasattr(p, "self_compose"):
            plds.append(p)
        else:
            plds.append(to_pld(p, disc, **kw))
    tm = float(tail_mass_truncation)
    if not (0 <= tm < 1):
        raise DomainError(f"tail_mass_truncation must lie in [0, 1), got {tail_mass_truncation!r}")
    total = plds[0]
    try:
        for other in plds[1:]:
            total = total.compose(other, tail_mass_truncation=tm)
        if k > 1:
            total = total.self_compose(k, tail_mass_truncation=tm)
    except ValueError as exc:
        raise DomainError(f"these PLDs cannot be composed: {exc}") from exc
    names = [getattr(p, "name", None) or "PLD" for p in profiles]
    label = " ∘ ".join(names) if len(names) > 1 else names[0]
    return from_pld(total, name=f"({label})^{k}" if k > 1 else label)
