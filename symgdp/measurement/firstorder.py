r"""First-order bounds of the GDPT on an interval, proved in ball arithmetic.

On :math:`[x, y]` the mechanism is :math:`\mu^+`-GDP on that stretch, i.e.
:math:`\sup_{[x,y]} G_A \le \mu^+`, iff

.. math:: h(\varepsilon) = \log\delta_A(\varepsilon) - \log\delta_{\mu^+}(\varepsilon) \le 0
          \quad\text{on } [x, y]

(:math:`\mu_{GDP}` is increasing in :math:`\delta`; Dong, Roth & Su 2021).  With an
enclosure :math:`h'([x, y]) \subseteq [H_-, H_+]` the mean-value theorem from both end
points gives :math:`h(x + t) \le \min(h(x) + H_+ t,\; h(y) - H_-(y - x - t))`, whose
maximum over :math:`t` is where the two lines cross.  Everything hinges on a *tight*
enclosure of :math:`h'` (a naive ball evaluation of a cancelling derivative over the
whole interval is useless), so it is assembled from pieces that are enclosed from their
end-point values wherever they are provably monotone:

* :math:`\partial\log\delta_\mu/\partial\varepsilon = -e^{\varepsilon}
  \Phi(-\varepsilon/\mu - \mu/2)/\delta_\mu(\varepsilon)` is non-increasing in
  :math:`\varepsilon`: :math:`\delta_\mu(\varepsilon) = \int_\varepsilon^\infty e^{t}
  \Phi(-t/\mu - \mu/2)\,dt` is the tail integral of a log-concave function, hence
  log-concave (Prékopa 1973; Bagnoli & Bergstrom 2005, Thm 3).  Its enclosure on
  :math:`[x, y]` is the two end-point values -- no dependency problem at all.
* The higher derivatives of :math:`\log\delta_\mu` (the Taylor bounds of order 2 to
  4) are cumulants of a Laplace transform, :math:`\log(\operatorname{erfcx}(z) -
  \operatorname{erfcx}(z + \mu/\sqrt2))`, built from moment ratios that are each
  monotone in :math:`z` (theory §11): plain ball arithmetic, no SymPy at run time.
* :math:`(\log\delta_A)'` is taken from the SymPy derivative of the log-expanded profile
  (per ``Piecewise`` branch; products and exponentials become sums, so e.g.
  :math:`B e^{-\sigma^2\varepsilon^2/A^2}` gives :math:`-2\sigma^2\varepsilon/A^2` with no
  cancellation), normalised so that exactly cancelling terms (the two
  :math:`\varphi` terms of the Gaussian profile's derivative) vanish symbolically.  Where
  the ball of :math:`(\log\delta_A)''` over :math:`[x, y]` has a sign, the enclosure is
  the hull of the end-point values; it is always intersected with the direct ball
  evaluation.

The same derivative proves the profile non-increasing on the interval
(:math:`\delta_A' \le 0` on the whole ball), which every bound of the measurement rests on.

Profiles built from ``Min``, ``Max`` and ``Piecewise`` are handled by their structure
(:mod:`symgdp.measurement.structure`); where the profile's erfcx form has a power-series
enclosure, the test first uses the Taylor form of order 12 of :math:`h` itself
(:mod:`symgdp.measurement.series`).

Implicit profiles (``LogDeltaRoot``) carry their implicit derivative
:math:`-h_\varepsilon/h_t`, and their root has a ball evaluation that proves it on the
whole ball (:func:`symgdp.symbolic.implicit.log_delta_root_arb`, theory §11), so they are handled
like any other profile.

:class:`FirstOrder` (the tests of :math:`h \le 0`) stands on three layers, one concern
each: ``_Enclosures`` (the profile and its derivatives at points and on balls),
``_SeriesTest`` (the high-order Taylor test) and ``_MonotoneTest`` (the proof that the
profile is non-increasing on an interval).
"""

from __future__ import annotations

