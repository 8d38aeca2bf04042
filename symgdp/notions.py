r"""Other privacy notions as input: Rényi DP, zero-concentrated DP and trade-off curves.

Each notion here becomes a *numeric source*: an object that gives a proved upper bound on
:math:`\log\delta(\varepsilon)` of the privacy profile that the notion implies, vectorised
over :math:`\varepsilon`.  A :class:`~symgdp.profile.Profile` built on a source measures
that profile like any other.  The protocol (duck-typed) is

* ``kind``: a short display name (``"RDP"``, ``"zCDP"``, ``"f-DP"``);
* ``log_delta(x)``: a proved upper bound on :math:`\log\delta(x)` at every ``x >= 0``
  (float64, ``<= 0``, ``-inf`` where :math:`\delta = 0` is proved);
* ``log_delta_lower(x)`` (only where it can be proved): a lower bound on the same
  profile -- the profile that the *notion* implies through the conversion below, which
  is itself only an upper bound on the mechanism's own profile;
* ``tail_limit()``: :math:`\lim_{\varepsilon\to\infty}\varepsilon^2/(-2\log\delta(\varepsilon))`
  of the source's profile as a SymPy expression, or ``None`` when it is not derived;
* ``latex()``: the LaTeX of what the user typed.

**Rényi DP** (Mironov 2017).  A curve :math:`\hat\varepsilon(\alpha)`, :math:`\alpha > 1`,
implies the profile (Canonne, Kamath & Steinke 2020, Prop. 12; Asoodeh, Liao, Calmon,
Kosut & Sankar 2021)

.. math:: \delta(\varepsilon) = \inf_{\alpha > 1} \exp\bigl((\alpha - 1)
          (\hat\varepsilon(\alpha) - \varepsilon)\bigr)\,\frac{1}{\alpha}
          \Bigl(1 - \frac{1}{\alpha}\Bigr)^{\alpha - 1}.

Every single order gives a valid bound, so whatever order the numeric search settles on,
the value at that order (evaluated with outward rounding) is a proved upper bound.  The
tail limit of this profile is :math:`2\lim_{\alpha\to\infty}\hat\varepsilon(\alpha)/\alpha`
(sandwich the infimum between the orders near
:math:`\alpha \approx \varepsilon / (2\rho)` and :math:`(\alpha-1)\log(1-1/\alpha) \ge -1`).
A finite *table* of orders gives a profile that decays only like
:math:`e^{-(\alpha_{\max}-1)\varepsilon}`: its tail limit is :math:`\infty`.

**zCDP** (Bun & Steinke 2016): :math:`(\xi, \rho)`-zCDP is the RDP curve
:math:`\xi + \rho\alpha`.  Here :math:`f(\alpha) = (\alpha-1)(\xi + \rho\alpha - \varepsilon)
+ (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha` is strictly convex
(:math:`f'' = 2\rho + 1/(\alpha(\alpha-1)) > 0`) with
:math:`f'(\alpha) = \xi + \rho(2\alpha - 1) - \varepsilon + \log(1 - 1/\alpha)`; its root has
no elementary closed form, but the order :math:`\hat\alpha = (\varepsilon - \xi + \rho)/(2\rho)`
(the minimiser of Mironov's conversion) gives the closed-form upper bound

.. math:: \delta(\varepsilon) \le \exp\Bigl(-\frac{(\varepsilon - \xi - \rho)^2}{4\rho}\Bigr)
          \frac{1}{\hat\alpha}\Bigl(1 - \frac{1}{\hat\alpha}\Bigr)^{\hat\alpha - 1}
          \quad (\varepsilon > \xi + \rho),

which is below Mironov's :math:`\exp(-(\varepsilon - \xi - \rho)^2/(4\rho))`.  The tail
limit is :math:`2\rho` (:math:`1/\sigma^2` for the Gaussian mechanism, whose curve is
:math:`\alpha/(2\sigma^2)`: the same as its exact GDP profile).  Convexity also gives a
proved *lower* bound on the infimum: with :math:`a < \alpha^* < b` and
:math:`f'(a) < 0 < f'(b)`, :math:`\min f \ge \max(f(a) + f'(a)(b - a), f(b) - f'(b)(b - a))`.

**Trade-off curves** (Dong, Roth & Su 2021).  A trade-off function :math:`T` (convex,
continuous, non-increasing, :math:`T(\alpha) \le 1 - \alpha` on :math:`[0, 1]`) implies
(Prop. 2.12) :math:`\delta(\varepsilon) = 1 + T^*(-e^{\varepsilon}) = \sup_{\alpha\in[0,1]}
(1 - T(\alpha) - e^{\varepsilon}\alpha)`.  When the mechanism is :math:`T`-DP for every
neighbouring pair in both orders this is a valid bound for any :math:`T`; when :math:`T`
is the curve of one ordered pair only (``symmetric=False``), the other order's curve is
:math:`T^{-1}` and the profile is the larger of the two conjugates, the second being
:math:`\sup_\alpha (1 - \alpha - e^{\varepsilon} T(\alpha))` (substitute
:math:`\beta = T(\alpha)`).  On :math:`[p, q]` a non-increasing :math:`T` gives
:math:`1 - T(\alpha) - c\alpha \le 1 - T(q) - cp`, and a convex one lies above the
extension of its chord over :math:`[q, r]`, which bounds the same interval by a linear
function; a branch-and-bound over :math:`[0, 1]` in ball arithmetic (python-flint's
``arb``) refines the intervals until the upper and lower bounds of the supremum agree to
the requested tolerance.  Both bounds use that :math:`T` is a trade-off function; that is
checked on a grid of balls (a counterexample found on the grid is an error), not proved.

The neighbouring relation is whatever the notion was stated for: the conversions hold
pair by pair, so add/remove statements give add/remove profiles, replace-one statements
replace-one profiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx

from ._bounded import resolve_timeout, run_bounded
from .errors import AnalysisTimeout, DomainError, ParseError, UnboundParameterError
from .interval import ArbUnsupported, lambdify_arb
from .parsing import parse_expression

__all__ = [
    "alpha",
    "LinearRdpSource",
    "RdpSource",
    "TradeoffSource",
    "rdp_source",
    "zcdp_source",
    "tradeoff_source",
]

#: the default symbol of a Rényi order and of a trade-off curve's type I error
alpha = sympy.Symbol("alpha", positive=True, real=True)

_U = 2.0**-52
_TINY = 2.0**-1000   # absolute slack: covers an underflowed product's lost bits


# -- shared helpers ----------------------------------------------------------------------

def _up(x: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    """``x + slack`` rounded up once more (slack covers the float error of ``x``)."""
    return np.nextafter(x + slack, np.inf)


def _down(x: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    return np.nextafter(x - slack, -np.inf)


def _symbol(var: Any) -> sympy.Symbol:
    if isinstance(var, str):
        return sympy.Symbol(var, positive=True, real=True)
    if not isinstance(var, sympy.Symbol):
        raise DomainError(f"the order/argument symbol must be a SymPy Symbol, got {var!r}")
    return var


def _expression(expr: Any, var: sympy.Symbol, what: str) -> sympy.Expr:
    if isinstance(expr, str):
        names = {var.name: var, "alpha": var, "α": var}
        return parse_expression(expr, symbols=names)
    try:
        out = sympy.sympify(expr, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise ParseError(f"{what} must be a SymPy expression or a string, got {expr!r}"
                         ) from exc
    if not isinstance(out, sympy.Expr):
        raise ParseError(f"{what} must be an expression, got {expr!r}")
    return out


def _bind(expr: sympy.Expr, values: Mapping[Any, Any] | None, var: sympy.Symbol | None
          ) -> tuple[sympy.Expr, list[sympy.Symbol]]:
    """``expr`` with ``values`` substituted (keys symbols or names), and the symbols left
    unbound besides ``var``."""
    if values:
        by_name = {s.name: s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
        subs = {}
        for k, v in values.items():
            s = by_name.get(k) if isinstance(k, str) else k
            if s is not None:
                subs[s] = sympy.sympify(v)
        expr = expr.subs(subs)
    free = sorted((s for s in expr.free_symbols if s != var), key=str)
    return expr, free


def _require_bound(free: list[sympy.Symbol], what: str) -> None:
    if free:
        names = ", ".join(map(str, free))
        raise UnboundParameterError(
            f"{what} has unbound parameters {names}: give them values= for numeric work")


def _ball(number: sympy.Expr, prec: int = 128) -> arb:
    """A ball around a numeric SymPy expression (exact numbers, sqrt, pi, ...)."""
    z = sympy.Dummy("z")
    with ctx.workprec(prec):
        try:
            b = lambdify_arb(sympy.sympify(number), z)(0.0)
        except ArbUnsupported as exc:
            raise DomainError(f"cannot evaluate {number} with ball arithmetic: {exc}") from exc
    if not b.is_finite():
        raise DomainError(f"the value {number} is not a finite real number")
    return b


def _float_bounds(b: arb) -> tuple[float, float]:
    """Floats below and above every point of the ball (equal when it is one float)."""
    lo, hi = float(b.lower()), float(b.upper())
    if arb(lo) > b.lower():
        lo = math.nextafter(lo, -math.inf)
    if arb(hi) < b.upper():
        hi = math.nextafter(hi, math.inf)
    return lo, hi


def _fmt(x: Any) -> str:
    return f"{float(x):.6g}"


def _xs(x: Any) -> tuple[bool, np.ndarray]:
    scalar = np.ndim(x) == 0
    arr = np.atleast_1d(np.asarray(x, dtype=np.float64))
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        bad = arr[np.isnan(arr) | (arr < 0)][0]
        raise DomainError(f"eps must be >= 0, got {bad!r}")
    return scalar, arr


def _finish(scalar: bool, out: np.ndarray, shape: tuple[int, ...]) -> Any:
    return float(out[0]) if scalar else out.reshape(shape)


# -- the conversion RDP -> (eps, delta) at one order, float with outward rounding ---------

def _log_g(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(\alpha - 1)\log(1 - 1/\alpha) - \log\alpha` in float and a bound on its
    rounding error."""
    t = (a - 1.0) * np.log1p(-1.0 / a)
    la = np.log(a)
    return t - la, 16 * _U * (np.abs(t) + np.abs(la)) + _TINY


