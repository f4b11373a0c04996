"""A keyword index updated as a base plus a delta answers as a full build of the same documents: for any
sequence of updates (documents replaced, removed, added; deltas stacked on deltas; the merge threshold
crossed), every query's scores are the same bits and ``top`` the same list, saved and loaded or not.
Its base's files are linked into the new directory, never written again, unless they were replaced
since they were loaded; a save that fails midway leaves the index that was there."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from acms.index import layers
from acms.index.keyword import KeywordIndex
from acms.index.layers import Delta
from acms.index.scratch import sweep
from acms.index.splice import spliced, spliced_whole
from acms.index.token_table import TokenTable

from .test_splice import same_answers

WORDS = [f"w{i}" for i in range(25)] + ["parse_header", "HTTPServer", "read_bytes", "self", "return", "x"]
QUERIES = ["w1", "w2 w3", "parse header self", "w4 w4 w5", "HTTPServer read_bytes return x w0", "nothing_known",
           " ".join(WORDS[::2] * 3)]  # a long query, its words repeated


def _build(texts: dict[str, str]) -> KeywordIndex:
    ids = sorted(texts)
    return KeywordIndex.build(ids, [texts[d] for d in ids])


def _update(old: KeywordIndex, texts: dict[str, str], changed: set[str], scratch: Path | None = None) -> KeywordIndex:
    ids = sorted(texts)
    position = {d: i for i, d in enumerate(old.ids)}
    source = np.asarray([-1 if d in changed or d not in position else position[d] for d in ids], dtype=np.int64)
    table = TokenTable()
    parts = [np.frombuffer(table.ids(texts[d]), dtype=np.int32) for d, s in zip(ids, source.tolist()) if s < 0]
    flat = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    got = spliced(old, ids, source, flat, np.asarray([p.size for p in parts], dtype=np.int64), list(table.vocab))
    if got is None:  # an index without a term has nothing to update: the caller builds in full, saves, loads
        assert old.retriever is None and scratch is not None
        _build(texts).save(scratch)
        return KeywordIndex.load(scratch)
    return got


def _same(got: KeywordIndex, want: KeywordIndex) -> None:
    same_answers(got, want)
    for query in QUERIES:
        for unique in (False, True):
            assert got.scores(query, unique=unique).tobytes() == want.scores(query, unique=unique).tobytes(), query
        assert got.top(query, 5) == want.top(query, 5)
        assert got.top(query, 500) == want.top(query, 500)


text = st.lists(st.sampled_from(WORDS + ["rare_a", "rare_b"]), max_size=12).map(" ".join)
step = st.tuples(
    st.lists(st.integers(0, 10_000), max_size=4),  # documents replaced (picked by index modulo their number)
    st.lists(st.integers(0, 10_000), max_size=3),  # documents removed
    st.lists(text, max_size=3),  # documents added
    st.lists(text, min_size=4, max_size=4),  # the replaced documents' new texts
    st.booleans(),  # saved and loaded before the next update
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.lists(text, min_size=1, max_size=90), steps=st.lists(step, min_size=1, max_size=6))
def test_any_sequence_of_updates_answers_as_a_full_build(start: list[str], steps: list, tmp_path: Path) -> None:
    texts = {f"d{i:03d}": t for i, t in enumerate(start)}
    base = tmp_path / f"run{os.urandom(4).hex()}"
    _build(texts).save(base / "0")
    index = KeywordIndex.load(base / "0")
    serial = 0
    for n, (replaced, removed, added, new_texts, reload) in enumerate(steps):
        ids = sorted(texts)
        changed = {ids[i % len(ids)] for i in replaced} if ids else set()
        for d, new in zip(sorted(changed), new_texts):
            texts[d] = new
        for i in removed:
            if texts:
                texts.pop(sorted(texts)[i % len(texts)])
        for t in added:
            serial += 1
            texts[f"n{n}_{serial:03d}"] = t
        changed &= texts.keys()
        index = _update(index, texts, changed, base / f"full{n}")
        event("layered" if index.layered is not None else "full")
        want = _build(texts)
        _same(index, want)
        if reload:
            index.save(base / str(n + 1), key=f"k{n}")
            index = KeywordIndex.load(base / str(n + 1))
            assert index.key == f"k{n}"
            _same(index, want)
    shutil.rmtree(base)


def _corpus(n: int) -> dict[str, str]:
    rng = np.random.default_rng(3)
    return {f"d{i:04d}": " ".join(rng.choice(WORDS, size=int(rng.integers(1, 20)))) for i in range(n)}


def test_a_small_update_is_layered_its_base_linked_and_deltas_stack(tmp_path: Path) -> None:
    texts = _corpus(200)
    _build(texts).save(tmp_path / "0")
    for step in range(3):  # 4 documents a step: stacked deltas far below the merge threshold
        old = KeywordIndex.load(tmp_path / str(step))
        changed = {f"d{10 * step + k:04d}" for k in range(3)}
        for d in changed:
            texts[d] = f"rare{step} w1 parse_header"
        texts[f"e{step}"] = "brand_new_term w2"
        got = _update(old, texts, changed)
        assert got.layered is not None and got.layered.delta.size == 4 * (step + 1)
        got.save(tmp_path / str(step + 1))
        linked = [name for name in layers.BASE_FILES if (tmp_path / "0" / name).is_file()]
        assert len(linked) >= 8  # a build without a token numbering has no numbers.npy nor numbering.txt
        for name in linked:  # the first build's files, linked
            assert os.stat(tmp_path / "0" / name).st_ino == os.stat(tmp_path / str(step + 1) / name).st_ino, name
        loaded = KeywordIndex.load(tmp_path / str(step + 1))
        assert loaded.layered is not None
        _same(loaded, _build(texts))
    assert loaded.top("brand_new_term", 5)[0][0] == "e0"


def test_an_index_kept_in_memory_after_its_save_links_what_it_saved(tmp_path: Path) -> None:
    """A process that keeps the index it saved (merged or layered) and updates it again links the files
    of that save, whether the directory was replaced or the index saved elsewhere."""
    texts = _corpus(100)
    _build(texts).save(tmp_path / "a")
    index = KeywordIndex.load(tmp_path / "a")
    first = os.stat(tmp_path / "a" / "bm25" / "indices.csc.index.npy").st_ino
    for step, target in enumerate(["a", "b", "b", "c"]):  # "a" replaced at once, "b" saved over
        texts[f"d{step:04d}"] = f"w{step} parse_header"
        index = _update(index, texts, {f"d{step:04d}"})
        assert index.layered is not None
        index.save(tmp_path / target)
        assert os.stat(tmp_path / target / "bm25" / "indices.csc.index.npy").st_ino == first
        _same(KeywordIndex.load(tmp_path / target), _build(texts))
    merged = spliced_whole(index, index.ids, np.arange(len(index)), np.zeros(0, np.int32), np.zeros(0, np.int64), [])
    assert merged is not None and merged.layered is None
    merged.save(tmp_path / "d")
    texts["d0050"] = "w9"
    again = _update(merged, texts, {"d0050"})
    again.save(tmp_path / "e")
    assert os.stat(tmp_path / "e" / "bm25" / "data.csc.index.npy").st_ino == \
        os.stat(tmp_path / "d" / "bm25" / "data.csc.index.npy").st_ino
    _same(KeywordIndex.load(tmp_path / "e"), _build(texts))


def test_past_the_share_an_update_merges_into_a_full_base(tmp_path: Path) -> None:
    texts = _corpus(40)
    _build(texts).save(tmp_path / "0")
    index = KeywordIndex.load(tmp_path / "0")
    kinds = []
    for step in range(6):
        changed = {f"d{3 * step + k:04d}" for k in range(3)}
        for d in changed:
            texts[d] = f"w{step} w{step + 1} again{step}"
        index = _update(index, texts, changed)
        kinds.append("layered" if index.layered is not None else "full")
        _same(index, _build(texts))
    # a replaced document counts twice (dead in the base, live in the delta): 6 of 40, then 12 > 10 merges
    assert kinds == ["layered", "full"] * 3


def test_a_base_replaced_since_it_was_loaded_is_written_not_linked(tmp_path: Path) -> None:
    texts = _corpus(100)
    _build(texts).save(tmp_path / "cache")
    old = KeywordIndex.load(tmp_path / "cache")
    other = dict(texts, d0000="completely other words")
    _build(other).save(tmp_path / "cache")  # another process's newer index swapped in meanwhile
    texts["d0001"] = "w3 w3 parse_header"
    got = _update(old, texts, {"d0001"})
    assert got.layered is not None
    got.save(tmp_path / "cache")
    loaded = KeywordIndex.load(tmp_path / "cache")
    _same(loaded, _build(texts))


def test_a_save_that_fails_midway_leaves_the_index_that_was_there(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _corpus(100)
    _build(texts).save(tmp_path / "cache", key="before")
    old = KeywordIndex.load(tmp_path / "cache")
    texts["d0001"] = "w3 w3 parse_header"
    got = _update(old, texts, {"d0001"})

    def half(delta: Delta, directory: Path) -> None:
        directory.mkdir(parents=True)
        np.save(directory / "source.npy", np.asarray(delta.source))
        raise OSError("disk full")

    monkeypatch.setattr(Delta, "save", half)
    with pytest.raises(OSError, match="disk full"):
        got.save(tmp_path / "cache", key="after")
    assert KeywordIndex.saved_key(tmp_path / "cache") == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]  # no scratch directory left
    monkeypatch.undo()
    _same(KeywordIndex.load(tmp_path / "cache"), old)


def test_an_inconsistent_delta_is_an_error_to_rebuild_on(tmp_path: Path) -> None:
    from acms.errors import StoreError

    texts = _corpus(100)
    _build(texts).save(tmp_path / "0")
    texts["d0001"] = "w3"
    _update(KeywordIndex.load(tmp_path / "0"), texts, {"d0001"}).save(tmp_path / "1")
    np.save(tmp_path / "1" / "delta" / "source.npy", np.arange(5, dtype=np.int32))
    with pytest.raises(StoreError, match="inconsistent"):
        KeywordIndex.load(tmp_path / "1")


# A saver in another process: it updates the index, links the base and writes the delta's first file,
# says where, then waits to be killed.
_SAVER = textwrap.dedent("""
    import sys, numpy as np
    from pathlib import Path
    from acms.index.keyword import KeywordIndex
    from acms.index.layers import Delta
    from acms.index.splice import spliced
    cache = Path(sys.argv[1])
    old = KeywordIndex.load(cache)
    source = np.arange(len(old), dtype=np.int64)
    source[1] = -1
    got = spliced(old, old.ids, source, np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64), [])
    assert got is not None and got.layered is not None
    def half(delta, directory):
        directory.mkdir(parents=True)
        np.save(directory / "source.npy", np.asarray(delta.source))
        print(directory, flush=True)
        sys.stdin.read()
    Delta.save = half
    got.save(cache, key="after")
