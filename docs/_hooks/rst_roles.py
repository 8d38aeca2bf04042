"""MkDocs hook: render the reStructuredText roles of symgdp's docstrings.

The docstrings follow the Google style with Sphinx-style roles (``:math:`\\mu```,
``:class:`~symgdp.profile.Profile```) and ``.. math::`` blocks, which Markdown leaves as
literal text.  After mkdocstrings has rendered a page, this hook turns them into
arithmatex spans for MathJax and into short code names.
"""

from __future__ import annotations

import html
import re
from typing import Any

_MATH_ROLE = re.compile(r":math:<code>(.*?)</code>", re.S)
_XREF_ROLE = re.compile(r":(?:class|func|meth|mod|data|exc|attr|obj):<code>~?([\w.]+)</code>")
# a formula as an indented code block, bare or as pymdownx.highlight wraps it
_MATH_BLOCK = re.compile(r'<p>\.\. math::</p>\s*(?:<div class="highlight">)?<pre>'
                         r"(?:<span></span>)?<code>(.*?)</code></pre>(?:</div>)?", re.S)
_MATH_BLOCK_INLINE = re.compile(r"<p>\.\. math::\s*(.*?)</p>", re.S)


def _display(body: str) -> str:
    return f'<div class="arithmatex">\\[{body.strip()}\\]</div>'


def on_page_content(content: str, **kwargs: Any) -> str:
    content = _MATH_BLOCK.sub(lambda m: _display(m.group(1)), content)
    content = _MATH_BLOCK_INLINE.sub(lambda m: _display(m.group(1)), content)
    content = _MATH_ROLE.sub(
        lambda m: f'<span class="arithmatex">\\({m.group(1)}\\)</span>', content)
    content = _XREF_ROLE.sub(
        lambda m: f"<code>{html.escape(m.group(1).rsplit('.', 1)[-1])}</code>", content)
    return content
