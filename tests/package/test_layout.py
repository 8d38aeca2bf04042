"""The package layout reads as the pipeline: its imports have no cycle and point down.

Every module of ``symgdp`` is parsed with :mod:`ast` (nothing is imported), and every import
of another ``symgdp`` module is collected, whether at module level or inside a function.

* Every import -- module level or lazy, inside a function -- must point down the declared
  pipeline order below (to a module of the same or a lower layer), and the whole graph,
  lazy imports included, has no cycle.
* No module is longer than a newcomer reads in one sitting (:data:`MAX_LINES`).
* The wings (subpackages) are rooms of one house: collapsed to its wings (and, inside a
  wing, to its sub-wings) the graph still has no cycle, no private (underscore) name is
  imported from another wing, no two modules share a name, and every wing's ``__init__``
  says in its docstring what the wing is for and what it exports.

A module missing from :data:`LAYERS` fails the test: a new module says where it sits.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

pytestmark = pytest.mark.smoke  # the README quick check runs this file

PACKAGE = "symgdp"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE
#: a file a newcomer can read in one sitting (the style guide's "~800 lines")
MAX_LINES = 900

# The pipeline, lowest layer first.  A module may import modules of its own layer or of
# layers listed before it.  Modules of a wing (a subpackage) are named with a dot
# (``measurement.search``); the wing's ``__init__`` is the wing's own name.  The numeric
# backends (gaussian, precise, interval) import nothing of the package but errors, so they
# sit below the profile, whose evaluation uses interval arithmetic for its precision
# fallbacks.  The symbolic stages and the measurement engine work on any profile-like
# object, so the value object :class:`~symgdp.profile.Profile`, whose pipeline methods
# call them, sits above them and nothing below imports it.
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("contracts",),  # the typed modes (Literal) and the numeric-source Protocol
    # symbolic: the language (symbols, budgets, safe parsing, step conditions, implicit roots)
    ("symbolic.symbols", "symbolic.budget", "symbolic.steps", "symbolic.implicit"),
    ("symbolic.parsing",),
    ("symbolic",),
    # shared numerics: directed rounding, exact balls, outward-rounded printing
    ("numerics.rounding",),
    ("numerics.balls", "numerics.decimals", "numerics.recursions", "numerics.bisection"),
    ("numerics",),
    # the GDP family: mpmath, float64 with its error bound, the scalar path, balls
    ("gaussian.precise",),
    ("gaussian.core",),
    ("gaussian.scalar",),
    ("gaussian.mu_fast",),  # the fast path of mu_gdp
    ("gaussian.vectorised", "gaussian.gdp_balls"),
    ("gaussian",),
    # evaluation of expressions: balls, float trust, float64 first
    ("evaluation.interval",),
    ("evaluation.trust",),
    ("evaluation.evaluate",),
    ("evaluation",),
    # other notions as input and output: RDP, zCDP, f-DP, bands, groups, conversions
    ("notions.common", "notions.bands"),
    ("notions.convexity", "notions.group", "notions.renyi"),
    ("notions.tradeoff_mu",),
    ("notions.rdp", "notions.tradeoff", "notions.conversions", "notions.fdp"),
    ("notions",),
    # refinement by the partial order, and what counts as a profile
    ("refinement.family",),
    ("refinement.validate", "refinement.utility"),
    ("refinement.refine",),
    ("refinement",),
    # the symbolic tail limit and the GDP verdict
    ("tail.asymptotics",),
    ("tail.weights",),
    ("tail.rules",),
    ("tail.limit",),
    ("tail",),
    # the measurement: symbolic preparation, Gaussian derivatives, the result type
    ("measurement.forms", "measurement.derivatives", "measurement.result"),
    ("measurement.structure", "measurement.series"),  # monotone structure, series test
    ("measurement.compiled",),                     # compiled ball functions
    ("measurement.firstorder",),                   # first-order interval tests
    ("measurement.search",),                       # the searches
    ("measurement.finalise",),                     # certification, float mode
    ("measurement.near_gaussian",),                # (nearly) Gaussian profiles, no search
    ("measurement.whole_line.implicit_tail",),     # the far tail of an implicit root
    ("measurement.whole_line.infinity_forms",),    # forms at infinity (tail enclosures)
    ("measurement.whole_line.certificate",),       # the whole line: tail certificate
    ("measurement.whole_line",),
    ("measurement.measure",),                      # the entry: measure(), gdpt()
    ("measurement",),
    # the PLD engine, below the profile
    ("pld.curves",),                               # a PLD's profile: a numeric source
    ("pld.head", "pld.pmf", "pld.connect"),        # head measurement; integer composition
    ("pld.onestep", "pld.kov"),                    # one certified step; exact KOV pieces
    ("pld",),
    ("profile",),                                  # the value object and its pipeline
    ("mechanisms",),                               # the catalogue
    # additive noise: a density in, a derived profile out
    ("noise.density",),
    ("noise.loss", "noise.check"),
    ("noise.discrete", "noise.gengauss", "noise.vector", "noise.student"),
    ("noise.additive", "noise.staircase"),
    ("noise",),
    # DP-SGD: Taylor-block tails, the engine, the bracket, the accountant
    ("training.tailblocks",),
    ("training.closed_form",),                      # q = 1 and Gaussian compositions: exact
    ("training.engine",),
    ("training.userlevel",),                        # user-level pair (mixture of Gaussians)
    ("training.allocation_floor",                   # max-statistic floor (shuffle, allocation)
     "training.allocation_upper"),                  # random allocation, amplified (certified)
    ("training.allocation_tight",),                 # random allocation: the attained pair's floor
    ("training.grids", "training.comparison"),      # automatic grid and tol; dp_accounting beside
    ("training.sampling", "training.symmetrised", "training.statement",  # sampling
     "training.upper"),                             # the result's numeric profiles
    ("training.dpsgd",),
    ("training.sigma", "training.event_route"),    # least noise; dp_accounting's events
    ("training.accountant",),
    ("training",),
    # composing mechanisms: dp_accounting's float route, certified, pure DP, events
    ("accounting.float_route", "accounting.eps_bracket", "accounting.subsampled_gaussian"),
    ("accounting.certified",),
    ("accounting.pure_dp", "accounting.events"),
    ("accounting",),
    # planning, attacks, presenting
    ("planning.amplify", "planning.calibrate"),
    ("planning.sweep",),
    ("planning",),
    ("attacks.risk", "attacks.audit"),
    ("attacks",),
    ("present.progress",),
    ("present.style",),
    ("present.plot", "present.report"),
    ("present",),
    ("__init__",),                                 # the facade: re-exports public names
    # the command line, one room per subcommand
    ("cli.shared",),
    ("cli.convert_command", "cli.dpsgd_command", "cli.risk_command"),
    ("cli.main",),
    ("cli", "__main__"),
]


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name below it (a wing's __init__ by the wing)."""
    out = {}
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT).with_suffix("").parts
        if rel[-1] == "__init__" and len(rel) > 1:
            rel = rel[:-1]
        out[".".join(rel)] = p
    return out


