"""The import contract: packages sit in layers, imports only go down, no package cycles, and the
interfaces reach the store only through acms.Index / the service layer.

An AST walk over src/acms (lazy imports inside functions count: they are dependencies too). A new
package must be given a layer here; docs/ARCHITECTURE.md draws the same layers.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import acms

SRC = Path(acms.__file__).parent

# Bottom to top. A package imports only from lower layers, except inside the foundation (modules with
# no acms dependency beyond each other, kept acyclic by the cycle check). Packages in one layer are
# independent of each other.
LAYERS: list[set[str]] = [
    {"errors", "vocab", "terms", "text_checks", "paths", "resources", "tokens", "config", "registry", "memory", "lifetime",
     "arrays", "removal"},  # foundation
    {"sparql"},                               # query catalog, binding, guard, custom functions
    {"store"},                                # GraphStore and its embedded implementation, lock, run marker
    {"index"},                                # keyword postings, vector matrix (derived caches)
    {"embeddings", "ranking"},                # providers; the first stage's ranking index
    {"validation", "privacy"},                # SHACL; secret detection and the at-rest policy
    {"ontology"},                             # UKO, extensions, rules, versioning
    {"ingest"},                               # walker, extractors, fragments, emit
    {"temporal", "decisions"},                # history, tiers, versions; plans, decisions, ADRs
    {"retrieval"},                            # Searcher, derived caches, embedding store
    {"assembly"},                             # budget, render, privacy modes, protocol, filters
    {"strategies"},                           # descriptors, registry, phase engines
    {"export"},                               # RDF and viewer formats
    {"service"},                              # sessions, the index run, the assembly
    {"api", "results"},                       # acms.Index; the types its operations return
    {"evaluation", "server", "mcp_server"},   # interfaces over acms.Index
    {"cli"},
    {"__init__", "__main__"},
]
INTERFACES = {"cli", "server", "evaluation", "mcp_server"}
# What an interface may import from the store package: types, not access.
STORE_TYPES = {"acms.store.protocol", "acms.store.layout"}
# What the CLI, the HTTP server and the MCP server may import besides their own package: the façade, the
# error tree, the types its operations return, the v0 wire format, and foundation helpers that hold no
# domain logic (settings, text checks, the shipped assets, the version). Anything else means the façade
# is missing an operation.
FRONT_ENDS = {"cli", "server", "mcp_server"}  # checked; they may import each other
FRONT_END_MAY_IMPORT = {
    "acms",                        # __version__
    "acms.api",                    # the façade
    "acms.errors",                 # the one error tree and its code table
    "acms.results",                # the types the façade's operations return
    "acms.assembly.protocol",      # the render_request / render_context_reply v0 wire format
    "acms.config",                 # Settings, and the sources they come from (acms config)
    "acms.paths",                  # the project's root and its index directory, found without the engine
    "acms.text_checks",            # argument and JSON input checks
    "acms.resources",              # shipped assets (the MCP server's instructions)
    "acms.tokens",                 # the tokenizer, loaded ahead by the commands sure to count (preload)
    "acms.memory",                 # the collector's thresholds a command runs at (no domain logic)
    "acms.evaluation.harness",     # acms eval: the evaluation interface the CLI fronts
    "acms.evaluation.context",
}
MAX_MODULE_LINES = 700


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0][:-3] if len(rel) == 1 else rel[0]


def _imports(path: Path) -> list[str]:
    """Every acms module a file imports, as dotted names (``from acms import x`` gives ``acms.x``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "acms" and not node.level:
            if node.module == "acms":
                out += [f"acms.{a.name}" for a in node.names if (SRC / a.name).is_dir() or (SRC / f"{a.name}.py").is_file()]
            else:
                out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("acms.")]
    return out


