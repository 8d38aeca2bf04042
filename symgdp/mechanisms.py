r"""Ready-made privacy profiles of standard mechanisms (theory §2, §3, §9).

Every function returns a :class:`~symgdp.profile.Profile`.  A parameter given as a number
becomes a bound value of a named parameter symbol (so the expression stays readable and
symbolic steps still see the parameter); a parameter given as a SymPy symbol or expression
is used as is and stays free.

Two kinds of mechanism appear:

* **Exact profiles**: :func:`laplace`, :func:`gaussian`, :func:`pure_dp`,
  :func:`randomized_response` and :func:`shuffle_amplification` (a valid upper bound).
* **Trade-off equations** :math:`\text{noise} = f(\varepsilon, \delta)` published by the
  designers (:func:`sgd_family`, :func:`shuffle_sum`, :func:`projected_noisy_sgd`,
  :func:`classical_gaussian`).  They return the *naive* profile, the equation solved for
  :math:`\delta` by hand (theory §1), and carry the equation itself in
  ``profile.meta["tradeoff"]`` (a ``sympy.Eq`` with the noise on the left), ready for
  ``Profile.from_tradeoff(profile.meta["tradeoff"], profile.values)``.

Sources: Balle, Barthe & Gaboardi (2020) for the Laplace profile; Dong, Roth & Su (2021)
for GDP; Kairouz, Oh & Viswanath (2015) for the worst-case pure-DP profile; Liu, Sun,
Jiang & Kong (NeurIPS 2022, §5–6) for the trade-off-equation examples; Dwork & Roth (2014,
Thm A.1) for the classical Gaussian calibration; Feldman, McMillan & Talwar, "Hiding Among
the Clones" (FOCS 2021, Thm 3.1) for amplification by shuffling.
"""

from __future__ import annotations

from typing import Any

import sympy

from symgdp.errors import DomainError, ProfileError
from symgdp.profile import Profile
from symgdp.symbolic.symbols import delta as _DELTA
from symgdp.symbolic.symbols import eps as _EPS
from symgdp.symbolic.symbols import mu as _MU
from symgdp.symbolic.symbols import sigma as _SIGMA
from symgdp.symbolic.symbols import sympify_value

__all__ = [
    "laplace",
    "gaussian",
    "gaussian_mu_of",
    "pure_dp",
    "randomized_response",
    "sgd_family",
    "shuffle_sum",
    "projected_noisy_sgd",
    "classical_gaussian",
    "shuffle_amplification",
    "subsampled_gaussian_parameters",
    "EPS0",
    "SENSITIVITY",
]

#: the per-mechanism privacy parameter :math:`\varepsilon_0`
EPS0 = sympy.Symbol("varepsilon_0", positive=True, real=True)
#: the sensitivity :math:`\Delta` of a query
SENSITIVITY = sympy.Symbol("Delta", positive=True, real=True)
_A = sympy.Symbol("A", positive=True, real=True)
_B = sympy.Symbol("B", positive=True, real=True)
_C = sympy.Symbol("C", positive=True, real=True)
_M = sympy.Symbol("m", positive=True, real=True)
_N = sympy.Symbol("n", positive=True, real=True)
_EPS_L = sympy.Symbol("varepsilon_L", positive=True, real=True)
#: the scale b of Laplace noise
_SCALE = sympy.Symbol("b", positive=True, real=True)
#: the probability of telling the truth in randomized response
_P_TRUTH = sympy.Symbol("p", positive=True, real=True)


def _phi_cdf(x: sympy.Expr) -> sympy.Expr:
    """The standard normal CDF written with erfc (finite far into the lower tail)."""
    return sympy.erfc(-x / sympy.sqrt(2)) / 2


