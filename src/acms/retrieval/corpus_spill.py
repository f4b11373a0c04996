"""The corpus rows a first index spills as it writes its groups, so the caches' build and the first
embedding need not read them back from the store.

Why: the caches' build started with ``search/corpus-full.rq``, Oxigraph's join of eight
patterns over every fragment: 14 s on a standard library's index with a warm page cache, 26 s cold.
The writer of a streamed first index has each file's rows at hand (``emit.FileBatch.corpus``:
``search/corpus.rq``'s solutions over the file's own triples, for each micro fragment that has one; a
fragment with several, whose order only the store knows, is named in ``others``), so it appends them
here after the group is loaded, with what the ranking index's places are made of (``emit.Places``).
:class:`acms.retrieval.corpus_read.CorpusReader` takes the rows in place of that query. The rest comes
from the store as it always did (``search/corpus-keys.rq``, the four place queries), unless the spill is
complete: the store held no searchable fragment before the run and the tier policy moved nothing
since, so the spill holds every row and place the store would give (``DerivedCaches(complete=True)``;
the places get the ontology's classes from ``search/kind-closure.rq``). The caches are byte for byte
those built from the store either way (``tests/retrieval/test_corpus_spill.py``).

The same spill gives a first embedding its LSA sample and every text it folds (``read_texts``:
``embeddings/texts.rq``'s rows without the graph) instead of scanning every text in the store again.

Valid only for the run that wrote it, and only while nothing rewrites the texts (a changed secrets
policy does): :class:`acms.service.indexing.IndexRun` decides, and deletes it when the run ends.
The file is complete only once ``close()`` renamed it into place; a writer that fails leaves nothing.
"""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from acms.retrieval.corpus_read import CorpusRow

if TYPE_CHECKING:
    from acms.ingest.emit import Places, SpillRow

__all__ = ["SpillWriter", "beside", "read_others", "read_places", "read_spill", "read_texts", "remove_spills", "spill_path"]

_PREFIX = ".corpus-"
_SUFFIX = ".spill"


def spill_path(cache: Path, run_stamp: str) -> Path:
    """Where the run stamped ``run_stamp`` spills its corpus rows (inside the index's cache directory)."""
    return cache / f"{_PREFIX}{run_stamp}{_SUFFIX}"


def beside(spill: Path, name: str) -> Path:
    """A path for more of the run's transient work (a directory or file), removed with its spill."""
    return spill.with_name(f"{spill.stem}.{name}")


def remove_spills(cache: Path) -> None:
    """Remove every spill (complete or not) left in ``cache``, with what was put ``beside`` it: one a
    killed run left behind, or this run's. Only the index's writer (it holds the index lock) calls this."""
    if not cache.is_dir():
        return
    for path in cache.glob(f"{_PREFIX}*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


class SpillWriter:
    """Append groups of rows; ``close()`` makes the spill complete, ``discard()`` removes it.

    A spill only spares the caches a read: when it cannot be written (a full disk, an unwritable cache
    directory) it is dropped and the run goes on without it (the caches then read the store)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._partial = path.with_name(path.name + ".partial")
        self._out: BinaryIO | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self._partial, "wb")  # noqa: SIM115 (closed by close/discard)
        except OSError:
            self._drop()

    def add(self, rows: Iterable[SpillRow], others: Iterable[tuple[str, str]] = (),
            places: Places | None = None) -> None:
        """A group's corpus rows (its micro fragments' with one row each), the (fragment, text) of its
        other micro fragments (several rows each, an ADR's decision: the store gives their rows) and what
        its ranking places are made of (None: not known, the store is asked for every place)."""
        from acms.ingest.emit import spill_record

        self.add_records([spill_record(list(rows), list(others), places)])

    def add_records(self, records: Iterable[bytes]) -> None:
        """Records pickled elsewhere as ``add`` pickles them (``emit.spill_record``: a file's, by the worker
        that emitted it)."""
        if self._out is None:
            return
        try:
            for record in records:
                if record:
                    self._out.write(record)
        except OSError:
            self._drop()

    def close(self) -> None:
        if self._out is None:
            return
        try:
            self._out.close()  # read by this run only (a crash ends the run): no fsync
            self._out = None
            os.replace(self._partial, self.path)
        except OSError:
            self._drop()

    def discard(self) -> None:
        self._drop()
        self.path.unlink(missing_ok=True)

    def _drop(self) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError:
                pass
            self._out = None
        try:
            self._partial.unlink(missing_ok=True)
        except OSError:
            pass


def _groups(path: Path) -> Iterator[tuple[list[SpillRow], list[tuple[str, str]], Places | None]]:
    with open(path, "rb") as stream:
        while True:
            try:
                yield pickle.load(stream)
            except EOFError:
                return


def read_spill(path: Path) -> Iterator[CorpusRow]:
    """The spilled corpus rows in the order written, a group at a time."""
    for rows, _, _ in _groups(path):
        for row in rows:
            yield CorpusRow(*row)


def read_others(path: Path) -> Iterator[str]:
    """The micro fragments written whose rows the spill does not hold (the store gives them)."""
    for _, others, _ in _groups(path):
        yield from dict.fromkeys(frag for frag, _ in others)


def read_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(fragment, text) of every micro fragment written: ``embeddings/texts.rq``'s rows without the graph
    (once per fragment and text; a fragment of several owners comes once)."""
    for rows, others, _ in _groups(path):
        for row in rows:
            yield row[0], row[1]
        yield from others


def read_places(path: Path) -> Iterator[Places | None]:
    """What each group written said of its places (None: it did not say), a group at a time."""
    for _, _, places in _groups(path):
        yield places
