"""Tests of symgdp.plot: figures render (Agg) and carry the right data.

References (each test says which): closed forms of the profiles drawn; delta_mu and G_mu
written here with scipy.stats.norm (theory §3); the GDPT of delta_mu is the constant mu
(theory §4); the staircase bounds of theory §6 checked against G evaluated with 40-digit
mpmath (symgdp.gaussian.precise); G_mu = sup_eps f_{eps, delta_mu(eps)} (Dong, Roth & Su 2021,
Prop. 2.12 / Cor. 2.13).
"""

from __future__ import annotations

import io
import math
import sys
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
import sympy
from matplotlib.collections import PolyCollection
from matplotlib.patches import StepPatch
from scipy.stats import norm

from symgdp import Profile, eps, plot
from symgdp.errors import DomainError
from symgdp.gaussian import precise as mp
from symgdp.present.report import format_bracket

SGD = Profile(sympy.Rational(5, 4) * sympy.exp(-sympy.Rational(9, 4) * eps**2))


def delta_mu_ref(e: np.ndarray, mu: float) -> np.ndarray:
    return norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2)


def gaussian_profile(mu: float) -> Profile:
    return Profile.parse("Phi(-eps/mu + mu/2) - exp(eps)*Phi(-eps/mu - mu/2)", {"mu": mu})


def render(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=40)  # draws every label: mathtext must parse
    return buf.getvalue()


INFINITE_G = r"$G = \infty$ where $\delta(\varepsilon) \geq 1$"
# where 5/4 e^{-9/4 eps^2} = 1: the naive SGD profile is vacuous (G = inf) below this
SGD_VACUOUS_TO = math.sqrt(math.log(1.25) / 2.25)


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


# -- profiles ------------------------------------------------------------------------------------


def test_profiles_draws_closed_forms_on_a_log_axis():
    """References: min(1, 2 e^{-eps^2}) and delta_mu from scipy.stats.norm."""
    p = Profile(2 * sympy.exp(-eps**2))
    fig = plot.profiles(p, mu=[0.5], eps_max=3.0, n=60)
    ax = fig.axes[0]
    naive, gdp = ax.lines
    x = naive.get_xdata()
    np.testing.assert_allclose(naive.get_ydata(), np.minimum(1.0, 2 * np.exp(-x**2)),
                               rtol=1e-13)
    np.testing.assert_allclose(gdp.get_ydata(), delta_mu_ref(x, 0.5), rtol=1e-6, atol=1e-15)
    assert ax.get_yscale() == "log" and ax.get_xlim() == (0.0, 3.0)
    assert legend_texts(ax)[0] == r"$\delta(\varepsilon) = 2 e^{- \varepsilon^{2}}$"
    assert ax.get_xlabel() == r"$\varepsilon$"
    assert render(fig)[:4] == b"\x89PNG"


def test_profiles_linear_axis_names_and_auto_range():
    p = Profile(sympy.exp(-eps / 10), name="slow")
    fig = plot.profiles(p, eps_max=1.0, n=20)
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and legend_texts(ax) == ["slow"]
    # default range: where every profile has dropped below 1e-8 (here 10 log(1e8) = 184 > 100)
    fig = plot.profiles(p, n=20)
    assert fig.axes[0].get_xlim()[1] == pytest.approx(100.0)


def test_profiles_rejects_bad_arguments():
    with pytest.raises(DomainError):
        plot.profiles()
    with pytest.raises(DomainError, match="2 labels for 1"):
        plot.profiles(SGD, labels=["a", "b"])
    with pytest.raises(DomainError, match="eps_max"):
        plot.profiles(SGD, eps_max=-1.0)


# -- GDPT ----------------------------------------------------------------------------------------


def test_gdpt_of_delta_mu_is_constant_mu():
    """Reference: theory §4, the GDPT maps delta_mu to the constant mu."""
    fig = plot.gdpt(gaussian_profile(1.0), eps_max=4.0, n=40, staircase=None, tail=False)
    (curve,) = fig.axes[0].lines
    np.testing.assert_allclose(curve.get_ydata()[1:], 1.0, rtol=1e-7)


