"""List the files of a project worth indexing, and say why every other file was left out.

A git checkout is listed with git, so ``.gitignore``, ``.git/info/exclude`` and global excludes
apply exactly as git sees them; anything else is walked with ``os.walk``, honouring ``.gitignore``
files at every level. The same hidden / vendored / build / binary / size / symlink rules apply
both ways, so a project indexes the same whether or not it is a checkout.
"""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath

from pathspec import GitIgnoreSpec

from acms.paths import project_root

SNIFF_BYTES = 8192
_MAX_CONTROL_RATIO = 0.30
# Bytes that occur in text: common control characters plus everything printable (UTF-8 included).
_TEXT_BYTES = bytes(sorted({7, 8, 9, 10, 12, 13, 27} | (set(range(0x20, 0x100)) - {0x7F})))

_ALWAYS_HIDDEN = frozenset({".git", ".hg", ".svn"})
VENDORED_DIRS = frozenset(
    {"node_modules", "bower_components", "jspm_packages", "vendor", "third_party",
     "site-packages", "dist-packages", ".venv", "venv", "env", "virtualenv", ".virtualenv"}
)
BUILD_DIRS = frozenset(
    {"build", "dist", "target", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
     ".ruff_cache", ".hypothesis", ".eggs", ".acms", "htmlcov", ".gradle", ".next", ".parcel-cache"}
)
BINARY_EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tif", ".tiff", ".psd",
     ".so", ".dll", ".dylib", ".a", ".o", ".obj", ".lib", ".exe", ".bin", ".class", ".jar", ".war",
     ".pyc", ".pyo", ".pyd", ".whl", ".egg", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar",
     ".rar", ".zst", ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt",
     ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".ogg", ".flac", ".avi",
     ".mov", ".mkv", ".webm", ".sqlite", ".sqlite3", ".db", ".npy", ".npz", ".pkl", ".parquet"}
)
_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".md": "markdown", ".markdown": "markdown", ".rst": "rst",
    ".toml": "toml", ".ttl": "turtle", ".trig": "trig", ".nt": "ntriples", ".rq": "sparql", ".ru": "sparql", ".yaml": "yaml", ".yml": "yaml", ".json": "json",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".c": "c", ".h": "c",
    ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".rs": "rust", ".go": "go", ".java": "java", ".html": "html", ".htm": "html", ".css": "css",
    ".sql": "sql", ".mk": "makefile", ".dockerfile": "dockerfile",
}


@dataclass(frozen=True)
class WalkSettings:
    """Limits and filters; the defaults keep one file and the whole listing a sane size."""

    max_file_bytes: int = 256 * 1024
    max_total_bytes: int | None = None  # None = unlimited; past it, remaining files are TOTAL_CAP
    exclude: tuple[str, ...] = ()  # extra gitignore-style patterns, relative to the root
    include_hidden: bool = False


class SkipReason(str, Enum):
    """Why a path was left out; the value is what reports and metrics show."""

    IGNORED = "ignored"
    HIDDEN = "hidden"
    VENDORED = "vendored"
    BUILD = "build"
    BINARY = "binary"
    TOO_LARGE = "too-large"
    TOTAL_CAP = "total-cap"
    NOT_UTF8 = "not-utf8"
    SYMLINK_OUTSIDE = "symlink-outside"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class ListedFile:
    path: str  # POSIX, relative to the root
    abs_path: Path
    size: int


@dataclass
class Listing:
    """Files to index plus every skipped path (a pruned directory appears once, as ``dir/``)."""

    root: Path  # the real (resolved) root
    files: list[ListedFile]
    skipped: dict[SkipReason, list[str]]  # every reason is a key; lists are sorted
    used_git: bool

    def skipped_counts(self) -> dict[str, int]:
        """Non-zero skip counts keyed by reason value, for metrics and log lines."""
        return {r.value: len(p) for r, p in self.skipped.items() if p}


_DROP = "drop"  # not a file any more (deleted, a directory, a submodule): leave out silently


