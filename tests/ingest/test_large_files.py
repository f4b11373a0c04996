"""One file's cost is bounded whatever ``max_file_bytes`` says: a file over ``PARSE_MAX_BYTES`` is indexed
as text windows of bounded size and says so; one over ``FILE_BYTES_CEILING`` is skipped with its own
reason. Both through a real ``acms index`` process; neither is silently dropped."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from acms import Index
from acms.ingest.extractors import PARSE_MAX_BYTES, WINDOW_MAX_CHARS
from acms.ingest.fragments import MICRO, window_fragments
from acms.ingest.model import SourceFile
from acms.ingest.walker import FILE_BYTES_CEILING
from tests.conftest import FIXTURES

ACMS = str(Path(sys.executable).parent / "acms")


def _generated_python(size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        part = f"def f{i}(x):\n    return g{i}(x) + {i}\n\n"
        parts.append(part)
        total += len(part)
        i += 1
    parts.insert(len(parts) // 2, "# frobnicate the quuxes before the widgets settle\n")
    return "".join(parts)


def test_large_files_are_windowed_or_skipped_with_their_reason(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    (root / "gen.py").write_text(_generated_python(PARSE_MAX_BYTES + 4096))
    (root / "minified.js").write_text("var a=" + "1+" * (PARSE_MAX_BYTES // 2) + "1;\n")  # one line, 1 MB
    with (root / "huge.log").open("wb") as f:
        f.truncate(FILE_BYTES_CEILING + 1)  # sparse: listed by its size, never read
    # in the project's settings, not a flag: every later read looks at the files by the same rules
    (root / "acms.toml").write_text(f"max_file_bytes = {FILE_BYTES_CEILING * 2}\n")
    done = subprocess.run([ACMS, "index", ".", "--json", "--quiet"], cwd=root, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"]["over-ceiling"] == ["huge.log"]
    for path in ("gen.py", "minified.js"):
        assert report["parse_errors"][path].startswith("not parsed: 1.0 MB is over the 1 MB a file may have to be "
                                                       "parsed; indexed as text windows"), report["parse_errors"]

    with Index.open(root, mode="read") as idx:
        gen = idx.sparql("SELECT (COUNT(?s) AS ?n) WHERE { ?s a uko:Function ; uko:inFile ?f . "
                         "?f uko:path \"gen.py\" }").rows
        assert gen == [{"n": "0"}]  # not parsed: no symbol of it
        hits = idx.search("frobnicate quuxes", k=3).hits
        assert hits and hits[0].path == "gen.py"  # its text is indexed, in windows
        fragments = idx.sparql("SELECT ?t WHERE { ?f uko:path \"minified.js\" ; uko:hasFragment ?fr . ?fr uko:text ?t }",
                               max_rows=50).rows
        assert fragments and max(len(r["t"]) for r in fragments) < 2 * WINDOW_MAX_CHARS
        assert any("[... line cut: " in r["t"] for r in fragments)

    verbose = subprocess.run([ACMS, "index", ".", "-v", "--rehash", "--quiet"], cwd=root, capture_output=True,
                             text=True, timeout=300)
    assert "skip over-ceiling: huge.log" in verbose.stdout, verbose.stdout  # on every run, named


def test_windows_of_a_large_file_are_bounded_and_cover_every_line() -> None:
    text = "\n".join(["short line"] * 50 + ["x" * 500] + ["tail"] * 10)
    source = SourceFile("big.txt", text, len(text), "h", "text")
    micro = [f for f in window_fragments(source, 60, max_chars=200) if f.lod == MICRO]
    assert max(len(f.text) for f in micro) <= 2 * 200 + 40  # it stops once it holds max_chars; a line is cut there
    covered = [n for f in micro for n in range(f.start_line, f.end_line + 1)]
    assert covered == list(range(1, 62))  # every line, once, in order
    cut = next(f for f in micro if f.start_line <= 51 <= f.end_line)
    assert "x" * 200 + " [... line cut: 500 characters]" in cut.text
    plain = [f for f in window_fragments(source, 60) if f.lod == MICRO]  # small files: as before
    assert [(f.start_line, f.end_line) for f in plain] == [(1, 60), (61, 61)]
