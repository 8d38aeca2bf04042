r"""Dominant-term asymptotics of privacy profiles as :math:`\varepsilon \to \infty`.

The tail limit :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` only depends on the
leading behaviour of :math:`\log\delta`.  This module computes that behaviour by rules
instead of trusting a general-purpose ``limit``:

* an expression is expanded in the monomials :math:`\varepsilon^p (\log\varepsilon)^q`
  (a :class:`Series`: finitely many exact coefficients plus a remainder
  :math:`o(\varepsilon^{p_f}(\log\varepsilon)^{q_f})`);
* :func:`log_series` expands :math:`\log\delta` for profiles built from numbers,
  parameters, :math:`\varepsilon`, sums, products, powers, ``exp``, ``log``, ``erfc``,
  ``erf``, ``Max`` and ``Min``.  For :math:`u \to +\infty` it uses

  .. math::

      \log\operatorname{erfc}(u) = -u^2 - \log u - \tfrac12\log\pi
          + \log\Bigl(1 - \frac{1}{2u^2} + \frac{3}{4u^4} - \dots\Bigr)

  (Abramowitz & Stegun 7.1.23), so the Gaussian profile
  :math:`\Phi(-\varepsilon/\mu+\mu/2) - e^{\varepsilon}\Phi(-\varepsilon/\mu-\mu/2)`,
  whose two terms agree to leading order, is resolved by the next order of the
  expansion;
* a sum is dominated by its terms of largest exponential scale; the terms of that scale
  are added as power series and the first coefficient that does not cancel decides;
* with free parameters a comparison that SymPy's assumptions cannot decide is not
  guessed: for positive terms of the same leading order the leading coefficient becomes a
  ``Max``/``Min`` over the parameters (valid for every value), otherwise the analysis
  stops with :class:`Unsupported`.

Everything here is exact symbolic bookkeeping; callers run it under a time budget.

Example:
    >>> import sympy
    >>> from symgdp import eps
    >>> b, d = sympy.symbols("b d", positive=True)
    >>> s = log_series(sympy.exp(-b * eps**2) + sympy.exp(-d * eps**2), eps)
    >>> key, coef = s.leading()
    >>> (int(key[0]), key[1]), coef
    ((2, 0), Max(-b, -d))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy

__all__ = ["Series", "Unsupported", "NotPositive", "log_series", "value_series"]

Key = tuple[Fraction, int]
#: Remainder of an expansion that is smaller than every power of eps (exact to all orders).
EXACT: Key = (Fraction(-10**6), 0)
#: Expansions are carried to O(eps^-6): cancellations of a few orders are resolved.
TARGET: Key = (Fraction(-6), 0)
_ZERO: Key = (Fraction(0), 0)
_LOG: Key = (Fraction(0), 1)
_MAX_TERMS = 200
#: Keys from here up stand for a quantity that grows faster than every power of eps
#: (``exp(eps)``, ``exp(eps**2)``): ``+-1`` times a monomial of order :data:`HUGE` or
#: more.  Only its sign and its dominance over every power are known, so every operation
#: that would compare, cancel or transform two such quantities raises :class:`Unsupported`.
HUGE: Key = (Fraction(10**9), 0)


class Unsupported(Exception):
    """The expression is outside the rules (or a parameter-dependent case is undecided)."""


class NotPositive(Exception):
    """The expression is eventually negative (or zero) where a positive one is needed."""


def _add_keys(a: Key, b: Key) -> Key:
    return (a[0] + b[0], a[1] + b[1])


def _huge(s: Series) -> bool:
    """True when ``s`` holds a term that grows faster than every power (see HUGE)."""
    return any(k >= HUGE for k in s.terms)


def _no_huge(*series: Series) -> None:
    for s in series:
        if _huge(s):
            raise Unsupported("an exponentially large quantity in a comparison or transform")


def _sign(c: sympy.Expr) -> int | None:
    """+1, -1, 0, or None when the sign depends on the parameters / is undecided."""
    c = sympy.sympify(c)
    if c.is_zero:
        return 0
    if not c.is_Number:
        c = sympy.expand(sympy.powsimp(sympy.expand(c, power_exp=True, log=False)))
        if c.is_zero:
            return 0
    if c.is_positive:
        return 1
    if c.is_negative:
        return -1
    if not c.free_symbols:
        try:
            import mpmath

            with mpmath.workdps(60):
                v = sympy.N(c, 60)
            if v.is_Number and not v.is_zero:
                if abs(v) > sympy.Float("1e-45", 60):
                    return 1 if v > 0 else -1
        except (TypeError, ValueError, ArithmeticError):
            return None
    s = sympy.simplify(c)
    if s.is_zero:
        return 0
    if s.is_positive:
        return 1
    if s.is_negative:
        return -1
    return None


def _clean(c: sympy.Expr) -> sympy.Expr:
    if c.is_Number:
        return c
    return sympy.expand(c, log=False)


@dataclass(frozen=True)
class Series:
    r""":math:`\sum c_k\,\varepsilon^{p_k}(\log\varepsilon)^{q_k} + O(\varepsilon^{p_f}
    (\log\varepsilon)^{q_f})` with exact keys :math:`(p_k, q_k) > (p_f, q_f)` = ``floor``
    (keys compare lexicographically; :data:`EXACT` means smaller than every power)."""

    terms: dict[Key, sympy.Expr] = field(default_factory=dict)
    floor: Key = EXACT

    @staticmethod
    def const(c: Any) -> Series:
        c = sympy.sympify(c)
        return Series({} if c.is_zero else {_ZERO: c}, EXACT)

    @staticmethod
    def mono(key: Key, c: Any = 1) -> Series:
        return Series({key: sympy.sympify(c)}, EXACT)

    def _norm(self, terms: dict[Key, sympy.Expr], floor: Key) -> Series:
        out = {}
        for k, c in terms.items():
            if k <= floor:
                continue
            if k <= TARGET:
                floor = max(floor, TARGET)
                continue
            c = _clean(c)
            if c.is_zero:
                continue
            out[k] = c
        if len(out) > _MAX_TERMS:
            raise Unsupported("expansion too long")
        return Series(out, floor)

    def lead_key(self) -> Key:
        """Largest key with a coefficient (the floor when there is none): self = O(m)."""
        return max(self.terms) if self.terms else self.floor

    def leading(self) -> tuple[Key, sympy.Expr] | None:
        """(key, coefficient) of the leading term, dropping coefficients that are 0."""
        for k in sorted(self.terms, reverse=True):
            s = _sign(self.terms[k])
            if s == 0:
                continue
            return k, self.terms[k]
        return None

    def __add__(self, other: Series) -> Series:
        if _huge(self) and _huge(other):
            raise Unsupported("two exponentially large quantities added")
        t = dict(self.terms)
        for k, c in other.terms.items():
            t[k] = t.get(k, 0) + c
        return self._norm(t, max(self.floor, other.floor))

    def __neg__(self) -> Series:
        return Series({k: -c for k, c in self.terms.items()}, self.floor)

    def __sub__(self, other: Series) -> Series:
        return self + (-other)

    def scale(self, c: Any) -> Series:
        return self._norm({k: v * c for k, v in self.terms.items()}, self.floor)

    def __mul__(self, other: Series) -> Series:
        if _huge(self) or _huge(other):
            small = other if _huge(self) else self
            # an exponentially large factor times an exponentially small one (no terms),
            # or times another exponentially large one: the product is not known
            if _huge(small) or not small.terms:
                raise Unsupported("exponentially large times exponentially small or large")
        floor = max(_add_keys(self.lead_key(), other.floor) if other.floor != EXACT else EXACT,
                    _add_keys(other.lead_key(), self.floor) if self.floor != EXACT else EXACT)
        t: dict[Key, sympy.Expr] = {}
        for k1, c1 in self.terms.items():
            for k2, c2 in other.terms.items():
                k = _add_keys(k1, k2)
                if k > floor:
                    t[k] = t.get(k, 0) + c1 * c2
        return self._norm(t, floor)

    def shift(self, key: Key) -> Series:
        """Multiply by the monomial ``key``."""
        return self._norm({_add_keys(k, key): c for k, c in self.terms.items()},
                          _add_keys(self.floor, key) if self.floor != EXACT else EXACT)

    def positive_part(self) -> Series:
        """The terms that grow faster than log(eps) (keys above (0, 1)), exactly."""
        return Series({k: c for k, c in self.terms.items() if k > _LOG}, EXACT)

    def _split(self) -> tuple[Key, sympy.Expr, Series]:
        """self = c m_L (1 + X) with X = o(1); the sign of c must be decided."""
        _no_huge(self)
        ld = self.leading()
        if ld is None:
            raise Unsupported("no leading term (cancellation beyond the expansion)")
        key, c = ld
        if key <= self.floor:
            raise Unsupported("leading term below the known precision")
        inv = (-key[0], -key[1])
        x = self._norm({_add_keys(k, inv): v / c for k, v in self.terms.items() if k < key},
                       _add_keys(self.floor, inv) if self.floor != EXACT else EXACT)
        if x.terms and x.lead_key()[0] >= 0:
            raise Unsupported("correction decays like a power of log(eps)")
        if not x.terms and x.floor[0] >= 0:
            raise Unsupported("correction of unknown size")
        return key, c, x

    def _power_series(self, coefs: Any) -> Series:
        """sum_k coefs(k) self^k for self = o(1), to the target precision."""
        out = Series.const(coefs(0))
        term = Series.const(1)
        for k in range(1, 64):
            term = term * self
            out = out + term.scale(coefs(k))
            if not term.terms and term.floor <= TARGET:
                break
        else:  # pragma: no cover - a correction of size eps^-1/32 or so
            raise Unsupported("correction decays too slowly")
        return out

    def power(self, n: Any) -> Series:
        """self**n for a numeric exponent n (self eventually positive unless n is an
        integer)."""
        n = sympy.sympify(n)
        _no_huge(self)
        if n.is_Integer and n >= 0:
            out = Series.const(1)
            for _ in range(int(n)):
                out = out * self
            return out
        if not n.is_number:
            raise Unsupported(f"symbolic exponent {n}")
        key, c, x = self._split()
        if not n.is_Integer and _sign(c) != 1:
            raise NotPositive(f"non-integer power of a quantity with leading coefficient {c}")
        if key[1] != 0 and not (key[1] * n).is_Integer:
            raise Unsupported("fractional power of log(eps)")
        nk = (key[0] * Fraction(str(sympy.Rational(n))), int(key[1] * n)) if n.is_Rational \
            else None
        if nk is None:
            raise Unsupported(f"irrational exponent {n}")
        corr = x._power_series(lambda k: sympy.binomial(n, k))
        return corr.shift(nk).scale(c**n)

    def log(self) -> Series:
        """log(self) for self eventually positive with a power-like leading term."""
        key, c, x = self._split()
        s = _sign(c)
        if s != 1:
            raise NotPositive(f"log of a quantity with leading coefficient {c}")
        if key[1] != 0:
            raise Unsupported("log(log(eps)) term")
        base = Series({_ZERO: sympy.log(c), _LOG: sympy.Integer(1) * sympy.Rational(
            key[0].numerator, key[0].denominator)}, EXACT)
        base = base._norm(base.terms, EXACT)
        corr = x._power_series(lambda k: 0 if k == 0 else sympy.Rational((-1) ** (k + 1), k))
        return base + corr

    def exp(self) -> Series:
        """exp(self) as a power series; self must not grow (keys <= (0, 1))."""
        if any(k > _LOG for k in self.terms):
            raise Unsupported("exponentially large or small factor")
        r = self.terms.get(_LOG, sympy.S.Zero)
        if not r.is_Rational:
            raise Unsupported(f"power eps^{r} with a non-numeric exponent")
        c = self.terms.get(_ZERO, sympy.S.Zero)
        rest = Series({k: v for k, v in self.terms.items() if k < _ZERO}, self.floor)
        if self.floor >= _ZERO:
            raise Unsupported("exponent known only up to O(1)")
        if rest.terms and rest.lead_key()[0] >= 0:
            raise Unsupported("correction decays like a power of log(eps)")
        corr = rest._power_series(lambda k: 1 / sympy.factorial(k))
        return corr.shift((Fraction(r.p, r.q), 0)).scale(sympy.exp(c))


def _key_of(p: sympy.Expr) -> Fraction:
    if not p.is_Rational:
        raise Unsupported(f"non-rational power {p}")
    return Fraction(int(p.p), int(p.q))


def _tends(s: Series) -> int:
    """+1 if s -> +oo, -1 if s -> -oo, 0 if bounded (constant limit)."""
    ld = s.leading()
    if ld is None:
        if s.floor <= _ZERO:
            return 0
        raise Unsupported("growth unknown")
    key, c = ld
    if key <= _ZERO:
        return 0
    sg = _sign(c)
    if sg is None:
        raise Unsupported(f"the sign of {c} depends on the parameters")
    return sg


class _Ctx:
    def __init__(self, var: sympy.Symbol) -> None:
        self.var = var
        self.vcache: dict[sympy.Expr, Series] = {}
        self.lcache: dict[sympy.Expr, Series] = {}


def value_series(expr: sympy.Expr, var: sympy.Symbol) -> Series:
    r"""The expansion of ``expr`` itself (for quantities that grow or decay like powers).

    Example:
        >>> from symgdp import eps
        >>> value_series(eps + 1 / eps, eps).terms[(1, 0)]
        1
    """
    return _value(sympy.sympify(expr), _Ctx(var))


def log_series(expr: sympy.Expr, var: sympy.Symbol) -> Series:
    r"""The expansion of :math:`\log` ``expr`` for an eventually positive ``expr``.

    Raises:
        Unsupported: outside the rules, or undecided for some parameter values.
        NotPositive: ``expr`` is eventually negative.
    """
    return _log(sympy.sympify(expr), _Ctx(var))


def _memo(cache: dict, fn: Any, e: sympy.Expr, cx: _Ctx) -> Series:
    if e not in cache:
        cache[e] = fn(e, cx)
    return cache[e]


def _value(e: sympy.Expr, cx: _Ctx) -> Series:
    return _memo(cx.vcache, _value_uncached, e, cx)


def _value_uncached(e: sympy.Expr, cx: _Ctx) -> Series:
    var = cx.var
    if var not in e.free_symbols:
        if e.has(sympy.zoo, sympy.nan, sympy.oo):
            raise Unsupported(f"undefined constant {e}")
        return Series.const(e)
    if e == var:
        return Series.mono((Fraction(1), 0))
    if isinstance(e, sympy.Add):
        out = Series.const(0)
        for t in e.args:
            out = out + _value(t, cx)
        return out
    if isinstance(e, sympy.Mul):
        out = Series.const(1)
        for t in e.args:
            out = out * _value(t, cx)
        return out
    if isinstance(e, sympy.Pow):
        b, n = e.args
        if var not in n.free_symbols:
            return _value(b, cx).power(n)
        return _exp_value(_value(n, cx) * _log(b, cx))
    if isinstance(e, sympy.exp):
        return _exp_value(_value(e.args[0], cx))
    if isinstance(e, sympy.log):
        return _log(e.args[0], cx)
    if isinstance(e, (sympy.erfc, sympy.erf)):
        t = _tends(_value(e.args[0], cx))
        if t == 0:
            raise Unsupported(f"{e} with a bounded argument")
        # erfc(u) = O(e^{-u^2}) for u -> +oo: smaller than any power; erfc(-u) = 2 - that
        if isinstance(e, sympy.erfc):
            return Series({} if t > 0 else {_ZERO: sympy.Integer(2)}, EXACT)
        return Series.const(t)
    if isinstance(e, sympy.Abs):
        s = _value(e.args[0], cx)
        ld = s.leading()
        if ld is None:
            raise Unsupported("sign of |x| argument")
        sg = _sign(ld[1])
        if sg is None:
            raise Unsupported(f"the sign of {ld[1]} depends on the parameters")
        return s if sg > 0 else -s
    if isinstance(e, (sympy.Max, sympy.Min)):
        parts = [_value(a, cx) for a in e.args]
        best = parts[0]
        for p in parts[1:]:
            ld = (p - best).leading()
            if ld is None:
                raise Unsupported("Max/Min of arguments that agree to all computed orders")
            sg = _sign(ld[1])
            if sg is None:
                raise Unsupported(f"Max/Min decided by the sign of {ld[1]}")
            if (sg > 0) == isinstance(e, sympy.Max):
                best = p
        return best
    raise Unsupported(f"no rule for {type(e).__name__}")


def _exp_value(f: Series) -> Series:
    """exp(f) as a value: exponentially small -> 0 to all orders; large -> unsupported."""
    pos = f.positive_part()
    if pos.terms:
        ld = pos.leading()
        if ld is None:
            return f.exp()
        sg = _sign(ld[1])
        if sg is None:
            raise Unsupported(f"exp of a term whose sign {ld[1]} depends on the parameters")
        if sg < 0:
            return Series({}, EXACT)
        if ld[0] > _LOG:
            # exp of a quantity growing faster than log(eps): larger than every power.
            # Its log (e.g. log delta = -exp(eps)) then decays faster than every power.
            return Series({HUGE: sympy.Integer(1)}, EXACT)
        raise Unsupported("exponentially large value")
    return f.exp()


def _log(e: sympy.Expr, cx: _Ctx) -> Series:
    return _memo(cx.lcache, _log_uncached, e, cx)


def _log_uncached(e: sympy.Expr, cx: _Ctx) -> Series:
    var = cx.var
    if var not in e.free_symbols:
        s = _sign(e)
        if s is None:
            raise Unsupported(f"the sign of {e} depends on the parameters")
        if s <= 0:
            raise NotPositive(f"{e} is not positive")
        return Series.const(sympy.log(e))
    if e == var:
        return Series.mono(_LOG)
    if isinstance(e, sympy.Mul):
        out = Series.const(0)
        for t in e.args:
            out = out + _log(t, cx)
        return out
    if isinstance(e, sympy.Pow):
        b, n = e.args
        if var not in n.free_symbols:
            return _log(b, cx).scale(n)
        return _value(n, cx) * _log(b, cx)
    if isinstance(e, sympy.exp):
        return _value(e.args[0], cx)
    if isinstance(e, sympy.erfc):
        u = _value(e.args[0], cx)
        t = _tends(u)
        if t < 0:
            return Series.const(sympy.log(2))
        if t == 0:
            raise Unsupported(f"{e} with a bounded argument")
        u2 = u * u
        inv = u2.power(-1)
        # log erfc(u) = -u^2 - log u - log(pi)/2 + log(sum_k (-1)^k (2k-1)!!/(2u^2)^k)
        corr = inv._power_series(
            lambda k: sympy.Integer(1) if k == 0 else
            (-1) ** k * sympy.factorial2(2 * k - 1) / sympy.Integer(2) ** k)
        return -u2 - u.log() + Series.const(-sympy.log(sympy.pi) / 2) + corr.log()
    if isinstance(e, sympy.erf):
        t = _tends(_value(e.args[0], cx))
        if t > 0:
            return Series({}, EXACT)  # log(1 - erfc(u)) is exponentially small
        raise NotPositive(f"{e} is eventually negative")
    if isinstance(e, sympy.Add):
        return _log_sum(e, cx)
    if isinstance(e, (sympy.Max, sympy.Min)):
        return _log_extremum(e, cx)
    if isinstance(e, sympy.log):
        return _value(e, cx).log()
    if isinstance(e, sympy.Abs):
        return _log(e.args[0], cx)  # only the magnitude matters for log|x|... of a positive
    return _value(e, cx).log()


def _signed_terms(e: sympy.Expr, cx: _Ctx) -> list[tuple[int, Series]]:
    out = []
    for t in sympy.Add.make_args(e):
        c, rest = t.as_coeff_Mul()
        s = _sign(c)
        if s is None or s == 0:
            raise Unsupported(f"term {t}")
        try:
            out.append((s, _log(abs(c) * rest, cx)))
        except NotPositive:
            # a factor that is eventually negative flips the sign of the term
            out.append((-s, _log(-abs(c) * rest, cx)))
    return out


def _log_sum(e: sympy.Expr, cx: _Ctx) -> Series:
    terms = _signed_terms(e, cx)
    scales = [lt.positive_part() for _, lt in terms]
    if len(terms) == 1 and terms[0][0] > 0:
        return terms[0][1]
    for (_, lt) in terms:
        if lt.floor > _LOG:
            return _coarse(terms, "max", e)
    best = 0
    for i in range(1, len(terms)):
        ld = (scales[i] - scales[best]).leading()
        if ld is None:
            continue
        sg = _sign(ld[1])
        if sg is None:
            return _coarse(terms, "max", e)
        if sg > 0:
            best = i
    top = scales[best]
    group = []
    for i, (s, lt) in enumerate(terms):
        if (scales[i] - top).leading() is None:
            group.append((s, lt - top, lt))
    if len(group) == 1 and group[0][0] > 0:
        return group[0][2]  # the other scales are exponentially smaller
    total = Series.const(0)
    for s, rest, _ in group:
        total = total + rest.exp().scale(s)
    ld = total.leading()
    if ld is None:
        raise Unsupported(f"the terms of {e} cancel to all computed orders")
    if ld[0] <= total.floor:
        raise Unsupported("cancellation beyond the known precision")
    sg = _sign(ld[1])
    if sg is None:
        raise Unsupported(f"the sign of {e} depends on the parameters ({ld[1]})")
    if sg < 0:
        raise NotPositive(f"{e} is eventually negative")
    return top + total.log()


def _log_extremum(e: sympy.Expr, cx: _Ctx) -> Series:
    parts = [_log(a, cx) for a in e.args]
    is_max = isinstance(e, sympy.Max)
    best = parts[0]
    for p in parts[1:]:
        ld = (p - best).leading()
        if ld is None:
            continue
        sg = _sign(ld[1])
        if sg is None:
            return _coarse([(1, q) for q in parts], "max" if is_max else "min", e)
        if (sg > 0) == is_max:
            best = p
    return best


def _coarse(terms: list[tuple[int, Series]], how: str, e: sympy.Expr) -> Series:
    """Leading order only, for positive terms whose order depends on the parameters:
    log(sum of positives) = max log(term) + O(1), log Max = max log, log Min = min log."""
    if any(s < 0 for s, _ in terms):
        raise Unsupported(f"the dominant term of {e} depends on the parameters")
    leads, floors = [], [_ZERO]
    for _, lt in terms:
        ld = lt.leading()
        if ld is None or ld[0] <= _LOG or ld[0] <= lt.floor:
            raise Unsupported(f"the dominant term of {e} depends on the parameters")
        leads.append(ld)
        below = [k for k in lt.terms if k < ld[0]]
        floors.append(max(below) if below else lt.floor)
    keys = {k for k, _ in leads}
    if len(keys) != 1:
        raise Unsupported(f"the dominant term of {e} depends on the parameters")
    key = keys.pop()
    coefs = [c for _, c in leads]
    coef = sympy.Max(*coefs) if how == "max" else sympy.Min(*coefs)
    # log of the sum is max_i log t_i + O(1), and log t_i = c_i m_key + O(next key)
    return Series({key: coef}, max(floors))


class TailErfc(sympy.erfc):
    r""":math:`\operatorname{erfc}` of an argument tending to :math:`+\infty`, kept as
    written: SymPy's ``erfc`` rewrites ``erfc(u)`` as ``2 - erfc(-u)`` whenever ``u`` "could
    extract a minus sign", which depends on the *names* of the symbols (with a parameter
    ``a``, sorted before :math:`\varepsilon`, ``erfc(eps/a - a/2)`` is turned back into
    ``2 - erfc(a/2 - eps/a)``), so :func:`prepare`'s flip would be undone by the expansion
    and the constants of the :math:`\Phi`/``erf`` spellings would not cancel.  The same
    function (a subclass: every rule for ``erfc`` applies), only without the rewriting."""

    @classmethod
    def eval(cls, arg: sympy.Expr) -> None:
        return None

    def _eval_evalf(self, prec: int) -> Any:
        return sympy.erfc(self.args[0])._eval_evalf(prec)

    def _sympystr(self, printer: Any) -> str:
        return f"erfc({printer.doprint(self.args[0])})"  # the function it is, in details


def prepare(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Rewrite ``erf``/``erfc`` so that every ``erfc`` has an argument tending to
    :math:`+\infty` (:math:`\operatorname{erf}(u) = 1 - \operatorname{erfc}(u)`,
    :math:`\operatorname{erfc}(-u) = 2 - \operatorname{erfc}(u)`), then expand, so that the
    constants of :math:`\Phi = (1 + \operatorname{erf})/2` cancel exactly.

    Example:
        >>> import sympy
        >>> from symgdp import eps
        >>> e = prepare((1 + sympy.erf(-eps)) / 2, eps)
        >>> e, e.atoms(TailErfc) == {TailErfc(eps)}
        (erfc(varepsilon)/2, True)
    """
    cx = _Ctx(var)
    rep: dict[sympy.Expr, sympy.Expr] = {}
    for f in expr.atoms(sympy.erf, sympy.erfc):
        u = f.args[0]
        if var not in u.free_symbols:
            continue
        try:
            t = _tends(_value(u, cx))
        except (Unsupported, NotPositive):
            continue
        if isinstance(f, sympy.erf):
            rep[f] = 1 - TailErfc(u) if t > 0 else (TailErfc(-u) - 1 if t < 0 else f)
        elif t < 0:
            rep[f] = 2 - TailErfc(-u)
        elif t > 0 and type(f) is sympy.erfc:
            rep[f] = TailErfc(u)
    if not rep:
        return expr
    return sympy.expand(expr.xreplace(rep), power_exp=False, log=False, multinomial=False)
