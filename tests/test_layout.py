"""The package layout reads as the pipeline: its imports have no cycle and point down.

Every module of ``symgdp`` is parsed with :mod:`ast` (nothing is imported), and every import
of another ``symgdp`` module is collected, whether at module level or inside a function.

* The graph of module-level imports must have no cycle.
* Every import -- module level or lazy, inside a function -- must point down the declared
  pipeline order below (to a module of the same or a lower layer), except the few lazy
  imports of :data:`ALLOWED_UP`, each with its reason.

A module missing from :data:`LAYERS` fails the test: a new module says where it sits.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "symgdp"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# The pipeline, lowest layer first.  A module may import modules of its own layer or of
# layers listed before it.  The numeric backends (gaussian, precise, interval) import
# nothing of the package but errors, so they sit below the profile, whose evaluation
# uses interval arithmetic for its precision fallbacks.
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("_bounded", "symbols", "progress"),            # progress: stdlib only
    ("parsing",),
    ("implicit",),                                 # the implicit root (imports errors only)
    ("precise", "gaussian", "interval"),           # the GDP family and its backends
    ("evaluate",),                                 # numeric evaluation of expressions
    ("profile",),                                  # the value object
    ("refine", "tail", "asymptotics"),             # symbolic stages
    ("formatting",),                               # outward-rounded printing of bounds
    ("firstorder", "measure"),                     # first-order bounds, measurement
    ("mechanisms", "composition", "conversions", "tradeoff", "amplify",
     "pld", "rdp", "dpsgd", "calibrate", "sweep",
     "risk", "audit", "group"),                     # risk/audit/group: not profile-bound
    ("plot", "report"),
    ("__init__",),                                 # re-exports the public names
    ("cli", "__main__"),
]

# Upward lazy imports that are part of the design, as (importer, function, imported).
ALLOWED_UP: dict[tuple[str, str, str], str] = {
    # Profile's thin pipeline methods: p.refine() etc. call the stage on the value object;
    # the stage is imported inside the method, so profile.py never loads it at import time.
    ("profile", "Profile.validate", "refine"): "pipeline method",
    ("profile", "Profile.refine", "refine"): "pipeline method",
    ("profile", "Profile.subsample", "refine"): "pipeline method",
    ("profile", "Profile.tail_limit", "tail"): "pipeline method",
    ("profile", "Profile.identify", "tail"): "pipeline method",
    ("profile", "Profile.measure", "measure"): "pipeline method",
    ("profile", "Profile.gdpt", "measure"): "pipeline method",
    ("profile", "Profile.from_pld", "pld"): "pipeline method",
    ("profile", "Profile.to_pld", "pld"): "pipeline method",
}


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(ROOT.glob("*.py"))}


def _target(importer: str, node: ast.ImportFrom | ast.Import, alias: ast.alias,
            known: set[str]) -> str | None:
    """The symgdp module an import loads (``__init__`` for the package), else None."""
    if isinstance(node, ast.Import):
        parts = alias.name.split(".")
        if parts[0] != PACKAGE:
            return None
        return parts[1] if len(parts) > 1 else "__init__"
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != PACKAGE:
            return None
        rest = parts[1:]
    elif node.level == 1:
        rest = node.module.split(".") if node.module else []
    else:  # pragma: no cover - the package has no subpackages
        raise AssertionError(f"{importer}: relative import of level {node.level}")
    if rest:
        return rest[0]
    # ``from . import name``: a submodule if there is one, else a name of __init__
    return alias.name if alias.name in known else "__init__"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def collect_imports(source: str, importer: str, known: set[str]
                    ) -> list[tuple[str, str | None, int]]:
    """(imported module, enclosing function qualname or None, line) for each import."""
    found: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST, scope: list[str], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    t = _target(importer, child, alias, known)
                    if t is not None and t != importer:
                        where = ".".join(scope) if in_function else None
                        found.append((t, where, child.lineno))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                # imports for type checkers only never run; the else branch does
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), scope, in_function)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, [*scope, child.name], True)
            elif isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name], in_function)
            else:
                visit(child, scope, in_function)

    visit(ast.parse(source), [], False)
    return found


def _graph() -> tuple[dict[str, list[tuple[str, str | None, int]]], set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: collect_imports(p.read_text(encoding="utf-8"), m, known)
            for m, p in mods.items()}, known


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                c = dfs(v)
                if c:
                    return c
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(edges):
        if u not in state:
            c = dfs(u)
            if c:
                return c
    return None


def layer_violations(imports: dict[str, list[tuple[str, str | None, int]]],
                     layers: list[tuple[str, ...]],
                     allowed: dict[tuple[str, str, str], str]) -> list[str]:
    """Imports that point up the declared order (and are not allowed), as messages."""
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    bad = []
    for importer, found in sorted(imports.items()):
        for target, where, line in found:
            if rank[target] <= rank[importer]:
                continue
            if where is not None and (importer, where, target) in allowed:
                continue
            kind = f"inside {where}" if where else "at module level"
            bad.append(f"{PACKAGE}/{importer}.py:{line} imports {target} {kind}, "
                       f"which sits higher in the pipeline")
    return bad


def test_every_module_is_placed_in_the_pipeline():
    mods = set(_modules())
    placed = {m for layer in LAYERS for m in layer}
    missing = sorted(mods - placed)
    assert not missing, (f"modules {missing} are not in tests/test_layout.py LAYERS: add each "
                         "to the layer of the pipeline where it belongs")
    dup = [m for m in placed if sum(m in layer for layer in LAYERS) > 1]
    assert not dup


def test_module_level_imports_have_no_cycle():
    imports, _ = _graph()
    edges = {m: {t for t, where, _ in found if where is None} for m, found in imports.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "module-level import cycle: " + " -> ".join(cycle)


def test_imports_point_down_the_pipeline():
    imports, known = _graph()
    if not set(known) <= {m for layer in LAYERS for m in layer}:
        pytest.skip("a module is not placed (see test_every_module_is_placed_in_the_pipeline)")
    bad = layer_violations(imports, LAYERS, ALLOWED_UP)
    assert not bad, "\n".join(bad)


def test_allow_list_is_current():
    """Every allowed upward import still exists (a stale entry would hide a new one)."""
    imports, _ = _graph()
    present = {(m, where, t) for m, found in imports.items() for t, where, _ in found}
    stale = sorted(k for k in ALLOWED_UP if k not in present)
    assert not stale, f"allow-list entries without their import: {stale}"


# -- the checker itself can fail: synthetic sources, judged by hand -------------------------

def test_checker_sees_lazy_and_module_level_imports():
    src = ("from .a import x\nimport symgdp.b\n"
           "class K:\n    def f(self):\n        from . import c\n"
           "def g():\n    from symgdp import name_of_init\n"
           "if TYPE_CHECKING:\n    from .d import y\nelse:\n    from .e import z\n")
    got = collect_imports(src, "m", {"a", "b", "c", "d", "e", "m"})
    # by hand: a and b at module level; c inside K.f; a name of __init__ inside g; d only
    # for type checkers (never run); e at module level
    assert got == [("a", None, 1), ("b", None, 2), ("c", "K.f", 5), ("__init__", "g", 7),
                   ("e", None, 11)]


def test_checker_reports_a_cycle_and_an_upward_import():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    layers = [("low",), ("high",)]
    imports = {"low": [("high", "f", 3)], "high": [("low", None, 1)]}
    assert len(layer_violations(imports, layers, {})) == 1
    assert layer_violations(imports, layers, {("low", "f", "high"): "why"}) == []


def test_sources_hold_no_control_characters():
    # a LaTeX docstring written through a non-raw string turns "\alpha" into BEL + "lpha"
    # ("\beta", "\varepsilon", "\tfrac", "\frac" alike): the rendered maths is garbled
    root = Path(__file__).resolve().parent.parent
    bad = []
    for path in sorted([*root.glob("symgdp/*.py"), *root.glob("benchmarks/*.py"),
                        *root.glob("examples/*.py"), *root.glob("tests/*.py")]):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(ord(ch) < 32 for ch in line):
                bad.append(f"{path.relative_to(root)}:{i}")
    assert not bad, bad
