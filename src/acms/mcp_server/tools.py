"""The MCP tools of ``acms mcp``: thin functions over one shared ``acms.Index``, text in, text out.

Each tool answers with text a model reads: assembled context as markdown (or the JSON reply), the
other tools as compact JSON. An acms error (a bad budget, an unknown entity, a refused query, a
locked or missing index) becomes an MCP tool error (``is_error``; the SDK prefixes
``Error executing tool NAME:`` to our ``CODE: message``), never a crashed server; the SDK turns
anything unexpected into a tool error too, without its text.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from acms.api import Index
from acms.errors import AcmsError, ErrorCode, StoreMissing, environment_error
from acms.results import ExportScope, stale_notice

F = TypeVar("F", bound=Callable[..., str])

MAX_ROWS_CAP = 5000
SEARCH_PREVIEW_CHARS = 160
DECISION_CHARS = 600  # of each decision's text in the decisions tool's answer, unless asked for more
MAX_DECISION_CHARS = 20_000  # a recorded decision's longest text


def tool_errors(func: F) -> F:
    """acms errors → MCP tool errors carrying the error code and the one-line message."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            try:
                return func(*args, **kwargs)
            except OSError as exc:  # a full disk, a read-only index that needed a write
                raise environment_error(exc) or exc from None
        except AcmsError as exc:
            raise ToolError(f"{ErrorCode(exc.code).value}: {exc.message}") from None

    return wrapper  # type: ignore[return-value]


def as_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


Task = Annotated[str, Field(min_length=1, description=(
    "The task or question in plain words, e.g. 'how are HTTP headers parsed' or 'add a retry to the "
    "upload client'. Name symbols in code form (parse_header, pkg.mod.Client) when you know them."))]
Budget = Annotated[int, Field(ge=1, description=(
    "Token budget (tiktoken cl100k). markdown/text: the whole reply fits in it; json: the fragments' "
    "text does (the small envelope around it is extra). 2000-8000 answers most questions; 500-1000 "
    "for a quick look."))]
Strategy = Annotated[str, Field(description=(
    "auto (default) picks the best: arce (the default pipeline: ranked code, then a walk over the graph "
    "to what it calls and uses, with or without focus), breadth-depth-navigator (a plain walk around "
    "focus entities), temporal-archaeology (why/when did X change), plan-decision-context (recorded "
    "decisions), simple-keyword, semantic-embedding."))]
Focus = Annotated[list[str] | None, Field(description=(
    "Entities to centre on: qualified names (pkg.mod.func) or their ends (Class.method), paths "
    "(pkg/mod.py) or path::Class.method: their bodies come first, then what they call and use."))]
Paths = Annotated[list[str] | None, Field(description="Only fragments whose path matches one of these globs, e.g. 'src/**/*.py'.")]
Privacy = Annotated[Literal["allow", "redact", "block"], Field(description=(
    "allow: clear secrets are redacted (default); redact: every secret-looking value; block: no raw "
    "text, only ids, paths and names."))]
Lod = Annotated[list[Literal["macro", "micro", "atomic"]] | None, Field(description=(
    "Levels of detail to keep: macro (outlines: signatures, first doc line), micro (whole symbols and "
    "sections), atomic (a few lines around the best match). Empty: all."))]
Format = Annotated[Literal["markdown", "text", "json"], Field(description=(
    "markdown (default): a document with a 'path:start-end' header per fragment; text: the same "
    "without markdown; json: a render_context_reply.v0 (fragment ids, scores, kv_policy, metrics)."))]
Entity = Annotated[str, Field(min_length=1, description=(
    "A qualified name (pkg.mod.Class.method) or its end (Class.method), a path (pkg/mod.py), "
    "path::Qualified.name, a unique short name, or an IRI."))]
Depth = Annotated[int, Field(ge=0, le=4, description="Hops of structural edges (calls, defines, imports, ...) around the entity.")]
GraphFormat = Annotated[Literal["turtle", "nquads", "jsonld", "graphml", "dot", "cytoscape"], Field(description=(
    "turtle (default), nquads or jsonld (RDF); graphml, dot or cytoscape (JSON) for graph viewers."))]
