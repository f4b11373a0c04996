"""One entity at a glance: what it is, where it is, who calls it, what it calls and defines, its history.

The answer an agent wants before it reads a symbol's body (``acms mcp``'s ``describe`` tool,
``Index.describe``). Every part is a saved query under ``queries/describe/`` plus the history of
:mod:`acms.temporal.history`; the entity is resolved like ``acms decision record --about``: an IRI,
``path::Qualified.name``, a qualified name, a path or a unique short name, with near matches named
when it is unknown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pyoxigraph import NamedNode

from acms.decisions.records import resolve_entity
from acms.errors import UsageError
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.temporal.history import entity_history, resolve

LIST_MAX = 25  # callers, callees and members shown per list; the count says how many there are


@dataclass
class Description:
    entity: str  # IRI
    name: str
    kind: str
    location: str | None  # path:start-end, None when the entity no longer exists
    tier: str | None
    signature: str = ""
    docstring: str = ""
    defined_in: str = ""
    callers: list[str] = field(default_factory=list)  # "name  path:start-end"
    callees: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # callers/callees/members before the cut
    history: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _listing(store: GraphStore, query: str, entity: NamedNode, with_kind: bool = False) -> list[str]:
    rows = store.select(catalog.text(f"describe/{query}"), {"e": entity})
    out = []
    for r in rows:
        kind = f" ({r['kind'].value.rsplit('#', 1)[-1]})" if with_kind else ""
        out.append(f"{r['name'].value}{kind}  {r['where'].value}")
    return out


def _gone(store: GraphStore, key: str) -> NamedNode | None:
    """The one entity only the history names ``key`` (an earlier version, none current), if there is one."""
    try:
        found = resolve(store, key)
    except UsageError:
        return None
    if len(found) != 1:
        return None
    hist = entity_history(store, found[0])
    return found[0] if hist.current_ref is None and any(e.what == "version" for e in hist.events) else None


def describe(store: GraphStore, key: str) -> Description:
    """The description of the one entity ``key`` names (``UsageError`` when none or several do). One that
    is no longer in the project but in its history (deleted or renamed since) is described as gone
    (``location`` None) with what its history holds, not refused: an agent asking after an edit learns
    that it went, and where to read its last text."""
    try:
        node, _ = resolve_entity(store, key)
    except UsageError:
        gone = _gone(store, key)
        if gone is None:
            raise
        node = gone
    hist = entity_history(store, node)
    rows = store.select(catalog.text("describe/details"), {"e": node})
    details = {k: v.value for k, v in rows[0].items()} if rows else {}
    lists = {
        "callers": _listing(store, "callers-of", node),
        "callees": _listing(store, "callees-of", node),
        "members": _listing(store, "members-of", node, with_kind=True),
    }
    commits = [e for e in hist.events if e.what == "commit" or e.commit]
    versions = [e for e in hist.events if e.what == "version"]
    last = hist.events[-1] if hist.events else None
    return Description(
        entity=node.value, name=hist.name, kind=hist.kind, location=hist.current_ref, tier=hist.tier,
        signature=details.get("signature", ""), docstring=details.get("docstring", ""),
        defined_in=details.get("parent", ""),
        **{name: items[:LIST_MAX] for name, items in lists.items()},
        counts={name: len(items) for name, items in lists.items()},
        history={
            "commits": len({e.commit for e in commits}), "earlier_versions": len(versions),
            "last_change": None if last is None else {
                "time": last.time, "commit": last.commit[:10], "message": last.message.strip().split("\n")[0]},
        },
    )
