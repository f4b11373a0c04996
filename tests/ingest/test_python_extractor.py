from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.ingest.model import CodeSymbol, Edge, Extraction, ImportRef, SymbolKind
from acms.ingest.python_extractor import extract_python, module_name_for, module_names, resolve_edges

SAMPLE = '''\
"""Sample module.

More text.
"""
import functools
from fastapi import FastAPI

app = FastAPI()


@app.get("/items")
@functools.cache
def list_items(
    limit: int = 10,
    *,
    offset: int = 0,
) -> list[str]:
    """Return items.

        Indented detail.
    """
    def inner(x):  # helper: nested
        return str(x)
    return [inner(i) for i in range(limit)]


class Base:
    def run(self):
        return self.step()

    def step(self):
        return 1


class Child(Base, Generic[T], metaclass=Meta):
    """A child."""

    @property
    def value(self) -> int: return self.run()

    async def fetch(self, url: str) -> bytes:
        async def go():
            return await get(url)
        return await go()
'''


def by_qualname(ext: Extraction) -> dict[str, CodeSymbol]:
    return {s.qualname: s for s in ext.symbols}


@pytest.fixture(scope="module")
def sample() -> dict[str, CodeSymbol]:
    ext = extract_python("pkg/sample.py", SAMPLE, "pkg.sample")
    assert ext.language == "python"
    assert ext.module == "pkg.sample"
    assert ext.parse_error is None
    return by_qualname(ext)


# --- module_name_for -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "paths", "expected"),
    [
        ("pkg/__init__.py", {"pkg/__init__.py"}, "pkg"),
        ("setup.py", {"setup.py", "pkg/__init__.py"}, "setup"),
        ("src/acms/x.py", {"src/acms/__init__.py", "src/acms/x.py"}, "acms.x"),
        ("src/acms/ingest/__init__.py", {"src/acms/__init__.py", "src/acms/ingest/__init__.py"}, "acms.ingest"),
        ("src/acms/ingest/model.py", ["src/acms/__init__.py", "src/acms/ingest/__init__.py"], "acms.ingest.model"),
        ("tests/test_a.py", {"tests/test_a.py"}, "test_a"),
        ("tests/ingest/test_b.py", {"tests/ingest/__init__.py", "tests/ingest/test_b.py"}, "ingest.test_b"),
        ("scripts/tool.py", {"scripts/tool.py", "other/__init__.py"}, "tool"),
    ],
)
def test_module_name_for(path: str, paths: set[str] | list[str], expected: str) -> None:
    assert module_name_for(path, paths) == expected


def _named_by_walking_up(path: str, paths: set[str]) -> str:
    """The rule as stated: the file's stem (a package's folder for ``__init__``), then each folder above
    while it holds an ``__init__``."""
    directory, stem = posixpath.dirname(path), posixpath.splitext(posixpath.basename(path))[0]
    parts = [stem]
    if stem == "__init__" and directory:
        parts, directory = [posixpath.basename(directory)], posixpath.dirname(directory)
    while directory and any(f"{directory}/{init}" in paths for init in ("__init__.py", "__init__.pyi")):
        parts.append(posixpath.basename(directory))
        directory = posixpath.dirname(directory)
    return ".".join(reversed(parts))


@settings(max_examples=200, deadline=None)
@given(st.sets(st.lists(st.sampled_from(["a", "b", "c", "__init__.py", "__init__.pyi", "m.py", "n.pyi"]),
                        min_size=1, max_size=4).map("/".join), max_size=25))
def test_a_listings_module_names_follow_the_rule_for_each_path(paths: set[str]) -> None:
    named = module_names(sorted(paths), paths)
    assert named == {p: _named_by_walking_up(p, paths) for p in paths}


# --- symbols ---------------------------------------------------------------------------------


