r"""Exact closed forms where DP-SGD and a composition are plain Gaussian mechanisms.

**Theorem** (Dong, Roth & Su 2022, JRSS-B, Corollary 3.3).  The adaptive composition of
mechanisms that are :math:`\mu_i`-GDP is :math:`\sqrt{\sum_i \mu_i^2}`-GDP, and the
composition of Gaussian mechanisms :math:`G_{\mu_i}` is exactly the Gaussian mechanism
:math:`G_{\sqrt{\sum_i \mu_i^2}}` (the trade-off functions compose as
:math:`G_{\mu_1} \otimes G_{\mu_2} = G_{\sqrt{\mu_1^2 + \mu_2^2}}`).

**DP-SGD with** :math:`q = 1`.  Every step adds :math:`N(0, \sigma^2 I)` (in units of the
clipping norm) to the sum of the clipped gradients of *all* records.  Adding or removing
one record moves that sum by at most 1 (replacing one record: by at most 2; adding or
removing a user with :math:`k` examples: by at most :math:`k`), so each step is
:math:`c/\sigma`-GDP with :math:`c = 1, 2, k`, and :math:`T` steps are
:math:`c\sqrt{T}/\sigma`-GDP by the theorem; a phase schedule gives
:math:`c\sqrt{\sum_i T_i/\sigma_i^2}`.  The bound is attained (a record whose clipped
gradient is the same unit vector at every step makes the pair of output laws exactly
:math:`N(0, \sigma^2)^{\otimes T}` against its shift by :math:`c`), so this :math:`\mu` is
the mechanism's own: the :math:`\mu` that :func:`symgdp.dpsgd`'s engine brackets
(the certified PLD of :mod:`symgdp.training.dpsgd`), here without a grid.

What is computed: :math:`\mu^2 = c^2\sum_i T_i/\sigma_i^2` exactly (every float is a
dyadic rational), :math:`\mu` as a ball of 128 bits (python-flint's ``arb``), and
``mu_floor``, ``mu_upper`` the floats below and above that ball
(:func:`~symgdp.numerics.rounding.float_below`, :func:`~symgdp.numerics.rounding.float_above`):
:math:`\texttt{mu\_floor} \le \mu \le \texttt{mu\_upper}`, one or two ulps apart.  The
profile is :math:`\delta_{\texttt{mu\_upper}}` rounded up (an upper bound on the true
:math:`\delta_\mu`, which grows with :math:`\mu`) and :math:`\delta_{\texttt{mu\_floor}}`
rounded down (a lower bound), by :func:`symgdp.gaussian.log_delta_mu`.

Example:
    >>> gaussian_mu_bracket([(4, 1, 0.5)])          # 4 steps, sigma = 0.5: exactly 4
    (4.0, 4.0)
    >>> gaussian_mu_bracket([(4, 1, 0.1)])          # the float 0.1 is above 1/10
    (19.999999999999996, 20.0)
    >>> lo, up = gaussian_mu_bracket([(1, 1, 0.3)])   # 1/0.3 is not a float
    >>> lo < up and lo <= 10 / 3 <= up
    True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.numerics.rounding import exp_up, float_above, float_below

__all__ = ["GaussianSource", "gaussian_composition", "gaussian_measurement",
           "gaussian_mu_bracket", "head_end", "step_mu", "sympy_mu_bracket"]

#: the citation every closed-form result names
THEOREM = "Dong, Roth & Su 2022, Corollary 3.3"


def gaussian_mu_bracket(terms: Any) -> tuple[float, float]:
    r"""``(mu_floor, mu_upper)``: floats with :math:`\texttt{mu\_floor} \le \mu \le
    \texttt{mu\_upper}` for :math:`\mu = \sqrt{\sum_i T_i c_i^2/\sigma_i^2}` (``terms`` are
    triples ``(T_i, c_i, sigma_i)``: steps, sensitivity, noise), from the exact rational
    :math:`\mu^2` and a 128-bit ball of its root.  Equal when :math:`\mu` is a float.

    Example:
        >>> gaussian_mu_bracket([(3, 1, 2.0), (7, 1, 1.5)]) == gaussian_mu_bracket(
        ...     [(7, 1, 1.5), (3, 1, 2.0)])
        True
    """
    from flint import arb, ctx, fmpq

    total = Fraction(0)
    for t, c, s in terms:
        fs, fc = Fraction(float(s)), Fraction(c)
        if not (fs > 0 and fc > 0 and math.isfinite(float(s))) or int(t) < 1:
            raise DomainError(f"a Gaussian term needs steps >= 1, sensitivity > 0 and a "
                              f"finite sigma > 0, got (steps={t!r}, sensitivity={c!r}, "
                              f"sigma={s!r})")
        total += int(t) * fc * fc / (fs * fs)
    if total == 0:
        raise DomainError("a Gaussian composition needs at least one term")
    with ctx.workprec(128):
        mu = arb(fmpq(total.numerator, total.denominator)).sqrt()
        return max(float_below(mu), 0.0), float_above(mu)


class GaussianSource:
    r"""The profile of a mechanism whose :math:`\mu` lies in ``[mu_floor, mu_upper]``
    (a numeric source, see :meth:`symgdp.profile.Profile.from_source`): ``log_delta`` is
    :math:`\log\delta_{\texttt{mu\_upper}}` rounded up, a proved upper bound on the
    mechanism's profile at every :math:`\varepsilon` (its tail included: no floor, no
    grid); ``log_delta_lower`` is :math:`\log\delta_{\texttt{mu\_floor}}` rounded down, a
    proved lower bound.  Callable: ``s(eps)`` is the upper :math:`\delta`.

    Example:
        >>> s = GaussianSource(2.0, 2.0)
        >>> from symgdp import delta_mu
        >>> bool(s.delta_lower(1.0) <= delta_mu(1.0, 2.0, rounding="nearest") <= s(1.0))
        True
    """

    kind = "GDP"
    exact = True
    certified = True
    proved_values = True
    floor = 0.0
    margin = 0.0

    def __init__(self, mu_floor: float, mu_upper: float, name: str = "Gaussian") -> None:
        lo, up = float(mu_floor), float(mu_upper)
        if not (0 <= lo <= up):
            raise DomainError(f"a Gaussian source needs 0 <= mu_floor <= mu_upper, got "
                              f"[{mu_floor!r}, {mu_upper!r}]")
        self.mu_floor, self.mu_upper, self.name = lo, up, name
        self.meta: dict[str, Any] = {}

    def log_delta(self, eps: Any) -> Any:
        """A proved upper bound on log delta (vectorised)."""
        from symgdp.gaussian.vectorised import log_delta_mu

        return log_delta_mu(_eps(eps), self.mu_upper, rounding="up")

    def log_delta_lower(self, eps: Any) -> Any:
        """A proved lower bound on log delta (vectorised)."""
        from symgdp.gaussian.vectorised import log_delta_mu

        return log_delta_mu(_eps(eps), self.mu_floor, rounding="down")

    def delta_lower(self, eps: Any) -> Any:
        """A proved lower bound on delta (vectorised)."""
        from symgdp.gaussian.vectorised import delta_mu

        return delta_mu(_eps(eps), self.mu_floor, rounding="down")

    lower_delta = delta_lower  # the name of the integer PMFs' lower bound

    def eps_bracket(self, delta: float) -> tuple[float, float]:
        r"""``(lower, upper)`` around the smallest :math:`\varepsilon` with
        :math:`(\varepsilon, \delta)`-DP (:math:`\varepsilon_{GDP}(\mu, \delta)` grows
        with :math:`\mu`: at ``mu_floor`` rounded down, at ``mu_upper`` rounded up).

        Example:
            >>> lo, up = GaussianSource(1.0, 1.0).eps_bracket(1e-5)
            >>> lo <= up and 4.377 < lo and up < 4.378
            True
        """
        from symgdp.gaussian.vectorised import eps_gdp

        d = float(delta)
        if not (0 < d <= 1):
            raise DomainError(f"delta must lie in (0, 1], got {delta!r}")
        return (float(eps_gdp(self.mu_floor, d, rounding="down")),
                float(eps_gdp(self.mu_upper, d, rounding="up")))

    def __call__(self, eps: Any) -> Any:
        return exp_up(self.log_delta(eps))

    def _mp_log(self, e: float) -> float:
        return float(self.log_delta(float(e)))

    def tail_limit(self) -> Any:
        r""":math:`\texttt{mu\_upper}^2`, the tail limit of the upper profile (exact)."""
        import sympy

        return sympy.Rational(self.mu_upper) ** 2

    def latex(self) -> str:
        return rf"\delta_{{\mu}}(\varepsilon),\ \mu \le {self.mu_upper!r}"

    def __repr__(self) -> str:
        return f"GaussianSource(mu in [{self.mu_floor!r}, {self.mu_upper!r}])"


def step_mu(obj: Any, kind: str) -> Any:
    r"""The exact :math:`\mu` (a SymPy number) of one step of :func:`symgdp.compose` when it
    is a Gaussian mechanism, else ``None``: a profile that is the catalogue's Gaussian
    (:func:`symgdp.mechanisms.gaussian_mu_of`), or a
    :class:`~symgdp.accounting.certified.SubsampledGaussian` with :math:`q = 1` (the pair
    :math:`N(1, \sigma^2)` against :math:`N(0, \sigma^2)`, :math:`\mu = 1/\sigma`, under
    add/remove; :math:`N(1, \sigma^2)` against :math:`N(-1, \sigma^2)`, :math:`2/\sigma`,
    under replace-one).

    Example:
        >>> from symgdp import mechanisms
        >>> step_mu(mechanisms.gaussian(sigma=4.0), "profile")
        1/4
    """
    import sympy

    if kind == "subsampled_gaussian":
        if float(obj.q) != 1.0:
            return None
        c = 2 if obj.neighbouring == "replace_one" else 1
        return sympy.Integer(c) / sympy.Rational(float(obj.sigma))
    if kind == "profile":
        from symgdp.mechanisms import gaussian_mu_of

        return gaussian_mu_of(obj)
    return None


def sympy_mu_bracket(mu: Any) -> tuple[float, float]:
    r"""``(mu_floor, mu_upper)`` around an exact SymPy number :math:`\mu > 0` (a 128-bit
    ball of it, its numbers entering exactly; 256 bits if the floats are not decided).

    Example:
        >>> import sympy
        >>> lo, up = sympy_mu_bracket(sympy.sqrt(2))
        >>> lo < up and lo ** 2 < 2 < up ** 2
        True
    """
    import sympy
    from flint import ctx

    from symgdp.evaluation.interval import lambdify_arb

    for prec in (128, 256):
        with ctx.workprec(prec):
            ball = lambdify_arb(sympy.sympify(mu), sympy.Dummy())(0)
            lo, up = max(float_below(ball), 0.0), float_above(ball)
        if math.isfinite(up) and 0 < lo and math.nextafter(math.nextafter(lo, math.inf),
                                                          math.inf) >= up:
            break
    if not (lo <= up and up > 0):
        raise DomainError(f"no enclosure of mu = {mu} (not a positive number?)")
    return lo, up


def gaussian_composition(mus: Any, failure_prob: float, tol: float, name: str
                         ) -> tuple[GaussianSource, dict[str, Any], str]:
    r"""The parts of an exact Gaussian composition (:func:`symgdp.compose` of Gaussian
    profiles, ``mus`` the pairs :math:`(\mu_i, k_i)` of exact SymPy numbers and counts,
    :math:`\mu = \sqrt{\sum_i k_i\mu_i^2}`): its source, its head bracket (the keys of a
    :class:`~symgdp.accounting.certified.Composition`'s bracket) and the note naming the
    theorem.

    Example:
        >>> import sympy
        >>> src, b, note = gaussian_composition([(sympy.Rational(1, 2), 16)], 1e-10, 1e-4,
        ...                                     "G")
        >>> b["mu_floor"], b["mu_upper"], b["measurement"].covers_tail
        (2.0, 2.0, True)
    """
    import sympy

    mu = sympy.sqrt(sympy.Add(*(k * m**2 for m, k in mus)))
    lo, up = sympy_mu_bracket(mu)
    src = GaussianSource(lo, up, name=name)
    eps_h, fail = head_end(up, failure_prob)
    note = (f"exact closed form: a composition of Gaussian mechanisms is the Gaussian "
            f"mechanism with mu = sqrt(sum k_i mu_i^2) = {mu} ({THEOREM}); no grid")
    return src, {"mu_upper": up, "mu_lower": lo, "mu_floor": lo, "eps_h": eps_h,
                 "failure_prob": fail,
                 "measurement": gaussian_measurement(lo, up, eps_h, tol, src, note)}, note


def _eps(eps: Any) -> Any:
    x = np.asarray(eps, dtype=np.float64)
    if np.any(np.isnan(x)) or np.any(x < 0):
        raise DomainError(f"eps must be >= 0, got {eps!r}")
    return float(x) if x.ndim == 0 else x


def head_end(mu_upper: float, failure_prob: float) -> tuple[float, float]:
    r"""``(eps_h, fp)``: :math:`\varepsilon_h` rounded up from the root of
    :math:`\delta_{\texttt{mu\_upper}}(\varepsilon) = \texttt{failure\_prob}` (at least
    1e-3, as the engine's head), and an
    upper bound ``fp <= failure_prob`` on :math:`\delta_{\texttt{mu\_upper}}(\varepsilon_h)`.

    Example:
        >>> e, fp = head_end(1.0, 1e-10)
        >>> 6.54 < e < 6.55 and fp <= 1e-10
        True
    """
    from symgdp.gaussian.vectorised import delta_mu, eps_gdp

    # (as the engine's head: 1e-3 when delta is already below failure_prob at eps = 0)
    e = max(float(eps_gdp(mu_upper, failure_prob, rounding="up")), 1e-3)
    # eps_h is at or above the exact root, so delta there is at most failure_prob; the
    # rounded-up value is another upper bound, smaller when the float root is well above
    return e, min(float(failure_prob), float(delta_mu(e, mu_upper, rounding="up")))


def gaussian_measurement(mu_floor: float, mu_upper: float, eps_h: float, tol: float,
                         source: GaussianSource, note: str) -> Any:
    r"""The :class:`~symgdp.measurement.result.Measurement` of an exact Gaussian profile:
    its GDPT is the constant :math:`\mu`, so ``[mu_floor, mu_upper]`` brackets its
    supremum on every interval, the whole line included (``covers_tail``).

    Example:
        >>> m = gaussian_measurement(2.0, 2.0, 8.0, 1e-4, GaussianSource(2.0, 2.0), "x")
        >>> m.lower, m.upper, m.covers_tail, m.failure_prob
        (2.0, 2.0, True, 0.0)
    """
    from symgdp.measurement.result import Measurement

    return Measurement(
        lower=mu_floor, upper=mu_upper, eps_h=eps_h, tol=tol, covers_tail=True,
        mu_tail=math.nan, failure_prob=0.0, log_failure_prob=-math.inf, refined=False,
        method="first-order", certified=True, evaluations=0, argmax=0.0, seconds=0.0,
        notes=(note,), profile=source, proved_until=math.inf,
        tail_proof=f"the profile is delta_mu with mu <= upper ({THEOREM}): exact")
