r"""Vector Gaussian noise: a density on :math:`\mathbb{R}^d` and a sensitivity ball, reduced
exactly to the one-dimensional Gaussian shift.

The mechanism is :math:`M(D) = f(D) + Z` with :math:`f(D) \in \mathbb{R}^d`,
:math:`\|f(D) - f(D')\| \le \Delta` in a norm (``"l2"``, ``"l1"`` or ``"linf"``), and
:math:`Z \sim N(b, A^{-1})`: a density whose logarithm is a quadratic polynomial
:math:`c + b^\top A x - \tfrac12 x^\top A x` with a positive definite precision matrix
:math:`A`.

**The reduction.**  For a shift :math:`v` the privacy loss
:math:`L(x) = \log p(x) - \log p(x - v) = v^\top A (x - b) - \tfrac12 v^\top A v` is affine
in :math:`x`; under :math:`P = N(b, A^{-1})` it is :math:`N(m, 2m)` with
:math:`m = \tfrac12 v^\top A v`, which is the privacy loss of the one-dimensional pair
:math:`(N(0, 1), N(\mu_v, 1))`, :math:`\mu_v = \sqrt{v^\top A v} = \|A^{1/2} v\|_2`, and the
same holds for the reversed pair.  Two pairs with the same privacy loss distributions have
the same profile, so the shift :math:`v` is exactly :math:`\mu_v`-GDP with the analytic
Gaussian profile (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2022, Theorem 2.7 and its
proof: the Gaussian mechanism with covariance reduces to the whitened shift).  Over the
sensitivity ball the worst case is

* :math:`\ell_2`: :math:`\sup_{\|v\|_2 \le \Delta} \sqrt{v^\top A v} =
  \Delta\sqrt{\lambda_{\max}(A)}` (the Rayleigh quotient);
* :math:`\ell_1`: :math:`v \mapsto v^\top A v` is convex, so its maximum over the
  cross-polytope is at a vertex :math:`\pm\Delta e_i`: :math:`\Delta\sqrt{\max_i A_{ii}}`;
* :math:`\ell_\infty`: likewise at a vertex of the cube, a sign vector :math:`s`:
  :math:`\Delta\sqrt{\max_s s^\top A s}` (the :math:`2^{d-1}` sign vectors are enumerated,
  :math:`d \le 12`).

(for :math:`d \ge 3` and a non-diagonal :math:`A` in :math:`\ell_2`,
:math:`\lambda_{\max}` is a certified root of the characteristic polynomial in Arb balls,
rounded up in the 33rd digit: the profile is then an upper bound within 1e-30 relative),
and every smaller shift is a Gaussian pair with a smaller :math:`\mu_v`, which is no less
private (the Gaussian trade-off functions are ordered).  So the mechanism's profile is
exactly the analytic Gaussian profile with :math:`\mu = \Delta_{\mathrm{eff}}`, the worst
case attained.  Isotropic noise :math:`N(0, \sigma^2 I)` gives :math:`\Delta/\sigma` in the
:math:`\ell_2` and :math:`\ell_1` norms and :math:`\Delta\sqrt d/\sigma` in
:math:`\ell_\infty`.

Other multivariate densities (a product of Laplace densities with an :math:`\ell_1` ball,
spherically symmetric non-Gaussian noise) are refused by name: the loss is then not a
function of one coordinate and no worst-case direction is proved here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import sympy

from symgdp.errors import DomainError, ProfileError
from symgdp.symbolic.budget import run_bounded

__all__ = ["NORMS", "VectorReduction", "reduce_vector_gaussian"]

#: the sensitivity norms the reduction covers
NORMS = ("l2", "l1", "linf")

_MAX_CUBE_DIM = 12


@dataclass(frozen=True)
class VectorReduction:
    r"""A vector Gaussian density reduced to the one-dimensional shift.

    Attributes:
        density: the density as given, in ``variables``.
        variables: :math:`(x_1, \dots, x_d)`.
        precision: the precision matrix :math:`A` (a SymPy ``Matrix``).
        norm: the sensitivity norm.
        factor: :math:`\Delta_{\mathrm{eff}}/\Delta` (e.g. :math:`\sqrt{\lambda_{\max}(A)}`).
        text: the reduction in words, for the derivation.
        relation: the neighbouring relation assumed, with the norm.
    """

    density: sympy.Expr
    variables: tuple[sympy.Symbol, ...]
    precision: sympy.Matrix
    norm: str
    factor: sympy.Expr
    text: str
    relation: str


def _variables(variable: Any) -> tuple[sympy.Symbol, ...]:
    out = []
    for v in variable:
        if isinstance(v, str):
            v = sympy.Symbol(v, real=True)
        if not isinstance(v, sympy.Symbol):
            raise DomainError(f"each variable must be a SymPy Symbol or a name, got {v!r}")
        out.append(v)
    if len({v.name for v in out}) != len(out):
        raise DomainError(f"the variables {tuple(out)} repeat a name")
    if len(out) < 2:
        raise DomainError(f"a vector density needs at least two variables, got {tuple(out)} "
                          "(give one variable, not a list, for noise on the line)")
    return tuple(out)


def _expression(noise: Any, xs: tuple[sympy.Symbol, ...]) -> sympy.Expr:
    if isinstance(noise, str):
        from symgdp.symbolic.parsing import parse_expression

        expr = parse_expression(noise, symbols={x.name: sympy.Symbol(x.name, real=True)
                                                for x in xs}, rational=True)
    else:
        try:
            expr = sympy.sympify(noise, strict=True)
        except (sympy.SympifyError, TypeError) as exc:
            raise DomainError(f"the noise must be a SymPy expression in the variables, got "
                              f"{noise!r}") from exc
    if not isinstance(expr, sympy.Expr) or isinstance(expr, sympy.logic.boolalg.Boolean):
        raise DomainError(f"the noise must be a density p(x_1, ..., x_d), got {expr}")
    by_name = {s.name: s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}
    real = {by_name[x.name]: sympy.Symbol(x.name, real=True) for x in xs if x.name in by_name}
    missing = [x.name for x in xs if x.name not in by_name]
    if missing:
        raise DomainError(f"{expr} is not a density in {', '.join(x.name for x in xs)}: it "
                          f"does not depend on {', '.join(missing)}")
    expr = expr.xreplace(real)
    for s in expr.free_symbols - set(real.values()):
        if s.is_real is not True:
            raise DomainError(f"the parameter {s} of the density {expr} is not declared real: "
                              f"declare it, e.g. sympy.Symbol({s.name!r}, positive=True)")
    return expr


def _quadratic(expr: sympy.Expr, xs: tuple[sympy.Symbol, ...]) -> tuple | None:
    """(A, b, c, proved normalised) from log p = c + b.x - x.A.x/2 (bounded child)."""
    lp = sympy.expand(sympy.expand_log(sympy.log(expr), force=True))
    try:
        poly = sympy.Poly(lp, *xs)
    except sympy.PolynomialError:
        return None
    if poly.total_degree() != 2 or any(x in c.free_symbols for c in poly.coeffs()
                                       for x in xs):
        return None
    d = len(xs)
    A = sympy.zeros(d, d)
    b = sympy.zeros(d, 1)
    for i, xi in enumerate(xs):
        b[i] = poly.coeff_monomial(xi)
        for j, xj in enumerate(xs):
            c = poly.coeff_monomial(xi * xj)
            A[i, j] = -2 * c if i == j else -c
    const = poly.coeff_monomial(1)
    pd = A.is_positive_definite
    if pd is not True:
        return A, b, const, pd, None
    # the mass: exp(c + b.A^{-1}.b/2) sqrt((2 pi)^d / det A) = 1
    mass = sympy.exp(const + (b.T * A.inv() * b)[0, 0] / 2) \
        * sympy.sqrt((2 * sympy.pi) ** d / A.det())
    m = sympy.simplify(mass)
    return A, b, const, True, m


def _factor(A: sympy.Matrix, norm: str) -> sympy.Expr:
    """Delta_eff / Delta over the norm's unit ball (bounded child)."""
    d = A.shape[0]
    if norm == "l1":
        return sympy.sqrt(sympy.Max(*[A[i, i] for i in range(d)]))
    if norm == "linf":
        vals = []
        for signs in itertools.product((1, -1), repeat=d - 1):
            s = sympy.Matrix([1, *signs])
            vals.append(sympy.expand((s.T * A * s)[0, 0]))
        return sympy.sqrt(sympy.Max(*vals))
    if A.is_diagonal():
        return sympy.sqrt(sympy.Max(*[A[i, i] for i in range(d)]))
    if d == 2:  # the larger root of the quadratic: real radicals
        a, b, c = A[0, 0], A[0, 1], A[1, 1]
        return sympy.sqrt((a + c) / 2 + sympy.sqrt(((a - c) / 2) ** 2 + b**2))
    if any(not e.is_Rational for e in A):
        raise ProfileError(f"the largest eigenvalue of the symbolic precision matrix "
                           f"{A.tolist()} is not found in closed form (d = {d})")
    return sympy.sqrt(_lambda_max_up(A))


