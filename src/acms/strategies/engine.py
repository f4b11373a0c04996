"""Run a strategy's phases against the store: each phase is SPARQL plus the fn: score tables.

``rank`` phase: the first stage (:mod:`acms.ranking.rank`: files by best window and path, then each
file's best fragments) fills ``fn:rankScore`` / ``fn:rankReason``; the phase's query describes the
chosen fragments, given as ``VALUES ?frag``.

``keyword`` / ``vector`` phases: numpy scores the corpus once (Searcher.score_tables), the best
candidates go into the phase's query as ``VALUES ?frag``, the query describes and ranks them.
``graph`` phase (the native path): focus entities (given, or linked from the task's terms), breadth-first
over the structural edges with ``neighbors-out.rq`` / ``neighbors-in.rq`` (one query per hop and
direction, the frontier as VALUES), node score = product of edge weights × 0.8 per hop; then depth:
the best nodes get their ``micro`` fragment, the rest their ``macro`` outline (``node-fragments.rq``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from acms.assembly.model import Candidate
from acms.retrieval.search import Mode, SearchResult, Searcher
from acms.sparql import catalog
from acms.sparql.catalog import parse_spec
from acms.sparql.functions import ScoreTables, functions, score_literal
from acms.store.parallel import run_all
from acms.strategies.descriptor import Phase, StrategyDescriptor
from acms.strategies.traits import edge_direction
from acms.terms import Term
from acms.tokens import estimate
from acms.vocab import XSD, code_iri_ends, names_end

if TYPE_CHECKING:  # the request's module brings jsonschema (~35 ms of a command that only writes)
    from acms.assembly.protocol import RenderRequest
    from acms.ranking.rank import Ranked

NAV = "breadth-depth-navigator"
HOP_DECAY = 0.8
# A task that asks one way ("who calls X") takes the other way's edges at this factor: callers come
# before callees instead of interleaving with them by IRI on a tie.
OTHER_DIRECTION = 0.75
# Reached nodes that tie on the walk (callers of the focus, one hop each) are ordered by how well their
# bodies match the task's words: a score × (1 + LEXICAL_TIE × BM25 / best BM25) never lifts a node
# over one a hop or an edge weight ahead of it, only over its equals (which came in IRI order).
LEXICAL_TIE = 0.05
MAX_FRONTIER = 60
MAX_NODES = 200
MAX_FOCUS = 12  # a common name ("run", "parse") names hundreds of entities; the first dozen seed the walk
LINKED_FOCUS = 3  # first-stage hits whose owners seed the walk when the request gives no focus
DEFAULT_BREADTH = 2
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")


PhaseEngine = Callable[[StrategyDescriptor, Phase, "RunContext"], list[Candidate]]


@dataclass
class RunContext:
    searcher: Searcher
    registry_folder: Callable[[str], StrategyDescriptor]
    engines: Mapping[str, PhaseEngine]
    request: RenderRequest
    deadline: float  # perf_counter() value
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    focus_entities: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    previous: list[Candidate] = field(default_factory=list)  # the earlier phases' candidates (seeds)

    @property
    def budget(self) -> int:
        return self.request.tokens_max


def _candidate(row: dict[str, Term], strategy: str, score: float, reason: str) -> Candidate:
    if "reason" in row and row["reason"] is not None:
        reason = row["reason"].value
    return Candidate(
        fragment=row["frag"].value, entity=row["entity"].value, name=row["name"].value,
        kind=row["kind"].value.rsplit("#", 1)[-1], lod=row["lod"].value, text=row["text"].value,
        path=row["path"].value, start_line=int(row["start"].value), end_line=int(row["end"].value),
        score=score, strategy=strategy, reason=reason, tier=row["tier"].value.rsplit("/", 1)[-1],
    )


def ranked_phase(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    mode = Mode.KEYWORD if phase.engine == "keyword" else Mode.VECTOR
    k = ctx.request.filters.k or 50
    probe = SearchResult(hits=[])
    tables = ctx.searcher.score_tables(ctx.request.intent, mode, k, probe)
    ctx.warnings.extend(probe.warnings)
    scores = tables.keyword if mode is Mode.KEYWORD else tables.vector
    if not scores:
        if mode is Mode.KEYWORD:
            ctx.warnings.append(f"{desc.name}: no keyword match for the task")
        return []
    bindings: dict[str, object] = {"frag fragScore": [(NamedNode(f), score_literal(scores[f])) for f in sorted(scores)]}
    if mode is Mode.VECTOR:
        bindings["threshold"] = Literal(str(desc.min_similarity), datatype=XSD.double)
    rows = ctx.searcher.store.select(desc.query_text(phase), bindings, functions(tables))  # type: ignore[arg-type]
    label = "bm25" if mode is Mode.KEYWORD else "cosine"
    return [_candidate(r, desc.name, float(r["score"].value), f"{label} {float(r['score'].value):.2f}") for r in rows]


def _first_stage(ctx: RunContext) -> list[Ranked]:
    """The request's first-stage ranking (:mod:`acms.ranking.rank`), honouring ``tests_and_docs``."""
    from acms.ranking.rank import rank

    caches = ctx.searcher.caches
    return rank(ctx.request.intent, caches.keyword(), caches.ranking(),
                equal_roles=ctx.request.filters.tests_and_docs == "equal")


