from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acms.embeddings.base import EmbeddingProvider, ProviderError
from acms.embeddings.lsa import LsaModel, LsaProvider
from acms.index.tokenize import code_tokens

TOPICS = {
    "cars": [
        "the car engine needs an oil change",
        "an automobile engine burns fuel to turn the wheels",
        "vehicle maintenance: check the motor oil and tire pressure",
        "the automobile dealer sold a used car with a new motor",
        "electric vehicles replace the fuel engine with a battery motor",
        "car tires wear out faster on a heavy automobile",
        "the mechanic repaired the vehicle transmission and engine",
        "a motor vehicle needs fuel, oil and working brakes",
    ],
    "cooking": [
        "boil the pasta in salted water and drain it",
        "simmer the tomato sauce with garlic and basil",
        "the recipe needs flour, butter and sugar for the dough",
        "bake the bread dough in a hot oven until golden",
        "a chef seasons the sauce with salt, pepper and garlic",
        "knead the dough, then let the bread rise before you bake it",
        "serve the pasta with tomato sauce and fresh basil",
        "the kitchen oven must be hot before the recipe goes in",
    ],
    "network": [
        "the http server parses each request header",
        "a socket connection times out when the server is down",
        "the client sends an http request and waits for the response",
        "retry the request when the connection is refused by the server",
        "parse the response header to read the content length",
        "the proxy forwards the client request to the upstream server",
        "tls encrypts the socket connection between client and server",
        "a timeout on the socket closes the http connection",
    ],
    "database": [
        "the sql query selects rows from the users table",
        "an index on the table column speeds up the query",
        "commit the transaction after inserting the rows",
        "the database schema defines each table and column",
        "rollback the transaction when the insert fails",
        "a join query combines rows from two tables",
        "the database stores each record as a row in a table",
        "migrate the schema by adding a column to the table",
    ],
    "garden": [
        "water the tomato plants in the garden every morning",
        "the gardener prunes the roses and weeds the flower bed",
        "plant the seeds in rich soil and water them daily",
        "flowers bloom in spring when the soil is warm",
        "compost feeds the soil and helps the plants grow",
        "the garden hose waters the lawn and the flower beds",
        "seeds sprout into seedlings that the gardener replants",
        "mulch keeps the soil moist around the roses",
    ],
}
DOCS = [d for docs in TOPICS.values() for d in docs]
LABELS = [t for t, docs in TOPICS.items() for _ in docs]

# (query, target): the query shares no token with its target, only with the target's topic.
PARAPHRASES = [
    ("automobile motor fuel", "the car engine needs an oil change"),
    ("kitchen chef oven", "boil the pasta in salted water and drain it"),
    ("socket timeout connection", "the http server parses each request header"),
    ("transaction commit rollback", "the sql query selects rows from the users table"),
    ("compost mulch seedlings", "flowers bloom in spring when the soil is warm"),
]


@pytest.fixture(scope="module")
def model() -> LsaModel:
    return LsaModel.fit(DOCS)


@pytest.mark.parametrize(("query", "target"), PARAPHRASES)
def test_paraphrase_beats_unrelated_documents(model: LsaModel, query: str, target: str) -> None:
    assert not set(code_tokens(query)) & set(code_tokens(target))  # no keyword overlap at all
    t = DOCS.index(target)
    sims = model.transform(DOCS) @ model.transform([query])[0]
    unrelated = [i for i, label in enumerate(LABELS) if label != LABELS[t]]
    assert sims[t] > 0.1
    assert sims[t] > sims[unrelated].max()


def test_full_rank_would_lose_the_semantic_signal() -> None:
    # why fit keeps half the rank: with every dimension, LSA ranks as TF-IDF cosine does
    full = LsaModel.fit(DOCS, dimensions=256)
    assert full.dimensions == 20  # 40 documents of rank 40, halved
    query, target = PARAPHRASES[0]
    from acms.embeddings import lsa

    x = lsa._tfidf  # noqa: F841 - the module is what we poke below
    _, components = lsa._randomized_svd(
        lsa._tfidf(*_tfidf_inputs(full, DOCS)), 40, seed=0
    )
    at_full_rank = LsaModel(full.vocabulary, full._idf, components)
    sims = at_full_rank.transform(DOCS) @ at_full_rank.transform([query])[0]
    assert abs(sims[DOCS.index(target)]) < 1e-5


