"""Symbols of a Python file that ``ast`` rejects (Python 2 code, a syntax error), with tree-sitter.

``python_extractor`` parses with ``ast``; ``ast`` only reads the running Python's grammar, so a
Python 2 file (``print x``, ``except E, e:``, ``exec code``) or a file with one broken function
gets no symbols at all and is indexed as text windows. tree-sitter's Python grammar accepts most
Python 2 statements and recovers from errors (ERROR nodes wrap what it could not fit; they are
walked into), so the definitions it finds are kept and given what ``extract_python`` gives them:
the same qualnames, parents, kinds, line ranges (tokenizer lines, decorators included), header
signatures, cleaned docstrings, decorators, bases, calls in walk order and imports, with the same
merge of repeated names. A definition whose header tree-sitter had to repair (``def f(:``) is left
out with its body: its name, signature and extent would be guesses.

tree-sitter is optional: without it (or with a grammar it cannot load) ``extract_python_fallback``
returns None and the file stays text, as before.
"""

from __future__ import annotations

import ast
import inspect
import re
import threading
import warnings
from bisect import bisect_right
from posixpath import basename
from typing import TYPE_CHECKING, Any

from acms.ingest.model import CodeSymbol, Extraction, ImportRef, SymbolKind
from acms.ingest.python_extractor import INIT_FILES, absolute_module, add_symbol

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["available", "extract_python_fallback"]

_LINE_END = re.compile(rb"\r\n|\r|\n")  # the tokenizer's line ends, as python_extractor counts lines
_TYPE_CALL = re.compile(rb"type\s*\(")
_DEFS = ("function_definition", "class_definition")
_SKIP = ("comment",)
_local = threading.local()
_language: Any = None
_unavailable = False


def _parser() -> Any | None:
    """One parser per thread (a parser is not thread-safe); None when tree-sitter cannot load."""
    global _language, _unavailable
    if _unavailable:
        return None
    parser = getattr(_local, "parser", None)
    if parser is not None:
        return parser
    try:
        if _language is None:
            import tree_sitter
            import tree_sitter_python

            _language = tree_sitter.Language(tree_sitter_python.language())
        from tree_sitter import Parser

        parser = Parser(_language)
    except Exception:  # not installed, or a grammar built for another tree-sitter ABI
        _unavailable = True
        return None
    _local.parser = parser
    return parser


def available() -> bool:
    """Whether tree-sitter and its Python grammar load here."""
    return _parser() is not None


def extract_python_fallback(path: str, text: str, module: str) -> Extraction | None:
    """What ``extract_python`` would give for a file ``ast`` rejects, or None: tree-sitter missing,
    or a file with syntax errors (for tree-sitter too) in which no class or function survives. A
    script the grammar reads whole gets its module symbol even without definitions, as under ast.
    Never raises: a fallback must not fail the index."""
    parser = _parser()
    if parser is None:
        return None
    source = text[1:] if text.startswith("\ufeff") else text
    try:
        data = source.encode("utf-8", "surrogatepass")
        tree = parser.parse(data)
        ext = _Builder(data, module, basename(path) in INIT_FILES).build(tree.root_node)
    except Exception:  # a grammar or recovery surprise: the file stays text
        return None
    if len(ext.symbols) < 2 and tree.root_node.has_error:
        return None  # no definition in a file the grammar did not accept either: text, as before
    return ext


class _Def:
    """A definition found in a scope: its node and the decorator nodes written above it."""

    __slots__ = ("node", "decorators", "start")

    def __init__(self, node: Node, decorators: list[Node], start: int) -> None:
        self.node = node
        self.decorators = decorators
        self.start = start


