r"""Utility refinement (theory §2): the least noise that gives a target
:math:`(\varepsilon, \delta)` through the partial order, :func:`refine_calibration`.

Calibrating at another point :math:`(\varepsilon_0, \delta_0)` that implies the target
may need less noise than calibrating at the target itself; see :mod:`symgdp.refinement.refine` for
the partial order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy

from symgdp.errors import DomainError, PrecisionError, ProfileError
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.symbols import delta as _DELTA
from symgdp.symbolic.symbols import eps as _EPS
from symgdp.symbolic.symbols import normalise_values
from symgdp.symbolic.symbols import sigma as _SIGMA

__all__ = ["Calibration", "refine_calibration"]


@dataclass(frozen=True, slots=True)
class Calibration:
    r"""Result of :func:`refine_calibration` (theory §2, utility refinement).

    Attributes:
        sigma: the smallest noise that still gives the target :math:`(\varepsilon,\delta)`
            through the partial order (a high-precision SymPy Float).
        eps0: where to calibrate, :math:`\varepsilon_0 \ge \varepsilon`.
        delta0: where to calibrate, :math:`\delta_0`.
        sigma_naive: :math:`f(\varepsilon, \delta)` (exact SymPy value).
    """

    sigma: sympy.Expr
    eps0: sympy.Expr
    delta0: sympy.Expr
    sigma_naive: sympy.Expr

    def __post_init__(self) -> None:
        # at 50 digits: a SymPy comparison would round the naive value to the precision
        # of its Floats (15 digits for a decimal in the equation)
        with mpmath.workdps(50):
            sigma, naive = (mpmath.mpf(sympy.N(x, 50)) for x in (self.sigma, self.sigma_naive))
            worse = sigma > naive * (1 + mpmath.mpf("1e-25"))
        if worse:
            raise PrecisionError(f"refined sigma {self.sigma} exceeds the naive "
                                 f"{self.sigma_naive}")


def refine_calibration(equation: Any, eps: Any, delta: Any,
                       values: Any = None, *, solve_for: sympy.Symbol = _SIGMA,
                       var: sympy.Symbol = _EPS, delta_symbol: sympy.Symbol = _DELTA,
                       timeout: float | None = None, dps: int = 30) -> Calibration:
    r"""The least noise that gives :math:`(\varepsilon,\delta)`-DP through the partial order.

    .. math::

        \sigma_{\min} = \inf\{f(\varepsilon_0,\delta_0) : \delta_0 + (1-\delta_0)
        (e^{\varepsilon_0} - e^{\varepsilon})_+/(1+e^{\varepsilon_0}) \le \delta,\
        \varepsilon_0 \ge \varepsilon\}.

    The noise :math:`f` must not increase with :math:`\delta_0` (checked at the optimum),
    so for each :math:`\varepsilon_0` the best :math:`\delta_0` makes the constraint tight.
    The one-dimensional minimum over :math:`\varepsilon_0` is located on a grid of 4000
    points and polished by golden-section search in mpmath at ``dps`` digits.

    Example:
        >>> c = refine_calibration("sigma = -C*log(delta)/eps", sympy.Rational(1, 5),
        ...                        sympy.exp(-2), {"C": 1})
        >>> c.sigma_naive, round(float(c.sigma), 4)
        (10, 8.0857)

    Floats (decimals in the equation, float values and targets) are read as the exact
    rationals they store, so ``sigma_naive`` is exact and ``sigma`` (rounded up to ``dps``
    digits) is compared with it at full precision.
    """
    from symgdp.symbolic.parsing import parse_equation
    from symgdp.symbolic.symbols import symbol_table

    if isinstance(equation, str):
        table = symbol_table(var, values, (solve_for, delta_symbol))
        equation = parse_equation(equation, symbols=table)
    if not isinstance(equation, sympy.Eq):
        raise ProfileError(f"refine_calibration needs an equation, got {equation!r}")
    from symgdp.symbolic.symbols import match_symbol as _match_symbol

    s = _match_symbol(solve_for, equation)
    d = _match_symbol(delta_symbol, equation)
    v = _match_symbol(var, equation)
    if equation.lhs == s and s not in equation.rhs.free_symbols:
        f = equation.rhs
    elif equation.rhs == s and s not in equation.lhs.free_symbols:
        f = equation.lhs
    else:
        sols = run_bounded(sympy.solve, equation, s, timeout=timeout)
        sols = [x for x in sols if x.is_positive is not False]
        if len(sols) != 1:
            raise ProfileError(f"cannot write {equation} as {s} = f(eps, delta): "
                               f"solutions {sols}")
        f = sols[0]
    vals = normalise_values(f, values or {})
    # every Float (a decimal in the equation, a float value or target) as the exact
    # rational it stores: the naive noise is then exact, and the refined one is compared
    # with it at full precision instead of against a 15-digit rounding of it
    f = _exact_floats(f.xreplace(vals))
    free = f.free_symbols - {v, d}
    if free:
        names = ", ".join(sorted(map(str, free)))
        from symgdp.errors import UnboundParameterError

        raise UnboundParameterError(f"refine_calibration needs values for: {names}")
    e_t, d_t = _exact_floats(sympy.sympify(eps)), _exact_floats(sympy.sympify(delta))
    if not (e_t.is_number and d_t.is_number) or e_t < 0 or not (0 < d_t < 1):
        raise DomainError(f"the target must have eps >= 0 and 0 < delta < 1, "
                          f"got eps={eps!r}, delta={delta!r}")
    naive = f.xreplace({v: e_t, d: d_t})  # SymPy's automatic evaluation only: no hang
    f_np = sympy.lambdify((v, d), f, modules=["scipy", "numpy"])
    f_mp = sympy.lambdify((v, d), f, modules="mpmath")
    ef, df = float(e_t), float(d_t)
    e_max = float(np.log((np.exp(ef) + df) / (1 - df)))
    x = np.linspace(ef, e_max, 4001)[:-1]
    with np.errstate(all="ignore"):
        w = (np.exp(x) - np.exp(ef)) / (1 + np.exp(x))
        F = np.asarray(f_np(x, (df - w) / (1 - w)), dtype=np.float64) * np.ones_like(x)
    F = np.where(np.isfinite(F), F, np.inf)
    i = int(np.argmin(F))
    with mpmath.workdps(dps + 10):
        em, dm = mpmath.mpf(sympy.N(e_t, dps + 10)), mpmath.mpf(sympy.N(d_t, dps + 10))

        def d0_of(e0: Any) -> Any:
            w = (mpmath.exp(e0) - mpmath.exp(em)) / (1 + mpmath.exp(e0))
            return (dm - w) / (1 - w)

        def F_mp(e0: Any) -> Any:
            val = f_mp(e0, d0_of(e0))
            return val.real if isinstance(val, mpmath.mpc) else val

        a = mpmath.mpf(x[max(i - 1, 0)]) if i > 0 else em
        b = mpmath.mpf(x[min(i + 1, len(x) - 1)])
        g = (mpmath.sqrt(5) - 1) / 2
        c1, c2 = b - g * (b - a), a + g * (b - a)
        f1, f2 = F_mp(c1), F_mp(c2)
        for _ in range(400):
            if f1 <= f2:
                b, c2, f2 = c2, c1, f1
                c1 = b - g * (b - a)
                f1 = F_mp(c1)
            else:
                a, c1, f1 = c1, c2, f2
                c2 = a + g * (b - a)
                f2 = F_mp(c2)
            if b - a < mpmath.eps * 4:
                break
        cands = [(F_mp(p), p) for p in (a, b, c1, c2)]
        best_f, best_e = min(cands)
        if not best_f < F_mp(em):  # the naive point itself (f(eps, delta)) is the best
            best_f, best_e = F_mp(em), em
        best_d = d0_of(best_e)
        # f must not increase with delta0, else the tight delta0 is not the best choice
        if F_mp(best_e) > f_mp(best_e, best_d * mpmath.mpf("0.999")):
            raise ProfileError(f"the noise {f} increases with delta near "
                               f"eps0={mpmath.nstr(best_e, 8)}; not a trade-off equation")
        # rounded up to dps digits: any noise above the infimum is valid, below it is not
        sigma = sympy.Float(best_f * (1 + mpmath.mpf(10) ** (1 - dps)), dps)
        return Calibration(sigma=sigma, eps0=sympy.Float(best_e, dps),
                           delta0=sympy.Float(best_d, dps), sigma_naive=naive)


def _exact_floats(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with every SymPy Float replaced by the rational number it stores."""
    return expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