def _param(
    value: Any, symbol: sympy.Symbol, name: str, *, allow_zero: bool = False
) -> tuple[sympy.Expr, dict[sympy.Symbol, sympy.Expr]]:
    """A parameter as (expression to use, bound values).

    Numbers are validated (positive, or non-negative with ``allow_zero``) and bound to
    ``symbol``; symbolic expressions are kept and rejected only when SymPy can prove them
    out of range, so a free symbol still passes (the sympy.stats ``_value_check`` rule).
    """
    if isinstance(value, sympy.Basic) and not value.is_number:
        expr = value
        bad = expr.is_negative if allow_zero else expr.is_nonpositive
        if bad:
            raise DomainError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {expr}")
        return expr, {}
    try:
        v = sympify_value(value)
    except (ProfileError, TypeError, ValueError) as exc:
        raise DomainError(f"{name} must be a number or SymPy expression, got {value!r}") \
            from exc
    if v.is_real is False or v.is_finite is False:
        raise DomainError(f"{name} must be a finite real number, got {value!r}")
    if v.is_negative or (not allow_zero and v.is_zero):
        raise DomainError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return symbol, {symbol: v}


def _merge(*pairs: tuple[sympy.Expr, dict[Any, Any]]
           ) -> tuple[list[sympy.Expr], dict[Any, Any]]:
    exprs, values = [], {}
    for e, v in pairs:
        exprs.append(e)
        values.update(v)
    return exprs, values


def _exactly_one(function: str, **given: Any) -> str:
    """The name of the one alternative given (not ``None``); DomainError naming them all
    when none or several are."""
    named = [k for k, v in given.items() if v is not None]
    if len(named) != 1:
        how = "neither" if not named else "both" if len(named) == 2 else ", ".join(named)
        shown = ", ".join(f"{k}={v!r}" for k, v in given.items())
        raise DomainError(f"{function}() takes exactly one of {' and '.join(given)}, got "
                          f"{how} ({shown})")
    return named[0]


def _no_sensitivity_with(function: str, sensitivity: Any, name: str, value: Any,
                         alternative: str) -> None:
    if not (isinstance(sensitivity, (int, float)) and not isinstance(sensitivity, bool)
            and sensitivity == 1):
        raise DomainError(f"{function}(): sensitivity={sensitivity!r} applies only with "
                          f"{alternative}=; {name} already includes it (got {name}={value!r})")


def laplace(eps0: Any = None, *, b: Any = None, sensitivity: Any = 1) -> Profile:
    r"""Exact profile of the Laplace mechanism, given :math:`\varepsilon_0` or its noise
    scale :math:`b` (then :math:`\varepsilon_0 = \Delta/b`).

    .. math:: \delta(\varepsilon) = \bigl(1 - e^{(\varepsilon - \varepsilon_0)/2}\bigr)_+

    (Balle, Barthe & Gaboardi 2020; theory §9).  It is 0 from
    :math:`\varepsilon_0` on: the mechanism is :math:`\varepsilon_0`-DP.

    Args:
        eps0: the privacy parameter :math:`\varepsilon_0 \ge 0`.
        b: the scale :math:`b > 0` of the Laplace noise instead of ``eps0``.
        sensitivity: the :math:`\ell_1` sensitivity :math:`\Delta > 0` (with ``b`` only).

    Exactly one of ``eps0`` and ``b`` is given.  With ``b`` the profile keeps :math:`b`
    and :math:`\Delta` as parameters (symbolic steps give formulas in them).

    Raises:
        DomainError: neither or both of ``eps0`` and ``b``, ``sensitivity`` with
            ``eps0``, or a value out of range (checked for a symbolic value only where
            SymPy can decide it).

    Example:
        >>> p = laplace(1.0)
        >>> p.expr
        Max(0, 1 - exp(varepsilon/2 - varepsilon_0/2))
        >>> round(p(0.0), 12)  # 1 - exp(-1/2)
        0.393469340287
        >>> round(laplace(b=2, sensitivity=2)(0.0), 12)  # the same eps0 = 2/2
        0.393469340287
    """
    if _exactly_one("laplace", eps0=eps0, b=b) == "eps0":
        _no_sensitivity_with("laplace", sensitivity, "eps0", eps0, "b")
        (e0,), vals = _merge(_param(eps0, EPS0, "eps0", allow_zero=True))
        meta: dict[str, Any] = {}
    else:
        (scale, d), vals = _merge(_param(b, _SCALE, "b"),
                                  _param(sensitivity, SENSITIVITY, "sensitivity"))
        e0 = d / scale
        meta = {"eps0": e0.xreplace(vals)}
    expr = sympy.Max(1 - sympy.exp((_EPS - e0) / 2), 0)
    return Profile(expr, vals, name="Laplace",
                   reference="Balle, Barthe & Gaboardi (2020); theory §9",
                   mechanism=("laplace", e0), **meta)


