"""Python files to symbols and imports, with the standard ``ast`` module only.

The parser (not regex) gives exact line ranges and headers even with decorators, multi-line
signatures and nested definitions. Call and base names are kept as written here and resolved
later, once every file of the project is known (``python_resolver``, re-exported below).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Collection, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from posixpath import basename, dirname, splitext

from acms.ingest.model import CodeSymbol, Extraction, ImportRef, SymbolKind
from acms.ingest.python_resolver import resolve_edges

__all__ = ["INIT_FILES", "add_symbol", "extract_python", "module_name_for", "module_names", "resolve_edges"]

# Lines as the Python tokenizer counts them (ast line numbers follow this, not str.splitlines).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_HIDES = frozenset("'\"#")  # what may hide a bracket or a colon in a header: strings, comments
# What a scope's walk looks for (calls, nested definitions, imports) is never below these: a name or a
# constant has no child that matters, and an expression's context or operator is a leaf.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del})
_NOT_CHILDREN = frozenset({"ctx", "op", "ops", "type_comment", "type_ignores"})
_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
INIT_FILES = ("__init__.py", "__init__.pyi")  # a package's module file, and its stub


def module_name_for(path: str, all_paths: Collection[str]) -> str:
    """Dotted module name of ``path``: the package root is the highest directory chain with ``__init__``."""
    return module_names((path,), all_paths)[path]


def module_names(paths: Iterable[str], all_paths: Collection[str]) -> dict[str, str]:
    """``module_name_for`` of each of ``paths``, each folder's dotted name worked out once (one path at a
    time, a standard library's ~1,800 modules took ~20 ms of each refresh)."""
    every = all_paths if isinstance(all_paths, AbstractSet) else set(all_paths)
    packages: dict[str, bool] = {}
    dotted: dict[str, str] = {}

    def is_package(folder: str) -> bool:
        got = packages.get(folder)
        if got is None:
            got = packages[folder] = any(f"{folder}/{init}" in every for init in INIT_FILES)
        return got

    def name_of(folder: str) -> str:  # the folder's name, after those of the packages it sits in
        got = dotted.get(folder)
        if got is None:
            parent = dirname(folder)
            got = dotted[folder] = (f"{name_of(parent)}.{basename(folder)}" if parent and is_package(parent)
                                    else basename(folder))
        return got

    names: dict[str, str] = {}
    for path in paths:
        directory, stem = dirname(path), splitext(basename(path))[0]
        if stem == "__init__" and directory:
            names[path] = name_of(directory)
        else:
            names[path] = f"{name_of(directory)}.{stem}" if directory and is_package(directory) else stem
    return names


def extract_python(path: str, text: str, module: str) -> Extraction:
    """Symbols and imports of one file; a file that does not parse yields only ``parse_error``."""
    source = text[1:] if text.startswith("\ufeff") else text
    try:
        with warnings.catch_warnings():
            # Invalid escapes etc. warn at parse time; the project runs with warnings as errors.
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=path)
        builder = _Builder(source, module, basename(path) in INIT_FILES)
        return builder.build(tree)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        error = f"SyntaxError: {exc.msg}{where}"
    except (ValueError, RecursionError, MemoryError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    return Extraction(language="python", module=module, parse_error=error)


@dataclass(frozen=True)
class Span:
    """A definition's kind, names and line range: what history needs, without calls or imports."""

    kind: str
    name: str
    qualname: str
    start: int
    end: int


def symbol_spans(path: str, text: str, module: str) -> list[Span]:
    """The classes, functions and methods of a file with the qualified names and line ranges
    ``extract_python`` gives them (same nesting, same merge of repeated names), about 4x cheaper:
    only statements are walked, never expressions, with an explicit stack (a 1,000-branch elif chain
    nests 1,000 deep). Empty when the file does not parse."""
    source = text[1:] if text.startswith("\ufeff") else text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    spans: dict[str, Span] = {}

    def defs(body: list[ast.stmt]) -> list[_Def]:
        """Definitions directly in this scope, in source order: through compound statements (in
        their fields' order, as the extractor walks them), never into a nested definition."""
        out: list[_Def] = []
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                out.append(node)
                continue
            children: list[ast.AST] = []
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.stmt):
                            children.append(item)
                        elif isinstance(item, (ast.excepthandler, ast.match_case)):
                            children.extend(item.body)
            stack.extend(reversed(children))
        return out

    pending: list[tuple[list[ast.stmt], str, bool]] = [(tree.body, module, False)]
    while pending:
        body, parent, in_class = pending.pop()
        for node in defs(body):
            is_class = isinstance(node, ast.ClassDef)
            kind = "Class" if is_class else ("Method" if in_class else "Function")
            qualname = f"{parent}.{node.name}"
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            old = spans.get(qualname)
            if old is not None:  # one entity for a repeated name, with the kind it was first given
                start, end, kind = min(start, old.start), max(end, old.end), old.kind
            spans[qualname] = Span(kind, node.name, qualname, start, end)
            pending.append((node.body, qualname, spans[qualname].kind == "Class"))
    return list(spans.values())


