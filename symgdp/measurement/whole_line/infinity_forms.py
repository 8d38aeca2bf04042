r"""Forms at infinity: enclosures of a profile's logarithm on :math:`[E, \infty)`, for the
tail certificate of :mod:`symgdp.measurement.whole_line.certificate` (theory §14).

A :class:`Form` is a finite sum :math:`\sum_k c_k\,\varepsilon^{p_k}(\log\varepsilon)^{q_k}`
with ball coefficients; every monomial is :math:`\ge 0` on :math:`[E, \infty)` (``E > 1``),
so the form encloses every function between the sums of the lower and of the upper ends of
its coefficients.  Monomials that vanish at infinity are absorbed into the constant with
their range on :math:`[E, \infty)`.  The structural rules of :class:`Rules` read a SymPy
expression into a value form or a log enclosure; :func:`log_delta_mu_lower_form` is the
Gaussian side.

Example:
    >>> import sympy
    >>> from flint import ctx
    >>> from symgdp import eps
    >>> with ctx.workprec(128):
    ...     lg = Rules(eps, 100.0).log(2 * sympy.exp(-eps**2))
    >>> lg.hi.c[(2, 0)]
    -1.00000000000000
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from flint import arb

from symgdp.errors import AnalysisTimeout
from symgdp.evaluation.interval import lambdify_arb, to_arb
from symgdp.measurement.whole_line.implicit_tail import RootOutside, root_conditions
from symgdp.symbolic.budget import run_in_thread
from symgdp.symbolic.implicit import LogDeltaRoot

__all__ = ["Form", "Rules", "Unsupported", "log_delta_mu_lower_form"]

Key = tuple[Fraction, int]
_CONST: Key = (Fraction(0), 0)
_LOGEPS: Key = (Fraction(0), 1)
_PREC = 128
_MAX_TERMS = 40
#: at most this many index ranges of a finite Sum (each enclosing all its terms at once)
_MAX_SUM_RANGES = 64


class Unsupported(Exception):
    """The expression is outside the rules of the far-tail enclosure."""


# -- forms at infinity ------------------------------------------------------------------
class Form:
    r""":math:`\sum_k c_k\,\varepsilon^{p_k}(\log\varepsilon)^{q_k}` with ball coefficients,
    enclosing a function on :math:`[E, \infty)`: it lies between the sums of the lower and
    of the upper ends of the coefficients (every monomial is :math:`\ge 0` there)."""

    __slots__ = ("c",)

    def __init__(self, c: dict[Key, arb]) -> None:
        self.c = {k: v for k, v in c.items() if not (v.is_exact() and v.is_zero())}

    def __repr__(self) -> str:
        return " + ".join(f"{v.str(5)}*e^{k[0]}*L^{k[1]}" for k, v in sorted(self.c.items()))


def _const(v: Any) -> Form:
    return Form({_CONST: to_arb(v) if not isinstance(v, arb) else v})


def _mono(key: Key, c: Any = 1) -> Form:
    return Form({key: to_arb(c) if not isinstance(c, arb) else c})


def _add(a: Form, b: Form) -> Form:
    out = dict(a.c)
    for k, v in b.c.items():
        out[k] = out[k] + v if k in out else v
    return Form(out)


def _scale(a: Form, s: arb) -> Form:
    return Form({k: v * s for k, v in a.c.items()})


def _neg(a: Form) -> Form:
    return Form({k: -v for k, v in a.c.items()})


def _mono_at(key: Key, E: arb) -> arb:
    p, q = key
    v = (E.log() * arb(fmpq_of(p))).exp() if p else arb(1)
    return v * E.log() ** q if q else v


def fmpq_of(p: Fraction) -> Any:
    from flint import fmpq

    return fmpq(p.numerator, p.denominator)


def _decreasing_from(dp: Fraction, dq: int, E: arb) -> bool:
    r""":math:`\varepsilon^{dp}(\log\varepsilon)^{dq}` is non-increasing on
    :math:`[E, \infty)` (and tends to 0 there)."""
    if dp > 0 or (dp == 0 and dq >= 0):
        return False
    if dp == 0:
        return bool(E > 1)
    if dq <= 0:
        return bool(E > 1)
    # derivative sign: dp*log(eps) + dq <= 0  iff  log(eps) >= dq/|dp|
    return bool(E.log() >= arb(fmpq_of(Fraction(dq) / -dp)))


def _absorb(a: Form, E: arb) -> Form:
    """Terms that vanish at infinity become their range on [E, inf) in the constant."""
    out: dict[Key, arb] = {}
    extra = arb(0)
    for k, v in a.c.items():
        if k[0] < 0:
            if not _decreasing_from(k[0], k[1], E):
                raise Unsupported(f"term eps^{k[0]} log^{k[1]} not monotone beyond E")
            extra = extra + v * arb(0).union(_mono_at(k, E))
        else:
            out[k] = v
    if extra != 0 or not extra.is_exact():
        out[_CONST] = out.get(_CONST, arb(0)) + extra
    if len(out) > _MAX_TERMS:
        raise Unsupported("too many terms")
    return Form(out)


def _mul(a: Form, b: Form, E: arb) -> Form:
    out: dict[Key, arb] = {}
    for ka, va in a.c.items():
        for kb, vb in b.c.items():
            k = (ka[0] + kb[0], ka[1] + kb[1])
            out[k] = out[k] + va * vb if k in out else va * vb
    return _absorb(Form(out), E)


def _quotient_lower(a: Form, lead: Key, E: arb) -> arb:
    """A lower bound of form/m_lead on [E, inf): Horner-like from the smallest monomial up,
    each partial sum divided by the next larger monomial, whose ratio to it is
    non-increasing on [E, inf) with its largest value at E."""
    keys = sorted(a.c)
    acc = None
    for i, k in enumerate(keys):
        if not a.c[k].is_finite():
            # a NaN end would fail every comparison below and be silently dropped
            raise Unsupported(f"coefficient of eps^{k[0]} log^{k[1]} not finite")
        c = arb(a.c[k].lower())
        if acc is None:
            acc = c
            continue
        prev = keys[i - 1]
        dp, dq = prev[0] - k[0], prev[1] - k[1]
        if not _decreasing_from(dp, dq, E):
            raise Unsupported("no monotone ratio to the leading term")
        if acc < 0:
            acc = c + arb(acc.lower()) * _mono_at((dp, dq), E)
        else:
            acc = c
        acc = arb(acc.lower())
    return arb(0) if acc is None else acc


def _bracket(a: Form, E: arb) -> tuple[Key, arb]:
    r"""``(lead, B)``: on :math:`[E, \infty)` the form is :math:`m_{lead}(\varepsilon)
    \beta(\varepsilon)` with :math:`\beta \in B` -- the quotient by the leading monomial
    bounded over the compactified range :math:`t = 1/\varepsilon \in [0, 1/E]` (every
    other monomial's ratio to the next larger one is non-increasing there)."""
    if not a.c:
        return _CONST, arb(0)
    lead = max(a.c)
    lo = _quotient_lower(a, lead, E)
    hi = -_quotient_lower(_neg(a), lead, E)
    if not (lo.is_finite() and hi.is_finite()):
        return lead, arb("nan")
    return lead, arb(lo).union(arb(hi))


def _sup(a: Form, E: arb) -> arb | None:
    """An upper bound of the form on [E, inf), or None (unbounded or undecided)."""
    lead, b = _bracket(a, E)
    if lead == _CONST:
        return arb(b.upper())
    if b < 0:  # the form is at most m_lead * sup(b) < 0: m_lead at its least on [E, inf)
        least = _mono_least(lead, E)
        if least is None:
            return arb(0)  # m_lead tends to 0: the form tends to 0 from below
        return arb((least * arb(b.upper())).upper())
    return None


def _mono_least(key: Key, E: arb) -> arb | None:
    r"""A ball containing the least value of :math:`\varepsilon^p(\log\varepsilon)^q` on
    :math:`[E, \infty)` (``E > 1``), or None when its infimum is 0 (it tends to 0).

    The monomial is non-decreasing from ``E`` only when :math:`p\log\varepsilon + q \ge 0`
    there; for ``p > 0 > q`` and a small ``E`` it first falls to its minimum at
    :math:`\log\varepsilon = -q/p` (e.g. :math:`\varepsilon/\log^3\varepsilon` at
    :math:`e^3`), which is then its least value."""
    p, q = key
    if p < 0 or (p == 0 and q <= 0):
        return None
    if q >= 0 or E.log() >= arb(fmpq_of(Fraction(-q) / p)):
        return _mono_at(key, E)
    # its global minimum on (1, inf), at log(eps) = -q/p: eps^p log^q = e^{-q} (-q/p)^q
    return arb(-q).exp() * arb(fmpq_of(Fraction(-q) / p)) ** q


def _inf(a: Form, E: arb) -> arb | None:
    s = _sup(_neg(a), E)
    return None if s is None else -s


def _lower_end(a: Form) -> Form:
    return Form({k: arb(v.lower()) for k, v in a.c.items()})


def _upper_end(a: Form) -> Form:
    return Form({k: arb(v.upper()) for k, v in a.c.items()})


def _merge(lo: Form, hi: Form) -> Form:
    """One ball form enclosing every function between ``lo`` and ``hi``."""
    keys = set(lo.c) | set(hi.c)
    return Form({k: lo.c.get(k, arb(0)).union(hi.c.get(k, arb(0))) for k in keys})


def _coef_max(forms: list[Form]) -> Form:
    """Coefficient-wise maximum of the upper ends: an upper form of the pointwise max."""
    keys = set().union(*(f.c for f in forms))
    out: dict[Key, arb] = {}
    for k in keys:
        # exact ball comparisons: end points closer than float64 resolution must not tie
        best = arb(forms[0].c.get(k, arb(0)).upper())
        for f in forms[1:]:
            v = arb(f.c.get(k, arb(0)).upper())
            if not v <= best:  # exact points compare exactly; else keep both
                best = v if v > best else arb(best.union(v).upper())
        out[k] = best
    return Form(out)


def _coef_min(forms: list[Form]) -> Form:
    """Coefficient-wise minimum of the lower ends: a lower form of the pointwise min."""
    keys = set().union(*(f.c for f in forms))
    out: dict[Key, arb] = {}
    for k in keys:
        best = arb(forms[0].c.get(k, arb(0)).lower())
        for f in forms[1:]:
            v = arb(f.c.get(k, arb(0)).lower())
            if not v >= best:
                best = v if v < best else arb(best.union(v).lower())
        out[k] = best
    return Form(out)


def _smaller(a: Form, b: Form, E: arb) -> Form:
    """Whichever of two upper forms is provably eventually smaller (else ``a``)."""
    try:
        lead, bb = _bracket(_add(_upper_end(a), _neg(_upper_end(b))), E)
    except Unsupported:
        return a
    return b if bb > 0 else a


@dataclass
class _Log:
    """Enclosure of log f on [E, inf): ``f <= exp(hi)`` (f may be <= 0 there: ``hi``
    bounds its positive part), and, when ``lo`` is set, ``f >= exp(lo) > 0``;
    ``zero``: f <= 0 on [E, inf) (``exact``: f = 0 there)."""

    lo: Form | None
    hi: Form | None
    zero: bool = False
    exact: bool = False


_NONPOS = _Log(None, None, zero=True)
_EXACT_ZERO = _Log(None, None, zero=True, exact=True)


class Rules:
    """The structural rules at one far-tail start ``E``."""

    def __init__(self, var: sympy.Symbol, E: float | arb,
                 env: dict[sympy.Symbol, arb] | None = None) -> None:
        self.var = var
        self.E = E if isinstance(E, arb) else to_arb(E)
        #: summation indices bound to balls (every integer of a range of a finite Sum)
        self.env: dict[sympy.Symbol, arb] = dict(env or {})
        self.vcache: dict[sympy.Basic, Form] = {}
        self.lcache: dict[sympy.Basic, _Log] = {}
        #: a branch was undecided at this E but may switch at a larger one (a Piecewise
        #: condition, a subtracted term that dominates eventually, a Min)
        self.switch = False
        #: the mu being proved: an implicit root is enclosed from above by the Gaussian's
        #: lower form only where its residual proves it (tail_implicit); None: no rule
        self.mu: float | None = None
        self._E_in = E

    # -- values ----------------------------------------------------------------------
    def value(self, e: sympy.Basic) -> Form:
        v = self.vcache.get(e)
        if v is None:
            v = self.vcache[e] = self._value(e)
        return v

    def _value(self, e: sympy.Basic) -> Form:
        E, x = self.E, self.var
        if e == x:
            return _mono((Fraction(1), 0))
        if e.is_Number or e in (sympy.pi, sympy.E):
            return _const(to_arb(e))
        if isinstance(e, sympy.Add):
            out = Form({})
            for t in e.args:
                out = _add(out, self.value(t))
            return out
        if isinstance(e, sympy.Mul):
            out = _const(1)
            for t in e.args:
                out = _mul(out, self.value(t), E)
            return out
        if isinstance(e, sympy.Pow):
            base, n = e.args
            if n.has(x):
                return self._bounded_value(e)
            nb = to_arb(n) if n.is_Number else self.const(n)
            if n.is_Integer and int(n) > 0:
                f, out = self.value(base), _const(1)
                for _ in range(int(n)):
                    out = _mul(out, f, E)
                return out
            f = self.value(base)
            lead, b = _bracket(f, E)
            if not b > 0 or not n.is_Rational:
                if base.has(x):
                    return self._bounded_value(e)
                return _const(self.const(base) ** nb)
            p, q = lead
            nq = Fraction(int(n.p), int(n.q))
            if q * nq != int(q * nq):
                raise Unsupported("fractional power of a log")
            return _absorb(Form({(p * nq, int(q * nq)): b ** nb}), E)
        if isinstance(e, sympy.log):
            lg = self.log(e.args[0])
            if lg.lo is None or lg.hi is None:
                raise Unsupported("log of an expression not proved positive")
            return _merge(lg.lo, lg.hi)
        if isinstance(e, (sympy.Max, sympy.Min)):
            fs = [self.value(a) for a in e.args]
            if isinstance(e, sympy.Max):
                return _merge(fs[0], _coef_max(fs))
            return _merge(_coef_min(fs), fs[0])
        if not e.has(x):
            return _const(self.const(e))
        return self._bounded_value(e)

    def _bounded_value(self, e: sympy.Basic) -> Form:
        """A positive expression with a bounded log enclosure is a constant ball."""
        lg = self.log(e)
        if lg.exact:
            return _const(0)
        if lg.zero:
            raise Unsupported(f"{e} may be negative")
        if lg.hi is None:
            raise Unsupported(f"no enclosure of {e}")
        s = _sup(lg.hi, self.E)
        if s is None:
            raise Unsupported(f"{e} is not bounded at infinity")
        lo = arb(0)
        if lg.lo is not None:
            i = _inf(lg.lo, self.E)
            if i is not None:
                lo = i.exp()
        return _const(lo.union(s.exp()))

    def const(self, e: sympy.Basic) -> arb:
        v = _const_ball(e, self.env)
        if not v.is_finite():
            raise Unsupported(f"constant {e} not finite")
        return v

    # -- logarithms --------------------------------------------------------------------
    def log(self, e: sympy.Basic) -> _Log:
        v = self.lcache.get(e)
        if v is None:
            v = self.lcache[e] = self._log(e)
        return v

    def _log(self, e: sympy.Basic) -> _Log:
        E, x = self.E, self.var
        if self.env and not e.has(x):
            lc0 = _log_const(e, self.env)
            if lc0 is not None and lc0.is_finite():
                f0 = _const(lc0)
                return _Log(f0, f0)
        if e.is_Number or not e.has(x):
            c = self.const(e)
            if c.is_exact() and c.is_zero():
                return _EXACT_ZERO
            if c > 0:
                lc = _const(c.log())
                return _Log(lc, lc)
            if c < 0:
                return _NONPOS
            raise Unsupported(f"sign of {e} undecided")
        if e == x:
            m = _mono(_LOGEPS)
            return _Log(m, m)
        if isinstance(e, sympy.exp):
            if isinstance(e.args[0], LogDeltaRoot):
                return self._log_root(e.args[0])
            f = self.value(e.args[0])
            return _Log(f, f)
        if isinstance(e, sympy.Pow):
            base, n = e.args
            if n.has(x):
                return self.log(sympy.exp(n * sympy.log(base), evaluate=False))
            lg = self.log(base)
            if lg.lo is None or lg.hi is None:
                raise Unsupported("power of an expression not proved positive")
            nb = to_arb(n) if n.is_Number else self.const(n)
            if nb > 0:
                return _Log(_scale(lg.lo, nb), _scale(lg.hi, nb))
            if nb < 0:
                return _Log(_scale(lg.hi, nb), _scale(lg.lo, nb))
            raise Unsupported("power of undecided sign")
        if isinstance(e, sympy.Mul):
            return self._log_mul(e.args)
        if isinstance(e, sympy.Add):
            return self._log_poly(e) or self._log_add(e)
        if isinstance(e, sympy.erfc):
            return self._log_erfc(e.args[0])
        if isinstance(e, sympy.Max):
            parts = [self.log(a) for a in e.args]
            parts = [p for p in parts if not p.zero]
            if not parts:
                return _NONPOS
            if any(p.hi is None for p in parts):
                raise Unsupported("Max without an upper enclosure")
            hi = _coef_max([p.hi for p in parts if p.hi is not None])  # all, checked above
            lo = next((p.lo for p in parts if p.lo is not None), None)
            return _Log(lo, hi)
        if isinstance(e, sympy.Min):
            parts = [self.log(a) for a in e.args]
            if any(p.zero for p in parts):
                return _NONPOS
            his = [p.hi for p in parts if p.hi is not None]
            if not his:
                raise Unsupported("Min without an upper enclosure")
            hi = his[0]
            for h in his[1:]:
                hi = _smaller(hi, h, E)
            los = [p.lo for p in parts if p.lo is not None]
            lo = _coef_min(los) if len(los) == len(parts) else None
            return _Log(lo, hi)
        if isinstance(e, sympy.Piecewise):
            return self.log(self._branch(e))
        if isinstance(e, sympy.Sum):
            return self._log_sum(e)
        if isinstance(e, sympy.log):
            # log of a logarithm (e.g. log(log eps) inside log(c eps^2 + 2 log eps)):
            # through its value form, where that is proved positive
            f = self.value(e)
            lo_f, hi_f = _lower_end(f), _upper_end(f)
            if not _bracket(lo_f, E)[1] > 0:
                if not _bracket(hi_f, E)[1] > 0:
                    raise Unsupported("log of a logarithm not proved positive")
                return _Log(None, _upper_end(self._log_value(hi_f)))
            return _Log(_lower_end(self._log_value(lo_f)), _upper_end(self._log_value(hi_f)))
        raise Unsupported(f"no rule for {type(e).__name__}")

    def _log_poly(self, e: sympy.Add) -> _Log | None:
        r"""The log of a sum through its value form, where that grows and is proved
        positive (a sum such as :math:`c\varepsilon^2 - \varepsilon/2 + 2\log\varepsilon`):
        :math:`\log m_{lead} + \log\beta` with the quotient's bracket, tighter than the
        coefficient-wise maximum of the terms' logs plus :math:`\log n`; None otherwise."""
        try:
            f = self.value(e)
            lo_f, hi_f = _lower_end(f), _upper_end(f)
            lead, b = _bracket(lo_f, self.E)
            if lead == _CONST or not b > 0:
                return None
            return _Log(_lower_end(self._log_value(lo_f)), _upper_end(self._log_value(hi_f)))
        except Unsupported:
            return None

    def _log_root(self, root: LogDeltaRoot) -> _Log:
        r"""An upper enclosure of an implicit root, :math:`t(\varepsilon) \le
        \ell(\varepsilon) \le \log\delta_\mu(\varepsilon) - 1` on :math:`[E, \infty)`,
        where the residual's closed-form conditions
        (:func:`~symgdp.measurement.whole_line.implicit_tail.root_conditions`) are proved positive
        there (theory §14, *Implicit profiles*); there is no lower enclosure."""
        if self.mu is None:
            raise Unsupported("an implicit root is bounded only against a given mu")
        E_in = self._E_in
        if isinstance(E_in, arb):
            if not E_in.is_exact():
                raise Unsupported("an implicit root needs an exact E")
            E_in = float(E_in)
        try:
            # SymPy's differentiation and sign rules on the residual: bounded like every
            # symbolic step (the default budget of one bounded call)
            ell, cases = run_in_thread(root_conditions, root, self.var, self.mu, E_in)
        except RootOutside as exc:
            raise Unsupported(f"implicit root: {exc}") from None
        except AnalysisTimeout:
            raise Unsupported("implicit root: the residual's sign analysis ran out of "
                              "time") from None
        for _s0, needs in cases:
            if all(self.positive(n) for n in needs):
                return _Log(None, self.value(ell))
        raise Unsupported("implicit root: the residual's conditions are not proved on "
                          "[E, inf)")

    def positive(self, e: sympy.Expr) -> bool:
        """``e > 0`` proved on [E, inf): a lower log enclosure with finite coefficients,
        or the leading term of its value form proved positive."""
        try:
            lg = self.log(e)
            if (lg.lo is not None and not lg.zero
                    and all(v.is_finite() for v in lg.lo.c.values())):
                return True
        except Unsupported:
            pass
        try:
            return self.truth(sympy.StrictGreaterThan(e, 0, evaluate=False)) is True
        except Unsupported:
            return False

    def _log_sum(self, e: sympy.Sum) -> _Log:
        r"""A finite sum :math:`\sum_{i=a}^{b} f(i, \varepsilon)` with integer limits,
        without expanding it: the index is bound to a ball holding a whole range of
        integers, and the rules enclose every term of the range at once; a range whose
        enclosure fails is halved.  The sum is at most the number of terms times the
        largest term, and at least any one term when all are positive."""
        if len(e.limits) != 1:
            raise Unsupported("a multiple Sum")
        i, a, b = e.limits[0]
        if not (a.is_Integer and b.is_Integer) or self.var in (a, b):
            raise Unsupported("a Sum without integer limits")
        a, b = int(a), int(b)
        if b < a:
            return _EXACT_ZERO
        f = e.function
        stack = [(a, b)]
        parts: list[Any] = []
        while stack:
            first, last = stack.pop()
            if len(parts) + len(stack) >= _MAX_SUM_RANGES:
                raise Unsupported("a Sum whose terms need too many index ranges")
            ball = arb(first) if first == last else _range_ball(first, last)
            child = Rules(self.var, self.E, {**self.env, i: ball})
            try:
                parts.append(child.log(f))
            except Unsupported:
                self.switch = self.switch or child.switch
                if first == last:
                    raise
                m = (first + last) // 2
                stack += [(m + 1, last), (first, m)]
                continue
            self.switch = self.switch or child.switch
        if all(p.exact for p in parts):
            return _EXACT_ZERO
        live = [p for p in parts if not p.zero]
        if not live:
            return _NONPOS
        if any(p.hi is None for p in live):
            raise Unsupported("a Sum term without an upper enclosure")
        hi = _add(_coef_max([p.hi for p in live if p.hi is not None]),  # all, checked above
                  _const(arb(b - a + 1).log()))
        lo = None
        if len(live) == len(parts) and all(p.lo is not None for p in live):
            lo = max((p.lo for p in live if p.lo is not None), key=self._lead_score)
        return _Log(lo, hi)

    def _branch(self, e: sympy.Piecewise) -> sympy.Basic:
        for expr, cond in e.args:
            t = self.truth(cond)
            if t is True:
                return expr
            if t is None:
                raise Unsupported(f"condition {cond} undecided beyond E")
        raise Unsupported("no Piecewise branch holds beyond E")

    def truth(self, cond: Any) -> bool | None:
        if cond is sympy.true or cond is True:
            return True
        if cond is sympy.false or cond is False:
            return False
        if isinstance(cond, sympy.And):
            vals = [self.truth(c) for c in cond.args]
            return False if False in vals else (None if None in vals else True)
        if isinstance(cond, sympy.Or):
            vals = [self.truth(c) for c in cond.args]
            return True if True in vals else (None if None in vals else False)
        if isinstance(cond, sympy.Not):
            v = self.truth(cond.args[0])
            return None if v is None else not v
        if isinstance(cond, sympy.core.relational.Relational):
            try:
                _, b = _bracket(self.value(cond.lhs - cond.rhs), self.E)
            except Unsupported:
                self.switch = True
                return None
            out = None
            if isinstance(cond, (sympy.StrictLessThan, sympy.LessThan)):
                out = True if b < 0 else (False if b > 0 else None)
            elif isinstance(cond, (sympy.StrictGreaterThan, sympy.GreaterThan)):
                out = True if b > 0 else (False if b < 0 else None)
            elif isinstance(cond, sympy.Ne):
                out = True if (b > 0 or b < 0) else None
            elif isinstance(cond, sympy.Eq):
                out = False if (b > 0 or b < 0) else None
            if out is None:
                self.switch = True
            return out
        return None

    def _log_mul(self, args: tuple) -> _Log:
        parts = [self.log(a) for a in args]
        if any(p.exact for p in parts):
            return _EXACT_ZERO
        if any(p.zero for p in parts):
            if sum(p.zero for p in parts) == 1 and all(p.lo is not None
                                                       for p in parts if not p.zero):
                return _NONPOS
            raise Unsupported("a product of factors of unknown sign")
        unsigned = [p for p in parts if p.lo is None]
        if len(unsigned) > 1 or any(p.hi is None for p in parts):
            raise Unsupported("a product of factors of unknown sign")
        hi = Form({})
        for h in (p.hi for p in parts if p.hi is not None):  # all, checked above
            hi = _add(hi, h)
        lo = None
        if not unsigned:  # every factor has a lower form
            lo = Form({})
            for v in (p.lo for p in parts if p.lo is not None):
                lo = _add(lo, v)
        return _Log(lo, hi)

    def _log_add(self, e: sympy.Add) -> _Log:
        pos, neg = [], []
        for t in e.args:
            c, rest = t.as_coeff_Mul()
            if c.is_Number and c < 0:
                neg.append(self.log(-t))
            else:
                pos.append(self.log(t))
        dropped = any(p.zero for p in pos)  # terms <= 0: dropped from the upper bound
        pos = [p for p in pos if not p.zero]
        if any(p.zero and not p.exact for p in neg):
            raise Unsupported("a subtracted term that may be negative")
        neg = [p for p in neg if not p.zero]
        if any(p.lo is None for p in neg):
            raise Unsupported("a subtracted term of unknown sign")
        if any(p.hi is None for p in neg):  # (never: only a zero _Log lacks hi)
            raise Unsupported("a subtracted term without an upper enclosure")
        if not pos:
            return _EXACT_ZERO if not neg and not dropped else _NONPOS
        if any(p.hi is None for p in pos):
            raise Unsupported("a term without an upper enclosure")
        if neg:
            # the subtracted part dominates on [E, inf): the sum is <= 0 there
            phi = _add(_coef_max([p.hi for p in pos if p.hi is not None]),  # all, checked
                       _const(arb(len(pos)).log()))
            nlo = max((p.lo for p in neg if p.lo is not None), key=self._lead_score)
            dom = _add(_lower_end(nlo), _neg(_upper_end(phi)))
            t = _inf(dom, self.E)
            if t is not None and t > 0:
                return _NONPOS
            if dom.c and dom.c[max(dom.c)] > 0 and max(dom.c) != _CONST:
                self.switch = True  # the subtracted part dominates from some larger E on
        n = len(pos)
        hi = _coef_max([p.hi for p in pos if p.hi is not None])  # all, checked above
        if n > 1:
            hi = _add(hi, _const(arb(n).log()))
        lo = None
        los = [p.lo for p in pos if p.lo is not None]
        if len(los) == n and not dropped:
            lo = max(los, key=lambda f: self._lead_score(f))
            if neg:
                # log(P - N) >= log P + log(1 - N/P) when N/P <= exp(s) < 1 on [E, inf)
                nhi = _coef_max([p.hi for p in neg if p.hi is not None])  # all, checked
                if len(neg) > 1:
                    nhi = _add(nhi, _const(arb(len(neg)).log()))
                s = _sup(_add(_upper_end(nhi), _neg(_lower_end(lo))), self.E)
                if s is not None and s < 0:
                    lo = _add(lo, _const((1 - s.exp()).log()))
                else:
                    lo = None
        return _Log(lo, hi)

    @staticmethod
    def _lead_score(f: Form) -> tuple:
        if not f.c:
            return (Fraction(-10**9), 0, 0.0)
        k = max(f.c)
        return (k[0], k[1], float(f.c[k].lower()))

    def _log_erfc(self, u: sympy.Basic) -> _Log:
        E = self.E
        f = self.value(u)
        lo_u, hi_u = _lower_end(f), _upper_end(f)
        umin = _inf(lo_u, E)
        if umin is not None and umin > 0:
            # Mills: e^{-u^2}/(sqrt(pi) u) (1 - 1/(2u^2)) <= erfc(u) <= e^{-u^2}/(sqrt(pi) u)
            half_log_pi = arb.pi().log() / 2
            hi = _add(_neg(_mul(lo_u, lo_u, E)), _neg(self._log_value(lo_u)))
            hi = _add(hi, _const(-half_log_pi))
            lo = _add(_neg(_mul(hi_u, hi_u, E)), _neg(self._log_value(hi_u)))
            corr = 1 - 1 / (2 * umin * umin)
            if not corr > 0:
                return _Log(None, hi)
            lo = _add(lo, _const(corr.log() - half_log_pi))
            return _Log(lo, hi)
        umax = _sup(hi_u, E)
        if umin is not None and umax is not None:
            # a bounded argument: erfc is decreasing
            lo_v, hi_v = arb(umax.upper()).erfc(), arb(umin.lower()).erfc()
            if lo_v > 0:
                return _Log(_const(lo_v.log()), _const(hi_v.log()))
        if umax is not None and umax < 0:
            v = arb(umax.upper()).erfc()
            if v > 0:
                return _Log(_const(v.log()), _const(arb(2).log()))
        raise Unsupported("erfc argument undecided at infinity")

    def _log_value(self, f: Form) -> Form:
        r"""A two-sided form of :math:`\log F` for a positive point form ``f``."""
        E = self.E
        lead, b = _bracket(f, E)
        if not b > 0:
            raise Unsupported("log of a form not proved positive")
        p, q = lead
        out = _const(b.log())
        if p:
            out = _add(out, _mono(_LOGEPS, arb(fmpq_of(p))))
        if q:
            # log log eps lies in [log log E, log eps] for eps >= E > e
            if not E.log() > 1:
                raise Unsupported("log log eps needs E > e")
            ll = E.log().log()
            out = _add(out, _merge(_const(ll * q), _mono(_LOGEPS, q)))
        return out


_UNARY = {sympy.exp: arb.exp, sympy.log: arb.log, sympy.erfc: arb.erfc, sympy.erf: arb.erf}


def _range_ball(lo: int, hi: int) -> arb:
    """A ball holding every integer of [lo, hi] (its ends are exact dyadics)."""
    return arb(fmpq_of(Fraction(lo + hi, 2)), fmpq_of(Fraction(hi - lo, 2)))


def _binomial_ball(e: sympy.binomial, env: dict[sympy.Symbol, arb] | None) -> arb:
    """A ball of binomial(n, k) over the range of :func:`_binomial_range`."""
    lo, hi = _binomial_range(e, env)
    return arb(lo).union(arb(hi))


def _binomial_range(e: sympy.binomial, env: dict[sympy.Symbol, arb] | None
                    ) -> tuple[int, int]:
    """(least, largest) binomial(n, k) for an exact integer n and an integer-valued k
    ranging over a ball: exact at the integers of the ball's range (unimodal in k: its
    ends and the middle)."""
    import math

    n_e, k_e = e.args
    if not (n_e.is_Integer and int(n_e) >= 0 and k_e.is_integer):
        raise Unsupported(f"{e}: only binomial(n, k) with an integer n and an integer k")
    k = _const_ball(k_e, env)
    if not (k.is_finite() and abs(k) < 2**50):
        raise Unsupported(f"{e}: k not finite")
    nn = int(n_e)
    # the true k are integers inside the ball: those of [ceil(lower), floor(upper)]
    lo, hi = int(float(k.lower().ceil())), int(float(k.upper().floor()))
    if lo > hi:
        raise Unsupported(f"{e}: no integer in the index range")
    if lo < 0 or hi > nn:
        raise Unsupported(f"{e}: index range beyond [0, n]")
    mid = min(max(nn // 2, lo), hi)
    vals = [math.comb(nn, j) for j in {lo, hi, mid, min(mid + 1, hi)}]
    return min(vals), max(vals)


def _log_const(e: sympy.Basic, env: dict[sympy.Symbol, arb]) -> arb | None:
    """A ball of log(e) for a constant e proved positive, structurally (a product of a
    range of terms spans many orders of magnitude: its log is a narrow ball where its
    value is not), or None."""
    if isinstance(e, sympy.Mul):
        out = arb(0)
        for a in e.args:
            v = _log_const(a, env)
            if v is None:
                return None
            out = out + v
        return out
    if isinstance(e, sympy.exp):
        return _const_ball(e.args[0], env)
    if isinstance(e, sympy.Pow) and not e.exp.free_symbols:
        v = _log_const(e.base, env)
        return None if v is None else v * _const_ball(e.exp, env)
    if isinstance(e, sympy.binomial):
        lo, hi = _binomial_range(e, env)
        return arb(lo).log().union(arb(hi).log())
    c = _const_ball(e, env)
    return c.log() if c > 0 else None


def _const_ball(e: sympy.Basic, env: dict[sympy.Symbol, arb] | None = None) -> arb:
    """A ball of a constant expression, structurally (compiling it is far slower);
    ``env`` binds summation indices to balls."""
    if e.is_Number or e in (sympy.pi, sympy.E):
        return to_arb(e)
    if env and e in env:
        return env[e]
    if isinstance(e, sympy.Add):
        return sum((_const_ball(a, env) for a in e.args), arb(0))
    if isinstance(e, sympy.Mul):
        out = arb(1)
        for a in e.args:
            out = out * _const_ball(a, env)
        return out
    if isinstance(e, sympy.Pow):
        b, n = e.args
        if n.is_Integer:
            return _const_ball(b, env) ** int(n)
        return _const_ball(b, env) ** _const_ball(n, env)
    if isinstance(e, sympy.binomial):
        return _binomial_ball(e, env)
    f = _UNARY.get(type(e))
    if f is not None:
        x = _const_ball(e.args[0], env)
        if x.is_finite() and x.rad() > 2.0**-20 * (1 + abs(x.mid())):
            # a wide ball (a range of summation indices): these functions are monotone,
            # their values at the two ends enclose the range far more tightly
            return f(arb(x.lower())).union(f(arb(x.upper())))
        return f(x)
    if env and e.free_symbols & set(env):
        raise Unsupported(f"no ball rule for {type(e).__name__} of a summation index")
    return lambdify_arb(e, sympy.Dummy())(0)


def log_delta_mu_lower_form(mu: float, E: float) -> Form:
    r"""A form :math:`L_\mu` with :math:`\log\delta_\mu(\varepsilon) \ge L_\mu(\varepsilon)`
    for every :math:`\varepsilon \ge E` (theory §14):

    .. math::

        \log\delta_\mu(\varepsilon) \ge -\frac{\varepsilon^2}{2\mu^2} + \frac{\varepsilon}{2}
        - \frac{\mu^2}{8} - \tfrac12\log(2\pi) + 3\log\mu - 2\log\varepsilon
        - \frac{\mu^2}{E} + \log\Bigl(1 - \frac{3}{b_E^2}\Bigr),
        \qquad b_E = \frac{E}{\mu} + \frac{\mu}{2} > \sqrt3.

    >>> f = log_delta_mu_lower_form(1.0, 100.0)
    >>> float(f.c[(2, 0)].mid()), float(f.c[(1, 0)].mid()), float(f.c[(0, 1)].mid())
    (-0.5, 0.5, -2.0)
    """
    m = to_arb(mu)
    e = to_arb(E)
    b = e / m + m / 2
    if not b * b > 3:
        raise Unsupported("b_E must exceed sqrt(3)")
    const = (-m * m / 8 - (2 * arb.pi()).log() / 2 + 3 * m.log() - m * m / e
             + (1 - 3 / (b * b)).log())
    return Form({(Fraction(2), 0): -1 / (2 * m * m), (Fraction(1), 0): arb(0.5),
                 _LOGEPS: arb(-2), _CONST: const})
