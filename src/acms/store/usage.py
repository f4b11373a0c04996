"""Usage statistics without the write lock: readers append to a log, the next writer folds it in.

An assembly records which entities it used (for the hot tier). Readers hold the index read-only, so
they append one JSON line per assembly to ``<index>/usage.log`` (``O_APPEND``: concurrent appends
do not interleave); every writer, when it opens the store, moves the log aside and applies it to the
meta graph with ``rules/record-uses.ru``: one update for the whole log, each entity counted once per
line that names it and stamped with the last such line's time, as one update per line did (those
cost ~20 ms each: a server's refresh after 70 answers spent 1.6 s folding them). A crash before the fold
ends leaves ``usage.log.folding``, which the next writer applies first (so a crash in the middle
of a fold may count a few uses twice: these are statistics for the hot tier, not a ledger).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pyoxigraph import Literal, NamedNode

from acms.sparql import catalog
from acms.vocab import XSD

__all__ = ["append", "fold"]

_LOG, _FOLDING = "usage.log", "usage.log.folding"


class _Updatable(Protocol):
    def update(self, update: str, bindings: object = None) -> None: ...


def append(root: Path, entities: Iterable[str], now: datetime | None = None) -> int:
    """Log one use of each entity; returns how many were logged."""
    iris = sorted({e for e in entities if e.startswith(("http://", "https://", "urn:"))})
    if not iris:
        return 0
    moment = (now or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
    line = (json.dumps({"t": moment, "e": iris}, ensure_ascii=False) + "\n").encode("utf-8")
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / _LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return len(iris)


def fold(store: _Updatable, root: Path) -> int:
    """Apply the logged uses to the meta graph (call with the write lock held); returns the uses applied."""
    log, folding = root / _LOG, root / _FOLDING
    if not folding.exists():
        try:
            os.replace(log, folding)
        except FileNotFoundError:
            return 0
    applied = 0
    try:
        text = folding.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return 0
    uses: dict[NamedNode, tuple[int, Literal]] = {}  # entity -> its uses, the last line's time (log order)
    for raw in text.splitlines():
        try:
            entry = json.loads(raw)
            moment = Literal(str(entry["t"]), datatype=XSD.dateTime)
            iris = [NamedNode(e) for e in entry["e"]]
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line from a reader killed mid-write
        for iri in iris:
            uses[iri] = (uses[iri][0] + 1 if iri in uses else 1, moment)
        applied += len(iris)
    if uses:
        store.update(catalog.text("rules/record-uses.ru"), {"e uses at": [
            (iri, Literal(str(n), datatype=XSD.integer), at) for iri, (n, at) in sorted(uses.items(), key=lambda kv: kv[0].value)]})
    folding.unlink(missing_ok=True)
    return applied