def dotted_name(expr: ast.expr, strip_subscript: bool = False) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None; ``Generic[T]`` -> ``Generic`` when asked."""
    if strip_subscript and isinstance(expr, ast.Subscript):
        expr = expr.value
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def absolute_module(module: str, is_package: bool, level: int, target: str | None) -> str | None:
    """Resolve a relative import the way the import system does, from the importing module's name."""
    if level == 0:
        return target
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 >= len(package):
        # Beyond the top package fails at runtime; a script's "from .x import y" is taken to name
        # its sibling, which module_name_for also names "x".
        return target if not package and level == 1 else None
    parts = package[: len(package) - (level - 1)]
    if target:
        parts.append(target)
    return ".".join(parts) or None


def header_colon(header: str) -> int | None:
    """Offset of the colon that ends a def/class header: the first ``:`` outside brackets.

    A header without quotes or ``#`` holds no string or comment that could hide a bracket or a
    colon, so a scan finds it; the others are tokenized (a standard library's 70k headers took
    ~1.3 s of CPU through ``tokenize`` alone)."""
    if not _HIDES.intersection(header):
        depth = 0
        for i, ch in enumerate(header):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == ":" and depth == 0:
                return i
        return None
    lines = io.StringIO(header, newline="").readlines()
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(header, newline="").readline):
            if tok.type != tokenize.OP:
                continue
            if tok.string in ("(", "[", "{"):
                depth += 1
            elif tok.string in (")", "]", "}"):
                depth -= 1
            elif tok.string == ":" and depth == 0:
                row, col = tok.start
                return sum(len(line) for line in lines[: row - 1]) + col
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


