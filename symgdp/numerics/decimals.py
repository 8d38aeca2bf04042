r"""Printing bounds so that the printed statement stays true: outward decimal rounding.

A lower bound is printed rounded down, an upper bound (or a failure probability) rounded
up, from the exact binary value of the float; a probability known only through its
logarithm is printed from the log, so it is never shown as 0 when it underflows float64.

Example:
    >>> format_lower(2 / 3, 3), format_upper(2 / 3, 3)  # outward: lower down, upper up
    ('0.666', '0.667')
    >>> format_log_upper(-800.0)  # exp(-800) underflows float64, yet prints as positive
    '3.7e-348'
"""

from __future__ import annotations

import math
import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from typing import Any

__all__ = ["json_number", "format_lower", "format_upper", "format_bracket", "format_log_upper",
           "probability_upper", "Probability", "head_caveat", "latex_text", "latex_names"]

_LN10 = math.log(10.0)


def _directed(x: float, digits: int, rounding: str) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    d = Decimal(x)  # the exact binary value, so the rounding direction is honoured
    exp = d.adjusted() - digits + 1
    q = d.quantize(Decimal(1).scaleb(exp), rounding=rounding)
    if -7 < q.adjusted() < 7:
        return format(q, "f")
    return format(q.normalize(), "E").replace("E", "e")


def format_lower(x: float, digits: int = 6) -> str:
    """``x`` rounded down to ``digits`` significant digits, as text.

    >>> format_lower(0.70710678118)
    '0.707106'
    """
    return _directed(float(x), digits, ROUND_FLOOR)


def format_upper(x: float, digits: int = 6) -> str:
    """``x`` rounded up to ``digits`` significant digits, as text.

    >>> format_upper(0.70710678118)
    '0.707107'
    """
    return _directed(float(x), digits, ROUND_CEILING)


def format_bracket(lower: float, upper: float) -> tuple[str, str]:
    """A bracket rounded outwards with just enough digits to show its width (3 to 12).

    >>> format_bracket(1.23203538, 1.23203601)
    ('1.2320353', '1.2320361')
    """
    lo, up = float(lower), float(upper)
    if math.isfinite(lo) and math.isfinite(up) and up > 0:
        gap = max(up - lo, 1e-15 * up)
        digits = int(min(12, max(3, math.ceil(math.log10(up / gap)) + 1)))
    else:
        digits = 6
    return format_lower(lo, digits), format_upper(up, digits)


def format_log_upper(log_x: float, latex: bool = False) -> str:
    r"""An upper bound of :math:`x` from :math:`\log x`, as ``m e k`` (or LaTeX), rounded up.

    Works where :math:`x` itself underflows float64.

    >>> format_log_upper(-1000.0)  # exp(-1000) = 5.0759...e-435
    '5.1e-435'
    >>> format_log_upper(-100.0, latex=True)
    '3.8 \\times 10^{-44}'
    >>> format_log_upper(-2.358657632255133e38)  # exp(-2.36e38): only the exponent is shown
    '1e-102435199438738325783445121453705396223'
    """
    if math.isnan(log_x):
        return "nan"
    if log_x == -math.inf:
        return "0"
    if log_x >= 0:
        return "1"
    t = log_x / _LN10
    if abs(t) > 1e12:
        # the float error of t (~1e-16 |t|) exceeds the mantissa's digit: a power of ten
        # whose exponent is rounded up past that error
        k = math.floor(t + abs(t) * 1e-14) + 1
        return rf"10^{{{k}}}" if latex else f"1e{k}"
    k = math.floor(t)
    m = 10.0 ** (t - k)
    # rounding up absorbs the float error of t - k, which grows with |t|
    m_up = math.ceil(m * 10.0 * (1 + 1e-12 + 1e-15 * abs(t))) / 10.0
    if m_up >= 10.0:
        m_up, k = 1.0, k + 1
    if latex:
        return rf"{m_up:.1f} \times 10^{{{k}}}"
    return f"{m_up:.1f}e{k:+d}".replace("e+", "e")


