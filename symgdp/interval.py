r"""Rigorous ball arithmetic for profiles and the GDP family (python-flint ``arb``).

Certified measurement (theory §6, §10) must prove inequalities such as
:math:`\delta_A(x) \le \delta_\mu(y)` rather than trust float64 rounding.  This module
provides the two ingredients, both in FLINT/Arb ball arithmetic (a ball is a midpoint and
a radius that provably contains the true value):

* :func:`lambdify_arb` turns a profile's SymPy expression into a function of an ``arb``
  ball.  Numbers enter exactly (a SymPy ``Float`` is the binary number it stores, a
  ``Rational`` is rounded outward), and comparisons are three-valued: a ``Piecewise`` or
  logical condition that the balls cannot decide evaluates every candidate branch and
  returns the hull of their values, so the result still encloses the profile.
* :func:`delta_mu_arb` encloses the GDP profile of Dong, Roth & Su (2021, Cor. 2.13),
  :math:`\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2)
  - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)` with
  :math:`\Phi(x) = \operatorname{erfc}(-x/\sqrt2)/2`.  Arb's exponent range is unbounded,
  so :math:`\delta_1(2000) \approx 1.9\times10^{-868162}` is enclosed like any other value.

:func:`prove` runs a three-valued check at increasing working precision until it is
decided; precision is always scoped with ``flint.ctx.workprec`` (never set globally).

Example:
    >>> from flint import arb
    >>> d = delta_mu_arb(2000.0, 1.0, prec=64)
    >>> d.mid().str(3, radius=False)
    '1.88e-868162'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import sympy
from flint import arb, ctx, fmpq, fmpz
from sympy.codegen.cfunctions import expm1 as _expm1
from sympy.printing.lambdarepr import LambdaPrinter

from .errors import ProfileError
from .implicit import LogDeltaRoot, log_delta_root_arb

__all__ = [
    "ArbUnsupported",
    "Erfcx",
    "ErfcxDiff",

    "PRECISIONS",
    "to_arb",
    "lambdify_arb",
    "profile_arb",
    "delta_mu_arb",
    "log_delta_mu_arb",
    "log_delta_mu_upper",
    "prove",
]

#: working precisions (bits) tried in turn by :func:`prove`
PRECISIONS: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)


class ArbUnsupported(ProfileError):
    """The expression uses a function that has no ball-arithmetic counterpart here."""


def to_arb(x: Any) -> arb:
    """An exact ``arb`` for a Python/NumPy float or int, or a SymPy number (outward-rounded
    when the number is not a binary fraction, e.g. ``Rational(1, 3)``)."""
    if isinstance(x, arb):
        return x
    if isinstance(x, (fmpz, fmpq)):
        return arb(x)
    if isinstance(x, sympy.Basic):
        x = sympy.sympify(x)
        if isinstance(x, sympy.Float):
            return _float_arb(x)
        if isinstance(x, sympy.Integer):
            return arb(fmpz(int(x)))
        if isinstance(x, sympy.Rational):
            return arb(fmpq(int(x.p), int(x.q)))
        if x is sympy.pi:
            return arb.pi()
        if x is sympy.E:
            return arb.const_e()
        raise ArbUnsupported(f"cannot convert {x!r} to a ball")
    if isinstance(x, int):
        return arb(fmpz(x))
    return arb(float(x))  # a float64 is a binary fraction: exact


def _float_arb(f: sympy.Float) -> arb:
    sign, man, exp, _bc = f._mpf_
    if man == 0:
        if f == 0:
            return arb(0)
        return arb("nan") if f != f else arb(float(f))  # +-inf keep their sign
    value = fmpq(int(man) << exp, 1) if exp >= 0 else fmpq(int(man), 1 << -exp)
    return arb(-value if sign else value)


# -- three-valued logic over balls -------------------------------------------------------
# True / False when decided, None when the balls overlap the boundary.

def _tri(definitely: bool, definitely_not: bool) -> bool | None:
    if definitely:
        return True
    if definitely_not:
        return False
    return None


def _lt(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    return _tri(a < b, a >= b)


def _le(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    return _tri(a <= b, a > b)


def _gt(a: Any, b: Any) -> bool | None:
    return _lt(b, a)


def _ge(a: Any, b: Any) -> bool | None:
    return _le(b, a)


def _eq(a: Any, b: Any) -> bool | None:
    a, b = to_arb(a), to_arb(b)
    if a.is_exact() and b.is_exact() and a == b:
        return True
    return _tri(False, not a.overlaps(b))


def _ne(a: Any, b: Any) -> bool | None:
    r = _eq(a, b)
    return None if r is None else not r


def _and(*xs: bool | None) -> bool | None:
    if any(x is False for x in xs):
        return False
    return True if all(x is True for x in xs) else None


def _or(*xs: bool | None) -> bool | None:
    if any(x is True for x in xs):
        return True
    return False if all(x is False for x in xs) else None


def _not(x: bool | None) -> bool | None:
    return None if x is None else not x


def _piecewise(*pairs: tuple[bool | None, Callable[[], Any]]) -> arb:
    """Hull of every branch whose condition may hold, up to the first one that surely does."""
    out: arb | None = None
    for cond, branch in pairs:
        if cond is False:
            continue
        v = to_arb(branch())
        out = v if out is None else out.union(v)
        if cond is True:
            break
    if out is None:  # no branch applies: SymPy's Piecewise is undefined here
        return arb("nan")
    return out


def _max(*xs: Any) -> arb:
    out = to_arb(xs[0])
    for x in xs[1:]:
        out = out.max(to_arb(x))
    return out


def _min(*xs: Any) -> arb:
    out = to_arb(xs[0])
    for x in xs[1:]:
        out = out.min(to_arb(x))
    return out


def _ipow(x: Any, n: int) -> arb:
    """x**n for an integer n; Arb's own power is NaN on a ball containing 0."""
    x = to_arb(x)
    if n < 0:
        return 1 / _ipow(x, -n)
    if n == 0:
        return arb(1)
    if x > 0 or x < 0:
        # an even power is >= 0 (the midpoint-radius square of a wide ball is not)
        return (x**n).nonnegative_part() if n % 2 == 0 else x**n
    out, base, k = arb(1), x, n
    while k:
        if k & 1:
            out = out * base
        base = base * base
        k >>= 1
    return out.nonnegative_part() if n % 2 == 0 else out


