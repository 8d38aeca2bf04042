r"""The whole line: proving :math:`\delta(\varepsilon) \le \delta_{\mu}(\varepsilon)` for
every :math:`\varepsilon \ge \varepsilon_h`, so that a head measurement becomes a
:math:`\mu`-GDP statement (theory §14).

The proof has two parts, split at a point :math:`E \ge \varepsilon_h`:

* **far tail** :math:`[E, \infty)`, analytically.  The profile's expression is read by
  structural rules into *forms at infinity*: finite sums
  :math:`\sum_k c_k\,\varepsilon^{p_k}(\log\varepsilon)^{q_k}` with ball coefficients that
  enclose a function for every :math:`\varepsilon \ge E` (the monomials are
  :math:`\ge 0` there, so a ball coefficient is an interval of functions).  Terms that
  vanish at infinity are absorbed into the constant with their range on
  :math:`[E, \infty)`; :math:`\log \operatorname{erfc}(u)` is enclosed by the Mills-ratio
  bounds, a sum of positive terms by :math:`\log n + \max`, a difference from above by
  its positive part.  The result is an upper form :math:`U` with
  :math:`\log\delta \le U` on :math:`[E, \infty)`.  The Gaussian side has the explicit
  lower form :math:`\log\delta_\mu \ge L_\mu` (proved from Mills-ratio bounds, see
  :func:`log_delta_mu_lower_form`).  :math:`L_\mu - U \ge 0` on :math:`[E, \infty)` is
  proved in the compactified variable :math:`t = 1/\varepsilon`: after division by its
  leading monomial every other monomial is a ratio that is non-increasing in
  :math:`\varepsilon` and tends to 0, i.e. a function of :math:`t \in [0, 1/E]` with range
  :math:`[0, r_k(E)]`, and the bracket of the quotient over that whole range (``t = 0``
  included) must be positive.
* **middle** :math:`[\varepsilon_h, E]` by interval subdivision: each interval is closed
  by the first-order test of the measurement (:meth:`FirstOrder.prove_below`) or by a ball
  evaluation of the profile on the whole interval against :math:`\delta_\mu` at its right
  end (:math:`\delta_\mu` is decreasing).

Nothing here uses that the profile is non-increasing: a profile that rises or bumps beyond
:math:`\varepsilon_h` fails a test and the measurement keeps its head statement, with
:attr:`~symgdp.measurement.result.Measurement.proved_until` saying how far the proof got.

Example:
    >>> import sympy
    >>> from symgdp import eps
    >>> r = prove_tail(2 * sympy.exp(-eps**2), eps, 100.0, 2.1252369)
    >>> r.proved, r.until
    (True, inf)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.evaluation.interval import lambdify_arb, log_delta_mu_arb, to_arb
from symgdp.measurement.whole_line.infinity_forms import (
    _CONST,
    _PREC,
    Rules,
    Unsupported,
    _add,
    _bracket,
    _neg,
    _upper_end,
    log_delta_mu_lower_form,
)
from symgdp.numerics.balls import prove
from symgdp.numerics.rounding import up
from symgdp.symbolic.implicit import LogDeltaRoot

__all__ = ["TailProof", "prove_tail", "whole_line", "gaussian_below", "log_delta_mu_lower_form",
           "Unsupported"]

#: start points of the far-tail part tried, as multiples of eps_h
_LADDER = (1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1e3, 1e4, 1e5, 1e6)


#: Rules (with their caches of log enclosures) per (expression, variable, E)
_RULES: dict[tuple[Any, ...], Rules] = {}


def _far(expr: sympy.Basic, var: sympy.Symbol, mu: float, E: float
         ) -> tuple[bool | None, arb | None, str]:
    """Prove log delta <= log delta_mu on [E, inf).  Returns (proved, A, why) with A a
    lower bound of the eps^2 coefficient of -log delta (or None); ``proved`` is None when
    no larger E can help (the leading coefficient of the difference is not positive, or
    the expression is outside the rules)."""
    with ctx.workprec(_PREC):
        # the enclosure of log delta does not depend on mu (kept for the retry with the
        # tail's mu and for later measurements of the same profile), except that of an
        # implicit root, which is proved against the mu at hand
        implicit = expr.has(LogDeltaRoot)
        key = (expr, var, E, mu) if implicit else (expr, var, E)
        cx = _RULES.get(key)
        if cx is None:
            cx = Rules(var, E)
            if implicit:
                cx.mu = mu
            if len(_RULES) >= 32:
                _RULES.pop(next(iter(_RULES)))
            _RULES[key] = cx
        try:
            lg = cx.log(expr)
            if lg.zero:
                return True, None, "the profile is <= 0 there"
            if lg.hi is None:
                return False, None, "no upper enclosure"
            slow = _slower_than_gaussian(lg.lo, cx.E)
            if slow:
                return None, None, slow
            u = _upper_end(lg.hi)
            two = (Fraction(2), 0)
            lead = max(u.c) if u.c else _CONST
            a = None
            if lead <= two:
                a = -u.c.get(two, arb(0))
            d = _add(log_delta_mu_lower_form(mu, E), _neg(u))
            lead, b = _bracket(d, cx.E)
        except Unsupported as exc:
            return (False if cx.switch else None), None, str(exc)
        except (ZeroDivisionError, ValueError, TypeError, AttributeError) as exc:
            return None, None, f"{type(exc).__name__}"
        if b > 0:
            return True, a, ""
        if not d.c or not d.c[lead].lower() > 0:
            # a larger E helps only where a branch may still switch beyond this one
            return (False if cx.switch else None), a, (
                "the leading term of log delta_mu - log delta at infinity is not proved "
                "positive")
        return False, a, "the leading terms do not prove it"


def _slower_than_gaussian(lo: Any, E: arb) -> str:
    """A reason when the lower enclosure of log delta on [E, inf) proves that delta
    decays slower than every exp(-c eps^2) (G grows without bound), else ''."""
    if lo is None or not lo.c:
        return ""
    try:
        lead, b = _bracket(lo, E)
    except Unsupported:
        return ""
    p, q = lead
    if p >= 2 or not b.is_finite():
        return ""
    return (f"the profile itself is at least exp(c eps^{p} log(eps)^{q}) at infinity: it "
            "decays slower than every delta_mu, so G grows without bound and no mu holds on "
            "the whole line for this expression")


def _ball_interval(x: float, y: float) -> arb:
    m = 0.5 * (x + y)
    r = max(m - x, y - m)
    b = arb(m, r)
    if not (b.lower() <= x and b.upper() >= y):
        b = arb(m, math.nextafter(r, math.inf) * (1 + 2.0**-50))
    return b


def _exact_zero(fo: Any, x: float) -> bool:
    """``fo``'s ball of delta(x) is exactly 0."""
    d = fo.delta(x)
    return bool(d.is_exact() and d.is_zero())


