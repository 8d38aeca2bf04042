r"""A report of every step from a privacy guarantee to a Gaussian-DP statement.

:func:`report` runs the pipeline of the theory page (``docs/theory.md``) on one profile or
trade-off equation and keeps each derived step: the input, the naive profile
:math:`\tilde\delta(\varepsilon)` (theory §1), the refinement point :math:`c` and the
refined profile (§2), the tail limit
:math:`L = \lim_{\varepsilon\to\infty} \varepsilon^2 / (-2\log\delta(\varepsilon))` and the
verdict it implies (§5), and the guaranteed bracket of
:math:`\sup_{[0, \varepsilon_h]} G` with the failure probability beyond
:math:`\varepsilon_h` (§6), with the method and the time each step took.

The :class:`Report` prints itself as a LaTeX ``align*`` block to paste into a paper, as
Markdown, as plain text and as a JSON-ready dict.  What the numbers do *not* say comes
first in every rendering (:attr:`Report.cautions`): a head bound that is not the
mechanism's :math:`\mu` (the tail limit is larger or infinite, or the maximum sits at
:math:`\varepsilon_h`) and the caveats the mechanism carries (its validity range).
Printed bounds are rounded outwards (a lower bound down, an upper bound and a failure
probability up), so a printed statement is as valid as the computed one.  A step that did
not finish is reported as "unknown"; the report never guesses a verdict.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import sympy

from symgdp.contracts import MeasureMethod
from symgdp.errors import (
    AnalysisTimeout,
    ConvergenceError,
    ParseError,
    ProfileError,
    UnboundParameterError,
)
from symgdp.numerics.decimals import (
    format_bracket,
    format_log_upper,
    format_lower,
    format_upper,
    head_caveat,
    json_number,
    latex_names,
    latex_text,
    probability_upper,
)
from symgdp.present.progress import as_callback, stage
from symgdp.profile import Profile
from symgdp.symbolic.symbols import delta as _DELTA
from symgdp.symbolic.symbols import eps as _EPS

__all__ = ["Report", "report", "format_lower", "format_upper", "format_bracket",
           "format_log_upper"]

_FLOAT_DIGITS = 10  # significant digits of floating-point constants inside displayed formulas

def _round_floats(expr: Any) -> Any:
    """Floats shown with a readable number of digits (display only)."""
    if not isinstance(expr, sympy.Basic):
        return expr
    floats = expr.atoms(sympy.Float)
    return expr.xreplace({f: sympy.Float(f, _FLOAT_DIGITS) for f in floats}) if floats else expr


def _text(expr: Any, var: sympy.Symbol = _EPS, *, full: bool = False) -> str:
    """SymPy expression as a string with ``eps`` for epsilon (as the CLI accepts it).

    Floats keep every digit with ``full=True`` (JSON, for machines), else 10 significant
    digits (text for people).
    """
    if expr is None:
        return "None"
    e = sympy.sympify(expr)
    e = (e if full else _round_floats(e)).xreplace({var: sympy.Symbol("eps")})
    if isinstance(e, sympy.Equality):
        return f"{sympy.sstr(e.lhs)} = {sympy.sstr(e.rhs)}"
    return sympy.sstr(e)


def _tex(expr: Any) -> str:
    e = _round_floats(sympy.sympify(expr))
    return sympy.latex(e, symbol_names=latex_names(e))


def _sci_tex(x: float) -> str:
    """A setting such as a tolerance in LaTeX: ``1e-06`` becomes ``10^{-6}``."""
    v = float(x)
    if 1e-3 <= abs(v) < 1e4 or v == 0:
        return f"{v:g}"
    mant, _, exp = f"{v:.2e}".partition("e")
    mant = mant.rstrip("0").rstrip(".")
    power = f"10^{{{int(exp)}}}"
    return power if mant == "1" else rf"{mant} \times {power}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__




# -- the report -------------------------------------------------------------------------------



def _derivation_rows(profile: Profile, kind: str) -> list[tuple[str, str]]:
    """The steps of a derived profile (``meta["derivation"]``, e.g. the loss, threshold
    and verdict of :func:`symgdp.additive_noise`), as (label, body) rows of ``kind``
    (``"latex_rows"`` or ``"text_rows"``); none for other profiles."""
    rows = getattr(profile.meta.get("derivation"), kind, None)
    return list(rows()) if callable(rows) else []


def _whole_line_why(m: Any) -> str:
    """Why a measurement's bound holds on the whole line (``covers_tail``)."""
    return getattr(m, "tail_proof", "") or "the profile is 0 beyond some eps <= eps_h"

