"""The default embedding provider: latent semantic analysis fitted on the project itself.

Offline, no download, deterministic. ``LsaModel.fit(texts)`` builds TF-IDF over ``code_tokens``
and reduces it with a truncated SVD; ``embed`` folds a text into that space. Terms that co-occur
across the corpus (``car`` with ``automobile`` and ``engine``) end up close, so a text can match
a fragment it shares no word with: semantic signal beyond keyword overlap, learnt from the
project's own vocabulary.

TF-IDF (scikit-learn's conventions): tf is sublinear, ``1 + ln(tf)``; idf is smoothed,
``ln((1 + n) / (1 + df)) + 1``; each document row is L2-normalised. The vocabulary keeps the
``max_features`` (50k) terms of highest document frequency (ties by the term), among those in at
least ``min_df`` documents (2 once the corpus has 100 documents or more, else 1), in
alphabetical order.

SVD: Halko, Martinsson & Tropp's randomized range finder (2011) with a fixed seed, 10
oversamples and 4 power iterations normalised by LU, an orthonormal basis by CholeskyQR2, then the
small projected problem through an eigendecomposition; signs fixed so that each component's
largest entry is positive. When ``min(documents, terms) <= 1024`` the finder runs at full width,
which makes it an exact SVD. Same texts in the same order and same seed → same vectors, bit for
bit, on one machine (another BLAS may round differently; the model is fitted once and saved).

Dimensions: ``min(requested, rank // 2)``, where rank is the numerical rank of the TF-IDF matrix
(at most ``min(documents, terms)``); the halving only bites on small corpora (under ~512
fragments for the default 256). At full rank LSA folds a query onto the span of the documents
and ranks exactly as TF-IDF cosine, with no semantic signal at all. On the 40-document, 5-topic
fixture of ``tests/embeddings/test_lsa.py``, paraphrase queries sharing no word with their
target put it above every other topic's documents in 0 of 5 cases at 40 dimensions (full rank),
3 at 20 (half), 4 at 8-12, 5 at 6: a tiny corpus wants about one dimension per topic, so ask
for it (``fit(texts, dimensions=…)``); real code wants many more (figures below).

``model_id`` is ``lsa-<12 hex>-d<dims>``: a SHA-256 over the tokenizer version, the vocabulary,
the idf and the components, so a refit on a changed corpus is a different model.

Measured here (2 shared cores, load ≈2.5 from parallel work), on the corpora of
``acms.index.keyword``'s figures:

| | synthetic 50k | stdlib 35k |
| --- | --- | --- |
| ``fit(texts, 256)`` | 41.7 s | 23.0 s |
| … tokenise and count | 9.9 s | 5.4 s |
| … randomized SVD | 29.6 s | 18.4 s |
| (matrix: documents × terms, non-zeros) | (50k × 47,760, 6.9M) | (35k × 50k, 1.6M) |
| ``scipy.sparse.linalg.svds(k=256)``, ARPACK, fixed ``v0``, instead | 124 s | 80 s |
| energy captured by the randomized subspace, vs ARPACK's optimum | 98.6 % | 99.1 % |
| ``embed`` in one batch | 4,500 texts/s | 6,100 texts/s |
| ``embed`` of one short query | 0.39 ms | 0.45 ms |

A first version with QR-normalised power iterations and ``numpy.linalg.svd`` of the wide
projected matrix took 98 s on the stdlib corpus (that SVD alone: 15 s); LU, CholeskyQR2 and the
eigendecomposition brought it to 18 s for the same subspace quality.

Retrieval quality, measured on 300 CPython functions (query: the docstring's first paragraph;
document: the body without the docstring), MRR: among 500 functions, BM25 over ``code_tokens``
0.49; LSA 0.26 at 22 dimensions, 0.36 at 62, 0.40 at 248. Among 2,000: BM25 0.36; LSA 0.15 at
44, 0.26 at 256, 0.29 at 500. LSA complements keywords (the ``arce`` strategy mixes both) rather
than replacing them, and truncating harder than half the rank costs on real code.

Not done, measured: hashing the sub-tokens of out-of-vocabulary identifiers into the embedding.
On a 43-document fixture (20 dimensions) with three documents added after the fit, each naming a
new identifier, it raised the MRR of queries for those identifiers from 0.35 to 1.0 but lowered
the MRR of in-vocabulary paraphrase queries from 0.37 to 0.34. Exact new identifiers are the
keyword index's job (rebuilt with the fragments), and a corpus that drifts gets a refit (a new
``model_id``).
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import chain, count, repeat
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from acms.embeddings.base import normalize_rows

from acms.errors import ProviderError
from acms.index.scratch import atomic_directory
from acms.index.tokenize import TOKENIZER_VERSION, code_tokens

if TYPE_CHECKING:  # scipy (~0.1 s to import) is for fitting only; a query is folded in with numpy
    import scipy.sparse as sp

__all__ = ["LsaModel", "LsaProvider"]

FORMAT = "acms.lsa/2"  # the files: the vocabulary as JSON, idf and components as .npy
_READ_FORMATS = (FORMAT, "acms.lsa/1")  # /1: both arrays in one arrays.npz, read whole and hashed on every load
_ID_SCHEME = "acms.lsa/1"  # hashed into ``model_id``: a model keeps its id whatever files it is saved in
MAX_FEATURES = 50_000
_OVERSAMPLES = 10
_POWER_ITERATIONS = 4
_MIN_DF2_DOCUMENTS = 100
_EXACT_BELOW = 1024  # min(documents, terms) up to which the SVD is computed exactly
_FOLD_CHUNK = 16_384  # non-zeros folded at once by ``transform``
_RANK_TOLERANCE = 1e-5  # singular values below this fraction of the largest count as zero
# The steps a fit reports: the texts tokenised in parts (≈ a quarter of a fit's time), the TF-IDF
# matrix, the range finder's first product, each power iteration, the basis and the projected problem.
_COUNT_STEPS = 4
FIT_STEPS = _COUNT_STEPS + 1 + 1 + _POWER_ITERATIONS + 1
FitProgress = Callable[[int, int], object]  # steps done, of FIT_STEPS


def _count(texts: Sequence[str], step: Callable[[], object] = lambda: None
           ) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """Tokenise: (vocabulary in order of first sight, doc, term, tf) of each distinct pair.
    ``step()`` is called as each of ``_COUNT_STEPS`` parts of the texts is done."""
    vocab: defaultdict[str, int] = defaultdict(count().__next__)
    token_id = vocab.__getitem__
    flat = array("q")
    lengths = array("q")
    part = max(1, -(-len(texts) // _COUNT_STEPS))
    for i, text in enumerate(texts, 1):
        start = len(flat)
        flat.extend(map(token_id, code_tokens(text)))
        lengths.append(len(flat) - start)
        if i % part == 0:
            step()
    n = len(lengths)
    docs = np.repeat(np.arange(n, dtype=np.int64), np.frombuffer(lengths, np.int64))
    width = max(len(vocab), 1)
    pairs, tf = np.unique(docs * width + np.frombuffer(flat, np.int64), return_counts=True)
    doc, term = np.divmod(pairs, width)
    return dict(vocab), doc, term, tf


def _tfidf(
    n_docs: int, doc: np.ndarray, col: np.ndarray, tf: np.ndarray, idf: np.ndarray
) -> sp.csr_matrix:
    """Rows of sublinear tf × idf, L2-normalised, in the dtype of ``idf``."""
    import scipy.sparse as sp

    values = (1.0 + np.log(tf)) * idf[col]
    matrix = sp.csr_matrix((values, (doc, col)), shape=(n_docs, len(idf)), dtype=idf.dtype)
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ matrix)


def _lu_normalize(y: np.ndarray) -> np.ndarray:
    import scipy.linalg

    return scipy.linalg.lu(y, permute_l=True, check_finite=False)[0]


def _orthonormalize(y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the columns of a tall ``y``: Cholesky QR, twice (CholeskyQR2).

    Two GEMMs and a triangular solve: ≈8x faster than LAPACK's QR on 35k x 266 here. Falls back
    to QR when ``y`` is too ill-conditioned for Cholesky (a corpus with duplicate documents).
    """
    import scipy.linalg

    for _ in range(2):
        try:
            r = np.linalg.cholesky(y.T @ y).T
        except np.linalg.LinAlgError:
            return np.linalg.qr(y)[0]
        y = scipy.linalg.solve_triangular(r, y.T, trans="T", check_finite=False).T
    return y