def rank_phase(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    """The first stage picks and scores fragments; the phase's query describes each on its own (it is
    asked for two halves of them at once, the embedded store's largest read of a request), best first."""
    ranked = _first_stage(ctx)
    if ctx.request.filters.k:
        ranked = ranked[: ctx.request.filters.k]
    if not ranked:
        ctx.warnings.append(f"{desc.name}: no keyword match for the task")
        return []
    tables = ScoreTables(rank={r.fragment: r.score for r in ranked},
                         rank_reason={r.fragment: r.reason for r in ranked})
    store, query, half = ctx.searcher.store, desc.query_text(phase), (len(ranked) + 1) // 2
    parts = run_all(store, [partial(store.select, query, {"frag fragScore fragReason": [
        (NamedNode(r.fragment), score_literal(r.score), Literal(r.reason)) for r in part]}, functions(tables))
        for part in (ranked[:half], ranked[half:]) if part])
    found = [_candidate(r, desc.name, float(r["score"].value), "") for rows in parts for r in rows]
    return sorted(found, key=lambda c: (-c.score, c.fragment))


def _query(name: str, ctx: RunContext, desc: StrategyDescriptor | None = None) -> str:
    """A graph query by file name: the strategy's own when its folder has one (a user strategy may
    replace any of them), else the built-in navigator's."""
    owner = desc if desc is not None and desc.has_query(name) else ctx.registry_folder(NAV)
    return owner.query_text(Phase("graph", 1.0, name))


def _identifier_like(word: str) -> bool:
    """A word written as code (``parse_header``, ``HTTPClient``, ``pkg.mod``), not as English."""
    return "_" in word or "." in word or any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)


def resolve_focus(ctx: RunContext, *, ranked: bool = True, desc: StrategyDescriptor | None = None) -> list[str]:
    """Focus strings (IRIs, paths, ``path::Qualified.name``, names) to entity IRIs.

    Without given focus, the walk is seeded by the entities the task names in code form
    (``parse_header``, ``HTTPClient``; plain English words such as "budget" or "acms" no longer link
    to whatever entity happens to have that name) and then by the owners of the first stage's best
    fragments (:mod:`acms.ranking.rank`). ``ranked=False`` (history and plan queries, which look up
    what the task names, removed symbols included) links every word that names an entity exactly.
    """
    store = ctx.searcher.store
    out: list[str] = []
    keys: list[str] = []
    scoped: list[tuple[str, str]] = []
    for f in (s.strip() for s in ctx.request.focus):
        if f.startswith("<") and f.endswith(">"):
            out.append(f[1:-1])
        elif f.startswith(("http://", "https://", "urn:")):
            out.append(f)
        elif "::" in f:
            scoped.append(tuple(f.split("::", 1)))  # type: ignore[arg-type]
        else:
            keys.append(f)
    if not ctx.request.focus:
        keys = sorted({w for w in _IDENT.findall(ctx.request.intent) if _identifier_like(w) or not ranked})
    if keys:
        query = _query("resolve-focus.rq", ctx, desc)
        named = [r["entity"].value for r in store.select(query, {"key": [Literal(k) for k in keys]})]
        out += named
        ends = [k for k in keys if names_end(k) and not any(code_iri_ends(e, k) for e in named)] \
            if ctx.request.focus else []
        if ends:  # a given focus that ends a qualified name (Class.method): by its last part, then its end
            rows = store.select(query, {"key": [Literal(k.rsplit(".", 1)[1]) for k in ends]})
            out += [r["entity"].value for r in rows if any(code_iri_ends(r["entity"].value, k) for k in ends)]
    for path, qual in scoped:
        found = store.select(catalog.text("index/entities-in-file"), {"path": Literal(path)})
        out += [r["entity"].value for r in found if r["qn"].value == qual or r["qn"].value.endswith("." + qual)]
    if ctx.request.focus and not out:
        ctx.warnings.append(f"no entity matches focus {', '.join(ctx.request.focus)}")
    if not ctx.request.focus and ranked:
        best = [r.fragment for r in _first_stage(ctx)[:LINKED_FOCUS]]
        if best:
            order = {f: i for i, f in enumerate(best)}
            rows = store.select(_query("owners-of-fragments.rq", ctx, desc), {"frag": [NamedNode(f) for f in best]})
            out += [r["entity"].value for r in sorted(rows, key=lambda r: order[r["frag"].value])]
    return list(dict.fromkeys(out))[:MAX_FOCUS]