def _log(x: Any, base: Any = None) -> arb:
    v = _monotone(to_arb(x), arb.log)

    return v if base is None else v / to_arb(base).log()


class Erfcx(sympy.Function):
    r"""The scaled complementary error function :math:`\operatorname{erfcx}(z) =
    e^{z^2}\operatorname{erfc}(z)` and its derivatives, ``Erfcx(z, n)`` being the
    :math:`n`-th (for cancellation-free rewrites of Gaussian-type profiles).

    From :math:`\operatorname{erfcx}(z) = \frac{2}{\sqrt\pi}\int_0^\infty
    e^{-t^2 - 2zt}\,dt` every derivative has the sign :math:`(-1)^n` and is monotone in
    :math:`z`, so its ball version (:func:`erfcx_arb`) encloses it on a ball from the
    values at the ball's end points -- no dependency problem.

    Example:
        >>> import sympy
        >>> z = sympy.Symbol("z")
        >>> sympy.diff(Erfcx(z), z)
        Erfcx(z, 1)
    """

    nargs = (1, 2)

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        if argindex != 1:
            raise sympy.ArgumentIndexError(self, argindex)
        n = self.args[1] if len(self.args) > 1 else 0
        return Erfcx(self.args[0], n + 1)


# erfcx(z) by the exact ball z (midpoint and radius) and precision: the derivatives of
# a profile evaluate Erfcx(z, 0..3) of the same arguments again and again
_ERFCX_CACHE: dict[tuple[Any, ...], arb] = {}
_ERFCX_CACHED_ORDER = 4



class ErfcxDiff(sympy.Function):
    r"""The difference :math:`\operatorname{erfcx}^{(n)}(z) - \operatorname{erfcx}^{(n)}(z +
    c)` for a constant :math:`c`, written ``ErfcxDiff(z, c, n)``.

    The Gaussian-type profiles are such differences with :math:`c` small against
    :math:`z`; evaluated on a ball term by term they lose everything to the dependency
    problem.  Each :math:`\operatorname{erfcx}^{(n+1)}` is monotone (see :class:`Erfcx`),
    so the difference is monotone in :math:`z` for a fixed :math:`c`: its ball version
    (:func:`erfcx_diff_arb`) is the hull of its end-point values.

    Example:
        >>> import sympy
        >>> z = sympy.Symbol("z")
        >>> sympy.diff(ErfcxDiff(z, sympy.Rational(1, 2)), z)
        ErfcxDiff(z, 1/2, 1)
    """

    nargs = (2, 3)

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        if argindex != 1:
            raise sympy.ArgumentIndexError(self, argindex)
        n = self.args[2] if len(self.args) > 2 else 0
        return ErfcxDiff(self.args[0], self.args[1], n + 1)


def _erfcx_diff_point(z: arb, c: arb, n: int) -> arb:
    key = (z.mid().man_exp(), z.rad().man_exp(), c.mid().man_exp(), c.rad().man_exp(), n,
           ctx.prec)
    v = _ERFCX_DIFF_CACHE.get(key)
    if v is None:
        # the two terms agree to about log2(|z| / |c|) bits: that many more working bits
        extra = 2 * int(abs(float(z.mid())) + abs(float(c.mid())) + 2).bit_length() + 16
        with ctx.workprec(ctx.prec + extra):
            v = _erfcx_point(z, n) - _erfcx_point(z + c, n)
        v = +v
        if len(_ERFCX_DIFF_CACHE) > 50_000:
            _ERFCX_DIFF_CACHE.clear()
        _ERFCX_DIFF_CACHE[key] = v
    return v


_ERFCX_DIFF_CACHE: dict[tuple[Any, ...], arb] = {}


def erfcx_diff_arb(x: Any, c: Any, n: Any = 0) -> arb:
    """Ball enclosing ``ErfcxDiff(x, c, n)`` on the ball ``x`` (monotone in ``x``: the
    hull of the end-point values)."""
    x, c = to_arb(x), to_arb(c)
    n = int(to_arb(n).mid()) if not isinstance(n, int) else n
    if not (x.is_finite() and c.is_finite()):
        return arb("nan")
    if x.rad() <= abs(x.mid()) * 2.0**-40 + 2.0**-60:
        return _erfcx_diff_point(x, c, n)
    lo, hi = arb(x.lower()), arb(x.upper())
    return _erfcx_diff_point(lo, c, n).union(_erfcx_diff_point(hi, c, n))


