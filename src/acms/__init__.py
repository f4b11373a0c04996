"""acms: a project as a knowledge graph, assembled into token-exact context for LLM agents.

The public names are imported on first use (PEP 562): ``import acms`` stays cheap, so the CLI and the
server's worker processes start without loading the whole engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {
    "Index": "acms.api",
    "AssemblyResult": "acms.service.assembly",
    "AcmsError": "acms.errors",
    "ConfigError": "acms.errors",
    "QueryError": "acms.errors",
    "StoreError": "acms.errors",
    "StoreLocked": "acms.errors",
    "UsageError": "acms.errors",
    "ValidationFailed": "acms.errors",
    "IndexReport": "acms.service.indexing",
    "SearchResult": "acms.retrieval.search",
    "QueryResult": "acms.sparql.results",
    "Description": "acms.service.describe",
    "EntityHistory": "acms.temporal.history",
}

__all__ = sorted(_WHERE) + ["__version__"]

if TYPE_CHECKING:
    from acms.api import Index
    from acms.service.assembly import AssemblyResult
    from acms.errors import AcmsError, ConfigError, QueryError, StoreError, StoreLocked, UsageError, ValidationFailed
    from acms.service.indexing import IndexReport
    from acms.retrieval.search import SearchResult
    from acms.sparql.results import QueryResult
    from acms.service.describe import Description
    from acms.temporal.history import EntityHistory


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'acms' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({n for n in globals() if n.startswith("_")} | set(_WHERE))
