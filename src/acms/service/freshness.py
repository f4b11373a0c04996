"""Whether the files on disk are still the ones the index holds, found cheaply.

An index run leaves a manifest beside the caches (``cache/files.json``): per listed file its size and
mtime when listed, and the content hash the graph holds (``""`` for a file listed but not indexed: not
text, quarantined), keyed by the run that made the graph's current state. A look lists the project by
the walker's own rules (new and deleted files, ignored paths), stats every file, and reads and hashes
only those whose size or mtime moved, and those changed so recently that a later edit could keep both
(a filesystem's clock is coarse: git's "racily clean" entries, treated the same way). A manifest of
another state than the store's (a run killed between landing and writing it, an index made by an
older acms) is not trusted: every file is then hashed and compared with the graph's own hashes.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from acms.config import Settings
from acms.ingest.digest import content_digest
from acms.ingest.walker import (
    RACY_NS,
    ListedFile,
    Listing,
    SkipReason,
    WalkSettings,
    escape_path,
    list_files,
    read_source,
    unescape_path,
)
from acms.paths import write_whole
from acms.sparql import catalog
from acms.store.protocol import GraphStore

__all__ = ["Manifest", "Staleness", "check", "last_run", "listed_name", "look_by_stats",
           "stale_notice", "walk_settings"]

FORMAT = "acms.files/1"


def walk_settings(settings: Settings) -> WalkSettings:
    """The walker's rules an index run lists the project by (a look must list it the same way)."""
    return WalkSettings(
        max_file_bytes=settings.max_file_bytes,
        max_total_bytes=settings.max_total_bytes or None,
        exclude=tuple(settings.exclude) + (f"/{settings.store}/",),
        include_hidden=settings.include_hidden,
    )


@dataclass
class Manifest:
    """Per listed file: (size, mtime_ns, content hash or "") as of ``listed_ns``, for graph state ``run``;
    ``clear``: the hashes are of texts kept with their secrets (``store_secrets``), which hashes otherwise."""

    run: str
    listed_ns: int
    files: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    clear: bool = False
    # what else the listing said (a look by stats rebuilds it from here): whether git listed the files
    # (None: a manifest written before this was kept), and the paths skipped, by reason
    used_git: bool | None = None
    skipped: dict[str, list[str]] = field(default_factory=dict)

    @staticmethod
    def path(cache: Path) -> Path:
        return cache / "files.json"

    @classmethod
    def load(cls, cache: Path) -> Manifest | None:
        try:
            data = json.loads(cls.path(cache).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                return None
            used_git = data.get("used_git")
            return cls(str(data["run"]), int(data["listed_ns"]),
                       {p: (int(s), int(m), str(h)) for p, (s, m, h) in data["files"].items()}, bool(data["clear"]),
                       None if used_git is None else bool(used_git),
                       {str(r): [str(p) for p in paths] for r, paths in data.get("skipped", {}).items()})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, cache: Path) -> None:
        """Whole or not at all; where it cannot be written the next look hashes the files instead."""
        write_whole(self.path(cache), json.dumps({"format": FORMAT, "run": self.run, "listed_ns": self.listed_ns,
                                                  "clear": self.clear, "used_git": self.used_git,
                                                  "skipped": self.skipped, "files": self.files}, separators=(",", ":")))


@dataclass
class Staleness:
    """What changed on disk since the index's state: paths as the graph holds them (escaped)."""

    changed: list[str]
    added: list[str]
    removed: list[str]
    listing: Listing
    # path -> content hash, for the listed files a look found unchanged (the run need not read them)
    unchanged: dict[str, str]
    listed_ns: int = 0  # when the listing began (what a manifest made from it is as of)
    hashed: int = 0  # files read to tell (their size or mtime moved, or no trusted manifest)
    seconds: float = 0.0
    run: str = ""  # the graph state looked against (``last_run``): a look is the writer's while it is still the last

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    @property
    def paths(self) -> list[str]:
        return sorted({*self.changed, *self.added, *self.removed})


def last_run(store: GraphStore) -> str:
    """The graph state a manifest belongs to: the last index run's IRI ("" for none)."""
    rows = store.select(catalog.text("index/state"))
    run = rows[0].get("run") if rows else None
    return "" if run is None else str(run.value)


def stored_hashes(store: GraphStore) -> dict[str, str]:
    return {str(r["path"].value): str(r["hash"].value) for r in store.select(catalog.text("ingest/stored-files"))}


