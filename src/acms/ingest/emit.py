"""Extractions to quads: the one place that knows the graph layout of an indexed file."""

from __future__ import annotations

import hashlib
import pickle
import re
from collections.abc import Iterable, Mapping
from posixpath import basename, dirname
from typing import NamedTuple

from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse

from acms.ingest.copies import sketch
from acms.ingest.fragments import FILE, FragmentSpec, code_key, section_key
from acms.ingest.model import CLASS_LIKE_NAMES, Edge, Extraction, SourceFile
from acms.vocab import PROV, RDF, UKO, XSD, IriMinter

A = RDF.type
# A row of ``search/corpus.rq`` bar the vector and graph (frag, text, name, qn, start, end, file; None where
# the query leaves one unbound), as a first index spills it (``acms.retrieval.corpus_spill``)
SpillRow = tuple[str, str, str | None, str | None, int | None, int | None, str | None]


def lit(value: str) -> Literal:
    return Literal(value)


def int_lit(value: int) -> Literal:
    return Literal(str(value), datatype=XSD.integer)


def time_lit(iso: str) -> Literal:
    return Literal(iso, datatype=XSD.dateTime)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_ESCAPES = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"))
_XSD_STRING = XSD.string.value


def nt_literal(value: str, datatype: str = _XSD_STRING) -> str:
    """A literal in N-Triples form (the four characters N-Quads requires escaped, escaped)."""
    if "\\" in value or '"' in value or "\n" in value or "\r" in value:
        for char, escaped in _ESCAPES:
            value = value.replace(char, escaped)
    return f'"{value}"' if datatype == _XSD_STRING else f'"{value}"^^<{datatype}>'


class FileBatch:
    """The quads of one file plus what the pipeline needs to link and report it.

    Held as N-Quads lines, not pyoxigraph ``Quad`` objects (building 2.4M ``Quad`` objects in
    Python was most of the standard library's 18 s of emission; Oxigraph parses the text far faster).
    ``quads`` parses them on first use (the one-batch path); ``nquads()`` is what the streamed first
    index validates and bulk-loads. Assigning ``quads`` replaces the lines (tests inject broken files).
    """

    def __init__(self, path: str, lines: list[str] | None = None) -> None:
        self.path = path
        self.lines: list[str] = lines if lines is not None else []
        self.entities: dict[str, NamedNode] = {}  # qualname -> IRI (code only)
        self.fragment_count = 0
        # What a first index spills for the caches' build instead of reading it back
        # (``acms.retrieval.corpus_spill``): the file's rows of ``search/corpus.rq`` for each micro fragment
        # that has one row,
        self.corpus: list[SpillRow] = []
        self.other_texts: list[tuple[str, str]] = []  # (frag, text) of those with several (the store gives them)
        self.places: Places | None = None  # and what the ranking index's places are made of
        self._quads: list[Quad] | None = None

    @property
    def quads(self) -> list[Quad]:
        if self._quads is None:
            self._quads = list(parse(self.nquads(), format=RdfFormat.N_QUADS)) if self.lines else []
        return self._quads

    @quads.setter
    def quads(self, quads: list[Quad]) -> None:
        self._quads = list(quads)
        self.lines = [f"{q} .\n" for q in self._quads]

    def nquads(self) -> bytes:
        return "".join(self.lines).encode("utf-8")


