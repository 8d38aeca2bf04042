r"""Calibrating a free parameter of a mechanism to a target GDP parameter.

"How much noise do I need for 1-GDP?"  :func:`calibrate` answers with the smallest (or
largest) value :math:`\theta` of a free parameter of a profile — a noise scale, a sampling
rate, a number of steps — whose *measured* GDP bracket satisfies

.. math:: \text{upper}(\theta) \le \mu_{\text{target}},

so the returned value is guaranteed on the safe side: the mechanism with that value is
:math:`(\varepsilon_h, \mu_{\text{target}})`-head GDP (fully :math:`\mu_{\text{target}}`-GDP
when the profile is 0 beyond :math:`\varepsilon_h`), and the measurement that proves it is
returned with it.

**Direction.**  Whether "safe" means "large" or "small" is detected, not assumed: the two
ends of the search interval are measured and the end whose guaranteed upper bound meets the
target is the safe one.  A noise scale is *decreasing* (more noise, smaller
:math:`\mu`: the smallest safe value is returned); a sampling rate, a number of steps or a
privacy budget :math:`\varepsilon_0` is *increasing* (the largest safe value is returned).
The search assumes :math:`\mu` is monotone in the parameter between the two ends (true for
each of these, because the GDPT is order preserving and the profile moves monotonically
with the parameter); every pair of measured points is checked against that assumption and a
contradiction is an error, never a silent answer.

**Search.**  Every decision uses a guaranteed bracket, never a point estimate: a point is
*safe* when its upper bound is :math:`\le \mu_{\text{target}}` and *proven unsafe* when its
lower bound is above.  The search keeps one safe and one not-safe end and closes in on the
boundary by regula falsi (Illinois variant, in :math:`\log\theta` and :math:`\log\mu` for a
positive parameter, so the Gaussian mechanism's :math:`\mu = \Delta/\sigma` is found in one
step) with a bisection safeguard, until the ends are within ``rtol`` of each other; a
step predicted within ``rtol/2`` of an end is placed ``rtol/2`` from it, which closes the
search whichever side it falls on.  Without a ``bracket`` the walk from the starting value
doubles or halves it, or steps to where the secant through its last two measurements
meets the target when that lies within the doubling (halving) step.  The
returned ``bracket`` contains the exact calibration (the value with
:math:`\mu = \mu_{\text{target}}`): one end is safe, the other proven unsafe.

**Other targets.**  ``target=(eps, delta)`` asks for :math:`(\varepsilon,\delta)`-DP through
the GDP profile: :math:`\mu_{\text{target}}` is :math:`\mu_{GDP}(\varepsilon,\delta)`
rounded down (proved in ball arithmetic), since a :math:`\mu`-GDP mechanism is
:math:`(\varepsilon, \delta_\mu(\varepsilon))`-DP (Dong, Roth & Su 2021).  For the Gaussian
mechanism this is exact (the analytic Gaussian mechanism, Balle & Wang 2018); for other
mechanisms it asks for the whole curve :math:`\delta_\mu` and is conservative.  A trade-off
equation :math:`\sigma = f(\varepsilon, \delta)` with ``target=(eps, delta)`` takes the direct
route instead: the least noise that gives :math:`(\varepsilon, \delta)` through the partial
order (:func:`symgdp.refinement.utility.refine_calibration`), rounded up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy

from symgdp.contracts import MeasureMethod
from symgdp.errors import ConvergenceError, DomainError, PrecisionError, ProfileError, SymgdpError
from symgdp.measurement.measure import Measurement, measure
from symgdp.numerics.decimals import json_number
from symgdp.profile import Profile
from symgdp.symbolic.symbols import normalise_values

__all__ = ["CalibrationResult", "calibrate", "mu_target"]

_DIRECTIONS = ("decreasing", "increasing")
# Largest number of doublings/halvings when no bracket is given (2**60 ~ 1e18).
_MAX_WALK = 60


@dataclass(frozen=True, slots=True)
class CalibrationResult:
    r"""What :func:`calibrate` found.

    Attributes:
        parameter: name of the calibrated parameter.
        value: the calibrated value, on the safe side (a float, or an int for an integer
            parameter).
        measurement: the measurement at ``value`` (``measurement.upper <= target_mu``);
            for the trade-off route, the measurement of the mechanism at ``value`` (for
            information: that route's guarantee is the designer's equation).
        target_mu: the target :math:`\mu` (for ``target=(eps, delta)``, the proved lower
            value of :math:`\mu_{GDP}(\varepsilon,\delta)`; ``None`` on the trade-off route).
        direction: ``"decreasing"`` when :math:`\mu` falls as the parameter grows (noise:
            ``value`` is the smallest safe value) or ``"increasing"`` (``value`` is the
            largest safe value).
        bracket: ``(low, high)`` containing the exact calibration, one end safe (``value``)
            and the other proven unsafe (assuming :math:`\mu` monotone in the parameter).
        route: ``"measure"`` (bisection on measured brackets) or ``"tradeoff"``.
        target: the ``(eps, delta)`` target, when one was given.
        measurements: number of measurements the search used.
        seconds: wall time.
        notes: remarks on how the result was obtained.
        floorless: the profile is a composition without a floor (a step without a
            proved lower side, e.g. a subsampled Laplace profile; the composition's notes
            name it): the unsafe end of ``bracket`` and ``measurement.lower`` then bound
            what the composed *upper* profile proves, not the mechanism, whose exact
            calibration may lie beyond the unsafe end (a value the composition cannot
            prove safe may be safe for the mechanism); ``value`` is safe either way.
    """

    parameter: str
    value: float | int
    measurement: Measurement | None
    target_mu: float | None
    direction: str
    bracket: tuple[float, float]
    route: str = "measure"
    target: tuple[float, float] | None = None
    measurements: int = 0
    seconds: float = field(default=math.nan, compare=False)
    notes: tuple[str, ...] = ()
    floorless: bool = False

    def __post_init__(self) -> None:
        if self.direction not in _DIRECTIONS:
            raise DomainError(f"direction must be one of {_DIRECTIONS}, got {self.direction!r}")
        lo, hi = self.bracket
        if not lo <= self.value <= hi:
            raise DomainError(f"value {self.value!r} outside its bracket {self.bracket!r}")

    def __str__(self) -> str:
        side = "smallest" if self.direction == "decreasing" else "largest"
        goal = (f"mu <= {self.target_mu:.10g}" if self.target_mu is not None
                else f"(eps, delta) = {self.target}")
        m = self.measurement
        lo, hi = self.bracket
        if self.floorless:
            # no floor: the unsafe end and the lower mu bound the composed upper profile
            got = "" if m is None else (f"; the composed upper profile's mu in "
                                        f"[{m.lower:.10g}, {m.upper:.10g}]")
            unsafe = lo if self.value == hi else hi
            return (f"{self.parameter} = {self.value!r} ({side} value this composition "
                    f"proves safe for {goal}, in [{lo:.12g}, {hi:.12g}]; the composition has "
                    f"no floor: at {unsafe:.12g} only its upper profile is proved to miss "
                    f"the target, and the mechanism's own calibration may lie beyond{got})")
        got = "" if m is None else f"; measured mu in [{m.lower:.10g}, {m.upper:.10g}]"
        return (f"{self.parameter} = {self.value!r} ({side} safe value for {goal}; exact "
                f"calibration in [{lo:.12g}, {hi:.12g}]{got})")

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (infinities as the string ``"inf"``)."""
        m = self.measurement
        return {
            "parameter": self.parameter, "value": json_number(self.value),
            "direction": self.direction, "route": self.route,
            "target_mu": json_number(self.target_mu),
            "target": None if self.target is None else list(self.target),
            "bracket": [json_number(b) for b in self.bracket],
            "mu_lower": None if m is None else json_number(m.lower),
            "mu_upper": None if m is None else json_number(m.upper),
            "certified": None if m is None else m.certified,
            "covers_tail": None if m is None else m.covers_tail,
            "eps_h": None if m is None else m.eps_h,
            "measurements": self.measurements, "notes": list(self.notes),
            "floorless": self.floorless,
        }