def test_python_symbols_kinds_parents_and_order(sample: dict[str, CodeSymbol]) -> None:
    assert [(q, s.kind, s.parent) for q, s in sample.items()] == [
        ("pkg.sample", SymbolKind.MODULE, None),
        ("pkg.sample.list_items", SymbolKind.FUNCTION, "pkg.sample"),
        ("pkg.sample.list_items.inner", SymbolKind.FUNCTION, "pkg.sample.list_items"),
        ("pkg.sample.Base", SymbolKind.CLASS, "pkg.sample"),
        ("pkg.sample.Base.run", SymbolKind.METHOD, "pkg.sample.Base"),
        ("pkg.sample.Base.step", SymbolKind.METHOD, "pkg.sample.Base"),
        ("pkg.sample.Child", SymbolKind.CLASS, "pkg.sample"),
        ("pkg.sample.Child.value", SymbolKind.METHOD, "pkg.sample.Child"),
        ("pkg.sample.Child.fetch", SymbolKind.METHOD, "pkg.sample.Child"),
        ("pkg.sample.Child.fetch.go", SymbolKind.FUNCTION, "pkg.sample.Child.fetch"),
    ]
    assert sample["pkg.sample.Child.fetch.go"].name == "go"


def test_python_line_ranges_include_decorators(sample: dict[str, CodeSymbol]) -> None:
    lines = {q: (s.start_line, s.end_line) for q, s in sample.items()}
    assert lines == {
        "pkg.sample": (1, 44),
        "pkg.sample.list_items": (11, 24),  # from @app.get, not from "def"
        "pkg.sample.list_items.inner": (22, 23),
        "pkg.sample.Base": (27, 32),
        "pkg.sample.Base.run": (28, 29),
        "pkg.sample.Base.step": (31, 32),
        "pkg.sample.Child": (35, 44),
        "pkg.sample.Child.value": (38, 39),
        "pkg.sample.Child.fetch": (41, 44),
        "pkg.sample.Child.fetch.go": (42, 43),
    }


def test_python_module_symbol(sample: dict[str, CodeSymbol]) -> None:
    mod = sample["pkg.sample"]
    assert mod.name == "sample"
    assert mod.signature == "module pkg.sample"
    assert mod.docstring == "Sample module.\n\nMore text."


def test_python_multiline_signature_docstring_and_decorators(sample: dict[str, CodeSymbol]) -> None:
    fn = sample["pkg.sample.list_items"]
    assert fn.signature == "def list_items(\n    limit: int = 10,\n    *,\n    offset: int = 0,\n) -> list[str]:"
    assert fn.docstring == "Return items.\n\nIndented detail."
    assert fn.decorators == ['app.get("/items")', "functools.cache"]


def test_python_signatures_stop_at_the_header_colon(sample: dict[str, CodeSymbol]) -> None:
    assert sample["pkg.sample.list_items.inner"].signature == "def inner(x):"  # comment after it dropped
    assert sample["pkg.sample.Child.value"].signature == "def value(self) -> int:"  # one-line body dropped
    assert sample["pkg.sample.Child.fetch"].signature == "async def fetch(self, url: str) -> bytes:"
    assert sample["pkg.sample.Child"].signature == "class Child(Base, Generic[T], metaclass=Meta):"
    assert sample["pkg.sample.Base"].signature == "class Base:"


def test_python_signature_ignores_colons_inside_brackets() -> None:
    src = "def f(a: dict[str, int] = {1: 2}, b=lambda x: x) -> 'A:B':\n    pass\n"
    (sym,) = extract_python("m.py", src, "m").symbols[1:]
    assert sym.signature == "def f(a: dict[str, int] = {1: 2}, b=lambda x: x) -> 'A:B':"


def test_python_signature_with_non_ascii_text() -> None:
    src = "class Größe:\n    def über(self, x='é'): return x\n"
    syms = by_qualname(extract_python("m.py", src, "m"))
    assert syms["m.Größe.über"].signature == "def über(self, x='é'):"


def test_python_bases_and_docstrings(sample: dict[str, CodeSymbol]) -> None:
    assert sample["pkg.sample.Child"].bases == ["Base", "Generic"]
    assert sample["pkg.sample.Child"].docstring == "A child."
    assert sample["pkg.sample.Base"].bases == []
    assert sample["pkg.sample.Base"].docstring is None
    assert sample["pkg.sample.Child.value"].decorators == ["property"]


def test_python_dotted_bases() -> None:
    src = "import abc\nclass A(abc.ABC, typing.Generic[T], make_base()):\n    pass\n"
    assert by_qualname(extract_python("m.py", src, "m"))["m.A"].bases == ["abc.ABC", "typing.Generic"]


