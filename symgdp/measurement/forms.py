r"""Symbolic preparation of a profile for the ball-arithmetic tests.

The first-order tests need tight enclosures of :math:`\log\delta_A` and its derivatives;
they are built from rewritten SymPy expressions:

* :func:`normalise` combines exponentials so that exactly cancelling terms (the two
  :math:`\varphi` terms of the Gaussian profile's derivative) vanish symbolically;
* :func:`erfcx_form` rewrites erfc/erf as :math:`e^{-z^2}\operatorname{erfcx}(z)` and
  factors out one common exponential, pairing differences
  :math:`\operatorname{erfcx}(z) - \operatorname{erfcx}(z + c)` into one function
  (``ErfcxDiff``) whose enclosure keeps the cancellation out;
* the log-expanded profile (per ``Piecewise`` branch; products and exponentials become
  sums) is differentiated (``_derivatives``), and log-rates are split off for the series
  test (``_log_rates``);
* Float parameters are kept as symbols fed as exact values (``_split_floats``).
"""

from __future__ import annotations

from typing import Any

import sympy
from flint import ctx
from sympy.codegen.cfunctions import expm1

from symgdp.evaluation.interval import ArbUnsupported, Erfcx, ErfcxDiff, lambdify_arb
from symgdp.symbolic.steps import canonical_steps

__all__ = ["normalise", "erfcx_form", "normalise_fractions", "heaviside_steps"]


def _heaviside_at_zero(h: sympy.Heaviside) -> sympy.Expr:
    """The value of ``h`` where its argument is 0 (SymPy's default 1/2)."""
    return h.args[1] if len(h.args) > 1 else sympy.Rational(1, 2)


