"""Griffe extension: render the doctest examples of symgdp's docstrings as code.

symgdp's docstrings title their doctest sections ``Example:``, which the Google-style
parser treats as an admonition (only ``Examples:`` is an examples section), and a few
docstrings put ``>>>`` lines in their description.  Rendered as Markdown, ``>>>`` becomes
nested block quotes and ``x[0][1]`` a reference link.  This extension renames the section
and fences stray doctest blocks as ``pycon`` before the docstrings are parsed.

It also turns every ``.. math::`` formula (on the directive's line, or indented right
below it: both valid reStructuredText) into a code block after the bare directive: left
as a paragraph, Markdown would read its ``_`` pairs as emphasis and ``{...}`` as
attributes; a code block reaches the ``rst_roles`` hook untouched, which hands it to
MathJax.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$")
_MATH = re.compile(r"^(\s*)\.\. math::\s*(.*?)\s*$")
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
        m = _MATH.match(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if m and (m.group(2) or nxt.strip()):
            # the formula (on the directive's line and/or the lines below, up to a blank
            # line) as a code block: the directive, a blank line, the formula indented
            indent, first = m.group(1), m.group(2)
            body = [first] if first else []
            i += 1
            while i < len(lines) and lines[i].strip():
                body.append(lines[i].strip())
                i += 1
            out += [f"{indent}.. math::", ""] + [f"{indent}    {b}" for b in body]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestExamples(griffe.Extension):
    """Apply :func:`rewrite` to every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
