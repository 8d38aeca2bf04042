r"""One expression, many parameter values: the symbolic work shared by validation and refinement.

A sweep or a calibration validates (:mod:`symgdp.refinement.validate`) and refines
(:mod:`symgdp.refinement.refine`) one expression at many parameter values.  The symbolic work on it
(Piecewise form, derivative, exact cancellation of the log slope, the compiled mpmath and
ball functions) is done here once per expression, with its parameters as symbols (a
"family"), and every value then costs numeric work only.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mpmath
import sympy

from symgdp.errors import AnalysisTimeout
from symgdp.symbolic.budget import resolve_timeout, run_bounded
from symgdp.symbolic.implicit import LogDeltaRoot

if TYPE_CHECKING:
    from symgdp.profile import Profile

# Budget (seconds) for rewriting Max/Min as Piecewise before the derivative is taken.
_REWRITE_SECONDS = 2.0
# Working precision (bits) of the ball functions: the no-crossing proof of
# symgdp.refinement.refine and the certificates of _Family.cannot_reject.
_PROOF_PREC = 128


def _rewrite_piecewise(expr: sympy.Expr) -> sympy.Expr:
    return sympy.piecewise_fold(expr.rewrite(sympy.Piecewise))


# -- one expression, many parameter values --------------------------------------------------
# A sweep or a calibration validates and refines the same expression at many parameter
# values.  The symbolic work (Piecewise form, derivative, exact cancellation of the log
# slope, the compiled mpmath and ball functions) is done once per expression with its
# parameters as symbols (a "family") and every value then costs numeric work only.  A
# family is used only for values that are plain numbers (Integer, Rational, Float)
# satisfying every assumption of their symbol, so that a symbolic step that relied on
# an assumption (SymPy may drop a branch of a Piecewise for a positive parameter) holds
# at the value too; other profiles take the per-value path.  Parameters enter the
# compiled functions exactly (a Float as the double it stores), as in the certified
# evaluation (symgdp.evaluation.interval.profile_arb).
_FAMILY_CACHE = 32
# False: every value takes the per-value path (the reference the tests compare with)
_USE_FAMILIES = True
_NOT_FAMILY = (LogDeltaRoot, sympy.Sum, sympy.Product, sympy.Integral, sympy.Derivative)
# Points at which validation looks for the numeric certificates of _Family.cannot_reject.
_CERT_POINTS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0)
# A value certified below 1 must be below 1 - _CERT_MARGIN: the per-value SymPy call sees
# the bound expression, whose Float constants SymPy may have rounded (1e-16 relative).
_CERT_MARGIN = 1e-9


@dataclass(frozen=True)
class _Point:
    """A family's parameter values, ready for its compiled functions."""

    mp: tuple  # for the mpmath functions (int, or mpf holding the exact value)
    arb: tuple  # for the ball functions


