"""The one check that a user-given project path is an existing directory, and the one way to leave a
small file of state that can be made again (a manifest, a kept table) whole or not at all."""

from __future__ import annotations

import os
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


def is_remote(location: object) -> bool:
    """True for an ``http://`` or ``https://`` store location (a SPARQL engine, not a directory)."""
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


def index_location(root: Path, configured: str, given: str | Path | None = None) -> Path | str:
    """The index directory: ``given`` (``--store``) when there is one, else the ``store`` setting
    (``configured``, relative to the root); an ``http(s)://`` URL (a SPARQL 1.1 engine) as it is. Here
    rather than in the façade: a command that hands its work to a running ``acms watch`` finds the index
    without importing the engine."""
    if given is not None:
        return str(given) if is_remote(str(given)) else Path(given).resolve()
    if is_remote(configured):
        return configured
    path = Path(configured)
    return path if path.is_absolute() else root / path


def write_whole(path: Path, text: str | bytes) -> bool:
    """Write ``text`` (UTF-8 when a string) to ``path`` atomically (a reader sees the old file or the new
    one); False, and the old file left as it was, when it cannot be written (a read-only index: the state
    is made again later, at some cost in time, never in correctness)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(tmp, path)
        return True
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
