r"""Certified composition of privacy loss distributions in exact integer arithmetic.

**Certified composition** (:class:`IntPMF`, :func:`int_compose`,
:func:`int_self_compose`): the route without an estimate, used by
:func:`symgdp.training.dpsgd.certified_pld`.  A PMF is held exactly as non-negative integers in
units of :math:`2^{-80}` (a ``flint.fmpz_poly``, coefficient :math:`i` the mass at loss
:math:`(\mathrm{lower} + i)\Delta`, plus the mass at :math:`+\infty`).  Composition
is the exact integer product of the polynomials, each coefficient then rounded *up* to
the scale (``ceil``); the tails are cut where their exact mass is below ``tail``, the
left tail's mass moved onto the first kept loss and the right tail's to
:math:`+\infty`.  Every step increases the measure entrywise or moves mass to larger
losses, and :math:`\delta(\varepsilon) = \sum_l \nu(l)(1 - e^{\varepsilon - l})_+`
is non-decreasing under both (it integrates a non-negative, non-decreasing function),
and convolution preserves this order, so the composed measure's profile bounds the
exact composition of its inputs from above; the theorem in :mod:`symgdp.training.dpsgd` starts
the chain from the true mechanism.  Where to cut is chosen from a float64 approximation
(FFT of exponentially tilted copies, which resolves the right tail) and checked on the
exact tail sums: the choice affects only speed and the floor, never validity.  The
optimistic variant (``up=False``) rounds down, drops the left tail and moves the right
tail onto the last kept loss, and gives lower bounds (:meth:`IntPMF.lower_delta`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.numerics.recursions import geometric_tail
from symgdp.pld.curves import _U, Curve

__all__ = ["IntPMF", "int_pmf", "int_compose", "int_self_compose", "SCALE_BITS",
           "MAX_SUPPORT", "MAX_COUNT", "check_count", "support_estimate", "check_support",
           "check_product", "connect_cells"]


# -- certified composition in integer arithmetic -------------------------------------------
#: scale of the integer PMFs: probabilities are counted in units of 2^-SCALE_BITS
SCALE_BITS = 80
# entries of a float64 FFT convolution below this fraction of its largest are noise
_NOISE = 1e-14


#: the largest composed support (grid points) an integer composition may reach: a
#: composed PMF of N points costs about 64 N bytes per exact polynomial (a few are alive
#: at once) and its products grow like N log N
MAX_SUPPORT = 10_000_000
#: the largest number of repetitions of one step (exact in float64, which the
#: bookkeeping of tails and floors uses)
MAX_COUNT = 2**53
# standard deviations each side of the mean that the tail cuts (mass 1e-19) keep
_Z = 10.0


def check_count(count: int, what: str = "times") -> int:
    """``count`` itself when at most :data:`MAX_COUNT`; else a :class:`DomainError`
    naming the value and the limit."""
    if count > MAX_COUNT:
        raise DomainError(f"{what}={_show(count)} is beyond the {MAX_COUNT} (2^53) "
                          "repetitions that a certified composition can account")
    return count


def _show(n: int) -> str:
    """An integer for a message: in full up to 20 digits, else as d.dd...e+k."""
    t = str(n)
    return t if len(t) <= 20 else f"{t[0]}.{t[1:4]}e+{len(t) - 1}"


def check_times(times: Any) -> int:
    if isinstance(times, bool) or not isinstance(times, (int, np.integer)):
        if not (isinstance(times, (float, np.floating)) and float(times).is_integer()):
            raise DomainError(f"times must be a positive integer, got {times!r}")
    if int(times) < 1:
        raise DomainError(f"times must be a positive integer, got {times!r}")
    return check_count(int(times))


def support_estimate(parts: Any) -> float:
    r"""About how many grid points the composition of ``parts`` (pairs ``(IntPMF,
    count)``) keeps after its tail cuts: the exact support :math:`\sum_i k_i(n_i - 1)
    + 1`, or, when smaller, the one-step widths plus :math:`2\cdot 10` standard
    deviations of the composed loss (central limit; the cuts drop mass below
    :math:`10^{-19}`, about 9 standard deviations out).  Only an estimate, used to refuse
    work that would exhaust memory or time before it starts (``inf`` when too large to
    say)."""
    full, width, var = 1.0, 0.0, 0.0
    for p, k in parts:
        kf = float(k) if int(k) <= MAX_COUNT else math.inf
        a = np.asarray(p.approx, dtype=np.float64)
        n = a.size
        full += kf * max(n - 1, 0)
        width += n
        tot = float(a.sum())
        if n > 1 and tot > 0:
            i = np.arange(n, dtype=np.float64)
            m = float((a * i).sum()) / tot
            var += kf * float((a * (i - m) ** 2).sum()) / tot
    return min(full, width + 2.0 * _Z * math.sqrt(var))


def check_support(parts: Any, what: str, hint: str = "use a coarser discretization "
                  "or fewer steps") -> float:
    """:func:`support_estimate`, or a :class:`DomainError` naming ``what``, the estimate
    and :data:`MAX_SUPPORT` when the composition would be larger."""
    est = support_estimate(parts)
    if est > MAX_SUPPORT:
        size = "more than 10^300" if math.isinf(est) else f"about {est:.3g}"
        raise DomainError(f"{what} would need {size} grid points, beyond the limit of "
                          f"{MAX_SUPPORT:,} for a certified composition: {hint}")
    return est


class IntPMF:
    r"""A non-negative measure on the loss grid :math:`\{(\mathrm{lower} + i)\Delta\}`
    and :math:`+\infty`, held exactly as integers in units of :math:`2^{-b}`.

    ``poly`` is a ``flint.fmpz_poly`` whose coefficient :math:`i` is the mass at loss
    :math:`(\mathrm{lower} + i)\Delta` and ``inf`` the mass at :math:`+\infty`;
    ``approx`` is a float64 copy used only to choose where to truncate.  Built by
    :func:`int_pmf`; composed by :func:`int_compose` and :func:`int_self_compose`, which
    only ever round up and move mass to larger losses (see the module notes, "Certified
    composition").
    """

    __slots__ = ("disc", "bits", "lower", "poly", "inf", "_approx", "up", "_low", "_fl",
                 "_n", "_tot")

    def __init__(self, disc: float, bits: int, lower: int, poly: Any, inf: int,
                 approx: np.ndarray | None, up: bool = True, size: int | None = None,
                 total: int | None = None) -> None:
        self.disc, self.bits, self.lower = float(disc), int(bits), int(lower)
        self.poly, self.inf, self._approx = poly, int(inf), approx
        self.up = bool(up)  # True: entries are upper bounds (pessimistic); else lower
        self._low: Any = None  # the arrays of lower_delta, built on first use
        self._fl: Any = None  # the masses as float64 (nearest), built on first use
        if size is None:
            if approx is None:
                raise DomainError("an IntPMF needs its size or its float approximation")
            size = approx.size
        self._n = int(size)  # grid points (the polynomial drops trailing zeros)
        self._tot = None if total is None else int(total)  # exact finite mass, if known

    @property
    def size(self) -> int:
        return self._n

    @property
    def approx(self) -> np.ndarray:
        """The masses as float64 (a compositions' measure builds them on first use)."""
        if self._approx is None:
            self._approx = self._floats()
        return self._approx

    def total(self) -> int:
        """The finite mass, exactly (units of 2^-bits)."""
        if self._tot is None:
            self._tot = int(self.poly(1)) if self.size else 0
        return self._tot

    def upper_probs(self) -> np.ndarray:
        """Float64 upper bounds on the masses (each rounded up by two ulps)."""
        out = self._floats()
        return np.nextafter(np.nextafter(out, np.inf), np.inf) * (out > 0)

    def lower_probs(self) -> np.ndarray:
        """Float64 lower bounds on the masses (each rounded down by two ulps)."""
        out = self._floats()
        return np.maximum(np.nextafter(np.nextafter(out, 0.0), 0.0), 0.0)

    def _floats(self) -> np.ndarray:
        if self._fl is None:
            c = [int(v) for v in self.poly.coeffs()]
            out = np.zeros(self.size)
            out[:len(c)] = np.asarray(c, dtype=np.float64)
            self._fl = np.ldexp(out, -self.bits)
            self._fl.flags.writeable = False
        return self._fl

    def lower_delta(self, eps: Any) -> np.ndarray:
        r"""A lower bound on :math:`\sum_{L_i > \varepsilon} p_i(1 - e^{\varepsilon -
        L_i})` (+ the mass at infinity) at each ``eps``, for an optimistic measure
        (``up`` false): masses and losses rounded down, the float64 sums of non-negative
        terms deflated by their worst-case relative rounding.

        The sum is the piecewise-affine form of :mod:`symgdp.pld.curves` (values
        at the losses by a recursion of non-negative terms, then one affine step), built
        once per measure, so each point costs a binary search (vectorised).
        """
        if self.up:
            raise DomainError("lower_delta needs an optimistic (lower-bound) measure")
        x = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        if self._low is None:
            self._low = _lower_arrays(self)
        losses, g, values, inf, deflate, comp = self._low
        out = np.full(x.shape, inf)
        n = losses.size
        if n:
            idx = np.searchsorted(losses, x, side="right")  # first (rounded-down) loss > x
            ok = idx < n
            j = idx[ok]
            lin = g[j] * -np.expm1(x[ok] - losses[j])
            out[ok] = (values[j] + np.maximum(lin, 0.0)) * deflate
            # near delta = 1 the same sum in complements (module notes of _lower_arrays)
            one_m, prefix, g_up, inflate = comp
            c = np.full(x.shape, one_m + prefix[-1])
            c[ok] = one_m + prefix[j] + np.exp(x[ok] - losses[j]) * g_up[j]
            near = np.nextafter(1.0 - c * inflate, -np.inf)
            out = np.maximum(out, near)
        return np.maximum(out, 0.0)

    def upper_inf(self) -> float:
        if not self.inf:
            return 0.0
        v = math.ldexp(float(self.inf), -self.bits)  # float(int) rounds to nearest
        return float(np.nextafter(np.nextafter(v, np.inf), np.inf))

    def one_minus_total(self) -> float:
        """A float64 lower bound on 1 - (total mass with infinity), from the exact
        integers (negative when rounding up added mass)."""
        missing = (1 << self.bits) - self.total() - self.inf
        v = math.ldexp(float(missing), -self.bits)  # float(int) rounds to nearest
        return float(np.nextafter(np.nextafter(v, -np.inf), -np.inf))

    def curve(self) -> Curve:
        """The profile of this measure as an upper-bound curve (no rounding margin), with
        its complement form for values near 1 (:func:`~symgdp.pld.curves.
        _complement_arrays`)."""
        return Curve(self.lower, self.disc, self.upper_probs(), self.upper_inf(),
                      complement=(self.one_minus_total(), self.lower_probs()))


def _lower_arrays(pmf: IntPMF) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float,
                                        tuple[float, np.ndarray, np.ndarray, float]]:
    r"""``(losses, G, v, inf, deflate, complement)`` for :meth:`IntPMF.lower_delta`: on
    :math:`L_{j-1} \le \varepsilon < L_j`,
    :math:`\sum_{i \ge j} p_i(1 - e^{\varepsilon - L_i}) = v_j + G_j(1 - e^{\varepsilon -
    L_j})` with :math:`G_j = p_j + e^{-\Delta}G_{j+1}` and
    :math:`v_j = v_{j+1} + G_{j+1}(1 - e^{-\Delta})` (:math:`v` includes the mass at
    infinity).  Losses are rounded down (each term only shrinks, and a term whose true
    loss exceeds :math:`\varepsilon` but whose rounded one does not is dropped: it is
    non-negative); both recursions sum non-negative terms, so their relative rounding
    (with that of :math:`e^{-\Delta}` raised to at most the :math:`N`-th power) is below
    :math:`4(N + 4)u`, covered by the factor :math:`1 - 16(N + 4)u`.

    That factor moves a value near 1 by :math:`16(N + 4)u`, more than all of
    :math:`1 - \delta` for a composition with a large :math:`\mu`.  So the
    ``complement`` ``(1 - M, S, G', inflate)`` gives the same lower bound from
    :math:`1 - \delta(\varepsilon) = (1 - M) + S_j + e^{\varepsilon - L_j}G'_j` (exact for
    the measure: :math:`M` its total mass with infinity, :math:`S_j = \sum_{i < j} p_i`,
    :math:`G'` the recursion above), every term non-negative and taken from above
    (masses rounded up, losses rounded down, :math:`1 - M` from the exact integers rounded
    up), inflated by :math:`1 + 16(N + 4)u`: its relative rounding keeps
    :math:`1 - \delta` to about :math:`10^{-11}` of itself."""
    p = pmf.lower_probs()
    n = p.size
    losses = (pmf.lower + np.arange(n, dtype=np.float64)) * pmf.disc
    losses = np.nextafter(np.nextafter(losses, -np.inf), -np.inf)
    inf = max(math.ldexp(float(pmf.inf), -pmf.bits) * (1 - 4 * _U), 0.0)
    r = math.exp(-pmf.disc)
    g = geometric_tail(p, r)
    g = np.maximum(g, 0.0)
    inc = g[1:] * -math.expm1(-pmf.disc)
    values = inf + np.concatenate([np.cumsum(inc[::-1])[::-1], [0.0]]) if n else p
    deflate = 1.0 - 16.0 * (n + 4) * _U
    # the complement form: 1 - M exactly from the integers, rounded up
    missing = (1 << pmf.bits) - pmf.total() - pmf.inf
    one_m = max(math.ldexp(float(missing), -pmf.bits) * (1 + 4 * _U), 0.0)
    pu = pmf.upper_probs()
    prefix = np.concatenate([[0.0], np.cumsum(pu)])
    r_up = float(np.nextafter(r, np.inf))
    g_up = geometric_tail(pu, r_up)
    inflate = 1.0 + 16.0 * (n + 4) * _U
    return losses, g, values, inf, deflate, (one_m, prefix, np.maximum(g_up, 0.0), inflate)


def int_pmf(disc: float, lower: int, masses: Any, inf: int, bits: int = SCALE_BITS,
            up: bool = True) -> IntPMF:
    """An :class:`IntPMF` from non-negative integer masses (units of 2^-bits); ``up``
    says whether they are upper bounds (pessimistic) or lower bounds (optimistic)."""
    import flint

    ints = [int(m) for m in masses]
    if any(m < 0 for m in ints) or int(inf) < 0:
        raise DomainError("PMF masses must be non-negative")
    approx = np.ldexp(np.asarray(ints, dtype=np.float64), -int(bits))
    return IntPMF(disc, bits, lower, flint.fmpz_poly(ints), int(inf), approx, up)


def _shift(v: Any, bits: int, up: bool) -> Any:
    """ceil (``up``) or floor of v / 2^bits for an fmpz_poly or an integer with
    non-negative coefficients.  Only non-negative numerators are ever divided (the ceil
    adds 2^bits - 1 first), so the result does not depend on how the library rounds a
    negative quotient (python-flint's ``fmpz_poly // fmpz`` truncates some toward zero)."""
    import flint

    d = 1 << bits
    if isinstance(v, int):
        return (v + d - 1) >> bits if up else v >> bits
    if up:
        n = v.length()
        if n == 0:
            return v
        v = v + _constant_poly(d - 1, n)
    return v // flint.fmpz(d)


_CONSTANT: dict[int, Any] = {}


def _constant_poly(c: int, n: int) -> Any:
    """The polynomial with n coefficients all equal to c (cached: truncating a long one is
    much faster than building it from a Python list)."""
    import flint

    p = _CONSTANT.get(c)
    if p is None or p.length() < n:
        p = flint.fmpz_poly([c] * max(n, 2 * (p.length() if p is not None else 0)))
        _CONSTANT[c] = p
    return p.truncate(n)


def _truncate(poly: Any, approx: np.ndarray, lower: int, inf: int, tail: float,
              bits: int, up: bool = True) -> tuple[Any, np.ndarray, int, int]:
    """Cut the tails: on the left where the float approximation falls below ``tail``
    times its largest entry (that exact mass moves to the first kept loss), on the right
    where the exact remaining mass falls below ``tail`` (it moves to +infinity).  Both
    are moves to larger losses.  Where to cut only affects tightness and speed; the
    masses moved are exact.  ``poly`` is at scale 2^-2bits here.  For an optimistic
    measure (``up`` false) the left tail is dropped and the right tail moves to the last
    kept loss instead (moves to smaller losses, or removal)."""
    n = approx.size
    if tail <= 0 or n < 3:
        return poly, approx, lower, inf
    top = float(approx.max())
    vis = np.flatnonzero(approx > _NOISE * top)
    if vis.size == 0:
        return poly, approx, lower, inf
    cl = min(int(vis[0]), n - 2)
    if cl > 0:
        low = int(poly.truncate(cl)(1)) if up else 0
        poly = poly.right_shift(cl) + low  # + adds to the first kept coefficient
        approx = approx[cl:].copy()
        lower += cl
    # right: the cut is guessed from the (tilted, see _approx_conv) approximation and
    # checked on exact tail sums; galloping and bisection if the guess fails
    size = approx.size
    limit = tail * float(2 ** (2 * bits))

    def beyond(m: int) -> int:
        return int(poly.right_shift(m)(1)) if m < size else 0

    last = int(vis[-1]) - cl
    from_right = np.cumsum(approx[::-1])[::-1]
    over = np.flatnonzero(from_right > 0.5 * tail)
    good = max(int(over[-1]) + 1 if over.size else 0, last + 1)
    if good < size and beyond(good) > limit:
        step = 1
        bad = good
        while bad + step < size and beyond(bad + step) > limit:
            bad += step
            step *= 2
        good = min(bad + step, size)
        while good - bad > 1:
            mid = (good + bad) // 2
            if beyond(mid) <= limit:
                good = mid
            else:
                bad = mid
    if good < size:
        cut = beyond(good)
        poly = poly.truncate(good)
        approx = approx[:good]
        if up:
            inf += cut
        else:  # onto the last kept loss
            import flint

            poly = poly + flint.fmpz_poly([cut]).left_shift(good - 1)
    return poly, approx, lower, inf


def _fast_length(n: int) -> int:
    """The least 5-smooth integer (2^a 3^b 5^c) at least n: a length the FFT does fast."""
    best = 1 << max(n - 1, 0).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def _fft_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The full linear convolution of two real float64 arrays by numpy's real FFT (what
    ``scipy.signal.fftconvolve`` computes, without importing ``scipy.signal``: over a
    second cold); zero-padded to a 5-smooth length."""
    n = a.size + b.size - 1
    if a.size == 0 or b.size == 0:
        return np.zeros(max(n, 0))
    if min(a.size, b.size) <= 32:  # direct sums: short kernels, no FFT noise
        return np.convolve(a, b)
    m = _fast_length(n)
    return np.fft.irfft(np.fft.rfft(a, m) * np.fft.rfft(b, m), m)[:n]


def _approx_conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float64 approximation of a * b that resolves the right tail: the FFT convolution
    of exponentially tilted sequences (a_i e^{t i}, tilting commutes with convolution)
    at several tilts t, each entry untilted from the tilt that resolves it best (its
    value largest against that convolution's largest, i.e. its rounding noise).  Only
    where to truncate depends on it (:func:`_truncate`: the masses moved are exact), so
    its accuracy is a matter of tightness and speed, never of validity."""
    n = a.size + b.size - 1
    k = np.arange(n, dtype=np.float64)
    best = np.zeros(n)
    quality = np.full(n, -np.inf)
    for frac in (0.0, 1 / 32, 1 / 8, 1 / 2):
        t = 300.0 * frac / max(n, 1)
        c = np.maximum(_fft_convolve(a * np.exp(t * k[:a.size]), b * np.exp(t * k[:b.size])),
                       0.0)
        top = float(c.max(initial=0.0))
        if top <= 0:
            continue
        with np.errstate(divide="ignore"):
            qual = np.log(c / top)
        better = qual > quality
        quality[better] = qual[better]
        best[better] = c[better] * np.exp(-t * k[better])
    best[quality < math.log(_NOISE)] = 0.0
    return best