def probability_upper(log_p: float) -> float | str:
    r"""A JSON-ready upper bound of a probability :math:`p` given :math:`\log p`.

    A float not below :math:`p` where float64 holds it (widened by the float error of
    :math:`\log p`), else its decimal text rounded up: a positive bound is never ``0``.

    >>> probability_upper(-math.inf)
    0.0
    >>> probability_upper(math.log(0.25)) >= 0.25
    True
    >>> probability_upper(-2323.98)  # exp(-2323.98) = 5.108...e-1010 underflows float64
    '5.2e-1010'
    """
    log_p = float(log_p)
    if math.isnan(log_p):
        raise ValueError("log_p is NaN")
    if log_p == -math.inf:
        return 0.0
    if log_p >= 0:
        return 1.0
    p = math.exp(log_p + 4e-16 * (abs(log_p) + 1))
    if p < 1e-300:  # subnormal or zero: the float would round the bound away
        return format_log_upper(log_p)
    return min(1.0, math.nextafter(p, math.inf))


_TINY = 2.2250738585072014e-308  # the smallest normal float64
_SPEC = re.compile(r"(?P<fill>.?[<>=^])?(?P<sign>[-+ ])?(?P<alt>#)?(?P<zero>0)?(?P<width>\d+)?"
                   r"(?P<group>[,_])?(?:\.(?P<prec>\d+))?(?P<type>[eEfFgG%])?")


def _float_error(log_p: float) -> float:
    """A bound of the float error that :math:`\\log p` may carry (relative 4e-16)."""
    return 4e-16 * (abs(log_p) + 1.0)


class Probability(float):
    r"""An upper bound of a probability that keeps its logarithm and never prints as 0.

    A ``float`` (it compares, sorts and computes like one) whose value is at least the
    probability it bounds: where :math:`p` underflows float64 the value is the smallest
    positive float not below :math:`p` (never ``0.0``), and :attr:`log` keeps
    :math:`\log p`.  ``repr``, ``str`` and ``format`` print the bound rounded *up*, from
    the logarithm where float64 cannot hold it, so a positive bound is never shown as 0
    and a printed bound stays a bound (``f"{p:.2g}"`` rounds up, not to nearest).
    Arithmetic on it gives plain floats.

    An exact 0 (``Probability(0.0)``, ``Probability.from_log(-inf)``) prints as ``0.0``:
    it is a proof that the probability is 0, not an underflow.

    Example:
        >>> p = Probability.from_log(-2323.98)  # exp(-2323.98) = 5.1087...e-1010
        >>> p, str(p), f"{p:.3e}"  # every text rounded up
        (5.2e-1010, '5.2e-1010', '5.109e-1010')
        >>> 0.0 < p <= 1e-300, p.log
        (True, -2323.98)
        >>> f"{Probability(4.2998e-09):.2g}"  # rounded up: the printed bound stays a bound
        '4.3e-09'
        >>> Probability(1e-10)
        1e-10
    """

    __slots__ = ("log",)
    log: float

    def __new__(cls, value: Any = 0.0, *, log: float | None = None) -> Probability:
        v = float(value)
        if math.isnan(v) or not 0.0 <= v <= 1.0:
            from symgdp.errors import DomainError

            raise DomainError(f"a probability must lie in [0, 1], got {value!r}")
        self = super().__new__(cls, v)
        if log is None:
            log = math.log(v) if v > 0 else -math.inf
        self.log = float(log)
        return self

    @classmethod
    def from_log(cls, log_p: float) -> Probability:
        r"""The bound of :math:`p` given :math:`\log p` (widened by the float error of
        :math:`\log p`; at most 1).

        >>> Probability.from_log(math.log(0.25)) >= 0.25
        True
        >>> float(Probability.from_log(-800.0)) > 0  # exp(-800) underflows, the bound not
        True
        """
        lp = float(log_p)
        if math.isnan(lp):
            from symgdp.errors import DomainError

            raise DomainError("the logarithm of a probability is NaN")
        if lp == -math.inf:
            return cls(0.0, log=-math.inf)
        if lp >= 0:
            return cls(1.0, log=0.0)
        x = math.exp(lp + _float_error(lp))
        return cls(min(1.0, math.nextafter(x, math.inf)), log=lp)

    @property
    def underflows(self) -> bool:
        """The probability is positive but below float64's normal range: the float value is
        only a (coarse) upper bound, and printing goes through :attr:`log`."""
        return self.log > -math.inf and float(self) < _TINY

    def __reduce__(self) -> Any:
        return (_probability, (float(self), self.log))

    def __copy__(self) -> Probability:
        return self

    def __deepcopy__(self, memo: Any) -> Probability:
        return self

    def _decimal(self) -> Decimal:
        """A decimal upper bound of the probability (the float, or from the log)."""
        if not self.underflows:
            return Decimal(float(self))  # exact, and not below p
        import mpmath

        with mpmath.workdps(30):
            # 30 digits of exp(log p + its float error): the printed digits round it up
            x = mpmath.exp(mpmath.mpf(self.log) + _float_error(self.log))
            text = mpmath.nstr(x * (1 + mpmath.mpf(10) ** -25), 28,
                               min_fixed=1, max_fixed=0)
        return Decimal(text)

    def __repr__(self) -> str:
        if not self.underflows:
            return float.__repr__(self)
        return format_log_upper(self.log)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        m = _SPEC.fullmatch(spec)
        if m is None:  # a locale format ('n'): as a float, or the text where it underflows
            return str(self) if self.underflows else float.__format__(self, spec)
        kind, prec = m.group("type"), m.group("prec")
        width = m.group("width") or ""
        fill = m.group("fill") or ("0>" if m.group("zero") and width else ">")
        if kind is None and prec is None:  # width, alignment, sign: the repr text, padded
            return float.__format__(self, spec) if not self.underflows else \
                format(str(self), f"{fill}{width}")
        digits = 6 if prec is None else int(prec)
        if abs(self.log) > 1e15:  # beyond decimal's exponents: the power of ten rounded up
            return format(str(self), f"{fill}{width}")
        with localcontext() as ctx:
            ctx.prec, ctx.Emin, ctx.Emax = 80, MIN_EMIN, MAX_EMAX
            ctx.rounding = ROUND_CEILING
            d = self._decimal()
            if kind is not None and kind in "fF%":
                scale = Decimal(100 if kind == "%" else 1)
                up = (d * scale).quantize(Decimal(1).scaleb(-digits)) / scale
            elif d == 0:
                up = d
            else:
                sig = max(digits, 1) + (1 if kind in ("e", "E") else 0)
                up = d.quantize(Decimal(1).scaleb(d.adjusted() - sig + 1))
            if not self.underflows:
                # the decimal rounded up fits a float to the digits shown: Python prints it
                return float.__format__(float(up), spec)
            inner = f"{m.group('alt') or ''}.{digits}{kind or 'g'}"
            text = format(up, inner)
        if (kind or "g") in "gG" and not m.group("alt") and "." in text:
            mant, e, exp = text.partition("e" if "e" in text else "E")
            text = mant.rstrip("0").rstrip(".") + e + exp
        return format(text, f"{fill}{width}")


