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

Profiles built from ``Min``, ``Max`` and ``Piecewise`` (shuffling, subsampling caps,
refined profiles) are handled by their structure: a Min/Max of non-increasing arguments
is non-increasing (arguments provably above (Min) or below (Max) another one on the ball
are inactive and skipped), a Piecewise is that branch where only one branch can apply,
and with two it is crossed once at most when its condition is monotone, with no jump the
wrong way; the smooth pieces are differentiated one by one, and the derivative of the
whole on a ball is the hull over the active pieces (Clarke's generalised gradient, with
Lebourg's mean-value theorem).  Differences :math:`\operatorname{erfcx}(z) -
\operatorname{erfcx}(z + c)` are one function (``ErfcxDiff``) enclosed from its end-point
values, and the Taylor bounds go up to fourth order with point values at the midpoint.
Where the profile's erfcx form has a power-series enclosure (sums, products, powers, exp,
log, erfc, erfcx and ErfcxDiff, and Min/Max by their provably active argument), the test
first uses the Taylor form of order 12 of :math:`h` itself: its coefficients at the
midpoint from Arb's power series at that exact point (tight, so the tiny difference of two
nearly equal series survives), and only the remainder's coefficient enclosed on the whole
interval (theory §11) -- so that nearly Gaussian profiles (decimal literals, subsampled)
need few intervals, and about as many at tol 1e-9 as at 1e-6.


Implicit profiles (``LogDeltaRoot``) carry their implicit derivative
:math:`-h_\varepsilon/h_t`, and their root has a ball evaluation that proves it on the
whole ball (:func:`symgdp.implicit.log_delta_root_arb`, theory §11), so they are handled
like any other profile.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import sympy
from flint import arb, ctx, fmpq
from sympy.codegen.cfunctions import expm1

from ._bounded import Bounded, run_bounded, start_bounded
from .errors import AnalysisTimeout
from .implicit import LogDeltaRoot
from .interval import (
    _CONST,
    ArbUnsupported,
    Erfcx,
    ErfcxDiff,
    _abstract_constants,
    _kept_params,
    _param_value,
    _ParamBall,
    delta_mu_arb,
    erfcx_diff_orders_arb,
    lambdify_arb,
)

__all__ = ["FirstOrder", "dlog_delta_mu_arb", "normalise"]

_PREC = 64
#: largest profile (SymPy operations) given to the first-order machinery
MAX_OPS = 200
#: largest log-factor by which a leaf may rise within rounding (see FirstOrder.rise)
MAX_RISE = 1e-12
_PRECISIONS = (64, 128, 256, 512, 1024)
# relative radius of a point value of delta above which the precision is raised
_POINT_RTOL = 1e-6
# derivative expressions above this size are not normalised (expand can explode)
_MAX_OPS = 4000


def dlog_delta_mu_arb(eps: Any, mu: Any) -> arb:
    r"""Ball of :math:`\partial\log\delta_\mu(\varepsilon)/\partial\varepsilon =
    -e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)/\delta_\mu(\varepsilon)` at the
    precision in force (a point ``eps``; the function is non-increasing in it)."""
    e, m = arb(eps), arb(mu)
    b = -e / m - m / 2
    num = e.exp() * (-b * arb(0.5).sqrt()).erfc() / 2
    return -num / delta_mu_arb(e, m)


def _exp_args_expanded(e: sympy.Expr) -> sympy.Expr:
    return e.replace(lambda u: isinstance(u, sympy.exp),
                     lambda u: sympy.exp(sympy.expand(u.args[0])))


def normalise(e: sympy.Expr) -> sympy.Expr:
    r"""Combine exponentials and expand their arguments so that terms which cancel
    exactly (e.g. :math:`\varphi(a)` and :math:`e^{\varepsilon}\varphi(b)` with
    :math:`b^2 - a^2 = 2\varepsilon`) vanish symbolically.

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> normalise(sympy.exp(x) * sympy.exp(-(x + 1)**2 / 2) - sympy.exp(-(x**2 + 1) / 2))
        0
    """
    if sympy.count_ops(e) > _MAX_OPS:
        return e
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(normalise(b), c) for b, c in e.args])
    out = sympy.expand(e)
    out = sympy.powsimp(out, combine="exp")
    out = _exp_args_expanded(out)
    return sympy.expand(out)


def erfcx_form(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Rewrite :math:`\operatorname{erfc}` (and erf) of arguments in ``var`` as
    :math:`e^{-z^2}\operatorname{erfcx}(z)` and factor out one common exponential when the
    others differ from it by factors free of ``var``.

    The Gaussian profile :math:`\Phi(a) - e^{\varepsilon}\Phi(b)` becomes
    :math:`\tfrac12 e^{-a^2/2}[\operatorname{erfcx}(-a/\sqrt2) -
    \operatorname{erfcx}(-b/\sqrt2)]` (because :math:`b^2 - a^2 = 2\varepsilon`), whose
    logarithm no longer varies by orders of magnitude across a short interval.  An
    expression without such a structure is returned unchanged (per Piecewise branch).

    Example:
        >>> import sympy
        >>> x, m = sympy.symbols("x m", positive=True)
        >>> phi = lambda t: sympy.erfc(-t / sympy.sqrt(2)) / 2
        >>> f = erfcx_form(phi(-x/m + m/2) - sympy.exp(x) * phi(-x/m - m/2), x)
        >>> sorted(str(a.args[0]) for a in f.atoms(sympy.exp))
        ['-m**2/8 + x/2 - x**2/(2*m**2)']
    """
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(erfcx_form(b, var), c) for b, c in expr.args])
    if not any(var in f.free_symbols for f in expr.atoms(sympy.erfc, sympy.erf)):
        return expr
    if isinstance(expr, (sympy.Mul, sympy.Min, sympy.Max)):
        return expr.func(*[erfcx_form(a, var) for a in expr.args])
    # erf(u) = 1 - erfc(u), with u expanded so that SymPy's canonical sign rule
    # erfc(-w) = 2 - erfc(w) applies: 1 + erf(1 - eps/2) becomes erfc(eps/2 - 1), which has
    # no cancellation in the tail, instead of 2 - erfc(1 - eps/2), which cancels there
    e = expr.replace(lambda u: isinstance(u, sympy.erf) and var in u.free_symbols,
                     lambda u: 1 - sympy.erfc(sympy.expand(u.args[0])))
    if e != expr:
        e = sympy.expand(e, deep=False, power_base=False, power_exp=False, log=False,
                         multinomial=False)
    e = e.replace(lambda u: isinstance(u, sympy.erfc) and var in u.free_symbols,
                  lambda u: sympy.exp(-sympy.expand(u.args[0]**2)) * Erfcx(u.args[0]))
    e = normalise(e)
    terms = sympy.Add.make_args(e)
    lead = None
    for t in terms:
        exps = [f.args[0] for f in sympy.Mul.make_args(t) if isinstance(f, sympy.exp)]
        if any(var in a.free_symbols for a in exps):
            lead = sympy.Add(*exps)
            break
    if lead is None:
        return expr
    rest = [normalise(t * sympy.exp(-lead)) for t in terms]
    for r in rest:
        for t in sympy.Add.make_args(r):
            if any(isinstance(f, sympy.exp) and var in f.free_symbols
                   and not _negligible_rate(f.args[0], var)
                   for f in sympy.Mul.make_args(t)):
                return expr  # the terms do not share one exponential scale
    return sympy.Mul(sympy.exp(lead), _paired(sympy.Add(*rest), var), evaluate=False)


def _paired(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Terms :math:`C\operatorname{erfcx}(z) - C r\operatorname{erfcx}(z + c)` (``c`` free
    of ``var``, ``r`` = 1 or :math:`e^{q}` with a negligible rate ``q``) as
    :math:`C\,\mathrm{ErfcxDiff}(z, c) + C(1 - r)\operatorname{erfcx}(z + c)`: an exact
    rewrite whose ball enclosure keeps the cancellation out (see ErfcxDiff)."""
    items, out = [], []
    for t in sympy.Add.make_args(e):
        fs = sympy.Mul.make_args(t)
        ex = [f for f in fs if isinstance(f, Erfcx) and (len(f.args) == 1 or f.args[1] == 0)
              and var in f.free_symbols]
        if len(ex) == 1:
            items.append((sympy.Mul(*[f for f in fs if f is not ex[0]]), ex[0].args[0]))
        else:
            out.append(t)
    used: set[int] = set()
    for i, (ci, zi) in enumerate(items):
        if i in used:
            continue
        for j in range(i + 1, len(items)):
            cj, zj = items[j]
            c = sympy.expand(zj - zi)
            if j in used or var in c.free_symbols or c == 0:
                continue
            r = sympy.powsimp(-cj / ci, combine="exp")
            if r != 1 and not (isinstance(r, sympy.exp) and _negligible_rate(
                    sympy.expand(r.args[0]), var)):
                continue
            used.update((i, j))
            out.append(ci * ErfcxDiff(zi, c))
            if r != 1:
                # 1 - e^q as -expm1(q): kept whole (expanded it would cancel again)
                out.append(-ci * expm1(r.args[0]) * Erfcx(zj))
            break
        else:
            out.append(ci * Erfcx(zi))
    return sympy.Add(*out)



def _negligible_rate(arg: sympy.Expr, var: sympy.Symbol) -> bool:
    """A polynomial exponent in ``var`` whose coefficients are all below 1e-9 (what is
    left of two exponents that agree up to the rounding of decimal literals): the
    factor stays in the (exact) rewrite and hardly varies."""
    try:
        poly = sympy.Poly(arg, var)
    except sympy.PolynomialError:
        return False
    coeffs = poly.coeffs()[:-1] if poly.coeffs() and poly.monoms()[-1] == (0,) else \
        poly.coeffs()
    return all(c.is_number and abs(float(c)) <= 1e-9 for c in coeffs)


def normalise_fractions(e: sympy.Expr) -> sympy.Expr:
    """:func:`normalise` applied to the numerator and denominator of each term separately
    (a ratio such as :math:`S'/S` must stay one fraction: expanding it would split it into
    large cancelling terms)."""
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(normalise_fractions(b), c) for b, c in e.args])
    out = []
    for t in sympy.Add.make_args(e):
        n, d = sympy.fraction(t)
        out.append(normalise(n) / normalise(d))
    return sympy.Add(*out)


def _log_expanded(expr: sympy.Expr) -> sympy.Expr:
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(_log_expanded(b), c) for b, c in expr.args])
    # log Max(f, 0) = log f where the profile is positive (where it is 0 the first-order
    # test is not used: delta(x) = 0 closes the interval)
    # (only a Max that is the whole expression or one of its factors: inside a sum the
    # terms with f < 0 contribute 0, not f)
    def drop(e: sympy.Expr) -> sympy.Expr:
        if isinstance(e, sympy.Max) and len(e.args) == 2 and any(a.is_zero for a in e.args):
            return [a for a in e.args if not a.is_zero][0]
        return e

    if isinstance(expr, sympy.Mul):
        expr = sympy.Mul(*[drop(f) for f in expr.args])
    else:
        expr = drop(expr)
    out = sympy.expand_log(sympy.log(expr), force=True)
    # log Min(a, b) = Min(log a, log b) (e.g. the cap Min(1, X) of a subsampled profile)
    return out.replace(
        lambda e: isinstance(e, sympy.log) and isinstance(e.args[0], (sympy.Min, sympy.Max))
        and not any(a.is_zero for a in e.args[0].args),
        lambda e: e.args[0].func(*[sympy.expand_log(sympy.log(a), force=True)
                                   for a in e.args[0].args], evaluate=False))


def _derivatives(expr: sympy.Expr, var: sympy.Symbol,
                 normalised: bool = True) -> tuple[sympy.Expr, ...]:
    """delta', (log delta)', (log delta)'' -- normalised (run under a time budget;
    ``normalised=False`` leaves delta' as SymPy differentiates it)."""
    d1 = sympy.diff(expr, var)
    if normalised:
        d1 = normalise(d1)
    logexpr = _log_expanded(erfcx_form(expr, var))
    l1 = normalise_fractions(sympy.diff(logexpr, var))
    # not normalised: expanding (S'/S)' = S''/S - (S'/S)^2 over one denominator S^2
    # would create cancelling terms
    l2 = sympy.diff(l1, var)
    return d1, l1, l2


def _doit_finite(expr: sympy.Expr) -> sympy.Expr:
    return expr.replace(
        lambda e: isinstance(e, (sympy.Sum, sympy.Product))
        and all(lim.is_number for lim in sum((list(t[1:]) for t in e.limits), [])),
        lambda e: e.doit())


def _positive(b: arb) -> bool:
    return bool(b > 0)


# relative jump at a branch point below which it counts as continuous: it moves
# log delta by < 1e-29, far inside the outward-rounding margins of the bracket
_JUMP_RTOL = 1e-30


def _split_points(expr: sympy.Expr, var: sympy.Symbol
                  ) -> tuple[list[sympy.Expr], list[sympy.Expr], list[sympy.Expr]]:
    """Branch points ``c`` of simple conditions ``var < c`` of the (folded) top-level
    Piecewise where the profile is continuous, those where it jumps down (both checked
    at 256 bits), and the left-minus-right sides of every other condition or Heaviside
    argument (where the profile may jump either way).  A condition is simple only in the
    leading run of increasing ends (:func:`_increasing_ends`): elsewhere the next branch
    need not be the one that applies right of ``c``."""
    jumps: list[sympy.Expr] = []
    points: list[sympy.Expr] = []
    downs: list[sympy.Expr] = []
    try:
        folded = sympy.piecewise_fold(expr)
    except RecursionError:
        # SymPy recurses without end on some near-equal Float conditions (a refined step
        # profile with eps < 1.1 inside eps < 1.100000000000000088817841970012523233891);
        # unfolded, every nested condition is a possible jump: coarser, still sound
        folded = expr
    for h in folded.atoms(sympy.Heaviside):
        if var in h.args[0].free_symbols:
            jumps.append(h.args[0])
    pws = [folded] if isinstance(folded, sympy.Piecewise) else []
    nested = [q for q in folded.atoms(sympy.Piecewise) if q is not folded]
    for pw in pws + nested:
        args = pw.args
        ends = _increasing_ends(args, var) if pw is folded else []
        for i, (branch, cond) in enumerate(args):
            if cond is sympy.true or var not in cond.free_symbols:
                continue
            rel = cond
            # branch i holds left of its end c and branch i + 1 right of it only when the
            # conditions up to i + 1 are var < c_k (or <=) with c_k increasing (or the
            # last is True): Piecewise((f, x < 2), (g, x < 1), (h, True)) switches from f
            # to h at 2, and comparing f with g there would call a jump continuous
            simple = i + 1 < len(ends)
            kind = _continuous(branch, args[i + 1][0], var, rel.rhs) if simple else None
            if kind is not None:
                (points if kind == "continuous" else downs).append(rel.rhs)
                continue
            for r in ([rel] if isinstance(rel, sympy.core.relational.Relational)
                      else list(rel.atoms(sympy.core.relational.Relational))):
                jumps.append(r.lhs - r.rhs)
            if not isinstance(rel, sympy.core.relational.Relational) and not rel.atoms(
                    sympy.core.relational.Relational):
                jumps.append(var - var)  # unknown condition: never trusted (never decided)
    return points, downs, jumps


def _increasing_ends(args: tuple, var: sympy.Symbol) -> list[Any]:
    """The longest run of leading conditions ``var < c_k`` / ``var <= c_k`` (numeric
    ``c_k``, proved strictly increasing at 256 bits), then a ``True`` if one follows:
    the branches of that run are the successive pieces of the profile."""
    ends: list[Any] = []
    for _branch, cond in args:
        if cond is sympy.true:
            ends.append(None)
            break
        if not (isinstance(cond, (sympy.StrictLessThan, sympy.LessThan))
                and cond.lhs == var and cond.rhs.is_number):
            break
        try:
            with ctx.workprec(256):
                c = lambdify_arb(cond.rhs, var)(0)
        except (ArbUnsupported, ValueError, TypeError, ZeroDivisionError):
            break
        if not c.is_finite() or (ends and not bool(c > ends[-1])):
            break
        ends.append(c)
    return ends


def _continuous(left: sympy.Expr, right: sympy.Expr, var: sympy.Symbol,
                c: sympy.Expr) -> str | None:
    """"continuous", "down" (a proved downward jump) or None (undecided / upward)."""
    try:
        fl, fr = lambdify_arb(left, var), lambdify_arb(right, var)
        with ctx.workprec(256):
            cb = lambdify_arb(c, var)(0)
            a, b = fl(cb), fr(cb)
            if bool(abs(a - b) <= _JUMP_RTOL * abs(a)):
                return "continuous"
            return "down" if bool(b < a) else None
    except (ArbUnsupported, ValueError, TypeError, ZeroDivisionError):
        return None


def _monotone_parts(expr: sympy.Expr, var: sympy.Symbol) -> list[sympy.Expr]:
    """Parts whose being non-increasing makes ``expr`` non-increasing: the arguments of
    Max/Min, the terms of a sum, the factor of a positive constant (recursively)."""
    if var not in expr.free_symbols:
        return []
    if isinstance(expr, (sympy.Max, sympy.Min, sympy.Add)):
        return [q for a in expr.args for q in _monotone_parts(a, var)]
    if isinstance(expr, sympy.Mul):
        const = [f for f in expr.args if var not in f.free_symbols]
        rest = [f for f in expr.args if var in f.free_symbols]
        c = sympy.Mul(*const)
        if len(rest) == 1 and c.is_positive:
            return _monotone_parts(rest[0], var)
    return [expr]


_INCREASING = {sympy.erf: 1, sympy.erfc: -1, Erfcx: -1, sympy.atan: 1, sympy.tanh: 1,
               sympy.sinh: 1, sympy.Heaviside: 1, sympy.exp: 1, sympy.log: 1}


class _Monotone:
    r"""Structural proof that an expression is monotone on a ball (theory §6).

    Sums, products of non-negative factors, increasing functions of monotone arguments
    and Min/Max of monotone arguments are monotone in the same direction -- no need to
    locate kinks or crossings.  A Min/Max argument that is provably above (Min) or below
    (Max) another one on the ball is not active there and is skipped.  A Piecewise with
    one possible branch on the ball is that branch; with two, the boundary is crossed
    once when the condition's left side is monotone, and the branches must not jump the
    wrong way there (decided from their values on the ball or at a constant boundary
    point).  Anything else is proved by the sign of its SymPy derivative on the ball.
    Values and derivatives of the sub-expressions are compiled lazily, once.
    """

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...]) -> None:
        self.var, self.params = var, params
        self._fns: dict[sympy.Expr, Any] = {}
        self._dfns: dict[sympy.Expr, Any] = {}
        self._hv: dict[sympy.Expr, bool] = {}
        self.expr = expr
        # the parameter values of the call in progress: the prover is shared by every
        # profile of the same structure, so they are per thread, set by each entry point
        self._local = threading.local()
        #: piece -> ball functions of (delta', (log delta)', (log delta)'',
        #: (log delta)''') (see derivative), and delta' of each piece
        self.pieces: dict[sympy.Expr, tuple[Any, ...]] = {}
        self.piece_d1: dict[sympy.Expr, sympy.Expr] = {}

    @property
    def pvals(self) -> tuple[Any, ...]:
        return getattr(self._local, "pvals", ())

    @pvals.setter
    def pvals(self, values: tuple[Any, ...]) -> None:
        self._local.pvals = values

    def _has(self, e: sympy.Expr) -> bool:
        v = self._hv.get(e)
        if v is None:
            v = self._hv[e] = self.var in e.free_symbols
        return v

    def _value(self, e: sympy.Expr, ball: arb) -> arb:
        return self._eval(self._fns, e, ball, False)

    def _slope(self, e: sympy.Expr, ball: arb) -> arb:
        return self._eval(self._dfns, e, ball, True)

    def _eval(self, cache: dict[sympy.Expr, Any], e: sympy.Expr, ball: arb,
              derivative: bool) -> arb:
        """``e`` (or its derivative) on ``ball``, compiled once; NaN where undefined."""
        fn = cache.get(e)
        if fn is None:
            try:
                f = e
                if derivative:
                    f = sympy.diff(e, self.var) if sympy.count_ops(e) <= MAX_OPS else None
                fn = lambdify_arb(f, self.var, self.params) if f is not None else False
            except (ArbUnsupported, TypeError, ValueError):
                fn = False
            cache[e] = fn

        if fn is False:
            return arb("nan")
        try:
            return fn(ball, *self.pvals)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return arb("nan")


    # -- the derivative as the hull over the active smooth pieces ---------------------
    # A Min/Max of smooth pieces is locally Lipschitz, and its Clarke gradient lies in the
    # hull of the gradients of the pieces active there (Clarke 1983, Prop. 2.3.12); the
    # mean-value theorem of Lebourg (1975) then bounds it like a smooth function.  Jumps
    # of a Piecewise are excluded by the caller (FirstOrder.smooth).

    def leaves(self, e: sympy.Expr | None = None) -> list[sympy.Expr]:
        """The smooth pieces: what is left below the Min/Max/Piecewise nodes."""
        e = self.expr if e is None else e
        if self._has(e):
            if isinstance(e, (sympy.Min, sympy.Max)) and not any(
                    a.is_zero for a in e.args):
                return [q for a in e.args for q in self.leaves(a)]
            if isinstance(e, sympy.Piecewise):
                return [q for b, _ in e.args for q in self.leaves(b)]
        return [e]

    def active(self, e: sympy.Expr, ball: arb) -> list[sympy.Expr] | None:
        """The pieces that may give the value of ``e`` somewhere on ``ball``."""
        if self._has(e):
            if isinstance(e, (sympy.Min, sympy.Max)) and not any(
                    a.is_zero for a in e.args):
                out: list[sympy.Expr] = []
                for a in self._active_args(e, ball):
                    q = self.active(a, ball)
                    if q is None:
                        return None
                    out += q
                return out
            if isinstance(e, sympy.Piecewise):
                out = []
                for branch, c in e.args:
                    val = self._cond(c, ball)[0]
                    if val is False:
                        continue
                    q = self.active(branch, ball)
                    if q is None:
                        return None
                    out += q
                    if val is True:
                        return out
                return None
        return [e]

    def derivative(self, which: int, ball: arb, pvals: tuple[arb, ...]) -> arb:
        """Hull of the derivative ``which`` (0: delta', 1: (log delta)', 2 and 3: the
        second and third derivatives of log delta) of the pieces active on ``ball``; the
        higher derivatives only where one piece is active (a kink has none)."""

        self.pvals = pvals
        act = self.active(self.expr, ball)
        if not act:
            return arb("nan")
        act = list(dict.fromkeys(act))
        if which >= 2 and len(act) > 1:
            return arb("nan")
        out: arb | None = None
        for q in act:
            fn = self.pieces.get(q)
            if fn is None:
                return arb("nan")
            try:
                v = fn[which](ball, *pvals)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                return arb("nan")
            if not v.is_finite():
                return arb("nan")
            out = v if out is None else out.union(v)
        return out

    def prove(self, ball: arb, pvals: tuple[arb, ...]) -> bool:
        """Non-increasing on ``ball`` (proved)."""
        self.pvals = pvals
        with ctx.workprec(_PREC):
            return self._mono(self.expr, ball, -1)

    def _sign(self, e: sympy.Expr, ball: arb) -> int:
        v = self._value(e, ball)
        if v.is_finite():
            if v >= 0:
                return 1
            if v <= 0:
                return -1
        return 0

    def _mono(self, e: sympy.Expr, ball: arb, d: int) -> bool:
        """``e`` non-decreasing (d = 1) or non-increasing (d = -1) on ``ball``."""
        var = self.var
        if not self._has(e):
            return True
        if e == var:
            return d == 1
        if isinstance(e, sympy.Add):
            if all(self._mono(a, ball, d) for a in e.args):
                return True
        elif isinstance(e, sympy.Mul):
            if self._mono_mul(e, ball, d):
                return True
        elif isinstance(e, sympy.Pow):
            if self._mono_pow(e, ball, d):
                return True
        elif isinstance(e, (sympy.Min, sympy.Max)):
            return self._mono_minmax(e, ball, d)
        elif isinstance(e, sympy.Piecewise):
            return self._mono_piecewise(e, ball, d)
        elif type(e) in _INCREASING and len(e.args) == 1 or isinstance(e, Erfcx) and (
                len(e.args) == 1 or e.args[1] == 0):
            if self._mono(e.args[0], ball, d * _INCREASING[type(e)]):
                return True
        fns = self.pieces.get(e)
        if fns is not None and d == -1:
            # a piece's log-derivative (cancellation-free forms): <= 0 where it is > 0,
            # and a factor Max(0, f) dropped from it is constant where f <= 0
            try:
                s = fns[1](ball, *self.pvals)
            except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                s = arb("nan")
            if s.is_finite() and s <= 0:
                return True
            d1 = self.piece_d1.get(e)
            if d1 is not None and self._signed(d1, ball, -1):
                return True

        if e.has(sympy.Piecewise):
            return False  # its derivative would ignore the jumps between branches
        s = self._slope(e, ball)
        return bool(s.is_finite() and (s >= 0 if d == 1 else s <= 0))

    def _signed(self, e: sympy.Expr, ball: arb, s: int) -> bool:
        """``e`` >= 0 (s = 1) or <= 0 (s = -1) on ``ball``, from the signs of the terms of a
        sum and of the factors of each product: the midpoint-radius product of two
        positive balls with large relative radii may contain 0, the signs of the factors
        do not lose that."""
        if isinstance(e, sympy.Add):
            return all(self._signed(a, ball, s) for a in e.args)
        if isinstance(e, sympy.Mul):
            sign = 1
            for f in e.args:
                sf = self._sign(f, ball)
                if sf == 0:
                    break
                sign *= sf
            else:
                return sign == s
        v = self._value(e, ball)
        return bool(v.is_finite() and (v >= 0 if s == 1 else v <= 0))

    def _mono_mul(self, e: sympy.Mul, ball: arb, d: int) -> bool:
        const = sympy.Mul(*[f for f in e.args if not self._has(f)])
        rest = [f for f in e.args if self._has(f)]
        c = self._sign(const, ball)
        if c == 0:
            return False
        d *= c
        if len(rest) == 1:
            return self._mono(rest[0], ball, d)
        # a product of non-negative factors, each monotone in the same direction
        return all(self._sign(f, ball) == 1 and self._mono(f, ball, d) for f in rest)

    def _mono_pow(self, e: sympy.Pow, ball: arb, d: int) -> bool:
        b, x = e.args
        if self._has(x):
            if self._has(b):
                return False
            # b**x = exp(x log b): monotone in x with the sign of log b
            s = self._sign(b - 1, ball)
            return s != 0 and self._sign(b, ball) == 1 and self._mono(x, ball, d * s)
        sb = self._sign(b, ball)
        if x.is_positive:
            if x.is_integer and x.is_odd:
                return self._mono(b, ball, d)
            if sb == 1:
                return self._mono(b, ball, d)
            if sb == -1 and x.is_integer and x.is_even:
                return self._mono(b, ball, -d)
            return False
        if x.is_negative:
            v = self._value(b, ball)
            if v.is_finite() and v > 0:
                return self._mono(b, ball, -d)
        return False

    def _active_args(self, e: sympy.Expr, ball: arb) -> list[sympy.Expr]:
        """The arguments of a Min (Max) not provably above (below) another on ``ball``."""
        vals = [self._value(a, ball) for a in e.args]
        if not all(v.is_finite() for v in vals):
            return list(e.args)
        if isinstance(e, sympy.Min):
            ceil = min(vals, key=lambda v: float(v.upper()))
            return [a for a, v in zip(e.args, vals, strict=True) if not bool(v > ceil)]
        floor = max(vals, key=lambda v: float(v.lower()))
        return [a for a, v in zip(e.args, vals, strict=True) if not bool(v < floor)]

    def _mono_minmax(self, e: sympy.Expr, ball: arb, d: int) -> bool:
        return all(self._mono(a, ball, d) for a in self._active_args(e, ball))

    def _cond(self, c: Any, ball: arb) -> tuple[bool | None, sympy.Expr | None, int]:
        """(decided value, left side u of ``u < 0``-type condition, +1 for u < 0 / u <= 0,
        -1 for u > 0 / u >= 0)."""
        if c is sympy.true:
            return True, None, 0
        if c is sympy.false:
            return False, None, 0
        if not isinstance(c, (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan,
                              sympy.GreaterThan)):
            return None, None, 0
        u = c.lhs - c.rhs
        v = self._value(u, ball)
        if not v.is_finite():
            return None, u, 0
        strict = isinstance(c, (sympy.StrictLessThan, sympy.StrictGreaterThan))
        if isinstance(c, (sympy.StrictLessThan, sympy.LessThan)):
            yes = (v < 0) if strict else (v <= 0)
            no = (v >= 0) if strict else (v > 0)
            side = 1
        else:
            yes = (v > 0) if strict else (v >= 0)
            no = (v <= 0) if strict else (v < 0)
            side = -1
        return (True if yes else False if no else None), u, side

    def _mono_piecewise(self, e: sympy.Piecewise, ball: arb, d: int) -> bool:
        cands: list[tuple[sympy.Expr, sympy.Expr | None, int]] = []
        for branch, c in e.args:
            val, u, side = self._cond(c, ball)
            if val is False:
                continue
            cands.append((branch, u, side))
            if val is True:
                break
        else:
            return False  # possibly no branch applies
        if len(cands) == 1:
            return self._mono(cands[0][0], ball, d)
        if len(cands) != 2 or cands[0][1] is None:
            return False
        (a, u, side), (b, _, _) = cands
        if not (self._mono(a, ball, d) and self._mono(b, ball, d)):
            return False
        # the set {u < 0} (side 1) or {u > 0} (side -1) is an initial segment of the ball
        # when u is non-decreasing (side 1) or non-increasing (side -1); a final one in the
        # other two cases
        if self._mono(u, ball, side):
            left, right = a, b
        elif self._mono(u, ball, -side):
            left, right = b, a
        else:
            return False
        # the value must not jump the wrong way where the boundary is crossed
        lv, rv = self._value(left, ball), self._value(right, ball)
        if lv.is_finite() and rv.is_finite() and (lv >= rv if d == -1 else lv <= rv):
            return True
        # a boundary var = c (u = +-(var - c)): compare the branches at c itself
        rest, dep = u.as_independent(self.var, as_Add=True)
        if dep not in (self.var, -self.var):
            return False
        with ctx.workprec(256):
            cb = self._value(-rest if dep == self.var else rest, ball)
            if not (cb.is_finite() and cb.rad() <= 2.0**-200 * (1 + abs(cb.mid()))):
                return False
            lv, rv = self._value(left, cb), self._value(right, cb)
            if not (lv.is_finite() and rv.is_finite()):
                return False
            # within the relative jump treated as continuity elsewhere (_JUMP_RTOL)
            slack = _JUMP_RTOL * abs(lv)
            return bool(lv + slack >= rv if d == -1 else lv - slack <= rv)


