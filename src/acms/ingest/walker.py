r"""List the files of a project worth indexing, and say why every other file was left out.

A git checkout is listed with git, so ``.gitignore``, ``.git/info/exclude`` and global excludes
apply exactly as git sees them; anything else is walked with ``os.walk``, honouring ``.gitignore``
files at every level. The same hidden / vendored / build / binary / size / symlink rules apply
both ways, so a project indexes the same whether or not it is a checkout. A file under a vendored
folder that ``.gitattributes`` marks ``-linguist-vendored`` is listed, as GitHub counts it the
project's own (:mod:`acms.ingest.attributes`).

File names are bytes on POSIX; Python hands them over as ``str`` with undecodable bytes as lone
surrogates (``surrogateescape``). Such a string cannot be written to RDF, and a name holding a newline
or a tab breaks one-line reports and ``path:start-end`` source references. So every path the walker
gives out (``ListedFile.path``, the skip lists) is the *escaped* form, which is what ``uko:path`` holds
and what IRIs are minted from (``escape_path``):

- ``\\`` stands for a backslash, ``\n`` / ``\t`` / ``\r`` for newline / tab / carriage return;
- ``\xHH`` (two lower-case hex digits) for one byte of the name: used for a byte that is not valid
  UTF-8 and, byte by byte of its UTF-8 form, for any other character that ends or garbles a line
  (controls U+0000-U+001F, U+007F-U+009F, and U+2028 / U+2029, which ``str.splitlines`` splits on);
- every other character stands for itself.

The form is valid Unicode without control characters, identical to the name for ordinary names
(no backslash, no control character, valid UTF-8), and lossless: ``unescape_path`` gives back the
exact OS string, ``os.fsencode(unescape_path(p))`` the exact bytes. In an IRI the escaped form is
percent-encoded like any path, so ``bad\xff.py`` is minted as ``.../file/bad%5Cxff.py``.

Reading is defensive too (``read_source``): a file that is gone by the time it is read is skipped
as ``vanished``; one whose size, mtime or inode moves while it is read is read again, and skipped as
``changed-while-reading`` if it never holds still.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from pathspec import GitIgnoreSpec

from acms.ingest.attributes import Attributes
from acms.paths import project_root
from acms.privacy.names import redact_path

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
    ".ts": "typescript", ".tsx": "tsx", ".mts": "typescript", ".cts": "typescript",
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


#: No file larger than this is read, whatever ``max_file_bytes`` says: one file's text, its windows and
#: their triples are held at once while it is read, extracted and emitted, so one file's cost must be
#: bounded (a 64 MB text file: ~550 MB for the whole ``acms index``, bench/bounds.py).
FILE_BYTES_CEILING = 64 << 20


RACY_NS = 2_000_000_000  # an mtime this close to a listing may hide an edit of the same size (2 s: FAT's tick)


class SkipReason(str, Enum):
    """Why a path was left out; the value is what reports and metrics show."""

    IGNORED = "ignored"
    HIDDEN = "hidden"
    VENDORED = "vendored"
    BUILD = "build"
    BINARY = "binary"
    TOO_LARGE = "too-large"
    OVER_CEILING = "over-ceiling"  # larger than FILE_BYTES_CEILING, which max_file_bytes cannot raise
    TOTAL_CAP = "total-cap"
    NOT_UTF8 = "not-utf8"
    SYMLINK_OUTSIDE = "symlink-outside"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"  # listed, then gone (deleted or no longer a file) before it could be read
    CHANGED_WHILE_READING = "changed-while-reading"  # still being written after every re-read


_NAMED_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
# backslash, line-breaking / control characters, undecodable bytes (surrogateescape)
_NEEDS_ESCAPE = re.compile(r"[\\\x00-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff]")
_ESCAPE = re.compile(r"\\(\\|n|t|r|x[0-9a-f]{2})")
_NAMED_BYTES = {"\\": b"\\", "n": b"\n", "t": b"\t", "r": b"\r"}


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED_ESCAPES.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte
        return f"\\x{code - 0xDC00:02x}"
    return "".join(f"\\x{b:02x}" for b in ch.encode("utf-8"))


def escape_path(raw: str) -> str:
    """The escaped, lossless form of an OS path string (see the module docstring)."""
    return _NEEDS_ESCAPE.sub(_escape_char, raw) if _NEEDS_ESCAPE.search(raw) else raw


def path_bytes(escaped: str) -> bytes:
    """The exact bytes of the name an escaped path stands for."""
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(escaped):
        out += os.fsencode(escaped[pos : match.start()])
        token = match.group(1)
        out += _NAMED_BYTES[token] if token[0] != "x" else bytes([int(token[1:], 16)])
        pos = match.end()
    out += os.fsencode(escaped[pos:])
    return bytes(out)


def unescape_path(escaped: str) -> str:
    """The OS path string an escaped path stands for (``escape_path`` inverted)."""
    return os.fsdecode(path_bytes(escaped)) if "\\" in escaped else escaped


@dataclass(frozen=True)
class ListedFile:
    path: str  # POSIX, relative to the root, escaped (``escape_path``): what uko:path holds
    abs_path: str | os.PathLike[str]  # the real name on disk (the walker's: a str; a Path per file was a quarter of a look)
    size: int
    mtime_ns: int = 0  # when listed: with the size, what tells a later look that the file may have changed


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
_GONE = "gone"  # found by the walk, then gone before it could be looked at: reported as VANISHED


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


def _stat_file(path: str, root_real: Path) -> os.stat_result | SkipReason | str:
    """Stat a candidate without trusting symlinks: one leaving the root is never read. ``path`` is a
    string: a look stats every listed file, and through ``Path`` objects that cost ~20 ms a standard
    library's 2,300 (``os.lstat`` of the string: ~5)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _GONE
    except OSError:
        return SkipReason.UNREADABLE
    if stat.S_ISLNK(st.st_mode):
        try:
            real = Path(path).resolve(strict=True)
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
    """Paths git shows under root (tracked + untracked-not-ignored); None if not a checkout (``ls-files``
    fails outside a work tree: no ``rev-parse`` first, one process fewer on every look)."""
    try:
        ls = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        out = subprocess.run(["git", "-C", str(root), *ls], capture_output=True, check=False)
    except OSError:  # git not installed
        return None
    if out.returncode != 0:
        return None
    names = {os.fsdecode(raw) for raw in out.stdout.split(b"\0") if raw}
    return sorted(n for n in names if not n.endswith("/"))  # "sub/" = an untracked nested repo