def test_python_calls_belong_to_their_own_scope(sample: dict[str, CodeSymbol]) -> None:
    # Decorator calls run in the enclosing scope; nested bodies have their own symbols.
    assert sample["pkg.sample"].calls == ["FastAPI", "app.get"]
    assert sample["pkg.sample.list_items"].calls == ["inner", "range"]
    assert sample["pkg.sample.list_items.inner"].calls == ["str"]
    assert sample["pkg.sample.Base.run"].calls == ["self.step"]
    assert sample["pkg.sample.Child.fetch"].calls == ["go"]
    assert sample["pkg.sample.Child.fetch.go"].calls == ["get"]


def test_python_call_names_are_dotted_and_deduplicated() -> None:
    src = (
        "def f(self):\n"
        "    foo()\n"
        "    mod.sub.fn(foo())\n"
        "    Cls()\n"
        "    super().x()\n"
        "    self.bar()\n"
        "    items[0]()\n"
        "    g = lambda: later()\n"
        "    ''.join([])\n"
    )
    calls = by_qualname(extract_python("m.py", src, "m"))["m.f"].calls
    assert calls == ["foo", "mod.sub.fn", "Cls", "super", "self.bar", "later"]


def test_python_defs_inside_compound_statements_and_class_bodies() -> None:
    src = (
        "if True:\n"
        "    def a(): pass\n"
        "class K:\n"
        "    try:\n"
        "        def m(self): pass\n"
        "    except ImportError:\n"
        "        pass\n"
        "    x = field(default=1)\n"
    )
    syms = by_qualname(extract_python("m.py", src, "m"))
    assert syms["m.a"].kind is SymbolKind.FUNCTION
    assert syms["m.K.m"].kind is SymbolKind.METHOD
    assert syms["m.K"].calls == ["field"]


def test_python_redefinition_is_one_symbol_spanning_both() -> None:
    src = (
        "class C:\n"
        "    @property\n"
        "    def x(self):\n"
        "        return self._x\n"
        "\n"
        "    @x.setter\n"
        "    def x(self, value):\n"
        "        self._x = check(value)\n"
    )
    syms = extract_python("m.py", src, "m").symbols
    assert [s.qualname for s in syms] == ["m", "m.C", "m.C.x"]
    x = syms[2]
    assert (x.start_line, x.end_line) == (2, 8)
    assert x.decorators == ["property", "x.setter"]
    assert x.calls == ["check"]


# --- imports ---------------------------------------------------------------------------------


def test_python_imports_absolute_and_aliases() -> None:
    src = (
        "import os\nimport a.b\nimport a.b as c, d\nfrom x.y import z as w, v\nfrom q import *\n"
        "\ndef f():\n    import late\n"
    )
    assert extract_python("m.py", src, "m").imports == [
        ImportRef("os", None, "os", 1),
        ImportRef("a.b", None, "a", 2),
        ImportRef("a.b", None, "c", 3),
        ImportRef("d", None, "d", 3),
        ImportRef("x.y", "z", "w", 4),
        ImportRef("x.y", "v", "v", 4),
        ImportRef("q", "*", "*", 5),
        ImportRef("late", None, "late", 8),
    ]


def test_python_relative_imports_from_package_init() -> None:
    src = "from .util import helper\nfrom . import sub as s\nfrom ..outside import nope\n"
    assert extract_python("pkg/__init__.py", src, "pkg").imports == [
        ImportRef("pkg.util", "helper", "helper", 1),
        ImportRef("pkg", "sub", "s", 2),
        # "..outside" goes beyond the top-level package: it cannot be resolved, so it is dropped
    ]


def test_python_relative_imports_from_submodule() -> None:
    src = "from .x import y\nfrom ..z import *\nfrom . import w\nfrom .. import top\n"
    assert extract_python("pkg/sub/mod.py", src, "pkg.sub.mod").imports == [
        ImportRef("pkg.sub.x", "y", "y", 1),
        ImportRef("pkg.z", "*", "*", 2),
        ImportRef("pkg.sub", "w", "w", 3),
        ImportRef("pkg", "top", "top", 4),
    ]


