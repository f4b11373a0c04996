"""Extractions to quads: the one place that knows the graph layout of an indexed file."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from posixpath import basename, dirname

from pyoxigraph import Literal, NamedNode, Quad

from acms.ingest.fragments import FILE, FragmentSpec, code_key, section_key
from acms.ingest.model import CLASS_LIKE_NAMES, Edge, Extraction, SourceFile
from acms.vocab import PROV, RDF, UKO, XSD, IriMinter

A = RDF.type


def lit(value: str) -> Literal:
    return Literal(value)


def int_lit(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.integer)


def time_lit(iso: str) -> Literal:
    return Literal(iso, datatype=XSD.dateTime)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class FileBatch:
    """The quads of one file plus what the pipeline needs to link and report it."""

    path: str
    quads: list[Quad] = field(default_factory=list)
    entities: dict[str, NamedNode] = field(default_factory=dict)  # qualname -> IRI (code only)
    fragment_count: int = 0


def emit_file(
    minter: IriMinter,
    source: SourceFile,
    ext: Extraction | None,
    fragments: list[FragmentSpec],
    token_counts: list[int],
    graph: NamedNode,
    generated_at: str,
    secrets: dict[str, int] | None = None,
) -> FileBatch:
    """The file's triples; ``secrets`` (kind -> count) says what ingest replaced by ``[REDACTED:kind]``."""
    out = FileBatch(source.path)
    q = out.quads
    f = minter.file(source.path)
    project = minter.project()
    lines = source.text.count("\n") + (0 if source.text.endswith("\n") or not source.text else 1)

    def add(s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        q.append(Quad(s, p, o, graph))

    add(f, A, UKO.File)
    add(f, UKO.path, lit(source.path))
    add(f, UKO.name, lit(basename(source.path)))
    add(f, UKO.language, lit(source.language))
    add(f, UKO.contentHash, lit(source.sha256))
    add(f, UKO.sizeBytes, int_lit(source.size))
    add(f, UKO.lineCount, int_lit(lines))
    add(f, UKO.inProject, project)
    add(f, PROV.generatedAtTime, time_lit(generated_at))
    if ext is not None and ext.parse_error:
        add(f, UKO.parseError, lit(ext.parse_error))
    if secrets:
        add(f, UKO.secretsRemoved, int_lit(sum(secrets.values())))
        for kind in sorted({re.sub(r"[^a-z0-9_]+", "_", k.lower()).strip("_") or "secret" for k in secrets}):
            add(f, UKO.secretKind, lit(kind))

    owners: dict[str, NamedNode] = {FILE: f}
    if ext is not None:
        for sym in ext.symbols:
            e = minter.code(source.path, sym.qualname)
            owners[code_key(sym.qualname)] = e
            out.entities[sym.qualname] = e
            add(e, A, UKO[sym.kind.value])
            add(e, UKO.name, lit(sym.name))
            add(e, UKO.qualifiedName, lit(sym.qualname))
            add(e, UKO.startLine, int_lit(sym.start_line))
            add(e, UKO.endLine, int_lit(sym.end_line))
            add(e, UKO.inFile, f)
            add(e, UKO.sourceRef, lit(f"{source.path}:{sym.start_line}-{sym.end_line}"))
            if sym.signature:
                add(e, UKO.signature, lit(sym.signature))
            if sym.docstring:
                add(e, UKO.docstring, lit(sym.docstring))
            for deco in sym.decorators:
                add(e, UKO.decorator, lit(deco))
            parent = owners.get(code_key(sym.parent)) if sym.parent else None
            add(parent or f, UKO.defines, e)
        for sec in ext.sections:
            e = minter.doc(source.path, sec.anchor)
            owners[section_key(sec.anchor)] = e
            add(e, A, UKO.DocSection)
            add(e, UKO.name, lit(sec.title))
            add(e, UKO.headingLevel, int_lit(sec.level))
            add(e, UKO.startLine, int_lit(sec.start_line))
            add(e, UKO.endLine, int_lit(sec.end_line))
            add(e, UKO.inFile, f)
            add(e, UKO.sourceRef, lit(f"{source.path}:{sec.start_line}-{sec.end_line}"))
            if sec.parent:
                add(owners[section_key(sec.parent)], UKO.contains, e)
            else:
                add(f, UKO.defines, e)

    for spec, tokens in zip(fragments, token_counts, strict=True):
        owner = owners[spec.owner]
        digest = sha256(spec.text)
        fr = minter.fragment(owner, spec.lod, digest, spec.start_line)
        add(owner, UKO.hasFragment, fr)
        add(fr, A, UKO.Fragment)
        add(fr, UKO.text, lit(spec.text))
        add(fr, UKO.tokenCount, int_lit(tokens))
        add(fr, UKO.startLine, int_lit(spec.start_line))
        add(fr, UKO.endLine, int_lit(spec.end_line))
        add(fr, UKO.contentHash, lit(digest))
        add(fr, UKO.lod, lit(spec.lod))
        add(fr, UKO.sourceRef, lit(f"{source.path}:{spec.start_line}-{spec.end_line}"))
        add(fr, UKO.inFile, f)
        add(fr, UKO.language, lit(source.language))
        out.fragment_count += 1
    # A fragment can repeat (same owner, lod, text and start): keep one copy of each quad.
    out.quads = list(dict.fromkeys(q))
    return out


# What each edge kind may link (the shapes say the same): best-effort resolution can land on a
# function where a class was expected (typing.TypedDict is a function), and such an edge is dropped.
EDGE_KINDS: dict[str, tuple[set[str] | None, set[str] | None]] = {
    "imports": ({"Module"}, {"Module"}),
    "inherits": (set(CLASS_LIKE_NAMES), set(CLASS_LIKE_NAMES)),
    "calls": (None, None),
    "references": (None, None),
}


def emit_edges(edges: Iterable[Edge], symbols: Mapping[str, tuple[NamedNode, str]], graph: NamedNode) -> list[Quad]:
    """Resolved edges as quads; ``symbols`` maps a qualified name to (IRI, class local name)."""
    out = []
    for edge in edges:
        src, dst = symbols.get(edge.source), symbols.get(edge.target)
        if src is None or dst is None or src[0] == dst[0]:
            continue
        allowed_src, allowed_dst = EDGE_KINDS.get(edge.kind, (set(), set()))
        if (allowed_src is not None and src[1] not in allowed_src) or (allowed_dst is not None and dst[1] not in allowed_dst):
            continue
        out.append(Quad(src[0], UKO[edge.kind], dst[0], graph))
    return list(dict.fromkeys(out))


def emit_tree(minter: IriMinter, root_name: str, root_path: str, paths: Iterable[str], graph: NamedNode) -> list[Quad]:
    """Project and directory nodes for the listed files (rewritten whole when anything changed)."""
    project = minter.project()
    q = [
        Quad(project, A, UKO.Project, graph),
        Quad(project, UKO.name, lit(root_name), graph),
        Quad(project, UKO.rootPath, lit(root_path), graph),
    ]
    dirs: set[str] = set()
    for path in paths:
        parent = dirname(path)
        child: NamedNode = minter.file(path)
        while True:
            container = minter.directory(parent) if parent else project
            q.append(Quad(container, UKO.contains, child, graph))
            if not parent or parent in dirs:
                break
            dirs.add(parent)
            child = minter.directory(parent)
            parent = dirname(parent)
    for d in sorted(dirs):
        node = minter.directory(d)
        q += [
            Quad(node, A, UKO.Directory, graph),
            Quad(node, UKO.path, lit(d), graph),
            Quad(node, UKO.name, lit(basename(d)), graph),
            Quad(node, UKO.inProject, project, graph),
        ]
    return list(dict.fromkeys(q))
