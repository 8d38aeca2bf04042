r"""Figures of privacy profiles, GDPTs, trade-off curves and composition bounds.

Each function returns a :class:`matplotlib.figure.Figure` with mathtext (LaTeX) labels.
Figures are built without :mod:`matplotlib.pyplot`, so plotting in a loop keeps no global
state; they display in Jupyter and save with ``fig.savefig(path)``.  Pass ``ax=`` to draw
into an existing pyplot axes instead.

Notation (docs/theory.md): :math:`\delta(\varepsilon)` a privacy profile,
:math:`\delta_\mu(\varepsilon)` the profile of :math:`\mu`-GDP, and
:math:`G_A(\varepsilon) = \mu_{\mathrm{GDP}}(\varepsilon, \delta_A(\varepsilon))` the
GDP transformation (GDPT) of a profile.  On an interval :math:`[x, y]` a non-increasing
profile gives :math:`\mu_{\mathrm{GDP}}(x, \delta_A(y)) \le G_A \le
\mu_{\mathrm{GDP}}(y, \delta_A(x))` (theory §6): :func:`gdpt` draws these steps as the
staircase bounds.  A profile implies :math:`f`-DP with
:math:`f(\alpha) = \sup_{\varepsilon \ge 0} \max\{0, 1 - \delta(\varepsilon) -
e^{\varepsilon}\alpha, e^{-\varepsilon}(1 - \delta(\varepsilon) - \alpha)\}` (Dong, Roth &
Su 2021, Proposition 2.12); :func:`tradeoff` draws it against :math:`G_\mu`.

matplotlib is imported only when a figure is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import AnalysisTimeout, DomainError
from .gaussian import delta_mu, mu_gdp, tradeoff_gdp
from .profile import Profile
from .formatting import format_bracket

__all__ = ["profiles", "gdpt", "tradeoff", "composition", "summary", "save", "PALETTE",
           "ROW_STYLES"]

_FIGSIZE = (7.8, 4.2)
_FONT = 11
#: colour-blind-safe palette (Okabe & Ito, "Color universal design", 2008), in the order
#: the series of a figure take it; yellow is left out (unreadable on white)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#7F7F7F")
_BLUE, _VERMILLION, _GREEN, _PURPLE, _ORANGE, _SKY, _BLACK, _GREY = PALETTE
#: the fixed style of every row of :func:`symgdp.composition.table` in :func:`composition`:
#: colour, marker and line style, so that the rows stay apart also in grey print and for
#: colour-blind readers (no two rows share colour and marker); related rows share a
#: colour (a GDP summary and the bound it summarises), the approximate CLT row is dotted
ROW_STYLES: dict[str, dict[str, Any]] = {
    "basic": {"color": _GREY, "marker": "o", "ls": ":"},
    "advanced": {"color": _BLACK, "marker": "s", "ls": ":"},
    "rdp": {"color": _PURPLE, "marker": "v", "ls": "--"},
    "rdp_tight": {"color": _PURPLE, "marker": "^", "ls": "-"},
    "gdp": {"color": _SKY, "marker": "<", "ls": "--"},
    "gdp_laplace": {"color": _SKY, "marker": ">", "ls": "-."},
    "clt": {"color": _ORANGE, "marker": "x", "ls": ":"},
    "pld": {"color": _GREEN, "marker": "D", "ls": "-."},
    "pld_laplace": {"color": _BLUE, "marker": "d", "ls": "-"},
    "gdp_summary_laplace": {"color": _BLUE, "marker": "P", "ls": "--"},
    "optimal": {"color": _VERMILLION, "marker": "*", "ls": "-"},
    "gdp_summary": {"color": _VERMILLION, "marker": "X", "ls": "--"},
}
# styles of rows not in ROW_STYLES (a user's own rows), taken in turn
_EXTRA_MARKERS = ("h", "p", "8", "1", "2", "3", "4", "+")
_EXTRA_LINES = ("-", "--", "-.", ":")
_LEGEND_PLACES = ("auto", "outside", "below", "inside", "figure", "none")
# a figure narrower than this (inches) is a single-column figure: smaller fonts, legend below
_NARROW = 4.5


# -- matplotlib plumbing ---------------------------------------------------------------------
def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("symgdp.plot needs matplotlib: pip install matplotlib") from exc
    return Figure


def _axes(ax: Any, figsize: tuple[float, float] = _FIGSIZE) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    fig = _figure_class()(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _font(fig: Any) -> float:
    """Base font size (points) for a figure of this width: 8 pt in a single column
    (3.3 in), 9 pt up to a double column (7 in), 11 pt for wider (screen) figures."""
    w = float(fig.get_size_inches()[0])
    return 8.0 if w < _NARROW else (9.0 if w <= 8.0 else float(_FONT))


def _wrap(label: str, width: int) -> str:
    """A long plain-text legend label broken into lines (mathtext is left whole)."""
    if "$" in label or len(label) <= width or "\n" in label:
        return label
    import textwrap

    return "\n".join(textwrap.wrap(label, width))


def _below_offset(ax: Any, font: float) -> float:
    """Points from the bottom of ``ax`` to below its tick labels and x label."""
    from matplotlib import rcParams

    ticks = 0.0
    if ax.xaxis.get_visible():
        ticks = float(rcParams["xtick.major.size"]) + float(rcParams["xtick.major.pad"])
        ticks += 1.3 * (font - 1)  # a tick label, superscripts of 10^k included
    label = 0.0
    if ax.get_xlabel():
        lines = ax.get_xlabel().count("\n") + 1
        label = float(ax.xaxis.labelpad) + 1.25 * (font + 1) * lines
    return ticks + label + 3.0


def _finish(ax: Any, xlabel: str, ylabel: str, title: str | None,
            legend: str = "auto") -> None:
    fig = ax.figure
    font = _font(fig)
    ax.set_xlabel(xlabel, fontsize=font + 1)
    ax.set_ylabel(ylabel, fontsize=font + 1)
    ax.tick_params(labelsize=font - 1)
    ax.grid(True, which="major", alpha=0.3)
    if title:
        ax.set_title(title, fontsize=font + 1)
    if legend == "figure":
        _figure_legend(fig, font)
        return
    handles, labels = ax.get_legend_handles_labels()
    if not handles or legend == "none":
        return
    narrow = float(fig.get_size_inches()[0]) < _NARROW
    labels = [_wrap(t, 44 if narrow else 60) for t in labels]
    # outside the axes so that no entry hides data; constrained layout makes room for it:
    # to the right of a lone axes, below each panel of a figure with several (and of a
    # single-column figure), under the x label and its tick labels
    if legend == "auto":
        legend = "below" if len(fig.axes) > 1 or narrow else "outside"
    if legend == "outside":
        ax.legend(handles, labels, fontsize=font - 1, frameon=False, loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    elif legend == "below":
        from matplotlib.transforms import ScaledTranslation

        down = ScaledTranslation(0.0, -_below_offset(ax, font) / 72.0, fig.dpi_scale_trans)
        ax.legend(handles, labels, fontsize=font - 1, frameon=False, loc="upper center",
                  bbox_to_anchor=(0.5, 0.0), bbox_transform=ax.transAxes + down,
                  borderaxespad=0.0, ncols=1)
    else:
        ax.legend(handles, labels, fontsize=font - 1, frameon=False)


def _figure_legend(fig: Any, font: float) -> None:
    """One legend for every axes of ``fig`` (entries with the same label once), outside
    all of them: to the right of a wide figure, below a single-column one.  Redrawn on
    every call, so that a figure drawn panel by panel ends with all entries."""
    for old in list(fig.legends):
        old.remove()
    seen: dict[str, Any] = {}
    for a in fig.axes:
        for h, t in zip(*a.get_legend_handles_labels(), strict=True):
            seen.setdefault(t, h)
    if not seen:
        return
    narrow = float(fig.get_size_inches()[0]) < _NARROW
    labels = [_wrap(t, 44 if narrow else 34) for t in seen]
    fig.legend(list(seen.values()), labels, fontsize=font - 1, frameon=False,
               loc="outside lower center" if narrow else "outside right upper",
               ncols=1)


def _check_legend(legend: str) -> str:
    if legend not in _LEGEND_PLACES:
        raise DomainError(f"legend must be one of {', '.join(_LEGEND_PLACES)}; got {legend!r}")
    return legend


def _colors(ax: Any, n: int) -> list[Any]:
    """``n`` colours of :data:`PALETTE`, skipping those already drawn in ``ax``.

    Every series gets its own colour, also when several calls draw into the same axes.
    """
    from matplotlib.colors import to_hex

    used = {to_hex(ln.get_color()) for ln in ax.get_lines()}
    free = [c for c in PALETTE if to_hex(c) not in used]
    pool = free + [c for c in PALETTE if c not in free]
    return [pool[i % len(pool)] for i in range(n)]


def _row_style(name: str, i: int) -> dict[str, Any]:
    """The fixed style of a composition row; rows without one get a style of their own."""
    if name in ROW_STYLES:
        return dict(ROW_STYLES[name])
    return {"color": PALETTE[i % len(PALETTE)], "marker": _EXTRA_MARKERS[i % len(
        _EXTRA_MARKERS)], "ls": _EXTRA_LINES[(i // len(_EXTRA_MARKERS)) % len(_EXTRA_LINES)]}


def _row_label(name: str) -> str:
    """A composition row's human name (symgdp.composition.ROW_LABELS), "mu" as mathtext."""
    import re

    from .composition import ROW_LABELS

    return re.sub(r"\bmu\b", r"$\\mu$", ROW_LABELS.get(name, name))