# ---------------------------------------------------------------------------------------
# targets


def mu_target(eps: float, delta: float) -> float:
    r"""The largest float :math:`\mu` proved (in ball arithmetic) to satisfy
    :math:`\delta_\mu(\varepsilon) \le \delta`: a :math:`\mu`-GDP mechanism with this
    :math:`\mu` is :math:`(\varepsilon, \delta)`-DP.

    Example:
        >>> from symgdp import delta_mu
        >>> m = mu_target(1.0, 1e-5)
        >>> round(m, 6), bool(delta_mu(1.0, m) <= 1e-5)
        (0.268051, True)
    """
    from flint import arb

    from symgdp.evaluation.interval import delta_mu_arb, le3, prove
    from symgdp.gaussian.vectorised import mu_gdp

    e, d = float(eps), float(delta)
    if not (math.isfinite(e) and e >= 0):
        raise DomainError(f"the target eps must be a finite number >= 0, got {eps!r}")
    if not (0 < d < 1):
        raise DomainError(f"the target delta must lie in (0, 1), got {delta!r}")
    mu = float(mu_gdp(e, d, rounding="down"))
    if not (math.isfinite(mu) and mu > 0):
        raise DomainError(f"no positive mu has delta_mu({e!r}) <= {d!r}")
    step = mu * 2.0**-50
    for _ in range(60):
        if prove(lambda: le3(delta_mu_arb(e, mu), arb(d))):  # noqa: B023 (prove calls it now)
            return mu
        mu -= step
        step *= 2.0
    raise PrecisionError(f"could not prove delta_mu({e!r}) <= {d!r} for any mu near "
                         f"{float(mu_gdp(e, d))!r}")


