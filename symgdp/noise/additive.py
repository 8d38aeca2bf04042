r"""From a noise density to the privacy profile of the additive-noise mechanism.

:func:`additive_noise` takes the noise :math:`Z` of a mechanism :math:`M(D) = f(D) + Z`
(a density written in SymPy, or a ``sympy.stats`` random variable) and derives, keeping
every step in a :class:`Derivation`:

1. the density, checked (:mod:`symgdp.noise.density`: non-negative, mass 1);
2. the privacy loss :math:`L(x) = \log p(x) - \log p(x - \Delta)` and its monotonicity
   (:mod:`symgdp.noise.loss`: proved through log-concavity of :math:`p`);
3. the threshold :math:`x_\varepsilon` with :math:`L(x_\varepsilon) = \varepsilon`;
4. the profile.  With :math:`P = \mathcal{L}(Z)`, :math:`Q = \mathcal{L}(Z + \Delta)`
   and :math:`\{L > \varepsilon\} = (-\infty, x_\varepsilon)`,

   .. math:: \delta(\varepsilon) = \int (p(x) - e^\varepsilon p(x - \Delta))_+\,dx
             = F(x_\varepsilon) - e^{\varepsilon} F(x_\varepsilon - \Delta),

   :math:`F` the CDF of :math:`Z` (Balle & Wang 2018, Thm 5, the Gaussian case; the
   hockey-stick divergence in general).  The other direction (:math:`Q` against
   :math:`P`) is the same derivation for :math:`-Z`; for symmetric noise
   (:math:`p(-x) = p(x)`, proved) the two agree (substitute :math:`x \mapsto \Delta - x`),
   otherwise the profile is their maximum.  Where :math:`L \le \varepsilon_0` everywhere
   the profile is 0 from :math:`\varepsilon_0` on (pure DP);
5. the tail limit and the GDP verdict (:mod:`symgdp.tail.limit`, theory §5);
6. an independent check: the profile against a 30-digit quadrature of its definition at
   sampled parameter values (:mod:`symgdp.noise.check`); a disagreement refuses the
   derivation.

**Why the shift :math:`\pm\Delta` is the worst case.**  Neighbouring inputs give outputs
:math:`f(D) + Z` and :math:`f(D') + Z` with :math:`|f(D) - f(D')| \le \Delta`.  For
log-concave noise the location family has a monotone likelihood ratio for every shift
:math:`s`, so the Neyman--Pearson tests are thresholds and the trade-off function
:math:`T(P, P_s)(\alpha) = F(F^{-1}(1 - \alpha) - s)` decreases in :math:`s`; the profile,
a function of :math:`T` (Dong, Roth & Su 2021, Prop. 2.12), is largest at
:math:`|s| = \Delta`.  A negative shift is the reversed pair, covered by the two
directions.  The guarantee holds for whichever neighbouring relation (add/remove or
replace-one) :math:`\Delta` is the sensitivity under.

Student-t noise :math:`c\,(A + Bx^2)^{-k}` (Cauchy at :math:`k = 1`) is not log-concave,
but its level sets are intervals in closed form: it is recognised (under the time budget)
and derived by :func:`symgdp.noise.student.student_t_noise` (exactly for integer degrees
of freedom :math:`\nu = 2k - 1`; other :math:`\nu` certified numerically, with a numeric
sensitivity).  Other noise that is
not proved log-concave is refused with the reason
(:class:`~symgdp.errors.ProfileError`), as is multivariate noise: not derived yet.  A
density written with ``floor`` (a step function) is refused at once, naming the staircase
route :func:`symgdp.noise.staircase.staircase` (Geng & Viswanath's piecewise-constant
noise, derived exactly there).  Noise
on the integers (a PMF) is :mod:`symgdp.noise.discrete` (``support="integers"``).

Example:
    >>> import sympy
    >>> from sympy.stats import Laplace
    >>> b = sympy.Symbol("b", positive=True)
    >>> p = additive_noise(Laplace("Z", 0, b), sensitivity=1)
    >>> p.meta["derivation"].profile
    Piecewise((0, varepsilon >= Delta/b), (1 - exp(-Delta/(2*b) + varepsilon/2), True))
    >>> print(p.meta["derivation"].verdict[:48])
    pure DP: L <= Delta/b, so delta(eps) = 0 for eps
    >>> round(p.replace(values={"b": 2})(0.25), 12)  # 1 - exp((0.25 - 0.5)/2)
    0.117503097415
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import sympy

from symgdp.errors import AnalysisTimeout, DomainError, ProfileError, SymgdpError
from symgdp.mechanisms import SENSITIVITY
from symgdp.noise.check import crosscheck
from symgdp.noise.density import (
    Density,
    _from_expression,
    _from_random_variable,
    aligned_rows,
    read_density,
    tex_text,
)
from symgdp.noise.discrete import discrete_noise
from symgdp.noise.gengauss import (
    GeneralizedGaussianFamily,
    derivation_parts,
    match_generalized_gaussian,
    quadrature_check,
)
from symgdp.noise.loss import Loss, privacy_loss
from symgdp.noise.student import match_student_t, student_t_noise
from symgdp.noise.vector import NORMS, reduce_vector_gaussian
from symgdp.profile import Profile
from symgdp.symbolic.budget import resolve_timeout, run_bounded
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["Derivation", "additive_noise"]

RELATION = ("neighbours D ~ D' with |f(D) - f(D')| <= Delta, under whichever relation "
            "(add/remove or replace-one) Delta is the sensitivity for")


@dataclass(frozen=True)
class Derivation:
    r"""Every step of :func:`additive_noise`, as formulas in the noise parameters.

    Attributes:
        noise: the noise's name.
        density: :math:`p(x)`.
        variable: :math:`x`.
        sensitivity: :math:`\Delta` (the symbol the formulas use).
        sensitivity_value: its value when given as a number (substituted into the
            returned profile), else ``None``.
        loss: :math:`L(x)` (a ``Piecewise`` in :math:`x` when it has pieces).
        monotone: how :math:`L` was proved non-increasing.
        threshold: :math:`x_\varepsilon` (on the piece where :math:`L` decreases), and
            ``threshold_range``, the :math:`\varepsilon` where it holds.
        directions: why one shift direction suffices, or that both were taken.
        profile: :math:`\delta(\varepsilon)`.
        loss_bound: :math:`\sup L` (``oo`` when unbounded).
        tail_limit: :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))`, ``None`` when
            unknown.
        verdict: the GDP verdict in one sentence.
        check: the independent numeric check of the profile
            (:func:`symgdp.noise.check.crosscheck`), or why it did not run.
        relation: the neighbouring relation assumed.
        timings: seconds per step.
        reduction: for vector noise, how it was reduced to the 1-D shift derived below
            (:mod:`symgdp.noise.vector`); empty otherwise.
        threshold_note: where :math:`x_\varepsilon` has no closed form (``threshold`` is
            then the symbol :math:`x_\varepsilon`), the equation it solves and how it is
            proved; empty otherwise.
    """

    noise: str
    density: sympy.Expr
    variable: sympy.Symbol
    sensitivity: sympy.Expr
    sensitivity_value: sympy.Expr | None
    loss: sympy.Expr
    monotone: str
    threshold: sympy.Expr
    threshold_range: tuple[sympy.Expr, sympy.Expr]
    directions: str
    profile: sympy.Expr
    loss_bound: sympy.Expr
    tail_limit: sympy.Expr | None
    verdict: str
    check: str = ""
    relation: str = RELATION
    timings: dict[str, float] = field(default_factory=dict)
    reduction: str = ""
    threshold_note: str = ""

    def latex_rows(self) -> list[tuple[str, str]]:
        """(label, LaTeX) pairs, one per derived step (the report's rows)."""
        x, v = sympy.latex(self.variable), sympy.latex(_EPS)
        d = sympy.latex(self.sensitivity)
        given = "" if self.sensitivity_value is None else \
            rf",\ {d} = {sympy.latex(self.sensitivity_value)}"
        lo, hi = (sympy.latex(e) for e in self.threshold_range)
        rows = [
            ("noise", rf"Z \sim p({x}) = {sympy.latex(self.density)}\ "
                      rf"(\text{{{self.noise}}}),\quad M(D) = f(D) + Z,\ "
                      rf"|f(D) - f(D')| \le {d}{given}"),
            ("privacy loss", rf"L({x}) = \log p({x}) - \log p({x} - {d}) = "
                             rf"{sympy.latex(self.loss)}"),
            ("monotonicity", rf"\text{{{tex_text(self.monotone)}}}"),
            ("threshold", rf"L({x}_{{{v}}}) = {v} \iff {x}_{{{v}}} = "
                          rf"{sympy.latex(self.threshold)}\quad ({lo} < {v} < {hi})"
             if not self.threshold_note else
             rf"L({x}_{{{v}}}) = {v}:\ \text{{{tex_text(self.threshold_note)}}}"),
            ("directions", rf"\text{{{tex_text(self.directions)}}}"),
            ("profile", rf"\delta({v}) = F({x}_{{{v}}}) - e^{{{v}}} F({x}_{{{v}}} - {d}) = "
                        rf"{sympy.latex(self.profile)}"),
            ("tail limit", rf"\lim_{{{v}\to\infty}} \frac{{{v}^2}}{{-2\log\delta({v})}} = "
                           + (r"\text{unknown}" if self.tail_limit is None
                              else sympy.latex(self.tail_limit))),
            ("verdict", rf"\text{{{tex_text(self.verdict)}}}"),
        ]
        if self.check:
            rows.append(("check", rf"\text{{{tex_text(self.check)}}}"))
        if self.reduction:
            rows.insert(0, ("reduction", rf"\text{{{tex_text(self.reduction)}}}"))
        return rows

    def to_latex(self) -> str:
        r"""The derivation as a paste-ready ``align*`` block (needs ``amsmath``)."""
        lines = [rf"  \text{{{label}:}} \quad & {body}" for label, body in self.latex_rows()]
        return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"

    def text_rows(self) -> list[tuple[str, str]]:
        """(label, text) pairs for plain-text reports."""
        x = self.variable
        return [
            *([("reduction", self.reduction)] if self.reduction else []),
            ("noise", f"p({x}) = {self.density} ({self.noise}); sensitivity "
                      f"{self.sensitivity}"
                      + ("" if self.sensitivity_value is None
                         else f" = {self.sensitivity_value}") + f"; {self.relation}"),
            ("privacy loss", f"L({x}) = {self.loss}"),
            ("monotonicity", self.monotone),
            ("threshold", f"x_eps = {self.threshold} for {self.threshold_range[0]} < eps < "
                          f"{self.threshold_range[1]}" if not self.threshold_note
             else self.threshold_note),
            ("directions", self.directions),
            ("derived profile", f"delta(eps) = {self.profile}".replace("varepsilon", "eps")),
            ("noise verdict", self.verdict),
            *([("noise check", self.check)] if self.check else []),
        ]

    def __str__(self) -> str:
        return aligned_rows(self.text_rows())


def _sensitivity(value: Any) -> tuple[sympy.Expr, dict]:
    """(symbol or expression to use, bound values) for the sensitivity."""
    if value is None:
        return SENSITIVITY, {}
    if isinstance(value, sympy.Basic) and not value.is_number:
        if value.is_positive is not True:
            if value.is_nonpositive:
                raise DomainError(f"the sensitivity must be > 0, got {value}")
            raise DomainError(f"the sensitivity {value} is not declared positive: declare "
                              "its symbols positive=True")
        return value, {}
    try:
        v = sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError) as exc:
        raise DomainError(f"the sensitivity must be a number or a SymPy expression, got "
                          f"{value!r}") from exc
    if not (v.is_real and v.is_finite) or isinstance(value, bool):
        raise DomainError(f"the sensitivity must be a finite real number, got {value!r}")
    if not v.is_positive:
        raise DomainError(f"the sensitivity must be > 0, got {value!r}")
    return SENSITIVITY, {SENSITIVITY: v}


def _one_direction(density: Density, loss: Loss) -> sympy.Expr:
    """delta(eps) for P = L(Z) against Q = L(Z + Delta) (runs in a bounded child)."""
    x, shift = density.x, loss.sensitivity
    branches: list[tuple[sympy.Expr, Any]] = []
    if loss.sup != sympy.oo:
        branches.append((sympy.S.Zero, sympy.Ge(_EPS, loss.sup)))
    for k, th in enumerate(loss.thresholds):
        piece = loss.pieces[th.piece]
        i = density.piece_index(piece.lo, piece.hi)
        j = density.piece_index(piece.lo - shift, piece.hi - shift)
        d = (density.cdf[i].xreplace({x: th.x_eps})
             - sympy.exp(_EPS) * density.cdf[j].xreplace({x: th.x_eps - shift}))
        d = _tail_form(_simplified(d))
        last = k == len(loss.thresholds) - 1
        cond = sympy.true if last or th.eps_low == -sympy.oo else sympy.Ge(_EPS, th.eps_low)
        branches.append((d, cond))
        if cond is sympy.true:
            break
    if len(branches) == 1:
        return branches[0][0]
    return sympy.Piecewise(*branches)


def _simplified(e: sympy.Expr) -> sympy.Expr:
    """:func:`_exp_rational` when it shortens ``e`` (a rational function of exponentials,
    factored: SymPy's simplify spends its whole budget on these, e.g. the logistic
    profile), else the shorter of ``simplify(e)`` and ``e``, within a few seconds each
    (nested bounded calls; simplification is cosmetic, and the result is checked against
    the definition by :mod:`symgdp.noise.check`)."""
    out = [e]
    try:
        out.append(run_bounded(_exp_rational, e, timeout=4))
    except Exception:  # noqa: BLE001 - simplification is cosmetic
        pass
    if sympy.count_ops(out[-1]) < sympy.count_ops(e):
        return out[-1]
    try:
        out.append(run_bounded(sympy.simplify, e, timeout=4))
    except Exception:  # noqa: BLE001 - simplification is cosmetic
        pass
    return min(out, key=sympy.count_ops)


def _exp_rational(e: sympy.Expr) -> sympy.Expr:
    r"""``e`` as a rational function of exponentials, factored: every ``exp(sum q_i m_i)``
    (``q_i`` rational) is written with generators :math:`t_m = e^{m/L}`, the rational
    function in the :math:`t_m` is cancelled and factored, and the generators put back
    (the logistic profile becomes :math:`(e^{\Delta/2b} - e^{\varepsilon/2})^2 /
    (e^{\Delta/b} - 1)`)."""
    e = sympy.expand_power_exp(e.replace(sympy.exp, lambda a: sympy.exp(sympy.expand(a))))
    terms: dict[sympy.Expr, list] = {}
    for f in e.atoms(sympy.exp):
        for t in sympy.Add.make_args(f.args[0]):
            q, m = t.as_coeff_Mul()
            if not q.is_Rational:
                return e
            terms.setdefault(m, []).append(q)
    gens, back, reps = {}, {}, {}
    for m, qs in terms.items():
        lcm = sympy.ilcm(*[q.q for q in qs]) if qs else 1
        t = sympy.Dummy("t", positive=True)
        gens[m] = (t, lcm)
        back[t] = sympy.exp(m / lcm)
    for f in e.atoms(sympy.exp):
        value = sympy.S.One
        for term in sympy.Add.make_args(f.args[0]):
            q, m = term.as_coeff_Mul()
            t, lcm = gens[m]
            value *= t ** (q * lcm)
        reps[f] = value
    r = sympy.factor(sympy.cancel(e.xreplace(reps)))
    return r.xreplace(back)


def _tail_form(e: sympy.Expr) -> sympy.Expr:
    r"""Each ``erfc(a)`` with :math:`a \to -\infty` as :math:`\varepsilon \to \infty`
    written ``2 - erfc(-a)``: the profile then reads as a difference of small upper tails
    (as :func:`symgdp.mechanisms.gaussian` writes it), which float64 evaluates without
    cancelling and the tail rules recognise."""
    reps = {}
    for f in e.atoms(sympy.erfc):
        (a,) = f.args
        if a.has(_EPS) and sympy.limit(a, _EPS, sympy.oo) == -sympy.oo:
            reps[f] = 2 - sympy.erfc(sympy.simplify(-a))
    return e.xreplace(reps) if reps else e


def _generalized_gaussian(noise: Any, variable: Any, shift: sympy.Expr, values: dict,
                          timeout: float | None = None) -> Profile | None:
    r"""The profile of :math:`c\,e^{-a|x|^k}` (:math:`k \ge 1` not 1 or 2, or a symbolic
    shape or scale), whose threshold and CDF SymPy does not find
    (:mod:`symgdp.noise.gengauss`): the certified numeric source when every parameter is a
    number, else the parametric family, bound later by ``.replace(values=...)``; its
    derivation as formulas in the parameters.  ``None`` for other noise."""
    from sympy.stats.rv import RandomSymbol

    if isinstance(noise, RandomSymbol):
        return None
    try:
        expr, x, _ = _from_expression(noise, variable)
    except SymgdpError:
        return None  # read_density reports it
    t0 = time.perf_counter()
    try:  # its simplify calls under the budget, as every symbolic step
        shape = run_bounded(match_generalized_gaussian, expr, x, timeout=timeout)
    except AnalysisTimeout:
        return None  # not recognised in time: the symbolic route reads it, and says so
    if shape is None:
        return None
    k, sigma = shape
    d = shift.xreplace(values)
    times = {"density": time.perf_counter() - t0}
    t0 = time.perf_counter()
    family = GeneralizedGaussianFamily(k, sigma, d)
    parts = derivation_parts(k, sigma, shift, x)
    # the independent check: at the numbers, or at sample values on both sides of k = 2
    samples = family.samples()
    at = "" if not family.parameters else " (at sample values: the other parameters 1" \
        + (", the shape 3/2 and 3)" if k.free_symbols else ")")
    check = ("the certified profile agrees with a 30-digit quadrature of max(0, p(x) - "
             "e^eps p(x - Delta)) (threshold by bisection of the loss in mpmath) at "
             + "; ".join(quadrature_check(src) for src in samples) + at)
    times["check"] = time.perf_counter() - t0
    name = f"generalized Gaussian noise (k = {k})"
    derivation = Derivation(
        noise="generalized Gaussian", density=expr, variable=x, sensitivity=shift,
        sensitivity_value=values.get(shift), check=check, timings=times, **parts)
    meta = {"derivation": derivation, "sensitivity": d, "shape": k, "scale": sigma}
    if not family.parameters:
        return Profile.from_source(family.bind({}), name=name, **meta)
    fn = sympy.Function("delta_generalized_Gaussian")
    return Profile(fn(_EPS, *family.parameters), name=name, source=family,
                   reference="derived from the noise density (symgdp.noise)", **meta)


def _student_t(noise: Any, variable: Any, shift: sympy.Expr,
               timeout: float | None = None) -> Profile | None:
    r"""The exact profile of Student-t (and Cauchy) noise :math:`c\,(A + Bx^2)^{-k}`,
    whose loss is not monotone but whose level sets are intervals in closed form
    (:func:`symgdp.noise.student.student_t_noise`); ``None`` for other noise, and for a
    density of that form whose mass is not proved 1 (:func:`read_density` then refuses it,
    naming the mass)."""
    from sympy.stats.rv import RandomSymbol

    try:
        if isinstance(noise, RandomSymbol):
            expr, x, _ = _from_random_variable(noise, variable)
        else:
            expr, x, _ = _from_expression(noise, variable)
    except SymgdpError:
        return None  # read_density reports it
    try:  # SymPy's simplify of the mass, under the budget as every symbolic step
        shape = run_bounded(match_student_t, expr, x, timeout=timeout)
    except AnalysisTimeout:
        return None  # not recognised in time: the symbolic route reads it, and says so
    if shape is None:
        return None
    nu, scale, mass = shape
    if mass != 1:
        return None
    try:
        return student_t_noise(nu, scale=scale, sensitivity=shift, timeout=timeout)
    except DomainError as exc:  # nu not derived (not an integer, or too large): named
        raise ProfileError(f"{expr} is Student-t noise: {exc}") from exc


def _refuse_steps(noise: Any, variable: Any) -> None:
    r"""Refuse at once a density written with ``floor``, ``ceiling`` or ``frac`` (constant
    on infinitely many pieces: not read here, and SymPy's checks of it only run out of
    time), naming the staircase route (:mod:`symgdp.noise.staircase`)."""
    from sympy.stats.rv import RandomSymbol

    if isinstance(noise, RandomSymbol):
        return
    try:
        expr, _, _ = _from_expression(noise, variable)
    except SymgdpError:
        return  # read_density reports it
    if expr.has(sympy.floor, sympy.ceiling, sympy.frac):
        raise ProfileError(
            f"the density {expr} is written with floor/ceiling (a step function on "
            "infinitely many pieces), which this derivation does not read; for the staircase "
            "mechanism of Geng & Viswanath use symgdp.noise.staircase.staircase(eps0, gamma, "
            "sensitivity), its exact profile")


def _verdict(loss_sup: sympy.Expr, limit: sympy.Expr | None) -> str:
    if loss_sup != sympy.oo:
        return (f"pure DP: L <= {loss_sup}, so delta(eps) = 0 for eps >= {loss_sup} "
                f"(eps0-DP with eps0 = {loss_sup}); a pure-DP mechanism is mu-GDP for a "
                "finite mu")
    if limit is None:
        return "unknown: the tail analysis did not finish"
    if limit == sympy.oo:
        return "not GDP: the tail limit is infinite, so no mu-GDP guarantee follows"
    return (f"GDP for every value of the parameters: the tail limit {limit} is finite "
            f"(theory §5), so mu >= sqrt({limit}); measure() brackets mu")


def additive_noise(noise: Any, sensitivity: Any = None, variable: Any = None, *,
                   support: str = "reals", norm: str = "l2",
                   timeout: float | None = None) -> Profile:
    r"""The privacy profile of the mechanism :math:`f(D) + Z`, derived from the noise.

    Args:
        noise: the density of :math:`Z` as a SymPy expression in ``variable`` (or a
            string, parsed safely), or a continuous ``sympy.stats`` random variable;
            parameters may stay symbolic (declared real, scales ``positive=True``).  A
            generalized Gaussian :math:`c\,e^{-a|x|^k}` (a number :math:`k \ge 1` other
            than 1 and 2, or a symbolic shape or scale) is derived by
            :mod:`symgdp.noise.gengauss`: formulas in the parameters (the threshold
            implicit, the tail limit by cases in :math:`k`), certified numerically once
            ``.replace(values=...)`` binds them.
        sensitivity: :math:`\Delta > 0`, a number (substituted into the profile; the
            derivation keeps the symbol :math:`\Delta`) or a positive SymPy expression;
            default the free symbol
            :math:`\Delta` (:data:`symgdp.mechanisms.SENSITIVITY`).
        variable: the density's variable (default: its only symbol, or ``x``), or a
            list of :math:`d \ge 2` variables for vector noise: a Gaussian density on
            :math:`\mathbb{R}^d` (any positive definite covariance) is reduced exactly to
            the 1-D shift (:mod:`symgdp.noise.vector`); other multivariate densities are
            refused by name.
        support: ``"reals"`` (a density) or ``"integers"``: ``noise`` is then a PMF on
            the integers and ``sensitivity`` a positive integer (default 1); see
            :func:`symgdp.noise.discrete.discrete_noise` (a closed form where the sums
            have one, else a certified numeric profile).
        norm: the norm of the sensitivity ball for vector noise: ``"l2"`` (default),
            ``"l1"`` or ``"linf"`` (on the line all three are the same).
        timeout: budget in seconds of each bounded SymPy step.

    Returns:
        A :class:`~symgdp.profile.Profile` whose parameters are bound later with
        ``.replace(values=...)``, as for every profile; ``meta["derivation"]`` is the
        :class:`Derivation` (printed by :func:`symgdp.report`).

    Raises:
        DomainError: a sensitivity that is not positive, or a density that is not one
            (not in the variable, negative somewhere, mass other than 1: named).
        ProfileError: noise this derivation does not cover (not log-concave: the reason
            named; discrete or multivariate; support not the whole line).
        AnalysisTimeout: a symbolic step ran out of its budget (nothing is guessed).

    Example:
        >>> import sympy
        >>> from sympy.stats import Normal
        >>> from symgdp import mechanisms
        >>> s = sympy.Symbol("sigma", positive=True)
        >>> p = additive_noise(Normal("Z", 0, s), sensitivity=2)
        >>> p.meta["derivation"].threshold
        Delta/2 - sigma**2*varepsilon/Delta
        >>> q = p.replace(values={"sigma": 4})
        >>> abs(q(0.5) - mechanisms.gaussian(0.5)(0.5)) < 1e-15   # mu = Delta/sigma
        True
    """
    if support == "integers":
        return discrete_noise(noise, 1 if sensitivity is None else sensitivity, variable,
                              timeout=timeout)
    if support != "reals":
        raise DomainError(f"support must be 'reals' or 'integers', got {support!r}")
    times: dict[str, float] = {}
    shift, values = _sensitivity(sensitivity)
    reduced = None
    if isinstance(variable, (list, tuple)):
        t0 = time.perf_counter()
        reduced = reduce_vector_gaussian(noise, variable, norm, timeout=timeout)
        times["reduction"] = time.perf_counter() - t0
        # the mechanism is exactly the standard normal shifted by Delta * factor
        variable = sympy.Symbol("x", real=True)
        noise = sympy.exp(-variable**2 / 2) / sympy.sqrt(2 * sympy.pi)
        shift = shift * reduced.factor
    elif norm not in NORMS:
        raise DomainError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    shaped = None if reduced is not None else \
        _generalized_gaussian(noise, variable, shift, values, timeout)
    if shaped is not None:
        return shaped
    student = None if reduced is not None else \
        _student_t(noise, variable, shift.xreplace(values), timeout)
    if student is not None:
        return student
    _refuse_steps(noise, variable)
    t0 = time.perf_counter()
    density = read_density(noise, variable, timeout=timeout)
    if shift.has(density.x):
        raise DomainError(f"the sensitivity {shift} depends on the variable {density.x}")
    times["density"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    loss = privacy_loss(density, shift, timeout=timeout)
    times["loss"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    expr = run_bounded(_one_direction, density, loss, timeout=timeout)
    if density.symmetric:
        directions = ("p(-x) = p(x) (proved), so the reversed pair (Q against P) gives the "
                      "same profile (substitute x -> Delta - x)")
        sup = loss.sup
    else:
        mirror = density.reflected()
        other_loss = privacy_loss(mirror, shift, timeout=timeout)
        other = run_bounded(_one_direction, mirror, other_loss, timeout=timeout)
        expr = sympy.Max(expr, other)
        sup = sympy.Max(loss.sup, other_loss.sup)
        directions = ("p is not proved symmetric: the profile is the larger of both "
                      "directions (P against Q, and Q against P as the noise -Z)")
    times["profile"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    limit: sympy.Expr | None
    if sup != sympy.oo:
        limit = sympy.S.Zero  # the profile vanishes beyond sup L
    else:
        try:
            limit = Profile(expr, values).tail_limit(timeout=timeout)
        except SymgdpError:  # no rule decided it in time: the verdict says "unknown"
            limit = None
    times["tail"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        check = run_bounded(crosscheck, density, expr, shift, values,
                            timeout=3 * resolve_timeout(timeout))
    except AnalysisTimeout as exc:
        check = f"the numeric cross-check did not finish ({exc})"
    times["check"] = time.perf_counter() - t0
    main = loss.thresholds[0]
    derivation = Derivation(
        noise=density.name, density=density.expr, variable=density.x, sensitivity=shift,
        sensitivity_value=values.get(shift), loss=loss.expr(), monotone=loss.monotone,
        threshold=main.x_eps,
        threshold_range=(main.eps_low, main.eps_high), directions=directions,
        profile=expr, loss_bound=sup, tail_limit=limit, verdict=_verdict(sup, limit),
        check=check, timings=times)
    name = f"{density.name} noise"
    if reduced is not None:
        name = f"{len(reduced.variables)}-dimensional Gaussian noise ({norm} ball)"
        derivation = replace(derivation, noise=name, reduction=reduced.text,
                             relation=reduced.relation)
    # A numeric sensitivity is substituted into the profile (the derivation keeps the
    # symbol): the profile then has no Delta left to re-bind by mistake.
    meta: dict[str, Any] = {"derivation": derivation,
                            "sensitivity": shift.xreplace(values)}
    if sup != sympy.oo:
        meta["eps0"] = sup.xreplace(values)
    return Profile(expr.xreplace(values), name=name,
                   reference="derived from the noise density (symgdp.noise)", **meta)