@functools.lru_cache(maxsize=32)
def _structure(expr: sympy.Expr, var: sympy.Symbol,
               params: tuple[sympy.Symbol, ...]) -> _Monotone | None:
    """The structural monotonicity prover, for profiles built from Min, Max or
    Piecewise (where the derivative of the whole expression is large and loose)."""
    if not expr.has(sympy.Min, sympy.Max, sympy.Piecewise):
        return None
    return _Monotone(_distribute(_doit_finite(expr), var), var, params)


def _distribute(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """Positive constant factors moved into Min/Max/Piecewise (c Min(a, b) = Min(c a,
    c b)), so that the pieces below them are the smooth parts."""
    if isinstance(e, (sympy.Min, sympy.Max)):
        return e.func(*[_distribute(a, var) for a in e.args], evaluate=False)
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(_distribute(b, var), c) for b, c in e.args])
    if isinstance(e, sympy.Mul):
        rest = [f for f in e.args if var in f.free_symbols]
        c = sympy.Mul(*[f for f in e.args if var not in f.free_symbols])
        if len(rest) == 1 and c.is_positive and isinstance(
                rest[0], (sympy.Min, sympy.Max, sympy.Piecewise)):
            inner = rest[0]
            if isinstance(inner, sympy.Piecewise):
                return sympy.Piecewise(*[(_distribute(c * b, var), k)
                                         for b, k in inner.args])
            return inner.func(*[_distribute(c * a, var) for a in inner.args],
                              evaluate=False)
    return e