def _resolve(dotted: str, known: set[str]) -> str:
    """The longest known module that ``dotted`` (a path below the package) names."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in known:
            return ".".join(parts[:n])
    return "__init__"


def _target(importer: str, node: ast.ImportFrom | ast.Import, alias: ast.alias,
            known: set[str], is_package: bool = False) -> str | None:
    """The symgdp module an import loads (``__init__`` for the package), else None."""
    if isinstance(node, ast.Import):
        parts = alias.name.split(".")
        if parts[0] != PACKAGE:
            return None
        return _resolve(".".join(parts[1:]), known) if len(parts) > 1 else "__init__"
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != PACKAGE:
            return None
        base = parts[1:]
    else:
        # the package the importer lives in: a wing module's is its wing, a wing's
        # __init__ is the wing itself, a top-level module's is the package
        pkg = importer.split(".") if is_package else importer.split(".")[:-1]
        if importer == "__init__":
            pkg = []
        up = node.level - 1
        if up > len(pkg):
            raise AssertionError(f"{importer}: relative import beyond the package")
        pkg = pkg[:len(pkg) - up]
        base = [*pkg, *(node.module.split(".") if node.module else [])]
    if base:
        # ``from .wing import name``: the submodule wing.name if there is one
        sub = ".".join([*base, alias.name])
        return sub if sub in known else _resolve(".".join(base), known)
    # ``from . import name``: a submodule if there is one, else a name of __init__
    return alias.name if alias.name in known else "__init__"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def collect_imports(source: str, importer: str, known: set[str], is_package: bool = False
                    ) -> list[tuple[str, str | None, int]]:
    """(imported module, enclosing function qualname or None, line) for each import."""
    found: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST, scope: list[str], in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    t = _target(importer, child, alias, known, is_package)
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


@functools.cache
def _graph() -> tuple[dict[str, list[tuple[str, str | None, int]]], set[str]]:
    # parsed once per test process (about 1 s of CPU a time): three tests read the graph
    # and none of them changes it
    mods = _modules()
    known = set(mods)
    return {m: collect_imports(p.read_text(encoding="utf-8"), m, known,
                               p.name == "__init__.py" and m != "__init__")
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
                     layers: list[tuple[str, ...]]) -> list[str]:
    """Imports that point up the declared order, as messages."""
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    bad = []
    for importer, found in sorted(imports.items()):
        for target, where, line in found:
            if rank[target] <= rank[importer]:
                continue
            kind = f"inside {where}" if where else "at module level"
            bad.append(f"{PACKAGE}/{importer.replace('.', '/')}.py:{line} imports {target} "
                       f"{kind}, which sits higher in the pipeline")
    return bad


def test_every_module_is_placed_in_the_pipeline():
    mods = set(_modules())
    placed = {m for layer in LAYERS for m in layer}
    missing = sorted(mods - placed)
    assert not missing, (f"modules {missing} are not in tests/package/test_layout.py LAYERS: "
                         "add each "
                         "to the layer of the pipeline where it belongs")
    stale = sorted(placed - mods)
    assert not stale, f"LAYERS names modules that do not exist: {stale}"
    dup = [m for m in placed if sum(m in layer for layer in LAYERS) > 1]
    assert not dup


def test_no_import_cycle_at_all():
    """No circle, whether the imports run at module level or lazily inside a function."""
    imports, _ = _graph()
    edges = {m: {t for t, _, _ in found} for m, found in imports.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.slow
def test_imports_point_down_the_pipeline():
    imports, known = _graph()
    if not set(known) <= {m for layer in LAYERS for m in layer}:
        pytest.skip("a module is not placed (see test_every_module_is_placed_in_the_pipeline)")
    bad = layer_violations(imports, LAYERS)
    assert not bad, "\n".join(bad)


def collapsed(edges: dict[str, set[str]], depth: int) -> dict[str, set[str]]:
    """The graph with every module named by its first ``depth`` components (its wing at
    depth 1), self-loops dropped."""
    def cut(m: str) -> str:
        return ".".join(m.split(".")[:depth])
    out: dict[str, set[str]] = {}
    for u, vs in edges.items():
        out.setdefault(cut(u), set()).update(cut(v) for v in vs if cut(v) != cut(u))
    return out


def test_no_cycle_between_wings_at_any_depth():
    imports, _ = _graph()
    edges = {m: {t for t, _, _ in found} for m, found in imports.items()}
    depth = max(len(m.split(".")) for m in edges)
    for d in range(1, depth):
        cycle = find_cycle(collapsed(edges, d))
        assert cycle is None, f"import cycle between wings (depth {d}): " + " -> ".join(cycle)


def private_imports_across_wings(root: Path = ROOT) -> list[str]:
    """``from symgdp.<wing>... import _name`` written in a module of another wing."""
    bad = []
    for name, path in _modules().items():
        wing = name.split(".")[0] if "." in name or (path.name == "__init__.py") else name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and node.module.split(".")[0] == PACKAGE):
                continue
            parts = node.module.split(".")[1:]
            target_wing = parts[0] if parts else "__init__"
            if target_wing == wing:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    bad.append(f"{path.relative_to(root.parent)}:{node.lineno} imports "
                               f"{alias.name} from {node.module}")
    return bad


def test_no_private_name_crosses_a_wing():
    bad = private_imports_across_wings()
    assert not bad, ("a private name is another wing's toolkit: make it a public name of the "
                     "wing that owns it\n" + "\n".join(bad))


def test_no_two_modules_share_a_name():
    seen: dict[str, list[str]] = {}
    for name, path in _modules().items():
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.stem, []).append(name)
    dup = {k: v for k, v in seen.items() if len(v) > 1}
    assert not dup, f"modules that share a name: {dup}"


def test_every_wing_says_what_it_is_for_and_exports():
    for path in sorted(ROOT.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()) >= 3, f"{path}: the wing's docstring says what it is for"
        assert "xport" in doc, f"{path}: the wing's docstring says what it exports"


def test_a_handful_of_modules_at_the_top():
    top = sorted(p.stem for p in ROOT.glob("*.py"))
    assert top == ["__init__", "__main__", "contracts", "errors", "mechanisms", "profile"], top


def test_every_file_reads_in_one_sitting():
    long = {m: n for m, p in _modules().items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, (f"modules over {MAX_LINES} lines (split each where its docstring says "
                      f"'and'): {long}")


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
    assert len(layer_violations(imports, layers)) == 1
    assert layer_violations({"high": [("low", "f", 3)]}, layers) == []


def test_checker_resolves_imports_inside_wings():
    known = {"errors", "wing", "wing.a", "wing.b", "top"}
    src = ("from .b import x\nfrom ..errors import E\nfrom . import b\n"
           "from symgdp.wing.a import y\nimport symgdp.top\n")
    # by hand, for wing/a.py: wing.b, errors, wing.b, wing.a is itself (dropped), top
    assert collect_imports(src, "wing.a", known) == [
        ("wing.b", None, 1), ("errors", None, 2), ("wing.b", None, 3), ("top", None, 5)]
    # for wing/__init__.py (the wing itself): its own modules are one level down
    assert collect_imports("from .a import z\nfrom .. import top\n", "wing", known,
                           is_package=True) == [("wing.a", None, 1), ("top", None, 2)]


def test_checker_collapses_wings_and_sees_private_imports():
    # by hand: a.x -> b.y -> a.z is no module cycle but a cycle of the wings a and b
    edges = {"a.x": {"b.y"}, "b.y": {"a.z"}, "a.z": set()}
    assert find_cycle(edges) is None
    assert find_cycle(collapsed(edges, 1)) == ["a", "b", "a"]


def test_sources_hold_no_control_characters():
    # a LaTeX docstring written through a non-raw string turns "\alpha" into BEL + "lpha"
    # ("\beta", "\varepsilon", "\tfrac", "\frac" alike): the rendered maths is garbled
    root = Path(__file__).resolve().parents[2]
    bad = []
    for path in sorted([*root.glob("symgdp/**/*.py"), *root.glob("benchmarks/*.py"),
                        *root.glob("examples/*.py"), *root.glob("tests/**/*.py")]):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(ord(ch) < 32 for ch in line):
                bad.append(f"{path.relative_to(root)}:{i}")
    assert not bad, bad
