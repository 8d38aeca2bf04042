r"""The far tail of an implicit profile (theory §14, *Implicit profiles*): the closed-form
conditions on the residual under which the root of a trade-off equation lies below a
Gaussian profile on a whole half-line :math:`[E, \infty)`.

An implicit profile is :math:`\delta = e^{t(\varepsilon)}` with :math:`t` a root of the
residual :math:`h(\varepsilon, t)` of :math:`\sigma = f(\varepsilon, \delta)`
(:class:`~symgdp.symbolic.implicit.LogDeltaRoot`).  For a closed form :math:`\ell(\varepsilon) \le
\log\delta_\mu(\varepsilon)` on :math:`[E, \infty)` and a sign :math:`s_0 = \pm 1`, the root
lies below :math:`\ell` at every :math:`\varepsilon \ge E` when

* (C1) :math:`s_0\,h(\varepsilon, \tau) > 0` for every :math:`\tau \in [\ell(\varepsilon), 0]`,
  and
* (C2) :math:`s_0\,(h(\varepsilon, 0) - h(\varepsilon, -T)) > 0` (the side the evaluation
  reads as "enough noise" is :math:`s_0`, so its convention :math:`\delta = 1` never
  applies).

(C1) is a condition on a two-dimensional region.  It is reduced to a closed form in
:math:`\varepsilon` alone term by term: :math:`s_0 h` is a sum of terms :math:`g_k`, and a
term whose :math:`\tau`-derivative has a sign for every :math:`\varepsilon > 0,\ \tau < 0`
(SymPy's sign rules on the derivative, with positive and negative symbols) is at least its
value at the end it increases from: :math:`g_k(\varepsilon, \ell(\varepsilon))` when it is
non-decreasing, :math:`g_k(\varepsilon, 0)` when it is non-increasing.  The sum
:math:`\Lambda(\varepsilon)` of those values is at most :math:`s_0 h(\varepsilon, \tau)` on
the whole segment, so (C1) follows from :math:`\Lambda > 0` on :math:`[E, \infty)`, which
the forms at infinity of :mod:`symgdp.measurement.whole_line.infinity_forms` may prove.

This module only builds the expressions (SymPy); proving them is the rules' work.

Example:
    >>> import sympy
    >>> from symgdp.symbolic.implicit import LogDeltaRoot
    >>> from symgdp import eps
    >>> e, t = sympy.symbols("e t", real=True)
    >>> root = LogDeltaRoot(eps, sympy.Lambda((e, t), 2 - 2 * sympy.sqrt(-t) / e))
    >>> ell, cases = root_conditions(root, eps, 1.0, 100.0)
    >>> [s for s, _ in cases]  # both signs reduce term by term; the rules decide which holds
    [1, -1]
"""

from __future__ import annotations

from typing import Any

import sympy
from flint import arb, ctx

from symgdp.symbolic.implicit import T_MAX, LogDeltaRoot

__all__ = ["RootOutside", "gaussian_log_lower", "root_conditions"]

#: how far (in log delta) the root is proved below the Gaussian's lower form: the forms
#: compare the two with this margin (a difference exactly 0 cannot be proved in balls)
SLACK = 1
#: a residual larger than this (operations) is not given to SymPy's sign rules
_MAX_OPS = 400
#: functions continuous on their real domain that a residual may hold (the value of a
#: non-increasing term at tau = 0 is then its limit from the left)
_CONTINUOUS = (sympy.exp, sympy.log, sympy.erf, sympy.erfc)


class RootOutside(Exception):
    """The root is outside what this reduction handles (the reason is the message)."""