def _value_free(expr: sympy.Expr) -> bool:
    """Whether nothing of the symbolic preparation of ``expr`` (derivatives, erfcx forms,
    finite sums) depends on the values of its constants: not with erf/erfc, whose
    rewriting pairs exponents that agree up to a negligible rate (a test on the
    constants' values), nor with finite sums (their limits must stay numbers), nor with
    an implicit root (whether its residual is defined at the origin is decided from its
    numbers)."""
    return not expr.has(sympy.erf, sympy.erfc, Erfcx, ErfcxDiff, sympy.Sum, sympy.Product,
                        LogDeltaRoot)


def _param_ball(v: sympy.Expr) -> Any:
    """A parameter value: an exact rational where it is a number, else its ball."""
    p = _param_value(v)
    return p.ball() if isinstance(p, _ParamBall) else p


def _shared_form(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...]
                 ) -> tuple[sympy.Expr, tuple[sympy.Symbol, ...], tuple[Any, ...]]:
    """``expr`` with its decimal literals abstracted (``_abstract_constants``) where
    nothing of the symbolic preparation depends on their values (``_value_free``)."""
    if not _value_free(expr):
        return expr, (), ()
    out, csyms, cvals = _abstract_constants(expr)
    if csyms and any(s.name.startswith(_CONST) for s in (var, *params)):
        return expr, (), ()
    return out, csyms, cvals