class _Family:
    """The symbolic work on ``expr`` (parameters ``params`` symbolic), done once.

    Each step is computed on first use and kept, except an answer that depends on the
    time budget (a rewrite or cancellation that ran out of time): that one is recomputed
    on the next use, and the caller takes the per-value path meanwhile.
    """

    def __init__(self, expr: sympy.Expr, var: sympy.Symbol,
                 params: tuple[sympy.Symbol, ...]) -> None:
        self.expr, self.var, self.params = expr, var, params
        self._memo: dict[str, Any] = {}

    def naive(self, timeout: float | None) -> tuple | None:
        """``(pw, dd, delta, ddelta)``: the Piecewise form, its derivative (or ``None``) and
        their compiled mpmath functions of ``(eps, *params)``; ``None`` when the family
        cannot serve (the rewrite ran out of time: this once; no mpmath function)."""
        if "naive" not in self._memo:
            built = self._build_naive(timeout)
            if built is None:
                return None  # out of time: the per-value path, this once
            self._memo["naive"] = built  # one assignment: threads see all or nothing
        return self._memo["naive"] or None

    def _build_naive(self, timeout: float | None) -> tuple | None:
        expr, var, args = self.expr, self.var, (self.var, *self.params)
        if expr.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
            try:
                pw = run_bounded(_rewrite_piecewise, expr,
                                 timeout=min(resolve_timeout(timeout), _REWRITE_SECONDS))
            except AnalysisTimeout:
                return None
            except Exception:  # noqa: BLE001 - as _piecewise_form: keep the expression
                pw = expr
        else:
            pw = sympy.piecewise_fold(expr) if expr.has(sympy.Piecewise) else expr
        try:
            delta = sympy.lambdify(args, pw, modules="mpmath")
        except Exception:  # noqa: BLE001 - the per-value path then
            return ()
        dd = ddelta = None
        if not pw.has(sympy.Max, sympy.Min, sympy.Abs, sympy.Heaviside):
            try:
                d = sympy.diff(pw, var)
                if not d.has(sympy.Derivative, sympy.Subs, sympy.DiracDelta):
                    ddelta, dd = sympy.lambdify(args, d, modules="mpmath"), d
            except Exception:  # noqa: BLE001 - no usable derivative: search on R alone
                dd = ddelta = None
        return (pw, dd, delta, ddelta)

    def proof_functions(self, timeout: float | None) -> tuple | None:
        """``_proof_functions`` of the family (after :meth:`naive`)."""
        if "proof" in self._memo:
            return self._memo["proof"]
        pw, dd = self._memo["naive"][:2]
        fns, final = _proof_functions(pw, dd, self.var, self.params, timeout)
        if final:
            self._memo["proof"] = fns
        return fns

    def closed_form_roots(self, values: Any, timeout: float | None) -> tuple | None:
        """``(roots,)``: candidates for the roots of the stationarity bracket in closed
        form at these values (``roots`` ``None`` when SymPy finds none), solved once with
        the parameters symbolic; ``None`` when that solve ran out of time or the
        expression is not one :func:`refine` solves (Floats, Piecewise, Max/Min).  A
        substituted root is used only where it matches the located maximum numerically,
        and the flat piece is built from the profile's own value there, so a root that is
        not one at these values costs tightness at worst, never validity."""
        if self.expr.has(sympy.Piecewise, LogDeltaRoot, sympy.Max, sympy.Min) or \
                self.expr.atoms(sympy.Float):
            return None
        if "roots" not in self._memo:
            e, var = self.expr, self.var
            dp = sympy.diff(e, var)
            self._memo.pop("roots_timed_out", None)
            try:
                self._memo["roots"] = run_bounded(
                    _root_candidates, dp + sympy.exp(var) * (1 - e + dp), var,
                    timeout=timeout)
            except AnalysisTimeout:
                self._memo["roots_timed_out"] = True  # not kept: retried on the next use
                return None
            except Exception:  # noqa: BLE001 - no closed form
                self._memo["roots"] = None
        roots = self._memo["roots"]
        if roots is None:
            return (None,)
        vals = {s: values[s] for s in self.params}
        return ([r.xreplace(vals) for r in roots],)

    def solve_timed_out(self, expr: sympy.Expr) -> bool:
        """Whether :meth:`closed_form_roots` ran out of time on the bracket of ``expr``
        itself (a family without parameters whose expression is ``expr``): a second
        solve of that very bracket in the same budget would only spend it again."""
        return bool(self._memo.get("roots_timed_out")) and not self.params \
            and self.expr == expr

    def verdict_functions(self) -> tuple | None:
        """Ball functions of the expression and of its derivative, or ``None``."""
        if "verdict" not in self._memo:
            from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb

            try:
                d = sympy.diff(self.expr, self.var)
                fns = (lambdify_arb(self.expr, self.var, self.params),
                       lambdify_arb(d, self.var, self.params))
            except (ArbUnsupported, TypeError, ValueError, NotImplementedError):
                fns = None
            self._memo["verdict"] = fns
        return self._memo["verdict"]

    def cannot_reject(self, point: _Point) -> bool:
        r"""Whether the symbolic verdict of :func:`~symgdp.refinement.validate.check_profile` is
        proved empty
        at these values by ball arithmetic: SymPy calls the profile complex, negative, at least 1 or
        increasing only when that holds at every :math:`\varepsilon > 0`, so one point with a real
        value, one with a value :math:`\ge 0`, one with a value :math:`< 1` and one with a
        derivative :math:`\le 0` rule each verdict out (the per-value SymPy call is then
        skipped)."""
        fns = self.verdict_functions()
        if fns is None:
            return False
        from flint import ctx

        f, df = fns
        need = {"real", "nonneg", "below1", "notinc"}
        with ctx.workprec(_PROOF_PREC):
            for e in _CERT_POINTS:
                try:
                    v = f(e, *point.arb)
                    if v.is_finite():
                        need.discard("real")
                        if bool(v >= 0):
                            need.discard("nonneg")
                        if bool(v < 1 - _CERT_MARGIN):
                            need.discard("below1")
                    if "notinc" in need:
                        dv = df(e, *point.arb)
                        if dv.is_finite() and bool(dv <= 0):
                            need.discard("notinc")
                except (ArithmeticError, TypeError, ValueError):
                    continue
                if not need:
                    return True
        return False


