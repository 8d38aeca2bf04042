r"""Safe parsing of user strings into SymPy expressions and equations.

A privacy profile :math:`\delta(\varepsilon)` or a trade-off equation
:math:`\sigma = f(\varepsilon, \delta)` typed by a user (on the command line, in a notebook,
in a configuration file) must never reach :func:`eval`, :func:`exec`, ``sympify`` or
``parse_expr`` -- all of which evaluate Python code.  This module instead parses the text
with :func:`ast.parse` (``mode="eval"``) and builds the SymPy tree itself from an explicit
whitelist of node types.  Everything else raises :class:`~symgdp.errors.ParseError` with a
message quoting the offending piece.

The accepted language:

* numbers: integer and decimal literals (``3``, ``1.25``, ``1e-5``, ``1_000``).  Decimals
  become SymPy ``Float`` keeping every typed digit (or exact ``Rational`` with
  ``rational=True``); ``1/3`` is the exact rational :math:`1/3`, not a float.
* ``+ - * / **`` and unary ``+ -``.  ``^`` means power, as in mathematics (``e^-eps``,
  ``eps^2/2``); Python's bitwise xor is not available.  Unicode ``−``, ``×``, ``·``, ``⋅``
  and ``÷`` are read as ``-``, ``*``, ``*``, ``*`` and ``/``, and ``≤ ≥ ≠`` as
  ``<= >= !=``.
* names: ``eps``, ``epsilon``, ``varepsilon``, ``ε`` (also ``ϵ``) for
  :data:`symgdp.eps`; ``delta``/``δ``, ``sigma``/``σ``, ``mu``/``μ``, ``gamma``/``γ`` for
  the canonical symbols of :mod:`symgdp.symbolic.symbols`; ``pi``/``π``, ``E`` and ``e`` for the
  constants; a single Greek letter is named after it (``λ`` is the symbol ``lambda``,
  ``Δ`` is ``Delta``).  Any other identifier is a parameter: a positive real SymPy
  ``Symbol`` of that name.  ``symbols=`` overrides or extends all of these.
* calls of whitelisted functions, by name, with positional arguments: ``exp``, ``log``
  (also ``ln``; ``log(x, b)`` is the base-``b`` logarithm), ``sqrt``, ``erf``, ``erfc``,
  ``erfinv``, ``erfcinv``, ``Phi``/``Φ`` (the standard normal CDF
  :math:`\Phi(x) = \operatorname{erfc}(-x/\sqrt 2)/2`), ``Abs``/``abs``, ``Max``/``max``,
  ``Min``/``min``, ``floor``, ``ceiling``/``ceil``, ``binomial``, ``Heaviside``,
  ``gamma``/``Gamma`` (called: the Gamma function; the bare ``gamma`` is the symbol),
  ``Piecewise((expr, cond), ...)`` and ``Sum(term, (j, lo, hi))``: a sum, left unevaluated,
  over the integer ``j`` (a fresh integer symbol, seen only inside ``term``) from ``lo`` to
  ``hi``, integer numbers or ``-oo``/``oo``, at least one of them infinite (the only
  place infinities are read: the normaliser
  of a PMF on the integers, ``exp(-x**2/2)/Sum(exp(-j**2/2), (j, -oo, oo))``).
* comparisons ``< <= > >= == !=`` (chains allowed), ``and``/``&``, ``or``/``|``,
  ``not``/``~``, ``True`` and ``False`` -- only inside a ``Piecewise`` condition.

Refused before anything is evaluated: texts longer than ``max_length``; more than
:data:`MAX_NODES` syntax nodes or nesting deeper than :data:`MAX_DEPTH`; literals with more
than :data:`MAX_LITERAL_DIGITS` digits or a decimal exponent beyond
:data:`MAX_LITERAL_EXPONENT`; attribute access, subscripts, keywords, strings, f-strings,
lambdas, comprehensions, starred arguments, names starting with ``_`` and plain names that
are SymPy functions (``exp``, ``sin``, ``factorial``, ...).  The tree is built bottom-up and
every power whose base and exponent are numbers is sized *before* SymPy evaluates it:
``9**9**9**9`` stops at ``9**387420489``.  No number built along the way may exceed
:data:`MAX_DIGITS` decimal digits, and numeric exponents are limited to
:data:`MAX_EXPONENT` in absolute value.  SymPy compares the arguments of ``Max``/``Min``
pairwise (seconds for a dozen symbolic ones), so their number is limited too
(:data:`MAX_EXTREMUM_ARGS` per call, :data:`MAX_EXTREMUM_TOTAL` in all).  Constants that
are not plain numbers are sized in float64 before they become an exponent, so towers such
as ``exp(exp(exp(20)))`` -- which SymPy would try to evaluate at the first comparison --
are refused.  Results that are undefined (``1/0``, ``log(0)``) are refused too.

What slips past these limits is stopped by a wall-clock budget (``timeout=``, default
:data:`DEFAULT_TIMEOUT` seconds; ``SIGALRM`` in the main thread of a POSIX process).
Only the text's own sub-expressions are evaluated here; later symbolic work on the result
(limits, solving) is bounded by :mod:`symgdp.symbolic.budget`.
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mpmath
import scipy.special
import sympy

from symgdp.errors import ParseError
from symgdp.symbolic.budget import OutOfTime, with_budget
from symgdp.symbolic.symbols import ALIASES

__all__ = [
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "MAX_EXTREMUM_ARGS",
    "MAX_EXTREMUM_TOTAL",
    "DEFAULT_TIMEOUT",
    "MAX_LITERAL_DIGITS",
    "MAX_LITERAL_EXPONENT",
    "MAX_NODES",
    "parse_equation",
    "parse_expression",
]

#: most syntax nodes (names, numbers, operations, calls) in one text
MAX_NODES = 1000
#: deepest nesting of operations and calls
MAX_DEPTH = 60
#: most significant digits in one numeric literal
MAX_LITERAL_DIGITS = 100
#: largest decimal exponent of a literal such as ``1e-300``
MAX_LITERAL_EXPONENT = 1000
#: most decimal digits of any number the parser builds (numerator and denominator alike)
MAX_DIGITS = 1000
#: largest absolute value of a numeric exponent
MAX_EXPONENT = 10**6
#: most arguments of one Max or Min (after SymPy's flattening of nested ones)
MAX_EXTREMUM_ARGS = 6
#: most Max/Min arguments in one text
MAX_EXTREMUM_TOTAL = 16
#: default wall-clock budget (seconds) for building the SymPy tree of one text
DEFAULT_TIMEOUT = 3.0
# SymPy looks for exact roots of integers by factoring: keep the radicand small.
_MAX_ROOT_DIGITS = 300
# Largest |x| for which a Float argument of exp is evaluated: e^x then has <= MAX_DIGITS digits.
_MAX_EXP_ARG = MAX_DIGITS * math.log(10)
# mpmath's erf family has overflow paths for enormous arguments; nothing useful lies beyond.
_MAX_SPECIAL_ARG = 1e6
# Numeric arguments of binomial: SymPy evaluates binomial(n, k) of integers exactly.
_MAX_BINOMIAL = 10**5
_QUOTE_LEN = 60

_UNICODE_OPERATORS = str.maketrans({"−": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/",
                                     "≤": "<=", "≥": ">=", "≠": "!="})

_CONSTANTS: dict[str, sympy.Expr] = {"pi": sympy.pi, "E": sympy.E, "e": sympy.E}

# Unicode spells the letter "lamda"; SymPy and LaTeX spell it "lambda".
_GREEK_SPELLING = {"lamda": "lambda", "Lamda": "Lambda"}

_OPERATORS: dict[type, str] = {
    ast.FloorDiv: "'//' (floor division)", ast.Mod: "'%' (modulo)",
    ast.MatMult: "'@' (matrix product)", ast.BitAnd: "'&'", ast.BitOr: "'|'",
    ast.BitXor: "bitwise xor", ast.LShift: "'<<'", ast.RShift: "'>>'",
    ast.Invert: "'~'", ast.Is: "'is'", ast.IsNot: "'is not'", ast.In: "'in'",
    ast.NotIn: "'not in'", ast.Not: "'not'",
}

_REFUSED_NODES: dict[type, str] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Slice: "slices",
    ast.Lambda: "lambdas",
    ast.IfExp: "conditional expressions (use Piecewise)",
    ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments",
    ast.keyword: "keyword arguments",
    ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings",
    ast.List: "lists",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}

_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Constant,
                  ast.Compare, ast.BoolOp, ast.Tuple)
_ALLOWED_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitAnd, ast.BitOr)
_ALLOWED_UNARY = (ast.UAdd, ast.USub, ast.Not, ast.Invert)
_COMPARISONS: dict[type, Callable[..., sympy.Basic]] = {
    ast.Lt: sympy.Lt, ast.LtE: sympy.Le, ast.Gt: sympy.Gt, ast.GtE: sympy.Ge,
    ast.Eq: sympy.Eq, ast.NotEq: sympy.Ne,
}
# Operators of equal precedence that Python chains to the left: a chain is one level deep.
_CHAIN_GROUP: dict[type, str] = {ast.Add: "+", ast.Sub: "+", ast.Mult: "*", ast.Div: "*"}
_GRAMMAR_NODES = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)

_UNDEFINED = (sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)


@dataclass(frozen=True, slots=True)
class _Function:
    min_args: int
    max_args: int | None
    build: Callable[[_Builder, list[sympy.Expr], ast.Call], sympy.Expr]


def _quote(piece: str) -> str:
    piece = " ".join(piece.split())
    if len(piece) > _QUOTE_LEN:
        piece = piece[: _QUOTE_LEN - 3] + "..."
    return repr(piece)


def _greek_name(name: str) -> str:
    """``λ`` → ``lambda``, ``Δ`` → ``Delta``; any other identifier unchanged."""
    if len(name) != 1:
        return name
    m = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", unicodedata.name(name, ""))
    if not m:
        return name
    word = m.group(2).lower()
    word = word if m.group(1) == "SMALL" else word.capitalize()
    return _GREEK_SPELLING.get(word, word)


def _digits(x: sympy.Expr) -> float:
    """Decimal size of a SymPy number: digits of numerator/denominator, or |log10| of a Float."""
    if x.is_zero:
        return 0.0
    if isinstance(x, sympy.Rational):
        return max(math.log10(abs(int(x.p))), math.log10(int(x.q)))
    if isinstance(x, sympy.Float):
        with mpmath.workdps(15):
            return abs(float(mpmath.log10(abs(mpmath.mpf(x)))))
    return 0.0


def _is_float(x: sympy.Expr) -> bool:
    return isinstance(x, sympy.Float)


def _names_sympy_functions() -> frozenset[str]:
    """Public SymPy names that are callables, except single letters and Greek letter names.

    Single letters (``N``, ``S``, ``Q``, ``C``) and Greek names (``beta``, ``zeta``) are the
    natural names of parameters, so they stay available as symbols.
    """
    greek = {unicodedata.name(chr(c)).split()[-1].lower() for c in range(0x3B1, 0x3CA)
             if c != 0x3C2} | {"lambda"}
    out = set()
    for n in dir(sympy):
        if n.startswith("_") or len(n) == 1 or n.lower() in greek:
            continue
        if callable(getattr(sympy, n, None)):
            out.add(n)
    return frozenset(out)


_SYMPY_CALLABLES = _names_sympy_functions()


_FLOAT_FUNCS: dict[type, Callable[..., float]] = {
    sympy.exp: math.exp, sympy.log: math.log, sympy.erf: math.erf, sympy.erfc: math.erfc,
    sympy.erfinv: scipy.special.erfinv, sympy.erfcinv: scipy.special.erfcinv,
    sympy.Abs: abs, sympy.floor: math.floor, sympy.ceiling: math.ceil,
}


def _float_value(e: sympy.Basic) -> float | None:
    """float64 value of a constant expression (``±inf`` on overflow), or ``None``.

    Used only to size constants before SymPy evaluates them, never as a result, so
    rounding does not matter; anything unusual gives ``None`` ("size unknown").
    """
    try:
        if e.is_Number:
            try:
                return float(e)
            except OverflowError:
                return math.copysign(math.inf, float(sympy.sign(e)))
        if e.is_NumberSymbol:
            return float(e)
        args = [_float_value(a) for a in e.args]
        if any(a is None for a in args):
            return None
        if isinstance(e, sympy.Add):
            return math.fsum(args)  # type: ignore[arg-type]
        if isinstance(e, sympy.Mul):
            return math.prod(args)  # type: ignore[arg-type]
        if isinstance(e, sympy.Pow):
            b, x = args
            return b ** x  # type: ignore[operator]
        if isinstance(e, (sympy.Max, sympy.Min)):
            return (max if isinstance(e, sympy.Max) else min)(args)  # type: ignore[type-var]
        f = _FLOAT_FUNCS.get(type(e))
        if f is not None and len(args) == 1:
            return float(f(args[0]))
    except OverflowError:
        return math.inf
    except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
        return None
    return None


class _Builder:
    """Walks a checked AST and builds the SymPy tree, sizing numbers before evaluating."""

    def __init__(self, text: str, symbols: Mapping[str, sympy.Expr], rational: bool) -> None:
        self.text = text
        self.symbols = symbols
        self.rational = rational
        self.extremum_args = 0

    # -- helpers -----------------------------------------------------------------------------
    def piece(self, node: ast.AST) -> str:
        seg = ast.get_source_segment(self.text, node)
        return _quote(seg if seg is not None else ast.dump(node))

    def fail(self, node: ast.AST, why: str) -> ParseError:
        return ParseError(f"{why}: {self.piece(node)}")

    def sized(self, value: sympy.Expr, node: ast.AST) -> sympy.Expr:
        if value.is_Number and _digits(value) > MAX_DIGITS:
            raise self.fail(node, f"a number with more than {MAX_DIGITS} digits arises in")
        # An undefined piece must be refused where it arises: SymPy may absorb it later
        # (log(2, 0) = log(2)/zoo evaluates to 0, and 0*eps vanishes from a sum).
        if _undefined(value):
            raise self.fail(node, f"undefined or infinite value ({value}) in")
        return value

    # -- expressions -------------------------------------------------------------------------
    def expr(self, node: ast.AST) -> sympy.Expr:
        if isinstance(node, ast.Constant):
            return self.number(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(getattr(node, "op", None), (ast.Not, ast.Invert, ast.BitAnd, ast.BitOr)):
            raise self.fail(node, f"{_OPERATORS[type(node.op)]} is for Piecewise conditions only")  # type: ignore[attr-defined]  # noqa: E501
        if isinstance(node, ast.UnaryOp):
            value = self.expr(node.operand)
            return self.sized(-value if isinstance(node.op, ast.USub) else value, node)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                return self.power(self.expr(node.left), self.expr(node.right), node)
            return self.chain(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            raise self.fail(node, "comparisons are only allowed as Piecewise conditions")
        if isinstance(node, ast.Tuple):
            raise self.fail(node, "tuples are only allowed as Piecewise pieces (expr, cond) "
                                  "and Sum limits (j, lo, hi)")
        raise self.fail(node, "unsupported syntax")  # unreachable after _check_tree

    def chain(self, node: ast.BinOp) -> sympy.Expr:
        """``a + b - c + ...`` or ``a * b / c * ...`` in one SymPy call.

        Python nests such chains to the left, one level per operator; walking the spine
        iteratively keeps long sums (explicit compositions) within the recursion limit.
        """
        group = _CHAIN_GROUP[type(node.op)]
        spine: list[tuple[ast.operator, ast.AST]] = []
        cur: ast.AST = node
        while isinstance(cur, ast.BinOp) and _CHAIN_GROUP.get(type(cur.op)) == group:
            spine.append((cur.op, cur.right))
            cur = cur.left
        terms = [self.expr(cur)]
        for op, right in reversed(spine):
            value = self.expr(right)
            if isinstance(op, ast.Sub):
                value = -value
            elif isinstance(op, ast.Div):
                value = sympy.Pow(value, -1)
            terms.append(value)
        return self.sized(sympy.Add(*terms) if group == "+" else sympy.Mul(*terms), node)

    def number(self, node: ast.Constant) -> sympy.Expr:
        v = node.value
        if isinstance(v, bool):
            raise self.fail(node, "True/False are only allowed as Piecewise conditions")
        if isinstance(v, int):
            if v and math.log10(abs(v)) >= MAX_LITERAL_DIGITS:
                raise self.fail(node, f"integer literal with more than {MAX_LITERAL_DIGITS} "
                                      "digits")
            return sympy.Integer(v)
        if isinstance(v, float):
            return self.decimal(node)
        if isinstance(v, complex):
            raise self.fail(node, "complex numbers are not allowed")
        if isinstance(v, (str, bytes)):
            raise self.fail(node, "strings are not allowed")
        raise self.fail(node, f"the constant {v!r} is not allowed")

    def decimal(self, node: ast.Constant) -> sympy.Expr:
        # Build from the typed text, not the Python float, so "0.1" keeps its digits and
        # "1e-400" is not flushed to zero.
        seg = (ast.get_source_segment(self.text, node) or "").replace("_", "").lower()
        mantissa, _, expo = seg.partition("e")
        sig = re.sub(r"\D", "", mantissa).lstrip("0")
        if len(sig) > MAX_LITERAL_DIGITS:
            raise self.fail(node, f"decimal literal with more than {MAX_LITERAL_DIGITS} digits")
        if expo:
            body = expo.lstrip("+-")
            if len(body) > 6 or abs(int(expo)) > MAX_LITERAL_EXPONENT:
                raise self.fail(node, "decimal exponent beyond "
                                      f"±{MAX_LITERAL_EXPONENT} in the literal")
        if self.rational:
            return sympy.Rational(seg)
        return sympy.Float(seg, max(15, len(sig)))

    def name(self, node: ast.Name) -> sympy.Expr:
        name = node.id
        if name.startswith("_"):
            raise self.fail(node, "names may not start with an underscore")
        if name in self.symbols:
            return self.symbols[name]
        name = _greek_name(name)
        if name in self.symbols:
            return self.symbols[name]
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in ALIASES:
            return ALIASES[name]
        if name in _FUNCTIONS:
            raise self.fail(node, f"{name} is a function; call it as {name}(...)")
        if name == "I":
            raise self.fail(node, "the imaginary unit is not allowed")
        if name in ("oo", "zoo", "nan", "inf", "infinity", "Infinity", "NaN"):
            raise self.fail(node, "infinities and NaN are not allowed")
        if name in _SYMPY_CALLABLES:
            raise self.fail(node, "this name is a SymPy function and cannot be a parameter")
        return sympy.Symbol(name, positive=True, real=True)

    def power(self, base: sympy.Expr, expo: sympy.Expr, node: ast.AST) -> sympy.Expr:
        if expo.is_Number:
            if abs(expo) > MAX_EXPONENT:
                raise self.fail(node, f"exponent beyond ±{MAX_EXPONENT} in")
            if base.is_Number and not base.is_zero and abs(base) != 1:
                size = float(abs(expo)) * _digits(base)
                if size > MAX_DIGITS:
                    raise self.fail(node, f"the power would have about {size:.3g} digits "
                                          f"(limit {MAX_DIGITS})")
                if (isinstance(base, sympy.Rational) and not expo.is_Integer
                        and _digits(base) > _MAX_ROOT_DIGITS):
                    raise self.fail(node, "root of an exact number with more than "
                                          f"{_MAX_ROOT_DIGITS} digits")
        elif not expo.free_symbols and not base.free_symbols:
            # b**a with a constant but not a number (2**(2**(10*pi)), E**exp(exp(20))):
            # SymPy keeps it symbolic, but any later comparison would evaluate it.
            vb, ve = _float_value(base), _float_value(expo)
            if vb is not None and ve is not None and vb != 0:
                size = abs(ve) * abs(math.log(abs(vb))) if math.isfinite(vb) else math.inf
                if not size <= _MAX_EXP_ARG:
                    raise self.fail(node, f"the power may exceed 10^±{MAX_DIGITS}")
        return self.sized(sympy.Pow(base, expo), node)

    def call(self, node: ast.Call) -> sympy.Expr:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only whitelisted functions can be called, by name")
        if node.func.id.startswith("_"):
            raise self.fail(node, "names may not start with an underscore")
        fname = _greek_name(node.func.id)
        spec = _FUNCTIONS.get(fname)
        if spec is None:
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise self.fail(node, f"unknown function {fname!r} (allowed: {allowed}) in")
        n = len(node.args)
        if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
            want = (f"{spec.min_args}" if spec.max_args == spec.min_args else
                    f"{spec.min_args} to {spec.max_args}" if spec.max_args is not None else
                    f"at least {spec.min_args}")
            raise self.fail(node, f"{fname} takes {want} argument(s), got {n}")
        if fname == "Piecewise":
            return self.piecewise(node)
        if fname == "Sum":
            return self.summation(node)
        args = [self.expr(a) for a in node.args]
        return self.sized(spec.build(self, args, node), node)

    def piecewise(self, node: ast.Call) -> sympy.Expr:
        pieces = []
        for arg in node.args:
            if not (isinstance(arg, ast.Tuple) and len(arg.elts) == 2):
                raise self.fail(arg, "a Piecewise piece must be a pair (expr, condition)")
            pieces.append((self.expr(arg.elts[0]), self.cond(arg.elts[1])))
        pw = sympy.Piecewise(*pieces)
        if not isinstance(pw, sympy.Piecewise) or pw.args[-1].cond is sympy.true:
            return pw
        if sympy.simplify(sympy.Or(*(c for _, c in pw.args))) is not sympy.true:
            # without a default the value is undefined where no condition holds
            raise self.fail(node, "a Piecewise needs a last piece (expr, True) for the values "
                                  "no condition covers")
        return pw

    def summation(self, node: ast.Call) -> sympy.Expr:
        term, limits = node.args
        if not (isinstance(limits, ast.Tuple) and len(limits.elts) == 3
                and isinstance(limits.elts[0], ast.Name)):
            raise self.fail(limits, "the limits of a Sum must be (j, lo, hi) with j a name")
        name = limits.elts[0].id
        if name.startswith("_") or _greek_name(name) in self.symbols or name in _CONSTANTS \
                or name in ALIASES or name in _FUNCTIONS or name in _SYMPY_CALLABLES:
            raise self.fail(limits.elts[0], "the index of a Sum must be a fresh name, not")
        index = sympy.Symbol(name, integer=True)
        outer, self.symbols = self.symbols, {**self.symbols, name: index}
        try:
            body = self.expr(term)
        finally:
            self.symbols = outer
        lo, hi = (self.sum_limit(e) for e in limits.elts[1:])
        if lo == sympy.oo or hi == -sympy.oo:
            raise self.fail(limits, "a Sum from oo or up to -oo is not a sum over integers")
        if lo.is_Integer and hi.is_Integer:
            raise self.fail(limits, "a Sum needs an infinite limit (write a finite sum out)")
        return self.sized(sympy.Sum(body, (index, lo, hi)), node)

    def sum_limit(self, node: ast.AST) -> sympy.Expr:
        sign = 1
        inner = node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign, inner = (-1 if isinstance(node.op, ast.USub) else 1), node.operand
        if isinstance(inner, ast.Name) and inner.id in ("oo", "inf", "infinity", "Infinity"):
            return sign * sympy.oo
        value = self.expr(node)
        if not value.is_Integer:
            raise self.fail(node, "a limit of a Sum must be an integer number or -oo/oo, not")
        return value

    def cond(self, node: ast.AST) -> sympy.Basic:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return sympy.true if node.value else sympy.false
        if isinstance(node, ast.Compare):
            parts, left = [], self.expr(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self.expr(comp)
                rel = _COMPARISONS.get(type(op))
                if rel is None:
                    raise self.fail(node, f"operator {_OPERATORS.get(type(op), '?')} in")
                parts.append(rel(left, right))
                left = right
            return sympy.And(*parts)
        if isinstance(node, ast.BoolOp) or type(getattr(node, "op", 0)) in (ast.BitAnd, ast.BitOr):
            conds = [self.cond(v) for v in getattr(node, "values", None) or (node.left, node.right)]  # type: ignore[attr-defined]  # noqa: E501 (a BinOp)
            return (sympy.And if isinstance(node.op, (ast.And, ast.BitAnd)) else sympy.Or)(*conds)  # type: ignore[attr-defined]  # noqa: E501
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert)):
            return sympy.Not(self.cond(node.operand))
        raise self.fail(node, "a Piecewise condition must be a comparison, and/or/not of "
                              "comparisons, or True")


def _one(f: Callable[[sympy.Expr], sympy.Expr], *, limit: float | None = None
         ) -> Callable[[_Builder, list[sympy.Expr], ast.Call], sympy.Expr]:
    def build(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
        (x,) = args
        # SymPy evaluates a function of a Float at once, through mpmath: size it first.
        if limit is not None and _is_float(x) and abs(x) > limit:
            raise b.fail(node, f"argument beyond ±{limit:.6g} (would evaluate to a number "
                               "out of range) in")
        return f(x)
    return build


def _exp(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
    (x,) = args
    if not x.free_symbols:
        # A Float argument is evaluated at once; a constant one (exp(exp(exp(20)))) is
        # evaluated by the first comparison, floor or Max that meets it.  Either way its
        # size must be known to be sane first.
        v = float(x) if x.is_Number else _float_value(x)
        if v is not None and not abs(v) <= _MAX_EXP_ARG:
            raise b.fail(node, f"exponent beyond ±{_MAX_EXP_ARG:.6g} (the value would lie "
                               f"outside 10^±{MAX_DIGITS}) in")
    return sympy.exp(x)


def _log(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
    for x in args:
        # log(0) is -oo and SymPy folds log(x, 0) = log(x)/log(0) to 0: refuse both
        if x.is_zero or x.is_negative or (len(args) == 2 and x is args[1] and x == 1):
            raise b.fail(node, f"log of {x} (undefined) in" if x is args[0]
                         else f"logarithm base {x} (undefined) in")
    return sympy.log(*args)


def _sqrt(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
    return b.power(args[0], sympy.Rational(1, 2), node)


def _phi(x: sympy.Expr) -> sympy.Expr:
    return sympy.erfc(-x / sympy.sqrt(2)) / 2


def _extremum(cls: Any) -> Callable[[_Builder, list[sympy.Expr], ast.Call], sympy.Expr]:
    def build(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
        # SymPy flattens Max(Max(a, b), c) and compares the arguments pairwise under the
        # assumptions system: 64 symbolic arguments take about a minute.  Count them as
        # SymPy will see them, before it does.
        n = sum(len(a.args) if isinstance(a, cls) else 1 for a in args)
        if n > MAX_EXTREMUM_ARGS:
            raise b.fail(node, f"{cls.__name__} of {n} arguments (limit {MAX_EXTREMUM_ARGS})")
        b.extremum_args += n
        if b.extremum_args > MAX_EXTREMUM_TOTAL:
            raise b.fail(node, f"more than {MAX_EXTREMUM_TOTAL} Max/Min arguments in all, "
                               "at")
        return cls(*args)
    return build


def _sized(f: Callable[..., sympy.Expr], limit: int, what: str, poles: bool = False
           ) -> Callable[[_Builder, list[sympy.Expr], ast.Call], sympy.Expr]:
    """``f`` of numbers up to ``limit`` (exact for integers: factorials), not at a pole."""
    def build(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
        for a in args:
            if a.is_Number and (abs(a) > limit or (poles and a.is_integer and a <= 0)):
                raise b.fail(node, f"{what} argument {a} (beyond {limit}, or a pole) in")
        return f(*args)
    return build


def _heaviside(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
    return sympy.Heaviside(*args)


def _unused(b: _Builder, args: list[sympy.Expr], node: ast.Call) -> sympy.Expr:
    raise AssertionError("built by _Builder.piecewise/summation")  # pragma: no cover


_FUNCTIONS: dict[str, _Function] = {
    "exp": _Function(1, 1, _exp),
    "log": _Function(1, 2, _log),
    "ln": _Function(1, 1, _log),
    "sqrt": _Function(1, 1, _sqrt),
    "erf": _Function(1, 1, _one(sympy.erf, limit=_MAX_SPECIAL_ARG)),
    "erfc": _Function(1, 1, _one(sympy.erfc, limit=_MAX_SPECIAL_ARG)),
    "erfinv": _Function(1, 1, _one(sympy.erfinv, limit=_MAX_SPECIAL_ARG)),
    "erfcinv": _Function(1, 1, _one(sympy.erfcinv, limit=_MAX_SPECIAL_ARG)),
    "Phi": _Function(1, 1, _one(_phi, limit=_MAX_SPECIAL_ARG)),
    "Abs": _Function(1, 1, _one(sympy.Abs)),
    "abs": _Function(1, 1, _one(sympy.Abs)),
    "Max": _Function(1, None, _extremum(sympy.Max)),
    "max": _Function(1, None, _extremum(sympy.Max)),
    "Min": _Function(1, None, _extremum(sympy.Min)),
    "min": _Function(1, None, _extremum(sympy.Min)),
    "floor": _Function(1, 1, _one(sympy.floor)),
    "ceiling": _Function(1, 1, _one(sympy.ceiling)),
    "ceil": _Function(1, 1, _one(sympy.ceiling)),
    "binomial": _Function(2, 2, _sized(sympy.binomial, _MAX_BINOMIAL, "binomial")),
    "gamma": _Function(1, 1, _sized(sympy.gamma, 10**4, "Gamma function", poles=True)),
    "Gamma": _Function(1, 1, _sized(sympy.gamma, 10**4, "Gamma function", poles=True)),
    "Heaviside": _Function(1, 2, _heaviside),
    "Piecewise": _Function(1, None, _unused),
    "Sum": _Function(2, 2, _unused),
}


def _undefined(value: sympy.Basic) -> bool:
    """Whether ``value`` holds an infinity or NaN outside the limits of a ``Sum``."""
    if not value.has(*_UNDEFINED):
        return False
    if not value.has(sympy.Sum):
        return True
    plain = value.replace(lambda e: isinstance(e, sympy.Sum),
                          lambda e: sympy.Dummy() if not e.function.has(*_UNDEFINED) else e)
    return bool(plain.has(*_UNDEFINED))


class _Piece:
    """The source text of a node, looked up only if an error message needs it."""

    __slots__ = ("text", "node")

    def __init__(self, text: str, node: ast.AST) -> None:
        self.text, self.node = text, node

    def __format__(self, spec: str) -> str:
        return _quote(ast.get_source_segment(self.text, self.node) or type(self.node).__name__)


def _check_tree(tree: ast.Expression, text: str) -> None:
    """Refuse unknown node types, too many nodes and too deep nesting, before building."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        piece = _Piece(text, node)
        if count > MAX_NODES:
            raise ParseError(f"the expression has more than {MAX_NODES} parts; "
                             "refusing to build it")
        if depth > MAX_DEPTH:
            raise ParseError(f"the expression is nested more than {MAX_DEPTH} levels deep "
                             f"at {piece}")
        if not isinstance(node, _ALLOWED_NODES):
            why = _REFUSED_NODES.get(type(node), f"syntax {type(node).__name__!r}")
            raise ParseError(f"{why} not allowed: {piece}")
        op = getattr(node, "op", None)
        if isinstance(node, ast.BinOp) and not isinstance(op, _ALLOWED_BINOPS):
            raise ParseError(f"operator {_OPERATORS.get(type(op), '?')} not allowed: {piece}")
        if isinstance(node, ast.UnaryOp) and not isinstance(op, _ALLOWED_UNARY):
            raise ParseError(f"operator {_OPERATORS.get(type(op), '?')} not allowed: {piece}")
        if isinstance(node, ast.Compare):
            for cop in node.ops:
                if type(cop) not in _COMPARISONS:
                    raise ParseError(f"operator {_OPERATORS.get(type(cop), '?')} not allowed: "
                                     f"{piece}")
        group = _CHAIN_GROUP.get(type(op)) if isinstance(node, ast.BinOp) else None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _GRAMMAR_NODES):
                continue
            same_chain = (group is not None and child is getattr(node, "left", None)
                          and isinstance(child, ast.BinOp)
                          and _CHAIN_GROUP.get(type(child.op)) == group)
            stack.append((child, depth if same_chain else depth + 1))


