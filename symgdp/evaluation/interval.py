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
  It and the other balls of the Gaussian family live in :mod:`symgdp.gaussian.gdp_balls`.

:func:`prove` runs a three-valued check at increasing working precision until it is
decided; precision is always scoped with ``flint.ctx.workprec`` (never set globally).  It,
:func:`to_arb` and the three-valued comparisons live in :mod:`symgdp.numerics.balls`.

Example:
    >>> from flint import arb
    >>> d = delta_mu_arb(2000.0, 1.0, prec=64)
    >>> d.mid().str(3, radius=False)
    '1.88e-868162'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import sympy
from flint import arb, fmpq, fmpz
from sympy.codegen.cfunctions import expm1 as _expm1
from sympy.printing.lambdarepr import LambdaPrinter

from symgdp.gaussian.gdp_balls import (
    Erfcx,
    ErfcxDiff,
    delta_mu_arb,
    erfc_form,
    erfcx_arb,
    erfcx_diff_arb,
    erfcx_diff_orders_arb,  # noqa: F401 - re-exported: symgdp.evaluation.interval.erfcx_diff_orders_arb
    log_delta_mu_arb,
    log_delta_mu_upper,
)
from symgdp.numerics.balls import (
    PRECISIONS,
    ArbUnsupported,
    and3,
    ball_ipow,
    ball_log,
    ball_max,
    ball_min,
    ball_monotone,
    ball_piecewise,
    ball_rpow,
    ball_sqrt,
    eq3,
    float_exact,
    ge3,
    gt3,
    le3,
    lt3,
    ne3,
    not3,
    or3,
    prove,
    to_arb,
    tri,
)
from symgdp.symbolic.implicit import LogDeltaRoot, log_delta_root_arb

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

def _dirac(x: Any, *k: Any) -> arb:
    """DiracDelta (and its derivatives): 0 where the argument is provably non-zero, NaN
    (undecided) on a ball that may contain the singular point."""
    x = to_arb(x)
    if x > 0 or x < 0:
        return arb(0)
    return arb("nan")


def _heaviside(x: Any, h0: Any = None) -> arb:
    x = to_arb(x)
    lo = tri(x > 0, x < 0)
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
    "exp": lambda x: ball_monotone(to_arb(x), arb.exp),
    "log": ball_log,
    "sqrt": ball_sqrt,
    "erf": lambda x: ball_monotone(to_arb(x), arb.erf),
    "erfc": lambda x: ball_monotone(to_arb(x), arb.erfc),
    "erfinv": lambda x: ball_monotone(to_arb(x), arb.erfinv),
    "erfcinv": lambda x: ball_monotone(to_arb(x), arb.erfcinv),
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
    "expm1": lambda x: ball_monotone(to_arb(x), arb.expm1),
    "ErfcxDiff": erfcx_diff_arb,
    "DiracDelta": _dirac,
    # printed under its own name: lambdify's implemented-function table would otherwise
    # put the float root search (LogDeltaRoot._imp_) in its place
    "LogDeltaRootBall": log_delta_root_arb,
    "ball_ipow": ball_ipow,
    "ball_rpow": ball_rpow,
    "ball_max": ball_max,
    "ball_min": ball_min,
    "_pw": ball_piecewise,
    "lt3": lt3,
    "le3": le3,
    "gt3": gt3,
    "ge3": ge3,
    "eq3": eq3,
    "ne3": ne3,
    "and3": and3,
    "or3": or3,
    "not3": not3,
}

