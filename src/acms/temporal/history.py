"""``acms history ENTITY``: every stored version of one entity and the commits that touched it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyoxigraph import Literal, NamedNode

from acms.errors import UsageError
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import code_iri_ends, names_end


@dataclass
class Event:
    """One line of an entity's timeline: a commit that touched it, or the end of a version."""

    time: str
    what: str  # "commit" | "version"
    ref: str = ""
    commit: str = ""
    author: str = ""
    message: str = ""
    version: str = ""
    text: str = ""


@dataclass
class EntityHistory:
    entity: str
    name: str
    kind: str
    current_ref: str | None  # None: the entity no longer exists
    tier: str | None
    events: list[Event] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"entity": self.entity, "name": self.name, "kind": self.kind, "current": self.current_ref,
                "tier": self.tier, "events": [e.__dict__ for e in self.events]}


def resolve(store: GraphStore, key: str) -> list[NamedNode]:
    if key.startswith(("http://", "https://", "urn:")):
        return [NamedNode(key)]
    if "::" in key:  # path::Qualified.name: by its short name, then the path and the name's tail
        path, qual = key.split("::", 1)
        tail = "." + qual
        found = [e for e in _lookup(store, qual.rsplit(".", 1)[-1])
                 if f"/{path}#" in e.value and (e.value.endswith(tail) or e.value.endswith("#" + qual))]
        if found:
            return found
    found = _lookup(store, key)
    if not found and names_end(key):  # Class.method: by its short name, then the end of the qualified name
        found = [e for e in _lookup(store, key.rsplit(".", 1)[1]) if code_iri_ends(e.value, key)]
    if not found:
        raise UsageError(f"no entity, file or earlier version is named {key!r} "
                         "(use a qualified name like pkg.mod.func or its end, Class.method; a path; or an IRI)")
    return found


def _lookup(store: GraphStore, key: str) -> list[NamedNode]:
    return [r["e"] for r in store.select(catalog.text("history/resolve-entity"), {"key": Literal(key)})]  # type: ignore[misc]


def _opt(row: dict[str, object], key: str) -> str:
    term = row.get(key)
    return term.value if term is not None else ""  # type: ignore[attr-defined]


def _when(stamp: str) -> datetime:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _short(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def entity_history(store: GraphStore, entity: NamedNode) -> EntityHistory:
    now = store.select(catalog.text("history/entity-current"), {"e": entity})
    versions = store.select(catalog.text("history/versions-of"), {"e": entity})
    name = now[0]["name"].value if now else (_opt(versions[0], "name") if versions else "") or _short(entity.value)
    kind = _short((now[0]["kind"] if now else versions[0]["kind"]).value) if (now or versions) else "?"
    out = EntityHistory(entity.value, name, kind, now[0]["ref"].value if now else None,
                        _short(now[0]["tier"].value) if now else None)
    events: list[Event] = []
    seen_commits = set()
    for r in versions:
        commit = _opt(r, "hash")
        seen_commits.add(commit)
        events.append(Event(
            time=r["ended"].value, what="version", ref=r["ref"].value, commit=commit, author=_opt(r, "author"),
            message=_opt(r, "message"), version=r["v"].value, text=_opt(r, "text"),
        ))
    for r in store.select(catalog.text("history/changes-touching"), {"e": entity}):
        if r["hash"].value in seen_commits:
            continue
        events.append(Event(time=r["time"].value, what="commit", commit=r["hash"].value,
                            author=r["author"].value, message=r["message"].value))
    out.events = sorted(events, key=lambda e: (_when(e.time), e.what))
    return out