@functools.lru_cache(maxsize=_FAMILY_CACHE)
def _family(expr: sympy.Expr, var: sympy.Symbol, params: tuple[sympy.Symbol, ...]) -> _Family:
    return _Family(expr, var, params)


def _mp_value(v: sympy.Rational | sympy.Float) -> Any:
    """A parameter value for the mpmath functions, exact (a Rational to 512 bits)."""
    if isinstance(v, sympy.Integer):
        return int(v)
    if isinstance(v, sympy.Float):
        with mpmath.workprec(max(53, v._prec)):
            return mpmath.mpf(v)
    with mpmath.workprec(512):
        return mpmath.mpf(int(v.p)) / int(v.q)


def _family_point(profile: Profile) -> tuple[_Family, _Point] | None:
    """The profile's family and its values, or ``None`` (the per-value path)."""
    if not _USE_FAMILIES:
        return None
    cache = profile._cache
    if "family" not in cache:
        cache["family"] = _find_family(profile)
    return cache["family"]


def _find_family(profile: Profile) -> tuple[_Family, _Point] | None:
    expr, var = profile.expr, profile.var
    if (not isinstance(expr, sympy.Expr) or expr.has(*_NOT_FAMILY)
            or profile.unbound_symbols):
        return None
    free = expr.free_symbols
    params = tuple(sorted((s for s in profile.values if s in free),
                          key=lambda s: (s.name, sorted(s.assumptions0.items()))))
    values = [profile.values[s] for s in params]
    for s, v in zip(params, values, strict=True):
        if not isinstance(v, (sympy.Rational, sympy.Float)) or not v.is_finite:
            return None
        if any(getattr(v, f"is_{fact}") is not truth
               for fact, truth in s.assumptions0.items()):
            return None  # the value breaks an assumption the symbolic work may use
    from symgdp.evaluation.interval import to_arb

    point = _Point(tuple(_mp_value(v) for v in values), tuple(to_arb(v) for v in values))
    return _family(expr, var, params), point


SOLVESET_DEGREE = 256


