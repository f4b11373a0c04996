from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from acms.removal import removals_settled
from acms.errors import ProviderError
from acms.embeddings.lsa import LsaModel, LsaProvider
from acms.index.tokenize import TOKENIZER_VERSION, code_tokens

from .support import conforms

TOPICS = {
    "cars": [
        "the car engine needs an oil change and new tires",
        "an automobile engine burns fuel; the motor turns the wheels",
        "vehicle maintenance: check the motor oil, brakes and tire pressure",
        "the dealer sold a used car with a rebuilt engine and new brakes",
        "an electric vehicle replaces the fuel engine with a battery motor",
        "automobile tires and brakes wear out faster on a heavy vehicle",
        "the mechanic repaired the car transmission, engine and brakes",
        "a motor vehicle needs fuel, oil, tires and working brakes",
    ],
    "cooking": [
        "boil the pasta, drain it and stir in the tomato sauce",
        "simmer the sauce with garlic, basil and olive oil in a pan",
        "the recipe needs flour, butter and sugar for the dough",
        "bake the bread dough in a hot oven until the crust is golden",
        "the chef seasons the sauce with salt, pepper and garlic",
        "knead the dough, let the bread rise, then bake it in the oven",
        "the chef serves fresh pasta with basil and garlic sauce",
        "preheat the kitchen oven before the recipe goes in to bake",
    ],
    "network": [
        "the http server parses each request header",
        "a socket connection times out when the server is down",
        "the client sends an http request and waits for the server response",
        "retry the request when the server refuses the socket connection",
        "parse the response header to read the content length of the request",
        "the proxy forwards the client request to the upstream http server",
        "tls encrypts the socket connection between client and server",
        "a timeout on the socket closes the http connection to the client",
    ],
    "database": [
        "the sql query selects rows from the users table",
        "an index on the table column speeds up the sql query",
        "commit the transaction after inserting the rows into the table",
        "the database schema defines each table, column and index",
        "rollback the transaction when the insert into the table fails",
        "a join query combines rows from two database tables",
        "the database stores each record as a row in a table",
        "migrate the database schema by adding a column and an index",
    ],
    "garden": [
        "water the plants in the garden every morning",
        "the gardener prunes the roses and weeds the flower bed",
        "plant the seeds in rich soil and water the seedlings daily",
        "flowers bloom in the garden when the soil is warm",
        "compost feeds the soil so the plants and roses grow",
        "the garden hose waters the lawn, the flowers and the plants",
        "seeds sprout into seedlings that the gardener plants in the bed",
        "mulch keeps the soil moist around the roses and flowers",
    ],
}

DOCS = [d for docs in TOPICS.values() for d in docs]
LABELS = [t for t, docs in TOPICS.items() for _ in docs]

# (query, target): the query shares no token with its target, only with the target's topic.
PARAPHRASES = [
    ("automobile motor fuel", "the car engine needs an oil change and new tires"),
    ("chef kitchen recipe", "bake the bread dough in a hot oven until the crust is golden"),
    ("socket timeout connection", "the http server parses each request header"),
    ("transaction commit rollback", "the sql query selects rows from the users table"),
    ("compost mulch seedlings", "flowers bloom in the garden when the soil is warm"),
]
TOPIC_DIMENSIONS = 6  # about one per topic: LSA generalises by keeping few dimensions


@pytest.fixture(scope="module")
def model() -> LsaModel:
    return LsaModel.fit(DOCS, dimensions=TOPIC_DIMENSIONS)


@pytest.mark.parametrize(("query", "target"), PARAPHRASES)
def test_paraphrase_beats_unrelated_documents(model: LsaModel, query: str, target: str) -> None:
    assert not set(code_tokens(query)) & set(code_tokens(target))  # no keyword overlap at all
    t = DOCS.index(target)
    sims = model.transform(DOCS) @ model.transform([query])[0]
    unrelated = [i for i, label in enumerate(LABELS) if label != LABELS[t]]
    assert sims[t] > sims[unrelated].max() + 0.3