class _Middle:
    """Interval subdivision of [eps_h, E]: h = log delta - log delta_mu <= 0."""

    def __init__(self, f: Any, fo: Any, mu: float, budget: int, deadline: float) -> None:
        self.f, self.fo, self.mu = f, fo, mu
        self.budget, self.deadline = budget, deadline
        self.count = 0

    def _ball_below(self, x: float, y: float) -> bool:
        if self.f is None:
            return False
        for prec in (64, 128, 256):
            with ctx.workprec(prec):
                try:
                    d = self.f(_ball_interval(x, y))
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return False
                if not d.is_finite():
                    return False
                if d.upper() <= 0:
                    return True
                g = log_delta_mu_arb(y, self.mu)
                if not g.is_finite():
                    continue
                if arb(d.upper()).log() <= arb(g.lower()):
                    return True
                if not d > 0:
                    continue
        return False

    def below(self, x: float, y: float) -> bool:
        self.count += 1
        if self.fo is not None:
            try:
                # FirstOrder.prove_below closes [x, y] at once when delta(x) = 0 exactly,
                # which holds only for a non-increasing profile: nothing here may assume
                # that, so such an interval goes to the ball test instead
                if self.fo.prove_below(x, y, self.mu) and not _exact_zero(self.fo, x):
                    return True
            except (ZeroDivisionError, ValueError, TypeError, OverflowError,
                    ArithmeticError):
                pass
        return self._ball_below(x, y)

    def run(self, a: float, b: float) -> float:
        """The end of the longest stretch [a, c] proved (c = b when all of it is)."""
        # geometric start grid: h typically falls like eps^2
        pts = [a]
        while pts[-1] < b:
            pts.append(min(b, max(pts[-1] * 1.25, pts[-1] + 1e-3)))
        stack = [(pts[i], pts[i + 1], 0) for i in range(len(pts) - 1)][::-1]
        reached = a
        while stack:
            x, y, depth = stack.pop()
            if self.count >= self.budget or time.perf_counter() > self.deadline:
                return reached
            if self.below(x, y):
                reached = y
                continue
            if depth >= 40 or y - x <= 1e-9 * y:
                return reached
            m = 0.5 * (x + y)
            stack.append((m, y, depth + 1))
            stack.append((x, m, depth + 1))
        return reached


