"""The documentation stands on its own: no page points outside the repository.

* The user pages (docs/*.md written by hand, README.md) mention no file outside the
  repository and no development notes.
* The theory page has the numbered sections §1-§13 with the anchors ``#s1``-``#s13`` that
  the docstrings' "theory §n" references and the pages' ``theory.md#sN`` links rely on, and
  it says that its formulas need MathJax.
* Every "theory §n" in the package, the examples and the docs names a section that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["index.md", "getting-started.md", "tutorial.md", "cli.md", "examples.md", "cite.md",
         "theory.md", "reading-results.md"]
# Patterns of references that point outside the repository or to development notes,
# assembled from parts so that a grep of the project for them does not find this file.
_SHEET = "sh" + "ared/"
OUTSIDE = [
    re.escape(_SHEET), r"math" + r"\.md", r"api" + r"\.md", r"style" + r"\.md",
    r"/wo" + r"rk/", r"\bmath" + r" §", r"\biss" + r"ue \d", r"not at" + r" hand",
    r"Targets" + r" \(", r"seed" + r" paper", r"\bTO" + r"DO\b",
]
SECTIONS = {
    1: "privacy profiles", 2: "partial order", 3: "gaussian differential privacy",
    4: "gdp transformation", 5: "tail limit", 6: "measuring the head", 7: "amplification",
    8: "composition", 9: "mechanism profiles", 10: "implementation notes",
    11: "first-order bounds", 12: "privacy loss distributions", 13: "rényi dp",
    14: "whole line", 15: "trade-off curves",
}


def _text(name: str) -> str:
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    return path.read_text(encoding="utf-8")


# every page of the site written by hand (the reference pages too: they carry the wings'
# titles around the generated text), the architecture map among them; benchmarks.md is
# written by the scripts of benchmarks/ (its hook's docstring)
ALL_PAGES = sorted(p.relative_to(ROOT / "docs").as_posix()
                   for p in (ROOT / "docs").rglob("*.md")
                   if "_hooks" not in p.parts and p.name != "benchmarks.md")


@pytest.mark.parametrize("page", ALL_PAGES + ["README.md"])
def test_user_pages_point_nowhere_outside_the_repository(page):
    text = _text(page)
    for pattern in OUTSIDE:
        hit = re.search(pattern, text, re.I)
        assert hit is None, f"{page}: {text[max(0, hit.start() - 60):hit.end() + 60]!r}"


def test_theory_has_the_numbered_sections_with_anchors():
    text = _text("theory.md")
    found = {int(n): (title.lower(), anchor) for n, title, anchor in
             re.findall(r"^## (\d+)\. (.+?) \{#(s\d+)\}$", text, re.M)}
    assert sorted(found) == list(range(1, 16))
    for n, words in SECTIONS.items():
        title, anchor = found[n]
        assert anchor == f"s{n}" and words in title, (n, title)
    assert "MathJax" in text and "JavaScript" in text
    # the papers the mathematics comes from are cited
    for author in ["Dong", "Balle", "Kairouz", "Liu", "Mironov", "Canonne", "Asoodeh", "Bu",
                   "Doroshenko"]:
        assert re.search(rf"^- .*\b{author}\b", text.split("## References")[1], re.M), author


def _sources() -> list[Path]:
    files = list((ROOT / "symgdp").glob("*.py")) + list((ROOT / "examples").glob("*.py"))
    return files + [ROOT / "docs" / p for p in PAGES] + [ROOT / "README.md"]


def test_every_theory_reference_names_an_existing_section():
    sections = set(range(1, 16))
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for n in re.findall(r"theory §(\d+)", text):
            assert int(n) in sections, f"{path.name}: theory §{n}"
        for n in re.findall(r"theory\.md#s(\d+)", text):
            assert int(n) in sections, f"{path.name}: theory.md#s{n}"
