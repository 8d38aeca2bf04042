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

from symgdp.errors import AnalysisTimeout, DomainError
from symgdp.gaussian.vectorised import delta_mu, mu_gdp, tradeoff_gdp
from symgdp.numerics.decimals import format_bracket
from symgdp.present.style import (
    _NARROW,
    PALETTE,
    ROW_STYLES,
    _as_list,
    _auto_eps_max,
    _axes,
    _bracket_ends,
    _check_legend,
    _check_profiles,
    _check_range,
    _colors,
    _figure_class,
    _finish,
    _font,
    _labels,
    _mathtext_ok,
    _profile_label,
    _row_label,
    _row_style,
    _runs,
    _series,
    _spans_decades,
    save,
)
from symgdp.profile import Profile

__all__ = ["profiles", "gdpt", "tradeoff", "composition", "summary", "save", "PALETTE",
           "ROW_STYLES"]

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
        g = np.asarray(mu_gdp(x, log_delta=p.log_delta(x), rounding="nearest"), dtype=float)
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
            lo = np.asarray(mu_gdp(edges[:-1], log_delta=ld[1:], rounding="nearest"), dtype=float)
            up = np.asarray(mu_gdp(edges[1:], log_delta=ld[:-1], rounding="nearest"), dtype=float)
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
            :math:`T(\alpha)` such as those of :mod:`symgdp.notions.fdp` (any vectorised
            callable), ``(alpha, beta)`` pairs, or guaranteed bands
            (:class:`~symgdp.notions.fdp.TradeoffBand`, drawn as a shaded region).
        mu: GDP parameters whose curves :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha)-\mu)`
            are drawn dashed for comparison; a bracket (a
            :class:`~symgdp.notions.fdp.MuBracket`, or any object with finite ``lower`` and
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
        table: the table of :func:`symgdp.accounting.pure_dp.table` as it is (its ``deltas`` are
            the abscissae), or any mapping from row name to values (one
            :math:`\varepsilon` per abscissa), then with ``deltas=`` or ``x``.  The rows
            of :data:`symgdp.accounting.pure_dp.ROWS` are drawn with their human names
            (:data:`symgdp.accounting.pure_dp.ROW_LABELS`) and fixed styles (:data:`ROW_STYLES`:
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
    r"""Two panels for a :class:`~symgdp.present.report.Report`: the profiles and the GDPT.

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
        from symgdp.symbolic.parsing import parse_expression

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