@functools.lru_cache(maxsize=32)
def _compiled(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...],
              timeout: float | None) -> tuple[Any, ...]:
    """Ball functions of the profile and its derivatives, compiled once per expression
    (Float parameters stay symbols, so e.g. every ``laplace(eps0)`` shares them)."""
    expr = _doit_finite(expr)
    if sympy.count_ops(expr) > MAX_OPS:
        raise ArbUnsupported(f"the profile has more than {MAX_OPS} operations: too large "
                             "for the symbolic derivative of the first-order search")
    # decimal literals as the exact binary numbers they store: SymPy would otherwise
    # round e.g. exp(-0.28125) or 1 - 1.5*0.666666666666667 to 53 bits while the
    # derivatives are built, and the ball functions would enclose a nearby expression
    expr = expr.xreplace({c: sympy.Rational(c) for c in expr.atoms(sympy.Float)})
    f = lambdify_arb(expr, var, params)
    structure = _structure(expr, var, params)
    if structure is not None and len(structure.leaves()) > 1:
        # a Min/Max/Piecewise of smooth pieces: differentiate the pieces one by one (the
        # derivative of the whole is large, slow to build and loose on a ball)
        pieces = list(dict.fromkeys(structure.leaves()))
        try:
            ders = run_bounded(_piece_derivatives, pieces, var, timeout=timeout)
        except AnalysisTimeout as exc:
            raise ArbUnsupported(f"the derivative of the profile timed out: {exc}") from exc
        for q, (d1, l1, l2) in zip(pieces, ders, strict=True):
            structure.piece_d1[q] = d1

            structure.pieces[q] = (lambdify_arb(d1, var, params),
                                   lambdify_arb(l1, var, params, cse=True),
                                   lambdify_arb(l2, var, params, cse=True),
                                   _Lazy(l2, var, params))
            structure.pieces[q] += (structure.pieces[q][3].next(),)
        return (f, functools.partial(_structured, structure, 0), [],
                functools.partial(_structured, structure, 1),
                functools.partial(_structured, structure, 2), None, structure,
                (functools.partial(_structured, structure, 3),
                 functools.partial(_structured, structure, 4)))
    try:
        d1, l1, l2 = run_bounded(_derivatives, expr, var, timeout=timeout)
    except AnalysisTimeout as exc:
        raise ArbUnsupported(f"the derivative of the profile timed out: {exc}") from exc
    d1_fn = lambdify_arb(d1, var, params)
    d1_terms = []
    if d1.has(sympy.Heaviside):
        # one compiled function: the Heaviside-free factor of each term and the
        # Heaviside arguments, evaluated together on a ball
        rests, hargs = [], []
        for t in sympy.Add.make_args(d1):
            fs = sympy.Mul.make_args(t)
            rests.append(sympy.Mul(*[g for g in fs if not isinstance(g, sympy.Heaviside)]))
            hargs.append([g.args[0] for g in fs if isinstance(g, sympy.Heaviside)])
        flat = [*rests, *(h for hs in hargs for h in hs)]
        fn = lambdify_arb(sympy.Tuple(*flat), var, params)
        d1_terms = [(fn, [len(hs) for hs in hargs])]
    l1_fn = lambdify_arb(l1, var, params, cse=True)
    l2_fn = lambdify_arb(l2, var, params, cse=True)
    parts = _monotone_parts(expr, var)
    parts_fn = None
    if len(parts) > 1 or (parts and parts[0] != expr):
        parts_fn = lambdify_arb(sympy.Tuple(*[sympy.diff(q, var) for q in parts]), var,
                                params)
    l3_fn = _Lazy(l2, var, params)
    return f, d1_fn, d1_terms, l1_fn, l2_fn, parts_fn, structure, (l3_fn, l3_fn.next())


