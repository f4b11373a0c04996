"""A decision and its fragment as quads: the one place that knows a decision's graph layout.

Both sources use it: decisions recorded with ``acms decision record`` (no file; the fragment's
``sourceRef`` is ``decisions/D-3:1-N``) and ADR files found by the indexer (``uko:inFile`` the ADR,
so re-indexing the file replaces them).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from acms.ingest.emit import A, int_lit, lit, sha256, time_lit
from acms.vocab import PROV, UKO, IriMinter


@dataclass(frozen=True)
class DecisionData:
    ident: str  # D-3, or the ADR's path
    title: str
    statement: str
    status: str
    generated_at: str  # ISO 8601, UTC
    fragment_text: str  # what assembly puts into a context
    source_ref_path: str  # "decisions/D-3" or the ADR's path; the fragment's sourceRef is path:1-N
    plan: NamedNode | None = None
    about: tuple[NamedNode, ...] = ()
    supersedes: tuple[NamedNode, ...] = ()
    in_file: NamedNode | None = None


def decision_quads(minter: IriMinter, data: DecisionData, graph: NamedNode) -> list[Quad]:
    d = minter.decision(data.ident)
    q: list[Quad] = []

    def add(s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        q.append(Quad(s, p, o, graph))

    add(d, A, UKO.Decision)
    add(d, UKO.name, lit(data.ident))
    add(d, UKO.title, lit(data.title))
    add(d, UKO.statement, lit(data.statement))
    add(d, UKO.status, lit(data.status))
    add(d, PROV.generatedAtTime, time_lit(data.generated_at))
    if data.plan is not None:
        add(d, UKO.plan, data.plan)
    for entity in data.about:
        add(d, UKO.about, entity)
    for old in data.supersedes:
        add(d, UKO.supersedes, old)
    if data.in_file is not None:
        add(d, UKO.inFile, data.in_file)
    text = data.fragment_text
    digest = sha256(text)
    end = max(1, text.count("\n") + (0 if text.endswith("\n") or not text else 1))
    fr = minter.fragment(d, "micro", digest)
    add(d, UKO.hasFragment, fr)
    add(fr, A, UKO.Fragment)
    add(fr, UKO.text, lit(text))
    add(fr, UKO.startLine, int_lit(1))
    add(fr, UKO.endLine, int_lit(end))
    add(fr, UKO.lod, lit("micro"))
    add(fr, UKO.sourceRef, lit(f"{data.source_ref_path}:1-{end}"))
    if data.in_file is not None:
        add(fr, UKO.inFile, data.in_file)
    return list(dict.fromkeys(q))