def check_product(n: int, m: int) -> None:
    """Refuse (:class:`DomainError`) a product of PMFs of ``n`` and ``m`` points whose
    result would exceed twice :data:`MAX_SUPPORT`: the guard inside a composition (the
    estimate of :func:`check_support` can be passed when rounding dust widens the
    support, e.g. a grid much coarser than one step's losses)."""
    if n + m - 1 > 2 * MAX_SUPPORT:
        raise DomainError(f"the composition grew to {n + m - 1:,} grid points, beyond the "
                          f"limit of {2 * MAX_SUPPORT:,} for one product: use a finer "
                          "discretization for steps with tiny losses, a coarser one for "
                          "wide compositions, or fewer steps")


def int_compose(a: IntPMF, b: IntPMF, tail: float = 1e-19) -> IntPMF:
    r"""The convolution of two :class:`IntPMF`, exact, then rounded up to the common scale,
    with tails of mass at most about ``tail`` each moved to larger losses.

    Example:
        >>> p = int_pmf(0.5, 0, [1 << 79, 1 << 79], 0)          # half at 0, half at 0.5
        >>> [int(c) >> 78 for c in int_compose(p, p, tail=0).poly.coeffs()]
        [1, 2, 1]
    """
    if a.disc != b.disc or a.bits != b.bits or a.up != b.up:
        raise DomainError("these PMFs live on different grids (discretisation or scale) "
                          "or bound from different sides")
    bits = a.bits
    check_product(a.size, b.size)
    poly = a.poly * b.poly
    ta, tb = a.total(), b.total()
    inf = a.inf * (tb + b.inf) + b.inf * ta
    approx = _approx_conv(a.approx, b.approx)
    lower = a.lower + b.lower
    poly, approx, lower, inf = _truncate(poly, approx, lower, inf, tail, bits, a.up)
    return IntPMF(a.disc, bits, lower, _shift(poly, bits, a.up),
                  int(_shift(inf, bits, a.up)), approx, a.up)