def save(fig: Any, path: Any, **kwargs: Any) -> None:
    r"""Save ``fig`` (``fig.savefig(path, **kwargs)``) with the fonts embedded as TrueType
    (``pdf.fonttype`` and ``ps.fonttype`` 42, as publishers ask) and text kept as text in
    SVG: a ``.pdf`` path gives a vector figure for a paper.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> fig = tradeoff(mu=[1.0], n=20)
        >>> with tempfile.TemporaryDirectory() as d:
        ...     save(fig, Path(d) / "f.pdf")
        ...     pdf = (Path(d) / "f.pdf").read_bytes()
        >>> b"/Type3" in pdf, b"/FontFile2" in pdf
        (False, True)
    """
    from matplotlib import rc_context

    with rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}):
        fig.savefig(path, **kwargs)


def _series(args: tuple[Any, ...], *, pairs: bool = False) -> list[Any]:
    """Series given as separate arguments or as one sequence (list, tuple, iterable).

    With ``pairs``, a tuple ``(alpha, beta)`` of two arrays is one series, not two.
    """
    if len(args) != 1:
        return list(args)
    (x,) = args
    if pairs and isinstance(x, tuple) and len(x) == 2 and \
            not any(isinstance(v, Profile) or callable(v) for v in x):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "__iter__") and not isinstance(x, (str, bytes, np.ndarray, Profile)) \
            and not hasattr(x, "log_delta") and not callable(x):
        return list(x)
    return [x]


def _check_profiles(items: Sequence[Any], func: str) -> None:
    if not items:
        raise DomainError(f"{func}() needs at least one Profile")
    for i, p in enumerate(items):
        if not hasattr(p, "log_delta"):
            raise DomainError(f"{func}(): series {i + 1} must be a Profile, got "
                              f"{type(p).__name__} {p!r:.60}")


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges ``[i, j)`` where ``mask`` is True."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    d = np.diff(m.astype(np.int8))
    return list(zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0], strict=True))


def _mathtext_ok(text: str) -> bool:
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(text)
    except ValueError:
        return False
    return True


