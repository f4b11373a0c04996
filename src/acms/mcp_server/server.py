"""``acms mcp``: the Model Context Protocol server (the official SDK's ``MCPServer``, mcp 2.x).

Tools (see :mod:`acms.mcp_server.tools`): ``assemble``, ``search``, ``sparql``, ``describe``,
``history``, ``explore``, ``neighbourhood``, ``decisions``, ``stats``, ``tiers``; ``index`` when the
server was started with ``--allow-index``, ``record_decision`` with ``--allow-record``.
Resources: the UKO ontology (``acms://ontology/uko.ttl``) and every saved exploration query
(``acms://queries/explore/<name>.rq``).

The server holds one shared ``acms.Index``: the store handle and the derived caches stay warm
between calls, and every call takes the index's shared lock for its own duration, so ``acms index``
and other commands run beside the server and the next call sees their result.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource
from mcp_types import ToolAnnotations

from acms import __version__, resources
from acms.api import Index
from acms.mcp_server.tools import AcmsTools

INSTRUCTIONS = """\
acms has indexed this project into a knowledge graph (code, docs, their calls, imports and history).
- Start with `assemble` for any question about the code (how X works, where to change Y, why Z):
  it returns the relevant code with `path:start-end` headers inside a token budget (4000 default).
- `describe` one symbol before changing it (kind, location, signature, callers, callees, members,
  history); `history` for its earlier versions and the commits that touched it.
- `search` for a quick ranked list of places; `explore` lists and runs saved graph queries (callers,
  dead functions, import cycles, ...); `sparql` for anything else (read-only).
- `neighbourhood` gives the graph around one entity; `decisions` the recorded design decisions (ADRs
  too); `stats` and `tiers` what the index holds.
Errors name their code, e.g. BUDGET_TOO_SMALL says the smallest budget that works."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

DESCRIPTIONS = {
    "assemble": (
        "Assemble the context for a coding task from the indexed project: the most relevant code, docs "
        "and their neighbours, each with its 'path:start-end' provenance, inside a hard token budget "
        "(never exceeded). Use it first for questions about how the code works, where to make a change, "
        "or why it is the way it is. Returns a markdown document by default."),
    "search": (
        "Ranked places in the project for a few words or identifiers: 'path:start-end', symbol name, "
        "kind, score and the first line. Cheaper than assemble when you only need where, not what."),
    "sparql": (
        "Run a read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the project's knowledge "
        "graph (UKO ontology: uko:Module, uko:Class, uko:Function, uko:Method, uko:calls, uko:defines, "
        "uko:imports, uko:qualifiedName, uko:sourceRef, ...; read the acms://ontology/uko.ttl resource). "
        "SERVICE, updates, over-long and deeply nested queries are refused. Rows are capped by max_rows."),
    "describe": (
        "Everything about one entity (a function, method, class, module, file or doc section) at a "
        "glance: kind, 'path:start-end', signature, docstring, where it is defined, who calls it, what "
        "it calls, what it defines, and a summary of its history. Unknown names get near matches; one "
        "an edit removed is described as gone (no location), its earlier versions counted (see history)."),
    "history": (
        "The versions of one entity that acms kept (earlier bodies, with what ended them) and the git "
        "commits that touched it, oldest first. Needs `acms index --history N` for commits."),
    "explore": (
        "Saved graph queries: call without a name to list them (callers, callees, dead-functions, "
        "import-cycles, module-dependencies, subclasses, ...) with their parameters; call with a name "
        "and params to run one, e.g. name='callers', params={'name': 'parse_header'}."),
    "neighbourhood": (
        "The graph around one entity: it and everything within `depth` structural edges (calls, defines, "
        "imports, ...), as Turtle by default, or N-Quads, JSON-LD, GraphML, DOT or Cytoscape JSON."),
    "decisions": (
        "The project's design decisions, recorded with acms and found in ADR files, oldest first: id, "
        "status, title, text, plan, what they are about, what they supersede; retired ones are marked."),
    "record_decision": (
        "Record a design decision (what was decided and why) in a plan, about entities of the project: "
        "later contexts show it beside that code, and search finds it at once. Secrets in the text are "
        "replaced by [REDACTED:kind] unless the store_secrets setting is on. Returns the decision (its "
        "id is D-<n>)."),
    "stats": (
        "What the index holds: counts per class, named graph and language, the store's size and the "
        "last index run."),
    "tiers": (
        "Entities and triples in the hot (recently changed or used), warm (the rest of the project) and "
        "cold (history) tiers, and the policy that assigns them."),
    "index": (
        "Refresh the index after files changed (incremental: only changed files are re-read). Takes the "
        "index's write lock for the run; other readers wait."),
}


def create_server(index: Index | Callable[[], Index], *, allow_index: bool = False,
                  create: Callable[[], Index] | None = None, allow_record: bool = False) -> MCPServer:
    """The MCP server over ``index`` (open it with ``shared=True``), or over an opener of it that is
    called on each tool call until it succeeds (the index does not exist yet, see ``AcmsTools``);
    ``create``: a writer that may start the index, for the ``index`` tool (``allow_index``);
    ``allow_record``: offer ``record_decision``."""
    tools = AcmsTools(index, create if allow_index else None)
    server = MCPServer("acms", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for name, fn in (("assemble", tools.assemble), ("search", tools.search), ("sparql", tools.sparql),
                     ("describe", tools.describe), ("history", tools.history), ("explore", tools.explore),
                     ("neighbourhood", tools.neighbourhood), ("decisions", tools.decisions),
                     ("stats", tools.stats), ("tiers", tools.tiers)):
        server.add_tool(fn, name=name, description=DESCRIPTIONS[name], annotations=READ_ONLY,
                        structured_output=False)
    if allow_index:
        server.add_tool(tools.refresh_index, name="index", description=DESCRIPTIONS["index"],
                        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                    idempotent_hint=True, open_world_hint=False),
                        structured_output=False)
    if allow_record:
        server.add_tool(tools.record_decision, name="record_decision", description=DESCRIPTIONS["record_decision"],
                        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                    idempotent_hint=False, open_world_hint=False),
                        structured_output=False)
    _add_resources(server)
    return server


def _add_resources(server: MCPServer) -> None:
    server.add_resource(FunctionResource.from_function(
        lambda: resources.read_text("ontology", "uko.ttl"), uri="acms://ontology/uko.ttl", name="uko.ttl",
        description="The UKO ontology (OWL 2, Turtle): the classes and properties every query uses.",
        mime_type="text/turtle"))
    for spec in Index.saved_queries():
        text = spec.text
        server.add_resource(FunctionResource.from_function(
            lambda text=text: text, uri=f"acms://queries/explore/{spec.name}.rq", name=f"{spec.name}.rq",
            description=spec.summary, mime_type="application/sparql-query"))