import math
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.evaluation.interval import delta_mu_arb, kept_params, lambdify_arb
from symgdp.gaussian.gdp_balls import erfc_form
from symgdp.measurement.compiled import _compiled, _param_ball, _shared_form, _value_free
from symgdp.measurement.derivatives import _gauss_l, dlog_delta_mu_arb
from symgdp.measurement.forms import _PREC, _doit_finite, heaviside_steps
from symgdp.measurement.result import check_time_limit
from symgdp.measurement.series import (
    _SERIES_FIRST,
    _SERIES_ORDER,
    _gauss_log_series,
    _poly_max,
    _profile_series,
    _series_at,
    _series_point,
)
from symgdp.measurement.structure import _positive, _split_points

__all__ = ["FirstOrder"]

#: largest log-factor by which a leaf may rise within rounding (see FirstOrder.rise)
MAX_RISE = 1e-12
#: largest absolute rise of delta allowed on a leaf one float64 ulp wide (FirstOrder.rise)
_ULP_EXCESS = 2.0**-60
_PRECISIONS = (64, 128, 256, 512, 1024)
# relative radius of a point value of delta above which the precision is raised
_POINT_RTOL = 1e-6


class _Enclosures:
    r"""The profile and its derivatives at points and on balls, cached: the enclosures
    every test of :class:`FirstOrder` is built from (:math:`\delta`,
    :math:`\log\delta`, :math:`(\log\delta)'` and :math:`\log\delta_\mu` with its
    derivative), and where the profile may jump (:meth:`smooth`)."""

    def _setup(self, compiled: tuple, pvals: tuple, branch_points: tuple[float, ...],
               downs: list, jumps: list) -> None:
        (self._f, self._d1, self._d1_terms, self._l1, self._l2,
         self._parts, self._structure, self._higher) = compiled
        self._pvals = pvals
        self.branch_points = branch_points
        self._downs, self._jumps = downs, jumps
        self._cache: dict[tuple[float, int], arb] = {}
        self._lcache: dict[float, arb] = {}
        self._on_cache: dict[tuple[float, float], tuple[arb, arb]] = {}
        self._dcache: dict[float, arb] = {}
        self._direct_cache: dict[tuple[float, float], arb] = {}
        self._gauss_mu = math.nan
        self._gauss_cache: dict[Any, Any] = {}
        self.count = 0
        self.ball_count = 0

    def _call(self, f: Any, x: Any) -> arb:
        self.ball_count += 1
        check_time_limit()
        try:
            v = f(x, *(arb(p) if not isinstance(p, arb) else p for p in self._pvals))
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return arb("nan")
        return v

    def delta(self, x: float) -> arb:
        """Ball of the profile at the point ``x`` (values above 1 read as 1), with the
        precision raised until it is 1e-6 relative (or exactly 0)."""
        for prec in _PRECISIONS:
            key = (x, prec)
            v = self._cache.get(key)
            if v is None:
                with ctx.workprec(prec):
                    v = self._call(self._f, arb(x))
                    v = v.min(arb(1)) if v.is_finite() else v
                self.count += 1
                self._cache[key] = v
            if v.is_exact() or (v.is_finite() and _positive(v)
                                and v.rad() <= _POINT_RTOL * abs(v.mid())):
                return v
        assert v is not None  # set by the loop (_PRECISIONS is not empty)
        return v

    def log_delta(self, x: float) -> arb:
        """Ball of log delta(x); ``arb('-inf')`` for an exact zero, NaN if undecided."""
        v = self._lcache.get(x)
        if v is None:
            d = self.delta(x)
            if d.is_exact() and d.is_zero():
                v = arb("-inf")
            elif _positive(d):
                v = d.log()
            else:
                v = arb("nan")
            self._lcache[x] = v
        return v

    def dlog(self, x: float) -> arb:
        r"""Ball of :math:`(\log\delta)'` at the point ``x``."""
        v = self._dcache.get(x)
        if v is None:
            with ctx.workprec(_PREC):
                v = self._dcache[x] = self._call(self._l1, arb(x))
        return v

    @staticmethod
    def _ball(x: float, y: float) -> arb:
        # midpoint and radius as floats, the radius rounded up: usually the exact [x, y]
        # (so that e.g. -2*eps on [0, w] is <= 0 without a rounding excess)
        m = 0.5 * (x + y)
        r = max(m - x, y - m)
        b = arb(m, r)
        if not (b.lower() <= x and b.upper() >= y):
            b = arb(m, math.nextafter(r, math.inf) * (1 + 2.0**-50))
        return b

    def smooth(self, x: float, y: float, first_order: bool = False) -> bool:
        """No possible jump of the profile inside ``[x, y]`` (every Piecewise condition
        and Heaviside argument decided on the ball, except at checked continuous branch
        points, and, unless ``first_order``, checked downward jumps): derivative
        arguments hold there."""
        if first_order and self._downs:
            ball = self._ball(x, y)
            if any(ball.overlaps(c) for c in self._downs):
                return False
        if not self._jumps:
            return True
        with ctx.workprec(_PREC):
            ball = self._ball(x, y)
            for j in self._jumps:
                self.ball_count += 1
                try:
                    v = j(ball)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return False
                if not (v.is_finite() and (v > 0 or v < 0)):
                    return False
        return True

    def dlog_on(self, x: float, y: float) -> arb:
        r"""Enclosure of :math:`(\log\delta)'` on ``[x, y]``: the direct ball evaluation,
        intersected with the hull of the end-point values where
        :math:`(\log\delta)''` has a sign on the ball."""
        return self._on(x, y)[0]

    def _on(self, x: float, y: float) -> tuple[arb, arb]:
        v = self._on_cache.get((x, y))
        if v is None:
            v = self._on_cache[(x, y)] = self._dlog_on(x, y)
        return v

    def _direct(self, x: float, y: float) -> arb:
        v = self._direct_cache.get((x, y))
        if v is None:
            with ctx.workprec(_PREC):
                v = self._direct_cache[(x, y)] = self._call(self._l1, self._ball(x, y))
        return v

    def _gauss(self, x: float, mu: float) -> tuple[arb, arb]:
        """log delta_mu(x) and its derivative in x (balls; cached for the current mu)."""
        if mu != self._gauss_mu:
            self._gauss_mu, self._gauss_cache = mu, {}
        v = self._gauss_cache.get(x)
        if v is None:
            with ctx.workprec(_PREC):
                g = delta_mu_arb(x, mu)
                lg = g.log() if _positive(g) else arb("nan")
                v = self._gauss_cache[x] = (lg, dlog_delta_mu_arb(x, mu))
        return v

    def _dlog_on(self, x: float, y: float) -> tuple[arb, arb]:
        with ctx.workprec(_PREC):
            ball = self._ball(x, y)
            direct = self._direct(x, y)
            second = self._call(self._l2, ball)
            if second.is_finite() and (second <= 0 or second >= 0):
                lx, ly = self.dlog(x), self.dlog(y)
                if lx.is_finite() and ly.is_finite():
                    hull = lx.union(ly)
                    if not direct.is_finite():
                        return hull, second
                    if direct.overlaps(hull):
                        return direct.intersection(hull), second
                    # two valid enclosures that do not meet: trust neither
                    return arb("nan"), arb("nan")
            return direct, second