class _Builder:
    """One file's walk, mirroring ``python_extractor._Builder``: symbols in pre-order, imports in source order."""

    def __init__(self, data: bytes, module: str, is_package: bool) -> None:
        self.data = data
        self.module = module
        self.is_package = is_package
        self.line_starts = [0] + [m.end() for m in _LINE_END.finditer(data)]
        self.symbols: dict[str, CodeSymbol] = {}
        self.imports: list[tuple[int, int, ImportRef]] = []  # (statement offset, order found, ref)

    def build(self, root: Node) -> Extraction:
        calls, children = self._walk(list(root.children))
        lines = len(self.line_starts) - (1 if self.line_starts[-1] == len(self.data) else 0)
        self._add(
            CodeSymbol(
                kind=SymbolKind.MODULE,
                name=self.module.rsplit(".", 1)[-1],
                qualname=self.module,
                start_line=1,
                end_line=max(1, lines),
                signature=f"module {self.module}",
                docstring=self._docstring(root),
                calls=calls,
            )
        )
        for child in children:
            self._scope(child, self.symbols[self.module])
        self.imports.sort(key=lambda item: item[:2])  # nested bodies are walked after their scope
        return Extraction(language="python", module=self.module, symbols=list(self.symbols.values()),
                          imports=[ref for *_, ref in self.imports])

    # -- definitions -------------------------------------------------------------------------

    def _scope(self, found: _Def, parent: CodeSymbol) -> None:
        node = found.node
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        colon = self._header_colon(node)
        if name is None or body is None or colon is None or name.type != "identifier":
            return
        if node.type == "class_definition":
            kind = SymbolKind.CLASS
            supers = node.child_by_field_name("superclasses")
            bases = [] if supers is None else [b for b in map(self._base, supers.named_children) if b]
        else:
            kind = SymbolKind.METHOD if parent.kind is SymbolKind.CLASS else SymbolKind.FUNCTION
            bases = []
        calls, children = self._walk(list(body.children))
        symbol = self._add(
            CodeSymbol(
                kind=kind,
                name=self._text(name),
                qualname=f"{parent.qualname}.{self._text(name)}",
                start_line=self._line(found.start),
                end_line=self._line(max(self._end(node), colon.end_byte) - 1),
                signature=self.data[node.start_byte : colon.end_byte].decode("utf-8", "replace"),
                docstring=self._docstring(body),
                decorators=[self._decorator(d) for d in found.decorators],
                parent=parent.qualname,
                bases=bases,
                calls=calls,
            )
        )
        for child in children:
            self._scope(child, symbol)

    @staticmethod
    def _header_colon(node: Node) -> Node | None:
        """The ``:`` ending the header, or None when the header holds an error or a missing token."""
        for child in node.children:
            if child.is_missing or child.has_error or child.is_error:
                return None
            if child.type == ":":
                return child
        return None

    def _add(self, symbol: CodeSymbol) -> CodeSymbol:
        return add_symbol(self.symbols, symbol)  # merged exactly as python_extractor merges

    def _walk(self, body: list[Node]) -> tuple[list[str], list[_Def]]:
        """Calls made by this scope's own code and the definitions nested directly in it; the
        decorators, parameters (defaults, annotations), return annotation and bases of a nested
        definition run in this scope. ERROR nodes are walked like any other node. Imports are
        collected on the way (every node is walked exactly once over the whole file)."""
        calls: list[str] = []
        children: list[_Def] = []
        stack: list[Node] = list(reversed(body))
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in _SKIP:
                continue
            if kind == "decorated_definition" or kind in _DEFS:
                found = self._definition(node)
                outer: list[Node] = []
                if found is not None:
                    children.append(found)
                    outer = [part for d in found.decorators for part in d.named_children]
                    definition = found.node
                else:  # decorators with no definition after them (recovery): walk what is there
                    outer = list(node.children)
                    definition = None
                if definition is not None:
                    for field in ("superclasses", "parameters", "return_type"):
                        part = definition.child_by_field_name(field)
                        if part is not None:
                            outer.append(part)
                stack.extend(reversed(outer))
                continue
            if kind == "call":
                func = node.child_by_field_name("function")
                name = self._dotted(func, starred=True) if func is not None else None
                if name:
                    calls.append(name)
            elif kind == "type_alias_statement" and _TYPE_CALL.match(self.data, node.start_byte):
                calls.append("type")  # "type(x).attr = v" read as a PEP 695 alias: it is a call
            elif kind in ("import_statement", "import_from_statement", "future_import_statement"):
                self._import(node)
            stack.extend(reversed(_REORDER[kind](node) if kind in _REORDER else node.children))
        return list(dict.fromkeys(calls)), children

    @staticmethod
    def _definition(node: Node) -> _Def | None:
        if node.type in _DEFS:
            return _Def(node, [], node.start_byte)
        definition = node.child_by_field_name("definition")
        if definition is None or definition.type not in _DEFS:
            return None
        decorators = [c for c in node.children if c.type == "decorator"]
        return _Def(definition, decorators, decorators[0].start_byte if decorators else definition.start_byte)

    # -- pieces --------------------------------------------------------------------------------

    def _text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _line(self, offset: int) -> int:
        """1-based tokenizer line of a byte offset."""
        return bisect_right(self.line_starts, max(0, offset))

    @staticmethod
    def _end(node: Node) -> int:
        """End of the last token that is code: a trailing comment inside a block is not (ast ends
        a definition at its last statement)."""
        while True:
            kids = [c for c in node.children if c.type not in _SKIP and not c.is_missing]
            if not kids:
                return node.end_byte
            node = kids[-1]

    def _decorator(self, node: Node) -> str:
        expr = [c for c in node.named_children if c.type not in _SKIP]
        return self._text(expr[0]) if expr else self._text(node).lstrip("@").strip()

    def _dotted(self, node: Node, starred: bool = False) -> str | None:
        """``a.b.c`` for an identifier/attribute chain (parentheses dropped, as ast drops them).

        ``starred``: the chain is a callee, and ``[*f.g(x)]`` comes out of the grammar as a call of
        ``(*f).g``; a callee is never starred, so the star belongs to the call and is dropped."""
        parts: list[str] = []
        while True:
            if starred and node.type == "list_splat":
                inner = _code(node)
                if len(inner) != 1:
                    return None
                node = inner[0]
            elif node.type == "parenthesized_expression":
                inner = [c for c in node.named_children if c.type not in _SKIP]
                if len(inner) != 1:
                    return None
                node = inner[0]
            elif node.type == "attribute":
                attr = node.child_by_field_name("attribute")
                obj = node.child_by_field_name("object")
                if attr is None or obj is None:
                    return None
                parts.append(self._text(attr))
                node = obj
            elif node.type == "identifier":
                parts.append(self._text(node))
                return ".".join(reversed(parts))
            else:
                return None

    def _base(self, node: Node) -> str | None:
        """A positional base class as written; ``Generic[T]`` -> ``Generic``; keywords are no bases."""
        if node.type == "subscript":
            value = node.child_by_field_name("value")
            return self._dotted(value) if value is not None else None
        return self._dotted(node)

    def _docstring(self, block: Node) -> str | None:
        """The cleaned first statement of a body when it is a lone string literal (``ast.get_docstring``)."""
        first = next((c for c in block.children if c.type not in _SKIP and c.is_named), None)
        if first is None or first.type != "expression_statement":
            return None
        parts = [c for c in first.named_children if c.type not in _SKIP]
        if len(parts) != 1:
            return None
        expr = parts[0]
        while expr.type == "parenthesized_expression":
            inner = [c for c in expr.named_children if c.type not in _SKIP]
            if len(inner) != 1:
                return None
            expr = inner[0]
        if expr.type not in ("string", "concatenated_string") or expr.has_error:
            return None
        value = _string_value(self._text(expr))
        return inspect.cleandoc(value) if isinstance(value, str) else None

    # -- imports -------------------------------------------------------------------------------

    def _import(self, node: Node) -> None:
        line = self._line(node.start_byte)
        if node.type == "import_statement":
            for target in node.children_by_field_name("name"):
                dotted, alias = self._import_target(target)
                if dotted:
                    self._record(node, ImportRef(dotted, None, alias or dotted.split(".")[0], line))
            return
        if node.type == "future_import_statement":
            base: str | None = "__future__"
        else:
            source = node.child_by_field_name("module_name")
            if source is None:
                return
            level, target = 0, None
            if source.type == "relative_import":
                for part in source.named_children:
                    if part.type == "import_prefix":
                        level = self._text(part).count(".")
                    elif part.type == "dotted_name":
                        target = self._names(part)
            else:
                target = self._names(source)
            base = absolute_module(self.module, self.is_package, level, target)
        if base is None:  # relative import beyond the top-level package: fails at runtime too
            return
        if any(c.type == "wildcard_import" for c in node.children):
            self._record(node, ImportRef(base, "*", "*", line))
            return
        for target in node.children_by_field_name("name"):
            name, alias = self._import_target(target)
            if name:
                self._record(node, ImportRef(base, name, alias or name, line))

    def _record(self, statement: Node, ref: ImportRef) -> None:
        self.imports.append((statement.start_byte, len(self.imports), ref))

    def _import_target(self, node: Node) -> tuple[str | None, str | None]:
        """(dotted name, alias or None) of ``a.b`` or ``a.b as c``."""
        if node.type == "aliased_import":
            name = node.child_by_field_name("name")
            alias = node.child_by_field_name("alias")
            return (self._names(name) if name is not None else None,
                    self._text(alias) if alias is not None else None)
        if node.type == "dotted_name":
            return self._names(node), None
        return None, None

    def _names(self, dotted: Node) -> str | None:
        parts = [self._text(c) for c in dotted.named_children if c.type == "identifier"]
        return ".".join(parts) or None


