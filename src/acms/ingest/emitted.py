"""Files emitted and validated where they were extracted (a pool worker of a streamed first index, or
of a refresh of many files), so the process that writes the index only loads what it is handed.

Why: the writer is a streamed index's bottleneck. Emitting a standard library's files and
validating their 2.4M triples took it ~4 and ~15 s, one file after another, while the extraction
workers waited for it. A worker's files are validated together, and each file's verdict is what
validating it in its run's whole batch would give: every node a file's triples describe is the
file's (its IRIs hold its path), and the nodes it links to are its own but for the project, which is
promised. A link to anything else (none is emitted today) leaves the files' verdicts to the writer,
which asks the store, as before (``violations`` None). ADR files, whose decisions link across files
and read the store, and runs with extension checks stay on the writer.
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


Files = list[tuple[SourceFile, Extraction | None, list[FragmentSpec], dict[str, int] | None]]
"""Files to emit, each with its extraction, fragments and the secrets its reading removed."""


def emit_and_check(settings: EmitSettings, files: Files) -> list[EmittedFile]:
    """A streamed first index's group of files, emitted and validated together (``emit_checked``)."""
    out = []
    for (_, ext, _, _), done in zip(files, emit_checked(settings, files, types=False), strict=True):
        batch = done.batch
        t0 = time.perf_counter()
        data = batch.nquads()
        spill = emit.spill_record(batch.corpus, batch.other_texts, batch.places) if settings.spill else b""
        done.seconds["emitting"] += time.perf_counter() - t0
        out.append(EmittedFile(data, len(batch.lines), batch.entities, batch.fragment_count,
                               len(ext.sections) if ext is not None else 0, done.violations, spill, done.seconds))
    return out


@dataclass
class CheckedBatch:
    """A file's batch as the worker that extracted it emitted and validated it, with its verdict."""

    batch: emit.FileBatch
    violations: list[Violation] | None  # None: the writer decides (a link to a node the file does not describe)
    types: list[tuple[str, str]]  # (node, class) of each node the batch types, N-Triples text ([]: not asked)
    seconds: dict[str, float] = field(default_factory=dict)  # emitting, validation


def emit_checked(settings: EmitSettings, files: Files, *, types: bool = True) -> list[CheckedBatch]:
    """Each file's batch, the files validated together, each violation then given to the file whose node
    it is about: the checks' cost is mostly per batch (a 300-file branch switch's, file by file 3.2 s of
    the workers' CPU, a chunk at a time 2.2 s), and no file's triples link to another's. A refresh of
    many files keeps the batches whole (its writer links and diffs them with the rest of the run: emitting
    and validating a 300-file switch had cost it ~3 s and ~4 s while both cores' workers only parsed), and
    asks for the ``types`` of the nodes they describe (what the rest of its batch is checked with)."""
    graph = NamedNode(settings.graph)
    out: list[CheckedBatch] = []
    for source, ext, frags, secrets in files:
        t0 = time.perf_counter()
        batch = emit.emit_file(settings.minter, source, ext, frags, graph, settings.generated_at, secrets=secrets)
        typed = [(s, rest[: rest.index(" ")]) for s, p, rest in (line.split(" ", 2) for line in batch.lines)
                 if p == _TYPE] if types else []
        out.append(CheckedBatch(batch, [], typed, {"emitting": time.perf_counter() - t0, "validation": 0.0}))
    t1 = time.perf_counter()
    violations = _check([line for c in out for line in c.batch.lines], graph, settings.minter.project())
    if violations:  # a violation names its focus bare; every node a file's lines describe is its own
        owner = {line[1 : line.index(">")]: c for c in out for line in c.batch.lines if line.startswith("<")}
        if any(v.focus not in owner for v in violations):
            violations = None
        else:
            for v in violations:
                owner[v.focus].violations.append(v)  # type: ignore[union-attr]
    if violations is None:
        for c in out:  # the writer decides, as for a file linking to a node only the store can type
            c.violations = None
    if out:
        out[0].seconds["validation"] = time.perf_counter() - t1
    return out


def _check(lines: list[str], graph: NamedNode, project: NamedNode) -> list[Violation] | None:
    """The file's violations, or None when its triples link to a node only the store can type."""
    return check_lines(None, lines, graph, None, [(project, UKO.Project)])