@dataclass(frozen=True, slots=True)
class Report:
    r"""Every derived step of an analysis (see :func:`report`).

    Attributes:
        input: the input as given (text, or the SymPy expression printed).
        kind: ``"profile"`` or ``"tradeoff"``.
        equation: the trade-off equation :math:`\sigma = f(\varepsilon, \delta)`, if any.
        profile: the naive profile.
        refined: the refined profile, ``None`` when refinement was off or did not finish.
        breakpoint: the refinement point :math:`c` (``None`` when there is none).
        breakpoint_delta: :math:`\tilde\delta(c)`.
        tail_limit: :math:`\lim \varepsilon^2/(-2\log\delta(\varepsilon))`; ``None`` = unknown.
        is_gdp: verdict of the tail analysis; ``None`` = unknown.
        mu_tail: :math:`\sqrt{L}` (``inf`` when not GDP, ``None`` when unknown or symbolic).
        tail_method: ``"symbolic"`` or ``"numeric"``; when the limit is unknown,
            ``"inconclusive"`` (the analysis finished without a rule that decides it) or
            ``"timed out"`` (``None`` when it raised).
        measurement: the ``Measurement`` of the head, ``None`` when not measured.
        timings: seconds spent per step.
        notes: what did not finish or was skipped, and why, and every caveat.
        caveats: caveats attached to the mechanism (a validity range of its calibration,
            ``Profile.meta["valid_for"]``, or ``meta["caveat"]``); they lead every
            rendering, together with the caveat on the head bound (:attr:`cautions`).
    """

    input: str
    kind: str
    equation: Any
    profile: Profile
    refined: Profile | None
    breakpoint: Any
    breakpoint_delta: Any
    tail_limit: Any
    is_gdp: bool | None
    mu_tail: float | None
    tail_method: str | None
    measurement: Any
    timings: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("profile", "tradeoff"):
            raise ProfileError(f"kind must be 'profile' or 'tradeoff', got {self.kind!r}")
        object.__setattr__(self, "timings", MappingProxyType(dict(self.timings)))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "caveats", tuple(self.caveats))

    @property
    def cautions(self) -> tuple[str, ...]:
        r"""What every rendering says first: why the measured upper bound is not the
        mechanism's :math:`\mu` (see :func:`symgdp.numerics.decimals.head_caveat`), then the
        mechanism's own :attr:`caveats`."""
        m = self.measurement
        out = []
        if m is not None:
            mu_tail = self.mu_tail
            if self.is_gdp is False:
                mu_tail = math.inf
            elif mu_tail is None:
                mu_tail = getattr(m, "mu_tail", None)
            head = head_caveat(lower=m.lower, upper=m.upper, eps_h=m.eps_h,
                               argmax=getattr(m, "argmax", None), mu_tail=mu_tail,
                               covers_tail=m.covers_tail)
            if head is not None:
                out.append(head)
        return tuple(out) + self.caveats

    # -- derived verdict ----------------------------------------------------------------------
    @property
    def verdict(self) -> str:
        """``"GDP"``, ``"not GDP"`` or ``"unknown"`` -- never a guess.

        ``"GDP"`` when the tail limit is finite, or when the measurement covers the whole
        profile (it is 0 beyond some :math:`\\varepsilon \\le \\varepsilon_h`).
        """
        m = self.measurement
        if m is not None and m.covers_tail and math.isfinite(m.upper):
            return "GDP"
        if self.is_gdp is None:
            return "unknown"
        return "GDP" if self.is_gdp else "not GDP"

    @property
    def statement(self) -> str:
        """The guarantee in one sentence, with outward-rounded numbers.

        Lower bounds speak about the profile, not the mechanism: a naive profile is an
        upper bound of the mechanism's own, so "no mu below x follows from this profile".
        """
        m = self.measurement
        parts = [f"CAUTION: {c}" for c in self.cautions]
        floor = None  # the largest mu that no analysis of this profile can go below
        if m is not None:
            lo, up = format_bracket(m.lower, m.upper)
            if not math.isfinite(m.upper):
                parts.append(f"no GDP guarantee on [0, {m.eps_h:g}]: the profile reaches 1"
                             + ("" if m.refined else " (refinement usually removes that)"))
            elif m.covers_tail:
                parts.append(f"mu-GDP with mu = {up} ({_whole_line_why(m)}, so the bound "
                             "is the full guarantee)")
                floor = float(m.lower)
            else:
                parts.append(f"({m.eps_h:g}, {up})-head GDP, sup of G on [0, {m.eps_h:g}] "
                             f"in [{lo}, {up}]; beyond eps_h the failure probability is at "
                             f"most {format_log_upper(m.log_failure_prob)}")
                floor = float(m.lower)
        if self.is_gdp is None and not (m is not None and m.covers_tail):
            why = "the tail limit depends on unbound parameters" \
                if self.tail_limit is not None else "the tail analysis " + _unfinished(
                    self.tail_method)
            parts.append(f"whether it is GDP at all is unknown ({why})")
        elif self.is_gdp is False:
            parts.append("not GDP: the tail limit is infinite, so the profile crosses every "
                         "delta_mu and implies no mu-GDP guarantee")
        elif self.is_gdp:
            if self.mu_tail is not None and math.isfinite(self.mu_tail):
                floor = self.mu_tail if floor is None else max(floor, self.mu_tail)
                if not (m is not None and m.covers_tail):
                    parts.append(f"GDP: the tail limit is finite (lim G = "
                                 f"{format_lower(self.mu_tail)})")
            elif self.tail_limit is not None and self.tail_limit.free_symbols:
                parts.append(f"GDP: the tail limit {_text(self.tail_limit, self.profile.var)} "
                             "is finite, and no mu^2 below it follows from this profile")
        if floor is not None and math.isfinite(floor):
            from_head = m is not None and floor == float(m.lower)
            where = "this profile as given (refinement may do better)" \
                if from_head and not m.refined else "this profile"
            parts.append(f"no mu below {format_lower(floor)} follows from {where}")
        return "; ".join(parts)

    # -- renderings ---------------------------------------------------------------------------
    def _mu_tail_tex(self) -> str:
        r""":math:`\mu_{\text{tail}}` in LaTeX: exact when the square root of the tail limit
        is a rational number (``0``, ``1/2``), else rounded down with ``\ldots``."""
        limit = self.tail_limit
        if isinstance(limit, sympy.Basic) and limit.is_number:
            root = sympy.sqrt(limit)
            if root.is_Rational:
                return sympy.latex(root)
        assert self.mu_tail is not None  # the verdict row asks only for a known mu_tail
        return rf"{format_lower(float(self.mu_tail), 8)}\ldots"

    def _rows(self) -> list[tuple[str, str]]:
        """(label, LaTeX) pairs shared by the LaTeX and Markdown renderings."""
        var = sympy.latex(self.profile.var)
        rows: list[tuple[str, str]] = []
        if self.equation is not None:
            rows.append(("trade-off equation", _tex(self.equation)))
        if self.profile.values:
            vals = r",\ ".join(f"{_tex(k)} = {_tex(v)}"
                               for k, v in sorted(self.profile.values.items(), key=str))
            rows.append(("parameters", vals))
        rows += _derivation_rows(self.profile, "latex_rows")
        src: Any = getattr(self.profile, "source", None)
        if callable(getattr(src, "latex", None)) and src.latex():
            rows.append((f"{src.kind} statement", src.latex()))
        rows.append(("naive profile", rf"\tilde\delta({var}) = {_tex(self.profile.expr)}"))
        if self.breakpoint is not None:
            bp = _tex(self.breakpoint)
            approx = ""
            if not isinstance(self.breakpoint, sympy.Float):
                try:
                    approx = rf" \approx {float(self.breakpoint):.8g}"
                except TypeError:
                    approx = ""
            row = f"c = {bp}{approx}"
            if self.breakpoint_delta is not None:
                row += rf",\quad \tilde\delta(c) = {_tex(self.breakpoint_delta)}"
                if not isinstance(self.breakpoint_delta, sympy.Float):
                    try:
                        row += rf" \approx {float(self.breakpoint_delta):.8g}"
                    except TypeError:
                        pass
            rows.append(("refinement point", row))
        if self.refined is not None:
            rows.append(("refined profile",
                         rf"\delta({var}) = {_tex(self.refined.bound_expr)}"))
        lim = (rf"\lim_{{{var}\to\infty}} \frac{{{var}^2}}{{-2\log\delta({var})}}")
        if self.tail_limit is None:
            why = _unfinished(self.tail_method, short=True)
            rows.append(("tail limit", lim + rf" = \text{{unknown ({why})}}"))
        else:
            tail = rf"{lim} = {_tex(self.tail_limit)}"
            if self.mu_tail is not None and math.isfinite(self.mu_tail) and \
                    self.tail_limit.is_number and not self.tail_limit.is_Rational:
                tail += rf" \approx {self.mu_tail**2:.8g}"
            rows.append(("tail limit", tail))
        verdict = {"GDP": r"\text{GDP}", "not GDP": r"\text{not GDP}",
                   "unknown": r"\text{unknown}"}[self.verdict]
        if self.is_gdp and self.mu_tail is not None and math.isfinite(self.mu_tail):
            verdict += (rf",\quad \mu_{{\text{{tail}}}} = \lim G = "
                        rf"{self._mu_tail_tex()}")
        rows.append(("verdict", verdict))
        m = self.measurement
        if m is not None:
            lo, up = format_bracket(m.lower, m.upper)
            up_tex = r"\infty" if up == "inf" else up
            rows.append(("measured head",
                         rf"{lo} \le \sup_{{0 \le {var} \le {m.eps_h:g}}} G({var}) \le {up_tex}"))
            if m.covers_tail and math.isfinite(m.upper):
                why = (r"\ (\text{profile} = 0 \text{ beyond } \varepsilon_h)"
                       if not getattr(m, "tail_proof", "") else
                       r"\ (\delta \le \delta_\mu \text{ proved on the whole line})")
                rows.append(("guarantee", rf"\mu\text{{-GDP with }} \mu = {up_tex}" + why))
            else:
                rows.append(("failure probability",
                             rf"\delta_{{{up_tex}}}({m.eps_h:g}) \le "
                             rf"{format_log_upper(m.log_failure_prob, latex=True)}"))
            cert = r"\text{certified}" if m.certified else r"\text{float64}"
            rows.append(("method",
                         rf"\text{{{m.method}}},\ \text{{tol}} = {_sci_tex(m.tol)},\ "
                         rf"{m.evaluations}\ \text{{evaluations}},\ {cert}"))
        return rows

    def to_latex(self) -> str:
        r"""A paste-ready ``align*`` block (needs ``amsmath``).

        Floating-point constants in formulas are shown with 10 significant digits; the
        measured bracket is rounded outwards and the failure probability up.
        """
        rows = [("caution", rf"\text{{{latex_text(c)}}}") for c in self.cautions] + self._rows()
        lines = [rf"  \text{{{label}:}} \quad & {body}" for label, body in rows]
        return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"

    def to_markdown(self) -> str:
        """Markdown with one bullet per step (math in ``$...$``), for notebooks and issues."""
        head = [f"**symgdp report** ({self.kind}): `{self.input}`", ""]
        head += [f"> **Caution:** {c}" for c in self.cautions] + ([""] if self.cautions else [])
        body = [f"- **{label}**: ${tex}$" for label, tex in self._rows()]
        tail = ["", f"**Verdict:** {self.verdict} — {self.statement}."]
        if self.timings:
            tail.append("")
            tail.append("Timings: " + ", ".join(f"{k} {v:.3g} s"
                                                for k, v in self.timings.items()) + ".")
        if self.notes:
            tail += [""] + [f"> Note: {n}" for n in self.notes if n not in self.caveats]
        return "\n".join(head + body + tail)

    def to_text(self) -> str:
        """Plain ASCII text, as printed by ``symgdp analyze``."""
        var = self.profile.var
        rows = [("CAUTION", c) for c in self.cautions] + [("input", self.input)]
        if self.equation is not None:
            rows.append(("trade-off equation", _text(self.equation, var)))
        if self.profile.values:
            rows.append(("parameters", ", ".join(
                f"{k} = {_text(v)}" for k, v in sorted(self.profile.values.items(), key=str))))
        rows += _derivation_rows(self.profile, "text_rows")
        rows.append(("naive profile", f"delta(eps) = {_text(self.profile.expr, var)}"))
        if self.breakpoint is not None:
            bp = f"c = {_text(self.breakpoint, var)}"
            if self.breakpoint_delta is not None:
                bp += f", delta(c) = {_text(self.breakpoint_delta, var)}"
            rows.append(("refinement point", bp))
        if self.refined is not None:
            rows.append(("refined profile", f"delta(eps) = {_text(self.refined.bound_expr, var)}"))
        rows.append(("tail limit", f"unknown ({_unfinished(self.tail_method, short=True)})"
                     if self.tail_limit is None
                     else f"lim eps^2/(-2 log delta) = {_text(self.tail_limit, var)}"
                     + (f" (method: {self.tail_method})" if self.tail_method else "")))
        rows.append(("verdict", self.verdict))
        m = self.measurement
        if m is not None:
            lo, up = format_bracket(m.lower, m.upper)
            rows.append(("mu (whole line)" if m.covers_tail else "mu (head)",
                         f"{lo} <= sup G on {m._span()} <= {up}"))
            if m.covers_tail:
                rows.append(("failure prob.", f"0 ({_whole_line_why(m)}: full guarantee)"))
            else:
                rows.append(("failure prob.", f"<= {format_log_upper(m.log_failure_prob)} "
                             f"(delta_mu at eps_h = {m.eps_h:g}, mu = the upper bound)"))
            rows.append(("method", f"{m.method}, tol {m.tol:g}, {m.evaluations} evaluations, "
                         f"argmax eps = {float(m.argmax):.6g}, "
                         f"{'certified (interval arithmetic)' if m.certified else 'float64'}"))
        rows.append(("statement", self.statement))
        if self.timings:
            rows.append(("timings", ", ".join(f"{k} {v:.3g} s" for k, v in self.timings.items())))
        rows += [("note", n) for n in self.notes if n not in self.caveats]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def __str__(self) -> str:
        return self.to_text()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (``json.dumps(r.to_dict(), allow_nan=False)`` works).

        Expressions are strings in the syntax ``symgdp analyze`` reads (``eps`` for
        epsilon), floating-point constants with every digit, with a LaTeX copy under
        ``"latex"``; infinities are the string ``"inf"``;
        ``None`` (JSON ``null``) means unknown or not computed.
        """
        m = self.measurement
        var = self.profile.var

        def num_or_none(attr: str) -> Any:
            return None if m is None else json_number(getattr(m, attr))

        d: dict[str, Any] = {
            "cautions": list(self.cautions),
            "input": self.input,
            "kind": self.kind,
            "equation": None if self.equation is None else _text(self.equation, var, full=True),
            "values": {str(k): _text(v, full=True) for k, v in self.profile.values.items()},
            "profile": _text(self.profile.expr, var, full=True),
            "refined_profile": None if self.refined is None
            else _text(self.refined.bound_expr, var, full=True),
            "breakpoint": json_number(self.breakpoint) if self.breakpoint is not None else None,
            "breakpoint_exact": None if self.breakpoint is None
            else _text(self.breakpoint, var, full=True),
            "breakpoint_delta": None if self.breakpoint_delta is None
            else json_number(self.breakpoint_delta),
            "tail_limit": None if self.tail_limit is None
            else _text(self.tail_limit, var, full=True),
            "tail_method": self.tail_method,
            "is_gdp": self.is_gdp,
            "mu_tail": json_number(self.mu_tail),
            "verdict": self.verdict,
            "statement": self.statement,
            "mu_lower": num_or_none("lower"),
            "mu_upper": num_or_none("upper"),
            "eps_h": num_or_none("eps_h"),
            "tol": num_or_none("tol"),
            "covers_tail": None if m is None else bool(m.covers_tail),
            "proved_until": None if m is None
            else json_number(getattr(m, "proved_until", math.nan)),
            # an upper bound: never rounded down, never 0.0 when positive
            "failure_prob": None if m is None else probability_upper(m.log_failure_prob),
            "log_failure_prob": num_or_none("log_failure_prob"),
            "refined": None if m is None else bool(m.refined),
            "method": None if m is None else str(m.method),
            "certified": None if m is None else bool(m.certified),
            "evaluations": None if m is None else int(m.evaluations),
            "argmax": num_or_none("argmax"),
            "timings": {k: round(float(v), 6) for k, v in self.timings.items()},
            "notes": list(self.notes),
        }
        d["latex"] = {
            "equation": None if self.equation is None else _tex(self.equation),
            "profile": _tex(self.profile.expr),
            "refined_profile": None if self.refined is None else _tex(self.refined.bound_expr),
            "tail_limit": None if self.tail_limit is None else _tex(self.tail_limit),
            "report": self.to_latex(),
        }
        return d

    def _repr_latex_(self) -> str:
        rows = [("caution", rf"\text{{{latex_text(c, symbols=False)}}}")
                for c in self.cautions] + self._rows()
        lines = [rf"\text{{{label}:}} \quad & {body}" for label, body in rows]
        return "$$\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}$$"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


# -- building a report ------------------------------------------------------------------------


def _parse(text: str, values: Mapping[Any, Any] | None, tradeoff: bool) -> tuple[Profile, Any]:
    from symgdp.symbolic import parsing

    if tradeoff:
        equation = parsing.parse_equation(text)
        return Profile.from_tradeoff(equation, values or {}), equation
    if "=" in text.replace("<=", "").replace(">=", "").replace("==", "").replace("!=", ""):
        raise ParseError(f"{text!r} looks like an equation; pass tradeoff=True "
                         "(--tradeoff on the command line) to read it as sigma = f(eps, delta)")
    return Profile.parse(text, values), None


def _build(obj: Any, values: Mapping[Any, Any] | None,
           tradeoff: bool) -> tuple[Profile, Any, str, str]:
    """(naive profile, equation or None, input text, kind)."""
    if isinstance(obj, str):
        profile, equation = _parse(obj, values, tradeoff)
        return profile, equation, obj, "tradeoff" if equation is not None else "profile"
    if isinstance(obj, Profile):
        if tradeoff:
            raise ProfileError("tradeoff=True needs an equation, got a Profile")
        if values:
            merged = {**{str(k): v for k, v in obj.values.items()},
                      **{str(k): v for k, v in values.items()}}
            obj = obj.replace(values=merged)
        return obj, None, _source_text(obj) or _text(obj.expr, obj.var), "profile"
    if isinstance(obj, sympy.Equality):
        return Profile.from_tradeoff(obj, values or {}), obj, _text(obj), "tradeoff"
    if isinstance(obj, (sympy.Basic, int, float)) and not isinstance(obj, bool):
        if tradeoff:
            raise ProfileError(f"tradeoff=True needs an equation sigma = f(eps, delta), "
                               f"got {obj!r}")
        p = Profile(obj, values)
        return p, None, _text(p.expr, p.var), "profile"
    raise ProfileError(f"report() takes a Profile, a SymPy expression or equation, or a "
                       f"string; got {type(obj).__name__} {obj!r}")


def _source_text(p: Profile) -> str | None:
    """What a notion's profile was made from (a zCDP rho, an RDP curve, a trade-off
    curve), for the report's input row; ``None`` for other profiles."""
    src: Any = getattr(p, "source", None)
    kind = getattr(src, "kind", None)
    if kind in ("zCDP", "RDP") and getattr(src, "rho", None) is not None:
        xi = getattr(src, "xi", 0)
        if kind == "RDP":  # a linear RDP curve, kept as typed
            return f"RDP: eps(alpha) = {xi + src.rho * sympy.Symbol('alpha')}"
        return f"zCDP: rho = {src.rho}" + (f", xi = {xi}" if xi != 0 else "")
    if kind == "RDP" and getattr(src, "expr", None) is not None:
        return f"RDP: eps(alpha) = {src.expr}"
    if kind == "f-DP" and getattr(src, "expr", None) is not None:
        return f"f-DP: T(alpha) = {src.expr}"
    return None


