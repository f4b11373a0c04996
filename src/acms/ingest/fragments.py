"""Cut a file into fragments: the units of text that assembly can put into a context.

Each code element gets a ``micro`` fragment (its full source) and, when it holds other elements or is a
class, a ``macro`` one (its outline: signature, first doc line, fields, members). A function or method
that holds nothing has no stored outline: it would say only what its entity's signature, decorators and
doc string say, so assembly derives it from them (``leaf_outline``; 51,730 of a standard library's 73k
outlines, ~414k quads). Each document section a ``micro`` (its own text, up to its first
sub-section) and a ``macro`` (heading and first sentence); each file a ``macro`` outline; files
without an extractor are cut into line windows. Every file owns at least its ``macro`` outline
(its path, then its outline or first lines), however empty it is: the File shape requires a fragment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from acms.ingest.model import CLASS_LIKE, CodeSymbol, Extraction, SourceFile, SymbolKind

MACRO, MICRO, ATOMIC = "macro", "micro", "atomic"

# Owner keys live in separate name spaces, so no name in a file can take the file's place: a module
# whose qualified name is "file" (``sub/file.py`` outside a package) used to own the file's outline,
# leaving the file with no fragment at all (FileShape-hasFragment).
FILE = "file"


def code_key(qualname: str) -> str:
    return f"code:{qualname}"


def section_key(anchor: str) -> str:
    return f"section:{anchor}"


@dataclass(frozen=True)
class FragmentSpec:
    owner: str  # the key of the entity: FILE, code_key(qualname) or section_key(anchor)
    lod: str
    text: str
    start_line: int
    end_line: int


def first_line(doc: str | None) -> str:
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _lines(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1 : end])


MAX_MEMBER_LINES = 12  # a class outline's own statements (fields, constants) at most
# An outline is a map of its class, shown beside the methods an agent reads; a class of a hundred
# members listed with their doc lines was a dump of ~600 tokens (outlines took 35 % of jinja's
# contexts). Up to DOCUMENTED_MEMBERS members keep their first doc line; past MAX_MEMBERS signatures,
# the rest are named only. Dev set, budget 3000 (httpx, werkzeug, jinja, attrs): file R@10 .872 .787
# .858 .778 -> .910 .775 .858 .778, symbol R@10 .760 .518 .516 .517 -> .760 .513 .546 .551; at 8000
# every figure equal or higher (werkzeug file R@10 .863 -> .887). 10 / 20 instead: no better.
DOCUMENTED_MEMBERS = 16
MAX_MEMBERS = 30
# comments, doc comments, decorators, (doc)strings, placeholders and the closing brackets of
# multi-line statements: not statements of the class's own
_NOT_A_MEMBER = re.compile(r"""(#|//|/\*|\*|@|[rRbBuUfF]{0,2}["']|[)\]}]|\.\.\.|pass\b)""")
_TRIPLE = re.compile(r'"""|\'\'\'')


def member_lines(lines: list[str], sym: CodeSymbol, children: list[CodeSymbol]) -> list[str]:
    """A class's own statements at the first level of its body, outside its members' spans: its fields,
    class attributes and constants (``default_converters = ...``, ``private base: string;``, a Go or
    Rust struct's fields), each as its first line. What a method uses of its class, which the member
    signatures alone do not say. Comments, decorators and the text of triple-quoted strings are left
    out; at most ``MAX_MEMBER_LINES``."""
    end = min(sym.end_line, len(lines))
    if sym.start_line > end:
        return []
    covered = bytearray(max(sym.end_line, *(c.end_line for c in children), 0) + 2)
    for child in children:
        covered[child.start_line : child.end_line + 1] = b"\x01" * (child.end_line + 1 - child.start_line)
    first = sym.start_line
    for n in range(sym.start_line, min(end, sym.start_line + 10) + 1):  # the header's last line
        if lines[n - 1].rstrip().endswith((":", "{")):
            first = n
            break
    own = lines[first - 1].expandtabs()
    outer = len(own) - len(own.lstrip())
    body: list[tuple[int, str]] = []
    in_string = False
    for n in range(first + 1, end + 1):
        text = lines[n - 1].expandtabs()
        quotes = len(_TRIPLE.findall(text))
        starts_inside, in_string = in_string, in_string != (quotes % 2 == 1)
        if covered[n] or starts_inside or not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        if indent > outer:
            body.append((indent, text.rstrip()))
    level = min((indent for indent, _ in body), default=0)
    out = [text for indent, text in body if indent == level and not _NOT_A_MEMBER.match(text.lstrip())]
    return out[:MAX_MEMBER_LINES]


LEAF_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})