# ---------------------------------------------------------------------------------------
# the measured route


def _is_equation(profile: Any) -> bool:
    return isinstance(profile, sympy.Eq) or (
        isinstance(profile, str) and "=" in profile.replace("<=", "").replace(">=", ""))


def _as_profile(profile: Any, values: Mapping[Any, Any] | None) -> Profile:
    if hasattr(profile, "bind") and hasattr(profile, "unbound_symbols"):
        # a lazy composition (symgdp.compose with a free parameter): bound per point
        return profile if not values else profile.replace(values=dict(values))
    if isinstance(profile, Profile):
        if not values:
            return profile
        return profile.replace(values={**profile.values, **normalise_values(
            profile.expr, values)})
    if _is_equation(profile):
        return Profile.from_tradeoff(profile, values)
    if isinstance(profile, str):
        return Profile.parse(profile, values)
    raise ProfileError(f"calibrate needs a Profile, a profile string or a trade-off "
                       f"equation, got {profile!r}")


def _find_symbol(p: Profile, parameter: Any) -> sympy.Symbol:
    name = parameter.name if isinstance(parameter, sympy.Symbol) else str(parameter)
    # the profile's own symbol of that name, or a bound symbol (parsing aliases, e.g. σ)
    for s in sorted(p.free_symbols, key=str):
        if s.name == name:
            return s
    from symgdp.symbolic.symbols import ALIASES

    alias = ALIASES.get(name)
    if alias is not None and alias in p.free_symbols:
        return alias
    # "eps0" / "eps_0" / "epsilon_0" for the mechanisms' varepsilon_0
    loose = [s for s in p.free_symbols if _loose(s.name) == _loose(name)]
    if len(loose) == 1:
        return loose[0]
    names = ", ".join(sorted(s.name for s in p.free_symbols)) or "none"
    raise DomainError(f"{name!r} is not a parameter of the profile {p.expr} "
                      f"(its parameters: {names})")


def _loose(name: str) -> str:
    n = name.replace("_", "")
    for prefix in ("varepsilon", "epsilon", "eps"):
        if n.startswith(prefix):
            return "varepsilon" + n[len(prefix):]
    return n


class _Search:
    """Measurements of the profile at values of one parameter, with the bookkeeping."""

    def __init__(self, p: Profile, sym: sympy.Symbol, target: float, integer: bool,
                 kw: dict[str, Any], max_measurements: int,
                 need: tuple[float, float] | None = None) -> None:
        self.p, self.sym, self.target, self.integer = p, sym, target, integer
        self.kw, self.max = kw, max_measurements
        self.need = need  # the (eps, delta) target the measurement must also reach
        self.seen: dict[float, Measurement] = {}
        # a composition without a floor measured somewhere: its lower ends bound what the
        # composition proves, not the mechanism
        self.floorless = False

    def at(self, v: float | int, **extra: Any) -> Measurement:
        v = int(v) if self.integer else float(v)
        if v in self.seen and not extra:
            return self.seen[v]
        if len(self.seen) >= self.max:
            raise ConvergenceError(
                f"calibrate used {self.max} measurements without closing the bracket on "
                f"{self.sym.name}; pass a larger max_measurements or a looser rtol")
        q = self.p.replace(values={**self.p.values, self.sym: v})
        try:
            own = getattr(q, "calibration_measurement", None)
            # a composition measures itself: its floor is the mechanism's lower bound
            m = own(**self.kw) if own is not None else measure(q, **{**self.kw, **extra})
            self.floorless |= bool(getattr(q, "floorless", False))
        except SymgdpError as exc:
            raise type(exc)(f"at {self.sym.name}={v!r}: {exc}") from exc
        if not extra:
            self.seen[v] = m
        return m

    def safe(self, m: Measurement) -> bool:
        return m.upper <= self.target and self.reaches(m)

    def reaches(self, m: Measurement) -> bool:
        """The measurement proves the (eps, delta) target when its mu does: eps inside the
        measured head (or the bound holding on the whole line), or the failure probability
        (which bounds the profile beyond the head) at most delta (module notes)."""
        if self.need is None:
            return True
        e, d = self.need
        if m.covers_tail or e <= m.eps_h:
            return True
        # log d rounded to nearest and negative: the factor moves it down, to the safe side
        return bool(m.log_failure_prob <= math.log(d) * (1.0 + 4.0 * 2.0**-52))

    def proven_unsafe(self, m: Measurement) -> bool:
        return m.lower > self.target

    def check_monotone(self, direction: str) -> None:
        pts = sorted(self.seen.items())
        for i, (v1, m1) in enumerate(pts):
            for v2, m2 in pts[i + 1:]:
                # decreasing: mu(v2) <= mu(v1) for v1 < v2; a proof of the opposite is fatal
                bad = m2.lower > m1.upper if direction == "decreasing" else m1.lower > m2.upper
                if bad:
                    raise ConvergenceError(
                        f"mu is not monotone in {self.sym.name}: mu in [{m1.lower:.10g}, "
                        f"{m1.upper:.10g}] at {v1!r} but [{m2.lower:.10g}, {m2.upper:.10g}] "
                        f"at {v2!r}; give a bracket where it is monotone")