def _check_values(profile: Profile, equation: Any, values: Mapping[Any, Any] | None) -> None:
    """Every given value names a parameter, and every parameter has a value."""
    source = equation if equation is not None else profile.expr
    params = {s.name for s in source.free_symbols} - {profile.var.name, _DELTA.name}
    unknown = sorted({str(k) for k in (values or {})} - params)
    if unknown:
        have = ", ".join(sorted(params)) or "none"
        raise ProfileError(f"no parameter named {', '.join(unknown)} in the input "
                           f"(its parameters: {have})")
    missing = sorted(str(s) for s in profile.unbound_symbols)
    if missing:
        raise UnboundParameterError(
            f"parameter{'s' if len(missing) > 1 else ''} without a value: "
            f"{', '.join(missing)}; give {'them' if len(missing) > 1 else 'it'} with "
            + " ".join(f"--set {m}=VALUE" for m in missing))


def _mechanism_caveats(*profiles: Profile | None) -> list[str]:
    """Caveats a mechanism carries in its metadata: ``valid_for`` (the range of epsilon
    where its calibration is proven) and ``caveat``/``caveats`` (text), each once."""
    out: list[str] = []
    for p in profiles:
        if p is None:
            continue
        meta = p.meta
        valid = meta.get("valid_for")
        if valid is not None and valid is not sympy.true:
            who = f"the {p.name} calibration" if p.name else "this profile"
            ref = f" ({meta['reference']})" if meta.get("reference") else ""
            out.append(f"{who} is proven only for {_text(valid, p.var)}{ref}; beyond that "
                       "the profile is not a proven bound, so neither is a mu derived from "
                       "it")
        extra = meta.get("caveats", ())
        extra = [extra] if isinstance(extra, str) else list(extra)
        if meta.get("caveat"):
            extra.insert(0, meta["caveat"])
        out += [" ".join(str(c).split()) for c in extra]
    return list(dict.fromkeys(out))


