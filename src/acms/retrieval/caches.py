"""Derived caches (keyword postings, the ranking index, the vector matrix), rebuilt from the graph when stale.

Both are keyed by the graph's state (the latest IndexRun and EmbeddingModel IRIs), so a cache
written before any later index run or migration is never used: it is rebuilt on first use. An index
run says what it changed (``CacheDelta``): then the keyword and ranking caches are built from the
tokenised corpus saved with them (:mod:`acms.retrieval.segment`) with only the changed files' rows read
again, and the vector matrix keeps the rows of the files it did not change; the files are a full
build's either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

import numpy as np
from pyoxigraph import NamedNode

from acms.index.keyword import KeywordIndex
from acms.index.scratch import sweep
from acms.index.splice import spliced
from acms.index.string_column import listed, taken
from acms.index.token_table import TokenTable
from acms.index.vectors import VectorMatrix, decode, written_rows
from acms.index.vocabulary import Vocabulary
from acms.memory import release_freed
from acms.ranking.index import RankingIndex
from acms.ranking.splice import spliced_ranking
from acms.ranking.window_tokens import file_windows
from acms.retrieval.background import Background
from acms.retrieval.cache_delta import CacheDelta
from acms.retrieval.corpus_read import BOUND_AT_ONCE, CorpusReader, CorpusRow, CountOnce
from acms.retrieval.corpus_spill import read_others, read_places, read_spill
from acms.retrieval.segment import GARBAGE_SHARE, Segment, Update, merged, rows_named
from acms.retrieval.segment_rows import Places, SegmentRows, keyword_rows, places_of
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore, SupportsStreamingSelect
from acms.vocab import TIER_HOT

if TYPE_CHECKING:
    from acms.ingest import emit

BUILD_STEPS = 4  # most rows read and tokenised (search/corpus-full.rq); the rest; keyword saved; ranking saved
# An update reads again at most this share of the saved rows: search/corpus-some.rq bound to 500
# fragments at a time reads a row two to three times slower than search/corpus-full.rq's stream (a
# standard library: ~440 against ~180 µs), and a full read leaves no dead lines behind.
UPDATE_SHARE = 0.5
# An update of at most this many rows tokenises them looking each token up in the saved vocabulary's
# hash index (~4 µs a token the first time it is met) rather than numbering every token first (~50 ms a
# standard library): a few files' rows meet a few thousand tokens, a branch switch's tens of thousands.
LOOK_UP_ROWS = 2_000


class _HasKey(Protocol):
    @property
    def key(self) -> str: ...


_Keyed = TypeVar("_Keyed", bound=_HasKey)
_Saved = TypeVar("_Saved")
_Loaded_co = TypeVar("_Loaded_co", covariant=True)


class DerivedCaches:
    def __init__(self, store: GraphStore, layout: IndexLayout, progress: Callable[[int], object] | None = None,
                 spill: Path | None = None, complete: bool = False, delta: CacheDelta | None = None,
                 fragments: CountOnce | None = None, hot: Sequence[str] | None = None) -> None:
        """``progress(step)`` hears of each of ``BUILD_STEPS`` steps of building the keyword and ranking
        caches (a standard library's took ~20 s). ``spill``: the corpus rows the index run that made
        this graph state spilled (:mod:`acms.retrieval.corpus_spill`), read instead of the store's join;
        ``complete``: the spill holds every searchable fragment and place as the store does (the run
        found none in the store and moved none to another tier), so the store is not asked for the rest.
        ``delta``: what the index run that made this graph state changed; stale caches saved for the
        state before it are updated rather than built again. ``fragments``: how many searchable fragments
        there are, counted once for the index run (the embedding beside the update asks too). ``hot``: the
        hot tier's entities, sorted, when the caller knows them (the index run's tier policy just moved them)."""
        self.store = store
        self.layout = layout
        self._spill = spill
        self._complete = complete and spill is not None
        self._delta = delta
        self._update: Update | None = None  # how the segment was updated, when it was
        self._progress = progress or (lambda _step: None)
        self.rebuilt: list[str] = []
        self.updated: list[str] = []  # those of ``rebuilt`` made from the saved caches and the delta
        self.warnings: list[str] = []  # updates that failed and were built in full instead (``_update_failed``)
        self._keyword: KeywordIndex | None = None  # loaded once per instance (one graph state)
        self._vectors: VectorMatrix | None = None
        self._ranking: RankingIndex | None = None
        # the segment an update just built, handed to the vectors' update of the same state (loading it again cost ~50 ms)
        self.segment: Segment | None = None
        self._numbering: dict[str, int] | None = None  # the token numbering of the segment an update made
        self._saving: Background | None = None  # the updated segment being saved (``_segment``)
        # the searchable fragments an update counted (embeddings/count-fragments.rq): the embedding that
        # follows in the same run, with no fragment written between, takes it rather than counting again
        self.fragments: int | None = None
        self._count_fragments = fragments or CountOnce(store, "embeddings/count-fragments")
        self._known_hot = None if hot is None else list(hot)

    @cached_property
    def _state(self) -> tuple[str, str, str]:
        rows = self.store.select(catalog.text("index/state"))
        row = rows[0] if rows else {}
        decisions = _v(row.get("decisions"))
        recorded = f"{decisions}|{_v(row.get('decided'))}" if decisions not in ("", "0") else ""
        return _v(row.get("run")), _v(row.get("model")), recorded

    @cached_property
    def state_key(self) -> str:
        """The vector cache's key: the last index run, the embedding model and the last recorded decision."""
        run, model, decided = self._state
        return hashlib.sha256((f"{run}|{model}|{decided}" if decided else f"{run}|{model}").encode()).hexdigest()[:16]

    @cached_property
    def text_key(self) -> str:
        """The keyword and ranking caches' key: the last index run and the last recorded decision. Texts,
        names and places change only in index runs and when a decision is recorded (its fragment, held by
        no file: ``acms.retrieval.follow``); a new embedding model does not touch them, so an index run
        builds these caches before its embeddings (on the heap the files' phase left clean, see
        ``IndexRun._after_files``) and a model migration keeps them."""
        run, _, decided = self._state
        return hashlib.sha256((f"{run}|{decided}|text" if decided else f"{run}|text").encode()).hexdigest()[:16]

    @cached_property
    def corpus(self) -> list[CorpusRow]:
        """The rows of ``search/corpus.rq`` without their vectors (``_load_vectors`` reads those itself),
        as plain strings and numbers, sorted by fragment as its ORDER BY sorts them (read as
        :class:`CorpusReader` reads them; the caches' build does not hold them: for tests and benches)."""
        reader = CorpusReader(self.store)
        rows = list(reader.rows())
        rows = [r for i, r in enumerate(rows) if i >= reader.full or r.frag not in reader.dropped]
        rows.sort(key=lambda row: row.frag)
        return rows

    def _solutions(self, name: str, bindings: dict[str, Any] | None = None) -> Iterable[Any]:
        """A saved SELECT's rows as a stream from a store that streams (no list of dicts of terms held:
        RSS stayed at its peak after such lists were freed), as ``select`` rows from any other."""
        if isinstance(self.store, SupportsStreamingSelect):
            return self.store.select_stream(catalog.text(name), bindings)
        return self.store.select(catalog.text(name), bindings)

    def _bound(self, name: str, variable: str, values: Iterable[str]) -> Iterable[Any]:
        """A saved SELECT's rows for ``values`` of ``variable`` (IRIs), ``BOUND_AT_ONCE`` to a query."""
        named = [NamedNode(value) for value in values]
        for start in range(0, len(named), BOUND_AT_ONCE):
            yield from self._solutions(name, {variable: named[start : start + BOUND_AT_ONCE]})

    def keyword(self) -> KeywordIndex:
        if self._keyword is None:
            self._keyword = self._load_keyword()
        return self._keyword

    def _saved(self, kind: _Kind[_Keyed], directory: Path, key: str | None = None) -> _Keyed | None:
        """The cache saved in ``directory`` if it is for the current graph state (or for ``key``); any
        unreadable or stale one is simply rebuilt by the caller. One this process's last update kept
        (``_kept``) is taken as it is while the directory still holds its state. What a killed builder
        left beside it goes first (``index.scratch.sweep``: a listing and a lock try), so a reader that
        builds nothing clears it too."""
        want = self.text_key if key is None else key
        kept = _kept.get(directory)
        if kept is not None and kept.key == want and kind.saved_key(directory) == want:
            return kept.value  # type: ignore[no-any-return]
        sweep(directory.parent)
        try:
            index = kind.load(directory)
        except Exception:  # noqa: BLE001
            return None
        return index if index.key == want else None

    def _load_keyword(self) -> KeywordIndex:
        saved = self._saved(KeywordIndex, self.layout.cache_dir("keyword"))
        if saved is not None:
            return saved
        if self._ranking is None:  # stale too (the same graph state): built in the same pass
            self._ranking = self._saved(RankingIndex, self.layout.cache_dir("ranking"))
        self._build_text_caches(keyword=True, ranking=self._ranking is None)
        assert self._keyword is not None
        return self._keyword

    def warm(self) -> None:
        """Bring the keyword and ranking caches to this graph state for the readers to come (an index run):
        a cache whose manifest names this state is left as it is, and what is built is saved, not read
        back (loading both to compare their keys, then again after saving, cost ~0.5 s a standard library)."""
        sweep(self.layout.cache)
        keyword = KeywordIndex.saved_key(self.layout.cache_dir("keyword")) != self.text_key
        ranking = RankingIndex.saved_key(self.layout.cache_dir("ranking")) != self.text_key
        if keyword or ranking:
            self._build_text_caches(keyword=keyword, ranking=ranking, keep=False)

    def ranking(self) -> RankingIndex:
        if self._ranking is None:
            self._ranking = self._load_ranking()
        return self._ranking

    def _load_ranking(self) -> RankingIndex:
        saved = self._saved(RankingIndex, self.layout.cache_dir("ranking"))
        if saved is not None:
            return saved
        if self._keyword is None:
            self._keyword = self._saved(KeywordIndex, self.layout.cache_dir("keyword"))
        self._build_text_caches(keyword=self._keyword is None, ranking=True)
        assert self._ranking is not None
        return self._ranking

    def _build_text_caches(self, *, keyword: bool, ranking: bool, keep: bool = True) -> None:
        """``_text_caches``; an update from the delta that fails is built in full instead (the caches are
        derived: an error in their update must not take the index run down with it)."""
        if self._delta is None:
            self._text_caches(keyword=keyword, ranking=ranking, keep=keep)
            return
        try:
            self._text_caches(keyword=keyword, ranking=ranking, keep=keep)
        except Exception as exc:  # noqa: BLE001 - the run's graph is sound; only this derived state is redone
            self._update_failed("keyword and ranking caches'", exc)
            self._text_caches(keyword=keyword, ranking=ranking, keep=keep)

    def _update_failed(self, what: str, exc: Exception) -> None:
        """Forget the delta and whatever this process kept of an update, so the caches are built in full
        from the store; say so in ``warnings`` (the run's report). An error the full build meets too
        (a full disk, a store that cannot be read) is raised from there."""
        self.warnings.append(f"the {what} update failed ({type(exc).__name__}: {exc}); built in full")
        self._delta, self._update, self.segment, self._numbering, self.fragments = None, None, None, None, None
        self._keyword = self._ranking = None
        for name in ("tokens", "keyword", "ranking", "vectors"):
            _kept.pop(self.layout.cache_dir(name), None)

    def _text_caches(self, *, keyword: bool, ranking: bool, keep: bool = True) -> None:
        """Build and save the keyword and/or ranking caches in one pass over the corpus's texts.

        Why one pass, and no texts kept: both caches read every fragment's text, and the
        ranking index tokenised each again for its windows. Here each text is tokenised once, line by
        line (``TokenTable``), as its row streams in (:class:`CorpusReader`: no dicts of names or places),
        and only its token numbers are kept, with a few numbers and shared strings per row
        (``_Rows``, then the :class:`Segment` saved beside the caches): the keyword documents (the
        ``search_terms`` of the owner's name, its qualified name, then the text: those of the one string
        the text-based build joined) and the windows are slices of them, handed to the builders a few
        documents at a time. The rows, their order and both indexes are those of ``corpus`` and the
        text-based builders (``tests/retrieval/test_caches_one_pass.py``), updated or not
        (``tests/retrieval/test_caches_incremental.py``). ``keep``: hold what was built (mapped from
        the saved files) for this object's ``keyword()`` and ``ranking()``; a reader's (``keep``) that
        cannot be saved (a full disk, a directory it may not write) is held as built (``_saved_if``).
        """
        step = self._progress
        segment, updated = self._segment(keep)  # steps 1 and 2
        try:
            update = self._update if updated else None
            if keyword:
                built = None if update is None else self._spliced_keyword(segment, update)
                if built is None:
                    built = KeywordIndex.from_chunks(listed(segment.frags), segment.documents(), segment.text.tokens,
                                                     spill_dir=self.layout.cache, numbering=segment.numbering)
                _kept.pop(self.layout.cache_dir("keyword"), None)
                saved, _ = self._saved_if(keep, lambda: built.save(self.layout.cache_dir("keyword"), key=self.text_key))
                if update is not None and saved:  # a few files' delta over the mapped base: held for this process's readers
                    _kept[self.layout.cache_dir("keyword")] = _Kept(self.text_key, built)
                if keep:
                    self._keyword = self._held(KeywordIndex, "keyword", built, saved)
                del built
                self._built("keyword", updated)
                release_freed()
            step(3)
            if ranking and update is not None:
                spliced = self._spliced_ranking(segment, update)
                if spliced is not None:
                    ranking = False
                    spliced.keyword_rows = keyword_rows(segment, spliced)
                    _kept.pop(self.layout.cache_dir("ranking"), None)
                    saved, _ = self._saved_if(keep, lambda: spliced.save(self.layout.cache_dir("ranking"), key=self.text_key))
                    if saved:
                        _kept[self.layout.cache_dir("ranking")] = _Kept(self.text_key, spliced)
                    if keep:
                        self._ranking = self._held(RankingIndex, "ranking", spliced, saved)
                    del spliced
                    self._built("ranking", True)
            if ranking:
                places = segment.places()
                placed = segment.placed()
                text, numbering = segment.text, segment.numbering
                del segment  # the places hold what the ranking index needs of the rows
                release_freed()
                windows = file_windows(places, text, numbering)  # the last use of the texts' token numbers: let them go
                del text
                release_freed()
                built_ranking = RankingIndex.from_windows(places, windows)
                del places, windows
                built_ranking.keyword_rows = keyword_rows(placed, built_ranking)
                _kept.pop(self.layout.cache_dir("ranking"), None)
                saved, _ = self._saved_if(keep, lambda: built_ranking.save(self.layout.cache_dir("ranking"),
                                                                           key=self.text_key))
                if keep:
                    self._ranking = self._held(RankingIndex, "ranking", built_ranking, saved)
                del built_ranking
                self._built("ranking", updated)
                release_freed()
        finally:
            self._landed_segment(keep)
        step(4)

    def _landed_segment(self, keep: bool) -> None:
        """Wait for the updated segment's files (``_segment``) and keep what was saved, as ``_saved_if`` says."""
        saving, self._saving = self._saving, None
        if saving is None:
            return
        saved, mapped = self._saved_if(keep, saving.result)
        if saved and mapped is not None:
            self.segment = mapped
            _kept[self.layout.cache_dir("tokens")] = _Kept(self.text_key, mapped, self._numbering)

    def _spliced_keyword(self, segment: Segment, update: Update) -> KeywordIndex | None:
        """The keyword index saved for the state before the run with the rows read again replaced
        (:func:`acms.index.splice.spliced`); None when there is none to update."""
        assert self._delta is not None
        old = self._saved(KeywordIndex, self.layout.cache_dir("keyword"), self._delta.text_key)
        if old is None or len(old) != update.old_rows:
            return None
        source = update.was.copy()  # a fragment written again keeps its document
        source[~update.fresh] = update.kept
        return spliced(old, segment.frags, source, *segment.documents_of(np.flatnonzero(source < 0)),
                       segment.text.tokens, segment.numbering, segment.renumbered)

    def _spliced_ranking(self, segment: Segment, update: Update) -> RankingIndex | None:
        """The ranking index saved for the state before the run, updated for the files whose rows were
        read again and the places that moved (:func:`acms.ranking.splice.spliced_ranking`)."""
        assert self._delta is not None
        old = self._saved(RankingIndex, self.layout.cache_dir("ranking"), self._delta.text_key)
        if old is None or len(old.frag_ids) != update.old_placed:
            return None
        placed = segment.placed()
        before = np.full(len(segment), -1, dtype=np.int64)  # each row's position in the old ranking index
        before[~update.fresh] = update.kept_placed
        if update.moved:
            before[rows_named(segment.frags, update.moved)] = -1
        rows = np.flatnonzero(placed)
        source = before[rows]
        redone = segment.places(rows[source < 0].tolist())
        return spliced_ranking(old, source, redone, update.changed,
                               segment.text, segment.numbering, segment.renumbered)

    def _built(self, name: str, updated: bool) -> None:
        self.rebuilt.append(name)
        if updated:
            self.updated.append(name)

    # -- the tokenised corpus ------------------------------------------------------------------------
    def _segment(self, keep: bool = False) -> tuple[Segment, bool]:
        """The rows the caches are built from, and whether they are the saved segment updated with the
        delta (when it is the one the index run started from) rather than the corpus read in full. Saved
        under this graph state's key, unless the store's place answers depend on the order of their rows
        (a fragment given two kinds or outlines): an update could not repeat them. ``keep``: a reader's,
        held as built when it cannot be saved (``_saved_if``)."""
        segment = self._updated_segment()
        if segment is not None:
            directory = self.layout.cache_dir("tokens")
            _kept.pop(directory, None)
            # written in a thread while the keyword and ranking indexes are spliced from it in memory (its
            # ~20 MB of columns: 20-60 ms of a one-file refresh, the writes without the GIL); landed by
            # ``_landed_segment`` before the caches are done
            self._saving = Background(lambda: segment.save(directory, key=self.text_key))
            self.segment = segment
            return segment, True
        segment, single = self._read_segment()
        if single:
            self._saved_if(keep, lambda: segment.save(self.layout.cache_dir("tokens"), key=self.text_key))
        return segment, False

    def _held(self, kind: _Kind[_Keyed], name: str, built: _Keyed, saved: bool) -> _Keyed:
        """What a reader holds of a cache it built: the saved one, mapped (another process rebuilding the
        same cache may be swapping the directory at this moment: then, as when it was not saved, the
        one built)."""
        return (self._saved(kind, self.layout.cache_dir(name)) if saved else None) or built

    @staticmethod
    def _saved_if(keep: bool, save: Callable[[], _Saved]) -> tuple[bool, _Saved | None]:
        """(saved, ``save()``'s result). A reader (``keep``) that cannot save, the disk full or the cache
        directory not its to write, gets (False, None) and answers from what it built; the next writer
        saves the caches again. (After an index run failed on a full disk, a reader of the state before
        it found that run's caches, built its own and could not save them: it answered nothing.) A
        writer's error is raised: its run fails whole."""
        if not keep:
            return True, save()
        try:
            return True, save()
        except OSError:
            return False, None

    def _read_segment(self) -> tuple[Segment, bool]:
        """Every row read (``CorpusReader``) and tokenised, with the place queries' answers (and whether
        they gave one value per key)."""
        step = self._progress
        table = TokenTable()
        rows = SegmentRows()
        spill = self._spill
        reader = CorpusReader(self.store, then=lambda: step(1), full=None if spill is None else read_spill(spill),
                              ask=read_others(spill) if spill is not None and self._complete else None)
        for row in reader.rows():
            rows.add(row, table)
        order = rows.order(reader.full, reader.dropped)
        text = table.lines()
        del table
        places = self._place_dicts()
        segment = rows.segment(order, text, places, self._hot())
        del rows, order, text
        release_freed()
        step(2)
        return segment, places.single

    def _saved_segment(self, key: str) -> Segment | None:
        return self._saved(Segment, self.layout.cache_dir("tokens"), key)

    def _updated_segment(self) -> Segment | None:
        """The segment saved for the state before the index run, with the rows of the files it changed
        taken again (from what the run wrote, ``delta.written``, else read from the store) and every row
        without a file read again (nothing says whether it changed); None when there is no delta, no such
        segment, or the store's place answers for the rows read depend on their order."""
        delta = self._delta
        old = None if delta is None else self._saved_segment(delta.text_key)
        if delta is None or old is None:
            return None
        files, written = delta.files, delta.written
        dropped = np.asarray([f in files for f in old.files] + [True], dtype=bool)  # [-1]: a row without a file
        keep = ~dropped[np.asarray(old.file_of, dtype=np.int64)]
        unplaced = [old.frags[i] for i in np.flatnonzero(np.asarray(old.file_of) < 0).tolist()]
        again = self._fragments_again(files, unplaced) if written is None else sorted({*written.others, *unplaced})
        reading = len(again) + (0 if written is None else len(written.rows))
        if reading > UPDATE_SHARE * len(old):
            return None  # bound reads of most of the corpus: slower than reading it whole
        # counted in a thread while the rows are tokenised here (the store answers without the GIL); never
        # left running past this point (a failed run rolls the store back under it)
        counting = Background(self._count_fragments)
        try:
            numbered = _kept.get(self.layout.cache_dir("tokens"))
            vocab = numbered.vocab if numbered is not None and numbered.value is old else None
            if vocab is not None:
                table = TokenTable.going_on(vocab)
            elif isinstance(old.text.tokens, Vocabulary) and reading <= LOOK_UP_ROWS:
                table = TokenTable.over(old.text.tokens)
            else:
                table = TokenTable(old.text.tokens)
            rows = SegmentRows()
            given = set() if written is None else rows.add_written(written.rows, table, old, np.flatnonzero(~keep))
            reader = CorpusReader(self.store)
            for row in reader.rows_of(again):
                if (row.file is None or row.file in files) and row.frag not in given:  # another file's: kept from ``old``
                    rows.add(row, table)
        finally:
            counting.wait()
        self.fragments = counting.result()
        if int(keep.sum()) + len(rows.frags) != self.fragments:
            # a fragment no file accounts for that the saved segment did not hold (a decision recorded
            # since), or a fragment of two rows: the scan finds the first kind, and reading them is cheap
            for row in reader.rows_of(sorted(self._unplaced() - set(again))):
                if row.file is None:
                    rows.add(row, table)
        rows.copy_lines(table, old.text)
        order = rows.order(0, set())
        hot = self._hot()
        places = None if written is None else places_of(written.places, self._kind_closure(), frozenset(hot))
        if places is None:
            placed = [rows.frags[i] for i in order if rows.files[i] is not None]
            places = self._bound_places(sorted({f for f in rows.files if f is not None}), placed)
        moved = set(old.hot) ^ set(hot)
        placed_kept = keep & (np.asarray(old.file_of) >= 0)

        def kept(frag: str) -> bool:  # looked up in the sorted column: a set of all 73k cost ~25 ms a refresh
            return any(placed_kept[at] for at in rows_named(old.frags, (frag,)))

        nesting = self._nesting_moved(moved, kept)
        if not places.single or nesting is None:
            return None
        self._progress(1)
        new = rows.segment(order, table.lines(), places, hot)
        segment, fresh = merged(old, keep, new, nesting, hot)
        was = np.full(len(segment), -1, dtype=np.int64)
        was[fresh] = [rows.was.get(i, -1) for i in order]  # the fresh rows are the new ones, in order
        self._update = Update.of(old, keep, new, segment, fresh, set(nesting), was)
        del old, new, rows
        segment = segment.tidied(GARBAGE_SHARE)
        numbering = table.numbering()  # None: looked up, or compacted
        self._numbering = numbering if numbering is not None and len(numbering) == len(segment.text.tokens) else None
        self._progress(2)
        return segment

    def _fragments_again(self, files: frozenset[str], unplaced: list[str]) -> list[str]:
        """The fragments whose rows an update reads again: those placed in ``files`` and those the saved
        segment held with no file, ``unplaced`` (a recorded decision; or a file but no lines: unchanged
        unless their file is in ``files``). A fragment with no file added since is found by a count
        (``_updated_segment``): the scan that lists them all (``search/fragments-unplaced.rq``) cost
        ~0.2 s a standard library on every update."""
        found = {r["frag"].value for r in self._bound("search/fragments-in-files", "file", sorted(files))}
        found.update(unplaced)
        return sorted(found)

    def _unplaced(self) -> set[str]:
        return {r["frag"].value for r in self._solutions("search/fragments-unplaced")}

    def _bound_places(self, files: list[str], frags: list[str]) -> Places:
        """``_place_dicts`` for these files and fragments only (the place queries bound to them)."""
        paths = _last_of(self._bound("search/file-paths-of", "file", files), "file", "path")
        kinds = _last_of(self._bound("search/class-fragments-of", "frag", frags), "frag", "kind", _local)
        outlines = _last_of(self._bound("search/class-outlines-of", "frag", frags), "frag", "outline")
        nesting = _last_of(self._bound("search/function-outlines-of", "frag", frags), "frag", "outline")
        parts = (paths, kinds, outlines, nesting)
        return Places(*(found for found, _ in parts), single=all(single for _, single in parts))

    def _nesting_moved(self, moved: set[str], kept: Callable[[str], bool]) -> dict[str, str | None] | None:
        """The nesting outlines of the kept rows the tier policy may have changed: a function's outline
        is search/function-outlines.rq's only while the function and a function it defines share a tier,
        so those of the entities that changed tier (``moved``) and of the entities that define them are
        asked for again. None when the store gives one of them two outlines."""
        if not moved:
            return {}
        near = sorted(filter(kept, {r["frag"].value for r in self._bound("search/fragments-near", "entity", sorted(moved))}))
        nesting, single = _last_of(self._bound("search/function-outlines-of", "frag", near), "frag", "outline")
        return {frag: nesting.get(frag) for frag in near} if single else None

    def _hot(self) -> list[str]:
        """The entities in the hot tier (``search/fragments-near.rq`` says why a segment keeps them)."""
        if self._known_hot is not None:
            return self._known_hot
        return sorted({r["e"].value for r in self.store.select(catalog.text("rules/entities-in-tier"),
                                                                 {"tier": TIER_HOT})})

    def _place_dicts(self) -> Places:
        """What the ranking index's places are made of: from a complete spill, else from the four place
        queries (the last row of a key wins, as a dict built from them keeps it)."""
        spilled = self._spilled_places() if self._complete else None
        if spilled is not None:
            return spilled
        paths = _last_of(self._solutions("search/file-paths"), "file", "path")
        kinds = _last_of(self._solutions("search/class-fragments"), "frag", "kind", _local)
        outlines = _last_of(self._solutions("search/class-outlines"), "frag", "outline")
        nesting = _last_of(self._solutions("search/function-outlines"), "frag", "outline")
        parts = (paths, kinds, outlines, nesting)
        return Places(*(found for found, _ in parts), single=all(single for _, single in parts))

    def _spilled_places(self) -> Places | None:
        """``_places``' four dicts from the places a complete spill holds (the place queries took ~2-4 s a
        standard library); None when a group did not say its places, or the store's dicts would depend on
        the order of their rows."""
        assert self._spill is not None
        unsaid: list[None] = []

        def said() -> Iterator[emit.Places]:  # a group at a time: every entity's fragments are in the spill
            for places in read_places(self._spill):  # type: ignore[arg-type]
                if places is None:
                    unsaid.append(None)
                    return
                yield places

        places = places_of(said(), self._kind_closure())
        return None if unsaid else places

    def _kind_closure(self) -> dict[str, set[str]]:
        closure: dict[str, set[str]] = {}
        for r in self._solutions("search/kind-closure"):
            closure.setdefault(r["type"].value, set()).add(r["kind"].value.rsplit("#", 1)[-1])
        return closure

    # -- vectors ---------------------------------------------------------------------------------------
    def vectors(self, model_id: str, *, keep: bool = True) -> VectorMatrix:
        """The vector cache of this graph state for ``model_id``, built (and saved) when stale. ``keep``: a
        reader's, held as built when it cannot be saved (``_saved_if``); a writer passes False."""
        if self._vectors is None or self._vectors.model_id != model_id:
            self._vectors = self._load_vectors(model_id, keep)
        return self._vectors

    def _load_vectors(self, model_id: str, keep: bool = True) -> VectorMatrix:
        directory = self.layout.cache_dir("vectors")
        cached = VectorMatrix.load(directory)
        if cached is not None and cached.key == self.state_key and cached.model_id == model_id:
            return cached
        try:
            built = self._updated_vectors(cached, model_id)
        except Exception as exc:  # derived state: built in full instead
            if self._delta is None:
                raise
            self._update_failed("vector cache's", exc)
            built = None
        if built is None:
            ids, rows = [], []
            for row in self.store.select(catalog.text("search/corpus")):
                vec = row.get("vector")
                if vec is not None:
                    ids.append(row["frag"].value)
                    rows.append(decode(vec.value))
            built = VectorMatrix(ids, _stacked(rows), self.state_key, model_id)
        else:
            self.updated.append("vectors")
        saved, mapped = self._saved_if(keep, lambda: built.save(directory))  # its base mapped, kept for the next refresh
        self.rebuilt.append("vectors")
        return mapped if saved and mapped is not None else built

    def _updated_vectors(self, cached: VectorMatrix | None, model_id: str) -> VectorMatrix | None:
        """The matrix saved for the state before the index run, of the same model, with the rows of the
        fragments in the files it changed (known from this state's segment: the text caches are built
        first) let go and theirs now (``search/vectors-of.rq``) appended (:meth:`VectorMatrix.updated`: its
        base is kept as it is, linked, until the appended and let-go rows pass ``GARBAGE_SHARE`` of the live
        ones, when it is written whole again in fragment order, as ``search/corpus.rq`` gives them).
        Fragments with no file, and those the matrix lacked (an embedding that failed), are read again
        too; the rows the run's embedding just wrote are taken as it made them
        (:func:`acms.index.vectors.written_rows`), not read back (a 300-file switch's 12k: ~0.7 s). None
        when there is no such matrix or segment, or a fragment has several rows. Which rows stay and which
        fragments are read again is :meth:`VectorMatrix.plan`'s: the first update of a matrix looks every
        fragment up, and a process's next update of the matrix it kept keeps the rows of the unchanged
        files by their file, without a lookup (Python loops over sets of every fragment cost ~30 ms a
        standard library per refresh)."""
        delta = self._delta
        if delta is None or cached is None or cached.key != delta.state_key or cached.model_id != model_id:
            return None
        segment = self.segment if self.segment is not None else self._saved_segment(self.text_key)
        if segment is None or not segment.ordered:
            return None
        frags = segment.frags
        # the rows this run's embedding just wrote are taken as it made them, the rest read (in fragment order)
        given = written_rows(self.layout.cache_dir("vectors"), self.state_key, model_id)
        plan = cached.plan(frags, segment.files, segment.file_of, delta.files, given.keys())
        again = taken(frags, plan.again)
        read: dict[str, np.ndarray] = {}
        rows_read = 0  # more than ``read`` holds: a fragment with several rows
        for r in self._bound("search/vectors-of", "frag", [frag for frag in again if frag not in given]):
            read[r["frag"].value] = decode(r["vector"].value)
            rows_read += 1
        new_ids = [frag for frag in again if frag in given or frag in read]
        new_rows = [given[frag] if frag in given else read[frag] for frag in new_ids]
        dims = {int(cached.matrix.shape[1])} if len(cached.matrix) else set()
        dims |= {int(cached.tail.shape[1])} if cached.tail is not None and len(cached.tail) else set()
        dims |= {int(row.size) for row in new_rows}
        if len(dims) > 1 or rows_read != len(read):
            return None
        width = dims.pop() if dims else int(cached.matrix.shape[1])
        appended = np.vstack(new_rows).astype(np.float32) if new_rows else np.zeros((0, width), dtype=np.float32)
        updated = cached.updated(plan.kept, new_ids, appended, self.state_key, plan, frags)
        return updated.compacted() if updated.garbage() > GARBAGE_SHARE else updated


