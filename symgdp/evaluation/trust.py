r"""When a float64 value of an expression is trusted: the float-trust analysis (theory §10).

:class:`~symgdp.evaluation.evaluate.Evaluator` evaluates a profile in float64 first and uses a value
only where this analysis trusts it:

* ``_ErrorBound``: a bound on the absolute float64 error of every intermediate value
  (terms, factors, function arguments and values, Piecewise conditions), propagated by
  condition numbers, subnormal or underflowed intermediates included;
* ``_float_form``: the expression as compiled for float64 (constants folded, ``log1p`` /
  ``expm1`` rewrites), the form whose error is bounded;
* ``_SumCheck`` and ``_cancelling_sums``: the sums whose float evaluation may cancel, and
  per point whether one did;
* ``_zero_condition``: where an expression is exactly 0 by its structure, to tell an
  exact zero from an underflow.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy
from sympy.codegen.cfunctions import expm1, log1p
from sympy.core.relational import Relational
from sympy.functions.elementary.piecewise import ExprCondPair

from symgdp.symbolic.implicit import LogDeltaRoot

# Below this a float64 value has lost relative precision (subnormal) or underflowed.
_TINY = 1e-290
_MODULES = ["scipy", "numpy"]
# A flagged sum whose terms' magnitudes add up to at most this multiple of its value loses
# at most 3 bits to cancellation in float64; its value is trusted (see _SumCheck).
_COND_MAX = 8.0
# Error bound per unit of sum_i |t_i| of a float64 sum of a few terms, each within a few
# ulps; and the accuracy asked of log delta (ten times finer than what the measurement
# assumes of float64 profile values).
_SUM_ERR = 16 * 2.0**-53
_LOG_ABS_TOL = 1e-14
_LOG_REL_TOL = 1e-13
# A finite sum whose terms' zero conditions have no compact form is written out only up
# to this many terms (see _sum_zero_condition).
_SHORT_SUM = 64


def _cancelling_sums(e: sympy.Expr, var: sympy.Symbol,
                     inside_log: bool = False) -> list[tuple[sympy.Add, bool]]:
    r"""The sums of ``e`` whose float evaluation may subtract nearly equal numbers.

    Looks through sums, products, powers, Max/Min and Piecewise branches for a sum (that
    depends on ``var``) with a negative term, constant or not (e.g. the erfc difference of
    the Gaussian profile, or :math:`e^{-\varepsilon} - c`, which cancels where
    :math:`e^{-\varepsilon} \approx c`); function arguments (exp, erfc, ...) are not
    inspected, since a cancellation there does not make the function value lose relative accuracy in
    the same way.  Each sum comes with ``inside_log``: in a log-expression (``_log_expression``) a
    sum inside ``log(...)`` is a difference of the profile's own values, one outside is a sum of
    logarithms and exponents.
    """
    if var not in e.free_symbols:
        return []
    out: list[tuple[sympy.Add, bool]] = []
    if isinstance(e, sympy.Add):
        # any subtraction counts, also of a constant (f(eps) - c cancels where f ~ c)
        if any(t.could_extract_minus_sign() for t in e.args):
            out.append((e, inside_log))
        for t in e.args:
            out += _cancelling_sums(t, var, inside_log)
    elif isinstance(e, (sympy.Mul, sympy.Max, sympy.Min)):
        for a in e.args:
            out += _cancelling_sums(a, var, inside_log)
    elif isinstance(e, sympy.Pow):
        out += _cancelling_sums(e.base, var, inside_log)
    elif isinstance(e, sympy.Piecewise):
        for b, _ in e.args:
            out += _cancelling_sums(b, var, inside_log)
    elif isinstance(e, sympy.log):
        out += _cancelling_sums(e.args[0], var, True)
    return out


def _cancels(e: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether evaluating ``e`` in float may subtract nearly equal numbers somewhere."""
    return bool(_cancelling_sums(e, var))