def _probability(value: float, log: float) -> Probability:
    return Probability(value, log=log)


def head_caveat(*, lower: float, upper: float, eps_h: float, argmax: float | None,
                mu_tail: float | None, covers_tail: bool) -> str | None:
    r"""The warning that must come before a head bound, or ``None`` when there is none.

    A bound of :math:`\sup_{[0, \varepsilon_h]} G` is the mechanism's :math:`\mu` only if
    the tail does not need more (theory §4-§6).  It is not when the tail limit is infinite
    (not GDP), when :math:`\mu_{\text{tail}} = \lim G` exceeds the upper bound, or when the
    maximum sits at the end :math:`\varepsilon_h` (``argmax``), where :math:`G` may still
    grow.  A profile that is 0 beyond :math:`\varepsilon_h` (``covers_tail``) has no tail.

    Example:
        >>> head_caveat(lower=0.955, upper=0.956, eps_h=100.0, argmax=100.0, mu_tail=1.0,
        ...             covers_tail=False)
        "mu >= 1.000 from the tail; the head bound 0.9560 is not the mechanism's mu"
    """
    up = format_bracket(lower, upper)[1]
    if covers_tail or not math.isfinite(upper):
        return None
    if mu_tail is not None and not math.isnan(mu_tail):
        if math.isinf(mu_tail):
            return (f"not GDP: the tail limit is infinite, so the head bound {up} holds on "
                    f"[0, {eps_h:g}] only and is not the mechanism's mu")
        if mu_tail > upper:
            return (f"mu >= {format_lower(mu_tail, 4)} from the tail; the head bound {up} "
                    "is not the mechanism's mu")
    if argmax is not None and math.isfinite(argmax) and argmax >= eps_h * (1 - 1e-9):
        return (f"the maximum of G on [0, {eps_h:g}] sits at its end eps_h = {eps_h:g}, where "
                f"G may still grow: the head bound {up} is not the mechanism's mu; raise "
                "eps_h or check the tail limit")
    return None


