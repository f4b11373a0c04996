"""What extractors produce: plain dataclasses, no RDF. The pipeline turns them into triples.

Keeping extraction free of RDF lets each extractor be tested on its own and lets the pipeline own the
IRI scheme and the graph layout in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class SymbolKind(str, Enum):
    """The UKO class of a code element (its local name)."""

    MODULE = "Module"
    CLASS = "Class"
    FUNCTION = "Function"
    METHOD = "Method"
    STRUCT = "Struct"  # the four below are subclasses of uko:Class: types with members
    INTERFACE = "Interface"
    TRAIT = "Trait"
    ENUM = "Enum"
    NAMESPACE = "Namespace"  # a named scope inside a file with definitions of its own (a Rust inline module)


# Kinds that hold members and take part in inheritance (uko:Class and its subclasses).
CLASS_LIKE = frozenset({SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.TRAIT, SymbolKind.ENUM})
CLASS_LIKE_NAMES = frozenset(k.value for k in CLASS_LIKE)


@dataclass(frozen=True)
class SourceFile:
    """One listed, readable text file."""

    path: str  # POSIX, relative to the project root
    text: str
    size: int
    sha256: str
    language: str


@dataclass
class CodeSymbol:
    kind: SymbolKind
    name: str
    qualname: str  # dotted, module-qualified: pkg.mod.Class.method
    start_line: int  # 1-based inclusive, decorators included
    end_line: int
    signature: str  # declaration line(s) without the body, e.g. "def f(a: int) -> str:"
    docstring: str | None = None
    decorators: list[str] = field(default_factory=list)  # source text without "@"
    parent: str | None = None  # qualname of the enclosing module/class/function
    bases: list[str] = field(default_factory=list)  # raw dotted names as written
    calls: list[str] = field(default_factory=list)  # raw dotted callee names as written, deduplicated, in order


@dataclass
class ImportRef:
    """One imported module or name. Python: already made absolute (relative imports resolved); a
    tree-sitter language: the import string as written, ``::`` and ``\\`` read as ``/``."""

    module: str  # Python: absolute dotted module name; otherwise the import string
    name: str | None  # the imported name for "from m import name", else None
    alias: str  # the local name it is bound to
    line: int


@dataclass
class DocSection:
    title: str
    anchor: str  # unique within the file: slug path such as "install/from-source"
    level: int
    start_line: int
    end_line: int
    parent: str | None = None  # anchor of the enclosing section


@dataclass
class Extraction:
    """Everything one extractor found in one file."""

    language: str
    module: str | None = None  # dotted module name for code files
    symbols: list[CodeSymbol] = field(default_factory=list)
    imports: list[ImportRef] = field(default_factory=list)
    sections: list[DocSection] = field(default_factory=list)
    parse_error: str | None = None  # set when the language parser failed; the file is then text


@dataclass(frozen=True)
class Edge:
    """A resolved relation between two project entities, by qualified name."""

    source: str
    kind: str  # "imports" | "calls" | "inherits" | "references"
    target: str
