"""The types an interface sees: what ``acms.Index`` and its operation groups return, and the values
they take. The CLI, ``acms serve`` and the MCP server import these from here (and the façade from
``acms.api``), never from the packages that define them: ``tests/test_architecture.py`` checks it.

Names are loaded on first use, so that importing this module costs nothing on the read path."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    # the façade's own
    "Mode": "acms.service.session",
    "Session": "acms.service.session",
    "Progress": "acms.service.progress",
    "NullProgress": "acms.service.progress",
    "AssemblyResult": "acms.service.assembly",
    "Description": "acms.service.describe",
    "Staleness": "acms.service.freshness",
    "stale_notice": "acms.service.freshness",
    "Follower": "acms.service.watch",
    "Refreshed": "acms.service.watch",
    "IndexReport": "acms.service.indexing",
    "Stats": "acms.service.inspect",
    "Validation": "acms.service.inspect",
    "Checked": "acms.service.ontologies",
    "TierCounts": "acms.service.tiers",
    "TierCheck": "acms.service.tiers",
    "PlanTree": "acms.service.plans",
    "EmbeddingStatus": "acms.service.embeddings",
    "ExportScope": "acms.service.export",
    "ExportReport": "acms.service.export",
    "EXPORT_FORMATS": "acms.service.export",
    "is_binary": "acms.service.export",
    "Answer": "acms.service.queries",
    "ANSWER_FORMATS": "acms.service.queries",
    # what the domain packages return through the façade
    "SearchResult": "acms.retrieval.search",
    "SearchMode": "acms.retrieval.modes",
    "EmbedReport": "acms.retrieval.embedding_store",
    "EntityHistory": "acms.temporal.history",
    "Rebalance": "acms.temporal.tiers",
    "DecisionInfo": "acms.decisions.model",
    "PlanInfo": "acms.decisions.model",
    "RECORDABLE": "acms.decisions.model",
    "Loaded": "acms.ontology.service",
    "Change": "acms.ontology.service",
    "TermDescription": "acms.ontology.service",
    "Level": "acms.ontology.check",
    "CheckReport": "acms.ontology.check",
    "QueryResult": "acms.sparql.results",
    "QuerySpec": "acms.sparql.catalog",
    "DefaultGraph": "acms.sparql.dataset",
    "StrategyRegistry": "acms.strategies.registry",
    "GraphStore": "acms.store.protocol",
}
_RENAMED = {"TermDescription": "Description", "EXPORT_FORMATS": "FORMATS", "ANSWER_FORMATS": "FORMATS",
            "SearchMode": "Mode"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'acms.results' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from acms.decisions.model import RECORDABLE, DecisionInfo, PlanInfo
    from acms.ontology.check import CheckReport, Level
    from acms.ontology.service import Change, Loaded
    from acms.ontology.service import Description as TermDescription
    from acms.retrieval.embedding_store import EmbedReport
    from acms.retrieval.modes import Mode as SearchMode
    from acms.retrieval.search import SearchResult
    from acms.service.assembly import AssemblyResult
    from acms.service.describe import Description
    from acms.service.embeddings import EmbeddingStatus
    from acms.service.export import FORMATS as EXPORT_FORMATS
    from acms.service.export import ExportReport, ExportScope, is_binary
    from acms.service.freshness import Staleness, stale_notice
    from acms.service.indexing import IndexReport
    from acms.service.inspect import Stats, Validation
    from acms.service.ontologies import Checked
    from acms.service.plans import PlanTree
    from acms.service.progress import NullProgress, Progress
    from acms.service.queries import FORMATS as ANSWER_FORMATS
    from acms.service.queries import Answer
    from acms.service.session import Mode, Session
    from acms.service.tiers import TierCheck, TierCounts
    from acms.service.watch import Follower, Refreshed
    from acms.sparql.catalog import QuerySpec
    from acms.sparql.dataset import DefaultGraph
    from acms.sparql.results import QueryResult
    from acms.store.protocol import GraphStore
    from acms.strategies.registry import StrategyRegistry