def _describe(v: Any, m: Measurement) -> str:
    return f"{v!r} (mu in [{m.lower:.10g}, {m.upper:.10g}])"


def _initial_bracket(s: _Search, bracket: Any, start: float | None
                     ) -> tuple[float, float, str]:
    """(unsafe end, safe end, direction) with the unsafe end proven unsafe."""
    name, T = s.sym.name, s.target
    if bracket is not None:
        try:
            a, b = (float(x) for x in bracket)
        except (TypeError, ValueError):
            raise DomainError(f"bracket must be a pair of numbers, got {bracket!r}") from None
        if not (math.isfinite(a) and math.isfinite(b) and a < b):
            raise DomainError(f"bracket must be finite with low < high, got {bracket!r}")
        if s.integer:
            a, b = math.ceil(a), math.floor(b)
        ma, mb = s.at(a), s.at(b)
        if s.safe(ma) and s.safe(mb):
            raise DomainError(
                f"both ends of the bracket are safe: {name}={_describe(a, ma)} and "
                f"{_describe(b, mb)} for the target {T!r}; widen the bracket")
        if not s.safe(ma) and not s.safe(mb):
            raise DomainError(
                f"the target mu <= {T!r} is not reached in the bracket: {name}="
                f"{_describe(a, ma)} and {_describe(b, mb)}")
        unsafe, safe_ = (a, b) if s.safe(mb) else (b, a)
        if not s.proven_unsafe(s.at(unsafe)):
            raise DomainError(
                f"the bracket end {name}={_describe(unsafe, s.at(unsafe))} holds the target "
                f"{T!r} within its measurement bracket; widen the bracket or lower tol")
        return unsafe, safe_, "decreasing" if safe_ > unsafe else "increasing"

    def up(v: Any) -> Any:
        return v * 2

    def down(v: Any) -> Any:
        return max(1, v // 2) if s.integer else v / 2

    v0 = (max(1, round(start)) if s.integer else start) if start is not None else 1
    m0 = s.at(v0)
    # the direction: compare v0 with farther and farther points until the brackets separate
    direction = None
    for k in (1, 4, 16, 60):
        v1 = v0 * 2**k
        try:
            m1 = s.at(v1)
        except SymgdpError:  # above the parameter's range (a rate > 1): look below
            v1 = max(1, v0 // 2**k) if s.integer else v0 / 2**k
            if v1 == v0:
                break
            m1 = s.at(v1)
        if m1.upper < m0.lower:
            direction = "decreasing" if v1 > v0 else "increasing"
        elif m1.lower > m0.upper:
            direction = "increasing" if v1 > v0 else "decreasing"
        if direction:
            break
    if direction is None:
        raise DomainError(f"mu does not change measurably with {name} near {v0!r}; "
                          "give bracket=(low, high)")
    # safe-ward = the direction in which mu falls
    safeward = 1 if direction == "decreasing" else -1

    def ends() -> tuple[Any, Any]:
        safe = [v for v, m in s.seen.items() if s.safe(m)]
        bad = [v for v, m in s.seen.items() if s.proven_unsafe(m)]
        sv = min(safe, key=lambda v: safeward * v) if safe else None
        u = max(bad, key=lambda v: safeward * v) if bad else None
        return u, sv

    for _ in range(_MAX_WALK):
        u, sv = ends()
        if u is not None and sv is not None:
            break
        pts = sorted(s.seen, key=lambda v: safeward * v)
        go_safe = sv is None
        v = pts[-1] if go_safe else pts[0]
        nv = (up if (safeward > 0) == go_safe else down)(v)
        if nv == v:
            break
        guess = _walk_guess(s, pts, go_safe)
        if guess is not None and min(v, nv) < guess < max(v, nv):
            nv = guess  # the secant says the target is crossed before the doubling step
        try:
            s.at(nv)
        except SymgdpError as exc:
            raise DomainError(f"searching for a bracket of {name} from {v0!r}: {exc}; "
                              "give bracket=(low, high)") from exc
    u, sv = ends()
    if u is None or sv is None:
        raise DomainError(f"no {'safe' if sv is None else 'unsafe'} value of {name} found "
                          f"from {v0!r}; give bracket=(low, high)")
    s.check_monotone(direction)
    return u, sv, direction


# The bracket walk aims this far (in log mu) beyond the target, so that the point it
# measures is decided (safe, or proven unsafe) despite the measurement's own width.
_WALK_MARGIN = 0.01


def _walk_guess(s: _Search, pts: list, go_safe: bool) -> float | None:
    """Where the secant through the two outermost measured points (log mu against log of
    a positive parameter) reaches the target, a little beyond it; ``None`` when it does
    not apply (an integer parameter, values <= 0, mu not moving)."""
    if s.integer or len(pts) < 2:
        return None
    a, b = (pts[-2], pts[-1]) if go_safe else (pts[1], pts[0])
    ma, mb = s.seen[a], s.seen[b]
    if not (a > 0 and b > 0 and ma.upper > 0 and mb.upper > 0 and s.target > 0):
        return None
    ya, yb = math.log(ma.upper), math.log(mb.upper)
    if not (math.isfinite(ya) and math.isfinite(yb)) or ya == yb:
        return None
    y = math.log(s.target) + (-_WALK_MARGIN if go_safe else _WALK_MARGIN)
    xa, xb = math.log(a), math.log(b)
    x = xb + (y - yb) * (xb - xa) / (yb - ya)
    return math.exp(x) if math.isfinite(x) else None


def _next_point(s: _Search, u: float, sv: float, gu: float, gs: float, bisect: bool,
                clamp: bool = True) -> float:
    """A point strictly between ``u`` and ``sv`` (regula falsi or bisection); with
    ``clamp=False`` the plain regula falsi point, possibly at an end."""
    pos = u > 0 and sv > 0
    if s.integer:
        lo, hi = min(u, sv), max(u, sv)
        if not bisect and math.isfinite(gu) and math.isfinite(gs) and gu != gs:
            xu, xs = (math.log(u), math.log(sv)) if pos else (u, sv)
            x = xu + (xs - xu) * gu / (gu - gs)
            c = math.exp(x) if pos else x
            c = round(c)
        else:
            c = (lo + hi) // 2
        return min(max(c, lo + 1), hi - 1)
    xu, xs = (math.log(u), math.log(sv)) if pos else (u, sv)
    if bisect or not (math.isfinite(gu) and math.isfinite(gs)) or gu == gs:
        x = 0.5 * (xu + xs)
    else:
        t = gu / (gu - gs)
        x = xu + (xs - xu) * (min(max(t, 0.02), 0.98) if clamp else t)
    c = math.exp(x) if pos else x
    lo, hi = min(u, sv), max(u, sv)
    if clamp and not lo < c < hi:
        c = 0.5 * (lo + hi)
    return c


def _closing_step(c: float, root: float, u: float, sv: float, rtol: float,
                  integer: bool) -> float:
    """``c``, or, when it or the interpolated ``root`` lies within ``rtol/2`` of an end,
    the point ``rtol/2`` from that end: whichever side that point falls on, the ends come
    within ``rtol`` and the search closes (regula falsi, whose steps are kept 2% inside
    the ends, would otherwise creep up on an end it keeps predicting)."""
    if integer:
        return c
    for end, other in ((sv, u), (u, sv)):
        step = 0.5 * rtol * abs(end)
        near = min(abs(c - end), abs(root - end)) if math.isfinite(root) else abs(c - end)
        if near < step and abs(other - end) > 2 * step:
            return end + math.copysign(step, other - end)
    return c


def _g(m: Measurement, target: float) -> float:
    if m.upper > 0 and target > 0 and math.isfinite(m.upper):
        return math.log(m.upper) - math.log(target)
    return m.upper - target


def _closed(s: _Search, u: float, sv: float, rtol: float) -> bool:
    if s.integer:
        return abs(sv - u) <= 1
    return abs(sv - u) <= rtol * max(abs(sv), abs(u)) or not (min(u, sv) < 0.5 * (u + sv)
                                                              < max(u, sv))


def _prove_unsafe_side(s: _Search, proven: float, sv: float, direction: str,
                       u: float | None = None) -> float:
    """Move the proven-unsafe end close to the boundary (two or three measurements).

    Near the boundary a point is often undecided (its bracket holds the target), so the
    search's last proven-unsafe point can be far away.  A point whose mu exceeds the
    target by a few bracket widths is proven unsafe; the slope between the ends says
    how far beyond the search's last not-safe point ``u`` to look.
    """
    ms, mu_ = s.at(sv), s.at(proven)
    gap = mu_.lower - ms.upper
    if not (gap > 0 and math.isfinite(gap)) or s.integer:
        return proven if not s.integer else _integer_unsafe(s, proven, sv, direction)
    width = max(ms.upper - ms.lower, s.target * 1e-12)
    step = abs(proven - sv) * 2.0 * width / gap
    if u is not None and u != proven:
        step += abs(u - sv)  # the boundary lies between the safe end and u
    toward = -1.0 if direction == "decreasing" else 1.0
    for _ in range(3):
        c = sv + toward * step
        if not (min(proven, sv) < c < max(proven, sv)):
            break
        if s.proven_unsafe(s.at(c)):
            return c
        step *= 4.0
    return proven


def _integer_unsafe(s: _Search, proven: float, sv: float, direction: str) -> float:
    c = sv - 1 if direction == "decreasing" else sv + 1
    if c != proven and s.proven_unsafe(s.at(c)):
        return c
    return proven


def _measured_route(p: Profile, sym: sympy.Symbol, target: float, bracket: Any,
                    integer: bool, rtol: float, kw: dict[str, Any], certify: Any,
                    max_measurements: int, notes: list[str],
                    need: tuple[float, float] | None = None
                    ) -> tuple[float | int, Measurement, str, tuple[float, float], int, bool]:
    start = p.values.get(sym)
    start_f = None
    if start is not None:
        try:
            start_f = float(start)
        except TypeError:
            start_f = None
    s = _Search(p.replace(values={sym: None}), sym,
                target, integer, kw, max_measurements, need)
    unsafe, safe_v, direction = _initial_bracket(s, bracket, start_f)
    u, sv = unsafe, safe_v
    gu, gs = _g(s.at(u), target), _g(s.at(sv), target)
    proven = u
    stale = 0  # Illinois: halve the g of an end that stayed put twice
    width0 = abs(sv - u)
    steps = 0
    while not _closed(s, u, sv, rtol):
        steps += 1
        bisect = steps % 3 == 0 and abs(sv - u) > 0.5 * width0
        if steps % 3 == 0:
            width0 = abs(sv - u)
        c = _next_point(s, u, sv, gu, gs, bisect)
        root = _next_point(s, u, sv, _g(s.at(u), target), _g(s.at(sv), target), False,
                           clamp=False)
        c = _closing_step(c, root, u, sv, rtol, s.integer)
        m = s.at(c)
        if s.safe(m):
            sv, gs = c, _g(m, target)
            stale = stale - 1 if stale < 0 else -1
            if stale <= -2:
                gu *= 0.5
        else:
            u, gu = c, _g(m, target)
            if s.proven_unsafe(m):
                proven = c
            stale = stale + 1 if stale > 0 else 1
            if stale >= 2:
                gs *= 0.5
    proven = _prove_unsafe_side(s, proven, sv, direction, u)
    s.check_monotone(direction)
    m = s.at(sv)
    if certify is not False and not m.certified:
        # the search ran in float mode: prove the answer's own bracket
        for k in range(4):
            try:
                mc = s.at(sv, certify=True)
            except PrecisionError as exc:
                if certify:
                    raise
                # certification is not available here: keep the float bracket
                # (guaranteed up to the float evaluation of the profile), if it is safe
                mc = s.at(sv)
                if s.safe(mc):
                    notes.append(f"not certified: {exc}")
                    m = mc
                    break
            if s.safe(mc) and mc.certified:
                m = mc
                break
            step = abs(sv - proven) * 2**k
            sv = sv + step if direction == "decreasing" else sv - step
            if integer:
                sv = int(sv)
        else:
            raise PrecisionError(f"the certified bracket at {sym.name}={sv!r} does not meet "
                                 f"the target {target!r}; use a looser tol")
    if not s.safe(m):  # pragma: no cover - every safe end passed this test
        raise PrecisionError(f"internal: the answer {sv!r} is not safe")
    if s.floorless:
        notes.append("the composition has no floor (a step without a lower side, e.g. a "
                     "subsampled Laplace profile): the unsafe end of the bracket is where the "
                     "composed upper profile is proved above the target, so the bracket "
                     "holds the calibration this composition can prove, not necessarily "
                     "the mechanism's (the value is safe either way)")
    if not m.covers_tail:
        notes.append(f"head GDP on [0, {m.eps_h:g}]; the tail beyond costs at most "
                     f"delta_mu(eps_h) = exp({m.log_failure_prob:.4g})")
    lo, hi = sorted((proven, sv))
    value = int(sv) if integer else float(sv)
    return value, m, direction, (lo, hi), len(s.seen), s.floorless


def _long_enough_head(p: Any, target: tuple[float, float], notes: list[str]) -> Any:
    """A lazy composition measured on a head that can reach the target: its failure
    probability lowered to ``delta`` (beyond its head a composition is only
    ``(eps, failure_prob)``-DP, so a larger one could never prove ``delta``)."""
    fp = getattr(p, "options", {}).get("failure_prob")
    if fp is None or not hasattr(p, "with_options") or float(fp) <= target[1]:
        return p
    notes.append(f"the composition's failure_prob lowered from {float(fp):g} to the "
                 f"target delta {target[1]:g}, so that its head can prove the target")
    return p.with_options(failure_prob=target[1])


# ---------------------------------------------------------------------------------------
# the trade-off route


def _tradeoff_route(equation: Any, sym_name: str, target: tuple[float, float],
                    values: Mapping[Any, Any] | None, kw: dict[str, Any], notes: list[str]
                    ) -> tuple[float, Measurement | None, str, tuple[float, float]]:
    import mpmath

    from symgdp.refinement.utility import refine_calibration
    from symgdp.symbolic.symbols import ALIASES

    name = ALIASES[sym_name].name if sym_name in ALIASES else sym_name
    sym = sympy.Symbol(name, positive=True, real=True)
    if isinstance(equation, str):
        # decimals read as exact rationals ("1.25" is 5/4): the naive noise is then exact
        # and compares at full precision with the refined one
        from symgdp.symbolic.parsing import parse_equation
        from symgdp.symbolic.symbols import eps, symbol_table

        equation = parse_equation(equation, rational=True,
                                  symbols=symbol_table(eps, values, (sym,)))
    # exact rationals of the doubles: the naive noise f(eps, delta) is then exact too, and
    # compares at full precision with the refined one
    cal = refine_calibration(equation, sympy.Rational(target[0]), sympy.Rational(target[1]),
                             values, solve_for=sym)
    exact = sympy.Float(cal.sigma, 40)
    value = float(exact)
    if sympy.Float(value, 40) < exact:
        value = math.nextafter(value, math.inf)
    with mpmath.workdps(40):
        if mpmath.mpf(value) < mpmath.mpf(str(exact)):  # pragma: no cover - see above
            raise PrecisionError("rounding the calibrated noise up failed")
    notes.append(f"direct route through the trade-off equation: calibrate at eps0 = "
                 f"{float(cal.eps0):.10g}, delta0 = {float(cal.delta0):.6g} (partial order); "
                 f"the naive calibration f(eps, delta) is {float(cal.sigma_naive):.10g}")
    m = None
    try:
        p = Profile.from_tradeoff(equation, {**dict(values or {}), name: value})
        try:
            m = measure(p, **{**kw, "certify": kw.get("certify", True)})
        except PrecisionError:
            m = measure(p, **{**kw, "certify": False})
    except SymgdpError as exc:
        notes.append(f"no GDP measurement of the calibrated mechanism: {exc}")
    below = float(exact)
    if sympy.Float(below, 40) > exact:
        below = math.nextafter(below, -math.inf)
    return value, m, "decreasing", (below, value)


# ---------------------------------------------------------------------------------------


def calibrate(
    profile: Any,
    parameter: Any,
    target_mu: float | None = None,
    *,
    target: tuple[float, float] | None = None,
    bracket: tuple[float, float] | None = None,
    values: Mapping[Any, Any] | None = None,
    integer: bool = False,
    rtol: float = 1e-6,
    eps_h: float = 100.0,
    tol: float = 1e-6,
    refine: bool = True,
    certify: bool | None = None,
    method: MeasureMethod = "auto",
    timeout: float | None = None,
    max_measurements: int = 200,
) -> CalibrationResult:
    r"""The smallest (or largest) safe value of a free parameter for a target :math:`\mu`.

    Args:
        profile: a :class:`~symgdp.profile.Profile` with the parameter free or bound (a
            bound value is the search's starting point), a profile string, or a trade-off
            equation (a ``sympy.Eq`` or a string ``"sigma = f(eps, delta)"``).
        parameter: the parameter's name or SymPy symbol (``"eps0"`` also finds the
            mechanisms' ``varepsilon_0``).
        target_mu: the target GDP parameter :math:`\mu > 0`.
        target: ``(eps, delta)`` instead of ``target_mu``: through the GDP profile for a
            profile, directly for a trade-off equation (see the module docstring).
        bracket: ``(low, high)`` values of the parameter between which to search (one end
            safe, the other not); without it the search doubles/halves from the bound value
            (or 1).  Give it for a parameter with a bounded range (a sampling rate).
        values: values of the other parameters.
        integer: the parameter is an integer (a number of steps): the answer is the
            extreme safe integer.
        rtol: relative width at which the search stops.
        eps_h, tol, refine, certify, method, timeout: passed to
            :func:`~symgdp.measurement.measure.measure` at every point; unless ``certify=False`` the
            returned value's measurement is certified in ball arithmetic.
        max_measurements: budget of measurements (:class:`ConvergenceError` beyond it).

    Returns:
        A :class:`CalibrationResult`.

    Example:
        The Laplace mechanism's largest :math:`\varepsilon_0` with :math:`\mu \le 1`
        (closed form :math:`-2\log(2\Phi(-1/2))`):

        >>> from symgdp import mechanisms
        >>> r = calibrate(mechanisms.laplace(1.0), "eps0", 1.0, eps_h=10)
        >>> r.direction, r.measurement.upper <= 1.0, r.measurement.certified
        ('increasing', True, True)
        >>> import math; from scipy.special import ndtr
        >>> r.bracket[0] <= -2 * math.log(2 * ndtr(-0.5)) <= r.bracket[1]
        True
    """
    t0 = time.perf_counter()
    if (target_mu is None) == (target is None):
        raise DomainError("give exactly one of target_mu and target=(eps, delta)")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise DomainError(f"rtol must lie in (0, 1), got {rtol!r}")
    kw: dict[str, Any] = dict(eps_h=eps_h, tol=tol, refine=refine, method=method,
                              timeout=timeout, identify=False)
    if certify is not None:
        kw["certify"] = certify
    notes: list[str] = []
    tgt = None
    if target is not None:
        try:
            e, d = (float(x) for x in target)
        except (TypeError, ValueError):
            raise DomainError(f"target must be a pair (eps, delta), got {target!r}") from None
        tgt = (e, d)
        if _is_equation(profile):
            pname = parameter.name if isinstance(parameter, sympy.Symbol) else str(parameter)
            mu_target(e, d)  # validates the target
            value, m, direction, br = _tradeoff_route(profile, pname, tgt, values, kw, notes)
            return CalibrationResult(
                parameter=pname, value=value, measurement=m, target_mu=None,
                direction=direction, bracket=br, route="tradeoff", target=tgt,
                measurements=0 if m is None else 1, seconds=time.perf_counter() - t0,
                notes=tuple(notes))
        if e > eps_h:
            raise DomainError(f"the target eps={e!r} lies beyond eps_h={eps_h!r}: the head "
                              "measurement says nothing there; raise eps_h")
        target_mu = mu_target(e, d)
    T = float(target_mu)  # type: ignore[arg-type]
    if not (math.isfinite(T) and T > 0):
        raise DomainError(f"target_mu must be a finite number > 0, got {target_mu!r}")
    p = _as_profile(profile, values)
    sym = _find_symbol(p, parameter)
    unbound = p.unbound_symbols - {sym}
    if unbound:
        p.replace(values={**p.values, sym: 1}).require_bound()
    if tgt is not None:
        p = _long_enough_head(p, tgt, notes)
    try:
        value, m, direction, br, count, floorless = _measured_route(
            p, sym, T, bracket, integer, rtol, kw, certify, max_measurements, notes, tgt)
    except SymgdpError as exc:
        if tgt is None:
            raise
        raise type(exc)(f"calibrating {sym.name} for the target (eps, delta) = "
                        f"({tgt[0]!r}, {tgt[1]!r}), i.e. mu <= {T!r} with eps inside the "
                        f"measured head or delta at least its failure probability: {exc}"
                        ) from exc
    return CalibrationResult(
        parameter=sym.name, value=value, measurement=m, target_mu=T, direction=direction,
        bracket=br, route="measure", target=tgt, measurements=count,
        seconds=time.perf_counter() - t0, notes=tuple(notes), floorless=floorless)
