"""The graph, or part of it, written as RDF or for a graph viewer: the whole graph, a tier, the module
graph, an entity's neighbourhood or a CONSTRUCT result (:mod:`acms.export` does the formats)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from pyoxigraph import Quad

from acms.errors import UsageError
from acms.export import graph as graph_formats
from acms.export import rdf, scope, view
from acms.service.host import Host
from acms.service.progress import NullProgress, Progress
from acms.vocab import GRAPH_ONTOLOGY

FORMATS = [*rdf.FORMATS, *graph_formats.WRITERS]


def is_binary(fmt: str) -> bool:
    """RDF formats are written as bytes, the viewer formats as text."""
    return fmt in rdf.FORMATS


@dataclass(frozen=True)
class ExportScope:
    """One of: a tier, the module graph, an entity's neighbourhood (``depth`` hops), a CONSTRUCT query;
    none of them: the whole graph."""

    tier: str | None = None
    modules: bool = False
    entity: str | None = None
    depth: int = 1
    construct: str | None = None

    def __post_init__(self) -> None:
        chosen = [x for x in (self.tier, self.modules or None, self.entity, self.construct) if x]
        if len(chosen) > 1:
            raise UsageError("choose one scope: --tier, --modules, --neighbourhood or --construct")


@dataclass
class ExportReport:
    quads: int
    dropped: int = 0  # viewer nodes over max_nodes left out


class Counted:
    """The quads as they stream, counted, and reported as the ``export`` phase."""

    EVERY = 20_000  # quads between two progress updates

    def __init__(self, quads: Iterator[Quad], progress: Progress, total: int | None = None) -> None:
        self._quads, self.progress, self.total = quads, progress, total
        self.quads = 0

    def __iter__(self) -> Iterator[Quad]:
        self.progress.start("export", self.total)
        for quad in self._quads:
            self.quads += 1
            if not self.quads % self.EVERY:
                self.progress.update(self.quads, self.total)
            yield quad
        self.progress.update(self.quads, self.total)
        self.progress.finish("export")


class Exporter:
    """``index.export``."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def write(self, out: IO[Any], fmt: str = "turtle", where: ExportScope | None = None, *, max_nodes: int = 5000,
              progress: Progress | None = None) -> ExportReport:
        """Write the scope to ``out`` (bytes for RDF formats, text for viewer formats: ``is_binary``). An
        empty scope is a UsageError, raised after nothing or part was written (a caller writing a file
        discards it)."""
        if fmt not in FORMATS:
            raise UsageError(f"unknown export format {fmt!r}; formats: {', '.join(FORMATS)}")
        where = where or ExportScope()
        if fmt == "html":
            max_nodes = 10**9  # the view summarises; nothing is left out
        with self._host.session.reading() as store:
            predicates = None if fmt in rdf.FORMATS else view.PREDICATES
            whole = not (where.modules or where.entity or where.construct)
            graphs = scope.tier(where.tier) if where.tier else scope.whole() if whole else None
            # the bar's total when it is cheap to know: every quad of the store but the ontology's (a count
            # of one tier would cost a fifth of reading it; the viewer formats read only some predicates)
            total = store.count() - store.count(GRAPH_ONTOLOGY) if graphs and not where.tier and predicates is None \
                else None
            if graphs:
                quads: Iterator[Quad] = graphs.stream(store, predicates, view.SKIP_KINDS)
            elif where.modules:
                quads = iter(scope.require(scope.modules(store)))
            elif where.entity:
                quads = iter(scope.require(scope.neighbourhood(store, where.entity, where.depth)))
            else:
                quads = iter(scope.require(scope.construct(store, where.construct or "")))
            from acms.ontology.service import extension_namespaces

            counted = Counted(quads, progress or NullProgress(), total)
            dropped = 0
            if fmt in rdf.FORMATS:
                rdf.write(counted, fmt, out)
            else:
                built = view.build(counted, max_nodes, extension_namespaces(store))
                dropped = built.dropped
                graph_formats.WRITERS[fmt](built, out)
            if not counted.quads:
                raise UsageError("the export scope is empty (nothing indexed, or nothing matches)")
            return ExportReport(counted.quads, dropped)

    def text(self, fmt: str = "turtle", where: ExportScope | None = None, *, max_nodes: int = 5000) -> str:
        """The export as one string (for a neighbourhood or a tier over HTTP or MCP)."""
        if is_binary(fmt):
            raw = io.BytesIO()
            self.write(raw, fmt, where, max_nodes=max_nodes)
            return raw.getvalue().decode("utf-8")
        out = io.StringIO()
        self.write(out, fmt, where, max_nodes=max_nodes)
        return out.getvalue()