class _SeriesTest(_Enclosures):
    r"""The high-order test: Taylor series of :math:`h` of order 12 about the end points
    of an interval (:mod:`symgdp.measurement.series`), and the order-1 series as a
    monotonicity proof."""

    #: the profile whose log-series the high-order test uses (see use_series)
    _series_profile: Any = None
    _series_state: Any = None
    #: proofs in a row by the series test where the mean-value tests failed: from
    #: _SERIES_FIRST on, the series test is tried first (the order of the tests only)
    _series_wins = 0

    def use_series(self, profile: Any) -> None:
        r"""Let :meth:`prove_below` use Taylor series of :math:`h` of high order (built
        lazily from ``profile``'s SymPy expression on first need): the test that keeps a
        nearly Gaussian profile's flat GDPT from being split into tiny intervals."""
        if hasattr(profile, "bound_expr"):
            self._series_profile, self._series_state = profile, None

    def _series(self) -> tuple[Any, tuple[arb, ...], dict] | None:
        if self._series_state is None:
            self._series_state = False
            p = self._series_profile
            if p is not None:
                fn, pvals = _profile_series(p)
                if fn is not None:
                    self._series_state = (fn, pvals, {})
        return self._series_state or None

    def _series_nonincreasing(self, x: float, y: float) -> bool:
        r""":math:`(\log\delta)' \le 0` on the whole ball of ``[x, y]`` from the series
        (order 1) of the log-profile there: finite, it also proves :math:`\delta > 0`."""
        st = self._series()
        if st is None:
            return False
        fn, pvals, cache = st
        with ctx.workprec(_PREC):
            self.ball_count += 1
            c = _series_at(fn, self._ball(x, y), 1, pvals, cache, (arb(x), arb(y)))
        return bool(c[0].is_finite() and c[1].is_finite() and c[1] <= 0)

    def _series_below(self, x: float, y: float, mu: float) -> bool | None:
        r""":math:`h \le 0` on ``[x, y]`` from the Taylor polynomials of :math:`h` about
        both end points (point coefficients), the one about x on ``[x, m]`` and the one
        about y on ``[m, y]`` (m the midpoint), with the Lagrange remainder (the order-n
        coefficient enclosed on the whole ball) -- as tight as the expansion about the
        midpoint with the same reach, and the end points' coefficients are shared with
        the intervals around (the search's neighbours and children); ``None`` where no
        series is available."""
        st = self._series()
        if st is None:
            return None
        fn, pvals, cache = st
        m = 0.5 * (x + y)
        if not x < m < y:
            return False
        gauss = _gauss_log_series()
        n = _SERIES_ORDER
        with ctx.workprec(_PREC):
            amu = (arb(mu),)
            ax, ay, am = arb(x), arb(y), arb(m)
            # float enclosures (one ulp outward) of [0, m - x] and [m - y, 0]: the two
            # reaches cover [x, y]
            hx = math.nextafter(float((am - ax).upper()), math.inf)
            hy = math.nextafter(float((am - ay).lower()), -math.inf)
            sup: arb | None = None
            for e, t0, t1 in ((x, 0.0, hx), (y, hy, 0.0)):
                a = _series_point(fn, "a", e, n, pvals, cache)
                b = _series_point(gauss, "g", e, n, amu, cache)
                if not all(v.is_finite() for v in a + b):
                    return None
                c = [u - v for u, v in zip(a[:n], b[:n], strict=True)]
                if not c[0] < 0:
                    return False
                side = _poly_max(c, t0, t1)
                if not side < 0:
                    return False  # a Taylor polynomial alone reaches 0
                sup = side if sup is None else sup.max(side)
            self.ball_count += 2
            ball, ends = self._ball(x, y), (ax, ay)
            top = _series_at(fn, ball, n, pvals, cache, ends)[n] - _series_at(
                gauss, ball, n, amu, cache, ends)[n]
            if not top.is_finite():
                return None
            r = arb(hx).max(arb(-hy))
            assert sup is not None  # set by both passes of the loop above (or returned)
            return bool(sup + abs(top) * r**n <= 0)


