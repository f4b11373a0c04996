"""``acms sparql``: run a query (text, file or saved by name) against the index."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from acms.api import Index
from acms.cli.common import boundary, note_stale, open_index, project_options, refresh_option
from acms.errors import UsageError
from acms.results import Answer, DefaultGraph

BIND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_binding(text: str) -> tuple[str, str]:
    """``name=value``; the value is typed by the façade (``<iri>`` an IRI, an integer xsd:integer,
    anything else a string)."""
    name, sep, value = text.partition("=")
    if not sep or not BIND_NAME.fullmatch(name):
        raise UsageError(f"--bind expects name=value, got {text!r}")
    return name, value


def _query_text(query: str | None, file: str | None, saved: str | None, bindings: dict[str, str]) -> tuple[str, bool]:
    """The text to run and whether it is trusted (shipped with acms)."""
    given = [x for x in (query, file, saved) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of QUERY, -f FILE or --saved NAME (see --list)")
    if saved is not None:
        spec = Index.saved_query(saved)
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


def _table(answer: Answer) -> None:
    names, rows = answer.variables, answer.rows
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
        for spec in Index.saved_queries():
            params = " ".join(f"--bind {p}=..." for p, _ in spec.params)
            click.echo(f"{spec.name:<32} {spec.summary}" + (f"  [{params}]" if params else ""))
        return
    given = dict(parse_binding(b) for b in binds)
    text, trusted = _query_text(query, file, saved, given)
    bindings = Index.bindings(given)
    if not trusted:
        Index.check_query(text, allow_service=allow_service)
    Index.prestart()  # the query's bounded child process starts while the index is opened
    with open_index(project, store, refresh=refresh) as idx:
        across = saved is not None and Index.saved_query(saved).scope == "store"  # every project of a shared store
        answer = idx.answer(text, bindings, fmt=fmt, trusted=trusted, allow_service=allow_service,
                            default_graph=default_graph, whole_store=across)
        note_stale(idx.stale)
    if fmt == "table" and answer.form == "select":
        _table(answer)
    elif answer.form == "ask" and fmt == "table":
        click.echo(answer.text)
    else:
        click.echo(answer.text, nl=False)
