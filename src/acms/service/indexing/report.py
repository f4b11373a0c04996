"""What an index run reports: the counts, the skipped and quarantined files, the timings of each phase.

A module of its own because callers that only read a report (``acms.results``, the watch loop, the
façade's signatures) should not import the ingest stack; and the child process sends it back pickled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a refresh's report names no history: git's reading is imported by a run that reads it
    from acms.temporal import git_history

__all__ = ["IndexReport"]


@dataclass
class IndexReport:
    root: str
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_relinked: int = 0  # unchanged files linked again: a name they mention was added, removed or moved
    changed_paths: list[str] = field(default_factory=list)  # the files re-indexed or removed (an incremental run)
    entities: int = 0
    fragments: int = 0
    triples_written: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)
    parse_errors: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    used_git: bool = False
    up_to_date: bool = False
    embedded: int = 0
    embedding_model: str = ""
    refit_due: bool = False  # a live refresh folded on past the LSA drift's share: `acms index` fits again
    refitted: bool = False  # the LSA model was fitted again (the corpus had drifted from its fit)
    warnings: list[str] = field(default_factory=list)
    versions_archived: int = 0
    hot_entities: int = 0
    history: git_history.HistoryReport | None = None
    ontology: list[str] = field(default_factory=list)  # ontology migrations and extension changes
    notes: list[str] = field(default_factory=list)  # how the run wrote the files, when not as asked (a refresh redone whole)
    derived: int = 0  # triples added by extension rules
    secrets_removed: dict[str, dict[str, int]] = field(default_factory=dict)  # path -> kind -> count (read now)
    texts_rescrubbed: int = 0  # stored texts (history too) rewritten because the secrets policy changed
    first_run: bool = False  # nothing was stored before this run
    # Files that failed the shapes: not written (an older stored version is removed); path -> the
    # first violation's focus node, shape and message.
    quarantined: dict[str, str] = field(default_factory=dict)
    copies: int = 0  # files recorded as near-identical copies of another (uko:copyOf)

    def skipped_counts(self) -> dict[str, int]:
        return {reason: len(paths) for reason, paths in sorted(self.skipped.items())}
