"""Embedding providers: the contract, the default offline LSA model, optional real models."""

from __future__ import annotations

from acms.embeddings.base import EmbeddingProvider
from acms.embeddings.registry import PROVIDERS, make_provider

__all__ = ["PROVIDERS", "EmbeddingProvider", "make_provider"]
