"""The narrow store protocol every backend implements (the embedded Oxigraph store first).

Parameters are typed RDF terms, bound through ``VALUES`` (see ``acms.sparql.bind``); results are
plain rows of pyoxigraph terms. Keeping the surface this small is what lets a remote SPARQL 1.1
endpoint implement the same protocol later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from pyoxigraph import NamedNode, Quad

from acms.terms import Term

Bindings = Mapping[str, Sequence[Term] | Term]
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

    def replace(self, deletes: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad]) -> None:
        """Run the deletes and insert ``quads`` as one all-or-nothing transaction."""
        ...

    def close(self) -> None: ...