def _profile_label(p: Any, i: int) -> str:
    """The profile's name, else its formula when mathtext can draw it and it is short."""
    if getattr(p, "name", None):
        return str(p.name)
    if getattr(p, "breakpoint", None) is not None:
        return f"refined profile {i + 1}"
    import sympy

    tex = rf"$\delta(\varepsilon) = {sympy.latex(p.bound_expr)}$"
    return tex if len(tex) <= 70 and _mathtext_ok(tex) else f"profile {i + 1}"


def _labels(items: Sequence[Any], labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        return [_profile_label(p, i) for i, p in enumerate(items)]
    if len(labels) != len(items):
        raise DomainError(f"got {len(labels)} labels for {len(items)} curves")
    return [str(s) for s in labels]


def _as_list(x: Any) -> list[float]:
    if x is None:
        return []
    return [float(v) for v in np.atleast_1d(np.asarray(x, dtype=float))]


def _bracket_ends(mu: Any) -> Any:
    """GDP parameters with each bracket (``.lower``/``.upper``) replaced by its ends."""
    if mu is None:
        return None
    out: list[float] = []
    for m in (mu if isinstance(mu, (list, tuple)) else [mu]):
        lo, up = getattr(m, "lower", None), getattr(m, "upper", None)
        if lo is not None and up is not None and math.isfinite(up):
            out += [float(lo)] if lo == up else [float(lo), float(up)]
        else:
            out += [float(v) for v in np.atleast_1d(np.asarray(m, dtype=float))]
    return out


def _spans_decades(values: np.ndarray, decades: float = 3.0) -> bool:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return v.size >= 2 and math.log10(v.max() / v.min()) > decades


def _check_range(name: str, value: float) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise DomainError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _auto_eps_max(items: Sequence[Any], level: float = 1e-8) -> float:
    """Smallest eps (between 1 and 100) where every profile is below ``level``."""
    grid = np.linspace(0.0, 100.0, 401)[1:]
    worst = np.max([p.log_delta(grid) for p in items], axis=0)
    below = np.nonzero(worst < math.log(level))[0]
    return float(np.clip(grid[below[0]] if below.size else 100.0, 1.0, 100.0))


# -- public figures --------------------------------------------------------------------------
def profiles(
    *profiles: Any,
    mu: float | Sequence[float] | None = None,
    eps_max: float | None = None,
    n: int = 400,
    labels: Sequence[str] | None = None,
    log: bool | None = None,
    ax: Any = None,
    title: str | None = None,
    legend: str = "auto",
) -> Any:
    r"""Privacy profiles :math:`\delta(\varepsilon)` with GDP profiles :math:`\delta_\mu`.

    Args:
        *profiles: :class:`~symgdp.profile.Profile` objects (e.g. a naive profile and its
            refinement), every parameter bound, as separate arguments or one sequence.
        mu: GDP parameters whose curves :math:`\delta_\mu(\varepsilon)` are drawn dashed.
        eps_max: right end of the :math:`\varepsilon` axis; by default where every profile
            has dropped below :math:`10^{-8}` (between 1 and 100).
        n: grid points.
        labels: legend entries (default: the profile names or formulas).
        log: logarithmic :math:`\delta` axis; by default when the values span more than
            three decades.
        ax: draw into this axes instead of a new figure.
        title: optional title.
        legend: where the legend goes, never on the data by default: ``"auto"`` (right of
            a lone axes, below each panel of a figure with several), ``"outside"``,
            ``"below"``, ``"inside"`` or ``"none"``.

    Returns:
        The matplotlib ``Figure``.  Every series has its own colour.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> a, b = Profile(2 * sympy.exp(-eps**2)), Profile(sympy.exp(-eps**2))
        >>> fig = profiles([a, b], mu=[1.0], eps_max=3)  # or profiles(a, b, ...)
        >>> len({line.get_color() for line in fig.axes[0].lines})
        3
    """
    items = _series(profiles)
    _check_profiles(items, "profiles")
    _check_legend(legend)
    if n < 2:
        raise DomainError(f"n must be at least 2, got {n!r}")
    names = _labels(items, labels)
    mus = _as_list(mu)
    xmax = _auto_eps_max(items) if eps_max is None else _check_range("eps_max", eps_max)
    x = np.linspace(0.0, xmax, int(n))
    fig, ax = _axes(ax)
    colors = _colors(ax, len(items) + len(mus))
    curves = []
    for p, label, color in zip(items, names, colors, strict=False):
        y = np.exp(p.log_delta(x))
        curves.append(y)
        ax.plot(x, y, lw=2.0, color=color, label=label)
    for m, color in zip(mus, colors[len(items):], strict=True):
        y = np.asarray(delta_mu(x, m), dtype=float)
        curves.append(y)
        ax.plot(x, y, ls="--", lw=1.4, color=color,
                label=rf"$\delta_{{\mu}}(\varepsilon),\ \mu = {m:.4g}$")
    use_log = _spans_decades(np.concatenate(curves)) if log is None else bool(log)
    use_log = use_log or (log is None and ax.get_yscale() == "log")  # axes drawn into before
    if use_log:
        ax.set_yscale("log")
        positive = np.concatenate(curves)
        positive = positive[positive > 0]
        if positive.size:
            ax.set_ylim(max(positive.min() / 2, 1e-300), 1.5)
    else:
        ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(0.0, xmax)
    _finish(ax, r"$\varepsilon$", r"$\delta(\varepsilon)$", title, legend)
    return fig


def gdpt(
    *profiles: Any,
    measurements: Any = None,
    eps_max: float | None = None,
    n: int = 400,
    staircase: int | None = 20,
    cover: bool = True,
    tail: bool | float | Sequence[float | None] = True,
    labels: Sequence[str] | None = None,
    logx: bool = False,
    ax: Any = None,
    title: str | None = None,
    legend: str = "auto",
) -> Any:
    r"""GDPT curves :math:`G(\varepsilon)` with staircase bounds, measured bracket and tail.

    Args:
        *profiles: the profiles whose GDPT is drawn, as separate arguments or one sequence
            (pass the refined profile to see the curve a default
            :meth:`~symgdp.profile.Profile.measure` bounds).
        measurements: one ``Measurement`` or one per profile (``None`` entries allowed):
            its guaranteed bracket :math:`[\text{lower}, \text{upper}]` of
            :math:`\sup_{[0,\varepsilon_h]} G` is drawn as a band over the head, its
            ``argmax`` as a dot and its ``mu_tail`` as the tail asymptote.
        eps_max: right end of the axis; default :math:`\max(10, 3\,\text{argmax})`, at most
            the measured :math:`\varepsilon_h`.
        n: grid points of the curve.
        staircase: number of steps of the staircase bounds (theory §6) drawn over
            ``[0, eps_max]`` (``None`` or 0: none).  Every step is a guaranteed lower/upper
            bound of :math:`G` on its interval.
        cover: draw the upper bounds of :math:`G` that the measurement proved on each
            interval of its final cover (``Measurement.cover``, branch-and-bound only).
        tail: ``True`` draws :math:`\mu_{\text{tail}} = \lim G` as a dotted asymptote
            (from the measurement, else from :meth:`Profile.identify` when it decides);
            a number (or one per profile) draws that value; ``False`` draws none.
        labels: legend entries.
        logx: logarithmic :math:`\varepsilon` axis.
        ax: draw into this axes.
        title: optional title.
        legend: where the legend goes, never on the data by default: ``"auto"`` (right of
            a lone axes, below each panel of a figure with several), ``"outside"``,
            ``"below"``, ``"inside"`` or ``"none"``.

    Where :math:`\delta(\varepsilon) \ge 1` the GDPT is :math:`+\infty`: that range is
    shaded and the jump is marked with an arrow, and an upper step that is infinite is
    drawn at the top edge with an arrow, never silently left out.

    Returns:
        The matplotlib ``Figure``.  Each profile has its own colour; its staircase,
        bracket and tail share it.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> fig = gdpt(Profile(sympy.exp(-eps**2) / 2, name="A"), staircase=8, tail=0.7071,
        ...            eps_max=5)
        >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2]
        ['A', 'staircase bounds (8 steps)']
    """
    items = _series(profiles)
    _check_profiles(items, "gdpt")
    _check_legend(legend)
    if n < 2:
        raise DomainError(f"n must be at least 2, got {n!r}")
    names = _labels(items, labels)
    if measurements is None or not isinstance(measurements, (list, tuple)):
        meas = [measurements] + [None] * (len(items) - 1)
    else:
        meas = list(measurements)
    if len(meas) != len(items):
        raise DomainError(f"got {len(meas)} measurements for {len(items)} profiles")
    if isinstance(tail, (bool, np.bool_)):
        tails: list[Any] = [bool(tail)] * len(items)
    elif isinstance(tail, (int, float)):
        tails = [float(tail)] + [None] * (len(items) - 1)
    else:
        tails = list(tail)
        if len(tails) != len(items):
            raise DomainError(f"got {len(tails)} tail values for {len(items)} profiles")

    if eps_max is None:
        xmax = 10.0
        for m in meas:
            if m is not None:
                xmax = max(xmax, 3.0 * float(m.argmax or 0.0))
        heads = [float(m.eps_h) for m in meas if m is not None]
        if heads:
            xmax = min(xmax, max(heads))
    else:
        xmax = _check_range("eps_max", eps_max)
    x = np.geomspace(xmax * 1e-4, xmax, n) if logx else np.linspace(0.0, xmax, int(n))

    fig, ax = _axes(ax)
    colors = _colors(ax, len(items))
    ymax = 0.0
    jumps: list[tuple[float, float, Any]] = []  # (eps, finite G there, colour)
    at_top: list[tuple[np.ndarray, np.ndarray, Any, str]] = []  # infinite upper steps
    for k, (p, label, m, t, color) in enumerate(
            zip(items, names, meas, tails, colors, strict=True)):
        g = np.asarray(mu_gdp(x, log_delta=p.log_delta(x)), dtype=float)
        infinite = np.isposinf(g)
        g = np.where(np.isfinite(g), g, np.nan)
        ax.plot(x, g, lw=2.0, color=color, label=label)
        if np.any(np.isfinite(g)):
            ymax = max(ymax, float(np.nanmax(g)))
        for run, (i, j) in enumerate(_runs(infinite)):
            right = x[j] if j < len(x) else x[-1]
            ax.axvspan(x[i], right, color=color, alpha=0.12, lw=0,
                       label=(r"$G = \infty$ where $\delta(\varepsilon) \geq 1$"
                              if run == 0 else None))
            if j < len(x) and np.isfinite(g[j]):
                jumps.append((float(x[j]), float(g[j]), color))
        if staircase:
            steps = int(staircase)
            edges = np.linspace(0.0, xmax, steps + 1)
            ld = p.log_delta(edges)
            lo = np.asarray(mu_gdp(edges[:-1], log_delta=ld[1:]), dtype=float)
            up = np.asarray(mu_gdp(edges[1:], log_delta=ld[:-1]), dtype=float)
            at_top.append((edges, np.isposinf(up), color, "-"))
            up = np.where(np.isfinite(up), up, np.nan)
            ax.stairs(up, edges, color=color, lw=0.9, alpha=0.75, baseline=None,
                      label=f"staircase bounds ({steps} steps)" if k == 0 else None)
            ax.stairs(np.where(np.isfinite(lo), lo, np.nan), edges, color=color, lw=0.9,
                      alpha=0.75, baseline=None)
            finite = up[np.isfinite(up)]
            if finite.size:
                ymax = max(ymax, float(np.median(finite)))
        if m is not None and not math.isfinite(float(m.upper)):
            ax.plot([], [], color=color, ls="-.", lw=1.0,
                    label=rf"measured $\sup_{{[0,{float(m.eps_h):g}]}} G = \infty$")
        elif m is not None:
            lower, upper = float(m.lower), float(m.upper)
            head = min(float(m.eps_h), xmax)
            leaves = getattr(m, "cover", None) if cover else None
            if leaves is not None and len(leaves):
                leaves = np.asarray(leaves, dtype=float)
                leaves = leaves[np.argsort(leaves[:, 0])]
                shown = leaves[leaves[:, 0] < xmax]
                edges = np.append(shown[:, 0], shown[-1, 1])
                ax.stairs(np.where(np.isfinite(shown[:, 2]), shown[:, 2], np.nan), edges,
                          color=color, lw=0.8, ls="--", alpha=0.8, baseline=None,
                          label=f"measured upper bounds ({len(leaves)} intervals)")
                at_top.append((edges, np.isposinf(shown[:, 2]), color, "--"))
            lo_txt, up_txt = format_bracket(lower, upper)
            ax.fill_between([0.0, head], [lower] * 2, [upper] * 2, color=color, alpha=0.25)
            caveat = getattr(m, "headline_caveat", None)
            # a head bound that is not the mechanism's mu says so in its own legend entry
            only = " (head only:\nnot the mechanism's $\\mu$)" \
                if callable(caveat) and caveat() else ""
            ax.hlines([lower, upper], 0.0, head, colors=color, lw=1.0, ls="-.",
                      label=(rf"measured $\sup_{{[0,{float(m.eps_h):g}]}} G \in "
                             rf"[{lo_txt}, {up_txt}]$" + only))
            if m.argmax is not None and math.isfinite(lower):
                ax.plot([float(m.argmax)], [lower], "o", color=color, ms=5)
            if math.isfinite(upper):
                ymax = max(ymax, upper)
        mu_tail = _tail_value(p, m, t)
        if mu_tail is not None and math.isfinite(mu_tail):
            ax.axhline(mu_tail, color=color, ls=":", lw=1.4,
                       label=rf"tail limit $\lim\, G = {mu_tail:.4g}$")
            ymax = max(ymax, mu_tail)
        elif mu_tail is not None and mu_tail > 0:
            # nothing to draw at infinity, but the verdict belongs in the legend
            ax.plot([], [], color=color, ls=":", lw=1.4,
                    label=r"tail limit $\lim\, G = \infty$ (not GDP)")
    top = 1.15 * ymax if ymax > 0 else 1.0
    ax.set_ylim(0.0, top)
    _mark_infinite(ax, jumps, at_top, top)
    if logx:
        ax.set_xscale("log")
    else:
        ax.set_xlim(0.0, xmax)
    _finish(ax, r"$\varepsilon$",
            r"$G(\varepsilon) = \mu_{\mathrm{GDP}}(\varepsilon, \delta(\varepsilon))$", title,
            legend)
    return fig


def _mark_infinite(ax: Any, jumps: Sequence[tuple[float, float, Any]],
                   at_top: Sequence[tuple[np.ndarray, np.ndarray, Any, str]],
                   top: float) -> None:
    """Arrows where G jumps to +inf, and infinite upper steps drawn at the top edge."""
    for x0, g0, color in jumps:
        ax.annotate("", xy=(x0, 0.985 * top), xytext=(x0, g0),
                    arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.2,
                                "shrinkA": 0, "shrinkB": 0})
    labelled = False
    for edges, infinite, color, ls in at_top:
        for i in np.nonzero(infinite)[0]:
            a, b = float(edges[i]), float(edges[i + 1])
            ax.plot([a, b], [0.985 * top] * 2, color=color, lw=1.2, ls=ls, alpha=0.8)
            ax.plot([(a + b) / 2], [0.985 * top], marker="^", color=color, ms=5, ls="none",
                    label=None if labelled else r"upper bound $= \infty$ (at the top edge)")
            labelled = True


