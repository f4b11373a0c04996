"""``acms sparql``: run a query (text, file or saved by name) against the index."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode

from acms.terms import Term

from acms.cli.common import boundary, note_stale, open_index, project_options, refresh_option
from acms.errors import UsageError
from acms.sparql import catalog
from acms.sparql.dataset import DefaultGraph, dataset_arguments
from acms.sparql.bind import term_from_text
from acms.sparql.runner import prestart
from acms.sparql.guard import check_query, refuse_update

FORMATS = {"json": ox.QueryResultsFormat.JSON, "csv": ox.QueryResultsFormat.CSV,
           "tsv": ox.QueryResultsFormat.TSV, "xml": ox.QueryResultsFormat.XML}
RDF_FORMATS = {"turtle": ox.RdfFormat.TURTLE, "ntriples": ox.RdfFormat.N_TRIPLES, "jsonld": ox.RdfFormat.JSON_LD}


def parse_binding(text: str) -> tuple[str, Term]:
    """``name=value``: ``<iri>`` is an IRI, an integer is xsd:integer, anything else a string."""
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UsageError(f"--bind expects name=value, got {text!r}")
    return name, term_from_text(name, value)


def _query_text(query: str | None, file: str | None, saved: str | None, bindings: dict[str, Term]) -> tuple[str, bool]:
    """The text to run and whether it is trusted (shipped with acms)."""
    given = [x for x in (query, file, saved) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of QUERY, -f FILE or --saved NAME (see --list)")
    if saved is not None:
        spec = catalog.saved(saved)
        missing = [p for p, _ in spec.params if p not in bindings]
        if missing:
            raise UsageError(f"saved query {saved!r} needs --bind " + ", ".join(f"{m}=..." for m in missing))
        return spec.text, True
    if file is not None:
        if file == "-":
            return sys.stdin.read(), False
        path = Path(file)
        if not path.is_file():
            raise UsageError(f"no such query file: {file}")
        return path.read_text(encoding="utf-8"), False
    return query or "", False


def _cell(term: Term | None) -> str:
    if term is None:
        return ""
    return term.value if isinstance(term, (NamedNode, Literal)) else str(term)


def _table(result: ox.QuerySolutions) -> None:
    names = [v.value for v in result.variables]
    rows = [[_cell(s[n]) for n in names] for s in result]
    widths = [min(60, max([len(n)] + [len(r[i]) for r in rows])) for i, n in enumerate(names)]
    click.echo("  ".join(n.ljust(w) for n, w in zip(names, widths)))
    click.echo("  ".join("-" * w for w in widths))
    for r in rows:
        click.echo("  ".join((c if len(c) <= w else c[: w - 1] + "…").ljust(w) for c, w in zip(r, widths)))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})", err=True)


@click.command("sparql")
@click.argument("query", required=False)
@click.option("-f", "--file", "file", help="Read the query from FILE ('-' for stdin).")
@click.option("--saved", help="Run a saved exploration query by name (see --list).")
@click.option("--list", "list_saved", is_flag=True, help="List the saved exploration queries and exit.")
@click.option("--bind", "binds", multiple=True, metavar="NAME=VALUE",
              help="Bind a parameter (repeatable): <iri>, an integer, or a string.")
@click.option("--format", "fmt",
              type=click.Choice(["table", "json", "csv", "tsv", "xml", "turtle", "ntriples", "jsonld"]),
              default="table", show_default=True,
              help="Output format (CONSTRUCT/DESCRIBE print Turtle by default, or N-Triples, JSON-LD).")
@click.option("--default-graph", "default_graph", type=click.Choice([m.value for m in DefaultGraph]),
              default=DefaultGraph.CURRENT.value, show_default=True,
              help="The default graph when the query has no FROM: " + "; ".join(f"{m.value}: {m.help}" for m in DefaultGraph)
              + ".")
@click.option("--allow-service", is_flag=True, help="Permit SERVICE (the store would call the remote endpoint).")
@refresh_option
@project_options
@boundary
def sparql_cmd(query: str | None, file: str | None, saved: str | None, list_saved: bool, binds: tuple[str, ...],
               fmt: str, default_graph: str, allow_service: bool, refresh: str | None, project: Path,
               store: Path | None) -> None:
    """Run a SPARQL query against the index: SELECT, ASK, CONSTRUCT or DESCRIBE.

    \b
    Examples:
      acms sparql 'SELECT ?c WHERE { ?c a uko:Class } LIMIT 5'
      acms sparql 'DESCRIBE <https://w3id.org/acms/...>' --format jsonld
      acms sparql --saved callers --bind name=index_project
      acms sparql -f my-query.rq --format csv

    The default graph is the project as it is now (the hot and warm tiers) unless the query says FROM;
    GRAPH ?g { ... } ranges over every named graph (tiers, history, meta, ontology); --default-graph
    all makes the default graph the union of all of them, --default-graph empty the strict SPARQL one.
    The prefixes uko:, prov:, rdf:, rdfs:, xsd:, owl:, dcterms:, sh: and fn: are predeclared.
    Parameters are bound as VALUES at the head of the WHERE group, never pasted into the text.
    fn:tokenCount(?text) counts a text's tokens as the context packer does (tiktoken cl100k_base): a
    fragment's count is not stored.
    """
    if list_saved:
        for key, spec in sorted(catalog.all_queries().items()):
            if spec.folder == "explore":
                params = " ".join(f"--bind {p}=..." for p, _ in spec.params)
                click.echo(f"{spec.name:<32} {spec.summary}" + (f"  [{params}]" if params else ""))
        return
    bindings = dict(parse_binding(b) for b in binds)
    text, trusted = _query_text(query, file, saved, bindings)
    if not trusted:
        check_query(text, allow_service=allow_service)
    refuse_update(text)
    prestart()  # the query's bounded child process starts while the index is opened
    idx = open_index(project, store, refresh=refresh)
    try:
        note_stale(idx.freshen())
        graph = idx.store
        across = saved is not None and catalog.saved(saved).scope == "store"  # every project of a shared store
        dataset = {"whole_store": True} if across else dataset_arguments(text, DefaultGraph(default_graph))
        result = graph.query_raw(text, bindings or None, limits=idx.query_limits, **dataset)  # stopped at them
        if isinstance(result, ox.QuerySolutions):
            if fmt == "table":
                _table(result)
            elif fmt in FORMATS:
                click.echo(result.serialize(format=FORMATS[fmt]).decode("utf-8"), nl=False)
            else:
                raise UsageError(f"--format {fmt} is for CONSTRUCT/DESCRIBE; use table, json, csv, tsv or xml")
        elif isinstance(result, ox.QueryBoolean):
            if fmt in RDF_FORMATS:
                raise UsageError(f"--format {fmt} is for CONSTRUCT/DESCRIBE; use table, json, csv, tsv or xml")
            if fmt in FORMATS:
                click.echo(result.serialize(format=FORMATS[fmt]).decode("utf-8"), nl=False)
            else:
                click.echo("true" if bool(result) else "false")
        else:
            if fmt in FORMATS:
                raise UsageError(f"--format {fmt} is for SELECT/ASK; use turtle, ntriples or jsonld")
            rdf_format = RDF_FORMATS.get(fmt, ox.RdfFormat.TURTLE)
            click.echo(ox.serialize(result, format=rdf_format, prefixes=graph.prefixes()).decode("utf-8"), nl=False)
    finally:
        idx.close()
