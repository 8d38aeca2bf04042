"""RDP curves (symbolic or a table) and zCDP statements as numeric sources."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy
from flint import arb, ctx

from symgdp.errors import AnalysisTimeout, DomainError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.notions.common import (
    _TINY,
    _U,
    _ball,
    _bind,
    _down,
    _expression,
    _finish,
    _float_bounds,
    _fmt,
    _log_g,
    _require_bound,
    _symbol,
    _up,
    _xs,
    alpha,
    log1m_inv,
)
from symgdp.symbolic.budget import resolve_timeout, run_bounded

# -- zCDP and every RDP curve linear in the order -------------------------------------------

class LinearRdpSource:
    r"""The profile of the RDP curve :math:`\xi + \rho\alpha` (zCDP), see the module notes.

    Example:
        >>> s = zcdp_source(0.5)                  # the Gaussian mechanism with sigma = 1
        >>> from symgdp.gaussian.vectorised import log_delta_mu
        >>> bool(s.log_delta(2.0) >= log_delta_mu(2.0, 1.0))
        True
        >>> s.tail_limit()
        1.00000000000000
    """

    #: the profile is implied by a notion: an upper bound of the mechanism's only
    implied = True

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
        l1, l1err = log1m_inv(a)
        d = xi + rho * (2 * a - 1) - x + l1
        return d, (16 * _U * (abs(xi) + rho * (2 * a + 1) + np.abs(x) + np.abs(l1)) + l1err
                   + _TINY)

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
        from symgdp.symbolic.symbols import eps as _eps

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
        >>> from symgdp.gaussian.vectorised import log_delta_mu
        >>> bool(s.log_delta(3.0) >= log_delta_mu(3.0, 1.0))  # above the sigma = 1 Gaussian
        True
    """

    #: the profile is implied by a notion: an upper bound of the mechanism's only
    implied = True

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
        assert self._arb is not None  # compiled: log_delta, the only caller, ran _compile()
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
            assert self._float is not None  # compiled: log_delta ran _compile() first
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