def test_gdpt_staircase_brackets_the_gdpt():
    """Reference: G(eps) of 1.25 e^{-2.25 eps^2} with 40-digit mpmath (symgdp.gaussian.precise) at
    points inside every step must lie between the drawn lower and upper steps (theory §6)."""
    fig = plot.gdpt(SGD, eps_max=3.0, staircase=6, tail=False)
    ax = fig.axes[0]
    stairs = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert len(stairs) == 2
    up, edges, _ = stairs[0].get_data()
    lo, edges_lo, _ = stairs[1].get_data()
    np.testing.assert_array_equal(edges, edges_lo)
    np.testing.assert_allclose(edges, np.linspace(0, 3, 7))
    with mpmath.workdps(40):
        for i in range(6):
            for t in (0.1, 0.5, 0.9):
                e = mpmath.mpf(edges[i] + t * (edges[i + 1] - edges[i]))
                d = min(mpmath.mpf(5) / 4 * mpmath.exp(-mpmath.mpf(9) / 4 * e**2), 1)
                g = float(mp.mu_gdp(e, d, dps=40)) if d < 1 else math.inf
                assert lo[i] <= g * (1 + 1e-12)
                assert np.isnan(up[i]) or g <= up[i] * (1 + 1e-12)
    assert "staircase bounds (6 steps)" in legend_texts(ax)


def test_gdpt_draws_bracket_argmax_and_tail():
    m = SimpleNamespace(lower=0.7071, upper=0.70711, eps_h=20.0, argmax=1.5, mu_tail=0.6,
                        covers_tail=False)
    fig = plot.gdpt(SGD, measurements=m, staircase=None, n=30)
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 10.0)  # max(10, 3 argmax), at most eps_h
    (band,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(0.7071) and ys.max() == pytest.approx(0.70711)
    lo, up = format_bracket(0.7071, 0.70711)
    texts = legend_texts(ax)
    assert any(lo in t and up in t for t in texts)
    tail = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(tail) == 1 and tuple(tail[0].get_ydata()) == (0.6, 0.6)
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert dots[0].get_xdata()[0] == 1.5
    render(fig)


def test_gdpt_tail_infinite_or_off():
    m = SimpleNamespace(lower=1.0, upper=1.1, eps_h=5.0, argmax=5.0, mu_tail=math.inf,
                        covers_tail=False)
    fig = plot.gdpt(SGD, measurements=m, staircase=None, n=20)
    assert any("not GDP" in t for t in legend_texts(fig.axes[0]))
    fig = plot.gdpt(SGD, staircase=None, tail=False, n=20, labels=["x"])
    assert legend_texts(fig.axes[0]) == ["x", INFINITE_G]
    # a profile measured as given can have sup G = inf: said in the legend, no band drawn
    m = SimpleNamespace(lower=math.inf, upper=math.inf, eps_h=5.0, argmax=0.0, mu_tail=0.7,
                        covers_tail=False)
    fig = plot.gdpt(SGD, measurements=m, staircase=None, n=20)
    assert any("= \\infty" in t for t in legend_texts(fig.axes[0]))
    assert not [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    render(fig)


def test_gdpt_with_a_real_measurement_contains_closed_form_mu():
    """Reference: theory §3, the worst-case 1-DP profile is exactly mu-GDP,
    mu = 2 sqrt(2) erfinv(tanh(1/2)) (mpmath, 40 digits)."""
    p = Profile.parse("Max(0, (exp(1) - exp(eps))/(1 + exp(1)))")
    m = p.measure(eps_h=3.0, tol=1e-6)
    with mpmath.workdps(40):
        truth = float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(mpmath.mpf(1) / 2)))
    fig = plot.gdpt(p, measurements=m, staircase=8, n=50)
    (band,) = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() <= truth <= ys.max()
    render(fig)