def test_python_relative_import_from_subpackage_init() -> None:
    src = "from .x import y\nfrom .. import z\n"
    assert extract_python("pkg/sub/__init__.py", src, "pkg.sub").imports == [
        ImportRef("pkg.sub.x", "y", "y", 1),
        ImportRef("pkg", "z", "z", 2),
    ]


# --- parse failures --------------------------------------------------------------------------


def test_python_syntax_error_gives_parse_error_only() -> None:
    ext = extract_python("bad.py", "import os\n\ndef f(:\n    pass\n", "bad")
    assert ext.language == "python"
    assert ext.module == "bad"
    assert ext.parse_error is not None
    assert ext.parse_error.startswith("SyntaxError: ")
    assert ext.parse_error.endswith("(line 3)")
    assert ext.symbols == []
    assert ext.imports == []


def test_python_null_bytes_give_parse_error() -> None:
    ext = extract_python("nul.py", "x = 1\x00\n", "nul")
    assert ext.parse_error is not None
    assert ext.symbols == []


def test_python_parse_warnings_are_not_errors() -> None:
    # "\d" is an invalid escape: a SyntaxWarning, which this project's pytest config turns into an error.
    ext = extract_python("w.py", 'PATTERN = "\\d+"\ndef f(): pass\n', "w")
    assert ext.parse_error is None
    assert [s.qualname for s in ext.symbols] == ["w", "w.f"]


def test_python_empty_file_and_bom() -> None:
    empty = extract_python("e.py", "", "e")
    assert [(s.qualname, s.start_line, s.end_line) for s in empty.symbols] == [("e", 1, 1)]
    bom = extract_python("b.py", "\ufeffdef f(x='é'): pass\n", "b")
    assert bom.parse_error is None
    assert bom.symbols[1].signature == "def f(x='é'):"


# --- resolution ------------------------------------------------------------------------------

PROJECT = {
    "pkg/__init__.py": ("pkg", "from .util import helper as exported\n"),
    "pkg/util.py": (
        "pkg.util",
        "class Base:\n"
        "    def greet(self):\n"
        "        return 'hi'\n"
        "\n"
        "def helper():\n"
        "    return Base()\n",
    ),
    "pkg/app.py": (
        "pkg.app",
        "import os\n"
        "import pkg.util as u\n"
        "from pkg.util import helper\n"
        "from pkg import util\n"
        "from .util import Base\n"
        "\n"
        "class Service(Base):\n"
        "    def start(self):\n"
        "        self.prepare()\n"
        "        self.greet()\n"
        "        u.helper()\n"
        "        return os.getcwd()\n"
        "\n"
        "    def prepare(self):\n"
        "        helper()\n"
        "        return Local()\n"
        "\n"
        "class Local:\n"
        "    pass\n"
        "\n"
        "def main():\n"
        "    def nested():\n"
        "        return main()\n"
        "    nested()\n"
        "    Service().start()\n"
        "    util.helper()\n"
        "    print(len([]))\n",
    ),
    "pkg/cli.py": (
        "pkg.cli",
        "import pkg\n"
        "from pkg import exported\n"
        "\n"
        "def run():\n"
        "    exported()\n"
        "    pkg.exported()\n"
        "    run()\n",
    ),
}


@pytest.fixture(scope="module")
def project() -> dict[str, Extraction]:
    return {path: extract_python(path, text, module) for path, (module, text) in PROJECT.items()}


def all_qualnames(extractions: dict[str, Extraction]) -> set[str]:
    return {s.qualname for ext in extractions.values() for s in ext.symbols}


