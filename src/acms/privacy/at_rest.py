"""Secrets at rest: the stored texts follow the index's secrets policy, history included.

Ingest scrubs what it reads (:mod:`acms.ingest.pipeline`), but an index written before scrubbing,
or with ``store_secrets`` on, holds raw text, and a re-index archives that text into the cold tier
rather than dropping it. So the writer records the policy the texts were written under
(``uko:secretsPolicy`` in the meta graph) and, when it changes to scrubbing, rewrites every stored
text and commit message once, in one update.
"""

from __future__ import annotations

from pyoxigraph import Literal, Quad

from acms.privacy import scrub
from acms.sparql import catalog
from acms.store.oxigraph import insert_data
from acms.store.protocol import GraphStore

__all__ = ["POLICY", "apply_policy"]

POLICY = "scrubbed/3"  # a better scrubber: every stored text (history too) is scrubbed again once
KEPT = "kept"


def _quad_text(quads: list[Quad]) -> str:
    return insert_data(quads).replace("INSERT DATA", "DELETE DATA", 1)


def apply_policy(store: GraphStore, keep_secrets: bool, *, fresh: bool = False) -> int:
    """Bring the stored texts under the current policy; returns how many texts were rewritten.
    ``fresh``: every stored text was written by this run (under the current policy): record it only."""
    wanted = KEPT if keep_secrets else POLICY
    rows = store.select(catalog.text("privacy/policy"))
    current = rows[0]["policy"].value if rows else None
    if current == wanted:
        return 0
    old: list[Quad] = []
    new: list[Quad] = []
    if not keep_secrets and not fresh:
        for r in store.select(catalog.text("privacy/stored-texts")):
            text = r["text"]
            if not isinstance(text, Literal):
                continue
            clean = scrub(text.value).text
            if clean != text.value:
                s, p, g = r["s"], r["p"], r["g"]
                old.append(Quad(s, p, text, g))  # type: ignore[arg-type]
                clean_lit = Literal(clean, language=text.language) if text.language else Literal(clean, datatype=text.datatype)
                new.append(Quad(s, p, clean_lit, g))  # type: ignore[arg-type]
    parts = ([_quad_text(old), insert_data(new)] if old else [])
    parts.append(catalog.text("privacy/set-policy.ru"))
    from acms.sparql.bind import bind

    parts[-1] = bind(parts[-1], {"policy": Literal(wanted)})
    store.update(" ;\n".join(parts))
    return len(new)

