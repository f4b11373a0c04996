"""The vectors of one index: their status, and a migration to another provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acms.retrieval.embedding_store import (
    EmbedReport,
    Phases,
    active_model,
    make_provider,
    migrate,
)
from acms.service.host import Host
from acms.sparql import catalog


@dataclass
class EmbeddingStatus:
    model: str | None
    dimensions: int | None
    created: str | None
    fragments: int
    embedded: int
    coverage: float
    stale: bool
    configured_provider: str
    configured_model: str | None
    mismatch: bool
    provider_problem: str | None

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class Embeddings:
    """``index.embeddings``."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def status(self) -> EmbeddingStatus:
        """Model, dimensions, coverage and staleness of the stored vectors; a provider that cannot be
        built is reported, not raised (this is a status)."""
        settings = self._host.settings
        with self._host.session.reading() as store:
            model = active_model(store)
            cov = store.select(catalog.text("embeddings/coverage"))[0]
        total, embedded = int(cov["total"].value), int(cov["embedded"].value)
        configured, problem = None, None
        try:
            configured = make_provider(settings.embedding_provider, settings, self._host.layout).model_id
        except Exception as exc:  # noqa: BLE001 - reported, not raised: this is a status
            problem = str(getattr(exc, "message", exc))
        return EmbeddingStatus(
            model=model.model_id if model else None, dimensions=model.dimensions if model else None,
            created=model.created if model else None, fragments=total, embedded=embedded,
            coverage=round(embedded / total, 4) if total else 0.0, stale=embedded < total,
            configured_provider=settings.embedding_provider, configured_model=configured,
            mismatch=bool(model and configured and configured != model.model_id), provider_problem=problem)

    def migrate(self, provider: str | None = None, phases: Phases | None = None) -> EmbedReport:
        """Recompute every vector with ``provider`` (default: the configured one), swapped in atomically."""
        settings = self._host.settings
        with self._host.session.writing() as store:
            return migrate(store, self._host.layout, settings, provider or settings.embedding_provider, phases)