def stores_outline(sym: CodeSymbol, children: Sequence[CodeSymbol]) -> bool:
    """Whether a symbol's outline is a fragment of its own: not for a function or method that holds
    nothing, whose outline ``leaf_outline`` makes from its entity's facts."""
    return bool(children) or sym.kind not in LEAF_KINDS


def leaf_outline(signature: str, decorators: Iterable[str], docstring: str | None) -> str:
    """The outline of a function or method that holds nothing: its decorators (sorted: the graph keeps
    them as a set), signature and first doc line, then ``...``."""
    doc = first_line(docstring)
    return "\n".join([*(f"@{d}" for d in sorted(decorators)), signature,
                      *([f'    """{doc}"""'] if doc else []), "    ..."])


def symbol_outline(sym: CodeSymbol, children: list[CodeSymbol], members: Sequence[str] = ()) -> str:
    """``members``: a class's own statements (``member_lines``), shown after its doc line."""
    doc = first_line(sym.docstring)
    if sym.kind is SymbolKind.MODULE:
        head = f"# module {sym.qualname}" + (f": {doc}" if doc else "")
        body = [c.signature.splitlines()[0] if c.signature else c.name for c in children]
        return "\n".join([head, *body])
    deco = [f"@{d}" for d in sym.decorators]
    parts = [*deco, sym.signature]
    if doc:
        parts.append(f'    """{doc}"""')
    parts.extend(f"    {line.strip()}" for line in members)
    documented = len(children) <= DOCUMENTED_MEMBERS
    for child in children[:MAX_MEMBERS]:
        sig = child.signature.splitlines()[0] if child.signature else child.name
        child_doc = first_line(child.docstring) if documented else ""
        parts.append(f"    {sig}" + (f"  # {child_doc}" if child_doc else ""))
    if len(children) > MAX_MEMBERS:
        parts.append(f"    # … and {len(children) - MAX_MEMBERS} more: "
                     + ", ".join(c.name for c in children[MAX_MEMBERS:]))
    if not children and sym.kind not in CLASS_LIKE:  # a Namespace that holds nothing
        parts.append("    ...")
    return "\n".join(parts)


def code_fragments(source: SourceFile, ext: Extraction, gaps: int = 0) -> list[FragmentSpec]:
    """Fragments of the symbols; ``gaps`` > 0 also gives the module the lines no symbol covers after
    its header (top-level statements, constants, type aliases), as micro fragments of at most
    ``gaps`` lines, so that every line of code reaches the first stage (tree-sitter languages)."""
    lines = source.text.splitlines() or [""]
    children: dict[str | None, list[CodeSymbol]] = {}
    named_under: dict[str, list[CodeSymbol]] = {}  # by the qualified name their own is under
    for sym in ext.symbols:
        children.setdefault(sym.parent, []).append(sym)
        named_under.setdefault(sym.qualname.rpartition(".")[0], []).append(sym)
    out: list[FragmentSpec] = []
    for sym in ext.symbols:
        kids = children.get(sym.qualname, [])
        if sym.kind is SymbolKind.NAMESPACE and not kids:  # a Rust trait impl: its methods are its type's
            kids = named_under.get(sym.qualname, [])
        key = code_key(sym.qualname)
        stored = stores_outline(sym, kids)
        outline = symbol_outline(sym, kids, member_lines(lines, sym, kids) if sym.kind in CLASS_LIKE else []) if stored else ""
        if sym.kind is SymbolKind.MODULE:
            out.append(FragmentSpec(FILE, MACRO, f"{source.path}\n{outline}", 1, len(lines)))
            header_end = min((k.start_line for k in kids), default=len(lines) + 1) - 1
            header_end = max(1, min(header_end, len(lines)))
            out.append(FragmentSpec(key, MICRO, _lines(lines, 1, header_end), 1, header_end))
        else:
            out.append(FragmentSpec(key, MICRO, _lines(lines, sym.start_line, sym.end_line),
                                    sym.start_line, sym.end_line))
        if stored:
            out.append(FragmentSpec(key, MACRO, outline, sym.start_line, sym.end_line))
    if not any(spec.owner == FILE for spec in out):  # no module symbol: the file still gets its outline
        out.insert(0, window_fragments(source, len(lines) or 1)[0])
    module = next((sym for sym in ext.symbols if sym.kind is SymbolKind.MODULE), None)
    if gaps > 0 and module is not None:
        out.extend(_gap_fragments(lines, ext, code_key(module.qualname), gaps))
    return out


