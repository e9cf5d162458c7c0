"""Everything that differs between SQLite and PostgreSQL lives here.

SQLite: an FTS5 external-content table (porter stemming) ranked by ``bm25()``; embeddings as
float32 BLOBs scored with numpy; writes serialised by ``BEGIN IMMEDIATE``.
PostgreSQL: a generated english ``tsvector`` column (GIN index), with posting lists and
current-chunk totals kept from it by triggers, ranked by Okapi BM25 computed in SQL (same k1, b and
idf as FTS5); a pgvector ``vector(384)`` column with an HNSW cosine index; writes serialised by a
transaction-scoped advisory lock.
"""

from __future__ import annotations

import re
import time
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
# FTS5's bm25() defaults, so that both backends rank with the same formula.
BM25_K1 = 1.2
BM25_B = 0.75
# FTS5 replaces a non-positive idf (a term in more than half the rows) by this.
BM25_MIN_IDF = 1e-6
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


# PostgreSQL BM25 statistics (revision 0002), kept by statement-level triggers on ``chunks``:
# - ``text_tsv_length``: a chunk's BM25 document length, the number of token positions in its
#   english tsvector (stop words have none). Generated from the same expression as ``text_tsv``
#   because a generated column cannot read another one.
# - ``chunks_text_tsv_postings``: (lexeme, chunk, term frequency) for every chunk, current or not,
#   so a query reads its terms' posting lists from one index instead of decompressing the
#   tsvector of every matching chunk (SciFact, 809 queries on a busy 2-core machine: p50 10 ms
#   and p95 20 ms, against 35 ms and 60 ms ranking the GIN index's matches from their tsvectors).
# - ``chunks_text_tsv_stats``: count and total length of the *current* chunks (N and avgdl).
# tsvector limits apply to both tf and length: to_tsvector keeps at most 255 positions per
# lexeme (documented as 256) and positions above 16,383 collapse into one, so a lexeme repeated
# more than 255 times, or a chunk longer than 16,383 tokens, is counted short.
_BM25_STATISTICS_DDL = (
    "CREATE FUNCTION tsvector_token_count(vector tsvector) RETURNS integer "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
    "AS $$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer "
    "FROM unnest(vector) $$",
    "ALTER TABLE chunks ADD COLUMN text_tsv_length integer GENERATED ALWAYS AS "
    "(tsvector_token_count(to_tsvector('english', coalesce(heading_text, '') || ' ' || text))) STORED",
    "CREATE TABLE chunks_text_tsv_postings ("
    "lexeme text NOT NULL, "
    "chunk_id integer NOT NULL, "
    "tf integer NOT NULL, "
    "PRIMARY KEY (lexeme, chunk_id) INCLUDE (tf))",
    "CREATE INDEX ix_chunks_text_tsv_postings_chunk ON chunks_text_tsv_postings (chunk_id)",
    # Lets the join to current chunks read ids and lengths from a small index, not the wide rows.
    "CREATE INDEX ix_chunks_text_tsv_length_current ON chunks (id) INCLUDE (text_tsv_length) WHERE is_current",
    "INSERT INTO chunks_text_tsv_postings (lexeme, chunk_id, tf) "
    "SELECT p.lexeme, c.id, coalesce(array_length(p.positions, 1), 1) FROM chunks c, unnest(c.text_tsv) AS p",
    "CREATE TABLE chunks_text_tsv_stats ("
    "id smallint PRIMARY KEY CHECK (id = 1), "
    "current_chunks bigint NOT NULL, "
    "current_tokens bigint NOT NULL)",
    "INSERT INTO chunks_text_tsv_stats (id, current_chunks, current_tokens) "
    "SELECT 1, count(*), coalesce(sum(text_tsv_length), 0) FROM chunks WHERE is_current",
    """CREATE FUNCTION chunks_text_tsv_bm25_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    added_chunks bigint := 0;
    added_tokens bigint := 0;
    removed_chunks bigint := 0;
    removed_tokens bigint := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO chunks_text_tsv_postings (lexeme, chunk_id, tf)
        SELECT p.lexeme, n.id, coalesce(array_length(p.positions, 1), 1)
        FROM new_chunks n, unnest(n.text_tsv) AS p;
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM chunks_text_tsv_postings AS p USING old_chunks AS o WHERE p.chunk_id = o.id;
    ELSE
        DELETE FROM chunks_text_tsv_postings AS p USING old_chunks AS o
        WHERE p.chunk_id = o.id
          AND NOT EXISTS (SELECT 1 FROM new_chunks n WHERE n.id = o.id AND n.text_tsv = o.text_tsv);
        INSERT INTO chunks_text_tsv_postings (lexeme, chunk_id, tf)
        SELECT p.lexeme, n.id, coalesce(array_length(p.positions, 1), 1)
        FROM new_chunks n, unnest(n.text_tsv) AS p
        WHERE NOT EXISTS (SELECT 1 FROM old_chunks o WHERE o.id = n.id AND o.text_tsv = n.text_tsv);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT count(*), coalesce(sum(text_tsv_length), 0) INTO added_chunks, added_tokens
        FROM new_chunks WHERE is_current;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT count(*), coalesce(sum(text_tsv_length), 0) INTO removed_chunks, removed_tokens
        FROM old_chunks WHERE is_current;
    END IF;
    IF added_chunks <> removed_chunks OR added_tokens <> removed_tokens THEN
        UPDATE chunks_text_tsv_stats
        SET current_chunks = current_chunks + added_chunks - removed_chunks,
            current_tokens = current_tokens + added_tokens - removed_tokens
        WHERE id = 1;
    END IF;
    RETURN NULL;
END
$$""",
    # Transition tables allow one event per trigger, hence three triggers on one function.
    "CREATE TRIGGER chunks_text_tsv_bm25_insert AFTER INSERT ON chunks "
    "REFERENCING NEW TABLE AS new_chunks "
    "FOR EACH STATEMENT EXECUTE FUNCTION chunks_text_tsv_bm25_apply()",
    "CREATE TRIGGER chunks_text_tsv_bm25_update AFTER UPDATE ON chunks "
    "REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks "
    "FOR EACH STATEMENT EXECUTE FUNCTION chunks_text_tsv_bm25_apply()",
    "CREATE TRIGGER chunks_text_tsv_bm25_delete AFTER DELETE ON chunks "
    "REFERENCING OLD TABLE AS old_chunks "
    "FOR EACH STATEMENT EXECUTE FUNCTION chunks_text_tsv_bm25_apply()",
)


