"""The ranking index updated for the files an index run changed, instead of built again over every file.

A file's windows, its path's terms and its defined names depend on its own fragments only, so an
update cuts windows for the changed files alone (:class:`acms.ranking.window_tokens.TokenWindows`) and
splices the three keyword indexes (:func:`acms.index.splice.spliced`: the kept documents' term counts
are kept, every score is made again from them). The per-fragment columns (where each fragment sits,
its outline, its qualified name) keep the kept fragments' rows, their file numbers renumbered, and take
the redone fragments' (those of changed files, and those whose place moved without their file: a
nesting outline the tier policy changed). What a search or a ranking reads is what a full build of the
same fragments holds (``tests/retrieval/test_caches_incremental.py`` compares every answer).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from acms.index.layers import Positions
from acms.index.ranges import ranges
from acms.index.string_column import spliced_rows
from acms.index.splice import spliced
from acms.index.token_table import TokenizedLines, TokenTable
from acms.ranking.index import (
    CONTAINER,
    FragmentPlace,
    RankingIndex,
    ids_array,
)
from acms.ranking.window_tokens import FileLines, TokenWindows

__all__ = ["spliced_ranking"]


def spliced_ranking(old: RankingIndex, source: np.ndarray, redone: Sequence[FragmentPlace],
                    changed: set[str], text: TokenizedLines, numbering: str = "",
                    renumbered: tuple[str, np.ndarray] | None = None) -> RankingIndex | None:
    """``old`` updated: its fragments now are every placed fragment (sorted), ``source[i]`` the position
    in ``old`` of fragment ``i`` when its place is as it was, else -1; ``redone`` the places of the -1s,
    in order; ``changed`` the paths whose fragments changed (old or new paths: every place in those files is
    in ``redone``); ``text`` the token lines ``redone`` points into, numbered as ``numbering`` names (``renumbered``:
    as :func:`acms.index.splice.spliced` takes it). None when ``old`` cannot be updated
    (saved without term counts, windows out of file order): the caller builds in full."""
    source = np.asarray(source, dtype=np.int64)
    if len(redone) != int((source < 0).sum()):
        return None
    old_files = list(old.files)
    old_window_file = np.asarray(old.window_file, dtype=np.int64)
    if old_window_file.size and np.any(np.diff(old_window_file) < 0):
        return None
    by_file: dict[str, list[FragmentPlace]] = {}
    for place in redone:
        if place.path in changed:
            by_file.setdefault(place.path, []).append(place)
    new_paths = sorted(by_file)
    files = sorted([f for f in old_files if f not in changed] + new_paths)
    number = {path: i for i, path in enumerate(files)}
    renumber = np.asarray([number.get(path, -1) if path not in changed else -1 for path in old_files] + [-1],
                          dtype=np.int64)
    file_source = np.full(len(files), -1, dtype=np.int64)
    kept_old = np.flatnonzero(renumber[:-1] >= 0)
    file_source[renumber[kept_old]] = kept_old
    # windows: the kept files' as they were, the changed files' cut again
    cut = TokenWindows([FileLines(*(np.asarray(column, dtype=np.int64) for column in
                                    zip(*((p.start, p.first_line, p.lines) for p in by_file[path]))))
                        for path in new_paths], text)
    chunks = list(cut.chunks())
    flat = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0, dtype=np.int32)
    lengths = np.concatenate([c[1] for c in chunks]) if chunks else np.zeros(0, dtype=np.int64)
    per_old = np.bincount(old_window_file, minlength=len(old_files))
    old_start = np.concatenate([[0], np.cumsum(per_old)[:-1]]) if len(old_files) else per_old
    cut_file = np.asarray(cut.window_file, dtype=np.int64)
    per_new = np.bincount(cut_file, minlength=len(new_paths))
    new_start = np.concatenate([[0], np.cumsum(per_new)[:-1]]) if new_paths else per_new
    new_number = {path: i for i, path in enumerate(new_paths)}
    cut_lines = np.asarray(cut.window_lines, dtype=np.int64).reshape(-1, 2)
    old_lines = np.asarray(old.window_lines, dtype=np.int64).reshape(-1, 2)
    # each file's windows in file order: a kept file's span of the old windows, a cut file's of the new
    from_old = file_source >= 0
    cut_of = np.asarray([-1 if k >= 0 else new_number[path] for path, k in zip(files, file_source.tolist())],
                        dtype=np.int64)
    count = np.where(from_old, per_old[np.maximum(file_source, 0)] if len(old_files) else 0,
                     per_new[np.maximum(cut_of, 0)] if new_paths else 0).astype(np.int64)
    start = np.where(from_old, old_start[np.maximum(file_source, 0)] if len(old_files) else 0,
                     new_start[np.maximum(cut_of, 0)] if new_paths else 0).astype(np.int64)
    span = ranges(start, count)
    old_window = np.repeat(from_old, count)
    w_source = np.where(old_window, span, -1)
    w_lines = np.empty((span.size, 2), dtype=np.int64)
    w_lines[old_window] = old_lines[span[old_window]]
    w_lines[~old_window] = cut_lines[span[~old_window]]
    w_file = np.repeat(np.arange(len(files), dtype=np.int64), count)
    windows = spliced(old.windows, Positions(w_source.size), w_source, flat, lengths, text.tokens,
                      numbering, renumbered)
    # the files' paths and defined names: the changed files' documents made again
    table = TokenTable()
    redo = [path for path, k in zip(files, file_source.tolist()) if k < 0]
    path_docs = [table.ids(path) for path in redo]
    defined = {path: " ".join(p.name for p in by_file[path] if p.name and p.container != CONTAINER["Module"])
               for path in redo}
    name_docs = [table.ids(defined[path]) for path in redo]
    tokens = list(table.vocab)
    paths = spliced(old.paths, files, file_source, *_joined(path_docs), tokens)
    names = spliced(old.names, files, file_source, *_joined(name_docs), tokens)
    if windows is None or paths is None or names is None:
        return None
    dense = [int(renumber[d]) for d in old.dense if renumber[d] >= 0] + [number[new_paths[d]] for d in cut.dense]
    # where each fragment sits
    kept = source >= 0
    locations = spliced_rows(np.asarray(old.locations, dtype=np.int64).reshape(-1, 4), source,
                             np.asarray([(number[p.path], p.start, p.end, int(p.container)) for p in redone],
                                        dtype=np.int64).reshape(-1, 4))
    if kept.any():
        locations[kept, 0] = renumber[locations[kept, 0]]
        if np.any(locations[kept, 0] < 0):
            return None  # a kept place in a changed file: the caller's sets disagree
    return RankingIndex(files, w_file, w_lines,
                        windows, paths, names, _frag_ids(old.frag_ids, source, redone), locations,
                        old.outlines.spliced(source, [p.outline for p in redone]),
                        old.qualified.spliced(source, [p.qualified for p in redone]), dense=dense)


def _joined(docs: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.asarray([len(d) for d in docs], dtype=np.int64)
    flat = np.concatenate([np.asarray(d, dtype=np.int32) for d in docs]) if docs else np.zeros(0, dtype=np.int32)
    return flat, lengths


def _frag_ids(old: np.ndarray, source: np.ndarray, redone: Sequence[FragmentPlace]) -> np.ndarray:
    """The fragment IRIs (``ids_array``'s bytes): the kept ones gathered from ``old`` in C, the redone
    ones made; as wide as the longest, as ``ids_array`` over all of them makes it."""
    old = np.asarray(old)
    made = ids_array([p.frag for p in redone])
    kept = source >= 0
    width = made.dtype.itemsize if made.size else 0
    if old.size and old.dtype.itemsize > width:  # as wide as the longest kept one, when that is wider
        # a row as wide as the array ends in a byte that is not NUL (``S`` strings drop trailing NULs)
        full = old.view(np.uint8).reshape(old.size, old.dtype.itemsize)[:, -1] != 0
        kept_full = full[source[kept]]
        width = max(width, old.dtype.itemsize if kept_full.any() else
                    int(np.char.str_len(old[source[kept]]).max(initial=0)))
    return spliced_rows(old, source, made).astype(f"S{max(width, 1)}", copy=False)
