r"""Balls of the Gaussian family: the scaled complementary error function and :math:`\delta_\mu`.

* :class:`Erfcx` and :class:`ErfcxDiff` are SymPy functions (:math:`\operatorname{erfcx}`
  and its derivatives, and differences of them) for cancellation-free rewrites of
  Gaussian-type profiles; :func:`erfcx_arb`, :func:`erfcx_diff_arb` and
  :func:`erfcx_diff_orders_arb` enclose them in ball arithmetic (the printer of
  :mod:`symgdp.evaluation.interval` compiles them to these).
* :func:`delta_mu_arb` encloses the GDP profile of Dong, Roth & Su (2021, Cor. 2.13),
  :math:`\delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2)
  - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)`; :func:`log_delta_mu_arb` and
  :func:`log_delta_mu_upper` its logarithm, finite far beyond float64.

Example:
    >>> d = delta_mu_arb(2000.0, 1.0, prec=64)
    >>> d.mid().str(3, radius=False)
    '1.88e-868162'
"""

from __future__ import annotations

import math
import operator
from typing import Any

import sympy
from flint import arb, ctx, fmpq

from symgdp.numerics.balls import PRECISIONS, to_arb

__all__ = [
    "Erfcx",
    "ErfcxDiff",
    "delta_mu_arb",
    "erfcx_arb",
    "erfcx_diff_arb",
    "erfcx_diff_orders_arb",
    "erfc_form",
    "log_delta_mu_arb",
    "log_delta_mu_upper",
]


def _erfc_sum(add: sympy.Add) -> sympy.Expr:
    """One sum with ``c*erf(u)`` written ``c - c*erfc(u)`` where it meets a number of the
    opposite sign (``1 - erf(u)`` becomes ``erfc(u)``): an exact identity."""
    number = sum((t for t in add.args if t.is_Number), sympy.Integer(0))
    if number == 0:
        return add
    out, changed = [], False
    for t in add.args:
        c, rest = t.as_coeff_Mul()
        # a Float sum would round: rewritten only where the numbers cancel exactly or
        # are rationals
        exact = (number.is_Rational and c.is_Rational) or (
            sympy.Rational(number) + sympy.Rational(c) == 0)
        if (isinstance(rest, sympy.erf) and c.is_Number and c * number < 0 and exact
                and rest.args[0].free_symbols):
            out.append(c - c * sympy.erfc(rest.args[0]))
            changed = True
        else:
            out.append(t)
    return sympy.Add(*out) if changed else add


def erfc_form(expr: sympy.Expr) -> sympy.Expr:
    r"""``expr`` with each sum :math:`a - b\operatorname{erf}(u)` (numbers :math:`a, b`
    of one sign) written :math:`(a - b) + b\operatorname{erfc}(u)`: the same function,
    but without the cancellation of :math:`1 - \operatorname{erf}(u)` where
    :math:`\operatorname{erf}(u)` is near 1 (a float64 or fixed-precision evaluation of
    ``1 - erf(eps/30)`` loses every digit in its tail, ``erfc(eps/30)`` none).

    Example:
        >>> x = sympy.Symbol("x", positive=True)
        >>> erfc_form((1 - sympy.erf(x)) ** 2 + 2 - sympy.erf(x / 3))
        erfc(x/3) + erfc(x)**2 + 1
    """
    if not expr.has(sympy.erf):
        return expr
    return expr.replace(lambda e: isinstance(e, sympy.Add) and e.has(sympy.erf), _erfc_sum)


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
    n = operator.index(n) if not isinstance(n, int) else n
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
    n = operator.index(n) if not isinstance(n, int) else n
    if not x.is_finite():
        return arb("nan")
    if x.rad() <= abs(x.mid()) * 2.0**-40 + 2.0**-60:
        return _erfcx_point(x, n)  # a (rounded) point: no dependency problem to avoid
    lo, hi = arb(x.lower()), arb(x.upper())
    return _erfcx_point(hi, n).union(_erfcx_point(lo, n))


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



def delta_mu_proved_at_most(eps: float, mu: float, delta: float) -> bool:
    r"""True only if :math:`\delta_\mu(\varepsilon) \le \delta` is proved in ball arithmetic
    (:func:`log_delta_mu_arb` against a ball of :math:`\log\delta`, at 64 bits and then
    more, as far as 256: :math:`\delta` within 1e-23 of 1 needs them); False when it is
    false or cannot be decided.  The check behind every proved floor: :math:`\delta_\mu`
    grows with :math:`\mu`, so :math:`\delta_\mu(\varepsilon) \le \delta \le` the true
    :math:`\delta(\varepsilon)` forces every valid :math:`\mu` above this one.

    >>> delta_mu_proved_at_most(1.0, 1.0, 0.127), delta_mu_proved_at_most(1.0, 1.0, 0.1269)
    (True, False)
    """
    if not delta > 0.0:
        return False
    for prec in (64, 128, 256):
        with ctx.workprec(prec):
            bound = arb(delta).log()
            v = log_delta_mu_arb(eps, mu)
            if not v.is_finite():
                v = delta_mu_arb(eps, mu)
                bound = arb(delta)
            if v <= bound:
                return True
            if v > bound:
                return False
    return False