""")


def test_a_save_killed_between_files_leaves_the_index_that_was_there(tmp_path: Path) -> None:
    texts = _corpus(100)
    _build(texts).save(tmp_path / "cache", key="before")
    proc = subprocess.Popen([sys.executable, "-c", _SAVER, str(tmp_path / "cache")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    half = Path(proc.stdout.readline().strip())
    assert (half / "source.npy").is_file() and (half.parent / "bm25" / "data.csc.index.npy").is_file()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdin.close()
    proc.stdout.close()
    assert KeywordIndex.saved_key(tmp_path / "cache") == "before"
    _same(KeywordIndex.load(tmp_path / "cache"), _build(texts))
    assert half.parent in sweep(tmp_path)  # what the killed saver left goes with the next sweep
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]


def test_a_loaded_layered_index_reads_its_ids_where_they_are(tmp_path: Path) -> None:
    """Loaded, a layered index's ids are read one by one or a few at once (the base's from its memory-mapped
    column, the delta's from its list), and are every id of a full build, in order."""
    texts = {f"frag{i:03d}": f"w{i % 7} w{i % 5} parse_header" for i in range(60)}
    base = _build(texts)
    base.save(tmp_path / "base")
    texts = {**{d: t for d, t in texts.items() if d not in {"frag003", "frag040"}}, "frag041": "HTTPServer x",
             "frag0055": "read_bytes", "zz": "return"}
    _update(KeywordIndex.load(tmp_path / "base"), texts, {"frag041"}).save(tmp_path / "layered")
    loaded = KeywordIndex.load(tmp_path / "layered")
    want = sorted(texts)
    ids = loaded.ids
    assert isinstance(ids, layers.GatheredIds) and len(ids) == len(want)
    assert [ids[i] for i in range(len(want))] == want and ids[-1] == "zz" and ids[np.int64(5)] == want[5]
    assert ids[3:9] == want[3:9] and ids.take(np.asarray([0, 40, 6, 41])) == [want[i] for i in (0, 40, 6, 41)]
    assert ids == want and list(ids) == want
    with pytest.raises(IndexError):
        ids[len(want)]
    assert loaded.top("HTTPServer read_bytes", 2) == _build(texts).top("HTTPServer read_bytes", 2)