def gaussian(mu: Any = None, *, sigma: Any = None, sensitivity: Any = 1) -> Profile:
    r"""Exact profile of the Gaussian mechanism, given :math:`\mu` or its noise :math:`\sigma`.

    A Gaussian mechanism with sensitivity :math:`\Delta` and noise :math:`\sigma` is exactly
    :math:`\mu`-GDP with :math:`\mu = \Delta/\sigma`, and its profile is

    .. math:: \delta_\mu(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2)
              - e^{\varepsilon}\Phi(-\varepsilon/\mu - \mu/2)

    with :math:`\Phi(x) = \operatorname{erfc}(-x/\sqrt2)/2` (Dong, Roth & Su 2021, Cor. 2.13;
    Balle & Wang 2018, Thm 8).

    Args:
        mu: the GDP parameter :math:`\mu > 0`.
        sigma: the noise standard deviation :math:`\sigma > 0` instead of ``mu``.
        sensitivity: the :math:`\ell_2` sensitivity :math:`\Delta > 0` (with ``sigma`` only).

    Exactly one of ``mu`` and ``sigma`` is given.  Numbers and SymPy expressions are both
    accepted; with ``sigma`` the profile keeps :math:`\sigma` and :math:`\Delta` as
    parameters, so symbolic steps give formulas in them.

    Raises:
        DomainError: neither or both of ``mu`` and ``sigma``, ``sensitivity`` with ``mu``,
            or a value that is not positive and finite.

    Example:
        >>> round(gaussian(1.0)(1.0), 12)
        0.126936737507
        >>> round(gaussian(sigma=2.0, sensitivity=2.0)(1.0), 12)  # the same mu = 1
        0.126936737507
        >>> round(float(gaussian(sigma=2.0).tail_limit()), 6)  # Delta^2/sigma^2 (theory §5)
        0.25
    """
    if (mu is None) == (sigma is None):
        given = "both" if mu is not None else "neither"
        raise DomainError(f"gaussian() takes exactly one of mu and sigma, got {given} "
                          f"(mu={mu!r}, sigma={sigma!r})")
    if mu is not None:
        if not (isinstance(sensitivity, (int, float)) and not isinstance(sensitivity, bool)
                and sensitivity == 1):
            raise DomainError(f"sensitivity={sensitivity!r} applies only with sigma=; "
                              f"mu is already Delta/sigma (got mu={mu!r})")
        (m,), vals = _merge(_param(mu, _MU, "mu"))
        meta: dict[str, Any] = {}
    else:
        (s, d), vals = _merge(_param(sigma, _SIGMA, "sigma"),
                              _param(sensitivity, SENSITIVITY, "sensitivity"))
        m = d / s
        meta = {"mu": m.xreplace(vals)}
    expr = _phi_cdf(-_EPS / m + m / 2) - sympy.exp(_EPS) * _phi_cdf(-_EPS / m - m / 2)
    return Profile(expr, vals, name="Gaussian",
                   reference="Dong, Roth & Su (2021), Corollary 2.13",
                   mechanism=("gaussian", m), **meta)