def heaviside_steps(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""``expr`` with each step ``Heaviside(a*var + b)`` (numbers ``a != 0``, ``b``) as a
    Piecewise in ``var < c`` (``c = -b/a``), where the value at ``c`` itself (with the
    Heaviside's value at 0) is proved, at 256 bits, at most the left limit
    :math:`\delta(c^-)`.  The two functions then differ at ``c`` only, and there the
    rewritten one takes the right value :math:`\delta(c^+)`: a non-increasing profile
    stays non-increasing, and :math:`\sup G` is unchanged (:math:`G(c)` is at most the
    left limit of :math:`G`, which the rewritten profile attains in the limit).  A
    downward step then is a downward jump of a Piecewise, which the measurement proves
    and crosses.  Steps whose value at ``c`` is not so proved stay as they are.  Piecewise
    conditions built with And/Or/Not from comparisons with numbers (and sums of steps)
    become one chain of successive pieces (:func:`symgdp.symbolic.steps.canonical_steps`), exact on
    :math:`[0, \infty)`, whose jumps are proved the same way.

    Example:
        >>> x = sympy.Symbol("x", positive=True)
        >>> heaviside_steps(sympy.exp(-x) * (1 - sympy.Heaviside(x - 1) / 2), x)
        (1 - Piecewise((0, x < 1), (1, True))/2)*exp(-x)
    """
    steps: dict[Any, Any] = {}
    for h in expr.atoms(sympy.Heaviside):
        arg = h.args[0]
        if arg.free_symbols != {var}:
            continue
        poly = sympy.Poly(arg, var) if arg.is_polynomial(var) else None
        if poly is None or poly.degree() != 1 or not all(
                c.is_number for c in poly.all_coeffs()):
            continue
        a, b = poly.all_coeffs()
        c = -b / a
        up = a.is_positive  # Heaviside(a (var - c)): 0 left of c when a > 0
        left = sympy.Piecewise((0 if up else 1, var < c), (1 if up else 0, True))
        closed = sympy.Piecewise((0 if up else 1, var <= c), (1 if up else 0, True))
        steps.setdefault(c, []).append((h, left, up, closed))
    out = expr
    for c, hs in steps.items():
        try:
            with ctx.workprec(256):
                cb = lambdify_arb(c, var)(0)
                # value at c minus the left limit (branches without the step fold to 0)
                at_c = expr.xreplace({h: _heaviside_at_zero(h) for h, _, _, _ in hs})
                left = expr.xreplace({h: 0 if up else 1 for h, _, up, _ in hs})
                d = lambdify_arb(sympy.piecewise_fold(at_c - left), var)(cb)
                same = bool(d.is_exact() and d.is_zero())
                proved = bool(d <= 0) or same
        except (ArbUnsupported, ValueError, TypeError, ZeroDivisionError, RecursionError):
            proved = same = False
        if same:
            # the value at c is the left limit: the step closed at c is the same function
            # (the ball certification of the bracket evaluates the original one)
            out = out.xreplace({h: pw for h, _, _, pw in hs})
        elif proved:
            out = out.xreplace({h: pw for h, pw, _, _ in hs})
    return canonical_steps(out, var)

#: working precision (bits) of the first-order machinery's balls
_PREC = 64
#: largest profile (SymPy operations) given to the first-order machinery
MAX_OPS = 200
# derivative expressions above this size are not normalised (expand can explode)
_MAX_OPS = 4000


def _exp_args_expanded(e: sympy.Expr) -> sympy.Expr:
    return e.replace(lambda u: isinstance(u, sympy.exp),
                     lambda u: sympy.exp(sympy.expand(u.args[0])))


def normalise(e: sympy.Expr) -> sympy.Expr:
    r"""Combine exponentials and expand their arguments so that terms which cancel
    exactly (e.g. :math:`\varphi(a)` and :math:`e^{\varepsilon}\varphi(b)` with
    :math:`b^2 - a^2 = 2\varepsilon`) vanish symbolically.

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> normalise(sympy.exp(x) * sympy.exp(-(x + 1)**2 / 2) - sympy.exp(-(x**2 + 1) / 2))
        0
    """
    if sympy.count_ops(e) > _MAX_OPS:
        return e
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(normalise(b), c) for b, c in e.args])
    out = sympy.expand(e)
    out = sympy.powsimp(out, combine="exp")
    out = _exp_args_expanded(out)
    return sympy.expand(out)


def erfcx_form(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Rewrite :math:`\operatorname{erfc}` (and erf) of arguments in ``var`` as
    :math:`e^{-z^2}\operatorname{erfcx}(z)` and factor out one common exponential when the
    others differ from it by factors free of ``var``.

    The Gaussian profile :math:`\Phi(a) - e^{\varepsilon}\Phi(b)` becomes
    :math:`\tfrac12 e^{-a^2/2}[\operatorname{erfcx}(-a/\sqrt2) -
    \operatorname{erfcx}(-b/\sqrt2)]` (because :math:`b^2 - a^2 = 2\varepsilon`), whose
    logarithm no longer varies by orders of magnitude across a short interval.  An
    expression without such a structure is returned unchanged (per Piecewise branch).

    Example:
        >>> import sympy
        >>> x, m = sympy.symbols("x m", positive=True)
        >>> phi = lambda t: sympy.erfc(-t / sympy.sqrt(2)) / 2
        >>> f = erfcx_form(phi(-x/m + m/2) - sympy.exp(x) * phi(-x/m - m/2), x)
        >>> sorted(str(a.args[0]) for a in f.atoms(sympy.exp))
        ['-m**2/8 + x/2 - x**2/(2*m**2)']
    """
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(erfcx_form(b, var), c) for b, c in expr.args])
    if not any(var in f.free_symbols for f in expr.atoms(sympy.erfc, sympy.erf)):
        return expr
    if isinstance(expr, (sympy.Mul, sympy.Min, sympy.Max)):
        return expr.func(*[erfcx_form(a, var) for a in expr.args])
    # erf(u) = 1 - erfc(u), with u expanded so that SymPy's canonical sign rule
    # erfc(-w) = 2 - erfc(w) applies: 1 + erf(1 - eps/2) becomes erfc(eps/2 - 1), which has
    # no cancellation in the tail, instead of 2 - erfc(1 - eps/2), which cancels there
    e = expr.replace(lambda u: isinstance(u, sympy.erf) and var in u.free_symbols,
                     lambda u: 1 - sympy.erfc(sympy.expand(u.args[0])))
    if e != expr:
        e = sympy.expand(e, deep=False, power_base=False, power_exp=False, log=False,
                         multinomial=False)
    e = e.replace(lambda u: isinstance(u, sympy.erfc) and var in u.free_symbols,
                  lambda u: sympy.exp(-sympy.expand(u.args[0]**2)) * Erfcx(u.args[0]))
    e = normalise(e)
    terms = sympy.Add.make_args(e)
    lead = None
    for t in terms:
        exps = [f.args[0] for f in sympy.Mul.make_args(t) if isinstance(f, sympy.exp)]
        if any(var in a.free_symbols for a in exps):
            lead = sympy.Add(*exps)
            break
    if lead is None:
        return expr
    rest = [normalise(t * sympy.exp(-lead)) for t in terms]
    for r in rest:
        for t in sympy.Add.make_args(r):
            if any(isinstance(f, sympy.exp) and var in f.free_symbols
                   and not _negligible_rate(f.args[0], var)
                   for f in sympy.Mul.make_args(t)):
                return expr  # the terms do not share one exponential scale
    return sympy.Mul(sympy.exp(lead), _paired(sympy.Add(*rest), var), evaluate=False)


