"""Paper-ready layout of the figures of symgdp.plot that the examples use.

Every figure function is rendered (Agg) at single-column (3.3 in) and double-column (7 in)
width, as one panel and in the multi-panel layouts of the examples, and the text is
checked geometrically: the window extents of legends, axis labels, tick labels and
titles (``artist.get_window_extent(renderer)`` after drawing the canvas) lie inside the
figure, no two legend / axis-label / title boxes overlap, and no tick label runs into
one of them.  A legend over an axis label, a title cut off at the edge or a legend entry
under the x label fails here.  (The data are made up: only the layout is tested; the
values drawn are tested against references in tests/test_plot.py.)
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
import sympy
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from symgdp import Profile, composition, eps, mechanisms, plot

SINGLE, DOUBLE = 3.3, 7.0
# a box may touch another or the figure's edge by this many pixels (anti-aliasing)
SLACK = 1.0


def boxes(fig):
    """(kind, name, bbox) of every piece of text the layout must keep apart."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    out = []

    def add(kind, name, artist):
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text():
            return
        out.append((kind, name, artist.get_window_extent(renderer)))

    for leg in fig.legends:
        add("block", "figure legend", leg)
    if fig._suptitle is not None:
        add("block", "suptitle", fig._suptitle)
    for i, ax in enumerate(fig.axes):
        add("block", f"axes {i} legend", ax.get_legend())
        add("block", f"axes {i} x label", ax.xaxis.label)
        add("block", f"axes {i} y label", ax.yaxis.label)
        for t in (ax.title, ax._left_title, ax._right_title):
            add("block", f"axes {i} title", t)
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                if not lo <= tick.get_loc() <= hi:
                    continue
                for label in (tick.label1, tick.label2):
                    add("tick", f"axes {i} tick {label.get_text()!r}", label)
    return out, fig.bbox


def assert_clean_layout(fig, legend=True):
    found, page = boxes(fig)
    assert not legend or any("legend" in name for _, name, _ in found)
    for _kind, name, b in found:
        assert (b.x0 >= page.x0 - SLACK and b.y0 >= page.y0 - SLACK
                and b.x1 <= page.x1 + SLACK and b.y1 <= page.y1 + SLACK), \
            f"{name} sticks out of the figure: {b} not in {page}"
    for (k1, n1, b1), (k2, n2, b2) in combinations(found, 2):
        if k1 == k2 == "tick":
            continue  # tick labels of one axis are spaced by the locator, not the layout
        assert not b1.padded(-SLACK).overlaps(b2.padded(-SLACK)), f"{n1} overlaps {n2}"


# -- data for the figures ------------------------------------------------------------------


@pytest.fixture(scope="module")
def measured():
    """Two measured profiles as in examples/gdpt_figure.py (coarse settings)."""
    lap = mechanisms.laplace(1.0)
    sgd = mechanisms.sgd_family(1.0, 1.25, 1.5)
    return [(lap, lap.measure(eps_h=10.0, tol=1e-3)),
            (sgd.refine(), sgd.measure(eps_h=10.0, tol=1e-3))]


def table_rows():
    """Every row of composition.table, with made-up decreasing values."""
    deltas = [1e-10, 1e-6, 1e-2]
    return {r: [8.0 - i * 0.4 - j for j in range(3)]
            for i, r in enumerate(composition.ROWS)}, deltas


def sweep_records():
    return [{"point": {"A": a, "sigma": s}, "mu_lower": a / s - 1e-6, "mu_upper": a / s,
             "error": None} for a in (1.0, 1.5, 2.0) for s in np.linspace(0.8, 4.0, 4)]


A = Profile(2 * sympy.exp(-(eps**2)), name="naive")
B = Profile(sympy.exp(-(eps**2)), name="refined")


def draw_profiles(ax, measured):
    plot.profiles(A, B, mu=[1.2], eps_max=3.0, n=40, ax=ax, title="SGD family")


def draw_gdpt(ax, measured):
    (p, m) = measured[1]
    plot.gdpt(p.replace(name="SGD family (refined)"), measurements=m, eps_max=5.0,
              staircase=6, n=40, ax=ax, title="SGD family")


def draw_tradeoff(ax, measured):
    plot.tradeoff(B, mu=[1.0], n=40, ax=ax)


def draw_composition(ax, measured):
    rows, deltas = table_rows()
    plot.composition(rows, deltas, ax=ax, title=r"$k = 50$ steps of $0.2$-DP")


def draw_sweep(ax, measured):
    plot.sweep(sweep_records(), "sigma", by="A", target_mu=1.0, ax=ax,
               title=r"$\mu$ of the SGD family")


def draw_sweep_map(ax, measured):
    plot.sweep_map(sweep_records(), "sigma", "A", levels=[0.5, 1.0], ax=ax,
                   title=r"upper bound on $\mu$")


ONE_PANEL = [draw_profiles, draw_gdpt, draw_tradeoff, draw_composition, draw_sweep,
             draw_sweep_map]


