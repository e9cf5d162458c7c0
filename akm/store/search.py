"""Searching current chunks: exact literals, lexical (BM25) and vector (cosine) search.

SQLite searches literals and vectors in memory: the current chunks' texts and normalised
embeddings are cached and reloaded when the chunk generation changes (every write that changes
which chunks are current bumps it). PostgreSQL searches in the database.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Engine, func, select

from akm.store import dialects
from akm.store.models import Chunk, StoreMeta
from akm.store.sources import CHUNK_GENERATION, SourceReads, StoredChunk, Vector


@dataclass
class _VectorCache:
    generation: int = -1
    ids: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    matrix: Vector = field(
        default_factory=lambda: np.zeros((0, dialects.EMBEDDING_DIMENSIONS), dtype=np.float32)
    )


_BLAS_LOCK = threading.Lock()
_blas: dict[str, Any] = {}


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the enclosed BLAS call on one thread, restoring the previous setting after.

    One matrix-vector product over the stored vectors is too small to split, and idle
    OpenBLAS workers spin afterwards: on two busy cores the product took about 10 ms with
    two threads against under 1 ms with one, and the spinning slowed the other lanes too.
    Without threadpoolctl the product runs as configured.
    """
    with _BLAS_LOCK:
        if "controller" not in _blas:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _blas["controller"] = None
            else:
                _blas["controller"] = ThreadpoolController()
        controller = _blas["controller"]
        if controller is None:
            yield
            return
        with controller.limit(limits=1, user_api="blas"):
            yield


@dataclass
class _TextCache:
    generation: int = -1
    ids: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    haystack: str = ""


class ChunkSearch(SourceReads):
    """Literal, lexical and vector search over current chunks."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._vectors = _VectorCache()
        self._vector_lock = threading.Lock()
        self._texts = _TextCache()
        self._text_lock = threading.Lock()

    @property
    def lexical_score_meaning(self) -> str:
        return dialects.lexical_score_meaning(self.dialect_name)

    def chunks_containing(self, literal: str, *, limit: int = 20) -> list[StoredChunk]:
        """Current chunks whose text contains ``literal`` exactly (case-sensitive), in storage order."""
        if not literal:
            return []
        if self.dialect_name == "sqlite" and limit >= 0 and "\x00" not in literal:
            return self.get_chunks(self._current_ids_containing(literal, limit))
        with self._reading() as session:
            ids = (
                session.scalars(
                    select(Chunk.id)
                    .where(Chunk.is_current, func.instr(Chunk.text, literal) > 0)
                    .order_by(Chunk.id)
                    .limit(limit)
                ).all()
                if self.dialect_name == "sqlite"
                else session.scalars(
                    select(Chunk.id)
                    .where(Chunk.is_current, func.strpos(Chunk.text, literal) > 0)
                    .order_by(Chunk.id)
                    .limit(limit)
                ).all()
            )
        return self.get_chunks(list(ids))

    def _current_ids_containing(self, literal: str, limit: int) -> list[int]:
        """Ids of current chunks whose text contains ``literal``, in id order, from memory.

        A substring test cannot use the FTS index, and scanning the chunks table reads every
        row's text and embedding pages. The current texts are kept joined by NUL (which the
        literal does not contain, so no match spans two chunks) and reloaded when the chunk
        generation changes, like the vector cache.
        """
        generation = self._chunk_generation()
        with self._text_lock:
            if generation != self._texts.generation:
                with self.engine.connect() as connection:
                    rows = connection.execute(
                        select(Chunk.id, Chunk.text).where(Chunk.is_current).order_by(Chunk.id)
                    ).all()
                starts: list[int] = []
                offset = 0
                for row in rows:
                    starts.append(offset)
                    offset += len(row[1]) + 1
                self._texts = _TextCache(
                    generation=generation,
                    ids=[int(row[0]) for row in rows],
                    starts=starts,
                    haystack="\x00".join(row[1] for row in rows),
                )
            cache = self._texts
        found: list[int] = []
        position = 0
        while len(found) < limit:
            at = cache.haystack.find(literal, position)
            if at < 0:
                break
            index = bisect.bisect_right(cache.starts, at) - 1
            found.append(cache.ids[index])
            if index + 1 >= len(cache.starts):
                break
            position = cache.starts[index + 1]
        return found

    def lexical_search(self, query: str, limit: int) -> list[tuple[StoredChunk, float]]:
        """Current chunks matching any query term, best first, with the backend-local lexical score."""
        with self.engine.connect() as connection:
            hits = dialects.lexical_search_ids(connection, query, limit)
        chunks = {chunk.chunk_id: chunk for chunk in self.get_chunks([chunk_id for chunk_id, _ in hits])}
        return [(chunks[chunk_id], score) for chunk_id, score in hits if chunk_id in chunks]

    def vector_search(self, vector: Sequence[float] | Vector, limit: int) -> list[tuple[StoredChunk, float]]:
        """Current chunks nearest to ``vector`` by cosine similarity, best first."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if limit <= 0 or not np.any(query):
            return []
        if self.dialect_name == "postgresql":
            with self.engine.connect() as connection:
                hits = dialects.pg_vector_search_ids(connection, query.tolist(), limit)
        else:
            hits = self._numpy_vector_search(query, limit)
        chunks = {chunk.chunk_id: chunk for chunk in self.get_chunks([chunk_id for chunk_id, _ in hits])}
        return [(chunks[chunk_id], score) for chunk_id, score in hits if chunk_id in chunks]

    def _chunk_generation(self) -> int:
        with self._reading() as session:
            value = session.scalar(select(StoreMeta.value).where(StoreMeta.key == CHUNK_GENERATION))
        return int(value or 0)

    def _numpy_vector_search(self, query: Vector, limit: int) -> list[tuple[int, float]]:
        generation = self._chunk_generation()
        with self._vector_lock:
            if generation != self._vectors.generation:
                with self.engine.connect() as connection:
                    rows = connection.execute(
                        select(Chunk.id, Chunk.embedding)
                        .where(Chunk.is_current, Chunk.embedding.is_not(None))
                        .order_by(Chunk.id)
                    ).all()
                ids = np.array([row[0] for row in rows], dtype=np.int64)
                if rows:
                    matrix = np.stack([np.asarray(row[1], dtype=np.float32) for row in rows])
                    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
                    matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
                else:
                    matrix = np.zeros((0, dialects.EMBEDDING_DIMENSIONS), dtype=np.float32)
                self._vectors = _VectorCache(generation=generation, ids=ids, matrix=matrix)
            cache = self._vectors
        if cache.ids.size == 0:
            return []
        with _one_blas_thread():
            scores = cache.matrix @ (query / np.linalg.norm(query))
        count = min(limit, scores.shape[0])
        top = np.argpartition(-scores, count - 1)[:count]
        # Ties broken by chunk id so results are reproducible.
        order = sorted(top.tolist(), key=lambda index: (-float(scores[index]), int(cache.ids[index])))
        return [(int(cache.ids[index]), float(scores[index])) for index in order]