def _walk_paths(root: Path, settings: WalkSettings, skip: dict[SkipReason, list[str]],
                attributes: Attributes) -> list[str]:
    """os.walk, never following directory symlinks, pruning skipped directories before descent (a vendored
    one that ``.gitattributes`` may un-vendor files in is walked: ``list_files`` decides its files)."""
    patterns = _Patterns(settings.exclude)
    found: list[str] = []

    def unreadable(err: OSError) -> None:
        rel = Path(err.filename or "").relative_to(root).as_posix() if err.filename else "?"
        gone = isinstance(err, (FileNotFoundError, NotADirectoryError))  # removed while being walked
        skip[SkipReason.VANISHED if gone else SkipReason.UNREADABLE].append(rel + "/")

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
            if reason is SkipReason.VENDORED and attributes.may_unvendor(rel):
                reason = None
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


def list_files(root: Path, settings: WalkSettings = WalkSettings(),
               known_text: Callable[[str, int, int], bool] | None = None) -> Listing:
    """List indexable files under root, recording every skipped path under its reason.

    ``known_text(path, size, mtime_ns)``: True for a file (as the listing names it) known to be text at
    that size and mtime (a look's trusted manifest: the last run indexed it so, and a file whose size and
    mtime are unchanged is taken as unchanged): its content is not sniffed again, which was an open and
    a read of every file on every look (a standard library's 2,300: ~60-100 ms)."""
    root_real = project_root(root)
    root_s = os.fspath(root_real)
    skip: dict[SkipReason, list[str]] = {r: [] for r in SkipReason}
    paths = _git_paths(root_real)
    used_git = paths is not None
    attributes = Attributes(root_real)
    if paths is None:
        paths = _walk_paths(root_real, settings, skip, attributes)
    patterns = _Patterns(settings.exclude)
    dir_verdict: dict[str, SkipReason | None] = {}
    unvendoring: set[str] = set()  # vendored folders whose files the attributes may call not vendored
    files: list[ListedFile] = []
    total = 0
    capped = False
    for rel in paths:
        parts = rel.split("/")  # git's and the walk's paths are relative and normalised: PurePosixPath's parts
        pruned = False
        for depth in range(1, len(parts)):  # git lists files only: apply directory rules here
            d = "/".join(parts[:depth])
            if d not in dir_verdict:
                reason = _dir_rule(parts[depth - 1], settings.include_hidden)
                if reason is SkipReason.VENDORED and attributes.may_unvendor(d):
                    reason = None
                    unvendoring.add(d + "/")
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
        if unvendoring and any(rel.startswith(d) for d in unvendoring) and (
                attributes.marks(rel).get("vendored") is not False):  # GitHub's ``-linguist-vendored``
            skip[SkipReason.VENDORED].append(rel)
            continue
        if parts[-1].startswith(".") and not settings.include_hidden:
            skip[SkipReason.HIDDEN].append(rel)
            continue
        if patterns.ignored(rel, is_dir=False):
            skip[SkipReason.IGNORED].append(rel)
            continue
        abs_path = os.path.join(root_s, rel)
        st = _stat_file(abs_path, root_real)
        if isinstance(st, SkipReason):
            outside_dir = st is SkipReason.SYMLINK_OUTSIDE and os.path.isdir(abs_path)
            skip[st].append(rel + "/" if outside_dir else rel)  # same record as the walk makes
            continue
        if st == _GONE and not used_git:  # git lists files deleted but not staged: not news
            skip[SkipReason.VANISHED].append(rel)
            continue
        if not isinstance(st, os.stat_result):  # _DROP, or a tracked file deleted from the worktree
            continue
        # a secret-looking name is listed under its redacted form (the file is still read, by abs_path)
        listed = redact_path(escape_path(rel))
        sniff = known_text is None or not known_text(listed, st.st_size, st.st_mtime_ns)
        reason = _cheap_reason(abs_path, st.st_size, settings, capped, total, sniff=sniff)
        if reason is SkipReason.TOTAL_CAP:
            capped = True
        if reason is not None:
            skip[reason].append(rel)
            continue
        total += st.st_size
        files.append(ListedFile(path=listed, abs_path=abs_path, size=st.st_size, mtime_ns=st.st_mtime_ns))
    for reason, lst in skip.items():  # names as the graph and the reports show them: escaped
        skip[reason] = sorted(redact_path(escape_path(p)) for p in lst)
    return Listing(root=root_real, files=files, skipped=skip, used_git=used_git)


