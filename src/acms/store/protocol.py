"""The narrow store protocol every backend implements (the embedded Oxigraph store first).

Parameters are typed RDF terms, bound through ``VALUES`` (see ``acms.sparql.bind``); results are
plain rows of pyoxigraph terms. Everything above ``acms.store`` is typed against ``GraphStore`` and
never reaches the backend's own handle, which is what lets a remote SPARQL 1.1 endpoint implement
the same protocol later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from pyoxigraph import DefaultGraph, NamedNode, Quad

from acms.terms import Term

Bindings = Mapping[str, Sequence[Term] | Sequence[tuple[Term, ...]] | Term]  # "a b": rows of (a, b)
CustomFunctions = Mapping[NamedNode, Callable[..., Term | None]]
Row = dict[str, Term]


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

    def query_raw(self, query: str, bindings: Bindings | None = None, **kwargs: object) -> object:
        """Any query form, as pyoxigraph answers it (QuerySolutions / QueryBoolean / QueryTriples):
        for the SPARQL endpoint and ``acms sparql``, which serialize results in the client's format."""
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