def test_python_resolve_edges_whole_project(project: dict[str, Extraction]) -> None:
    edges = resolve_edges(project, all_qualnames(project))
    assert set(edges) == {
        Edge("pkg", "imports", "pkg.util"),
        Edge("pkg", "references", "pkg.util.helper"),
        Edge("pkg.util.helper", "calls", "pkg.util.Base"),
        # "import pkg.util as u", "from pkg.util import helper", "from pkg import util" (a module),
        # "from .util import Base": one imports edge; "os" is not a project module
        Edge("pkg.app", "imports", "pkg.util"),
        Edge("pkg.app", "references", "pkg.util.helper"),
        Edge("pkg.app", "references", "pkg.util.Base"),
        Edge("pkg.app.Service", "inherits", "pkg.util.Base"),
        Edge("pkg.app.Service.start", "calls", "pkg.app.Service.prepare"),  # self.
        Edge("pkg.app.Service.start", "calls", "pkg.util.Base.greet"),  # self. through the base class
        Edge("pkg.app.Service.start", "calls", "pkg.util.helper"),  # alias u
        Edge("pkg.app.Service.prepare", "calls", "pkg.util.helper"),  # from-import
        Edge("pkg.app.Service.prepare", "calls", "pkg.app.Local"),  # class instantiation
        Edge("pkg.app.main", "calls", "pkg.app.main.nested"),
        Edge("pkg.app.main", "calls", "pkg.app.Service"),
        Edge("pkg.app.main", "calls", "pkg.util.helper"),  # module imported with "from pkg import util"
        Edge("pkg.app.main.nested", "calls", "pkg.app.main"),
        # re-exported by pkg/__init__.py: "from .util import helper as exported"
        Edge("pkg.cli", "imports", "pkg"),
        Edge("pkg.cli", "references", "pkg.util.helper"),
        Edge("pkg.cli.run", "calls", "pkg.util.helper"),
    }
    assert edges == sorted(set(edges), key=lambda e: (e.source, e.kind, e.target))  # deterministic, no duplicates
    assert all(e.source != e.target for e in edges)  # run() calling itself is no edge


def test_python_resolve_edges_is_independent_of_mapping_order(project: dict[str, Extraction]) -> None:
    reversed_project = dict(reversed(list(project.items())))
    known = all_qualnames(project)
    assert resolve_edges(reversed_project, sorted(known)) == resolve_edges(project, known)


def test_python_resolve_edges_only_targets_known_names(project: dict[str, Extraction]) -> None:
    known = all_qualnames(project) - {"pkg.app.Local", "pkg.util"}
    edges = resolve_edges(project, known)
    assert not any(e.target in {"pkg.app.Local", "pkg.util"} for e in edges)
    assert Edge("pkg.app.Service.prepare", "calls", "pkg.util.helper") in edges


def test_python_resolve_against_symbols_indexed_elsewhere() -> None:
    src = (
        "import ext.lib as el\n"
        "from ext.lib import Thing\n"
        "from ext import lib\n"
        "class Mine(Thing):\n"
        "    def go(self):\n"
        "        self.inherited()\n"
        "        el.make()\n"
        "        lib.make()\n"
    )
    exts = {"mine.py": extract_python("mine.py", src, "mine")}
    known = all_qualnames(exts) | {"ext", "ext.lib", "ext.lib.Thing", "ext.lib.make"}
    edges = set(resolve_edges(exts, known))
    assert edges == {
        Edge("mine", "imports", "ext.lib"),
        Edge("mine", "references", "ext.lib.Thing"),
        # without kinds, "from ext import lib" reads as a name in module "ext"
        Edge("mine", "imports", "ext"),
        Edge("mine", "references", "ext.lib"),
        Edge("mine.Mine", "inherits", "ext.lib.Thing"),
        Edge("mine.Mine.go", "calls", "ext.lib.make"),
    }
    # With kinds, the module is recognised as such.
    kinds = {q: SymbolKind.FUNCTION.value for q in known} | {"ext": "Module", "ext.lib": SymbolKind.MODULE}
    edges = set(resolve_edges(exts, kinds))
    assert Edge("mine", "references", "ext.lib") not in edges
    assert Edge("mine", "imports", "ext") not in edges
    assert Edge("mine", "imports", "ext.lib") in edges