def gaussian_mu_of(profile: Any) -> sympy.Expr | None:
    r"""The exact :math:`\mu` of a profile that is the catalogue's Gaussian profile
    (:func:`gaussian`, every parameter bound, its expression unchanged: not subsampled or
    otherwise transformed), else ``None``.  Float values are read as the exact binary
    rationals they store (``sigma=0.3`` is the Gaussian mechanism of that float, not of
    3/10).  The composition of such profiles is exactly Gaussian
    (:func:`symgdp.compose` uses this; Dong, Roth & Su 2022, Cor. 3.3).

    Example:
        >>> gaussian_mu_of(gaussian(sigma=2.0, sensitivity=3))
        3/2
        >>> gaussian_mu_of(gaussian(1.0).subsample(0.5)) is None
        True
    """
    meta = getattr(profile, "meta", None)
    if getattr(profile, "source", None) is not None or meta is None or "subsampled" in meta:
        return None
    tag = meta.get("mechanism")
    if not (isinstance(tag, tuple) and len(tag) == 2 and tag[0] == "gaussian"):
        return None
    m = sympy.sympify(tag[1])
    expected = _phi_cdf(-_EPS / m + m / 2) - sympy.exp(_EPS) * _phi_cdf(-_EPS / m - m / 2)
    if getattr(profile, "expr", None) != expected or getattr(profile, "var", None) != _EPS:
        return None
    exact = {s: sympy.sympify(v).xreplace({f: sympy.Rational(f)
                                           for f in sympy.sympify(v).atoms(sympy.Float)})
             for s, v in profile.values.items()}
    mu = m.xreplace(exact)
    if mu.free_symbols or not (mu.is_positive and mu.is_finite):
        return None
    return mu


def _directed_float(value: sympy.Expr, up: bool) -> float:
    """A float64 on the given side of the real number ``value`` (exact for a rational or a
    float; otherwise a 40-digit value moved two ulps outwards)."""
    import math

    direction = math.inf if up else -math.inf
    if value.is_Rational or value.is_Float:
        exact = sympy.Rational(value)
        f = float(exact)
        if (sympy.Rational(f) < exact) if up else (sympy.Rational(f) > exact):
            f = math.nextafter(f, direction)
        return f
    f = float(value.evalf(40))
    return math.nextafter(math.nextafter(f, direction), direction)


def subsampled_gaussian_parameters(profile: Any, *, upper: bool = False
                                   ) -> tuple[float, float] | None:
    r"""``(q, sigma)`` when ``profile`` is exactly ``gaussian(...).subsample(q)`` with every
    parameter bound: the Poisson-subsampled Gaussian mechanism with rate :math:`q` and noise
    multiplier :math:`\sigma = 1/\mu` (noise over sensitivity); ``(1.0, sigma)`` for
    ``gaussian(...)`` itself; ``None`` otherwise.

    The metadata is not trusted alone: the profile's expression must be the Gaussian
    profile of its ``mechanism`` tag, or the subsampling formula (theory §7) applied to it,
    so a profile subsampled twice, or changed after subsampling, is not recognised.  ``q``
    is rounded down and ``sigma`` up (a float64 each): the pair they name is a
    post-processing of the true one (less sampling, more noise), so a lower bound computed
    for it is a lower bound for the mechanism (what :func:`symgdp.compose` uses it for).
    With ``upper=True`` the other way (``q`` up, ``sigma`` down): the pair named then
    dominates the true one, so an upper bound computed for it holds for the mechanism.

    Example:
        >>> subsampled_gaussian_parameters(gaussian(sigma=2.0).subsample(0.25))
        (0.25, 2.0)
        >>> subsampled_gaussian_parameters(gaussian(sigma=2.0).subsample(0.5).subsample(0.5))
        >>> subsampled_gaussian_parameters(gaussian(sigma=4.0, sensitivity=2.0))
        (1.0, 2.0)
    """
    meta = getattr(profile, "meta", None)
    if not isinstance(profile, Profile) or profile.source is not None or not meta:
        return None
    tag, g = meta.get("mechanism"), meta.get("subsampled", 1)
    if not (isinstance(tag, tuple) and len(tag) == 2 and tag[0] == "gaussian"):
        return None
    m, g = sympy.sympify(tag[1]), sympy.sympify(g)
    base = _phi_cdf(-_EPS / m + m / 2) - sympy.exp(_EPS) * _phi_cdf(-_EPS / m - m / 2)
    if profile.var != _EPS:
        return None
    if "subsampled" not in meta:
        if profile.expr != base:
            return None
    else:
        if sympy.sympify(meta.get("unsubsampled")) != base:
            return None
        inner = base.xreplace({_EPS: sympy.log(1 + (sympy.exp(_EPS) - 1) / g)})
        if profile.expr not in (g * inner, g * sympy.Min(1, inner)):
            return None
    vals = dict(profile.values)
    m_val, g_val = m.xreplace(vals), g.xreplace(vals)
    if not (m_val.is_number and g_val.is_number and m_val.is_positive
            and g_val.is_positive and (g_val - 1).is_nonpositive):
        return None
    q = min(_directed_float(g_val, up=upper), 1.0)
    sigma = _directed_float(1 / m_val, up=not upper)
    if not (0.0 < q <= 1.0 and 0.0 < sigma < float("inf")):
        return None
    return q, sigma