@pytest.mark.parametrize("width", [SINGLE, DOUBLE])
@pytest.mark.parametrize("draw", ONE_PANEL, ids=lambda f: f.__name__[5:])
def test_one_panel(draw, width, measured):
    height = 3.6 if width > 4 else 3.0
    if draw is draw_composition and width < 4:
        height = 5.5  # twelve rows in a column under a single-column plot
    fig = Figure(figsize=(width, height), layout="constrained")
    draw(fig.add_subplot(), measured)
    assert_clean_layout(fig, legend=draw is not draw_sweep_map)


def test_composition_panels_share_one_legend(measured):
    # the layout of examples/composition_figure.py at double-column width: all twelve
    # rows in one legend outside both panels
    rows, deltas = table_rows()
    fig = Figure(figsize=(DOUBLE, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot.composition(rows, deltas, ax=left, title="against $\\delta$", legend="figure")
    plot.composition(rows, [10, 50, 100], xlabel="$k$", ax=right, title="against $k$",
                     legend="figure")
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == len(composition.ROWS)
    assert_clean_layout(fig)


def test_composition_single_column_with_selected_rows(measured):
    rows, deltas = table_rows()
    fig = Figure(figsize=(SINGLE, 3.6), layout="constrained")
    plot.composition(rows, deltas, rows=["basic", "advanced", "optimal", "gdp_summary"],
                     ax=fig.add_subplot(), legend="figure")
    assert len(fig.legends[0].get_texts()) == 4
    assert_clean_layout(fig)


def test_gdpt_panels_at_double_column(measured):
    # examples/gdpt_figure.py: panels side by side, a legend below each (the x label
    # used to collide with the first entry)
    fig = Figure(figsize=(DOUBLE, 4.0), layout="constrained")
    for ax, (p, m) in zip(fig.subplots(1, 2), measured, strict=True):
        plot.gdpt(p.replace(name="refined"), measurements=m, eps_max=5.0, staircase=6, n=40,
                  ax=ax, title=p.name)
    assert_clean_layout(fig)


@pytest.mark.parametrize("width", [SINGLE, DOUBLE])
def test_planning_panels(width, measured):
    fig = Figure(figsize=(width, 3.0 if width > 4 else 5.0), layout="constrained")
    if width > 4:
        left, right = fig.subplots(1, 2)
    else:
        left, right = fig.subplots(2, 1)
    draw_sweep(left, measured)
    draw_sweep_map(right, measured)
    assert_clean_layout(fig)  # the sweep's legend


def test_sweep_map_stays_inside_the_grid():
    # examples/planning.py --small: two sigma values, 0.8 and 4.0; a cell drawn around
    # each point reached sigma = -0.8, a value never swept (and not a noise level)
    recs = [{"point": {"A": a, "sigma": s}, "mu_lower": a / s, "mu_upper": a / s,
             "error": None} for a in (1.0, 1.5, 2.0) for s in (0.8, 4.0)]
    fig = plot.sweep_map(recs, "sigma", "A")
    ax = fig.axes[0]
    assert [float(v) for v in ax.get_xlim()] == [0.8, 4.0]
    assert [float(v) for v in ax.get_ylim()] == [1.0, 2.0]


def test_pdf_output_embeds_truetype_fonts(tmp_path):
    # vector PDF for a paper: the fonts embedded as TrueType (Type 42), not Type 3
    rows, deltas = table_rows()
    fig = plot.composition(rows, deltas)
    path = tmp_path / "composition.pdf"
    plot.save(fig, path)
    pdf = path.read_bytes()
    assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf


def test_every_row_has_its_own_style():
    # no two rows of the table share colour and marker, nor colour and line style
    seen = set()
    for r in composition.ROWS:
        s = plot.ROW_STYLES[r]
        assert (s["color"], s["marker"]) not in seen
        seen.add((s["color"], s["marker"]))
    assert len({(s["color"], s["ls"]) for s in plot.ROW_STYLES.values()}) == len(plot.ROW_STYLES)
    fig = plot.composition(*table_rows())
    drawn = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in fig.axes[0].lines}
    assert len(drawn) == len(composition.ROWS)
    # basic and optimal were both blue circles
    basic, optimal = plot.ROW_STYLES["basic"], plot.ROW_STYLES["optimal"]
    assert basic["color"] != optimal["color"] and basic["marker"] != optimal["marker"]


@pytest.fixture(scope="module")
def head_only_report():
    """A report with a caution (a head bound that is not the mechanism's mu), as the
    walk-through draws it."""
    from symgdp.present.report import report

    return report(mechanisms.shuffle_sum(100, 1000), eps_h=10.0, tol=1e-3)


@pytest.mark.parametrize("size", [(SINGLE, 6.0), (DOUBLE, 4.0)])
def test_summary(size, head_only_report):
    fig = plot.summary(head_only_report, eps_max=5.0, figsize=size)
    assert fig._suptitle is not None  # the caution
    assert_clean_layout(fig)