_FUNCTIONS = {
    sympy.exp, sympy.log, sympy.erf, sympy.erfc, sympy.erfinv, sympy.erfcinv, sympy.Abs,
    sympy.sin, sympy.cos,
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
        if man == 0:
            return self._const(fmpz(0))
        return self._const(float_exact(expr))

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
            return f"ball_ipow({self._print(base)}, {int(e)})"
        return f"ball_rpow({self._print(base)}, {self._print(e)})"

    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        fn = {"<": "lt3", "<=": "le3", ">": "gt3", ">=": "ge3", "==": "eq3",
              "!=": "ne3"}[expr.rel_op]
        return f"{fn}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_And(self, expr: Any) -> str:
        return "and3(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: Any) -> str:
        return "or3(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: Any) -> str:
        return f"not3({self._print(expr.args[0])})"

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
        return "ball_max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr: Any) -> str:
        return "ball_min(" + ", ".join(self._print(a) for a in expr.args) + ")"

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


def _exact(f: sympy.Float) -> fmpq | arb:
    """The binary number a finite, non-zero SymPy Float stores, exactly (an exact ball
    when its exponent is too large for a rational, see float_exact)."""
    return float_exact(f)


CONST_BALLS = "_const"  # name prefix of the symbols standing for decimal literals


def abstract_constants(expr: sympy.Basic
                        ) -> tuple[sympy.Basic, tuple[sympy.Symbol, ...],
                                   tuple[fmpq | arb, ...]]:
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
        >>> e, syms, vals = abstract_constants(0.75 - 0.25 * sympy.exp(x))
        >>> e, vals
        (_const0 - _const1*exp(x), (3/4, 1/4))
    """
    # an implicit root is compiled with its numbers: whether its residual is undefined
    # at the origin is decided from them (LogDeltaRoot)
    if not expr.has(sympy.Float) or expr.has(LogDeltaRoot) or any(
            s.name.startswith(CONST_BALLS) for s in expr.free_symbols):
        return expr, (), ()
    # exponents (x**0.5 is a square root, x**2.0 an exact square) and the integer
    # indices of Erfcx, ErfcxDiff and DiracDelta decide the form of the code
    kept = {p.exp for p in expr.atoms(sympy.Pow)}
    for f in expr.atoms(Erfcx, ErfcxDiff, sympy.DiracDelta):
        kept.update(f.args[2:] if isinstance(f, ErfcxDiff) else f.args[1:])
    values: dict[fmpq | arb, sympy.Symbol] = {}
    mapping: dict[sympy.Float, sympy.Expr] = {}
    for node in sympy.preorder_traversal(expr):
        if not isinstance(node, sympy.Float) or node in mapping or node in kept:
            continue
        if node._mpf_[1] == 0:
            continue
        v = _exact(node)  # an exact ball beyond a rational's reach (see float_exact)
        a = -v if v < 0 else v
        sym = values.get(a)
        if sym is None:
            sym = values[a] = sympy.Symbol(f"{CONST_BALLS}{len(values)}", positive=True)
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
    expr, csyms, cvals = abstract_constants(expr)
    if csyms and any(str(s).startswith(CONST_BALLS) for s in (var, *params)):
        raise ArbUnsupported(f"a parameter is named like the internal symbols {CONST_BALLS}N")
    fn = _compile_arb(expr, var, tuple(params) + csyms, cse)

    def call(x: Any, *ps: Any) -> Any:
        out = fn(to_arb(x), *(to_arb(p) for p in ps), *(arb(c) for c in cvals))
        if isinstance(out, (tuple, list)):  # a sympy.Tuple of expressions
            return tuple(to_arb(v) for v in out)
        return to_arb(out)

    return call


def kept_params(expr: sympy.Expr, values: Sequence[tuple[sympy.Symbol, sympy.Expr]],
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


def param_value(v: sympy.Expr) -> Any:
    """A parameter value fed to a ball function: exact where it is a number (a Float is
    the binary number it stores), else its ball at the precision of the call."""
    if isinstance(v, sympy.Float) and v._mpf_[1] != 0:
        return _exact(v)
    if v.is_Rational:
        return fmpq(int(v.p), int(v.q))
    return ParamBall(lambdify_arb(v, _NO_VAR))


_NO_VAR = sympy.Dummy("x")  # the variable of a constant compiled as a ball function


class ParamBall:
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
    expr = erfc_form(expr)  # 1 - erf(u) as erfc(u): no cancellation to resolve
    kept = kept_params(expr, values, True)
    names = {s for s, _ in kept}
    f = lambdify_arb(expr.xreplace({s: v for s, v in values if s not in names}), var,
                     tuple(s for s, _ in kept))
    pvals = tuple(param_value(v) for _, v in kept)

    def delta(x: Any) -> arb:
        # values above 1 are vacuous and read as 1 (the Profile convention)
        ps = (p.ball() if isinstance(p, ParamBall) else p for p in pvals)
        return f(x, *ps).min(arb(1))

    return delta
