"""Everything that differs between SQLite and PostgreSQL lives here.

SQLite: an FTS5 external-content table (porter stemming) ranked by ``bm25()``; embeddings as
float32 BLOBs scored with numpy; writes serialised by ``BEGIN IMMEDIATE``.
PostgreSQL: a generated ``tsvector`` column with a GIN index ranked by ``ts_rank_cd``; a
pgvector ``vector(384)`` column with an HNSW cosine index; writes serialised by a
transaction-scoped advisory lock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, LargeBinary, text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

EMBEDDING_DIMENSIONS = 384
# Arbitrary constant naming the store's single writer lock in pg_advisory_xact_lock.
WRITE_LOCK_KEY = 4_915_001
HNSW_MIN_EF_SEARCH = 100
_TERM = re.compile(r"\w+", re.UNICODE)


class EmbeddingVector(TypeDecorator[NDArray[np.float32]]):
    """A 384-dimension float32 vector: pgvector on PostgreSQL, a raw BLOB elsewhere."""

    impl = LargeBinary
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from pgvector.sqlalchemy import Vector

            return dialect.type_descriptor(Vector(EMBEDDING_DIMENSIONS))
        return dialect.type_descriptor(LargeBinary())

    def process_bind_param(self, value: NDArray[np.float32] | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        vector = np.asarray(value, dtype=np.float32).reshape(-1)
        if vector.shape[0] != EMBEDDING_DIMENSIONS:
            raise ValueError(f"embedding has {vector.shape[0]} dimensions, expected {EMBEDDING_DIMENSIONS}")
        if dialect.name == "postgresql":
            return vector
        return vector.tobytes()

    def process_result_value(self, value: Any, dialect: Dialect) -> NDArray[np.float32] | None:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray | memoryview):
            return np.frombuffer(bytes(value), dtype=np.float32)
        return np.asarray(value, dtype=np.float32)


def create_search_indexes(connection: Connection) -> None:
    """Lexical and vector indexes over ``chunks`` (called from the initial migration)."""
    if connection.dialect.name == "postgresql":
        connection.execute(
            text(
                "ALTER TABLE chunks ADD COLUMN text_tsv tsvector "
                "GENERATED ALWAYS AS (to_tsvector('english', coalesce(heading_text, '') || ' ' || text)) STORED"
            )
        )
        connection.execute(text("CREATE INDEX ix_chunks_text_tsv ON chunks USING gin (text_tsv)"))
        connection.execute(
            text("CREATE INDEX ix_chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)")
        )
        return
    connection.execute(
        text(
            "CREATE VIRTUAL TABLE chunks_fts USING fts5("
            "heading_text, text, content='chunks', content_rowid='id', tokenize='porter unicode61')"
        )
    )
    connection.execute(
        text(
            "CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN "
            "INSERT INTO chunks_fts(rowid, heading_text, text) VALUES (new.id, new.heading_text, new.text); END"
        )
    )
    connection.execute(
        text(
            "CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN "
            "INSERT INTO chunks_fts(chunks_fts, rowid, heading_text, text) "
            "VALUES ('delete', old.id, old.heading_text, old.text); END"
        )
    )
    connection.execute(
        text(
            "CREATE TRIGGER chunks_fts_update AFTER UPDATE OF heading_text, text ON chunks BEGIN "
            "INSERT INTO chunks_fts(chunks_fts, rowid, heading_text, text) "
            "VALUES ('delete', old.id, old.heading_text, old.text); "
            "INSERT INTO chunks_fts(rowid, heading_text, text) VALUES (new.id, new.heading_text, new.text); END"
        )
    )


def drop_search_indexes(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("DROP INDEX IF EXISTS ix_chunks_embedding_hnsw"))
        connection.execute(text("DROP INDEX IF EXISTS ix_chunks_text_tsv"))
        connection.execute(text("ALTER TABLE chunks DROP COLUMN IF EXISTS text_tsv"))
        return
    for trigger in ("chunks_fts_insert", "chunks_fts_delete", "chunks_fts_update"):
        connection.execute(text(f"DROP TRIGGER IF EXISTS {trigger}"))
    connection.execute(text("DROP TABLE IF EXISTS chunks_fts"))


def create_extensions(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))


def query_terms(query: str) -> list[str]:
    """Word terms of a free-text query, lowercased and deduplicated in order."""
    seen: dict[str, None] = {}
    for term in _TERM.findall(query.lower()):
        seen.setdefault(term, None)
    return list(seen)


def lexical_score_meaning(dialect_name: str) -> str:
    if dialect_name == "postgresql":
        return "ts_rank_cd over an OR of query terms (english tsvector); higher is better; PostgreSQL-local"
    return "negated FTS5 bm25() over an OR of query terms (porter stemming); higher is better; SQLite-local"


def lexical_search_ids(connection: Connection, query: str, limit: int) -> list[tuple[int, float]]:
    """Current chunk ids matching any query term, best first, with the backend's lexical score."""
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    if connection.dialect.name == "postgresql":
        tsquery = " | ".join(terms)
        rows = connection.execute(
            text(
                "SELECT c.id, ts_rank_cd(c.text_tsv, q) AS score "
                "FROM chunks c, to_tsquery('english', :tsquery) q "
                "WHERE c.is_current AND c.text_tsv @@ q "
                "ORDER BY score DESC, c.id ASC LIMIT :limit"
            ),
            {"tsquery": tsquery, "limit": limit},
        )
        return [(int(row[0]), float(row[1])) for row in rows]
    match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
    # Rank inside the FTS index first and check is_current only for the leading hits: joining
    # every match to its chunk row reads each matching row's text and embedding pages. Dropping
    # non-current ids from the ranked prefix keeps the order, so when the prefix still holds
    # `limit` current hits (or is the whole match set) the answer equals the joined query's.
    prefix = limit + max(16, limit // 2)
    ranked = [
        (int(row[0]), float(row[1]))
        for row in connection.execute(
            text(
                "SELECT rowid, -bm25(chunks_fts) AS score FROM chunks_fts "
                "WHERE chunks_fts MATCH :match ORDER BY score DESC, rowid ASC LIMIT :limit"
            ),
            {"match": match, "limit": prefix},
        )
    ]
    current = _current_chunk_ids(connection, [chunk_id for chunk_id, _ in ranked])
    hits = [hit for hit in ranked if hit[0] in current]
    if len(hits) >= limit or len(ranked) < prefix:
        return hits[:limit]
    rows = connection.execute(
        text(
            "SELECT c.id, -bm25(chunks_fts) AS score FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid "
            "WHERE chunks_fts MATCH :match AND c.is_current "
            "ORDER BY score DESC, c.id ASC LIMIT :limit"
        ),
        {"match": match, "limit": limit},
    )
    return [(int(row[0]), float(row[1])) for row in rows]


def _current_chunk_ids(connection: Connection, chunk_ids: Sequence[int]) -> set[int]:
    if not chunk_ids:
        return set()
    placeholders = ", ".join(f":id{index}" for index in range(len(chunk_ids)))
    rows = connection.execute(
        text(f"SELECT id FROM chunks WHERE is_current AND id IN ({placeholders})"),
        {f"id{index}": chunk_id for index, chunk_id in enumerate(chunk_ids)},
    )
    return {int(row[0]) for row in rows}


def pg_vector_search_ids(
    connection: Connection, vector: Sequence[float], limit: int
) -> list[tuple[int, float]]:
    """Current chunk ids nearest by cosine (HNSW), with cosine similarity."""
    literal = "[" + ",".join(f"{float(value):.8g}" for value in vector) + "]"
    # The HNSW scan returns at most ef_search rows before the is_current filter; widen it for
    # larger limits. is_local=true keeps the setting inside this transaction.
    ef_search = min(1000, max(HNSW_MIN_EF_SEARCH, 4 * limit))
    connection.execute(text("SELECT set_config('hnsw.ef_search', :ef, true)"), {"ef": str(ef_search)})
    rows = connection.execute(
        text(
            # ORDER BY must be the bare distance expression, or the planner cannot use the HNSW index.
            "SELECT id, 1 - (embedding <=> CAST(:vec AS vector)) AS cosine FROM chunks "
            "WHERE is_current AND embedding IS NOT NULL "
            "ORDER BY embedding <=> CAST(:vec AS vector) LIMIT :limit"
        ),
        {"vec": literal, "limit": limit},
    )
    hits = [(int(row[0]), float(row[1])) for row in rows]
    # Equal distances come back in index order; sort them by id so results are reproducible.
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


def acquire_write_lock(connection: Connection) -> None:
    """Serialise writers for the rest of the current transaction."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})
    # SQLite writers open with BEGIN IMMEDIATE (see configure_sqlite_engine), which already
    # holds the database's reserved lock.


def configure_sqlite_engine(engine: Any) -> None:
    """WAL, foreign keys, busy timeout, and BEGIN IMMEDIATE for write transactions.

    pysqlite's own transaction handling is switched off so that the BEGIN statement is ours:
    a write transaction asks for ``execution_options(sqlite_begin="IMMEDIATE")``.
    """
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout = 60000")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")
