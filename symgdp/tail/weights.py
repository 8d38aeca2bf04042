r"""The decay rate of a weighted sum whose weights have signs that depend on the parameters.

Setting (theory §5, the structural route of :mod:`symgdp.tail.rules`): a profile written as
:math:`S = \sum_k c_k g_k` with weights :math:`c_k` free of :math:`\varepsilon` and parts
:math:`g_k > 0` eventually, each with a proved rate
:math:`r_k = \lim -2\log g_k/\varepsilon^2 \in [0, \infty]` valid for every parameter value.
The rate of :math:`S` is then :math:`r = \lim -2\log S/\varepsilon^2` and the tail limit is
:math:`1/r`.

*Non-negative weights* (the usual case, handled in :mod:`symgdp.tail.rules`):
:math:`r = \min\{r_k : c_k > 0\}`.  Proof: :math:`S \ge c_j g_j` for each :math:`c_j > 0`
gives :math:`r \le r_j`; :math:`S \le (\sum_k c_k)\max_{c_k > 0} g_k` gives
:math:`r \ge \min_{c_k > 0} r_k`.

*One weight of undecided sign* (this module): all weights but :math:`c_u` are provably
positive, and :math:`c_u` may be positive, zero or negative depending on the parameters
(e.g. :math:`w\,\delta_a + (1 - w)\,\delta_b` with :math:`w > 0`).  The proposed rate is

.. math::

    F = \min\Bigl(\min_{k \ne u} r_k,\;
        \begin{cases} r_u & c_u > 0 \\ \infty & \text{otherwise}\end{cases}\Bigr),

and it is the rate of :math:`S` at *every admissible* parameter value (one where
:math:`S` is eventually positive, i.e. a profile at all), provided the *tie condition*
below holds.  Let :math:`R = \min_{k \ne u} r_k`, attained at :math:`i`.

* :math:`c_u > 0` or :math:`c_u = 0`: the non-negative case above.
* :math:`c_u < 0` and :math:`r_u > R`: :math:`g_u/g_i = e^{-(r_u - R)\varepsilon^2/2 +
  o(\varepsilon^2)} \to 0`, so :math:`c_i g_i \,(1 - o(1)) \le S \le \sum_{k\ne u} c_k g_k`
  and :math:`r = R = F`.
* :math:`c_u < 0` and :math:`r_u < R`: :math:`S \sim c_u g_u < 0` eventually; the value is
  inadmissible and no formula is wrong there.
* :math:`c_u < 0` and :math:`r_u = r_j` for some :math:`j \ne u` (a *tie*): in general the
  leading terms may cancel and :math:`S` decay faster than :math:`F` says.  The rule is
  used only when every tie is harmless: for each :math:`j \ne u`, either
  :math:`r_u - r_j` has a proved non-zero sign, or :math:`r_u - r_j` is a rational
  function of the parameters and every solution of :math:`r_u = r_j` (SymPy's ``solve``
  for one parameter: all roots of the numerator, less those its assumptions exclude)
  makes :math:`g_u` a
  constant multiple :math:`\lambda g_j` of :math:`g_j` *as expressions*, and
  :math:`c_j + \lambda c_u` is then provably positive.  At such a value the two terms are
  one term :math:`(c_j + \lambda c_u) g_j` with a positive weight, rate :math:`r_j`, and a
  tie group containing :math:`u` and positive-weight terms has total weight at least
  :math:`c_j + \lambda c_u > 0`; so :math:`r` is the minimum over the positive-weight
  groups, which is :math:`F` (:math:`r_u = r_j` appears in :math:`F` through :math:`j`).

Anything else (two undecided weights, a tie that ``solve`` cannot settle or that does not
make the parts proportional) is :class:`~symgdp.tail.asymptotics.Unsupported`: "unknown".
The result is a candidate like every structural answer: :mod:`symgdp.tail.limit` checks it
against the bound-value limit at every ordering of the parameters before returning it.
"""

from __future__ import annotations

from typing import Any

import sympy

from symgdp.tail.asymptotics import Unsupported, _sign

__all__ = ["undecided_weight_rate"]


