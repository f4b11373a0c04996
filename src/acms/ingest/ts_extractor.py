"""Any tree-sitter language to symbols, calls, bases and imports, driven by the captures in ``languages/NAME.scm``.

The extractor knows capture names, never node types (languages/README.md lists them):

- ``@definition.KIND`` (class, struct, interface, trait, enum, function, method) spans one definition,
  with ``@name``, optionally ``@receiver`` (the type a method written outside it belongs to: Go's
  receiver, ``Foo.prototype.bar = function``), ``@base`` (a type it extends or implements) and
  ``@body`` (where its signature ends; default: the node's ``body`` field). Several patterns may
  capture the same node: what they capture is merged (one pattern names a class, another its bases).
- ``@scope`` qualifies the names defined inside it without being an entity (namespaces, Rust ``mod``);
  ``@scope.type`` does the same for a type's members written in a separate block (Rust ``impl``),
  whose functions are methods, and its ``@base`` goes to the type when this file defines it; the block
  is a namespace entity unless it is the inherent block of a type this file defines.
- ``@call`` is a callee (``f``, ``pkg.F``, ``this.m``, ``Foo::bar``), kept as a dotted name.
- ``@import`` is an import's string or path, ``@import.name`` a name taken from it, ``@import.alias``
  the local name bound to either.

Qualified names follow Python's: the module is the file's path without its extension, dotted
(``binding/json.go`` -> ``binding.json``), then the enclosing types and scopes: ``binding.json.jsonBinding.Bind``.
So ``binding/json.go::jsonBinding.Bind`` addresses it. Two listed files that would get one module name
(``foo.c`` and ``foo.h``) keep their extension in it (``foo_c``, ``foo_h``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from posixpath import basename, dirname, splitext
from typing import TYPE_CHECKING

from acms.ingest.model import CLASS_LIKE, CodeSymbol, Extraction, ImportRef, SymbolKind
from acms.ingest.python_extractor import Span, add_symbol
from acms.ingest.ts_languages import extension_map, loaded, parser

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["extract_tree_sitter", "module_name", "tree_sitter_spans"]

_KINDS = {"class": SymbolKind.CLASS, "struct": SymbolKind.STRUCT, "interface": SymbolKind.INTERFACE,
          "trait": SymbolKind.TRAIT, "enum": SymbolKind.ENUM, "function": SymbolKind.FUNCTION,
          "method": SymbolKind.METHOD, "namespace": SymbolKind.NAMESPACE}
_SEP = re.compile(r"\s*(?:::|->|\?\.|\.|\\)\s*")
_IDENT = re.compile(r"[A-Za-z_$@][\w$]*[?!]?")
_GENERIC = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
# Names ``_IDENT`` does not take, by language, of the last part only: a JavaScript private member
# (``#bump``), a C++ destructor (``~Foo``); and a C++ operator, read before the generics are cut
# (``Foo::operator==``, ``operator[]``, ``operator()``)
_PRIVATE = re.compile(r"#[A-Za-z_$][\w$]*")
_DESTRUCTOR = re.compile(r"~[A-Za-z_]\w*")
_OPERATOR = re.compile(r"(?P<scope>(?:[A-Za-z_]\w*(?:<[^<>]*>)?\s*::\s*)*)operator\b\s*(?P<op>\S.*?)\s*")
_JS = frozenset({"javascript", "typescript", "tsx"})
_NEWLINE = re.compile(b"\n")
_MAX_SIGNATURE_LINES = 6
_MAX_DOC = 2000
_SELF = frozenset({"this", "self", "Self", "@", "static"})  # the instance or type a member is called on
_COMMENT_MARK = re.compile(r"^\s*(?:/\*\*?|\*/|\*(?!/)|///?!?|//!|#+|--)\s?")


def module_name(path: str, all_paths: Collection[str]) -> str:
    """The dotted module name of a non-Python code file: its path without the extension; with the
    extension (``foo_h``) when another listed code file in its folder has the same stem."""
    stem, ext = splitext(path)
    folder, base = dirname(stem), basename(stem)
    paths = all_paths if isinstance(all_paths, AbstractSet) else set(all_paths)
    clash = any(f"{stem}{other}" in paths for other in (*extension_map(), ".py", ".pyi") if other != ext.lower())
    name = f"{base}_{ext.lstrip('.').lower()}" if clash and ext else base
    return ".".join([*(p for p in folder.split("/") if p), name]).replace(" ", "_") or "_"


@dataclass(eq=False)
class _Def:
    node: Node
    kind: str  # a key of _KINDS, or "scope" / "scope.type"
    name: Node | None = None
    named_by: int = 1 << 30  # index of the pattern that gave the name (the lowest wins)
    receiver: Node | None = None
    body: Node | None = None
    bases: list[Node] = field(default_factory=list)
    container: _Def | None = None
    qualname: str = ""
    type_qualname: str = ""  # a ``scope.type`` block's type (its qualname adds the trait it implements)
    symbol: CodeSymbol | None = None
    calls: list[str] = field(default_factory=list)

    @property
    def is_scope(self) -> bool:
        return self.kind.startswith("scope")


def extract_tree_sitter(path: str, text: str, language: str, module: str) -> Extraction | None:
    """Symbols, calls, bases and imports of one file; None when ``language`` has no usable grammar.

    Never raises for a file's content: tree-sitter recovers from syntax errors, and what it could not
    fit is left out."""
    lang = loaded(language)
    if lang is None:
        return None
    from tree_sitter import QueryCursor

    source = text[1:] if text.startswith("\ufeff") else text
    data = source.encode("utf-8", "surrogatepass")
    tree = parser(lang).parse(data)
    return _Builder(data, language, module).build(QueryCursor(lang.query).matches(tree.root_node))


def tree_sitter_spans(path: str, text: str, language: str, module: str) -> list[Span]:
    """The definitions (not the module) with the names and lines ``extract_tree_sitter`` gives them."""
    ext = extract_tree_sitter(path, text, language, module)
    if ext is None:
        return []
    return [Span(s.kind.value, s.name, s.qualname, s.start_line, s.end_line)
            for s in ext.symbols if s.kind is not SymbolKind.MODULE]


def _last_row(node: Node) -> int:
    """The row a node's text ends on: a node that holds its line's newline (Rust's ``///`` comments)
    ends at column 0 of the next row, which is not one of its lines."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row


def _is_block(node_type: str) -> bool:
    """A node holding a list of members or statements (a class body, a block, a declaration list)."""
    return "body" in node_type or "block" in node_type or node_type.endswith("_list")


class _Builder:
    def __init__(self, data: bytes, language: str, module: str) -> None:
        self.data = data
        self.language = language
        self.module = module
        self.defs: dict[Node, _Def] = {}
        self.calls: list[tuple[Node, str]] = []  # (where, dotted callee)
        self.imports: list[tuple[int, ImportRef]] = []
        self.line_starts = [0] + [m.end() for m in _NEWLINE.finditer(data)]  # tree-sitter's rows end at \n
        self._module_calls: list[str] = []
        self.bodied: dict[str, bool] = {}  # qualname -> its definition has a body
        self.starts: list[int] = []  # first lines of the definitions qualified so far, in order
        self.types: frozenset[str] = frozenset()  # the names of the types this file defines

    # -- collecting ----------------------------------------------------------------------------
    def build(self, matches: list[tuple[int, dict[str, list[Node]]]]) -> Extraction:
        for pattern, caps in matches:
            self._match(pattern, caps)
        lines = len(self.line_starts) - (1 if self.line_starts[-1] == len(self.data) else 0)
        root = CodeSymbol(kind=SymbolKind.MODULE, name=self.module.rsplit(".", 1)[-1], qualname=self.module,
                          start_line=1, end_line=max(1, lines), signature=f"module {self.module}")
        symbols: dict[str, CodeSymbol] = {self.module: root}
        ordered = sorted((d for d in self.defs.values() if d.name is not None),
                         key=lambda d: (d.node.start_byte, -d.node.end_byte))
        self._nest(ordered)
        self.types = frozenset(self._text(d.name) for d in ordered  # type: ignore[arg-type]
                               if d.kind in _KINDS and _KINDS[d.kind] in CLASS_LIKE)
        for d in ordered:
            self._qualify(d, symbols)
        for d in ordered:
            if d.symbol is not None:
                d.symbol.calls = list(dict.fromkeys(d.symbol.calls + d.calls))
        root.calls = list(dict.fromkeys(root.calls + self._module_calls))
        for d in ordered:  # a separate block's bases (Rust "impl Trait for Type") go to the type
            if d.kind == "scope.type" and d.bases:
                target = symbols.get(d.type_qualname)
                if target is not None and target.kind in CLASS_LIKE:
                    target.bases = list(dict.fromkeys(target.bases + self._base_names(d.bases)))
        self.imports.sort(key=lambda item: item[0])
        imports: dict[tuple[str, str | None, str], ImportRef] = {}
        for _, ref in self.imports:
            imports.setdefault((ref.module, ref.name, ref.alias), ref)
        # patterns overlap ("import {a} from 'm'" is also "import ... from 'm'"): a bare import of a
        # module that is also imported with a name or an alias says nothing more
        named = {ref.module for ref in imports.values() if ref.name is not None or ref.alias}
        return Extraction(language=self.language, module=self.module, symbols=list(symbols.values()),
                          imports=[r for r in imports.values() if r.name is not None or r.alias or r.module not in named])

    def _match(self, pattern: int, caps: dict[str, list[Node]]) -> None:
        for key, nodes in caps.items():
            if key.startswith("definition.") or key in ("scope", "scope.type"):
                kind = key.removeprefix("definition.")
                if kind not in _KINDS and not kind.startswith("scope"):
                    continue
                d = self.defs.get(nodes[0])
                if d is None:
                    d = self.defs[nodes[0]] = _Def(nodes[0], kind)
                if caps.get("name") and pattern < d.named_by:  # the first pattern in the file names it
                    d.name, d.named_by, d.kind = caps["name"][0], pattern, kind
                    d.receiver = caps["receiver"][0] if caps.get("receiver") else None
                if d.body is None and caps.get("body"):
                    d.body = caps["body"][0]
                d.bases += [b for b in caps.get("base", []) if b not in d.bases]
                return
        if "call" in caps:
            obj = caps.get("call.object")
            for node in caps["call"]:
                name = self._dotted(node)
                if name and obj:  # Java's "a.b.m(x)": the object a.b and the name m are separate nodes
                    head = self._dotted(obj[0])
                    name = f"{head}.{name}" if head else None
                if name:
                    self.calls.append((node, name))
        elif "import" in caps:
            self._import(caps)

    # -- nesting and names -----------------------------------------------------------------------
    def _nest(self, ordered: list[_Def]) -> None:
        """Each definition's innermost enclosing definition or scope, and each call's, in one sweep."""
        events: list[tuple[int, int, int, object]] = [(d.node.start_byte, -d.node.end_byte, 0, d) for d in ordered]
        events += [(c.start_byte, -c.end_byte, 1, name) for c, name in self.calls]
        events.sort(key=lambda e: (e[0], e[1], e[2]))
        stack: list[_Def] = []
        module_calls: list[str] = []
        for start, neg_end, is_call, item in events:
            while stack and (stack[-1].node.end_byte <= start or stack[-1].node.end_byte < -neg_end):
                stack.pop()  # the top ended before this item, or this item reaches past it
            if is_call:
                owner = next((s for s in reversed(stack) if not s.is_scope), None)
                (owner.calls if owner is not None else module_calls).append(item)  # type: ignore[arg-type]
                continue
            d: _Def = item  # type: ignore[assignment]
            d.container = stack[-1] if stack else None
            stack.append(d)
        self._module_calls = module_calls

    def _qualify(self, d: _Def, symbols: dict[str, CodeSymbol]) -> None:
        parts = self._type_parts(d.name) if d.kind == "scope.type" else self._parts(d.name)  # type: ignore[arg-type]
        if not parts:
            return
        outer = d.container.qualname if d.container is not None and d.container.qualname else self.module
        receiver = self._parts(d.receiver) if d.receiver is not None else parts[:-1]
        prefix = ".".join([outer, *receiver]) if receiver else outer
        d.qualname = f"{prefix}.{parts[-1]}"
        if d.is_scope:
            if d.kind == "scope.type":
                d.type_qualname = d.qualname
                trait = self._base_names(d.bases)
                if trait:  # "impl Debug for T" and "impl Display for T" both define fmt: T.Debug.fmt, T.Display.fmt
                    d.qualname = f"{d.qualname}.{trait[0].rsplit('.', 1)[-1]}"
                if trait or parts[-1] not in self.types:
                    self._block(d, symbols)
            return
        owner = symbols.get(prefix)
        if d.container is not None and d.container.type_qualname:
            # a method of an impl block is a method of its type (a trait's too), else of the block
            owner = symbols.get(d.container.type_qualname) or owner
        if owner is None:
            owner = self._around(d, symbols)
        kind = _KINDS[d.kind]
        in_type = owner.kind in CLASS_LIKE or bool(receiver) or (
            d.container is not None and d.container.kind == "scope.type")
        if kind is SymbolKind.FUNCTION and in_type:
            kind = SymbolKind.METHOD
        elif kind is SymbolKind.METHOD and not in_type:
            kind = SymbolKind.FUNCTION
        node = d.node
        doc, doc_row = self._doc(node)
        start = self._line(node.start_byte)
        symbol = CodeSymbol(  # its lines begin with the comment block above it, as Python's with decorators
            kind=kind, name=parts[-1], qualname=d.qualname, start_line=min(start, doc_row + 1),
            end_line=self._end_line(node), signature=self._signature(d), docstring=doc,
            parent=owner.qualname, bases=self._base_names(d.bases))
        bodied = d.body is not None or node.child_by_field_name("body") is not None
        old = symbols.get(d.qualname)
        if old is not None and self.bodied.get(d.qualname) != bodied:
            # a declaration and its definition (C++ "double norm() const;" in the class, the body
            # outside it): the entity is the definition, never a range spanning both; overload
            # signatures right above their implementation (TypeScript) are its first lines
            if bodied:
                if symbol.start_line <= old.end_line + 1:
                    old.end_line = symbol.end_line
                    old.docstring = old.docstring or symbol.docstring
                else:
                    old.start_line, old.end_line, old.signature = symbol.start_line, symbol.end_line, symbol.signature
                    old.docstring = symbol.docstring or old.docstring
                self.bodied[d.qualname] = True
            d.symbol = old
            return
        if self._add(d, symbol, symbols):
            self.bodied[d.qualname] = bodied

    def _block(self, d: _Def, symbols: dict[str, CodeSymbol]) -> None:
        """A Rust ``impl`` block as a namespace entity: ``impl Display for Point`` is ``Point.Display``, and
        ``impl Point`` in a file that does not define ``Point`` is ``Point``. A method added to a block, an
        associated type or a where clause is a change to the block, the unit the held-out miner names
        for a change inside an impl outside its functions (the trait, or the type); an ``impl Point``
        beside ``struct Point`` is no entity of its own: the struct is that unit."""
        start = self._line(d.node.start_byte)
        doc, doc_row = self._doc(d.node)
        parent = symbols.get(d.type_qualname) if d.type_qualname != d.qualname else None  # the type, or its impl here
        if parent is None:
            parent = self._around(d, symbols)
        symbol = CodeSymbol(kind=SymbolKind.NAMESPACE, name=d.qualname.rsplit(".", 1)[-1], qualname=d.qualname,
                            start_line=min(start, doc_row + 1), end_line=self._end_line(d.node),
                            signature=self._signature(d), docstring=doc, parent=parent.qualname)
        self._add(d, symbol, symbols)

    def _around(self, d: _Def, symbols: dict[str, CodeSymbol]) -> CodeSymbol:
        """The entity around a definition: the nearest enclosing one that is an entity, else the module."""
        around = d.container
        while around is not None and around.symbol is None:
            around = around.container
        return around.symbol if around is not None and around.symbol is not None else symbols[self.module]

    def _add(self, d: _Def, symbol: CodeSymbol, symbols: dict[str, CodeSymbol]) -> bool:
        """Adds ``symbol`` as ``d``'s entity (merged into an earlier one of its name written right before),
        unless that name was defined before past other definitions (a callback named like an earlier one,
        a static method named like an instance one): one entity spanning both would hold the code between
        them, and the first keeps the name."""
        old = symbols.get(symbol.qualname)
        apart = old is not None and self._defined_between(old.end_line, symbol.start_line)
        self.starts.append(symbol.start_line)
        if not apart:
            d.symbol = add_symbol(symbols, symbol)
        return not apart

    def _defined_between(self, after: int, before: int) -> bool:
        """Whether a definition (an entity or one left out) starts between two lines: overloads and a
        getter and its setter are written together; a name defined again further down is another thing."""
        i = bisect_right(self.starts, after)
        return i < len(self.starts) and self.starts[i] < before

    def _parts(self, node: Node) -> list[str]:
        """``a::B<T>.c`` -> ["a", "B", "c"]; [] when it is no name (an expression, a string)."""
        text = self._text(node)
        if self.language == "ruby" and node.type in ("operator", "setter"):  # ``def ==(o)``, ``def value=(v)``
            return [text]
        if self.language == "csharp" and node.parent is not None:
            if node.parent.type == "destructor_declaration":
                return ["~" + text]
            if node.parent.type == "operator_declaration":
                return ["operator" + text]
        if self.language == "cpp" and (op := _OPERATOR.fullmatch(text)):
            scope = [p for p in _SEP.split(_GENERIC.sub("", op["scope"])) if p]
            sign = re.sub(r"\s+", " ", op["op"]) if op["op"][0].isalpha() else re.sub(r"\s+", "", op["op"])
            name = f"operator {sign}" if sign[0].isalpha() else f"operator{sign}"  # ``operator new``, ``operator==``
            return [*scope, name] if all(_IDENT.fullmatch(p) for p in scope) else []
        raw = _GENERIC.sub("", _GENERIC.sub("", text))
        raw = raw.replace("*", "").replace("&", "").strip().strip("()").strip()
        raw = re.sub(r"^'\w+\s+", "", raw)  # a Rust lifetime: &'a Foo
        if raw.startswith(("mut ", "const ")):
            raw = raw.split(None, 1)[1]
        parts = _SEP.split(raw)
        if self.language == "php":  # ``$this->name``, ``Foo::$bar``: the sigil is no part of the name
            parts = [p.lstrip("$") for p in parts]
        elif self.language == "rust":  # a raw identifier: ``r#type`` is ``type``
            parts = [p.removeprefix("r#") for p in parts]
        if not parts or not parts[-1] or not all(_IDENT.fullmatch(p) for p in parts[:-1] if p):
            return []
        last = parts[-1]
        if not (_IDENT.fullmatch(last) or (self.language in _JS and _PRIVATE.fullmatch(last))
                or (self.language == "cpp" and _DESTRUCTOR.fullmatch(last))):
            return []
        return [p for p in parts if p]

    def _type_parts(self, node: Node) -> list[str]:
        """The type a Rust ``impl`` block is for, by its last path segment: ``crate::Foo<T>`` -> ["Foo"],
        ``dyn Error + Send + 'static`` -> ["Error"], ``&'a str`` -> ["str"]; [] when it is no named type."""
        raw = self._text(node)
        while _GENERIC.search(raw):
            raw = _GENERIC.sub("", raw)
        raw = re.sub(r"'\w+|\b(?:dyn|impl|mut|const)\b|[&*()]", " ", raw).split("+")[0].strip()
        last = _SEP.split(raw)[-1].strip() if raw else ""
        return [last] if _IDENT.fullmatch(last) else []

    def _dotted(self, node: Node) -> str | None:
        if node.end_byte - node.start_byte > 200:
            return None
        parts = self._parts(node)
        if not parts:
            return None
        return ".".join("this" if i == 0 and p in _SELF else p for i, p in enumerate(parts))

    def _base_names(self, nodes: list[Node]) -> list[str]:
        out: list[str] = []
        for node in nodes:
            parts = self._parts(node)
            if parts:
                out.append(".".join(parts))
        return list(dict.fromkeys(out))

    # -- pieces ----------------------------------------------------------------------------------
    def _text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _line(self, offset: int) -> int:
        return bisect_right(self.line_starts, max(0, offset))

    def _end_line(self, node: Node) -> int:
        end = node.end_byte
        while end > node.start_byte and self.data[end - 1 : end] in (b"\n", b"\r"):
            end -= 1
        return max(self._line(node.start_byte), self._line(end - 1) if end > node.start_byte else 0)

    def _signature(self, d: _Def) -> str:
        node = d.node
        body = d.body or node.child_by_field_name("body")
        end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
        header = self.data[node.start_byte : end].decode("utf-8", "replace").rstrip()
        lines = header.splitlines()
        if len(lines) > _MAX_SIGNATURE_LINES or (body is None and len(lines) > 1):
            header = lines[0] if lines else ""
        return header.rstrip().rstrip("{;").rstrip()

    def _doc(self, node: Node) -> tuple[str | None, int]:
        """The comment block right above a definition (or above the declaration that starts with it),
        cleaned, and the 0-based row where that block (or the attributes under it) begins."""
        n = node  # climb to the outermost node starting on its line ("var f = function", "export class")
        while (n.parent is not None and n.parent.parent is not None and not _is_block(n.parent.type)
               and n.parent.start_point.row == node.start_point.row):
            n = n.parent
        row, first = n.start_point.row, node.start_point.row
        found: list[str] = []
        prev = n.prev_named_sibling
        while True:
            while prev is not None and _last_row(prev) >= row - 1:
                before = prev.prev_sibling
                if before is not None and _last_row(before) == prev.start_point.row:
                    break  # it shares its line with the code before it: a trailing comment of that code
                if "attribute" in prev.type or "annotation" in prev.type or prev.type == "decorator":
                    row = first = prev.start_point.row
                elif "comment" in prev.type:
                    found.append(self._text(prev))
                    row = first = prev.start_point.row
                else:
                    break
                prev = prev.prev_named_sibling
            up = n.parent
            if (prev is not None or up is None or up.parent is None or _is_block(up.type)
                    or up.start_point.row != row):
                break
            # the decorators opened the declaration around it ("@Injectable() export class X"): the
            # comment above is that declaration's sibling
            n, prev = up, up.prev_named_sibling
        if not found:
            return None, first
        lines = []
        for block in reversed(found):
            for line in block.splitlines():
                cleaned = _COMMENT_MARK.sub("", line).rstrip()
                cleaned = cleaned.removesuffix("*/").rstrip()
                lines.append(cleaned)
        doc = "\n".join(lines).strip()
        return doc[:_MAX_DOC] or None, first

    def _import(self, caps: dict[str, list[Node]]) -> None:
        target = self._text(caps["import"][0]).strip().strip("\"'`<>").strip()
        if not target or len(target) > 300 or "\n" in target:
            return
        target = target.replace("::", "/").replace("\\", "/")
        line = self._line(caps["import"][0].start_byte)
        names = [self._text(n).strip() for n in caps.get("import.name", [])]
        aliases = [self._text(n).strip() for n in caps.get("import.alias", [])]
        if self.language == "php":
            aliases = [a.lstrip("$") for a in aliases]
        if not names:
            alias = aliases[0] if aliases else ""
            self.imports.append((caps["import"][0].start_byte, ImportRef(target, None, alias, line)))
            return
        for i, name in enumerate(names):
            alias = aliases[i] if i < len(aliases) and len(names) == len(aliases) else name
            self.imports.append((caps["import"][0].start_byte, ImportRef(target, name, alias, line)))