def _gap_fragments(lines: list[str], ext: Extraction, owner: str, size: int) -> list[FragmentSpec]:
    """Runs of non-blank lines after the module header that no symbol covers, cut at ``size`` lines."""
    covered = bytearray(len(lines) + 2)
    first = min((s.start_line for s in ext.symbols if s.kind is not SymbolKind.MODULE), default=len(lines) + 1)
    for sym in ext.symbols:
        if sym.kind is not SymbolKind.MODULE:
            covered[sym.start_line : sym.end_line + 1] = b"\x01" * (sym.end_line + 1 - sym.start_line)
    out: list[FragmentSpec] = []
    run: list[int] = []

    def flush() -> None:
        while run and not lines[run[-1] - 1].strip():
            run.pop()
        for i in range(0, len(run), size):
            part = run[i : i + size]
            out.append(FragmentSpec(owner, MICRO, _lines(lines, part[0], part[-1]), part[0], part[-1]))
        run.clear()

    for n in range(first, len(lines) + 1):
        if covered[n] or (not run and not lines[n - 1].strip()):
            flush()
            continue
        run.append(n)
    flush()
    return out


def doc_fragments(source: SourceFile, ext: Extraction, window: int) -> list[FragmentSpec]:
    lines = source.text.splitlines() or [""]
    out: list[FragmentSpec] = []
    toc = [f"{'  ' * (s.level - 1)}- {s.title}" for s in ext.sections]
    out.append(FragmentSpec(FILE, MACRO, "\n".join([source.path, *toc]), 1, len(lines)))
    sections = ext.sections
    for i, sec in enumerate(sections):
        nxt = sections[i + 1].start_line if i + 1 < len(sections) else sec.end_line + 1
        own_end = max(sec.start_line, min(sec.end_line, nxt - 1))
        own = _lines(lines, sec.start_line, own_end)
        key = section_key(sec.anchor)
        out.append(FragmentSpec(key, MICRO, own, sec.start_line, own_end))
        body = [ln.strip() for ln in lines[sec.start_line : own_end] if ln.strip() and not set(ln.strip()) <= set("=-~^*#+")]
        summary = sec.title + (f"\n{body[0]}" if body else "")
        out.append(FragmentSpec(key, MACRO, summary, sec.start_line, sec.end_line))
    if not sections:
        out.extend(window_fragments(source, window)[1:])
    return out


def window_fragments(source: SourceFile, window: int, max_chars: int | None = None) -> list[FragmentSpec]:
    """The file cut into windows of ``window`` lines. ``max_chars`` (a file too large to parse): a window
    also ends once it holds that many characters, and a longer line is cut there (a minified file's one
    line would otherwise be one fragment as large as the file, and its token count a list as long)."""
    lines = source.text.splitlines() or [""]
    if max_chars is not None:
        lines = [ln if len(ln) <= max_chars else ln[:max_chars] + f" [... line cut: {len(ln):,} characters]"
                 for ln in lines]
    head = "\n".join([source.path, *lines[: min(12, len(lines))]])
    if max_chars is not None:
        head = head[: 2 * max_chars]
    out = [FragmentSpec(FILE, MACRO, head, 1, len(lines))]
    start = 1
    while start <= len(lines):
        end, held = start, len(lines[start - 1])
        while end < len(lines) and end - start + 1 < window and (max_chars is None or held < max_chars):
            end += 1
            held += len(lines[end - 1]) + 1
        out.append(FragmentSpec(FILE, MICRO, _lines(lines, start, end), start, end))
        start = end + 1
    return out
