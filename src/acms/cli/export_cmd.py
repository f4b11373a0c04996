"""``acms export``: the graph, or part of it, as RDF or for graph viewers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click
from pyoxigraph import Quad

from acms.cli.common import boundary, open_index, project_options
from acms.errors import UsageError
from acms.export import graph as graph_formats
from acms.export import rdf, scope, view

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
              help="Print how many quads were read every few seconds on stderr (default: when stderr is a terminal).")
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
    if progress is None:
        progress = sys.stderr.isatty()
    if fmt == "html":
        max_nodes = 10**9  # the view summarises; nothing is left out
    chosen = [x for x in (tier, modules or None, entity, construct_file) if x]
    if len(chosen) > 1:
        raise UsageError("choose one scope: --tier, --modules, --neighbourhood or --construct")
    idx = open_index(project, store)
    graph = idx.store
    try:
        predicates = None if fmt in rdf.FORMATS else view.PREDICATES
        if tier:
            quads: Iterator[Quad] = scope.tier(tier).stream(graph, predicates, view.SKIP_KINDS)
        elif modules:
            quads = iter(scope.require(scope.modules(graph)))
        elif entity:
            quads = iter(scope.require(scope.neighbourhood(graph, entity, depth)))
        elif construct_file:
            quads = iter(scope.require(scope.construct(graph, construct_file.read_text(encoding="utf-8"))))
        else:
            quads = scope.whole().stream(graph, predicates, view.SKIP_KINDS)
        from acms.ontology.service import extension_namespaces

        counted = Counted(quads, progress)
        with _destination(output, binary=fmt in rdf.FORMATS) as out:
            if fmt in rdf.FORMATS:
                rdf.write(counted, fmt, out)
            else:
                built = view.build(counted, max_nodes, extension_namespaces(graph))
                counted.done(f"{len(built.nodes):,} nodes, {len(built.edges):,} edges")
                if built.dropped:
                    click.echo(f"warning: {built.dropped} nodes over --max-nodes {max_nodes} left out (the smallest)",
                               err=True)
                graph_formats.WRITERS[fmt](built, out)
            if not counted.quads:  # raised before the file is put in place
                raise UsageError("the export scope is empty (nothing indexed, or nothing matches)")
        counted.done("")
    finally:
        idx.close()


class Counted:
    """The quads as they stream, counted; a line on stderr every few seconds when ``progress`` is on."""

    EVERY_S = 2.0

    def __init__(self, quads: Iterator[Quad], progress: bool) -> None:
        self._quads = quads
        self.progress = progress
        self.quads = 0
        self.start = self._last = time.monotonic()
        self._said_done = False

    def __iter__(self) -> Iterator[Quad]:
        for quad in self._quads:
            self.quads += 1
            if self.progress and not self.quads % 50_000:
                now = time.monotonic()
                if now - self._last >= self.EVERY_S:
                    self._last = now
                    click.echo(f"export: {self.quads:,} quads read ({now - self.start:.0f} s)", err=True)
            yield quad

    def done(self, what: str) -> None:
        """Say once, when the export took long enough to have said anything, what was read."""
        if self._said_done or not self.progress or time.monotonic() - self.start < self.EVERY_S:
            return
        self._said_done = True
        extra = f": {what}" if what else ""
        click.echo(f"export: {self.quads:,} quads read in {time.monotonic() - self.start:.1f} s{extra}", err=True)


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
