"""The entities revised within the tier policy's window, kept from one index run to the next.

The policy calls an entity hot when a re-index or a commit superseded one of its versions in the last
``hot_days`` days. ``rules/revised-since.rq`` finds them with a join over every superseded version in the
cold tier: ~70 ms of every one-file refresh of a standard library holding 2.9k versions, and more with
each save an agent makes, while such a run adds the versions of a few entities. So each run leaves a
ledger beside the caches (``cache/revisions.json``): the graph state it is of, the window, and per
entity the latest time one of its versions was superseded within it. A run that added only the versions
of the entities it archived itself (an incremental run of the files, no commits ingested) carries the
previous run's ledger forward with those; any other run, or a ledger of another graph state or window,
asks the query. Both give the same entities and times (``tests/temporal/test_revisions.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from acms.paths import write_whole
from acms.vocab import PROV

__all__ = ["RevisionLedger", "archived_times"]

FORMAT = "acms.revisions/1"


@dataclass(frozen=True)
class RevisionLedger:
    """Entity IRI -> the latest time (UTC ISO) one of its versions was superseded, for every entity with
    such a time at or after ``since``, as graph state ``run`` holds them."""

    run: str
    since: datetime
    last: dict[str, str]

    @staticmethod
    def path(cache: Path) -> Path:
        return cache / "revisions.json"

    @classmethod
    def load(cls, cache: Path) -> RevisionLedger | None:
        """None when there is none, or it cannot be read (the query answers instead)."""
        try:
            data = json.loads(cls.path(cache).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                return None
            return cls(str(data["run"]), datetime.fromisoformat(data["since"]),
                       {str(e): str(t) for e, t in data["last"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, cache: Path) -> None:
        """Whole or not at all; where it cannot be written the next run asks the query."""
        write_whole(self.path(cache), json.dumps({"format": FORMAT, "run": self.run, "since": self.since.isoformat(),
                                                  "last": self.last}, separators=(",", ":")))

    def carried(self, run: str, since: datetime, added: Mapping[str, str]) -> dict[str, str] | None:
        """The ledger of the state after a run from graph state ``run`` that superseded versions of
        ``added`` only (entity -> time), for a window from ``since``; None when this ledger is of another
        state, or reaches back less far (the clock went back, or the window grew)."""
        if self.run != run or since < self.since:
            return None
        out = {e: t for e, t in self.last.items() if _moment(t) >= since}
        for e, t in added.items():
            if _moment(t) >= since:
                out[e] = max((out.get(e, t), t), key=_moment)
        return out


def archived_times(quads: Iterable[Quad]) -> dict[str, str]:
    """Entity IRI -> the time its version among ``quads`` (what a run archives) was superseded."""
    of: dict[NamedNode, str] = {}
    at: dict[NamedNode, str] = {}
    for q in quads:
        if q.predicate == PROV.specializationOf and isinstance(q.object, NamedNode):
            of[q.subject] = q.object.value  # type: ignore[index]
        elif q.predicate == PROV.invalidatedAtTime:
            at[q.subject] = q.object.value  # type: ignore[index]
    out: dict[str, str] = {}
    for version, entity in of.items():
        t = at.get(version)
        if t is not None:
            out[entity] = max((out.get(entity, t), t), key=_moment)
    return out


def _moment(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