@dataclass(frozen=True)
class TailProof:
    r"""The outcome of :func:`prove_tail`.

    Attributes:
        proved: :math:`\delta \le \delta_\mu` holds on :math:`[\varepsilon_h, \infty)`.
        mu: the :math:`\mu` tried.
        until: :math:`\delta \le \delta_\mu` is proved on :math:`[\varepsilon_h,
            \text{until}]` (``inf`` when ``proved``).
        far_start: :math:`E`, where the analytic far-tail part starts (``nan`` if none
            was proved).
        intervals: subdivision tests of the middle part.
        seconds: wall time.
        reason: why it failed (empty when proved).
        tail_coefficient: a proved lower bound :math:`A` of the coefficient of
            :math:`\varepsilon^2` in :math:`-\log\delta` at infinity (``nan`` if none):
            no :math:`\mu < 1/\sqrt{2A}` can hold on the whole line by this route.
    """

    proved: bool
    mu: float
    until: float
    far_start: float
    intervals: int
    seconds: float
    reason: str
    tail_coefficient: float = math.nan


def prove_tail(expr: sympy.Basic, var: sympy.Symbol, eps_h: float, mu: float, *,
               fo: Any = None, ball: Any = None, budget: int = 4000,
               seconds: float = 30.0) -> TailProof:
    r"""Try to prove :math:`\delta(\varepsilon) \le \delta_\mu(\varepsilon)` for every
    :math:`\varepsilon \ge \varepsilon_h` (theory §14).

    Args:
        expr: the profile's expression with every parameter value in place.
        var: its variable.
        eps_h: start of the tail.
        mu: the GDP parameter to prove (a float, taken exactly).
        fo: optional first-order machinery of the profile (:class:`FirstOrder`) for the
            middle part.
        ball: optional ball evaluation of the profile (e.g. :func:`profile_arb`); by
            default compiled from ``expr``.
        budget: at most this many interval tests in the middle part.
        seconds: time budget of the middle part.

    Example:
        >>> import sympy
        >>> from symgdp import eps
        >>> prove_tail(sympy.exp(-eps**2 / 8), eps, 100.0, 1.9).proved  # limit 2 > 1.9
        False
    """
    t0 = time.perf_counter()
    eps_h, mu = float(eps_h), float(mu)
    if not (math.isfinite(mu) and mu > 0):
        return TailProof(False, mu, eps_h, math.nan, 0, 0.0, f"mu = {mu!r}")
    start = max(eps_h, 1.0 + 2.0 * mu * mu)  # b_E > sqrt(3) and E > e
    far, coef, why = None, None, ""
    for k in _LADDER:
        E = max(start, eps_h * k)
        ok, a, w = _far(expr, var, mu, E)
        if a is not None and (coef is None or a.lower() > coef.lower()):
            coef = a
        if ok:
            far = E
            break
        why = w
        if ok is None:
            break
    acoef = float(coef.lower()) if coef is not None and coef.is_finite() else math.nan
    if far is None:
        return TailProof(False, mu, eps_h, math.nan, 0, time.perf_counter() - t0,
                         f"far tail not proved ({why})", acoef)
    if far <= eps_h:
        return TailProof(True, mu, math.inf, far, 0, time.perf_counter() - t0, "", acoef)
    mid = _Middle(ball if ball is not None else _ball_of(expr, var), fo, mu, budget,
                  t0 + seconds)
    with ctx.workprec(_PREC):
        reached = mid.run(eps_h, far)
    ok = reached >= far
    return TailProof(ok, mu, math.inf if ok else reached, far, mid.count,
                     time.perf_counter() - t0,
                     "" if ok else f"middle part [{eps_h:g}, {far:g}] proved only up to "
                     f"eps = {reached:.6g}", acoef)