MaxRows = Annotated[int, Field(ge=1, le=MAX_ROWS_CAP, description="Most rows (or triples) returned; 'truncated' says when there were more.")]


class AcmsTools:
    """The tool functions, bound to one Index (shared: each call takes the index's shared lock).

    Given an opener instead of an Index (``acms mcp`` started where no index exists yet), the server
    still completes the handshake and lists its tools; each call tries to open the index and, until
    ``acms index`` has made one, answers with ``STORE_MISSING`` naming it. The first call after that
    opens the index and every later one uses it: no restart."""

    def __init__(self, index: Index | Callable[[], Index], create: Callable[[], Index] | None = None) -> None:
        self._index: Index | None = index if isinstance(index, Index) else None
        self._open: Callable[[], Index] | None = None if isinstance(index, Index) else index
        self._create = create  # the `index` tool's writer for an index that does not exist yet
        self._opening = threading.Lock()

    @property
    def index(self) -> Index:
        if self._index is None:
            with self._opening:
                if self._index is None:
                    assert self._open is not None
                    self._index = self._open()  # StoreMissing (a tool error) until the index exists
        return self._index

    @property
    def opened(self) -> Index | None:
        """The index, if open (``None`` while the server waits for ``acms index``)."""
        return self._index

    @tool_errors
    def assemble(self, task: Task, budget: Budget = 4000, strategy: Strategy = "auto",
                 focus: Focus = None, paths: Paths = None, privacy: Privacy = "allow",
                 lod: Lod = None, format: Format = "markdown") -> str:
        request: dict[str, Any] = {"strategy": strategy, "privacy_mode": privacy, "format": format,
                                   "request_id": "mcp"}
        if focus:
            request["focus"] = list(focus)
        if lod:
            request["lod"] = list(lod)
        if paths:
            request["filters"] = {"paths": list(paths)}
        result = self.index.assemble(task, budget, **request)
        return result.assembled.rendered  # a stale file is named in the document itself (or its metrics)

    @tool_errors
    def search(self, query: Annotated[str, Field(min_length=1, description="Words or identifiers to look for.")],
               mode: Annotated[Literal["keyword", "vector", "hybrid"], Field(description=(
                   "keyword (BM25 over text and split identifiers), vector (embedding similarity) or "
                   "hybrid (both, default)."))] = "hybrid",
               k: Annotated[int, Field(ge=1, le=100, description="Number of hits.")] = 10) -> str:
        result = self.index.search(query, mode, k)
        hits = [{"ref": h.source_ref, "name": h.name, "kind": h.kind, "score": round(h.score, 3), "why": h.why,
                 "preview": _preview(h.text)} for h in result.hits]
        return self._noted(as_json({"hits": hits, "warnings": result.warnings}))

    @tool_errors
    def sparql(self, query: Annotated[str, Field(min_length=1, description=(
                   "A SELECT, ASK, CONSTRUCT or DESCRIBE query. Its default graph is the project as it "
                   "is now (the hot and warm tiers); GRAPH ?g { ... } also reaches history, meta and the "
                   "ontology. Prefixes uko:, prov:, rdf:, rdfs:, xsd:, owl:, dcterms:, fn: are predeclared; "
                   "fn:tokenCount(?text) counts a text's tokens as the context packer does."))],
               max_rows: MaxRows = 200) -> str:
        return self._noted(as_json(self.index.sparql(query, max_rows=max_rows).as_dict()))

    @tool_errors
    def describe(self, entity: Entity) -> str:
        return self._noted(as_json(self.index.describe(entity).as_dict()))

    @tool_errors
    def history(self, entity: Entity,
                include_text: Annotated[bool, Field(description="Include each earlier version's full text.")] = False) -> str:
        found = [h.as_dict() for h in self.index.history(entity)]
        if not include_text:
            for h in found:
                for event in h["events"]:  # type: ignore[union-attr]
                    event.pop("text", None)
        return self._noted(as_json(found))

    @tool_errors
    def explore(self, name: Annotated[str | None, Field(description=(
                    "A saved query to run; leave empty to list them with their parameters."))] = None,
                params: Annotated[dict[str, str] | None, Field(description=(
                    "The saved query's parameters, e.g. {\"name\": \"parse_header\"}."))] = None,
                max_rows: MaxRows = 200) -> str:
        if not name:
            return as_json([{"name": s.name, "summary": s.summary,
                             "params": {p: help_ for p, help_ in s.params}} for s in Index.saved_queries()])
        return self._noted(as_json(self.index.run_saved(name, params or {}, max_rows=max_rows).as_dict()))

    @tool_errors
    def stats(self) -> str:
        return self._noted(as_json(self.index.stats().as_dict()))

    @tool_errors
    def neighbourhood(self, entity: Entity, depth: Depth = 1, format: GraphFormat = "turtle") -> str:
        return self._noted(self.index.export.text(format, ExportScope(entity=entity, depth=depth)))

    @tool_errors
    def tiers(self) -> str:
        return self._noted(as_json(self.index.tiers.counts().as_dict()))

    @tool_errors
    def decisions(self, about: Annotated[str | None, Field(description=(
                      "Only the decisions about this entity (a name, path or IRI); empty: every decision."))] = None,
                  text_chars: Annotated[int, Field(ge=0, le=MAX_DECISION_CHARS, description=(
                      "Each decision's text is cut to this many characters ('…' marks a cut; 0: no text): a "
                      "project's ADRs can hold pages."))] = DECISION_CHARS) -> str:
        found = [d.as_dict() for d in self.index.plans.decisions(about)]
        for d in found:
            if len(d["text"]) > text_chars:
                d["text"] = d["text"][: text_chars - 1] + "…" if text_chars else ""
        return self._noted(as_json(found))

    @tool_errors
    def record_decision(self, text: Annotated[str, Field(min_length=1, description=(
                            "What was decided and why, in a few sentences: it is searched and shown in later "
                            "contexts beside the code it is about."))],
                        plan: Annotated[str, Field(min_length=1, description=(
                            "The plan (unit of work) it belongs to, e.g. the task at hand; a plan of this "
                            "name is created when none exists."))],
                        about: Annotated[list[str] | None, Field(description=(
                            "Entities it is about: qualified names, paths, path::Qualified.name or IRIs."))] = None,
                        title: Annotated[str | None, Field(description="One line; default: the text's first line.")] = None,
                        supersedes: Annotated[str | None, Field(description=(
                            "Id (D-3) of a recorded decision this one replaces; that one is retired."))] = None,
                        status: Annotated[Literal["proposed", "accepted", "rejected", "deprecated"],
                                          Field(description="The new decision's status.")] = "accepted") -> str:
        return as_json(self.index.plans.record_reply(text, plan=plan, title=title, about=about or (),
                                                     supersedes=supersedes, status=status))

    def _noted(self, text: str) -> str:
        """The answer, under a line naming the files it was made without (``refresh = warn``)."""
        notice = stale_notice(self.index.stale)
        return f"{notice}\n{text}" if notice else text

    @tool_errors
    def refresh_index(self) -> str:
        if self._index is None and self._create is not None:
            try:
                _ = self.index
            except StoreMissing:  # the first index of the project: made by a writer of its own
                with self._create() as writer:
                    report = writer.index()
                _ = self.index  # the server's shared index, from now on
                return self._report(report)
        return self._report(self.index.index(defer_refit=True))  # an agent waits for it: no LSA refit here

    @staticmethod
    def _report(report: Any) -> str:
        return as_json({"files_listed": report.files_listed, "files_indexed": report.files_indexed,
                        "files_unchanged": report.files_unchanged, "files_removed": report.files_removed,
                        "up_to_date": report.up_to_date, "skipped": report.skipped_counts(),
                        "quarantined": sorted(report.quarantined)[:20], "warnings": report.warnings[:20],
                        "notes": report.notes, "seconds": round(report.seconds, 2)})


def _preview(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= SEARCH_PREVIEW_CHARS else line[: SEARCH_PREVIEW_CHARS - 1] + "…"