class _Lazy:
    """The ball function of the derivative of ``expr`` (or of ``parent``'s derivative),
    differentiated and compiled on first use; :meth:`next` is the derivative after it."""

    def __init__(self, expr: sympy.Expr | None, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...], parent: _Lazy | None = None) -> None:
        self._args, self._fn, self._d = (expr, var, params), None, None
        self._parent = parent
        self._next: _Lazy | None = None

    def derivative(self) -> sympy.Expr | None:
        if self._d is None:
            expr, var, _ = self._args
            if self._parent is not None:
                expr = self._parent.derivative()
            d = sympy.diff(expr, var) if expr is not None else None
            self._d = d if d is not None and sympy.count_ops(d) <= _MAX_OPS else False
        return self._d if self._d is not False else None

    def next(self) -> _Lazy:
        if self._next is None:
            self._next = _Lazy(None, *self._args[1:], parent=self)
        return self._next

    def __call__(self, ball: arb, *pvals: arb) -> arb:
        if self._fn is None:
            _, var, params = self._args
            try:
                d = self.derivative()
                self._fn = lambdify_arb(d, var, params, cse=True) if d is not None else False
            except (ArbUnsupported, TypeError, ValueError):
                self._fn = False
        if self._fn is False:
            return arb("nan")
        return self._fn(ball, *pvals)


def _structured(structure: _Monotone, which: int, ball: arb, *pvals: arb) -> arb:
    return structure.derivative(which, ball, pvals)


def _piece_derivatives(pieces: list[sympy.Expr], var: sympy.Symbol
                       ) -> list[tuple[sympy.Expr, ...]]:
    out = []
    for q in pieces:
        if var not in q.free_symbols:
            out.append((sympy.Integer(0),) * 3)
        else:
            # delta' normalised only where exactly cancelling Gaussian terms are expected
            # (expanding it can blow up elsewhere, e.g. exp(-n s^2))
            out.append(_derivatives(q, var, normalised=q.has(sympy.erf, sympy.erfc)))
    return out


class FirstOrder:
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
            # values (see _kept_params, _value_free), so that every point of a parameter
            # grid shares one compile
            floats = list(_kept_params(profile.expr, values, _value_free(profile.expr)))
            kept = {s for s, _ in floats}
            expr = profile.expr.xreplace({s: v for s, v in values if s not in kept})
        params = tuple(s for s, _ in floats)
        pvals = tuple(_param_ball(v) for _, v in floats)
        # decimal literals as symbols fed as exact values: profiles that differ only in
        # them (a refined profile at two parameter points) share the compiled functions
        expr, csyms, cvals = _shared_form(expr, var, params)
        compiled = _compiled(expr, var, params + csyms, timeout)
        pvals += cvals
        # branch points and possible jumps, with every parameter value in place
        points, downs, jumps = _split_points(_doit_finite(profile.bound_expr), var)
        with ctx.workprec(_PREC):
            # a downward jump keeps the profile non-increasing, but no mean-value bound
            # may cross it (or end on it: the value there is not the left limit)
            down_balls = [lambdify_arb(c, var)(0) for c in downs]
        self._setup(compiled, pvals, tuple(sorted(float(c) for c in points + downs)),
                    down_balls, [lambdify_arb(j, var) for j in jumps])

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
        self._gauss_mu, self._gauss_cache = math.nan, {}
        self.count = 0
        self.ball_count = 0

    # -- the profile and its derivative at points and on balls --------------------------
    def _call(self, f: Any, x: Any) -> arb:
        self.ball_count += 1
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

    # -- Taylor series of h (the high-order test) ---------------------------------------
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
            return bool(sup + abs(top) * r**n <= 0)

    # -- the first-order test -------------------------------------------------------------
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


# -- derivatives of log delta_mu of order k >= 2 (the Gaussian side of the Taylor bounds) --
#
# With z = (eps/mu - mu/2)/sqrt2, c = mu/sqrt2 and s = dz/deps = 1/(mu sqrt2), exactly
# delta_mu = e^{-z^2} E(z)/2 with E = ErfcxDiff(z, c) = erfcx(z) - erfcx(z + c) (the
# factor e^eps cancels: (z + c)^2 - z^2 = eps), so for k >= 2
#
#     d^k log delta_mu / d eps^k = s^k g_k(z)  (minus 2 s^2 for k = 2),  g_k = (log E)^(k).
#
# E(z) = (2/sqrt(pi)) int_0^inf e^{-t^2 - 2zt} (1 - e^{-2ct}) dt is the Laplace transform
# of a positive weight, so r_n = E^(n)/E = (-2)^n M_n(z) with M_n the n-th moment of t
# under the probability proportional to that weight, and dM_n/dz = -2 (M_{n+1} - M_n M_1)
# <= 0 (Chebyshev's association inequality: t^n and t both increase on t >= 0).  Every
# r_n is monotone in z: on a ball it is the hull of its end-point values, free of the
# dependency problem.  g_k follows from r_1..r_k by the moment-cumulant recursion;
# g_2 = 4 Var(t) >= 0, and g_2 <= 2 since delta_mu is log-concave (see the module
# docstring).  Each g_k on a ball is further intersected with the mean-value forms from
# both end points (with g_{k+1} on the ball) and, where g_{k+1} has a sign there, with
# the hull of its end-point values; orders up to max(k, 4) + _GAUSS_EXTRA are computed
# for that cascade (theory §11).  Plain ball arithmetic: no SymPy at run time.

#: orders computed above the one asked for (they tighten it; see above)
_GAUSS_EXTRA = 2
#: extra working bits (the cumulants cancel, e.g. g_2 - 2 near eps = 0 for a large mu)
_GAUSS_XBITS = 32
_NAN = arb("nan")
# (z, c, top, precision) -> the g_n of _log_erfcx_diff_derivatives
_GAUSS_CACHE: dict[tuple[Any, ...], list[arb]] = {}


def _meet(a: arb, b: arb) -> arb:
    """The intersection of two enclosures of one number (the finite one alone if the
    other is not; NaN if they do not meet, which only a bug could cause)."""
    if not a.is_finite():
        return b
    if not b.is_finite():
        return a
    return a.intersection(b) if a.overlaps(b) else _NAN


def _cumulants(r: list[arb]) -> list[arb]:
    r""":math:`(\log E)^{(n)}` for n = 1..len(r) - 1 from :math:`r_n = E^{(n)}/E` (r[0] =
    1), by :math:`E^{(n)} = \sum_{j<n} \binom{n-1}{j} (\log E)^{(j+1)} E^{(n-1-j)}`."""
    g = [arb(0)] * len(r)
    for n in range(1, len(r)):
        v = r[n]
        for j in range(n - 1):
            v = v - math.comb(n - 1, j) * g[j + 1] * r[n - 1 - j]
        g[n] = v
    return g


def _log_erfcx_diff_at(z: arb, c: arb, top: int) -> tuple[list[arb], list[arb]]:
    """(r_n, g_n), n = 0..top, of E = ErfcxDiff(., c) at the point ``z``."""
    # at least the orders the Taylor bounds of order 4 need: one computation serves all
    e = erfcx_diff_orders_arb(z, c, max(top, 4 + _GAUSS_EXTRA))[:top + 1]
    if not e[0] > 0:
        return [_NAN] * (top + 1), [_NAN] * (top + 1)
    r = [arb(1)] + [v / e[0] for v in e[1:]]
    return r, _cumulants(r)


