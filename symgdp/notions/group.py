r"""Group privacy: the guarantee for datasets that differ in :math:`k` records.

Two datasets at distance :math:`k` in a neighbouring relation (add/remove or replace-one:
the profile's own) are joined by a chain :math:`S_0 \sim S_1 \sim \dots \sim S_k`.

* :math:`\mu`-GDP gives :math:`k\mu`-GDP for groups of size :math:`k` (Dong, Roth & Su
  2021, Thm 2.14); for the Gaussian mechanism this is exact (the sensitivity becomes
  :math:`k\Delta`).
* An :math:`(\varepsilon, \delta)` condition gives, along the chain,
  :math:`P_0(E) \le e^{\varepsilon}P_1(E) + \delta \le \dots \le
  e^{k\varepsilon}P_k(E) + \delta\sum_{j=0}^{k-1} e^{j\varepsilon}`, so a profile
  :math:`\delta` yields the group profile

  .. math:: \delta_k(x) \le \delta(x/k)\,\sum_{j=0}^{k-1} e^{jx/k}
            = \delta(x/k)\,\frac{e^{x} - 1}{e^{x/k} - 1}
            \;\le\; k\,e^{(k-1)x/k}\,\delta(x/k),

  the classical group-privacy argument (Dwork & Roth 2014, Thm 2.2 for pure DP; the
  chain above for :math:`\delta > 0`) with each step taken at :math:`\varepsilon = x/k`.  It is a
  valid upper bound, not in general the tight group profile.
"""

from __future__ import annotations

import math
from typing import Any

from symgdp.errors import DomainError

__all__ = ["group_profile", "group_expr"]

#: metadata describing the original function, which the group profile is not
_STALE = ("mechanism", "tradeoff", "segments", "breakpoint", "breakpoint_delta", "source",
          "latex_template", "latex_constants", "p", "naive", "refined", "exact", "tight",
          "mu", "first_order", "valid_for")


def _check_k(k: Any) -> int:
    import numbers

    ok = (isinstance(k, numbers.Integral) and not isinstance(k, bool)) or (
        isinstance(k, float) and k.is_integer())
    if not ok or int(k) < 1:
        raise DomainError(f"the group size k must be a positive integer, got {k!r}")
    return int(k)


def group_expr(expr: Any, var: Any, k: int) -> Any:
    r"""The SymPy expression :math:`\delta(x/k)\sum_{j<k} e^{jx/k}` of the group bound
    (``var`` is :math:`x`; for ``k = 1`` the expression itself).

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x")
        >>> group_expr(sympy.exp(-x), x, 2)
        (exp(x/2) + 1)*exp(-x/2)
    """
    import sympy

    kk = _check_k(k)
    if kk == 1:
        return expr
    base = expr.xreplace({var: var / kk})
    if kk <= 32:
        factor = sympy.Add(*[sympy.exp(j * var / kk) for j in range(kk)])
    else:
        # sum_{j<k} e^{jx/k} <= k e^{(k-1)x/k}: one term instead of k
        factor = kk * sympy.exp((kk - 1) * var / kk)
    return base * factor


def group_profile(x: Any, k: Any) -> Any:
    r"""The guarantee for groups of size ``k``.

    Args:
        x: a GDP parameter :math:`\mu` (a float: returns :math:`k\mu`), or a profile
            (duck-typed: it needs ``expr``, ``var``, ``meta`` and ``replace``, as
            :class:`symgdp.Profile` has).  A Gaussian mechanism's profile
            (``meta["mechanism"]``) gives the Gaussian profile of :math:`k\mu` exactly;
            any other gives the bound of :func:`group_expr`.
        k: the group size, a positive integer.

    Returns:
        :math:`k\mu`, or a profile (``meta["group"] = k``, the mechanism tag dropped).

    Example:
        >>> group_profile(0.5, 3)
        1.5
        >>> from symgdp import mechanisms
        >>> round(group_profile(mechanisms.pure_dp(1.0), 2)(2.0), 12)  # 2-DP for pairs
        0.0
    """
    kk = _check_k(k)
    if isinstance(x, bool):
        raise DomainError(f"expected a profile or a GDP parameter mu, got {x!r}")
    if isinstance(x, (int, float)):
        m = float(x)
        if not m >= 0:
            raise DomainError(f"mu must be >= 0, got {x!r}")
        return kk * m
    for attr in ("expr", "var", "replace"):
        if not hasattr(x, attr):
            raise DomainError(f"group_profile needs a symbolic profile (with {attr!r}) or "
                              f"a GDP parameter mu, got {x!r}")
    import sympy

    meta = dict(getattr(x, "meta", {}) or {})
    stale: dict[str, Any] = {key: None for key in _STALE if key in meta}
    name = f"{x.name or 'profile'}, groups of {kk}" if hasattr(x, "name") else None
    tag = meta.get("mechanism")
    if isinstance(tag, tuple) and len(tag) == 2 and tag[0] == "gaussian":
        m = kk * sympy.sympify(tag[1])
        var = x.var

        def phi(z: Any) -> Any:
            return sympy.erfc(-z / sympy.sqrt(2)) / 2

        expr = phi(-var / m + m / 2) - sympy.exp(var) * phi(-var / m - m / 2)
        if _same_gaussian(x, tag[1]):
            stale["mechanism"] = ("gaussian", m)
            return x.replace(expr=expr, name=name, group=kk,
                             reference="Dong, Roth & Su (2021), Theorem 2.14", **stale)
    expr = group_expr(x.expr, x.var, kk)
    return x.replace(expr=expr, name=name, group=kk,
                     reference="group privacy along a chain of k neighbours "
                               "(Dwork & Roth 2014, §2.3)", **stale)


def _same_gaussian(x: Any, m: Any) -> bool:
    """The profile still is the Gaussian profile of its tag (checked at a few points)."""
    from symgdp.notions.bands import _tag_checked, enclosure

    try:
        enclose, has_lower = enclosure(x)
        t = _tag_checked(x, enclose) if has_lower else None
    except Exception:  # noqa: BLE001 - unknown: use the generic bound
        return False
    return t is not None and t[0] == "gaussian" and math.isfinite(float(t[1].mid()))
