"""One odd file never blocks a project: odd names, odd contents, files that move under the reader,
files that fail the shapes. Real stores on disk, projects made here, plain walk and git."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import Quad

from acms.cli.main import cli
from acms.config import Settings, load_settings
from acms.errors import ValidationFailed
from acms.ingest import emit, walker
from acms.service.indexing import run as index_run
from acms.service.indexing import IndexReport, index_project
from acms.ingest.walker import (
    ListedFile,
    SkipReason,
    escape_path,
    list_files,
    path_bytes,
    read_source,
    unescape_path,
)
from acms.store.oxigraph import OxigraphStore
from acms.vocab import UKO
from tests.ontology.conftest import write_extension

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# name on disk (bytes) -> what uko:path must hold
ODD_NAMES: dict[bytes, str] = {
    b"bad\xff.py": "bad\\xff.py",
    b"new\nline.py": "new\\nline.py",
    b"tab\tname.txt": "tab\\tname.txt",
    b"-dash.py": "-dash.py",
    b"--help.md": "--help.md",
    b"back\\slash.txt": "back\\\\slash.txt",
    b"L" * 246 + b".txt": "L" * 246 + ".txt",  # 250 bytes
    "\u00e9t\u00e9-".encode() * 41 + b".md": "\u00e9t\u00e9-" * 41 + ".md",  # 250 bytes, valid UTF-8
    b"odd\xfe dir/inner.py": "odd\\xfe dir/inner.py",
    b"cr\rname.txt": "cr\\rname.txt",
    "nel\u0085ls\u2028.txt".encode(): "nel\\xc2\\x85ls\\xe2\\x80\\xa8.txt",  # what splitlines() splits on
}
ODD_CONTENTS: dict[str, bytes] = {
    "empty.py": b"",
    "ws.py": b"   \n\n\t \n",
    "comment.py": b"# only a comment\n",
    "cookie.py": b"# -*- coding: lala -*-\n",
    "empty.md": b"",
    "ws.md": b"\n\n   \n",
    "empty.txt": b"",
    "empty.rst": b"",
    "bom.py": b"\xef\xbb\xbf",
    "sub/file.py": b"x = 1\n",  # a module named "file" outside a package (pylint's regrtest_data)
}
ORDINARY: dict[str, str] = {
    "main.py": 'def main():\n    """Entry."""\n    return 1\n',
    "pkg/__init__.py": "",
    "pkg/mod.py": "class A:\n    def m(self):\n        return 2\n",
    "README.md": "# Title\n\nSome text.\n",
    "notes.txt": "plain notes\n",
}


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("HOME", str(tmp_path))


def _write(root: Path, rel: str | bytes, content: bytes) -> Path:
    p = Path(os.fsdecode(os.path.join(os.fsencode(root), os.fsencode(rel))))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content)
    return p


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=cwd, check=True, capture_output=True)


def _plain(root: Path) -> None:
    pass


def _git_repo(root: Path) -> None:
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")


MODES = [pytest.param(_plain, id="walk"), pytest.param(_git_repo, id="git", marks=needs_git)]


def _project(root: Path, odd: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "acms.toml").write_text("embed_on_index = false\n", encoding="utf-8")
    for rel, text in ORDINARY.items():
        _write(root, rel, text.encode())
    if odd:
        for raw in ODD_NAMES:
            _write(root, raw, b"value = 1\n")
        for rel, content in ODD_CONTENTS.items():
            _write(root, rel, content)
    return root


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _store(root: Path) -> OxigraphStore:
    return OxigraphStore(root / ".acms" / "graph")


def _file_paths(root: Path) -> dict[str, int]:
    """uko:path of every File -> its number of fragments."""
    store = _store(root)
    try:
        rows = store.select("SELECT ?p (COUNT(?fr) AS ?n) WHERE { GRAPH ?g { ?f a uko:File ; uko:path ?p . "
                            "OPTIONAL { ?f uko:hasFragment ?fr } } } GROUP BY ?p")
        return {r["p"].value: int(r["n"].value) for r in rows}
    finally:
        store.close()


def _quads(root: Path) -> set[Quad]:
    store = _store(root)
    try:
        return set(store.raw.quads_for_pattern(None, None, None, None))
    finally:
        store.close()


def _index(root: Path, settings: Settings | None = None) -> IndexReport:
    store = _store(root)
    try:
        return index_project(root, store, settings or load_settings(root))
    finally:
        store.close()


# --- the escaped form ----------------------------------------------------------------------------


def test_escape_is_lossless_and_identity_on_ordinary_names() -> None:
    for name in ["a.py", "dir/sub/x.md", "caf\u00e9 \u65e5\u672c.txt", "spaces and #hash?.md", "100%.txt"]:
        assert escape_path(name) == name
    every_byte = bytes(b for b in range(1, 256) if b != ord("/"))
    samples = [every_byte, every_byte[::-1], b"\\x41", b"\\\\n", b"\xed\xb0\x80", b"\xc3", b"a\\", b"\\"]
    for raw in samples:
        os_name = os.fsdecode(raw)
        escaped = escape_path(os_name)
        assert all(ord(c) >= 0x20 and c != "\x7f" for c in escaped)  # one line, no control characters
        assert escaped.splitlines() == [escaped]
        escaped.encode("utf-8")  # no lone surrogates: storable as an RDF literal
        assert unescape_path(escaped) == os_name
        assert path_bytes(escaped) == raw
    for raw, expected in ODD_NAMES.items():
        assert escape_path(os.fsdecode(raw)) == expected
        assert path_bytes(expected) == raw and unescape_path(expected) == os.fsdecode(raw)


# --- a project full of odd names and contents ----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_odd_names_and_contents_index_and_round_trip(tmp_path: Path, mode: Callable[[Path], None]) -> None:
    root = _project(tmp_path / "proj")
    mode(root)
    code, out, err = _cli("index", str(root), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["quarantined"] == {}
    assert report["parse_errors"] == {}
    assert report["used_git"] == (mode is _git_repo)
    assert set(report["skipped"]) <= {"build", "hidden"}, report["skipped"]

    stored = _file_paths(root)
    expected = set(ORDINARY) | set(ODD_NAMES.values()) | set(ODD_CONTENTS) | {"acms.toml"}
    assert set(stored) == expected
    assert all(n >= 1 for n in stored.values()), stored  # every File has a fragment
    for raw, escaped in ODD_NAMES.items():  # the name in the graph gives back the exact bytes on disk
        assert path_bytes(escaped) == raw
        assert Path(os.fsdecode(os.fsencode(root) + b"/" + path_bytes(escaped))).is_file()

    store = _store(root)
    try:
        iri = store.select("SELECT ?f WHERE { GRAPH ?g { ?f uko:path 'bad\\\\xff.py' } }")
        assert [r["f"].value for r in iri] == ["https://w3id.org/acms/id/proj/file/bad%5Cxff.py"]
        refs = store.select("SELECT ?r WHERE { GRAPH ?g { ?x uko:sourceRef ?r } }")
        assert all("\n" not in r["r"].value and "\t" not in r["r"].value for r in refs)
    finally:
        store.close()

    code, out, _ = _cli("stats", "-C", str(root), "--json")
    assert code == 0
    stats = json.loads(out)
    assert sum(v["files"] for v in stats["languages"].values()) == len(expected)
    assert _cli("validate", "-C", str(root))[0] == 0  # pyshacl over the whole store

    before = _quads(root)  # idempotent: a second run writes nothing
    code, out, err = _cli("index", str(root), "--json")
    assert code == 0, err
    again = json.loads(out)
    assert again["up_to_date"] and again["triples_written"] == 0
    assert _quads(root) == before


def test_verbose_output_is_one_line_per_skipped_file(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", odd=False)
    _write(root, b"gone\nbinary\xff.bin", b"\x00\x01")
    _write(root, b"latin\xe9\n.txt", "caf\u00e9\n".encode("latin-1"))
    code, out, err = _cli("index", str(root), "--verbose")
    assert code == 0, err
    assert "  skip binary: gone\\nbinary\\xff.bin" in out.splitlines()
    assert "  skip not-utf8: latin\\xe9\\n.txt" in out.splitlines()
    assert "Traceback" not in out + err


# --- files that move under the reader -------------------------------------------------------------


def test_file_deleted_between_listing_and_reading_is_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "proj", odd=False)
    _write(root, b"doomed\xff.py", b"x = 1\n")
    real = index_run.list_files

    def list_then_delete(*args: object, **kwargs: object) -> walker.Listing:
        listing = real(*args, **kwargs)  # type: ignore[arg-type]
        os.unlink(os.fsencode(root) + b"/doomed\xff.py")
        (root / "notes.txt").unlink()
        (root / "notes.txt").mkdir()  # no longer a file either
        return listing

    monkeypatch.setattr(index_run, "list_files", list_then_delete)
    report = _index(root)
    assert report.skipped["vanished"] == ["doomed\\xff.py", "notes.txt"]
    assert set(_file_paths(root)) == set(ORDINARY) - {"notes.txt"} | {"acms.toml"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_file_replaced_by_a_fifo_after_listing_is_unreadable_not_waited_for(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a FIFO for reading waits for a writer: no one would ever write to it, and the run hung."""
    root = _project(tmp_path / "proj", odd=False)
    real = index_run.list_files

    def list_then_replace(*args: object, **kwargs: object) -> walker.Listing:
        listing = real(*args, **kwargs)  # type: ignore[arg-type]
        (root / "notes.txt").unlink()
        os.mkfifo(root / "notes.txt")
        return listing

    def unblock() -> None:  # were the reader waiting, a writer comes and goes: the test fails, not hangs
        with contextlib.suppress(OSError):
            os.close(os.open(root / "notes.txt", os.O_WRONLY | os.O_NONBLOCK))
            waited.append(True)

    waited: list[bool] = []
    monkeypatch.setattr(index_run, "list_files", list_then_replace)
    timer = threading.Timer(20, unblock)
    timer.start()
    try:
        report = _index(root)
    finally:
        timer.cancel()
    assert waited == []
    assert report.skipped["unreadable"] == ["notes.txt"]
    assert set(_file_paths(root)) == set(ORDINARY) - {"notes.txt"} | {"acms.toml"}