def _pure_dp_expr(e0: sympy.Expr) -> sympy.Expr:
    return sympy.Max(sympy.exp(e0) - sympy.exp(_EPS), 0) / (1 + sympy.exp(e0))


def pure_dp(eps0: Any) -> Profile:
    r"""Worst-case profile of an :math:`\varepsilon_0`-DP mechanism.

    .. math:: \delta(\varepsilon) = \frac{(e^{\varepsilon_0} - e^{\varepsilon})_+}
              {1 + e^{\varepsilon_0}}

    Every :math:`\varepsilon_0`-DP mechanism has a profile at most this, and randomized
    response attains it (Kairouz, Oh & Viswanath 2015; theory §2).

    Example:
        >>> from symgdp import eps
        >>> p = pure_dp(sympy.log(3))
        >>> p.bound_expr.subs(eps, 0)
        1/2
    """
    (e0,), vals = _merge(_param(eps0, EPS0, "eps0", allow_zero=True))
    return Profile(_pure_dp_expr(e0), vals, name="pure DP",
                   reference="Kairouz, Oh & Viswanath (2015); theory §2",
                   mechanism=("pure_dp", e0))


def _truth_probability(p: Any) -> tuple[sympy.Expr, dict[sympy.Symbol, sympy.Expr]]:
    """The probability of telling the truth, in [1/2, 1): (expression, bound values)."""
    expr, vals = _param(p, _P_TRUTH, "p")
    value = expr.xreplace(vals)
    half = sympy.Rational(1, 2)
    if (value - half).is_negative or (value - 1).is_nonnegative:
        raise DomainError(f"randomized_response(): p, the probability of telling the truth, "
                          f"must lie in [1/2, 1), got {p!r}")
    return expr, vals


def randomized_response(eps0: Any = None, *, p: Any = None) -> Profile:
    r"""Exact profile of binary randomized response that reports the truth with
    probability :math:`p = e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`.

    Give :math:`\varepsilon_0 \ge 0` or the probability :math:`p \in [1/2, 1)` of telling
    the truth (then :math:`\varepsilon_0 = \log(p/(1-p))`), exactly one of them.  It
    equals the worst-case :math:`\varepsilon_0`-DP profile of :func:`pure_dp`; the
    returned profile carries ``meta["p"]`` (and ``meta["eps0"]`` when ``p`` is given).

    Raises:
        DomainError: neither or both of ``eps0`` and ``p``, or a value out of range
            (checked for a symbolic value only where SymPy can decide it).

    Example:
        >>> randomized_response(sympy.log(3)).meta["p"]
        3/4
        >>> randomized_response(p=sympy.Rational(3, 4)).meta["eps0"]
        log(3)
    """
    meta: dict[str, Any] = {}
    if _exactly_one("randomized_response", eps0=eps0, p=p) == "eps0":
        (e0,), vals = _merge(_param(eps0, EPS0, "eps0", allow_zero=True))
        truth = sympy.exp(e0) / (1 + sympy.exp(e0))
    else:
        truth, vals = _truth_probability(p)
        e0 = sympy.log(truth / (1 - truth))
        meta["eps0"] = sympy.simplify(e0.xreplace(vals))
    return Profile(_pure_dp_expr(e0), vals, name="randomized response",
                   reference="Kairouz, Oh & Viswanath (2015)", p=truth.xreplace(vals),
                   mechanism=("randomized_response", e0), **meta)