def _tail_value(p: Any, m: Any, t: Any) -> float | None:
    if t is None or t is False:
        return None
    if t is not True:
        return float(t)
    if m is not None and getattr(m, "mu_tail", None) is not None:
        return float(m.mu_tail)
    identify = getattr(p, "identify", None)
    if identify is None:
        return None
    try:
        return float(identify().mu_tail)
    except (AnalysisTimeout, NotImplementedError):
        return None  # undecided: draw no asymptote rather than a guessed one


def _profile_tradeoff(p: Any, alpha: np.ndarray, n_eps: int = 2000) -> np.ndarray:
    r"""sup over an eps grid of the trade-off curves f_{eps, delta(eps)} (pointwise max).

    A finite grid takes the sup over fewer (eps, delta(eps)) pairs, so the curve is a valid
    (slightly conservative: never above the exact one) trade-off function of the profile.
    """
    xmax = _auto_eps_max([p], level=1e-12)
    e = np.linspace(0.0, xmax, n_eps)
    d = np.exp(p.log_delta(e))[:, None]
    ee = np.exp(e)[:, None]
    a = alpha[None, :]
    with np.errstate(over="ignore"):
        f = np.maximum.reduce([np.zeros_like(d * a), 1.0 - d - ee * a, (1.0 - d - a) / ee])
    return f.max(axis=0)