def test_file_deleted_during_the_walk_is_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "proj", odd=False)
    real = walker._walk_paths

    def walk_then_delete(*args: object, **kwargs: object) -> list[str]:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        (root / "main.py").unlink()
        return found

    monkeypatch.setattr(walker, "_walk_paths", walk_then_delete)
    listing = list_files(root)
    assert listing.skipped[SkipReason.VANISHED] == ["main.py"]
    assert "main.py" not in [f.path for f in listing.files]


def _listed(root: Path, rel: str, content: bytes) -> ListedFile:
    p = _write(root, rel, content)
    return ListedFile(path=rel, abs_path=p, size=len(content))


def test_file_changed_while_reading_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _listed(tmp_path, "a.py", b"x = 1\n")
    real = walker._read_handle
    calls = []

    def change_once(fh, limit):  # type: ignore[no-untyped-def]
        data = real(fh, limit)
        calls.append(data)
        if len(calls) == 1:
            f.abs_path.write_bytes(b"x = 2  # grown\n")
        return data

    monkeypatch.setattr(walker, "_read_handle", change_once)
    got = read_source(f)
    assert not isinstance(got, SkipReason)
    assert got.text == "x = 2  # grown\n" and got.size == len(b"x = 2  # grown\n")
    assert len(calls) == 2


