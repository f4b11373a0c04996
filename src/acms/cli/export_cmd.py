"""``acms export``: the graph, or part of it, as RDF or for graph viewers."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from acms.cli.common import boundary, open_index, project_options
from acms.errors import UsageError
from acms.export import graph as graph_formats
from acms.export import rdf, scope

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
@click.option("--max-nodes", type=int, default=5000, show_default=True,
              help="Node cap for graphml/dot/cytoscape (the largest nodes are kept; a warning says how many went).")
@project_options
@boundary
def export_cmd(fmt: str, output: Path | None, tier: str | None, modules: bool, entity: str | None, depth: int,
               construct_file: Path | None, max_nodes: int, project: Path, store: Path | None) -> None:
    """Export the whole graph (default), a tier, the module graph, a neighbourhood or a CONSTRUCT result.

    \b
    Examples:
      acms export --format trig -o project.trig
      acms export --modules --format dot | dot -Tsvg > modules.svg
      acms export --neighbourhood index_project --depth 2 --format graphml -o around.graphml
      acms export --format html -o graph.html      # open in any browser, offline
    """
    chosen = [x for x in (tier, modules or None, entity, construct_file) if x]
    if len(chosen) > 1:
        raise UsageError("choose one scope: --tier, --modules, --neighbourhood or --construct")
    idx = open_index(project, store)
    graph = idx.store
    try:
        if tier:
            quads = scope.tier(graph, tier)
        elif modules:
            quads = scope.modules(graph)
        elif entity:
            quads = scope.neighbourhood(graph, entity, depth)
        elif construct_file:
            quads = scope.construct(graph, construct_file.read_text(encoding="utf-8"))
        else:
            quads = scope.whole(graph)
        from acms.ontology.service import extension_namespaces

        namespaces = extension_namespaces(graph)
    finally:
        idx.close()
    scope.require(quads)
    # Written as produced, straight to the file or stdout (no whole-document string in memory).
    if fmt in rdf.FORMATS:
        if output:
            with output.open("wb") as fh:
                rdf.write(quads, fmt, fh)
        else:
            rdf.write(quads, fmt, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        return
    view = graph_formats.build(quads, max_nodes, namespaces)
    if view.dropped:
        click.echo(f"warning: {view.dropped} nodes over --max-nodes {max_nodes} left out (the smallest)", err=True)
    if output:
        with output.open("w", encoding="utf-8") as fh:
            graph_formats.WRITERS[fmt](view, fh)
    else:
        graph_formats.WRITERS[fmt](view, sys.stdout)