def check(root: Path, settings: Settings, store: GraphStore, cache: Path) -> Staleness:
    """Compare the project on disk with the index (see the module's docstring)."""
    t0, listed_ns = time.perf_counter(), time.time_ns()
    state = last_run(store)
    manifest = _trusted(cache, state, settings)
    listing = list_files(root, walk_settings(settings), None if manifest is None else _known_text(manifest))
    if manifest is None:  # trust only the graph: its paths and hashes, every listed file hashed
        known = {p: (-1, -1, h) for p, h in stored_hashes(store).items()}
        racy_from = 0
    else:
        known = manifest.files
        racy_from = manifest.listed_ns - RACY_NS
    changed, added, unchanged, hashed = _compared(listing.files, known, racy_from, settings)
    listed = {f.path for f in listing.files}
    removed = sorted(p for p, entry in known.items() if p not in listed and entry[2])
    looked = Staleness(changed, added, removed, listing, unchanged, listed_ns, hashed, time.perf_counter() - t0, state)
    _record(looked, cache, settings)
    return looked


def _record(looked: Staleness, cache: Path, settings: Settings) -> None:
    """A look that read files to tell them unchanged records them as of its listing, as ``git status``
    refreshes git's index: the files an index run listed within the racy window of their last write (every
    file of a formatter run indexed at once), touched files, or all of them where no manifest was trusted.
    Else every later look read them all again, until the next run: after a formatter run over the standard
    library, each look read 1,785 files (0.26-0.39 s against 0.05-0.13 s). The next look applies the racy
    rule to this listing as to a run's: a file written within 2 s of it is read again. Written under the
    look's lock (no writer lands meanwhile: the manifest stays of the graph state it names); where the
    cache cannot be written, the next look reads them again."""
    if not looked.hashed or not looked.run or looked.stale:
        return
    try:
        manifest_after_run(looked.run, looked.listing, looked.listed_ns, looked.unchanged, settings.store_secrets).save(cache)
    except OSError:
        pass


def _compared(files: Iterable[ListedFile], known: dict[str, tuple[int, int, str]], racy_from: int,
              settings: Settings) -> tuple[list[str], list[str], dict[str, str], int]:
    """``files`` against ``known`` (path -> size, mtime and content hash as last listed): the changed and
    the added paths (sorted), the hashes of the unchanged text files, and how many files were read and
    hashed to tell (those whose size or mtime moved, or listed within the racy window)."""
    changed: list[str] = []
    added: list[str] = []
    unchanged: dict[str, str] = {}
    hashed = 0
    for f in files:
        entry = known.get(f.path)
        if entry is not None and (entry[0], entry[1]) == (f.size, f.mtime_ns) and f.mtime_ns < racy_from:
            if entry[2]:
                unchanged[f.path] = entry[2]
            continue  # the same, indexed or not
        hashed += 1
        digest = _digest(f, settings)
        if entry is None:
            if digest:  # a new text file (one not text is no news: it was not indexed either)
                added.append(f.path)
            continue
        if digest == entry[2]:
            if digest:
                unchanged[f.path] = digest
            continue
        changed.append(f.path)
    return sorted(changed), sorted(added), unchanged, hashed


def look_by_stats(root: Path, settings: Settings, cache: Path, run: str,
                  saved: Iterable[str] | None = None) -> Staleness | None:
    """``check`` without the walk: the files the last run listed, each by a stat (read and hashed only
    where size or mtime moved, or within the racy window), the listing rebuilt from the manifest. The
    look a read makes while a watcher follows the project: new files, and the walker's own rules, are
    the watcher's to report (its refresh looks at the whole project). A standard library's walk was
    ~0.15 s of the first answer after every save. None when there is no manifest to go by for graph state
    ``run``, or one of the files is no regular file any more, or a link now leading out of the project (the
    full look tells what it is). ``saved``: what a watcher reported changed (absolute paths); None also
    unless each is a file the last run listed and none a walker's rule file (``_all_listed``). Only those
    are stat'ed then, the others taken as the manifest has them: the watcher saw no change to them, and a
    change it missed (its queue overflowed) is found by the next read's look, which stats them all (a
    standard library's 2,250 stats were ~35 ms of every refresh after a save)."""
    t0, listed_ns = time.perf_counter(), time.time_ns()
    manifest = _trusted(cache, run, settings)
    if manifest is None or manifest.used_git is None or (saved is not None and not _all_listed(root, manifest, saved)):
        return None
    racy_from = manifest.listed_ns - RACY_NS
    base = os.path.realpath(root)
    files: list[ListedFile] = []
    removed: list[str] = []
    only = None if saved is None else {listed_name(root, p) for p in saved}
    for path, (size, mtime_ns, digest) in manifest.files.items():
        on_disk = os.path.join(base, unescape_path(path))
        if only is not None and path not in only:
            files.append(ListedFile(path, on_disk, size, mtime_ns))
            continue
        try:
            st = os.lstat(on_disk)
            if stat.S_ISLNK(st.st_mode):  # a link the walker listed: while it stays inside the project
                if not os.path.realpath(on_disk).startswith(base + os.sep):
                    return None
                st = os.stat(on_disk)
        except FileNotFoundError:
            if digest:
                removed.append(path)
            continue
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        files.append(ListedFile(path, on_disk, st.st_size, st.st_mtime_ns))
    changed, _, unchanged, hashed = _compared(files, manifest.files, racy_from, settings)  # none added: all known
    skipped = {reason: sorted(manifest.skipped.get(reason.value, ())) for reason in SkipReason}
    listing = Listing(Path(base), files, skipped, manifest.used_git)
    looked = Staleness(changed, [], sorted(removed), listing, unchanged, listed_ns, hashed,
                       time.perf_counter() - t0, run)
    _record(looked, cache, settings)  # a branch switch the watcher refreshed at once: 300 files a read
    return looked