def _log_erfcx_diff_derivatives(z: arb, c: arb, top: int) -> list[arb]:
    """g_n = (log ErfcxDiff(., c))^(n) on the ball ``z``, n = 1..top (index n; c > 0)."""
    if z.is_exact():
        g = _log_erfcx_diff_at(z, c, top)[1]
    else:
        lo, hi = arb(z.lower()), arb(z.upper())
        ra, ga = _log_erfcx_diff_at(lo, c, top)
        rb, gb = _log_erfcx_diff_at(hi, c, top)
        # every r_n is monotone in z: the hull of its end-point values
        g = _cumulants([arb(1)] + [u.union(v) for u, v in zip(ra[1:], rb[1:], strict=True)])
        t = arb(0).union(hi - lo)
        for n in range(top - 1, 0, -1):
            d = g[n + 1]
            if d.is_finite():
                g[n] = _meet(g[n], _meet(ga[n] + d * t, gb[n] - d * t))
                if d >= 0 or d <= 0:
                    g[n] = _meet(g[n], ga[n].union(gb[n]))
    if top >= 2 and g[2].is_finite():
        g[2] = _meet(g[2], arb(1, 1))  # [0, 2]
    return g


def _gauss_l(k: int, eps: Any, mu: Any) -> arb:
    r"""Ball of :math:`\partial^k\log\delta_\mu(\varepsilon)/\partial\varepsilon^k`
    (k >= 2) on the ball ``eps`` at the precision in force (NaN where not enclosed);
    ``mu`` a positive float or exact ball.

    >>> from flint import arb
    >>> b = _gauss_l(2, arb(50), 1.0)   # mpmath.diff of log delta_1 at 50: -0.999202628816
    >>> round(float(b.mid()), 10), float(b.rad()) < 1e-12
    (-0.9992026288, True)
    """
    prec = ctx.prec
    with ctx.workprec(prec + _GAUSS_XBITS):
        e, m = arb(eps), arb(mu)
        if not (e.is_finite() and m.is_finite() and m > 0):
            return _NAN
        h = arb(fmpq(1, 2)).sqrt()
        s = h / m
        z, c = (e / m - m / 2) * h, m * h
        # the Taylor bounds ask for orders 2..4 on one ball and at one midpoint in turn:
        # one cascade (the same for every k <= 4) serves them all
        top = max(k, 4) + _GAUSS_EXTRA
        key = (z.mid().man_exp(), z.rad().man_exp(), c.mid().man_exp(), c.rad().man_exp(),
               top, ctx.prec)
        gs = _GAUSS_CACHE.get(key)
        if gs is None:
            gs = _log_erfcx_diff_derivatives(z, c, top)
            if len(_GAUSS_CACHE) > 20_000:
                _GAUSS_CACHE.clear()
            _GAUSS_CACHE[key] = gs
        v = s**k * gs[k]
        if k == 2:
            v = v - 2 * s * s
    with ctx.workprec(prec):
        return +v


# -- Taylor series of log delta in ball arithmetic (high-order first-order test) --------
#
# The first-order test of a nearly Gaussian profile needs h = log delta_A - log delta_mu
# to be enclosed to far better than the size of its terms (its GDPT is flat: h is tiny
# while each term is not).  Taylor coefficients at a point are tight (the two series are
# evaluated at the same exact point, so their difference is the difference of the true
# coefficients up to rounding); only the remainder's coefficient needs a ball over the
# whole interval, and with order n it enters with the n-th power of the half-width.
# The series are Arb's power series (``arb_series``); erfcx and the differences
# erfcx(z) - erfcx(z + c) (ErfcxDiff) are composed from the series at the end points of
# their argument's range, every Taylor coefficient of both being monotone in z (see
# Erfcx), so that no coefficient suffers the dependency problem.

#: order of the Taylor series of the high-order test
_SERIES_ORDER = 12
#: see FirstOrder._series_wins
_SERIES_FIRST = 3


class _NoSeries(Exception):
    """The expression has a node without a series enclosure here."""


def _erfcx_taylor(z: arb, c: arb | None, k0: int, n: int) -> list[arb]:
    r"""Taylor coefficients (in s, orders 0..n) of :math:`\operatorname{erfcx}^{(k_0)}(z +
    s)` -- minus the same at :math:`z + c` when ``c`` is given -- on the narrow ball
    ``z``, from the recurrence :math:`y_{k+1} = 2zy_k + 2ky_{k-1}` (see _erfcx_ders)."""
    zf = abs(float(z.mid())) + (abs(float(c.mid())) if c is not None else 0.0)
    if not math.isfinite(zf) or zf > 1e6:
        return [arb("nan")] * (n + 1)
    top = k0 + n
    prec = ctx.prec
    if c is None:
        y = _erfcx_ders(z, top)
    else:
        # the two agree to about log2((top + 1) |z| / |c|) bits: both get that many more
        ratio = (top + 1) * zf / max(abs(float(c.mid())), 1e-300)
        with ctx.workprec(prec + min(int(ratio + 2).bit_length(), 2000) + 8):
            y = [a - b for a, b in zip(_erfcx_ders(z, top), _erfcx_ders(z + c, top),
                                       strict=True)]
    with ctx.workprec(prec + 32):
        out, f = [], arb(1)
        for j in range(n + 1):
            if j:
                f = f * j
            out.append(y[k0 + j] / f)
    with ctx.workprec(prec):
        return [+v for v in out]


def _erfcx_bits(zf: float, top: int) -> int:
    return _erfcx_bits_at(int(zf) + 1, top)  # the estimate increases with zf


@functools.lru_cache(maxsize=4096)
def _erfcx_bits_at(zf: int, top: int) -> int:
    r"""Extra working bits for the recurrence up to order ``top`` near :math:`|z| = z_f`:
    the solution it loses accuracy to grows by about :math:`2z^2 + 2k` at step k, while
    :math:`|\operatorname{erfcx}^{(k)}|` falls by about :math:`k/z` (its size near
    :math:`k!/z^{k+1}`), so about :math:`\sum_k \log_2(2z^2 + 2k + 2) - \log_2 k!`
    bits are lost, plus a margin.  Only the tightness of the balls depends on it: each
    step is ball arithmetic."""
    z2 = 2.0 * zf * zf
    lost = sum(math.log2(z2 + 2 * k + 2) for k in range(1, top + 2))
    return max(int(lost - math.lgamma(top + 2) / math.log(2)), 0) + 32


def _erfcx_ders(w: arb, top: int) -> list[arb]:
    r""":math:`\operatorname{erfcx}^{(k)}` for k = 0..top on the narrow ball ``w``: the values
    at its exact midpoint (the recurrence run on a ball would multiply its radius by about
    :math:`2z^2` per step), widened by radius times :math:`|\operatorname{erfcx}^{(k+1)}|`
    at an integer below the ball (every :math:`|\operatorname{erfcx}^{(k)}|` decreases:
    see Erfcx).  Returned at the extra working precision of the recurrence."""
    wf = abs(float(w.mid())) + float(w.rad())
    extra = _erfcx_bits(wf, top)
    prec = ctx.prec + extra
    with ctx.workprec(prec):
        y = _erfcx_rec(arb(w.mid()), top + (1 if w.rad() else 0))
        if not w.rad():
            return y
        w0 = math.floor(float((arb(w.mid()) - arb(w.rad())).lower())) - 1
        key = (w0, top + 1, prec)
        slope = _ERFCX_SLOPES.get(key)
        if slope is None:
            if len(_ERFCX_SLOPES) > 10_000:
                _ERFCX_SLOPES.clear()
            slope = _ERFCX_SLOPES[key] = [arb(abs(v).upper()) for v in _erfcx_rec(arb(w0),
                                                                                top + 1)]
        # y(w) lies within r * max |y'| of y(mid w): times the ball [-1, 1]
        r = arb(w.rad()) * _UNIT
        return [y[k] + r * slope[k + 1] for k in range(top + 1)]


_ERFCX_SLOPES: dict[tuple[int, int, int], list[arb]] = {}
_UNIT = arb(0, 1)  # the ball [-1, 1]


def _erfcx_rec(w: arb, top: int) -> list[arb]:
    y = [(w * w).exp() * w.erfc()]
    w2 = 2 * w
    if top >= 1:
        y.append(w2 * y[0] - 2 / arb.pi().sqrt())
    for k in range(1, top):
        y.append(w2 * y[k] + 2 * k * y[k - 1])
    return y