def graph_phase(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    """Breadth then depth with the strategy's own graph queries (``phase.query`` names the one that
    describes the reached nodes, default ``node-fragments.rq``), the navigator's where it has none."""
    store = ctx.searcher.store
    focus = ctx.focus_entities or resolve_focus(ctx, desc=desc)
    ctx.focus_entities = focus
    if not focus:
        ctx.warnings.append(f"{desc.name}: no focus entity found for the task")
        return []
    breadth = next(b for b in (ctx.request.breadth, phase.breadth, DEFAULT_BREADTH) if b is not None)
    score: dict[str, float] = {f: 1.0 for f in focus}
    why: dict[str, str] = {f: "focus" for f in focus}
    frontier = list(focus)
    favoured = edge_direction(ctx.request.intent)  # "in", "out" or None
    for hop in range(1, breadth + 1):
        if time.perf_counter() > ctx.deadline:
            ctx.cut.append(f"{desc.name}: breadth cut at hop {hop}")
            break
        nodes = [NamedNode(n) for n in frontier]
        reached: dict[str, float] = {}
        for way in ("out", "in"):
            lean = OTHER_DIRECTION if favoured not in (None, way) else 1.0
            for r in store.select(_query(f"neighbors-{way}.rq", ctx, desc), {"node": nodes}):
                target = r["entity"]
                if not isinstance(target, NamedNode):
                    continue
                s = score[r["node"].value] * float(r["weight"].value) * HOP_DECAY * lean
                t = target.value
                if s > max(score.get(t, 0.0), reached.get(t, 0.0)):
                    reached[t] = s
                    edge = r["edge"].value.rsplit("#", 1)[-1]
                    src = _short(r["node"].value)
                    why[t] = f"{edge} {src}" if way == "in" else f"reached from {src} by {edge}"
                    why[t] += f" (hop {hop})"
        ranked = sorted(reached.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_FRONTIER]
        score.update(ranked)
        frontier = [n for n, _ in ranked]
        if not frontier or len(score) >= MAX_NODES:
            break
    nodes = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_NODES]
    rows = store.select(_query(phase.query or "node-fragments.rq", ctx, desc), {"entity": [NamedNode(n) for n, _ in nodes]})
    by_entity: dict[str, dict[str, dict[str, Term]]] = {}
    for r in rows:
        by_entity.setdefault(r["entity"].value, {}).setdefault(r["lod"].value, r)
    lexical = _lexical(ctx, [r["frag"].value for f in by_entity.values() for lod, r in f.items() if lod == "micro"])
    nodes = sorted(((n, s * (1 + LEXICAL_TIE * lexical.get(_micro(by_entity, n), 0.0))) for n, s in nodes),
                   key=lambda kv: (-kv[1], kv[0]))
    # Depth: full bodies for the best nodes while they fit in about 60 % of the phase budget.
    body_budget = 0.6 * ctx.budget * phase.share
    used = 0.0
    picks: list[tuple[str, float, dict[str, Term]]] = []
    unstored: list[tuple[str, dict[str, Term]]] = []  # shown as outlines that are not stored: (node, its body)
    for rank, (node, s) in enumerate(nodes):
        frags = by_entity.get(node, {})
        micro, macro = frags.get("micro"), frags.get("macro")
        cost = estimate(micro["text"].value) if micro else 0
        if micro is not None and (rank < 3 or used + cost <= body_budget):
            used += cost
            picks.append((node, s, micro))
            continue
        pick = macro or micro
        if pick is None:
            continue
        picks.append((node, s, pick))
        if macro is None:  # its body stands in unless an outline can be made
            unstored.append((node, pick))
    outlines = _leaf_outlines(ctx, desc, unstored)
    return [_candidate(outlines.get(node, pick), desc.name, s, why.get(node, "")) for node, s, pick in picks]