def emit_file(
    minter: IriMinter,
    source: SourceFile,
    ext: Extraction | None,
    fragments: list[FragmentSpec],
    graph: NamedNode,
    generated_at: str,
    secrets: dict[str, int] | None = None,
) -> FileBatch:
    """The file's triples; ``secrets`` (kind -> count) says what ingest replaced by ``[REDACTED:kind]``."""
    out = FileBatch(source.path)
    q: list[str] = []
    g = f" {graph} .\n"
    f = minter.file(source.path)
    fs = str(f)
    project = str(minter.project())
    lines = source.text.count("\n") + (0 if source.text.endswith("\n") or not source.text else 1)
    a, integer, when = f"{A}", XSD.integer.value, XSD.dateTime.value
    u = _Terms()

    def add(s: str, p: str, o: str) -> None:
        q.append(f"{s} {p} {o}{g}")

    add(fs, a, u.File)
    add(fs, u.path, nt_literal(source.path))
    add(fs, u.name, nt_literal(basename(source.path)))
    add(fs, u.language, nt_literal(source.language))
    add(fs, u.contentHash, nt_literal(source.sha256))
    add(fs, u.sizeBytes, nt_literal(str(source.size), integer))
    add(fs, u.lineCount, nt_literal(str(lines), integer))
    add(fs, u.inProject, project)
    add(fs, str(PROV.generatedAtTime), nt_literal(generated_at, when))
    if ext is not None and ext.parse_error:
        add(fs, u.parseError, nt_literal(ext.parse_error))
    text_sketch = sketch(source.text)  # what the index run finds the file's copies by (acms.ingest.copies)
    if text_sketch is not None:
        add(fs, u.textSketch, nt_literal(text_sketch))
    if secrets:
        add(fs, u.secretsRemoved, nt_literal(str(sum(secrets.values())), integer))
        for kind in sorted({re.sub(r"[^a-z0-9_]+", "_", k.lower()).strip("_") or "secret" for k in secrets}):
            add(fs, u.secretKind, nt_literal(kind))

    owners: dict[str, NamedNode] = {FILE: f}
    heads: dict[str, tuple[set[str], set[str]]] = {fs: ({basename(source.path)}, set())}  # entity -> names, qualified names
    kinds: dict[str, str] = {fs: UKO.File.value}  # entity -> its class
    nests: dict[str, list[str]] = {}  # entity -> the uko:Function entities it defines
    if ext is not None:
        for sym in ext.symbols:
            e = minter.code(source.path, sym.qualname)
            es = str(e)
            owners[code_key(sym.qualname)] = e
            out.entities[sym.qualname] = e
            add(es, a, str(UKO[sym.kind.value]))
            kinds[es] = UKO[sym.kind.value].value
            add(es, u.name, nt_literal(sym.name))
            add(es, u.qualifiedName, nt_literal(sym.qualname))
            names, qualified = heads.setdefault(es, (set(), set()))
            names.add(sym.name)
            qualified.add(sym.qualname)
            add(es, u.startLine, nt_literal(str(sym.start_line), integer))
            add(es, u.endLine, nt_literal(str(sym.end_line), integer))
            add(es, u.inFile, fs)
            add(es, u.sourceRef, nt_literal(f"{source.path}:{sym.start_line}-{sym.end_line}"))
            if sym.signature:
                add(es, u.signature, nt_literal(sym.signature))
            if sym.docstring:
                add(es, u.docstring, nt_literal(sym.docstring))
            for deco in sym.decorators:
                add(es, u.decorator, nt_literal(deco))
            parent = owners.get(code_key(sym.parent)) if sym.parent else None
            add(str(parent or f), u.defines, es)
            if sym.kind.value == "Function":
                nests.setdefault(str(parent or f), []).append(e.value)
        for sec in ext.sections:
            e = minter.doc(source.path, sec.anchor)
            es = str(e)
            owners[section_key(sec.anchor)] = e
            add(es, a, u.DocSection)
            kinds[es] = UKO.DocSection.value
            heads[es] = ({sec.title}, set())
            add(es, u.name, nt_literal(sec.title))
            add(es, u.headingLevel, nt_literal(str(sec.level), integer))
            add(es, u.startLine, nt_literal(str(sec.start_line), integer))
            add(es, u.endLine, nt_literal(str(sec.end_line), integer))
            add(es, u.inFile, fs)
            add(es, u.sourceRef, nt_literal(f"{source.path}:{sec.start_line}-{sec.end_line}"))
            if sec.parent:
                add(str(owners[section_key(sec.parent)]), u.contains, es)
            else:
                add(fs, u.defines, es)

    placed: dict[str, tuple[set[str], set[str], set[int], set[int]]] = {}  # micro fragment -> owners, texts, starts, ends
    held: dict[str, tuple[set[str], set[str]]] = {}  # entity -> its micro fragments, its macro ones
    places: dict[tuple[NamedNode, str, str], dict[int, int]] = {}  # (owner, lod, hash) -> start -> occurrence
    for spec in fragments:
        owner = owners[spec.owner]
        digest = sha256(spec.text)
        starts_seen = places.setdefault((owner, spec.lod, digest), {})
        frag = minter.fragment(owner, spec.lod, digest, starts_seen.setdefault(spec.start_line, len(starts_seen) + 1))
        fr = str(frag)
        micro, macro = held.setdefault(str(owner), (set(), set()))
        (micro if spec.lod == "micro" else macro if spec.lod == "macro" else set()).add(frag.value)
        if spec.lod == "micro":
            own, texts, starts, ends = placed.setdefault(frag.value, (set(), set(), set(), set()))
            own.add(str(owner))
            texts.add(spec.text)
            starts.add(spec.start_line)
            ends.add(spec.end_line)
        add(str(owner), u.hasFragment, fr)
        add(fr, a, u.Fragment)
        add(fr, u.text, nt_literal(spec.text))
        add(fr, u.startLine, nt_literal(str(spec.start_line), integer))
        add(fr, u.endLine, nt_literal(str(spec.end_line), integer))
        add(fr, u.lod, nt_literal(spec.lod))
        add(fr, u.inFile, fs)
        out.fragment_count += 1
    # A fragment can repeat (same owner, lod, text and start): keep one copy of each quad.
    out.lines = list(dict.fromkeys(q))
    out.corpus, out.other_texts = _corpus_rows(placed, heads, f.value)
    out.places = Places([(f.value, source.path)], [
        (owner[1:-1], kinds[owner], nests.get(owner, []), source.language, sorted(micro), sorted(macro))
        for owner, (micro, macro) in sorted(held.items())
    ])
    return out


