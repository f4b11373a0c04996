"""Which way of reading source files an index was built with.

An index run records ``extractor_version()`` on its IndexRun. When the next run finds another one (a
capture file in ``languages/`` changed, or ``EXTRACTION`` was bumped because the Python extractors
say something else of the same file), every file is read again, as after an ontology migration:
otherwise an unchanged file would keep what an older acms made of it (a Go named type that is no
entity, a method that is a function) until it happens to change.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from acms import resources

__all__ = ["EXTRACTION", "extractor_version"]

#: Bump when the Python extractors (``ast``, the document sections, fragments) emit something else
#: for the same file; a change of a ``languages/`` file is seen without it.
EXTRACTION = "2026-11-30b"  # JavaScript private members, C++ destructors and operators, Rust raw identifiers; "$" kept in JavaScript names


@lru_cache(maxsize=1)
def extractor_version() -> str:
    """``EXTRACTION`` and a digest of every language capture file and their configuration."""
    digest = hashlib.sha256(EXTRACTION.encode())
    for item in resources.iter_files("languages"):
        if item.name.endswith((".scm", ".toml")):
            digest.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return f"{EXTRACTION}+{digest.hexdigest()[:12]}"
