"""An LSA refit made outside the writer's lock: the texts read under a reader's share, the model fitted
and every text folded by a worker, and only the landing a write.

Why: a refit is as long as a first embedding (a standard library: 26 s of ``acms index``), and a watcher
that refitted in place held the index for all of it, so a read that came meanwhile waited. Here the
watcher's write only drops the old vectors and loads the worker's (``embedding_store._land_ahead``, as a
first index lands its embedding made ahead).

The worker's vectors are those of the texts and tiers read: they land only when the graph is still in
that state (no run between, none of its texts rewritten, the tier policy's hot fragments the same);
otherwise the refit stays due and the watcher tries again after its next quiet spell. The worker writes
into a directory of its own in the cache (``refit-ahead``), which the next refit ahead clears if a
killed process left it.
"""

from __future__ import annotations

import shutil

from acms.config import Settings
from acms.retrieval.corpus_spill import SpillWriter
from acms.retrieval.embedding_ahead import EmbeddingAhead
from acms.retrieval.embedding_store import searchable_texts
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore

__all__ = ["RefitAhead", "hot_fragments"]

DIRECTORY = "refit-ahead"
_GROUP = 4096  # (fragment, text) pairs per spill record


def hot_fragments(store: GraphStore) -> set[str]:
    """The searchable fragments the hot tier holds (their vectors go into it)."""
    return {row["frag"].value for row in store.select(catalog.text("embeddings/hot-fragments"))}


class RefitAhead:
    """The worker refitting the model for one graph state; ``result()`` (via ``ahead``) waits for it,
    ``close()`` stops it and removes what it wrote."""

    def __init__(self, store: GraphStore, layout: IndexLayout, settings: Settings, state: str) -> None:
        """Under a reader's share of ``store`` in ``state`` (``freshness.last_run``): its texts spilled and
        the worker started."""
        self.state = state
        self.directory = layout.cache / DIRECTORY
        shutil.rmtree(self.directory, ignore_errors=True)  # what a killed process left
        self.directory.mkdir(parents=True)
        spill = SpillWriter(self.directory / "texts")
        group: list[tuple[str, str]] = []
        for frag, text, _ in searchable_texts(store):
            group.append((frag.value, text))
            if len(group) == _GROUP:
                spill.add([], group)
                group = []
        spill.add([], group)
        spill.close()
        hot = hot_fragments(store)  # the worker puts their vectors into the hot tier, the others' into warm
        self.hot = frozenset(hot)
        self.ahead = EmbeddingAhead(spill.path, self.directory / "embedding", settings.embedding_dims, hot)

    def lands_on(self, state: str, hot: set[str]) -> bool:
        """Whether the worker's vectors are those of a graph in ``state`` with these hot fragments."""
        return state == self.state and hot == self.hot

    def close(self) -> None:
        self.ahead.close()
        shutil.rmtree(self.directory, ignore_errors=True)