# The walker's own rule files: a save of one changes what the walk lists, which only a walk tells
RULE_FILES = frozenset({".gitignore", ".gitattributes"})


def _all_listed(root: Path, manifest: Manifest, paths: Iterable[str]) -> bool:
    """Whether each of ``paths`` (a watcher's report of what changed, absolute) is a file the run of
    ``manifest`` listed (indexed or not), and none is one of the walker's rule files: then a look by a stat
    of each listed file (``look_by_stats``) finds what a walk would, and the walk is spared (a standard
    library's: ~0.1 s of every save the watcher refreshes). False for a new path, a deleted folder's or a
    rule file: the walk finds new files and applies the rules."""
    for path in paths:
        listed = listed_name(root, path)
        if listed is None or listed not in manifest.files or listed.rsplit("/", 1)[-1] in RULE_FILES:
            return False
    return True


def listed_name(root: Path, path: str) -> str | None:
    """``path`` (absolute, as a watcher reports it) as a listing names it; None outside ``root``."""
    for base in (str(root), os.path.realpath(root)):
        if os.path.commonpath([path, base]) == base:
            rel = os.path.relpath(path, base)
            return None if rel.startswith("..") else escape_path(Path(rel).as_posix())
    return None


def _known_text(manifest: Manifest) -> Callable[[str, int, int], bool]:
    """Whether the last run indexed a file as text at this size and mtime, outside the racy window: the
    walker need not sniff it (a look takes such a file as unchanged all the same)."""
    racy_from, files = manifest.listed_ns - RACY_NS, manifest.files

    def known(path: str, size: int, mtime_ns: int) -> bool:
        entry = files.get(path)
        return entry is not None and bool(entry[2]) and entry[0] == size and entry[1] == mtime_ns < racy_from

    return known


def _trusted(cache: Path, run: str, settings: Settings) -> Manifest | None:
    """The manifest the last run left, unless it is of another graph state or its hashes of another
    kind (then every file is hashed and compared with the graph)."""
    manifest = Manifest.load(cache)
    return manifest if manifest is not None and manifest.run == run and manifest.clear == settings.store_secrets \
        else None


def _digest(f: ListedFile, settings: Settings) -> str:
    """The file's content hash as the index records it; "" when it is not indexable text."""
    got = read_source(f, settings.max_file_bytes)
    return "" if isinstance(got, SkipReason) else content_digest(got.text, settings.store_secrets)


def manifest_after_run(run: str, listing: Listing, listed_ns: int, hashes: dict[str, str], clear: bool) -> Manifest:
    """The manifest an index run leaves: every listed file's stat as listed, the hash it indexed."""
    return Manifest(run, listed_ns, {f.path: (f.size, f.mtime_ns, hashes.get(f.path, "")) for f in listing.files},
                    clear, listing.used_git, {r.value: list(p) for r, p in listing.skipped.items() if p})


def stale_notice(stale: Sequence[str], shown: int = 5) -> str:
    """The line that names files changed on disk since they were indexed ("" for none)."""
    if not stale:
        return ""
    more = f" and {len(stale) - shown} more" if len(stale) > shown else ""
    return (f"stale: {len(stale)} file{'s' if len(stale) != 1 else ''} changed on disk since indexed "
            f"({', '.join(stale[:shown])}{more}); lines may have moved: run `acms index`")
