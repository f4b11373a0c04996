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
from acms.vocab import UKO, IriMinter

__all__ = ["EmitSettings", "EmittedFile", "emit_and_check"]


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


def _check(lines: list[str], graph: NamedNode, project: NamedNode) -> list[Violation] | None:
    """The file's violations, or None when its triples link to a node only the store can type."""
    return check_lines(None, lines, graph, None, [(project, UKO.Project)])
