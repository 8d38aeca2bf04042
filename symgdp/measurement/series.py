r"""The series test: Taylor forms of :math:`\log\delta` of high order in ball arithmetic.

Where the profile's erfcx form has a power-series enclosure (sums, products, powers, exp,
log, erfc, erfcx and ErfcxDiff, and Min/Max by their provably active argument), the
first-order test first uses the Taylor form of order 12 of
:math:`h = \log\delta_A - \log\delta_{\mu^+}` itself: its coefficients at the midpoint
from Arb's power series at that exact point (tight, so the tiny difference of two nearly
equal series survives), and only the remainder's coefficient enclosed on the whole
interval (theory §11) -- so that nearly Gaussian profiles (decimal literals, subsampled)
need few intervals, and about as many at tol 1e-9 as at 1e-6.  The symbolic preparation of
the series form runs in a bounded child, started ahead of need by
:func:`prefetch_series`.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any, Literal

import sympy
from flint import arb, ctx, fmpq
from sympy.codegen.cfunctions import expm1

from symgdp.errors import AnalysisTimeout
from symgdp.evaluation.interval import ArbUnsupported, Erfcx, ErfcxDiff, lambdify_arb
from symgdp.measurement.forms import (
    _PREC,
    MAX_OPS,
    _doit_finite,
    _log_expanded,
    _log_rates,
    _per_profile,
    _split_floats,
    erfcx_form,
)
from symgdp.numerics.balls import SERIES_CAP_LOCK
from symgdp.symbolic.budget import Bounded, start_bounded

__all__ = ["prefetch_series"]

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
        job: Bounded | Literal[False] | None = _SERIES_JOBS.pop(key, False)
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


_SERIES_LOCK = SERIES_CAP_LOCK


def _series_point(fn: Any, tag: str, x: float, n: int, pvals: tuple[arb, ...],
                  cache: dict) -> list[arb]:
    """``_series_at`` at the point ``x`` (exact), kept in ``cache`` under ``tag``, the
    parameters and the working precision."""
    key = ("point", tag, x, n, tuple((v.mid(), v.rad()) for v in pvals), ctx.prec)
    v = cache.get(key)
    if v is None:
        v = cache[key] = _series_at(fn, arb(x), n, pvals, cache)
    return v


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
    assert out is not None  # pieces >= 1 sub-intervals
    return out