def _prepare(text: object, max_length: int) -> str:
    if not isinstance(text, str):
        raise ParseError(f"expected a string to parse, got {type(text).__name__} {text!r:.60}")
    if not isinstance(max_length, int) or max_length < 1:
        raise ParseError(f"max_length must be a positive integer, got {max_length!r}")
    if len(text) > max_length:
        raise ParseError(f"the text is {len(text)} characters long, more than max_length="
                         f"{max_length}: {_quote(text)}")
    if "\x00" in text:
        raise ParseError(f"the text contains a NUL character: {_quote(text)}")
    text = text.translate(_UNICODE_OPERATORS).replace("^", "**").strip()
    if not text:
        raise ParseError("the text is empty: nothing to parse")
    return text


def _check_timeout(timeout: object) -> None:
    if timeout is None:
        return
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout) or timeout <= 0):
        raise ParseError(f"timeout must be a positive number of seconds or None, "
                         f"got {timeout!r}")


def _normalise_symbols(symbols: Mapping[str, sympy.Expr] | None) -> dict[str, sympy.Expr]:
    out: dict[str, sympy.Expr] = {}
    for k, v in (symbols or {}).items():
        if not isinstance(k, str):
            raise ParseError(f"symbols= keys must be names (str), got {k!r}")
        if not isinstance(v, sympy.Expr):
            raise ParseError(f"symbols[{k!r}] must be a SymPy expression, got {v!r}")
        # Python normalises identifiers to NFKC; keys must match what the parser sees.
        out[unicodedata.normalize("NFKC", k)] = v
    return out


