"""The narrow store protocol every backend implements (the embedded Oxigraph store first).

Parameters are typed RDF terms, bound through ``VALUES`` (see ``acms.sparql.bind``); results are
plain rows of pyoxigraph terms, and ``query_raw`` answers any query form in the protocol's own
containers (``SelectResult``, ``AskResult``, ``GraphResult``, defined in :mod:`acms.sparql.results`
so that the query layer below the store reads them too), never in an engine's result objects.
Everything above ``acms.store`` is typed against ``GraphStore`` and never reaches the backend's own
handle, so the embedded store and a remote SPARQL 1.1 engine stand for each other.

What only some backends can do is a capability protocol of its own (``SupportsStreamingSelect``,
``SupportsBulkLoad``, ``SupportsCheckpoint``, ``SupportsGeneration``, ``SupportsOwnership``,
``SupportsFileRewrite``), asked
for with ``isinstance(store, SupportsX)``: code outside ``acms.store`` never names a concrete store,
so a new backend only implements what it can and every caller keeps its fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

from pyoxigraph import DefaultGraph, NamedNode, Quad

from acms.sparql.results import AskResult, GraphResult, RawResult, Row, SelectResult
from acms.terms import Term

__all__ = ["AskResult", "Bindings", "CustomFunctions", "GraphResult", "GraphStore", "RawResult", "Rewrite", "Row",
           "SelectResult", "Solution", "SupportsBulkLoad", "SupportsCheckpoint", "SupportsCompaction",
           "SupportsFileRewrite", "SupportsGeneration", "SupportsOwnership", "SupportsStreamingSelect",
           "SupportsThreads"]

Bindings = Mapping[str, Sequence[Term] | Sequence[tuple[Term, ...]] | Term]  # "a b": rows of (a, b)
CustomFunctions = Mapping[NamedNode, Callable[..., Term | None]]


class GraphStore(Protocol):
    def select(
        self,
        query: str,
        bindings: Bindings | None = None,
        functions: CustomFunctions | None = None,
    ) -> list[Row]: ...

    def ask(self, query: str, bindings: Bindings | None = None) -> bool: ...

    def construct(self, query: str, bindings: Bindings | None = None) -> list[Quad]: ...

    def update(self, update: str, bindings: Bindings | None = None) -> None: ...

    def load(self, quads: Iterable[Quad], *, bulk: bool = False) -> int: ...

    def atomic(self) -> AbstractContextManager[None]:
        """Everything written inside (several writes: an index run) lands whole or not at all, for
        readers too; an exception inside rolls it back."""
        ...

    def replace(self, deletes: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad]) -> None:
        """Run the deletes and insert ``quads`` as one all-or-nothing transaction."""
        ...

    def query_raw(self, query: str, bindings: Bindings | None = None, **kwargs: object) -> RawResult:
        """Any query form: a ``SelectResult`` (variables, rows read once as they are evaluated), an
        ``AskResult`` or a ``GraphResult`` (triples read once), with the logical graph names; for the
        SPARQL endpoint and ``acms sparql``, which serialize results in the client's format."""
        ...

    def quads(self, graph: NamedNode | DefaultGraph | None = None, predicate: NamedNode | None = None,
              obj: Term | None = None) -> Iterator[Quad]:
        """Every quad (of ``graph``, with ``predicate``, with object ``obj``, when given), for whole-store
        passes: validation, staging, export, the Graph Store Protocol."""
        ...

    def named_graphs(self) -> Iterator[NamedNode]: ...

    def has_graph(self, graph: NamedNode) -> bool: ...

    def drop_graph(self, graph: NamedNode) -> None:
        """Remove a named graph, its name included (one transaction)."""
        ...

    def count(self, graph: NamedNode | None = None) -> int: ...

    def prefixes(self) -> dict[str, str]:
        """The prefixes every query gets (passed to the parser, not pasted as text): the standard ones
        plus the loaded extensions'."""
        ...

    def ensure_ontology(self, extensions: Sequence[Quad] | None = None) -> bool: ...

    def size_bytes(self) -> int: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class SupportsOwnership(Protocol):
    """A store several project roots may share (a remote SPARQL engine): it refuses to write a project's
    graphs that another root wrote, unless ``claim`` was called (``acms index --force``)."""

    def claim(self) -> None: ...