def _parts(g: sympy.Expr, var: sympy.Symbol) -> dict[sympy.Expr, sympy.Expr]:
    """g as {eps-dependent factor: coefficient} over its terms."""
    out: dict[sympy.Expr, sympy.Expr] = {}
    for t in sympy.Add.make_args(sympy.expand(g, power_exp=False, log=False)):
        c, h = t.as_independent(var, as_Add=False)
        out[h] = out.get(h, sympy.S.Zero) + c
    return {h: c for h, c in out.items() if c != 0}


def _ratio(gu: sympy.Expr, gj: sympy.Expr, var: sympy.Symbol) -> sympy.Expr | None:
    """lambda with gu = lambda * gj as expressions (lambda free of var), or None."""
    pu, pj = _parts(gu, var), _parts(gj, var)
    if not pu or set(pu) != set(pj):
        return None
    lams = {sympy.cancel(pu[h] / pj[h]) for h in pu}
    if len(lams) != 1:
        return None
    lam = lams.pop()
    return None if var in lam.free_symbols else lam


def _tie_is_harmless(cu: sympy.Expr, gu: sympy.Expr, ru: sympy.Expr, cj: sympy.Expr,
                     gj: sympy.Expr, rj: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether r_u = r_j is impossible, or at every solution g_u = lambda g_j with
    c_j + lambda c_u > 0 (see the module docstring)."""
    if ru is sympy.oo or rj is sympy.oo:
        # one rate infinite: a tie only when both are, and then F = oo (limit 0) is the
        # rate whatever cancels, since S <= the positive-weight terms, all of rate oo
        return True
    diff = ru - rj
    if diff.has(sympy.nan, sympy.oo, sympy.zoo):
        return False
    s = _sign(diff)
    if s in (1, -1):
        return True
    syms = sorted(diff.free_symbols - {var}, key=str)
    if not syms:
        return False  # a proved equal rate with no parameter: an ordinary tie, unsettled
    if not diff.is_rational_function(*syms):
        return False  # solve lists every root only for rational equations
    for x in syms:
        try:
            sols = sympy.solve(sympy.Eq(ru, rj), x, dict=False)
        except (NotImplementedError, TypeError, ValueError):
            continue
        if not isinstance(sols, list) or not sols:
            continue
        ok = True
        for sol in sols:
            if not isinstance(sol, sympy.Expr) or x in sol.free_symbols:
                ok = False
                break
            rep = {x: sol}
            lam = _ratio(gu.xreplace(rep), gj.xreplace(rep), var)
            if lam is None or _sign(cj.xreplace(rep) + lam * cu.xreplace(rep)) != 1:
                ok = False
                break
        if ok:
            # solve for x within its assumptions lists every solution of r_u = r_j in x
            return True
    return False


def undecided_weight_rate(comps: list[tuple[sympy.Expr, sympy.Expr, sympy.Expr]],
                          var: sympy.Symbol) -> sympy.Expr:
    r"""The rate :math:`F` of the module docstring for ``comps`` = [(c_k, g_k, r_k)], where
    exactly one weight has an undecided sign and the others are provably positive.

    Raises :class:`~symgdp.tail.asymptotics.Unsupported` when the rule does not apply.

    Example:
        >>> import sympy
        >>> from symgdp import eps
        >>> a, b, w = sympy.symbols("a b w", positive=True)
        >>> ga, gb = sympy.exp(-eps**2 / a), sympy.exp(-eps**2 / b)
        >>> undecided_weight_rate([(w, ga, 2 / a), (1 - w, gb, 2 / b)], eps)
        Min(2/a, Piecewise((2/b, w < 1), (oo, True)))
    """
    signs = [_sign(c) for c, _, _ in comps]
    undecided = [k for k, s in enumerate(signs) if s is None]
    if len(undecided) != 1 or any(s != 1 for k, s in enumerate(signs) if k != undecided[0]):
        raise Unsupported("weights: more than one of undecided sign, or one not positive")
    u = undecided[0]
    cu, gu, ru = comps[u]
    for j, (cj, gj, rj) in enumerate(comps):
        if j != u and not _tie_is_harmless(cu, gu, ru, cj, gj, rj, var):
            raise Unsupported(f"the weight {cu} may be negative where the rate {ru} ties "
                              f"with {rj}")
    rest = [r for k, (_, _, r) in enumerate(comps) if k != u]
    cond: Any = sympy.StrictGreaterThan(cu, 0)
    return sympy.Min(*rest, sympy.Piecewise((ru, cond), (sympy.oo, True)))