def gaussian_below(mu_exact: Any, mu: float) -> bool:
    r""":math:`\delta_{\mu_0} \le \delta_\mu` on the whole line when :math:`\mu_0 \le \mu`
    (:math:`\delta_\mu` is increasing in :math:`\mu`), decided exactly in ball arithmetic.

    >>> import sympy
    >>> gaussian_below(sympy.sqrt(2), 1.4142135623730951), gaussian_below(sympy.sqrt(2), 1.414)
    (True, False)
    """
    for prec in (64, 128, 256):
        with ctx.workprec(prec):
            m0 = lambdify_arb(sympy.sympify(mu_exact), sympy.Dummy())(0)
            if m0 <= to_arb(mu):
                return True
            if m0 > to_arb(mu):
                return False
    return False




# -- the hook of measure(): a head measurement made whole-line where it proves ----------
#: relative margin above the proved tail bound 1/sqrt(2A) when the tail is the maximum:
#: ball arithmetic cannot prove a leading coefficient that is exactly 0
TAIL_MARGIN = 2.0**-36
#: far points whose certified G values bound the whole-line supremum from below
_FAR_POINTS = (1e3, 1e4, 1e5, 1e6, 1e8)


def _far_lower(p: Any, eps_h: float, certifier: Any) -> tuple[float, float]:
    """The best certified point value of G beyond eps_h (and where), or (0, nan)."""
    import numpy as np

    from symgdp.gaussian.vectorised import mu_gdp

    best, where = 0.0, math.nan
    # farthest first, and the first certified value is kept: where the tail is the
    # maximum G climbs towards its limit, so the farthest point is the best lower bound
    # (any certified G value is a valid one; each costs a certified point evaluation)
    for x in sorted((eps_h * 10, *_FAR_POINTS), reverse=True):
        if x <= eps_h or best > 0:
            continue
        try:
            guess = float(mu_gdp(x, log_delta=float(np.asarray(p.log_delta(x)))))
            if not (math.isfinite(guess) and guess > best):
                continue
            # a relative slack of 2^-30 below the float guess, proved in one ball test
            # (delta_lo(x) <= delta(x) means G(x) >= lo); where the balls cannot decide
            # it (delta far below the float range), the point is skipped
            lo = guess * (1.0 - 2.0**-30)

            def check(x: float = x, lo: float = lo) -> bool | None:
                g, d = log_delta_mu_arb(x, lo), certifier.delta(x, ctx.prec)
                if not (d > 0 and g.is_finite()):
                    return None
                return True if g <= d.log() else (False if g > d.log() else None)

            if prove(check, (128, 256)) is not True:
                continue
        except Exception:  # noqa: BLE001 - a far point is only a better lower bound
            continue
        if lo > best:
            best, where = lo, x
    return best, where