def _reference_tfidf(
    vocabulary: tuple[str, ...], texts: list[str], idf: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """TF-IDF as documented in lsa.py, written out densely: (idf, L2-normalised rows)."""
    column = {t: i for i, t in enumerate(vocabulary)}
    counts = np.zeros((len(texts), len(vocabulary)))
    for row, text in enumerate(texts):
        for token in code_tokens(text):
            if token in column:
                counts[row, column[token]] += 1
    if idf is None:
        idf = np.log((1 + len(texts)) / (1 + (counts > 0).sum(axis=0))) + 1
    x = np.where(counts > 0, 1 + np.log(np.maximum(counts, 1)), 0) * idf
    return idf, x / np.linalg.norm(x, axis=1, keepdims=True)


def test_tfidf_and_why_half_the_rank_is_kept() -> None:
    default = LsaModel.fit(DOCS)  # 256 asked; 40 documents of rank 40: half of it is kept
    assert default.dimensions == 20
    idf, x = _reference_tfidf(default.vocabulary, DOCS)
    np.testing.assert_allclose(default._idf, idf, rtol=1e-6)
    # At full rank, folding in is a projection onto the documents' span: cosine = TF-IDF cosine,
    # so a paraphrase sharing no word with its target scores exactly 0 against it.
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    full = LsaModel(default.vocabulary, idf, vt.T)
    queries = [q for q, _ in PARAPHRASES] + DOCS[:3] + ["car car car engine", "oil oil pasta"]
    _, xq = _reference_tfidf(default.vocabulary, queries, idf)
    expected = xq @ x.T / np.linalg.norm(xq @ vt.T, axis=1, keepdims=True)
    got = full.transform(queries) @ full.transform(DOCS).T
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert abs(got[0, DOCS.index(PARAPHRASES[0][1])]) < 1e-5


def test_deterministic(model: LsaModel) -> None:
    again = LsaModel.fit(DOCS, dimensions=TOPIC_DIMENSIONS)
    assert again.model_id == model.model_id
    np.testing.assert_array_equal(again.transform(DOCS), model.transform(DOCS))
    changed = LsaModel.fit(DOCS[:-1] + ["mulch keeps the soil moist around the tulips"], TOPIC_DIMENSIONS)
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
    def word(i: int) -> str:  # letters only, so that code_tokens keeps it whole
        return "".join("abcdefghij"[int(c)] for c in str(i))

    docs = [f"common uniq{word(i)} shared{word(i % 7)}" for i in range(120)]
    model = LsaModel.fit(docs, dimensions=4)  # 120 documents: min_df 2 drops every uniq…
    assert not any(t.startswith("uniq") for t in model.vocabulary)
    assert {"common", "shareda", "sharedg"} <= set(model.vocabulary)
    assert len(model.vocabulary) == 8
    capped = LsaModel.fit(docs, dimensions=4, max_features=3, min_df=1)
    assert capped.vocabulary == ("common", "shareda", "sharedb")  # highest df, ties by term
    assert len(LsaModel.fit(docs[:99], dimensions=4).vocabulary) == 1 + 7 + 99  # under 100: min_df 1


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
    assert removals_settled(timeout=30)  # the one it replaced goes in the background
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lsa"]


def test_load_errors(model: LsaModel, tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="no LSA model"):
        LsaModel.load(tmp_path / "missing")
    model.save(tmp_path / "lsa")
    vocab = tmp_path / "lsa" / "vocabulary.json"
    vocab.write_text(vocab.read_text().replace('"automobile"', '"automobiles"'))
    assert '"automobiles"' in vocab.read_text()
    with pytest.raises(ProviderError, match="corrupt"):
        LsaModel.load(tmp_path / "lsa")
    model.save(tmp_path / "lsa")
    idf = tmp_path / "lsa" / "idf.npy"
    np.save(idf, np.load(idf) * 2)  # the idf is checked as the vocabulary is
    with pytest.raises(ProviderError, match="corrupt"):
        LsaModel.load(tmp_path / "lsa")
    model.save(tmp_path / "lsa")
    components = tmp_path / "lsa" / "components.npy"
    components.write_bytes(components.read_bytes()[:-64])  # cut short: the mapped file is smaller than its header says
    with pytest.raises(ProviderError, match="unreadable"):
        LsaModel.load(tmp_path / "lsa")
    components.write_bytes(b"not an array")
    with pytest.raises(ProviderError, match="unreadable"):
        LsaModel.load(tmp_path / "lsa")


def test_a_model_an_older_version_saved_loads_under_its_id(model: LsaModel, tmp_path: Path) -> None:
    """Indexes fitted before the arrays were saved apart (one ``arrays.npz``) keep their model and its
    vectors: the same id, the same folds."""
    old = tmp_path / "lsa"
    old.mkdir()
    np.savez(old / "arrays.npz", idf=model._idf, components=model._components)
    (old / "vocabulary.json").write_text(json.dumps(model.vocabulary), encoding="utf-8")
    (old / "manifest.json").write_text(json.dumps({"format": "acms.lsa/1", "tokenizer": TOKENIZER_VERSION,
                                                   "model_id": model.model_id, "seed": 0}), encoding="utf-8")
    loaded = LsaModel.load(old)
    assert loaded.model_id == model.model_id
    np.testing.assert_array_equal(loaded.transform(DOCS), model.transform(DOCS))
    (old / "arrays.npz").write_bytes(b"not a zip")
    with pytest.raises(ProviderError, match="unreadable"):
        LsaModel.load(old)


def test_provider(model: LsaModel) -> None:
    provider = LsaProvider(model)
    assert conforms(provider)
    assert provider.model_id == model.model_id and provider.dimensions == model.dimensions
    assert provider.healthcheck() is True
    np.testing.assert_array_equal(provider.embed(["car engine"]), model.transform(["car engine"]))


def test_randomized_path_is_deterministic_and_orthonormal() -> None:
    # more than 1024 documents and terms: the range finder runs at reduced width
    rng = np.random.default_rng(7)
    words = [f"w{'abcdefghij'[i // 100]}{'abcdefghij'[i // 10 % 10]}{'abcdefghij'[i % 10]}x" for i in range(1000)]
    words += [f"v{w}" for w in words[:300]]
    docs = [" ".join(rng.choice(words, 12)) for _ in range(1100)]
    first = LsaModel.fit(docs, dimensions=16)
    second = LsaModel.fit(docs, dimensions=16)
    assert first.dimensions == 16 and len(first.vocabulary) > 1024
    assert first.model_id == second.model_id
    np.testing.assert_array_equal(first._components, second._components)
    gram = first._components.T.astype(np.float64) @ first._components
    np.testing.assert_allclose(gram, np.eye(16), atol=1e-5)
    assert LsaModel.fit(docs, dimensions=16, seed=1).model_id != first.model_id


def test_fit_reports_its_steps_in_order_up_to_the_last() -> None:
    """A standard library's fit takes ~20 s: the index run shows it as a phase with these steps."""
    from acms.embeddings.lsa import FIT_STEPS

    seen: list[tuple[int, int]] = []
    LsaModel.fit([t for texts in TOPICS.values() for t in texts], dimensions=4, progress=lambda d, t: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert {t for _, t in seen} == {FIT_STEPS} and done == sorted(done) and done[-1] == FIT_STEPS
    assert len(set(done)) >= FIT_STEPS - 1  # every step is heard, none only at the end