def erfcx_diff_orders_arb(x: Any, c: Any, top: int) -> list[arb]:
    """Balls of ``ErfcxDiff(x, c, n)`` for n = 0..top on the ball ``x``, from one erfc of
    each argument and the recurrence of the derivatives at exact points (NaN beyond
    |x| = 1e150).  Each is monotone in ``x`` (see :class:`ErfcxDiff`): on a ball that is
    not a point, the hull of the values at its two end points (the recurrence run on
    the ball itself would multiply its radius by about (2 x^2)^n).

    >>> # erfcx^(n)(2) - erfcx^(n)(3); mpmath: 0.0763945251, -0.0524242018, 0.0518367629
    >>> [round(float(v.mid()), 9) for v in erfcx_diff_orders_arb(2, 1, 2)]
    [0.076394525, -0.052424202, 0.051836763]
    """
    x, c = to_arb(x), to_arb(c)
    if not (x.is_finite() and c.is_finite()) or abs(x) + abs(c) > _ERFCX_HUGE:
        return [arb("nan")] * (top + 1)
    if not x.is_exact():
        lo = erfcx_diff_orders_arb(arb(x.lower()), c, top)
        hi = erfcx_diff_orders_arb(arb(x.upper()), c, top)
        return [u.union(w) for u, w in zip(lo, hi, strict=True)]
    key = (x.mid().man_exp(), c.mid().man_exp(), c.rad().man_exp(), ctx.prec)
    v = _ERFCX_ORDERS_CACHE.get(key)
    if v is None or len(v) <= top:
        bits = int(abs(float(x.mid())) + abs(float(c.mid())) + 2).bit_length()
        # the two terms agree to about log2(|x| / |c|) bits, and each step of the
        # recurrence loses up to 2 log2|x| + 6 (as in _erfcx_exact)
        with ctx.workprec(ctx.prec + (top + 1) * (2 * bits + 6) + 16):
            ya = _erfcx_recurrence(x, (x * x).exp() * x.erfc(), top)
            v = []
            # monotone in c too (its c-derivative is -erfcx^(n+1)(x + c)): the hull over
            # the exact ends of the ball c (its radius run through the recurrence would
            # be multiplied by about (2 x^2)^n as well)
            for e in ((c,) if c.is_exact() else (arb(c.lower()), arb(c.upper()))):
                b = x + e
                yb = _erfcx_recurrence(b, (b * b).exp() * b.erfc(), top)
                d = [u - w for u, w in zip(ya, yb, strict=True)]
                v = d if not v else [u.union(w) for u, w in zip(v, d, strict=True)]
        v = [+u for u in v]
        if len(_ERFCX_ORDERS_CACHE) > 50_000:
            _ERFCX_ORDERS_CACHE.clear()
        _ERFCX_ORDERS_CACHE[key] = v
    return v[:top + 1]


_ERFCX_ORDERS_CACHE: dict[tuple[Any, ...], list[arb]] = {}


def _erfcx_point(z: arb, n: int) -> arb:
    """erfcx^(n) on a narrow ball ``z``: the value at its (exact) midpoint, widened by
    radius * sup |erfcx^(n+1)| (which is at the lower end: |erfcx^(k)| decreases).  The
    recurrence run on the ball itself would multiply its radius by about (2 z^2)^n."""
    if z.rad() == 0:
        return _erfcx_exact(z, n)
    mid, r = arb(z.mid()), arb(z.rad())
    low = float((mid - r).lower())
    if not math.isfinite(low) or abs(low) > _ERFCX_HUGE:
        return _erfcx_huge(z, n)
    # any integer w0 below the ball bounds |erfcx^(n+1)| there; shared and cached
    w0 = math.floor(low) - 1
    key = (w0, n + 1, ctx.prec)
    slope = _ERFCX_SLOPE.get(key)
    if slope is None:
        slope = _ERFCX_SLOPE[key] = arb(abs(_erfcx_exact(arb(w0), n + 1)).upper())
    e = r * slope
    return _erfcx_exact(mid, n) + e.union(-e)


_ERFCX_SLOPE: dict[tuple[int, int, int], arb] = {}
# Beyond this |z| the recurrence and its cached slopes are not used (see _erfcx_huge).
_ERFCX_HUGE = 1e150


def _erfcx_huge(z: arb, n: int) -> arb:
    r"""erfcx on a ball of huge positive numbers from the bounds of Abramowitz & Stegun
    7.1.13, :math:`2/(\sqrt\pi(x + \sqrt{x^2 + 2})) < \operatorname{erfcx}(x) \le
    2/(\sqrt\pi(x + \sqrt{x^2 + 4/\pi}))` for :math:`x \ge 0` (both decreasing in x, so
    the lower end of the ball gives the upper bound and vice versa).  Derivatives and
    huge negative arguments are not enclosed here: an honest "unknown" (nan)."""
    if n != 0 or not z.lower() > 0:
        return arb("nan")
    lo, hi = arb(z.lower()), arb(z.upper())
    sp = arb.pi().sqrt()
    upper = 2 / (sp * (lo + (lo * lo + 4 / arb.pi()).sqrt()))
    lower = 2 / (sp * (hi + (hi * hi + 2).sqrt()))
    return arb(lower.lower()).union(arb(upper.upper()))