def edges() -> dict[tuple[str, str], list[str]]:
    """(from package, to package) -> the files making that import."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        source = _package_of(path)
        for module in _imports(path):
            target = module.split(".")[1]
            if target != source:
                found[(source, target)].append(str(path.relative_to(SRC)))
    return found


def layer_violations(found: dict[tuple[str, str], list[str]], layers: list[set[str]]) -> list[str]:
    level = {pkg: i for i, group in enumerate(layers) for pkg in group}
    bad = []
    for (source, target), files in sorted(found.items()):
        if level[target] > level[source] or (level[target] == level[source] and level[source] != 0):
            bad.append(f"{source} -> {target} ({', '.join(sorted(set(files)))})")
    return bad


def cycles(found: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in found:
        graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(set(graph) | {t for targets in graph.values() for t in targets}):
        if node not in index:
            visit(node)
    return out


def test_every_package_has_a_layer() -> None:
    packages = {_package_of(p) for p in SRC.rglob("*.py")}
    placed = set().union(*LAYERS)
    assert packages - placed == set(), "give the new package a layer in LAYERS (and docs/ARCHITECTURE.md)"
    assert placed - packages == set(), "LAYERS names a package that no longer exists"


def test_imports_only_go_down_the_layers() -> None:
    assert layer_violations(edges(), LAYERS) == []


def test_no_package_cycles() -> None:
    assert cycles(edges()) == []


def test_interfaces_reach_the_store_only_through_the_service_layer() -> None:
    bad = []
    for path in SRC.rglob("*.py"):
        if _package_of(path) in INTERFACES:
            bad += [f"{path.relative_to(SRC)}: {m}" for m in _imports(path)
                    if m.startswith("acms.store") and m not in STORE_TYPES]
    assert bad == []


def test_the_checks_catch_an_upward_import_and_a_cycle() -> None:
    """The contract can fail: a planted upward import and a planted cycle are reported."""
    found = dict(edges())
    found[("store", "service")] = ["store/oxigraph.py"]
    assert layer_violations(found, LAYERS) == ["store -> service (store/oxigraph.py)"]
    assert any({"service", "store"} <= set(component) for component in cycles(found))
    found = dict(edges())
    found[("temporal", "decisions")] = ["temporal/tiers.py"]  # siblings in one layer are independent
    assert layer_violations(found, LAYERS) == ["temporal -> decisions (temporal/tiers.py)"]


def test_no_module_above_the_store_reaches_through_to_pyoxigraph() -> None:
    """``grep -rn "\\.raw" src/acms`` finds it only under store/: everything above uses GraphStore."""
    found = [f"{p.relative_to(SRC)}:{n}" for p in SRC.rglob("*.py") if p.parent.name != "store" or p.parent.parent != SRC
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\.raw\b", line)]
    assert not found, found


CONCRETE_STORES = re.compile(r"\b(?:OxigraphStore|RemoteStore)\b")


def concrete_store_names(paths: list[Path] | None = None) -> list[str]:
    """Lines outside ``store/`` that name a concrete store (imports, ``isinstance``, docstrings alike)."""
    if paths is None:
        paths = [p for p in sorted(SRC.rglob("*.py")) if _package_of(p) != "store"]
    return [f"{p.name}:{n}" for p in paths
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if CONCRETE_STORES.search(line)]


def test_no_module_outside_the_store_names_a_concrete_store() -> None:
    """Callers ask a ``GraphStore`` for a capability (``SupportsStreamingSelect``, ``SupportsCheckpoint``,
    ...) and get one from ``acms.store.factory``; which class answers is the store package's business."""
    assert concrete_store_names() == []


def test_the_concrete_store_check_catches_a_name(tmp_path: Path) -> None:
    """The contract can fail: an isinstance check and a docstring naming a store are reported, a
    capability check is not."""
    planted = tmp_path / "planted.py"
    planted.write_text('"""Reads the RemoteStore\'s rows."""\nfrom acms.store.protocol import SupportsBulkLoad\n\n'
                       "def f(store):\n    return isinstance(store, SupportsBulkLoad) or "
                       "type(store).__name__ == 'OxigraphStore'\n", encoding="utf-8")
    assert concrete_store_names([planted]) == ["planted.py:1", "planted.py:5"]


ENGINE_RESULTS = re.compile(r"\b(?:QuerySolutions|QueryBoolean|QueryTriples)\b")
# The bounded query's runner and its child process evaluate with pyoxigraph themselves.
ENGINE_RESULTS_ALLOWED = {"sparql/runner.py", "sparql/child.py"}


def engine_result_names(paths: list[Path] | None = None) -> list[str]:
    """Lines outside ``store/`` (and the bounded query's process) naming pyoxigraph's result classes."""
    if paths is None:
        paths = [p for p in sorted(SRC.rglob("*.py")) if _package_of(p) != "store"
                 and str(p.relative_to(SRC)) not in ENGINE_RESULTS_ALLOWED]
    return [f"{p.name}:{n}" for p in paths
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ENGINE_RESULTS.search(line)]


def test_query_results_reach_callers_in_the_protocols_own_types() -> None:
    """``query_raw`` answers in ``SelectResult`` / ``AskResult`` / ``GraphResult``: only ``store/``
    knows pyoxigraph's result objects, so a caller never depends on one engine."""
    assert engine_result_names() == []


