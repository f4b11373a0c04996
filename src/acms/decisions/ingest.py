"""ADR files of an index run as decision quads: the one hook the pipeline calls.

An ADR's decision IRI is minted from its path, so re-indexing the file replaces the same node
(``uko:inFile`` makes the pipeline delete the old triples with the file's). ``Supersedes`` links are
kept only when they name an ADR file that is part of this batch or already a decision in the store:
a dangling link would fail the shapes and stop the whole index run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from posixpath import dirname

from pyoxigraph import NamedNode, Quad

from acms.decisions.adr import AdrRecord, adr_number, is_adr_path, parse_adr
from acms.decisions.emit import DecisionData, decision_quads
from acms.ingest.model import SourceFile
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import UKO, IriMinter


@dataclass
class AdrBatch:
    quads: list[Quad] = field(default_factory=list)
    entities: dict[str, NamedNode] = field(default_factory=dict)  # "adr:<path>" -> decision IRI


def adr_batch(
    store: GraphStore,
    minter: IriMinter,
    sources: Iterable[SourceFile],
    all_paths: set[str],
    graph: NamedNode,
    generated_at: str,
) -> AdrBatch:
    """Decisions for the ADR files among ``sources`` (the changed files of this run)."""
    records = [parse_adr(s.path, s.text) for s in sources if is_adr_path(s.path)]
    out = AdrBatch()
    if not records:
        return out
    adrs = {p for p in all_paths if is_adr_path(p)}
    targets = {r.path: _resolve(r, adrs) for r in records}
    in_batch = {r.path for r in records}
    outside = sorted({t for ts in targets.values() for t in ts} - in_batch)
    stored: set[str] = set()
    if outside:
        nodes = {minter.decision(p).value: p for p in outside}
        rows = store.select(catalog.text("validation/types-of"), {"node": [NamedNode(n) for n in nodes]})
        stored = {nodes[r["node"].value] for r in rows if r["type"] == UKO.Decision}
    for r in records:
        links = tuple(minter.decision(t) for t in targets[r.path] if t in in_batch or t in stored)
        data = DecisionData(
            ident=r.path, title=r.title, statement=r.statement, status=r.status, generated_at=generated_at,
            fragment_text=r.fragment_text, source_ref_path=r.path, supersedes=links,
            in_file=minter.file(r.path),
        )
        out.quads += decision_quads(minter, data, graph)
        out.entities[f"adr:{r.path}"] = minter.decision(r.path)
    return out


def _resolve(record: AdrRecord, adrs: set[str]) -> list[str]:
    """Paths of the ADRs a record supersedes: link targets that are ADR files, or numbers in its folder."""
    out = []
    folder = dirname(record.path)
    for target in record.supersedes:
        if target.startswith("#"):
            n = int(target[1:])
            out += sorted(p for p in adrs if dirname(p) == folder and adr_number(p) == n and p != record.path)
        elif target in adrs:
            out.append(target)
    return list(dict.fromkeys(out))