def sgd_family(A: Any, B: Any, sigma: Any) -> Profile:
    r"""Naive profile of the "SGD family" calibration
    :math:`\sigma = A\,\varepsilon^{-1}\sqrt{\log(B/\delta)}`:

    .. math:: \tilde\delta(\varepsilon) = B\, e^{-\sigma^2\varepsilon^2/A^2}

    (Liu et al. 2022, §6; theory §9).  ``meta["tradeoff"]`` holds the equation.

    Example:
        >>> p = sgd_family(1, 1, 2)
        >>> p.expr
        B*exp(-sigma**2*varepsilon**2/A**2)
    """
    (a, b, s), vals = _merge(_param(A, _A, "A"), _param(B, _B, "B"),
                             _param(sigma, _SIGMA, "sigma"))
    eq = sympy.Eq(s, a / _EPS * sympy.sqrt(sympy.log(b / _DELTA)))
    return Profile(b * sympy.exp(-s**2 * _EPS**2 / a**2), vals, name="SGD family",
                   reference="Liu, Sun, Jiang & Kong (2022), §6", tradeoff=eq)


def shuffle_sum(m: Any, n: Any) -> Profile:
    r"""Naive profile of shuffle-model summation (the "ICEA" example): it is
    :math:`(\varepsilon, \delta)`-DP when :math:`m \ge 10\log(n/(\varepsilon\delta))`, so

    .. math:: \tilde\delta(\varepsilon) = \frac{n\, e^{-m/10}}{\varepsilon}

    (Liu et al. 2022, §5; theory §9).  The profile is :math:`\ge 1` near 0
    (vacuous there); ``meta["tradeoff"]`` holds :math:`m = 10\log(n/(\varepsilon\delta))`.

    Example:
        >>> shuffle_sum(100, 1000).expr
        n*exp(-m/10)/varepsilon
    """
    (mm, nn), vals = _merge(_param(m, _M, "m"), _param(n, _N, "n"))
    eq = sympy.Eq(mm, 10 * sympy.log(nn / (_EPS * _DELTA)))
    return Profile(nn * sympy.exp(-mm / 10) / _EPS, vals, name="shuffle sum",
                   reference="Liu, Sun, Jiang & Kong (2022), §5", tradeoff=eq)


def projected_noisy_sgd(C: Any, sigma: Any) -> Profile:
    r"""Naive profile of projected noisy SGD calibrated by
    :math:`\sigma = -C\log(\delta)/\varepsilon`:

    .. math:: \tilde\delta(\varepsilon) = e^{-\sigma\varepsilon/C}

    (Liu et al. 2022, §6; theory §9).  Its tail is only exponential in
    :math:`\varepsilon`, so the tail limit of theory §5 is infinite: this
    guarantee, as written, is not GDP.

    Example:
        >>> projected_noisy_sgd(1, 2).expr
        exp(-sigma*varepsilon/C)
    """
    (c, s), vals = _merge(_param(C, _C, "C"), _param(sigma, _SIGMA, "sigma"))
    eq = sympy.Eq(s, -c * sympy.log(_DELTA) / _EPS)
    return Profile(sympy.exp(-s * _EPS / c), vals, name="projected noisy SGD",
                   reference="Liu, Sun, Jiang & Kong (2022), §6", tradeoff=eq)