# -- zCDP and every RDP curve linear in the order -------------------------------------------

class LinearRdpSource:
    r"""The profile of the RDP curve :math:`\xi + \rho\alpha` (zCDP), see the module notes.

    Example:
        >>> s = zcdp_source(0.5)                  # the Gaussian mechanism with sigma = 1
        >>> from symgdp.gaussian import log_delta_mu
        >>> bool(s.log_delta(2.0) >= log_delta_mu(2.0, 1.0))
        True
        >>> s.tail_limit()
        1.00000000000000
    """

    def __init__(self, rho: sympy.Expr, xi: sympy.Expr, *, kind: str, latex: str,
                 free: list[sympy.Symbol] | None = None) -> None:
        self.kind = kind
        self.rho, self.xi = rho, xi
        self._latex = latex
        self._free = list(free or [])
        self._balls: tuple[float, float, float, float] | None = None

    def _params(self) -> tuple[float, float, float, float]:
        """(rho_lo, rho_hi, xi_lo, xi_hi) as floats rounded outward."""
        _require_bound(self._free, f"the {self.kind} statement")
        if self._balls is None:
            r, x = _ball(self.rho), _ball(self.xi)
            r_lo, r_hi = _float_bounds(r)
            x_lo, x_hi = _float_bounds(x)
            self._balls = (max(r_lo, 0.0), r_hi, max(x_lo, 0.0), x_hi)
        return self._balls

    def _argmin(self, x: np.ndarray, rho: float, xi: float) -> np.ndarray:
        """The root of f'(alpha) (float, by bisection in log(alpha - 1)); inf where none."""
        lo = np.full(x.shape, -60.0)
        hi = np.full(x.shape, 690.0)
        for _ in range(90):
            mid = 0.5 * (lo + hi)
            a = 1.0 + np.exp(mid)
            d = xi + rho * (2 * a - 1) - x + np.log1p(-1.0 / a)
            neg = d < 0
            lo = np.where(neg, mid, lo)
            hi = np.where(neg, hi, mid)
        return 1.0 + np.exp(0.5 * (lo + hi))

    @staticmethod
    def _f(a: np.ndarray, x: np.ndarray, rho: float, xi: float) -> tuple[np.ndarray, np.ndarray]:
        """f(alpha) and a bound on its float error."""
        am1 = a - 1.0
        lin = xi + rho * a - x
        main = am1 * lin
        g, gerr = _log_g(a)
        err = 8 * _U * (np.abs(am1) * (abs(xi) + rho * a + np.abs(x)) + np.abs(main)) \
            + 4 * _U * a * np.abs(lin) + gerr
        return main + g, err + 4 * _U * np.abs(main + g)

    @staticmethod
    def _df(a: np.ndarray, x: np.ndarray, rho: float, xi: float
            ) -> tuple[np.ndarray, np.ndarray]:
        l1 = np.log1p(-1.0 / a)
        d = xi + rho * (2 * a - 1) - x + l1
        return d, 16 * _U * (abs(xi) + rho * (2 * a + 1) + np.abs(x) + np.abs(l1)) + _TINY

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta(x) of the converted profile (vectorised)."""
        scalar, xs = _xs(x)
        shape = np.shape(x)
        _, rho, _, xi = self._params()  # upper ends: f increases with rho and xi
        out = np.zeros(xs.shape)
        if rho == 0.0:
            # curve xi: f' = xi - x + log(1 - 1/a); delta = 0 for x > xi (a -> infinity)
            zero = xs > xi
            out[zero] = -np.inf
            rest = ~zero
            if np.any(rest):
                with np.errstate(divide="ignore"):
                    a = 1.0 / -np.expm1(xs[rest] - xi)
                a = np.where(np.isfinite(a) & (a > 1), a, 2.0)
                f, err = self._f(a, xs[rest], 0.0, xi)
                out[rest] = np.minimum(_up(f, err), 0.0)
            return _finish(scalar, out, shape)
        a = self._argmin(xs, rho, xi)
        f, err = self._f(a, xs, rho, xi)
        out = np.minimum(_up(f, err), 0.0)
        return _finish(scalar, out, shape)

    def log_delta_lower(self, x: Any) -> Any:
        r"""Proved lower bound on log delta(x) of the converted profile (the profile that
        the zCDP statement implies through the conversion, not the mechanism's own); by
        convexity of the objective in the order (module notes).  ``-inf`` where the
        bracket could not be proved."""
        scalar, xs = _xs(x)
        shape = np.shape(x)
        rho, _, xi, _ = self._params()  # lower ends
        if rho == 0.0:  # no strict convexity margin to prove: the trivial bound
            return _finish(scalar, np.full(xs.shape, -np.inf), shape)
        star = self._argmin(xs, rho, xi)
        out = np.full(xs.shape, -np.inf)
        todo = np.ones(xs.shape, dtype=bool)
        for eta in (1e-7, 1e-5, 1e-3, 1e-1, 0.5):
            if not np.any(todo):
                break
            s, xx = star[todo], xs[todo]
            a = 1.0 + (s - 1.0) * (1.0 - eta)
            b = 1.0 + (s - 1.0) * (1.0 + eta)
            da, ea = self._df(a, xx, rho, xi)
            db, eb = self._df(b, xx, rho, xi)
            ok = (da + ea < 0) & (db - eb > 0) & (a > 1)
            fa, efa = self._f(a, xx, rho, xi)
            fb, efb = self._f(b, xx, rho, xi)
            w = b - a
            # lower ends of f(a) + f'(a) w (f'(a) < 0: take f'(a) low) and f(b) - f'(b) w
            la = (fa - efa) + (da - ea) * w
            lb = (fb - efb) - (db + eb) * w
            low = np.maximum(la, lb)
            low = _down(low, 8 * _U * (np.abs(la) + np.abs(lb)) + _TINY)
            idx = np.flatnonzero(todo)
            out[idx[ok]] = np.minimum(low[ok], 0.0)
            todo[idx[ok]] = False
        return _finish(scalar, out, shape)

    def tail_limit(self) -> sympy.Expr:
        """``2*rho`` (see the module notes), symbolic in unbound parameters."""
        return 2 * self.rho

    def closed_form(self, var: sympy.Symbol | None = None) -> sympy.Expr:
        r"""The closed-form upper bound of the module notes at
        :math:`\hat\alpha = (\varepsilon - \xi + \rho)/(2\rho)` (1 where
        :math:`\hat\alpha \le 1`): an upper bound on the infimum, never below it."""
        from .symbols import eps as _eps

        e = _eps if var is None else var
        ah = (e - self.xi + self.rho) / (2 * self.rho)
        val = (sympy.exp(-(e - self.xi - self.rho) ** 2 / (4 * self.rho))
               * (1 - 1 / ah) ** (ah - 1) / ah)
        return sympy.Piecewise((val, e > self.xi + self.rho), (1, True))

    def latex(self) -> str:
        return self._latex


# -- a general RDP curve, symbolic or a table -----------------------------------------------

_FINE = 256                      # lattice: alpha - 1 = 2**(k / _FINE)
_COARSE = 16                     # search step on the lattice
_K_LO, _K_HI = -30 * _FINE, 200 * _FINE


class RdpSource:
    r"""The profile implied by a Rényi curve given as an expression in the order or as a
    table of (order, value) pairs; see the module notes.

    Example:
        >>> import sympy
        >>> s = rdp_source(alpha / 2 + sympy.log(alpha) / 10)   # not linear in alpha
        >>> s.kind, s.tail_limit()
        ('RDP', 1)
        >>> from symgdp.gaussian import log_delta_mu
        >>> bool(s.log_delta(3.0) >= log_delta_mu(3.0, 1.0))  # above the sigma = 1 Gaussian
        True
    """

    kind = "RDP"

    def __init__(self, expr: sympy.Expr | None, var: sympy.Symbol, *,
                 table: tuple[tuple[float, float], ...] | None = None,
                 free: list[sympy.Symbol] | None = None, latex: str = "",
                 timeout: float | None = None) -> None:
        self.expr, self.var, self.table = expr, var, table
        self._free = list(free or [])
        self._latex = latex
        self._timeout = timeout
        self._arb: Callable[[Any], arb] | None = None
        self._float: Callable[[np.ndarray], np.ndarray] | None = None
        self._cache: dict[int, tuple[float, float, float]] = {}
        self._coarse: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if table is not None:
            a = np.array([o for o, _ in table])
            e = np.array([v for _, v in table])
            g, gerr = self._g_table(a)
            self._table_arrays = (a - 1.0, e, g, a)

    # ---- helpers
    @staticmethod
    def _g_table(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = np.empty_like(a)
        for i, ai in enumerate(a):
            with ctx.workprec(128):
                b = arb(float(ai))
                v = (b - 1) * (1 - 1 / b).log() - b.log()
            g[i] = math.nextafter(float(v.upper()), math.inf)
        return g, np.zeros_like(a)

    def _compile(self) -> None:
        _require_bound(self._free, "the RDP curve")
        if self._arb is None:
            self._arb = lambdify_arb(self.expr, self.var)
            f = sympy.lambdify(self.var, self.expr, modules=["numpy", "scipy"])

            def flt(a: np.ndarray) -> np.ndarray:
                with np.errstate(all="ignore"):
                    v = np.broadcast_to(np.asarray(f(a), dtype=np.float64), a.shape)
                return np.where(np.isfinite(v), np.maximum(v, 0.0), np.inf)

            self._float = flt

    def _point(self, k: int) -> tuple[float, float, float]:
        """(alpha - 1, upper bound of the curve, upper bound of g) at lattice point k."""
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        am1 = float(2.0 ** (k / _FINE))
        with ctx.workprec(128):
            a = arb(am1) + 1
            e = self._arb(a)
            g = arb(am1) * (arb(am1) / a).log() - a.log()
        eu = float(e.upper()) if e.is_finite() else math.inf
        out = (am1, max(math.nextafter(eu, math.inf), 0.0),
               math.nextafter(float(g.upper()), math.inf))
        self._cache[k] = out
        return out

    def _coarse_lattice(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._coarse is None:
            ks = np.arange(_K_LO, _K_HI + 1, _COARSE)
            am1 = 2.0 ** (ks / _FINE)
            e = self._float(1.0 + am1)
            g, _ = _log_g(1.0 + am1)
            self._coarse = (ks, am1, e)
            self._coarse_g = g
        return self._coarse

    @staticmethod
    def _combine(am1: np.ndarray, e: np.ndarray, g: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Upper bound of am1*(e - x) + g from float inputs that are themselves upper
        bounds (am1 exact)."""
        lin = e - x
        main = am1 * lin
        val = main + g
        err = 4 * _U * (np.abs(am1) * (np.abs(e) + np.abs(x)) + np.abs(g)) + _TINY
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(val), _up(val, err), np.inf)

    # ---- the protocol
    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta(x) of the converted profile (vectorised)."""
        scalar, xs = _xs(x)
        shape = np.shape(x)
        if self.table is not None:
            am1, e, g, _ = self._table_arrays
            vals = self._combine(am1[:, None], e[:, None], g[:, None], xs[None, :])
            out = np.minimum(vals.min(axis=0), 0.0)
            return _finish(scalar, out, shape)
        self._compile()
        ks, am1, e = self._coarse_lattice()
        out = np.zeros(xs.shape)
        for start in range(0, xs.size, 256):
            chunk = xs[start:start + 256]
            with np.errstate(all="ignore"):
                vals = am1[:, None] * (e[:, None] - chunk[None, :]) + self._coarse_g[:, None]
            vals = np.where(np.isfinite(vals), vals, np.inf)
            best = ks[np.argmin(vals, axis=0)]
            res = np.zeros(chunk.shape)
            for j, kb in enumerate(best):
                pts = [self._point(int(k)) for k in
                       range(max(kb - _COARSE, _K_LO), min(kb + _COARSE, _K_HI) + 1)]
                arr = np.array(pts)
                v = self._combine(arr[:, 0], arr[:, 1], arr[:, 2], np.full(len(pts), chunk[j]))
                res[j] = min(float(v.min()), 0.0)
            out[start:start + 256] = res
        return _finish(scalar, out, shape)

    def tail_limit(self) -> sympy.Expr | None:
        r""":math:`2\lim_{\alpha\to\infty}\hat\varepsilon(\alpha)/\alpha` (time-bounded
        SymPy limit; ``None`` when it does not finish), ``oo`` for a table."""
        if self.table is not None:
            return sympy.oo
        try:
            lim = run_bounded(sympy.limit, self.expr / self.var, self.var, sympy.oo,
                              timeout=resolve_timeout(self._timeout))
        except (AnalysisTimeout, NotImplementedError, ValueError, TypeError, RuntimeError):
            return None
        if lim.has(sympy.Limit) or lim.has(sympy.zoo, sympy.nan):
            return None
        return 2 * lim

    def latex(self) -> str:
        return self._latex


def _check_rdp_curve(expr: sympy.Expr, var: sympy.Symbol, timeout: float | None) -> None:
    """DomainError for a curve that is provably negative or decreasing, symbolically when
    SymPy decides, else on a grid of balls."""
    t = sympy.Dummy("t", positive=True)

    def symbolic() -> tuple[bool | None, bool | None]:
        e1 = expr.subs(var, 1 + t)
        d1 = sympy.diff(expr, var).subs(var, 1 + t)
        return (sympy.ask(sympy.Q.negative(e1)) if e1.free_symbols else bool(e1 < 0),
                sympy.ask(sympy.Q.negative(d1)) if d1.free_symbols else bool(d1 < 0))

    try:
        neg, dec = run_bounded(symbolic, timeout=min(resolve_timeout(timeout), 5.0))
    except Exception:  # noqa: BLE001 - undecided: the grid decides
        neg = dec = None
    if neg:
        raise DomainError(f"the RDP curve {expr} is negative for every order alpha > 1")
    if dec:
        raise DomainError(f"the RDP curve {expr} is decreasing in the order alpha")
    f = lambdify_arb(expr, var)
    grid = 1.0 + np.geomspace(1e-6, 1e6, 241)
    prev: arb | None = None
    prev_a = 0.0
    for a in grid:
        with ctx.workprec(128):
            v = f(float(a))
        if not v.is_finite():
            raise DomainError(f"the RDP curve {expr} is not a finite real number at "
                              f"alpha = {_fmt(a)}")
        if v < 0:
            raise DomainError(f"the RDP curve {expr} is negative at alpha = {_fmt(a)}: "
                              f"{_fmt(v.mid())}")
        if prev is not None and v < prev:
            raise DomainError(f"the RDP curve {expr} decreases in the order: "
                              f"{_fmt(prev.mid())} at alpha = {_fmt(prev_a)} but "
                              f"{_fmt(v.mid())} at alpha = {_fmt(a)}")
        prev, prev_a = v, float(a)


def _rdp_table(pairs: Iterable[Any]) -> tuple[tuple[float, float], ...]:
    rows = []
    for item in pairs:
        try:
            o, v = item
        except (TypeError, ValueError) as exc:
            raise DomainError(f"an RDP table row must be (order, value), got {item!r}") from exc
        ob, vb = _ball(sympy.sympify(o)), _ball(sympy.sympify(v))
        if not ob > 1:
            raise DomainError(f"Rényi orders must be > 1, got {o!r}")
        if vb < 0:
            raise DomainError(f"the RDP value at order {o!r} is negative: {v!r}")
        # a float order at or below the given one keeps the statement valid (RDP is
        # non-decreasing in the order); the value rounds up
        of = math.nextafter(float(ob.lower()), -math.inf)
        if not of > 1:
            of = float(ob.lower())
        vf = math.nextafter(float(vb.upper()), math.inf)
        rows.append((of, vf, o, v))
    if not rows:
        raise DomainError("an RDP table needs at least one (order, value) row")
    rows.sort(key=lambda r: r[0])
    for (o1, _v1, so1, sv1), (o2, _v2, so2, sv2) in zip(rows, rows[1:], strict=False):
        if so1 == so2 or o1 == o2:
            raise DomainError(f"the RDP table lists the order {so1!r} twice")
        if _ball(sympy.sympify(sv2)) < _ball(sympy.sympify(sv1)):
            raise DomainError(f"the RDP table decreases in the order: {sv1!r} at order {so1!r}"
                              f" but {sv2!r} at order {so2!r}")
    return tuple((o, v) for o, v, _, _ in rows)


def rdp_source(expr: Any, alpha: Any = alpha, values: Mapping[Any, Any] | None = None, *,
               timeout: float | None = None) -> RdpSource | LinearRdpSource:
    r"""A numeric source for the profile implied by a Rényi DP curve.

    Args:
        expr: the curve :math:`\hat\varepsilon(\alpha)` as a SymPy expression or string in
            ``alpha``, or a table: a mapping ``{order: value}`` or a sequence of pairs.
        alpha: the symbol of the order (a Symbol or a name).
        values: numbers for the other parameters.
        timeout: budget in seconds of each symbolic step.

    Returns:
        a :class:`LinearRdpSource` when the curve is :math:`\xi + \rho\alpha`, else an
        :class:`RdpSource`.

    Raises:
        DomainError: a negative or decreasing curve, an order <= 1.

    Example:
        >>> rdp_source({2: 0.5, 4: 1.0}).tail_limit()
        oo
        >>> rdp_source("alpha/8").tail_limit()
        1/4
    """
    var = _symbol(alpha)
    if isinstance(expr, (Mapping, list, tuple)):
        rows = _rdp_table(expr.items() if isinstance(expr, Mapping) else expr)
        body = r",\ ".join(rf"\hat\varepsilon({sympy.latex(sympy.nsimplify(o))}) = "
                           rf"{sympy.latex(sympy.Float(v, 6))}" for o, v in rows)
        return RdpSource(None, var, table=rows, latex=body)
    original = _expression(expr, var, "an RDP curve")
    bound, free = _bind(original, values, var)
    latex = rf"\hat\varepsilon({sympy.latex(var)}) = {sympy.latex(original)}"
    if not bound.has(var) or bound.is_polynomial(var):
        try:
            poly = sympy.Poly(bound, var)
        except sympy.PolynomialError:
            poly = None
        if poly is not None and poly.degree() <= 1:
            rho = poly.coeff_monomial(var)
            xi = poly.coeff_monomial(1)
            _check_linear(rho, xi, "RDP curve")
            return LinearRdpSource(rho, xi, kind="RDP", latex=latex, free=free)
    if not free:
        _check_rdp_curve(bound, var, timeout)
    return RdpSource(bound, var, free=free, latex=latex, timeout=timeout)


def _check_linear(rho: sympy.Expr, xi: sympy.Expr, what: str) -> None:
    for name, v in (("rho", rho), ("xi", xi)):
        v = sympy.sympify(v)
        if v.is_extended_real is False:
            raise DomainError(f"{name} of the {what} must be real, got {v}")
        if v.is_negative:
            raise DomainError(f"{name} of the {what} is negative: {v} (it must be >= 0)")
        if v.is_number:
            b = _ball(v)
            if b < 0:
                raise DomainError(f"{name} of the {what} is negative: {v} (it must be >= 0)")
            if not b.is_finite():
                raise DomainError(f"{name} of the {what} must be finite, got {v}")


def zcdp_source(rho: Any, xi: Any = 0, values: Mapping[Any, Any] | None = None
                ) -> LinearRdpSource:
    r"""A numeric source for the profile implied by :math:`(\xi, \rho)`-zCDP (the RDP
    curve :math:`\xi + \rho\alpha`).

    Raises:
        DomainError: :math:`\rho < 0` or :math:`\xi < 0`, or not real.

    Example:
        >>> import sympy
        >>> s = sympy.Symbol("sigma", positive=True)
        >>> zcdp_source(1 / (2 * s**2)).tail_limit()
        sigma**(-2)
        >>> zcdp_source(-1)
        Traceback (most recent call last):
        ...
        symgdp.errors.DomainError: rho of the zCDP statement is negative: -1 (it must be >= 0)
    """
    r0 = _expression(rho, alpha, "rho")
    x0 = _expression(xi, alpha, "xi")
    r, free_r = _bind(r0, values, None)
    x, free_x = _bind(x0, values, None)
    _check_linear(r, x, "zCDP statement")
    free = sorted(set(free_r) | set(free_x), key=str)
    if x0 == 0:
        latex = rf"\rho = {sympy.latex(r0)}"
    else:
        latex = rf"(\xi, \rho) = \left({sympy.latex(x0)}, {sympy.latex(r0)}\right)"
    return LinearRdpSource(r, x, kind="zCDP", latex=latex, free=free)


# -- trade-off curves -----------------------------------------------------------------------

_PRECS = (64, 128, 256, 512, 1024, 2048)


def _forms(s: sympy.Expr) -> list[sympy.Expr]:
    """Equal forms of ``s`` that cancel less in some range (erfc(z) = 2 - erfc(-z),
    erf(z) = 1 - erfc(z)); every one is evaluated and the balls are intersected."""
    # Floats become their exact binary Rationals first: the ball compiler abstracts Float
    # constants into symbols, and the rebuilt expression would let SymPy turn erfc(-z) back
    s = s.xreplace({f: sympy.Rational(f) for f in s.atoms(sympy.Float)})
    out = [s]
    # erfc(-z) is built unevaluated: SymPy would turn it straight back into 2 - erfc(z)
    for f in (lambda e: e.replace(
            sympy.erfc, lambda z: 2 - sympy.erfc(sympy.expand(-z), evaluate=False)),
              lambda e: e.rewrite(sympy.erfc)):
        try:
            g = sympy.expand(f(s), deep=False)
        except Exception:  # noqa: BLE001, S112 - an alternative form is optional
            continue
        if g != s and g not in out:
            out.append(g)
    return out


def _key(p: arb) -> tuple[int, int]:
    m, e = p.man_exp()
    return int(m), int(e)


class TradeoffSource:
    r"""The profile :math:`1 + T^*(-e^{\varepsilon})` of a trade-off curve :math:`T(\alpha)`,
    certified by branch-and-bound in ball arithmetic (module notes).

    ``log_delta_lower`` is a proved lower bound on the same profile, i.e. on the
    conjugate of the curve as typed (exact when the curve is the mechanism's).

    Example:
        >>> import sympy
        >>> a = alpha
        >>> g = sympy.erfc(sympy.erfcinv(2 * a) - 1 / sympy.sqrt(2)) / 2  # 1 - G_1(alpha)
        >>> s = tradeoff_source(1 - g)
        >>> from symgdp.gaussian import log_delta_mu
        >>> lo, up = s.log_delta_lower(1.0), s.log_delta(1.0)
        >>> bool(lo <= log_delta_mu(1.0, 1.0) <= up) and up - lo < 1e-5
        True
    """

    kind = "f-DP"

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol, *, symmetric: bool = True,
                 tol: float = 1e-6, max_points: int = 1500, latex: str = "",
                 free: list[sympy.Symbol] | None = None) -> None:
        self.expr, self.var, self.symmetric = expr, var, bool(symmetric)
        if not (tol > 0 and math.isfinite(tol)):
            raise DomainError(f"tol must be a positive number, got {tol!r}")
        self.tol, self.max_points = float(tol), int(max_points)
        self._latex = latex
        self._free = list(free or [])
        self._fs: list[Callable[[Any], arb]] | None = None
        self._ft: list[Callable[[Any], arb]] | None = None
        self._cache: dict[tuple[int, int], tuple[arb, arb, arb, arb]] = {}

    def _compile(self) -> None:
        _require_bound(self._free, "the trade-off curve")
        if self._fs is None:
            self._fs = [lambdify_arb(f, self.var) for f in _forms(1 - self.expr)]
            self._ft = [lambdify_arb(f, self.var) for f in _forms(self.expr)]

    def _values(self, p: arb) -> tuple[arb, arb, arb, arb]:
        """(S_lo, S_up, T_lo, T_up) at the exact point p, S = 1 - T, as exact balls."""
        k = _key(p)
        hit = self._cache.get(k)
        if hit is not None:
            return hit
        best: tuple[arb, arb, arb, arb] | None = None
        for prec in _PRECS:
            with ctx.workprec(prec):
                ss = [f(p) for f in self._fs]
                ts = [f(p) for f in self._ft]
                ss += [1 - t for t in ts]
                ts += [1 - s for s in ss[:len(self._fs)]]
                ss = [s for s in ss if s.is_finite()]
                ts = [t for t in ts if t.is_finite()]
                if not ss or not ts:
                    continue
                s_lo = max((s.lower() for s in ss), key=lambda b: b.mid())
                s_up = min((s.upper() for s in ss), key=lambda b: b.mid())
                t_lo = max((t.lower() for t in ts), key=lambda b: b.mid())
                t_up = min((t.upper() for t in ts), key=lambda b: b.mid())
                best = (s_lo, s_up, t_lo, t_up)
                rel_s = (s_up - s_lo) / abs(s_up) if s_up != 0 else arb(0)
                rel_t = (t_up - t_lo) / abs(t_up) if t_up != 0 else arb(0)
                if rel_s < 2.0**-40 and rel_t < 2.0**-40:
                    break
        if best is None and (p == 0 or p == 1):
            # the curve's end points may be limits (erfcinv(0) = oo): a trade-off function
            # has T(0) in [0, 1] and 0 <= T(1) <= 1 - 1 = 0
            best = (arb(0), arb(1), arb(0), arb(1)) if p == 0 else \
                (arb(1), arb(1), arb(0), arb(0))
        if best is None:
            raise DomainError(f"the trade-off curve {self.expr} is not a finite real number "
                              f"at alpha = {_fmt(p.mid())}")
        self._cache[k] = best
        return best

    def _bounds(self, pts: list[arb], vals: list[tuple[arb, arb, arb, arb]], c: arb
                ) -> tuple[list[arb], arb]:
        """Upper bound of the supremum on each interval, and the best point value."""
        ups = []
        lower = arb(0)
        n = len(pts)
        for i in range(n):
            p = pts[i]
            s_lo, _, _, t_up = vals[i]
            cand = s_lo - c * p
            if not self.symmetric:
                cand = cand.max(1 - p - c * t_up)
            lower = lower.max(cand.lower())
        for i in range(n - 1):
            p, q = pts[i], pts[i + 1]
            _, sq_up, tq_lo, _ = vals[i + 1]
            u = sq_up - c * p                                        # T non-increasing
            if i + 2 < n:                                            # T convex: chord [q, r]
                # T(a) >= ((r - a) T(q) - (q - a) T(r)) / (r - q) on [p, q]; the bound is
                # linear in a, so its end points decide.  Written with one division so that
                # an exactly linear curve gives an exact 0 (eventually-zero profiles)
                r = pts[i + 2]
                s_lo_r, _, _, t_up_r = vals[i + 2]
                conv = (sq_up - c * q).max(
                    ((r - p) * sq_up - (q - p) * s_lo_r) / (r - q) - c * p)
                u = u.min(conv)
            if not self.symmetric:
                u2 = 1 - p - c * tq_lo
                if i + 2 < n:
                    conv2 = (1 - q - c * tq_lo).max(
                        1 - p - c * (((r - p) * tq_lo - (q - p) * t_up_r) / (r - q)))
                    u2 = u2.min(conv2)
                u = u.max(u2)
            ups.append(u.upper())
        return ups, lower

    @staticmethod
    def _split(p: arb, q: arb) -> arb:
        if p == 0:
            m = q * q * q * q if q < 0.5 else q / 16
            return m.mid() if not m.is_exact() else m
        if q > 4 * p:
            e = (_key(p)[1] + _key(q)[1]) // 2
            return arb(2) ** e
        if p >= 0.5 and q == 1:
            return 1 - ((1 - p) / 16)
        if p >= 0.5 and (1 - p) > 4 * (1 - q):
            e = (_key(1 - p)[1] + _key(1 - q)[1]) // 2
            return 1 - arb(2) ** e
        return (p + q) / 2

    def _solve(self, x: float) -> tuple[float, float]:
        """(lower, upper) bounds on log delta(x)."""
        with ctx.workprec(128):
            c = arb(x).exp()
            pts = [arb(0), arb(0.5), arb(1)]
            vals = [self._values(p) for p in pts]
            while True:
                ups, lower = self._bounds(pts, vals, c)
                umax = max(ups, key=lambda b: b.mid())
                if umax <= 0:
                    return -math.inf, -math.inf
                lo_f = float(lower.log().lower()) if lower > 0 else -math.inf
                up_f = min(float(umax.log().upper()), 0.0)
                if (lo_f > -math.inf and up_f - lo_f <= self.tol) or \
                        len(pts) >= self.max_points:
                    return (min(math.nextafter(lo_f, -math.inf), 0.0),
                            math.nextafter(up_f, math.inf) if up_f < 0 else 0.0)
                # split every interval that may still hold the supremum to within tol
                thresh = lower * math.exp(self.tol) if lower > 0 else arb(0)
                new_pts, new_vals = [pts[0]], [vals[0]]
                order = sorted(range(len(ups)), key=lambda i: -ups[i].mid())
                chosen = {i for i in order[:8] if ups[i] > thresh}
                for i in range(len(ups)):
                    if i in chosen:
                        m = self._split(pts[i], pts[i + 1])
                        if pts[i] < m < pts[i + 1]:
                            new_pts.append(m)
                            new_vals.append(self._values(m))
                    new_pts.append(pts[i + 1])
                    new_vals.append(vals[i + 1])
                if len(new_pts) == len(pts):  # no split possible: return what is proved
                    return (min(lo_f, 0.0), math.nextafter(up_f, math.inf) if up_f < 0
                            else 0.0)
                pts, vals = new_pts, new_vals

    def _both(self, x: Any) -> tuple[bool, np.ndarray, np.ndarray, tuple[int, ...]]:
        scalar, xs = _xs(x)
        self._compile()
        lo = np.empty(xs.shape)
        up = np.empty(xs.shape)
        for i, xi in enumerate(xs):
            lo[i], up[i] = self._solve(float(xi))
        return scalar, lo, up, np.shape(x)

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta(x) (vectorised)."""
        scalar, _, up, shape = self._both(x)
        return _finish(scalar, up, shape)

    def log_delta_lower(self, x: Any) -> Any:
        """Proved lower bound on log delta(x) of the curve's conjugate (vectorised)."""
        scalar, lo, _, shape = self._both(x)
        return _finish(scalar, lo, shape)

    def tail_limit(self) -> None:
        """Not derived for a general curve: ``None`` (the profile layer decides)."""
        return None

    def latex(self) -> str:
        return self._latex


def _check_tradeoff_curve(expr: sympy.Expr, var: sympy.Symbol) -> None:
    """DomainError for a curve that is provably outside [0, 1], above 1 - alpha,
    increasing or not convex at points of a grid of balls over [0, 1]."""
    f = lambdify_arb(expr, var)
    inner = np.unique(np.concatenate([np.geomspace(1e-12, 0.5, 60),
                                      1 - np.geomspace(1e-12, 0.5, 60)[::-1],
                                      np.linspace(0, 1, 101)]))
    grid = [arb(float(a)) for a in inner]
    vals = []
    for a in grid:
        with ctx.workprec(256):
            v = f(a)
        if not v.is_finite() and (a == 0 or a == 1):
            # an end point that is a limit (erfcinv(0) = oo): the bounds [0, 1] and
            # T(1) = 0 are what every trade-off function has there
            v = arb(0).union(arb(1)) if a == 0 else arb(0)
        if not v.is_finite():
            raise DomainError(f"the trade-off curve {expr} is not a finite real number at "
                              f"alpha = {_fmt(a.mid())}")
        if v < 0 or v > 1:
            raise DomainError(f"the trade-off curve {expr} leaves [0, 1] at alpha = "
                              f"{_fmt(a.mid())}: {_fmt(v.mid())}")
        if v > 1 - a:
            raise DomainError(f"the trade-off curve {expr} exceeds 1 - alpha at alpha = "
                              f"{_fmt(a.mid())}: {_fmt(v.mid())} (no test does better than "
                              "random guessing's 1 - alpha)")
        vals.append(v)
    for i in range(len(grid) - 1):
        if vals[i + 1] > vals[i]:
            raise DomainError(f"the trade-off curve {expr} increases: {_fmt(vals[i].mid())} at "
                              f"alpha = {_fmt(grid[i].mid())} but {_fmt(vals[i + 1].mid())} "
                              f"at alpha = {_fmt(grid[i + 1].mid())}")
    for i in range(1, len(grid) - 1):
        a0, a1, a2 = grid[i - 1], grid[i], grid[i + 1]
        with ctx.workprec(256):
            chord = vals[i - 1] + (vals[i + 1] - vals[i - 1]) * (a1 - a0) / (a2 - a0)
        if vals[i] > chord:
            raise DomainError(f"the trade-off curve {expr} is not convex near alpha = "
                              f"{_fmt(a1.mid())}: {_fmt(vals[i].mid())} lies above the chord "
                              f"value {_fmt(chord.mid())}")


def tradeoff_source(expr: Any, alpha: Any = alpha, values: Mapping[Any, Any] | None = None,
                    *, symmetric: bool = True, tol: float = 1e-6) -> TradeoffSource:
    r"""A numeric source for the profile of a trade-off curve :math:`T(\alpha)`.

    Args:
        expr: :math:`T` as a SymPy expression or string in ``alpha`` (type I error in
            :math:`[0, 1]`; :math:`T` is the type II error of the best test).
        alpha: the symbol of the argument.
        values: numbers for the other parameters.
        symmetric: ``True`` (default) when the mechanism is :math:`T`-DP in Dong, Roth &
            Su's sense (every neighbouring pair, both orders): the profile is the conjugate
            of :math:`T`.  ``False`` when :math:`T` is the curve of one ordered pair only:
            the profile is the larger of the conjugates of :math:`T` and :math:`T^{-1}`.
        tol: target gap between the proved bounds on :math:`\log\delta`.

    Raises:
        DomainError: the curve is not finite and real, leaves :math:`[0, 1]`, exceeds
            :math:`1 - \alpha`, increases, or is not convex at a point of a grid of balls.

    Example:
        >>> s = tradeoff_source("Max(0, 1 - 2*alpha, (1 - alpha)/2)")
        >>> round(float(s.log_delta(0.0)), 6)   # delta(0) = 1/3, attained at alpha = 1/3
        -1.098612
        >>> s.log_delta(1.0)
        -inf
    """
    var = _symbol(alpha)
    original = _expression(expr, var, "a trade-off curve")
    bound, free = _bind(original, values, var)
    if not free:
        try:
            _check_tradeoff_curve(bound, var)
        except ArbUnsupported as exc:
            raise DomainError(str(exc)) from exc
    latex = rf"T({sympy.latex(var)}) = {sympy.latex(original)}"
    return TradeoffSource(bound, var, symmetric=symmetric, tol=tol, latex=latex, free=free)
