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

The certified band of any profile or :math:`\mu`, :func:`band`, lives in
:mod:`symgdp.notions.bands` and is re-exported here.

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

from symgdp.errors import DomainError
from symgdp.gaussian.vectorised import tradeoff_gdp
from symgdp.notions.bands import BAND_PREC, TradeoffBand, _alpha, band, widen_down
from symgdp.numerics.rounding import float_above, float_below

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
                         piecewise_linear=True, family="rr_composition")


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
            def gap(al: float, ee: float = ee) -> float:
                return float(curve.complement(al)) - ee * al

            best = _refine_max(gap, a, vals)
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
    lower: float
    upper: float
    certified: bool
    method: str

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
    with ctx.workprec(BAND_PREC):
        if fam == "gaussian":
            m = float(pr["mu"])
            return m, m, "closed form (G_mu)"
        if fam == "eps_delta":
            if float(pr.get("delta", 0.0)) > 0:
                return math.inf, math.inf, "closed form (T(0) < 1: not GDP)"
            # -2 Phi^{-1}(1/(1 + e^eps)) (Dong, Roth & Su 2021, Cor. 2.13 with Prop. 2.12)
            e = pr["eps"] if "eps" in pr else pr["eps0"]
            b = 2 * arb(2).sqrt() * (2 / (1 + arb(e).exp())).erfcinv()
            return max(float_below(b), 0.0), max(float_above(b), 0.0), "closed form (pure DP)"
        if fam == "laplace":
            # -2 Phi^{-1}(e^{-eps0/2}/2): the curve touches G_mu at alpha = 1/2
            b = 2 * arb(2).sqrt() * (-arb(pr["eps0"]) / 2).exp().erfcinv()
            return max(float_below(b), 0.0), max(float_above(b), 0.0), "closed form (Laplace)"
    return None


def _kinks_mu(curve: TradeoffCurve) -> tuple[float, float]:
    r"""Exact for a piecewise-linear curve: :math:`G_\mu` is convex, so it lies below a
    linear piece of :math:`T` as soon as it lies below it at both ends; the smallest
    :math:`\mu` is the largest :math:`\Phi^{-1}(1 - T(a)) - \Phi^{-1}(a)` over the kinks
    :math:`0 < a < 1`, evaluated here in balls from the curve's stored values."""
    from flint import arb, ctx

    if curve.family == "rr_composition":
        return _rr_composition_mu(float(curve.params["eps0"]), int(curve.params["k"]))
    a = np.unique(np.asarray(curve.kinks, dtype=np.float64))
    a = a[(a > 0) & (a < 1)]
    lo, up = 0.0, 0.0
    t, pw = curve(a), curve.complement(a)
    with ctx.workprec(BAND_PREC):
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
            lo, up = max(lo, float_below(b)), max(up, float_above(b))
    return lo, up


def _rr_composition_mu(e0: float, k: int) -> tuple[float, float]:
    r"""The largest :math:`\Phi^{-1}(1 - T) - \Phi^{-1}(\alpha)` over the kinks of
    :math:`k`-fold randomized response, every kink recomputed in balls from the binomial
    laws (:math:`\alpha_j = Q[J \ge j]`, :math:`T_j = P[J < j]`, and both complements
    summed directly).  The float64 kinks of the curve are not used:
    near :math:`\alpha = 1` they round to :math:`1 - 2^{-53}`, and
    :math:`\Phi^{-1}` of the rounded value overstated :math:`\mu` (by 0.024 at
    :math:`\varepsilon_0 = 0.05, k = 1000`)."""
    from flint import arb, ctx

    lo, up = 0.0, 0.0
    with ctx.workprec(BAND_PREC):
        ee = arb(e0).exp()
        p, q = ee / (1 + ee), 1 / (1 + ee)
        r2 = arb(2).sqrt()
        # pmf of J under Q (q = success) and P (p = success), by the exact term ratios
        tq, tp = [p ** k], [q ** k]
        for j in range(k):
            c = arb(k - j) / (j + 1)
            tq.append(tq[-1] * c * (q / p))
            tp.append(tp[-1] * c * (p / q))
        below_q, below_p = arb(0), arb(0)  # Q[J < j], P[J < j]
        above_q = [arb(0)] * (k + 2)  # Q[J >= j]
        above_p = [arb(0)] * (k + 2)  # P[J >= j] = 1 - T, summed directly
        acc_q, acc_p = arb(0), arb(0)
        for j in range(k, -1, -1):
            acc_q += tq[j]
            acc_p += tp[j]
            above_q[j], above_p[j] = acc_q, acc_p
        for j in range(1, k + 1):
            below_q += tq[j - 1]
            below_p += tp[j - 1]
            a_j, ac_j, t_j = above_q[j], below_q, below_p  # alpha, 1 - alpha, T
            # Phi^{-1}(1 - T) - Phi^{-1}(alpha) = sqrt2 (erfcinv(2T) - erfcinv(2(1 - alpha)))
            # with erfcinv(2x) = -erfcinv(2(1 - x)) taken on the small side of each
            first = (2 * t_j).erfcinv() if t_j < 0.5 else -(2 * above_p[j]).erfcinv()
            second = (2 * ac_j).erfcinv() if ac_j < 0.5 else -(2 * a_j).erfcinv()
            b = r2 * (first - second)
            lo, up = max(lo, float_below(b)), max(up, float_above(b))
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
      both ends, and the supremum is the largest value at the kinks (for
      :func:`randomized_response_composition` recomputed in balls from the binomial laws;
      for another piecewise-linear curve evaluated from its stored float64 values, which
      are then taken as the curve).

    For any other curve only the lower end is proved (the best value on a probit-spaced
    grid of ``n`` points, refined locally, rounded down); ``upper`` is ``inf``: values of
    a curve alone cannot bound its behaviour as :math:`\alpha \to 0`, which decides GDP.
    A curve typed as a SymPy expression gets a certified bracket on both sides from
    ``Profile.from_tradeoff_curve(expr).measure()`` (the same supremum, by branch-and-bound
    in ball arithmetic).  The float value is the best estimate (the midpoint of a proved
    bracket).

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
    lo = max(float(widen_down(est)) - 1e-12 * (1.0 + est), 0.0)
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