_CHARACTER_HINTS = {"√": "write sqrt(x)", "²": "write x^2", "³": "write x^3",
                    "∞": "infinity is not a number here", "∑": "write the sum out",
                    "⋅": "write *", "∗": "write *"}


def _hint(text: str, msg: str) -> str:
    """A suggestion for the commonest slips (``2eps``, ``√x``, ``x²``), or ''."""
    for char, hint in _CHARACTER_HINTS.items():
        if char in text:
            return f" ({hint})"
    if "decimal literal" in msg:
        return " (write 2*eps for a product)"
    return ""


def _parse_tree(text: str) -> ast.Expression:
    try:
        with warnings.catch_warnings():
            # Python warns about e.g. invalid escapes in string literals while parsing;
            # strings are refused anyway, and a warning must not escape as an error.
            warnings.simplefilter("ignore")
            return ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = ""
        lines = text.split("\n")
        if exc.offset is not None and exc.lineno is not None and 0 < exc.lineno <= len(lines):
            line = lines[exc.lineno - 1]
            where = f" near {_quote(line[max(exc.offset - 1, 0):][:20] or line[-20:])}"
        raise ParseError(f"cannot parse {_quote(text)}: {exc.msg}{where}{_hint(text, exc.msg)}"
                         ) from None
    except (ValueError, MemoryError, RecursionError, OverflowError) as exc:
        raise ParseError(f"cannot parse {_quote(text)}: {exc}") from None


