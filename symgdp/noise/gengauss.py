r"""Generalized Gaussian noise :math:`p(x) \propto e^{-|x/\sigma|^k}`: a threshold without a
closed form, certified in balls.

For :math:`k = 1` (Laplace) and :math:`k = 2` (Gaussian) the threshold
:math:`x_\varepsilon` with :math:`L(x_\varepsilon) = \varepsilon` has a closed form and
:func:`symgdp.additive_noise` derives the profile symbolically.  For other :math:`k` the
loss

.. math:: L(x) = \log p(x) - \log p(x - \Delta)
          = \frac{|x - \Delta|^k - |x|^k}{\sigma^k}

gives an equation SymPy does not solve (nor does it integrate the density to its CDF in
the time budget).  :func:`generalized_gaussian` certifies the profile numerically instead:

* **Monotonicity.**  For :math:`k \ge 1`, :math:`\log p = -|x/\sigma|^k` is concave (a
  convex power of :math:`|x|`), so :math:`L` is non-increasing for every shift (Karlin
  1968, Ch. 1; Saumard & Wellner 2014, Prop. 2.3) and :math:`\{L > \varepsilon\} =
  (-\infty, x_\varepsilon)`.  For :math:`k < 1` the density is not log-concave: refused.
* **The threshold** is proved in balls: a bracket :math:`[a, b]` with :math:`L(a) >
  \varepsilon \ge L(b)` proved (python-flint ``arb``), bisected to :math:`2^{-200}`
  relative (:func:`symgdp.numerics.bisection.proved_crossing`).  Outside
  :math:`[0, \Delta]` the loss is evaluated as :math:`|x/\sigma|^k
  \operatorname{expm1}(k \operatorname{log1p}(\mp\Delta/|x|))`, so a threshold far out
  (:math:`k` near 1) stays decidable; beyond :math:`|x| = 2^{4096}` it is refused.  For
  :math:`k = 1` an :math:`\varepsilon` within the ball of :math:`\pm\Delta/\sigma` is
  bounded at a point just below it (:math:`\delta` does not increase).
* **The profile** :math:`\delta(\varepsilon) = F(x_\varepsilon) - e^{\varepsilon}
  F(x_\varepsilon - \Delta)` (Balle & Wang 2018, Thm 5, for the Gaussian; the
  hockey-stick divergence on the half-line in general) is bounded above by
  :math:`F(b) - e^\varepsilon F(a - \Delta)` (:math:`F` increasing), with the CDF in
  closed form, :math:`F(x) = Q(1/k, |x/\sigma|^k)/2` for :math:`x \le 0` and :math:`1 -
  Q(1/k, |x/\sigma|^k)/2` for :math:`x \ge 0` (:math:`Q` the regularised upper incomplete
  gamma function, Arb's ``gamma_upper``: rigorous, and accurate far into the tail).
  The density is symmetric, so both directions agree.

**Tails.** The loss grows like :math:`k\Delta|x|^{k-1}/\sigma^k`, so
:math:`\log\delta(\varepsilon)` decays like :math:`-c\,\varepsilon^{k/(k-1)}`: faster than
the Gaussian's :math:`-\varepsilon^2` for :math:`1 < k < 2`, slower for :math:`k > 2`.  By
the tail criterion (theory §5) noise lighter-tailed than Gaussian (:math:`k > 2`) is then
*not* :math:`\mu`-GDP for any :math:`\mu`, while :math:`1 \le k \le 2` is.  This heuristic
is not a proof here: the source has no symbolic tail limit, and :func:`symgdp.measure`
reports the head GDP with its tail failure probability.

The guarantee holds for neighbours with :math:`|f(D) - f(D')| \le \Delta` under whichever
relation (add/remove or replace-one) :math:`\Delta` is the sensitivity for.

Example:
    >>> p = generalized_gaussian(2, scale=2 ** 0.5, sensitivity=1)   # N(0, 1): 1-GDP
    >>> from symgdp import delta_mu
    >>> abs(p(1.0) / delta_mu(1.0, 1.0) - 1) < 1e-12
    True
"""

from __future__ import annotations

import math
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.errors import DomainError, ProfileError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.noise.density import log_delta_each
from symgdp.numerics.balls import gt3, to_arb
from symgdp.numerics.bisection import proved_crossing
from symgdp.profile import Profile
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["GeneralizedGaussianSource", "generalized_gaussian", "match_generalized_gaussian"]

_PREC = 256
_BISECT = 220   # halvings of the threshold's bracket: 2^-200 relative and below
_GROW = 4096    # doublings of the starting bracket before refusing (|x_eps| < 2^4096)


def _positive_number(value: Any, what: str) -> sympy.Expr:
    try:
        # a float is the binary number it stores, exactly (never a nearby simpler one)
        v = sympy.Rational(value) if isinstance(value, float) and math.isfinite(value) \
            else sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise DomainError(f"{what} must be a positive number, got {value!r}") from exc
    if isinstance(value, bool) or not v.is_number or not (v.is_real and v > 0) \
            or not v.is_finite:
        raise DomainError(f"{what} must be a positive finite number, got {value!r}")
    return v