class _MonotoneTest(_SeriesTest):
    r"""The proof that the profile is non-increasing on an interval (up to a bounded
    rounding excess, :meth:`rise`), from its structure, the series, the derivative
    :math:`\delta'` and :math:`(\log\delta)'` on the ball."""

    def nonincreasing(self, x: float, y: float) -> bool:
        r"""Proved non-increasing on ``[x, y]`` up to rounding: see :meth:`rise`."""
        return self.rise(x, y) is not None

    def rise(self, x: float, y: float, depth: int = 3) -> tuple[float, float] | None:
        r"""Proved bounds ``(tau, add)`` with :math:`\delta(\varepsilon) \le
        \delta(x)\,e^{\tau} + \mathrm{add}` on ``[x, y]``, or ``None``.

        ``(0, 0)`` when :math:`\delta' \le 0` is proved on the whole ball.  A ball that
        touches a zero of the derivative (:math:`e^{-\varepsilon^2}` at 0, a kink where
        the profile reaches 0) cannot be proved :math:`\le 0` exactly in midpoint-radius
        arithmetic: there the rounding excess is bounded instead, by ``tau`` from
        :math:`(\log\delta)' \le \tau/(y - x)` (at most ``MAX_RISE``) or by ``add`` from
        :math:`\delta' \le \mathrm{add}/(y - x)` (an excess below :math:`2^{-26}` of the
        derivative's size).  The zeroth-order bound uses the inflated value.  The ball is
        halved up to ``depth`` times where a wide ball decides nothing."""
        r = self._rise(x, y)
        if r is not None:
            return r
        m = 0.5 * (x + y)
        if depth <= 0 or not x < m < y:
            return None
        r1 = self.rise(x, m, depth - 1)
        if r1 is None:
            return None
        r2 = self.rise(m, y, depth - 1)
        if r2 is None:
            return None
        # delta(m) <= delta(x) e^t1 + a1, then delta <= delta(m) e^t2 + a2 on [m, y]
        tau = r1[0] + r2[0]
        add = (r1[1] * math.exp(r2[0]) + r2[1]) * (1 + 2.0**-40) if (r1[1] or r2[1]) else 0.0
        if tau > MAX_RISE:
            return None
        return tau, add

    def _rise(self, x: float, y: float) -> tuple[float, float] | None:
        if getattr(self, "monotone_by", None):
            # the profile is the exact hockey-stick divergence of a pair (a theorem of the
            # route that derived it, for this very expression): non-increasing in eps
            return 0.0, 0.0
        if self._series_state and self._series_nonincreasing(x, y):
            return 0.0, 0.0
        if self._structure is not None:
            self.ball_count += 1
            if self._structure.prove(self._ball(x, y), self._pvals):
                return 0.0, 0.0
        if not self.smooth(x, y):
            return None
        near: arb | None = None
        with ctx.workprec(_PREC):
            ball = self._ball(x, y)
            d = self._call(self._d1, ball)
            if d.is_finite() and d <= 0:
                return 0.0, 0.0
            if self._terms_nonpositive(ball) or self._parts_nonincreasing(ball):
                return 0.0, 0.0
            if d.is_finite() and d.upper() <= abs(d.lower()) * 2.0**-26:
                near = arb(d.upper()) * (arb(y) - arb(x))
            elif d.is_finite() and not x < 0.5 * (x + y) < y:
                # one float64 ulp wide, which no split narrows: at a continuous branch
                # point where a branch stops (the logistic profile reaching 0 at eps0,
                # to second order) the ball reaches across it and holds the other
                # branch's rise; the mean-value excess is bounded absolutely instead
                excess = arb(d.upper()).max(arb(0)) * (arb(y) - arb(x))
                if excess.upper() <= _ULP_EXCESS:
                    near = excess
        if _positive(self.delta(x)):
            # (log delta)' finite on the ball: delta keeps its sign there
            for da in (self._direct(x, y), self.dlog_on(x, y)):
                if da.is_finite():
                    with ctx.workprec(_PREC):
                        if da <= 0:
                            return 0.0, 0.0
                        tau = arb(da.upper()) * (arb(y) - arb(x))
                        if tau <= MAX_RISE:
                            return float(tau.upper()) * (1 + 2.0**-40), 0.0
        if near is not None:
            return 0.0, float(near.upper()) * (1 + 2.0**-40)
        with ctx.workprec(_PREC):
            v = self._call(self._f, self._ball(x, y))
            return (0.0, 0.0) if (v.is_finite() and v >= 1) else None

    def _parts_nonincreasing(self, ball: arb) -> bool:
        # Max/Min/sums of non-increasing parts are non-increasing
        if self._parts is None:
            return False
        self.ball_count += 1
        try:
            vals = self._parts(ball, *self._pvals)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return False
        return all(v.is_finite() and v <= 0 for v in vals)

    def _terms_nonpositive(self, ball: arb) -> bool:
        # delta' = sum of H(u) * g terms with H in [0, 1]: each g <= 0 (or H = 0) suffices
        if not self._d1_terms:
            return False
        fn, counts = self._d1_terms[0]
        self.ball_count += 1
        try:
            vals = fn(ball, *self._pvals)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return False
        rests, hvals = vals[:len(counts)], vals[len(counts):]
        k = 0
        for g, c in zip(rests, counts, strict=True):
            hs, k = hvals[k:k + c], k + c
            if any(bool(h < 0) for h in hs):
                continue
            if not (g.is_finite() and g <= 0):
                return False
        return True

    def rising_at(self, x: float) -> bool:
        r"""Proved :math:`\delta'(x) > 0` at the point ``x`` (with :math:`\delta(x) < 1`)."""
        with ctx.workprec(_PREC):
            d = self._call(self._d1, arb(x))
        return bool(d.is_finite() and d > 0 and self.delta(x) < 1)