# Where ast's field order is not source order, calls are listed in ast's order (the walk order of
# ``python_extractor``): ``b if a else c`` walks a first, a call its positional arguments before its
# keywords, a dict its keys before its values, parameters their annotations before their defaults.


def _code(node: Node) -> list[Node]:
    return [c for c in node.named_children if c.type not in _SKIP]


def _conditional(node: Node) -> list[Node]:
    parts = _code(node)
    return [parts[1], parts[0], *parts[2:]] if len(parts) >= 2 else parts


def _arguments(node: Node) -> list[Node]:
    parts = _code(node)
    keywords = ("keyword_argument", "dictionary_splat")
    return [c for c in parts if c.type not in keywords] + [c for c in parts if c.type in keywords]


def _dictionary(node: Node) -> list[Node]:
    keys: list[Node] = []
    values: list[Node] = []
    for part in _code(node):
        if part.type == "pair":
            key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
            keys += [key] if key is not None else []
            values += [value] if value is not None else []
        else:  # **mapping (its key is None in ast), or recovery debris
            values.append(part)
    return keys + values


def _parameters(node: Node) -> list[Node]:
    """ast's ``arguments`` order: positional annotations, the ``*args`` annotation, keyword-only
    annotations, keyword-only defaults, the ``**kwargs`` annotation, positional defaults."""
    pos_ann: list[Node] = []
    star_ann: list[Node] = []
    kw_ann: list[Node] = []
    kw_defaults: list[Node] = []
    kwarg_ann: list[Node] = []
    defaults: list[Node] = []
    starred = False
    for part in _code(node):
        kind = part.type
        if kind in ("keyword_separator", "list_splat_pattern"):
            starred = True
            continue
        annotation = part.child_by_field_name("type")
        default = part.child_by_field_name("value")
        if kind == "typed_parameter":
            pattern = next((c.type for c in part.named_children if c.type.endswith("splat_pattern")), None)
            if pattern == "list_splat_pattern":
                starred = True
                star_ann += [annotation] if annotation is not None else []
                continue
            if pattern == "dictionary_splat_pattern":
                kwarg_ann += [annotation] if annotation is not None else []
                continue
        if annotation is not None:
            (kw_ann if starred else pos_ann).append(annotation)
        if default is not None and kind in ("default_parameter", "typed_default_parameter"):
            (kw_defaults if starred else defaults).append(default)
        elif kind not in ("identifier", "typed_parameter", "default_parameter", "typed_default_parameter",
                          "tuple_pattern", "dictionary_splat_pattern", "positional_separator"):
            defaults.append(part)  # recovery debris: walked, last
    return pos_ann + star_ann + kw_ann + kw_defaults + kwarg_ann + defaults


_REORDER = {
    "conditional_expression": _conditional,
    "argument_list": _arguments,
    "dictionary": _dictionary,
    "parameters": _parameters,
    "lambda_parameters": _parameters,
}


_UR_PREFIX = re.compile(r"(?<![\w'\"])[uU](?=[rR]['\"])")


def _string_value(literal: str) -> object:
    """The value of a string literal (or implicitly concatenated ones, maybe over several lines) as
    Python 3 reads it; Python 2's ``ur''`` prefix is read as ``r''``. None when it does not evaluate."""
    for attempt in (literal, _UR_PREFIX.sub("", literal)):
        try:
            with warnings.catch_warnings():  # invalid escapes warn; the project runs with warnings as errors
                warnings.simplefilter("ignore")
                return ast.literal_eval(f"(\n{attempt}\n)")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None