#: threads FLINT may use inside one exact product of polynomials (results are exact
#: integers, so this changes only the wall time); ``None``: ``min(os.cpu_count(), 2)``
PRODUCT_THREADS: int | None = None


def product(a: Any, b: Any) -> Any:
    """The exact product ``a * b`` of two ``fmpz_poly`` (a square when ``a is b``), with
    FLINT's thread count set to :data:`PRODUCT_THREADS` for the call and restored after."""
    import os

    import flint

    want = PRODUCT_THREADS if PRODUCT_THREADS is not None else min(os.cpu_count() or 1, 2)
    old = flint.ctx.threads
    if want == old or want < 1:
        return a * b
    flint.ctx.threads = int(want)
    try:
        return a * b
    finally:
        flint.ctx.threads = old


def floor_scale(poly: Any, bits: int, total: int | None = None) -> tuple[Any, int, int]:
    """``(f, total_f, rest)``: ``f`` the coefficients of a non-negative ``fmpz_poly``
    divided by ``2^bits`` and rounded down, ``total_f`` their exact sum and ``rest`` the
    exact mass the rounding removed (units of the input's scale): ``sum(poly) = 2^bits
    total_f + rest`` with ``0 <= rest < 2^bits`` per coefficient.  The numerators are
    non-negative, so truncating division is the floor.  ``total``: ``sum(poly)`` when
    the caller knows it exactly."""
    import flint

    if poly.length() == 0:
        return poly, 0, 0
    f = poly // flint.fmpz(1 << bits)
    tf = int(f(1))
    return f, tf, (int(poly(1)) if total is None else int(total)) - (tf << bits)