def create_bm25_statistics(connection: Connection) -> None:
    """Document lengths, posting lists and current-chunk totals for BM25 on PostgreSQL; nothing
    on SQLite, whose FTS5 index keeps its own."""
    if connection.dialect.name != "postgresql":
        return
    for statement in _BM25_STATISTICS_DDL:
        connection.execute(text(statement))


def drop_bm25_statistics(connection: Connection) -> None:
    if connection.dialect.name != "postgresql":
        return
    for trigger in (
        "chunks_text_tsv_bm25_insert",
        "chunks_text_tsv_bm25_update",
        "chunks_text_tsv_bm25_delete",
    ):
        connection.execute(text(f"DROP TRIGGER IF EXISTS {trigger} ON chunks"))
    connection.execute(text("DROP FUNCTION IF EXISTS chunks_text_tsv_bm25_apply()"))
    connection.execute(text("DROP TABLE IF EXISTS chunks_text_tsv_stats"))
    connection.execute(text("DROP TABLE IF EXISTS chunks_text_tsv_postings"))
    connection.execute(text("DROP INDEX IF EXISTS ix_chunks_text_tsv_length_current"))
    connection.execute(text("ALTER TABLE chunks DROP COLUMN IF EXISTS text_tsv_length"))
    connection.execute(text("DROP FUNCTION IF EXISTS tsvector_token_count(tsvector)"))


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
        return (
            "Okapi BM25 (k1=1.2, b=0.75, FTS5's idf) over an OR of query terms on the english tsvector, "
            "N, avgdl and df from current chunks; higher is better; PostgreSQL-local"
        )
    return "negated FTS5 bm25() over an OR of query terms (porter stemming); higher is better; SQLite-local"


