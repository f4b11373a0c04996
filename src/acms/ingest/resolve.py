"""Every language's edges in one call: Python's resolver and the tree-sitter languages' resolver, each
over the extractions of its own languages, against one symbol table."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from acms.ingest.model import Edge, Extraction
from acms.ingest.python_resolver import resolve_edges as python_edges
from acms.ingest.ts_languages import languages
from acms.ingest.ts_resolver import resolve_tree_sitter_edges
from acms.ingest.walker import language_for

__all__ = ["links_by_name", "resolve_edges"]


def links_by_name(path: str) -> bool:
    """Whether the file's edges depend on the names other files define: those of a language a resolver
    reads. A document's, a query's or a configuration file's never do, however many moved names they
    mention (deleting a test folder of acms's own repository relinked 556 files, 174 of them such)."""
    language = language_for(path)
    return language == "python" or language in languages()


def resolve_edges(extractions: Mapping[str, Extraction], known: Mapping[str, str],
                  all_paths: Collection[str] = (),
                  python_context: Callable[[str], Extraction | None] | None = None) -> list[Edge]:
    """Imports, references, calls and inherits edges of ``extractions`` (path -> extraction) whose
    targets are in ``known`` (qualified name -> class local name); ``all_paths`` lists the project's
    files (module names and package folders of the non-Python languages depend on them).
    ``python_context``: the Python modules outside ``extractions`` that lookups pass through, when the
    run did not extract every file (:class:`acms.ingest.unchanged_modules.UnchangedModules`)."""
    edges = set(python_edges(extractions, known, python_context))
    edges |= set(resolve_tree_sitter_edges(extractions, known, all_paths))
    return sorted(edges, key=lambda e: (e.source, e.kind, e.target))