def tradeoff(
    *curves: Any,
    mu: float | Sequence[float] | None = None,
    n: int = 400,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    title: str | None = None,
    legend: str = "auto",
) -> Any:
    r"""Trade-off (:math:`f`-DP) curves, type I error :math:`\alpha` vs type II error.

    Args:
        *curves: as separate arguments or one list: profiles (drawn as the trade-off
            function they imply, Dong, Roth & Su 2021, Proposition 2.12, with the supremum
            over a dense :math:`\varepsilon` grid, which is conservative), trade-off curves
            :math:`T(\alpha)` such as those of :mod:`symgdp.tradeoff` (any vectorised
            callable), ``(alpha, beta)`` pairs, or guaranteed bands
            (:class:`~symgdp.tradeoff.TradeoffBand`, drawn as a shaded region).
        mu: GDP parameters whose curves :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha)-\mu)`
            are drawn dashed for comparison; a bracket (a
            :class:`~symgdp.tradeoff.MuBracket`, or any object with finite ``lower`` and
            ``upper``) draws :math:`G_\mu` at both of its ends.
        n: points on the :math:`\alpha` axis.
        labels: legend entries for ``curves``.
        ax: draw into this axes.
        title: optional title.
        legend: where the legend goes, never on the data by default: ``"auto"`` (right of
            a lone axes, below each panel of a figure with several), ``"outside"``,
            ``"below"``, ``"inside"`` or ``"none"``.

    Returns:
        The matplotlib ``Figure`` (square axes on :math:`[0, 1]^2`, with the diagonal of
        perfect privacy).

    Example:
        >>> fig = tradeoff(mu=[0.5, 1.0])
        >>> len(fig.axes[0].lines)
        3
    """
    _check_legend(legend)
    if n < 2:
        raise DomainError(f"n must be at least 2, got {n!r}")
    alpha = np.linspace(0.0, 1.0, int(n))
    items = _series(curves, pairs=True)
    mus = _as_list(_bracket_ends(mu))
    if labels is not None and len(labels) != len(items):
        raise DomainError(f"got {len(labels)} labels for {len(items)} curves")
    fig, ax = _axes(ax, figsize=(6.6, 4.6))
    colors = _colors(ax, len(items) + len(mus))
    ax.plot([0, 1], [1, 0], color="0.6", lw=1.0, ls=":", label=r"$1 - \alpha$ (perfect privacy)")
    for i, c in enumerate(items):
        if isinstance(c, tuple) and len(c) == 2:
            a, b = (np.asarray(v, dtype=float) for v in c)
            if a.shape != b.shape:
                raise DomainError(f"alpha and beta of curve {i + 1} differ in shape: "
                                  f"{a.shape} vs {b.shape}")
            label = labels[i] if labels else f"curve {i + 1}"
        elif hasattr(c, "lower") and hasattr(c, "upper") and hasattr(c, "alpha"):
            ax.fill_between(np.atleast_1d(c.alpha), np.atleast_1d(c.lower),
                            np.atleast_1d(c.upper), color=colors[i], alpha=0.35, lw=1.0,
                            label=labels[i] if labels else f"band ({c.method})")
            # the edges opaque: a band narrower than a line still shows as a curve
            for edge in (c.lower, c.upper):
                ax.plot(np.atleast_1d(c.alpha), np.atleast_1d(edge), color=colors[i], lw=1.0)
            continue
        elif isinstance(c, Profile):
            a, b = alpha, _profile_tradeoff(c, alpha)
            label = labels[i] if labels else _profile_label(c, i)
        elif callable(c):
            a, b = alpha, np.asarray(c(alpha), dtype=float)
            label = labels[i] if labels else str(getattr(c, "name", None) or f"curve {i + 1}")
        else:
            raise DomainError(f"curve {i + 1} must be a Profile, a trade-off curve or an "
                              f"(alpha, beta) pair, got {type(c).__name__}")
        ax.plot(a, b, lw=2.0, color=colors[i], label=label)
    for m, color in zip(mus, colors[len(items):], strict=True):
        ax.plot(alpha, tradeoff_gdp(alpha, m), ls="--", lw=1.4, color=color,
                label=rf"$G_{{\mu}}$, $\mu = {m:.4g}$")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    _finish(ax, r"type I error $\alpha$", r"type II error $\beta$", title, legend)
    return fig


