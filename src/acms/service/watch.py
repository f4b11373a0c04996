"""Following the project: the index refreshed shortly after files are saved.

The operating system tells of changes (``watchfiles``: inotify, FSEvents, ReadDirectoryChangesW); they
are gathered until ``debounce_ms`` pass without one (at most ``BATCH_MS`` in all), so a branch switch or
a formatter run over hundreds of files is one refresh, not hundreds. An event only says "look": the
refresh itself compares sizes, mtimes and hashes (:mod:`acms.service.freshness`), by a stat of each
saved path when every one is a file the last run listed, else by listing the project by the walker's
rules (a new path, a rule file such as ``.gitignore``), so an ignored path, or a save a read refreshed
already, costs one look and never a write, and a change made while a refresh ran is found by the next
one (the watcher keeps gathering meanwhile). The index directory and the version-control internals are
not watched at all.

A refresh leaves an LSA refit that falls due for later (a read may be waiting for it; see
:mod:`acms.retrieval.drift`): once the project has been quiet for ``REFIT_IDLE_S``, the watcher fits the
model again, outside the writer's lock but for its landing (:mod:`acms.retrieval.refit_ahead`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acms.errors import AcmsError
from acms.ingest.walker import SkipReason
from acms.privacy.names import redact_path
from acms.service.freshness import listed_name

if TYPE_CHECKING:
    from acms.service.freshness import Staleness
    from acms.service.indexing import IndexReport

__all__ = ["BATCH_MS", "REFIT_IDLE_S", "Follower", "Refreshed"]

BATCH_MS = 2000  # the longest a stream of saves is gathered before it is refreshed anyway
# Seconds without a save after which a refit the refreshes left due is made. A refit's worker takes a core
# for about as long as a first embedding and its landing holds the index (a standard library: 26 s and
# ~6 s); an agent's pause between a save and its next read (its model thinking) runs to tens of seconds.
# A quiet minute: a read that comes during the landing waits a few seconds, and a busy session still
# refits long before the drift reaches REFIT_CAP, where a refresh would refit in a read's path
REFIT_IDLE_S = 60.0
RULED_OUT = frozenset(r.value for r in (SkipReason.IGNORED, SkipReason.HIDDEN, SkipReason.VENDORED, SkipReason.BUILD))


@dataclass(frozen=True)
class Refreshed:
    """One refresh the follower ran: what it re-read and how long it took (or why it failed)."""

    indexed: int = 0
    removed: int = 0
    relinked: int = 0
    paths: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    # reason -> files saved or removed that the index leaves out for what they hold (binary, too large,
    # a symlink loop, gone while read), each named once per reason
    skipped: dict[str, list[str]] = field(default_factory=dict)
    refitted: int = 0  # the LSA model was fitted again: the fragments embedded with the new one

    @property
    def changed(self) -> bool:
        """The index changed (else only ``skipped`` or ``error`` is news)."""
        return bool(self.indexed or self.removed or self.relinked)

    def line(self) -> str:
        if self.error:
            return f"refresh failed: {self.error}"
        said = ""
        if self.changed:
            parts = [f"{self.indexed} file{'s' if self.indexed != 1 else ''} re-indexed"]
            if self.removed:
                parts.append(f"{self.removed} removed")
            if self.relinked:
                parts.append(f"{self.relinked} relinked")
            said = f"{', '.join(parts)} in {self.seconds:.2f} s" + (f": {_shown(self.paths)}" if self.paths else "")
        if self.refitted:
            said += ("; " if said else "") + f"LSA model fitted again, {self.refitted:,} fragments embedded" + (
                "" if self.changed else f" in {self.seconds:.2f} s")
        if self.skipped:
            left = _shown([f"{p} ({reason})" for reason, ps in sorted(self.skipped.items()) for p in ps])
            said += ("; " if said else "") + f"skipped {left}"
        return said


def _shown(items: list[str], most: int = 3) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


class Follower:
    """Calls ``refresh()`` after saves under ``root``; ``run`` blocks, ``start`` runs it in a thread."""

    def __init__(self, root: Path, refresh: Callable[..., IndexReport | None], *, debounce_ms: int = 50,
                 ignore: Iterable[Path] = (), on_refresh: Callable[[Refreshed], object] | None = None,
                 refit_due: Callable[[], bool] = lambda: False, refit_idle_s: float = REFIT_IDLE_S) -> None:
        """``refresh(on_look=..., saved=..., refit=...)``: refresh, handing ``on_look`` the look it took at the
        project (told the paths saved), and with ``refit`` fit the model again if that is due
        (``Index.refresh``). ``refit_due()``: whether a refit is due (asked once a quiet spell of
        ``refit_idle_s`` began)."""
        self.root = root
        self._refresh = refresh
        self._refit_due = refit_due
        self.refit_idle_s = refit_idle_s
        self._quiet_since = time.monotonic()
        self._refit_asked = False  # refit_due() asked in this quiet spell
        self.debounce_ms = debounce_ms
        self._ignore = [p.resolve() for p in ignore]
        self._on_refresh = on_refresh or (lambda _r: None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refreshes = 0  # refreshes that changed the index
        self._named: dict[str, str] = {}  # path -> the reason it was last named skipped for
        self.ready = threading.Event()  # set once the operating system's watch is in place

    def run(self) -> None:
        """Catch up with what changed while nothing watched, then refresh after every burst of saves.
        The catch-up waits for the first answer of the watch (within ``rust_timeout``): the operating
        system's watch is in place then, so a save made during the catch-up is an event, not lost."""
        import watchfiles

        watch_filter = watchfiles.DefaultFilter(ignore_paths=[str(p) for p in self._ignore])
        changes = watchfiles.watch(self.root, watch_filter=watch_filter, step=self.debounce_ms, debounce=BATCH_MS,
                                   stop_event=self._stop, raise_interrupt=False, rust_timeout=500,
                                   yield_on_timeout=True)
        caught_up = False
        for batch in changes:
            self.ready.set()
            if self._stop.is_set():
                break
            if batch or not caught_up:
                caught_up = True
                self._once({path for _, path in batch})
                self._quiet_since, self._refit_asked = time.monotonic(), False
            elif not self._refit_asked and time.monotonic() - self._quiet_since >= self.refit_idle_s:
                self._refit_asked = True
                if self._refit_due():
                    self._once(set(), refit=True)

    def _once(self, saved: set[str], *, refit: bool = False) -> None:
        t0 = time.perf_counter()
        looks: list[Staleness] = []
        try:
            report = self._refresh(on_look=looks.append, saved=saved, refit=refit)
        except AcmsError as exc:
            self._on_refresh(Refreshed(seconds=time.perf_counter() - t0, error=exc.message))
            return
        except OSError as exc:
            self._on_refresh(Refreshed(seconds=time.perf_counter() - t0, error=str(exc)))
            return
        if report is not None:
            left_out = report.skipped
        elif looks:
            left_out = {reason.value: paths for reason, paths in looks[-1].listing.skipped.items()}
        else:
            left_out = {}
        changed = [] if report is None or report.up_to_date else report.changed_paths
        skipped = self._newly_skipped(left_out, saved, changed)
        refitted = report.embedded if report is not None and report.refitted else 0
        if changed:
            self.refreshes += 1
            self._on_refresh(Refreshed(report.files_indexed, report.files_removed, report.files_relinked,
                                       changed, time.perf_counter() - t0, skipped=skipped, refitted=refitted))
        elif skipped or refitted:
            self._on_refresh(Refreshed(seconds=time.perf_counter() - t0, skipped=skipped, refitted=refitted))

    def _newly_skipped(self, left_out: dict[str, list[str]], saved: set[str],
                       changed: list[str]) -> dict[str, list[str]]:
        """Of the files this burst saved or the refresh removed, those left out for what they hold, not
        named before for the same reason (a log file that stays too large is named once). Paths left out
        by the project's rules (ignored, hidden, vendored, build output) are the user's choice: not news."""
        now = {p: reason for reason, paths in left_out.items() if reason not in RULED_OUT for p in paths}
        touched = set(changed)
        for path in saved:
            listed = listed_name(self.root, path)
            if listed is not None:
                touched.add(redact_path(listed))
        news = {p: reason for p, reason in now.items() if p in touched and self._named.get(p) != reason}
        self._named = {p: reason for p, reason in {**self._named, **news}.items() if now.get(p) == reason}
        skipped: dict[str, list[str]] = {}
        for p, reason in sorted(news.items()):
            skipped.setdefault(reason, []).append(p)
        return skipped

    @property
    def watching(self) -> bool:
        """The operating system's watch is in place and its loop alive: saves reach ``refresh``."""
        thread = self._thread
        return self.ready.is_set() and not self._stop.is_set() and thread is not None and thread.is_alive()

    def start(self) -> Follower:
        self._thread = threading.Thread(target=self._guarded, name="acms-follower", daemon=True)
        self._thread.start()
        return self

    def _guarded(self, *_: Any) -> None:
        try:
            self.run()
        except Exception as exc:  # noqa: BLE001 - the server goes on; reads still look before answering
            self._on_refresh(Refreshed(error=f"watching stopped: {exc}"))

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