def _leaf_outlines(ctx: RunContext, desc: StrategyDescriptor, wanted: list[tuple[str, dict[str, Term]]]
                   ) -> dict[str, dict[str, Term]]:
    """Outline rows, made like ``node-fragments.rq``'s, for the functions and methods shown as outlines that
    have no stored one (``acms.ingest.fragments.stores_outline``): from their signature, doc string and
    decorators (``node-outlines.rq``), with the IRI ingest would have given the fragment."""
    from acms.ingest.emit import sha256
    from acms.ingest.fragments import LEAF_KINDS, leaf_outline
    from acms.vocab import IriMinter

    kinds = {kind.value for kind in LEAF_KINDS}
    leaves = {node: row for node, row in wanted if row["kind"].value.rsplit("#", 1)[-1] in kinds}
    if not leaves:
        return {}
    out: dict[str, dict[str, Term]] = {}
    for r in ctx.searcher.store.select(_query("node-outlines.rq", ctx, desc), {"entity": [NamedNode(n) for n in sorted(leaves)]}):
        node = r["entity"].value
        micro = leaves[node]
        decorators = r["decorators"].value.split("\n") if "decorators" in r and r["decorators"].value else []
        text = leaf_outline(r["signature"].value if "signature" in r else "", decorators,
                            r["doc"].value if "doc" in r else None)
        frag = IriMinter.of_iri(node).fragment(NamedNode(node), "macro", sha256(text))
        out[node] = {**micro, "frag": frag, "lod": Literal("macro"), "text": Literal(text)}
    return out


def _micro(by_entity: dict[str, dict[str, dict[str, Term]]], node: str) -> str:
    row = by_entity.get(node, {}).get("micro")
    return row["frag"].value if row is not None else ""


def _lexical(ctx: RunContext, fragments: list[str]) -> dict[str, float]:
    """BM25 of the task's words for each of ``fragments``, divided by the best of them (0 without a match)."""
    from acms.ranking.task import code_terms

    if not fragments:
        return {}
    keyword = ctx.searcher.caches.keyword()
    wanted = set(fragments)
    scores = {f: s for f, s in keyword.top(code_terms(ctx.request.intent), 5 * len(wanted) + 200) if f in wanted}
    best = max(scores.values(), default=0.0)
    return {f: s / best for f, s in scores.items()} if best > 0 else {}


def resolve_plan(ctx: RunContext) -> NamedNode | None:
    """The request's plan by IRI or name; an unknown plan is a warning (the fallback query runs)."""
    plan = ctx.request.plan
    if not plan:
        return None
    if plan.startswith(("http://", "https://", "urn:")):
        return NamedNode(plan)
    rows = ctx.searcher.store.select(_query("resolve-plan.rq", ctx), {"name": Literal(plan)})
    if not rows:
        ctx.warnings.append(f"no plan named {plan!r}")
        return None
    return rows[0]["plan"]  # type: ignore[return-value]


