"""KeywordIndex.from_token_ids (texts tokenised once, numbered in any order, issue 14) saves the same
files as KeywordIndex.build of the texts."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.token_table import TokenTable

WORDS = ["parse", "HTTPServer", "headers", "Proxies", "get_value", "x", "the", "utf8", "é_name", "return", "self", "a1b2", "déjà"]


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_token_ids_in_another_order_give_the_text_index(tmp_path: Path) -> None:
    rnd = random.Random(3)
    texts = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 30))) for _ in range(60)]
    ids = [f"d{i:02}" for i in range(len(texts))]
    table = TokenTable()
    table.ids("zzz unrelated words first")  # numbers the final order would not give
    shuffled = list(range(len(texts)))
    rnd.shuffle(shuffled)
    numbered = {i: np.frombuffer(table.ids(texts[i]), dtype=np.int32) for i in shuffled}
    flat = np.concatenate([numbered[i] for i in range(len(texts))])
    lengths = np.asarray([numbered[i].size for i in range(len(texts))])
    KeywordIndex.from_token_ids(ids, flat, lengths, list(table.vocab)).save(tmp_path / "ids", key="k")
    KeywordIndex.build(ids, texts).save(tmp_path / "texts", key="k")
    assert _files(tmp_path / "ids") == _files(tmp_path / "texts")


def test_no_tokens_make_an_empty_index() -> None:
    index = KeywordIndex.from_token_ids(["a", "b"], np.zeros(0, dtype=np.int32), np.zeros(2), [])
    assert len(index) == 2 and not index.scores("anything").any()
