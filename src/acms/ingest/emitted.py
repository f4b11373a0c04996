"""A file emitted and validated where it was extracted (a pool worker of a streamed first index), so
the process that writes the index only loads what it is handed.

Why: the writer is a streamed index's bottleneck. Emitting a standard library's files and
validating their 2.4M triples took it ~4 and ~15 s, one file after another, while the extraction
workers waited for it. A file's triples are validated on their own just as in its group: every node a
file's triples describe is the file's (its IRIs hold its path), and the nodes it links to are its own
but for the project, which is promised. A link to anything else (none is emitted today) leaves the
file's verdict to the writer, which asks the store, as before (``violations`` None). ADR files, whose
decisions link across files and read the store, and runs with extension checks stay on the writer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from acms.ingest import emit
from acms.ingest.fragments import FragmentSpec
from acms.ingest.model import Extraction, SourceFile
from acms.validation.batch import check_lines
from acms.validation.shapes import Violation
from acms.vocab import RDF, UKO, IriMinter

_TYPE = f"<{RDF.type.value}>"

__all__ = ["CheckedBatch", "EmitSettings", "EmittedFile", "emit_and_check", "emit_checked"]


@dataclass(frozen=True)
class EmitSettings:
    """What emitting a file needs of its run (picklable: sent to the pool with each group)."""

    minter: IriMinter
    graph: str  # the named graph's IRI (warm)
    generated_at: str
    spill: bool  # whether the run spills its corpus rows (``acms.retrieval.corpus_spill``)


@dataclass
class EmittedFile:
    """A file's triples as N-Quads bytes, with what the writer reports and links of it."""

    nquads: bytes
    quads: int
    entities: dict[str, NamedNode]  # qualname -> IRI
    fragment_count: int
    sections: int
    violations: list[Violation] | None  # None: the writer decides (a link to a node the file does not describe)
    spill: bytes = b""  # the file's spill record (``emit.spill_record``)
    seconds: dict[str, float] = field(default_factory=dict)  # emitting, validation


def emit_and_check(settings: EmitSettings, source: SourceFile, ext: Extraction | None, frags: list[FragmentSpec],
                   secrets: dict[str, int] | None) -> EmittedFile:
    t0 = time.perf_counter()
    minter = settings.minter
    graph = NamedNode(settings.graph)
    batch = emit.emit_file(minter, source, ext, frags, graph, settings.generated_at, secrets=secrets)
    data = batch.nquads()
    t1 = time.perf_counter()
    violations = _check(batch.lines, graph, minter.project())
    t2 = time.perf_counter()
    spill = emit.spill_record(batch.corpus, batch.other_texts, batch.places) if settings.spill else b""
    return EmittedFile(data, len(batch.lines), batch.entities, batch.fragment_count,
                       len(ext.sections) if ext is not None else 0, violations, spill,
                       {"emitting": t1 - t0 + time.perf_counter() - t2, "validation": t2 - t1})


@dataclass
class CheckedBatch:
    """A changed file's batch as a refresh's extraction worker emitted and validated it: the writer
    takes it as its own emitting would have made it, and the verdict with it."""

    batch: emit.FileBatch
    violations: list[Violation] | None  # None: the writer decides (a link to a node the file does not describe)
    types: list[tuple[str, str]]  # (node, class) of each node the batch types, N-Triples text
    seconds: dict[str, float] = field(default_factory=dict)  # emitting, validation


def emit_checked(settings: EmitSettings, files: list[tuple[SourceFile, Extraction | None, list[FragmentSpec],
                                                     dict[str, int] | None]]) -> list[CheckedBatch]:
    """What ``emit_and_check`` does for a streamed first index, for a refresh of many files: each batch
    whole (its lines, entities and cache rows), not its bytes, since the refresh's writer links and diffs
    it with the rest of the run. Why: emitting and validating a 300-file branch switch cost the writer
    ~3 s and ~4 s, one file after another, while both cores' workers had only parsed. The files (source,
    extraction, fragments, secrets removed) are validated together, each violation then given to the file
    whose node it is about: the checks' cost is mostly per batch, and no file's triples link to another's."""
    graph = NamedNode(settings.graph)
    out: list[CheckedBatch] = []
    for source, ext, frags, secrets in files:
        t0 = time.perf_counter()
        batch = emit.emit_file(settings.minter, source, ext, frags, graph, settings.generated_at, secrets=secrets)
        types = [(s, rest[: rest.index(" ")]) for s, p, rest in (line.split(" ", 2) for line in batch.lines)
                 if p == _TYPE]
        out.append(CheckedBatch(batch, [], types, {"emitting": time.perf_counter() - t0}))
    t1 = time.perf_counter()
    violations = _check([line for c in out for line in c.batch.lines], graph, settings.minter.project())
    owner = {node[1:-1]: c for c in out for node, _ in c.types}  # a violation names its focus bare
    if violations is None or any(v.focus not in owner for v in violations):
        for c in out:  # the writer decides, as for a file linking to a node only the store can type
            c.violations = None
    else:
        for v in violations:
            owner[v.focus].violations.append(v)  # type: ignore[union-attr]
    if out:
        out[0].seconds["validation"] = time.perf_counter() - t1
    return out


def _check(lines: list[str], graph: NamedNode, project: NamedNode) -> list[Violation] | None:
    """The file's violations, or None when its triples link to a node only the store can type."""
    return check_lines(None, lines, graph, None, [(project, UKO.Project)])