def test_python_resolve_scoping_rules() -> None:
    src = (
        "from other import helper\n"
        "def helper2(): pass\n"
        "class K:\n"
        "    def helper2(self): pass\n"
        "    def m(self):\n"
        "        helper2()\n"  # class attributes are not visible in a method: the module function
        "        helper()\n"
        "    @classmethod\n"
        "    def c(cls):\n"
        "        cls.m()\n"
        "        def local():\n"
        "            self.m()\n"
    )
    exts = {"m.py": extract_python("m.py", src, "m")}
    known = all_qualnames(exts) | {"other.helper"}
    calls = {(e.source, e.target) for e in resolve_edges(exts, known) if e.kind == "calls"}
    assert calls == {
        ("m.K.m", "m.helper2"),
        ("m.K.m", "other.helper"),
        ("m.K.c", "m.K.m"),
        ("m.K.c.local", "m.K.m"),
    }


def test_python_resolve_skips_files_that_did_not_parse() -> None:
    exts = {
        "bad.py": extract_python("bad.py", "def (", "bad"),
        "good.py": extract_python("good.py", "import bad\n", "good"),
    }
    assert resolve_edges(exts, {"bad", "good"}) == [Edge("good", "imports", "bad")]


def test_python_resolve_through_star_imports_terminates() -> None:
    # asyncio's layout: the package star-imports its submodules and also binds them by name.
    sources = {
        "pkg/__init__.py": ("pkg", "from .base import *\nfrom . import base\n"),
        "pkg/base.py": ("pkg.base", "def new_loop(): pass\n"),
        "pkg/use.py": (
            "pkg.use",
            "from pkg import *\nimport pkg\ndef f():\n    new_loop()\n    pkg.new_loop()\n    pkg.missing()\n",
        ),
    }
    exts = {path: extract_python(path, text, module) for path, (module, text) in sources.items()}
    calls = [e for e in resolve_edges(exts, all_qualnames(exts)) if e.kind == "calls"]
    assert calls == [Edge("pkg.use.f", "calls", "pkg.base.new_loop")]


def test_symbol_spans_match_the_full_extractor_on_real_code() -> None:
    """History maps diff hunks with the cheap scanner; its names and ranges must be the extractor's."""
    from pathlib import Path

    from acms.ingest.python_extractor import extract_python, symbol_spans

    root = Path(__file__).resolve().parents[2] / "src" / "acms"
    files = sorted(root.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        full = extract_python(path.name, text, "m")
        want = {(s.kind.value, s.qualname, s.start_line, s.end_line) for s in full.symbols if s.kind.value != "Module"}
        got = {(s.kind, s.qualname, s.start, s.end) for s in symbol_spans(path.name, text, "m")}
        assert got == want, path


def test_symbol_spans_edge_cases_match_the_extractor() -> None:
    from acms.ingest.python_extractor import extract_python, symbol_spans

    twice = ("def thing():\n    pass\n\n\nclass thing:\n    def m(self):\n        pass\n\n\n"
             "try:\n    def a():\n        pass\nexcept ImportError:\n    def b():\n        pass\n"
             "else:\n    def c():\n        pass\nfinally:\n    def d():\n        pass\n")
    deep = "def f(x):\n    if x == 0:\n        return 0\n" + "".join(
        f"    elif x == {i}:\n        def g{i}():\n            return {i}\n" for i in range(1, 1200))
    for text in (twice, deep):
        full = extract_python("m.py", text, "m")
        want = [(s.kind.value, s.qualname, s.start_line, s.end_line) for s in full.symbols if s.kind.value != "Module"]
        got = [(s.kind, s.qualname, s.start, s.end) for s in symbol_spans("m.py", text, "m")]
        assert sorted(got) == sorted(want)


@pytest.mark.parametrize("header", [
    "def f(a: int = 1) -> dict[str, int]:\n",
    "def f(key=lambda item: item[1:]):\n",
    "def f(\n    a,\n    b: list[int],\n) -> None:  # a comment: here\n",
    "def f(s=':', t=\"(\"):\n",
    "class A(B, metaclass=M):\n",
    "async def g(x=(y := 1)) -> 'A:B':\n",
])
def test_the_header_colon_is_the_one_the_tokenizer_finds(header: str) -> None:
    """The quick scan (headers without strings or comments) and the tokenizer agree on the colon."""
    from acms.ingest.python_extractor import header_colon

    colon = header_colon(header)
    assert colon is not None and header[colon] == ":" and header[colon + 1 :].strip() in ("", "# a comment: here")
    assert colon == header_colon(header + "#")  # the same header through the tokenizer