def _paired(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Terms :math:`C\operatorname{erfcx}(z) - C r\operatorname{erfcx}(z + c)` (``c`` free
    of ``var``, ``r`` = 1 or :math:`e^{q}` with a negligible rate ``q``) as
    :math:`C\,\mathrm{ErfcxDiff}(z, c) + C(1 - r)\operatorname{erfcx}(z + c)`: an exact
    rewrite whose ball enclosure keeps the cancellation out (see ErfcxDiff)."""
    items, out = [], []
    for t in sympy.Add.make_args(e):
        fs = sympy.Mul.make_args(t)
        ex = [f for f in fs if isinstance(f, Erfcx) and (len(f.args) == 1 or f.args[1] == 0)
              and var in f.free_symbols]
        if len(ex) == 1:
            items.append((sympy.Mul(*[f for f in fs if f is not ex[0]]), ex[0].args[0]))
        else:
            out.append(t)
    used: set[int] = set()
    for i, (ci, zi) in enumerate(items):
        if i in used:
            continue
        for j in range(i + 1, len(items)):
            cj, zj = items[j]
            c = sympy.expand(zj - zi)
            if j in used or var in c.free_symbols or c == 0:
                continue
            r = sympy.powsimp(-cj / ci, combine="exp")
            if r != 1 and not (isinstance(r, sympy.exp) and _negligible_rate(
                    sympy.expand(r.args[0]), var)):
                continue
            used.update((i, j))
            out.append(ci * ErfcxDiff(zi, c))
            if r != 1:
                # 1 - e^q as -expm1(q): kept whole (expanded it would cancel again)
                out.append(-ci * expm1(r.args[0]) * Erfcx(zj))
            break
        else:
            out.append(ci * Erfcx(zi))
    return sympy.Add(*out)



def _negligible_rate(arg: sympy.Expr, var: sympy.Symbol) -> bool:
    """A polynomial exponent in ``var`` whose coefficients are all below 1e-9 (what is
    left of two exponents that agree up to the rounding of decimal literals): the
    factor stays in the (exact) rewrite and hardly varies."""
    try:
        poly = sympy.Poly(arg, var)
    except sympy.PolynomialError:
        return False
    coeffs = poly.coeffs()[:-1] if poly.coeffs() and poly.monoms()[-1] == (0,) else \
        poly.coeffs()
    return all(c.is_number and abs(float(c)) <= 1e-9 for c in coeffs)


def normalise_fractions(e: sympy.Expr) -> sympy.Expr:
    """:func:`normalise` applied to the numerator and denominator of each term separately
    (a ratio such as :math:`S'/S` must stay one fraction: expanding it would split it into
    large cancelling terms)."""
    if isinstance(e, sympy.Piecewise):
        return sympy.Piecewise(*[(normalise_fractions(b), c) for b, c in e.args])
    out = []
    for t in sympy.Add.make_args(e):
        n, d = sympy.fraction(t)
        out.append(normalise(n) / normalise(d))
    return sympy.Add(*out)


def _log_expanded(expr: sympy.Expr) -> sympy.Expr:
    expr = sympy.piecewise_fold(expr)
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*[(_log_expanded(b), c) for b, c in expr.args])
    # log Max(f, 0) = log f where the profile is positive (where it is 0 the first-order
    # test is not used: delta(x) = 0 closes the interval)
    # (only a Max that is the whole expression or one of its factors: inside a sum the
    # terms with f < 0 contribute 0, not f)
    def drop(e: sympy.Expr) -> sympy.Expr:
        if isinstance(e, sympy.Max) and len(e.args) == 2 and any(a.is_zero for a in e.args):
            return [a for a in e.args if not a.is_zero][0]
        return e

    if isinstance(expr, sympy.Mul):
        expr = sympy.Mul(*[drop(f) for f in expr.args])
    else:
        expr = drop(expr)
    out = sympy.expand_log(sympy.log(expr), force=True)
    # log Min(a, b) = Min(log a, log b) (e.g. the cap Min(1, X) of a subsampled profile)
    return out.replace(
        lambda e: isinstance(e, sympy.log) and isinstance(e.args[0], (sympy.Min, sympy.Max))
        and not any(a.is_zero for a in e.args[0].args),
        lambda e: e.args[0].func(*[sympy.expand_log(sympy.log(a), force=True)
                                   for a in e.args[0].args], evaluate=False))


def _derivatives(expr: sympy.Expr, var: sympy.Symbol,
                 normalised: bool = True) -> tuple[sympy.Expr, ...]:
    """delta', (log delta)', (log delta)'' -- normalised (run under a time budget;
    ``normalised=False`` leaves delta' as SymPy differentiates it)."""
    d1 = sympy.diff(expr, var)
    if normalised:
        d1 = normalise(d1)
    logexpr = _log_expanded(erfcx_form(expr, var))
    l1 = normalise_fractions(sympy.diff(logexpr, var))
    # not normalised: expanding (S'/S)' = S''/S - (S'/S)^2 over one denominator S^2
    # would create cancelling terms
    l2 = sympy.diff(l1, var)
    return d1, l1, l2


def _doit_finite(expr: sympy.Expr) -> sympy.Expr:
    return expr.replace(
        lambda e: isinstance(e, (sympy.Sum, sympy.Product))
        and all(lim.is_number for lim in sum((list(t[1:]) for t in e.limits), [])),
        lambda e: e.doit())


def _split_floats(profile: Any) -> tuple[sympy.Expr, list[tuple[sympy.Symbol, Any]]]:
    """The profile's expression with its exact parameter values substituted, and the
    (symbol, value) pairs of its Float parameters, kept as symbols (substituted, SymPy
    would round e.g. exp(Float) to 53 bits)."""
    return _per_profile(profile, "split_floats", _split_floats_of)


def _per_profile(profile: Any, key: str, fn: Any) -> Any:
    """``fn(profile)``, kept in the (immutable) profile's own cache where it has one."""
    cache = getattr(profile, "_cache", None)
    if cache is None:
        return fn(profile)
    if key not in cache:
        cache[key] = fn(profile)
    return cache[key]


def _split_floats_of(profile: Any) -> tuple[sympy.Expr, list[tuple[sympy.Symbol, Any]]]:
    values = [(s, sympy.sympify(v)) for s, v in profile.values.items()]
    if any(set(v.free_symbols) for _, v in values):
        return profile.bound_expr, []
    expr = profile.expr.xreplace({s: v for s, v in values if not v.has(sympy.Float)})
    return expr, [(s, v) for s, v in values if v.has(sympy.Float)]


def _log_rates(e: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    r"""Every :math:`\log\sum_i c_i e^{k_i\varepsilon}` (constant :math:`c_i, k_i`, some
    :math:`k_i > 0`) as :math:`k\varepsilon + \log\sum_i c_i e^{(k_i - k)\varepsilon}`,
    :math:`k = \max_i k_i`: an exact rewrite whose series on a wide ball is tight (e.g. the
    subsampling transform :math:`\log(1 + (e^\varepsilon - 1)/\gamma)`, where the
    growing exponential would otherwise spread every coefficient)."""
    def rate(t: sympy.Expr) -> sympy.Expr | None:
        k = sympy.Integer(0)
        for f in sympy.Mul.make_args(t):
            if var not in f.free_symbols:
                continue
            if not isinstance(f, sympy.exp):
                return None
            q = sympy.expand(f.args[0]) / var
            if var in q.free_symbols or not q.is_number:
                return None
            k += q
        return k

    def fix(u: sympy.Expr) -> sympy.Expr:
        arg = u.args[0]
        if not isinstance(arg, sympy.Add):
            return u
        rates = [rate(t) for t in arg.args]
        known = [r for r in rates if r is not None]
        if len(known) < len(rates) or not any(r.is_positive for r in known):
            return u
        k = max(known, key=lambda r: float(r))
        inner = sympy.Add(*[t * sympy.exp(-k * var) for t in arg.args])
        return k * var + sympy.log(sympy.powsimp(sympy.expand(inner), combine="exp"))

    def walk(u: sympy.Basic) -> sympy.Basic:
        # bottom-up like ``replace``, but a Min/Max is rebuilt unevaluated: evaluating
        # it compares its arguments through the assumptions system, which costs most of
        # the time here, and the arguments are what they were, only rewritten exactly
        if not u.args or var not in u.free_symbols:
            return u
        args = tuple(walk(a) for a in u.args)
        if args != u.args:
            u = (u.func(*args, evaluate=False) if isinstance(u, (sympy.Min, sympy.Max))
                 else u.func(*args))
        return fix(u) if isinstance(u, sympy.log) else u

    return walk(e)
