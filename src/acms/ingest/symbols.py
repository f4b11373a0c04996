"""The project's symbol table (qualified name -> entity and class), kept beside the caches.

Linking a changed file resolves its calls, imports and bases against every symbol of the project.
Reading them from the store (``ingest/qualified-names.rq``) cost 1.5-3 s a standard library for
every run, whatever it changed; so a run leaves the table it linked against in ``cache/symbols.tsv``,
keyed by the graph state it made, and the next run takes it, drops the replaced files' entities and
adds the new ones. A table of another state is not trusted: the store is read again. The file is
fields joined by control characters no name holds (a standard library's 71k rows: written in ~25 ms
and read in ~60 ms, where JSON took ~100 ms and ~80 ms), and the table hands out IRIs as a lookup
asks for them (linking a few files looks up a few hundred of its names).

A name two entities share (two folders with a module ``util``) goes to the one with the greatest IRI,
whatever order rows come in: the one whose path sorts last, as a first index that writes files in
path order leaves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode

from acms.paths import write_whole
from acms.sparql import catalog
from acms.store.protocol import GraphStore

__all__ = ["SymbolRows", "SymbolTable", "choose", "wins"]

FORMAT = "acms.symbols/2"
FILE = "symbols.tsv"
FIELD, RECORD = "\x1f", "\x1e"  # ASCII unit and record separators


def wins(entity: str, kind: str, held: tuple[str, str] | None) -> bool:
    """Whether (entity, kind) takes a name ``held`` by (entity, kind): the greatest IRI, and for one
    entity of several classes the first class by name, so any order of rows gives one table."""
    return held is None or entity > held[0] or (entity == held[0] and kind < held[1])


def choose(rows: Iterable[tuple[str, str, str]]) -> SymbolTable:
    """Qualified name -> (entity, class local name) of (entity IRI, qualified name, class) rows."""
    best: dict[str, tuple[str, str]] = {}
    for entity, qn, kind in rows:
        if wins(entity, kind, best.get(qn)):
            best[qn] = (entity, kind)
    return SymbolTable(best)


class SymbolTable(Mapping[str, tuple[NamedNode, str]]):
    """Qualified name -> (entity, class local name), the entity made a term only when looked up."""

    def __init__(self, best: dict[str, tuple[str, str]]) -> None:
        self._best = best

    def __getitem__(self, qn: str) -> tuple[NamedNode, str]:
        entity, kind = self._best[qn]
        return NamedNode(entity), kind

    def __iter__(self) -> Iterator[str]:
        return iter(self._best)

    def __len__(self) -> int:
        return len(self._best)

    def kinds(self) -> dict[str, str]:
        """Qualified name -> class local name, without making any term."""
        return {qn: kind for qn, (_, kind) in self._best.items()}


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
            head, _, body = (cache / FILE).read_bytes().decode("utf-8").partition(RECORD)
            if head != f"{FORMAT}{FIELD}{run}" or not run:
                return None
            fields = body.replace(RECORD, FIELD).split(FIELD) if body else []
            if len(fields) % 3:
                return None
            return cls(run, dict(zip(fields[0::3], zip(fields[1::3], fields[2::3], strict=True), strict=True)))
        except (OSError, ValueError):
            return None

    def save(self, cache: Path) -> None:
        """Whole or not at all; where it cannot be written (or a name holds a separator) the next run
        reads the store instead."""
        body = RECORD.join(f"{e}{FIELD}{qn}{FIELD}{kind}" for e, (qn, kind) in self.rows.items())
        target = cache / FILE
        try:
            (cache / "symbols.json").unlink(missing_ok=True)  # the JSON file older versions left
            if body.count(FIELD) != 2 * len(self.rows) or body.count(RECORD) != max(len(self.rows) - 1, 0):
                target.unlink(missing_ok=True)
                return
            data = f"{FORMAT}{FIELD}{self.run}{RECORD}{body}".encode("utf-8")
        except (OSError, UnicodeEncodeError):
            return
        write_whole(target, data)

    def replaced(self, dropped: Iterable[str], added: Mapping[str, tuple[str, str]]) -> SymbolRows:
        """These rows without the ``dropped`` entities, with the ``added`` ones (a run's files)."""
        gone = set(dropped)
        rows = {e: v for e, v in self.rows.items() if e not in gone}
        rows.update(added)
        return SymbolRows(self.run, rows)

    def table(self) -> SymbolTable:
        return choose((e, qn, kind) for e, (qn, kind) in self.rows.items())