def _series_erfcx(f: Any, env: Any, c: arb | None, k0: int) -> Any:
    """erfcx^(k0)(Z) (minus erfcx^(k0)(Z + c)) for the argument series Z = ``f(env)``:
    the Taylor coefficients at the two end points of the range of Z's constant term,
    joined (each is monotone in z), composed with Z minus its constant term.  Where Z is
    provably monotone on the interval, its range is spanned by its values at the
    interval's end points: their coefficients are cached and shared with the intervals
    around (and with the midpoint evaluations, the children's end points)."""
    from flint import arb_series

    n, cache, ends = env[1], env[3], env[4]
    zs = _as_series(f(env), env)
    coeffs = zs.coeffs() + [arb(0)] * (n + 1)
    z0 = coeffs[0]
    if not z0.is_finite():
        raise _NoSeries("non-finite argument")
    if z0.rad() <= abs(z0.mid()) * 2.0**-40 + 2.0**-60:
        points = [z0]  # a (rounded) point
    elif ends is not None and (coeffs[1] > 0 or coeffs[1] < 0):
        points = [_as_series(f((e, n, env[2], cache, None)), env).coeffs()[0] for e in ends]
    else:
        points = [arb(z0.lower()), arb(z0.upper())]
    vals = []
    for z in points:
        # one entry per point for every order: the coefficients up to a lower order are
        # those of a higher one (enclosures of the same numbers), so a prefix is reused
        key = (z.mid().man_exp(), z.rad().man_exp(),
               None if c is None else (c.mid().man_exp(), c.rad().man_exp()), k0,
               ctx.prec)
        v = cache.get(key)
        if v is None or len(v) <= n:
            if len(cache) > 20_000:
                cache.clear()
            v = cache[key] = _erfcx_taylor(z, c, k0, n)
        vals.append(v[:n + 1])
    hull = [a.union(b) for a, b in zip(*vals, strict=True)] if len(vals) > 1 else vals[0]
    outer = arb_series(hull, prec=n + 1)
    inner = arb_series([arb(0)] + coeffs[1:n + 1], prec=n + 1)
    return outer(inner)


def _series_compile(expr: sympy.Expr, var: sympy.Symbol,
                    params: tuple[sympy.Symbol, ...]) -> Any:
    """A function ``((x0, n, pvals, cache, ends)) -> arb_series`` enclosing the Taylor
    series (to order n) of ``expr`` at every point of the ball ``x0`` (of the interval
    between ``ends`` when given); raises _NoSeries at compile time for unsupported
    nodes."""
    from flint import arb_series

    def num(e: sympy.Expr) -> Any:
        if isinstance(e, sympy.Integer):
            v = int(e)
            return lambda env: v
        if isinstance(e, sympy.Rational):
            p, q = int(e.p), int(e.q)
            return lambda env: arb(fmpq(p, q))
        try:
            fn = lambdify_arb(e, var)
        except (ArbUnsupported, TypeError, ValueError) as exc:
            raise _NoSeries(str(exc)) from exc
        by_prec: dict[int, arb] = {}  # e.g. sqrt(2): once per working precision

        def const(env: Any) -> arb:
            v = by_prec.get(ctx.prec)
            if v is None:
                v = by_prec[ctx.prec] = fn(arb(0))
            return v
        return const

    def build(e: sympy.Expr) -> Any:
        if var not in e.free_symbols:
            if e in params:
                i = params.index(e)
                return lambda env: env[2][i]
            if e.free_symbols:
                # a parameter expression: its value as a ball
                try:
                    fn = lambdify_arb(e, var, params)
                except (ArbUnsupported, TypeError, ValueError) as exc:
                    raise _NoSeries(str(exc)) from exc
                return lambda env: fn(arb(0), *env[2])
            return num(e)
        if e == var:
            return lambda env: arb_series([env[0], 1], prec=env[1] + 1)
        if isinstance(e, sympy.Add):
            parts = [build(a) for a in e.args]

            def add(env: Any) -> Any:
                out = parts[0](env)
                for p in parts[1:]:
                    out = out + p(env)
                return out
            return add
        if isinstance(e, sympy.Mul):
            parts = [build(a) for a in e.args]

            def mul(env: Any) -> Any:
                out = parts[0](env)
                for p in parts[1:]:
                    out = out * p(env)
                return out
            return mul
        if isinstance(e, sympy.Pow):
            b, x = e.args
            fb = build(b)
            if x.is_Integer:
                k = int(x)
                if k >= 0:
                    return lambda env: fb(env) ** k
                return lambda env: 1 / (fb(env) ** (-k))
            if x == sympy.Rational(1, 2):
                return lambda env: _as_series(fb(env), env).sqrt()
            fx = build(x)
            return lambda env: (fx(env) * _as_series(fb(env), env).log()).exp()
        if isinstance(e, sympy.exp):
            f = build(e.args[0])
            return lambda env: _as_series(f(env), env).exp()
        if isinstance(e, sympy.log) and len(e.args) == 1:
            f = build(e.args[0])
            return lambda env: _as_series(f(env), env).log()
        if isinstance(e, expm1):
            f = build(e.args[0])

            def em1(env: Any) -> Any:
                s = _as_series(f(env), env)
                cs = s.exp().coeffs()
                cs[0] = s.coeffs()[0].expm1() if s.coeffs() else arb(0)
                return arb_series(cs, prec=env[1] + 1)
            return em1
        if isinstance(e, (sympy.erfc, sympy.erf)):
            f = build(e.args[0])
            name = "erfc" if isinstance(e, sympy.erfc) else "erf"
            return lambda env: getattr(_as_series(f(env), env), name)()
        if isinstance(e, Erfcx):
            f = build(e.args[0])
            k0 = int(e.args[1]) if len(e.args) > 1 else 0
            return lambda env: _series_erfcx(f, env, None, k0)
        if isinstance(e, ErfcxDiff):
            f, fc = build(e.args[0]), build(e.args[1])
            if var in e.args[1].free_symbols:
                raise _NoSeries("ErfcxDiff with a varying shift")
            k0 = int(e.args[2]) if len(e.args) > 2 else 0
            return lambda env: _series_erfcx(f, env, _as_arb(fc(env)), k0)
        if isinstance(e, (sympy.Min, sympy.Max)):
            # the argument provably below (Min) / above (Max) the others on the whole
            # ball: the function is that argument there (else no series)
            parts = [build(a) for a in e.args]
            lower = isinstance(e, sympy.Min)

            def select(env: Any) -> Any:
                vals = [_as_series(q(env), env) for q in parts]
                c0 = [(v.coeffs() or [arb(0)])[0] for v in vals]
                for i, ci in enumerate(c0):
                    if all(bool(ci < cj) if lower else bool(ci > cj)
                           for j, cj in enumerate(c0) if j != i):
                        return vals[i]
                raise _NoSeries("no provably active argument of a Min/Max")
            return select
        raise _NoSeries(f"no series enclosure of {type(e).__name__}")

    return build(expr)


def _as_series(v: Any, env: Any) -> Any:
    from flint import arb_series

    return v if isinstance(v, arb_series) else arb_series([v], prec=env[1] + 1)


def _as_arb(v: Any) -> arb:
    return v if isinstance(v, arb) else arb(v)


def _series_wanted(expr: sympy.Expr) -> bool:
    """False where no series is attempted: a Piecewise, or a finite sum of many terms
    (e.g. a k-fold composition: far too large)."""
    if expr.has(sympy.Piecewise):
        return False
    for sp in expr.atoms(sympy.Sum, sympy.Product):
        sizes = [t[2] - t[1] + 1 for t in sp.limits]
        if not all(v.is_number for v in sizes) or math.prod(int(v) for v in sizes) > 64:
            return False
    return True