def classical_gaussian(sigma: Any, sensitivity: Any = 1) -> Profile:
    r"""Naive profile of the classical Gaussian calibration
    :math:`\sigma = \Delta\sqrt{2\log(1.25/\delta)}/\varepsilon`:

    .. math:: \tilde\delta(\varepsilon) = \tfrac54\, e^{-\sigma^2\varepsilon^2/(2\Delta^2)}

    Caution: Dwork & Roth (2014, Thm A.1) prove the calibration only for
    :math:`\varepsilon < 1`.  Beyond that the naive profile is not a guarantee: it falls
    *below* the exact profile :math:`\delta_{\Delta/\sigma}` of the same Gaussian mechanism
    for large :math:`\varepsilon` (for :math:`\sigma = \Delta` from about
    :math:`\varepsilon = 12.8` on), because :math:`-2\log\delta_\mu(\varepsilon) =
    \varepsilon^2/\mu^2 - \varepsilon + O(\log\varepsilon)` (theory §5).  It is the
    textbook example of a naive profile whose tail limit is :math:`\Delta^2/\sigma^2`;
    ``meta["valid_for"]`` records the proven range.

    Example:
        >>> classical_gaussian(2).expr
        5*exp(-sigma**2*varepsilon**2/(2*Delta**2))/4
    """
    (s, d), vals = _merge(_param(sigma, _SIGMA, "sigma"),
                          _param(sensitivity, SENSITIVITY, "sensitivity"))
    eq = sympy.Eq(s, d * sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / _DELTA)) / _EPS)
    expr = sympy.Rational(5, 4) * sympy.exp(-s**2 * _EPS**2 / (2 * d**2))
    return Profile(expr, vals, name="classical Gaussian",
                   reference="Dwork & Roth (2014), Theorem A.1", tradeoff=eq,
                   valid_for=sympy.StrictLessThan(_EPS, 1))


def shuffle_amplification(eps_local: Any, n: Any) -> Profile:
    r"""Profile of :math:`n` shuffled reports of an :math:`\varepsilon_0`-DP local
    randomizer, from Feldman, McMillan & Talwar ("Hiding Among the Clones", FOCS 2021,
    Theorem 3.1).

    The theorem: for :math:`\delta \in (0, 1]` with
    :math:`\varepsilon_0 \le \log\bigl(n / (16\log(2/\delta))\bigr)`, the shuffled output
    is :math:`(\varepsilon, \delta)`-DP with

    .. math:: \varepsilon = \log\Bigl(1 + 8\,\frac{e^{\varepsilon_0} - 1}{e^{\varepsilon_0} + 1}
              \Bigl(\sqrt{\frac{e^{\varepsilon_0}\log(4/\delta)}{n}}
              + \frac{e^{\varepsilon_0}}{n}\Bigr)\Bigr).

    Inverting, with :math:`s(\varepsilon) = (e^{\varepsilon} - 1)(e^{\varepsilon_0} + 1)
    / (8(e^{\varepsilon_0} - 1)) - e^{\varepsilon_0}/n`:
    :math:`\delta = 4\exp(-n s^2/e^{\varepsilon_0})` when :math:`s > 0` (no :math:`\delta`
    works when :math:`s \le 0`).  The validity condition is
    :math:`\delta \ge \delta_{\min} = 2\exp(-n e^{-\varepsilon_0}/16)`; below it the theorem
    says nothing, but :math:`(\varepsilon, \delta_{\min})` still holds for every larger
    :math:`\varepsilon` (a profile is non-increasing), so the inverted bound is floored at
    :math:`\delta_{\min}`.  The shuffled output is also :math:`\varepsilon_0`-DP
    (post-processing of the local reports), so the result is the minimum with the
    worst-case :math:`\varepsilon_0`-DP profile, which makes it 0 from
    :math:`\varepsilon_0` on.

    Example:
        >>> p = shuffle_amplification(1.0, 10**6)
        >>> round(p(0.02), 10)
        6.85933e-05
        >>> p(1.0)
        0.0
    """
    (e0, nn), vals = _merge(_param(eps_local, _EPS_L, "eps_local", allow_zero=True),
                            _param(n, _N, "n"))
    t = (sympy.exp(e0) - 1) / (sympy.exp(e0) + 1)
    s = (sympy.exp(_EPS) - 1) / (8 * t) - sympy.exp(e0) / nn
    fmt = 4 * sympy.exp(-nn * s**2 * sympy.exp(-e0))
    delta_min = 2 * sympy.exp(-nn * sympy.exp(-e0) / 16)
    shuffled = sympy.Piecewise((1, s <= 0), (sympy.Min(1, sympy.Max(fmt, delta_min)), True))
    expr = sympy.Min(_pure_dp_expr(e0), shuffled)
    return Profile(expr, vals, name="shuffle amplification",
                   reference="Feldman, McMillan & Talwar (2021), Theorem 3.1",
                   delta_min=delta_min.xreplace(vals))
