r"""The house style of symgdp's figures, and the matplotlib plumbing behind them.

A colour-blind-safe palette (Okabe & Ito) with a fixed colour, marker and line style for
every row of a composition table (:data:`ROW_STYLES`), so that a series keeps its look in
every figure; legends placed outside the data and clear of the axis labels; fonts that
scale with the figure's width (single or double column); :func:`save`, which embeds
TrueType fonts in vector output.  The figures themselves are in :mod:`symgdp.present.plot`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from symgdp.errors import DomainError
from symgdp.profile import Profile

__all__ = ["save", "PALETTE", "ROW_STYLES"]


_FIGSIZE = (7.8, 4.2)
_FONT = 11
#: colour-blind-safe palette (Okabe & Ito, "Color universal design", 2008), in the order
#: the series of a figure take it; yellow is left out (unreadable on white)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#7F7F7F")
_BLUE, _VERMILLION, _GREEN, _PURPLE, _ORANGE, _SKY, _BLACK, _GREY = PALETTE
#: the fixed style of every row of :func:`symgdp.accounting.pure_dp.table` in :func:`composition`:
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
    """A composition row's human name (symgdp.accounting.pure_dp.ROW_LABELS), "mu" as mathtext."""
    import re

    from symgdp.accounting.pure_dp import ROW_LABELS

    return re.sub(r"\bmu\b", r"$\\mu$", ROW_LABELS.get(name, name))


def save(fig: Any, path: Any, **kwargs: Any) -> None:
    r"""Save ``fig`` (``fig.savefig(path, **kwargs)``) with the fonts embedded as TrueType
    (``pdf.fonttype`` and ``ps.fonttype`` 42, as publishers ask) and text kept as text in
    SVG: a ``.pdf`` path gives a vector figure for a paper.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from symgdp.present.plot import tradeoff
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


