"""What an index run changed, for the derived caches to follow it rather than be built again
(``acms.retrieval.caches.DerivedCaches``, given as its ``delta``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # the writer's types only: a reader of the caches does not import the emitting stack
    from acms.ingest import emit

__all__ = ["CacheDelta", "Written"]


@dataclass(frozen=True)
class CacheDelta:
    """What an index run changed: the caches' keys before it, and the files whose fragments it replaced, wrote or removed."""

    text_key: str  # DerivedCaches.text_key of the graph state before the run
    state_key: str  # DerivedCaches.state_key before the run
    files: frozenset[str]  # file IRIs (strings), old or new; removed files included
    written: Written | None = None  # what the run wrote of those files, when it is all the store holds of them
    # of ``written``'s fragments, those with no vector now (the others' stayed as the run wrote them
    # again); None: not known
    unembedded: frozenset[str] | None = None


class Written(NamedTuple):
    """What an index run's writer said of the files it wrote (``emit.FileBatch``): their micro fragments'
    corpus rows (each fragment's one row), the fragments of several rows (the store gives those) and what
    their places are made of. The caches' update takes them instead of reading the files back (bound
    reads of a 300-file switch's rows and places cost ~3 s a standard library)."""

    rows: list[emit.SpillRow]
    others: list[str]
    places: list[emit.Places]
