"""The derived caches after a write outside an index run: a recorded decision.

``acms decision record`` adds a searchable fragment no file holds, and the caches' keys move with it
(``DerivedCaches.text_key``). Left there, the next reader would build the keyword, ranking and vector
caches again from the whole store (~8 s a standard library), and until some file changed the decision
would be found by no search. So the writer that recorded it updates them at once, as an index run that
changed no file does: the fragments no file holds are read again (``search/fragments-unplaced.rq``),
every other row is kept, and the new fragment gets its vector from the index's model.
"""

from __future__ import annotations

import contextlib

from acms.config import Settings
from acms.errors import ProviderError
from acms.retrieval.cache_delta import CacheDelta
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.embedding_store import active_model, embed_missing
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore

__all__ = ["before_write", "follow_write"]


def before_write(store: GraphStore, layout: IndexLayout) -> CacheDelta:
    """The caches' keys of the graph state before a write that changes no file."""
    caches = DerivedCaches(store, layout)
    return CacheDelta(caches.text_key, caches.state_key, frozenset())


def follow_write(store: GraphStore, layout: IndexLayout, settings: Settings, before: CacheDelta) -> None:
    """Bring the caches from ``before`` to the graph state now. A provider that fails leaves the new fragment
    without a vector, as an index run would (the next run embeds it)."""
    if settings.embed_on_index and active_model(store) is not None:  # a first model is fitted by an index run
        with contextlib.suppress(ProviderError):
            embed_missing(store, layout, settings, files=frozenset())
    caches = DerivedCaches(store, layout, delta=before)
    caches.warm()
    model = active_model(store)
    if model is not None:
        caches.vectors(model.model_id, keep=False)