def _erfcx_exact(z: arb, n: int) -> arb:
    # the recurrence y_{k+1} = 2 z y_k + 2 k y_{k-1} (y_1 = 2 z y_0 - 2/sqrt(pi)) cancels
    # for large z: extra working bits keep the point value tight
    per = 2 * int(abs(float(z.mid())) + 2).bit_length() + 6

    extra = n * per
    y0 = None
    if n <= _ERFCX_CACHED_ORDER:
        key = (z.mid().man_exp(), z.rad().man_exp(), ctx.prec)
        y0 = _ERFCX_CACHE.get(key)
        if y0 is None:
            # once, with the bits the highest cached order needs
            with ctx.workprec(ctx.prec + _ERFCX_CACHED_ORDER * per):
                y0 = (z * z).exp() * z.erfc()
            if len(_ERFCX_CACHE) > 50_000:
                _ERFCX_CACHE.clear()
            _ERFCX_CACHE[key] = y0
    with ctx.workprec(ctx.prec + extra):
        if y0 is None:
            y0 = (z * z).exp() * z.erfc()
        return +_erfcx_recurrence(z, y0, n)[n]


def _erfcx_recurrence(z: arb, y0: arb, n: int) -> list[arb]:
    """erfcx^(k)(z), k = 0..n, from y0 = erfcx(z) at the precision in force: y_1 = 2 z y_0
    - 2/sqrt(pi), y_{k+1} = 2 z y_k + 2 k y_{k-1} (it cancels for large z: the caller
    supplies the extra bits)."""
    ys = [y0]
    if n >= 1:
        ys.append(2 * z * y0 - 2 / arb.pi().sqrt())
    for k in range(1, n):
        ys.append(2 * z * ys[k] + 2 * k * ys[k - 1])
    return ys


def erfcx_arb(x: Any, n: Any = 0) -> arb:
    """Ball enclosing the ``n``-th derivative of erfcx on the ball ``x`` (monotone: the
    hull of the end-point values)."""
    x = to_arb(x)
    n = int(to_arb(n).mid()) if not isinstance(n, int) else n
    if not x.is_finite():
        return arb("nan")
    if x.rad() <= abs(x.mid()) * 2.0**-40 + 2.0**-60:
        return _erfcx_point(x, n)  # a (rounded) point: no dependency problem to avoid
    lo, hi = arb(x.lower()), arb(x.upper())
    return _erfcx_point(hi, n).union(_erfcx_point(lo, n))


def _monotone(x: arb, f: Callable[[arb], arb]) -> arb:
    """``f`` (monotone) on the ball ``x``: the hull of its end-point values when the ball
    is wide (Arb's own enclosure of e.g. erfc on [7, 9] contains 0, losing the sign)."""
    if not x.is_finite() or x.rad() <= abs(x.mid()) * 2.0**-40 + 2.0**-60:
        return f(x)
    return f(arb(x.lower())).union(f(arb(x.upper())))


def _dirac(x: Any, *k: Any) -> arb:
    """DiracDelta (and its derivatives): 0 where the argument is provably non-zero, NaN
    (undecided) on a ball that may contain the singular point."""
    x = to_arb(x)
    if x > 0 or x < 0:
        return arb(0)
    return arb("nan")


def _heaviside(x: Any, h0: Any = None) -> arb:
    x = to_arb(x)
    lo = _tri(x > 0, x < 0)
    if lo is True:
        return arb(1)
    if lo is False:
        return arb(0)
    half = arb(fmpq(1, 2)) if h0 is None else to_arb(h0)
    if x.is_exact() and x.is_zero():
        return half
    return arb(0).union(arb(1))


_NAMESPACE: dict[str, Any] = {
    "arb": arb,
    "_A": to_arb,
    "exp": lambda x: _monotone(to_arb(x), arb.exp),
    "log": _log,
    "sqrt": lambda x: to_arb(x).sqrt(),
    "erf": lambda x: _monotone(to_arb(x), arb.erf),
    "erfc": lambda x: _monotone(to_arb(x), arb.erfc),
    "erfinv": lambda x: _monotone(to_arb(x), arb.erfinv),
    "erfcinv": lambda x: _monotone(to_arb(x), arb.erfcinv),
    "abs": lambda x: abs(to_arb(x)),
    "Abs": lambda x: abs(to_arb(x)),
    "sin": lambda x: to_arb(x).sin(),
    "cos": lambda x: to_arb(x).cos(),
    "tanh": lambda x: to_arb(x).tanh(),
    "sinh": lambda x: to_arb(x).sinh(),
    "cosh": lambda x: to_arb(x).cosh(),
    "atan": lambda x: to_arb(x).atan(),
    "gamma": lambda x: to_arb(x).gamma(),
    "loggamma": lambda x: to_arb(x).lgamma(),
    "lgamma": lambda x: to_arb(x).lgamma(),  # SymPy's LambdaPrinter name for loggamma
    "Heaviside": _heaviside,
    "Erfcx": erfcx_arb,
    "expm1": lambda x: _monotone(to_arb(x), arb.expm1),
    "ErfcxDiff": erfcx_diff_arb,
    "DiracDelta": _dirac,
    # printed under its own name: lambdify's implemented-function table would otherwise
    # put the float root search (LogDeltaRoot._imp_) in its place
    "LogDeltaRootBall": log_delta_root_arb,
    "_ipow": _ipow,
    "_max": _max,
    "_min": _min,
    "_pw": _piecewise,
    "_lt": _lt,
    "_le": _le,
    "_gt": _gt,
    "_ge": _ge,
    "_eq": _eq,
    "_ne": _ne,
    "_and": _and,
    "_or": _or,
    "_not": _not,
}

