"""The vector cache saves its base's ids beside the base (linked with it, never written again by an
update) and only what changed in its manifest; a process keeps the matrix it saved or loaded last per
directory while the directory's manifest is that one's, and drops it the moment another process
replaced it; an update carries the lookups the matrix made (live rows, positions, text codes) and they
are what a matrix made afresh from the same ids works out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from acms.index import vectors
from acms.index.vectors import (
    MatrixWriter,
    VectorMatrix,
    text_codes,
    written_rows,
    wrote_rows,
)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _iri(i: int, text: int) -> str:
    return f"https://w3id.org/acms/id/p/frag/{i:012x}/micro/{text:016x}"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


def _base(tmp_path: Path, rng: np.random.Generator, n: int = 200) -> tuple[list[str], np.ndarray]:
    ids = sorted(_iri(i, int(rng.integers(0, 2**63))) for i in range(n))
    rows = _unit(rng.normal(size=(n, 8)))
    VectorMatrix(ids, rows, "k0", "m").save(tmp_path / "v0")
    return ids, rows


def _on_disk(directory: Path) -> VectorMatrix:
    """The matrix as a process that kept nothing reads it."""
    vectors._kept.clear()
    loaded = VectorMatrix.load(directory)
    assert loaded is not None
    return loaded


def _live(matrix: VectorMatrix) -> dict[str, bytes]:
    return {frag: matrix.row(i).tobytes() for i, frag in matrix.live()}


def test_an_update_links_the_base_and_its_ids_and_writes_only_what_changed(tmp_path: Path, rng: np.random.Generator) -> None:
    ids, rows = _base(tmp_path, rng)
    loaded = VectorMatrix.load(tmp_path / "v0")
    assert loaded is not None and loaded.ids == ids and np.array_equal(np.asarray(loaded.matrix), rows)
    dead = sorted(set(rng.choice(200, 30, replace=False).tolist()))
    kept = np.asarray([i for i in range(200) if i not in dead])
    new_ids = [_iri(1000 + j, j) for j in range(12)]
    new_rows = _unit(rng.normal(size=(12, 8)))
    updated = loaded.updated(kept, new_ids, new_rows, "k1")
    by_hand = VectorMatrix([("" if i in dead else frag) for i, frag in enumerate(ids)] + new_ids, loaded.matrix, "k1", "m",
                           new_rows, loaded.source)
    assert updated.ids == by_hand.ids and np.array_equal(np.asarray(updated.tail), new_rows)
    updated.save(tmp_path / "v1")
    for name in ("matrix.npy", "ids.txt", "texts.npy"):  # the base's files: linked, not written
        assert (tmp_path / "v1" / name).stat().st_ino == (tmp_path / "v0" / name).stat().st_ino, name
    manifest = json.loads((tmp_path / "v1" / "manifest.json").read_text())
    assert "ids" not in manifest and manifest["dead"] == dead and manifest["tail"] == new_ids
    again = _on_disk(tmp_path / "v1")
    assert again.ids == by_hand.ids and again.key == "k1" and _live(again) == _live(by_hand)
    for query in (rows[3], new_rows[2], rng.normal(size=8).astype(np.float32)):
        assert again.top(query, 7) == by_hand.top(query, 7) == by_hand.compacted().top(query, 7)
    # a second update over the first: the same base, still linked; tail rows let go too
    second = again.updated(np.asarray([i for i, _ in again.live()][5:]), [_iri(2000, 1)], new_rows[:1], "k2")
    second.save(tmp_path / "v2")
    assert (tmp_path / "v2" / "ids.txt").stat().st_ino == (tmp_path / "v0" / "ids.txt").stat().st_ino
    assert _on_disk(tmp_path / "v2").ids == second.ids


def test_a_process_keeps_what_it_saved_until_another_process_replaces_it(tmp_path: Path, rng: np.random.Generator) -> None:
    _base(tmp_path, rng)
    first = VectorMatrix.load(tmp_path / "v0")
    assert first is not None and VectorMatrix.load(tmp_path / "v0") is first  # kept: not read again
    saved = first.updated(np.arange(100), [], np.zeros((0, 8), dtype=np.float32), "k1").save(tmp_path / "v0")
    assert VectorMatrix.load(tmp_path / "v0") is saved and saved.key == "k1"
    other = ("import numpy as np, sys\nfrom acms.index.vectors import VectorMatrix\n"
             "VectorMatrix(['x', 'y'], np.eye(2, dtype=np.float32), 'k9', 'm').save(sys.argv[1])\n")
    subprocess.run([sys.executable, "-c", other, str(tmp_path / "v0")], check=True)
    replaced = VectorMatrix.load(tmp_path / "v0")
    assert replaced is not None and replaced is not saved and (replaced.ids, replaced.key) == (["x", "y"], "k9")


def test_an_older_cache_with_every_id_in_its_manifest_loads_and_is_saved_in_the_new_form(
        tmp_path: Path, rng: np.random.Generator) -> None:
    old = tmp_path / "old"
    old.mkdir()
    ids = [_iri(i, i) for i in range(5)]
    rows = _unit(rng.normal(size=(5, 4)))
    np.save(old / "matrix.npy", rows)
    (old / "manifest.json").write_text(json.dumps({"ids": ids, "key": "k", "model_id": "m"}))
    loaded = VectorMatrix.load(old)
    assert loaded is not None and loaded.ids == ids and np.array_equal(np.asarray(loaded.matrix), rows)
    loaded.updated(np.asarray([0, 2, 3, 4]), [_iri(9, 9)], rows[:1], "k1").save(tmp_path / "new")
    again = _on_disk(tmp_path / "new")
    assert again.ids == [ids[0], "", *ids[2:], _iri(9, 9)]
    assert (tmp_path / "new" / "matrix.npy").stat().st_ino == (old / "matrix.npy").stat().st_ino


def test_an_update_carries_the_lookups_a_fresh_matrix_works_out(tmp_path: Path, rng: np.random.Generator) -> None:
    _base(tmp_path, rng)
    matrix = _on_disk(tmp_path / "v0")
    _ = matrix.positions, matrix.live_mask, matrix.text_codes  # worked out once, then carried
    for step in range(4):
        live = [i for i, _ in matrix.live()]
        kept = np.asarray(sorted(rng.choice(live, len(live) - 7, replace=False).tolist()))
        new_ids = [_iri(5000 + 10 * step + j, 7 * step + j) for j in range(5)]
        matrix = matrix.updated(kept, new_ids, _unit(rng.normal(size=(5, 8))), f"k{step}")
        fresh = VectorMatrix(list(matrix.ids), matrix.matrix, matrix.key, matrix.model_id, matrix.tail, matrix.source)
        assert matrix.positions == fresh.positions
        assert np.array_equal(matrix.live_mask, fresh.live_mask)
        assert np.array_equal(matrix.text_codes[fresh.live_mask], fresh.text_codes[fresh.live_mask])  # a dead row's: any
        assert matrix.rows_of(new_ids + ["absent"]).tolist() == [fresh.positions[f] for f in new_ids] + [-1]
        assert matrix.garbage() == pytest.approx((len(matrix.ids) - len(fresh.live()) + len(matrix.tail)) / len(fresh.live()))
    whole = matrix.compacted()  # the codes go with their rows, and are saved beside the new base
    assert whole.ids == sorted(f for f in matrix.ids if f) and np.array_equal(whole.text_codes, text_codes(whole.ids))
    whole.save(tmp_path / "whole")
    assert np.array_equal(_on_disk(tmp_path / "whole").text_codes, text_codes(whole.ids))


def test_text_codes_and_known_texts(tmp_path: Path) -> None:
    odd = ["", "x", "a/0123456789abcdeF", "a/0123456789abcdef0", "/0123456789abcdef", "é/0123456789abcdef-2",
           "a/é123456789abcde", "b/-123456789abcdef", "c/0123456789abcdeg", "0123456789abcdef", "p/é/ffffffffffffffff-12"]
    codes = text_codes(odd).tolist()
    assert codes == [vectors._text_code(frag) for frag in odd]
    assert codes[0] == 0 and codes[4] == codes[5] == codes[9] == 0x0123456789ABCDEF and codes[-1] == 2**64 - 1
    assert len(set(codes[1:4] + codes[6:9])) == 6  # no hash where the last segment starts: each its own hash
    for few in (["x"], ["", ""], ["/0123456789abcdef"], ["a/b", "0123456789abcdef"], []):  # short ones, all told
        assert text_codes(few).tolist() == [vectors._text_code(frag) for frag in few]
    ids = [_iri(i, 100 + i) for i in range(6)]
    writer = MatrixWriter(tmp_path / "w", 2, "m")
    writer.add(ids, _unit(np.ones((6, 2))))
    writer.close("k")
    matrix = _on_disk(tmp_path / "w")
    matrix = matrix.updated(np.asarray([0, 1, 2, 3]), [_iri(50, 7)], _unit(np.ones((1, 2))), "k2")  # 4, 5 let go
    asked = [_iri(99, 100), _iri(98, 104), _iri(97, 7), _iri(96, 5)] + [_iri(200 + i, 3) for i in range(70)]
    known = {frag.rsplit("/", 1)[-1] for frag in matrix.ids if frag}  # what the drift count compared before
    want = [frag.rsplit("/", 1)[-1] in known for frag in asked]
    assert want[:4] == [True, False, True, False]
    assert matrix.knows_texts(asked[:4]) == want[:4] and matrix.knows_texts(asked) == want  # few and many


def test_rows_written_are_given_once_to_their_directory_state_and_model(tmp_path: Path) -> None:
    rows = np.eye(3, dtype=np.float32)
    wrote_rows(tmp_path / "v", "k", "m", ["a", "b", "c"], rows)
    assert written_rows(tmp_path / "v", "k", "other") == {}  # asked for another model: let go
    assert written_rows(tmp_path / "v", "k", "m") == {}
    wrote_rows(tmp_path / "v", "k", "m", ["a", "b", "c"], rows)
    given = written_rows(tmp_path / "v", "k", "m")
    assert sorted(given) == ["a", "b", "c"] and given["b"].tobytes() == rows[1].tobytes()
    assert written_rows(tmp_path / "v", "k", "m") == {}
    wrote_rows(tmp_path / "v", "k", "m", ["a"], rows[:1])
    assert written_rows(tmp_path / "w", "k", "m") == {} and written_rows(tmp_path / "v", "k2", "m") == {}


def _segment(files: dict[str, list[str]], unplaced: list[str]) -> tuple[list[str], list[str], np.ndarray]:
    """A segment's fragments (sorted), its files and each fragment's file number (-1: none)."""
    names = sorted(files)
    where = {frag: names.index(file) for file, frags in files.items() for frag in frags} | {frag: -1 for frag in unplaced}
    frags = sorted(where)
    return frags, names, np.asarray([where[frag] for frag in frags], dtype=np.int64)


def test_a_plan_after_a_planned_update_keeps_the_rows_of_unchanged_files_without_lookups(
        monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator, tmp_path: Path) -> None:
    """Edits, a file added and one removed, fragments with no file, one fragment the matrix lacks: each plan
    is the one looking every fragment up makes, and the updated matrix holds the segment's fragments."""
    files = {f"urn:file:{k}": [_iri(100 * k + j, 100 * k + j) for j in range(5)] for k in range(6)}
    unplaced = [_iri(9000, 1)]
    frags, names, file_of = _segment(files, unplaced)
    matrix = VectorMatrix(frags, _unit(rng.normal(size=(len(frags), 4))), "k0", "m")
    lookups: list[int] = []
    rows_of = VectorMatrix.rows_of

    def counted(self: VectorMatrix, asked: list[str]) -> np.ndarray:
        lookups.append(len(asked))
        return rows_of(self, asked)

    monkeypatch.setattr(VectorMatrix, "rows_of", counted)
    fresh_id = iter(range(10_000, 20_000))
    steps: list[tuple[set[str], bool]] = []
    for step in range(6):
        changed: set[str] = set()
        if step == 3:  # a file removed, one added
            changed |= {"urn:file:1", "urn:file:9"}
            del files["urn:file:1"]
            files["urn:file:9"] = [_iri(next(fresh_id), 3) for _ in range(4)]
        else:
            edited = f"urn:file:{(2 * step) % 6 if step != 1 else 0}"
            changed.add(edited)
            kept = files[edited][:2]  # fragments above the edit keep their IRIs
            files[edited] = kept + [_iri(next(fresh_id), step) for _ in range(3)]
        frags, names, file_of = _segment(files, unplaced)
        if step == 4:  # a fragment of an unchanged file the matrix has no row for (an embedding that failed)
            gone = files["urn:file:5"][0]
            knew = {name: matrix.__dict__[name] for name in ("_row_files", "_numbers")}
            matrix = matrix.updated(np.asarray([i for i, f in matrix.live() if f != gone]), [], np.zeros((0, 4)), "k")
            matrix.__dict__.update(knew)  # the same rows, still knowing their files
        lookups.clear()
        plan = matrix.plan(frags, names, file_of, changed)
        steps.append((changed, bool(lookups)))
        slow = VectorMatrix(matrix.ids, matrix.matrix, matrix.key, matrix.model_id, matrix.tail)  # knows no files
        want = slow.plan(frags, names, file_of, changed)
        assert sorted(plan.kept.tolist()) == sorted(want.kept.tolist()) and plan.again.tolist() == want.again.tolist()
        again = [frags[i] for i in plan.again.tolist()]
        if step != 3:  # the edited file's fragments that kept their IRIs keep their rows, unless the run renewed them
            assert not set(kept) & set(again) and len(again) == 3 + (step == 4) + 1  # the new ones, the lacking, no file
            renewed = matrix.plan(frags, names, file_of, changed, {kept[0]})
            assert [frags[i] for i in renewed.again.tolist()] == sorted([*again, kept[0]])
            assert renewed.again.tolist() == slow.plan(frags, names, file_of, changed, {kept[0]}).again.tolist()
        matrix = matrix.updated(plan.kept, again, _unit(rng.normal(size=(len(again), 4))), f"k{step}", plan, frags)
        assert sorted(f for f in matrix.ids if f) == frags
    assert [looked for _, looked in steps] == [True, False, False, False, True, False]  # the first; the lacking row
    # saved and read by another process: it knows each row's file too, and plans without a lookup
    matrix.save(tmp_path / "planned")
    again = _on_disk(tmp_path / "planned")
    edited = "urn:file:3"
    files[edited] = files[edited][:1] + [_iri(next(fresh_id), 9)]
    frags, names, file_of = _segment(files, unplaced)
    lookups.clear()
    plan = again.plan(frags, names, file_of, {edited})
    assert lookups == []
    want = VectorMatrix(again.ids, again.matrix, again.key, again.model_id, again.tail).plan(frags, names, file_of, {edited})
    assert sorted(plan.kept.tolist()) == sorted(want.kept.tolist()) and plan.again.tolist() == want.again.tolist()

