r"""Trade-off curves (f-DP) of standard mechanisms and their GDP parameter.

Notation (Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2021, §2): for a test
between the outputs on neighbours :math:`S, S'` with type I error :math:`\alpha`, the
trade-off curve :math:`T(\alpha)` is the smallest achievable type II error.  A mechanism is
:math:`\mu`-GDP iff :math:`T \ge G_\mu`, :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`,
and :math:`(\varepsilon, \delta)`-DP iff :math:`T \ge f_{\varepsilon,\delta}` with

.. math:: f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1 - \delta - e^{\varepsilon}\alpha,\
          e^{-\varepsilon}(1 - \delta - \alpha)\}.

Curves here (a :class:`TradeoffCurve` is a vectorised callable):

* :func:`randomized_response` — :math:`f_{\varepsilon,0}` exactly (Dong et al., Ex. 2.5);
* :func:`eps_delta` — :math:`f_{\varepsilon,\delta}`;
* :func:`laplace` — exact, piecewise (Dong et al. 2021, Appendix A / the Dong blog):
  :math:`1 - e^{\varepsilon}\alpha` for :math:`\alpha < e^{-\varepsilon}/2`,
  :math:`e^{-\varepsilon}/(4\alpha)` on :math:`[e^{-\varepsilon}/2, 1/2]`,
  :math:`e^{-\varepsilon}(1 - \alpha)` beyond;
* :func:`gaussian` — :math:`G_\mu`;
* :func:`randomized_response_composition` — the :math:`k`-fold composition of
  :math:`f_{\varepsilon_0,0}`, exact: the Neyman–Pearson test between
  :math:`\mathrm{Bin}(k, q)` and :math:`\mathrm{Bin}(k, p)`,
  :math:`p = e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`, :math:`q = 1 - p`, a piecewise
  linear curve through the points :math:`(P[J \ge t], Q[J < t])`.

Two bridges to profiles:

* :func:`profile_delta` — :math:`\delta(\varepsilon) = \sup_\alpha\,(1 - T(\alpha) -
  e^{\varepsilon}\alpha)` (Dong et al. 2021, Prop. 2.12: the profile is the convex
  conjugate of the curve);
* :func:`gdp_mu` — the smallest :math:`\mu` with :math:`T \ge G_\mu`, i.e.
  :math:`\sup_{\alpha}\,[\Phi^{-1}(1 - T(\alpha)) - \Phi^{-1}(\alpha)]`.

Each curve also carries its complement :math:`1 - T(\alpha)` (the power of the test)
computed directly, because :math:`\Phi^{-1}(1 - T)` near :math:`\alpha = 0` would
otherwise be lost to rounding in :math:`1 - T`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from .errors import DomainError
from .gaussian import tradeoff_gdp

__all__ = [
    "TradeoffCurve",
    "randomized_response",
    "eps_delta",
    "laplace",
    "gaussian",
    "randomized_response_composition",
    "profile_delta",
    "gdp_mu",
    "MuBracket",
    "TradeoffBand",
    "band",
]

_Fn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class TradeoffCurve:
    r"""A trade-off curve :math:`T: [0, 1] \to [0, 1]` (convex, non-increasing,
    :math:`T(\alpha) \le 1 - \alpha`).

    Attributes:
        name: display name.
        fn: vectorised :math:`T(\alpha)`.
        power: vectorised :math:`1 - T(\alpha)`, computed without cancellation.
        kinks: the :math:`\alpha` where :math:`T` is not differentiable (vertices of a
            piecewise curve), used by :func:`profile_delta` and :func:`gdp_mu`.
        params: the parameters the curve was built from.
        piecewise_linear: True when the curve is linear between its kinks (then the
            suprema of :func:`profile_delta` sit exactly at kinks).
        family: the closed-form family of a curve built here (``"gaussian"``,
            ``"laplace"``, ``"eps_delta"``; empty otherwise), used by :func:`gdp_mu`.
    """

    name: str
    fn: _Fn
    power: _Fn
    kinks: tuple[float, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    piecewise_linear: bool = False
    family: str = ""

    def __post_init__(self) -> None:
        if any(not (0.0 <= a <= 1.0) for a in self.kinks):
            raise DomainError(f"kinks of a trade-off curve must lie in [0, 1]: {self.kinks}")

    def __call__(self, alpha: Any) -> Any:
        r""":math:`T(\alpha)` (scalars in, scalars out)."""
        scalar, a = _alpha(alpha)
        out = np.clip(np.asarray(self.fn(a), dtype=np.float64), 0.0, 1.0)
        return float(out) if scalar else out

    def complement(self, alpha: Any) -> Any:
        r""":math:`1 - T(\alpha)`, accurate where :math:`T` is close to 1."""
        scalar, a = _alpha(alpha)
        out = np.clip(np.asarray(self.power(a), dtype=np.float64), 0.0, 1.0)
        return float(out) if scalar else out


def _alpha(alpha: Any) -> tuple[bool, np.ndarray]:
    scalar = np.ndim(alpha) == 0
    a = np.asarray(alpha, dtype=np.float64)
    bad = ~((a >= 0) & (a <= 1))
    if np.any(bad):
        raise DomainError(f"alpha must lie in [0, 1], got {a[bad].flat[0]!r}")
    return scalar, a


def _check(name: str, v: Any, *, positive: bool = False) -> float:
    x = float(v)
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise DomainError(f"{name} must be a finite number {'> 0' if positive else '>= 0'}, "
                          f"got {v!r}")
    return x


# -- curves -------------------------------------------------------------------------------
def eps_delta(eps: float, delta: float = 0.0) -> TradeoffCurve:
    r"""The :math:`(\varepsilon, \delta)`-DP curve :math:`f_{\varepsilon,\delta}`.

    Example:
        >>> f = eps_delta(math.log(3), 0.0)
        >>> f(0.25), f(0.5)
        (0.25, 0.16666666666666666)
    """
    e = _check("eps", eps)
    d = _check("delta", delta)
    if d >= 1:
        raise DomainError(f"delta must be < 1, got {delta!r}")
    ee, em = math.exp(e), math.exp(-e)

    def fn(a: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, np.maximum(1.0 - d - ee * a, em * (1.0 - d - a)))

    def power(a: np.ndarray) -> np.ndarray:
        return np.minimum(1.0, np.minimum(d + ee * a, 1.0 - em * (1.0 - d - a)))

    kinks = ((1.0 - d) / (1.0 + ee), 1.0 - d)
    return TradeoffCurve(f"f_({e:g},{d:g})", fn, power, kinks, {"eps": e, "delta": d},
                         piecewise_linear=True, family="eps_delta")


def randomized_response(eps0: float) -> TradeoffCurve:
    r"""Exact trade-off curve of binary randomized response, :math:`f_{\varepsilon_0, 0}`.

    Example:
        >>> randomized_response(0.0)(0.3)
        0.7
    """
    c = eps_delta(eps0, 0.0)
    return TradeoffCurve(f"randomized response ({c.params['eps']:g})", c.fn, c.power,
                         c.kinks, {"eps0": c.params["eps"]}, piecewise_linear=True,
                         family="eps_delta")


def laplace(eps0: float) -> TradeoffCurve:
    r"""Exact trade-off curve of the Laplace mechanism with :math:`\varepsilon_0 = \Delta/b`.

    Example:
        >>> round(laplace(1.0)(0.5), 12)  # e^{-1}/2
        0.183939720586
    """
    e = _check("eps0", eps0)
    em = math.exp(-e)
    a1 = em / 2.0

    def fn(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            mid = em / (4.0 * a)
        return np.where(a < a1, 1.0 - a / em, np.where(a <= 0.5, mid, em * (1.0 - a)))

    def power(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            mid = 1.0 - em / (4.0 * a)
        return np.where(a < a1, a / em, np.where(a <= 0.5, mid, 1.0 - em * (1.0 - a)))

    return TradeoffCurve(f"Laplace ({e:g})", fn, power, (a1, 0.5), {"eps0": e},
                         family="laplace")


def gaussian(mu: float) -> TradeoffCurve:
    r"""The GDP curve :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`.

    Example:
        >>> round(gaussian(1.0)(0.05), 12)
        0.740488977159
    """
    m = _check("mu", mu)

    def power(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return special.ndtr(special.ndtri(a) + m)

    return TradeoffCurve(f"G_{m:g}", lambda a: tradeoff_gdp(a, m), power, (), {"mu": m},
                         family="gaussian")


def randomized_response_composition(eps0: float, k: int) -> TradeoffCurve:
    r"""Exact trade-off curve of :math:`k`-fold randomized response (the :math:`k`-fold
    composition :math:`f_{\varepsilon_0,0}^{\otimes k}`, Dong et al. 2021, §3).

    The count :math:`J` of reported ones is :math:`\mathrm{Bin}(k, q)` on one neighbour and
    :math:`\mathrm{Bin}(k, p)` on the other; the likelihood ratio increases with :math:`J`,
    so the optimal (randomised) tests reject for large :math:`J` and the curve is the
    piecewise-linear interpolation of :math:`(P[J \ge t], Q[J < t])`, :math:`t = 0..k+1`.

    Example:
        >>> c = randomized_response_composition(math.log(3), 1)
        >>> round(c(0.25), 12) == round(randomized_response(math.log(3))(0.25), 12)
        True
    """
    e = _check("eps0", eps0)
    if isinstance(k, bool) or int(k) != k or int(k) < 1:
        raise DomainError(f"k must be a positive integer, got {k!r}")
    kk = int(k)
    from scipy import stats  # ~0.5 s to import: only when this curve is asked for

    q = 1.0 / (1.0 + math.exp(e))
    p = 1.0 - q
    t = np.arange(kk + 1, -1, -1)  # thresholds, giving increasing alpha
    alpha = stats.binom.sf(t - 1, kk, q)
    beta = stats.binom.cdf(t - 1, kk, p)
    pw = stats.binom.sf(t - 1, kk, p)  # 1 - beta without cancellation
    alpha[0], beta[0], pw[0] = 0.0, 1.0, 0.0
    alpha[-1], beta[-1], pw[-1] = 1.0, 0.0, 1.0

    # Interpolate T from each segment's right end and 1 - T from its left end: both are
    # then sums of non-negative terms, so T stays accurate (and positive) as alpha -> 1
    # and 1 - T as alpha -> 0, where np.interp would cancel to 0.
    def fn(a: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(alpha, a, side="left"), 1, alpha.size - 1)
        width = alpha[j] - alpha[j - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(width > 0, (beta[j - 1] - beta[j]) / width, 0.0)
        return beta[j] + (alpha[j] - a) * slope

    def power(a: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(alpha, a, side="right"), 1, alpha.size - 1)
        width = alpha[j] - alpha[j - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(width > 0, (pw[j] - pw[j - 1]) / width, 0.0)
        return pw[j - 1] + (a - alpha[j - 1]) * slope

    return TradeoffCurve(f"{kk}-fold randomized response ({e:g})", fn, power,
                         tuple(float(x) for x in alpha), {"eps0": e, "k": kk},
                         piecewise_linear=True)


# -- bridges to profiles and GDP ----------------------------------------------------------
def _candidates(curve: TradeoffCurve, n: int) -> np.ndarray:
    # probit-spaced grid reaches alpha ~ 1e-300 and 1 - 1e-16 alike
    z = np.linspace(-37.0, 8.2, n)
    grid = special.ndtr(z)
    return np.unique(np.concatenate([grid, np.asarray(curve.kinks, dtype=np.float64),
                                     [0.0, 1.0]]))


def _refine_max(f: Callable[[float], float], a: np.ndarray, vals: np.ndarray
                ) -> float:
    """Local bounded maximisation of f around the best candidate; never below it."""
    i = int(np.argmax(vals))
    best = float(vals[i])
    lo, hi = a[max(i - 1, 0)], a[min(i + 1, a.size - 1)]
    if hi > lo:
        from scipy import optimize  # heavy: imported with its only user

        res = optimize.minimize_scalar(lambda x: -f(x), bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-14 * max(1.0, abs(lo))})
        if np.isfinite(res.fun):
            best = max(best, -float(res.fun))
    return best


def profile_delta(curve: TradeoffCurve, eps: Any, *, n: int = 2001) -> Any:
    r"""The privacy profile of a trade-off curve,
    :math:`\delta(\varepsilon) = \sup_\alpha\,(1 - T(\alpha) - e^{\varepsilon}\alpha)`
    (Dong, Roth & Su 2021, Prop. 2.12).

    The objective is concave in :math:`\alpha` (:math:`T` is convex); for piecewise-linear
    curves the supremum is taken over the kinks exactly, otherwise over kinks and a
    probit-spaced grid of ``n`` points followed by a bounded local maximisation.

    Example:
        >>> round(profile_delta(randomized_response(math.log(3)), 0.0), 12)  # (3 - 1)/4
        0.5
    """
    scalar = np.ndim(eps) == 0
    x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    if np.any(~(x >= 0)):
        raise DomainError(f"eps must be >= 0, got {x[~(x >= 0)][0]!r}")
    if curve.piecewise_linear:
        a = np.unique(np.concatenate([np.asarray(curve.kinks, dtype=np.float64), [0.0, 1.0]]))
    else:
        a = _candidates(curve, n)
    pw = curve.complement(a)
    out = np.empty(x.shape)
    for j, e in enumerate(x.ravel()):
        ee = math.exp(e)
        vals = pw - ee * a
        if curve.piecewise_linear:
            best = float(np.max(vals))
        else:
            best = _refine_max(lambda al, ee=ee: float(curve.complement(al)) - ee * al, a, vals)
        out.flat[j] = min(max(best, 0.0), 1.0)
    return float(out[0]) if scalar else out


class MuBracket(float):
    r"""The GDP parameter of a trade-off curve as a bracket ``lower <= mu <= upper``.

    It is also a float (the best estimate, the value :func:`gdp_mu` returned before it
    returned brackets), so arithmetic and comparisons on it keep working; a guarantee
    reads ``.lower`` and ``.upper``.  ``certified`` is False when only the lower end is
    proved (``upper = inf``).
    """

    __slots__ = ("lower", "upper", "certified", "method")

    def __new__(cls, value: float, lower: float, upper: float, method: str) -> MuBracket:
        out = super().__new__(cls, value)
        object.__setattr__(out, "lower", lower)
        object.__setattr__(out, "upper", upper)
        object.__setattr__(out, "certified", math.isfinite(upper) or lower == math.inf)
        object.__setattr__(out, "method", method)
        return out

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"MuBracket is immutable (cannot set {key!r})")

    def __repr__(self) -> str:
        return f"MuBracket({float(self)!r}, lower={self.lower!r}, upper={self.upper!r})"

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower


def _probit_gap_ball(power: float, al: float) -> Any:
    r"""Ball of :math:`\Phi^{-1}(p) - \Phi^{-1}(\alpha)` with
    :math:`\Phi^{-1}(x) = -\sqrt2\,\mathrm{erfc}^{-1}(2x)`."""
    from flint import arb

    return arb(2).sqrt() * ((2 * arb(al)).erfcinv() - (2 * arb(power)).erfcinv())


def _closed_mu(curve: TradeoffCurve) -> tuple[float, float, str] | None:
    from flint import arb, ctx

    fam, pr = curve.family, curve.params
    with ctx.workprec(_PREC):
        if fam == "gaussian":
            m = float(pr["mu"])
            return m, m, "closed form (G_mu)"
        if fam == "eps_delta":
            if float(pr.get("delta", 0.0)) > 0:
                return math.inf, math.inf, "closed form (T(0) < 1: not GDP)"
            # -2 Phi^{-1}(1/(1 + e^eps)) (Dong, Roth & Su 2021, Cor. 2.13 with Prop. 2.12)
            e = pr["eps"] if "eps" in pr else pr["eps0"]
            b = 2 * arb(2).sqrt() * (2 / (1 + arb(e).exp())).erfcinv()
            return max(_fdown(b), 0.0), max(_fup(b), 0.0), "closed form (pure DP)"
        if fam == "laplace":
            # -2 Phi^{-1}(e^{-eps0/2}/2): the curve touches G_mu at alpha = 1/2
            b = 2 * arb(2).sqrt() * (-arb(pr["eps0"]) / 2).exp().erfcinv()
            return max(_fdown(b), 0.0), max(_fup(b), 0.0), "closed form (Laplace)"
    return None


def _kinks_mu(curve: TradeoffCurve) -> tuple[float, float]:
    r"""Exact for a piecewise-linear curve: :math:`G_\mu` is convex, so it lies below a
    linear piece of :math:`T` as soon as it lies below it at both ends; the smallest
    :math:`\mu` is the largest :math:`\Phi^{-1}(1 - T(a)) - \Phi^{-1}(a)` over the kinks
    :math:`0 < a < 1`, evaluated here in balls from the curve's stored values."""
    from flint import arb, ctx

    a = np.unique(np.asarray(curve.kinks, dtype=np.float64))
    a = a[(a > 0) & (a < 1)]
    lo, up = 0.0, 0.0
    t, pw = curve(a), curve.complement(a)
    with ctx.workprec(_PREC):
        for al, ti, pi in zip(a, np.atleast_1d(t), np.atleast_1d(pw), strict=True):
            if ti <= 0.0:
                return math.inf, math.inf
            if pi <= 0.0:
                continue  # T = 1 there: no constraint
            # Phi^{-1}(1 - T) from the small one of T and 1 - T, as gdp_mu always did:
            # Phi^{-1}(1 - T) = sqrt2 erfcinv(2T) and Phi^{-1}(a) = -sqrt2 erfcinv(2a)
            if pi < 0.5:
                b = _probit_gap_ball(float(pi), float(al))
            else:
                b = arb(2).sqrt() * ((2 * arb(float(ti))).erfcinv()
                                     + (2 * arb(float(al))).erfcinv())
            lo, up = max(lo, _fdown(b)), max(up, _fup(b))
    return lo, up


def gdp_mu(curve: TradeoffCurve, *, n: int = 4001) -> MuBracket:
    r"""The smallest :math:`\mu` with :math:`T \ge G_\mu`,
    :math:`\sup_{0<\alpha<1}\,[\Phi^{-1}(1 - T(\alpha)) - \Phi^{-1}(\alpha)]`, as a
    :class:`MuBracket` (a float with ``.lower`` and ``.upper``).

    ``inf`` when :math:`T(0) < 1` or :math:`T` reaches 0 before :math:`\alpha = 1` (such a
    curve, e.g. :math:`f_{\varepsilon,\delta}` with :math:`\delta > 0`, is not GDP).

    The bracket is proved (Arb balls, rounded outward):

    * for :func:`gaussian`, :func:`eps_delta`/:func:`randomized_response` and
      :func:`laplace`, from the closed forms :math:`\mu`,
      :math:`-2\Phi^{-1}(1/(1 + e^{\varepsilon}))` and
      :math:`-2\Phi^{-1}(e^{-\varepsilon_0/2}/2)`;
    * for a piecewise-linear curve (:func:`randomized_response_composition`), exactly:
      :math:`G_\mu` is convex, so it is below a linear piece of :math:`T` once it is below
      both ends, and the supremum is the largest value at the kinks (evaluated from the
      curve's stored float64 values, which are then taken as the curve).

    For any other curve only the lower end is proved (the best value on a probit-spaced
    grid of ``n`` points, refined locally, rounded down); ``upper`` is ``inf``: values of
    a curve alone cannot bound its behaviour as :math:`\alpha \to 0`, which decides GDP.
    The float value is the best estimate (the midpoint of a proved bracket).

    Example:
        >>> m = gdp_mu(randomized_response(0.2))  # -2 Phi^{-1}(1/(1 + e^0.2))
        >>> round(m, 12), m.width < 1e-15
        (0.250483905069, True)
    """
    if curve.complement(0.0) > 0.0:
        return MuBracket(math.inf, math.inf, math.inf, "T(0) < 1: not GDP")
    closed = _closed_mu(curve)
    if closed is not None:
        lo, up, method = closed
        return MuBracket(up if up == lo else (lo + up) / 2, lo, up, method)
    if curve.piecewise_linear and curve.kinks:
        lo, up = _kinks_mu(curve)
        mid = up if up == lo else (lo + up) / 2
        return MuBracket(mid, lo, up, "kinks of a piecewise-linear curve")
    est = _grid_mu(curve, n)
    if math.isinf(est):
        return MuBracket(est, est, est, "T reaches 0 before alpha = 1: not GDP")
    lo = max(float(_dn(est)) - 1e-12 * (1.0 + est), 0.0)
    return MuBracket(est, lo, math.inf, "grid (lower end only)")


def _grid_mu(curve: TradeoffCurve, n: int) -> float:
    """The former gdp_mu: the best value over a probit-spaced grid, refined locally."""
    a = _candidates(curve, n)
    a = a[(a > 0) & (a < 1)]

    def h_vec(al: np.ndarray) -> np.ndarray:
        # Phi^{-1}(1 - T) from whichever of T and 1 - T is the small one (no rounding of
        # 1 - T to 1 near alpha = 1, nor of T to 1 near alpha = 0)
        t, pw = curve(al), curve.complement(al)
        with np.errstate(divide="ignore", invalid="ignore"):
            first = np.where(pw < 0.5, special.ndtri(pw), -special.ndtri(t))
            return first - special.ndtri(al)

    vals = h_vec(a)
    if np.any(np.isposinf(vals)):
        return math.inf  # T reaches 0 before alpha = 1: not GDP
    vals = np.where(np.isnan(vals), -np.inf, vals)

    def h(al: float) -> float:
        if not 0.0 < al < 1.0:
            return -math.inf
        return float(h_vec(np.asarray(al)))

    return max(_refine_max(h, a, vals), 0.0)


# -- certified bands ----------------------------------------------------------------------
# Everything below is certified: values come from Arb balls (python-flint) or from a
# profile's own upper/lower bounds, and every float64 step is rounded outward by an explicit
# relative margin (_DN/_UP: 1e-15 relative, about 9 units in the last place, more than the
# few roundings of each step) plus the smallest subnormal.

_REL = 1e-15
_TINY = 5e-324
_PREC = 96  # working precision (bits) of the ball evaluations


def _dn(v: Any) -> Any:
    return v - np.abs(v) * _REL - _TINY


def _up(v: Any) -> Any:
    return v + np.abs(v) * _REL + _TINY


def _fdown(b: Any) -> float:
    """The largest float64 <= every point of the ball ``b`` (``-inf`` if unbounded)."""
    from flint import arb

    if not b.is_finite():
        return -math.inf
    x = b.lower()
    f = float(x)
    if math.isnan(f):
        return -math.inf
    if arb(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def _fup(b: Any) -> float:
    """The smallest float64 >= every point of the ball ``b`` (``inf`` if unbounded)."""
    from flint import arb

    if not b.is_finite():
        return math.inf
    x = b.upper()
    f = float(x)
    if math.isnan(f):
        return math.inf
    if arb(f) < x:
        f = math.nextafter(f, math.inf)
    return f


@dataclass(frozen=True, slots=True)
class TradeoffBand:
    r"""Guaranteed bounds :math:`\mathrm{lower} \le f(\alpha) \le \mathrm{upper}` on a
    trade-off curve at the points ``alpha`` (see :func:`band`).

    Attributes:
        alpha: the type I errors (a float for a scalar input, else a read-only array).
        lower: lower bounds of :math:`f(\alpha)`, same shape.
        upper: upper bounds of :math:`f(\alpha)`, same shape.
        method: how the band was obtained (``"gdp"``, ``"closed form (laplace)"``,
            ``"conjugate"``, ``"conjugate, monotone"``, ``"conjugate, lower only"``).
        assumption: what the band assumes of its input, in words.
    """

    alpha: Any
    lower: Any
    upper: Any
    method: str
    assumption: str

    @property
    def width(self) -> Any:
        r""":math:`\mathrm{upper} - \mathrm{lower}` (elementwise)."""
        return self.upper - self.lower

    def __contains__(self, values: Any) -> bool:
        """True when every given value of the curve lies within the band."""
        v = np.asarray(values, dtype=np.float64)
        return bool(np.all((self.lower <= v) & (v <= self.upper)))


_SYMMETRIC = ("the profile is that of a symmetric pair of output distributions (the "
              "neighbouring relation is symmetric, e.g. replace-one, or add/remove "
              "with the worse direction taken); the curve banded is "
              "f(a) = sup_eps max(0, 1 - delta(eps) - e^eps a, e^-eps (1 - delta(eps) - a)) "
              "(Dong, Roth & Su 2021, Prop. 2.12). The lower band holds for any upper bound "
              "of the mechanism's profile; the upper band needs the exact profile")


def _mu_value(x: Any) -> float | None:
    """A GDP parameter given as a plain real number (not a profile), else None."""
    if isinstance(x, bool):
        raise DomainError(f"expected a profile or a GDP parameter mu, got {x!r}")
    if isinstance(x, (int, float, np.integer, np.floating)):
        m = float(x)
        if not m >= 0:
            raise DomainError(f"mu must be >= 0, got {x!r}")
        return m
    return None


def _pack(scalar: bool, a: np.ndarray, lo: np.ndarray, up: np.ndarray, method: str,
          assumption: str) -> TradeoffBand:
    lo = np.minimum(lo, up)
    if scalar:
        return TradeoffBand(float(a), float(lo), float(up), method, assumption)
    for arr in (a, lo, up):
        arr.flags.writeable = False
    return TradeoffBand(a, lo, up, method, assumption)


def _gdp_band(mu: Any, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Balls of :math:`G_\mu(\alpha) = \Phi(\sqrt2\,\mathrm{erfc}^{-1}(2\alpha) - \mu)`
    (``mu`` a float, or a finite ``arb`` ball whose every point is a possible value)."""
    from flint import arb, ctx

    lo = np.empty(a.shape)
    up = np.empty(a.shape)
    with ctx.workprec(_PREC):
        r2 = arb(2).sqrt()
        m = mu if isinstance(mu, arb) else arb(mu)
        if isinstance(mu, arb):
            mu = math.nan  # neither 0 nor inf: the general formula below
        for i, al in enumerate(a.flat):
            if al == 0.0:
                lo.flat[i] = up.flat[i] = 0.0 if math.isinf(mu) else 1.0
                continue
            if al == 1.0 or math.isinf(mu):
                lo.flat[i] = up.flat[i] = 0.0
                continue
            if mu == 0.0:
                b = 1 - arb(al)
            else:
                z = (2 * arb(al)).erfcinv() * r2  # Phi^{-1}(1 - alpha)
                b = (-(z - m) / r2).erfc() / 2
            lo.flat[i] = max(_fdown(b), 0.0)
            up.flat[i] = min(_fup(b), 1.0)
    return lo, up


# -- closed-form curves of tagged mechanisms ----------------------------------------------
def _const_ball(v: Any) -> Any:
    """A ball enclosing a constant SymPy expression (rigorous, via symgdp.interval)."""
    import sympy

    from .interval import lambdify_arb

    z = sympy.Dummy("z")
    return lambdify_arb(sympy.sympify(v), z, ())(0)


def _tag(profile: Any) -> tuple[str, Any] | None:
    """The ``meta["mechanism"]`` tag with its parameter as a ball, if numeric."""
    meta = getattr(profile, "meta", None) or {}
    tag = meta.get("mechanism") if hasattr(meta, "get") else None
    if not (isinstance(tag, tuple) and len(tag) == 2):
        return None
    import sympy

    try:
        v = sympy.sympify(tag[1]).xreplace(dict(getattr(profile, "values", {}) or {}))
        if v.free_symbols:
            return None
        from flint import ctx

        with ctx.workprec(_PREC):
            return str(tag[0]), _const_ball(v)
    except Exception:  # noqa: BLE001 - an unreadable tag means: use the generic route
        return None


def _tag_delta(name: str, p: Any, e: Any) -> Any:
    """The profile named by a tag, as a ball at the ball ``e`` (None if not known)."""
    from flint import arb

    from .interval import delta_mu_arb

    if name == "gaussian":
        return delta_mu_arb(e, p)
    if name == "laplace":
        return (1 - ((e - p) / 2).exp()).max(arb(0))
    if name in ("randomized_response", "pure_dp"):
        return (p.exp() - e.exp()).max(arb(0)) / (1 + p.exp())
    return None


def _tag_checked(profile: Any, enclose: Callable[[Any], Any]) -> tuple[str, Any] | None:
    """The tag, when the profile's own enclosures agree with the tagged closed form at a
    spread of points (a profile transformed after construction may carry a stale tag)."""
    t = _tag(profile)
    if t is None or t[0] not in ("gaussian", "laplace", "randomized_response", "pure_dp"):
        return None
    from flint import arb, ctx

    with ctx.workprec(_PREC):
        for x in (0.0, 0.03125, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 13.0):
            e = arb(x)
            ref = _tag_delta(t[0], t[1], e)
            got = enclose(e)
            if got is None or ref is None:
                return None
            tol = 1e-12 * (abs(float(ref.mid())) + 1e-300) + 1e-300
            if abs(float((got - ref).mid())) > tol + float(got.rad()) + float(ref.rad()):
                return None
    return t


def _closed_form_band(name: str, p: Any, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact curves in balls: :math:`f_{\varepsilon_0,0}` (randomized response, the
    worst case of pure DP) and the Laplace curve (Dong, Roth & Su 2021, Appendix A)."""
    from flint import arb, ctx

    lo = np.empty(a.shape)
    up = np.empty(a.shape)
    with ctx.workprec(_PREC):
        ee, em = p.exp(), (-p).exp()
        half_em = em / 2
        for i, al in enumerate(a.flat):
            x = arb(al)
            if name == "laplace":
                pieces = []
                if not (x >= half_em):
                    pieces.append(1 - ee * x)
                if not (x < half_em) and not (x > 0.5):
                    pieces.append(em / (4 * x))
                if not (x <= 0.5):
                    pieces.append(em * (1 - x))
                b = pieces[0]
                for q in pieces[1:]:
                    b = b.union(q)
            else:
                b = (1 - ee * x).max(em * (1 - x)).max(arb(0))
            lo.flat[i] = max(_fdown(b), 0.0)
            up.flat[i] = min(_fup(b), 1.0)
    return lo, up


# -- profile enclosures ---------------------------------------------------------------------
def _enclosure(profile: Any) -> tuple[Callable[[Any], Any], bool]:
    r"""``(enclose, has_lower)``: ``enclose(e)`` is a ball containing :math:`\delta` on the
    ball ``e`` (clipped to [0, 1]); ``has_lower`` says whether its lower end is a proved
    lower bound (False: the lower end is 0).

    A symbolic profile (``expr``/``values``, or its own ``arb_delta``) is enclosed by
    :func:`symgdp.interval.profile_arb`; a numeric one by its ``log_delta`` (an upper
    bound) and, when it has one, ``log_delta_lower``.
    """
    from flint import arb

    from .errors import ProfileError

    if hasattr(profile, "arb_delta") or hasattr(profile, "expr"):
        from .interval import profile_arb

        try:
            f = profile_arb(profile)
        except ProfileError:
            f = None
        if f is not None:
            def enclose(e: Any) -> Any:
                return f(e).max(arb(0)).min(arb(1))

            return enclose, True
    log_up = getattr(profile, "log_delta", None)
    if not callable(log_up):
        raise DomainError(f"expected a profile (with an expression or log_delta) or a GDP "
                          f"parameter mu, got {profile!r}")
    log_lo = getattr(profile, "log_delta_lower", None)
    has_lower = callable(log_lo)

    def enclose_num(e: Any) -> Any:
        # delta is non-increasing: the upper bound is read at the left end of the ball
        a = math.nextafter(float(e.lower()), -math.inf)
        b = math.nextafter(float(e.upper()), math.inf)
        hi = float(np.asarray(log_up(max(a, 0.0)), dtype=np.float64))
        up = 1.0 if not hi < 0 else min(float(_up(math.exp(hi))), 1.0)
        if math.isnan(hi):
            up = 1.0
        lo = 0.0
        if has_lower:
            lg = float(np.asarray(log_lo(b), dtype=np.float64))
            lo = max(float(_dn(math.exp(lg))), 0.0) if lg == lg else 0.0
            lo = min(lo, up)
        return arb(lo).union(arb(up))

    return enclose_num, has_lower


# -- the conjugate: f(alpha) from delta by Prop. 2.12 ---------------------------------------
def _sup_concave(x: np.ndarray, alo: np.ndarray, ahi: np.ndarray, al: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Bounds of :math:`\sup_{x_0 \le x \le x_{n-1}} (A(x) - \alpha x)` for a concave
    :math:`A` known only through :math:`A(x_i) \in [\mathrm{alo}_i, \mathrm{ahi}_i]`.

    Concavity gives two facts used here (exact for any concave :math:`A`):

    * if the secant of :math:`g = A - \alpha x` on :math:`[x_i, x_{i+1}]` rises, then
      :math:`g \le g(x_i)` left of :math:`x_i`; if it falls, :math:`g \le g(x_{i+1})`
      right of :math:`x_{i+1}`;
    * on :math:`[x_i, x_{i+1}]`, :math:`A` lies below the extensions of the secants of
      the neighbouring intervals; the minimum of the two lines minus :math:`\alpha x`
      is concave and piecewise linear, so its maximum is at an end or at the crossing.

    Returns ``(lower, upper, L, R)``: the band and, per alpha, the window of grid points
    ``L..R`` that decides it (for refinement).
    """
    n = x.size
    dx = np.diff(x)
    s_lo = _dn(_dn(alo[1:] - ahi[:-1]) / dx)     # secant slopes of A, certified
    s_hi = _up(_up(ahi[1:] - alo[:-1]) / dx)
    rev_max = np.maximum.accumulate(s_lo[::-1])[::-1]   # non-increasing
    pre_min = np.minimum.accumulate(s_hi)                # non-increasing
    c = np.searchsorted(-rev_max, -al, side="left")      # #{i: rev_max_i > alpha}
    L = np.maximum(c - 1, 0)
    c2 = np.searchsorted(-pre_min, -al, side="right")    # #{i: pre_min_i >= alpha}
    R = np.where(c2 >= n - 1, n - 1, c2 + 1)
    # the point R always counts (when L > R, possible only with enclosures that are not
    # concave, the two one-sided facts cover the line between them)
    axr = al * x[R]
    lower = _dn(alo[R] - _up(axr))
    upper = _up(ahi[R] - _dn(axr))
    width = R - L
    top = int(max(width.max(initial=0), 0))
    for d in range(top + 1):
        sel = np.nonzero((d <= width) | (d == 0))[0]
        i = np.minimum(L[sel] + d, n - 1)
        a = al[sel]
        ax = a * x[i]
        lower[sel] = np.maximum(lower[sel], _dn(alo[i] - _up(ax)))
        upper[sel] = np.maximum(upper[sel], _up(ahi[i] - _dn(ax)))
        inner = d < width[sel]
        if not np.any(inner):
            continue
        sel, i, a = sel[inner], i[inner], a[inner]
        h = dx[i]
        has_p = i >= 1
        has_q = i + 2 <= n - 1
        ip, iq = np.maximum(i - 1, 0), np.minimum(i + 1, n - 2)
        # left line P(lam) = p0 + p1 lam, right line Q(lam) = q0 + q1 lam, lam in [0, 1]
        p0 = ahi[i]
        p1 = np.where(has_p, _up(s_hi[ip] * h), np.inf)
        r = np.where(has_q, _dn(s_lo[iq] * h), -np.inf)
        q1 = r
        q0 = np.where(has_q, _up(ahi[i + 1] - r), np.inf)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            lam_x = np.where(has_p & has_q, (q0 - p0) / (p1 - q1), 0.0)
        lam_x = np.clip(np.nan_to_num(lam_x, nan=0.0), 0.0, 1.0)
        best = np.full(a.shape, -np.inf)
        for lam in (np.zeros_like(a), np.ones_like(a), lam_x):
            with np.errstate(invalid="ignore", over="ignore"):
                pv = np.where(has_p, p0 + p1 * lam, np.inf)
                qv = np.where(has_q, q0 + q1 * lam, np.inf)
                v = np.minimum(pv, qv) - a * (x[i] + lam * h)
            best = np.maximum(best, v)
        with np.errstate(invalid="ignore", over="ignore"):
            mag = (np.abs(p0) + np.where(has_p, np.abs(p1), 0.0)
                   + np.where(has_q, np.abs(q0) + np.abs(q1), 0.0) + a * (x[i] + h) + 1.0)
        upper[sel] = np.maximum(upper[sel], best + 8 * _REL * mag)
    return lower, upper, L, R


def _sup_monotone(x: np.ndarray, ahi: np.ndarray, al: np.ndarray, branch: int
                  ) -> np.ndarray:
    r"""Upper bounds of the same supremum using only the monotonicity of :math:`\delta`
    (the fallback when the profile's enclosures contradict convexity in
    :math:`e^\varepsilon`): on :math:`[t_i, t_{i+1}]`,
    :math:`1 - \delta(\log t) - \alpha t \le 1 - \delta(\log t_{i+1}) - \alpha t_i`, and
    on :math:`[s_i, s_{i+1}]`, :math:`s(1 - \delta(-\log s) - \alpha) \le
    s\,(1 - \delta(-\log s_i) - \alpha)`."""
    out = np.full(al.shape, -np.inf)
    for start in range(0, al.size, 512):
        a = al[start:start + 512, None]
        if branch == 1:
            v = ahi[None, 1:] - _dn(a * x[None, :-1])
        else:
            q = _up(ahi[:-1] / x[:-1])[None, :]
            c = _up(q - a)
            v = np.maximum(_up(x[None, :-1] * c), _up(x[None, 1:] * c))
        out[start:start + 512] = _up(np.max(v, axis=1))
    return out


class _Branch:
    r"""One of the two suprema of Prop. 2.12, as a concave :math:`A(x) - \alpha x`:

    * branch 1, :math:`x = t = e^{\varepsilon} \in [1, t_{\max}]`,
      :math:`A(t) = 1 - \delta(\log t)` (concave: :math:`\delta(\log t)` is convex in
      :math:`t`, a supremum of affine functions of :math:`t` for an exact profile);
    * branch 2, :math:`x = s = e^{-\varepsilon} \in [s_{\min}, 1]`,
      :math:`A(s) = s\,(1 - \delta(-\log s))` (concave: the perspective of a convex
      function is convex).
    """

    def __init__(self, kind: int, enclose: Callable[[Any], Any], xs: np.ndarray) -> None:
        self.kind = kind
        self.enclose = enclose
        self.x = np.empty(0)
        self.alo = np.empty(0)
        self.ahi = np.empty(0)
        self.add(xs)

    def _ball(self, xv: float) -> tuple[float, float]:
        from flint import arb, ctx

        with ctx.workprec(_PREC):
            xb = arb(xv)
            if self.kind == 1:
                a = 1 - self.enclose(xb.log())
            else:
                a = xb * (1 - self.enclose(-xb.log()))
            return _fdown(a), _fup(a)

    def add(self, xs: np.ndarray) -> None:
        xs = np.setdiff1d(np.unique(xs), self.x)
        if xs.size == 0:
            return
        vals = np.array([self._ball(float(v)) for v in xs]).reshape(-1, 2)
        x = np.concatenate([self.x, xs])
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.alo = np.concatenate([self.alo, vals[:, 0]])[order]
        self.ahi = np.concatenate([self.ahi, vals[:, 1]])[order]

    def concave(self) -> bool:
        """False when the enclosures prove that a secant slope exceeds an earlier one
        (A not concave)."""
        dx = np.diff(self.x)
        s_lo = _dn(_dn(self.alo[1:] - self.ahi[:-1]) / dx)
        s_hi = _up(_up(self.ahi[1:] - self.alo[:-1]) / dx)
        earlier_min = np.minimum.accumulate(s_hi)[:-1]
        return not bool(np.any(s_lo[1:] > earlier_min))

    def outside(self, al: np.ndarray) -> np.ndarray:
        """Upper bound of the supremum beyond the grid (t > t_max, resp. s < s_min)."""
        x, ahi = self.x, self.ahi
        if self.kind == 1:
            # A <= 1; and where the last secant certifiably falls, g <= g(t_max)
            trivial = _up(1.0 - _dn(al * x[-1]))
            s_hi = _up(_up(ahi[-1] - self.alo[-2]) / (x[-1] - x[-2]))
            at_end = np.where(s_hi < al, _up(ahi[-1] - _dn(al * x[-1])), np.inf)
        else:
            # A(s) <= s: s (1 - delta - alpha) <= s_min (1 - alpha); where the first secant rises,
            # g <= g(s_min)
            trivial = _up(x[0] * _up(1.0 - al))
            s_lo = _dn(_dn(self.alo[1] - ahi[0]) / (x[1] - x[0]))
            at_end = np.where(s_lo > al, _up(ahi[0] - _dn(al * x[0])), np.inf)
        return np.minimum(trivial, at_end)


def _eps_max(enclose: Callable[[Any], Any], tol: float) -> float:
    """Where the profile's upper bound has fallen below ``tol`` (capped at 700)."""
    from flint import arb, ctx

    e = 1.0
    with ctx.workprec(_PREC):
        while e < 700.0:
            if _fup(enclose(arb(e))) <= tol:
                return e
            e *= 2.0
    return 700.0


def _conjugate_band(enclose: Callable[[Any], Any], has_lower: bool, a: np.ndarray,
                    tol: float, max_points: int) -> tuple[np.ndarray, np.ndarray, str]:
    # beyond the point where delta is negligible, so that the grid's ends are not the
    # suprema of a profile that vanishes there (pure DP, Laplace)
    emax = min(2.0 * _eps_max(enclose, 1e-3 * tol) + 2.0, 700.0)
    eps = np.unique(np.concatenate([np.linspace(0.0, min(emax, 8.0), 97),
                                    np.geomspace(min(emax, 8.0), emax, 48)]))
    b1 = _Branch(1, enclose, np.exp(eps))
    b2 = _Branch(2, enclose, np.exp(-eps))
    b1.add(np.array([1.0]))
    b2.add(np.array([1.0]))
    al = a.ravel()
    method = "conjugate"
    for _ in range(40):
        # without a lower bound of delta the upper band is trivial; the refinement is then
        # guided by the band the lower ends alone would give (not a bound: a guide)
        lo1, up1, L1, R1 = _sup_concave(b1.x, b1.alo, b1.ahi if has_lower else b1.alo, al)
        lo2, up2, L2, R2 = _sup_concave(b2.x, b2.alo, b2.ahi if has_lower else b2.alo, al)
        lower = np.maximum(np.maximum(lo1, lo2), 0.0)
        up1 = np.maximum(up1, b1.outside(al))
        up2 = np.maximum(up2, b2.outside(al))
        upper = np.maximum(np.maximum(up1, up2), 0.0)
        need = (upper - lower) > tol
        if not np.any(need) or b1.x.size + b2.x.size > max_points:
            break
        grew = False
        for br, Lb, Rb, ub in ((b1, L1, R1, up1), (b2, L2, R2, up2)):
            m = need & (ub >= lower - tol)  # this branch may decide the supremum
            if not np.any(m):
                continue
            lo_i = np.maximum(Lb[m] - 1, 0)
            hi_i = np.minimum(Rb[m] + 1, br.x.size - 1)
            marks = np.zeros(br.x.size, dtype=np.int64)
            np.add.at(marks, lo_i, 1)
            np.add.at(marks, hi_i, -1)
            split = np.nonzero(np.cumsum(marks) > 0)[0]  # intervals [i, i+1]
            xl, xr = br.x[split], br.x[split + 1]
            ok = (xr - xl) > 1e-11 * xr
            if np.any(ok):
                br.add((xl[ok] + xr[ok]) / 2)
                grew = True
        if not grew:
            break
    if not has_lower:
        method = "conjugate, lower only"
        upper = np.maximum(np.maximum(_sup_concave(b1.x, b1.alo, b1.ahi, al)[1],
                                      b1.outside(al)),
                           np.maximum(_sup_concave(b2.x, b2.alo, b2.ahi, al)[1],
                                      b2.outside(al)))
    elif not (b1.concave() and b2.concave()):
        method = "conjugate, monotone"
        up1 = np.maximum(_sup_monotone(b1.x, b1.ahi, al, 1), b1.outside(al))
        up2 = np.maximum(_sup_monotone(b2.x, b2.ahi, al, 2), b2.outside(al))
        upper = np.maximum(np.maximum(up1, up2), 0.0)
    return lower.reshape(a.shape), upper.reshape(a.shape), method


def band(profile_or_mu: Any, alpha: Any, *, tol: float = 1e-10,
         max_points: int = 200_000) -> TradeoffBand:
    r"""Guaranteed bounds on the trade-off curve :math:`f` at the type I errors ``alpha``.

    * A GDP parameter :math:`\mu` (a real number): :math:`f = G_\mu`,
      :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)`, evaluated in Arb balls and
      rounded outward.
    * A profile (duck-typed: anything with a SymPy ``expr``/``values``/``var``, its own
      ``arb_delta``, or a numeric ``log_delta``): the curve of the duality of Dong, Roth &
      Su (2021, Prop. 2.12),

      .. math:: f(\alpha) = \sup_{\varepsilon \ge 0} \max\{0,\ 1 - \delta(\varepsilon)
                - e^{\varepsilon}\alpha,\ e^{-\varepsilon}(1 - \delta(\varepsilon) - \alpha)\},

      which is the mechanism's curve when the profile is that of a *symmetric* pair
      (the neighbouring relation symmetric, e.g. replace-one, or the add/remove profile
      taken as the worse of its two directions).  Every :math:`\varepsilon` gives a
      supporting line, so an *upper* bound of :math:`\delta` on a grid gives the lower
      band (valid for any profile that bounds the mechanism's).  The upper band needs a
      *lower* bound of :math:`\delta` and a bound between grid points: for an exact
      profile, :math:`\delta(\log t)` is convex in :math:`t = e^\varepsilon` (a
      supremum of affine functions of :math:`t`), so each branch is a concave function
      of :math:`t` (resp. :math:`s = e^{-\varepsilon}`) and is bounded between grid
      points by the extensions of the neighbouring secants (error of order
      :math:`h^2`); the grid is refined where the band is wider than ``tol``.  If the
      enclosures disprove convexity the upper band falls back to the monotone bound
      (``method="conjugate, monotone"``); a numeric profile without
      ``log_delta_lower`` gives the trivial upper band :math:`1 - \alpha`
      (``"conjugate, lower only"``).  Mechanisms tagged by :mod:`symgdp.mechanisms`
      (``meta["mechanism"]``: Gaussian, Laplace, randomized response, pure DP) whose
      profile agrees with the tag use their closed-form curves.

    All values are rounded outward; the upper band never exceeds :math:`1 - \alpha`.  The
    conjugate's grid spans :math:`0 \le \varepsilon \le 700` (:math:`e^{\varepsilon}`
    within float64): a profile that is not negligible there (a Gaussian with
    :math:`\mu \gtrsim 37` given without its tag) gets a valid but loose band near
    :math:`\alpha = 0`.

    Args:
        profile_or_mu: a profile, or :math:`\mu \ge 0` (``inf`` allowed).
        alpha: type I error(s) in [0, 1]; scalar or array.
        tol: target width of the conjugate band (refinement stops there, or at
            ``max_points`` grid points).
        max_points: budget of profile evaluations for the conjugate band.

    Example:
        >>> b = band(1.0, [0.05, 0.5])
        >>> [round(float(v), 9) for v in b.lower], float(b.width.max()) < 1e-15
        ([0.740488977, 0.158655254], True)
    """
    scalar, a = _alpha(alpha)
    a = np.array(a, dtype=np.float64)
    mu = _mu_value(profile_or_mu)
    if mu is not None:
        lo, up = _gdp_band(mu, a)
        return _pack(scalar, a, lo, up, "gdp", "mu-GDP: f = G_mu exactly")
    if not (tol > 0):
        raise DomainError(f"tol must be > 0, got {tol!r}")
    enclose, has_lower = _enclosure(profile_or_mu)
    tag = _tag_checked(profile_or_mu, enclose) if has_lower else None
    if tag is not None and tag[0] == "gaussian" and tag[1].is_finite() and tag[1] > 0:
        lo, up = _gdp_band(tag[1], a)
        return _pack(scalar, a, lo, up, "gdp", _SYMMETRIC)
    if tag is not None and tag[0] != "gaussian":
        lo, up = _closed_form_band(tag[0], tag[1], a)
        return _pack(scalar, a, lo, up, f"closed form ({tag[0]})", _SYMMETRIC)
    lo, up, method = _conjugate_band(enclose, has_lower, a, tol, max_points)
    up = np.minimum(up, _up(1.0 - a))
    return _pack(scalar, a, np.clip(lo, 0.0, 1.0), np.clip(up, 0.0, 1.0), method, _SYMMETRIC)
