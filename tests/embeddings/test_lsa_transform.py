"""LsaModel.transform builds its (text, term) keys with numpy (issue 14); the vectors are those of the
loop over texts and tokens it replaced, bit for bit."""

from __future__ import annotations

import random

import numpy as np

from acms.embeddings.base import normalize_rows
from acms.embeddings.lsa import LsaModel
from acms.index.tokenize import code_tokens

WORDS = ["parse", "http", "Server", "get_value", "x", "the", "utf8", "é", "return", "self", "zz_unknown", "HTTPServer"]


def _loop(model: LsaModel, texts: list[str]) -> np.ndarray:
    index = model._index
    rows: list[int] = []
    cols: list[int] = []
    for row, text in enumerate(texts):
        known = [i for i in map(index.get, code_tokens(text)) if i is not None]
        rows.extend([row] * len(known))
        cols.extend(known)
    keys = np.asarray(rows, np.int64) * len(index) + np.asarray(cols, np.int64)
    pairs, tf = np.unique(keys, return_counts=True)
    doc, col = np.divmod(pairs, len(index))
    return normalize_rows(model._fold(len(texts), doc, col, tf))


def test_transform_is_the_loop() -> None:
    rnd = random.Random(1)
    texts = [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 40))) for _ in range(300)]
    model = LsaModel.fit(texts, dimensions=8)
    for batch in (texts, [], ["", "zz nothing known"], texts[:7]):
        assert np.array_equal(model.transform(batch), _loop(model, batch))
