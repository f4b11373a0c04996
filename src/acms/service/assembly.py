"""The assembly orchestration: request → strategy → filters → levels of detail → privacy → pack,
then usage recorded for the hot tier.

The budget covers the whole rendered document (markdown, text) or the fragments' text (a JSON reply,
``sum(cost_tokens)``, see :mod:`acms.assembly.protocol`); the packer proves it. ``budgets.time_ms`` is a deadline: phases that would start after it are
cut, what is ready is packed, and the cut is reported in the warnings.

Keeps one ``Searcher`` (and its derived caches) per session generation, so repeated requests reuse
the caches and a write (this process's or another's) rebuilds them.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from acms.assembly.budget import pack
from acms.assembly.copies import collapse_search
from acms.assembly.filters import apply_filters, apply_lod, excerpts, trim
from acms.assembly.model import Assembled, Candidate
from acms.assembly.privacy import protect
from acms.assembly.notes import notes_for
from acms.assembly.protocol import RenderRequest, ReplyMetrics, build_reply, ranking_note, ranking_text, reply_for
from acms.assembly.render import Format
from acms.config import Settings
from acms.errors import BudgetTooSmall, StoreError
from acms.text_checks import clip
from acms.retrieval.embedding_store import active_model
from acms.retrieval.search import Mode as SearchMode
from acms.retrieval.search import SearchResult, Searcher
from acms.service.freshness import stale_notice
from acms.service.session import Session
from acms.store import usage
from acms.store.protocol import GraphStore
from acms.strategies.engine import RunContext, run_strategy
from acms.strategies.registry import StrategyRegistry
from acms.strategies.traits import request_traits
from acms.temporal.tiers import record_use

__all__ = ["Assembler", "AssemblyResult", "assemble", "capabilities"]

SHORT_NOTICE_CHARS = 160  # the first notice line, cut to this when the whole notice leaves no room


@dataclass
class AssemblyResult:
    assembled: Assembled
    reply: dict
    strategy: str
    reason: str
    stale: tuple[str, ...] = ()  # indexed files changed on disk, named in the output (``refresh = warn``)


def capabilities(searcher: Searcher) -> set[str]:
    caps = {"keyword", "graph"}
    if active_model(searcher.store) is not None:
        caps.add("vectors")
    return caps


def assemble(request: RenderRequest, searcher: Searcher, registry: StrategyRegistry,
             output: str | None = None, stale: Sequence[str] = ()) -> AssemblyResult:
    """``output``: "json" for a render_context_reply.v0, else the request's text/markdown format.
    ``stale``: indexed files changed on disk (the ``warn`` refresh mode), named in the output."""
    start = time.perf_counter()
    deadline = start + request.time_ms / 1000.0
    ranked = replace(request, intent=ranking_text(request.intent))  # a long task: ranking reads a bounded part
    choice = registry.choose(request.strategy, request_traits(ranked), capabilities(searcher))
    ctx = RunContext(searcher=searcher, registry_folder=registry.get, engines=registry.engines, request=ranked,
                     deadline=deadline)
    found = run_strategy(choice.strategy, ctx)
    cands = trim(excerpts(apply_lod(apply_filters(found, ranked, searcher), ranked), ranked), request.tokens_max)
    if time.perf_counter() > deadline:
        ctx.cut.append("deadline passed before packing; packing what is ready")
    notes = notes_for(request, searcher.store, ctx.warnings, len(found), empty=not cands)
    long_task = [note] if (note := ranking_note(request.intent)) else []
    planner_ms = int(round(1000 * (time.perf_counter() - start)))
    metrics = ReplyMetrics(
        planner_ms=planner_ms, strategy=choice.strategy.name, strategy_reason=choice.reason,
        timings_ms=dict(ctx.timings_ms),
        warnings=tuple(notes + ([stale_notice(stale)] if stale else []) + long_task + ctx.warnings
                       + [f"cut: {c}" for c in ctx.cut]),
        entities_wanted=tuple(ctx.focus_entities) or None,
    )
    if output == "json":
        assembled = reply_for(request, cands, metrics)
        reply = assembled.reply or build_reply(request, assembled, metrics)
    else:
        protected = protect(cands, request.privacy_mode)
        fmt = Format(output) if output else request.format
        notice = "\n".join(notes + ([stale_notice(stale)] if stale else []))
        assembled = _pack_noticed(protected.candidates, request, fmt, notice)
        reply = build_reply(request, assembled, replace(metrics, warnings=(*metrics.warnings, *protected.warnings())))
    return AssemblyResult(assembled, reply, choice.strategy.name, choice.reason, tuple(stale))


def _pack_noticed(cands: Sequence[Candidate], request: RenderRequest, fmt: Format, notice: str) -> Assembled:
    """The document with its notice lines under the title, or, where they would not leave room for the
    context in the budget, with the first of them cut short, then with none (the reply's warnings
    still carry them all)."""
    lines = notice.splitlines()
    for shown in (notice, clip(lines[0], SHORT_NOTICE_CHARS) if lines else "", ""):
        try:
            return pack(cands, request.tokens_max, fmt, request.intent, notice=shown)
        except BudgetTooSmall:
            if not shown:
                raise
    raise AssertionError("unreachable")


class Assembler:
    def __init__(self, session: Session, settings: Settings, registry: StrategyRegistry) -> None:
        self.session, self.settings, self.registry = session, settings, registry
        self._searchers: dict[object, Searcher] = {}

    def searcher(self, store: GraphStore) -> Searcher:
        """The Searcher of the current generation (call inside ``session.reading()``)."""
        key = self.session.generation()
        if key not in self._searchers:
            self._searchers.clear()
            self._searchers[key] = Searcher(store, self.session.layout, self.settings)
        return self._searchers[key]

    def search(self, text: str, mode: SearchMode = SearchMode.HYBRID, k: int = 10) -> SearchResult:
        with self.session.reading() as store:
            return collapse_search(self.searcher(store).search(text, mode, k), store)  # one copy of the code

    def render(self, request: RenderRequest, output: str | None = None, stale: Sequence[str] = ()) -> AssemblyResult:
        with self.session.reading() as store:
            result = assemble(request, self.searcher(store), self.registry, output=output, stale=stale)
            self._record_use(store, result.assembled)
        return result

    def _record_use(self, store: GraphStore, assembled: Assembled) -> None:
        """Usage statistics for the hot tier: a reader logs them (folded in by the next writer, see
        :mod:`acms.store.usage`), the writer records them directly. Used are the entities whose code
        the context shows, whole or in part; an outline, a signature or a one-line reference (``macro``)
        is what surrounds them. Counting those too made the hot set churn: a JSON render of 4,000
        tokens holds ~170 such items, and each refresh after one moved ~100 entities between tiers."""
        if not self.settings.record_use or not assembled.items:
            return
        entities = [i.candidate.entity for i in assembled.items
                    if i.candidate.tier != "cold" and i.candidate.lod != "macro"]
        if self.session.writable:
            record_use(store, entities)
            return
        root = self.session.layout.root
        try:
            usage.append(root, entities)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                return  # a read-only index (a shared mount): it is read, its use is not recorded
            raise StoreError(f"cannot log usage in {root}: {exc} (set record_use = false to stop recording)") from None