def test_file_that_never_holds_still_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _listed(tmp_path, "log.txt", b"a\n")
    real = walker._read_handle

    def keep_appending(fh, limit):  # type: ignore[no-untyped-def]
        data = real(fh, limit)
        with f.abs_path.open("ab") as out:
            out.write(b"more\n")
        return data

    monkeypatch.setattr(walker, "_read_handle", keep_appending)
    assert read_source(f) is SkipReason.CHANGED_WHILE_READING

    def delete(fh, limit):  # type: ignore[no-untyped-def]
        data = real(fh, limit)
        f.abs_path.unlink()
        return data

    monkeypatch.setattr(walker, "_read_handle", delete)
    assert read_source(f) is SkipReason.VANISHED


def test_changing_file_reported_by_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "proj", odd=False)
    real = walker._read_handle

    def busy_notes(fh, limit):  # type: ignore[no-untyped-def]
        data = real(fh, limit)
        if fh.name.endswith("notes.txt"):
            with open(fh.name, "ab") as out:
                out.write(b"x\n")
        return data

    monkeypatch.setattr(walker, "_read_handle", busy_notes)
    code, out, err = _cli("index", str(root), "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"]["changed-while-reading"] == ["notes.txt"]
    assert "notes.txt" not in _file_paths(root)


def test_file_grown_past_the_limit_since_listing(tmp_path: Path) -> None:
    f = _listed(tmp_path, "big.txt", b"small\n")
    f.abs_path.write_bytes(b"x" * 1000)
    assert read_source(f, max_bytes=100) is SkipReason.TOO_LARGE
    assert not isinstance(read_source(f, max_bytes=1000), SkipReason)


# --- validation failures are isolated to their file -----------------------------------------------

