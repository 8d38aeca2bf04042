r"""Profiles recognised as (nearly) the Gaussian profile: brackets without a search.

A profile that is the Gaussian profile :math:`\delta_\mu` itself (in any spelling) is
recognised by an exact symbolic identity: its GDPT is the constant :math:`\mu`.  One whose
:math:`\mu` was a Float (``eps/30.0`` stored as ``0.0333333333333333*eps``) is
:math:`\delta_\mu` only up to that rounding; its bracket :math:`[\mu, \mu + \Delta]` comes
from a perturbation bound (:math:`\Delta \approx 10^{-14}`), since a search would need
:math:`\log\delta` to about :math:`\varphi(\mu/2)\,\mathrm{tol}` where
:math:`\delta \approx 1`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import sympy
from flint import arb, ctx

from symgdp.errors import PrecisionError, SymgdpError
from symgdp.evaluation.interval import log_delta_mu_upper
from symgdp.gaussian.vectorised import delta_mu
from symgdp.measurement.result import Measurement, _mu_tail
from symgdp.numerics.rounding import float_above, float_below


def _gaussian_identity(expr: Any, var: Any) -> Any:
    """The SymPy ``mu`` with ``expr`` identically equal to the GDP profile delta_mu (in
    any spelling: Phi, erfc or erf), or ``None``.  Exact symbolic identity only."""
    import sympy

    e = expr.replace(lambda u: isinstance(u, sympy.erf), lambda u: 1 - sympy.erfc(u.args[0]))
    atoms = [a for a in e.atoms(sympy.erfc) if var in a.free_symbols]
    if len(atoms) != 2:
        return None
    mus = []
    for a in atoms:
        c1 = sympy.diff(a.args[0], var)
        if var in c1.free_symbols or c1.is_zero:
            return None
        mus.append(sympy.simplify(1 / (sympy.sqrt(2) * sympy.Abs(c1))))
    mu = mus[0]
    if sympy.simplify(mus[1] - mu) != 0:
        return None
    r = sympy.sqrt(2)
    ref = (sympy.erfc((var / mu - mu / 2) / r)
           - sympy.exp(var) * sympy.erfc((var / mu + mu / 2) / r)) / 2
    diff = sympy.expand(e - ref)
    if diff != 0 and sympy.simplify(diff) != 0:
        return None
    return mu


# (expr, var) -> the mu of _gaussian_identity: the identity is decided on the expression
# with its parameters symbolic, so every value of a sweep or calibration shares it.  Only
# completed answers are kept (a timeout may succeed with a larger budget).  The key
# ("near", expr, var) holds the (alpha, beta) of _near_gaussian_form.
_IDENTITY: dict[tuple[Any, ...], Any] = {}
_IDENTITY_MAX = 64


def _gaussian_identity_once(expr: Any, var: Any, timeout: float | None) -> Any:
    """``_gaussian_identity(expr, var)`` in a bounded call, once per expression."""
    from symgdp.symbolic.budget import run_bounded

    key = (expr, var)
    if key not in _IDENTITY:
        mu = run_bounded(_gaussian_identity, expr, var, timeout=timeout)
        if len(_IDENTITY) >= _IDENTITY_MAX:
            _IDENTITY.pop(next(iter(_IDENTITY)))
        _IDENTITY[key] = mu
    return _IDENTITY[key]


def _recognised_gaussian(p: Any, timeout: float | None) -> float | None:
    """mu when the profile (parameters symbolic, values exact) is delta_mu itself."""
    import sympy

    from symgdp.errors import AnalysisTimeout

    if not hasattr(p, "expr") or p.expr.has(sympy.Float):
        return None  # a 15-digit constant is not the exact Gaussian profile
    if not p.expr.has(sympy.erf, sympy.erfc):
        return None  # _gaussian_identity needs erfc atoms: no child process for that
    try:
        mu = _gaussian_identity_once(p.expr, p.var, timeout)
    except (AnalysisTimeout, SymgdpError, TypeError, ValueError, AttributeError):
        return None
    if mu is None:
        return None
    # Float values as the exact rationals they store: substituted as Floats, SymPy would
    # evaluate mu in 53-bit arithmetic (3/(2*1.4999999999999998) -> 1.0, below the true
    # mu), and the "certified" bracket would be that rounding
    exact = {s: v.xreplace({f: sympy.Rational(f) for f in v.atoms(sympy.Float)})
             for s, v in p.values.items()}
    mu = mu.xreplace(exact)
    if mu.free_symbols or not mu.is_positive:
        return None
    return mu


def _linear_erfc(atom: Any, var: Any) -> tuple[Any, Any] | None:
    """(alpha, beta) with the argument of ``atom`` = alpha * var + beta (exact), or None."""
    arg = atom.args[0]
    alpha = sympy.diff(arg, var)
    if var in alpha.free_symbols or alpha.free_symbols:
        return None
    beta = arg.subs(var, 0)
    if beta.free_symbols or sympy.expand(arg - alpha * var - beta) != 0:
        return None
    return alpha, beta


def _near_gaussian_form(expr: Any, var: Any) -> tuple[Any, Any] | None:
    r"""(alpha, beta), exact, when ``expr`` is :math:`\tfrac12\operatorname{erfc}(\alpha
    \varepsilon - \beta) - \tfrac12 e^{\varepsilon}\operatorname{erfc}(\alpha\varepsilon
    + \beta)` with :math:`\alpha, \beta > 0` (its Float constants read as the exact
    binary values they store); else None.  :math:`\delta_\mu` is the case
    :math:`4\alpha\beta = 1`; a Float spelling of :math:`\mu` (``eps/30.0`` stored as
    ``0.0333333333333333*eps``) misses it by a rounding."""
    e = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
    e = e.replace(lambda u: isinstance(u, sympy.erf), lambda u: 1 - sympy.erfc(u.args[0]))
    # erfc(w) = 2 - erfc(-w): every argument increasing in var (the Phi and erf spellings)
    flip = {}
    for a in e.atoms(sympy.erfc):
        slope = sympy.diff(a.args[0], var)
        if not slope.free_symbols and slope.is_negative:
            flip[a] = 2 - sympy.erfc(sympy.expand(-a.args[0]))
    e = sympy.expand(e.xreplace(flip))
    atoms = [a for a in e.atoms(sympy.erfc) if var in a.free_symbols]
    if len(atoms) != 2:
        return None
    forms = {}
    for a in atoms:
        lin = _linear_erfc(a, var)
        if lin is None:
            return None
        forms[a] = lin
    (a1, (al1, be1)), (a2, (al2, be2)) = sorted(forms.items(), key=lambda t: bool(
        (t[1][1]).is_positive))
    if not (sympy.simplify(al1 - al2) == 0 and sympy.simplify(be1 + be2) == 0
            and al1.is_positive and be2.is_positive):
        return None
    u, v = sympy.Dummy("u"), sympy.Dummy("v")
    rest = e.xreplace({a1: u, a2: v}) - (u / 2 - sympy.exp(var) * v / 2)
    if sympy.expand(rest) != 0:
        return None
    return al1, be2


def _near_gaussian_bracket(p: Any, eps_h: float, tol: float, timeout: float | None,
                           refuse: bool = False) -> tuple[float, float, arb, arb] | None:
    r"""A proved bracket ``(lower, upper, mu, kappa)`` on the head GDP parameter of a profile
    of the form of :func:`_near_gaussian_form`, or None.

    With :math:`\mu = 2\sqrt2\,\beta` and :math:`\kappa = 4\alpha\beta`, the profile is
    :math:`A(\varepsilon) = \delta_\mu(\kappa\varepsilon) + (e^{\kappa\varepsilon} -
    e^{\varepsilon})\Phi(b(\kappa\varepsilon))` (:math:`a, b = \mp\varepsilon/\mu \pm
    \ldots` of theory §3).  :math:`A(0) = \delta_\mu(0)`, so :math:`G_A(0) = \mu` is a lower
    bound.  For the upper bound, with :math:`e^{\varepsilon}\Phi(b) = \varphi(a)\,
    \Phi(b)/\varphi(b) \le \sqrt{\pi/2}\,\varphi(a)` (Mills' ratio, :math:`b \le 0`):
    for :math:`\kappa \ge 1`, :math:`A - \delta_\mu \le \sqrt{\pi/2}\,(e^{(\kappa-1)
    \varepsilon_h} - 1)\,\varphi(a)`; for :math:`\kappa < 1`, :math:`A \le
    \delta_\mu(\kappa\varepsilon)` and :math:`A - \delta_\mu \le \sqrt{\pi/2}\,(1 -
    \kappa)\varepsilon_h\,e^{d\,a_{\max}}\varphi(a)` with :math:`d = (1-\kappa)
    \varepsilon_h/\mu`, :math:`a_{\max} = \mu/2 + \varepsilon_h/\mu \ge |a|`.  Since
    :math:`\partial_\mu\delta_\mu = \varphi(a)`, :math:`\delta_{\mu+\Delta} - \delta_\mu
    \ge \Delta\,\varphi(a)\,e^{-d_a(a_{\max} + d_a)}` with :math:`d_a = \Delta(1/2 +
    \varepsilon_h/\mu^2)`.  So :math:`A \le \delta_{\mu+\Delta}` on the head when
    :math:`\Delta` is twice the excess bound and :math:`d_a(a_{\max} + d_a) \le \log 2`.

    With ``refuse``, a profile of that form with :math:`|\kappa - 1| \le 0.01` whose bound
    is wider than ``tol`` and whose GDPT near its top needs :math:`\log\delta` to better
    than :math:`10^{-20}`
    (:math:`\varphi(\mu/2)\,\mathrm{tol}`, where :math:`\delta \approx 1`) is
    refused with a :class:`PrecisionError`: the search would run for minutes.
    """
    from symgdp.errors import AnalysisTimeout
    from symgdp.symbolic.budget import run_bounded

    if not hasattr(p, "expr") or not p.expr.has(sympy.Float) or p.expr.free_symbols - {
            p.var} or not p.expr.has(sympy.erf, sympy.erfc):
        return None
    key = ("near", p.expr, p.var)
    if key not in _IDENTITY:
        try:
            form = run_bounded(_near_gaussian_form, p.expr, p.var, timeout=timeout)
        except (AnalysisTimeout, SymgdpError, TypeError, ValueError, AttributeError):
            return None  # not kept: a larger budget may succeed
        if len(_IDENTITY) >= _IDENTITY_MAX:
            _IDENTITY.pop(next(iter(_IDENTITY)))
        _IDENTITY[key] = form
    form = _IDENTITY[key]
    if form is None:
        return None
    from symgdp.evaluation.interval import lambdify_arb

    with ctx.workprec(256):
        x = sympy.Dummy()
        alpha, beta = (lambdify_arb(v, x)(0) for v in form)
        mu = 2 * arb(2).sqrt() * beta
        kappa = 4 * alpha * beta
        h = arb(eps_h)
        amax = mu / 2 + h / mu
        # |kappa - 1| <= k; expm1(k h) e^(k h amax / mu) bounds both cases' factors
        k = arb(abs(kappa - 1).upper())
        excess = (arb.pi() / 2).sqrt() * (k * h).expm1() * (k * h * amax / mu).exp()
        gap = 2 * arb(excess.upper())
        da = gap * (arb(1) / 2 + h / (mu * mu))
        fits = bool(mu > 0 and gap.is_finite() and da * (amax + da) <= arb(2).log())
        if fits:
            lower, upper = float_below(mu), float_above(mu + gap)
            fits = upper - lower <= tol
        # the resolution in log delta the search needs near eps = 0: phi(mu/2) tol
        need = (-(mu * mu) / 8).exp() / (2 * arb.pi()).sqrt() * tol
        # 1 - delta_mu(0) = erfc(mu / (2 sqrt 2))
        below_one = (mu / (2 * arb(2).sqrt())).erfc() if bool(mu > 0) else arb(1)
    if fits:
        return lower, upper, mu, kappa
    # refused only where the factor is near 1 (the GDPT then stays within about
    # |kappa - 1| mu of mu over a long stretch where delta is about 1); farther from 1
    # the search resolves G (e.g. kappa = 1.1 or 2 at mu = 30)
    if refuse and bool(mu > 0) and bool(need < arb("1e-20")) and bool(k <= arb("0.01")):
        raise PrecisionError(
            f"the profile is delta_mu with mu = {mu.str(10, radius=False)} except that "
            f"eps/mu carries the factor {kappa.str(12, radius=False)}: its GDPT is flat "
            f"near mu where delta is within {float(below_one.upper()):.1e} "
            f"of 1, and bounding it to tol={tol!r} needs log delta to about "
            f"{float(need.upper()):.1e}, beyond what the search resolves (it would run for "
            "minutes); if mu was meant exactly, write it as an Integer/Rational or use "
            "mechanisms.gaussian(mu)")
    return None


def near_gaussian_mu_bound(near: tuple) -> arb:
    r"""A ball containing :math:`\mu_b = \max(\mu, \mu/\kappa)` with
    :math:`A \le \delta_{\mu_b}` on the whole line :math:`[0, \infty)`, for the profile
    :math:`A` of a bracket ``near`` of :func:`_near_gaussian_bracket` (theory §14).

    With :math:`x = \kappa\varepsilon/\mu`, :math:`A(\varepsilon) = \Phi(-x + \mu/2) -
    e^{\varepsilon}\Phi(-x - \mu/2)`.  For :math:`\kappa \ge 1`, :math:`k(\nu, m) =
    \Phi(-\varepsilon/\nu + m/2) - e^{\varepsilon}\Phi(-\varepsilon/\nu - m/2)` is
    non-decreasing in :math:`\nu` while :math:`\nu \le m` (its derivative is
    :math:`\varphi(-\varepsilon/\nu + m/2)\,(\varepsilon/\nu^2)(1 - e^{\varepsilon(1 -
    m/\nu)})`), so :math:`A = k(\mu/\kappa, \mu) \le k(\mu, \mu) = \delta_\mu`.  For
    :math:`\kappa < 1`, :math:`\varepsilon \ge \mu x` gives :math:`A \le g(\mu)` with
    :math:`g(m) = \Phi(-x + m/2) - e^{mx}\Phi(-x - m/2)`, and :math:`g'(m) =
    \varphi(x - m/2)(1 - xR(x + m/2)) > 0` (Mills' ratio :math:`R(t) < 1/t`), so
    :math:`A \le g(\mu/\kappa) = \delta_{\mu/\kappa}(\varepsilon)`.

    >>> from flint import arb
    >>> b = near_gaussian_mu_bound((1.0, 1.0, arb(1), arb("0.5")))
    >>> bool(b.contains(2)), bool(near_gaussian_mu_bound((1.0, 1.0, arb(1), arb(2))) == 1)
    (True, True)
    """
    _, _, mu, kappa = near
    with ctx.workprec(256):
        if not kappa < 1:
            if kappa >= 1:
                return mu
            return mu.union(mu / kappa)  # undecided: the ball of both
        return mu / kappa


def _near_gaussian_measurement(profile: Any, p: Any, near: tuple, eps_h: float,
                               tol: float, refined: bool, notes: list[str],
                               identify: bool, timeout: float | None, t0: float,
                               certify: bool | None) -> Measurement:
    """The bracket of :func:`_near_gaussian_bracket` as a Measurement (proved in ball
    arithmetic; ``certified`` says False only when float mode was asked for)."""
    lower, upper, mu, kappa = near
    notes.append(
        f"the profile is delta_mu with mu = {mu.str(17, radius=False)} up to the rounding "
        f"of its constants (eps/mu stored with the factor {kappa.str(20, radius=False)}): "
        "its GDPT is mu at eps = 0 and at most mu plus a proved excess on the head "
        "(a perturbation bound, no search)")
    return _searchless_measurement(profile, p, lower, upper, eps_h, tol, refined, notes,
                                   identify, timeout, t0, certified=certify is not False)


def _searchless_measurement(profile: Any, p: Any, lower: float, upper: float,
                            eps_h: float, tol: float, refined: bool, notes: list[str],
                            identify: bool, timeout: float | None,
                            t0: float, certified: bool = True) -> Measurement:
    """A Measurement of a proved bracket found without a search (a Gaussian profile):
    the failure probability is that of delta_upper at eps_h, which bounds the profile."""
    with ctx.workprec(128):
        lfp = log_delta_mu_upper(eps_h, upper)
    mu_tail = _mu_tail(profile, False, identify, notes, timeout)
    fp = math.nextafter(max(math.exp(lfp), float(delta_mu(eps_h, upper))), math.inf)
    return Measurement(
        lower=lower, upper=upper, eps_h=eps_h, tol=tol, covers_tail=False, mu_tail=mu_tail,
        failure_prob=fp, log_failure_prob=lfp, refined=refined, method="first-order",
        certified=certified, evaluations=0, argmax=0.0, seconds=time.perf_counter() - t0,
        certify_evaluations=0, notes=tuple(notes), cover=None, profile=p)


def _gaussian_measurement(profile: Any, p: Any, mu: Any, eps_h: float, tol: float,
                          refined: bool, notes: list[str], identify: bool,
                          timeout: float | None, t0: float) -> Measurement:
    """The bracket of a profile that is delta_mu itself: its GDPT is the constant mu."""
    import sympy

    from symgdp.evaluation.interval import lambdify_arb

    with ctx.workprec(128):
        m = lambdify_arb(mu, sympy.Dummy())(0)  # exact numbers enter as exact balls
        lower, upper = float_below(m), float_above(m)
    notes.append(f"the profile is the Gaussian profile delta_mu with mu = {mu} (an exact "
                 "symbolic identity): its GDPT is constant")
    return _searchless_measurement(profile, p, lower, upper, eps_h, tol, refined, notes,
                                   identify, timeout, t0)
