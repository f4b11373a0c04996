"""The walker on real directories and real git repositories (made here with `git init`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from acms.errors import NotADirectory, PathNotFound
from acms.ingest.walker import (
    ListedFile,
    Listing,
    SkipReason,
    WalkSettings,
    language_for,
    list_files,
    read_text_file,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user/system git config, and git must not discover a repository above the test dir."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("HOME", str(tmp_path))


def write(root: Path, rel: str, content: str | bytes = "x\n") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=cwd, check=True, capture_output=True,
    )


def make_repo(root: Path) -> None:
    """Initialise a repository and commit everything git does not ignore."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init", "--allow-empty")


def paths(listing: Listing) -> list[str]:
    return [f.path for f in listing.files]


@pytest.fixture(params=["walk", pytest.param("git", marks=needs_git)])
def mode(request: pytest.FixtureRequest) -> Callable[[Path], bool]:
    """Turns a prepared tree into a checkout (git mode) or leaves it alone; returns used_git."""

    def prepare(root: Path) -> bool:
        if request.param == "git":
            make_repo(root)
            return True
        return False

    return prepare


# --- gitignore -------------------------------------------------------------------------------


def test_gitignore_honoured_in_both_modes(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    write(tmp_path, ".gitignore", "*.log\nout/\n")
    write(tmp_path, "app.py")
    write(tmp_path, "debug.log")
    write(tmp_path, "out/gen.py")
    expect_git = mode(tmp_path)
    listing = list_files(tmp_path)
    assert listing.used_git is expect_git
    assert paths(listing) == ["app.py"]
    if not expect_git:  # git hides ignored files entirely; the walk records them
        assert listing.skipped[SkipReason.IGNORED] == ["debug.log", "out/"]


def test_nested_gitignore_is_relative_to_its_directory(tmp_path: Path) -> None:
    write(tmp_path, "local.txt")
    write(tmp_path, "sub/.gitignore", "/local.txt\n*.gen\n!keep.gen\n")
    write(tmp_path, "sub/local.txt")
    write(tmp_path, "sub/deeper/local.txt")
    write(tmp_path, "sub/a.gen")
    write(tmp_path, "sub/keep.gen")
    write(tmp_path, "top.gen")
    listing = list_files(tmp_path)
    assert listing.used_git is False
    assert paths(listing) == ["local.txt", "sub/deeper/local.txt", "sub/keep.gen", "top.gen"]
    assert listing.skipped[SkipReason.IGNORED] == ["sub/a.gen", "sub/local.txt"]


@needs_git
def test_git_lists_untracked_but_not_ignored(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "secret.txt\n")
    write(tmp_path, "tracked.py")
    make_repo(tmp_path)
    write(tmp_path, "new_untracked.py")
    write(tmp_path, "secret.txt")
    listing = list_files(tmp_path)
    assert listing.used_git is True
    assert paths(listing) == ["new_untracked.py", "tracked.py"]
    assert listing.skipped[SkipReason.HIDDEN] == [".gitignore"]


@needs_git
def test_git_drops_files_deleted_but_not_staged(tmp_path: Path) -> None:
    write(tmp_path, "keep.py")
    write(tmp_path, "gone.py")
    make_repo(tmp_path)
    (tmp_path / "gone.py").unlink()
    listing = list_files(tmp_path)
    assert paths(listing) == ["keep.py"]
    assert all("gone.py" not in v for v in listing.skipped.values())


@needs_git
def test_root_is_a_subdirectory_of_a_checkout(tmp_path: Path) -> None:
    write(tmp_path, "README.md")
    write(tmp_path, "src/pkg/a.py")
    write(tmp_path, "src/pkg/b.py")
    write(tmp_path, "src-other/c.py")
    make_repo(tmp_path)
    write(tmp_path, "src/untracked.py")
    listing = list_files(tmp_path / "src")
    assert listing.used_git is True
    assert paths(listing) == ["pkg/a.py", "pkg/b.py", "untracked.py"]
    assert Path(listing.files[0].abs_path) == (tmp_path / "src" / "pkg" / "a.py").resolve()


def test_git_missing_falls_back_to_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.py")
    if shutil.which("git"):
        make_repo(tmp_path)
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    listing = list_files(tmp_path)
    assert listing.used_git is False
    assert paths(listing) == ["a.py"]
    assert ".git/" in listing.skipped[SkipReason.HIDDEN]


# --- directory and hidden rules ----------------------------------------------------------------


def test_hidden_vendored_build_dirs_skipped_and_recorded_once(
    tmp_path: Path, mode: Callable[[Path], bool]
) -> None:
    write(tmp_path, "main.py")
    for rel in ["node_modules/a/b.js", "node_modules/c.js", ".venv/lib/x.py", "vendor/v.go",
                "build/out.txt", "build/lib/y.py", "__pycache__/m.txt", "pkg.egg-info/PKG-INFO",
                "pkg/__pycache__/n.txt", ".github/workflows/ci.yml", ".acms/store.txt", ".env"]:
        write(tmp_path, rel)
    mode(tmp_path)
    listing = list_files(tmp_path)
    assert paths(listing) == ["main.py"]
    assert listing.skipped[SkipReason.VENDORED] == [".venv/", "node_modules/", "vendor/"]
    assert listing.skipped[SkipReason.BUILD] == [
        ".acms/", "__pycache__/", "build/", "pkg.egg-info/", "pkg/__pycache__/"]
    hidden = [p for p in listing.skipped[SkipReason.HIDDEN] if p != ".git/"]
    assert hidden == [".env", ".github/"]
    assert listing.skipped_counts()["vendored"] == 3


def test_include_hidden_lists_dotfiles_but_not_vendored_or_git(
    tmp_path: Path, mode: Callable[[Path], bool]
) -> None:
    write(tmp_path, ".github/ci.yml")
    write(tmp_path, ".env")
    write(tmp_path, ".venv/x.py")
    mode(tmp_path)
    listing = list_files(tmp_path, WalkSettings(include_hidden=True))
    assert paths(listing) == [".env", ".github/ci.yml"]
    assert listing.skipped[SkipReason.VENDORED] == [".venv/"]


def test_exclude_patterns(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    write(tmp_path, "docs/guide.md")
    write(tmp_path, "docs/api/x.md")
    write(tmp_path, "a.tmp")
    write(tmp_path, "sub/b.tmp")
    write(tmp_path, "keep.tmp")
    write(tmp_path, "main.py")
    mode(tmp_path)
    listing = list_files(tmp_path, WalkSettings(exclude=("docs/", "*.tmp", "!keep.tmp")))
    assert paths(listing) == ["keep.tmp", "main.py"]
    assert listing.skipped[SkipReason.IGNORED] == ["a.tmp", "docs/", "sub/b.tmp"]


# --- content and size rules --------------------------------------------------------------------


def test_binary_by_content_and_by_extension(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    write(tmp_path, "nul.txt", b"looks like text\x00but is not")
    write(tmp_path, "control.txt", bytes(range(1, 7)) * 100)
    write(tmp_path, "image.png", "plain text, but a .png never gets read\n")
    write(tmp_path, "utf8.txt", "caf\u00e9 \u2014 \u65e5\u672c\u8a9e\n" * 50)
    write(tmp_path, "empty.txt", b"")
    mode(tmp_path)
    listing = list_files(tmp_path)
    assert paths(listing) == ["empty.txt", "utf8.txt"]
    assert listing.skipped[SkipReason.BINARY] == ["control.txt", "image.png", "nul.txt"]


def test_too_large_uses_the_limit(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    write(tmp_path, "fits.txt", "a" * 100)
    write(tmp_path, "big.txt", "a" * 101)
    mode(tmp_path)
    listing = list_files(tmp_path, WalkSettings(max_file_bytes=100))
    assert paths(listing) == ["fits.txt"]
    assert listing.files[0].size == 100
    assert listing.skipped[SkipReason.TOO_LARGE] == ["big.txt"]


def test_total_cap_skips_the_rest(tmp_path: Path) -> None:
    for name in ["a.txt", "b.txt", "c.txt"]:
        write(tmp_path, name, "0123456789")
    write(tmp_path, "d.txt", "1")
    listing = list_files(tmp_path, WalkSettings(max_total_bytes=25))
    assert paths(listing) == ["a.txt", "b.txt"]
    assert listing.skipped[SkipReason.TOTAL_CAP] == ["c.txt", "d.txt"]
    assert listing.skipped_counts() == {"total-cap": 2}


def test_read_text_file(tmp_path: Path) -> None:
    def listed(rel: str, content: bytes) -> ListedFile:
        p = write(tmp_path, rel, content)
        return ListedFile(path=rel, abs_path=p, size=len(content))

    assert read_text_file(listed("ok.py", "x = '\u00e9'\n".encode())) == "x = '\u00e9'\n"
    assert read_text_file(listed("bom.py", b"\xef\xbb\xbfprint(1)\n")) == "print(1)\n"
    latin1 = listed("latin1.txt", "caf\u00e9\n".encode("latin-1"))
    assert read_text_file(latin1) is SkipReason.NOT_UTF8
    assert read_text_file(listed("nul.txt", b"a\x00b")) is SkipReason.BINARY
    missing = ListedFile(path="nope.txt", abs_path=tmp_path / "nope.txt", size=0)
    assert read_text_file(missing) is SkipReason.UNREADABLE


def test_not_utf8_file_is_listed_then_reported_on_read(tmp_path: Path) -> None:
    write(tmp_path, "latin1.txt", "d\u00e9j\u00e0 vu\n".encode("latin-1"))
    listing = list_files(tmp_path)
    assert paths(listing) == ["latin1.txt"]
    assert read_text_file(listing.files[0]) is SkipReason.NOT_UTF8


# --- symlinks ----------------------------------------------------------------------------------


def test_symlink_leaving_root_is_skipped_even_into_a_sibling_with_the_same_prefix(
    tmp_path: Path, mode: Callable[[Path], bool]
) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "project-outside"
    write(outside, "secret.txt", "secret\n")
    write(tmp_path, "elsewhere/other.txt")
    write(project, "main.py")
    (project / "sibling.txt").symlink_to(outside / "secret.txt")
    (project / "far.txt").symlink_to(tmp_path / "elsewhere" / "other.txt")
    (project / "outdir").symlink_to(outside, target_is_directory=True)
    mode(project)
    listing = list_files(project)
    assert paths(listing) == ["main.py"]
    skipped = listing.skipped[SkipReason.SYMLINK_OUTSIDE]
    assert skipped == ["far.txt", "outdir/", "sibling.txt"]
    assert all("secret" not in f.path for f in listing.files)


def test_symlink_inside_root_is_listed_once_and_dir_links_not_followed(
    tmp_path: Path, mode: Callable[[Path], bool]
) -> None:
    write(tmp_path, "pkg/a.py", "a = 1\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "pkg" / "a.py")
    (tmp_path / "pkglink").symlink_to(tmp_path / "pkg", target_is_directory=True)
    mode(tmp_path)
    listing = list_files(tmp_path)
    assert paths(listing) == ["alias.py", "pkg/a.py"]
    alias = listing.files[0]
    assert Path(alias.abs_path) == tmp_path.resolve() / "alias.py"
    assert alias.size == len("a = 1\n")
    assert read_text_file(alias) == "a = 1\n"


def test_broken_symlink_is_unreadable(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    write(tmp_path, "main.py")
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    mode(tmp_path)
    listing = list_files(tmp_path)
    assert paths(listing) == ["main.py"]
    assert listing.skipped[SkipReason.UNREADABLE] == ["dangling.txt"]


# --- errors, determinism, languages ------------------------------------------------------------


def test_missing_root_raises_path_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(PathNotFound, match="no-such-dir"):
        list_files(missing)


def test_file_as_root_raises_not_a_directory(tmp_path: Path) -> None:
    f = write(tmp_path, "file.py")
    with pytest.raises(NotADirectory, match="file.py"):
        list_files(f)


def test_output_is_sorted_and_posix(tmp_path: Path, mode: Callable[[Path], bool]) -> None:
    for rel in ["z.py", "a/b/c.py", "a/a.py", "B.md", "a.py"]:
        write(tmp_path, rel)
    mode(tmp_path)
    first = list_files(tmp_path)
    assert paths(first) == sorted(["z.py", "a/b/c.py", "a/a.py", "B.md", "a.py"])
    assert all("\\" not in p and not p.startswith("/") for p in paths(first))
    assert paths(list_files(tmp_path)) == paths(first)


@pytest.mark.parametrize(
    ("path", "language"),
    [("a/b.py", "python"), ("x.pyi", "python"), ("README.md", "markdown"), ("doc.rst", "rst"),
     ("pyproject.toml", "toml"), ("ci.yml", "yaml"), ("x.yaml", "yaml"), ("p.json", "json"),
     ("app.js", "javascript"), ("app.tsx", "tsx"), ("Main.cs", "csharp"), ("app.rb", "ruby"), ("index.php", "php"), ("run.sh", "shell"), ("m.c", "c"),
     ("m.hpp", "cpp"), ("lib.rs", "rust"), ("main.go", "go"), ("A.java", "java"),
     ("i.html", "html"), ("s.css", "css"), ("q.sql", "sql"), ("Makefile", "makefile"),
     ("sub/Dockerfile", "dockerfile"), ("LICENSE", "text"), ("notes.txt", "text"),
     ("MAIN.PY", "python")],
)
def test_language_for(path: str, language: str) -> None:
    assert language_for(path) == language
