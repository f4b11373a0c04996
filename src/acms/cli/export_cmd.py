"""``acms export``: the graph, or part of it, as RDF or for graph viewers."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click
from pyoxigraph import Quad

from acms.cli.common import boundary, open_index, project_options
from acms.cli.progress import reporter
from acms.errors import UsageError
from acms.export import graph as graph_formats
from acms.export import rdf, scope, view
from acms.service.progress import Progress
from acms.vocab import GRAPH_ONTOLOGY

FORMATS = [*rdf.FORMATS, *graph_formats.WRITERS]


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="turtle", show_default=True,
              help="RDF (turtle, trig, nquads, jsonld) or a graph-viewer format (graphml: Gephi/yEd, dot: "
                   "Graphviz, cytoscape: Cytoscape.js JSON, html: a self-contained interactive view).")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write here (default stdout).")
@click.option("--tier", type=click.Choice(["hot", "warm", "cold"]), help="Only this tier's graph.")
@click.option("--modules", is_flag=True, help="The module-level dependency graph (modules and imports).")
@click.option("--neighbourhood", "entity", help="An entity (IRI, path, qualified or short name) and its surroundings.")
@click.option("--depth", type=click.IntRange(0, 4), default=1, show_default=True, help="Hops for --neighbourhood.")
@click.option("--construct", "construct_file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Export the result of a CONSTRUCT query in this file.")
@click.option("--max-nodes", type=click.IntRange(min=1), default=5000, show_default=True,
              help="Node cap for graphml/dot/cytoscape (the largest nodes are kept; a warning says how many "
                   "went). The html view has no cap: it opens on a summary and expands on click.")
@click.option("--progress/--quiet", default=None,
              help="Progress on stderr: quads read, with a bar and ETA on a terminal; --quiet for none "
                   "(default: a bar on a terminal, a line every 10 s elsewhere).")
@project_options
@boundary
def export_cmd(fmt: str, output: Path | None, tier: str | None, modules: bool, entity: str | None, depth: int,
               construct_file: Path | None, max_nodes: int, progress: bool | None, project: Path,
               store: Path | None) -> None:
    """Export the whole graph (default), a tier, the module graph, a neighbourhood or a CONSTRUCT result.

    \b
    Examples:
      acms export --format trig -o project.trig
      acms export --modules --format dot | dot -Tsvg > modules.svg
      acms export --neighbourhood index_project --depth 2 --format graphml -o around.graphml
      acms export --format html -o graph.html      # open in any browser, offline

    The html view opens on the packages and expands on click; it also shows the calls around an
    entity, a file's neighbourhood, and tiers with history. Colours are one per kind, the same in
    graphml, dot, cytoscape and html. A file given with -o appears whole or not at all.
    """
    if fmt == "html":
        max_nodes = 10**9  # the view summarises; nothing is left out
    chosen = [x for x in (tier, modules or None, entity, construct_file) if x]
    if len(chosen) > 1:
        raise UsageError("choose one scope: --tier, --modules, --neighbourhood or --construct")
    idx = open_index(project, store)
    graph = idx.store
    try:
        predicates = None if fmt in rdf.FORMATS else view.PREDICATES
        graphs = scope.tier(tier) if tier else None if modules or entity or construct_file else scope.whole()
        # the bar's total when it is cheap to know: every quad of the store but the ontology's (a count
        # of one tier would cost a fifth of reading it; the viewer formats read only some predicates)
        total = graph.count() - graph.count(GRAPH_ONTOLOGY) if graphs and not tier and predicates is None else None
        if graphs:
            quads: Iterator[Quad] = graphs.stream(graph, predicates, view.SKIP_KINDS)
        elif modules:
            quads = iter(scope.require(scope.modules(graph)))
        elif entity:
            quads = iter(scope.require(scope.neighbourhood(graph, entity, depth)))
        else:
            quads = iter(scope.require(scope.construct(graph, construct_file.read_text(encoding="utf-8"))))  # type: ignore[union-attr]
        from acms.ontology.service import extension_namespaces

        counted = Counted(quads, reporter(progress, machine_output=False), total)
        with _destination(output, binary=fmt in rdf.FORMATS) as out:
            if fmt in rdf.FORMATS:
                rdf.write(counted, fmt, out)
            else:
                built = view.build(counted, max_nodes, extension_namespaces(graph))
                if built.dropped:
                    click.echo(f"warning: {built.dropped} nodes over --max-nodes {max_nodes} left out (the smallest)",
                               err=True)
                graph_formats.WRITERS[fmt](built, out)
            if not counted.quads:  # raised before the file is put in place
                raise UsageError("the export scope is empty (nothing indexed, or nothing matches)")
    finally:
        idx.close()


class Counted:
    """The quads as they stream, counted, and reported as the ``export`` phase (``acms.cli.progress``:
    a bar with counts and ETA on a terminal when the total is known, a line now and then elsewhere)."""

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


@contextmanager
def _destination(output: Path | None, *, binary: bool) -> Iterator[IO[Any]]:
    """stdout, or a file that appears whole: written beside it, renamed into place at the end."""
    if output is None:
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    partial = output.with_name(f".{output.name}.partial")
    try:
        with partial.open("wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            yield fh
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
