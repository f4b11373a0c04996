"""Which project an index holds: its name (the IRIs' namespace) and, for a shared store, the identity
that tells two projects of one name apart. One place derives them, so a plan's IRIs, an index run's and
a remote store's graphs always agree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from acms.config import Settings
from acms.errors import ConfigError
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import IriMinter


def project_name(root: Path, settings: Settings, indexed: str | None = None) -> str:
    """The ``project_name`` setting, else the name the index's IRIs already use (``indexed``:
    ``indexed_project``), else the root folder's name. So a project folder renamed or moved keeps its IRIs
    (its plans, decisions and history stay linked to its code); the tree's ``uko:name`` and
    ``uko:rootPath`` follow the folder."""
    return settings.project_name or indexed or root.resolve().name


def index_minter(root: Path, settings: Settings, store: GraphStore) -> IriMinter:
    """The IRIs a write to ``store`` mints. A write that would mint another project's than the index
    holds (the ``project_name`` setting changed) is refused: the index's IRIs cannot be renamed in
    place, and triples of the new name beside the old index are no index."""
    indexed = indexed_project(store)
    minter = IriMinter(project_name(root, settings, indexed))
    if indexed is not None and indexed != minter.project_slug:
        raise ConfigError(f"the index holds project {indexed!r}, but the project_name setting says "
                          f"{minter.project_slug!r}: set project_name back to {indexed!r}, or remove the index "
                          f"to index the project again under the new name")
    return minter


def indexed_project(store: GraphStore) -> str | None:
    """The project name (slug) of the IRIs the index holds; None for an empty index."""
    rows = store.select(catalog.text("ingest/indexed-project"))
    if len(rows) != 1:
        return None  # none yet (or, in a store many projects share, not one to choose)
    return IriMinter.of_iri(rows[0]["project"].value).project_slug  # type: ignore[union-attr]


def project_identity(root: Path) -> str:
    """Which project ``root`` holds, for a shared store to tell two projects of one name apart: its git
    origin (credentials left out) and its folder in that repository, so that two clones are one project
    and two folders of a monorepo are two; outside git, its path (not its host: a laptop's name changes
    with its network, a container's with every run)."""
    def git(*args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                                  check=False)
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    origin = git("config", "--get", "remote.origin.url")
    if not origin:
        return f"path {root.resolve()}"
    parts = urlsplit(origin)
    if parts.scheme and parts.hostname:
        origin = urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))
    origin = origin.rstrip("/").removesuffix(".git")
    return f"git {origin} /{git('rev-parse', '--show-prefix').rstrip('/')}"
