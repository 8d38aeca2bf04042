r"""The GDP parameter of a typed trade-off curve, certified in the :math:`\alpha` domain.

A mechanism is :math:`\mu`-GDP iff its trade-off function :math:`f` satisfies
:math:`f \ge G_\mu`, :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1 - \alpha) - \mu)` (Dong, Roth &
Su, "Gaussian Differential Privacy", JRSS-B 2022).  For a curve :math:`T` that is a lower
bound on :math:`f`, :math:`T(\alpha) \ge G_\mu(\alpha)` iff :math:`h(\alpha) \le \mu` with

.. math:: h(\alpha) = \Phi^{-1}(1 - \alpha) - \Phi^{-1}(T(\alpha)),

so the smallest :math:`\mu` is :math:`\sup_{0 < \alpha < 1} h`.  Measuring it as
:math:`\sup_\varepsilon G` of the conjugate profile :math:`\delta_T(\varepsilon) = 1 +
T^*(-e^\varepsilon)` costs one branch-and-bound over :math:`\alpha` per :math:`\varepsilon`,
and the GDPT of :math:`G_\mu` itself is flat: the worst case of the search over
:math:`\varepsilon`.  Here the supremum of :math:`h` is bracketed directly.

**Probit coordinates.**  With :math:`u = \Phi^{-1}(1 - \alpha)`, i.e. :math:`\alpha =
\operatorname{erfc}(u/\sqrt2)/2`, the curve becomes :math:`T_u(u)` and

.. math:: g(u) = h(\alpha(u)) = u + \sqrt2\,\operatorname{erfcinv}(2\,T_u(u)).

SymPy substitutes :math:`\alpha(u)` and :func:`probit_form` applies the exact identities
:math:`\operatorname{erf} = 1 - \operatorname{erfc}`, :math:`\operatorname{erfinv}(y) =
\operatorname{erfcinv}(1 - y)`, :math:`\operatorname{erfcinv}(\operatorname{erfc}(x)) = x` and
:math:`\operatorname{erfcinv}(2 - \operatorname{erfc}(x)) = -x` (real :math:`x`), so that
:math:`G_\mu` typed with ``erfcinv(2*alpha)`` or ``erfinv(1 - 2*alpha)`` becomes the constant
:math:`\mu`, enclosed exactly, and a tiny :math:`\alpha` (far below 1e-300) costs nothing.
Every box value is checked against the unrewritten form at a few points (disjoint balls
would show a wrong rewrite: the route then gives up).

**Bounds on a box** :math:`[u_1, u_2]` (:math:`\alpha \in [p, q]`, :math:`p = \alpha(u_2)`,
:math:`q = \alpha(u_1)`): the least of (a) the ball enclosure of :math:`g` on the box;
(b) a mean-value bound with :math:`g'` enclosed (SymPy's derivative, where every node of
:math:`g` is finite on the box, so :math:`g` is continuous there; ``Piecewise`` branches
are resolved on the box first, and a box where a switch is not decided gets no derivative):
:math:`g \le \min(g(u_1) + g'_{\max}(u - u_1),\ g(u_2) - g'_{\min}(u_2 - u))`, quadratic in
the box width near a maximum; (c) the mechanism's monotonicity: the mechanism's curve
:math:`f \ge T` is non-increasing, so on :math:`[p, q]`, :math:`f(\alpha) \ge T(q)` and
:math:`\Phi^{-1}(1 - \alpha) - \Phi^{-1}(f(\alpha)) \le u_2 - \Phi^{-1}(T(q)) = g(u_1) + (u_2
- u_1)`.  All three bound :math:`h_f = \Phi^{-1}(1 - \alpha) - \Phi^{-1}(f)` for every
non-increasing :math:`f \ge T` (as ``TradeoffSource``'s bounds do).

**The head and its failure probability.**  If :math:`h \le \mu` on :math:`[\alpha_h,
\alpha_c]`, then for every :math:`\varepsilon \ge 0`

.. math:: \delta_f(\varepsilon) \le \max\bigl(\delta_\mu(\varepsilon),\ 1 - T(\alpha_h)\bigr)

provided :math:`1 - \alpha_c \le \delta_\mu(-\log\alpha_c)`.  Split
:math:`\delta_f(\varepsilon) = \sup_\alpha [1 - f(\alpha) - e^\varepsilon\alpha]`: for
:math:`\alpha < \alpha_h`, :math:`1 - f(\alpha) - e^\varepsilon\alpha \le 1 - f(\alpha_h)
\le 1 - T(\alpha_h)`; on :math:`[\alpha_h, \alpha_c]`, :math:`f \ge T \ge G_\mu` gives at
most :math:`\sup_\alpha [1 - G_\mu(\alpha) - e^\varepsilon\alpha] = \delta_\mu(\varepsilon)`;
for :math:`\alpha > \alpha_c`, :math:`1 - f(\alpha) - e^\varepsilon\alpha \le 1 -
e^\varepsilon\alpha_c`, which is :math:`\le 0` for :math:`\varepsilon \ge -\log\alpha_c`
and otherwise :math:`\le 1 - \alpha_c \le \delta_\mu(-\log\alpha_c) \le
\delta_\mu(\varepsilon)`.  With :math:`\alpha_h` chosen so that :math:`1 - T(\alpha_h) \le
\delta_L(\varepsilon_h) \le \delta_\mu(\varepsilon_h)` (:math:`L \le \mu` the proved lower
end), :math:`\delta_f \le \delta_\mu` on :math:`[0, \varepsilon_h]` and :math:`\delta_f \le
\delta_\mu(\varepsilon_h)` beyond: the head statement of a
:class:`~symgdp.measurement.result.Measurement`.

``symmetric=False`` (the profile is also the conjugate of :math:`T^{-1}`,
:math:`\sup_\alpha [1 - \alpha - e^\varepsilon f(\alpha)]`): :math:`G_\mu^{-1} = G_\mu`, so
:math:`f \ge G_\mu` on a range bounds that term by :math:`\delta_\mu` there too; below
:math:`\alpha_h` it is :math:`\le 1 - f(\alpha_h)`, and above :math:`\alpha_t` it is
:math:`\le 1 - \alpha_t`.  Then :math:`[\alpha_h, \alpha_t]` is covered with :math:`1 -
\alpha_t \le \delta_L(\varepsilon_h)` as well: the same :math:`\mu`.

**Lower end.**  At a point :math:`u_0` with :math:`h(\alpha_0) \ge L > 0`, :math:`T(\alpha_0)
\le G_L(\alpha_0)`; the tangent of :math:`G_L` at :math:`\alpha_0` has slope
:math:`-e^{\varepsilon_0}`, :math:`\varepsilon_0 = L u_0 - L^2/2`, so :math:`\delta_T
(\varepsilon_0) \ge 1 - T(\alpha_0) - e^{\varepsilon_0}\alpha_0 \ge \delta_L(\varepsilon_0)`
and :math:`G(\varepsilon_0) \ge L`: a lower bound on :math:`\sup_{[0, \varepsilon_h]} G` when
:math:`0 \le \varepsilon_0 \le \varepsilon_h` (with ``symmetric=False`` also
:math:`-\varepsilon_0`, through the inverse curve).  This is the conjugate of :math:`T` as
typed (that of its convex envelope when :math:`T` is not convex).

When the bracket does not close (a curve with :math:`T(0) < 1`, not GDP; a curve whose
:math:`h` is largest where :math:`\varepsilon_0 < 0`; a budget spent) the route says why and
the caller measures over :math:`\varepsilon` instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.errors import SymgdpError
from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb
from symgdp.gaussian.gdp_balls import delta_mu_arb, log_delta_mu_arb
from symgdp.symbolic.budget import with_budget

__all__ = ["GdpBracket", "probit_form", "gdp_bracket"]

_U = sympy.Symbol("u", real=True)
_R2 = sympy.sqrt(2)
#: boxes of each pass of the branch-and-bound at most
MAX_BOXES = 6000
_PRECS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
_JUMPS = (sympy.Heaviside, sympy.DiracDelta, sympy.sign)


@dataclass
class GdpBracket:
    """What :func:`gdp_bracket` proved: ``lower <= sup G on [0, eps_h] <= upper`` (floats
    rounded outward), or ``upper = None`` with ``reason`` when the route gave up."""

    lower: float = 0.0
    upper: float | None = None
    eps_h: float = math.nan
    #: epsilon where the lower end was proved (the tangent point of the best alpha)
    argmax: float = math.nan
    boxes: int = 0
    points: int = 0
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def _rewrite(e: sympy.Expr) -> sympy.Expr:
    """Apply the exact identities of the module notes, innermost first."""
    e = e.replace(sympy.erf, lambda z: 1 - sympy.erfc(z))
    e = e.replace(sympy.erfinv, lambda y: sympy.erfcinv(1 - y))
    return e.replace(sympy.erfcinv, _inv)


def _inv(y: sympy.Expr) -> sympy.Expr:
    r""":math:`\operatorname{erfcinv}(y)` rewritten: through ``Max``/``Min`` (it is
    decreasing) and ``Piecewise`` branches, :math:`\operatorname{erfcinv}(2 - Y) =
    -\operatorname{erfcinv}(Y)` when :math:`y` has the constant 2 (so that a curve near 1
    keeps its small complement), and the inverse pairs of the module notes."""
    a = sympy.expand(y)
    c, rest = a.as_coeff_Mul()
    if c.is_positive and isinstance(rest, (sympy.Max, sympy.Min)):
        outer = sympy.Min if isinstance(rest, sympy.Max) else sympy.Max
        return outer(*[_guarded(c * x) for x in rest.args])
    if c.is_positive and isinstance(rest, sympy.Piecewise):
        return sympy.Piecewise(*[(_inv(c * x), cond) for x, cond in rest.args])
    if isinstance(a, sympy.erfc) and a.args[0].is_extended_real:
        return a.args[0]
    if a.is_Add and a.as_coeff_Add()[0] == 2:
        b = sympy.expand(2 - a)
        if isinstance(b, sympy.erfc) and b.args[0].is_extended_real:
            return -b.args[0]
        return -_inv(b)
    return sympy.erfcinv(y)


def _guarded(y: sympy.Expr) -> sympy.Expr:
    r"""The decreasing extension of :math:`\operatorname{erfcinv}` to the line
    (:math:`+\infty` at :math:`y \le 0`, :math:`-\infty` at :math:`y \ge 2`): a branch of
    ``Max``/``Min`` outside :math:`(0, 2)` is never the one chosen, and the extension keeps
    :math:`\operatorname{erfcinv}(\max) = \min(\operatorname{erfcinv})` exact."""
    return sympy.Piecewise((sympy.oo, y <= 0), (-sympy.oo, y >= 2), (_inv(y), True))


def _complement(t: sympy.Expr) -> sympy.Expr:
    """1 - t, through ``Max``/``Min``/``Piecewise`` (no cancellation near t = 1)."""
    if isinstance(t, (sympy.Max, sympy.Min)):
        outer = sympy.Min if isinstance(t, sympy.Max) else sympy.Max
        return outer(*[_complement(x) for x in t.args])
    if isinstance(t, sympy.Piecewise):
        return sympy.Piecewise(*[(_complement(x), cond) for x, cond in t.args])
    return sympy.expand(1 - t)


def probit_form(expr: sympy.Expr, var: sympy.Symbol, timeout: float | None = 10.0
                ) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr, sympy.Expr]:
    r"""``(g, S, g0, S0)``: :math:`h` and :math:`1 - T` in the probit coordinate ``u``
    (:math:`\alpha = \operatorname{erfc}(u/\sqrt2)/2`), rewritten by the exact identities of
    the module notes, and the same two unrewritten (the cross-check).

    Example:
        >>> a = sympy.Symbol("alpha")
        >>> G2 = 1 - sympy.erfc(sympy.erfcinv(2 * a) - sympy.sqrt(2))/2   # G_2
        >>> probit_form(G2, a)[0]
        2
    """
    t = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
    au = sympy.erfc(_U / _R2) / 2

    def build() -> tuple[sympy.Expr, sympy.Expr, sympy.Expr, sympy.Expr]:
        t0 = t.subs(var, au)
        g0 = _U + _R2 * sympy.erfcinv(2 * t0)
        s0 = 1 - t0
        tu = _rewrite(t0)
        g = _rewrite(_U + _R2 * sympy.erfcinv(sympy.expand(2 * tu)))
        # the terms distributed at the top only (u cancels for G_mu; nothing inside a
        # function is expanded, which could loosen its enclosure)
        g = sympy.Add(*[sympy.expand_mul(t, deep=False) for t in sympy.Add.make_args(g)])
        s = _complement(tu)
        return g, s, g0, s0

    return with_budget(build, timeout)


def _ball(fs: list[Callable[[Any], arb]], x: arb, rel: float, *, relative: bool = False
          ) -> arb | None:
    """The intersection of every finite enclosure of the forms ``fs`` at ``x``, at
    increasing precision until its radius is below ``rel`` (relative to the value, or to
    ``max(1, |value|)`` unless ``relative``), or ``None`` when none is finite."""
    best = None
    for prec in _PRECS:
        with ctx.workprec(prec):
            got = None
            for f in fs:
                try:
                    v = f(x)
                except (ArithmeticError, ValueError, TypeError, ArbUnsupported):
                    continue
                if not v.is_finite():
                    continue
                got = v if got is None else _meet(got, v)
            if got is None:
                continue
            best = got
            scale = abs(got.mid()) if relative else arb(1).max(abs(got.mid()))
            if got.rad() <= rel * scale:
                break
    return best


def _meet(a: arb, b: arb) -> arb:
    lo, up = a.lower().max(b.lower()), a.upper().min(b.upper())
    if lo > up:
        raise _Inconsistent(f"two enclosures of one value are disjoint: {a} and {b}")
    return arb.union(lo, up) if lo != up else lo


class _Inconsistent(SymgdpError):
    """Two enclosures of one value do not meet (a rewrite is wrong): give up."""


class _Pieces:
    """The compiled pieces of :math:`g` in ``u``: value, derivative per resolution of its
    ``Piecewise`` nodes, the continuity check."""

    def __init__(self, g: sympy.Expr, g0: sympy.Expr, s: sympy.Expr, s0: sympy.Expr,
                 timeout: float | None) -> None:
        self.timeout = timeout
        self.g = [lambdify_arb(g, _U)]
        self.g_check = [lambdify_arb(g0, _U)]
        self.s = [lambdify_arb(s, _U)]
        try:
            self.s.append(lambdify_arb(s0, _U))
        except ArbUnsupported:
            pass
        self.expr = g
        self.pws = sorted(g.atoms(sympy.Piecewise), key=sympy.default_sort_key)
        self.conds: list[list[Callable[[Any], arb] | None]] = []
        for pw in self.pws:
            row: list[Callable[[Any], arb] | None] = []
            for _, c in pw.args:
                if c is sympy.true:
                    row.append(None)
                elif isinstance(c, (sympy.StrictLessThan, sympy.LessThan,
                                    sympy.StrictGreaterThan, sympy.GreaterThan)) \
                        and not c.has(sympy.Piecewise):
                    sign = 1 if isinstance(c, (sympy.StrictLessThan, sympy.LessThan)) else -1
                    # the condition holds where sign * (lhs - rhs) < 0 (or <= 0)
                    row.append(lambdify_arb(sign * (c.lhs - c.rhs), _U))
                else:
                    row = []
                    break
            self.conds.append(row)
        self._deriv: dict[tuple[int, ...], tuple[Any, Any] | None] = {}

    def _choice(self, box: arb) -> tuple[int, ...] | None:
        """The branch of every ``Piecewise`` node proved to hold on the whole box (a
        condition proved true, every earlier one proved false), or ``None``."""
        out = []
        for row in self.conds:
            if not row:
                return None
            pick = None
            for j, fc in enumerate(row):
                if fc is None:
                    pick = j
                    break
                v = fc(box)
                if not v.is_finite():
                    return None
                if v < 0:           # proved true on the box (strict or not)
                    pick = j
                    break
                if not v > 0:       # undecided (v == 0 at an end: a non-strict condition
                    return None     # may still hold there): no single branch
            if pick is None:
                return None
            out.append(pick)
        return tuple(out)

    def derivative(self, box: arb) -> tuple[arb, arb] | None:
        """Enclosure (lower, upper) of :math:`g'` on the box where :math:`g` is one
        continuous expression there, or ``None``."""
        choice = self._choice(box)
        if choice is None:
            return None
        if choice not in self._deriv:
            self._deriv[choice] = self._compile(choice)
        got = self._deriv[choice]
        if got is None:
            return None
        dg, nodes = got
        vals = nodes(box)
        vals = vals if isinstance(vals, tuple) else (vals,)
        if not all(v.is_finite() for v in vals):
            return None     # a node without a finite enclosure: no continuity proved
        d = dg(box)
        if not d.is_finite():
            return None
        return d.lower(), d.upper()

    def _compile(self, choice: tuple[int, ...]) -> tuple[Any, Any] | None:
        resolved = self.expr.xreplace(
            {pw: pw.args[j][0] for pw, j in zip(self.pws, choice, strict=True)})
        if resolved.has(sympy.Piecewise, *_JUMPS):
            return None
        try:
            d = with_budget(lambda: sympy.diff(resolved, _U), self.timeout)
            if d.has(sympy.Derivative, sympy.Subs):
                return None
            nodes = [n for n in sympy.preorder_traversal(resolved) if not n.is_Atom]
            check = lambdify_arb(sympy.Tuple(*nodes) if nodes else sympy.Tuple(_U), _U,
                                 cse=True)
            return lambdify_arb(d, _U, cse=True), check
        except Exception:  # noqa: BLE001 - no derivative: the box keeps the other bounds
            return None


def _mean_value(gp: arb, gq: arb, lo: arb, up: arb, w: arb) -> arb:
    r"""Upper bound of a continuous :math:`g` on :math:`[p, q]`, :math:`w = q - p`, from
    :math:`g(p) \le g_p`, :math:`g(q) \le g_q` and :math:`lo \le g' \le up`."""
    if up <= 0:
        return gp
    if lo >= 0:
        return gq
    # the lines g_p + up x and g_q - lo (w - x) cross inside [0, w]
    return ((-lo) * gp + up * gq - up * lo * w) / (up - lo)


def _phi_minus(u: arb) -> arb:
    r""":math:`\Phi(u)` as a ball (:math:`1 - \alpha(u)`)."""
    return (-u / arb(2).sqrt()).erfc() / 2


class _Search:
    def __init__(self, pieces: _Pieces, eps_h: float, tol: float, symmetric: bool,
                 check: Callable[[], None] | None, max_boxes: int) -> None:
        self.p, self.eps_h, self.tol = pieces, eps_h, tol
        self.symmetric, self.check, self.max_boxes = symmetric, check, max_boxes
        self.cache: dict[tuple[int, int], arb | None] = {}
        self.lower = arb(0)
        self.argmax = math.nan
        self.points = 0
        self.boxes = 0
        self.checked = 0

    def value(self, u: arb) -> arb | None:
        """g at the exact point u (cached); raises the proved lower end."""
        m, e = u.man_exp()
        k = (int(m), int(e))
        if k in self.cache:
            return self.cache[k]
        v = _ball(self.p.g, u, self.tol / 64)
        if v is not None and self.checked < 4 and abs(u) < 30:
            # the rewritten form against the typed one (disjoint balls: a wrong rewrite)
            w = _ball(self.p.g_check, u, self.tol / 64)
            if w is not None:
                _meet(v, w)
                self.checked += 1
        self.cache[k] = v
        self.points += 1
        if v is not None:
            self._seen(u, v)
        return v

    def _seen(self, u: arb, v: arb) -> None:
        with ctx.workprec(128):
            low = v.lower()
            if not low > self.lower:
                return
            eps_h = arb(self.eps_h)
            lo = arb(low)
            e0 = lo * u - lo * lo / 2
            if e0 > eps_h and u * u > 2 * eps_h:
                # any L below h(alpha_0) is also proved: the one whose tangent point is
                # eps_h exactly (the smaller root of L u - L^2/2 = eps_h), rounded down
                lo = (u - (u * u - 2 * eps_h).sqrt()).lower()
                e0 = lo * u - lo * lo / 2
            if not self.symmetric and e0 < 0:
                e0 = -e0        # the inverse curve's tangent point (module notes)
            if e0 >= 0 and e0 <= eps_h and lo > self.lower:
                self.lower = lo
                self.argmax = float(e0.mid())

    def upper(self, u1: arb, u2: arb, g1: arb | None, g2: arb | None) -> arb:
        """A proved upper bound of h_f on the box [u1, u2] (module notes: a, b, c)."""
        self.boxes += 1
        with ctx.workprec(128):
            w = u2 - u1
            best = arb("inf")
            if g1 is not None:                       # (c) the mechanism's monotonicity
                best = (g1 + w).upper()
            box = u1.union(u2)
            for f in self.p.g:                       # (a) the box's enclosure
                try:
                    v = f(box)
                except (ArithmeticError, ValueError, TypeError):
                    continue
                if v.is_finite():
                    best = best.min(v.upper())
            if g1 is not None and g2 is not None:    # (b) the mean-value bound
                d = self.p.derivative(box)
                if d is not None:
                    best = best.min(_mean_value(g1.upper(), g2.upper(), d[0], d[1], w)
                                    .upper())
        return best

    def run(self, ua: float, ub: float, *, tol: float, pieces: int = 32) -> arb:
        """The proved upper bound of h_f over [ua, ub] once it is within tol of the lower
        end (or the budget is spent: then the bound reached)."""
        with ctx.workprec(128):
            step = (arb(ub) - arb(ua)) / pieces
            pts = [arb(ua)] + [arb((arb(ua) + step * i).mid()) for i in range(1, pieces)] \
                + [arb(ub)]
        vals = [self.value(p) for p in pts]
        active = [(self.upper(pts[i], pts[i + 1], vals[i], vals[i + 1]), pts[i], pts[i + 1],
                   vals[i], vals[i + 1]) for i in range(pieces)]
        dropped = arb(-1)
        budget = self.boxes + self.max_boxes
        while True:
            if self.check is not None:
                self.check()
            keep = []
            for iv in active:
                if iv[0] > self.lower:
                    keep.append(iv)
                else:
                    dropped = dropped.max(iv[0])
            active = keep
            top = max([iv[0] for iv in active] + [dropped], key=lambda b: b.mid())
            with ctx.workprec(128):
                # a hair below tol: the floats of the bracket are rounded outward
                target = self.lower + tol * (1 - 2.0**-20)
            if top <= target or self.boxes >= budget or not top.is_finite():
                return top
            active.sort(key=lambda iv: -iv[0].mid())
            grown, rest = [], []
            for j, iv in enumerate(active):
                _, a, b, va, vb = iv
                if j >= 64 or not iv[0] > target:
                    rest.append(iv)
                    continue
                with ctx.workprec(128):
                    m = arb(((a + b) / 2).mid())
                if not a < m < b:
                    rest.append(iv)
                    continue
                vm = self.value(m)
                grown.append((self.upper(a, m, va, vm), a, m, va, vm))
                grown.append((self.upper(m, b, vm, vb), m, b, vm, vb))
            if not grown:
                return top
            active = rest + grown


def _log_s_upper(pieces: _Pieces, u: float) -> arb | None:
    """Upper end of log(1 - T) at alpha(u), or None."""
    v = _ball(pieces.s, arb(u), 2.0**-20, relative=True)
    if v is None or not v > 0:
        return None if v is None or not v <= 0 else arb("-inf")
    with ctx.workprec(128):
        return v.upper().log().upper()


def gdp_bracket(expr: sympy.Expr, var: sympy.Symbol, eps_h: float, tol: float, *,
                symmetric: bool = True, check: Callable[[], None] | None = None,
                max_boxes: int = MAX_BOXES, timeout: float | None = 10.0) -> GdpBracket:
    r"""A certified bracket on :math:`\sup_{[0, \varepsilon_h]} G` of the profile of the
    trade-off curve ``expr`` (in ``var``), through :math:`\sup_\alpha h` (module notes),
    with the failure probability :math:`\delta_{\mathrm{upper}}(\varepsilon_h)` of every
    head measurement.  ``upper is None`` (with ``reason``) when the route gave up.

    Args:
        expr: the curve :math:`T`, every parameter bound.
        var: its argument.
        eps_h: end of the head :math:`[0, \varepsilon_h]`.
        tol: width of the bracket.
        symmetric: as for :class:`~symgdp.notions.tradeoff.TradeoffSource`.
        check: called at every round (a time limit).
        max_boxes: budget of boxes.
        timeout: seconds for each symbolic step.

    Example:
        >>> a = sympy.Symbol("alpha")
        >>> G1 = sympy.erfc(-(sympy.sqrt(2) * sympy.erfcinv(2 * a) - 1) / sympy.sqrt(2)) / 2
        >>> b = gdp_bracket(G1, a, 100.0, 1e-6)
        >>> b.lower <= 1.0 <= b.upper, b.upper - b.lower <= 1e-6
        (True, True)
    """
    out = GdpBracket(eps_h=eps_h)
    try:
        g, s, g0, s0 = probit_form(expr, var, timeout)
        pieces = _Pieces(g, g0, s, s0, timeout)
    except (ArbUnsupported, SymgdpError, TypeError, ValueError, AttributeError) as exc:
        out.reason = f"no probit form ({type(exc).__name__}: {exc})"
        return out
    except Exception as exc:  # noqa: BLE001 - a symbolic budget spent, say
        out.reason = f"no probit form ({type(exc).__name__})"
        return out
    search = _Search(pieces, eps_h, tol, symmetric, check, max_boxes)
    try:
        return _bracket(search, pieces, eps_h, symmetric, out)
    except _Inconsistent as exc:
        out.reason = f"internal check failed ({exc})"
        return out


def _ends(pieces: _Pieces, mu: arb, eps_h: float, symmetric: bool, near: float
          ) -> tuple[float, float] | str:
    r"""``(u_lo, u_h)``: the range of :math:`u` to cover for a claim :math:`\mu` (module
    notes), or why none was found.  :math:`u_h` is (nearly) the smallest with :math:`1 -
    T(\alpha(u_h)) \le \delta_\mu(\varepsilon_h)`; with ``symmetric``, :math:`u_{lo}` is
    the largest of :math:`0, -1/4, \dots` with :math:`1 - \alpha_c \le
    \delta_\mu(-\log\alpha_c)`, else the (nearly) largest with :math:`1 - \alpha_t \le
    \delta_\mu(\varepsilon_h)`.  ``near``: a lower end of the claim (the guesses)."""
    with ctx.workprec(128):
        target = log_delta_mu_arb(eps_h, mu).lower()
    if not target.is_finite():
        return "delta_mu(eps_h) not enclosed"

    def head(u: float) -> bool:
        v = _log_s_upper(pieces, u)
        return v is not None and v <= target

    def tail(u: float) -> bool:
        with ctx.workprec(128):
            one_minus = _phi_minus(arb(u))
            if symmetric:
                x = (-(1 - one_minus).log()).upper()
                return bool(one_minus.upper() <= delta_mu_arb(x, mu).lower())
            return bool(one_minus.upper().log() <= target)

    # for G_mu the head condition holds from u = eps_h/mu + mu/2 on, exactly
    base = eps_h / near + near / 2
    u_h = _first(head, base, 1.0)
    if u_h is None:
        return ("1 - T(alpha) stays above delta_L(eps_h) on the probed alpha (T(0) < 1, "
                "or a power of the test too slowly tending to 1)")
    if symmetric:
        # the largest (the least alpha to cover: a curve 0 beyond some alpha needs it)
        u_lo = next((u for u in (0.25 * k for k in range(12, -41, -1)) if tail(u)), None)
    else:
        got = _first(lambda u: tail(-u), max(eps_h / near - near / 2, 1.0), 1.0)
        u_lo = None if got is None else -got
    if u_lo is None:
        return "no end alpha_c close enough to 1 was found"
    return u_lo, u_h


def _first(ok: Callable[[float], bool], base: float, pad: float) -> float | None:
    """A point ``u >= base - pad`` with ``ok(u)``, near the smallest such one when ``ok``
    is monotone (bisection; only a point where ``ok`` was checked is returned)."""
    hi = None
    for k in range(12):
        u = base * 1.25**k + pad
        if ok(u):
            hi = u
            break
    if hi is None:
        return None
    lo = base - pad
    for _ in range(30):
        if hi - lo <= 1e-3 * max(1.0, abs(hi)):
            break
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _bracket(search: _Search, pieces: _Pieces, eps_h: float, symmetric: bool,
             out: GdpBracket) -> GdpBracket:
    # a first lower end from a few points (their tangent points must lie in [0, eps_h])
    for u in (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0):
        search.value(arb(u))
    low0 = search.lower
    if not low0 > 0:
        out.reason = "no positive lower end at the probe points"
        return out
    tol = search.tol
    # a coarse pass on the range that the probes' lower end L0 needs (valid for any claim
    # >= L0), then the range of the claim L + tol/2 (nearer eps_h: the upper end must not
    # see alpha whose tangent eps lies beyond eps_h) to tol; the claim is then
    # max(top, L + tol/2), for which the ends were checked
    ends = _ends(pieces, low0, eps_h, symmetric, float(low0))
    if isinstance(ends, str):
        out.reason = ends
        return out
    coarse = max(tol, 1e-3)
    top = search.run(*ends, tol=coarse)
    with ctx.workprec(128):
        open_coarse = top > search.lower + coarse
    if top.is_finite() and top > search.lower + tol and not open_coarse:
        # (a coarse pass still open will not close finer: the fine pass is skipped)
        with ctx.workprec(128):
            claim = (search.lower + tol / 2).upper()
        got = _ends(pieces, claim, eps_h, symmetric, float(search.lower))
        if not isinstance(got, str):
            ends = got
            top = search.run(*ends, tol=tol).max(claim)
    u_lo, u_h = ends
    out.boxes, out.points = search.boxes, search.points
    if not top.is_finite():
        out.reason = f"h has no finite upper bound on [{u_lo:g}, {u_h:g}] (probit)"
        return out
    lower = float(search.lower)
    lower = lower if arb(lower) <= search.lower else math.nextafter(lower, -math.inf)
    upper = float(top.upper())
    upper = upper if arb(upper) >= top.upper() else math.nextafter(upper, math.inf)
    lower = max(lower, 0.0)
    if upper < lower:
        out.reason = f"inconsistent bracket [{lower!r}, {upper!r}]"
        return out
    out.lower, out.argmax = lower, search.argmax
    out.notes.append(
        f"alpha in [{_alpha(u_h)}, 1 - {_alpha(-u_lo)}] by {search.boxes} boxes and "
        f"{search.points} points in probit coordinates (u from {u_lo:g} to {u_h:.6g})")
    if upper - lower > tol:
        out.reason = (f"the bracket [{lower:.10g}, {upper:.10g}] did not close within "
                      f"{search.max_boxes} boxes")
        return out
    out.upper = upper
    return out


def _alpha(u: float) -> str:
    with ctx.workprec(64):
        return (arb(u) / arb(2).sqrt()).erfc().__truediv__(2).str(3, radius=False)