def _lambda_max_up(A: sympy.Matrix) -> sympy.Rational:
    """A rational upper bound on the largest eigenvalue of a rational symmetric matrix
    within 1e-30 relative: the certified complex roots of its characteristic polynomial
    (Arb balls, python-flint), the largest real part's upper end rounded up."""
    from flint import acb, arb, ctx, fmpq, fmpq_poly

    coeffs = [sympy.Rational(c) for c in A.charpoly().all_coeffs()[::-1]]
    poly = fmpq_poly([fmpq(int(c.p), int(c.q)) for c in coeffs])
    with ctx.workprec(200):
        roots = poly.complex_roots()
        top = max((acb(pair[0]).real for pair in roots),  # type: ignore[index]
                  key=lambda b: b.upper())
        up = arb(top.upper())
    # the exact binary value of the upper end, then up to 32 significant digits
    m, e = up.mid().man_exp()
    exact = sympy.Rational(int(m)) * sympy.Rational(2) ** int(e)
    digits = 32 - int(sympy.floor(sympy.log(exact, 10)))
    return sympy.ceiling(exact * 10**digits) / sympy.Integer(10) ** digits


def reduce_vector_gaussian(noise: Any, variable: Any, norm: str = "l2", *,
                           timeout: float | None = None) -> VectorReduction:
    r"""Read a vector Gaussian density and reduce it to the one-dimensional shift.

    Args:
        noise: the density :math:`p(x_1, \dots, x_d)` (a SymPy expression or a string,
            parsed safely); parameters declared real (scales ``positive=True``).
        variable: the variables :math:`(x_1, \dots, x_d)`, :math:`d \ge 2` (Symbols or
            names).
        norm: ``"l2"``, ``"l1"`` or ``"linf"``: the norm of the sensitivity ball.
        timeout: budget in seconds of each bounded SymPy step.

    Returns:
        :class:`VectorReduction`: ``factor`` with :math:`\Delta_{\mathrm{eff}} =
        \Delta\cdot` ``factor`` (module notes).

    Raises:
        DomainError: bad variables or norm, a density not normalised (its mass named).
        ProfileError: a density that is not Gaussian (its log not a quadratic polynomial
            in the variables), a precision matrix not proved positive definite, or a
            worst case that is not found in the budget.

    Example:
        >>> import sympy
        >>> x, y = sympy.symbols("x y", real=True)
        >>> s = sympy.Symbol("sigma", positive=True)
        >>> p = sympy.exp(-(x**2 + y**2) / (2 * s**2)) / (2 * sympy.pi * s**2)
        >>> reduce_vector_gaussian(p, (x, y), "l2").factor
        1/sigma
        >>> reduce_vector_gaussian(p, (x, y), "linf").factor
        sqrt(2)/sigma
    """
    if norm not in NORMS:
        raise DomainError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    xs = _variables(variable)
    if norm == "linf" and len(xs) > _MAX_CUBE_DIM:
        raise DomainError(f"the l-infinity worst case enumerates 2^(d-1) sign vectors: "
                          f"d = {len(xs)} is above {_MAX_CUBE_DIM}")
    expr = _expression(noise, xs)
    read = run_bounded(_quadratic, expr, xs, timeout=timeout)
    if read is None:
        raise ProfileError(
            f"the density {expr} is not a Gaussian in {', '.join(x.name for x in xs)} (its "
            "logarithm is not a quadratic polynomial in them): only Gaussian vector noise is "
            "reduced exactly; for other multivariate densities (e.g. a product of Laplace "
            "densities with an l1 ball) no worst-case direction is proved here")
    A, _b, _c, pd, mass = read
    if pd is not True:
        what = "is not positive definite" if pd is False else \
            "is not proved positive definite"
        why = "not the density of a Gaussian" if pd is False else \
            "give its parameters as numbers, or declare them so that it follows"
        raise (DomainError if pd is False else ProfileError)(
            f"the precision matrix {A.tolist()} of the density {expr} {what}: {why}")
    if mass != 1:
        at = {s: sympy.Integer(1) for s in mass.free_symbols}
        value = sympy.N(mass.xreplace(at), 15)
        if value.is_number and abs(value - 1) > sympy.Float("1e-12"):
            shown = "" if not at else " (at " + ", ".join(f"{k} = 1" for k in sorted(
                at, key=str)) + ")"
            raise DomainError(f"the density {expr} integrates to {mass} over "
                              f"R^{len(xs)}, not 1: {value}{shown}")
        raise ProfileError(f"could not prove that the density {expr} integrates to 1 "
                           f"(SymPy gives {mass})")
    factor = run_bounded(_factor, A, norm, timeout=timeout)
    if factor.is_positive is not True:
        raise ProfileError(f"the worst-case shift factor {factor} is not proved positive")
    ball = {"l2": "||v||_2", "l1": "||v||_1", "linf": "||v||_inf"}[norm]
    where = {"l2": "sqrt(lambda_max(A)) (the Rayleigh quotient)",
             "l1": "sqrt(max_i A_ii) (v'Av is convex: its maximum on the l1 ball is at a "
                   "vertex +-Delta e_i)",
             "linf": "sqrt(max_s s'As) over sign vectors s (v'Av is convex: its maximum on "
                     "the cube is at a vertex)"}[norm]
    rounded = norm == "l2" and len(xs) > 2 and not A.is_diagonal()
    how = ("lambda_max rounded up from a certified root of the characteristic polynomial "
           "(within 1e-30 relative), so the profile below is an upper bound on the exact one"
           if rounded else "attained, so the mechanism is exactly the 1-D Gaussian shift "
           "below")
    text = (f"Z ~ N(b, A^-1) on R^{len(xs)} with precision A = {A.tolist()}: a shift v has "
            "the affine loss v'A(x - b) - v'Av/2, the loss of the 1-D Gaussian pair with "
            "mu_v = sqrt(v'Av) (Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, Thm 2.7); "
            f"over the ball {ball} <= Delta the worst case is Delta {where} = "
            f"{sympy.Symbol('Delta') * factor}, {how} (N(0, 1), sensitivity Delta_eff)")
    plain = {"l2": "||f(D) - f(D')||_2", "l1": "||f(D) - f(D')||_1",
             "linf": "||f(D) - f(D')||_inf"}[norm]
    relation = (f"neighbours D ~ D' with {plain} <= Delta, under whichever relation "
                "(add/remove or replace-one) Delta is the sensitivity for")
    return VectorReduction(expr, xs, A, norm, factor, text, relation)
