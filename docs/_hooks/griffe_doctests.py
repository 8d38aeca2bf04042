"""Griffe extension: render the doctest examples of symgdp's docstrings as code.

symgdp's docstrings title their doctest sections ``Example:``, which the Google-style
parser treats as an admonition (only ``Examples:`` is an examples section), and a few
docstrings put ``>>>`` lines in their description.  Rendered as Markdown, ``>>>`` becomes
nested block quotes and ``x[0][1]`` a reference link.  This extension renames the section
and fences stray doctest blocks as ``pycon`` before the docstrings are parsed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$")
_SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")


def rewrite(text: str) -> str:
    """The docstring with ``Example:`` renamed and stray doctest blocks fenced."""
    lines = [_EXAMPLE.sub(r"\1Examples:", line) for line in text.splitlines()]
    out: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _SECTION.match(line)
        if m and not m.group(1):
            section = m.group(2).lower()
        if line.lstrip().startswith(">>>") and section != "examples":
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestExamples(griffe.Extension):
    """Apply :func:`rewrite` to every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