_FUNCTIONS = {
    sympy.exp, sympy.log, sympy.erf, sympy.erfc, sympy.erfinv, sympy.erfcinv, sympy.Abs, sympy.sin, sympy.cos,
    sympy.tanh, sympy.sinh, sympy.cosh, sympy.atan, sympy.gamma, sympy.loggamma,
    sympy.Heaviside, sympy.Max, sympy.Min, sympy.Piecewise, Erfcx, ErfcxDiff, _expm1,

    sympy.DiracDelta, LogDeltaRoot,
}


class _ArbPrinter(LambdaPrinter):
    """Python code in which every number is an exact ball and every test is three-valued."""

    def __init__(self, settings: dict | None = None) -> None:
        super().__init__(settings)
        self.constants: list[arb] = []

    def _const(self, value: Any) -> str:
        # Stored as exact rationals: the ball is rebuilt at the caller's precision.
        self.constants.append(value)
        return f"_A(_K[{len(self.constants) - 1}])"

    def _print_Float(self, expr: sympy.Float) -> str:
        sign, man, exp, _bc = expr._mpf_
        if man == 0 and expr != 0:
            return f"arb({str(float(expr))!r})"
        v = fmpq(int(man) << exp, 1) if exp >= 0 else fmpq(int(man), 1 << -exp)
        return self._const(-v if sign else v)

    def _print_Rational(self, expr: sympy.Rational) -> str:
        return self._const(fmpq(int(expr.p), int(expr.q)))

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return self._const(fmpz(int(expr)))

    def _print_Half(self, expr: sympy.Rational) -> str:
        return self._print_Rational(expr)

    def _print_One(self, expr: Any) -> str:
        return self._print_Integer(expr)

    def _print_NegativeOne(self, expr: Any) -> str:
        return self._print_Integer(expr)

    def _print_Zero(self, expr: Any) -> str:
        return self._print_Integer(expr)

    def _print_Pi(self, expr: Any) -> str:
        return "arb.pi()"

    def _print_Exp1(self, expr: Any) -> str:
        return "arb.const_e()"

    def _print_Infinity(self, expr: Any) -> str:
        return "arb('inf')"

    def _print_NegativeInfinity(self, expr: Any) -> str:
        return "arb('-inf')"

    def _print_BooleanTrue(self, expr: Any) -> str:
        return "True"

    def _print_BooleanFalse(self, expr: Any) -> str:
        return "False"

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        base, e = expr.args
        if e == sympy.S.Half:
            return f"sqrt({self._print(base)})"
        if e.is_Integer:
            # integer powers of balls are exact operations; keep them so (x**2 of a
            # ball straddling 0 is then correctly non-negative)
            return f"_ipow({self._print(base)}, {int(e)})"
        return f"(_A({self._print(base)})**_A({self._print(e)}))"

    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        fn = {"<": "_lt", "<=": "_le", ">": "_gt", ">=": "_ge", "==": "_eq",
              "!=": "_ne"}[expr.rel_op]
        return f"{fn}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_And(self, expr: Any) -> str:
        return "_and(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: Any) -> str:
        return "_or(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: Any) -> str:
        return f"_not({self._print(expr.args[0])})"

    def _print_Heaviside(self, expr: Any) -> str:
        return "Heaviside(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_DiracDelta(self, expr: Any) -> str:
        return "DiracDelta(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_erfinv(self, expr: Any) -> str:
        return f"erfinv({self._print(expr.args[0])})"

    def _print_erfcinv(self, expr: Any) -> str:
        return f"erfcinv({self._print(expr.args[0])})"

    def _print_Erfcx(self, expr: Any) -> str:
        n = int(expr.args[1]) if len(expr.args) > 1 else 0
        return f"Erfcx({self._print(expr.args[0])}, {n})"

    def _print_ErfcxDiff(self, expr: Any) -> str:
        n = int(expr.args[2]) if len(expr.args) > 2 else 0
        return f"ErfcxDiff({self._print(expr.args[0])}, {self._print(expr.args[1])}, {n})"

    def _print_LogDeltaRoot(self, expr: Any) -> str:
        try:
            return expr._arb_code(self, _check_supported)
        except NotImplementedError as exc:
            raise ArbUnsupported(str(exc)) from exc

    def _print_Max(self, expr: Any) -> str:
        return "_max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr: Any) -> str:
        return "_min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Piecewise(self, expr: Any) -> str:
        parts = ", ".join(f"({self._print(c)}, lambda: {self._print(e)})"
                          for e, c in expr.args)
        return f"_pw({parts})"