def _dir_rule(name: str, include_hidden: bool) -> SkipReason | None:
    """The built-in directory rules; they win over patterns so reports name the real cause."""
    if name in VENDORED_DIRS:
        return SkipReason.VENDORED
    if name in BUILD_DIRS or name.endswith(".egg-info"):
        return SkipReason.BUILD
    if name in _ALWAYS_HIDDEN or (name.startswith(".") and not include_hidden):
        return SkipReason.HIDDEN
    return None


class _Patterns:
    """Configured excludes plus the .gitignore files met while walking; the deepest match wins."""

    def __init__(self, exclude: tuple[str, ...]) -> None:
        self.exclude = GitIgnoreSpec.from_lines(exclude) if exclude else None
        self.gitignores: list[tuple[str, GitIgnoreSpec]] = []  # (dir prefix "" or "a/b/", spec)

    def add_gitignore(self, prefix: str, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        self.gitignores.append((prefix, GitIgnoreSpec.from_lines(lines)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        if self.exclude is not None and self.exclude.match_file(probe):
            return True
        verdict = False
        for prefix, spec in self.gitignores:  # ancestors are added before their descendants
            if probe.startswith(prefix):  # prefix ends in "/": a path-segment comparison
                include = spec.check_file(probe[len(prefix):]).include
                if include is not None:
                    verdict = include
        return verdict


def _sniff_binary(data: bytes) -> bool:
    """NUL bytes, or mostly non-text control bytes, mean binary whatever the extension says."""
    if not data:
        return False
    if b"\x00" in data:
        return True
    return len(data.translate(None, _TEXT_BYTES)) / len(data) > _MAX_CONTROL_RATIO


def _stat_file(path: Path, root_real: Path) -> os.stat_result | SkipReason | str:
    """Stat a candidate without trusting symlinks: one leaving the root is never read."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return _DROP
    except OSError:
        return SkipReason.UNREADABLE
    if stat.S_ISLNK(st.st_mode):
        try:
            real = path.resolve(strict=True)
            st = real.stat()
        except (OSError, RuntimeError):  # broken link or a loop
            return SkipReason.UNREADABLE
        if not real.is_relative_to(root_real):
            return SkipReason.SYMLINK_OUTSIDE
    if stat.S_ISDIR(st.st_mode):
        return _DROP
    if not stat.S_ISREG(st.st_mode):  # fifo, socket, device: reading could block or never end
        return SkipReason.UNREADABLE
    return st


def _git_paths(root: Path) -> list[str] | None:
    """Paths git shows under root (tracked + untracked-not-ignored); None if not a checkout."""
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, check=False)
        if top.returncode != 0:
            return None
        ls = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        out = subprocess.run(["git", "-C", str(root), *ls], capture_output=True, check=False)
    except OSError:  # git not installed
        return None
    if out.returncode != 0:
        return None
    names = {os.fsdecode(raw) for raw in out.stdout.split(b"\0") if raw}
    return sorted(n for n in names if not n.endswith("/"))  # "sub/" = an untracked nested repo


def _walk_paths(root: Path, settings: WalkSettings, skip: dict[SkipReason, list[str]]) -> list[str]:
    """os.walk, never following directory symlinks, pruning skipped directories before descent."""
    patterns = _Patterns(settings.exclude)
    found: list[str] = []

    def unreadable(err: OSError) -> None:
        rel = Path(err.filename or "").relative_to(root).as_posix() if err.filename else "?"
        skip[SkipReason.UNREADABLE].append(rel + "/")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        here = Path(dirpath)
        prefix = "" if here == root else here.relative_to(root).as_posix() + "/"
        if ".gitignore" in filenames:
            patterns.add_gitignore(prefix, here / ".gitignore")
        keep: list[str] = []
        for name in sorted(dirnames):
            rel = prefix + name
            if (here / name).is_symlink():  # not followed; a target inside root is walked anyway
                real = (here / name).resolve()
                if not real.is_relative_to(root):
                    skip[SkipReason.SYMLINK_OUTSIDE].append(rel + "/")
                continue
            reason = _dir_rule(name, settings.include_hidden)
            if reason is None and patterns.ignored(rel, is_dir=True):
                reason = SkipReason.IGNORED
            if reason is None:
                keep.append(name)
            else:
                skip[reason].append(rel + "/")
        dirnames[:] = keep
        for name in filenames:
            rel = prefix + name
            hidden = name.startswith(".") and not settings.include_hidden  # HIDDEN wins, later
            if not hidden and patterns.ignored(rel, is_dir=False):
                skip[SkipReason.IGNORED].append(rel)
            else:
                found.append(rel)
    return sorted(found)


def list_files(root: Path, settings: WalkSettings = WalkSettings()) -> Listing:
    """List indexable files under root, recording every skipped path under its reason."""
    root_real = project_root(root)
    skip: dict[SkipReason, list[str]] = {r: [] for r in SkipReason}
    paths = _git_paths(root_real)
    used_git = paths is not None
    if paths is None:
        paths = _walk_paths(root_real, settings, skip)
    patterns = _Patterns(settings.exclude)
    dir_verdict: dict[str, SkipReason | None] = {}
    files: list[ListedFile] = []
    total = 0
    capped = False
    for rel in paths:
        parts = PurePosixPath(rel).parts
        pruned = False
        for depth in range(1, len(parts)):  # git lists files only: apply directory rules here
            d = "/".join(parts[:depth])
            if d not in dir_verdict:
                reason = _dir_rule(parts[depth - 1], settings.include_hidden)
                if reason is None and patterns.ignored(d, is_dir=True):
                    reason = SkipReason.IGNORED
                dir_verdict[d] = reason
                if reason is not None:
                    skip[reason].append(d + "/")
            if dir_verdict[d] is not None:
                pruned = True
                break
        if pruned:
            continue
        if parts[-1].startswith(".") and not settings.include_hidden:
            skip[SkipReason.HIDDEN].append(rel)
            continue
        if patterns.ignored(rel, is_dir=False):
            skip[SkipReason.IGNORED].append(rel)
            continue
        abs_path = root_real / rel
        st = _stat_file(abs_path, root_real)
        if isinstance(st, SkipReason):
            outside_dir = st is SkipReason.SYMLINK_OUTSIDE and abs_path.is_dir()
            skip[st].append(rel + "/" if outside_dir else rel)  # same record as the walk makes
            continue
        if not isinstance(st, os.stat_result):  # _DROP
            continue
        reason = _cheap_reason(abs_path, st.st_size, settings, capped, total)
        if reason is SkipReason.TOTAL_CAP:
            capped = True
        if reason is not None:
            skip[reason].append(rel)
            continue
        total += st.st_size
        files.append(ListedFile(path=rel, abs_path=abs_path, size=st.st_size))
    for lst in skip.values():
        lst.sort()
    return Listing(root=root_real, files=files, skipped=skip, used_git=used_git)


def _cheap_reason(path: Path, size: int, settings: WalkSettings, capped: bool, total: int
                  ) -> SkipReason | None:
    """Extension, size, budget, then an 8 KB content sniff; whole files are read only later."""
    if path.suffix.lower() in BINARY_EXTENSIONS:
        return SkipReason.BINARY
    if size > settings.max_file_bytes:
        return SkipReason.TOO_LARGE
    if capped or (settings.max_total_bytes is not None and total + size > settings.max_total_bytes):
        return SkipReason.TOTAL_CAP
    try:
        with path.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return SkipReason.UNREADABLE
    return SkipReason.BINARY if _sniff_binary(head) else None


def read_text_file(f: ListedFile) -> str | SkipReason:
    """The file's text, or why it cannot be indexed as text (it may have changed since listing)."""
    try:
        data = f.abs_path.read_bytes()
    except OSError:
        return SkipReason.UNREADABLE
    if _sniff_binary(data[:SNIFF_BYTES]):
        return SkipReason.BINARY
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return SkipReason.NOT_UTF8
    return text[1:] if text.startswith("\ufeff") else text


def language_for(path: str) -> str:
    """A coarse language tag from the file name, used to pick an extractor and label fragments."""
    name = PurePosixPath(path).name
    lower = name.lower()
    if lower in ("makefile", "gnumakefile"):
        return "makefile"
    if lower == "dockerfile" or lower.startswith("dockerfile."):
        return "dockerfile"
    return _LANGUAGES.get(PurePosixPath(lower).suffix, "text")