def lexical_search_ids(connection: Connection, query: str, limit: int) -> list[tuple[int, float]]:
    """Current chunk ids matching any query term, best first, with the backend's lexical score."""
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    if connection.dialect.name == "postgresql":
        return _pg_bm25_search_ids(connection, terms, limit)
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


_PG_BM25_QUERY = (
    "WITH stats AS ("
    " SELECT current_chunks::float8 AS n, current_tokens::float8 / nullif(current_chunks, 0) AS avgdl"
    " FROM chunks_text_tsv_stats WHERE id = 1),"
    " postings AS ("
    " SELECT p.chunk_id AS id, c.text_tsv_length AS dl, p.lexeme, p.tf"
    " FROM chunks_text_tsv_postings p JOIN chunks c ON c.id = p.chunk_id"
    " WHERE p.lexeme = ANY(CAST(:lexemes AS text[])) AND c.is_current),"
    # postings holds every current chunk with a query lexeme, so counting them there is its df.
    " idf AS ("
    " SELECT p.lexeme, ln((s.n - count(*) + 0.5) / (count(*) + 0.5)) AS raw"
    " FROM postings p CROSS JOIN stats s GROUP BY p.lexeme, s.n),"
    " weights AS ("
    " SELECT * FROM unnest(CAST(:lexemes AS text[]), CAST(:weights AS integer[])) AS w(lexeme, weight))"
    " SELECT p.id, sum("
    " w.weight * CASE WHEN i.raw <= 0 THEN :min_idf ELSE i.raw END"
    " * p.tf * (:k1 + 1) / (p.tf + :k1 * (1 - :b + :b * p.dl / s.avgdl))) AS score"
    " FROM postings p JOIN idf i USING (lexeme) JOIN weights w USING (lexeme) CROSS JOIN stats s"
    " GROUP BY p.id ORDER BY score DESC, p.id ASC LIMIT :limit"
)


def _pg_bm25_search_ids(connection: Connection, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """Okapi BM25 as FTS5's bm25() computes it, over the english lexemes of ``terms``.

    Each query term is one OR branch, as in the FTS5 match: two terms with the same stem (run,
    running) each add that lexeme's score. The posting lists of the query lexemes, joined to the
    current chunks, are every candidate; that set is also where each lexeme's document frequency
    is counted, so df needs no table of its own and always reflects the current chunks.
    """
    weights: dict[str, int] = {}
    for lexemes in connection.execute(
        text(
            "SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', term))) "
            "FROM unnest(CAST(:terms AS text[])) AS term"
        ),
        {"terms": list(terms)},
    ).scalars():
        for lexeme in lexemes:
            weights[lexeme] = weights.get(lexeme, 0) + 1
    if not weights:
        return []
    lexemes = sorted(weights)
    rows = connection.execute(
        text(_PG_BM25_QUERY),
        {
            "lexemes": lexemes,
            "weights": [weights[lexeme] for lexeme in lexemes],
            "min_idf": BM25_MIN_IDF,
            "k1": BM25_K1,
            "b": BM25_B,
            "limit": limit,
        },
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


WAL_SWITCH_TIMEOUT_S = 60.0


def enable_wal(dbapi_connection: Any, timeout_s: float = WAL_SWITCH_TIMEOUT_S) -> None:
    """Put the database in WAL mode, waiting out another connection that holds the lock the switch needs.

    Two processes opening one new store at once both switch its journal mode; the switch needs an
    exclusive lock, and SQLite may answer `database is locked` at once instead of waiting the busy
    timeout (seen as a failed `akm ingest` when two ingests started on a new store together). So the
    switch is retried, with backoff, for up to `timeout_s`; a store already in WAL mode is left alone.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        cursor = dbapi_connection.cursor()
        try:
            mode = cursor.execute("PRAGMA journal_mode").fetchone()
            if mode is not None and str(mode[0]).lower() == "wal":
                return
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except Exception as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
            if time.monotonic() + delay > deadline:
                raise
        finally:
            cursor.close()
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


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
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()
        enable_wal(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")