class _SumCheck:
    r"""Per point, whether the cancelling sums of one log-expression lost too much in float64.

    A difference of the profile's own values (a sum inside ``log(...)``, e.g. the erfc
    difference of the Gaussian profile) is never trusted where the profile is tiny: its
    terms may have passed through subnormal intermediates, so every such point is reported
    (``differences=True``).  A sum of logarithms and exponents (e.g.
    :math:`\log 2 - \varepsilon^2`, or an exponent :math:`-a\varepsilon^2 + b\varepsilon`)
    is judged at every point: evaluated from terms of relative error :math:`u` its error
    is at most :math:`u \sum_i |t_i|`.  It is trusted where its condition number
    :math:`\kappa = \sum_i |t_i| / |\sum_i t_i|` is at most ``_COND_MAX`` (as accurate as
    a non-cancelling value up to 3 bits; every term a finite normal float64 number) or,
    for the sum that is the whole log-expression, where that error bound is within
    ``_LOG_ABS_TOL + _LOG_REL_TOL |log delta|``.  Anywhere else -- a real cancellation, a
    tiny or non-finite term, a complex value -- the point is reported and is recomputed in
    high precision.
    """

    __slots__ = ("_strict", "_terms", "_top")

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol) -> None:
        sums = _cancelling_sums(expr, var)
        self._strict = any(inside for _, inside in sums)
        judged = [s for s, inside in sums if not inside]
        self._top = [s is expr for s in judged]
        # (each term in its float form: a constant such as log(10^20 + 1) is folded, not
        # handed to NumPy as a Python int)
        self._terms = (sympy.lambdify(var, [[_float_form(t, var) for t in s.args]
                                            for s in judged], modules=_MODULES)
                       if judged else None)

    def __call__(self, x: np.ndarray, differences: bool = True) -> np.ndarray:
        """Boolean array: True where a flagged sum may have cancelled at ``x``
        (differences of profile values count only with ``differences``)."""
        bad = np.full(x.shape, self._strict and differences)
        if self._terms is None or x.size == 0:
            return bad
        with np.errstate(all="ignore"):
            for terms, top in zip(self._terms(x), self._top, strict=True):
                total = np.zeros(x.shape)
                size = np.zeros(x.shape)
                normal = np.ones(x.shape, dtype=bool)
                for t in terms:
                    a = np.broadcast_to(np.asarray(t), x.shape)
                    if np.iscomplexobj(a):
                        bad |= a.imag != 0
                        a = a.real
                    a = a.astype(np.float64)
                    mag = np.abs(a)
                    bad |= ~np.isfinite(a)
                    normal &= mag >= _TINY
                    total = total + a
                    size = size + mag
                good = normal & (size <= _COND_MAX * np.abs(total))
                if top:
                    good |= size * _SUM_ERR <= _LOG_ABS_TOL + _LOG_REL_TOL * np.abs(total)
                bad |= ~good
        return bad


def _zero_condition(expr: sympy.Expr) -> Any:
    """A SymPy condition under which ``expr`` is exactly 0 by its structure.

    Sufficient, not necessary: ``false`` means "not known to be zero".  Used to tell an
    exact zero of a profile (e.g. the Laplace profile beyond eps0) from a float underflow
    without a slow mpmath evaluation.
    """
    if expr.is_zero is True:
        return sympy.true
    if isinstance(expr, sympy.Max):
        if any(a.is_zero is True for a in expr.args):
            return sympy.And(*[a <= 0 for a in expr.args if a.is_zero is not True])
        return sympy.false
    if isinstance(expr, sympy.Min):
        # Min(a, b, ...) = 0 where one argument is structurally 0 and the others are >= 0
        conds = []
        for i, a in enumerate(expr.args):
            z = _zero_condition(a)
            if z is not sympy.false:
                others = [b >= 0 for j, b in enumerate(expr.args) if j != i]
                conds.append(sympy.And(z, *others))
        return sympy.Or(*conds) if conds else sympy.false
    if isinstance(expr, sympy.Piecewise):
        conds, seen = [], sympy.false
        for e, c in expr.args:
            z = _zero_condition(e)
            if z is not sympy.false:
                conds.append(sympy.And(c, sympy.Not(seen), z))
            seen = sympy.Or(seen, c)
        return sympy.Or(*conds) if conds else sympy.false
    if isinstance(expr, sympy.Mul):
        zs = [_zero_condition(f) for f in expr.args]
        zs = [z for z in zs if z is not sympy.false]
        return sympy.Or(*zs) if zs else sympy.false
    if isinstance(expr, sympy.Pow) and expr.exp.is_positive is True:
        return _zero_condition(expr.base)
    if isinstance(expr, sympy.Sum) and len(expr.limits) == 1:
        return _sum_zero_condition(expr)
    if isinstance(expr, sympy.Add):
        # a sum is structurally zero where every term is (the exact k-fold profile)
        zs = [_zero_condition(t) for t in expr.args]
        return sympy.false if any(z is sympy.false for z in zs) else sympy.And(*zs)
    return sympy.false


