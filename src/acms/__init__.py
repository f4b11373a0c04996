"""acms: a project as a knowledge graph, assembled into token-exact context for LLM agents."""

from __future__ import annotations

__version__ = "0.1.0"

from acms.api import Index  # noqa: E402
from acms.service.assembly import AssemblyResult  # noqa: E402
from acms.errors import (  # noqa: E402
    AcmsError,
    ConfigError,
    QueryError,
    StoreError,
    StoreLocked,
    UsageError,
    ValidationFailed,
)
from acms.ingest.pipeline import IndexReport  # noqa: E402
from acms.retrieval.search import SearchResult  # noqa: E402

__all__ = [
    "AcmsError", "AssemblyResult", "ConfigError", "Index", "IndexReport", "QueryError", "SearchResult",
    "StoreError", "StoreLocked", "UsageError", "ValidationFailed", "__version__",
]
