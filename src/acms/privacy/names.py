"""Secret-looking file and folder names: a token used as a file name (``ghp_….json``, a cache
folder named after an API key) would reach every path, IRI, header and ``source_ref`` acms shows,
so such a name is replaced by a stable redacted form while the file itself is still read.

The form is ``REDACTED-<kind>-<digest>`` plus the name's extension: the same name always gives the
same form (re-indexing keeps the IRI; two secret names in one folder stay apart), the extension keeps
the file's language, and the digest is 8 hex characters of a SHA-256, too short to confirm a guess
of a real token."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from acms.privacy.accept import _marked
from acms.privacy.decoys import _HEX, _entropy, _looks_random, _wordy
from acms.privacy.providers import _PROVIDER_SPECS
from acms.privacy.trigger import _trie

__all__ = ["REDACTED_NAME", "redact_path", "secret_name_kind"]

REDACTED_NAME = re.compile(r"REDACTED-[a-z0-9_]+-[0-9a-f]{8}")
_STEM = re.compile(r"^(?P<stem>.+?)(?P<ext>(?:\.[A-Za-z][A-Za-z0-9]{0,7}){0,2})$")
# Any provider's needle, in one pass: most names hold none, and then only the specs without needles are
# tried (asking each spec for its needles cost ~15 µs a name, ~30 ms of a standard library's first look).
_ANY_NEEDLE = re.compile(_trie([(n, "") for *_, needles in _PROVIDER_SPECS if needles for n in needles]))
_UNNEEDLED = tuple(spec for spec in _PROVIDER_SPECS if spec[3] is None)


@lru_cache(maxsize=8192)
def secret_name_kind(name: str) -> str | None:
    """What secret a file or folder name holds (a provider token anywhere in it, or a stem of 24+
    random letters and digits), or None. Hex digests and UUIDs are names of caches and fixtures."""
    if len(name) < 16 or REDACTED_NAME.fullmatch(_STEM.match(name).group("stem")):  # type: ignore[union-attr]
        return None
    low = name.lower()
    for kind, rx, accept, needles in _PROVIDER_SPECS if _ANY_NEEDLE.search(low) else _UNNEEDLED:
        if needles is not None and not any(n in low for n in needles):
            continue
        m = re.search(rx, name)
        if m is not None and (accept is None or accept(m, name)):
            return kind
    stem = _STEM.match(name).group("stem")  # type: ignore[union-attr]
    for core in re.findall(r"[A-Za-z0-9]{24,}", stem):  # one unbroken run: names have separators
        if (not _HEX.match(core) and not _marked(core) and re.search(r"[a-z]", core)
                and re.search(r"[A-Z]", core) and re.search(r"\d", core) and not _wordy(core)
                and _looks_random(core) and _entropy(core) >= 4.0):
            return "high_entropy"
    return None


def _redacted(name: str, kind: str) -> str:
    ext = _STEM.match(name).group("ext")  # type: ignore[union-attr]
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"REDACTED-{kind}-{digest}{ext}"


def redact_path(path: str) -> str:
    """``path`` (POSIX, relative) with each secret-looking segment replaced by its redacted form;
    any other path comes back as it was (the same object)."""
    if len(path) < 16:
        return path
    parts = path.split("/")
    changed = False
    for i, part in enumerate(parts):
        kind = secret_name_kind(part)
        if kind is not None:
            parts[i] = _redacted(part, kind)
            changed = True
    return "/".join(parts) if changed else path