def composition(
    table: Any,
    x: Sequence[float] | None = None,
    *,
    deltas: Sequence[float] | None = None,
    xlabel: str = r"$\delta$",
    rows: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    logx: bool | None = None,
    logy: bool | None = None,
    ax: Any = None,
    title: str | None = None,
    legend: str = "auto",
) -> Any:
    r"""Composition bounds: :math:`\varepsilon` against :math:`\delta` (or against :math:`k`).

    Args:
        table: the table of :func:`symgdp.composition.table` as it is (its ``deltas`` are
            the abscissae), or any mapping from row name to values (one
            :math:`\varepsilon` per abscissa), then with ``deltas=`` or ``x``.  The rows
            of :data:`symgdp.composition.ROWS` are drawn with their human names
            (:data:`symgdp.composition.ROW_LABELS`) and fixed styles (:data:`ROW_STYLES`:
            colour-blind-safe colours, markers and line styles, the same in every
            figure); other rows get styles of their own.
        x: the abscissae (the numbers of steps :math:`k`, or the :math:`\delta` values).
        deltas: the :math:`\delta` values of a plain mapping (same as ``x``).
        xlabel: label of the abscissa (use ``"$k$"`` for a plot against the step count).
        rows: the rows to draw, in order (default: all), e.g.
            ``rows=["basic", "advanced", "optimal", "gdp_summary"]``.
        labels: overrides of row labels.
        logx, logy: logarithmic axes; by default when the data span more than two decades.
        ax: draw into this axes.
        title: optional title.
        legend: where the legend goes, never on the data by default: ``"auto"`` (right of
            a lone axes, below each panel of a figure with several), ``"outside"``,
            ``"below"``, ``"inside"``, ``"figure"`` (one legend for all panels of the
            figure, outside them: panels that show the same rows) or ``"none"``.

    Entries that are ``None`` or NaN (not computed) are left out of their row, and the
    legend says so; an infinite :math:`\varepsilon` (no guarantee at that :math:`\delta`)
    is marked with an arrow at the top edge.

    Returns:
        The matplotlib ``Figure``.

    Example:
        >>> fig = composition({"basic": [10.0, 10.0], "advanced": [8.1, 9.4]},
        ...                   deltas=[1e-6, 1e-10])
        >>> fig.axes[0].get_xscale()
        'log'
    """
    _check_legend(legend)
    if x is not None and deltas is not None:
        raise DomainError("give the abscissae once: x or deltas, not both")
    if x is None:
        x = deltas if deltas is not None else getattr(table, "deltas", None)
        if x is None:
            raise DomainError("composition() needs the abscissae: a table with .deltas, "
                              "or deltas= (or x=) for a plain mapping")
    xs = np.asarray(x, dtype=float)
    available = [str(r) for r in table]
    names = available if rows is None else list(rows)
    for r in names:
        if r not in available:
            raise DomainError(f"the table has no row {r!r}; rows are {sorted(available)}")
    fig, ax = _axes(ax)
    everything = []
    infinite_at: list[tuple[np.ndarray, Any]] = []
    extra = 0
    for r in names:
        ys = np.array([math.nan if v is None else float(v) for v in table[r]], dtype=float)
        if ys.shape != xs.shape:
            raise DomainError(f"row {r!r} has {ys.size} values for {xs.size} abscissae")
        label = (labels or {}).get(r, _row_label(r))
        if np.isnan(ys).any():
            label += " (not computed everywhere)" if np.isfinite(ys).any() \
                else " (not computed)"
        style = _row_style(r, extra)
        extra += r not in ROW_STYLES
        if np.isposinf(ys).any():
            infinite_at.append((xs[np.isposinf(ys)], style["color"]))
        ys = np.where(np.isfinite(ys), ys, np.nan)
        everything.append(ys)
        ax.plot(xs, ys, lw=1.4, ms=4.5, label=label, **style)
    if logx if logx is not None else _spans_decades(xs, 2.0):
        ax.set_xscale("log")
    if logy if logy is not None else _spans_decades(np.concatenate(everything), 2.0):
        ax.set_yscale("log")
    for where, color in infinite_at:
        ax.plot(where, [0.97] * len(where), "^", color=color, ms=7,
                transform=ax.get_xaxis_transform(), label=r"$\varepsilon = \infty$")
    _finish(ax, xlabel, r"$\varepsilon$", title, legend)
    return fig