def _check_supported(expr: sympy.Expr) -> None:
    for f in expr.atoms(sympy.Function):
        if f.func not in _FUNCTIONS:
            raise ArbUnsupported(
                f"the function {f.func} in the profile has no ball-arithmetic counterpart; "
                "certified measurement supports " +
                ", ".join(sorted(str(g) for g in _FUNCTIONS)))
    for s in expr.atoms(sympy.Sum, sympy.Product, sympy.Integral, sympy.Derivative):
        raise ArbUnsupported(f"unevaluated {type(s).__name__} in the profile")


def _names(code: Any) -> set[str]:
    out = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):  # the lambdas of Piecewise branches
            out |= _names(c)
    return out


def _check_rigorous(fn: Any) -> None:
    """Refuse a compiled ball function that would call a float function (e.g. math's
    ``lgamma`` where SymPy's printer names a function differently from our namespace):
    its result would be turned into an exact ball, a silently wrong enclosure."""
    for name in _names(fn.__code__):
        obj = fn.__globals__.get(name)
        if obj is not None and getattr(obj, "__module__", None) in ("math", "cmath"):
            raise ArbUnsupported(
                f"the compiled ball function would call the float function {name}: no "
                "ball-arithmetic counterpart is wired for it")


def _exact(f: sympy.Float) -> fmpq:
    """The binary number a finite, non-zero SymPy Float stores, exactly."""
    sign, man, exp, _bc = f._mpf_
    v = fmpq(int(man) << exp, 1) if exp >= 0 else fmpq(int(man), 1 << -exp)
    return -v if sign else v


_CONST = "_const"  # name prefix of the symbols standing for decimal literals


def _abstract_constants(expr: sympy.Basic
                        ) -> tuple[sympy.Basic, tuple[sympy.Symbol, ...], tuple[fmpq, ...]]:
    r"""``expr`` with its decimal literals as positive symbols, and their exact values.

    Expressions that differ only in such constants (e.g. a refined profile at two
    parameter points) then become the same expression, so that what is compiled from
    it -- ball functions, symbolic derivatives -- is shared; the values are fed as
    exact rationals at the call.  The symbols are named by the order of first
    occurrence (a deterministic walk of the tree) and are positive, a literal ``-c``
    becoming ``-s``: so SymPy may rely on the sign of a constant, which is part of the
    expression, but on nothing else of its value.  Exponents of powers (``x**0.5`` is a
    square root), the integer indices of Erfcx, ErfcxDiff and DiracDelta, and zero or
    non-finite literals stay as they are: they decide the form of what is compiled; so
    does every literal of an expression with an implicit root (``LogDeltaRoot``).

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> e, syms, vals = _abstract_constants(0.75 - 0.25 * sympy.exp(x))
        >>> e, vals
        (_const0 - _const1*exp(x), (3/4, 1/4))
    """
    # an implicit root is compiled with its numbers: whether its residual is undefined
    # at the origin is decided from them (LogDeltaRoot)
    if not expr.has(sympy.Float) or expr.has(LogDeltaRoot) or any(
            s.name.startswith(_CONST) for s in expr.free_symbols):
        return expr, (), ()
    # exponents (x**0.5 is a square root, x**2.0 an exact square) and the integer
    # indices of Erfcx, ErfcxDiff and DiracDelta decide the form of the code
    kept = {p.exp for p in expr.atoms(sympy.Pow)}
    for f in expr.atoms(Erfcx, ErfcxDiff, sympy.DiracDelta):
        kept.update(f.args[2:] if isinstance(f, ErfcxDiff) else f.args[1:])
    values: dict[fmpq, sympy.Symbol] = {}
    mapping: dict[sympy.Float, sympy.Expr] = {}
    for node in sympy.preorder_traversal(expr):
        if not isinstance(node, sympy.Float) or node in mapping or node in kept:
            continue
        if node._mpf_[1] == 0:
            continue
        v = _exact(node)
        a = -v if v < 0 else v
        sym = values.get(a)
        if sym is None:
            sym = values[a] = sympy.Symbol(f"{_CONST}{len(values)}", positive=True)
        mapping[node] = -sym if v < 0 else sym
    if not mapping:
        return expr, (), ()
    return (expr.xreplace(mapping), tuple(values.values()),
            tuple(values.keys()))


@functools.lru_cache(maxsize=256)
def _compile_arb(expr: sympy.Basic, var: sympy.Symbol, params: tuple[sympy.Symbol, ...],
                 cse: bool) -> Callable[..., Any]:
    _check_supported(expr)
    extra = expr.free_symbols - {var} - set(params)
    if extra:
        names = ", ".join(sorted(str(s) for s in extra))
        raise ArbUnsupported(f"the expression has unbound symbols: {names}")
    # terms printed in their stored order: sorting them (the default) costs most of the
    # printing time, and the sum of balls encloses the sum in any order
    printer = _ArbPrinter({"fully_qualified_modules": False, "order": "none"})
    ns = dict(_NAMESPACE)
    fn = sympy.lambdify((var, *params), expr, modules=[ns], printer=printer, cse=cse)
    fn.__globals__["_K"] = tuple(printer.constants)
    _check_rigorous(fn)
    return fn


