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
  \varepsilon \ge L(b)` proved (python-flint ``arb``), bisected from binary-fraction
  ends to :math:`2^{-200}` of the scale :math:`|x|/|x/\sigma|^k` on which :math:`F` moves
  (:func:`symgdp.numerics.bisection.proved_crossing`).  Outside
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
  The density is symmetric, so both directions agree.  The same bracket bounds the profile
  from below, :math:`F(a) - e^\varepsilon F(b - \Delta)` (``delta_bounds``): a
  composition (:func:`symgdp.compose`) is then certified with a floor, as for a closed form.

**Tails (proved).**  For :math:`k > 1` write :math:`y = -x > 0`; then
:math:`L(-y) = ((y + \Delta)^k - y^k)/\sigma^k`, and by the mean value theorem
:math:`k\Delta y^{k-1}/\sigma^k \le L(-y) \le k\Delta (y + \Delta)^{k-1}/\sigma^k`, so the
threshold :math:`y_\varepsilon = -x_\varepsilon` satisfies
:math:`C\varepsilon^{1/(k-1)} - \Delta \le y_\varepsilon \le C\varepsilon^{1/(k-1)}` with
:math:`C = (\sigma^k/(k\Delta))^{1/(k-1)}`.  The profile is squeezed between two tail
probabilities of :math:`Z`: :math:`\delta(\varepsilon) \le P[Z > y_\varepsilon]` (drop the
subtracted term) and :math:`\delta(\varepsilon) \ge (1 - e^{-1}) P[Z > y_{\varepsilon+1}]`
(on :math:`\{L > \varepsilon + 1\}`, :math:`p - e^\varepsilon p(\cdot - \Delta) \ge
(1 - e^{-1}) p`).  As :math:`-\log P[Z > y] = (y/\sigma)^k + O(\log y)` (the incomplete
gamma function's asymptotics, DLMF 8.11.2), both give :math:`-\log\delta(\varepsilon) =
(C/\sigma)^k \varepsilon^{k/(k-1)} (1 + o(1))`, so

.. math:: \lim_{\varepsilon\to\infty} \frac{\varepsilon^2}{-2\log\delta(\varepsilon)}
          = \begin{cases} 0 & 0 < k < 2 \\ 2\Delta^2/\sigma^2 & k = 2 \\ \infty & k > 2
          \end{cases}

(:func:`tail_limit_formula`; :math:`k = 2` is the Gaussian with standard deviation
:math:`\sigma/\sqrt2`, :math:`\mu = \sqrt2\Delta/\sigma`; for :math:`k \le 1` the loss is
bounded, :math:`|L| \le (\Delta/\sigma)^k` by subadditivity of :math:`t \mapsto t^k`, so the
profile vanishes from some :math:`\varepsilon_0` on).  By the tail criterion (Dong, Roth &
Su 2021, via the GDP transformation: theory §5) noise lighter-tailed than the Gaussian
(:math:`k > 2`) is therefore *not* :math:`\mu`-GDP for any :math:`\mu`, and
:math:`0 < k \le 2` is.  Both the numeric source and the parametric family carry this limit
(``tail_limit()``), so ``identify()`` gives the verdict.

**Symbolic parameters.**  With a symbolic shape, scale or sensitivity
(:func:`symgdp.additive_noise` of :math:`c\,e^{-a|x|^k}` with symbols declared positive) the
profile is a :class:`GeneralizedGaussianFamily`: the derivation (loss, threshold equation,
profile through the incomplete gamma function, tail limit and verdict) as formulas in the
parameters, and the certified numeric source once ``.replace(values=...)`` binds them all
(a shape below 1 is refused then).

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
from collections.abc import Callable
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.errors import AnalysisTimeout, DomainError, ProfileError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.noise.density import log_delta_each
from symgdp.numerics.balls import gt3, to_arb
from symgdp.numerics.bisection import proved_crossing
from symgdp.profile import Profile
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["GeneralizedGaussianFamily", "GeneralizedGaussianSource", "generalized_gaussian",
           "match_generalized_gaussian", "tail_limit_formula", "derivation_parts"]

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
    certified = True   # every value is proved in Arb balls (a composition says so)
    # set on the sources a GeneralizedGaussianFamily binds: re-binds from the family
    bind: Callable[[Any], Any] | None = None

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
        if not a > 0:
            # a ball around 0 (x - Delta at x = Delta, Delta not a binary fraction): the
            # power lies in [0, upper^k], enclosed (log of the ball would be undefined)
            top = arb(a.upper())
            return arb(0).union((self._k * top.log()).exp()) if top > 0 else arb(0)
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
            # exact starting points (binary fractions, also when Delta is a ball such as
            # 1/3 or sqrt 2): every midpoint is then exact, and none is a ball around 0,
            # where the loss would be undecided and the bracket left wide (loose bound)
            lo = -arb(self._d.upper())
            hi = arb(self._d.upper()) + 1
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
            # F moves by about |x/sigma|^k times a relative change of x, and delta is a
            # difference of two such F (k near 1, far out: 30 digits cancel): halve on
            # until b - a is 2^-200 of the scale |x|/|x/sigma|^k, not of |x| (else the
            # bound is loose by far more than 1e-8 relative there)
            ln2 = math.log(2)
            far = float((self._k * abs(lo / self._s).log()).mid()) / ln2   # log2 |x/s|^k
            wide = float(abs(lo).log().mid()) / ln2                         # log2 |lo|
            extra = min(2 * _PREC, max(0, int(far) + 1)) + max(0, int(wide) + 2)
            return proved_crossing(side, lo, hi, lambda a, b: (a + b) / 2, _BISECT + extra)

    def delta_ball(self, eps: float) -> arb:
        """An upper bound on delta(eps), as a ball whose upper end is the bound."""
        with ctx.workprec(_PREC):
            return arb(self.delta_bounds(eps)[1].upper())

    def delta_bounds(self, eps: float | arb) -> tuple[arb, arb]:
        r"""Balls whose lower end of the first and upper end of the second bound
        delta(eps) (``eps`` a float, or an exact ball such as a grid point): on the
        threshold's proved bracket :math:`a < x_\varepsilon < b`,
        :math:`F(a) - e^\varepsilon F(b - \Delta) \le \delta(\varepsilon) \le F(b) -
        e^\varepsilon F(a - \Delta)` (:math:`F` increasing); the lower one (at least 0)
        gives a composition its floor."""
        zero = arb(0)
        with ctx.workprec(_PREC):
            e = arb(eps)
            if self._sup is not None:  # k = 1: L takes values in [-sup, sup] only
                sup = self._sup
                if e >= sup:
                    return zero, zero
                if e <= -sup:
                    whole = 1 - e.exp()  # every L >= -sup >= eps: the whole line
                    return whole, whole
                if not e > -sup:
                    # eps within the ball of -sup: delta does not increase, so delta(eps)
                    # <= delta(e') = 1 - e^{e'} at e' = the ball's lower end, <= -sup
                    return zero, 1 - arb((-sup).lower()).exp()
                if not e < sup:
                    # eps within the ball of sup (eps = Delta/sigma with sigma not a binary
                    # fraction): no point has L > eps proved; delta(eps) <= delta(e') at
                    # an e' < eps below the ball
                    e = arb(sup.lower()) - abs(sup) * arb(2) ** (16 - _PREC)
                    a, b = self._bracket(e)
                    return zero, self.cdf(b) - e.exp() * self.cdf(a - self._d)
            a, b = self._bracket(e)
            up = self.cdf(b) - e.exp() * self.cdf(a - self._d)
            lo = self.cdf(a) - e.exp() * self.cdf(b - self._d)
            return (lo if lo.lower() > 0 else zero), up

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta at each point (float64, vectorised)."""
        return log_delta_each(self.delta_ball, x, _PREC)

    def tail_limit(self) -> sympy.Expr:
        """The proved tail limit (module notes, :func:`tail_limit_formula`)."""
        return tail_limit_formula(self.k_expr, self.scale_expr, self.shift_expr)

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
    src = _numeric_source(k, scale, sensitivity)
    kk, s, d = src.k_expr, src.scale_expr, src.shift_expr
    derivation = (
        f"p(x) = k/(2 sigma Gamma(1/k)) exp(-|x/sigma|^k) with k = {kk}, sigma = {s}; "
        f"sensitivity Delta = {d}, under whichever relation (add/remove or replace-one) "
        "Delta is the sensitivity for. log p concave (k >= 1), so L(x) = (|x - Delta|^k - "
        "|x|^k)/sigma^k is non-increasing; x_eps proved by ball bisection; delta(eps) <= "
        "F(b) - e^eps F(a - Delta) with F from the regularised upper incomplete gamma "
        "function (Arb); symmetric noise, one direction")
    return Profile.from_source(src, name=f"generalized Gaussian noise (k = {kk})",
                               derivation=derivation, sensitivity=d, shape=kk, scale=s)


def _numeric_source(k: Any, scale: Any, sensitivity: Any) -> GeneralizedGaussianSource:
    """The checked numeric source (a shape below 1 refused by name)."""
    kk = _positive_number(k, "the shape k")
    if kk < 1:
        raise DomainError(
            f"the shape k = {k} is below 1: exp(-|x|^k) is then not log-concave (log p = "
            "-|x|^k is not concave), the privacy loss is not monotone and the worst-case "
            "shift is not proved; k >= 1 is derived")
    s = _positive_number(scale, "the scale sigma")
    d = _positive_number(sensitivity, "the sensitivity")
    return GeneralizedGaussianSource(kk, s, d)


def tail_limit_formula(k: Any, scale: Any, shift: Any) -> sympy.Expr:
    r""":math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))` of generalized Gaussian
    noise, proved in the module notes: 0 for :math:`k < 2`, :math:`2\Delta^2/\sigma^2` for
    :math:`k = 2`, :math:`\infty` for :math:`k > 2` (a ``Piecewise`` for a symbolic shape).

    Example:
        >>> tail_limit_formula(2, sympy.sqrt(2), 1)    # N(0, 1), Delta = 1: mu^2 = 1
        1
        >>> tail_limit_formula(3, 1, 1)
        oo
    """
    k, s, d = (sympy.sympify(v) for v in (k, scale, shift))
    return sympy.Piecewise((sympy.S.Zero, k < 2), (2 * d**2 / s**2, sympy.Eq(k, 2)),
                           (sympy.oo, True))


class GeneralizedGaussianFamily:
    r"""Generalized Gaussian noise with symbolic parameters (shape :math:`k`, scale
    :math:`\sigma`, sensitivity :math:`\Delta`): :meth:`bind` gives the certified numeric
    :class:`GeneralizedGaussianSource` once every parameter has a value
    (:meth:`symgdp.Profile.replace` calls it); until then :meth:`log_delta` refuses, naming
    the parameters, and :meth:`tail_limit` is the proved formula.

    Example:
        >>> k = sympy.Symbol("k", positive=True)
        >>> fam = GeneralizedGaussianFamily(k, 1, 1)
        >>> fam.tail_limit()
        Piecewise((0, k < 2), (2, Eq(k, 2)), (oo, True))
        >>> fam.bind({k: sympy.Integer(3)}).kind
        'generalized Gaussian (k = 3)'
    """

    implied = False

    def __init__(self, k: sympy.Expr, scale: sympy.Expr, shift: sympy.Expr,
                 root: GeneralizedGaussianFamily | None = None) -> None:
        self.k_expr, self.scale_expr, self.shift_expr = (sympy.sympify(v)
                                                         for v in (k, scale, shift))
        self.root = self if root is None else root   # the family as derived
        self.kind = f"generalized Gaussian (k = {self.k_expr})"
        self.parameters = tuple(sorted(
            set().union(*(v.free_symbols for v in (self.k_expr, self.scale_expr,
                                                   self.shift_expr))),
            key=lambda v: v.name))

    def bind(self, values: Any) -> GeneralizedGaussianSource | GeneralizedGaussianFamily:
        """The family as derived with ``values`` (every bound value: a mapping Symbol ->
        number) substituted: the numeric source when every parameter is bound (checked: a
        shape below 1, a scale or sensitivity not positive is a
        :class:`~symgdp.errors.DomainError`); either keeps the family, so a later
        ``bind`` may re-bind or unbind parameters."""
        root = self.root
        sub = {}
        for sym, v in dict(values).items():
            if sym in root.parameters:
                v = sympy.sympify(v)
                sub[sym] = sympy.Rational(v) if isinstance(v, sympy.Float) else v
        k, s, d = (v.xreplace(sub) for v in (root.k_expr, root.scale_expr, root.shift_expr))
        if k.free_symbols or s.free_symbols or d.free_symbols:
            return GeneralizedGaussianFamily(k, s, d, root)
        src = _numeric_source(k, s, d)
        src.bind = root.bind   # re-binding starts from the family again
        return src

    def samples(self) -> list[GeneralizedGaussianSource]:
        """Numeric sources to check the derivation at: the family itself when it has no
        parameters, else its free parameters at 1 and a symbolic shape at 3/2 and 3 (both
        sides of the Gaussian's 2)."""
        if not self.parameters:
            return [_numeric_source(self.k_expr, self.scale_expr, self.shift_expr)]
        out = []
        shapes = (sympy.Rational(3, 2), sympy.Integer(3)) if self.k_expr.free_symbols \
            else (self.k_expr,)
        for kv in shapes:
            at = {v: (kv if v in self.k_expr.free_symbols else sympy.Integer(1))
                  for v in self.parameters}
            free = self.k_expr.free_symbols
            if len(free) == 1 and self.k_expr not in free:
                # a shape such as k/2 or 2k: the value of its symbol that makes the *shape*
                # 3/2 or 3 (the symbol at 3/2 gave the shape 3/4, refused as below 1)
                (v,) = free
                try:   # a symbolic step: under the time budget, as every one
                    roots = [r for r in run_bounded(sympy.solve, self.k_expr - kv, v,
                                                    timeout=4)
                             if r.is_number and r.is_positive]
                except AnalysisTimeout:
                    roots = []
                if len(roots) == 1:
                    at[v] = roots[0]
            k, s, d = (e.xreplace(at) for e in (self.k_expr, self.scale_expr,
                                                 self.shift_expr))
            out.append(_numeric_source(k, s, d))
        return out

    def log_delta(self, x: Any) -> Any:
        names = ", ".join(v.name for v in self.parameters)
        raise ProfileError(f"the {self.kind} profile has unbound parameters {names}: bind "
                           "them with profile.replace(values={...})")

    def tail_limit(self) -> sympy.Expr:
        """The proved tail limit, a formula in the parameters (:func:`tail_limit_formula`)."""
        return tail_limit_formula(self.k_expr, self.scale_expr, self.shift_expr)

    def latex(self) -> str:
        s, k = sympy.latex(self.scale_expr), sympy.latex(self.k_expr)
        return rf"Z \propto e^{{-|x/{s}|^{{{k}}}}}"


def match_generalized_gaussian(expr: sympy.Expr, x: sympy.Symbol
                               ) -> tuple[sympy.Expr, sympy.Expr] | None:
    r"""``(k, sigma)`` when ``expr`` is :math:`c\,e^{-a|x|^k}` with :math:`a > 0` and either
    a number :math:`k \ge 1` other than 1 and 2 (those :func:`symgdp.additive_noise` derives
    symbolically unless :math:`a` is symbolic) or a symbolic :math:`k` declared positive;
    :math:`\sigma = a^{-1/k}`, and :math:`c` the normaliser :math:`k/(2\sigma\Gamma(1/k))`
    (proved); ``None`` when it is not of that form.

    Raises:
        DomainError: of that form but :math:`c` is not the normaliser (the mass is named),
            or a symbolic shape not declared positive.
        ProfileError: the normalisation could not be proved.

    Example:
        >>> k = sympy.Symbol("k", positive=True)
        >>> x = sympy.Symbol("x", real=True)
        >>> match_generalized_gaussian(k / (2 * sympy.gamma(1 / k)) * sympy.exp(-abs(x)**k), x)
        (k, 1)
    """
    cc, rest = expr.as_independent(x, as_Add=False)
    if not isinstance(rest, sympy.exp) or cc.has(x):
        return None
    g = rest.args[0]
    xp = sympy.Dummy("x", positive=True)
    # -a|x|^k on x > 0 (SymPy may have written |x|^3 as x^2 |x|, or (|x|/sigma)^k), and
    # even in x
    gp = sympy.expand_power_base(sympy.powsimp(g.xreplace({x: xp})), force=True)
    coef, kk = gp.as_coeff_exponent(xp)
    if coef.has(xp) or kk.has(xp) or kk.is_zero or gp != coef * xp ** kk:
        return None
    if sympy.simplify(g.xreplace({x: -x}) - g) != 0:
        return None
    aa = -coef
    if aa.is_positive is not True:
        return None
    symbolic = not (kk.is_number and aa.is_number and cc.is_number)
    if kk.is_number:
        if not (kk.is_real and kk >= 1):
            return None
        if kk in (1, 2):
            return None    # Laplace and Gaussian: derived in closed form
    elif kk.is_positive is not True:
        raise DomainError(f"the shape {kk} of the density {expr} is not proved positive: "
                          "declare its symbols positive, e.g. sympy.Symbol('k', "
                          "positive=True)")
    sigma = sympy.powdenest(aa ** (-1 / kk))
    mass = cc * 2 * sigma * sympy.gamma(1 / kk) / kk
    if not symbolic:
        gap = sympy.N(mass - 1, 50)
        if not gap.is_number:
            raise ProfileError(f"cannot evaluate the mass of {expr}")
        if abs(gap) > sympy.Float("1e-40"):
            raise DomainError(f"the density {expr} integrates to {sympy.N(mass, 15)} over "
                              "the real line, not 1")
    if sympy.simplify(mass - 1) == 0 or sympy.simplify(sympy.gammasimp(mass - 1)) == 0:
        return kk, sigma
    if symbolic:  # wrong for some parameter values? named at a sample point
        at = {s: (sympy.Integer(3) if s in kk.free_symbols else sympy.Integer(1))
              for s in mass.free_symbols}
        value = sympy.N(mass.xreplace(at), 30)
        if value.is_number and abs(value - 1) > sympy.Float("1e-25"):
            where = (" at " + ", ".join(f"{s} = {v}" for s, v in at.items())) if at else ""
            raise DomainError(f"the density {expr} integrates to {mass}, not 1 (e.g. "
                              f"{sympy.N(value, 15)}{where})")
    raise ProfileError(f"could not prove that the density {expr} integrates to 1 "
                       f"(its mass is {mass})")


X_EPS = sympy.Symbol("x_varepsilon", real=True)


def _upper_tail(k: sympy.Expr, s: sympy.Expr, y: sympy.Expr) -> sympy.Expr:
    r""":math:`P[Z > y] = \Gamma(1/k, (y/\sigma)^k) / (2\Gamma(1/k))` for :math:`y \ge 0`."""
    return sympy.uppergamma(1 / k, (y / s) ** k) / (2 * sympy.gamma(1 / k))


def derivation_parts(k: Any, scale: Any, shift: Any, x: sympy.Symbol) -> dict[str, Any]:
    r"""The derived steps of generalized Gaussian noise, as formulas in the parameters
    (the fields of :class:`symgdp.noise.additive.Derivation`): the loss, why it is
    monotone, the threshold equation (no closed form: ``threshold`` is the symbol
    :math:`x_\varepsilon`, ``threshold_note`` its equation), the profile through the upper
    incomplete gamma function, the proved tail limit and the verdict.

    Example:
        >>> x = sympy.Symbol("x", real=True)
        >>> d = derivation_parts(3, 1, 1, x)
        >>> d["tail_limit"], d["verdict"][:35]
        (oo, 'not GDP: the tail limit is infinite')
    """
    k, s, d = (sympy.sympify(v) for v in (k, scale, shift))
    loss = (sympy.Abs(x - d) ** k - sympy.Abs(x) ** k) / s ** k
    xe = X_EPS
    # F(x_eps) on either side of 0 (x_eps <= 0 iff eps >= L(0) = (Delta/sigma)^k), and
    # x_eps - Delta <= -Delta/2 < 0 always (L(Delta/2) = 0 <= eps)
    f_at = sympy.Piecewise((_upper_tail(k, s, -xe), xe <= 0),
                           (1 - _upper_tail(k, s, xe), True))
    profile = f_at - sympy.exp(_EPS) * _upper_tail(k, s, d - xe)
    limit = tail_limit_formula(k, s, d)
    if k.is_number:
        sup = d / s if k == 1 else sympy.oo
        if k < 2:
            verdict = ("GDP: the tail limit is 0 (proved for k < 2: -log delta grows like "
                       f"eps^{sympy.nsimplify(k / (k - 1)) if k != 1 else 'oo'}, faster than "
                       "eps^2), so the head decides mu; measure() brackets it")
        elif k == 2:
            verdict = (f"GDP: the tail limit {limit} is finite (the Gaussian), so mu >= "
                       f"sqrt({limit}); measure() brackets mu")
        else:
            verdict = ("not GDP: the tail limit is infinite (proved for k > 2: -log delta "
                       f"grows like eps^{sympy.nsimplify(k / (k - 1))}, slower than eps^2), "
                       "so no mu-GDP guarantee holds on the whole line; measure() gives the "
                       "head's mu with its tail failure probability")
    else:
        # sup L = L(0) = (Delta/sigma)^k for k <= 1 (subadditivity of t^k), else unbounded
        sup = sympy.Piecewise(((d / s) ** k, k <= 1), (sympy.oo, True))
        verdict = (f"by the shape {k}: GDP for {k} < 2 (tail limit 0: -log delta grows "
                   f"like eps^({k}/({k} - 1)), faster than eps^2; pure DP for {k} <= 1) and "
                   f"for {k} = 2 (the Gaussian, tail limit 2 {d}^2/{s}^2); not GDP for "
                   f"{k} > 2 (tail limit oo: lighter tails than the Gaussian); proved for "
                   "every positive value of the parameters (module notes of "
                   "symgdp.noise.gengauss)")
    monotone = ("log p = -|x/sigma|^k is concave for k >= 1, so L is non-increasing (Karlin "
                "1968; Saumard & Wellner 2014, Prop. 2.3)"
                + ("" if k.is_number else
                   f"; the profile is derived for {k} >= 1 (a value below 1 is refused when "
                   "bound: not log-concave)"))
    note = ("x_eps is the root of L(x) = eps (no closed form for this k: proved by ball "
            "bisection once the parameters are numbers)")
    return {"loss": loss, "monotone": monotone, "threshold": xe,
            "threshold_range": (sympy.S.Zero, sympy.oo), "threshold_note": note,
            "profile": profile, "loss_bound": sup, "tail_limit": limit, "verdict": verdict,
            "directions": "p(-x) = p(x) (proved), so the reversed pair gives the same "
                          "profile (substitute x -> Delta - x)"}


def quadrature_check(source: GeneralizedGaussianSource, eps: tuple[float, ...] = (0.5, 2.0)
                     ) -> str:
    r"""The source's bound against an independent 30-digit computation at each
    :math:`\varepsilon`: the threshold by mpmath's root finder on the loss, then
    :math:`\int_{-\infty}^{x_\varepsilon} (p(x) - e^\varepsilon p(x - \Delta))\,dx` by
    quadrature of the density (not the incomplete gamma function the source uses).

    Returns:
        The points and values checked, e.g. ``"k = 3: eps 0.5: 0.4437..., 2.0: ..."``.

    Raises:
        ProfileError: the bound is below the quadrature value (beyond 1e-20 relative) or
            above it by more than 1e-8 relative.
    """
    import mpmath

    def number(v: sympy.Expr) -> Any:
        v = sympy.sympify(v)
        return mpmath.mpf(v.p) / v.q if v.is_Rational else \
            mpmath.mpf(str(sympy.N(v, mpmath.mp.dps + 10)))

    def threshold(k: Any, s: Any, d: Any, e: Any) -> Any:
        """x_eps by bisection of the loss (relative: the bracket's ends differ by 2)."""
        def loss(t: Any) -> Any:
            # outside [0, Delta] without the cancellation of two huge powers (k near 1
            # puts x_eps far out: the plain difference is 0 there, the search endless)
            if t < 0:
                return abs(t / s) ** k * mpmath.expm1(k * mpmath.log1p(d / -t))
            if t > d:
                return abs(t / s) ** k * mpmath.expm1(k * mpmath.log1p(-d / t))
            return (abs(t - d) ** k - abs(t) ** k) / s ** k

        lo, hi = -d, d
        for _ in range(_GROW):
            if loss(lo) > e:
                break
            lo, hi = 2 * lo, lo    # L(lo) <= e: the crossing is left of it
        else:
            raise ProfileError(f"the {source.kind} threshold at eps = {e} lies beyond "
                               f"2^{_GROW}: not checked")
        for _ in range(mpmath.mp.prec + 20):   # bisection: L is monotone (k >= 1)
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if loss(mid) > e else (lo, mid)
        return (lo + hi) / 2, loss

    def integral(e: Any) -> Any:
        k, s, d = (number(v) for v in (source.k_expr, source.scale_expr, source.shift_expr))
        e = mpmath.mpf(e)
        xe, loss = threshold(k, s, d, e)
        # split towards x_eps on the density's own scale there (1/|(log p)'|): a far
        # threshold (small Delta, k near 1) puts the mass in a sliver that one tanh-sinh
        # panel on (-oo, x_eps] misses; p - e^eps p(. - Delta) written as p (1 - e^(eps -
        # L)) against the cancellation next to x_eps, and divided by p(x_eps) w (mpmath's
        # quadrature stops on an absolute error: a tiny integrand would pass after one
        # panel)
        w = 1 / max(k * abs(xe) ** (k - 1) / s ** k, 1 / s)
        pts = sorted({-mpmath.inf, xe, *[xe - w * mpmath.mpf(2) ** j
                                         for j in range(12, -24, -1)],
                      *([mpmath.mpf(0)] if xe > 0 else [])})
        top = abs(xe / s) ** k

        def g(t: Any) -> Any:
            return -mpmath.exp(top - abs(t / s) ** k) * mpmath.expm1(e - loss(t)) / w

        c = k / (2 * s * mpmath.gamma(1 / k))
        return mpmath.quad(g, pts) * c * mpmath.exp(-top) * w, top

    done = []
    for e in eps:
        if source.k_expr == 1 and e >= source.shift_expr / source.scale_expr:
            continue
        with mpmath.workdps(30):
            truth, top = integral(e)
        if top > 10**6:
            # -log p(x_eps) = top has 30 digits: not enough for p(x_eps) itself; again
            # with the digits of top on top
            with mpmath.workdps(30 + int(mpmath.log10(top)) + 1):
                truth, _ = integral(e)
        with mpmath.workdps(30):
            truth = +truth
            got = mpmath.mpf(source.delta_ball(e).upper().str(40, radius=False))
            if got < truth * (1 - mpmath.mpf(10) ** -20) or \
                    got > truth * (1 + mpmath.mpf(10) ** -8):
                raise ProfileError(f"the {source.kind} profile at eps = {e} is {got}, the "
                                   f"quadrature gives {truth}: not derived")
            done.append(f"{e}: {mpmath.nstr(truth, 12)}")
    return f"k = {source.k_expr}: eps " + ", ".join(done)