_LATEX_WORDS = [(">=", r"$\ge$"), ("<=", r"$\le$"), ("eps_h", r"$\varepsilon_h$"),
                ("mu", r"$\mu$"), ("eps", r"$\varepsilon$"), ("delta", r"$\delta$")]


def latex_text(text: str, *, symbols: bool = True) -> str:
    r"""Plain text (a caveat or note) for ``\text{...}`` in LaTeX: special characters
    escaped, and ``mu``, ``eps``, ``eps_h``, ``delta``, ``>=``, ``<=`` as symbols (inline
    math inside ``\text``, which amsmath allows; ``symbols=False`` keeps the words, for
    renderers that do not).

    >>> latex_text("mu >= 1.000 from the tail; 5% of eps_h")
    '$\\mu$ $\\ge$ 1.000 from the tail; 5\\% of $\\varepsilon_h$'
    """
    import re

    special = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_",
               "^": r"\^{}", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$",
               "~": r"\~{}"}
    words = "|".join(re.escape(w) for w, _ in _LATEX_WORDS)
    out = []
    for piece in re.split(rf"(\b(?:{words})\b|>=|<=)", text):
        symbol = dict(_LATEX_WORDS).get(piece) if symbols else None
        out.append(symbol if symbol is not None else
                   "".join(special.get(ch, ch) for ch in piece))
    return "".join(out)


_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
          "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi",
          "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma",
          "Upsilon", "Phi", "Psi", "Omega"}
#: names a user types for a letter whose LaTeX SymPy would not guess
_LATEX_BASES = {"eps": r"\varepsilon", "epsilon": r"\varepsilon", "varepsilon": r"\varepsilon",
                "lam": r"\lambda", "lmbda": r"\lambda", "lambda": r"\lambda"}
_NAME = re.compile(r"(?P<base>[A-Za-z]+?)(?:_(?P<sub>[A-Za-z0-9]+)|(?P<digits>[0-9]+))?")


def _latex_name(name: str) -> str | None:
    """The LaTeX of one parameter name where SymPy's own would mislead, else ``None``."""
    m = _NAME.fullmatch(name)
    if m is None:
        return None
    base = m.group("base")
    sub = m.group("sub") or m.group("digits")
    head = _LATEX_BASES.get(base)
    if head is None:
        if base not in _GREEK or sub is None or len(sub) == 1 or sub.isdigit():
            return None  # SymPy prints it well: sigma, \sigma_{0}, x_{1}, ...
        head = "\\" + base
    if sub is None:
        return head
    if sub.isdigit() or len(sub) == 1:
        return f"{head}_{{{sub}}}"
    return f"{head}_{{\\{sub}}}" if sub in _GREEK else f"{head}_{{\\mathrm{{{sub}}}}}"


def latex_names(expr: Any) -> dict[Any, str]:
    r"""``symbol_names`` for :func:`sympy.latex`: the LaTeX a reader expects for the
    parameters of ``expr`` where SymPy's default would mislead (``eps0`` is
    :math:`\varepsilon_0`, not ``eps_{0}``; ``eps_tail`` is
    :math:`\varepsilon_{\mathrm{tail}}`; ``lam`` is :math:`\lambda`).

    Example:
        >>> import sympy
        >>> e0, s = sympy.symbols("eps0 sigma")
        >>> sympy.latex(e0 / s, symbol_names=latex_names(e0 / s))
        '\\frac{\\varepsilon_{0}}{\\sigma}'
    """
    out: dict[Any, str] = {}
    for sym in getattr(expr, "free_symbols", ()):
        tex = _latex_name(str(sym))
        if tex is not None:
            out[sym] = tex
    return out


def json_number(x: object) -> object:
    """A number for strict JSON: ints kept, other reals as floats, infinities as the strings
    ``"inf"``/``"-inf"``, and ``None`` (null, unknown) for None, NaN or a non-numeric value
    (a symbolic expression).

    Example:
        >>> [json_number(v) for v in (3, 0.5, float("inf"), float("nan"), None)]
        [3, 0.5, 'inf', None, None]
    """
    if x is None or isinstance(x, int):
        return x
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if math.isnan(v):
        return None
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v
