r"""Student-t and Cauchy noise: a loss that is not monotone, level sets in closed form.

The Student-t density with :math:`\nu > 0` degrees of freedom and scale :math:`s > 0`,

.. math:: p(x) = \frac{\Gamma(\frac{\nu+1}{2})}{\sqrt{\nu\pi}\,s\,\Gamma(\frac\nu2)}
          \Bigl(1 + \frac{x^2}{\nu s^2}\Bigr)^{-\frac{\nu+1}{2}}

(the Cauchy density :math:`1/(\pi s (1 + x^2/s^2))` at :math:`\nu = 1`), is not
log-concave, so :func:`symgdp.additive_noise`'s monotone-loss derivation refuses it.  Its
level sets are nonetheless intervals in closed form.  Write :math:`a = \nu s^2`.

* **The loss** :math:`L(x) = \log p(x) - \log p(x - \Delta) = \frac{\nu+1}{2}
  \log\frac{a + (x - \Delta)^2}{a + x^2}`.
* **The level set.**  With :math:`r = e^{2\varepsilon/(\nu+1)}`, :math:`L(x) >
  \varepsilon` iff :math:`a + (x-\Delta)^2 > r(a + x^2)`, i.e. :math:`(r - 1)x^2 +
  2\Delta x + a(r-1) - \Delta^2 < 0`.  For :math:`\varepsilon > 0` (:math:`r > 1`) this
  is the open interval :math:`S_\varepsilon = (x_1, x_2)` between the real roots, empty
  when the discriminant :math:`4(r\Delta^2 - a(r-1)^2)` is negative; at
  :math:`\varepsilon = 0` it is the half-line :math:`x < \Delta/2`.  With
  :math:`u = \varepsilon/(\nu+1)`, :math:`r - 1 = 2e^u\sinh u` and
  :math:`(r-1)^2/r = 4\sinh^2 u`, so, writing :math:`S = \sinh u`, :math:`C =
  \sqrt{\Delta^2 - 4aS^2}` and :math:`E = e^{-u}` (roots rationalised, so that nothing
  divides by :math:`r - 1 \to 0`):

  .. math:: x_1 = -\frac{\Delta E + C}{2S},\qquad
            x_2 = \frac{\Delta^2 E - 2aS}{\Delta E + C},\qquad
            x_2 - \Delta = -\frac{2aS + \Delta C}{\Delta E + C},\qquad
            x_1 - \Delta = -\frac{\Delta E + C + 2\Delta S}{2S}.

* **The supremum of the loss.**  Real roots exist iff :math:`\Delta^2 \ge 4a\sinh^2 u`,
  i.e. :math:`\varepsilon \le \varepsilon_0 = (\nu+1)\operatorname{asinh}\bigl(\Delta /
  (2s\sqrt\nu)\bigr)`: :math:`\sup L = \varepsilon_0` (attained at the double root), the
  mechanism is :math:`\varepsilon_0`-DP and :math:`\delta(\varepsilon) = 0` for
  :math:`\varepsilon \ge \varepsilon_0`.
* **The profile** (the hockey-stick divergence :math:`\int (p(x) - e^\varepsilon p(x -
  \Delta))_+\,dx`, whose integrand is positive exactly on :math:`S_\varepsilon`):

  .. math:: \delta(\varepsilon) = [F(x_2) - F(x_1)] - e^\varepsilon
            [F(x_2 - \Delta) - F(x_1 - \Delta)],\qquad 0 \le \varepsilon <
            \varepsilon_0.

* **The CDF** for integer :math:`\nu` is elementary (Abramowitz & Stegun 1964, 26.7.3
  and 26.7.4): with :math:`\theta = \arctan(x/(s\sqrt\nu))`,

  .. math:: F(x) = \tfrac12 + \tfrac1\pi\Bigl[\theta + \sin\theta\sum_{k=0}^{(\nu-3)/2}
            c_k\cos^{2k+1}\theta\Bigr]\ (\nu\ \text{odd}),\qquad
            F(x) = \tfrac12 + \tfrac12\sin\theta\sum_{k=0}^{(\nu-2)/2} d_k\cos^{2k}\theta
            \ (\nu\ \text{even}),

  :math:`c_k = \frac{2\cdot4\cdots 2k}{3\cdot5\cdots(2k+1)}`, :math:`d_k = \frac{1\cdot3
  \cdots(2k-1)}{2\cdot4\cdots 2k}` (:math:`c_0 = d_0 = 1`; the Cauchy :math:`F(x) =
  \frac12 + \arctan(x/s)/\pi`).  At :math:`x_1` and :math:`x_1 - \Delta`, which tend to
  :math:`-\infty` as :math:`\varepsilon \to 0`, and at :math:`x_2 - \Delta \le 0`,
  which lies far out when :math:`s \ll \Delta`, the same formula is written in
  :math:`\varphi = \arctan m`, :math:`m = -s\sqrt\nu/x` (:math:`\theta = \varphi -
  \pi/2`), finite there and without the cancellation of :math:`\frac12 +
  \theta/\pi`.  (Checked in the tests: :math:`F' = p` symbolically, and
  :math:`F` against mpmath's quadrature of :math:`p`.)  For non-integer :math:`\nu` the
  CDF is the regularised incomplete beta function, :math:`F(x) = \frac12
  I_{a/(a+x^2)}(\nu/2, \frac12)` for :math:`x \le 0` (Abramowitz & Stegun 26.7.1, where
  :math:`A(t|\nu) = 1 - I_{\nu/(\nu+t^2)}(\nu/2, \frac12)`; checked in the tests against
  the closed forms at integer :math:`\nu`): :class:`StudentSource` evaluates the same
  formula in Arb balls
  (``beta_lower``), a numeric profile of proved upper bounds (numbers only).
* **Both directions, every shift.**  The density is symmetric, so the reversed pair gives
  the same profile (substitute :math:`x \mapsto \Delta - x`).  Smaller shifts are no
  worse, though the density is not log-concave: for a shift :math:`t > 0`,
  :math:`\delta_t(\varepsilon) = \int(p(x) - e^\varepsilon p(x-t))_+dx` has
  :math:`\partial_t\delta_t = e^\varepsilon[p(x_2 - t) - p(x_1 - t)]` (differentiate
  under the integral: the integrand's zero set is null), and
  :math:`p(x_2 - t) \ge p(x_1 - t)` because :math:`p` decreases in :math:`|x|` and
  :math:`|x_2 - t| \le |x_1 - t|` (trivial if :math:`x_2 \le t`; else it reads
  :math:`x_1 + x_2 \le 2t`, and :math:`x_1 + x_2 = -2t/(r-1) < 0`; at :math:`\varepsilon
  = 0`, :math:`x_1 = -\infty` and :math:`p(x_1 - t) = 0`).  So the profile holds for every
  pair of neighbours with :math:`|f(D) - f(D')| \le \Delta`, under whichever relation
  (add/remove or replace-one) :math:`\Delta` is the sensitivity for.
* **The verdict.**  Pure :math:`\varepsilon_0`-DP, so the tail limit of
  :math:`\varepsilon^2/(-2\log\delta)` is 0 and the mechanism is :math:`\mu`-GDP for a
  finite :math:`\mu` (theory §5), which :func:`symgdp.measure` brackets.

Heavier tails than the Gaussian's do not make the loss unbounded here: :math:`L(x) \to 0`
as :math:`|x| \to \infty` (the ratio of the two polynomial tails tends to 1).

Example:
    >>> p = student_t_noise(1, scale=1, sensitivity=1)        # standard Cauchy
    >>> float(p.meta["eps0"])                                  # 2 asinh(1/2)
    0.9624236501192069
    >>> p(1.0)
    0.0
    >>> round(p(0.0), 12)                                      # 2 atan(1/2)/pi
    0.295167235301
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import sympy
from flint import arb, ctx

from symgdp.errors import DomainError, ProfileError
from symgdp.evaluation.interval import lambdify_arb
from symgdp.noise.density import (
    aligned_rows,
    exact_number,
    log_delta_each,
    positive_number,
    tex_text,
)
from symgdp.numerics.balls import to_arb
from symgdp.profile import Profile
from symgdp.symbolic.budget import run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["StudentDerivation", "StudentSource", "match_student_t", "student_t_cdf",
           "student_t_noise"]

#: the largest degrees of freedom derived (the CDF has about nu/2 terms)
MAX_NU = 40

RELATION = ("neighbours D ~ D' with |f(D) - f(D')| <= Delta, under whichever relation "
            "(add/remove or replace-one) Delta is the sensitivity for (every shift "
            "|t| <= Delta proved no worse than Delta)")


def _degrees(value: Any, integer: bool = True) -> sympy.Expr:
    """nu as a SymPy number (an Integer in [1, MAX_NU] unless ``integer`` is False);
    DomainError naming it otherwise."""
    v = exact_number(value, "the degrees of freedom nu")
    if not v.is_number or not (v.is_real and v.is_finite and v > 0):
        raise DomainError(f"the degrees of freedom nu must be a positive number, got "
                          f"{value!r}")
    if not integer and not v.is_Integer:
        return v
    if not v.is_Integer:
        raise DomainError(
            f"Student-t noise with nu = {v} degrees of freedom: only integer nu is derived "
            "(its CDF is then elementary); for non-integer nu the CDF is a regularised "
            "incomplete beta function, not certified here")
    if v > MAX_NU:
        raise DomainError(f"Student-t noise with nu = {v} degrees of freedom: nu <= "
                          f"{MAX_NU} is derived (the CDF has about nu/2 terms)")
    return v


def _odd_coefficients(nu: int) -> list[sympy.Rational]:
    """c_0, ..., c_{(nu-3)/2} of A&S 26.7.3 (nu odd)."""
    out = [] if nu < 3 else [sympy.Integer(1)]
    for k in range(1, (nu - 1) // 2):
        out.append(out[-1] * sympy.Rational(2 * k, 2 * k + 1))
    return out


def _even_coefficients(nu: int) -> list[sympy.Rational]:
    """d_0, ..., d_{(nu-2)/2} of A&S 26.7.4 (nu even)."""
    out = [sympy.Integer(1)]
    for k in range(1, nu // 2):
        out.append(out[-1] * sympy.Rational(2 * k - 1, 2 * k))
    return out


def _from_angle(nu: int, theta: sympy.Expr, sin: sympy.Expr, cos: sympy.Expr
                ) -> sympy.Expr:
    """F from theta = atan(x/(s sqrt nu)), its sine and cosine (A&S 26.7.3, 26.7.4)."""
    if nu % 2:
        tail = sympy.Add(*[c * cos ** (2 * k + 1)
                           for k, c in enumerate(_odd_coefficients(nu))])
        return sympy.S.Half + (theta + sin * tail) / sympy.pi
    tail = sympy.Add(*[d * cos ** (2 * k) for k, d in enumerate(_even_coefficients(nu))])
    return sympy.S.Half + sin * tail / 2


def student_t_cdf(nu: Any, x: Any, scale: Any = 1) -> sympy.Expr:
    r"""The CDF :math:`F(x)` of Student-t noise, integer :math:`\nu`, scale :math:`s`
    (Abramowitz & Stegun 1964, 26.7.3 and 26.7.4; see the module notes).

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x", real=True)
        >>> student_t_cdf(2, x)
        sqrt(2)*x/(4*sqrt(x**2/2 + 1)) + 1/2
    """
    n = int(_degrees(nu))
    xx, s = sympy.sympify(x), sympy.sympify(scale)
    t = xx / (s * sympy.sqrt(n))
    root = sympy.sqrt(1 + t ** 2)
    return _from_angle(n, sympy.atan(t), t / root, 1 / root)


def _lower_tail(nu: int, m: sympy.Expr) -> sympy.Expr:
    r"""F(x) for x < 0 written in m = -s sqrt(nu)/x >= 0 (finite at x = -oo: F = 0 there):
    theta = phi - pi/2 with phi = atan(m), sin theta = -cos phi, cos theta = sin phi."""
    root = sympy.sqrt(1 + m ** 2)
    return _from_angle(nu, sympy.atan(m) - sympy.pi / 2, -1 / root, m / root)


def loss_sup(nu: Any, scale: Any, sensitivity: Any) -> sympy.Expr:
    r""":math:`\sup L = \varepsilon_0 = (\nu + 1)\operatorname{asinh}(\Delta/(2s\sqrt\nu))`
    (module notes), written with the logarithm.

    Example:
        >>> loss_sup(1, 1, 1)
        2*log(1/2 + sqrt(5)/2)
    """
    z = sensitivity / (2 * scale * sympy.sqrt(nu))
    # asinh z written log(z + sqrt(1 + z^2)): the ball compiler of symgdp.evaluation has log
    return (nu + 1) * sympy.log(z + sympy.sqrt(1 + z ** 2))


def _profile(nu: int, s: sympy.Expr, d: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """(delta(eps) below eps0 in the rationalised roots, eps0)."""
    a = nu * s ** 2
    u = _EPS / (nu + 1)
    S, E = sympy.sinh(u), sympy.exp(-u)
    C = sympy.sqrt(d ** 2 - 4 * a * S ** 2)
    den = d * E + C
    x2 = (d ** 2 * E - 2 * a * S) / den
    rs = s * sympy.sqrt(nu)
    m1 = 2 * rs * S / den                    # -s sqrt(nu)/x1
    m1_shift = 2 * rs * S / (den + 2 * d * S)  # -s sqrt(nu)/(x1 - Delta)

    def cdf(x: sympy.Expr) -> sympy.Expr:
        t = x / rs
        root = sympy.sqrt(1 + t ** 2)
        return _from_angle(nu, sympy.atan(t), t / root, 1 / root)

    # x2 - Delta <= 0 (2aS + Delta C >= 0): in the tail form too, which stays accurate
    # where x2 - Delta is far out (s << Delta), with m = -s sqrt(nu)/(x2 - Delta) finite
    # (2aS + Delta C > 0: S and C do not vanish together)
    m2_shift = rs * den / (2 * a * S + d * C)
    body = (cdf(x2) - _lower_tail(nu, m1)
            - sympy.exp(_EPS) * (_lower_tail(nu, m2_shift) - _lower_tail(nu, m1_shift)))
    return body, loss_sup(nu, s, d)


def _hockey_stick(nu: int, s: Any, d: Any, e: Any) -> Any:
    r""":math:`\int (p(x) - e^\varepsilon p(x - \Delta))_+\,dx` by mpmath quadrature of the
    density itself at the working precision (split at the roots and around them: the
    integrand is evaluated from :math:`p`, so wrong roots would cost accuracy, never
    give the formula's value)."""
    half = mpmath.mpf(nu + 1) / 2
    c = mpmath.gamma(half) / (mpmath.sqrt(nu * mpmath.pi) * s * mpmath.gamma(mpmath.mpf(nu) / 2))

    def p(x: Any) -> Any:
        return c * (1 + x ** 2 / (nu * s ** 2)) ** -half

    def g(x: Any) -> Any:
        return max(p(x) - mpmath.exp(e) * p(x - d), 0)

    r = mpmath.exp(2 * e / (nu + 1))
    a = nu * s ** 2
    if e == 0:
        x1, x2 = -mpmath.inf, d / 2
    else:
        disc = r * d ** 2 - a * (r - 1) ** 2
        if disc <= 0:
            return mpmath.mpf(0)
        x1 = (-d - mpmath.sqrt(disc)) / (r - 1)
        x2 = (-d + mpmath.sqrt(disc)) / (r - 1)
    # the density's own scale around its two peaks (0 and Delta): a narrow density
    # (s << Delta) has its mass there, which a split at the roots alone misses
    w = s * mpmath.sqrt(nu)
    near = {c + k * w for c in (0, d) for k in (-100, -10, -1, 0, 1, 10, 100)}
    cuts = sorted({x1, x2, *(t for t in near if x1 < t < x2)})
    return mpmath.fsum(mpmath.quad(g, [u, v]) for u, v in zip(cuts[:-1], cuts[1:],
                                                                strict=True))


def _check(nu: int, s: sympy.Expr, d: sympy.Expr, body: sympy.Expr, e0: sympy.Expr) -> str:
    """The derived profile against 30-digit quadrature at rational parameter values;
    ProfileError on a disagreement beyond 10 digits (relative, plus 1e-25 absolute)."""
    free = sorted((s.free_symbols | d.free_symbols) - {_EPS}, key=lambda v: v.name)
    at = {v: sympy.Rational(7 + 3 * i, 5 + 2 * i) for i, v in enumerate(free)}
    with mpmath.workdps(30):
        sv, dv = (mpmath.mpf(sympy.N(v.xreplace(at), 40)) for v in (s, d))
        top = float(sympy.N(e0.xreplace(at), 30))
        fn = sympy.lambdify(_EPS, body.xreplace(at), "mpmath")
        grid = [0.0, 0.3 * top, 0.8 * top, 0.99 * top]
        for e in grid:
            ref = _hockey_stick(nu, sv, dv, mpmath.mpf(e))
            with mpmath.workdps(90):  # the formula's terms cancel in the tails: 90 digits
                got = +fn(mpmath.mpf(e))
            if abs(got - ref) > mpmath.mpf(10) ** -10 * abs(ref) + mpmath.mpf(10) ** -25:
                shown = ", ".join(f"{k} = {v}" for k, v in at.items())
                raise ProfileError(
                    f"the Student-t profile (nu = {nu}) disagrees with the quadrature of its "
                    f"definition at eps = {e:g} ({shown}): {mpmath.nstr(got, 15)} against "
                    f"{mpmath.nstr(ref, 15)}; not returned")
    shown = "".join(f", {k} = {v}" for k, v in at.items())
    return (f"agrees with the 30-digit quadrature of int max(0, p(x) - e^eps p(x - Delta)) "
            f"dx to 10 digits at eps/eps0 = 0, 0.3, 0.8, 0.99 (nu = {nu}{shown})")


def _derive(nu: int, s: sympy.Expr, d: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr, str]:
    """(profile Piecewise, eps0, check sentence); runs in a bounded child."""
    body, e0 = _profile(nu, s, d)
    check = _check(nu, s, d, body, e0)
    return sympy.Piecewise((sympy.S.Zero, sympy.Ge(_EPS, e0)), (body, True)), e0, check


def _density(nu: int, s: sympy.Expr, x: sympy.Symbol) -> sympy.Expr:
    half = sympy.Rational(nu + 1, 2)
    return (sympy.gamma(half) / (sympy.sqrt(nu * sympy.pi) * s * sympy.gamma(sympy.Rational(
        nu, 2))) * (1 + x ** 2 / (nu * s ** 2)) ** -half)


_PREC = 256


class StudentSource:
    r"""The profile of Student-t noise with any :math:`\nu > 0` as a numeric source: the
    same level sets (module notes), with :math:`F(x) = \tfrac12
    I_{a/(a+x^2)}(\nu/2, \tfrac12)` for :math:`x \le 0` (the regularised incomplete beta
    function, Arb's ``beta_lower``: rigorous), so :meth:`delta_ball` encloses
    :math:`\delta(\varepsilon)` in a ball.  Numbers only (no symbolic parameter)."""

    implied = False

    def __init__(self, nu: sympy.Expr, scale: sympy.Expr, shift: sympy.Expr) -> None:
        self.kind = f"Student-t (nu = {nu})"
        self.nu_expr, self.scale_expr, self.shift_expr = nu, scale, shift
        with ctx.workprec(_PREC):
            # exact balls: a rational exactly, anything else enclosed by the ball compiler
            self._nu, self._s, self._d = (to_arb(v) if v.is_Rational else
                                          lambdify_arb(v, _EPS)(0) for v in (nu, scale, shift))
            self._a = self._nu * self._s ** 2
            self._rs = self._s * self._nu.sqrt()
            self._eps0 = (self._nu + 1) * (self._d / (2 * self._rs)).asinh()

    @property
    def eps0(self) -> arb:
        r""":math:`\varepsilon_0 = \sup L` as a ball."""
        return self._eps0

    def _tail(self, m: arb) -> arb:
        """F(x) at x = -s sqrt(nu)/m <= 0 (m >= 0; F = 0 at m = 0, x = -oo)."""
        if m.is_zero():
            return arb(0)
        z = m ** 2 / (1 + m ** 2)
        return z.beta_lower(self._nu / 2, arb(0.5), regularized=1) / 2

    def _cdf_point(self, x: arb) -> arb:
        """F at an exact point."""
        if x.is_zero():
            return arb(0.5)
        low = self._tail(self._rs / abs(x))
        return low if x < 0 else 1 - low

    def _cdf(self, x: arb) -> arb:
        """F on a ball: the hull of F at its ends (F increasing)."""
        lo, hi = self._cdf_point(arb(x.lower())), self._cdf_point(arb(x.upper()))
        return lo.union(hi)

    def _delta(self, e: arb) -> arb:
        """delta(e) as a ball, for e < eps0 proved (the roots real)."""
        a, d, rs = self._a, self._d, self._rs
        u = e / (self._nu + 1)
        S, E = u.sinh(), (-u).exp()
        C = (d ** 2 - 4 * a * S ** 2).sqrt()
        den = d * E + C
        x2 = (d ** 2 * E - 2 * a * S) / den
        m1, m1s = 2 * rs * S / den, 2 * rs * S / (den + 2 * d * S)
        m2s = rs * den / (2 * a * S + d * C)
        return (self._cdf(x2) - self._tail(m1)
                - e.exp() * (self._tail(m2s) - self._tail(m1s)))

    def delta_ball(self, eps: float) -> arb:
        """An enclosure of delta(eps) whose upper end is a proved upper bound (>= 0)."""
        for prec in (_PREC, 2 * _PREC, 4 * _PREC):
            with ctx.workprec(prec):
                e = arb(eps)
                if e >= self._eps0:
                    return arb(0)
                if not e < self._eps0:
                    # eps within the ball of eps0: delta does not increase, so delta(eps)
                    # <= delta(e') at an e' just below the ball
                    e = arb(self._eps0.lower()) - abs(self._eps0) * arb(2) ** (16 - prec)
                v = self._delta(e)
                if v.is_finite() and (v.rad() <= abs(v.mid()) * arb(2) ** -80
                                      or v.upper() <= 0 or prec == 4 * _PREC):
                    if not v.is_finite():
                        break
                    # at the working precision: the upper end exactly (never a rounding)
                    return arb(v.upper()).max(arb(0))
        raise ProfileError(f"the Student-t profile (nu = {self.nu_expr}) at eps = "
                           f"{eps!r} was not enclosed in {4 * _PREC}-bit balls")

    def log_delta(self, x: Any) -> Any:
        """Proved upper bound on log delta at each point (float64, vectorised)."""
        return log_delta_each(self.delta_ball, x, _PREC)

    def tail_limit(self) -> sympy.Expr:
        """0: the profile vanishes from eps0 on (pure DP)."""
        return sympy.S.Zero

    def latex(self) -> str:
        nu, s = sympy.latex(self.nu_expr), sympy.latex(self.scale_expr)
        return rf"Z \sim t_{{{nu}}}\ \text{{(scale {s})}}"


def _numeric_route(nu: sympy.Expr, s: sympy.Expr, d: sympy.Expr) -> Profile:
    """The certified numeric profile for non-integer nu (:class:`StudentSource`)."""
    if not (s.is_number and d.is_number):
        raise DomainError(f"Student-t noise with nu = {nu} (not an integer) is certified "
                          "numerically: give the scale and the sensitivity as numbers, got "
                          f"scale {s}, sensitivity {d}")
    src = StudentSource(nu, s, d)
    e0 = loss_sup(nu, s, d)
    derivation = (
        f"Student-t noise, nu = {nu} (not an integer), scale s = {s}, sensitivity Delta = "
        f"{d}; {RELATION}. L > eps on the interval between the roots of (r - 1) x^2 + "
        "2 Delta x + a (r - 1) - Delta^2 (a = nu s^2, r = exp(2 eps/(nu + 1))), so delta(eps) "
        "= F(x2) - F(x1) - e^eps (F(x2 - Delta) - F(x1 - Delta)) with F from the "
        "regularised incomplete beta function in Arb balls (an upper bound at each point); "
        f"pure DP: delta(eps) = 0 for eps >= eps0 = {e0}")
    return Profile.from_source(src, name=f"Student-t noise (nu = {nu})",
                               derivation=derivation, eps0=e0, sensitivity=d, nu=nu,
                               scale=s)


def student_t_noise(nu: Any, scale: Any = 1, sensitivity: Any = 1, *,
                    timeout: float | None = None) -> Profile:
    r"""The exact privacy profile of :math:`f(D) + Z` with Student-t noise :math:`Z`
    (:math:`\nu` degrees of freedom, scale :math:`s`; Cauchy at :math:`\nu = 1`); see the
    module notes for the derivation.

    Args:
        nu: the degrees of freedom: a positive integer :math:`\le` :data:`MAX_NU` (the
            exact closed form), or another positive number (a numeric profile of proved
            upper bounds, :class:`StudentSource`; scale and sensitivity numbers).
        scale: :math:`s > 0`, a number or a positive SymPy expression.
        sensitivity: :math:`\Delta > 0`, a number or a positive SymPy expression.
        timeout: budget in seconds of the symbolic step (and its numeric check).

    Returns:
        A :class:`~symgdp.profile.Profile`, for integer :math:`\nu` a ``Piecewise`` in
        :math:`\varepsilon` (0 from :math:`\varepsilon_0 =
        (\nu+1)\operatorname{asinh}(\Delta/(2s\sqrt\nu))` on);
        ``meta["derivation"]`` is a :class:`StudentDerivation`, ``meta["eps0"]`` the
        pure-DP level.

    Raises:
        DomainError: :math:`\nu` not positive or an integer above :data:`MAX_NU`
            (named), a scale or sensitivity not positive, or not a number for
            non-integer :math:`\nu`.
        ProfileError: the derived profile disagrees with the quadrature of its definition.

    Example:
        >>> import sympy
        >>> s = sympy.Symbol("s", positive=True)
        >>> p = student_t_noise(3, scale=s)
        >>> p.meta["eps0"]
        4*log(sqrt(1 + 1/(12*s**2)) + sqrt(3)/(6*s))
        >>> q = p.replace(values={"s": 2})
        >>> 0 < q(0.2) < q(0.1) < 1
        True
    """
    n = _degrees(nu, integer=False)
    s = positive_number(scale, "the scale s", "s")
    d = positive_number(sensitivity, "the sensitivity Delta", "Delta")
    if not n.is_Integer:
        return _numeric_route(n, s, d)
    n = _degrees(n)
    expr, e0, check = run_bounded(_derive, int(n), s, d, timeout=timeout)
    x = sympy.Symbol("x", real=True)
    a = n * s ** 2
    derivation = StudentDerivation(
        nu=n, scale=s, sensitivity=d, density=_density(int(n), s, x),
        loss=(n + 1) / 2 * sympy.log((a + (x - d) ** 2) / (a + x ** 2)),
        level_set=(f"L(x) > eps iff (r - 1) x^2 + 2 Delta x + a (r - 1) - Delta^2 < 0 "
                   f"with a = nu s^2 = {a}, r = exp(2 eps/(nu + 1)): for eps > 0 the "
                   "interval between the two real roots (none beyond eps0), for eps = 0 "
                   "x < Delta/2"),
        profile=expr, eps0=e0,
        verdict=(f"pure DP: L <= {e0}, so delta(eps) = 0 for eps >= {e0} (eps0-DP with "
                 f"eps0 = {e0}); a pure-DP mechanism is mu-GDP for a finite mu (tail "
                 "limit 0)"),
        check=check)
    name = "Cauchy noise" if n == 1 else f"Student-t noise (nu = {n})"
    return Profile(expr, name=name,
                   reference="derived in symgdp.noise.student (closed-form level sets, "
                             "Abramowitz & Stegun 26.7.3-4)",
                   derivation=derivation, eps0=e0, sensitivity=d, nu=n, scale=s,
                   # the exact hockey-stick divergence of the pair: non-increasing in eps
                   # (the measurement needs no ball proof of it near eps0, where the
                   # difference of nearly equal terms defeats one)
                   hockey_stick=(expr, "the exact profile of Student-t noise (a "
                                       "hockey-stick divergence, non-increasing in eps)"))


@dataclass(frozen=True)
class StudentDerivation:
    """The steps of :func:`student_t_noise` (one formula or sentence each)."""

    nu: sympy.Integer
    scale: sympy.Expr
    sensitivity: sympy.Expr
    density: sympy.Expr
    loss: sympy.Expr
    level_set: str
    profile: sympy.Expr
    eps0: sympy.Expr
    verdict: str
    check: str
    directions: str = ("p(-x) = p(x): the reversed pair gives the same profile (substitute "
                       "x -> Delta - x); smaller shifts proved no worse (module notes)")
    tail_limit: sympy.Expr = sympy.S.Zero
    relation: str = RELATION

    @property
    def loss_bound(self) -> sympy.Expr:
        """sup L (= eps0), as :class:`~symgdp.noise.additive.Derivation` names it."""
        return self.eps0

    def text_rows(self) -> list[tuple[str, str]]:
        """(label, text) pairs for plain-text reports."""
        return [
            ("noise", f"p(x) = {self.density} (Student-t, nu = {self.nu}, s = {self.scale}); "
                      f"sensitivity {self.sensitivity}; {self.relation}"),
            ("privacy loss", f"L(x) = {self.loss} (not monotone: p is not log-concave)"),
            ("level set", self.level_set),
            ("directions", self.directions),
            ("derived profile", "delta(eps) = F(x2) - F(x1) - e^eps (F(x2 - Delta) - "
             "F(x1 - Delta)) = " + str(self.profile).replace("varepsilon", "eps")),
            ("noise verdict", self.verdict),
            ("noise check", self.check),
        ]

    def latex_rows(self) -> list[tuple[str, str]]:
        """(label, LaTeX) pairs for the report."""
        v = sympy.latex(_EPS)
        return [
            ("noise", rf"Z \sim p(x) = {sympy.latex(self.density)},\quad M(D) = f(D) + Z,\ "
                      rf"|f(D) - f(D')| \le {sympy.latex(self.sensitivity)}"),
            ("privacy loss", rf"L(x) = {sympy.latex(self.loss)}"),
            ("level set", rf"\text{{{tex_text(self.level_set)}}}"),
            ("directions", rf"\text{{{tex_text(self.directions)}}}"),
            ("profile", rf"\delta({v}) = {sympy.latex(self.profile)}"),
            ("tail limit", rf"\lim_{{{v}\to\infty}} \frac{{{v}^2}}{{-2\log\delta({v})}} = 0"),
            ("verdict", rf"\text{{{tex_text(self.verdict)}}}"),
            ("check", rf"\text{{{tex_text(self.check)}}}"),
        ]

    def __str__(self) -> str:
        return aligned_rows(self.text_rows())


def match_student_t(expr: sympy.Expr, x: sympy.Symbol
                    ) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr] | None:
    r"""``(nu, s, mass)`` when ``expr`` is :math:`c\,(A + Bx^2)^{-k}` with :math:`A, B > 0`
    (numbers or positive expressions) and a number :math:`k > 1/2`: Student-t with
    :math:`\nu = 2k - 1`, :math:`s = \sqrt{A/(B\nu)}`, and ``mass`` the integral of
    ``expr`` over the line, :math:`c A^{-k}\sqrt{\pi A/B}\,\Gamma(k - \frac12)/\Gamma(k)`;
    ``None`` for other forms.  (Runs SymPy's simplify: call it under the time budget.)

    Example:
        >>> import sympy
        >>> x = sympy.Symbol("x", real=True)
        >>> match_student_t(1 / (sympy.pi * (1 + x**2)), x)
        (1, 1, 1)
    """
    c, rest = expr.as_independent(x, as_Add=False)
    factors = sympy.Mul.make_args(rest)
    if len(factors) != 1 or not isinstance(rest, sympy.Pow):
        return None
    base, expo = rest.args
    if not expo.is_number or expo.has(x) or not (expo.is_real and expo < 0):
        return None
    k = -expo
    poly = sympy.Poly(sympy.expand(base), x) if base.is_polynomial(x) else None
    if poly is None or poly.degree() != 2:
        return None
    B, lin, A = poly.all_coeffs()
    if lin != 0 or A.is_positive is not True or B.is_positive is not True \
            or c.is_positive is not True:
        return None
    if not k > sympy.S.Half:
        return None
    nu = 2 * k - 1
    s = sympy.sqrt(A / (B * nu))
    mass = c * A ** (-k) * sympy.sqrt(sympy.pi * A / B) * sympy.gamma(k - sympy.S.Half) \
        / sympy.gamma(k)
    mass = sympy.simplify(mass.rewrite(sympy.gamma))
    return nu, sympy.simplify(s), mass