def gaussian_log_lower(var: sympy.Symbol, mu: float, E: float) -> sympy.Expr:
    r"""A closed form :math:`\ell(\varepsilon) \le L_\mu(\varepsilon) - 1` with
    :math:`L_\mu` the lower form of :math:`\log\delta_\mu` on :math:`[E, \infty)` (theory
    §14), every constant an exact rational: its :math:`\varepsilon^2` coefficient is
    :math:`-(1 + 2^{-40})/(2\mu^2)`, its constant that of :math:`L_\mu` rounded down minus 1.

    >>> from symgdp import eps
    >>> gaussian_log_lower(eps, 1.0, 100.0).coeff(eps**2) == -(1 + sympy.Rational(1, 2**40)) / 2
    True
    """
    m, e = sympy.Rational(mu), sympy.Rational(E)
    b = e / m + m / 2
    if not (m > 0 and b * b > 3):
        raise RootOutside("b_E must exceed sqrt(3)")
    with ctx.workprec(128):
        am, ae = arb(mu), arb(E)
        ab = ae / am + am / 2
        c = (-am * am / 8 - (2 * arb.pi()).log() / 2 + 3 * am.log() - am * am / ae
             + (1 - 3 / (ab * ab)).log() - SLACK)
        if not c.is_finite():
            raise RootOutside("the Gaussian's constant is not finite")
        # one exact rational below the constant: the rules read a sum of logarithms of
        # constants term by term, with signs they cannot always decide
        man, exp = c.lower().mid().man_exp()
    const = sympy.Integer(int(man)) * sympy.Integer(2) ** int(exp)
    # the eps^2 coefficient a relative 2^-40 below the Gaussian's: the comparison of the
    # two forms then has a leading term proved positive instead of a ball around 0
    lead = (1 + sympy.Rational(1, 2**40)) / (2 * m**2)
    return -lead * var**2 + var / 2 - 2 * sympy.log(var) + const


def _allowed(expr: sympy.Basic) -> bool:
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Symbol, sympy.Dummy, sympy.Number, sympy.Add, sympy.Mul,
                             sympy.Pow, sympy.NumberSymbol, *_CONTINUOUS)):
            continue
        return False
    return True


def _slope_sign(term: sympy.Expr, e: sympy.Symbol, t: sympy.Symbol) -> int | None:
    r"""+1 (non-decreasing in t), -1 (non-increasing) or 0 (free of t) for every e > 0,
    t < 0, by SymPy's sign rules on the derivative; None when undecided."""
    if t not in term.free_symbols:
        return 0
    ep, u = sympy.Dummy("e", positive=True), sympy.Dummy("u", positive=True)
    d = sympy.diff(term, t).xreplace({e: ep, t: -u})
    if d.is_nonnegative is True:
        return 1
    if d.is_nonpositive is True:
        return -1
    return None


def root_conditions(root: Any, var: sympy.Symbol, mu: float, E: float
                    ) -> tuple[sympy.Expr, list[tuple[int, list[sympy.Expr]]]]:
    r"""``(ell, cases)``: the bound :math:`\ell` of :func:`gaussian_log_lower` and, per
    sign :math:`s_0` the term-wise reduction works for, the closed forms in ``var`` whose
    positivity on :math:`[E, \infty)` proves (C1) and (C2) (:math:`\Lambda` and
    :math:`s_0(h(\varepsilon, 0) - h(\varepsilon, -T))`).  When every one of a case is
    proved positive there, :math:`t(\varepsilon) \le \ell(\varepsilon)` for every
    :math:`\varepsilon \ge E`.

    Raises:
        RootOutside: the root is not of ``var`` itself, or its residual holds functions
            other than powers, ``exp``, ``log``, ``erf``, ``erfc``, or no sign works.
    """
    if not isinstance(root, LogDeltaRoot) or root.args[0] != var:
        raise RootOutside("a root of an argument other than eps")
    lam = root.args[1]
    e, t = lam.variables
    # SymPy combines Floats in their own (rounded) arithmetic: every Float becomes the
    # exact rational it stores first, so that nothing below is rounded
    h = lam.expr.xreplace({f: sympy.Rational(f) for f in lam.expr.atoms(sympy.Float)})
    if not _allowed(h) or sympy.count_ops(h) > _MAX_OPS:
        raise RootOutside("a residual outside the continuous elementary functions")
    ell = gaussian_log_lower(var, mu, E)
    cases = []
    for s0 in (1, -1):
        terms = sympy.Add.make_args(sympy.expand(s0 * h, deep=False))
        lam_terms = []
        for g in terms:
            sign = _slope_sign(g, e, t)
            if sign is None:
                break
            at = ell if sign > 0 else sympy.S.Zero
            lam_terms.append(g.xreplace({t: at}) if sign else g)
        else:
            low = sympy.Add(*lam_terms).xreplace({e: var})
            side = (s0 * (h.xreplace({t: sympy.S.Zero})
                          - h.xreplace({t: -sympy.Rational(T_MAX)}))).xreplace({e: var})
            if low.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo) or side.has(
                    sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
                continue
            cases.append((s0, [low, side]))
    if not cases:
        raise RootOutside("no sign of the residual's terms in t is proved")
    return ell, cases