def query_phase(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    """Pure SPARQL: the query gets the focus entities and the plan, and returns scored candidates."""
    queries = [desc.query_text(phase)] + ([desc.query_text(phase, phase.fallback)] if phase.fallback else [])
    declared = [{name for name, _ in parse_spec(desc.name, q).params} for q in queries]
    focus = ctx.focus_entities
    if not focus and (ctx.request.focus or any("focus" in d for d in declared)):
        focus = resolve_focus(ctx, ranked=False) or _historic_focus(ctx)
    ctx.focus_entities = focus
    bindings: dict[str, object] = {"quality": Literal(str(desc.quality), datatype=XSD.double)}
    if focus:
        bindings["focus"] = [NamedNode(f) for f in focus]
    plan = resolve_plan(ctx)
    if plan is not None:
        bindings["plan"] = plan
    rows: list[dict[str, Term]] = []
    for i, (query, names) in enumerate(zip(queries, declared, strict=True)):
        rows = ctx.searcher.store.select(query, {k: v for k, v in bindings.items() if k in names})  # type: ignore[arg-type]
        if rows:
            if i:
                ctx.warnings.append(f"{desc.name}: nothing specific found; fell back to {phase.fallback}")
            break
    return [_candidate(r, desc.name, float(r["score"].value), "") for r in rows]


def focus_candidates(ctx: RunContext, desc: StrategyDescriptor | None = None) -> list[Candidate]:
    """The request's focus entities as candidates: each one's body (``micro``), else its outline."""
    focus = ctx.focus_entities or resolve_focus(ctx, ranked=False, desc=desc)
    ctx.focus_entities = focus
    return entity_candidates(ctx, focus, "focus", desc)


def entity_candidates(ctx: RunContext, entities: list[str], reason: str,
                      desc: StrategyDescriptor | None = None) -> list[Candidate]:
    """Entities as candidates, in the given order: each one's body (``micro``), else its outline."""
    if not entities:
        return []
    rows = ctx.searcher.store.select(_query("node-fragments.rq", ctx, desc), {"entity": [NamedNode(n) for n in entities]})
    best: dict[str, dict[str, Term]] = {}
    for r in rows:
        e = r["entity"].value
        if e not in best or (best[e]["lod"].value != "micro" and r["lod"].value == "micro"):
            best[e] = r
    order = {f: i for i, f in enumerate(entities)}
    return [_candidate(best[e], desc.name if desc else NAV, 1.0, reason)
            for e in sorted(best, key=lambda e: order[e])]


def _historic_focus(ctx: RunContext) -> list[str]:
    """Entities that exist only in history (a removed function) named by the task's words."""
    from acms.errors import UsageError
    from acms.temporal.history import resolve

    out: list[str] = []
    for word in sorted(set(_IDENT.findall(ctx.request.intent))):
        try:
            out += [e.value for e in resolve(ctx.searcher.store, word)]
        except UsageError:
            continue
    return list(dict.fromkeys(out))[:MAX_FOCUS]


def _short(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


BUILTIN_ENGINES: tuple[tuple[str, PhaseEngine], ...] = (
    ("rank", rank_phase),
    ("keyword", ranked_phase),
    ("vector", ranked_phase),
    ("graph", graph_phase),
    ("query", query_phase),
    ("expand", lambda desc, phase, ctx: _expand(desc, phase, ctx)),
)
# Engines that refine what the earlier phases proposed (they get them as ``ctx.previous``) rather than
# add to them: their output replaces the earlier candidates.
REFINING = {"expand"}


def _expand(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    from acms.strategies.expand import expand_phase

    return expand_phase(desc, phase, ctx)


def run_strategy(desc: StrategyDescriptor, ctx: RunContext) -> list[Candidate]:
    """All phases; with several, each phase fills its share of the budget first, then the rest spills."""
    selected: list[Candidate] = []
    spill: list[Candidate] = []
    for i, phase in enumerate(desc.phases):
        if time.perf_counter() > ctx.deadline:
            ctx.cut.append(f"{desc.name}: phase {phase.engine} skipped (deadline)")
            continue
        t = time.perf_counter()
        ctx.previous = selected + spill
        cands = ctx.engines[phase.engine](desc, phase, ctx)
        ctx.timings_ms[f"{desc.name}.{phase.engine}{i if len(desc.phases) > 1 else ''}"] = round(
            1000 * (time.perf_counter() - t), 2)
        if phase.engine in REFINING:
            selected, spill = [], cands
            continue
        if len(desc.phases) == 1:
            return cands
        quota, used = phase.share * ctx.budget, 0.0
        for c in sorted(cands, key=lambda c: (-c.score, c.fragment)):
            cost = estimate(c.text, 30)
            if used + cost <= quota:
                selected.append(c)
                used += cost
            else:
                spill.append(c)
    # Phase scores are on different scales; the quota selection already balanced them, so the packer
    # sees the selected ones first (boosted) and the spill after.
    return [replace(c, score=1.0 + c.score) for c in selected] + spill
