"""tree-sitter languages: symbols per language on small fixtures with known names, kinds, lines and
bases; edges across files (a Go call within a package, TypeScript and JavaScript imports, Java and
C# inheritance...); the indexed graph (shapes, ``path::Qualified.name``, stats) and history."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.config import load_settings
from acms.decisions.records import resolve_entity
from acms.ingest.extractors import extract
from acms.ingest.fragments import MACRO, code_fragments, code_key
from acms.ingest.model import Edge, Extraction, SourceFile
from acms.ingest.resolve import resolve_edges
from acms.ingest.spans import has_spans, spans_for
from acms.ingest.ts_extractor import extract_tree_sitter, module_name
from acms.ingest.ts_languages import languages, loaded, problem
from acms.ingest.walker import language_for
from acms.service.indexing import index_project
from acms.store.oxigraph import OxigraphStore

from ..temporal.gitrepo import commit, git

PROJECT = Path(__file__).parents[1] / "fixtures" / "polyglot_project"
PATHS = sorted(p.relative_to(PROJECT).as_posix() for p in PROJECT.rglob("*") if p.is_file())


def extraction(path: str) -> Extraction:
    text = (PROJECT / path).read_text()
    ext, fragments = extract(SourceFile(path, text, len(text), "0" * 64, language_for(path)), set(PATHS), 40)
    assert ext is not None and fragments
    return ext


@pytest.fixture(scope="module")
def project() -> dict[str, Extraction]:
    return {p: extraction(p) for p in PATHS}


def test_every_configured_language_loads_its_grammar_and_captures() -> None:
    assert {"go", "javascript", "typescript", "tsx", "rust", "java", "c", "cpp", "csharp", "ruby", "php"} <= set(languages())
    for name in languages():
        assert loaded(name) is not None, f"{name}: {problem(name)}"
    assert loaded("cobol") is None  # not configured: the file stays text


# (path, qualified name, kind, start, end, bases) of definitions each fixture must yield; a definition
# starts at the comment block right above it (its doc comment), as a Python one at its decorators
SYMBOLS = {
    "go": ("shapes/shape.go", [
        ("shapes.shape.Shape", "Interface", 8, 11, []),
        ("shapes.shape.Circle", "Struct", 13, 17, ["Base"]),
        ("shapes.shape.Circle.Area", "Method", 19, 22, []),
        ("shapes.shape.NewCircle", "Function", 24, 29, []),
    ]),
    "typescript": ("web/app.ts", [
        ("web.app.Widget", "Interface", 3, 5, []),
        ("web.app.Widget.render", "Method", 4, 4, []),
        ("web.app.Mode", "Enum", 7, 7, []),
        ("web.app.Button", "Class", 9, 16, ["BaseWidget", "Widget"]),
        ("web.app.Button.render", "Method", 12, 14, []),
        ("web.app.makeButton", "Function", 20, 22, []),
    ]),
    "rust": ("rs/lib.rs", [
        ("rs.lib.Point", "Struct", 3, 7, ["Norm"]),  # doc comment included; "impl Norm for Point"
        ("rs.lib.Norm", "Trait", 9, 11, []),
        ("rs.lib.Axis", "Enum", 13, 13, []),
        ("rs.lib.Point.new", "Method", 16, 18, []),
        ("rs.lib.Point.Norm", "Namespace", 21, 25, []),  # the block "impl Norm for Point"
        ("rs.lib.Point.Norm.norm", "Method", 22, 24, []),  # the trait names it
        ("rs.lib.hypot", "Function", 27, 29, []),
    ]),
    "java": ("src/main/java/com/ex/Square.java", [
        ("src.main.java.com.ex.Square.Square", "Class", 5, 14, ["Shape"]),
        ("src.main.java.com.ex.Square.Square.area", "Method", 10, 11, []),  # its annotation included
        ("src.main.java.com.ex.Square.Square.Corner", "Enum", 13, 13, []),
    ]),
    "javascript": ("js/Client.js", [
        ("js.Client.Client", "Function", 5, 8, []),
        ("js.Client.Client.request", "Method", 10, 13, []),  # Client.prototype.request = function request
        ("js.Client.Client.send", "Method", 15, 17, []),
        ("js.Client.create", "Function", 19, 21, []),  # module.exports = function create
    ]),
    "c": ("c/point.c", [("c.point_c.point_norm", "Function", 4, 7, []), ("c.point_c.square", "Function", 9, 9, [])]),
    "cpp": ("cpp/shape.cpp", [
        ("cpp.shape.geo.Shape", "Class", 5, 8, []),
        ("cpp.shape.geo.Rect", "Class", 10, 14, ["Shape"]),
        ("cpp.shape.geo.Rect.area", "Method", 18, 18, []),  # the definition, not the declaration in the class
    ]),
    "csharp": ("cs/Geo.cs", [
        ("cs.Geo.Geo.IShape", "Interface", 4, 4, []),
        ("cs.Geo.Geo.Circle", "Class", 6, 10, ["IShape"]),
        ("cs.Geo.Geo.Circle.Area", "Method", 8, 8, []),
        ("cs.Geo.Geo.Point", "Struct", 12, 12, []),
    ]),
    "ruby": ("rb/shape.rb", [
        ("rb.shape.Geo", "Class", 3, 14, []),
        ("rb.shape.Geo.Circle", "Class", 5, 13, ["Shape"]),
        ("rb.shape.Geo.Circle.area", "Method", 10, 12, []),
    ]),
    "php": ("php/User.php", [
        ("php.User.Named", "Interface", 4, 4, []),
        ("php.User.Greets", "Trait", 6, 6, []),
        ("php.User.User", "Class", 8, 11, ["Named", "Greets"]),
        ("php.User.User.name", "Method", 10, 10, []),
        ("php.User.clean", "Function", 13, 13, []),
    ]),
}


@pytest.mark.parametrize("language", sorted(SYMBOLS))
def test_symbols_by_name_kind_lines_and_bases(language: str, project: dict[str, Extraction]) -> None:
    path, expected = SYMBOLS[language]
    ext = project[path]
    assert ext.language == language_for(path) and ext.parse_error is None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.bases) for s in ext.symbols}
    for qualname, kind, start, end, bases in expected:
        assert got.get(qualname) == (kind, start, end, bases), qualname
    module = next(s for s in ext.symbols if s.kind.value == "Module")
    assert module.qualname == ext.module and all(s.parent in got for s in ext.symbols if s is not module)


def test_signatures_and_doc_comments(project: dict[str, Extraction]) -> None:
    sym = {s.qualname: s for e in project.values() for s in e.symbols}
    assert sym["shapes.shape.Circle.Area"].signature == "func (c *Circle) Area() float64"
    assert sym["shapes.shape.Circle.Area"].docstring == "Area of the circle."
    assert sym["shapes.shape.Circle"].docstring == "Circle is a round Shape."
    assert sym["web.app.Button"].docstring == "A button that renders itself."
    assert sym["js.Client.Client"].docstring == "Create a client."
    assert sym["rs.lib.Point"].docstring == "A point on the plane."
    assert sym["c.point_c.point_norm"].docstring == "Length of the vector."
    assert sym["rs.lib.Norm.norm"].signature == "fn norm(&self) -> f64"


def test_calls_and_imports_as_written(project: dict[str, Extraction]) -> None:
    sym = {s.qualname: s for e in project.values() for s in e.symbols}
    assert sym["shapes.shape.NewCircle"].calls == ["fmt.Println", "c.Describe"]
    assert sym["web.app.Button.render"].calls == ["this.label", "clamp"]
    assert sym["src.main.java.com.ex.Square.Square.area"].calls == ["Geometry.times"]
    assert sym["php.User.Greets.greet"].calls == ["this.name"]
    assert [(i.module, i.name, i.alias) for i in project["web/app.ts"].imports] == [("./util", "clamp", "clamp")]
    assert [(i.module, i.alias) for i in project["js/Client.js"].imports] == [("./utils", "utils")]
    assert [i.module for i in project["shapes/shape.go"].imports] == ["fmt", "math"]


def test_module_names_follow_paths_and_keep_the_extension_on_a_clash() -> None:
    assert module_name("binding/json.go", {"binding/json.go"}) == "binding.json"
    assert module_name("c/point.c", set(PATHS)) == "c.point_c" and module_name("c/point.h", set(PATHS)) == "c.point_h"


EXPECTED_EDGES = {
    # a Go call across two files of one package, a method call on a value of unknown type, embedding
    Edge("shapes.shape.Circle.Area", "calls", "shapes.util.square"),
    Edge("shapes.shape.NewCircle", "calls", "shapes.util.Base.Describe"),
    Edge("shapes.shape.Circle", "inherits", "shapes.util.Base"),
    # imports: TypeScript named import, JavaScript require, Ruby require_relative, C #include
    Edge("web.app", "imports", "web.util"),
    Edge("web.app.Button.render", "calls", "web.util.clamp"),
    Edge("web.app.Button.render", "calls", "web.app.Button.label"),
    Edge("web.app.Button", "inherits", "web.app.Widget"),
    Edge("js.Client", "imports", "js.utils"),
    Edge("js.Client.Client.request", "calls", "js.utils.forEach"),
    Edge("js.Client.Client.request", "calls", "js.Client.Client.send"),
    Edge("rb.shape", "imports", "rb.helpers"),
    Edge("rb.shape.Geo.Circle.area", "calls", "rb.helpers.Helpers.square"),
    Edge("c.point_c", "imports", "c.point_h"),
    # the same package without an import (Java), a type's static member, namespaces
    Edge("src.main.java.com.ex.Square.Square", "inherits", "src.main.java.com.ex.Shape.Shape"),
    Edge("src.main.java.com.ex.Square.Square.area", "calls", "src.main.java.com.ex.Geometry.Geometry.times"),
    Edge("cpp.shape.geo.Rect", "inherits", "cpp.shape.geo.Shape"),
    Edge("cs.Geo.Geo.Circle", "inherits", "cs.Geo.Geo.IShape"),
    Edge("rs.lib.Point", "inherits", "rs.lib.Norm"),
    Edge("rs.lib.Point.Norm.norm", "calls", "rs.lib.hypot"),
    Edge("php.User.User", "inherits", "php.User.Greets"),
}


def test_edges_resolve_across_files_and_never_across_languages(project: dict[str, Extraction]) -> None:
    known = {s.qualname: s.kind.value for e in project.values() for s in e.symbols}
    edges = set(resolve_edges(project, known, PATHS))
    assert EXPECTED_EDGES <= edges, sorted(EXPECTED_EDGES - edges)
    module_of = {s.qualname: e.module for e in project.values() for s in e.symbols}
    family = {e.module: languages()[e.language].kin for e in project.values()}
    assert all(family[module_of[e.source]] == family[module_of[e.target]] for e in edges)
    # "fmt.Println", "Math.min", "strtoupper": nothing of the project, so no edge
    assert not any(e.target.endswith((".Println", ".min", ".strtoupper")) for e in edges)


def test_an_ambiguous_name_is_dropped_not_guessed(project: dict[str, Extraction]) -> None:
    moved = lambda name: name.replace("shapes.util", "shapes.twin")  # noqa: E731
    twin = Extraction("go", "shapes.twin", symbols=[
        dataclasses.replace(s, qualname=moved(s.qualname), parent=s.parent and moved(s.parent))
        for s in project["shapes/util.go"].symbols])
    exts = {**project, "shapes/twin.go": twin}
    known = {s.qualname: s.kind.value for e in exts.values() for s in e.symbols}
    edges = set(resolve_edges(exts, known, [*PATHS, "shapes/twin.go"]))
    assert not any(e.source == "shapes.shape.Circle.Area" and e.kind == "calls" for e in edges)  # square twice


def test_a_file_tree_sitter_cannot_read_still_gets_a_module() -> None:
    ext = extract_tree_sitter("x.go", "package x\nfunc (", "go", "x")
    assert ext is not None and [s.qualname for s in ext.symbols] == ["x"]


def test_spans_for_history_match_the_extraction() -> None:
    text = (PROJECT / "shapes/shape.go").read_text()
    spans = {s.qualname: (s.kind, s.start, s.end) for s in spans_for("shapes/shape.go", text, PATHS)}
    assert spans["shapes.shape.Circle.Area"] == ("Method", 19, 22) and "shapes.shape" not in spans
    assert has_spans("a.go") and has_spans("a.py") and not has_spans("README.md")


# ---------------------------------------------------------------------------------------- indexed
@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("poly") / "polyglot"
    shutil.copytree(PROJECT, root)
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        index_project(root, store, load_settings(root))  # validated against the shapes on the way in
    finally:
        store.close()
    return root


@pytest.fixture
def store(indexed: Path) -> Iterator[OxigraphStore]:
    opened = OxigraphStore.open_existing(indexed / ".acms" / "graph")
    yield opened
    opened.close()


def pairs(store: OxigraphStore, predicate: str) -> set[tuple[str, str]]:
    rows = store.select(f"""SELECT ?a ?b WHERE {{ GRAPH ?g {{ ?s uko:{predicate} ?o . ?s uko:qualifiedName ?a }}
                            GRAPH ?g2 {{ ?o uko:qualifiedName ?b }} }}""")
    return {(r["a"].value, r["b"].value) for r in rows}


def test_indexed_entities_have_the_new_classes_and_edges(store: OxigraphStore) -> None:
    assert ("shapes.shape.Circle.Area", "shapes.util.square") in pairs(store, "calls")
    assert ("rs.lib.Point", "rs.lib.Norm") in pairs(store, "inherits")
    assert ("web.app", "web.util") in pairs(store, "imports")
    rows = store.select("SELECT DISTINCT ?k WHERE { GRAPH ?g { ?s uko:qualifiedName ?q ; a ?k } }")
    kinds = {r["k"].value.rsplit("#", 1)[1] for r in rows}
    assert {"Struct", "Interface", "Trait", "Enum", "Class", "Function", "Method", "Module"} <= kinds


def test_a_members_iri_is_its_definers_a_dot_and_its_name(store: OxigraphStore) -> None:
    """What overrides-down.rq builds a subclass's namesake from, in every language: the definer's IRI, a
    dot and the name, or for a method implemented for a trait (Rust) the trait's name between. Modules
    and files inherit nothing (a module's definitions inside a namespace carry it between)."""
    rows = store.select("""SELECT ?c ?m ?name (GROUP_CONCAT(?base) AS ?bases) WHERE {
                             GRAPH ?g { ?c uko:defines ?m . ?m uko:name ?name . ?c a ?kind }
                             FILTER(?kind NOT IN (uko:Module, uko:File))
                             OPTIONAL { GRAPH ?g2 { ?c uko:inherits ?b } GRAPH ?g3 { ?b uko:name ?base } } }
                           GROUP BY ?c ?m ?name""")
    assert len({r["c"].value for r in rows}) > 10

    def forms(c: str, name: str, bases: str) -> set[str]:
        return {f"{c}.{quote(name, safe='')}"} | {f"{c}.{quote(b, safe='')}.{quote(name, safe='')}" for b in bases.split()}

    assert [(r["c"].value, r["m"].value) for r in rows
            if r["m"].value not in forms(r["c"].value, r["name"].value, r["bases"].value if "bases" in r else "")] == []
    assert any("." in r["m"].value[len(r["c"].value) + 1:] for r in rows)  # the Rust form is among them


RUST_TESTS = """pub fn trim(line: &str) -> &str {
    line.trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_both_ends() {
        assert_eq!(trim(" a "), "a");
    }
}
"""


def test_a_rust_inline_module_is_a_namespace_that_defines_what_is_in_it() -> None:
    """``mod tests { ... }`` is an entity (uko:Namespace) of its own lines: a change to the tests of a
    file is a change to it, and its outline lists the tests; what it holds keeps its qualified name."""
    ext, fragments = extract(SourceFile("src/text.rs", RUST_TESTS, len(RUST_TESTS), "0" * 64, "rust"), {"src/text.rs"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.parent) for s in ext.symbols}
    assert got["src.text.tests"] == ("Namespace", 5, 13, "src.text")  # with its #[cfg(test)] attribute
    assert got["src.text.tests.trims_both_ends"] == ("Function", 9, 12, "src.text.tests")
    assert got["src.text.trim"] == ("Function", 1, 3, "src.text")
    outline = next(f.text for f in fragments if f.owner.endswith("tests") and f.lod == "macro")
    assert outline.splitlines() == ["mod tests", "    fn trims_both_ends()"]


@pytest.mark.parametrize("key, qualname", [
    ("shapes/shape.go::Circle.Area", "shapes.shape.Circle.Area"),  # Go: Receiver.Method
    ("js/Client.js::Client.request", "js.Client.Client.request"),  # JS: X.prototype.m
    ("web/app.ts::Button.render", "web.app.Button.render"),  # TS: Class.method
    ("rs/lib.rs::Point.norm", "rs.lib.Point.Norm.norm"),  # a trait's method by its type and name
    ("rs/lib.rs::Point.Norm.norm", "rs.lib.Point.Norm.norm"),
])
def test_path_qualified_name_addressing(store: OxigraphStore, key: str, qualname: str) -> None:
    assert resolve_entity(store, key)[1] == qualname


def test_stats_show_symbols_per_language(indexed: Path) -> None:
    result = CliRunner().invoke(cli, ["stats", "-C", str(indexed), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)["languages"]
    assert data["go"]["symbols"] == {"Function": 2, "Interface": 1, "Method": 2, "Struct": 2}
    assert data["rust"]["symbols"] == {"Enum": 1, "Function": 1, "Method": 3, "Namespace": 1, "Struct": 1, "Trait": 1}
    assert "symbols: 2 Function, 1 Interface, 2 Method, 2 Struct" in CliRunner().invoke(cli, ["stats", "-C", str(indexed)]).stdout


def test_history_maps_go_hunks_to_go_methods(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "geo").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    source = (PROJECT / "shapes/shape.go").read_text()
    (root / "geo/shape.go").write_text(source)
    commit(root, "Add shapes", "Ada", "2025-01-01T10:00:00+00:00")
    (root / "geo/shape.go").write_text(source.replace("math.Pi * square(c.R)", "math.Pi * c.R * c.R"))
    changed = commit(root, "Inline square in Circle.Area", "Ada", "2025-01-02T10:00:00+00:00")
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        index_project(root, store, load_settings(root), history=5)
        touched = store.select(f"""SELECT ?q WHERE {{ GRAPH ?g {{ ?c uko:commitHash "{changed}" ; uko:touches ?e }}
                                   GRAPH ?g2 {{ ?e uko:qualifiedName ?q }} }}""")
        assert {r["q"].value for r in touched} == {"geo.shape.Circle.Area"}
        old = store.select("""SELECT ?q ?path ?text WHERE { GRAPH ?g { ?v a uko:Version ; uko:qualifiedName ?q ;
                              uko:path ?path ; uko:hasFragment ?f . ?f uko:text ?text } }""")
        assert [(r["q"].value, r["path"].value) for r in old] == [("geo.shape.Circle.Area", "geo/shape.go")]
        assert "square(c.R)" in old[0]["text"].value  # the method as it was before the commit
    finally:
        store.close()


def test_go_named_types_with_method_sets_are_classes() -> None:
    """``type HandlersChain []HandlerFunc`` has methods as a struct does: an entity (a class), and its
    methods are its members; a type alias (``type A = B``) is no new type, but a name of the package's
    API with its doc comment (urfave/cli's ``FloatArg``): an entity too."""
    source = ("package gin\n\ntype HandlerFunc func(*Context)\n\n// HandlersChain is a list of handlers.\n"
              "type HandlersChain []HandlerFunc\n\nfunc (c HandlersChain) Last() HandlerFunc {\n"
              "\treturn c[len(c)-1]\n}\n\ntype ErrorType uint64\n\ntype Alias = ErrorType\n")
    ext = extract_tree_sitter("gin.go", source, "go", "gin")
    kinds = {s.qualname: s.kind.value for s in ext.symbols}
    assert kinds["gin.HandlerFunc"] == kinds["gin.HandlersChain"] == kinds["gin.ErrorType"] == "Class"
    assert kinds["gin.HandlersChain.Last"] == "Method" and kinds["gin.Alias"] == "Class"
    chain = next(s for s in ext.symbols if s.qualname == "gin.HandlersChain")
    assert (chain.start_line, chain.end_line) == (5, 6)  # its doc comment included


RUST_TRAITS = """use std::fmt;

/// A point.
pub struct Point { x: i32 }

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "P") }
}

impl Point {
    /// The origin.
    ///
    /// Both coordinates zero.
    #[must_use]
    #[inline]
    pub fn origin() -> Self { Point { x: 0 } }
}

impl fmt::Display for crate::Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "{}", self.x) }
}

impl Source for dyn std::error::Error + Send + 'static {
    fn source_of(&self) -> Option<&str> { None }
}
"""


def test_rust_trait_methods_are_named_by_their_trait_and_keep_their_own_lines() -> None:
    """``impl Debug for Point`` and ``impl Display for Point`` both define ``fmt``: one entity of that name
    spanned both blocks and everything between (anyhow's ``Backtrace.fmt`` held six other methods). A
    trait's method is ``Type.Trait.method``, a method of the type; a type written with its path
    (``crate::Point``) or as a trait object (``dyn Error + Send``) is named by its last segment."""
    ext, _ = extract(SourceFile("src/geo.rs", RUST_TRAITS, len(RUST_TRAITS), "0" * 64, "rust"), {"src/geo.rs"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.parent) for s in ext.symbols}
    assert got["src.geo.Point.Debug.fmt"] == ("Method", 7, 7, "src.geo.Point")
    assert got["src.geo.Point.Display.fmt"] == ("Method", 20, 20, "src.geo.Point")
    assert got["src.geo.Error.Source.source_of"][:3] == ("Method", 24, 24)
    assert "src.geo.Point.fmt" not in got and not any(".crate." in q for q in got)
    point = next(s for s in ext.symbols if s.qualname == "src.geo.Point")
    assert point.bases == ["fmt.Debug", "fmt.Display"]


def test_rust_impl_blocks_are_namespaces_where_no_struct_stands_for_them() -> None:
    """A method added to ``impl Display for Point`` is a change to that block, which the held-out miner
    names by its trait; one added to ``impl Stack`` in a file without ``struct Stack``, by its type. The
    block is then an entity (a namespace: its outline lists its methods); an ``impl Point`` beside
    ``struct Point`` is not, the struct is that unit. Its methods stay methods of the type."""
    ext, _ = extract(SourceFile("src/geo.rs", RUST_TRAITS, len(RUST_TRAITS), "0" * 64, "rust"), {"src/geo.rs"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.parent) for s in ext.symbols}
    assert got["src.geo.Point.Display"] == ("Namespace", 19, 21, "src.geo.Point")
    assert got["src.geo.Point.Debug"] == ("Namespace", 6, 8, "src.geo.Point")
    assert got["src.geo.Point"][0] == "Struct"  # "impl Point": no second entity of that name
    assert got["src.geo.Error.Source"][3] == "src.geo"  # the type is not defined here
    assert got["src.geo.Error.Source.source_of"][3] == "src.geo.Error.Source"
    src = "use crate::Stack;\n\nimpl Stack {\n    pub fn peek(&self) -> i32 { self.top() }\n    fn top(&self) -> i32 { 0 }\n}\n"
    other, _ = extract(SourceFile("src/ops.rs", src, len(src), "0" * 64, "rust"), {"src/ops.rs"}, 40)
    assert other is not None
    kinds = {s.qualname: (s.kind.value, s.parent) for s in other.symbols}
    assert kinds["src.ops.Stack"] == ("Namespace", "src.ops")
    assert kinds["src.ops.Stack.peek"] == ("Method", "src.ops.Stack")
    outline = next(f.text for f in code_fragments(SourceFile("src/geo.rs", RUST_TRAITS, len(RUST_TRAITS), "0" * 64, "rust"), ext)
                   if f.owner == code_key("src.geo.Point.Display") and f.lod == MACRO)
    assert outline.splitlines() == ["impl fmt::Display for crate::Point", "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result"]


def test_a_rust_doc_comment_of_several_lines_and_the_attributes_under_it_belong_to_the_item() -> None:
    """tree-sitter's ``///`` comment ends at column 0 of the next line; read as ending there, each line
    was the trailing comment of the one before, and only the last doc line (or none) was kept."""
    ext, _ = extract(SourceFile("src/geo.rs", RUST_TRAITS, len(RUST_TRAITS), "0" * 64, "rust"), {"src/geo.rs"}, 40)
    assert ext is not None
    origin = next(s for s in ext.symbols if s.qualname == "src.geo.Point.origin")
    assert (origin.start_line, origin.end_line) == (11, 16)  # the doc comment, both attributes, the fn
    assert origin.docstring == "The origin.\n\nBoth coordinates zero."


TS_CALLBACKS = """export function fetch(url: string) {
    return url;
}

export class Timer {
    tick() {}
}

export const defaults = {
    delay: (attempt: number) => attempt * 2,
};

test('retries', async () => {
    await run({ fetch: async () => new Response('x') });
});
"""


def test_typescript_functions_of_an_object_bound_to_a_name_are_its_members_and_a_later_namesake_merges_nothing() -> None:
    """``defaults.delay``, not the module's ``delay``; a callback further down named like an earlier
    function (``fetch:`` in a test's argument) is no second range of that function's entity."""
    ext, _ = extract(SourceFile("src/net.ts", TS_CALLBACKS, len(TS_CALLBACKS), "0" * 64, "typescript"), {"src/net.ts"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line) for s in ext.symbols}
    assert got["src.net.defaults.delay"] == ("Function", 10, 10)
    assert got["src.net.fetch"] == ("Function", 1, 3)
    assert "src.net.delay" not in got


def test_self_calls_in_a_rust_trait_method_resolve_to_the_type() -> None:
    """``self.len()`` inside ``impl Display for Stack`` calls ``Stack.len``: the trait in the method's name
    (``Stack.Display.fmt``) is no type to look the method up in."""
    src = ("pub struct Stack { items: Vec<i32> }\n\nimpl Stack {\n    pub fn len(&self) -> usize { self.items.len() }\n}\n\n"
           "impl std::fmt::Display for Stack {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n"
           "        let n = self.len();\n        write!(f, \"{}\", n)\n    }\n}\n")
    ext, _ = extract(SourceFile("src/stack.rs", src, len(src), "0" * 64, "rust"), {"src/stack.rs"}, 40)
    assert ext is not None
    known = {s.qualname: s.kind.value for s in ext.symbols}
    edges = set(resolve_edges({"src/stack.rs": ext}, known, {"src/stack.rs"}))
    assert Edge("src.stack.Stack.Display.fmt", "calls", "src.stack.Stack.len") in edges


def test_typescript_type_aliases_and_rust_macros_are_entities() -> None:
    """A library's public types are often ``type`` aliases (ky's ``Hooks``), a crate's API its macros
    (anyhow's ``bail!``): without entities a file of them was one fragment as long as the file."""
    ts_src = "/** State before a retry. */\nexport type RetryState = {\n    attempt: number;\n};\n\nexport type Id = string | number;\n"
    ext, _ = extract(SourceFile("src/types.ts", ts_src, len(ts_src), "0" * 64, "typescript"), {"src/types.ts"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["src.types.RetryState"] == ("Interface", 1, 4, "State before a retry.")
    assert got["src.types.Id"] == ("Interface", 6, 6, None)
    rs_src = "/// Return early with an error.\nmacro_rules! bail {\n    ($msg:expr) => { return Err($msg) };\n}\n\nfn check(x: i32) -> Result<(), i32> {\n    if x < 0 { bail!(x); }\n    Ok(())\n}\n"
    ext, _ = extract(SourceFile("src/lib.rs", rs_src, len(rs_src), "0" * 64, "rust"), {"src/lib.rs"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["src.lib.bail"] == ("Function", 1, 4, "Return early with an error.")
    known = {s.qualname: s.kind.value for s in ext.symbols}
    assert Edge("src.lib.check", "calls", "src.lib.bail") in set(resolve_edges({"src/lib.rs": ext}, known, {"src/lib.rs"}))


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_a_class_field_holding_a_function_is_a_method(language: str) -> None:
    """``handleClick = () => { ... }`` (a React class component's handlers, a bound callback) is code of the
    class an agent edits; a field holding a value is not."""
    src = "class Form {\n  /** Submit the form. */\n  submit = (event) => {\n    send(event);\n  };\n  count = 0;\n}\n"
    path = "web/form.ts" if language == "typescript" else "web/form.js"
    ext, _ = extract(SourceFile(path, src, len(src), "0" * 64, language), {path}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["web.form.Form.submit"] == ("Method", 2, 5, "Submit the form.")
    assert "web.form.Form.count" not in got


def test_a_decorated_exported_class_keeps_the_doc_comment_above_its_decorators() -> None:
    """``@Injectable() export class X`` (every NestJS or Angular service): the decorator opens the export
    statement, and the comment above is that statement's sibling, not the class's."""
    src = ("/**\n * Parses an integer.\n */\n@Injectable()\nexport class ParseIntPipe {\n  transform(v: string) {\n"
           "    return parseInt(v, 10);\n  }\n}\n\n/** The default one. */\n@Injectable()\nexport default class Fallback {}\n")
    ext, _ = extract(SourceFile("src/pipe.ts", src, len(src), "0" * 64, "typescript"), {"src/pipe.ts"}, 40)
    assert ext is not None
    got = {s.qualname: (s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["src.pipe.ParseIntPipe"] == (1, 9, "Parses an integer.")
    assert got["src.pipe.Fallback"] == (11, 13, "The default one.")


def test_static_methods_named_like_instance_ones_merge_nothing() -> None:
    """NestJS's ``Logger`` has ``error`` and ``verbose`` twice, instance and static: each later namesake is
    left out, also after one already left out (a merge had made ``verbose`` span every static method)."""
    src = ("export class Logger {\n  error(m: string) { a(m); }\n  verbose(m: string) { a(m); }\n"
           "  static error(m: string) { b(m); }\n  static verbose(m: string) { b(m); }\n  get level() { return 1; }\n"
           "  set level(v: number) { c(v); }\n}\n")
    ext, _ = extract(SourceFile("src/log.ts", src, len(src), "0" * 64, "typescript"), {"src/log.ts"}, 40)
    assert ext is not None
    got = {s.qualname: (s.start_line, s.end_line) for s in ext.symbols}
    assert got["src.log.Logger.error"] == (2, 2) and got["src.log.Logger.verbose"] == (3, 3)
    assert got["src.log.Logger.level"] == (6, 7)  # a getter and its setter, written together: one entity


def test_rust_and_go_type_aliases_are_named_types_but_not_associated_types() -> None:
    """itertools' public adaptors are aliases (``pub type Dedup<I> = ...``), urfave/cli's argument types
    too (``type ( FloatArg = ArgumentBase[float64] ... )``): their doc comments had fallen into the
    module's gaps. An impl block's ``type Item`` is the trait's, said by every iterator: no entity."""
    rs = "/// Dedup.\npub type Dedup<I> = CoalesceBy<I, DedupPred>;\n\nimpl Iterator for Dedup2 {\n    type Item = u32;\n}\n"
    ext, _ = extract(SourceFile("src/a.rs", rs, len(rs), "0" * 64, "rust"), {"src/a.rs"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["src.a.Dedup"] == ("Class", 1, 2, "Dedup.") and not any(q.endswith(".Item") for q in got)
    go = "package cli\n\ntype (\n\t// FloatArg takes a float.\n\tFloatArg = ArgumentBase[float64]\n\tIntArg = ArgumentBase[int]\n)\n"
    ext, _ = extract(SourceFile("args.go", go, len(go), "0" * 64, "go"), {"args.go"}, 40)
    assert ext is not None
    got = {s.qualname: (s.kind.value, s.start_line, s.end_line, s.docstring) for s in ext.symbols}
    assert got["args.FloatArg"] == ("Class", 4, 5, "FloatArg takes a float.") and got["args.IntArg"][:3] == ("Class", 6, 6)


def test_typescript_overloads_are_the_first_lines_of_their_implementation() -> None:
    """The overload signatures are the function's public face and the doc comment sits above them: the
    entity starts there (a C++ declaration far from its definition still gives way to the definition)."""
    src = ("/** Resolves when the predicate holds. */\nexport function when(p: () => boolean): Promise<void>\n"
           "export function when(p: () => boolean, effect: () => void): () => void\n"
           "export function when(p: any, effect?: any): any {\n    return go(p, effect);\n}\n")
    ext, _ = extract(SourceFile("src/when.ts", src, len(src), "0" * 64, "typescript"), {"src/when.ts"}, 40)
    assert ext is not None
    when = next(s for s in ext.symbols if s.qualname == "src.when.when")
    assert (when.start_line, when.end_line, when.docstring) == (1, 6, "Resolves when the predicate holds.")
    assert when.signature == "function when(p: () => boolean): Promise<void>"


def test_a_javascript_name_keeps_its_dollar_and_a_php_variable_loses_its_sigil() -> None:
    """``$`` is part of a JavaScript name (``$total``, jQuery's ``$``): without it ``--focus
    'web/cart.js::Cart.$total'`` found nothing, and a call of ``this.$total()`` linked to ``total``. In PHP
    it is a variable's sigil: ``$this->name()`` calls ``this.name``."""
    src = "class Cart {\n  $total() {\n    return this.$sum();\n  }\n  $sum() {\n    return 1;\n  }\n  sum() {\n    return 2;\n  }\n}\n"
    ext, _ = extract(SourceFile("web/cart.js", src, len(src), "0" * 64, "javascript"), {"web/cart.js"}, 40)
    assert ext is not None
    got = {s.qualname: s for s in ext.symbols}
    assert {"web.cart.Cart.$total", "web.cart.Cart.$sum", "web.cart.Cart.sum"} <= set(got)
    assert got["web.cart.Cart.$total"].calls == ["this.$sum"]
    php = "<?php\nclass Cart {\n  function total() { return $this->sum(); }\n  function sum() { return 1; }\n}\n"
    ext, _ = extract(SourceFile("web/Cart.php", php, len(php), "0" * 64, "php"), {"web/Cart.php"}, 40)
    assert ext is not None
    assert {s.qualname: s for s in ext.symbols}["web.Cart.Cart.total"].calls == ["this.sum"]


def test_private_members_destructors_operators_and_raw_identifiers_are_entities() -> None:
    """Names a plain identifier pattern refused were dropped with their code: a JavaScript class's private
    methods (``#bump``, and the calls of them), C++ and C# destructors and operators, Ruby operator and
    setter methods, and Rust raw identifiers (``r#type`` is ``type``)."""
    def names(path: str, language: str, src: str) -> dict[str, tuple[int, int, list[str]]]:
        ext, _ = extract(SourceFile(path, src, len(src), "0" * 64, language), {path}, 40)
        assert ext is not None
        return {s.qualname: (s.start_line, s.end_line, s.calls) for s in ext.symbols}

    ts = "export class Store {\n  #count = 0;\n  #bump() { this.#count++; }\n  add() { this.#bump(); }\n}\n"
    for language, path in (("typescript", "src/store.ts"), ("javascript", "src/store.js")):
        got = names(path, language, ts)
        assert got["src.store.Store.#bump"][:2] == (3, 3) and got["src.store.Store.add"][2] == ["this.#bump"]
        assert "src.store.Store.#count" not in got
    cpp = ("namespace ns {\nclass Foo {\n public:\n  ~Foo();\n  bool operator<(const Foo& o) const { return true; }\n};\n"
           "Foo::~Foo() {}\nbool Foo::operator==(const Foo& o) const { return true; }\n"
           "int& Foo::operator[](int i) { return x; }\nvoid* Foo::operator new(unsigned long n) { return 0; }\n}\n")
    got = names("src/foo.cpp", "cpp", cpp)
    for name, line in (("~Foo", 7), ("operator<", 5), ("operator==", 8), ("operator[]", 9), ("operator new", 10)):
        assert got[f"src.foo.ns.Foo.{name}"][:2] == (line, line), name
    rs = "pub struct S;\nimpl S {\n    pub fn r#type(&self) -> u8 { 1 }\n}\n"
    assert names("src/s.rs", "rust", rs)["src.s.S.type"][:2] == (3, 3)
    rb = "class V\n  def ==(o)\n    true\n  end\n  def value=(v)\n    @v = v\n  end\n  def [](k)\n    1\n  end\nend\n"
    got = names("lib/v.rb", "ruby", rb)
    assert [got[f"lib.v.V.{n}"][:2] for n in ("==", "value=", "[]")] == [(2, 4), (5, 7), (8, 10)]
    cs = "namespace N {\npublic class V {\n  ~V() { }\n  public static V operator +(V a, V b) { return a; }\n}\n}\n"
    got = names("src/V.cs", "csharp", cs)
    assert got["src.V.N.V.~V"][:2] == (3, 3) and got["src.V.N.V.operator+"][:2] == (4, 4)