# numbers are kept within MAX_DIGITS decimal digits (log2(10) = 3.3219... bits per digit)
_MAX_RATIONAL_BITS = int(MAX_DIGITS * 3.3219280948873626) + 1


def _build(text: str, node: ast.AST, symbols: dict[str, sympy.Expr], rational: bool,
           timeout: float | None = None) -> sympy.Expr:
    builder = _Builder(text, symbols, rational)
    try:
        value = with_budget(lambda: builder.expr(node), timeout)
    except ParseError:
        raise
    except OutOfTime:
        # An interrupted assumption query leaves "unknown" cached on the objects it was
        # working on; drop SymPy's caches so that later work does not reuse them.
        sympy.core.cache.clear_cache()
        raise ParseError(f"building {_quote(text)} took more than timeout={timeout:g} s; "
                         "simplify the expression") from None
    except Exception as exc:  # noqa: BLE001 -- SymPy may raise anything on odd input
        raise ParseError(f"cannot build {_quote(text)}: {type(exc).__name__}: {exc}") from None
    if not isinstance(value, sympy.Expr):
        raise ParseError(f"not an expression: {_quote(text)}")
    # Exact arithmetic can still grow a number past the literal limits (e.g. a Piecewise
    # raised to a negative power): refuse it here, before anything prints or evaluates it.
    for r in value.atoms(sympy.Rational):
        if max(abs(int(r.p)), int(r.q)).bit_length() > _MAX_RATIONAL_BITS:
            raise ParseError(f"{_quote(text)} produces a number with more than "
                             f"{MAX_DIGITS} digits")
    if _undefined(value):
        raise ParseError(f"the expression is undefined or infinite (division by zero, "
                         f"log(0)?): {_quote(text)} gives {value}")
    return value