class _Kept(NamedTuple):
    key: str  # the graph state it is of
    value: Any  # the cache: a Segment, a KeywordIndex, a RankingIndex
    vocab: dict[str, int] | None = None  # a segment's token numbering, token -> number (None: not kept)


# What an update in this process saved last, per cache directory: a long-lived process (a server, a
# watcher) answers its next reads from the keyword and ranking indexes it just made (each a small
# delta over a mapped base) and starts its next update from the segment and its tokens' numbering,
# rather than reading the files back (a standard library: ~0.1 s per refresh for the segment, ~50 ms
# for the indexes' first answer after it). Only an update leaves them: a full build's caches are let
# go before the vectors, the first index's peak.
_kept: dict[Path, _Kept] = {}


class _Kind(Protocol[_Loaded_co]):
    """A cache class: what ``_saved`` needs of it."""

    def load(self, directory: Path) -> _Loaded_co: ...

    def saved_key(self, directory: Path) -> str | None: ...


def _stacked(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Vectors as ``_load_vectors`` has always stacked them (an empty matrix is 0 x 1)."""
    return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, 1), dtype=np.float32)


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1]


def _last_of(solutions: Iterable[Any], key: str, value: str, convert: Callable[[str], str] = str) -> tuple[dict[str, str], bool]:
    """``{key: value}`` of the solutions as a dict built from them keeps it (the last one of a key wins),
    and whether every key had one value."""
    out: dict[str, str] = {}
    single = True
    for r in solutions:
        k, v = r[key].value, convert(r[value].value)
        if out.setdefault(k, v) != v:
            single = False
            out[k] = v
    return out, single


def _v(term: object) -> str:
    return "" if term is None else str(getattr(term, "value", term))