class FirstOrder(_MonotoneTest):
    r"""Ball-arithmetic first-order machinery for one profile.

    Args:
        profile: a :class:`~symgdp.profile.Profile` with every parameter bound.
        timeout: budget (seconds) for the symbolic differentiation.

    Raises:
        ArbUnsupported: no ball evaluation of the profile or its derivative.

    Example:
        >>> from symgdp import mechanisms
        >>> fo = FirstOrder(mechanisms.laplace(1.0))
        >>> fo.nonincreasing(0.0, 0.5)
        True
        >>> fo.prove_below(0.0, 0.5, 1.1)   # sup G on [0, 0.5] <= 1.1 (it is 1.0300...)
        True
        >>> fo.prove_below(0.0, 0.5, 1.0)
        False
    """

    def __init__(self, profile: Any, *, timeout: float | None = None) -> None:
        profile.require_bound()
        var = profile.var
        values = [(s, sympy.sympify(v)) for s, v in profile.values.items()]
        if any(set(v.free_symbols) for _, v in values):
            expr, floats = profile.bound_expr, []
        else:
            # exact parameters substituted; Float parameters stay symbols fed as exact
            # balls (substituting them would let SymPy round exp(Float) to 53 bits), and
            # so do rational ones where the symbolic preparation cannot depend on their
            # values (see kept_params, _value_free), so that every point of a parameter
            # grid shares one compile
            floats = list(kept_params(profile.expr, values, _value_free(profile.expr)))
            kept = {s for s, _ in floats}
            expr = profile.expr.xreplace({s: v for s, v in values if s not in kept})
        params = tuple(s for s, _ in floats)
        pvals = tuple(_param_ball(v) for _, v in floats)
        # 1 - erf(u) as erfc(u): exact, and its ball (and its derivative's) keeps its sign
        # where erf(u) is near 1 (the erf form straddles 0 there and proves nothing)
        expr = heaviside_steps(erfc_form(expr), var)
        # decimal literals as symbols fed as exact values: profiles that differ only in
        # them (a refined profile at two parameter points) share the compiled functions
        expr, csyms, cvals = _shared_form(expr, var, params)
        compiled = _compiled(expr, var, params + csyms, timeout)
        pvals += cvals
        # branch points and possible jumps, with every parameter value in place
        points, downs, jumps = _split_points(
            heaviside_steps(_doit_finite(profile.bound_expr), var), var)
        with ctx.workprec(_PREC):
            # a downward jump keeps the profile non-increasing, but no mean-value bound
            # may cross it (or end on it: the value there is not the left limit)
            down_balls = [lambdify_arb(c, var)(0) for c in downs]
        self._setup(compiled, pvals, tuple(sorted(float(c) for c in points + downs)),
                    down_balls, [lambdify_arb(j, var) for j in jumps])
        #: why the profile is non-increasing without a ball proof: a derivation route's
        #: ``meta["hockey_stick"] = (expr, reason)`` for exactly this expression (an
        #: exact H_{e^eps}(P || Q) is non-increasing in eps); else None
        claim = getattr(profile, "meta", {}).get("hockey_stick")
        self.monotone_by = claim[1] if (isinstance(claim, tuple) and len(claim) == 2
                                        and claim[0] == profile.expr) else None

    @classmethod
    def from_balls(cls, f: Any, d1: Any, l1: Any, l2: Any, *, parts: Any = None,
                   branch_points: tuple[float, ...] = ()) -> FirstOrder:
        r"""The same machinery on ball functions supplied by the caller (no symbolic work).

        For a profile whose enclosures are known in closed form (e.g. the exact pieces of
        the k-fold composition): ``f``, ``d1``, ``l1``, ``l2`` map a ball of
        :math:`\varepsilon` to enclosures of :math:`\delta`, :math:`\delta'`,
        :math:`(\log\delta)'` and :math:`(\log\delta)''` on it; ``parts`` (optional)
        to the enclosures of :math:`\delta'` on each smooth part, for the monotonicity
        proof; ``branch_points`` split the search.  Higher Taylor orders are not used.
        """
        self = cls.__new__(cls)
        self._setup((f, d1, [], l1, l2, parts, None, ()), (), tuple(branch_points), [], [])
        return self

    def prove_below(self, x: float, y: float, mu: float) -> bool:
        r"""Prove :math:`\sup_{[x, y]} G \le \mu` by the mean-value bound of
        :math:`h = \log\delta_A - \log\delta_\mu` from both end points, or else by its
        second-order Taylor bound about the midpoint (``False`` = not proved)."""
        if not (0 <= x < y) or not (mu > 0) or math.isinf(mu):
            return False
        if not self.smooth(x, y, first_order=True):
            return False
        dx = self.delta(x)
        if dx.is_exact() and dx.is_zero():
            return True  # delta(x) = 0 exactly: 0 on [x, inf) for a non-increasing profile
        la, lb = self.log_delta(x), self.log_delta(y)
        if not (la.is_finite() and lb.is_finite()):
            return False
        (lgx, dmx), (lgy, dmy) = self._gauss(x, mu), self._gauss(y, mu)
        if not all(v.is_finite() for v in (lgx, dmx, lgy, dmy)):
            return False
        with ctx.workprec(_PREC):
            hx, hy = la - lgx, lb - lgy
            if hx > 0 or hy > 0:
                return False
        first = self._series_wins >= _SERIES_FIRST
        high = self._series_below(x, y, mu) if first else None
        if high:
            return True
        da = self._direct(x, y)
        if da.is_finite() and self._mean_value_below(x, y, hx, hy, dmx, dmy, da):
            self._series_wins = 0
            return True
        da, d2a = self._on(x, y)
        if da.is_finite() and self._mean_value_below(x, y, hx, hy, dmx, dmy, da):
            self._series_wins = 0
            return True
        if not first:
            high = self._series_below(x, y, mu)
            if high:
                self._series_wins += 1
        if high is not None:
            return high
        return self._taylor_below(x, y, mu, d2a) or any(
            self._taylor_k_below(x, y, mu, k) for k in (3, 4))

    @staticmethod
    def _mean_value_below(x: float, y: float, hx: arb, hy: arb, dmx: arb, dmy: arb,
                          da: arb) -> bool:
        with ctx.workprec(_PREC):
            # -dlog delta_mu is non-decreasing: on [x, y] it lies in [-dmx, -dmy]
            h_hi = arb(da.upper()) - arb(dmy.lower())
            h_lo = arb(da.lower()) - arb(dmx.upper())
            w = arb(y) - arb(x)
            if h_hi <= 0:
                bound = hx
            elif h_lo >= 0:
                bound = hy
            else:
                # the two mean-value lines cross at t*; any t in [0, w] gives
                # sup h <= max(hx + H+ t, hy - H- (w - t))
                hi, lo = float(h_hi.mid()), float(h_lo.mid())
                t = (float(hy.mid()) - float(hx.mid()) - lo * float(w.mid())) / (hi - lo)
                t = min(max(t, 0.0), float(w.mid()))
                ta = arb(t)
                bound = (hx + h_hi * ta).max(hy - h_lo * (w - ta))
            return bool(bound <= 0)

    def _taylor_below(self, x: float, y: float, mu: float, d2a: arb) -> bool:
        # h(m + t) <= h(m) + h'(m) t + C t^2 with C = sup h''/2 on [x, y]
        if not d2a.is_finite():
            return False
        m = 0.5 * (x + y)
        if not x < m < y:
            return False
        lm = self.log_delta(m)
        dm = self.dlog(m)
        if not (lm.is_finite() and dm.is_finite()):
            return False
        lgm, dgm = self._gauss(m, mu)
        if not (lgm.is_finite() and dgm.is_finite()):
            return False
        with ctx.workprec(_PREC):
            d2mu = _gauss_l(2, self._ball(x, y), mu)
            if not d2mu.is_finite():
                return False
            c0 = lm - lgm
            c1 = dm - dgm
            c = arb((d2a - d2mu).upper()) / 2
            tl, tr = arb(x) - arb(m), arb(y) - arb(m)
            if c < 0:
                bound = c0 - c1 * c1 / (4 * c)
            else:
                bound = (c0 + c1 * tl + c * tl * tl).max(c0 + c1 * tr + c * tr * tr)
            return bool(bound <= 0)


    def _taylor_k_below(self, x: float, y: float, mu: float, k: int) -> bool:
        # h(m + t) <= sum_{j<k} h^(j)(m) t^j / j! + K |t|^k with K = sup |h^(k)| / k! on
        # [x, y]: the point values at m are tight (for a flat GDPT they cancel there),
        # and the wide ball of h^(k) only enters with the k-th power of the half-width
        m = 0.5 * (x + y)
        if not x < m < y or len(self._higher) < k - 2:
            return False
        with ctx.workprec(_PREC):
            ball, am, amu = self._ball(x, y), arb(m), arb(mu)
            top = self._call(self._higher[k - 3], ball)
            if not top.is_finite():
                return False
            top = top - _gauss_l(k, ball, amu)
            lm, dm = self.log_delta(m), self.dlog(m)
            lgm, dgm = self._gauss(m, mu)
            coeffs = [lm - lgm, dm - dgm,
                      (self._call(self._l2, am) - _gauss_l(2, am, amu)) / 2]
            for j in range(3, k):
                hj = self._call(self._higher[j - 3], am) - _gauss_l(j, am, amu)
                coeffs.append(hj / math.factorial(j))
            if not (top.is_finite() and all(v.is_finite() for v in coeffs)):
                return False
            c0, c1, c2 = coeffs[:3]
            r = arb(max(m - x, y - m))
            # sup of c1 t + c2 t^2 on [-r, r]: crude, and the vertex value when c2 < 0
            quad = abs(c1) * r + c2.max(arb(0)) * r * r
            if c2 < 0:
                quad = quad.min(-c1 * c1 / (4 * c2))
            bound = c0 + arb(quad.upper())
            for j, cj in enumerate(coeffs[3:], start=3):
                bound += abs(cj) * r**j
            bound += arb(abs(top).upper()) / math.factorial(k) * r**k
            return bool(bound <= 0)