def _unfinished(method: str | None, short: bool = False) -> str:
    """Why the tail limit is unknown, from the report's ``tail_method``: the analysis ran
    out of time (``None`` or "timed out") or finished with no rule that decides it."""
    if method == "inconclusive":
        return "inconclusive" if short else "was inconclusive"
    return "did not finish"


def _tail(p: Profile, timeout: float | None,
          notes: list[str]) -> tuple[Any, bool | None, float | None, str | None]:
    """(limit, is_gdp, mu_tail, method) of the tail analysis; None entries mean unknown."""
    from symgdp.tail.limit import identify

    if p.unbound_symbols:
        notes.append("parameters without values: " + ", ".join(
            sorted(map(str, p.unbound_symbols))) + "; symbolic steps only, no measurement")
    if getattr(p, "source", None) is not None:
        # a numeric source (a notion's profile, a PLD) knows its own tail limit, or not
        try:
            ident = p.identify(timeout=timeout)
        except ProfileError as exc:
            notes.append(f"tail analysis inconclusive, verdict unknown: {_one_line(exc)}")
            return None, None, None, "inconclusive"
    else:
        ident = identify(p, timeout=timeout)
    if ident.method == "unknown" or ident.limit is None:
        notes.append(f"tail analysis inconclusive, verdict unknown: {ident.detail}")
        return None, None, None, "timed out" if ident.timed_out else "inconclusive"
    mu_tail = float(ident.mu_tail)
    return (ident.limit, ident.is_gdp, None if math.isnan(mu_tail) else mu_tail,
            str(ident.method))


