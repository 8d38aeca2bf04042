"""The documentation site builds offline with ``mkdocs build --strict``.

Skipped (with the reason) when MkDocs or mkdocstrings is not installed -- they come with
``pip install -e '.[docs]'``.  The two MkDocs hooks that render symgdp's docstrings are
also unit-tested here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke  # the README quick check runs the docs examples

ROOT = Path(__file__).resolve().parents[2]


def load_hook(name: str):
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install -e '.[docs]')")
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_site_builds_strict(docs_build):
    # the build (mkdocs build --strict, asserted to succeed) is shared with
    # test_docs_browser.py through the docs_build fixture of tests/package/conftest.py
    site = docs_build
    for page in ["index.html", "tutorial/index.html", "theory/index.html",
                 "benchmarks/index.html", "cite/index.html", "architecture/index.html",
                 "reference/present/index.html"]:
        assert (site / page).exists(), page
    api = (site / "reference" / "present" / "index.html").read_text(encoding="utf-8")
    assert "symgdp.present.plot.gdpt" in api  # the reference is generated from the docstrings
    assert ":math:" not in api  # roles rendered for MathJax
    theory = (site / "theory" / "index.html").read_text(encoding="utf-8")
    assert "Liu, K. Sun, B. Jiang, L. Kong" in theory


def test_rst_roles_hook():
    hook = load_hook("rst_roles")
    html = ("<p>See :math:<code>\\mu</code> and :class:<code>~symgdp.profile.Profile</code>"
            "</p>\n<p>.. math::</p>\n<pre><code>x^2\n</code></pre>")
    out = hook.on_page_content(html)
    assert '<span class="arithmatex">\\(\\mu\\)</span>' in out
    assert "<code>Profile</code>" in out
    assert '<div class="arithmatex">\\[x^2\\]</div>' in out
    wrapped = ('<p>.. math::</p>\n<div class="highlight"><pre><span></span><code>  a_+\n'
               '  = b &gt; c\n</code></pre></div>\n<p>After.</p>')
    assert hook.on_page_content(wrapped) == ('<div class="arithmatex">\\[a_+\n  = b &gt; c\\]'
                                             '</div>\n<p>After.</p>')


def test_griffe_doctest_rewrite():
    pytest.importorskip("griffe", reason="griffe (mkdocstrings-python) is not installed")
    hook = load_hook("griffe_doctests")
    text = "Summary.\n\n>>> f(1)[0]\n2\n\nArgs:\n    x: y.\n\nExample:\n    >>> g()\n    3"
    out = hook.rewrite(text)
    assert "```pycon\n>>> f(1)[0]\n2\n```" in out
    assert "Examples:\n    >>> g()" in out and "```pycon\n    >>> g()" not in out
    # a formula right below ``.. math::`` or on its line becomes a code block (where
    # Markdown leaves its underscores alone); an already separated one stays as it is
    block = "Then\n\n.. math::\n    a_+ + b_{l'}\n\nDone."
    code = "Then\n\n.. math::\n\n    a_+ + b_{l'}\n\nDone."
    assert hook.rewrite(block) == code and hook.rewrite(code) == code
    inline = "* Item:\n\n  .. math:: x_+\n            = y_{j}.\n\n  After."
    assert hook.rewrite(inline) == "* Item:\n\n  .. math::\n\n      x_+\n      = y_{j}.\n\n  After."


@pytest.mark.slow
@pytest.mark.parametrize("page", ["getting-started.md", "tutorial.md"])
def test_python_in_the_guides_runs(page, tmp_path, monkeypatch):
    """The guides' Python blocks run in order, as a reader would paste them."""
    import contextlib
    import io
    import re

    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, re.S)
    assert code
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for block in code:
            exec(compile(block, page, "exec"), namespace)
    if page == "tutorial.md":
        # the values the tutorial quotes (c is checked against mpmath in test_report.py)
        assert f"{float(namespace['refined'].breakpoint):.8f}" in text
        assert f"{float(namespace['refined'].breakpoint_delta):.8f}" in text
        m = namespace["m"]
        assert m.upper - m.lower <= 1e-6 * (1 + 1e-9)
        assert (tmp_path / "walkthrough.png").exists() and (tmp_path / "tradeoff.png").exists()