def beyond_solveset(bracket: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether ``bracket`` is, in :math:`u = e^{var/D}`, a polynomial of degree above
    :data:`SOLVESET_DEGREE`: the exponents' rational slopes in ``var``, over their common
    denominator D, reach it (``exp((eps - 1/400) 10^5)`` beside ``exp(-eps)``: degree
    1e5).  SymPy's solveset then runs until its budget ends and finds no closed form; the
    roots are found numerically at once instead (the same answer as after the timeout).

    >>> from symgdp.symbolic.symbols import eps
    >>> beyond_solveset(sympy.exp(-eps) + sympy.exp((eps - 1) * 10**5), eps)
    True
    >>> beyond_solveset(sympy.exp(-eps) + sympy.exp(-eps / 2) - 1, eps)
    False
    """
    slopes = []
    for f in bracket.atoms(sympy.exp):
        a = sympy.diff(f.args[0], var)
        if a.free_symbols or not a.is_Rational:
            return False  # symbolic or Float slopes: left to SymPy (and its budget)
        slopes.append(a)
    if not slopes:
        return False
    den = sympy.ilcm(*(sympy.Rational(a).q for a in slopes)) if len(slopes) > 1 \
        else sympy.Rational(slopes[0]).q
    return max(abs(a) * den for a in slopes) > SOLVESET_DEGREE


def _root_candidates(bracket: sympy.Expr, var: sympy.Symbol) -> list | None:
    """Closed-form candidates for the roots of ``bracket`` on [0, oo) with parameters
    symbolic: every element of a finite set inside SymPy's answer (which, with symbols,
    is a union of finite sets intersected with conditions), or ``None`` (also at once for
    a bracket :func:`beyond_solveset`)."""
    if beyond_solveset(bracket, var):
        return None
    sol = sympy.solveset(bracket, var, sympy.Interval(0, sympy.oo))

    def finite(s: sympy.Basic) -> list:
        if isinstance(s, sympy.FiniteSet):
            return [r for r in s if r.is_real is not False]
        if isinstance(s, (sympy.Union, sympy.Intersection)):
            return [r for a in s.args for r in finite(a)]
        if isinstance(s, sympy.Complement):
            return finite(s.args[0])
        return []

    if sol is sympy.S.EmptySet:
        return []
    found = finite(sol)
    return found or None

def _rational_in_exp(t: sympy.Expr, var: sympy.Symbol) -> bool:
    """Whether ``t`` is a rational function of exponentials of linear functions of var."""
    fs = t.atoms(sympy.Function)
    return all(f.func is sympy.exp and sympy.diff(f.args[0], var, 2) == 0 for f in fs)


def _cancelled(ts: list[sympy.Expr]) -> list[sympy.Expr]:
    # Floats are exact binary numbers: as Rationals the cancellation is exact
    return [sympy.cancel(t.xreplace({f: sympy.Rational(f) for f in t.atoms(sympy.Float)}))
            for t in ts]


def _log_slope(pw: sympy.Expr, dd: sympy.Expr, var: sympy.Symbol, timeout: float | None
               ) -> tuple[list[tuple] | None, bool]:
    r"""``(delta, T, condition)`` per branch of the naive profile, with
    :math:`T = \tilde\delta'/(1 - \tilde\delta) + 1/(1 + e^{-\varepsilon})`; branches that
    are rational in exponentials are cancelled exactly, in one time-bounded call (pure DP's
    :math:`T \equiv 0`, which no ball enclosure could show).  The flag says whether the
    answer is final (``False`` when the cancellation ran out of time: a larger budget may
    cancel)."""
    pairs = [(pw, dd, sympy.true)]
    if isinstance(pw, sympy.Piecewise):
        if not (isinstance(dd, sympy.Piecewise) and len(dd.args) == len(pw.args)
                and all(c == c2 for (_e, c), (_d, c2) in zip(pw.args, dd.args, strict=True))):
            return None, True
        pairs = [(e, d, c) for (e, c), (d, _c) in zip(pw.args, dd.args, strict=True)]
    ts = [d / (1 - e) + 1 / (1 + sympy.exp(-var)) for e, d, _c in pairs]
    todo = [i for i, t in enumerate(ts) if _rational_in_exp(t, var)]
    final = True
    if todo:
        try:
            done = run_bounded(_cancelled, [ts[i] for i in todo],
                               timeout=min(resolve_timeout(timeout), _REWRITE_SECONDS))
        except (AnalysisTimeout, Exception) as exc:  # noqa: BLE001 - keep them as they are
            final = not isinstance(exc, AnalysisTimeout)
            done = [ts[i] for i in todo]
        for i, t in zip(todo, done, strict=True):
            ts[i] = t
    return [(e, t, c) for (e, _d, c), t in zip(pairs, ts, strict=True)], final


def _proof_functions(pw: sympy.Expr, dd: sympy.Expr, var: sympy.Symbol,
                     params: tuple[sympy.Symbol, ...], timeout: float | None
                     ) -> tuple[tuple | None, bool]:
    """The ball functions of the no-crossing proof, ``(Ds, Ts, C)`` (per branch: delta,
    the log-slope ``T``; the branch conditions as 0/1), each taking ``(eps, *params)``,
    or ``None``; and whether that answer is final (see :func:`_log_slope`)."""
    from symgdp.evaluation.interval import ArbUnsupported, lambdify_arb

    branches, final = _log_slope(pw, dd, var, timeout)
    if branches is None:
        return None, final
    try:
        # branch by branch: the hull of two balls has a lower end good to ~1e-9 only
        Ds = [lambdify_arb(e, var, params) for e, _t, _c in branches]
        Ts = [lambdify_arb(t, var, params) for _e, t, _c in branches]
        C = lambdify_arb(sympy.Tuple(*[sympy.Piecewise((1, c), (0, True))
                                       for _e, _t, c in branches]), var, params)
    except (ArbUnsupported, TypeError, ValueError):
        return None, final
    return (Ds, Ts, C), final