def addition_chain(times: int) -> list[tuple[int, int]]:
    """A short addition chain for ``times`` as steps ``(i, j)``: entry ``k + 1`` of the
    chain is entry ``i`` plus entry ``j`` (entry 0 is 1).  Squares (``i == j``) cost about
    two thirds of a product, so the chain is chosen by that cost among the binary method
    and factor chains (``times = a b``: the chain of ``b`` then the chain of ``a`` on its
    result), e.g. 1000 = 10^3 in 9 squares and 3 products instead of the binary 9 and 5;
    beyond ``2^24`` the binary method alone."""
    k = int(times)
    if k < 1:
        raise DomainError(f"times must be a positive integer, got {times!r}")
    if k > 1 << 24:
        return _binary_chain(k)
    return list(_best_chain(k)[1])


def _binary_chain(k: int) -> list[tuple[int, int]]:
    steps: list[tuple[int, int]] = []
    cur = 0  # index of the running result
    for bit in bin(k)[3:]:
        steps.append((cur, cur))
        cur = len(steps)
        if bit == "1":
            steps.append((cur, 0))
            cur = len(steps)
    return steps


_SQUARE, _PRODUCT = 2.0, 3.0


@functools.lru_cache(maxsize=4096)
def _best_chain(k: int) -> tuple[float, tuple[tuple[int, int], ...]]:
    """(cost, steps) of a cheap chain for k; the last step's entry is k."""
    if k == 1:
        return 0.0, ()
    options = []
    if k % 2 == 0:
        c, st = _best_chain(k // 2)
        options.append((c + _SQUARE, st + ((len(st), len(st)),)))
    else:
        c, st = _best_chain(k - 1)
        options.append((c + _PRODUCT, st + ((len(st), 0),)))
    for a in (3, 5, 7, 11, 13):
        if k % a == 0 and k > a:
            cb, sb = _best_chain(k // a)
            ca, sa = _best_chain(a)
            # the chain of a with entry 0 replaced by the last entry of b's chain
            base = len(sb)
            moved = tuple((base + i, base + j) for i, j in sa)
            options.append((cb + ca, sb + moved))
    return min(options, key=lambda o: (o[0], len(o[1])))


def chained(base: Any, times: int, combine: Any) -> Any:
    """``base`` composed ``times`` times with itself along :func:`addition_chain`, through
    ``combine(a, b)`` (associative; called with ``a is b`` for a square); entries are
    dropped after their last use."""
    steps = addition_chain(times)
    last = {0: -1}
    for k, (i, j) in enumerate(steps):
        last[i] = last[j] = k
    vals: dict[int, Any] = {0: base}
    for k, (i, j) in enumerate(steps):
        a = vals[i]
        out = combine(a, a) if i == j else combine(a, vals[j])
        for e in (i, j):
            if last.get(e) == k:
                vals.pop(e, None)
        vals[k + 1] = out
    return vals[len(steps)]


def repeated(base: Any, times: int, combine: Any) -> Any:
    """``base`` composed ``times`` times with itself by repeated squaring, through
    ``combine(a, b)`` (an associative composition)."""
    k = int(times)
    result = None
    while True:
        if k & 1:
            result = base if result is None else combine(result, base)
        k >>= 1
        if not k:
            break
        base = combine(base, base)
    assert result is not None
    return result


def int_self_compose(p: IntPMF, times: int, tail: float = 1e-19) -> IntPMF:
    r"""The ``times``-fold composition by repeated squaring (see :func:`int_compose`):
    about :math:`\log_2` ``times`` products; refused (:class:`DomainError`) when the
    composed support would exceed :data:`MAX_SUPPORT` points."""
    k = check_times(times)
    check_support([(p, k)], f"the {k}-fold composition")
    return repeated(p, k, lambda a, b: int_compose(a, b, tail))


def connect_cells(pbar: Any, abar: Any, ey: Any, disc: float) -> list[Any]:
    r"""Connect the dots (Doroshenko et al. 2022) of a pair's remove direction, in balls at
    the caller's precision: from the tails :math:`P(L > l_j)` (``pbar``),
    :math:`\mathbb E_P[e^{-L}; L > l_j]` (``abar``) and :math:`e^{l_j}` (``ey``) at the
    grid points :math:`l_j = (j_0 + j)\Delta`, each cell's :math:`P_c` goes to its ends
    keeping :math:`Q_c = \mathbb E_P[e^{-L}; \text{cell}]`: :math:`(e^{l_i}Q_c -
    e^{-\Delta}P_c)/(1 - e^{-\Delta})` to :math:`l_i`, the rest to :math:`l_{i+1}`."""
    import flint

    d = flint.arb(disc)
    edm, ic1 = (-d).exp(), flint.arb(1) / -((-d).expm1())
    out, carry = [flint.arb(0)] * len(pbar), flint.arb(0)
    for i in range(len(pbar) - 1):
        pc, qt = pbar[i] - pbar[i + 1], (abar[i] - abar[i + 1]) * ey[i]
        out[i], carry = carry + (qt - edm * pc) * ic1, (pc - qt) * ic1
    out[-1] = carry
    return out
