"""``acms sparql``: run a query (text, file or saved by name) against the index."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli import relay
from acms.cli.common import (boundary, echo_failure, failure, open_index, project_options, refresh_option, relay_answer,
                             stale_lines)
from acms.errors import AcmsError, UsageError
from acms.results import DefaultGraph

if TYPE_CHECKING:  # the engine is imported once the command runs it, not for an answer a watcher gives
    from acms.api import Index
    from acms.results import Answer

BIND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_binding(text: str) -> tuple[str, str]:
    """``name=value``; the value is typed by the façade (``<iri>`` an IRI, an integer xsd:integer,
    anything else a string)."""
    name, sep, value = text.partition("=")
    if not sep or not BIND_NAME.fullmatch(name):
        raise UsageError(f"--bind expects name=value, got {text!r}")
    return name, value


def _given_text(query: str | None, file: str | None, saved: str | None) -> str | None:
    """The query text the command was given (read from -f FILE or stdin here, where they are), None for a
    saved query (the index's side finds it by name)."""
    given = [x for x in (query, file, saved) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of QUERY, -f FILE or --saved NAME (see --list)")
    if file is not None:
        if file == "-":
            return sys.stdin.read()
        path = Path(file)
        if not path.is_file():
            raise UsageError(f"no such query file: {file}")
        return path.read_text(encoding="utf-8")
    return query if saved is None else None


@dataclass(frozen=True)
class Query:
    """A query as the command was asked it: what it sends a watcher that answers for it (``fields``)."""

    text: str | None  # None: the saved query ``saved``
    saved: str | None
    binds: dict[str, str]
    fmt: str
    default_graph: str
    allow_service: bool

    @property
    def fields(self) -> dict[str, Any]:
        return {"text": self.text, "saved": self.saved, "binds": self.binds, "format": self.fmt,
                "default_graph": self.default_graph, "allow_service": self.allow_service}

    @classmethod
    def of(cls, message: dict[str, Any]) -> Query:
        text, saved = message["text"], message["saved"]
        return cls(None if text is None else str(text), None if saved is None else str(saved),
                   {str(k): str(v) for k, v in dict(message["binds"]).items()}, str(message["format"]),
                   str(message["default_graph"]), bool(message["allow_service"]))

    def checked(self) -> Checked:
        """What runs, checked before any index is opened: the saved query found and given its parameters,
        the guard on a user's text, the bindings typed."""
        from acms.api import Index

        across = False
        if self.saved is not None:
            spec = Index.saved_query(self.saved)
            missing = [p for p, _ in spec.params if p not in self.binds]
            if missing:
                raise UsageError(f"saved query {self.saved!r} needs --bind " + ", ".join(f"{m}=..." for m in missing))
            text, trusted, across = spec.text, True, spec.scope == "store"  # every project of a shared store
        else:
            text, trusted = self.text or "", False
        bindings = Index.bindings(self.binds)
        if not trusted:
            Index.check_query(text, allow_service=self.allow_service)
        return Checked(text, trusted, across, bindings)


@dataclass(frozen=True)
class Checked:
    text: str
    trusted: bool  # shipped with acms (a saved query): the guard on a user's text is not for it
    across: bool  # a saved query over every project of a shared store
    bindings: dict[str, Any]  # typed by the façade (``Index.bindings``)


def queried(index: Index, query: Query, run: Checked) -> dict[str, Any]:
    """What ``acms sparql`` prints of a query's answer: the answer on stdout (as printed, its last newline
    included), the note on files it answered without and the table's row count on stderr."""
    answer = index.answer(run.text, run.bindings, fmt=query.fmt, trusted=run.trusted, allow_service=query.allow_service,
                          default_graph=query.default_graph, whole_store=run.across)
    notes = stale_lines(index.stale)
    if query.fmt == "table" and answer.form == "select":
        rows = answer.rows
        return {"stdout": _table(answer), "stderr": [*notes, f"({len(rows)} row{'s' if len(rows) != 1 else ''})"]}
    if answer.form == "ask" and query.fmt == "table":
        return {"stdout": answer.text + "\n", "stderr": notes}
    return {"stdout": answer.text, "stderr": notes}


def _table(answer: Answer) -> str:
    names, rows = answer.variables, answer.rows
    widths = [min(60, max([len(n)] + [len(r[i]) for r in rows])) for i, n in enumerate(names)]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join((c if len(c) <= w else c[: w - 1] + "…").ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


def answer_sparql(index: Index) -> relay.Handler:
    """``acms sparql`` as ``acms watch`` answers it for the command (``acms.cli.relay``). Its errors come
    back as the command prints them (``failure``), so a query stopped at a limit does not run twice; the
    next query's bounded process is started while nothing is asked (``Index.prestart``)."""
    from acms.api import Index

    def sparql(message: dict[str, Any]) -> dict[str, Any]:
        query = Query.of(message)
        try:
            return queried(index, query, query.checked())
        except AcmsError as exc:
            return failure(exc, envelope=query.fmt == "json")
        finally:
            Index.prestart()

    return sparql


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
        from acms.api import Index

        for spec in Index.saved_queries():
            params = " ".join(f"--bind {p}=..." for p, _ in spec.params)
            click.echo(f"{spec.name:<32} {spec.summary}" + (f"  [{params}]" if params else ""))
        return
    ask = Query(_given_text(query, file, saved), saved, dict(parse_binding(b) for b in binds), fmt, default_graph,
                allow_service)
    answer = relay_answer("sparql", project, store, refresh, ask.fields)
    if answer is None:
        from acms.api import Index

        run = ask.checked()
        Index.prestart()  # the query's bounded child process starts while the index is opened
        with open_index(project, store, refresh=refresh) as idx:
            answer = queried(idx, ask, run)
    if "exit" in answer:
        echo_failure(answer)
    for line in answer["stderr"]:
        click.echo(line, err=True)
    click.echo(answer["stdout"], nl=False)