class _Builder:
    """One file's walk: symbols in pre-order (parents before children), imports in source order."""

    def __init__(self, source: str, module: str, is_package: bool) -> None:
        self.lines = _LINE.findall(source)
        self.module = module
        self.is_package = is_package
        self.symbols: dict[str, CodeSymbol] = {}

    def build(self, tree: ast.Module) -> Extraction:
        self._import_nodes: list[ast.Import | ast.ImportFrom] = []  # met by the scopes' walks
        calls, children = self._walk(tree.body)
        self._add(
            CodeSymbol(
                kind=SymbolKind.MODULE,
                name=self.module.rsplit(".", 1)[-1],
                qualname=self.module,
                start_line=1,
                end_line=max(1, len(self.lines)),
                signature=f"module {self.module}",
                docstring=ast.get_docstring(tree, clean=True),
                calls=calls,
            )
        )
        for child in children:
            self._scope(child, self.symbols[self.module])
        return Extraction(
            language="python", module=self.module, symbols=list(self.symbols.values()), imports=self._imports()
        )

    def _scope(self, node: _Def, parent: CodeSymbol) -> None:
        if isinstance(node, ast.ClassDef):
            kind = SymbolKind.CLASS
            bases = [name for b in node.bases if (name := dotted_name(b, strip_subscript=True))]
        else:
            kind = SymbolKind.METHOD if parent.kind is SymbolKind.CLASS else SymbolKind.FUNCTION
            bases = []
        calls, children = self._walk(node.body)
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        symbol = self._add(
            CodeSymbol(
                kind=kind,
                name=node.name,
                qualname=f"{parent.qualname}.{node.name}",
                start_line=start,
                end_line=node.end_lineno or node.lineno,
                signature=self._signature(node),
                docstring=ast.get_docstring(node, clean=True),
                decorators=[self._segment(d) for d in node.decorator_list],
                parent=parent.qualname,
                bases=bases,
                calls=calls,
            )
        )
        for child in children:
            self._scope(child, symbol)

    def _add(self, symbol: CodeSymbol) -> CodeSymbol:
        return add_symbol(self.symbols, symbol)

    def _walk(self, body: list[ast.stmt]) -> tuple[list[str], list[_Def]]:
        """Calls made by this scope's own code, and the definitions nested directly in it.

        Decorators, defaults, annotations and bases of a nested definition run in this scope, so
        their calls count here; the nested body belongs to the nested symbol. The imports met on the
        way are kept for ``_imports``: every statement is in exactly one scope's walk, so the tree is
        walked once (a second ``ast.walk`` for the imports, and ``ast.iter_child_nodes``, had cost
        more than parsing: 9.5 s against 5.7 s of CPU over a standard library).
        """
        calls: list[str] = []
        children: list[_Def] = []
        stack: list[ast.AST] = list(reversed(body))
        imports = self._import_nodes
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind in _LEAVES:
                continue
            if isinstance(node, _SCOPES):
                children.append(node)
                stack.extend(reversed(list(self._outer_parts(node))))
                continue
            if kind is ast.Call and (name := dotted_name(node.func)):  # type: ignore[attr-defined]
                calls.append(name)
            elif kind in _IMPORTS:
                imports.append(node)  # type: ignore[arg-type]
                continue
            kids: list[ast.AST] = []
            for field in _child_fields(kind):
                value = getattr(node, field, None)
                if isinstance(value, list):
                    kids.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    kids.append(value)
            stack.extend(reversed(kids))
        return list(dict.fromkeys(calls)), children

    @staticmethod
    def _outer_parts(node: _Def) -> Iterator[ast.AST]:
        yield from node.decorator_list
        if isinstance(node, ast.ClassDef):
            yield from node.bases
            yield from node.keywords
        else:
            yield node.args
            if node.returns is not None:
                yield node.returns

    def _signature(self, node: _Def) -> str:
        first = node.body[0]
        header = self._text(node.lineno, node.col_offset, first.lineno, first.col_offset)
        colon = header_colon(header)
        return header[: colon + 1] if colon is not None else header.rstrip()

    def _segment(self, node: ast.expr) -> str:
        return self._text(node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)

    def _text(self, line1: int, col1: int, line2: int, col2: int) -> str:
        """Source between two ast positions; ast columns are UTF-8 byte offsets."""
        if line1 == line2:
            return self._line(line1)[col1:col2].decode("utf-8", "replace")
        first = self._line(line1)[col1:].decode("utf-8", "replace")
        middle = "".join(self.lines[line1 : line2 - 1])
        last = self._line(line2)[:col2].decode("utf-8", "replace")
        return first + middle + last

    def _line(self, lineno: int) -> bytes:
        return self.lines[lineno - 1].encode("utf-8") if lineno <= len(self.lines) else b""

    def _imports(self) -> list[ImportRef]:
        found: list[tuple[int, int, int, ImportRef]] = []
        for node in self._import_nodes:
            if isinstance(node, ast.Import):
                for i, alias in enumerate(node.names):
                    local = alias.asname or alias.name.split(".")[0]
                    found.append((node.lineno, node.col_offset, i, ImportRef(alias.name, None, local, node.lineno)))
            elif isinstance(node, ast.ImportFrom):
                base = absolute_module(self.module, self.is_package, node.level, node.module)
                if base is None:  # relative import beyond the top-level package: fails at runtime too
                    continue
                for i, alias in enumerate(node.names):
                    ref = ImportRef(base, alias.name, alias.asname or alias.name, node.lineno)
                    found.append((node.lineno, node.col_offset, i, ref))
        found.sort(key=lambda item: item[:3])
        return [ref for *_, ref in found]


@cache
def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of an ast node type that may hold child nodes worth walking."""
    return tuple(f for f in kind._fields if f not in _NOT_CHILDREN)  # type: ignore[attr-defined]


def add_symbol(symbols: dict[str, CodeSymbol], symbol: CodeSymbol) -> CodeSymbol:
    """Same qualname twice (property setter, conditional def): one entity spanning both.

    The entity IRI is path + qualname, so two symbols with one qualname would give one node
    two line ranges; merging keeps the graph consistent and still covers every line.
    """
    old = symbols.get(symbol.qualname)
    if old is None:
        symbols[symbol.qualname] = symbol
        return symbol
    old.start_line = min(old.start_line, symbol.start_line)
    old.end_line = max(old.end_line, symbol.end_line)
    old.docstring = old.docstring or symbol.docstring
    old.decorators = list(dict.fromkeys(old.decorators + symbol.decorators))
    old.bases = list(dict.fromkeys(old.bases + symbol.bases))
    old.calls = list(dict.fromkeys(old.calls + symbol.calls))
    return old