def _randomized_svd(x: sp.csr_matrix, k: int, seed: int,
                    step: Callable[[], object] = lambda: None) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` singular values and right singular vectors (as columns) of ``x``.

    Halko et al.'s randomized range finder: a Gaussian test matrix from ``seed``, power
    iterations normalised by LU (as scikit-learn does), an orthonormal basis ``Q`` of the range,
    then the SVD of the small ``B = Q^T X`` through the eigendecomposition of ``B B^T``
    (an SVD of the wide ``B`` itself took 15 s of a 30 s fit). Values below ``_RANK_TOLERANCE``
    of the largest are dropped, so fewer than ``k`` may come back.
    """
    n, v = x.shape
    width = min(k + _OVERSAMPLES, n, v)
    xt = x.T.tocsr()
    y = x @ np.random.default_rng(seed).standard_normal((v, width))
    step()
    for _ in range(_POWER_ITERATIONS):
        y = x @ _lu_normalize(xt @ _lu_normalize(y))
        step()
    bt = xt @ _orthonormalize(y)  # B^T, v × width
    eigenvalues, eigenvectors = np.linalg.eigh(bt.T @ bt)  # ascending
    step()
    singular = np.sqrt(np.maximum(eigenvalues[::-1], 0.0))[:k]
    if not singular.size or singular[0] <= 0:
        return singular[:0], np.zeros((v, 0))
    rank = int(np.count_nonzero(singular > singular[0] * _RANK_TOLERANCE))
    components = bt @ (eigenvectors[:, ::-1][:, :rank] / singular[:rank])
    # a component's sign is arbitrary: make its largest entry positive
    signs = np.sign(components[np.abs(components).argmax(axis=0), np.arange(rank)])
    signs[signs == 0] = 1.0
    return singular[:rank], components * signs


class LsaModel:
    """A fitted LSA model: vocabulary, idf and the term → concept projection."""

    def __init__(
        self, vocabulary: Sequence[str], idf: np.ndarray, components: np.ndarray, *, seed: int = 0
    ) -> None:
        self._vocabulary = tuple(vocabulary)
        self._index = {t: i for i, t in enumerate(self._vocabulary)}
        self._idf = np.asarray(idf, dtype=np.float32)
        self._components = np.asarray(components, dtype=np.float32)
        self._seed = seed
        size = len(self._vocabulary)
        if self._components.shape[0] != size or self._idf.shape != (size,):
            raise ValueError("vocabulary, idf and components disagree in size")
        digest = self._head_digest()
        digest.update(np.ascontiguousarray(self._components).tobytes())
        self._model_id = f"lsa-{digest.hexdigest()[:12]}-d{self.dimensions}"

    def _head_digest(self) -> hashlib._Hash:
        """SHA-256 over what names the model before its components: the id's scheme, the tokenizer,
        the vocabulary and the idf."""
        digest = hashlib.sha256()
        for part in (_ID_SCHEME, TOKENIZER_VERSION, "\n".join(self._vocabulary)):
            digest.update(part.encode("utf-8") + b"\0")
        digest.update(self._idf.tobytes())
        return digest

    @classmethod
    def fit(
        cls,
        texts: Sequence[str],
        dimensions: int = 256,
        seed: int = 0,
        *,
        max_features: int = MAX_FEATURES,
        min_df: int | None = None,
        progress: FitProgress | None = None,
    ) -> LsaModel:
        """``progress(done, FIT_STEPS)`` hears of each step (a standard library's fit takes ~20 s)."""
        if dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        steps = count(1)

        def step() -> None:  # (fewer texts than parts make fewer steps: the last one says FIT_STEPS)
            if progress is not None:
                progress(min(next(steps), FIT_STEPS - 1), FIT_STEPS)

        n = len(texts)
        vocab, doc, term, tf = _count(texts, step)
        df = np.bincount(term, minlength=len(vocab))
        if min_df is None:
            min_df = 2 if n >= _MIN_DF2_DOCUMENTS else 1
        tokens = np.array(list(vocab), dtype=object)
        keep = np.flatnonzero(df >= min_df)
        if keep.size > max_features:  # highest document frequency first, ties by the term
            order = sorted(keep.tolist(), key=lambda i: (-df[i], tokens[i]))
            keep = np.array(order[:max_features])
        keep = keep[np.argsort(tokens[keep].astype(str), kind="stable")]  # alphabetical columns
        if keep.size == 0:
            raise ProviderError("cannot fit an LSA model: the corpus has no usable tokens")
        column = np.full(len(vocab), -1, dtype=np.int64)
        column[keep] = np.arange(keep.size)
        idf = np.log((1.0 + n) / (1.0 + df[keep])) + 1.0
        kept = column[term] >= 0
        x = _tfidf(n, doc[kept], column[term[kept]], tf[kept], idf)
        step()
        full = min(x.shape)
        if full <= _EXACT_BELOW or 2 * dimensions > full:
            # small: the range finder at full width is an exact SVD; then the rank is known,
            # and at most half of it is kept (see "Dimensions" above)
            _, components = _randomized_svd(x, full, seed, step)
            components = components[:, : max(1, min(dimensions, components.shape[1] // 2))]
        else:
            _, components = _randomized_svd(x, dimensions, seed, step)
        if components.shape[1] == 0:
            raise ProviderError("cannot fit an LSA model: the corpus has no usable tokens")
        if progress is not None:
            progress(FIT_STEPS, FIT_STEPS)
        return cls(tokens[keep].tolist(), idf, components, seed=seed)

    # -- properties -----------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return int(self._components.shape[1])

    @property
    def vocabulary(self) -> tuple[str, ...]:
        return self._vocabulary

    # -- use ------------------------------------------------------------------------------

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors ``(len(texts), dimensions)``, float32; no known token → a zero row."""
        index = self._index
        tokens = [code_tokens(text) for text in texts]
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        cols = np.fromiter(map(index.get, chain.from_iterable(tokens), repeat(-1)), dtype=np.int64,
                           count=int(lengths.sum()))  # -1: not in the vocabulary
        rows = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)
        known = cols >= 0
        keys = rows[known] * len(index) + cols[known]  # as a loop over texts and tokens makes them, in numpy
        pairs, tf = np.unique(keys, return_counts=True)
        doc, col = np.divmod(pairs, len(index))
        return normalize_rows(self._fold(len(texts), doc, col, tf))

    def _fold(self, n: int, doc: np.ndarray, col: np.ndarray, tf: np.ndarray) -> np.ndarray:
        """Sum of ``(1 + ln tf) · idf · component`` per text, in numpy (no scipy on the query path).

        The TF-IDF row's L2 normalisation is left out: it scales the row, and ``transform``
        normalises the result anyway. ``doc`` is sorted (``np.unique``), so each slice of the
        non-zeros is summed per text with ``reduceat``; slices bound the memory to
        ``_FOLD_CHUNK`` × dimensions floats.
        """
        out = np.zeros((n, self.dimensions), dtype=np.float32)
        if not doc.size:
            return out
        values = ((1.0 + np.log(tf)) * self._idf[col]).astype(np.float32)
        for start in range(0, doc.size, _FOLD_CHUNK):
            d = doc[start : start + _FOLD_CHUNK]
            products = self._components[col[start : start + _FOLD_CHUNK]] * values[start : start + _FOLD_CHUNK, None]
            firsts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
            out[d[firsts]] += np.add.reduceat(products, firsts, axis=0)
        return out

    # -- persistence ----------------------------------------------------------------------

    def save(self, directory: Path) -> None:
        with atomic_directory(Path(directory)) as tmp:
            np.save(tmp / "idf.npy", self._idf)
            np.save(tmp / "components.npy", np.ascontiguousarray(self._components))
            vocabulary = json.dumps(self._vocabulary, ensure_ascii=False)
            (tmp / "vocabulary.json").write_text(vocabulary, encoding="utf-8")
            manifest = {
                "format": FORMAT,
                "tokenizer": TOKENIZER_VERSION,
                "model_id": self._model_id,
                "dimensions": self.dimensions,
                "seed": self._seed,
                "head": self._head_digest().hexdigest(),
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> LsaModel:
        """Raises ``ProviderError`` when there is no model, or it is corrupt or incompatible.

        The components (a standard library's: 24 MB) are memory-mapped and checked by their header,
        shape and size, not hashed: hashing them cost every command that embeds ~40 ms of its ~50 ms
        load, and a fold touches only the rows of the query's terms. The vocabulary and idf are checked
        against the digest the save recorded (an edited vocabulary is a corrupt model). A model saved
        by an older version (one ``arrays.npz``) is read whole and its id checked as before."""
        directory = Path(directory)
        try:
            manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProviderError(
                f"no LSA model at {directory}: run `acms index` (or, in a shared remote store, `acms reindex --embeddings`) to fit it"
            ) from None
        except (OSError, ValueError) as exc:
            raise ProviderError(f"the LSA model at {directory} is unreadable ({exc})") from exc
        if manifest.get("format") not in _READ_FORMATS or manifest.get("tokenizer") != TOKENIZER_VERSION:
            raise ProviderError(
                f"the LSA model at {directory} was written by another version "
                f"({manifest.get('format')}, {manifest.get('tokenizer')}); refit it"
            )
        seed = int(manifest.get("seed", 0))
        try:
            vocabulary = json.loads((directory / "vocabulary.json").read_text(encoding="utf-8"))
            if manifest["format"] != FORMAT:
                with np.load(directory / "arrays.npz", allow_pickle=False) as arrays:
                    model = cls(vocabulary, arrays["idf"], arrays["components"], seed=seed)
            else:
                model = cls._mapped(vocabulary, np.load(directory / "idf.npy", allow_pickle=False),
                                    np.load(directory / "components.npy", mmap_mode="r", allow_pickle=False),
                                    seed, str(manifest.get("model_id", "")), str(manifest.get("head", "")))
        except (OSError, ValueError, KeyError) as exc:
            raise ProviderError(f"the LSA model at {directory} is unreadable ({exc})") from exc
        if model is None or model.model_id != manifest.get("model_id"):
            raise ProviderError(
                f"the LSA model at {directory} is corrupt (its content does not match its id)"
            )
        return model

    @classmethod
    def _mapped(cls, vocabulary: Sequence[str], idf: np.ndarray, components: np.ndarray, seed: int,
                model_id: str, head: str) -> LsaModel | None:
        """A saved model around its mapped components, under the id its manifest gives; None when its
        vocabulary and idf are not those the id was made with (``head``), or the sizes disagree."""
        model = cls.__new__(cls)
        model._vocabulary = tuple(vocabulary)
        model._idf = np.asarray(idf, dtype=np.float32)
        model._components = components
        model._seed = seed
        size = len(model._vocabulary)
        if (components.dtype != np.float32 or components.ndim != 2 or components.shape[0] != size
                or model._idf.shape != (size,) or not model_id.endswith(f"-d{components.shape[1]}")
                or model._head_digest().hexdigest() != head):
            return None
        model._index = {t: i for i, t in enumerate(model._vocabulary)}
        model._model_id = model_id
        return model


class LsaProvider:
    """``EmbeddingProvider`` over an ``LsaModel``."""

    def __init__(self, model: LsaModel) -> None:
        self._model = model

    @property
    def model(self) -> LsaModel:
        return self._model

    @property
    def model_id(self) -> str:
        return self._model.model_id

    @property
    def dimensions(self) -> int:
        return self._model.dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._model.transform(texts)

    def healthcheck(self) -> bool:
        return True
