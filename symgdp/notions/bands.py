r"""Certified bands on a trade-off curve: :func:`band` (re-exported as
:func:`symgdp.notions.fdp.band`).

Given a GDP parameter :math:`\mu` or a privacy profile, :func:`band` returns guaranteed
bounds ``lower <= f(alpha) <= upper`` on the trade-off curve :math:`f` (Dong, Roth & Su
2021): :math:`G_\mu` in Arb balls, the closed-form curves of tagged mechanisms, or the
conjugate of Prop. 2.12 bracketed between the points of an adaptively refined grid.
Profiles are duck-typed (this module does not import :mod:`symgdp.profile`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.numerics.rounding import float_above, float_below

__all__ = ["TradeoffBand", "band"]


def _alpha(alpha: Any) -> tuple[bool, np.ndarray]:
    scalar = np.ndim(alpha) == 0
    a = np.asarray(alpha, dtype=np.float64)
    bad = ~((a >= 0) & (a <= 1))
    if np.any(bad):
        raise DomainError(f"alpha must lie in [0, 1], got {a[bad].flat[0]!r}")
    return scalar, a


# Everything below is certified: values come from Arb balls (python-flint) or from a
# profile's own upper/lower bounds, and every float64 step is rounded outward by an explicit
# relative margin (_DN/_UP: 1e-15 relative, about 9 units in the last place, more than the
# few roundings of each step) plus the smallest subnormal.

_REL = 1e-15
_TINY = 5e-324
BAND_PREC = 96  # working precision (bits) of the ball evaluations


def widen_down(v: Any) -> Any:
    return v - np.abs(v) * _REL - _TINY


def widen_up(v: Any) -> Any:
    return v + np.abs(v) * _REL + _TINY


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


def mu_value(x: Any) -> float | None:
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
    with ctx.workprec(BAND_PREC):
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
            lo.flat[i] = max(float_below(b), 0.0)
            up.flat[i] = min(float_above(b), 1.0)
    return lo, up


# -- closed-form curves of tagged mechanisms ----------------------------------------------
def _const_ball(v: Any) -> Any:
    """A ball enclosing a constant SymPy expression (rigorous, via symgdp.evaluation.interval)."""
    import sympy

    from symgdp.evaluation.interval import lambdify_arb

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

        with ctx.workprec(BAND_PREC):
            return str(tag[0]), _const_ball(v)
    except Exception:  # noqa: BLE001 - an unreadable tag means: use the generic route
        return None


def _tag_delta(name: str, p: Any, e: Any) -> Any:
    """The profile named by a tag, as a ball at the ball ``e`` (None if not known)."""
    from flint import arb

    from symgdp.evaluation.interval import delta_mu_arb

    if name == "gaussian":
        return delta_mu_arb(e, p)
    if name == "laplace":
        return (1 - ((e - p) / 2).exp()).max(arb(0))
    if name in ("randomized_response", "pure_dp"):
        return (p.exp() - e.exp()).max(arb(0)) / (1 + p.exp())
    return None


def _tag_expr(name: str, p: Any, var: Any) -> Any:
    """The closed-form profile named by a tag, as :mod:`symgdp.mechanisms` writes it (None
    if not known)."""
    import sympy

    if name == "gaussian":
        def phi(z: Any) -> Any:
            return sympy.erfc(-z / sympy.sqrt(2)) / 2

        return phi(-var / p + p / 2) - sympy.exp(var) * phi(-var / p - p / 2)
    if name == "laplace":
        return sympy.Max(1 - sympy.exp((var - p) / 2), 0)
    if name in ("randomized_response", "pure_dp"):
        return sympy.Max(sympy.exp(p) - sympy.exp(var), 0) / (1 + sympy.exp(p))
    return None


def _same_expression(profile: Any, name: str) -> bool:
    r"""The profile's expression is, symbol for symbol, the closed form of its tag.

    Agreement at sample points cannot prove a tag: ``Profile.replace(expr=...)`` keeps the
    metadata, and a Gaussian profile with :math:`\mu \gtrsim 25` (or a Laplace one with
    :math:`\varepsilon_0 \gtrsim 70`) is 1 to within 1e-12 at every sample point up to
    :math:`\varepsilon = 13` whatever its parameter, so a stale tag would pass and the
    band of the wrong curve be returned.  The identity of the expressions (before the
    parameter values, which enter both alike) is a proof; anything else takes the
    generic route.
    """
    import sympy

    expr, var = getattr(profile, "expr", None), getattr(profile, "var", None)
    meta = getattr(profile, "meta", None) or {}
    tag = meta.get("mechanism") if hasattr(meta, "get") else None
    if not isinstance(expr, sympy.Basic) or not isinstance(var, sympy.Symbol) or \
            not (isinstance(tag, tuple) and len(tag) == 2):
        return False
    try:
        ref = _tag_expr(name, sympy.sympify(tag[1]), var)
    except Exception:  # noqa: BLE001 - an unreadable tag means: use the generic route
        return False
    return ref is not None and ref == expr


def _tag_checked(profile: Any, enclose: Callable[[Any], Any]) -> tuple[str, Any] | None:
    """The tag, when the profile's expression is the tagged closed form (a profile
    transformed after construction may carry a stale tag) and its own enclosures agree
    with it at a spread of points (a profile may evaluate by its own ``arb_delta``)."""
    t = _tag(profile)
    if t is None or t[0] not in ("gaussian", "laplace", "randomized_response", "pure_dp"):
        return None
    if not _same_expression(profile, t[0]):
        return None
    from flint import arb, ctx

    with ctx.workprec(BAND_PREC):
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
    with ctx.workprec(BAND_PREC):
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
            lo.flat[i] = max(float_below(b), 0.0)
            up.flat[i] = min(float_above(b), 1.0)
    return lo, up


# -- profile enclosures ---------------------------------------------------------------------
def enclosure(profile: Any) -> tuple[Callable[[Any], Any], bool]:
    r"""``(enclose, has_lower)``: ``enclose(e)`` is a ball containing :math:`\delta` on the
    ball ``e`` (clipped to [0, 1]); ``has_lower`` says whether its lower end is a proved
    lower bound (False: the lower end is 0).

    A symbolic profile (``expr``/``values``, or its own ``arb_delta``) is enclosed by
    :func:`symgdp.evaluation.interval.profile_arb`; a numeric one by its ``log_delta`` (an upper
    bound) and, when it has one, ``log_delta_lower`` (a proved lower bound on the
    mechanism's profile: a certified composition's, DP-SGD's; never that of a profile
    implied by a notion, which bounds the mechanism from above only).
    """
    from flint import arb

    from symgdp.errors import ProfileError

    if hasattr(profile, "arb_delta") or hasattr(profile, "expr"):
        from symgdp.evaluation.interval import profile_arb

        try:
            f = profile_arb(profile)
        except (ProfileError, AttributeError):
            # AttributeError: an ``expr`` that is not a profile's (a notions source keeps
            # its RDP or trade-off curve there): the numeric route below
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
    if getattr(profile, "implied", False) or getattr(getattr(profile, "source", None),
                                                     "implied", False):
        # a profile implied by a notion (RDP, zCDP, a stated trade-off curve) bounds the
        # mechanism's from above only: its own lower bound says nothing of the mechanism
        log_lo = None
    has_lower = callable(log_lo)

    def enclose_num(e: Any) -> Any:
        # delta is non-increasing: the upper bound is read at the left end of the ball
        a = math.nextafter(float(e.lower()), -math.inf)
        b = math.nextafter(float(e.upper()), math.inf)
        hi = float(np.asarray(log_up(max(a, 0.0)), dtype=np.float64))
        up = 1.0 if not hi < 0 else min(float(widen_up(math.exp(hi))), 1.0)
        if math.isnan(hi):
            up = 1.0
        lo = 0.0
        if has_lower and log_lo is not None:  # (has_lower: log_lo is callable)
            lg = float(np.asarray(log_lo(b), dtype=np.float64))
            lo = max(float(widen_down(math.exp(lg))), 0.0) if lg == lg else 0.0
            lo = min(lo, up)
        return arb(lo).union(arb(up))

    return enclose_num, has_lower


def _guide(profile: Any) -> Callable[[Any], Any] | None:
    r"""For a numeric profile whose lower bound the band may not use (one implied by a
    notion), its source's own ``log_delta_lower`` as a *refinement guide*: ``guide(e)`` is
    a ball from the source's lower bound to its upper bound of :math:`\delta` at the left
    end of ``e`` (the point the upper bound is read at, so a source that caches its
    answers computes each point once).  It never enters a bound of the band: it only
    tells the refinement how far the source's own accuracy lets the lower band move
    (``None`` when there is no such lower bound, it is not free, or the band may use it
    anyway)."""
    src = getattr(profile, "source", None) or profile
    log_lo = getattr(src, "log_delta_lower", None)
    log_up = getattr(profile, "log_delta", None)
    implied = getattr(profile, "implied", False) or getattr(src, "implied", False)
    # only a source whose two bounds come from one computation (``shares_bounds``: asking
    # for the lower one after the upper costs nothing); for others (zCDP, RDP) the guide
    # would double the cost of every grid point
    if not (implied and getattr(src, "shares_bounds", False) and callable(log_lo)
            and callable(log_up)):
        return None
    from flint import arb

    def guide(e: Any) -> Any:
        a = max(math.nextafter(float(e.lower()), -math.inf), 0.0)
        hi = float(np.asarray(log_up(a), dtype=np.float64))
        lg = float(np.asarray(log_lo(a), dtype=np.float64))
        up = min(math.exp(hi), 1.0) if hi < 0 else 1.0
        lo = min(math.exp(lg), up) if lg == lg else 0.0
        return arb(lo).union(arb(up))

    return guide


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
    s_lo = widen_down(widen_down(alo[1:] - ahi[:-1]) / dx)     # secant slopes of A, certified
    s_hi = widen_up(widen_up(ahi[1:] - alo[:-1]) / dx)
    rev_max = np.maximum.accumulate(s_lo[::-1])[::-1]   # non-increasing
    pre_min = np.minimum.accumulate(s_hi)                # non-increasing
    c = np.searchsorted(-rev_max, -al, side="left")      # #{i: rev_max_i > alpha}
    L = np.maximum(c - 1, 0)
    c2 = np.searchsorted(-pre_min, -al, side="right")    # #{i: pre_min_i >= alpha}
    R = np.where(c2 >= n - 1, n - 1, c2 + 1)
    # the point R always counts (when L > R, possible only with enclosures that are not
    # concave, the two one-sided facts cover the line between them)
    axr = al * x[R]
    lower = widen_down(alo[R] - widen_up(axr))
    upper = widen_up(ahi[R] - widen_down(axr))
    width = R - L
    top = int(max(width.max(initial=0), 0))
    for d in range(top + 1):
        sel = np.nonzero((d <= width) | (d == 0))[0]
        i = np.minimum(L[sel] + d, n - 1)
        a = al[sel]
        ax = a * x[i]
        lower[sel] = np.maximum(lower[sel], widen_down(alo[i] - widen_up(ax)))
        upper[sel] = np.maximum(upper[sel], widen_up(ahi[i] - widen_down(ax)))
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
        p1 = np.where(has_p, widen_up(s_hi[ip] * h), np.inf)
        r = np.where(has_q, widen_down(s_lo[iq] * h), -np.inf)
        q1 = r
        q0 = np.where(has_q, widen_up(ahi[i + 1] - r), np.inf)
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
            v = ahi[None, 1:] - widen_down(a * x[None, :-1])
        else:
            q = widen_up(ahi[:-1] / x[:-1])[None, :]
            c = widen_up(q - a)
            v = np.maximum(widen_up(x[None, :-1] * c), widen_up(x[None, 1:] * c))
        out[start:start + 512] = widen_up(np.max(v, axis=1))
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

    def __init__(self, kind: int, enclose: Callable[[Any], Any], xs: np.ndarray,
                 guide: Callable[[Any], Any] | None = None) -> None:
        self.kind = kind
        self.enclose = enclose
        self.guide = guide
        self.x = np.empty(0)
        self.alo = np.empty(0)
        self.ahi = np.empty(0)
        self.ghi = np.empty(0)  # A's upper end from the guide (stopping only), else alo
        self.add(xs)

    def _ball(self, xv: float) -> tuple[float, float, float]:
        from flint import arb, ctx

        with ctx.workprec(BAND_PREC):
            xb = arb(xv)
            e = xb.log() if self.kind == 1 else -xb.log()
            w = xb if self.kind == 2 else arb(1)
            a = w * (1 - self.enclose(e))
            g = float_above(w * (1 - self.guide(e))) if self.guide is not None else float_below(a)
            return float_below(a), float_above(a), g

    def add(self, xs: np.ndarray) -> None:
        xs = np.setdiff1d(np.unique(xs), self.x)
        if xs.size == 0:
            return
        vals = np.array([self._ball(float(v)) for v in xs]).reshape(-1, 3)
        x = np.concatenate([self.x, xs])
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.alo = np.concatenate([self.alo, vals[:, 0]])[order]
        self.ahi = np.concatenate([self.ahi, vals[:, 1]])[order]
        self.ghi = np.concatenate([self.ghi, vals[:, 2]])[order]

    def concave(self) -> bool:
        """False when the enclosures prove that a secant slope exceeds an earlier one
        (A not concave)."""
        dx = np.diff(self.x)
        s_lo = widen_down(widen_down(self.alo[1:] - self.ahi[:-1]) / dx)
        s_hi = widen_up(widen_up(self.ahi[1:] - self.alo[:-1]) / dx)
        earlier_min = np.minimum.accumulate(s_hi)[:-1]
        return not bool(np.any(s_lo[1:] > earlier_min))

    def outside(self, al: np.ndarray, ahi: np.ndarray | None = None) -> np.ndarray:
        """Upper bound of the supremum beyond the grid (t > t_max, resp. s < s_min), from
        the upper ends ``ahi`` of A (default: the enclosure's)."""
        x, ahi = self.x, (self.ahi if ahi is None else ahi)
        if self.kind == 1:
            # A <= 1; and where the last secant certifiably falls, g <= g(t_max)
            trivial = widen_up(1.0 - widen_down(al * x[-1]))
            s_hi = widen_up(widen_up(ahi[-1] - self.alo[-2]) / (x[-1] - x[-2]))
            at_end = np.where(s_hi < al, widen_up(ahi[-1] - widen_down(al * x[-1])), np.inf)
        else:
            # A(s) <= s: s (1 - delta - alpha) <= s_min (1 - alpha); where the first secant rises,
            # g <= g(s_min)
            trivial = widen_up(x[0] * widen_up(1.0 - al))
            s_lo = widen_down(widen_down(self.alo[1] - ahi[0]) / (x[1] - x[0]))
            at_end = np.where(s_lo > al, widen_up(ahi[0] - widen_down(al * x[0])), np.inf)
        return np.minimum(trivial, at_end)


def _eps_max(enclose: Callable[[Any], Any], tol: float) -> float:
    """Where the profile's upper bound has fallen below ``tol`` (capped at 700)."""
    from flint import arb, ctx

    e = 1.0
    with ctx.workprec(BAND_PREC):
        while e < 700.0:
            if float_above(enclose(arb(e))) <= tol:
                return e
            e *= 2.0
    return 700.0


def _range_max(v: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``max(v[min(i, j) : max(i, j) + 1])`` for each pair (a sparse table, O(n log n))."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    table = [v]
    while 2 ** len(table) <= v.size:
        h = 2 ** (len(table) - 1)
        table.append(np.maximum(table[-1][:-h], table[-1][h:]))
    level = np.floor(np.log2(hi - lo + 1)).astype(np.int64)
    out = np.empty(lo.shape)
    for k in np.unique(level):
        m = level == k
        t = table[k]
        out[m] = np.maximum(t[lo[m]], t[hi[m] - 2 ** k + 1])
    return out


def _conjugate_band(enclose: Callable[[Any], Any], has_lower: bool, a: np.ndarray,
                    tol: float, max_points: int, guide: Callable[[Any], Any] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, str]:
    # beyond the point where delta is negligible, so that the grid's ends are not the
    # suprema of a profile that vanishes there (pure DP, Laplace)
    emax = min(2.0 * _eps_max(enclose, 1e-3 * tol) + 2.0, 700.0)
    eps = np.unique(np.concatenate([np.linspace(0.0, min(emax, 8.0), 97),
                                    np.geomspace(min(emax, 8.0), emax, 48)]))
    guide = None if has_lower else guide
    b1 = _Branch(1, enclose, np.exp(eps), guide)
    b2 = _Branch(2, enclose, np.exp(-eps), guide)
    b1.add(np.array([1.0]))
    b2.add(np.array([1.0]))
    al = a.ravel()
    method = "conjugate"
    history: list[np.ndarray] = []

    for _ in range(40):
        # without a lower bound of delta the upper band is trivial; the refinement is then
        # steered by the band the lower ends alone would give (not a bound: a guide), and
        # stopped by the gap to the source's own lower bound if it has one (_guide)
        t1, t2 = (b1.ahi, b2.ahi) if has_lower else (b1.alo, b2.alo)
        g1, g2 = (b1.ahi, b2.ahi) if has_lower else (b1.ghi, b2.ghi)
        lo1, up1, L1, R1 = _sup_concave(b1.x, b1.alo, t1, al)
        lo2, up2, L2, R2 = _sup_concave(b2.x, b2.alo, t2, al)
        lower = np.maximum(np.maximum(lo1, lo2), 0.0)
        up1 = np.maximum(up1, b1.outside(al, t1))
        up2 = np.maximum(up2, b2.outside(al, t2))
        upper = np.maximum(np.maximum(up1, up2), 0.0)
        width = upper - lower
        # the stopping rule.  However fine the grid, the width stays at least the gap
        # between the upper and lower ends of A at the point that decides the lower band
        # (the profile's own accuracy there; 0 for a guide without a lower bound).  With
        # the gap read as the largest in the window L..R that decides the supremum (the
        # deciding point moves within it as the grid refines), a width of at most twice
        # the gap plus tol can shrink by about the gap plus tol only: refining further
        # cannot move the band by more than the profile's accuracy.  Where the
        # refinement stops is a matter of tightness only: the band is valid at any grid
        floor = np.where(lo1 >= lo2, _range_max(g1 - b1.alo, L1, R1),
                         _range_max(g2 - b2.alo, L2, R2))
        need = (width > tol) & (width > 2.0 * floor + tol)
        # a width that two rounds of refinement did not shrink by a tenth is the gap
        # between the profile's own upper and lower bounds (a numeric profile's
        # enclosure), which no grid closes: stop refining there (the band stays valid)
        if len(history) >= 2:
            need &= ~(width > 0.9 * history[-2])
        history.append(width)
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
      band (valid for any profile that bounds the mechanism's).  The upper band is a
      bound on the curve of the profile *as given*, so it bounds the mechanism's curve
      only when the profile is exact (not for a converted bound, e.g. from RDP).  It needs
      a *lower* bound of :math:`\delta` and a bound between grid points: for an exact
      profile, :math:`\delta(\log t)` is convex in :math:`t = e^\varepsilon` (a
      supremum of affine functions of :math:`t`), so each branch is a concave function
      of :math:`t` (resp. :math:`s = e^{-\varepsilon}`) and is bounded between grid
      points by the extensions of the neighbouring secants (error of order
      :math:`h^2`); the grid is refined where the band is wider than ``tol``, and no
      further where it is at most ``tol`` plus twice the gap between the profile's own
      upper and lower bounds at the points deciding it (a numeric profile's accuracy:
      no grid shrinks the width below that gap, so refining cannot move the band by more
      than the gap plus ``tol``).  A profile implied by a notion steers this by its
      source's own lower bound, which never enters the band.  If the
      enclosures disprove convexity the upper band falls back to the monotone bound
      (``method="conjugate, monotone"``); a numeric profile without
      ``log_delta_lower`` gives the trivial upper band :math:`1 - \alpha`
      (``"conjugate, lower only"``).  Mechanisms tagged by :mod:`symgdp.mechanisms`
      (``meta["mechanism"]``: Gaussian, Laplace, randomized response, pure DP) whose
      expression is still the tag's closed form, symbol for symbol (a copy made by
      ``Profile.replace(expr=...)`` keeps the tag but not the function), use their
      closed-form curves; any other profile takes the conjugate route.

    All values are rounded outward; the upper band never exceeds :math:`1 - \alpha`.  The
    conjugate's grid spans :math:`0 \le \varepsilon \le 700` (:math:`e^{\varepsilon}`
    within float64): a profile that is not negligible there (a Gaussian with
    :math:`\mu \gtrsim 37` given without its tag) gets a valid but loose band near
    :math:`\alpha = 0`.

    Args:
        profile_or_mu: a profile, or :math:`\mu \ge 0` (``inf`` allowed).
        alpha: type I error(s) in [0, 1]; scalar or array.
        tol: target width of the conjugate band (refinement stops there, at the
            profile's own accuracy plus ``tol``, or at ``max_points`` grid points; the
            band is certified wherever it stops).
        max_points: budget of profile evaluations for the conjugate band.

    Example:
        >>> b = band(1.0, [0.05, 0.5])
        >>> [round(float(v), 9) for v in b.lower], float(b.width.max()) < 1e-15
        ([0.740488977, 0.158655254], True)
    """
    scalar, a = _alpha(alpha)
    a = np.array(a, dtype=np.float64)
    mu = mu_value(profile_or_mu)
    if mu is not None:
        lo, up = _gdp_band(mu, a)
        return _pack(scalar, a, lo, up, "gdp", "mu-GDP: f = G_mu exactly")
    if not (tol > 0):
        raise DomainError(f"tol must be > 0, got {tol!r}")
    enclose, has_lower = enclosure(profile_or_mu)
    guide = None if has_lower else _guide(profile_or_mu)
    tag = _tag_checked(profile_or_mu, enclose) if has_lower else None
    if tag is not None and tag[0] == "gaussian" and tag[1].is_finite() and tag[1] > 0:
        lo, up = _gdp_band(tag[1], a)
        return _pack(scalar, a, lo, up, "gdp", _SYMMETRIC)
    if tag is not None and tag[0] != "gaussian":
        lo, up = _closed_form_band(tag[0], tag[1], a)
        return _pack(scalar, a, lo, up, f"closed form ({tag[0]})", _SYMMETRIC)
    lo, up, method = _conjugate_band(enclose, has_lower, a, tol, max_points, guide)
    up = np.minimum(up, widen_up(1.0 - a))
    return _pack(scalar, a, np.clip(lo, 0.0, 1.0), np.clip(up, 0.0, 1.0), method, _SYMMETRIC)