def lambdify_arb(expr: sympy.Expr, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...] = (), *, cse: bool = False
                 ) -> Callable[..., arb]:
    r"""Compile a SymPy expression in ``var`` to a function of a ball.

    The returned function takes a float or ``arb`` (and one more per symbol of ``params``)
    and returns an ``arb`` enclosing the expression's value at the working precision in
    force (``flint.ctx.workprec``).  Undecided ``Piecewise`` conditions give the hull of
    the candidate branches.

    ``cse=True`` evaluates common subexpressions once (worth it for long derivative
    expressions).  The compiled code is shared by expressions that differ only in their
    decimal literals (fed to it as exact values).

    Raises:
        ArbUnsupported: the expression holds a function without a ball counterpart, or a
            free symbol other than ``var`` and ``params``.

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> f = lambdify_arb(sympy.Piecewise((1 - x, x < 1), (0, True)), x)
        >>> f(0.25)
        0.750000000000000
        >>> f(2.0)
        0
    """
    expr = sympy.sympify(expr)
    # finite sums with numeric limits (e.g. the k-fold composition profile) become Adds
    if expr.has(sympy.Sum, sympy.Product):
        expr = expr.replace(
            lambda e: isinstance(e, (sympy.Sum, sympy.Product))
            and all(lim.is_number for lim in sum((list(t[1:]) for t in e.limits), [])),
            lambda e: e.doit())
    expr, csyms, cvals = _abstract_constants(expr)
    if csyms and any(str(s).startswith(_CONST) for s in (var, *params)):
        raise ArbUnsupported(f"a parameter is named like the internal symbols {_CONST}N")
    fn = _compile_arb(expr, var, tuple(params) + csyms, cse)

    def call(x: Any, *ps: Any) -> Any:
        out = fn(to_arb(x), *(to_arb(p) for p in ps), *(arb(c) for c in cvals))
        if isinstance(out, (tuple, list)):  # a sympy.Tuple of expressions
            return tuple(to_arb(v) for v in out)
        return to_arb(out)

    return call


def _kept_params(expr: sympy.Expr, values: Sequence[tuple[sympy.Symbol, sympy.Expr]],
                 rationals: bool) -> tuple[tuple[sympy.Symbol, sympy.Expr], ...]:
    """The parameters that stay symbols when ``expr`` is compiled: those whose value
    holds a Float (substituted, SymPy would round e.g. exp(Float) to 53 bits), and with
    ``rationals`` the rational ones whose sign the symbol itself declares (so that SymPy
    knows of the symbol what it knew of the number), except in exponents (``x**k`` must
    stay an integer power) and in expressions with finite sums (their limits must be
    numbers) or an implicit root (whether its residual is defined at the origin is
    decided from its numbers)."""
    exps: set[sympy.Basic] = set()
    if rationals:
        if expr.has(sympy.Sum, sympy.Product, LogDeltaRoot):
            rationals = False
        else:
            exps = set().union(*(q.exp.free_symbols for q in expr.atoms(sympy.Pow)))
    return tuple((s, v) for s, v in values if v.has(sympy.Float) or (
        rationals and v.is_Rational and s not in exps
        and ((v > 0 and s.is_positive) or (v < 0 and s.is_negative))))


def _param_value(v: sympy.Expr) -> Any:
    """A parameter value fed to a ball function: exact where it is a number (a Float is
    the binary number it stores), else its ball at the precision of the call."""
    if isinstance(v, sympy.Float) and v._mpf_[1] != 0:
        return _exact(v)
    if v.is_Rational:
        return fmpq(int(v.p), int(v.q))
    return _ParamBall(lambdify_arb(v, _NO_VAR))


_NO_VAR = sympy.Dummy("x")  # the variable of a constant compiled as a ball function


class _ParamBall:
    """A constant parameter expression (e.g. ``0.1*sqrt(2)``), enclosed at each call."""

    def __init__(self, fn: Callable[..., arb]) -> None:
        self._fn = fn

    def ball(self) -> arb:
        return self._fn(0)


def profile_arb(profile: Any) -> Callable[[Any], arb]:
    r"""Ball enclosure :math:`x \mapsto \delta(x)` of a :class:`~symgdp.profile.Profile`
    (values above 1 read as 1).

    Parameter values enter exactly (a float parameter is the double it holds), so the
    enclosure is of the profile with exactly those parameters.  A profile with its own
    ball evaluation (a method ``arb_delta()`` returning it, e.g. the exact piecewise form
    of the k-fold composition profile) is evaluated by that instead of its expression.
    Profiles that differ only in the values of their parameters or decimal literals
    share the compiled code."""
    own = getattr(profile, "arb_delta", None)
    f = own() if callable(own) else None
    if f is not None:
        return f
    profile.require_bound()
    values = tuple(sorted(((s, sympy.sympify(v)) for s, v in profile.values.items()),
                          key=lambda sv: str(sv[0])))
    if any(set(v.free_symbols) for _, v in values):
        return _profile_arb_cached(profile.bound_expr, profile.var, ())
    return _profile_arb_cached(profile.expr, profile.var, values)


@functools.lru_cache(maxsize=64)
def _profile_arb_cached(expr: sympy.Expr, var: sympy.Symbol,
                        values: tuple[tuple[sympy.Symbol, sympy.Expr], ...]
                        ) -> Callable[[Any], arb]:
    # Exact non-rational values (sqrt(2), pi, ...) are substituted symbolically.  Numbers
    # stay symbols fed as exact values, so that one compile serves every point of a
    # parameter grid; a value holding a Float is never substituted: SymPy would evaluate
    # e.g. exp(Float) to a 53-bit Float before the ball arithmetic sees it, and a
    # certified bound must hold for the exact parameter.
    kept = _kept_params(expr, values, True)
    names = {s for s, _ in kept}
    f = lambdify_arb(expr.xreplace({s: v for s, v in values if s not in names}), var,
                     tuple(s for s, _ in kept))
    pvals = tuple(_param_value(v) for _, v in kept)

    def delta(x: Any) -> arb:
        # values above 1 are vacuous and read as 1 (the Profile convention)
        ps = (p.ball() if isinstance(p, _ParamBall) else p for p in pvals)
        return f(x, *ps).min(arb(1))

    return delta