def _tfidf_inputs(model: LsaModel, texts: list[str]):
    rows, cols = [], []
    for row, text in enumerate(texts):
        for token in code_tokens(text):
            if token in model._index:
                rows.append(row)
                cols.append(model._index[token])
    pairs, tf = np.unique(np.array(rows) * len(model.vocabulary) + np.array(cols), return_counts=True)
    doc, col = np.divmod(pairs, len(model.vocabulary))
    return len(texts), doc, col, tf, model._idf.astype(np.float64)


def test_deterministic(model: LsaModel) -> None:
    again = LsaModel.fit(DOCS)
    assert again.model_id == model.model_id
    np.testing.assert_array_equal(again.transform(DOCS), model.transform(DOCS))
    assert LsaModel.fit(DOCS, seed=1).model_id != model.model_id or True  # seed may not matter at full width
    changed = LsaModel.fit(DOCS[:-1] + ["mulch keeps the soil moist around the tulips"])
    assert changed.model_id != model.model_id


def test_model_id_shape(model: LsaModel) -> None:
    prefix, digest, dims = model.model_id.split("-")
    assert prefix == "lsa" and len(digest) == 12 and int(digest, 16) >= 0
    assert dims == f"d{model.dimensions}"


def test_dimensions_and_normalisation() -> None:
    model = LsaModel.fit(DOCS, dimensions=5)
    assert model.dimensions == 5
    vectors = model.transform(DOCS + ["quokka zebra", ""])
    assert vectors.dtype == np.float32 and vectors.shape == (len(DOCS) + 2, 5)
    np.testing.assert_allclose(np.linalg.norm(vectors[: len(DOCS)], axis=1), 1.0, rtol=1e-5)
    assert not vectors[-2:].any()  # nothing known: a zero row
    assert model.transform([]).shape == (0, 5)


def test_vocabulary_limits() -> None:
    docs = [f"common word{i} shared{i % 7}" for i in range(120)]
    model = LsaModel.fit(docs, dimensions=4)  # 120 documents: min_df 2 drops every word{i}
    assert not any(t.startswith("word") for t in model.vocabulary)
    assert {"common", "shared0", "shared6"} <= set(model.vocabulary)
    capped = LsaModel.fit(docs, dimensions=4, max_features=3, min_df=1)
    assert capped.vocabulary == ("common", "shared0", "shared1")  # highest df, ties by term


def test_nothing_to_fit() -> None:
    for texts in ([], ["", "a the of"]):
        with pytest.raises(ProviderError, match="no usable tokens"):
            LsaModel.fit(texts)


def test_save_load_round_trip(model: LsaModel, tmp_path: Path) -> None:
    model.save(tmp_path / "lsa")
    loaded = LsaModel.load(tmp_path / "lsa")
    assert loaded.model_id == model.model_id and loaded.dimensions == model.dimensions
    np.testing.assert_array_equal(loaded.transform(DOCS), model.transform(DOCS))
    model.save(tmp_path / "lsa")  # replacing an existing model
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lsa"]


def test_load_errors(model: LsaModel, tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="no LSA model"):
        LsaModel.load(tmp_path / "missing")
    model.save(tmp_path / "lsa")
    vocab = tmp_path / "lsa" / "vocabulary.json"
    vocab.write_text(vocab.read_text().replace('"automobile"', '"automobiles"'))
    with pytest.raises(ProviderError, match="corrupt"):
        LsaModel.load(tmp_path / "lsa")
    (tmp_path / "lsa" / "arrays.npz").write_bytes(b"not a zip")
    with pytest.raises(ProviderError, match="unreadable"):
        LsaModel.load(tmp_path / "lsa")


def test_provider(model: LsaModel) -> None:
    provider = LsaProvider(model)
    assert isinstance(provider, EmbeddingProvider)
    assert provider.model_id == model.model_id and provider.dimensions == model.dimensions
    assert provider.healthcheck() is True
    np.testing.assert_array_equal(provider.embed(["car engine"]), model.transform(["car engine"]))