def _corpus_rows(placed: Mapping[str, tuple[set[str], set[str], set[int], set[int]]],
                 heads: Mapping[str, tuple[set[str], set[str]]], file: str
                 ) -> tuple[list[SpillRow], list[tuple[str, str]]]:
    """The solutions of ``search/corpus.rq`` (bar the vector) over one file's triples, for each micro
    fragment with one solution (one owner, name, qualified name or none, text, start and end: all but
    one whose owner has several names); and (fragment, text) of each with several, whose order only the
    store knows."""
    rows, several = [], []
    for frag, (own, texts, starts, ends) in placed.items():
        solutions = [(frag, text, name, qn, start, end, file) for owner in sorted(own)
                     for name in sorted(heads[owner][0]) or [None] for qn in sorted(heads[owner][1]) or [None]
                     for text in sorted(texts) for start in sorted(starts) for end in sorted(ends)]
        if len(solutions) == 1:
            rows += solutions
        else:
            several += [(frag, text) for text in sorted(texts)]
    return rows, several


# What the ranking index's places are made of, for one file (``search/file-paths.rq``, ``class-fragments``,
# ``class-outlines`` and ``function-outlines`` over its triples, before the ontology's classes are applied):
# (file, path) pairs, and per entity that has fragments and a class: (its IRI, that class, the uko:Function
# entities it defines, its file's language ("" for a decision), its micro fragments, its macro ones).
Place = tuple[str, str, list[str], str, list[str], list[str]]


class Places(NamedTuple):
    paths: list[tuple[str, str]]
    owners: list[Place]


def spill_record(rows: list[SpillRow], others: list[tuple[str, str]], places: Places | None) -> bytes:
    """A file's or group's record in a first index's spill (``acms.retrieval.corpus_spill``, which reads
    it): made here so that a pool worker pickles its files' own."""
    return pickle.dumps((rows, others, places), protocol=pickle.HIGHEST_PROTOCOL)


class _Terms:
    """UKO's properties and classes as N-Triples text (``u.path`` is ``"<…#path>"``), looked up once."""

    def __getattr__(self, name: str) -> str:
        text = str(UKO[name])
        setattr(self, name, text)
        return text


# What each edge kind may link (the shapes say the same): best-effort resolution can land on a
# function where a class was expected (typing.TypedDict is a function), and such an edge is dropped.
EDGE_KINDS: dict[str, tuple[set[str] | None, set[str] | None]] = {
    "imports": ({"Module"}, {"Module"}),
    "inherits": (set(CLASS_LIKE_NAMES), set(CLASS_LIKE_NAMES)),
    "calls": (None, set(CLASS_LIKE_NAMES) | {"Function", "Method", "Module"}),  # not a namespace: it is not called
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


class TreeWrite(NamedTuple):
    """The tree quads a run writes, and the nodes whose stored quads go first (None: every node)."""

    quads: list[Quad]
    nodes: list[NamedNode] | None


def tree_changes(minter: IriMinter, root_name: str, root_path: str, before: Iterable[str], after: Iterable[str],
                 graph: NamedNode) -> TreeWrite:
    """The nodes of ``emit_tree`` whose quads differ between the trees of the ``before`` and ``after`` files
    (the directories above a file added or gone, the project for a top-level one; a directory emptied or
    new): their quads after, to write, and those that were there before, to delete first. The other
    nodes' stored quads are what a whole tree would write again."""
    old = _by_subject(emit_tree(minter, root_name, root_path, before, graph))
    new_quads = emit_tree(minter, root_name, root_path, after, graph)
    new = _by_subject(new_quads)
    touched = {node for node in old.keys() | new.keys() if old.get(node) != new.get(node)}
    return TreeWrite([q for q in new_quads if q.subject in touched],
                     sorted((n for n in touched if n in old), key=lambda n: n.value))  # type: ignore[union-attr]


def _by_subject(quads: Iterable[Quad]) -> dict[object, set[Quad]]:
    out: dict[object, set[Quad]] = {}
    for q in quads:
        out.setdefault(q.subject, set()).add(q)
    return out