def test_gdpt_draws_the_upper_bounds_the_measurement_proved():
    """Reference: G of the worst-case 1-DP profile, (e - e^eps)/(1 + e), with 40-digit mpmath
    (symgdp.gaussian.precise) at points inside each drawn interval must lie below its bound."""
    p = Profile.parse("Max(0, (exp(1) - exp(eps))/(1 + exp(1)))")
    m = p.measure(eps_h=3.0, tol=1e-4)
    if m.cover is None:
        pytest.skip("this measurement method keeps no cover")
    fig = plot.gdpt(p, measurements=m, staircase=None, eps_max=3.0, n=20)
    ax = fig.axes[0]
    (bounds,) = [s for s in ax.patches if isinstance(s, StepPatch)]
    u, edges, _ = bounds.get_data()
    assert any(t.startswith("measured upper bounds (") for t in legend_texts(ax))
    assert edges[0] == 0.0 and edges[-1] == pytest.approx(3.0)
    e1 = mpmath.e
    with mpmath.workdps(40):
        for i in range(0, len(u), max(1, len(u) // 25)):
            x = mpmath.mpf((edges[i] + edges[i + 1]) / 2)
            d = max((e1 - mpmath.exp(x)) / (1 + e1), 0)
            g = float(mp.mu_gdp(x, d, dps=40)) if d > 0 else 0.0
            assert np.isnan(u[i]) or g <= u[i] * (1 + 1e-9)
    render(fig)


def test_gdpt_argument_checks():
    with pytest.raises(DomainError, match="2 measurements for 1"):
        plot.gdpt(SGD, measurements=[None, None])
    with pytest.raises(DomainError, match="tail values"):
        plot.gdpt(SGD, SGD, tail=[0.5])


def test_gdpt_marks_where_g_is_infinite():
    """Reference: closed form, 5/4 e^{-9/4 eps^2} >= 1 exactly for eps <= sqrt(log(5/4)/(9/4)),
    where G = mu_GDP(eps, 1) = inf; an upper staircase step [x_i, x_{i+1}] is infinite exactly
    when delta(x_i) >= 1."""
    from matplotlib.patches import Rectangle
    from matplotlib.text import Annotation

    n, steps, xmax = 301, 10, 3.0
    fig = plot.gdpt(SGD, staircase=steps, eps_max=xmax, n=n, tail=False)
    ax = fig.axes[0]
    (span,) = [p for p in ax.patches if isinstance(p, Rectangle)]
    grid = xmax / (n - 1)
    assert span.get_x() == 0.0
    assert SGD_VACUOUS_TO <= span.get_x() + span.get_width() <= SGD_VACUOUS_TO + grid
    assert INFINITE_G in legend_texts(ax)
    # the jump to +inf is an arrow from the curve to the top edge at the end of the span
    (arrow,) = [c for c in ax.get_children() if isinstance(c, Annotation)]
    assert arrow.xy[0] == pytest.approx(span.get_x() + span.get_width())
    assert arrow.xy[1] == pytest.approx(0.985 * ax.get_ylim()[1])
    edges = np.linspace(0.0, xmax, steps + 1)
    infinite_steps = [(e[0] + e[1]) / 2 for e in zip(edges[:-1], edges[1:], strict=True)
                      if e[0] <= SGD_VACUOUS_TO]
    marks = [ln for ln in ax.lines if ln.get_marker() == "^"]
    assert sorted(float(m.get_xdata()[0]) for m in marks) == pytest.approx(infinite_steps)
    assert "upper bound $= \\infty$ (at the top edge)" in legend_texts(ax)
    render(fig)
    # a profile below 1 everywhere has nothing to mark
    fig = plot.gdpt(gaussian_profile(1.0), staircase=4, eps_max=3.0, n=20, tail=False)
    assert not [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert not [ln for ln in fig.axes[0].lines if ln.get_marker() == "^"]


# -- every function: one sequence or separate arguments, colours, legends ------------------


A = Profile(2 * sympy.exp(-eps**2), name="a")
B = Profile(sympy.exp(-eps**2 / 3), name="b")


def _xy(fig):
    return [(ln.get_xdata().tolist(), ln.get_ydata().tolist()) for ln in fig.axes[0].lines]


@pytest.mark.parametrize("func,kwargs", [
    (plot.profiles, {"eps_max": 3.0, "n": 30, "mu": [1.0]}),
    (plot.gdpt, {"eps_max": 3.0, "n": 30, "staircase": 4, "tail": False}),
    (plot.tradeoff, {"n": 30, "mu": [1.0]}),
])
def test_a_sequence_draws_the_same_as_separate_arguments(func, kwargs):
    separate = func(A, B, **kwargs)
    for seq in ([A, B], (A, B), iter([A, B])):
        np.testing.assert_equal(_xy(func(seq, **kwargs)), _xy(separate))
    assert legend_texts(func([A, B], **kwargs).axes[0]) == legend_texts(separate.axes[0])


@pytest.mark.parametrize("func", [plot.profiles, plot.gdpt])
def test_a_sequence_with_a_non_profile_names_it(func):
    with pytest.raises(DomainError, match="series 2 must be a Profile, got str"):
        func([A, "exp(-eps)"])
    with pytest.raises(DomainError, match="at least one"):
        func([])


def test_tradeoff_pair_is_one_curve_and_a_list_of_pairs_many():
    pair = (np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    assert len(plot.tradeoff(pair).axes[0].lines) == 2  # diagonal + the pair
    assert len(plot.tradeoff([pair, pair]).axes[0].lines) == 3


def test_every_series_has_its_own_colour():
    from matplotlib.colors import to_hex

    fig = plot.gdpt(A, B, Profile(sympy.exp(-eps**2 / 5)), eps_max=3.0, n=20, staircase=None,
                    tail=False)
    curves = [ln for ln in fig.axes[0].lines if len(ln.get_xdata()) == 20]
    assert len({to_hex(ln.get_color()) for ln in curves}) == 3
    fig = plot.profiles(A, B, mu=[0.5, 1.0], eps_max=3.0, n=20)
    assert len({to_hex(ln.get_color()) for ln in fig.axes[0].lines}) == 4
    # a second call into the same axes continues with new colours
    ax = fig.axes[0]
    plot.profiles(Profile(sympy.exp(-eps)), eps_max=3.0, n=20, ax=ax)
    assert len({to_hex(ln.get_color()) for ln in ax.lines}) == 5


@pytest.mark.parametrize("make", [
    lambda: plot.profiles(A, B, mu=[1.0], eps_max=3.0, n=20),
    lambda: plot.gdpt(A, B, eps_max=3.0, n=20, staircase=4, tail=[0.5, None]),
    lambda: plot.tradeoff(A, mu=[1.0], n=20),
    lambda: plot.composition({"basic": [3.0, 2.0], "optimal": [2.0, 1.0]}, deltas=[1e-6, 1e-3]),
])
def test_legend_sits_outside_the_data(make):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = make()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(ax.get_window_extent(renderer))


def test_legends_of_panels_go_below_and_clear_of_every_axes():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax in axes:
        plot.gdpt(A, B, eps_max=3.0, n=20, staircase=4, tail=[0.5, None], ax=ax)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in axes:
        box = ax.get_legend().get_window_extent(renderer)
        assert box.y1 <= ax.get_window_extent(renderer).y0  # below its panel
        assert not any(box.overlaps(other.get_window_extent(renderer)) for other in axes)


def test_legend_placement_choices():
    fig = plot.profiles(A, eps_max=2.0, n=10, legend="none")
    assert fig.axes[0].get_legend() is None
    fig = plot.profiles(A, eps_max=2.0, n=10, legend="inside")
    assert fig.axes[0].get_legend() is not None
    with pytest.raises(DomainError, match="legend must be one of"):
        plot.profiles(A, eps_max=2.0, legend="left")


# -- trade-off curves ------------------------------------------------------------------------


def test_tradeoff_gdp_curve_is_closed_form():
    """Reference: G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) with scipy.stats.norm."""
    fig = plot.tradeoff(mu=[1.0], n=101)
    ax = fig.axes[0]
    diagonal, g = ax.lines
    a = g.get_xdata()
    np.testing.assert_allclose(g.get_ydata(), norm.cdf(norm.ppf(1 - a) - 1.0), atol=1e-12)
    np.testing.assert_allclose(diagonal.get_ydata(), [1, 0])
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    render(fig)


def test_tradeoff_of_gaussian_profile_is_below_and_close_to_g_mu():
    """Reference: Dong, Roth & Su 2021, G_mu = sup_eps f_{eps, delta_mu(eps)}; a sup over a
    finite eps grid is conservative (never above) and close."""
    fig = plot.tradeoff(gaussian_profile(1.0), n=201)
    _, curve = fig.axes[0].lines
    a = curve.get_xdata()
    g = norm.cdf(norm.ppf(1 - a) - 1.0)
    f = curve.get_ydata()
    assert np.all(f <= g + 1e-9)
    assert np.max(g - f) < 0.01


def test_tradeoff_takes_curves_and_pairs():
    from symgdp import tradeoff as T

    rr = T.randomized_response(1.0)
    fig = plot.tradeoff(rr, (np.array([0, 1.0]), np.array([1.0, 0])), labels=["RR", "line"])
    _, c1, c2 = fig.axes[0].lines
    np.testing.assert_allclose(c1.get_ydata(), rr(c1.get_xdata()))
    assert legend_texts(fig.axes[0])[1:] == ["RR", "line"]
    with pytest.raises(DomainError, match="differ in shape"):
        plot.tradeoff((np.zeros(3), np.zeros(4)))
    with pytest.raises(DomainError, match="must be a Profile"):
        plot.tradeoff("not a curve")


# -- composition -----------------------------------------------------------------------------


def test_composition_rows_scales_and_labels():
    table = {"basic": [10.0, 10.0, 9.9], "optimal": [9.3, 6.9, 3.6]}
    deltas = [1e-12, 1e-6, 1e-2]
    fig = plot.composition(table, deltas)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    # the human names of symgdp.accounting.pure_dp.ROW_LABELS
    assert legend_texts(ax) == ["basic composition", "optimal (Kairouz, Oh & Viswanath)"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), table["optimal"])
    fig = plot.composition(table, [10, 20, 30], xlabel="$k$", rows=["optimal"])
    assert fig.axes[0].get_xscale() == "linear" and len(fig.axes[0].lines) == 1
    with pytest.raises(DomainError, match="no row 'gdp'"):
        plot.composition(table, deltas, rows=["gdp"])
    with pytest.raises(DomainError, match="3 values for 2"):
        plot.composition(table, [1e-6, 1e-3])
    with pytest.raises(DomainError, match="abscissae"):
        plot.composition(table)


class FrozenTable:
    """The interface of composition.table's result: mapping access by row name and
    .deltas (a stand-in written here, so the test does not depend on its implementation)."""

    def __init__(self, rows, deltas):
        self.rows, self.deltas, self.eps0, self.k = dict(rows), tuple(deltas), 0.2, 50

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, name):
        return self.rows[name]

    def __len__(self):
        return len(self.rows)


def test_composition_takes_a_table_object_as_is():
    t = FrozenTable({"basic": (10.0, 10.0), "rdp": (12.14, 17.17), "pld": (None, 3.0),
                     "clt": (float("inf"), 2.0)}, [1e-1, 1e-2])
    fig = plot.composition(t)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1e-1, 1e-2])
    texts = legend_texts(ax)
    assert texts[:2] == ["basic composition", "RDP, Mironov Cor. 1 (as in the GDPT paper)"]
    # (long labels are broken into lines)
    assert " ".join(texts[2].split()) == ("PLD (certified), randomized-response steps "
                                          "(not computed everywhere)")
    # infinite epsilon: an arrow at the top edge over its delta, not a silent gap
    (arrow,) = [ln for ln in ax.lines if ln.get_marker() == "^" and ln.get_linestyle() == "None"]
    assert arrow.get_xdata().tolist() == [1e-1]
    render(fig)
    with pytest.raises(DomainError, match="not both"):
        plot.composition({"basic": [1.0]}, [1e-3], deltas=[1e-3])


def test_composition_of_a_real_table_renders():
    from symgdp.accounting.pure_dp import ROWS, table

    t = table(0.5, 10, [1e-6, 1e-3], tol=1e-4)
    fig = plot.composition(t, deltas=[1e-6, 1e-3])
    assert len(fig.axes[0].lines) == len(ROWS)
    if hasattr(t, "deltas"):  # the table object carries its deltas
        assert len(plot.composition(t).axes[0].lines) == len(ROWS)
    render(fig)


# -- summary and plumbing ------------------------------------------------------------------------


def test_summary_of_a_report_has_two_panels():
    from symgdp.present.report import report

    r = report("Max(0, (exp(1) - exp(eps))/(1 + exp(1)))", eps_h=3.0, tol=1e-4)
    fig = plot.summary(r, eps_max=3.0)
    left, right = fig.axes
    assert left.get_title() == "privacy profiles" and right.get_title() == "GDP transformation"
    render(fig)


def test_drawing_into_given_axes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert plot.profiles(SGD, eps_max=2.0, n=10, ax=ax) is fig


def test_missing_matplotlib_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot.profiles(SGD, eps_max=2.0)