def test_the_engine_result_check_catches_a_name(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("import pyoxigraph as ox\n\ndef f(r):\n    return isinstance(r, ox.QueryBoolean)\n",
                       encoding="utf-8")
    assert engine_result_names([planted]) == ["planted.py:4"]


def front_end_imports(paths: list[Path] | None = None) -> list[str]:
    """Imports of the CLI, the HTTP server and the MCP server beyond their own packages and the allowed list."""
    paths = paths if paths is not None else [p for p in sorted(SRC.rglob("*.py")) if _package_of(p) in FRONT_ENDS]
    return [f"{path.name}: {module}" for path in paths for module in _imports(path)
            if module.split(".")[1] not in FRONT_ENDS and module not in FRONT_END_MAY_IMPORT]


def test_front_ends_reach_the_domain_only_through_the_facade() -> None:
    """If an interface needs a domain package, the façade is missing an operation."""
    assert front_end_imports() == []


def test_the_front_end_check_catches_a_domain_import(tmp_path: Path) -> None:
    """The contract can fail: a domain import (lazy ones too) is reported, the façade's is not."""
    planted = tmp_path / "planted.py"
    planted.write_text("from acms.api import Index\n\ndef f():\n    from acms.temporal import tiers\n",
                       encoding="utf-8")
    assert front_end_imports([planted]) == ["planted.py: acms.temporal"]


INDEX_RUN = SRC / "service" / "indexing"


def sibling_imports(package: Path, dotted: str) -> dict[str, list[tuple[str, bool]]]:
    """Module -> (sibling it imports, whether inside a function) for the modules of ``package`` (imported
    as ``dotted``): the package itself is ``__init__``; ``from package import name`` is an import of the
    submodule when one is called ``name``, else of ``__init__``. ``TYPE_CHECKING`` imports count: they
    must not hide a cycle."""
    modules = {p.stem for p in package.glob("*.py")}
    found: dict[str, list[tuple[str, bool]]] = {m: [] for m in modules}

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            return [n[len(dotted) + 1:].split(".")[0] if n != dotted else "__init__"
                    for n in names if n == dotted or n.startswith(dotted + ".")]
        module = node.module or ""
        if node.level:  # relative: from . import x / from .x import y
            module = dotted + ("." + module if module else "")
        if module == dotted:
            return [a.name if a.name in modules else "__init__" for a in node.names]
        if module.startswith(dotted + "."):
            return [module[len(dotted) + 1:].split(".")[0]]
        return []

    def walk(node: ast.AST, module: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found[module] += [(t, in_function) for t in targets(child) if t != module]
            walk(child, module, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    for path in sorted(package.glob("*.py")):
        walk(ast.parse(path.read_text(encoding="utf-8")), path.stem, False)
    return found


def ring_problems(found: dict[str, list[tuple[str, bool]]]) -> list[str]:
    """Sibling imports inside functions (how a ring is hidden), and the cycles among the modules."""
    bad = [f"{m} imports {t} inside a function" for m, imports in sorted(found.items()) for t, inner in imports if inner]
    graph = {(m, t): [m] for m, imports in found.items() for t, _ in imports}
    bad += [f"cycle among {', '.join(c)}" for c in cycles(graph)]
    return bad


def test_the_index_run_package_has_no_import_ring() -> None:
    """The write modes import the run context, the orchestrator imports the modes, at module level."""
    found = sibling_imports(INDEX_RUN, "acms.service.indexing")
    assert {"context", "run", "batch", "stream", "reindex", "child", "after_files"} <= set(found)
    assert ring_problems(found) == []


def test_the_ring_check_catches_a_cycle_and_a_function_local_import(tmp_path: Path) -> None:
    """The contract can fail: a mode that imports the orchestrator inside a function is reported, as
    a function-local import and as the cycle it hides; an import under ``TYPE_CHECKING`` closes one too."""
    package = tmp_path / "acms" / "service" / "planted"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from acms.service.planted.run import go\n", encoding="utf-8")
    (package / "context.py").write_text("class Context: ...\n", encoding="utf-8")
    (package / "run.py").write_text("from acms.service.planted import mode\n"
                                    "from acms.service.planted.context import Context\n", encoding="utf-8")
    (package / "mode.py").write_text("from typing import TYPE_CHECKING\n"
                                     "from acms.service.planted.context import Context\n"
                                     "if TYPE_CHECKING:\n    from acms.service.planted import run\n"
                                     "def write():\n    from .run import go\n", encoding="utf-8")
    assert ring_problems(sibling_imports(package, "acms.service.planted")) == [
        "mode imports run inside a function", "cycle among mode, run"]
    (package / "mode.py").write_text("from acms.service.planted.context import Context\n", encoding="utf-8")
    assert ring_problems(sibling_imports(package, "acms.service.planted")) == []


def test_no_module_is_over_700_lines() -> None:
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"split these modules (at most {MAX_MODULE_LINES} lines): {long}"


def test_each_interface_maps_errors_in_one_place() -> None:
    """The CLI exits only in its boundary, the server sets no error status outside its mapping, and the
    MCP tools raise their tool error in one wrapper (``grep`` as a test: each finding names its line)."""
    rules = [("cli", re.compile(r"\bsys\.exit\(|SystemExit\(|ctx\.exit\("), {"cli/common.py"}),
             ("server", re.compile(r"status_code=[45]\d\d|\b(?:status|http_status)\s*=\s*[45]\d\d"), set()),
             ("mcp_server", re.compile(r"\bToolError\("), set())]
    found = []
    for package, pattern, allowed in rules:
        for path in sorted((SRC / package).rglob("*.py")):
            rel = str(path.relative_to(SRC))
            hits = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
            if package == "mcp_server" and len(hits) <= 1 and rel == "mcp_server/tools.py":
                continue
            if rel not in allowed:
                found += [f"{rel}:{n}" for n in hits]
    assert found == []
