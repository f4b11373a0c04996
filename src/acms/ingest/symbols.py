"""The project's symbol table (qualified name -> entity and class), kept beside the caches.

Linking a changed file resolves its calls, imports and bases against every symbol of the project.
Reading them from the store (``ingest/qualified-names.rq``) cost 1.5-3 s a standard library for
every run, whatever it changed; so a run leaves the table it linked against in ``cache/symbols.json``,
keyed by the graph state it made, and the next run takes it, drops the replaced files' entities and
adds the new ones. A table of another state is not trusted: the store is read again.

A name two entities share (two folders with a module ``util``) goes to the one with the greatest IRI,
whatever order rows come in: the one whose path sorts last, as a first index that writes files in
path order leaves it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode

from acms.paths import write_whole
from acms.sparql import catalog
from acms.store.protocol import GraphStore

__all__ = ["SymbolRows", "choose", "wins"]

FORMAT = "acms.symbols/1"
FILE = "symbols.json"


def wins(entity: str, kind: str, held: tuple[str, str] | None) -> bool:
    """Whether (entity, kind) takes a name ``held`` by (entity, kind): the greatest IRI, and for one
    entity of several classes the first class by name, so any order of rows gives one table."""
    return held is None or entity > held[0] or (entity == held[0] and kind < held[1])


def choose(rows: Iterable[tuple[str, str, str]]) -> dict[str, tuple[NamedNode, str]]:
    """Qualified name -> (entity, class local name) of (entity IRI, qualified name, class) rows."""
    best: dict[str, tuple[str, str]] = {}
    for entity, qn, kind in rows:
        if wins(entity, kind, best.get(qn)):
            best[qn] = (entity, kind)
    return {qn: (NamedNode(entity), kind) for qn, (entity, kind) in best.items()}


def entity_rows(rows: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """Entity IRI -> (qualified name, class) of (entity, qualified name, class) rows, by the same rule."""
    found: dict[str, tuple[str, str]] = {}
    for entity, qn, kind in rows:
        held = found.get(entity)
        if held is None or kind < held[1]:
            found[entity] = (qn, kind)
    return found


@dataclass
class SymbolRows:
    """Entity IRI -> (qualified name, class local name), for graph state ``run``."""

    run: str
    rows: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_store(cls, store: GraphStore, run: str) -> SymbolRows:
        rows = store.select(catalog.text("ingest/qualified-names"))
        return cls(run, entity_rows((r["entity"].value, str(r["qn"].value), r["kind"].value.rsplit("#", 1)[-1])
                                    for r in rows if isinstance(r["entity"], NamedNode)))

    @classmethod
    def load(cls, cache: Path, run: str) -> SymbolRows | None:
        """The table a run left for graph state ``run``; None when there is none, or it is of another."""
        try:
            data = json.loads((cache / FILE).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or data.get("run") != run or not run:
                return None
            return cls(run, {e: (str(qn), str(kind)) for e, qn, kind in data["rows"]})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, cache: Path) -> None:
        """Whole or not at all; where it cannot be written the next run reads the store instead."""
        rows = [[e, qn, kind] for e, (qn, kind) in sorted(self.rows.items())]
        write_whole(cache / FILE, json.dumps({"format": FORMAT, "run": self.run, "rows": rows}, separators=(",", ":")))

    def replaced(self, dropped: Iterable[str], added: Mapping[str, tuple[str, str]]) -> SymbolRows:
        """These rows without the ``dropped`` entities, with the ``added`` ones (a run's files)."""
        gone = set(dropped)
        rows = {e: v for e, v in self.rows.items() if e not in gone}
        rows.update(added)
        return SymbolRows(self.run, rows)

    def table(self) -> dict[str, tuple[NamedNode, str]]:
        return choose((e, qn, kind) for e, (qn, kind) in self.rows.items())
