"""Python files ``ast`` rejects (Python 2, syntax errors) get their symbols from tree-sitter."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from pyoxigraph import Literal

from acms.ingest import extractors, python_fallback
from acms.ingest.fragments import FILE
from acms.ingest.model import ImportRef, SourceFile, SymbolKind
from acms.ingest.python_extractor import extract_python
from acms.ingest.python_fallback import extract_python_fallback
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.vocab import UKO, IriMinter

from ..conftest import run_index

needs_tree_sitter = pytest.mark.skipif(not python_fallback.available(), reason="tree-sitter is not installed")

PY2 = '''\
# -*- coding: utf-8 -*-
"""Legacy helpers.

    Written for Python 2.
"""
import os, sys
from pkg.util import normalize as norm
from . import mod


class Registry(object):
    """Keeps handlers."""

    @classmethod
    def create(cls, name):
        print "creating", name
        return cls()

    @staticmethod
    @cached(ttl=10)
    def lookup(key,
               default=None):
        try:
            return os.environ[norm(key)]
        except KeyError, e:
            print >>sys.stderr, "missing %s" % e
            return default


def outer(items):
    u"""Walk items."""
    def inner(x):
        return x * 2
    print [inner(i) for i in items]
    exec "pass"
    return len(items)
'''


def _by_qualname(path: str, text: str, module: str) -> dict:
    ext = extract_python_fallback(path, text, module)
    assert ext is not None
    return {s.qualname: s for s in ext.symbols}


@needs_tree_sitter
def test_python2_file_gets_the_symbols_ast_would_give() -> None:
    assert extract_python("pkg/legacy.py", PY2, "pkg.legacy").parse_error  # ast refuses it
    ext = extract_python_fallback("pkg/legacy.py", PY2, "pkg.legacy")
    assert ext is not None and ext.parse_error is None and ext.language == "python" and ext.module == "pkg.legacy"
    symbols = {s.qualname: s for s in ext.symbols}
    assert list(symbols) == [  # pre-order, parents before children, as python_extractor lists them
        "pkg.legacy", "pkg.legacy.Registry", "pkg.legacy.Registry.create", "pkg.legacy.Registry.lookup",
        "pkg.legacy.outer", "pkg.legacy.outer.inner",
    ]
    spans = {q: (s.kind, s.start_line, s.end_line, s.parent) for q, s in symbols.items()}
    assert spans == {
        "pkg.legacy": (SymbolKind.MODULE, 1, 36, None),
        "pkg.legacy.Registry": (SymbolKind.CLASS, 11, 27, "pkg.legacy"),
        "pkg.legacy.Registry.create": (SymbolKind.METHOD, 14, 17, "pkg.legacy.Registry"),  # decorator line included
        "pkg.legacy.Registry.lookup": (SymbolKind.METHOD, 19, 27, "pkg.legacy.Registry"),
        "pkg.legacy.outer": (SymbolKind.FUNCTION, 30, 36, "pkg.legacy"),
        "pkg.legacy.outer.inner": (SymbolKind.FUNCTION, 32, 33, "pkg.legacy.outer"),
    }
    module, cls = symbols["pkg.legacy"], symbols["pkg.legacy.Registry"]
    create, lookup = symbols["pkg.legacy.Registry.create"], symbols["pkg.legacy.Registry.lookup"]
    outer = symbols["pkg.legacy.outer"]
    assert module.name == "legacy" and module.signature == "module pkg.legacy"
    assert module.docstring == "Legacy helpers.\n\nWritten for Python 2."  # cleaned like ast.get_docstring
    assert cls.docstring == "Keeps handlers." and cls.bases == ["object"] and cls.signature == "class Registry(object):"
    assert create.decorators == ["classmethod"] and create.docstring is None
    assert create.signature == "def create(cls, name):" and create.calls == ["cls"]
    assert lookup.decorators == ["staticmethod", "cached(ttl=10)"]
    assert lookup.signature == "def lookup(key,\n               default=None):"
    assert lookup.calls == ["norm"]
    assert cls.calls == ["cached"]  # a decorator runs in the enclosing scope
    assert outer.docstring == "Walk items." and outer.calls == ["inner", "len"]
    assert symbols["pkg.legacy.outer.inner"].calls == []
    assert ext.imports == [
        ImportRef("os", None, "os", 6),
        ImportRef("sys", None, "sys", 6),
        ImportRef("pkg.util", "normalize", "norm", 7),
        ImportRef("pkg", "mod", "mod", 8),
    ]


@needs_tree_sitter
def test_a_syntax_error_in_one_function_leaves_the_others() -> None:
    text = (
        "def first():\n    return 1\n\n\n"
        "def broken():\n    x = = 2\n    return x\n\n\n"
        "class Later:\n    def method(self):\n        return 3\n"
    )
    assert extract_python("m.py", text, "m").parse_error
    symbols = _by_qualname("m.py", text, "m")
    assert {q: (s.start_line, s.end_line) for q, s in symbols.items() if q != "m"} == {
        "m.first": (1, 2), "m.broken": (5, 7), "m.Later": (10, 12), "m.Later.method": (11, 12),
    }
    assert symbols["m.Later.method"].kind is SymbolKind.METHOD


@needs_tree_sitter
def test_a_definition_with_a_repaired_header_is_left_out() -> None:
    text = "def good():\n    return 1\n\n\ndef bad(:\n    return 2\n"
    assert list(_by_qualname("m.py", text, "m")) == ["m", "m.good"]
    # Nothing but a broken definition: no symbols, the file stays text (as tests/fixtures' broken.py).
    assert extract_python_fallback("m.py", "def oops(:\n    return 1\n", "m") is None


@needs_tree_sitter
def test_a_python2_script_without_definitions_gets_its_module() -> None:
    ext = extract_python_fallback("run.py", '"""Run it."""\nimport sys\nprint "hi", sys.argv\nmain()\n', "run")
    assert ext is not None
    [module] = ext.symbols
    assert (module.qualname, module.docstring, module.calls, module.end_line) == ("run", "Run it.", ["main"], 4)
    assert ext.imports == [ImportRef("sys", None, "sys", 2)]


VALID = '''\
\ufeff"""Doc."""
from __future__ import annotations
import a.b, c.d as e
from ..up import (x as y, z)
from .side import *


@decorate(f(1) if g() else h())
class K(Base[T], mod.Other, metaclass=Meta):
    "one-line"
    attr = {key(): value(), **extra()}

    def m(self, p: Ann() = default(), *rest: Star(), kw=kwdefault(), **more: More()) -> Ret():
        return call(pos(), *star(), named=kw(), **dstar())

    @property
    def prop(self):
        return [*spread.it(self)]

    @prop.setter
    def prop(self, value):
        """Setter doc."""
        self._p = value  # trailing comment
        # and a comment line at the end of the body

    async def am(self):
        async with ctx() as c:
            await c.go()


if cond():
    def late(): pass
else:
    def late(x=None):
        """Other branch."""
        lambda q=w(): q.run()


def outer():
    def inner():
        class Deep:
            def d(self): return ("implicit"
                                 " concat")
        return Deep
    return inner
'''


@needs_tree_sitter
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_valid_python3_gives_exactly_what_ast_gives(newline: str) -> None:
    """The fallback mirrors python_extractor field for field (call order, merges, relative imports)."""
    text = VALID.replace("\n", newline)
    expected = extract_python("pkg/sub/__init__.py", text, "pkg.sub")
    got = extract_python_fallback("pkg/sub/__init__.py", text, "pkg.sub")
    assert expected.parse_error is None and got is not None
    assert [asdict(s) for s in got.symbols] == [asdict(s) for s in expected.symbols]
    assert got.imports == expected.imports
    assert len(got.symbols) == 10


def test_without_tree_sitter_the_file_stays_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_fallback, "_parser", lambda: None)
    assert extract_python_fallback("pkg/legacy.py", PY2, "pkg.legacy") is None
    source = SourceFile("pkg/legacy.py", PY2, len(PY2.encode()), "0" * 64, "python")
    ext, specs = extractors.extract(source, {"pkg/legacy.py"}, 60)
    assert ext is not None and ext.parse_error and not ext.symbols
    assert [s.owner for s in specs] == [FILE, FILE]  # outline + one text window, as before


@needs_tree_sitter
def test_pipeline_extract_uses_the_fallback() -> None:
    source = SourceFile("pkg/legacy.py", PY2, len(PY2.encode()), "0" * 64, "python")
    ext, specs = extractors.extract(source, {"pkg/__init__.py", "pkg/legacy.py"}, 60)
    assert ext is not None and ext.parse_error is None
    assert "pkg.legacy.Registry.lookup" in {s.qualname for s in ext.symbols}
    assert any(s.owner != FILE and s.start_line == 19 and s.end_line == 27 for s in specs)


@needs_tree_sitter
def test_index_makes_python2_symbols_addressable(sample_project: Path) -> None:
    (sample_project / "pkg" / "legacy.py").write_text(PY2)
    report = run_index(sample_project)
    assert "pkg/legacy.py" not in report.parse_errors
    assert "pkg/broken.py" in report.parse_errors  # a file with nothing recoverable stays text
    assert not report.quarantined  # the batch passed SHACL validation with the recovered symbols
    store = OxigraphStore(sample_project / ".acms" / "graph")
    try:
        # path::Class.method, resolved as focus strings are (acms.strategies.engine.resolve_focus)
        rows = store.select(catalog.text("index/entities-in-file"), {"path": Literal("pkg/legacy.py")})
        by_qn = {r["qn"].value: r["entity"].value for r in rows}
        lookup = [e for qn, e in by_qn.items() if qn == "Registry.lookup" or qn.endswith(".Registry.lookup")]
        assert lookup == [IriMinter("sample").code("pkg/legacy.py", "pkg.legacy.Registry.lookup").value]
        assert {"pkg.legacy.outer.inner", "pkg.legacy.Registry.create"} <= set(by_qn)
        method = store.select(
            """SELECT ?kind ?start ?end ?sig ?cls WHERE { GRAPH ?g {
                 ?m uko:qualifiedName "pkg.legacy.Registry.lookup" ; a ?kind ; uko:startLine ?start ;
                    uko:endLine ?end ; uko:signature ?sig .
                 ?cls uko:defines ?m } }"""
        )
        assert len(method) == 1
        row = method[0]
        assert (row["kind"].value, row["start"].value, row["end"].value) == (UKO.Method.value, "19", "27")
        assert row["sig"].value.startswith("def lookup(key,")
        assert row["cls"].value == by_qn["pkg.legacy.Registry"]
        # the recovered symbols join the project's edges: the alias "norm" resolves across files
        calls = store.select(
            """SELECT ?target WHERE { GRAPH ?g { ?m uko:qualifiedName "pkg.legacy.Registry.lookup" ; uko:calls ?t }
                                      GRAPH ?h { ?t uko:qualifiedName ?target } }"""
        )
        assert {r["target"].value for r in calls} == {"pkg.util.normalize"}
        legacy_file = IriMinter("sample").file("pkg/legacy.py")
        assert not list(store.raw.quads_for_pattern(legacy_file, UKO.parseError, None, None))
        fragments = store.select(
            """SELECT ?text WHERE { GRAPH ?g { ?m uko:qualifiedName "pkg.legacy.Registry.lookup" ;
                 uko:hasFragment ?f . ?f uko:lod "micro" ; uko:text ?text } }"""
        )
        assert [r["text"].value.lstrip().splitlines()[0] for r in fragments] == ["@staticmethod"]
    finally:
        store.close()


def test_extractors_register_by_language_and_a_clash_is_an_error() -> None:
    from acms.errors import ConfigError
    from acms.ingest.extractors import EXTRACTORS, ExtractorSpec, builtin_extractors

    from acms.ingest.ts_languages import languages

    assert set(EXTRACTORS) == {"python", "markdown", "rst", *languages()}  # languages.toml's: built-in too
    assert {"go", "javascript", "typescript", "tsx", "rust", "java", "c", "cpp", "csharp", "ruby", "php"} <= set(EXTRACTORS)
    assert all(EXTRACTORS.is_builtin(n) for n in EXTRACTORS)
    registry = builtin_extractors()
    nothing = ExtractorSpec("text", "extracts nothing", lambda source, paths, window: (None, []))
    registry.register("text", nothing)
    source = SourceFile("notes.txt", "hello\n", 6, "0" * 64, "text")
    assert extractors.extract(source, {"notes.txt"}, 60, registry) == (None, [])
    assert extractors.extract(source, {"notes.txt"}, 60)[1]  # the default registry: text windows
    with pytest.raises(ConfigError, match="extractor for language 'python' is already registered by a built-in one"):
        registry.register("python", ExtractorSpec("python", "an impostor", nothing.extract))
