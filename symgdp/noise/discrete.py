r"""Discrete noise on the integers: the profile of :math:`f(D) + Z` for a PMF :math:`p(k)`.

For an integer-valued query of integer sensitivity :math:`\Delta` and noise :math:`Z` with
probability mass function :math:`p` on :math:`\mathbb{Z}`, the two output distributions
of neighbouring inputs are :math:`P = \mathcal{L}(Z)` and :math:`Q = \mathcal{L}(Z +
\Delta)` (up to a common translation), and

.. math:: \delta(\varepsilon) = \sum_{x\in\mathbb{Z}} \bigl(p(x) - e^\varepsilon
          p(x-\Delta)\bigr)_+ = \sum_{x\in\mathbb{Z}} p(x)\,
          \bigl(1 - e^{\varepsilon - L(x)}\bigr)_+,\qquad
          L(x) = \log p(x) - \log p(x - \Delta),

the larger of both directions (the second is the same sum for :math:`-Z`; for symmetric
:math:`p`, proved, they agree: substitute :math:`x \mapsto \Delta - x`).

**Monotonicity.**  The PMF is read as the restriction to the integers of the expression
on the real line; when that is log-concave (proved piece by piece as for densities,
:func:`symgdp.noise.loss.log_concavity`) the sequence :math:`\log p(x)` is concave, its
increments :math:`d(x) = \log p(x) - \log p(x-1)` do not increase, and :math:`L(x) =
\sum_{j=x-\Delta+1}^{x} d(j)` does not increase in :math:`x`.  So the positive terms are
those with :math:`x \le m^*(\varepsilon) = \max\{x : L(x) > \varepsilon\}` and
:math:`\delta(\varepsilon) = G_{m^*}(\varepsilon) = \max_m G_m(\varepsilon)` with
:math:`G_m(\varepsilon) = F(m) - e^\varepsilon F(m - \Delta)`, :math:`F` the CDF.  As for
densities, the same log-concavity (a monotone likelihood ratio) makes the shift
:math:`\pm\Delta` the worst case among integer shifts :math:`|s| \le \Delta`.

**Two routes.**

* *Closed form* (e.g. the two-sided geometric, or discrete Laplace, :math:`p(x) \propto
  e^{-|x|/b}`): when :math:`L` is constant on both infinite runs of integers, it takes
  finitely many values :math:`\ell_i`, and :math:`\delta(\varepsilon) = \sum_i P_i\,
  (1 - e^{\varepsilon - \ell_i})_+` with :math:`P_i` the mass where :math:`L = \ell_i`,
  summed symbolically (a geometric run :math:`\sum_{x\ge a} e^{\alpha + \beta x} =
  e^{\alpha+\beta a}/(1 - e^{\beta})`, :math:`\beta<0` proved; else ``sympy.summation``).
  Parameters may stay symbolic.  The profile is a ``Piecewise`` in :math:`\varepsilon`,
  zero from :math:`\max_i \ell_i` on (pure DP).
* *Certified summation* (e.g. the discrete Gaussian :math:`p(x) \propto e^{-x^2/(2s^2)}`,
  whose normaliser is a theta function; its exact profile is Canonne, Kamath & Steinke
  2020, Thm 7, arXiv:2004.00010, summed here with a proof instead of a truncation):
  every parameter must be a number; the profile is
  a numeric :class:`DiscreteNoiseSource` whose :meth:`~DiscreteNoiseSource.log_delta` is a
  proved upper bound: :math:`m^*` located with ball comparisons of :math:`L` (a range of
  candidates where they cannot decide, the maximum of their :math:`G_m` taken), and
  :math:`F` summed in Arb balls (python-flint) with a rigorous tail bound.  The tail bound
  is log-concavity again: past a point :math:`c` where the PMF decreases outwards by the
  factor :math:`r = e^{-|d|} < 1`, every further step decreases it by at least that
  factor, so the rest of the run is at most :math:`p(c)\,r/(1 - r)`.

Neighbouring relation: whichever (add/remove or replace-one) :math:`\Delta` is the
sensitivity for; a non-integer shift moves the support off the integers, which no
:math:`\varepsilon` covers, and is refused.

Example:
    >>> import sympy
    >>> k = sympy.Symbol("k", integer=True)
    >>> b = sympy.Symbol("b", positive=True)
    >>> p = discrete_noise(sympy.tanh(1 / (2 * b)) * sympy.exp(-sympy.Abs(k) / b), 1, k)
    >>> p.meta["derivation"].verdict[:30]
    'pure DP: L <= 1/b, so delta(ep'
    >>> q = p.replace(values={"b": 2})
    >>> round(q(0.25), 12)   # (1 - e^(eps - 1/b)) / (1 + e^(-1/b)), the closed form
    0.137687516632
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import mpmath
import sympy
from flint import arb, ctx

from symgdp.errors import DomainError, ProfileError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.noise.density import (
    Density,
    Piece,
    _from_expression,
    _pieces,
    aligned_rows,
    log_delta_each,
    tex_text,
)
from symgdp.noise.loss import log_concavity
from symgdp.numerics.balls import gt3, le3
from symgdp.numerics.bisection import integer_midpoint, proved_crossing
from symgdp.profile import Profile
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["DiscreteNoiseSource", "Pmf", "discrete_noise", "loss_value_profile", "read_pmf"]

_OO = sympy.oo
_PREC = 256          # bits of the ball sums
_MAX_TERMS = 200_000  # terms of one tail sum before refusing
_MAX_RUN = 400        # integers of a finite run of the loss enumerated symbolically


@dataclass(frozen=True)
class Pmf:
    r"""A checked PMF on the integers: :math:`p(x) = c\,w(x)` (see :func:`read_pmf`).

    Attributes:
        x: the variable (a real symbol: :math:`w` is read on the real line too).
        expr: the PMF as written.
        const, weight: :math:`c` (free of :math:`x`) and :math:`w(x)`.
        pieces: :math:`w` as analytic pieces on the real line (numeric breakpoints).
        params: the parameters (free symbols other than :math:`x`).
        monotone: the log-concavity proof (one sentence).
        symmetric: :math:`w(-x) = w(x)` proved.
        mass: :math:`\sum_x p(x)` as proved (``1``) or as a ball's midpoint (numeric).
    """

    x: sympy.Symbol
    expr: sympy.Expr
    const: sympy.Expr
    weight: sympy.Expr
    pieces: tuple[Piece, ...]
    params: tuple[sympy.Symbol, ...]
    monotone: str
    symmetric: bool
    mass: str

    def reflected(self) -> Pmf:
        """The PMF of :math:`-Z`."""
        x = self.x
        pieces = tuple(Piece(p.expr.xreplace({x: -x}), -p.hi, -p.lo)
                       for p in reversed(self.pieces))
        return Pmf(x, self.expr.xreplace({x: -x}), self.const, self.weight.xreplace({x: -x}),
                   pieces, self.params, self.monotone, self.symmetric, self.mass)


# -- reading the PMF ------------------------------------------------------------------------
def _split(expr: sympy.Expr, x: sympy.Symbol) -> tuple[sympy.Expr, sympy.Expr]:
    const, weight = expr.as_independent(x, as_Add=False)
    return sympy.sympify(const), sympy.sympify(weight)


def _geometric_sum(w: sympy.Expr, x: sympy.Symbol, lo: sympy.Expr,
                   hi: sympy.Expr) -> sympy.Expr | None:
    r""":math:`\sum_{lo \le x \le hi} w(x)` for :math:`\log w` affine in :math:`x` on a run
    with one infinite end (the rate's sign proved), else ``None``."""
    lw = sympy.expand(sympy.expand_log(sympy.log(w), force=True))
    beta = sympy.diff(lw, x)
    if beta.has(x) or beta == 0:
        return None
    alpha = sympy.expand(lw - beta * x)
    if hi == _OO and lo != -_OO and beta.is_negative:
        return sympy.exp(alpha + beta * lo) / (1 - sympy.exp(beta))
    if lo == -_OO and hi != _OO and beta.is_positive:
        return sympy.exp(alpha + beta * hi) / (1 - sympy.exp(-beta))
    return None


def _run_sum(w: sympy.Expr, x: sympy.Symbol, lo: sympy.Expr, hi: sympy.Expr) -> sympy.Expr:
    """The sum of ``w`` over the integers of ``[lo, hi]`` (ends integers or infinite):
    a geometric closed form, an explicit finite sum, or SymPy's summation; it may hold an
    unevaluated ``Sum`` when nothing finds it."""
    if lo != -_OO and hi != _OO:
        return sympy.Add(*[w.xreplace({x: sympy.Integer(v)}) for v in range(int(lo), int(hi) + 1)])
    g = _geometric_sum(w, x, lo, hi)
    if g is not None:
        return g
    k = sympy.Dummy("k", integer=True)
    return sympy.summation(w.xreplace({x: k}), (k, lo, hi))


def _runs(pieces: tuple[Piece, ...]) -> list[tuple[int, sympy.Expr, sympy.Expr]]:
    """(piece index, first integer, last integer) of each piece: a breakpoint integer goes
    to the piece on its right (``log w`` is continuous there, proved, so either formula
    gives its value)."""
    out = []
    for i, p in enumerate(pieces):
        lo = -_OO if p.lo == -_OO else sympy.ceiling(p.lo)
        hi = _OO if p.hi == _OO else sympy.ceiling(p.hi) - 1
        if lo == -_OO or hi == _OO or lo <= hi:
            out.append((i, lo, hi))
    return out


def _numeric_breakpoints(pieces: tuple[Piece, ...]) -> None:
    for p in pieces[:-1]:
        if not p.hi.is_number:
            raise ProfileError(f"the PMF has the breakpoint {p.hi}, not a number: the "
                               "integers on each side are not known (give the breakpoints "
                               "as numbers)")


def _negative_integer(w: sympy.Expr, x: sympy.Symbol, params: tuple) -> tuple | None:
    at = {s: sympy.Integer(1) for s in params}
    f = sympy.lambdify(x, w.xreplace(at), "mpmath")
    with mpmath.workdps(30):
        for v in sorted(range(-300, 301), key=abs):
            try:
                y = f(mpmath.mpf(v))
            except (ZeroDivisionError, ValueError, TypeError):
                continue
            if isinstance(y, mpmath.mpf) and y < 0:
                return v, at, y
    return None


def _read(expr: sympy.Expr, x: sympy.Symbol) -> tuple:
    """const, weight, pieces, sign proved, symmetric (runs in a bounded child)."""
    const, weight = _split(expr, x)
    pieces = tuple(_pieces(weight, x))
    signs = [sympy.simplify(p.expr).is_positive for p in pieces]
    symmetric = sympy.simplify(weight.xreplace({x: -x}) - weight) == 0
    sums = {t: sympy.Dummy("S", positive=True) for t in const.atoms(sympy.Sum)
            if sympy.simplify(t.function).is_positive}
    positive = bool(sympy.simplify(const.xreplace(sums)).is_positive)
    return const, weight, pieces, all(signs) and positive, bool(symmetric)


def _total_symbolic(const: sympy.Expr, weight: sympy.Expr, x: sympy.Symbol,
                    pieces: tuple[Piece, ...]) -> tuple[sympy.Expr, bool, tuple]:
    """(total mass, proved equal to 1, the sums of the constant that are not a constant
    multiple of ``w``); runs in a bounded child."""
    # a normaliser written as Sum(w(j), (j, -oo, oo)) is recognised: c w summed is 1
    norm, foreign = {}, []
    for s in const.atoms(sympy.Sum):
        j = s.limits[0][0]
        g = s.function.xreplace({j: x})
        if len(s.limits) == 1 and tuple(s.limits[0][1:]) == (-_OO, _OO):
            if sympy.simplify(g - weight) == 0:
                norm[s] = sympy.Dummy("W", positive=True)
                continue
        if x in sympy.simplify(g / weight).free_symbols:
            foreign.append(s)
    if norm:
        total = sympy.simplify(const.xreplace(norm) * next(iter(norm.values())))
        if len(norm) == 1 and total == 1:
            return sympy.S.One, True, ()
    parts = [_run_sum(pieces[i].expr, x, lo, hi) for i, lo, hi in _runs(pieces)]
    total = sympy.simplify(const * sympy.Add(*parts))
    if total.has(sympy.Sum):
        return total, False, tuple(foreign)
    d = sympy.simplify(total - 1)
    return total, d == 0 or sympy.simplify(d.rewrite(sympy.exp)) == 0, tuple(foreign)


def read_pmf(noise: Any, variable: Any = None, *, timeout: float | None = None) -> Pmf:
    r"""Read and check a PMF on the integers written as a SymPy expression in ``variable``.

    The PMF is :math:`p(x) = c\,w(x)` with :math:`c` free of :math:`x`; the normaliser may
    be written as ``1/sympy.Sum(w(j), (j, -oo, oo))`` (recognised: the mass is then 1 by
    construction).  Checked: :math:`w > 0` (a negative value is named), the mass is 1
    (proved symbolically, or, when SymPy cannot sum, by a certified ball sum at numeric
    parameters: a ball away from 1 is refused with its value), and the expression on the
    real line is log-concave (so the loss is monotone).

    Raises:
        DomainError: negative somewhere (named), mass other than 1 (named), not in the
            variable.
        ProfileError: not proved log-concave, breakpoints not numbers, or a mass that
            cannot be checked.
    """
    from sympy.stats.rv import RandomSymbol

    if isinstance(noise, RandomSymbol) or (isinstance(noise, sympy.Basic)
                                           and noise.has(RandomSymbol)):
        raise DomainError(f"give the PMF of {noise} as an expression in an integer "
                          "variable (support='integers' does not read sympy.stats variables)")
    expr, x, _ = _from_expression(noise, variable)
    params = tuple(sorted((s for s in expr.free_symbols if s != x), key=lambda s: s.name))
    for s in params:
        if s.is_real is not True:
            raise DomainError(f"the parameter {s} of the PMF {expr} is not declared real: "
                              f"declare it, e.g. sympy.Symbol({s.name!r}, positive=True)")
    const, weight, pieces, positive, symmetric = run_bounded(_read, expr, x, timeout=timeout)
    if not positive:
        bad = _negative_integer(expr, x, params)
        if bad is not None:
            v, at, y = bad
            where = "" if not at else " (with " + ", ".join(
                f"{k} = {val}" for k, val in at.items()) + ")"
            raise DomainError(f"the PMF {expr} is negative at {x} = {v}{where}: p = "
                              f"{mpmath.nstr(y, 6)}")
        raise ProfileError(f"could not prove the PMF {expr} positive at every integer (a "
                           "PMF with zeros is not DP for any eps under a shift)")
    _numeric_breakpoints(pieces)
    density = Density(x, weight, pieces, (), params, "p", symmetric)
    monotone = log_concavity(density, sympy.Integer(1), timeout=timeout)
    monotone = ("w is log-concave on the real line, so its restriction to the integers is "
                "a log-concave sequence and L is non-increasing for every integer shift ("
                + monotone.split(", so ")[0] + ")")
    total, proved, foreign = run_bounded(_total_symbolic, const, weight, x, pieces,
                                         timeout=timeout)
    if proved:
        mass = "1 (proved symbolically)"
    elif not total.has(sympy.Sum):
        at = {s: sympy.Integer(1) for s in params}
        value = sympy.N(total.xreplace(at), 30)
        if value.is_number and abs(value - 1) > sympy.Float("1e-25"):
            shown = "" if not at else " (" + ", ".join(f"{k} = 1" for k in at) + ")"
            raise DomainError(f"the PMF {expr} sums to {total} over the integers, not 1: "
                              f"{sympy.N(value, 12)}{shown}")
        raise ProfileError(f"could not prove that the PMF {expr} sums to 1 (SymPy gives "
                           f"{total})")
    elif params:
        raise ProfileError(f"SymPy cannot sum the PMF {expr}; the certified summation needs "
                           "numbers for its parameters " + ", ".join(map(str, params)))
    elif foreign:
        # the certified sum's tail bound is geometric, valid for log-concave terms: proved
        # for w, not for another function in the constant
        raise ProfileError(f"SymPy cannot sum the PMF {expr}, and its constant holds "
                           f"{foreign[0]}, whose terms are not a constant multiple of the "
                           f"weight {weight}: the certified summation is proved for the "
                           "weight only (write the normaliser as a Sum of the weight)")
    else:
        with ctx.workprec(_PREC):
            ball = _Summer(weight, x, sympy.Integer(1)).total() * _const_ball(const, weight, x)
            off = abs(ball - 1)
        if not ball.contains(1) and off.lower() > arb("1e-9"):
            raise DomainError(f"the PMF {expr} sums to {ball.mid().str(12, radius=False)} "
                              f"(a certified ball {ball.str(6)}), not 1")
        mass = (f"{ball.str(15)} (a certified ball; the profile divides by the certified "
                "total of w, so it is the profile of the normalised PMF)")
    return Pmf(x, expr, const, weight, pieces, params, monotone, symmetric, mass)


def _const_ball(const: sympy.Expr, weight: sympy.Expr, x: sympy.Symbol) -> arb:
    """The ball of the constant ``c`` (numbers only; a normaliser ``Sum`` over the integers
    is replaced by its certified sum)."""
    sums = sorted(const.atoms(sympy.Sum), key=sympy.default_sort_key)
    dummies, balls = [], []
    for s in sums:
        if len(s.limits) != 1 or tuple(s.limits[0][1:]) != (-_OO, _OO):
            raise ProfileError(f"cannot evaluate the sum {s} in the PMF's constant")
        j = s.limits[0][0]
        dummies.append(sympy.Dummy("S"))
        balls.append(_Summer(s.function.xreplace({j: x}), x, sympy.Integer(1)).total())
    e = const.xreplace(dict(zip(sums, dummies, strict=True)))
    fn = lambdify_arb(e, _EPS, tuple(dummies))
    with ctx.workprec(_PREC):
        return fn(arb(0), *balls)


# -- the certified sums ---------------------------------------------------------------------
class _Summer:
    r"""Ball sums of a log-concave weight :math:`w` on the integers (numeric parameters),
    with :math:`L(x) = \log w(x) - \log w(x - \Delta)`."""

    def __init__(self, weight: sympy.Expr, x: sympy.Symbol, shift: sympy.Expr) -> None:
        lw = sympy.expand_log(sympy.log(weight), force=True)
        if lw.free_symbols - {x}:
            raise ProfileError(f"the certified summation needs numbers for the parameters "
                               f"{', '.join(sorted(map(str, lw.free_symbols - {x})))}")
        self._lw = lambdify_arb(lw, x)
        self._shift = int(shift)
        self._logw: dict[int, arb] = {}
        self._cdf: dict[int, arb] = {}
        self._total: arb | None = None

    def logw(self, k: int) -> arb:
        if k not in self._logw:
            with ctx.workprec(_PREC):
                self._logw[k] = self._lw(arb(k))
        return self._logw[k]

    def loss(self, k: int) -> arb:
        with ctx.workprec(_PREC):
            return self.logw(k) - self.logw(k - self._shift)

    def _run(self, start: int, step: int) -> arb:
        r""":math:`\sum_{j\ge0} w(\text{start} + j\cdot\text{step})` with the tail bound of
        the module notes (a ball)."""
        with ctx.workprec(_PREC):
            total = arb(0)
            k = start
            for _ in range(_MAX_TERMS):
                here = self.logw(k)
                total += here.exp()
                nxt = self.logw(k + step)
                drop = here - nxt            # > 0: w decreases outwards from k on
                if drop > 0:
                    r = (-drop).exp()
                    rest = nxt.exp() / (1 - r)   # w(k+step) (1 + r + r^2 + ...)
                    if rest.upper() < total.lower() * arb(2) ** (-_PREC + 8):
                        half = arb(rest.upper()) / 2
                        return total + arb(half.upper(), half.upper())  # [0, rest]
                k += step
        raise ProfileError(f"the tail sum of the PMF from {start} did not converge within "
                           f"{_MAX_TERMS} terms")

    def total(self) -> arb:
        if self._total is None:
            with ctx.workprec(_PREC):
                self._total = self._run(0, -1) + self._run(1, 1)
        return self._total

    def cdf(self, m: int) -> arb:
        r""":math:`F(m) = \sum_{x\le m} w(x) / \sum_x w(x)` (a ball); the upper tail is
        summed (and subtracted) where :math:`w` is not increasing at :math:`m`."""
        if m not in self._cdf:
            with ctx.workprec(_PREC):
                falling = self.logw(m + 1) - self.logw(m) < 0
                if falling:
                    value = 1 - self._run(m + 1, 1) / self.total()
                else:
                    value = self._run(m, -1) / self.total()
                self._cdf[m] = value
        return self._cdf[m]


class DiscreteNoiseSource:
    r"""The profile of discrete additive noise as a numeric source: :meth:`log_delta` is a
    proved upper bound (both directions; see the module notes).

    Example:
        >>> import sympy
        >>> k = sympy.Symbol("k", integer=True)
        >>> w = sympy.exp(-k**2 / 2)
        >>> s = DiscreteNoiseSource(w, k, 1, symmetric=True)
        >>> float(s.log_delta(1.0)) < -1.8   # the discrete Gaussian, s = 1: about -1.85
        True
    """

    implied = False

    def __init__(self, weight: sympy.Expr, x: sympy.Symbol, shift: Any, *,
                 symmetric: bool, sups: tuple[Any, ...] = (),
                 kind: str = "discrete noise") -> None:
        self.kind = kind
        self._sums = [_Summer(weight, x, shift)]
        if not symmetric:
            self._sums.append(_Summer(weight.xreplace({x: -x}), x, shift))
        # sup L of each direction where it is finite (L constant on the left run): from
        # there on that direction's terms are all <= 0
        with ctx.workprec(_PREC):
            self._sups = [None if v is None or v == sympy.oo else lambdify_arb(
                sympy.sympify(v), _EPS)(0) for v in (tuple(sups) or (None,) * len(self._sums))]

    def _m_star_range(self, s: _Summer, e: arb) -> tuple[int, int]:
        """(a, b) with a <= m* <= b, m* = max{x : L(x) > e} (ball comparisons)."""
        lo, hi = 0, 1
        while gt3(s.loss(lo), e) is not True:   # L(lo) > e proved: m* >= lo
            lo = lo * 2 - 1 if lo < 0 else -1
            if lo < -(1 << 62):
                raise ProfileError("the privacy loss stays below eps (sup L not reached)")
        while le3(s.loss(hi), e) is not True:   # L(hi) <= e proved: m* < hi
            hi = hi * 2 + 1
            if hi > (1 << 62):
                raise ProfileError("the privacy loss stays above eps (inf L not reached)")
        # m* in [a, b - 1] with L(a) > e and L(b) <= e proved (an undecided midpoint:
        # each side narrowed on its own, the candidates between them all kept)
        a, b = proved_crossing(lambda m: gt3(s.loss(m), e), lo, hi, integer_midpoint, 128)
        return a, b - 1

    def delta_ball(self, eps: float) -> arb:
        """A ball containing delta(eps) (its upper end is the bound used)."""
        with ctx.workprec(_PREC):
            e = arb(eps)
            best = arb(0)
            for s, top in zip(self._sums, self._sups, strict=True):
                if top is not None and le3(top, e) is True:
                    continue  # L <= sup L <= eps: no positive term
                a, b = self._m_star_range(s, e)
                for m in range(a, b + 1):
                    g = s.cdf(m) - e.exp() * s.cdf(m - s._shift)
                    if g.upper() > best.upper():
                        best = g
            return best

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta at each point (float64, vectorised)."""
        return log_delta_each(self.delta_ball, x, _PREC)

    def tail_limit(self) -> None:
        """Not derived for a summed profile."""
        return None

    def latex(self) -> str:
        return r"\text{" + self.kind + "}"


# -- the derivation -------------------------------------------------------------------------
def _integer_shift(sensitivity: Any) -> sympy.Integer:
    try:
        v = sympy.sympify(sensitivity, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise DomainError(f"the sensitivity must be a positive integer, got "
                          f"{sensitivity!r}") from exc
    if isinstance(sensitivity, bool) or not v.is_number or not (v.is_integer and v > 0):
        raise DomainError(
            f"the sensitivity of integer noise must be a positive integer, got "
            f"{sensitivity!r}: a non-integer shift moves the support off the integers, so "
            "the two outputs are disjoint there and no eps covers it")
    return sympy.Integer(v)


def _loss_runs(pmf: Pmf, shift: sympy.Integer) -> list[tuple[sympy.Expr, sympy.Expr,
                                                              sympy.Expr, sympy.Expr]]:
    """(first, last, L, w) runs of integers on which L and w are single formulas."""
    x = pmf.x
    inner = [p.hi for p in pmf.pieces[:-1]]
    points = sorted({*inner, *(b + shift for b in inner)}, key=lambda v: float(v))
    ends = [-_OO, *[sympy.ceiling(p) for p in points], _OO]
    out = []
    for a, c in pairwise(ends):
        last = _OO if c == _OO else c - 1
        if a != -_OO and last != _OO and a > last:
            continue
        probe = (a if a != -_OO else (last - 1 if last != _OO else 0))
        i = _piece_at(pmf.pieces, probe, x)
        j = _piece_at(pmf.pieces, probe - shift, x)
        w_i, w_j = pmf.pieces[i].expr, pmf.pieces[j].expr
        L = sympy.simplify(sympy.expand_log(sympy.log(w_i), force=True)
                           - sympy.expand_log(sympy.log(w_j), force=True).xreplace(
                               {x: x - shift}))
        out.append((a, last, L, w_i))
    return out


def _piece_at(pieces: tuple[Piece, ...], v: sympy.Expr, x: sympy.Symbol) -> int:
    for i, p in enumerate(pieces):
        if (p.lo == -_OO or p.lo <= v) and (p.hi == _OO or v < p.hi):
            return i
    raise ProfileError(f"no piece of the PMF holds at {x} = {v}")


def _left_sup(pmf: Pmf, shift: sympy.Integer) -> sympy.Expr:
    """sup L: its value on the left run where L is constant there, else oo (L is
    non-increasing, so its sup is its limit on the left)."""
    _, _, L, _ = _loss_runs(pmf, shift)[0]
    if sympy.simplify(sympy.diff(L, pmf.x)) == 0 and L.is_number:
        return sympy.simplify(L)
    return sympy.oo


def _closed_form(pmf: Pmf, shift: sympy.Integer) -> tuple[sympy.Expr, sympy.Expr] | None:
    """(profile, sup L) of one direction when L has finitely many values; else None
    (runs in a bounded child)."""
    x = pmf.x
    groups: list[tuple[sympy.Expr, sympy.Expr]] = []
    for a, last, L, w in _loss_runs(pmf, shift):
        constant = sympy.simplify(sympy.diff(L, x)) == 0
        if a == -_OO or last == _OO:
            if not constant:
                return None
            groups.append((sympy.simplify(L), _run_sum(w, x, a, last)))
            continue
        if last - a > _MAX_RUN:
            return None
        for v in range(int(a), int(last) + 1):
            groups.append((sympy.simplify(L.xreplace({x: v})), w.xreplace({x: v})))
    if any(m.has(sympy.Sum) for _, m in groups):
        return None
    c = pmf.const
    if c.has(sympy.Sum):  # a normaliser written as a Sum: a closed form needs its value
        total = sympy.Add(*[_run_sum(pmf.pieces[i].expr, x, lo, hi)
                            for i, lo, hi in _runs(pmf.pieces)])
        for s in c.atoms(sympy.Sum):
            j = s.limits[0][0]
            if len(s.limits) == 1 and tuple(s.limits[0][1:]) == (-_OO, _OO) \
                    and sympy.simplify(s.function.xreplace({j: x}) - pmf.weight) == 0:
                c = c.xreplace({s: total})
        if c.has(sympy.Sum):
            return None
    return loss_value_profile(groups, c)


def loss_value_profile(groups: list[tuple[sympy.Expr, sympy.Expr]],
                       const: sympy.Expr = sympy.S.One, *, tidy: bool = True
                       ) -> tuple[sympy.Expr, sympy.Expr] | None:
    r"""(profile, :math:`\max_i \ell_i`) of a loss taking finitely many values:
    :math:`\delta(\varepsilon) = \sum_i c P_i (1 - e^{\varepsilon - \ell_i})_+`, from
    ``groups`` of (loss value :math:`\ell`, mass where it is taken, before the factor
    ``const`` :math:`c`); equal values are merged and ordered (each comparison proved),
    giving a ``Piecewise`` in :math:`\varepsilon`, zero from the largest value on.
    ``None`` when two values cannot be ordered; ``tidy=False`` skips the (cosmetic,
    time-bounded) simplification of each branch.  Used by the closed-form route of
    :func:`discrete_noise` and by :func:`symgdp.noise.staircase.staircase`.
    """
    merged: list[list] = []
    for ell, mass in groups:
        for g in merged:
            if sympy.simplify(g[0] - ell) == 0:
                g[1] += mass
                break
        else:
            merged.append([ell, mass])
    order: list[list] = []
    for g in merged:  # descending loss values, each comparison proved
        k = 0
        while k < len(order):
            d = (g[0] - order[k][0]).is_positive
            if d is None:
                return None
            if d:
                break
            k += 1
        order.insert(k, g)
    branches: list[tuple[sympy.Expr, Any]] = [(sympy.S.Zero, sympy.Ge(_EPS, order[0][0]))]
    partial = sympy.S.Zero
    for k, (ell, mass) in enumerate(order):
        partial += const * mass * (1 - sympy.exp(_EPS - ell))
        term = _tidy(partial) if tidy else partial
        cond = sympy.true if k == len(order) - 1 else sympy.Ge(_EPS, order[k + 1][0])
        branches.append((term, cond))
    return sympy.Piecewise(*branches), order[0][0]


def _tidy(e: sympy.Expr) -> sympy.Expr:
    try:
        s = run_bounded(sympy.simplify, e, timeout=4)
    except Exception:  # noqa: BLE001 - simplification is cosmetic
        return e
    return min((e, s), key=sympy.count_ops)


def _crosscheck(pmf: Pmf, profile: Any, shift: int, values: dict) -> str:
    """The profile against a 30-digit direct sum of its definition (both directions) at
    rational parameter values; ProfileError on disagreement."""
    rng = random.Random(2020)
    at = {s: sympy.Rational(rng.randint(6, 20), rng.randint(5, 12)) for s in pmf.params}
    at.update(values)
    x = pmf.x
    logp = sympy.lambdify(x, sympy.expand_log(sympy.log(pmf.weight.xreplace(at)),
                                              force=True), "mpmath")
    with mpmath.workdps(30):
        cache = {}

        def lw(k: int) -> Any:
            if k not in cache:
                cache[k] = logp(mpmath.mpf(k))
            return cache[k]

        def window() -> range:
            top = max(lw(k) for k in range(-5, 6))
            lo, hi = -5, 5
            while lw(lo) > top - 160:
                lo -= max(1, abs(lo) // 4)
            while lw(hi) > top - 160:
                hi += max(1, hi // 4)
            # symmetric: the reversed direction reads w(-k) over the same window (a
            # heavier right tail cut at -lo was a false disagreement, and a refusal)
            lo, hi = min(lo, -hi), max(hi, -lo)
            return range(lo - shift, hi + shift + 1)

        ks = window()
        total = mpmath.fsum(mpmath.exp(lw(k)) for k in ks)
        grid = [0.0, 0.3, 1.0, 2.5]
        for e in grid:
            ee = mpmath.exp(e)
            ref = max(mpmath.fsum(max(0, mpmath.exp(lw(k)) - ee * mpmath.exp(lw(k - shift)))
                                  for k in ks),
                      mpmath.fsum(max(0, mpmath.exp(lw(-k)) - ee * mpmath.exp(lw(-k + shift)))
                                  for k in ks)) / total
            got = mpmath.mpf(profile(e, at))
            # the direct sum's own rounding: each term within ~1e-29 of (1 + e^eps) times
            # its masses, which sum to 1 (a profile that is exactly 0 at eps = its loss
            # bound sums to dust of that size, not to 0)
            if abs(got - ref) > mpmath.mpf(10) ** -12 * ref + mpmath.mpf(10) ** -26 * (1 + ee):
                shown = ", ".join(f"{k} = {v}" for k, v in at.items())
                raise ProfileError(f"the derived profile disagrees with the direct sum of "
                                   f"its definition at eps = {e:g} ({shown}): "
                                   f"{mpmath.nstr(got, 15)} against {mpmath.nstr(ref, 15)}")
    shown = ", ".join(f"{k} = {v}" for k, v in at.items()) or "no parameters"
    return (f"agrees with the 30-digit direct sum of sum_x max(0, p(x) - e^eps p(x - Delta)) "
            f"(both directions) to 12 digits at eps = {', '.join(f'{e:g}' for e in grid)} "
            f"({shown})")


def discrete_noise(noise: Any, sensitivity: Any = 1, variable: Any = None, *,
                   timeout: float | None = None) -> Profile:
    r"""The privacy profile of :math:`f(D) + Z` for integer noise :math:`Z` with PMF
    ``noise`` (see the module notes); ``symgdp.additive_noise(..., support="integers")``.

    Returns:
        A :class:`~symgdp.profile.Profile`: symbolic (parameters bound later with
        ``.replace(values=...)``) when the sums have a closed form, else a numeric profile
        (:meth:`Profile.from_source`) with a proved upper bound; ``meta["derivation"]`` is
        a :class:`DiscreteDerivation`.

    Raises:
        DomainError: a sensitivity that is not a positive integer, a PMF negative
            somewhere or not summing to 1 (named).
        ProfileError: not log-concave, or the certified route with unbound parameters.
    """
    shift = _integer_shift(sensitivity)
    pmf = read_pmf(noise, variable, timeout=timeout)
    directions = [pmf] if pmf.symmetric else [pmf, pmf.reflected()]
    forms = [run_bounded(_closed_form, d, shift, timeout=timeout) for d in directions]
    how = ("p(-x) = p(x) (proved): one direction" if pmf.symmetric else
           "p is not proved symmetric: the larger of both directions")
    if all(f is not None for f in forms):
        expr = forms[0][0] if len(forms) == 1 else sympy.Max(forms[0][0], forms[1][0])
        sup = forms[0][1] if len(forms) == 1 else sympy.Max(forms[0][1], forms[1][1])
        fn = sympy.lambdify((_EPS, *pmf.params), expr, "mpmath")

        def value(e: float, at: dict) -> Any:
            return fn(mpmath.mpf(e), *(at[s] for s in pmf.params))

        check = _crosscheck(pmf, value, int(shift), {})
        derivation = DiscreteDerivation(
            noise=str(pmf.expr), variable=pmf.x, sensitivity=shift, monotone=pmf.monotone,
            mass=pmf.mass, directions=how, route="closed form", profile=expr, loss_bound=sup,
            verdict=(f"pure DP: L <= {sup}, so delta(eps) = 0 for eps >= {sup} (eps0-DP "
                     f"with eps0 = {sup}); a pure-DP mechanism is mu-GDP for a finite mu"),
            check=check)
        return Profile(expr, name="discrete noise", reference="derived from the PMF "
                       "(symgdp.noise.discrete)", derivation=derivation, eps0=sup,
                       sensitivity=shift)
    if pmf.params:
        raise ProfileError(
            f"the profile of the PMF {pmf.expr} has no closed form here (its loss takes "
            "infinitely many values); the certified summation needs numbers for "
            + ", ".join(map(str, pmf.params)))
    sups = tuple(run_bounded(_left_sup, d, shift, timeout=timeout) for d in directions)
    source = DiscreteNoiseSource(pmf.weight, pmf.x, shift, symmetric=pmf.symmetric,
                                 sups=sups)
    bound = sympy.oo if any(v == sympy.oo for v in sups) else sympy.Max(*sups)

    def numeric(e: float, at: dict) -> Any:
        return mpmath.mpf(source.delta_ball(e).mid().str(40, radius=False))

    check = _crosscheck(pmf, numeric, int(shift), {})
    derivation = DiscreteDerivation(
        noise=str(pmf.expr), variable=pmf.x, sensitivity=shift, monotone=pmf.monotone,
        mass=pmf.mass, directions=how, route="certified summation (Arb balls, tail bound)",
        profile=None, loss_bound=bound,
        verdict=(f"pure DP: L <= {bound}, so delta(eps) = 0 for eps >= {bound}; "
                 if bound != sympy.oo else "the loss is unbounded; ")
        + "the numeric profile is a proved upper bound, measure() brackets mu", check=check)
    return Profile.from_source(source, name="discrete noise", derivation=derivation,
                               sensitivity=shift)


@dataclass(frozen=True)
class DiscreteDerivation:
    """The steps of :func:`discrete_noise` (one sentence or formula each)."""

    noise: str
    variable: sympy.Symbol
    sensitivity: sympy.Expr
    monotone: str
    mass: str
    directions: str
    route: str
    profile: sympy.Expr | None
    loss_bound: sympy.Expr
    verdict: str
    check: str
    relation: str = ("neighbours D ~ D' with |f(D) - f(D')| <= Delta (integers), under "
                     "whichever relation (add/remove or replace-one) Delta is the "
                     "sensitivity for")

    def latex_rows(self) -> list[tuple[str, str]]:
        """(label, LaTeX) pairs for the report (text rows in ``\\text{}``; the profile
        in LaTeX where it has a closed form)."""
        out = []
        for label, text in self.text_rows():
            if label == "derived profile" and self.profile is not None:
                body = r"\delta(\varepsilon) = " + sympy.latex(self.profile)
            else:
                body = r"\text{" + tex_text(text) + "}"
            out.append((label, body))
        return out

    def text_rows(self) -> list[tuple[str, str]]:
        return [("noise", f"p({self.variable}) = {self.noise} on the integers; sensitivity "
                          f"{self.sensitivity}; {self.relation}"),
                ("mass", self.mass), ("monotonicity", self.monotone),
                ("directions", self.directions), ("route", self.route),
                ("derived profile", "delta(eps) = " + (
                    str(self.profile).replace("varepsilon", "eps")
                    if self.profile is not None else "certified numeric sum")),
                ("noise verdict", self.verdict), ("noise check", self.check)]

    def __str__(self) -> str:
        return aligned_rows(self.text_rows())