# -- float64 error bounds of every intermediate value (theory §10) ---------------------------
# Unit roundoff of float64 and the smallest normal number: a value below it has lost
# relative precision (subnormal) or underflowed, an absolute error of up to _NORMAL.
_U = 2.0**-53
_NORMAL = float(np.finfo(np.float64).tiny)
# Rounding error, in units of _U, of one SciPy special-function value (erfc, gamma, ...)
# and of one elementary function value (exp, log, log1p, expm1, pow: within 1 ulp in
# glibc; 4 leaves room for vectorised implementations).
_SPECIAL_ULPS = 8.0
_ELEMENTARY_ULPS = 4.0
# Below this a positive eps is not trusted by the error analysis (eps^2 may be subnormal).
_EPS_TINY = 1e-150
# Points per block of the error analysis (its intermediate arrays stay in the CPU cache).
_CHUNK = 8192
# Functions whose value jumps: the derivative does not bound their error.
_JUMPS = (sympy.floor, sympy.ceiling, sympy.sign, sympy.Heaviside, sympy.Mod, sympy.frac)


def _float_form(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""``expr`` as compiled for float64: every compound constant folded to its correctly
    rounded value (``log(1 + 1/10^20)`` is not ``log(1.0)``), a ``Float`` read as the
    binary number it stores, ``log(1 + x)`` written
    ``log1p(x)`` and :math:`e^x - 1` written ``expm1(x)`` (no cancellation near 0).

    Example:
        >>> from symgdp import eps
        >>> _float_form(sympy.log(1 + sympy.exp(-eps)) + sympy.log(2), eps)
        log1p(exp(-varepsilon)) + 0.693147180559945309417232121458
    """
    if isinstance(expr, sympy.Float) and math.isfinite(float(expr)):
        # printed with 17 digits, a Float reads back as the binary number it stores (as in
        # ball arithmetic), not as its shorter decimal form
        return sympy.Float(float(expr), 17)
    if expr.is_Atom:
        return expr
    if isinstance(expr, sympy.Expr) and var not in expr.free_symbols and expr.is_number:
        v = expr.evalf(30)
        return v if isinstance(v, sympy.Float) and v.is_finite else expr
    if not isinstance(expr, (sympy.Add, sympy.Mul, sympy.Pow, sympy.Piecewise,
                             sympy.Max, sympy.Min, sympy.Function, Relational,
                             sympy.And, sympy.Or, sympy.Not, ExprCondPair)) \
            or isinstance(expr, LogDeltaRoot):
        return expr
    if isinstance(expr, sympy.log) and isinstance(expr.args[0], sympy.Add) \
            and sympy.S.One in expr.args[0].args:
        # before the argument's own rewrites: log(1 + t) is log1p(t); log(1 - e^u) is
        # log1p(-e^u) where e^u < 1/2 and log(-expm1(u)) where e^u is near 1
        t = expr.args[0] - 1
        if isinstance(-t, sympy.exp):
            u = _float_form((-t).args[0], var)
            return sympy.Piecewise((log1p(-sympy.exp(u)), u < -math.log(2)),
                                   (sympy.log(-expm1(u)), True))
        return log1p(_float_form(t, var))
    args = [_float_form(a, var) for a in expr.args]
    out = expr.func(*args) if args != list(expr.args) else expr
    if isinstance(out, sympy.log) and isinstance(out.args[0], sympy.Add) \
            and sympy.S.One in out.args[0].args:
        return log1p(out.args[0] - 1)
    if isinstance(out, sympy.Add):
        for one in (sympy.S.One, sympy.S.NegativeOne):
            if one in out.args:
                for t in out.args:
                    if isinstance(-one * t, sympy.exp):
                        # e^x - 1 = expm1(x), 1 - e^x = -expm1(x)
                        return out - one - t - one * expm1((-one * t).args[0])
    return out


def _const_error(c: sympy.Expr) -> float:
    """Absolute error of a constant's float64 value: 0 when it is exactly representable."""
    v = float(c)
    if c.is_Rational and c.q & (c.q - 1) == 0 and abs(c.p) < 2**53:
        return 0.0
    return abs(v) * _U


def _exact_factor(c: sympy.Expr) -> bool:
    """A constant factor whose product is exact in float64 (+-2^k): no rounding."""
    if not c.is_Rational or c == 0:
        return False
    p, q = abs(c.p), c.q
    return (p & (p - 1) == 0) and (q & (q - 1) == 0)


class _Unsupported(Exception):
    """An expression this error analysis cannot bound (the older checks then apply)."""


class _ErrorBound:
    r"""Per point, a bound on the absolute float64 error of an expression's value.

    Every intermediate value :math:`v` of the expression -- function arguments and values,
    factors, terms, branch conditions -- carries a first-order bound :math:`A_v` on its
    absolute error, propagated from the leaves (``eps`` exact, constants within half an
    ulp) by the condition numbers of each operation:

    * a sum: :math:`\sum_i A_i` plus its rounding (so :math:`1 - e^{-x}` near 0 keeps the
      absolute error of its terms, which is large relative to the difference);
    * a product or power :math:`b^c`: relative errors add, times :math:`|c|`;
    * a function :math:`f(x)`: relative error :math:`|f'(x)/f(x)|\, A_x` plus its own
      rounding -- e.g. :math:`e^x` has relative error :math:`A_x` (large for a large
      argument computed with absolute error), :math:`\log s` absolute error
      :math:`A_s / s` (relative :math:`A_s/(s|\log s|)`: ill-conditioned near 1),
      :math:`\operatorname{erfc}(x) \approx 2x A_x` for large :math:`x`;
    * a value below the smallest normal float64 number (subnormal or underflowed to 0)
      gets an absolute error of that size, so that e.g. :math:`\arctan(e^{-745})` or
      :math:`\varepsilon^{150} e^{-725}` is not trusted relatively;
    * Max/Min take the largest error of their arguments (they are 1-Lipschitz); a
      Piecewise the error of the branch it selects, and infinity where a condition
      ``lhs < rhs`` is within the errors of its sides (the branch may be the wrong one);
    * a non-finite or complex intermediate has an infinite error.

    All intermediate values are computed by one compiled function (shared
    subexpressions), whose last value is the expression itself, so the bound costs a few
    array operations per node.  An expression with a node this analysis does not know
    (a Sum, an implicit root, a jump function) raises ``_Unsupported``.
    """

    __slots__ = ("_fn", "_plan", "_root", "_tiny")

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol) -> None:
        self._plan: list[tuple] = []      # (kind, node index, data)
        index: dict[sympy.Basic, int] = {}
        outputs: list[sympy.Basic] = []

        def leaf(e: sympy.Basic) -> Any:
            """An operand: ('n', index) for a computed node, ('c', value, error) else."""
            if var not in e.free_symbols:
                if not (isinstance(e, sympy.Expr) and e.is_number):
                    raise _Unsupported(e)
                c = complex(e)
                if c.imag != 0 or not math.isfinite(c.real):
                    raise _Unsupported(e)
                return ("c", c.real, _const_error(e) if e.is_Rational else abs(c.real) * _U)
            return ("n", visit(e))

        def add(e: sympy.Basic, kind: str, data: Any) -> int:
            index[e] = len(outputs)
            outputs.append(e)
            self._plan.append((kind, index[e], data))
            return index[e]

        def visit(e: sympy.Basic) -> int:
            if e in index:
                return index[e]
            if e == var:
                return add(e, "var", None)
            if isinstance(e, sympy.Add):
                return add(e, "add", [leaf(a) for a in e.args])
            if isinstance(e, sympy.Mul):
                ops = [leaf(a) for a in e.args]
                rounding = sum(1 for a in e.args if not _exact_factor(a)) - 1
                return add(e, "mul", (ops, max(rounding, 0)))
            if isinstance(e, sympy.Pow):
                b, c = leaf(e.base), leaf(e.exp)
                return add(e, "pow", (b, c))
            if isinstance(e, (sympy.Max, sympy.Min)):
                return add(e, "max", [leaf(a) for a in e.args])
            if isinstance(e, sympy.Abs):
                return add(e, "abs", leaf(e.args[0]))
            if isinstance(e, sympy.Piecewise):
                branches = [leaf(b) for b, _ in e.args]
                conds = [("c", 1.0, 0.0) if c is sympy.true else ("n", visit_cond(c))
                         for _, c in e.args]
                rels = [(leaf(r.lhs), leaf(r.rhs))
                        for _, c in e.args if c is not sympy.true
                        for r in _relationals(c)]
                return add(e, "piecewise", (branches, conds, rels))
            if isinstance(e, _JUMPS) or isinstance(e, LogDeltaRoot):
                raise _Unsupported(e)
            if isinstance(e, sympy.Function) and e.args:
                ops = [leaf(a) for a in e.args]
                known = _KNOWN.get(type(e).__name__)
                if known is not None and len(e.args) == 1:
                    return add(e, "fn", (ops, known, None))
                ratios: list[Any] = []
                dummies = [sympy.Dummy() for _ in e.args]
                g = e.func(*dummies)
                for op, d, _a in zip(ops, dummies, e.args, strict=True):
                    if op[0] == "c":
                        ratios.append(None)
                        continue
                    try:
                        r = sympy.diff(g, d) / g
                    except (TypeError, ValueError, NotImplementedError) as exc:
                        raise _Unsupported(e) from exc
                    if r.has(sympy.Derivative, sympy.Subs):
                        raise _Unsupported(e)
                    r = r.xreplace(dict(zip(dummies, e.args, strict=True)))
                    ratios.append(("n", visit_extra(r)))
                return add(e, "fn", (ops, None, ratios))
            raise _Unsupported(e)

        def visit_cond(c: sympy.Basic) -> int:
            return index[c] if c in index else add(c, "cond", None)

        def visit_extra(r: sympy.Expr) -> int:
            if r in index:
                return index[r]
            return add(r, "extra", None)

        self._root = leaf(expr)
        self._fn = sympy.lambdify(var, outputs, modules=_MODULES, cse=True) if outputs else None
        # A tiny value matters where a parent divides by it (a product, a power, log, a
        # function judged by f'/f): there it gets the underflow error; elsewhere it only
        # adds an absolute error far below that of the values it is combined with.
        self._tiny: set[int] = set()
        for kind, _, data in self._plan:
            if kind == "mul":
                ops = data[0]
            elif kind == "pow":
                ops = list(data)
            elif kind == "fn" and (data[1] is None or data[1] is _KNOWN["log"]):
                ops = data[0]
            else:
                continue
            self._tiny.update(op[1] for op in ops if op[0] == "n")
        # sums, Max/Min, Abs and Piecewise pass their arguments' errors on: those are judged
        for kind, i, data in reversed(self._plan):
            if i not in self._tiny:
                continue
            if kind in ("add", "max"):
                ops = data
            elif kind == "abs":
                ops = [data]
            elif kind == "piecewise":
                ops = data[0]
            else:
                continue
            self._tiny.update(op[1] for op in ops if op[0] == "n")
        # c eps^k (0 < k <= 2, c not extreme) is not tiny for eps >= _EPS_TINY: not judged
        # (eps below that is judged once, in __call__)
        self._tiny -= {index[e] for e in outputs if _plain_monomial(e, var)}

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The expression's values at ``x`` (float64, or complex as computed) and a bound
        on their absolute error (``inf`` or NaN where none can be given)."""
        if x.size > _CHUNK:  # in blocks that stay in the CPU cache
            parts = [self(x[i:i + _CHUNK]) for i in range(0, x.size, _CHUNK)]
            return (np.concatenate([p[0] for p in parts]),
                    np.concatenate([p[1] for p in parts]))
        with np.errstate(all="ignore"):
            raw = self._fn(x) if self._fn is not None else []
            # a positive eps so small that c eps^k may be subnormal: never trusted here
            tiny_eps = np.any(x < _EPS_TINY) and np.any((x > 0) & (x < _EPS_TINY))
            vals = [np.where(np.imag(r) == 0, np.real(r), np.nan) if np.iscomplexobj(r)
                    else r for r in raw]
            # error of each node, as ("a", absolute) or ("r", relative); converted lazily
            errs: list[Any] = [None] * len(raw)

            def value(op: tuple) -> Any:
                return op[1] if op[0] == "c" else vals[op[1]]

            def absolute(op: tuple) -> Any:
                if op[0] == "c":
                    return op[2]
                form, e = errs[op[1]]
                if form == "a" or (np.ndim(e) == 0 and e == 0):
                    return e
                a = np.abs(vals[op[1]]) * e
                errs[op[1]] = ("a", a)
                return a

            def relative(op: tuple) -> Any:
                if op[0] == "c":
                    return op[2] / abs(op[1]) if op[1] != 0 else (0.0 if op[2] == 0 else np.inf)
                form, e = errs[op[1]]
                if form == "r" or (np.ndim(e) == 0 and e == 0):
                    return e
                return np.where(e == 0, 0.0, e / np.abs(vals[op[1]]))  # exact values

            for kind, i, data in self._plan:
                v = vals[i]
                if kind in ("cond", "extra"):
                    continue
                if kind == "var":
                    errs[i] = ("a", 0.0)
                    continue
                if kind == "add":
                    err = _U * np.abs(v)
                    for op in data:
                        err = err + absolute(op)
                    if len(data) > 2:
                        err = err + (len(data) - 2) * _U * sum(np.abs(value(op)) for op in data)
                    form = "a"
                elif kind == "max":
                    err = 0.0
                    for op in data:
                        err = np.maximum(err, absolute(op))
                    form = "a"
                elif kind == "abs":
                    form, err = "a", absolute(data)
                elif kind == "piecewise":
                    branches, conds, rels = data
                    shape = np.shape(v)
                    err = np.select(
                        [np.broadcast_to(np.asarray(value(c), dtype=bool), shape) for c in conds],
                        [np.broadcast_to(absolute(b), shape) for b in branches],
                        default=np.inf)
                    for lhs, rhs in rels:
                        slack = absolute(lhs) + absolute(rhs)
                        if np.ndim(slack) == 0 and slack == 0:
                            continue
                        # the comparison is decided by float values within their errors
                        err = np.where(np.abs(value(lhs) - value(rhs)) <= slack, np.inf, err)
                    form = "a"
                # products, powers and functions: a relative error
                elif kind == "mul":
                    ops, rounding = data
                    rel = rounding * _U
                    for op in ops:
                        rel = rel + relative(op)
                    form, err = "r", rel
                    if len(ops) > 2:
                        # a partial product (in whatever order) may pass through a
                        # subnormal value and come out normal: its underflow error, scaled
                        # by the factors still to come
                        small, big = 1.0, 1.0
                        for op in ops:
                            a = np.abs(value(op))
                            small = small * np.minimum(a, 1.0)
                            big = big * np.maximum(a, 1.0)
                        if np.any(small < _NORMAL):
                            form, err = "a", np.abs(v) * rel + np.where(
                                small < _NORMAL, _NORMAL * big, 0.0)
                elif kind == "pow":
                    b, c = data
                    rel = np.abs(value(c)) * relative(b) + _EU
                    ec = absolute(c)
                    if not (np.ndim(ec) == 0 and ec == 0):
                        rel = rel + np.abs(np.log(np.abs(value(b)))) * ec
                    form, err = "r", rel
                else:  # a function
                    ops, known, ratios = data
                    if known is not None:
                        form, err = known(value(ops[0]), absolute(ops[0]), v)
                    else:
                        rel = _SPECIAL_ULPS * _U
                        for op, ratio in zip(ops, ratios, strict=True):
                            if ratio is not None:
                                e = absolute(op)
                                if not (np.ndim(e) == 0 and e == 0):
                                    rel = rel + np.abs(value(ratio)) * e
                        form, err = "r", rel
                if kind in ("mul", "pow", "fn") and i in self._tiny and _has_tiny(v):
                    # a subnormal or underflowed value has lost its relative precision,
                    # unless it is an exact 0 (a factor, base or argument exactly 0)
                    ops = [data[0]] if kind == "pow" else data[0]
                    exact = np.zeros(np.shape(v), dtype=bool)
                    for op in ops:
                        exact = exact | ((value(op) == 0) & (absolute(op) == 0))
                    if kind == "pow":
                        exact = exact & (value(data[1]) > 0)
                    elif kind == "fn":
                        exact = exact & (v == 0)
                    a = np.abs(v) * err if form == "r" else err
                    form, err = "a", np.where((np.abs(v) < _NORMAL) & ~exact, a + _NORMAL, a)
                errs[i] = (form, err)
            y = value(self._root)
            e = absolute(self._root)
            if tiny_eps:
                e = np.where((x > 0) & (x < _EPS_TINY), np.inf, e)
            shape = np.shape(x)
            return (np.broadcast_to(np.asarray(y), shape),
                    np.broadcast_to(np.asarray(e, dtype=np.float64), shape))


def _plain_monomial(e: sympy.Basic, var: sympy.Symbol) -> bool:
    """``e`` is ``c var^k`` with ``0 < k <= 2`` and ``1e-7 <= |c| <= 1e7``: not below the
    smallest normal float64 for ``var >= _EPS_TINY`` (nor is any partial product)."""
    c, rest = e.as_coeff_Mul() if isinstance(e, sympy.Mul) else (sympy.S.One, e)
    if not (c.is_Number and 1e-7 <= abs(float(c)) <= 1e7):
        return False
    if rest == var:
        return True
    return (isinstance(rest, sympy.Pow) and rest.base == var and rest.exp.is_Number
            and 0 < float(rest.exp) <= 2)


def _has_tiny(v: Any) -> bool:
    """Whether any value is below the smallest normal float64 in magnitude (a fast test
    for arrays of one sign, the common case)."""
    if np.size(v) == 0:
        return False
    lo, hi = np.min(v), np.max(v)
    if lo >= _NORMAL or hi <= -_NORMAL:
        return False
    return bool(np.any(np.abs(v) < _NORMAL)) or not (np.isfinite(lo) and np.isfinite(hi))


def _relationals(c: sympy.Basic) -> list[sympy.Basic]:
    """The comparisons a Piecewise condition is built of."""
    if isinstance(c, Relational):
        return [c]
    if isinstance(c, (sympy.And, sympy.Or, sympy.Not)):
        return [r for a in c.args for r in _relationals(a)]
    if c in (sympy.true, sympy.false):
        return []
    raise _Unsupported(c)


# The error of f(t) from the value t of its argument, the argument's absolute error e and
# the value v: ("r", relative error) or ("a", absolute error).  Bounds used: erfc'/erfc
# <= |t| + sqrt(t^2 + 2) (from erfcx(t) > 2 / (sqrt(pi) (t + sqrt(t^2 + 2))) for t >= 0,
# and <= 2/sqrt(pi) for t < 0); |erf'| <= 2/sqrt(pi); atan' <= 1; expm1' = 1 + expm1.
_EU = _ELEMENTARY_ULPS * _U
_SU = _SPECIAL_ULPS * _U
_KNOWN: dict[str, Any] = {
    "exp": lambda t, e, v: ("r", e + _EU),
    "log": lambda t, e, v: ("a", e / np.abs(t) + _EU * np.abs(v)),
    "log1p": lambda t, e, v: ("a", e / np.abs(1.0 + t) + _EU * np.abs(v)),
    "expm1": lambda t, e, v: ("a", e * (1.0 + v) + _EU * np.abs(v)),
    "erfc": lambda t, e, v: ("r", (np.abs(t) + np.sqrt(t * t + 2.0)) * e + _SU),
    "erf": lambda t, e, v: ("a", 2.0 / math.sqrt(math.pi) * e + _SU * np.abs(v)),
    "atan": lambda t, e, v: ("a", e + _EU * np.abs(v)),
}


def _sum_zero_condition(expr: sympy.Sum) -> Any:
    """``_zero_condition`` of a finite sum, without writing it out term by term.

    The summand's condition is derived once with the index symbolic.  Where it is a
    non-strict inequality ``g(i) <= 0`` (the form a ``Max(..., 0)`` term gives, e.g. the
    k-fold composition profile), the sum is zero where ``Sum(Max(g(i), 0)) <= 0``: a
    sum of non-negative numbers, zero exactly when every ``g(i) <= 0``, which stays one
    compact expression (a loop over ``i`` when compiled).  Other conditions are written
    out only for short sums.
    """
    i, lo, hi = expr.limits[0]
    if not (lo.is_Integer and hi.is_Integer) or int(hi) < int(lo):
        return sympy.false
    z = _zero_condition(expr.function)
    if z is sympy.false or z is sympy.true:
        return z
    if isinstance(z, (sympy.LessThan, sympy.GreaterThan)):
        g = z.lhs - z.rhs if isinstance(z, sympy.LessThan) else z.rhs - z.lhs
        return sympy.Sum(sympy.Max(g, 0), (i, lo, hi)) <= 0
    if int(hi) - int(lo) > _SHORT_SUM:
        return sympy.false
    zs = [z.xreplace({i: sympy.Integer(j)}) for j in range(int(lo), int(hi) + 1)]
    return sympy.false if any(c is sympy.false for c in zs) else sympy.And(*zs)
