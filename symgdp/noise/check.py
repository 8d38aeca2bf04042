r"""An independent numeric check of a derived profile against its definition.

After :func:`~symgdp.noise.additive.additive_noise` has derived
:math:`\delta(\varepsilon)` symbolically, :func:`crosscheck` evaluates it at rational
parameter values and a few :math:`\varepsilon` with mpmath, and compares it with the
definition computed without any of the derived steps: the hockey-stick integral

.. math:: \int \max\bigl(0,\, p(x) - e^{\varepsilon} p(x - \Delta)\bigr)\,dx

(and the same for :math:`-Z`, the other direction), by tanh-sinh quadrature at 30 digits,
split where the integrand changes sign (found by bisection on its sign) and at the
density's own breakpoints; they must agree to 10 significant digits (the quadrature
of a far tail is not trusted beyond that: for the Gaussian at :math:`\delta \approx
10^{-285}` it is off in the 11th digit).  A disagreement means a derivation step went wrong (a wrong
branch of a solution, say): the derivation is refused rather than returned.

Example:
    >>> import sympy
    >>> from symgdp.noise.density import read_density
    >>> x = sympy.Symbol("x")
    >>> d = read_density(sympy.exp(-sympy.Abs(x)) / 2)
    >>> e = sympy.Symbol("varepsilon", positive=True)
    >>> crosscheck(d, sympy.Max(0, 1 - sympy.exp((e - 1) / 2)), sympy.Integer(1), {})[:22]
    'agrees with the 30-dig'
"""

from __future__ import annotations

import random
from typing import Any

import mpmath
import sympy

from symgdp.errors import ProfileError
from symgdp.noise.density import Density
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["crosscheck", "hockey_stick"]

_DPS = 30


def hockey_stick(logp: Any, eps: Any, shift: Any, kinks: tuple = ()) -> mpmath.mpf:
    r""":math:`\int (p(x) - e^\varepsilon p(x - s))_+\,dx` by quadrature at the working
    precision, for a density given by its logarithm ``logp`` (an mpmath function) whose
    loss is monotone: the sign change of the integrand is found by bisection on its sign.
    Where :math:`\log p < -10^5` the density is read as 0 (its share of the integral is
    below :math:`e^{-10^5}`; the exponential of a double-exponential tail would not
    finish)."""
    e, s = mpmath.mpf(eps), mpmath.mpf(shift)
    floor = mpmath.mpf(-10) ** 5

    def p(x: Any) -> Any:
        v = logp(x)
        return mpmath.mpf(0) if v < floor else mpmath.exp(v)

    def g(x: Any) -> Any:
        return p(x) - mpmath.exp(e) * p(x - s)

    lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
    for _ in range(60):
        if g(lo) > 0:
            break
        lo *= 2
    for _ in range(60):
        if g(hi) <= 0:
            break
        hi *= 2
    if not (g(lo) > 0):
        return mpmath.mpf(0)  # the integrand is nowhere positive
    for _ in range(mpmath.mp.prec + 40):
        mid = (lo + hi) / 2
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    cut = (lo + hi) / 2
    # split at the kinks and geometrically towards the cut, where the mass sits
    near = [cut - mpmath.mpf(2) ** k for k in range(-8, 9)]
    points = sorted({-mpmath.inf, cut, *near, *[mpmath.mpf(k) for k in kinks if k < cut]})
    total = mpmath.mpf(0)
    for a, b in zip(points[:-1], points[1:], strict=True):
        total += mpmath.quad(lambda t: max(g(t), 0), [a, b])
    return total


def _values(free: set) -> dict:
    rng = random.Random(2018)
    return {s: sympy.Rational(rng.randint(6, 20), rng.randint(5, 12))
            for s in sorted(free, key=str)}


def crosscheck(density: Density, expr: sympy.Expr, shift: sympy.Expr,
               values: dict) -> str:
    """Compare the derived ``expr`` with the quadrature of the definition; one sentence
    saying where it agreed, or ProfileError naming the disagreement."""
    x = density.x
    at = dict(values)
    at.update(_values((expr.free_symbols | density.expr.free_symbols | shift.free_symbols)
                      - {x, _EPS} - set(at)))
    s = shift.xreplace(at)
    if not s.is_Integer:  # e.g. a vector noise's Delta*sqrt(3): a number mpmath reads
        s = sympy.N(s, _DPS + 10)
    logp = sympy.expand_log(sympy.log(density.expr.xreplace(at)), force=True)
    pdf = sympy.lambdify(x, logp, "mpmath")
    mirror = sympy.lambdify(x, logp.xreplace({x: -x}), "mpmath")
    derived = sympy.lambdify(_EPS, expr.xreplace(at), "mpmath")
    base = [float(p.hi.xreplace(at)) for p in density.pieces[:-1]]
    kinks = tuple(base + [b + float(s) for b in base])
    mirror_kinks = tuple([-b for b in base] + [-b + float(s) for b in base])
    eps0 = None
    top = sympy.N(sympy.Max(*(sympy.Integer(0), *(c.rhs for c in expr.atoms(sympy.Ge)
                                                   if c.lhs == _EPS))).xreplace(at))
    if top > 0:
        eps0 = float(top)
    grid = [0.0, 0.4, 1.5, 4.0] if eps0 is None else [0.0, 0.3 * eps0, 0.8 * eps0,
                                                       1.2 * eps0]
    with mpmath.workdps(_DPS):
        for e in grid:
            ref = max(hockey_stick(pdf, e, s, kinks),
                      hockey_stick(mirror, e, s, mirror_kinks))
            got = derived(mpmath.mpf(e))
            if abs(got - ref) > mpmath.mpf(10) ** -10 * max(abs(ref), mpmath.mpf(10) ** -25):
                shown = ", ".join(f"{k} = {v}" for k, v in at.items())
                raise ProfileError(
                    f"the derived profile disagrees with the quadrature of its definition "
                    f"at eps = {e:g} ({shown}): {mpmath.nstr(got, 15)} against "
                    f"{mpmath.nstr(ref, 15)}; the derivation is not returned")
    shown = ", ".join(f"{k} = {v}" for k, v in at.items())
    return (f"agrees with the {_DPS}-digit quadrature of int max(0, p(x) - e^eps p(x - "
            f"Delta)) dx (both directions) to 10 digits at eps = "
            f"{', '.join(f'{e:g}' for e in grid)} ({shown})")
