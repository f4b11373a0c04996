"""The corpus rows a first index spills as it writes its groups, so the caches' build need not read them
back from the store.

Why (issue 14): the caches' build starts with ``search/corpus-full.rq``, Oxigraph's join of eight
patterns over every fragment: 14 s on a standard library's index with a warm page cache, 26 s cold,
the largest part of the caches phase. The writer of a streamed first index has each group's rows at
hand (``emit.FileBatch.corpus``, the same solutions over the file's own triples), so it appends them
here after the group is loaded. :class:`acms.retrieval.corpus_read.CorpusReader` takes them in place
of that query and still reads the rest the way it always does (``search/corpus-keys.rq``): a fragment
the spill lacks, or one with several owners, comes from the store, so the rows stay exactly the
query's (``tests/retrieval/test_corpus_spill.py``).

The same spill holds the (fragment, text) of the group's other micro fragments (a file's windows, a
section's, an ADR's decision), so a first embedding draws its LSA sample from the spill
(``read_texts``: ``embeddings/texts.rq``'s rows without the graph) instead of scanning every text in the
store again (~4 s a standard library).

Valid only for the run that wrote it, and only while nothing rewrites the texts (a changed secrets
policy does): :class:`acms.service.index_run.IndexRun` decides, and deletes it when the run ends.
The file is complete only once ``close()`` renamed it into place; a writer that fails leaves nothing.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from acms.retrieval.corpus_read import CorpusRow

__all__ = ["SpillWriter", "read_spill", "read_texts", "remove_spills", "spill_path"]

_PREFIX = ".corpus-"
_SUFFIX = ".spill"


def spill_path(cache: Path, run_stamp: str) -> Path:
    """Where the run stamped ``run_stamp`` spills its corpus rows (inside the index's cache directory)."""
    return cache / f"{_PREFIX}{run_stamp}{_SUFFIX}"


def remove_spills(cache: Path) -> None:
    """Remove every spill (complete or not) left in ``cache``: one a killed run left behind, or this run's.
    Only the index's writer (it holds the index lock) calls this."""
    if not cache.is_dir():
        return
    for path in cache.glob(f"{_PREFIX}*"):
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

    def add(self, rows: Iterable[tuple[str, str, str, str, int, int, str]],
            others: Iterable[tuple[str, str]] = ()) -> None:
        """A group's corpus rows, and the (fragment, text) of its other micro fragments (a file's or a
        section's, an ADR's decision: no qualified name) for the embeddings' sample."""
        rows, others = list(rows), list(others)
        if rows or others:
            self.add_records([pickle.dumps((rows, others), protocol=pickle.HIGHEST_PROTOCOL)])

    def add_records(self, records: Iterable[bytes]) -> None:
        """Records pickled elsewhere as ``add`` pickles them (a file's, by the worker that emitted it)."""
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


def _groups(path: Path) -> Iterator[tuple[list[tuple[str, str, str, str, int, int, str]], list[tuple[str, str]]]]:
    with open(path, "rb") as stream:
        while True:
            try:
                yield pickle.load(stream)
            except EOFError:
                return


def read_spill(path: Path) -> Iterator[CorpusRow]:
    """The spilled corpus rows in the order written, a group at a time."""
    for rows, _ in _groups(path):
        for row in rows:
            yield CorpusRow(*row)


def read_texts(path: Path) -> Iterator[tuple[str, str]]:
    """(fragment, text) of every micro fragment written: ``embeddings/texts.rq``'s rows without the graph
    (once per fragment and text; a fragment of several owners comes once)."""
    for rows, others in _groups(path):
        last = None
        for row in rows:
            if (row[0], row[1]) != last:  # a fragment's rows are together: one per name of its owner
                last = (row[0], row[1])
                yield last
        yield from others