def parse_expression(
    text: str,
    *,
    symbols: Mapping[str, sympy.Symbol] | None = None,
    max_length: int = 2000,
    rational: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> sympy.Expr:
    r"""Parse a mathematical expression safely into SymPy (no ``eval``).

    Args:
        text: the expression, e.g. ``"1.25*exp(-sigma^2*eps^2/2)"``.
        symbols: extra or overriding names, mapping a name to a SymPy symbol or expression.
        max_length: longest text accepted, in characters.
        rational: read decimal literals as exact rationals (``1.25`` → ``5/4``) instead of
            SymPy Floats carrying every typed digit.
        timeout: wall-clock budget in seconds for building the SymPy tree (``None``: no
            budget).  Enforced with ``SIGALRM`` in the main thread of a POSIX process;
            elsewhere only the size limits apply.

    Returns:
        The SymPy expression.

    Raises:
        ParseError: the text is not in the accepted language (see the module docstring) or
            is too large; the message quotes the offending piece.

    Example:
        >>> from symgdp import eps
        >>> e = parse_expression("B*e^(-sigma^2*ε^2/A^2)")
        >>> sorted(map(str, e.free_symbols))
        ['A', 'B', 'sigma', 'varepsilon']
        >>> e.has(eps)
        True
        >>> parse_expression("1/3 + 2^-1")
        5/6
        >>> parse_expression("9**9**9**9")
        Traceback (most recent call last):
        ...
        symgdp.errors.ParseError: exponent beyond ±1000000 in: '9**9**9'
    """
    text = _prepare(text, max_length)
    syms = _normalise_symbols(symbols)
    _check_timeout(timeout)
    tree = _parse_tree(text)
    _check_tree(tree, text)
    return _build(text, tree.body, syms, rational, timeout)


_LONE_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")


def parse_equation(
    text: str,
    *,
    symbols: Mapping[str, sympy.Symbol] | None = None,
    max_length: int = 2000,
    rational: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> sympy.Eq:
    r"""Parse an equation ``"lhs = rhs"`` (or ``"lhs == rhs"``) safely into ``sympy.Eq``.

    Both sides follow the rules of :func:`parse_expression` (the same keywords, and each
    side gets the ``timeout`` budget).  An equation that SymPy decides is always true or
    always false (``"x = x"``) is refused.

    Example:
        >>> eq = parse_equation("sigma = A/eps * sqrt(log(B/delta))")
        >>> eq.lhs
        sigma
        >>> sorted(map(str, eq.rhs.free_symbols))
        ['A', 'B', 'delta', 'varepsilon']
    """
    text = _prepare(text, max_length)
    syms = _normalise_symbols(symbols)
    _check_timeout(timeout)
    lone = _LONE_EQUALS.findall(text)
    if len(lone) > 1:
        raise ParseError(f"an equation has exactly one '=': {_quote(text)}")
    if lone:
        m = _LONE_EQUALS.search(text)
        assert m is not None
        sides = []
        for part in (text[: m.start()], text[m.end():]):
            part = part.strip()
            if not part:
                raise ParseError(f"the equation has an empty side: {_quote(text)}")
            tree = _parse_tree(part)
            _check_tree(tree, part)
            sides.append(_build(part, tree.body, syms, rational, timeout))
        lhs, rhs = sides
    else:
        tree = _parse_tree(text)
        body = tree.body
        if not (isinstance(body, ast.Compare) and len(body.ops) == 1
                and isinstance(body.ops[0], ast.Eq)):
            raise ParseError(f"expected an equation 'lhs = rhs', got {_quote(text)}")
        _check_tree(tree, text)
        lhs = _build(text, body.left, syms, rational, timeout)
        rhs = _build(text, body.comparators[0], syms, rational, timeout)
    eq = sympy.Eq(lhs, rhs)
    if not isinstance(eq, sympy.Eq):
        raise ParseError(f"the equation {_quote(text)} is always {bool(eq)}; nothing to solve")
    return eq