class Solution(Protocol):
    """One row of a streamed SELECT: a variable's term by name, None when unbound (a pyoxigraph
    ``QuerySolution`` is one; no dict is built per row)."""

    def __getitem__(self, name: str, /) -> Term | None: ...


@runtime_checkable
class SupportsStreamingSelect(Protocol):
    """A store that answers a SELECT as a stream of solutions, evaluated as they are read: the caches'
    passes over every fragment hold no list of dicts of terms (RSS stayed at its peak after such lists
    were freed). Other stores answer ``select`` with a list."""

    def select_stream(self, query: str, bindings: Bindings | None = None) -> Iterable[Solution]: ...


@runtime_checkable
class SupportsBulkLoad(Protocol):
    """A store that parses N-Quads text itself (acms' own emission: a streamed index's groups, the
    embedding store), with no Python object per quad; all-or-nothing like ``load(bulk=True)``."""

    def load_nquads(self, data: bytes) -> None: ...


class Rewrite(NamedTuple):
    """What ``rewrite_files`` did: quads removed, inserted, and left in place (in the old and the new alike),
    and the fragments written again whose vectors stayed (IRIs)."""

    removed: int
    inserted: int
    kept: int
    vectors_kept: frozenset[str] = frozenset()


@runtime_checkable
class SupportsFileRewrite(Protocol):
    """A store that replaces files' triples by a diff: of what the files held, only what the new quads
    lack goes, and of the new quads only what is not there already comes in (a branch switch changes a
    few lines a file, so most of a file's triples stay). The same graph as ``replace`` with the files'
    deletes (``ingest/delete-file-contents.ru``, ``delete-files.ru``) between ``before`` and ``after``;
    None when it did that ``replace`` instead (outside an index run's bracket: one update is atomic).
    ``file_quads``: what those deletes match, read once for the run (``old``) when it needs them before."""

    def file_quads(self, files: Sequence[NamedNode]) -> list[Quad]: ...

    def rewrite_files(self, before: Sequence[tuple[str, Bindings | None]], files: Sequence[NamedNode],
                      after: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad],
                      old: Iterable[Quad] | None = None) -> Rewrite | None: ...


@runtime_checkable
class SupportsCheckpoint(Protocol):
    """An on-disk store whose index run (``atomic()``) keeps a checkpoint of the index as the run found
    it, and whose files can be handed to another process of the run.

    ``start_over`` (a re-index of every file): an empty index in place of this one, and a read-only
    store on the checkpoint to read the old one from; a failure afterwards restores the checkpoint like
    any failed run. ``lent`` (a first index's files written by a child process): the store lets go of
    its files for the block and opens them again after, the lock and the checkpoint staying with it;
    the child opens the path it yields with ``acms.store.open.open_lent``."""

    def can_start_over(self) -> bool: ...

    def start_over(self) -> GraphStore: ...

    def can_lend(self) -> bool: ...

    def lent(self) -> AbstractContextManager[Path]: ...


@runtime_checkable
class SupportsThreads(Protocol):
    """A store one thread may read and write while another reads it (the embedded store: pyoxigraph
    lets go of the interpreter while it evaluates, and each query reads a consistent state). An index
    run embeds the fragments it wrote beside the caches' update on such a store."""

    def beside_threads(self) -> bool: ...


@runtime_checkable
class SupportsCompaction(Protocol):
    """An on-disk store that can compact its files after a run that rewrote the whole index (a streamed
    re-index): the next reads and writes find fewer, ordered files."""

    def compact(self) -> None: ...


@runtime_checkable
class SupportsGeneration(Protocol):
    """A store other processes write without a lock this process sees (a remote SPARQL engine): its
    ``generation`` (read again by ``refresh``) changes with every write, so derived state is rebuilt."""

    generation: str | None

    def refresh(self) -> str | None: ...
