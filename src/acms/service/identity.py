"""Which project an index holds: its name (the IRIs' namespace) and, for a shared store, the identity
that tells two projects of one name apart. One place derives them, so a plan's IRIs, an index run's and
a remote store's graphs always agree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from acms.config import Settings


def project_name(root: Path, settings: Settings) -> str:
    """The ``project_name`` setting, else the root folder's name."""
    return settings.project_name or root.resolve().name


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
