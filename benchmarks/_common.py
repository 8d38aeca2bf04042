"""Helpers shared by the benchmark scripts: the machine table and the marked sections of
``docs/benchmarks.md``.

Not a benchmark itself; the scripts import it as ``_common`` (run as
``python benchmarks/NAME.py``, their own folder is first on ``sys.path``).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"


def machine(versions: dict[str, str]) -> dict[str, str]:
    """CPU, cores, load at start and Python version, then ``versions`` (library name ->
    version, in the order given), then the date: the rows of a report's machine table."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = "n/a"
    if hasattr(os, "getloadavg"):
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "load (1/5/15 min) at start": load,
        "Python": platform.python_version(),
        **versions,
        "date (UTC)": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }


def write_section(section: str, start: str, end: str, path: Path = DOC) -> None:
    """Replace the section between the markers ``start`` and ``end`` (``section`` includes
    them) in ``path``, keeping every other section intact; append it when absent."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