def summary(rep: Any, *, eps_max: float | None = None,
            figsize: tuple[float, float] | None = None) -> Any:
    r"""Two panels for a :class:`~symgdp.report.Report`: the profiles and the GDPT.

    The left panel shows the naive and refined profiles with :math:`\delta_\mu` at the
    measured upper bound; the right one the GDPT of the measured profile with its
    staircase bounds, measured bracket and tail limit.  The report's cautions (a head
    bound that is not the mechanism's :math:`\mu`, a mechanism's validity range) are the
    figure's title.  ``figsize`` (inches; default 12 x 5.2) sets the size, e.g.
    ``(7, 3.8)`` for a double-column page; in a single column (narrower than 4.5 in) the
    panels are stacked.
    """
    if figsize is None:
        figsize = (12.0, 5.2)
    fig = _figure_class()(figsize=tuple(float(v) for v in figsize), layout="constrained")
    narrow = fig.get_size_inches()[0] < _NARROW
    left, right = fig.subplots(2, 1) if narrow else fig.subplots(1, 2)
    cautions = tuple(getattr(rep, "cautions", ()))
    if cautions:  # what the report says first, the figure says first
        import textwrap

        font = _font(fig)
        chars = max(30, int(fig.get_size_inches()[0] * 72 / (0.6 * font)))
        fig.suptitle("\n".join(textwrap.wrap("Caution: " + "; ".join(cautions), chars)),
                     color="firebrick", fontsize=font)
    items = [rep.profile.replace(name="naive profile")]
    if rep.refined is not None:
        items.append(rep.refined.replace(name="refined profile"))
    m = rep.measurement
    mus = [m.upper] if m is not None and math.isfinite(m.upper) and m.upper > 0 else None
    profiles(*items, mu=mus, eps_max=eps_max, ax=left, title="privacy profiles")
    measured = items[-1] if m is None or m.refined else items[0]
    if m is not None and getattr(m, "profile", None) is not None:
        measured = m.profile.replace(name=measured.name)
    tail = True
    if rep.is_gdp is None:
        tail = False  # the tail analysis did not decide; draw no asymptote
    elif rep.mu_tail is not None:
        tail = rep.mu_tail
    gdpt(measured, measurements=m, eps_max=eps_max, tail=tail, ax=right,
         title="GDP transformation")
    return fig


# -- planning: sweeps over parameter grids ---------------------------------------------------
__all__ += ["sweep", "sweep_map"]


def _sweep_column(records: Sequence[Mapping[str, Any]], name: str) -> np.ndarray:
    out = []
    for r in records:
        point = r.get("point", {})
        if name not in point:
            raise DomainError(f"the sweep has no parameter {name!r}; it has "
                              f"{sorted(point)}")
        out.append(float(_sweep_number(point[name])))
    return np.asarray(out, dtype=float)


def _sweep_label(name: str) -> str:
    """A parameter name as mathtext (``sigma`` as :math:`\\sigma`), else as given."""
    import sympy

    tex = f"${sympy.latex(sympy.Symbol(name))}$" if name.isidentifier() else name
    return tex if _mathtext_ok(tex) else name


def _sweep_number(v: Any) -> float:
    if isinstance(v, str):
        if v in ("inf", "-inf"):
            return float(v)
        from .parsing import parse_expression

        return float(parse_expression(v))
    return math.nan if v is None else float(v)


def _sweep_mu(records: Sequence[Mapping[str, Any]], key: str) -> np.ndarray:
    # failed points (error) and unknown values are NaN: drawn as gaps, never as a value
    return np.asarray([math.nan if r.get("error") else _sweep_number(r.get(key))
                       for r in records], dtype=float)


