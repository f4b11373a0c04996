"""``acms export``: the graph, or part of it, as RDF or for graph viewers."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click

from acms.cli.common import boundary, open_index, project_options
from acms.cli.progress import reporter
from acms.results import EXPORT_FORMATS as FORMATS
from acms.results import ExportScope, is_binary


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="turtle", show_default=True,
              help="RDF (turtle, trig, nquads, jsonld) or a graph-viewer format (graphml: Gephi/yEd, dot: "
                   "Graphviz, cytoscape: Cytoscape.js JSON, html: a self-contained interactive view).")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write here (default stdout).")
@click.option("--tier", type=click.Choice(["hot", "warm", "cold"]), help="Only this tier's graph.")
@click.option("--modules", is_flag=True, help="The module-level dependency graph (modules and imports).")
@click.option("--neighbourhood", "entity", help="An entity (IRI, path, qualified name or its end, Class.method, "
              "or short name) and its surroundings.")
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
    where = ExportScope(tier=tier, modules=modules, entity=entity, depth=depth,
                        construct=construct_file.read_text(encoding="utf-8") if construct_file else None)
    with open_index(project, store) as idx, _destination(output, binary=is_binary(fmt)) as out:
        done = idx.export.write(out, fmt, where, max_nodes=max_nodes,
                                progress=reporter(progress, machine_output=False))
    if done.dropped:
        click.echo(f"warning: {done.dropped} nodes over --max-nodes {max_nodes} left out (the smallest)", err=True)


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