def whole_line(m: Any, *, fo: Any = None, mu_exact: Any = None, certifier: Any = None,
               seconds: float = 30.0, mu_bound: arb | None = None) -> Any:
    r"""The measurement ``m`` with its tail proved where it can be (theory §14).

    When :math:`\delta \le \delta_{\text{upper}}` is proved on :math:`[\varepsilon_h,
    \infty)`: ``covers_tail=True``, ``failure_prob = 0``, ``proved_until = inf``.  When
    the proof fails only because the tail needs a larger :math:`\mu` (the GDPT increases to
    its limit), it is retried with the tail's bound :math:`1/\sqrt{2A}` (plus
    :data:`TAIL_MARGIN`), and on success the bracket becomes the whole-line bracket
    :math:`[\max(\text{lower}, \text{far } G, \sqrt{\text{limit}}^-), \mu']`.  Otherwise
    ``proved_until`` says how far beyond :math:`\varepsilon_h` the head bound is proved, and
    a note says why the tail is not.

    ``mu_bound``: a ball whose every point :math:`\mu_b` has :math:`\delta \le
    \delta_{\mu_b}` on the whole line, proved by the caller (a Gaussian profile written
    with float literals, :func:`~symgdp.measurement.near_gaussian.near_gaussian_mu_bound`);
    the tail is then certified when :math:`\mu_b \le` upper, else the bracket's upper end
    becomes :math:`\mu_b` rounded up (the tail is the maximum).
    """
    from dataclasses import replace

    t0 = time.perf_counter()
    if m.covers_tail:
        return replace(m, proved_until=math.inf,
                       tail_proof="the profile is 0 beyond some eps <= eps_h")
    p = m.profile
    notes = list(m.notes)

    def done(**kw: Any) -> Any:
        kw.setdefault("proved_until", m.eps_h)
        return replace(m, notes=tuple(notes), seconds=m.seconds + time.perf_counter() - t0,
                       **kw)

    if not math.isfinite(m.upper):
        return done()
    if getattr(p, "source", None) is not None:
        notes.append("whole line: the profile has no closed form (a numeric source): the "
                     "tail beyond eps_h keeps its failure probability" + _source_why(p.source))
        return done()
    if not m.certified:
        notes.append("whole line: not attempted in float mode (certify=False); the tail "
                     "keeps its failure probability")
        return done()
    if mu_exact is not None:
        if gaussian_below(mu_exact, m.upper):
            return done(covers_tail=True, failure_prob=0.0, log_failure_prob=-math.inf,
                        proved_until=math.inf,
                        tail_proof=f"the profile is delta_mu with mu = {mu_exact} <= upper "
                                   "(delta_mu increases with mu)")
        return done()
    if mu_bound is not None:
        return _bounded_by_gaussian(m, mu_bound, done, notes)
    expr = getattr(p, "bound_expr", None)
    var = getattr(p, "var", None)
    if not isinstance(expr, sympy.Basic) or var is None:
        notes.append("whole line: the profile has no closed form: the tail beyond eps_h "
                     "keeps its failure probability")
        return done()
    try:
        ball = _LazyBall(p, expr, var)
        r = prove_tail(expr, var, m.eps_h, m.upper, fo=fo, ball=ball, seconds=seconds)
    except Exception as exc:  # noqa: BLE001 - a failed proof is only a missing extra
        notes.append(f"whole line: not proved ({type(exc).__name__})")
        return done()
    if r.proved:
        route = ("analytic from eps_h" if r.far_start <= m.eps_h else
                 f"subdivision of [{m.eps_h:g}, {r.far_start:g}] ({r.intervals} tests), "
                 f"analytic beyond")
        return done(covers_tail=True, failure_prob=0.0, log_failure_prob=-math.inf,
                    proved_until=math.inf,
                    tail_proof=f"delta <= delta_mu proved on [{m.eps_h:g}, inf) ({route})")
    a = r.tail_coefficient
    if math.isfinite(a) and a > 0:
        bound = 1.0 / math.sqrt(2.0 * a)
        if bound > m.upper * (1 + 1e-12):
            mu2 = up(bound * (1 + TAIL_MARGIN))
            r2 = prove_tail(expr, var, m.eps_h, mu2, fo=fo, ball=ball, seconds=seconds)
            if r2.proved:
                far, where = (_far_lower(p, m.eps_h, certifier) if certifier is not None
                              else (0.0, math.nan))
                # proved values only: the head's lower end and a certified point value
                # (the symbolic tail limit is checked, not proved: it is no lower end)
                lower = max(m.lower, far)
                lower = min(lower, mu2)
                notes.append(f"the tail is the maximum: sup G on [0, {m.eps_h:g}] is in "
                             f"[{m.lower!r}, {m.upper!r}], and G tends to a limit above it; "
                             f"the bracket [{lower!r}, {mu2!r}] is on sup G over the whole "
                             "line (lower end: the head's or the certified G at eps = "
                             f"{where:g}, whichever is larger)")
                return done(lower=lower, upper=mu2, covers_tail=True, failure_prob=0.0,
                            log_failure_prob=-math.inf, proved_until=math.inf,
                            tail_proof=f"the tail is the maximum: delta <= delta_mu with mu "
                                       f"= {mu2!r} (the tail's bound 1/sqrt(2A) plus a "
                                       f"margin of 2^-36) proved on [{m.eps_h:g}, inf)")
    until = r.until
    if not (until > m.eps_h):
        # the far tail failed: push the head bound beyond eps_h a little (clip and rectify)
        mid = _Middle(ball, fo, m.upper, 300,
                      time.perf_counter() + min(3.0, seconds))
        with ctx.workprec(_PREC):
            until = mid.run(m.eps_h, 10 * m.eps_h)
    notes.append(f"whole line: not proved ({r.reason}); delta <= delta_mu proved on "
                 f"[0, {until:.6g}]")
    return done(proved_until=until)


