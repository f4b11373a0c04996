"""The RDF term type acms passes around (pyoxigraph exports no common base class)."""

from __future__ import annotations

from typing import TypeAlias

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

Term: TypeAlias = NamedNode | BlankNode | Literal | Triple