def report(
    profile_or_equation: Any,
    *,
    values: Mapping[Any, Any] | None = None,
    eps_h: float = 100.0,
    tol: float = 1e-6,
    certify: bool | None = None,
    tradeoff: bool = False,
    refine: bool = True,
    method: MeasureMethod = "auto",
    measure: bool = True,
    progress: Any = None,
    strict: bool = False,
    timeout: float | None = None,
    time_limit: float | None | str = "default",
) -> Report:
    r"""Analyse a profile or trade-off equation and keep every derived step.

    Args:
        profile_or_equation: a :class:`~symgdp.profile.Profile`, a SymPy expression of
            :math:`\delta(\varepsilon)`, a SymPy ``Eq`` :math:`\sigma = f(\varepsilon,
            \delta)`, or a string of either (parsed safely; an equation needs
            ``tradeoff=True``).
        values: parameter values (by name or symbol).
        eps_h: head end point of the measurement.
        tol: requested gap between the measured lower and upper bound.
        certify: prove the measured bounds in ball arithmetic: ``None`` (the default, as
            :func:`~symgdp.measurement.measure.measure` and ``symgdp analyze``) does so whenever the
            profile has a closed form, ``True`` requires it, ``False`` is float64 mode.
            The report's "method" row says which (``certified`` or ``float64``).
        tradeoff: read a string as a trade-off equation.
        refine: refine the profile (theory §2) before measuring.
        method: measurement method (``"auto"`` or ``"staircase"``).
        measure: set ``False`` for the symbolic steps only.
        progress: ``None`` (default) for none, ``True`` for tqdm bars on stderr, or a
            callable that receives a :class:`~symgdp.present.progress.ProgressEvent` at the start
            and the end of each stage (``"refine"``, ``"identify"``, ``"measure"``) and
            with counts inside a stage where the stage reports them.
        timeout: wall-clock budget in seconds of each symbolic step, the refinement and
            the tail analysis (default: theirs); when the tail analysis runs out of time the
            verdict is "unknown".
        time_limit: wall-clock budget of the measurement (see
            :func:`~symgdp.measurement.measure.measure`).
        strict: the command-line contract: a value for a name that is not a parameter of
            the input, or a parameter left without a value, is an error.

    Returns:
        A :class:`Report`.  Parameters left without values keep the symbolic steps
        (formulas in the parameters) and skip the measurement, with a note.

    Raises:
        ParseError: the string is not a safe expression or equation.
        ProfileError: the input is not a valid profile.
        UnboundParameterError: with ``strict=True``, a parameter has no value.
    """
    callback = as_callback(progress)
    timings: dict[str, float] = {}
    notes: list[str] = []

    t0 = time.perf_counter()
    profile, equation, text, kind = _build(profile_or_equation, values, tradeoff)
    timings["input"] = time.perf_counter() - t0
    if strict:
        _check_values(profile, equation, values)

    refined = breakpoint_ = breakpoint_delta = None
    if refine:
        t0 = time.perf_counter()
        with stage(callback, "refine", "refining the profile"):
            try:
                refined = profile.refine(timeout=timeout)
                breakpoint_ = getattr(refined, "breakpoint", None)
                breakpoint_delta = getattr(refined, "breakpoint_delta", None)
            except (AnalysisTimeout, ConvergenceError) as exc:
                # refinement only improves a valid profile, so the analysis goes on without it
                notes.append(f"refinement did not finish: {_one_line(exc)}")
            except UnboundParameterError as exc:
                # the refinement point is found numerically, so it needs every value
                notes.append(f"refinement skipped: {_one_line(exc)}")
        timings["refine"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with stage(callback, "identify", "identifying the tail"):
        try:
            limit, is_gdp, mu_tail, tail_method = _tail(profile, timeout, notes)
        except AnalysisTimeout as exc:
            limit = is_gdp = mu_tail = tail_method = None
            notes.append(f"tail analysis did not finish, verdict unknown: {_one_line(exc)}")
    timings["tail"] = time.perf_counter() - t0

    measurement = None
    if measure and not profile.unbound_symbols:
        t0 = time.perf_counter()
        # Measure the naive profile through measure()'s own refinement so that the
        # Measurement says refined=True; refining an already refined profile is a no-op.
        use_refine = refine and refined is not None
        if refine and refined is None:
            notes.append("measured the profile as given (refinement did not finish)")
        with stage(callback, "measure", "measuring the head") as measuring:
            # the search reports (evaluations, gap) now and then: counts inside the stage
            inner = None if callback is None else \
                (lambda evaluations, gap: measuring.advance(evaluations))
            measurement = profile.measure(eps_h=eps_h, tol=tol, refine=use_refine,
                                          method=method, certify=certify, progress=inner,
                                          time_limit=time_limit)
        notes += [f"measurement: {n}" for n in getattr(measurement, "notes", ())]
        timings["measure"] = time.perf_counter() - t0
    caveats = _mechanism_caveats(profile, refined)
    return Report(input=text, kind=kind, equation=equation, profile=profile, refined=refined,
                  breakpoint=breakpoint_, breakpoint_delta=breakpoint_delta, tail_limit=limit,
                  is_gdp=is_gdp, mu_tail=mu_tail, tail_method=tail_method,
                  measurement=measurement, timings=timings,
                  notes=tuple(caveats + notes), caveats=tuple(caveats))

