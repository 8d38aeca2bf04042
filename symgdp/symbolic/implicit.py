r"""Implicit privacy profiles: :math:`\log\delta(\varepsilon)` as the root of a trade-off equation.

A trade-off equation :math:`\sigma = f(\varepsilon, \delta)` that SymPy cannot solve for
:math:`\delta` still defines the profile implicitly: with :math:`t = \log\delta` and the
residual :math:`h(\varepsilon, t) = \sigma - f(\varepsilon, e^t)`, the profile is
:math:`e^{t(\varepsilon)}` where :math:`t(\varepsilon) \le 0` solves
:math:`h(\varepsilon, t) = 0`.  :class:`LogDeltaRoot` is that :math:`t(\varepsilon)` as a
SymPy function: ``lambdify`` evaluates it by a bracketed root search (float64 vectorised,
or mpmath at the working precision), always returning the bracket end on the "enough
noise" side so that :math:`\delta` is never understated, and its derivative is the
implicit one, :math:`-h_\varepsilon / h_t`.

Which root: the search walks down :math:`t = -1, -4, -16, \dots` to the first point that
is not enough noise and bisects from there (0 where even :math:`\delta = 1` is not enough
noise, :math:`-T`, :math:`T = 10^{300}`, where :math:`\delta = e^{-T}` is).  In ball
arithmetic (:func:`log_delta_root_arb`, used by :mod:`symgdp.evaluation.interval`) that root is
*proved* on a whole ball :math:`E` of :math:`\varepsilon` (theory §11): the side
:math:`s` of the "enough noise" residual, :math:`s\,h < 0` from the search's starting grid
point up to :math:`a` and :math:`s\,h > 0` from :math:`b` up to 0 (stretches covered by
boxes on which either :math:`s\,h` itself or :math:`s\,h_t` has the needed sign), and
:math:`s\,h_t \ge 0` on :math:`E \times [a, b]`; then :math:`t(\varepsilon) \in [a, b]`
for every :math:`\varepsilon \in E`, narrowed by the interval Newton operator.  A second
root proved in the search's range refuses the equation (it does not determine
:math:`\delta`); what is not proved gives a NaN ball, never a guess.

Example:
    >>> import sympy
    >>> from symgdp.symbolic.implicit import LogDeltaRoot
    >>> e, t = sympy.symbols("e t", real=True)
    >>> x = sympy.Symbol("x", positive=True)
    >>> f = sympy.lambdify(x, LogDeltaRoot(x, sympy.Lambda((e, t), t + e**2)))
    >>> round(f(3.0), 9)   # t = -e**2
    -9.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import sympy
from flint import arb, ctx

from symgdp.errors import SymgdpError

__all__ = ["LogDeltaRoot", "log_delta_root_arb"]

# Search range for t = log(delta): beyond t = -T_MAX the profile value is reported as
# e^{-T_MAX}, a valid upper bound (no trade-off equation reaches it in practice).
T_MAX = 1e300
_FLOAT_ITER = 80


def _root_side(h0: Any, hlo: Any) -> Any:
    """Sign with which the residual approaches t = 0 (delta = 1): the 'enough noise' side."""
    return np.sign(h0 - hlo)


def _log_delta_root_float(x: Any, h: Any) -> np.ndarray:
    r"""Vectorised :math:`t(\varepsilon)` with :math:`h(\varepsilon, t) = 0`, :math:`t \le 0`.

    The residual ``h`` is assumed monotone in :math:`t` (a trade-off equation: the noise
    needed falls as :math:`\delta` grows).  Where even :math:`\delta = 1` does not satisfy
    the equation, or ``h`` is undefined, the answer is 0 (:math:`\delta = 1`, always a
    valid bound); where every :math:`\delta \ge e^{-T}` does, it is :math:`-T`.
    """
    xs = np.atleast_1d(np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        def H(t: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.asarray(h(xs, t), dtype=np.float64), xs.shape)

        h0 = H(np.zeros_like(xs))
        hfar = H(np.full_like(xs, -T_MAX))
        side = _root_side(h0, hfar)
        out = np.zeros_like(xs)
        ok = np.isfinite(h0) & (side != 0) & ~np.isnan(hfar)
        # enough noise already at delta = e^{-T}
        far = ok & (hfar * side >= 0)
        out[far] = -T_MAX
        todo = ok & ~far & (h0 * side > 0)
        if np.any(todo):
            hi = np.zeros_like(xs)
            lo = np.full_like(xs, -1.0)
            # expand the bracket geometrically: -1, -4, -16, ... -T
            for _ in range(520):
                need = todo & (H(lo) * side > 0) & (lo > -T_MAX)
                if not np.any(need):
                    break
                hi = np.where(need, lo, hi)
                lo = np.where(need, np.maximum(4.0 * lo, -T_MAX), lo)
            for _ in range(_FLOAT_ITER):
                mid = 0.5 * (lo + hi)
                good = H(mid) * side > 0
                hi = np.where(todo & good, mid, hi)
                lo = np.where(todo & ~good, mid, lo)
            # hi always satisfies the equation side: an upper bound on log delta
            out[todo] = hi[todo]
    return out


def _log_delta_root_mp(x: Any, h: Any) -> mpmath.mpf:
    """The mpmath counterpart of :func:`_log_delta_root_float` at the working precision."""
    x = mpmath.mpf(x)
    try:
        h0 = h(x, mpmath.mpf(0))
        hfar = h(x, mpmath.mpf(-T_MAX))
    except (ZeroDivisionError, ValueError):
        return mpmath.mpf(0)
    if isinstance(h0, mpmath.mpc) or isinstance(hfar, mpmath.mpc) or not mpmath.isfinite(h0):
        return mpmath.mpf(0)
    side = mpmath.sign(h0 - hfar)
    if side == 0:
        return mpmath.mpf(0)
    if hfar * side >= 0:
        return mpmath.mpf(-T_MAX)
    if h0 * side <= 0:
        return mpmath.mpf(0)
    hi, lo = mpmath.mpf(0), mpmath.mpf(-1)
    while h(x, lo) * side > 0 and lo > -T_MAX:
        hi, lo = lo, max(4 * lo, mpmath.mpf(-T_MAX))
    # Illinois (safeguarded regula falsi): invariant side*h(lo) <= 0 < side*h(hi), so
    # hi -- the end returned -- always satisfies the equation's "enough noise" side.
    f_lo, f_hi = side * h(x, lo), side * h(x, hi)
    last = 0
    width = hi - lo
    for i in range(4 * mpmath.mp.prec + 100):
        if i % 3 == 2:
            # a bisection step every third iteration unless the bracket halved meanwhile
            if hi - lo > width / 2:
                m = (lo + hi) / 2
            else:
                m = None
            width = hi - lo
        else:
            m = None
        if m is None:
            den = f_hi - f_lo
            m = hi - f_hi * (hi - lo) / den if den != 0 else (lo + hi) / 2
            if not lo < m < hi:
                m = (lo + hi) / 2
        if m in (lo, hi):
            break
        fm = side * h(x, m)
        if fm > 0:
            hi, f_hi = m, fm
            if last == 1:
                f_lo /= 2
            last = 1
        else:
            lo, f_lo = m, fm
            if last == -1:
                f_hi /= 2
            last = -1
        if hi - lo <= mpmath.eps * 4 * abs(hi):
            break
    return hi


def _log_delta_root_impl(x: Any, h: Any) -> Any:
    if isinstance(x, (mpmath.mpf, mpmath.mpc)):
        return _log_delta_root_mp(x.real, h)
    scalar = np.ndim(x) == 0
    out = _log_delta_root_float(x, h)
    return float(out[0]) if scalar else out.reshape(np.shape(x))


# -- ball arithmetic -----------------------------------------------------------------------
# h(e, t) and h_t(e, t) arrive as Python functions of two balls (compiled by
# symgdp.evaluation.interval from the Lambda of the root).  Every claim below is decided on whole
# balls; a claim that is not decided makes the answer NaN (or, for the parts of a ball
# where a boundary convention applies, the hull with the convention's value).

_BallFn = Callable[[arb, arb], arb]
# box evaluations per stretch before giving up on a sign proof (plus one per bit)
_SWEEP_BUDGET = 100
# relative padding of a bracket end beyond the approximate root, in units of 2**-prec
_PAD_BITS = 10
_ROOT_CACHE: dict[tuple[Any, ...], tuple[str, arb, bool]] = {}
_APPROX_CACHE: dict[tuple[Any, ...], arb] = {}


def _call(f: _BallFn, e: arb, t: arb) -> arb:
    try:
        v = f(e, t)
    except (ArithmeticError, ValueError, TypeError):
        return arb("nan")
    return v if isinstance(v, arb) else arb(v)


def _box(lo: arb, hi: arb) -> arb:
    """A ball containing [lo, hi] (exact end points, lo <= hi <= 0) whose upper end is
    exactly ``hi``.  Midpoint-radius balls blur both ends by about 2^-30 of the radius
    (the radius has a 30-bit mantissa): for [-1e300, -1] that would reach far above 0.
    Here the blur goes below ``lo`` only, into the stretch being proved anyway: hi minus
    a ball [0, w'] (w' >= hi - lo, exact lower end 0), subtracted exactly."""
    y = arb(0).union(hi - lo).nonnegative_part()
    (m1, e1), (m2, e2) = hi.mid().man_exp(), y.mid().man_exp()
    top = max(e1 + int(m1).bit_length(), e2 + int(m2).bit_length())
    bits = max(int(top - min(e1, e2)) + 4, ctx.prec)
    with ctx.workprec(bits):
        box = hi - y
    if not (box.upper() == hi and box.lower() <= lo):
        return lo.union(hi)  # never expected; a blurred box still contains [lo, hi]
    return box


def _exact(x: arb) -> arb:
    return arb(x.mid())


def _approx_root_low(e: arb, h: _BallFn, ht: _BallFn, s: int) -> arb | None:
    """An approximation (not proved) of the root at the exact point ``e``: bracket
    expansion as in the float search, then Newton steps safeguarded by bisection.  0 where
    even delta = 1 is not enough noise at ``e``, -T where delta = e^-T is; None where the
    residual is undefined."""
    def side(t: arb) -> int | None:
        v = _call(h, e, t)
        if not v.is_finite():
            return None
        m = arb(v.mid()) * s
        return 1 if m > 0 else -1

    t_far = arb(-T_MAX)
    at0 = side(arb(0))
    if at0 is None:
        return None
    if at0 < 0:
        return arb(0)
    hi, lo = arb(0), arb(-1)
    while True:
        sl = side(lo)
        if sl is None:
            return None
        if sl < 0:
            break
        if lo == t_far:
            return t_far
        hi, lo = lo, (4 * lo).max(t_far)
    prec = ctx.prec
    t, width, steps = hi, hi - lo, 0
    for _ in range(2 * prec + 40):
        g, v = _call(ht, e, t), _call(h, e, t)
        if v.contains(0) and v.is_finite():
            return t  # the residual vanishes at t within rounding
        cand = None
        steps += 1
        if steps > 2 and hi - lo > width / 2:
            pass  # two steps without halving the bracket: bisect
        elif g.is_finite() and v.is_finite() and not g.mid().is_zero():
            cand = _exact(t - arb(v.mid()) / arb(g.mid()))
            if not (lo < cand < hi):
                cand = None
        if cand is None:
            cand = _exact((lo + hi) / 2)
        if hi - lo <= width / 2:
            width, steps = hi - lo, 0
        if cand == lo or cand == hi:
            break
        sc = side(cand)
        if sc is None:
            return None
        if sc > 0:
            hi = cand
        else:
            lo = cand
        t = cand
        if hi - lo <= abs(hi) * arb(2) ** (4 - prec):
            break
    return t


def _approx_root(e: arb, h: _BallFn, ht: _BallFn, s: int, memo: Any = None) -> arb | None:
    """:func:`_approx_root_low` at 64 bits, then Newton steps at the working precision
    (each doubles the digits of a simple root; a degenerate one stays rough and its
    bracket is then padded more, or not proved).  The 64-bit value is remembered per
    residual (``memo``) and point: the same points come back at higher precisions."""
    prec = ctx.prec
    key = (memo, _key_part(e), s) if memo is not None else None
    t = _APPROX_CACHE.get(key) if key is not None else None
    if t is None:
        with ctx.workprec(min(prec, 64)):
            t = _approx_root_low(e, h, ht, s)
        if key is not None and t is not None:
            if len(_APPROX_CACHE) > 20_000:
                _APPROX_CACHE.clear()
            _APPROX_CACHE[key] = t
    if t is None or prec <= 64 or t.is_zero() or t == arb(-T_MAX):
        return t
    for _ in range(int(math.log2(prec / 64)) + 4):
        v, g = _call(h, e, t), _call(ht, e, t)
        if not (v.is_finite() and g.is_finite()) or g.mid().is_zero():
            break
        nt = _exact(t - arb(v.mid()) / arb(g.mid()))
        if not nt < 0:
            break
        done = abs(nt - t) <= abs(t) * arb(2) ** (4 - prec)
        t = nt
        if done:
            break
    return t


def _sweep(e: arb, h: _BallFn, ht: _BallFn, s: int, lo: arb, hi: arb, want: int,
           start: arb) -> bool | None:
    r"""Prove want * s * h(e, t) > 0 for every t in [lo, hi] (and every e in the ball),
    given that it holds at the end the stretch is entered from (hi for want = -1, lo for
    want = 1).

    Boxes are laid from that end on, each settled by the sign of s h on it or by
    s h_t >= 0 on it (then s h is monotone there and its extreme is at the end already
    proved), so every box is entered from a settled one.  The first box is the whole
    stretch; then boxes start at width ``start`` (the bracket's) and adapt: 4 times wider
    after a success, 4 times narrower after a failure -- near a root where h_t is tiny (a
    near-double root) boxes must be narrow, far from it wide.
    A ball's ends are blurred by about 2^-30 of its radius: boxes keep their end toward
    0 exact (see :func:`_box`) and span at most a factor 2^20 in |t| going down.

    None (disproved) where a box end shows the wrong sign on the whole ball: the search's
    range then holds another root for every eps of the ball."""
    budget = _SWEEP_BUDGET + ctx.prec
    floor = (abs(lo) + abs(hi)) * arb(2) ** (-ctx.prec)

    def one(a: arb, b: arb) -> bool:
        box = _box(a, b)
        v = _call(h, e, box) * (s * want)
        if v.is_finite() and v > 0:
            return True
        g = _call(ht, e, box) * s
        return bool(g.is_finite() and g >= 0)

    if hi - lo <= arb(2) ** 20 * (abs(lo).min(abs(hi)) + start) and one(lo, hi):
        return True
    w, pos = start, (hi if want < 0 else lo)
    while budget > 0:
        budget -= 1
        if want < 0:
            a, b = _exact((pos - w.min(abs(pos) * arb(2) ** 20)).max(lo)), pos
        else:
            a, b = pos, _exact((pos + w).min(hi))
        if not a < b:
            return False
        if one(a, b):
            pos = a if want < 0 else b
            if pos == (lo if want < 0 else hi):
                return True
            w = w * 4
        else:
            far_end = a if want < 0 else b
            if _call(h, e, far_end) * (s * want) < 0:
                return None  # the wrong sign at a point of the stretch: another root
            w = w / 4
            if w < floor:
                return False
    return False


def _newton(e: arb, h: _BallFn, ht: _BallFn, s: int, a: arb, b: arb,
            strict: bool) -> tuple[arb, arb] | None:
    """Narrow the bracket [a, b] (root proved inside, s h_t >= 0 on it): interval Newton
    steps while s h_t > 0 on the bracket, bisection by the sign at the midpoint
    otherwise; None if the two ever contradict each other."""
    for _ in range(ctx.prec + 10):
        w = b - a
        m = _exact((a + b) / 2)
        if not a < m < b:
            break
        hm = _call(h, e, m)
        if not hm.is_finite():
            break
        na, nb = a, b
        if strict:
            n = m - hm / _call(ht, e, a.union(b))
            if n.is_finite():
                na, nb = na.max(arb(n.lower())), nb.min(arb(n.upper()))
        if nb - na > w / 2:
            sm = hm * s
            if sm > 0:
                nb = nb.min(m)
            elif sm < 0:
                na = na.max(m)
        if na > nb:
            return None
        if not nb - na < w * 0.75:
            break
        a, b = na, nb
    return a, b


def _grid_below(a: arb) -> arb:
    """The largest point of the search grid -1, -4, -16, ..., -T at or below ``a``.

    Every evaluation (float, mpmath, ball) defines the root as the one the bracketed
    search finds: it walks down this grid to the first point that is not enough noise and
    bisects from there.  With s h < 0 proved from that point up to the bracket and s h > 0
    from the bracket to 0, that root is the one in the bracket for every eps of the ball;
    what the residual does further down is never looked at (by any of the three)."""
    if a >= -1:
        return arb(-1)
    k = max(int(math.ceil(math.log(-float(a.mid()), 4))) - 1, 0)
    c = arb(4) ** k
    while -c > a:
        c = c * 4
    return (-c).max(arb(-T_MAX))


def _slope_sign(e: arb, ht: _BallFn, s: int, a: arb, b: arb, depth: int = 4) -> int | None:
    """1 if s h_t > 0, 0 if s h_t >= 0 is proved on e x [a, b] (halving the bracket where
    the ball of one piece is too wide), else None."""
    g = _call(ht, e, a.union(b)) * s
    if g.is_finite() and g > 0:
        return 1
    m = _exact((a + b) / 2)
    if depth > 0 and a < m < b:
        left = _slope_sign(e, ht, s, a, m, depth - 1)
        if left is not None:
            right = _slope_sign(e, ht, s, m, b, depth - 1)
            if right is not None:
                return min(left, right)
    return 0 if g.is_finite() and g >= 0 else None


def _root_ball(e: arb, h: _BallFn, ht: _BallFn, memo: Any = None) -> tuple[str, arb, bool]:
    """(kind, enclosure, strict): kind "interior" (the root proved in (-T, 0) on all of e),
    "zero"/"far" (a boundary convention on all of e), "mixed" (hull over parts with
    different cases), "refused" (a second root in the search's range, proved) or "nan"
    (undecided); strict = s h_t > 0 proved on the enclosure."""
    nan = ("nan", arb("nan"), False)
    refused = ("refused", arb("nan"), False)
    zero, far = arb(0), arb(-T_MAX)
    h0, hf = _call(h, e, zero), _call(h, e, far)
    if not (h0.is_finite() and hf.is_finite()):
        return nan
    d = h0 - hf
    s = 1 if d > 0 else -1 if d < 0 else 0
    if s == 0:
        return nan  # the float search's side is not decided on the whole ball
    sh0, shf = h0 * s, hf * s
    if shf >= 0:
        return "far", far, False
    if sh0 <= 0:
        return "zero", zero, False
    low_known, high_known = bool(shf < 0), bool(sh0 > 0)
    # approximate roots at the ball's end points and midpoint
    pts = [_exact(e)] if e.rad() == 0 else [arb(e.lower()), _exact(e), arb(e.upper())]
    if memo is not None and any(
            _ROOT_CACHE.get((*memo, _key_part(p)), ("",))[0] == "refused" for p in pts):
        return refused  # a point of the ball has a second root (proved before)
    roots = []
    for p in pts:
        r = _approx_root(p, h, ht, s, memo)
        if r is None:
            return nan
        roots.append(r)
    t_lo, t_hi = min(roots, key=float), max(roots, key=float)
    scale = abs(t_lo).max(abs(t_hi)).max(arb(2) ** -1000)
    pad0 = scale * arb(2) ** (_PAD_BITS - ctx.prec) + (t_hi - t_lo) / 16
    a = b = None
    # pads growing by 4: a wide ball of eps needs the ends well outside the roots' range
    # (its h is overestimated), a point only a few ulps
    if low_known:
        for k in range(40):
            c = _exact((t_lo - pad0 * arb(4) ** k).max(far))
            if c == far or (_call(h, e, c) * s < 0):
                a = c
                break
    if high_known:
        for k in range(40):
            c = _exact((t_hi + pad0 * arb(4) ** k).min(zero))
            if c.is_zero() or (_call(h, e, c) * s > 0):
                b = c
                break
    # the stretches beyond the bracket hold no root: up to 0, and down to the grid point
    # -4^k where the search's bracket starts (see _grid_below)
    start = (b - a) if a is not None and b is not None else pad0
    for end in ("a", "b"):
        edge = a if end == "a" else b
        if edge is None or edge == far or edge.is_zero():
            continue
        ok = (_sweep(e, h, ht, s, _grid_below(edge), edge, -1, start) if end == "a"
              else _sweep(e, h, ht, s, edge, zero, 1, start))
        if ok is None:
            return refused
        if not ok:
            a, b = (None, b) if end == "a" else (a, None)
    if not (low_known and high_known):
        # a part of the ball is at a boundary convention (delta = 1 or the -T floor)
        lo_end = a if a is not None else far
        hi_end = b if b is not None else zero
        return "mixed", lo_end.union(hi_end), False
    if a is None or b is None:
        return nan
    sign = _slope_sign(e, ht, s, a, b)
    if sign is None:
        return nan  # no proof that the root is unique in the bracket
    strict = sign > 0
    ab = _newton(e, h, ht, s, a, b, strict)
    if ab is None:
        return nan
    return "interior", ab[0].union(ab[1]), strict


def _key_part(v: Any) -> Any:
    if isinstance(v, arb):
        return (v.mid().man_exp(), v.rad().man_exp()) if v.is_finite() else str(v)
    if isinstance(v, (int, float, str)):
        return v
    raise TypeError


def log_delta_root_arb(eps: Any, h: _BallFn, ht: _BallFn, key: str = "",
                       interior: bool = False, undefined_at_zero: bool = False) -> arb:
    r"""Ball enclosing :math:`t(\varepsilon) = \log\delta(\varepsilon)` of a
    :class:`LogDeltaRoot` for every :math:`\varepsilon` in the ball ``eps``, at the working
    precision in force.

    ``h`` and ``h_t`` are the residual and its :math:`t`-derivative as functions of two
    balls.  The boundary conventions of the float search hold where they are proved on
    the whole ball (exact 0 where even :math:`\delta = 1` is not enough noise, exact
    :math:`-T` where :math:`\delta = e^{-T}` is); a ball straddling such a boundary gets
    the hull.  With ``interior`` (the value inside the implicit derivative, valid only
    where the root is interior and :math:`h_t \ne 0`) anything else is NaN.  ``key``
    identifies the residual for a cache of results.  ``undefined_at_zero`` says that
    :math:`h(0, 0)` is undefined (shown in exact arithmetic): at the point
    :math:`\varepsilon = 0` the float convention then gives :math:`\delta = 1`.

    Raises:
        SymgdpError: a second root in the search's range is proved for every
            :math:`\varepsilon` of the ball (the equation does not determine
            :math:`\delta`; float and mpmath would return whichever root their bisection
            meets).

    Example:
        >>> from flint import arb, ctx
        >>> h = lambda e, t: t + e * e                    # t = -e**2
        >>> ht = lambda e, t: arb(1)
        >>> with ctx.workprec(64):
        ...     v = log_delta_root_arb(arb(3), h, ht)
        >>> v.contains(-9) and v.rad() < 1e-15
        True
    """
    e = eps if isinstance(eps, arb) else arb(eps)
    if not e.is_finite():
        return arb("nan")
    if undefined_at_zero and e.is_exact() and e.is_zero():
        return arb("nan") if interior else arb(0)
    ck = None
    if key:
        try:
            cells = tuple(_key_part(c.cell_contents) for c in (h.__closure__ or ()))
            ck = (key, cells, _key_part(e), ctx.prec)
        except (TypeError, ValueError):
            ck = None
    res = None
    if ck is not None:
        # a disproof (a second root) holds at every precision
        res = _ROOT_CACHE.get(ck) or _ROOT_CACHE.get(ck[:3])
    if res is None:
        res = _root_ball(e, h, ht, ck[:2] if ck is not None else None)
        if ck is not None:
            if len(_ROOT_CACHE) > 20_000:
                _ROOT_CACHE.clear()
            _ROOT_CACHE[ck[:3] if res[0] == "refused" else ck] = res
    kind, v, strict = res
    if kind == "refused":
        # not a ValueError (as ProfileError is): evaluation code turns those into NaN
        # balls and searches on; this is a definite answer about the equation
        raise SymgdpError(
            f"the trade-off equation has more than one root delta <= 1 at eps in "
            f"[{e.lower().str(10, radius=False)}, {e.upper().str(10, radius=False)}] "
            "(proved in ball arithmetic): it does not determine delta there; an implicit "
            "profile needs an equation monotone in delta")
    if interior and not (kind == "interior" and strict):
        return arb("nan")
    return +v


def _undefined_at_origin(h: sympy.Expr, e: sympy.Symbol, t: sympy.Symbol) -> bool:
    """h(0, 0) is undefined both in exact arithmetic (SymPy gives zoo, nan or an
    infinity) and in float64 (as the float search computes it): then every evaluation's
    convention gives delta = 1 at eps = 0, which a ball cannot show (NaN proves nothing).
    Where the two readings differ (exp(-1/eps) is nan exactly, 0 in float64) or h has
    parameters, nothing is claimed."""
    if h.free_symbols - {e, t}:
        return False
    exact = h.xreplace({e: sympy.S.Zero, t: sympy.S.Zero})
    if exact not in (sympy.S.ComplexInfinity, sympy.S.NaN, sympy.S.Infinity,
                     sympy.S.NegativeInfinity):
        return False
    try:
        with np.errstate(all="ignore"):
            f = sympy.lambdify((e, t), h, modules="numpy")
            v = np.asarray(f(np.zeros(1), np.zeros(1)), dtype=np.float64)
    except (ArithmeticError, ValueError, TypeError):
        return False
    return not bool(np.all(np.isfinite(v)))


class _Residual(sympy.Lambda):
    """The Lambda of a :class:`LogDeltaRoot`, opaque to common-subexpression elimination
    (``is_Atom``): ``sympy.cse`` would otherwise hoist a repeated piece of the body that
    holds the bound variables out of the Lambda, and the compiled code would refer to
    them where they are not defined.  Substitution (``xreplace``, ``subs``) still reaches
    the parameters inside."""

    is_Atom = True


def _lambda_names(root: sympy.Basic) -> tuple[sympy.Symbol, sympy.Symbol]:
    """Names for the residual's (eps, t) in printed code that no symbol of the profile
    has: a parameter called ``_root_e`` would otherwise be shadowed by eps inside the
    lambda, a silently wrong residual."""
    taken = {str(s) for s in root.free_symbols}
    taken |= {str(s) for s in root.args[1].expr.free_symbols}
    suffix = ""
    while f"_root_e{suffix}" in taken or f"_root_t{suffix}" in taken:
        suffix = f"_{len(suffix) + 1}"
    return sympy.Symbol(f"_root_e{suffix}"), sympy.Symbol(f"_root_t{suffix}")


class LogDeltaRoot(sympy.Function):
    r""":math:`\log\delta(\varepsilon)` defined implicitly by a trade-off equation.

    ``LogDeltaRoot(eps, Lambda((e, t), h))`` is the :math:`t \le 0` with
    :math:`h(\varepsilon, t) = 0`, where :math:`h` is the residual of
    :math:`\sigma = f(\varepsilon, \delta)` with :math:`\delta = e^t`.  It is what
    :meth:`~symgdp.profile.Profile.from_tradeoff` builds when SymPy cannot solve for :math:`\delta`.
    ``lambdify`` evaluates it by a bracketed bisection (float64, vectorised, or mpmath at
    the working precision; the bracket end on the "enough noise" side is returned, so the
    value never understates :math:`\delta`), and :meth:`fdiff` gives the implicit
    derivative :math:`-h_\varepsilon/h_t`, so refinement works on it too.  The ball
    printer of :mod:`symgdp.evaluation.interval` compiles it to :func:`log_delta_root_arb`.

    A third argument 1 marks the root inside that derivative: there it is evaluated in
    balls only where the root is interior and :math:`h_t \ne 0` is proved (the formula
    does not hold at the boundary conventions); float and mpmath ignore the mark.
    """

    is_extended_real = True

    def __new__(cls, *args: Any, **options: Any) -> Any:
        if len(args) > 1 and type(args[1]) is sympy.Lambda:
            args = (args[0], _Residual(args[1].variables, args[1].expr), *args[2:])
        return super().__new__(cls, *args, **options)

    def _eval_is_extended_nonpositive(self) -> bool:
        return True

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        # the root inside the derivative is marked (third argument 1): the formula holds
        # only where the root is interior and h_t != 0, so its ball evaluation is NaN
        # wherever that is not proved (float and mpmath evaluations ignore the mark)
        if argindex != 1:
            raise sympy.ArgumentIndexError(self, argindex)
        lam = self.args[1]
        e, t = lam.variables
        he, ht = sympy.diff(lam.expr, e), sympy.diff(lam.expr, t)
        inner = LogDeltaRoot(self.args[0], lam, sympy.Integer(1))
        return (-he / ht).xreplace({e: self.args[0], t: inner})

    def _arb_code(self, printer: Any, check: Callable[[sympy.Expr], None]) -> str:
        """Code for :func:`log_delta_root_arb` (``printer`` is the ball printer of
        :mod:`symgdp.evaluation.interval`, ``check`` raises for what it cannot evaluate): the
        residual and its t-derivative as lambdas of balls."""
        lam = self.args[1]
        e, t = lam.variables
        ht = sympy.diff(lam.expr, t)
        check(ht)  # the residual itself is checked with the whole expression
        if ht.has(sympy.Subs):
            raise NotImplementedError(f"the t-derivative {ht} of the residual is not in "
                                      "closed form")
        E, T = _lambda_names(self)
        body = printer._print(lam.expr.xreplace({e: E, t: T}))
        dbody = printer._print(ht.xreplace({e: E, t: T}))
        interior = len(self.args) > 2 and bool(self.args[2])
        undefined0 = _undefined_at_origin(lam.expr, e, t)
        return (f"LogDeltaRootBall({printer._print(self.args[0])}, "
                f"(lambda {E}, {T}: ({body})), "
                f"(lambda {E}, {T}: ({dbody})), "
                f"{sympy.srepr(lam)!r}, {interior}, {undefined0})")

    def _code(self, printer: Any) -> str:
        ball = getattr(printer, "_print_LogDeltaRoot", None)
        if ball is not None:
            return ball(self)
        lam = self.args[1]
        e, t = lam.variables
        E, T = _lambda_names(self)
        body = printer._print(lam.expr.xreplace({e: E, t: T}))
        return (f"LogDeltaRoot({printer._print(self.args[0])}, "
                f"(lambda {E}, {T}: ({body})))")

    _numpycode = _scipycode = _mpmathcode = _pythoncode = _lambdacode = _code

    def _latex(self, printer: Any) -> str:
        lam = self.args[1]
        e, t = lam.variables
        T = sympy.Symbol("t", real=True)
        body = printer._print(lam.expr.xreplace({e: self.args[0], t: T}))
        return rf"\operatorname{{root}}_{{t \le 0}}\left\{{{body} = 0\right\}}"


LogDeltaRoot._imp_ = staticmethod(_log_delta_root_impl)