def _bounded_by_gaussian(m: Any, mu_bound: arb, done: Any, notes: list[str]) -> Any:
    """The whole line of a profile proved to lie below delta_{mu_b} for mu_b in
    ``mu_bound`` (theory §14, Gaussians written with float literals)."""
    with ctx.workprec(256):
        top = arb(mu_bound.upper())
        if not top.is_finite():
            notes.append("whole line: not proved (the dominating mu is not finite)")
            return done()
        if top <= to_arb(m.upper):
            return done(covers_tail=True, failure_prob=0.0, log_failure_prob=-math.inf,
                        proved_until=math.inf,
                        tail_proof=f"delta <= delta_mu with mu = "
                                   f"{top.str(17, radius=False)} <= upper on the whole line "
                                   "(a Gaussian profile up to the rounding of its literals: "
                                   "dominated by the larger of its two mu)")
        up = float(top)
        if not arb(up) >= top:
            up = math.nextafter(up, math.inf)
    notes.append(f"the tail is the maximum: the GDPT tends to {up!r} (the mu that the "
                 "slope of eps in its literals stands for) above the head bound; the bracket "
                 f"[{m.lower!r}, {up!r}] is on sup G over the whole line")
    return done(upper=up, covers_tail=True, failure_prob=0.0, log_failure_prob=-math.inf,
                proved_until=math.inf,
                tail_proof=f"the tail is the maximum: delta <= delta_mu with mu = {up!r} on "
                           "the whole line (a Gaussian profile up to the rounding of its "
                           "literals: dominated by the larger of its two mu)")


def _source_why(src: Any) -> str:
    """Why a numeric source's tail is not proved: its tail limit where it knows one."""
    try:
        lim = src.tail_limit() if callable(getattr(src, "tail_limit", None)) else None
        lim = None if lim is None else float(lim)
    except Exception:  # noqa: BLE001 - only a remark
        lim = None
    if lim is None or not math.isfinite(lim):
        return ""
    extra = "; for DP-SGD with T steps and noise sigma it is sqrt(T)/sigma" \
        if getattr(src, "kind", "") == "PLD" else ""
    return (f" (its tail limit is mu^2 = {lim:.6g}, i.e. lim G = {math.sqrt(lim):.6g}: no "
            f"smaller mu holds on the whole line{extra})")


class _LazyBall:
    """The profile's ball evaluation, compiled on first use (the far-tail part alone
    needs none): its cached :func:`profile_arb`, else one compiled from ``expr``."""

    def __init__(self, p: Any, expr: sympy.Basic, var: sympy.Symbol) -> None:
        self.p, self.expr, self.var = p, expr, var
        self.f: Callable[[Any], arb] | None = None  # compiled on first use

    def __call__(self, x: Any) -> arb:
        if self.f is None:
            from symgdp.evaluation.interval import profile_arb

            try:
                self.f = profile_arb(self.p)
            except Exception:  # noqa: BLE001 - fall back to the expression itself
                self.f = _ball_of(self.expr, self.var)
            if self.f is None:
                raise ValueError("no ball evaluation")
        return self.f(x)


def _ball_of(expr: sympy.Basic, var: sympy.Symbol) -> Any:
    try:
        lam = lambdify_arb(expr, var)
    except Exception:  # noqa: BLE001
        return None

    def ball(x: Any) -> arb:
        return lam(x).min(arb(1))

    return ball