_LINES_SHAPE = (
    "<https://example.org/ext/short#ShortFile> a sh:NodeShape ; sh:targetClass uko:File ;\n"
    "  sh:property <https://example.org/ext/short#ShortFile-lineCount> .\n"
    "<https://example.org/ext/short#ShortFile-lineCount> a sh:PropertyShape ; sh:path uko:lineCount ;\n"
    "  sh:maxInclusive 5 ; sh:message \"a file has at most 5 lines\" .\n"
)
_ONTOLOGY = 'ex:Marker a owl:Class ; rdfs:label "marker"@en ; rdfs:comment "Unused."@en .\n'


def _short_files_project(root: Path) -> Path:
    _project(root, odd=False)
    folder = write_extension(root.parent, "short", _ONTOLOGY, shapes=_LINES_SHAPE)  # outside: not indexed
    (root / "acms.toml").write_text(f'embed_on_index = false\nextensions = ["{folder}"]\n', encoding="utf-8")
    _write(root, "long.py", b"".join(b"v%d = %d\n" % (i, i) for i in range(10)))
    return root


def test_file_violating_an_extension_shape_is_quarantined(tmp_path: Path) -> None:
    root = _short_files_project(tmp_path / "proj")
    code, out, err = _cli("index", str(root), "--verbose")
    assert code == 0, err
    assert "warning: 1 file(s) quarantined" in out and "long.py" in out
    focus = "https://w3id.org/acms/id/proj/file/long.py"
    line = f"  quarantined: long.py: {focus} violates https://example.org/ext/short#ShortFile-lineCount"
    assert any(ln.startswith(line) for ln in out.splitlines()), out
    assert "a file has at most 5 lines" in out

    stored = _file_paths(root)
    assert "long.py" not in stored
    assert set(ORDINARY) <= set(stored)

    # unchanged: nothing written, still reported
    before = _quads(root)
    code, out, err = _cli("index", str(root), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data["quarantined"]) == ["long.py"]
    assert focus in data["quarantined"]["long.py"] and "ShortFile-lineCount" in data["quarantined"]["long.py"]
    assert data["triples_written"] == 0 and data["up_to_date"]
    assert _quads(root) == before

    # fixed: indexed; broken again: its stored version goes, the others stay as they are
    _write(root, "long.py", b"v = 1\n")
    assert _cli("index", str(root))[0] == 0
    assert "long.py" in _file_paths(root)
    _write(root, "long.py", b"a = 1\n" * 8)
    _write(root, "notes.txt", b"changed notes\n")
    code, out, err = _cli("index", str(root), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data["quarantined"]) == ["long.py"] and data["files_indexed"] == 1
    stored = _file_paths(root)
    assert "long.py" not in stored and "notes.txt" in stored


def test_crafted_invalid_file_is_quarantined_the_rest_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "proj")
    real = emit.emit_file

    def drop_hash(minter, source, *args, **kwargs):  # type: ignore[no-untyped-def]
        batch = real(minter, source, *args, **kwargs)
        if source.path in ("pkg/mod.py", "new\\nline.py"):
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", drop_hash)
    report = _index(root)
    assert sorted(report.quarantined) == ["new\\nline.py", "pkg/mod.py"]
    assert "contentHash" in report.quarantined["pkg/mod.py"]
    stored = _file_paths(root)
    assert "pkg/mod.py" not in stored and "new\\nline.py" not in stored
    assert {"main.py", "pkg/__init__.py", "README.md", "bad\\xff.py"} <= set(stored)
    store = _store(root)
    try:  # the tree holds no dangling file
        contained = store.select("SELECT ?f WHERE { GRAPH ?g { ?d uko:contains ?f . FILTER NOT EXISTS { "
                                 "GRAPH ?h { ?f a ?t } } } }")
        assert contained == []
    finally:
        store.close()


def test_a_violation_no_file_owns_still_rejects_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "proj", odd=False)
    _index(root)
    before = _quads(root)
    real = emit.emit_tree

    def nameless_dirs(*args, **kwargs):  # type: ignore[no-untyped-def]
        return [q for q in real(*args, **kwargs) if not (q.predicate == UKO.name and "/dir/" in q.subject.value)]

    monkeypatch.setattr(emit, "emit_tree", nameless_dirs)
    _write(root, "pkg/added.py", b"added = True\n")  # a file added: the tree is written again
    with pytest.raises(ValidationFailed) as info:
        _index(root)
    assert "DirectoryShape" in info.value.message
    assert _quads(root) == before
