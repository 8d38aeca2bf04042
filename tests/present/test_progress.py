"""Progress of long stages: events reach a callback in order, tqdm bars open and close,
and a stage that fails still reports its end (no bar is left open)."""

from __future__ import annotations

import pytest

from symgdp import ProgressEvent
from symgdp.present.progress import TqdmProgress, as_callback, stage
from symgdp.present.report import report

PURE_DP_1 = "Max(0, (exp(1) - exp(eps))/(1 + exp(1)))"


def test_report_reports_each_stage_start_and_end():
    events: list[ProgressEvent] = []
    r = report(PURE_DP_1, eps_h=3.0, tol=1e-3, progress=events.append)
    starts = [e.stage for e in events if e.kind == "start"]
    ends = [e.stage for e in events if e.kind == "end"]
    assert starts == ends == ["refine", "identify", "measure"]
    for e in events:
        if e.kind == "end":
            assert e.seconds is not None and e.seconds >= 0
    assert str(events[0]) == "refining the profile"
    # every start comes before its end
    order = [(e.stage, e.kind) for e in events]
    for name in starts:
        assert order.index((name, "start")) < order.index((name, "end"))
    assert r.measurement is not None


def test_a_failing_stage_still_reports_its_end():
    events: list[ProgressEvent] = []
    with pytest.raises(ZeroDivisionError), stage(events.append, "measure", "m") as s:
        s.advance(3, 10)
        1 / 0  # noqa: B018
    assert [(e.kind, e.done, e.total) for e in events] == [
        ("start", None, None), ("advance", 3, 10), ("end", None, None)]
    assert str(events[1]) == "m (3/10)"


def test_tqdm_bars_open_and_close(capsys):
    bar = as_callback(True)
    assert isinstance(bar, TqdmProgress)
    with stage(bar, "measure", "measuring the head") as s:
        s.advance(5, 20)
        s.advance(20, 20)
        assert bar._bars["measure"].n == 20 and bar._bars["measure"].total == 20
    assert bar._bars == {}
    assert "measuring the head" in capsys.readouterr().err


@pytest.mark.parametrize("value", [None, False])
def test_no_progress_is_no_callback(value):
    assert as_callback(value) is None


def test_bad_progress_argument_names_it():
    with pytest.raises(TypeError, match="progress must be"):
        as_callback(42)
    with pytest.raises(ValueError, match="kind must be"):
        ProgressEvent("measure", "middle")


class _TTY(__import__("io").StringIO):
    def isatty(self) -> bool:
        return True


def test_cli_shows_a_warning_when_raised_on_a_terminal(monkeypatch):
    """A run predicted to be long warns before it starts: on a terminal the warning is on
    stderr at once (here before an interruption that ends the run), each message once."""
    import importlib
    import io
    import warnings

    from symgdp.cli.main import main

    def slow_report(*args, **kwargs):
        warnings.warn("predicted to take about 5 minutes", UserWarning, stacklevel=1)
        warnings.warn("predicted to take about 5 minutes", UserWarning, stacklevel=1)
        raise KeyboardInterrupt

    # the module (the package exports the function under the same name)
    monkeypatch.setattr(importlib.import_module("symgdp.present.report"), "report", slow_report)
    err = _TTY()
    assert main(["analyze", "exp(-eps**2)"], stdout=io.StringIO(), stderr=err) == 130
    text = err.getvalue()
    assert text.count("warning: predicted to take about 5 minutes") == 1
    assert text.index("warning:") < text.index("interrupted")
    # not a terminal: warnings come after the output, and only when the run ends normally
    err = io.StringIO()
    assert main(["analyze", "exp(-eps**2)"], stdout=io.StringIO(), stderr=err) == 130
    assert err.getvalue() == "symgdp: interrupted\n"


def test_measure_stage_reports_evaluation_counts():
    """Inside the measure stage the search's evaluation counts arrive as "advance" events,
    between the stage's start and end, never decreasing."""
    events: list[ProgressEvent] = []
    report("2*exp(-eps**2)", eps_h=50.0, tol=1e-6, progress=events.append)
    measure = [e for e in events if e.stage == "measure"]
    assert measure[0].kind == "start" and measure[-1].kind == "end"
    counts = [e.done for e in measure if e.kind == "advance"]
    assert counts and all(c > 0 for c in counts) and counts == sorted(counts)