def sweep(
    records: Sequence[Mapping[str, Any]],
    x: str,
    *,
    by: str | None = None,
    ax: Any = None,
    logx: bool | None = None,
    logy: bool | None = None,
    target_mu: float | None = None,
    title: str | None = None,
) -> Any:
    r"""Measured :math:`\mu` against a swept parameter, the guaranteed bracket as a band.

    Args:
        records: the records of :func:`symgdp.sweep` (a ``SweepTable`` or records read
            back from its JSON-lines file).
        x: the parameter on the abscissa.
        by: a second parameter: one curve per value.
        ax: draw into this axes.
        logx, logy: logarithmic axes; by default when the data span more than two decades.
        target_mu: draw a horizontal line at this :math:`\mu` (e.g. a calibration target).
        title: optional title.

    Each curve is the band ``[mu_lower, mu_upper]`` with its upper end drawn as a line (the
    guarantee); failed points are gaps.

    Example:
        >>> recs = [{"point": {"sigma": s}, "mu_lower": 1 / s - 1e-6, "mu_upper": 1 / s,
        ...          "error": None} for s in (1.0, 2.0, 4.0)]
        >>> fig = sweep(recs, "sigma", target_mu=0.5)
        >>> len(fig.axes[0].lines)
        2
    """
    records = list(records)
    if not records:
        raise DomainError("the sweep has no records to plot")
    xs = _sweep_column(records, x)
    lo, up = _sweep_mu(records, "mu_lower"), _sweep_mu(records, "mu_upper")
    groups: list[tuple[str | None, np.ndarray]]
    if by is None:
        groups = [(None, np.ones(len(records), dtype=bool))]
    else:
        bs = _sweep_column(records, by)
        groups = [(f"{_sweep_label(by)} = {b:g}", bs == b) for b in np.unique(bs)]
    fig, ax = _axes(ax)
    for i, (label, sel) in enumerate(groups):
        order = np.argsort(xs[sel], kind="stable")
        gx, gl, gu = xs[sel][order], lo[sel][order], up[sel][order]
        color = PALETTE[i % len(PALETTE)]
        ax.fill_between(gx, gl, gu, color=color, alpha=0.25, lw=0)
        ax.plot(gx, gu, "-", color=color, lw=1.6, label=label)
    if target_mu is not None:
        ax.axhline(float(target_mu), color="0.3", ls="--", lw=1.0,
                   label=rf"target $\mu = {float(target_mu):g}$")
    if logx if logx is not None else _spans_decades(xs, 2.0):
        ax.set_xscale("log")
    finite = up[np.isfinite(up)]
    if logy if logy is not None else _spans_decades(finite, 2.0):
        ax.set_yscale("log")
    _finish(ax, _sweep_label(x), r"$\mu$ (guaranteed bracket)", title)
    return fig


def sweep_map(
    records: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    *,
    ax: Any = None,
    levels: Sequence[float] | None = None,
    title: str | None = None,
) -> Any:
    r"""A map of the guaranteed upper bound on :math:`\mu` over two swept parameters.

    Args:
        records: the records of a sweep over (at least) ``x`` and ``y`` on a full grid.
        x, y: the parameters on the two axes.
        ax: draw into this axes.
        levels: :math:`\mu` values to draw as labelled contour lines (e.g. ``[0.5, 1]``).
        title: optional title.

    The colours are filled contours of the upper bounds, interpolated linearly between
    the swept points (drawn as dots): a guarantee holds at the dots, the colour between
    them is a guide for the eye.  The axes span the swept ranges exactly (no cell
    reaches past the grid, so a positive parameter stays positive).  Failed points are
    gaps.  A parameter with a single value is drawn as one row (or column) of cells.

    Example:
        >>> recs = [{"point": {"A": a, "sigma": s}, "mu_lower": a / s - 1e-6,
        ...          "mu_upper": a / s, "error": None} for a in (1.0, 2.0) for s in (1.0, 2.0)]
        >>> fig = sweep_map(recs, "A", "sigma", levels=[1.0])
        >>> fig.axes[0].get_xlabel(), [float(v) for v in fig.axes[0].get_ylim()]
        ('$A$', [1.0, 2.0])
    """
    records = list(records)
    if not records:
        raise DomainError("the sweep has no records to plot")
    xs, ys = _sweep_column(records, x), _sweep_column(records, y)
    up = _sweep_mu(records, "mu_upper")
    ux, uy = np.unique(xs), np.unique(ys)
    z = np.full((uy.size, ux.size), np.nan)
    filled = np.zeros_like(z, dtype=bool)
    for xv, yv, u in zip(xs, ys, up, strict=True):
        i, j = np.searchsorted(uy, yv), np.searchsorted(ux, xv)
        if filled[i, j]:
            raise DomainError(f"several records at {x}={xv:g}, {y}={yv:g}: plot a slice of "
                              "the sweep (fix the other parameters)")
        filled[i, j] = True
        z[i, j] = u if np.isfinite(u) else np.nan
    fig, ax = _axes(ax, figsize=(6.4, 4.8))
    zm = np.ma.masked_invalid(z)
    finite = z[np.isfinite(z)]
    logx, logy = _spans_decades(ux, 2.0), _spans_decades(uy, 2.0)
    if ux.size >= 2 and uy.size >= 2 and finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        fill = np.linspace(lo, hi if hi > lo else lo + 1e-12, 33)
        mesh = ax.contourf(ux, uy, zm, levels=fill, cmap="viridis", extend="neither")
        ax.plot(*np.meshgrid(ux, uy), ls="none", marker=".", ms=2.5, color="white",
                alpha=0.8)
        ax.set_xlim(float(ux[0]), float(ux[-1]))
        ax.set_ylim(float(uy[0]), float(uy[-1]))
    else:
        mesh = ax.pcolormesh(ux, uy, zm, shading="nearest", cmap="viridis")
    font = _font(fig)
    bar = fig.colorbar(mesh, ax=ax)
    from matplotlib.ticker import MaxNLocator

    bar.locator = MaxNLocator(6)  # round values, not the (many) filled levels
    bar.update_ticks()
    bar.set_label(r"$\mu$ (upper bound at the dots)", fontsize=font)
    bar.ax.tick_params(labelsize=font - 1)
    if levels is not None and ux.size >= 2 and uy.size >= 2 and finite.size:
        wanted = sorted(float(v) for v in levels)
        cs = ax.contour(ux, uy, zm, levels=wanted, colors="white", linewidths=1.2)
        ax.clabel(cs, fmt=lambda v: rf"$\mu={v:g}$", fontsize=font - 1)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    _finish(ax, _sweep_label(x), _sweep_label(y), title)
    ax.grid(False)
    return fig
