"""A file's content hash as the graph stores it (``uko:contentHash``), in a module light enough for
every reader's look at the files (:mod:`acms.service.freshness`)."""

from __future__ import annotations

import hashlib

__all__ = ["SCRUBBED", "content_digest"]

SCRUBBED = b"\0acms-secrets-scrubbed/3"  # in the content hash: turning scrubbing on or off, or a better scrubber, re-reads every file


def content_digest(text: str, keep_secrets: bool) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass") + (b"" if keep_secrets else SCRUBBED)).hexdigest()