class GeneralizedGaussianSource:
    r"""The profile of :math:`f(D) + Z`, :math:`Z \propto e^{-|x/\sigma|^k}`, as a numeric
    source: :meth:`log_delta` is a proved upper bound (see the module notes)."""

    implied = False

    def __init__(self, k: sympy.Expr, scale: sympy.Expr, shift: sympy.Expr) -> None:
        self.kind = f"generalized Gaussian (k = {k})"
        self.k_expr, self.scale_expr, self.shift_expr = k, scale, shift
        with ctx.workprec(_PREC):
            # exact balls: a rational exactly (outward-rounded), anything else (sqrt(2),
            # 2**(-2/3)) enclosed by the ball compiler, never a nearby decimal
            self._k, self._s, self._d = (to_arb(v) if v.is_Rational else
                                         lambdify_arb(v, _EPS)(0) for v in (k, scale, shift))
            self._inv_k = 1 / self._k
            # sup L: Delta/sigma for k = 1 (pure DP), unbounded for k > 1
            self._sup = (self._d / self._s) if k == 1 else None

    def _pow(self, x: arb) -> arb:
        """|x / sigma|^k at a point (x exact)."""
        a = abs(x / self._s)
        if a.is_zero():
            return arb(0)
        return (self._k * a.log()).exp()

    def loss(self, x: arb) -> arb:
        """L(x) as a ball; outside [0, Delta] as |x/sigma|^k expm1(k log1p(-+Delta/|x|)),
        so that far out (|x|^k huge, L moderate: k near 1) the difference of two huge
        powers does not swamp L (the ball stays decidable)."""
        with ctx.workprec(_PREC):
            if x < 0:
                return self._pow(x) * (self._k * (self._d / -x).log1p()).expm1()
            if x > self._d:
                return self._pow(x) * (self._k * (-self._d / x).log1p()).expm1()
            return self._pow(x - self._d) - self._pow(x)

    def cdf(self, x: arb) -> arb:
        """F(x) at an exact point (a ball)."""
        with ctx.workprec(_PREC):
            q = self._pow(x).gamma_upper(self._inv_k, regularized=1) / 2
            return q if x <= 0 else 1 - q

    def _side(self, e: arb) -> Any:
        return lambda x: gt3(self.loss(x), e)

    def _bracket(self, e: arb) -> tuple[arb, arb]:
        """(a, b) with L(a) > e >= L(b) proved, b - a tiny (:func:`proved_crossing`)."""
        side = self._side(e)
        with ctx.workprec(_PREC):
            lo, hi = -self._d, self._d + 1
            for _ in range(_GROW):
                if side(lo) is True:
                    break
                lo = 2 * lo           # exact: the bracket's points stay binary fractions
            for _ in range(_GROW):
                if side(hi) is False:
                    break
                hi = 2 * hi
            if side(lo) is not True or side(hi) is not False:
                raise ProfileError(
                    f"the threshold x_eps of the generalized Gaussian (k = {self.k_expr}) "
                    f"at eps = {e.mid().str(12, radius=False)} lies beyond 2^{_GROW} or "
                    "is not separated in 256-bit balls (k too close to 1 for this eps)")
            return proved_crossing(side, lo, hi, lambda a, b: (a + b) / 2, _BISECT)

    def delta_ball(self, eps: float) -> arb:
        """An upper bound on delta(eps), as a ball whose upper end is the bound."""
        with ctx.workprec(_PREC):
            e = arb(eps)
            if self._sup is not None:  # k = 1: L takes values in [-sup, sup] only
                sup = self._sup
                if e >= sup:
                    return arb(0)
                if e <= -sup:
                    return 1 - e.exp()  # every L >= -sup >= eps: the whole line
                if not e > -sup:
                    # eps within the ball of -sup: delta does not increase, so delta(eps)
                    # <= delta(e') = 1 - e^{e'} at e' = the ball's lower end, <= -sup
                    return 1 - arb((-sup).lower()).exp()
                if not e < sup:
                    # eps within the ball of sup (eps = Delta/sigma with sigma not a binary
                    # fraction): no point has L > eps proved; delta(eps) <= delta(e') at
                    # an e' < eps below the ball
                    e = arb(sup.lower()) - abs(sup) * arb(2) ** (16 - _PREC)
            a, b = self._bracket(e)
            up = self.cdf(b) - e.exp() * self.cdf(a - self._d)
            return arb(up.upper())

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta at each point (float64, vectorised)."""
        return log_delta_each(self.delta_ball, x, _PREC)

    def tail_limit(self) -> None:
        """Not derived (see the module notes on tails)."""
        return None

    def latex(self) -> str:
        s, k = sympy.latex(self.scale_expr), sympy.latex(self.k_expr)
        return rf"Z \propto e^{{-|x/{s}|^{{{k}}}}}"


def variance(k: Any, scale: Any = 1) -> float:
    r"""The variance :math:`\sigma^2\Gamma(3/k)/\Gamma(1/k)` of :math:`e^{-|x/\sigma|^k}`."""
    return float(scale) ** 2 * math.gamma(3 / float(k)) / math.gamma(1 / float(k))


def generalized_gaussian(k: Any, scale: Any = 1, sensitivity: Any = 1) -> Profile:
    r"""The certified profile of additive generalized Gaussian noise
    :math:`p(x) = \frac{k}{2\sigma\Gamma(1/k)} e^{-|x/\sigma|^k}` (see the module notes).

    Args:
        k: the shape, a number :math:`\ge 1` (1: Laplace, 2: Gaussian with standard
            deviation :math:`\sigma/\sqrt2`).
        scale: :math:`\sigma > 0`.
        sensitivity: :math:`\Delta > 0`.

    Returns:
        A numeric :class:`~symgdp.profile.Profile` (:meth:`Profile.from_source`) whose
        values are proved upper bounds; ``meta["derivation"]`` says how.

    Raises:
        DomainError: a shape below 1 (not log-concave: the loss is not monotone, named),
            or a scale or sensitivity that is not a positive number.
    """
    kk = _positive_number(k, "the shape k")
    if kk < 1:
        raise DomainError(
            f"the shape k = {k} is below 1: exp(-|x|^k) is then not log-concave (log p = "
            "-|x|^k is not concave), the privacy loss is not monotone and the worst-case "
            "shift is not proved; k >= 1 is derived")
    s = _positive_number(scale, "the scale sigma")
    d = _positive_number(sensitivity, "the sensitivity")
    src = GeneralizedGaussianSource(kk, s, d)
    derivation = (
        f"p(x) = k/(2 sigma Gamma(1/k)) exp(-|x/sigma|^k) with k = {kk}, sigma = {s}; "
        f"sensitivity Delta = {d}, under whichever relation (add/remove or replace-one) "
        "Delta is the sensitivity for. log p concave (k >= 1), so L(x) = (|x - Delta|^k - "
        "|x|^k)/sigma^k is non-increasing; x_eps proved by ball bisection; delta(eps) <= "
        "F(b) - e^eps F(a - Delta) with F from the regularised upper incomplete gamma "
        "function (Arb); symmetric noise, one direction")
    return Profile.from_source(src, name=f"generalized Gaussian noise (k = {kk})",
                               derivation=derivation, sensitivity=d, shape=kk, scale=s)


def match_generalized_gaussian(expr: sympy.Expr, x: sympy.Symbol
                               ) -> tuple[sympy.Expr, sympy.Expr] | None:
    r"""``(k, sigma)`` when ``expr`` is :math:`c\,e^{-a|x|^k}` with numbers :math:`k \ge 1`
    other than 1 and 2 (those :func:`symgdp.additive_noise` derives symbolically) and
    :math:`a > 0`, :math:`\sigma = a^{-1/k}`, and :math:`c` the normaliser
    :math:`k/(2\sigma\Gamma(1/k))`; ``None`` when it is not of that form.

    Raises:
        DomainError: of that form but :math:`c` is not the normaliser (the mass is named).
    """
    cc, rest = expr.as_independent(x, as_Add=False)
    if not isinstance(rest, sympy.exp) or not cc.is_number:
        return None
    g = rest.args[0]
    xp = sympy.Dummy("x", positive=True)
    # -a|x|^k on x > 0 (SymPy may have written |x|^3 as x^2 |x|), and even in x
    gp = sympy.powsimp(sympy.expand_power_base(g.xreplace({x: xp}), force=True))
    coef, kk = gp.as_coeff_exponent(xp)
    if coef.has(xp) or not (coef.is_number and kk.is_number) or gp != coef * xp ** kk:
        return None
    if sympy.simplify(g.xreplace({x: -x}) - g) != 0:
        return None
    aa = -coef
    if not (kk.is_real and aa.is_positive and kk >= 1) or kk in (1, 2):
        return None
    sigma = aa ** (-1 / kk)
    mass = cc * 2 * sigma * sympy.gamma(1 / kk) / kk
    gap = sympy.N(mass - 1, 50)
    if not gap.is_number:
        raise ProfileError(f"cannot evaluate the mass of {expr}")
    if abs(gap) > sympy.Float("1e-40"):
        raise DomainError(f"the density {expr} integrates to {sympy.N(mass, 15)} over the "
                          "real line, not 1")
    if sympy.simplify(mass - 1) != 0:
        raise ProfileError(f"could not prove that the density {expr} integrates to 1 "
                           f"(its mass is {mass}, 1 to 40 digits)")
    return kk, sigma
