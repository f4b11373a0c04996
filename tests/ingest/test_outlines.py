"""Class outlines: the map of a class an agent reads beside the method it edits (signature, doc line,
the class's own statements such as fields and constants, member signatures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acms.ingest.extractors import extract
from acms.ingest.fragments import DOCUMENTED_MEMBERS, MACRO, MAX_MEMBER_LINES, MAX_MEMBERS
from acms.ingest.model import SourceFile
from acms.ingest.walker import language_for


def outline(path: str, text: str, name: str) -> list[str]:
    """The outline of the class ``name`` in ``text``, as lines."""
    source = SourceFile(path, text, len(text), "0" * 64, language_for(path))
    _, fragments = extract(source, {path}, 40)
    return next(f.text for f in fragments if f.lod == MACRO and f.owner.endswith(f".{name}")).splitlines()


PYTHON = '''\
class Map(object):
    """The map class stores all the URL rules.

    default_converters = "not a statement: the docstring's text"
    """

    #: the converters a map knows
    default_converters = DEFAULT_CONVERTERS
    template = """
    not_a_member = 1
    """
    sort_parameters: bool = False
    converters = dict(
        default=1,
    )

    @property
    def rules(self):
        local = 1
        return local

    def add(self, rule):
        self.rules.append(rule)
'''


def test_a_python_class_outline_lists_its_own_statements_before_its_methods() -> None:
    assert outline("pkg/routing.py", PYTHON, "Map") == [
        "class Map(object):",
        '    """The map class stores all the URL rules."""',
        "    default_converters = DEFAULT_CONVERTERS",
        '    template = """',
        "    sort_parameters: bool = False",
        "    converters = dict(",
        "    def rules(self):",
        "    def add(self, rule):",
    ]


TYPESCRIPT = '''\
export class HttpClient {
  /** The base URL, without a trailing slash. */
  private base: string;
  retries = 3;

  constructor(base: string) {
    this.base = base;
  }

  request(path: string): Promise<string> {
    const url = this.base + path;
    return fetch(url).then(r => r.text());
  }
}
'''


def test_a_typescript_class_outline_lists_its_fields() -> None:
    lines = outline("src/client.ts", TYPESCRIPT, "HttpClient")
    assert lines[1:3] == ["    private base: string;", "    retries = 3;"]
    assert not any("url" in line or "this.base" in line or "trailing slash" in line for line in lines)


def test_a_class_with_many_statements_lists_a_bounded_number() -> None:
    fields = "".join(f"    field_{i} = {i}\n" for i in range(MAX_MEMBER_LINES + 5))
    lines = outline("pkg/wide.py", f"class Wide:\n{fields}\n    def run(self):\n        pass\n", "Wide")
    assert lines == ["class Wide:", *(f"    field_{i} = {i}" for i in range(MAX_MEMBER_LINES)), "    def run(self):"]


def methods(n: int) -> str:
    return "".join(f'    def m{i}(self):\n        """Does {i}."""\n\n' for i in range(n))


def test_a_small_class_outline_keeps_each_members_doc_line() -> None:
    lines = outline("pkg/small.py", f"class Small:\n{methods(DOCUMENTED_MEMBERS)}", "Small")
    assert lines[1:] == [f"    def m{i}(self):  # Does {i}." for i in range(DOCUMENTED_MEMBERS)]


def test_a_large_class_outline_is_a_map_not_a_dump() -> None:
    """Past DOCUMENTED_MEMBERS members the doc lines go; past MAX_MEMBERS signatures the rest are named."""
    n = MAX_MEMBERS + 3
    lines = outline("pkg/large.py", f"class Large:\n{methods(n)}", "Large")
    assert lines[1:-1] == [f"    def m{i}(self):" for i in range(MAX_MEMBERS)]
    assert lines[-1] == f"    # … and 3 more: m{MAX_MEMBERS}, m{MAX_MEMBERS + 1}, m{MAX_MEMBERS + 2}"


POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot_project"


@pytest.mark.parametrize(("path", "name", "fields"), [
    ("rs/lib.rs", "Point", ["    x: f64,", "    y: f64,"]),
    ("shapes/shape.go", "Circle", ["    Base", "    R float64"]),
])
def test_a_struct_outline_lists_its_fields(path: str, name: str, fields: list[str]) -> None:
    lines = outline(path, (POLYGLOT / path).read_text(encoding="utf-8"), name)
    assert [line for line in lines if line in fields] == fields


def test_a_placeholder_body_lists_nothing() -> None:
    assert outline("pkg/errors.py", "class Error(Exception):\n    pass\n\n\nclass P:\n    ...\n", "Error") == [
        "class Error(Exception):"]
