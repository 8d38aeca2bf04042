r"""The staircase mechanism (Geng & Viswanath 2016): piecewise-constant noise, pure DP.

Geng & Viswanath ("The optimal noise-adding mechanism in differential privacy", IEEE
Trans. Inf. Theory 62(2), 2016, their definition of the staircase-shaped density) add to a
query of sensitivity :math:`\Delta` the symmetric, piecewise-constant density

.. math:: f(x) = a(\gamma)\,e^{-k\varepsilon_0}\ \text{on}\ [k\Delta, (k+\gamma)\Delta),
          \qquad f(x) = a(\gamma)\,e^{-(k+1)\varepsilon_0}\ \text{on}\
          [(k+\gamma)\Delta, (k+1)\Delta),\qquad k = 0, 1, 2, \dots,

:math:`f(-x) = f(x)`, with :math:`b = e^{-\varepsilon_0}` and :math:`a(\gamma) = (1 -
b)/(2\Delta(\gamma + (1 - \gamma) b))` (the mass of :math:`[0, \Delta)` is
:math:`a\Delta(\gamma + (1-\gamma)b) = (1-b)/2`, and each further cell is :math:`b` times
the previous one: total :math:`2 \cdot \frac{1-b}{2} \cdot \frac{1}{1-b} = 1`).  It is not
log-concave, so :func:`symgdp.additive_noise` (monotone loss) does not cover it; this
module derives its profile exactly, by the loss-value route of
:mod:`symgdp.noise.discrete` (:func:`~symgdp.noise.discrete.loss_value_profile`).

**The loss and its masses.**  Write :math:`x = u\Delta` and :math:`A = a\Delta = (1 -
b)/(2(\gamma + (1-\gamma)b))`, and call the *level* :math:`n(u)` of :math:`u \ge 0` the
number of the points :math:`t_k = k + \gamma` (:math:`k \ge 0`) that are :math:`\le u`, so
:math:`f = a b^{n(|u|)}` (up to the null set of the breakpoints).  With the shift
:math:`\Delta` (:math:`u \mapsto u - 1`) the loss :math:`L(u) = \log f(u) - \log f(u - 1)
= -\varepsilon_0\,(n(|u|) - n(|u - 1|))` is:

* :math:`u < 0`: :math:`|u-1| = |u| + 1` holds exactly one :math:`t_k` more below it, so
  :math:`L = +\varepsilon_0`; the mass of :math:`p` there is :math:`1/2`;
* :math:`u \ge 1`: likewise :math:`L = -\varepsilon_0`, mass :math:`P(Z \ge \Delta) =
  \frac12 - \frac{1-b}{2} = b/2`;
* :math:`0 \le u < 1`: :math:`f(u) = a` on :math:`[0, \gamma)`, :math:`ab` on
  :math:`[\gamma, 1)`; :math:`f(u-1) = f(1-u) = ab` on :math:`(0, 1-\gamma]`, :math:`a` on
  :math:`(1-\gamma, 1)`.  With :math:`m = \min(\gamma, 1-\gamma)`: :math:`L =
  +\varepsilon_0` on :math:`[0, m)` (mass :math:`Am`), :math:`L = -\varepsilon_0` on a set
  of length :math:`m` where :math:`f = ab` (mass :math:`Abm`), and :math:`L = 0` on the
  rest, of length :math:`|2\gamma - 1|`, where :math:`f = a` if :math:`\gamma \ge 1/2`
  (mass :math:`A(2\gamma-1)`), :math:`f = ab` if :math:`\gamma < 1/2` (mass
  :math:`Ab(1-2\gamma)`).

So :math:`L \in \{\varepsilon_0, 0, -\varepsilon_0\}` with masses :math:`P_+ = \frac12 +
Am`, :math:`P_0` as above and :math:`P_- = \frac b2 + Abm` (they sum to :math:`\frac{1+b}2
+ A(\gamma + (1-\gamma)b) = 1`, checked symbolically at run time), and

.. math:: \delta(\varepsilon) = \sum_\ell P_\ell\,(1 - e^{\varepsilon-\ell})_+
          = \Bigl(\frac12 + \frac{(1-b)\min(\gamma, 1-\gamma)}{2(\gamma + (1-\gamma)b)}
          \Bigr)\bigl(1 - e^{\varepsilon - \varepsilon_0}\bigr)
          \quad (0 \le \varepsilon < \varepsilon_0),

:math:`\delta(\varepsilon) = 0` for :math:`\varepsilon \ge \varepsilon_0`: pure
:math:`\varepsilon_0`-DP.  At :math:`\gamma = 1/2`, :math:`P_+ = 1/(1+b)` and the profile
is randomized response's, the largest of any :math:`\varepsilon_0`-DP mechanism.  The
noise is symmetric, so the reversed pair gives the same profile (substitute :math:`x
\mapsto \Delta - x`).

**Smaller shifts are not worse** (the density is not log-concave, so this is proved here,
not inherited): for a shift :math:`s\Delta`, :math:`0 < s \le 1`, the points :math:`t_k`
are spaced by 1, so the loss again takes only the values :math:`\pm\varepsilon_0, 0`, and
the mass where it is :math:`+\varepsilon_0` is :math:`A(\min(s, \gamma) + sb/(1-b) +
\max(0, \min(\gamma, s-\gamma)))` (for :math:`u \le 0`: one :math:`t_k` in :math:`(|u|,
|u| + s]`, cells of level :math:`k` of length :math:`s`, the first :math:`\min(s,\gamma)`;
for :math:`0 < u < s`: :math:`u < \gamma \le s - u`).  Each term is non-decreasing in
:math:`s`, and for :math:`\varepsilon \ge 0` only that mass enters :math:`\delta`, so
:math:`\delta_s \le \delta_1` pointwise: the profile holds for every pair of neighbours
with :math:`|f(D) - f(D')| \le \Delta`, under whichever relation (add/remove or
replace-one) :math:`\Delta` is the sensitivity for.

Geng & Viswanath's optimal :math:`\gamma` for the cost :math:`E|Z|` at a given
:math:`\varepsilon_0` is :math:`\gamma^* = 1/(1 + e^{\varepsilon_0/2})`
(:func:`optimal_gamma`; "their optimal :math:`\gamma`" for the :math:`\ell^1` cost: the
theorem number was not checked against the paper here).

Example:
    >>> import sympy
    >>> e0 = sympy.Symbol("epsilon_0", positive=True)
    >>> p = staircase(e0, sympy.Rational(1, 2))
    >>> p.meta["derivation"].verdict
    'pure DP: L <= epsilon_0, so delta(eps) = 0 for eps >= epsilon_0 (epsilon_0-DP)'
    >>> q = p.replace(values={"epsilon_0": 1})
    >>> round(q(0.0), 12)   # randomized response: (e - 1)/(e + 1)
    0.46211715726
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import sympy

from symgdp.errors import DomainError, ProfileError
from symgdp.noise.density import aligned_rows, exact_number, positive_number, tex_text
from symgdp.noise.discrete import loss_value_profile
from symgdp.profile import Profile
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["StaircaseDerivation", "optimal_gamma", "staircase"]

RELATION = ("neighbours D ~ D' with |f(D) - f(D')| <= Delta, under whichever relation "
            "(add/remove or replace-one) Delta is the sensitivity for (every shift "
            "|s| <= Delta proved no worse than Delta)")


def _gamma(value: Any) -> sympy.Expr:
    v = exact_number(value, "gamma")
    if not v.is_number:
        raise DomainError(f"gamma = {v} must be a number in [0, 1] (a symbol's range "
                          "cannot be declared, and the profile depends on min(gamma, "
                          "1 - gamma))")
    if not (v.is_real and 0 <= v <= 1):
        raise DomainError(f"gamma must lie in [0, 1], got {value!r}")
    if not v.is_Rational:
        # an irrational gamma (optimal_gamma's 1/(1 + e^(eps0/2))) gives masses that the
        # float evaluator of symgdp.evaluation does not finish expanding: refused, not hung
        raise DomainError(f"gamma = {v} is not a rational number: give it as a float or a "
                          f"Rational, e.g. float(optimal_gamma(eps0)) = {float(v)!r} (the "
                          "profile is then exact for that gamma)")
    return v


def optimal_gamma(eps0: Any) -> sympy.Expr:
    r"""Geng & Viswanath's optimal :math:`\gamma^* = 1/(1 + e^{\varepsilon_0/2})` for the
    cost :math:`E|Z|` (see the module notes).

    Example:
        >>> optimal_gamma(2)
        1/(1 + E)
    """
    return 1 / (1 + sympy.exp(positive_number(eps0, "eps0", "epsilon_0") / 2))


def _masses(eps0: sympy.Expr, gamma: sympy.Expr) -> tuple[list, bool]:
    """((loss value, mass of p where it is taken) for the shift Delta (module notes),
    the masses proved to sum to 1); runs in a bounded child.  The side of 1/2 that gamma
    is on is decided first (gamma is a rational number); the masses are then rational
    functions of b = e^-eps0 (a symbol here), so cancel() proves that they sum to 1 as an
    identity in b."""
    b, G = sympy.Dummy("b", positive=True), sympy.Dummy("gamma", positive=True)
    half = sympy.S.Half
    side = 0 if gamma == half else (1 if bool(gamma > half) else -1)
    A = (1 - b) / (2 * (G + (1 - G) * b))
    m = G if side < 0 else 1 - G          # min(gamma, 1 - gamma)
    raw = [(eps0, half + A * m)]
    if side > 0:
        raw.append((sympy.S.Zero, A * (2 * G - 1)))
    elif side < 0:
        raw.append((sympy.S.Zero, A * b * (1 - 2 * G)))
    raw.append((-eps0, b / 2 + A * b * m))
    unit = sympy.cancel(sympy.Add(*[w for _, w in raw]).xreplace({G: gamma}) - 1) == 0
    groups = [(ell, sympy.factor(sympy.cancel(w.xreplace({G: gamma}))).xreplace(
        {b: sympy.exp(-eps0)})) for ell, w in raw]
    return groups, unit


def _derive(eps0: sympy.Expr, gamma: sympy.Expr) -> tuple:
    """(groups, total mass proved 1, profile, sup L); runs in a bounded child."""
    groups, unit = _masses(eps0, gamma)
    form = loss_value_profile(groups, tidy=False)  # the masses are factored already
    if form is None:
        raise ProfileError(f"the loss values {eps0}, 0, {-eps0} could not be ordered")
    return groups, unit, form[0], form[1]


def _cell_check(eps0: sympy.Expr, gamma: sympy.Expr, profile: sympy.Expr,
                at: dict) -> str:
    r"""The profile against a direct sum over the cells of the piecewise-constant
    integrand :math:`(f(x) - e^\varepsilon f(x - \Delta))_+`, in units of :math:`\Delta`
    (the breakpoints of :math:`f` are the integers and :math:`\pm(k + \gamma)`, so each
    unit cell cut at :math:`j + \gamma` and :math:`j + 1 - \gamma` holds both values
    constant).  The cells :math:`-3 \le j < 3` are summed; beyond them the tails are
    geometric series of ratio :math:`b` (:math:`f(u + 1) = b f(u)` for :math:`u \ge 0`,
    :math:`f(u - 1) = b f(u)` for :math:`u \le 0`, straight from the definition, so each
    further cell's term is :math:`b` times its neighbour's), summed in closed form.  At
    40 digits plus those :math:`1 - b` cancels; agreement to 12 digits relative (plus
    :math:`10^{-30} a`, the sum's rounding, where the value is 0) is required,
    ProfileError otherwise."""
    e0_at = eps0.xreplace(at)
    extra = max(0, -int(mpmath.floor(mpmath.log10(mpmath.mpf(sympy.N(e0_at, 20))))))
    with mpmath.workdps(40 + extra):
        e0 = mpmath.mpf(sympy.N(e0_at, 40 + extra))
        g = mpmath.mpf(sympy.N(gamma, 40 + extra))
        b = mpmath.exp(-e0)
        a = (1 - b) / (2 * (g + (1 - g) * b))

        def f(u: Any) -> Any:
            v = abs(u)
            k = mpmath.floor(v)
            return a * b ** (k if v - k < g else k + 1)

        cuts = sorted({mpmath.mpf(0), g, 1 - g, mpmath.mpf(1)})
        fn = sympy.lambdify(_EPS, profile.xreplace(at), "mpmath")
        grid = [0.0, 0.4 * float(e0), float(e0), 1.5 * float(e0)]
        for e in grid:
            ee = mpmath.exp(e)

            def cell(j: int, ee: Any = ee) -> Any:
                out = mpmath.mpf(0)
                for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                    if hi > lo:
                        mid = j + (lo + hi) / 2
                        out += max(0, f(mid) - ee * f(mid - 1)) * (hi - lo)
                return out

            # cells -3..2 directly; j >= 3 and j <= -4 as geometric tails of ratio b
            ref = mpmath.fsum(cell(j) for j in range(-3, 3))
            ref += (cell(2) + cell(-3)) * b / (1 - b)
            got = fn(mpmath.mpf(e))
            # the slack: rounding of the sum (a few ulps of the density's scale a)
            if abs(got - ref) > mpmath.mpf(10) ** -12 * abs(ref) + a * mpmath.mpf(10) ** -30:
                raise ProfileError(f"the staircase profile disagrees with the cell sum at "
                                   f"eps = {e:g}: {mpmath.nstr(got, 15)} against "
                                   f"{mpmath.nstr(ref, 15)}")
    shown = ", ".join(f"{k} = {v}" for k, v in at.items())
    return (f"agrees with a direct sum over the cells of (f(x) - e^eps f(x - Delta))_+ "
            f"(geometric tails summed) to 12 digits at eps/eps0 = 0, 0.4, 1, 1.5 "
            f"(gamma = {gamma}{', ' + shown if shown else ''})")


def staircase(eps0: Any, gamma: Any, sensitivity: Any = 1, *,
              timeout: float | None = None) -> Profile:
    r"""The exact privacy profile of the staircase mechanism :math:`f(D) + Z` (Geng &
    Viswanath 2016; see the module notes for the density and the derivation).

    Args:
        eps0: :math:`\varepsilon_0 > 0`, a number or a positive SymPy expression (the
            profile then stays symbolic in it; bind it with ``.replace(values=...)``).
        gamma: :math:`\gamma \in [0, 1]`, a rational number or a float (read exactly),
            e.g. ``float(optimal_gamma(eps0))``.
        sensitivity: :math:`\Delta > 0` (the profile does not depend on it: the density
            scales with :math:`\Delta`).
        timeout: budget in seconds of the symbolic step.

    Returns:
        A :class:`~symgdp.profile.Profile`, a ``Piecewise`` in :math:`\varepsilon` (zero
        from :math:`\varepsilon_0` on); ``meta["derivation"]`` is a
        :class:`StaircaseDerivation` (the loss values and their masses).

    Raises:
        DomainError: :math:`\varepsilon_0` not positive, :math:`\gamma` outside
            :math:`[0, 1]` or not a rational number, :math:`\Delta` not positive
            (named).

    Example:
        >>> p = staircase(1, float(optimal_gamma(1)))
        >>> round(p(0.0), 12)   # (1 - e^(-1/2)/2)(1 - e^-1), the module notes
        0.440420309046
        >>> p(1.0)
        0.0
    """
    e0 = positive_number(eps0, "eps0", "epsilon_0")
    g = _gamma(gamma)
    delta = positive_number(sensitivity, "the sensitivity", "Delta")
    groups, unit, expr, sup = run_bounded(_derive, e0, g, timeout=timeout)
    if not unit:
        raise ProfileError(f"the masses of the loss values were not proved to sum to 1 "
                           f"(eps0 = {e0}, gamma = {g})")
    params = sorted(e0.free_symbols, key=lambda s: s.name)
    check = _cell_check(e0, g, expr, {s: sympy.Rational(3, 2) for s in params})
    derivation = StaircaseDerivation(
        eps0=e0, gamma=g, sensitivity=delta,
        loss="L(x) = log f(x) - log f(x - Delta) takes the values eps0, 0, -eps0 only",
        masses=tuple(groups), profile=expr,
        verdict=f"pure DP: L <= {sup}, so delta(eps) = 0 for eps >= {sup} ({sup}-DP)",
        check=check)
    return Profile(expr, name="staircase noise",
                   reference="Geng & Viswanath 2016, derived in symgdp.noise.staircase",
                   derivation=derivation, eps0=sup, sensitivity=delta)


@dataclass(frozen=True)
class StaircaseDerivation:
    """The steps of :func:`staircase` (one sentence or formula each)."""

    eps0: sympy.Expr
    gamma: sympy.Expr
    sensitivity: sympy.Expr
    loss: str
    masses: tuple[tuple[sympy.Expr, sympy.Expr], ...]
    profile: sympy.Expr
    verdict: str
    check: str
    relation: str = RELATION

    def text_rows(self) -> list[tuple[str, str]]:
        masses = "; ".join(f"P(L = {ell}) = {m}" for ell, m in self.masses)
        return [("noise", f"staircase density (Geng & Viswanath 2016), eps0 = {self.eps0}, "
                          f"gamma = {self.gamma}; sensitivity {self.sensitivity}; "
                          f"{self.relation}"),
                ("loss", self.loss), ("masses", masses),
                ("derived profile", "delta(eps) = "
                 + str(self.profile).replace("varepsilon", "eps")),
                ("noise verdict", self.verdict), ("noise check", self.check)]

    def latex_rows(self) -> list[tuple[str, str]]:
        """(label, LaTeX) pairs for the report."""
        out = []
        for label, text in self.text_rows():
            body = (r"\delta(\varepsilon) = " + sympy.latex(self.profile)
                    if label == "derived profile" else r"\text{" + tex_text(text) + "}")
            out.append((label, body))
        return out

    def __str__(self) -> str:
        return aligned_rows(self.text_rows())
