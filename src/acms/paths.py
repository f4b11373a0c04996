"""The one check that a user-given project path is an existing directory."""

from __future__ import annotations

from pathlib import Path

from acms.errors import NotADirectory, PathNotFound


def project_root(path: str | Path) -> Path:
    """The resolved directory, or a one-line user error naming the path."""
    p = Path(path)
    if not p.exists():
        raise PathNotFound(f"no such directory: {p}")
    if not p.is_dir():
        raise NotADirectory(f"not a directory: {p} (give the project's root folder)")
    return p.resolve()