def _cheap_reason(path: str, size: int, settings: WalkSettings, capped: bool, total: int, *,
                  sniff: bool = True) -> SkipReason | None:
    """Extension, size, budget, then an 8 KB content sniff (``sniff``); whole files are read only later."""
    if os.path.splitext(path)[1].lower() in BINARY_EXTENSIONS:
        return SkipReason.BINARY
    if size > settings.max_file_bytes:
        return SkipReason.TOO_LARGE
    if size > FILE_BYTES_CEILING:
        return SkipReason.OVER_CEILING
    if capped or (settings.max_total_bytes is not None and total + size > settings.max_total_bytes):
        return SkipReason.TOTAL_CAP
    if not sniff:
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return SkipReason.VANISHED
    except OSError:
        return SkipReason.UNREADABLE
    return SkipReason.BINARY if _sniff_binary(head) else None


READ_ATTEMPTS = 3  # a file still changing after this many reads is CHANGED_WHILE_READING


@dataclass(frozen=True)
class ReadText:
    """A file's text as read, and the number of bytes it was read from (BOM included)."""

    text: str
    size: int


def _read_handle(fh: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of an open file (the seam tests use to change a file mid-read)."""
    return fh.read(limit)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _opener(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))  # no effect on a regular file


def _read_stable(path: str | os.PathLike[str], max_bytes: int | None) -> bytes | SkipReason:
    """The bytes of one consistent version of the file.

    A version is consistent when the open file's identity (device, inode, size, mtime) is the same
    before and after the read, the read returned exactly that size, and the name still points at that
    same file afterwards (no rename-over). Otherwise the file is read again, up to READ_ATTEMPTS times.
    """
    limit = -1 if max_bytes is None else max_bytes + 1
    for _ in range(READ_ATTEMPTS):
        try:
            with open(path, "rb", opener=_opener) as fh:  # a fifo would block an open without O_NONBLOCK
                before = os.fstat(fh.fileno())
                if not stat.S_ISREG(before.st_mode):  # replaced by a fifo or a device since listing
                    return SkipReason.UNREADABLE
                data = _read_handle(fh, limit)
                after = os.fstat(fh.fileno())
            now = os.stat(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return SkipReason.VANISHED
        except OSError:
            return SkipReason.UNREADABLE
        if max_bytes is not None and len(data) > max_bytes:
            return SkipReason.TOO_LARGE  # grew past the limit since it was listed
        if _identity(before) == _identity(after) == _identity(now) and len(data) == after.st_size:
            return data
    return SkipReason.CHANGED_WHILE_READING


def read_source(f: ListedFile, max_bytes: int | None = None) -> ReadText | SkipReason:
    """The file's text, or why it cannot be indexed as text (it may have changed since listing).

    ``max_bytes``: a file that grew past it since it was listed is TOO_LARGE (and is not read whole).
    """
    data = _read_stable(f.abs_path, FILE_BYTES_CEILING if max_bytes is None else min(max_bytes, FILE_BYTES_CEILING))
    if isinstance(data, SkipReason):
        return data
    if _sniff_binary(data[:SNIFF_BYTES]):
        return SkipReason.BINARY
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return SkipReason.NOT_UTF8
    return ReadText(text[1:] if text.startswith("\ufeff") else text, len(data))


def read_text_file(f: ListedFile) -> str | SkipReason:
    """``read_source`` for callers that only tell text from not-text: a vanished file is UNREADABLE."""
    got = read_source(f)
    if isinstance(got, SkipReason):
        return SkipReason.UNREADABLE if got is SkipReason.VANISHED else got
    return got.text


@functools.lru_cache(maxsize=1 << 16)
def language_for(path: str) -> str:
    """A coarse language tag from the file name, used to pick an extractor and label fragments. Kept per
    path: a refresh asks for every listed file's four to five times (~10k calls a standard library)."""
    lower = path.rsplit("/", 1)[-1].lower()  # PurePosixPath's name and suffix, without two objects a call
    if lower in ("makefile", "gnumakefile"):
        return "makefile"
    if lower == "dockerfile" or lower.startswith("dockerfile."):
        return "dockerfile"
    dot = lower.rfind(".")
    suffix = lower[dot:] if 0 < dot < len(lower) - 1 else ""
    found = _LANGUAGES.get(suffix)
    if found is None:  # a language added in languages/languages.toml (C#, Ruby, PHP...)
        from acms.ingest.ts_languages import extension_map

        found = extension_map().get(suffix, "text")
    return found