def delta_mu_arb(eps: Any, mu: Any, *, prec: int | None = None) -> arb:
    r"""Ball enclosing :math:`\delta_\mu(\varepsilon)` (exact 0 for :math:`\mu = 0`, exact 1
    for :math:`\mu = \infty`), at ``prec`` bits or the precision in force."""
    if prec is not None:
        with ctx.workprec(prec):
            return delta_mu_arb(eps, mu)
    m = to_arb(mu)
    if m.is_exact() and m.is_zero():
        return arb(0)
    if not m.is_finite():
        return arb(1)
    e = to_arb(eps)
    r = arb(fmpq(1, 2)).sqrt()
    q = e / m
    a = m / 2 - q
    b = -q - m / 2
    return ((-a * r).erfc() - e.exp() * (-b * r).erfc()) / 2


def log_delta_mu_arb(eps: Any, mu: Any, *, prec: int | None = None) -> arb:
    r"""Ball enclosing :math:`\log\delta_\mu(\varepsilon)` (finite far beyond float64).

    The two terms of :math:`\delta_\mu` cancel to about :math:`\mu/\varepsilon` relative
    for small :math:`\mu`, and an absolute error of the larger one can exceed the value.
    Where the direct ball is not positive, it is recomputed at the higher precisions of
    :data:`PRECISIONS`, each time with the relative form

    .. math::

        \log\delta_\mu(\varepsilon) = -\frac{a^2}{2}
            + \log\frac{\operatorname{erfcx}(a/\sqrt2)}{2}
            + \log\Bigl(1 - \frac{\operatorname{erfcx}(b/\sqrt2)}
                                    {\operatorname{erfcx}(a/\sqrt2)}\Bigr),
        \qquad a = \frac{\varepsilon}{\mu} - \frac{\mu}{2},\ b = a + \mu

    (the factor :math:`e^{\varepsilon}` cancels exactly against
    :math:`e^{-(b^2 - a^2)/2}`) tried as well, until one of them is positive.  Beyond
    them the result is the whole line,
    an honest "unknown"; only :math:`\mu = 0` gives the point :math:`-\infty`.

    >>> log_delta_mu_arb(1.0, 1e-5, prec=64).mid().str(6, radius=False)  # -5.0e9, 64 bits
    '-5.00000e+9'
    >>> log_delta_mu_arb(100.0, 1e-30, prec=64).mid().str(6, radius=False)  # tiny mu
    '-5.00000e+63'
    """
    if prec is not None:
        with ctx.workprec(prec):
            return log_delta_mu_arb(eps, mu)
    m = to_arb(mu)
    if m.is_exact() and m.is_zero():
        return arb("-inf")
    start = ctx.prec
    for p in (start, *(q for q in PRECISIONS if q > start)):
        with ctx.workprec(p):
            d = delta_mu_arb(eps, mu)
            if d > 0:
                return d.log()
            r = arb(fmpq(1, 2)).sqrt()
            a = to_arb(eps) / m - m / 2
            xa = erfcx_arb(a * r)
            rest = 1 - erfcx_arb((a + m) * r) / xa
            if rest > 0 and xa > 0:
                return -a * a / 2 + (xa / 2).log() + rest.log()
    return arb(0, "inf")


def log_delta_mu_upper(eps: Any, mu: Any) -> float:
    r"""A float proved not below :math:`\log\delta_\mu(\varepsilon)`: the upper end of
    :func:`log_delta_mu_arb`, or, where no positive enclosure of :math:`\delta_\mu` exists
    at any precision of :data:`PRECISIONS` (tiny :math:`\mu`), the logarithm of the
    enclosure's upper end.  :math:`-\infty` only for :math:`\mu = 0`: a positive bound is
    never reported as 0.

    >>> log_delta_mu_upper(100.0, 1e-30)  # the true value is -4.99999999999999991666e63
    -4.999999999999999e+63
    >>> log_delta_mu_upper(100.0, 1e-200)  # below the float range: the most negative float
    -1.7976931348623157e+308
    """
    with ctx.workprec(64):
        v = log_delta_mu_arb(eps, mu)
        if v.is_finite() or float(v.upper()) == -math.inf:
            u = v.upper()
        else:
            d = delta_mu_arb(eps, mu).upper()
            u = d.log().upper() if d > 0 else arb(0)
    f = float(u)
    return f if arb(f) >= u else math.nextafter(f, math.inf)


def prove(check: Callable[[], bool | None],
          precisions: Sequence[int] = PRECISIONS) -> bool | None:
    """Run a three-valued ``check`` at increasing precision until it is decided.

    Returns True (proved), False (disproved) or None (undecided at the highest precision).
    """
    for p in precisions:
        with ctx.workprec(p):
            r = check()
        if r is not None:
            return r
    return None