def _series_input(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr | None:
    """The expression the series form is derived from (finite sums done, decimal
    literals as the exact binary numbers they store), or ``None`` where no series is
    attempted (see _series_wanted; too many operations)."""
    if not _series_wanted(expr):
        return None
    expr = _doit_finite(expr)
    expr = expr.xreplace({c: sympy.Rational(c) for c in expr.atoms(sympy.Float)})
    if sympy.count_ops(expr) > MAX_OPS or expr.has(sympy.Piecewise):
        return None
    return expr


def _series_form(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr | None:
    """log delta in its erfcx form, log-rates split off, or ``None`` where no series is
    attempted (run in a bounded child)."""
    prepared = _series_input(expr, var)
    if prepared is None:
        return None
    return _log_rates(_log_expanded(erfcx_form(prepared, var)), var)


def _start_series(expr: sympy.Expr, var: sympy.Symbol) -> Bounded | None:
    if not _series_wanted(expr):
        return None  # decided at once, without a child
    return start_bounded(_series_form, expr, var, timeout=10)


#: series functions by (expression, variable, parameters); None = no series
_LOG_SERIES: dict[tuple, Any] = {}
#: symbolic preparations of series forms started ahead of need (prefetch_series)
_SERIES_JOBS: dict[tuple, Bounded | None] = {}
_SERIES_JOBS_LOCK = threading.Lock()


def _log_series(expr: sympy.Expr, var: sympy.Symbol,
                params: tuple[sympy.Symbol, ...]) -> Any:
    """The series function of log delta in its erfcx form (see ``_series_compile``), or
    ``None`` where some node has no series enclosure (Min, Max, Piecewise, ...)."""
    key = (expr, var, params)
    if key in _LOG_SERIES:
        return _LOG_SERIES[key]
    with _SERIES_JOBS_LOCK:
        job = _SERIES_JOBS.pop(key, False)
    if job is False:
        job = _start_series(expr, var)
    fn = None
    if job is not None:
        try:
            form = job.result()
            fn = _series_compile(form, var, params) if form is not None else None
        except (_NoSeries, AnalysisTimeout, RuntimeError, TypeError, ValueError):
            fn = None
    if len(_LOG_SERIES) >= 64:
        _LOG_SERIES.clear()
    _LOG_SERIES[key] = fn
    return fn


def prefetch_series(profile: Any) -> None:
    """Start the symbolic preparation of ``profile``'s series form in a bounded child
    that runs while the caller prepares the rest (the first-order machinery's own child,
    on the other core); :meth:`FirstOrder.use_series` collects it on first need."""
    cache = getattr(profile, "_cache", None)
    if cache is None or "log_series" in cache or not hasattr(profile, "bound_expr"):
        return
    if not profile.expr.has(sympy.erf, sympy.erfc, Erfcx, ErfcxDiff):
        # the mean-value tests close most intervals of other profiles: their series form
        # is prepared only if the search asks for it (a child per point of a sweep of
        # profiles that differ in their constants would cost more than it saves)
        return
    expr, floats = _split_floats(profile)
    key = (expr, profile.var, tuple(s for s, _ in floats))
    with _SERIES_JOBS_LOCK:
        if key in _LOG_SERIES or key in _SERIES_JOBS:
            return
        while len(_SERIES_JOBS) >= 4:  # never collected: dropped (its child is killed)
            _SERIES_JOBS.pop(next(iter(_SERIES_JOBS)))
        _SERIES_JOBS[key] = _start_series(expr, profile.var)


@functools.lru_cache(maxsize=1)
def _gauss_log_series() -> Any:
    r"""The series function of :math:`\log\delta_\mu = -z^2 +
    \log(\mathrm{ErfcxDiff}(z, \mu/\sqrt2)/2)`, :math:`z = (\varepsilon/\mu -
    \mu/2)/\sqrt2` (parameter :math:`\mu`)."""
    e, m = sympy.Dummy("e"), sympy.Dummy("m", positive=True)
    z = (e / m - m / 2) / sympy.sqrt(2)
    expr = -z**2 + sympy.log(ErfcxDiff(z, m / sympy.sqrt(2)) / 2)
    return _series_compile(expr, e, (m,))


def _series_at(fn: Any, x0: arb, n: int, pvals: tuple[arb, ...], cache: dict,
               ends: tuple[arb, arb] | None = None) -> list[arb]:
    """Coefficients 0..n of the series function ``fn`` on the ball ``x0`` (NaN balls
    where the enclosure fails); ``ends``: the exact end points of the interval the
    coefficients are needed on (inside ``x0``), which lets erfcx nodes reuse the
    coefficients at the end points of their (monotone) argument."""
    # Arb's series length is global state (ctx.cap): a series truncated by another
    # thread's setting would drop coefficients, read here as exact zeros
    with _SERIES_LOCK:
        old = ctx.cap
        ctx.cap = n + 1
        try:
            cs = fn((x0, n, pvals, cache, ends))
            cs = cs.coeffs() if not isinstance(cs, (int, arb)) else [arb(cs)]
        except (_NoSeries, ZeroDivisionError, ValueError, TypeError, OverflowError):
            cs = [arb("nan")]
        finally:
            ctx.cap = old
    return cs + [arb(0)] * (n + 1 - len(cs))


_SERIES_LOCK = threading.RLock()


def _series_point(fn: Any, tag: str, x: float, n: int, pvals: tuple[arb, ...],
                  cache: dict) -> list[arb]:
    """``_series_at`` at the point ``x`` (exact), kept in ``cache`` under ``tag``, the
    parameters and the working precision."""
    key = ("point", tag, x, n, tuple((v.mid(), v.rad()) for v in pvals), ctx.prec)
    v = cache.get(key)
    if v is None:
        v = cache[key] = _series_at(fn, arb(x), n, pvals, cache)
    return v


def _split_floats(profile: Any) -> tuple[sympy.Expr, list[tuple[sympy.Symbol, Any]]]:
    """The profile's expression with its exact parameter values substituted, and the
    (symbol, value) pairs of its Float parameters, kept as symbols (substituted, SymPy
    would round e.g. exp(Float) to 53 bits)."""
    return _per_profile(profile, "split_floats", _split_floats_of)


def _per_profile(profile: Any, key: str, fn: Any) -> Any:
    """``fn(profile)``, kept in the (immutable) profile's own cache where it has one."""
    cache = getattr(profile, "_cache", None)
    if cache is None:
        return fn(profile)
    if key not in cache:
        cache[key] = fn(profile)
    return cache[key]


def _split_floats_of(profile: Any) -> tuple[sympy.Expr, list[tuple[sympy.Symbol, Any]]]:
    values = [(s, sympy.sympify(v)) for s, v in profile.values.items()]
    if any(set(v.free_symbols) for _, v in values):
        return profile.bound_expr, []
    expr = profile.expr.xreplace({s: v for s, v in values if not v.has(sympy.Float)})
    return expr, [(s, v) for s, v in values if v.has(sympy.Float)]


def _profile_series(profile: Any) -> tuple[Any, tuple[arb, ...]]:
    """The log-series function of a bound profile and its parameter balls (once per
    profile object: splitting off the Float parameters rebuilds the expression)."""
    return _per_profile(profile, "log_series", _profile_series_of)


def _profile_series_of(profile: Any) -> tuple[Any, tuple[arb, ...]]:
    var = profile.var
    expr, floats = _split_floats(profile)
    try:
        with ctx.workprec(_PREC):
            pvals = tuple(lambdify_arb(v, var)(0) for _, v in floats)
    except (ArbUnsupported, TypeError, ValueError):
        return None, ()
    return _log_series(expr, var, tuple(s for s, _ in floats)), pvals


def _poly_max(c: list[arb], tl: float, tr: float, pieces: int = 8) -> arb:
    r"""An upper bound (a ball) of :math:`\sum_j c_j t^j` over :math:`t \in [t_l, t_r]`:
    on each of ``pieces`` sub-intervals the centred form :math:`P(t_i) + P'(T)(T - t_i)`
    (Horner in ball arithmetic), the sub-intervals covering :math:`[t_l, t_r]` exactly."""
    dc = [j * c[j] for j in range(1, len(c))]

    def horner(cs: list[arb], t: arb) -> arb:
        out = arb(0)
        for v in reversed(cs):
            out = out * t + v
        return out

    edges = [tl + (tr - tl) * i / pieces for i in range(pieces + 1)]
    edges[0], edges[-1] = tl, tr
    out: arb | None = None
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        mid, t = arb(0.5 * (a + b)), arb(a).union(arb(b))
        bound = horner(c, mid) + horner(dc, t) * (t - mid)
        out = bound if out is None else out.max(bound)
    return out


def _log_rates(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Every :math:`\log\sum_i c_i e^{k_i\varepsilon}` (constant :math:`c_i, k_i`, some
    :math:`k_i > 0`) as :math:`k\varepsilon + \log\sum_i c_i e^{(k_i - k)\varepsilon}`,
    :math:`k = \max_i k_i`: an exact rewrite whose series on a wide ball is tight (e.g. the
    subsampling transform :math:`\log(1 + (e^\varepsilon - 1)/\gamma)`, where the
    growing exponential would otherwise spread every coefficient)."""
    def rate(t: sympy.Expr) -> sympy.Expr | None:
        k = sympy.Integer(0)
        for f in sympy.Mul.make_args(t):
            if var not in f.free_symbols:
                continue
            if not isinstance(f, sympy.exp):
                return None
            q = sympy.expand(f.args[0]) / var
            if var in q.free_symbols or not q.is_number:
                return None
            k += q
        return k

    def fix(u: sympy.Expr) -> sympy.Expr:
        arg = u.args[0]
        if not isinstance(arg, sympy.Add):
            return u
        rates = [rate(t) for t in arg.args]
        if any(r is None for r in rates) or not any(r.is_positive for r in rates):
            return u
        k = max(rates, key=lambda r: float(r))
        inner = sympy.Add(*[t * sympy.exp(-k * var) for t in arg.args])
        return k * var + sympy.log(sympy.powsimp(sympy.expand(inner), combine="exp"))

    def walk(u: sympy.Basic) -> sympy.Basic:
        # bottom-up like ``replace``, but a Min/Max is rebuilt unevaluated: evaluating
        # it compares its arguments through the assumptions system, which costs most of
        # the time here, and the arguments are what they were, only rewritten exactly
        if not u.args or var not in u.free_symbols:
            return u
        args = tuple(walk(a) for a in u.args)
        if args != u.args:
            u = (u.func(*args, evaluate=False) if isinstance(u, (sympy.Min, sympy.Max))
                 else u.func(*args))
        return fix(u) if isinstance(u, sympy.log) else u

    return walk(e)
