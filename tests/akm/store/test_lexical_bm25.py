"""The lexical lane's score is Okapi BM25 as FTS5 computes it, on both backends.

Expected scores are computed here by hand from the documents' tokens: k1 = 1.2, b = 0.75,
idf = log((N - df + 0.5) / (df + 0.5)) replaced by 1e-6 when not positive, N, avgdl and df
over current chunks only. The words are chosen so that porter (SQLite) and the english
snowball stemmer (PostgreSQL) leave them unchanged and none is an english stop word.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

import pytest
from sqlalchemy import inspect, text

from akm.store import EvidenceStore, migrate

from .conftest import add_markdown_version

K1 = 1.2
B = 0.75

CORPUS: dict[str, str] = {
    "d1": "cat dog cat",
    "d2": "dog fish bird tree",
    "d3": "cat bird",
    "d4": "tree red tree tree green",
    "d5": "fish fish fish fish",
    "d6": "green red blue dog",
    "d7": "bird bird cat dog fish tree red",
    "d8": "blue sky dog",
    "d9": "dog",
}


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _add_version(store: EvidenceStore, source_id: str, texts: Sequence[str], *, sha: str) -> None:
    add_markdown_version(store, source_id, texts, sha=sha)


def _fill(store: EvidenceStore, corpus: Mapping[str, str]) -> None:
    for source_id, chunk_text in corpus.items():
        _add_version(store, source_id, [chunk_text], sha=f"{source_id}-v1")


def _bm25_by_hand(documents: Mapping[str, Sequence[str]], query: Sequence[str]) -> list[tuple[str, float]]:
    """(document, score) for every document holding a query term, best first, ties in corpus order."""
    count = len(documents)
    average_length = sum(len(tokens) for tokens in documents.values()) / count
    scored: list[tuple[int, str, float]] = []
    for position, (name, tokens) in enumerate(documents.items()):
        score = 0.0
        matched = False
        for term in query:
            frequency = tokens.count(term)
            if frequency == 0:
                continue
            matched = True
            holding = sum(term in other for other in documents.values())
            idf = math.log((count - holding + 0.5) / (holding + 0.5))
            idf = idf if idf > 0 else 1e-6
            norm = K1 * (1 - B + B * len(tokens) / average_length)
            score += idf * frequency * (K1 + 1) / (frequency + norm)
        if matched:
            scored.append((position, name, score))
    scored.sort(key=lambda item: (-item[2], item[0]))
    return [(name, score) for _, name, score in scored]


def _ranked(store: EvidenceStore, query: str, limit: int = 20) -> list[tuple[str, float]]:
    return [(chunk.source_id, score) for chunk, score in store.lexical_search(query, limit)]


def _assert_ranking(actual: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [name for name, _ in actual] == [name for name, _ in expected]
    assert [score for _, score in actual] == pytest.approx(
        [score for _, score in expected], rel=1e-9, abs=1e-12
    )


QUERIES = [
    pytest.param("cat", ["cat"], id="one-term"),
    pytest.param("fish tree", ["fish", "tree"], id="two-terms"),
    # dog is in 6 of 9 documents: its idf is negative and replaced by 1e-6.
    pytest.param("dog", ["dog"], id="clamped-idf"),
    pytest.param("dog bird sky", ["dog", "bird", "sky"], id="clamped-and-rare"),
    pytest.param("red green blue sky unknownword", ["red", "green", "blue", "sky"], id="one-term-unmatched"),
    # Two query words with one stem are two OR branches in FTS5, so that stem counts twice.
    pytest.param("cat cats", ["cat", "cat"], id="same-stem-twice"),
]


@pytest.mark.parametrize(("query", "stems"), QUERIES)
def test_lexical_score_is_fts5_bm25(store: EvidenceStore, query: str, stems: list[str]) -> None:
    _fill(store, CORPUS)
    documents = {name: chunk_text.split() for name, chunk_text in CORPUS.items()}
    expected = _bm25_by_hand(documents, stems)
    assert expected  # every query above matches something
    _assert_ranking(_ranked(store, query), expected)


def test_limit_keeps_the_best_hits(store: EvidenceStore) -> None:
    _fill(store, CORPUS)
    documents = {name: chunk_text.split() for name, chunk_text in CORPUS.items()}
    _assert_ranking(_ranked(store, "fish tree", limit=2), _bm25_by_hand(documents, ["fish", "tree"])[:2])


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("zebra quokka", id="unknown-words"),
        pytest.param("the and of", id="stop-words"),
        pytest.param("!!! ???", id="no-words"),
    ],
)
def test_query_matching_nothing_returns_no_hits(store: EvidenceStore, query: str) -> None:
    _fill(store, CORPUS)
    assert store.lexical_search(query, 10) == []


@pytest.mark.postgres
def test_sqlite_and_postgresql_rank_alike(sqlite_store: EvidenceStore, postgres_store: EvidenceStore) -> None:
    for opened in (sqlite_store, postgres_store):
        _fill(opened, CORPUS)
    for query in ("cat", "fish tree", "bird red", "dog cat fish", "green sky tree"):
        on_sqlite = _ranked(sqlite_store, query)
        on_postgresql = _ranked(postgres_store, query)
        assert [name for name, _ in on_postgresql] == [name for name, _ in on_sqlite], query
        assert [score for _, score in on_postgresql] == pytest.approx(
            [score for _, score in on_sqlite], rel=1e-9
        )


def _stats(store: EvidenceStore) -> tuple[tuple[int, int], tuple[int, int]]:
    """(kept totals, totals recounted from the current chunks)."""
    with store.engine.connect() as connection:
        kept = connection.execute(
            text("SELECT current_chunks, current_tokens FROM chunks_text_tsv_stats")
        ).one()
        recounted = connection.execute(
            text("SELECT count(*), coalesce(sum(text_tsv_length), 0) FROM chunks WHERE is_current")
        ).one()
    return (int(kept[0]), int(kept[1])), (int(recounted[0]), int(recounted[1]))


def _postings(store: EvidenceStore) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    """(kept posting lists, posting lists recomputed from every chunk's tsvector)."""
    with store.engine.connect() as connection:
        kept = connection.execute(
            text("SELECT lexeme, chunk_id, tf FROM chunks_text_tsv_postings ORDER BY lexeme, chunk_id")
        ).all()
        recomputed = connection.execute(
            text(
                "SELECT p.lexeme, c.id, array_length(p.positions, 1) FROM chunks c, unnest(c.text_tsv) AS p "
                "ORDER BY p.lexeme, c.id"
            )
        ).all()
    return [tuple(row) for row in kept], [tuple(row) for row in recomputed]  # type: ignore[misc]


@pytest.mark.postgres
def test_retired_chunks_are_not_counted(postgres_store: EvidenceStore) -> None:
    # Retired versions full of "cat": counted, they would raise N and df(cat) and lower avgdl.
    _add_version(postgres_store, "old", ["cat", "cat cat", "cat fish", "cat"], sha="old-v1")
    _add_version(postgres_store, "d1", ["cat cat cat cat bird bird"], sha="d1-v0")
    _fill(postgres_store, CORPUS)
    _add_version(postgres_store, "old", ["sky"], sha="old-v2")
    # In chunk id order: the current "old" chunk is the newest.
    current = {**{name: chunk_text.split() for name, chunk_text in CORPUS.items()}, "old": ["sky"]}
    for query in (["cat"], ["cat", "sky"], ["fish", "dog"]):
        _assert_ranking(_ranked(postgres_store, " ".join(query)), _bm25_by_hand(current, query))
    kept, recounted = _stats(postgres_store)
    assert kept == recounted == (10, sum(len(tokens) for tokens in current.values()))


@pytest.mark.postgres
def test_current_totals_follow_every_change(postgres_store: EvidenceStore) -> None:
    assert _stats(postgres_store) == ((0, 0), (0, 0))
    _add_version(postgres_store, "alpha", ["cat dog", "the fish and the bird"], sha="a1")
    assert _stats(postgres_store) == ((2, 4), (2, 4))
    _add_version(postgres_store, "alpha", ["tree"], sha="a2")
    assert _stats(postgres_store) == ((1, 1), (1, 1))
    _add_version(postgres_store, "alpha", ["cat dog", "the fish and the bird"], sha="a1")  # a revert
    assert _stats(postgres_store) == ((2, 4), (2, 4))
    kept, recomputed = _postings(postgres_store)
    assert kept == recomputed
    # A revert is a new version with chunks of its own: the first observation's postings stay.
    assert [lexeme for lexeme, _, _ in kept] == [
        "bird",
        "bird",
        "cat",
        "cat",
        "dog",
        "dog",
        "fish",
        "fish",
        "tree",
    ]
    with postgres_store.transaction() as tx:
        tx.mark_source_deleted("alpha")
    assert _stats(postgres_store) == ((0, 0), (0, 0))


@pytest.mark.postgres
def test_posting_lists_follow_text_changes_and_deletes(postgres_store: EvidenceStore) -> None:
    _add_version(postgres_store, "alpha", ["cat dog cat", "fish"], sha="a1")
    with postgres_store.engine.begin() as connection:
        connection.execute(text("UPDATE chunks SET text = 'bird bird' WHERE text = 'fish'"))
    kept, recomputed = _postings(postgres_store)
    assert kept == recomputed
    assert [(lexeme, tf) for lexeme, _, tf in kept] == [("bird", 2), ("cat", 2), ("dog", 1)]
    assert _stats(postgres_store) == ((2, 5), (2, 5))
    with postgres_store.engine.begin() as connection:
        connection.execute(text("DELETE FROM chunks WHERE text = 'bird bird'"))
    kept, recomputed = _postings(postgres_store)
    assert kept == recomputed
    assert [(lexeme, tf) for lexeme, _, tf in kept] == [("cat", 2), ("dog", 1)]
    assert _stats(postgres_store) == ((1, 3), (1, 3))


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("chunk_text", "length"),
    [
        pytest.param("cat dog", 2, id="words"),
        pytest.param("The cat and the dog sat on a mat", 4, id="stop-words-not-counted"),
        pytest.param("cats running", 2, id="stems"),
        # to_tsvector keeps at most 255 positions per lexeme (the documented limit is 256), so
        # term frequency and length stop there.
        pytest.param("cat " * 300, 255, id="positions-per-lexeme-capped"),
    ],
)
def test_document_length_counts_tsvector_positions(
    postgres_store: EvidenceStore, chunk_text: str, length: int
) -> None:
    _add_version(postgres_store, "alpha", [chunk_text], sha="a1")
    with postgres_store.engine.connect() as connection:
        assert connection.execute(text("SELECT text_tsv_length FROM chunks")).scalar_one() == length


def test_score_meaning_names_bm25(store: EvidenceStore) -> None:
    assert "bm25" in store.lexical_score_meaning.lower()


def test_revision_0002_builds_statistics_from_existing_chunks(store: EvidenceStore) -> None:
    _add_version(store, "old", ["cat cat fish"], sha="old-v1")
    _fill(store, CORPUS)
    _add_version(store, "old", ["sky sky"], sha="old-v2")
    migrate.downgrade(store.engine, "0001_evidence_store")
    if store.dialect_name == "postgresql":
        tables = set(inspect(store.engine).get_table_names())
        assert not tables & {"chunks_text_tsv_stats", "chunks_text_tsv_postings"}
        assert "text_tsv_length" not in {
            column["name"] for column in inspect(store.engine).get_columns("chunks")
        }
    migrate.upgrade(store.engine)
    documents = {**{name: chunk_text.split() for name, chunk_text in CORPUS.items()}, "old": ["sky", "sky"]}
    expected = _bm25_by_hand(documents, ["cat", "sky"])
    if store.dialect_name == "sqlite":
        # FTS5 keeps retired chunks in its index, so there they still count in N, avgdl and df.
        counted = {"retired": ["cat", "cat", "fish"], **documents}
        expected = [hit for hit in _bm25_by_hand(counted, ["cat", "sky"]) if hit[0] != "retired"]
    _assert_ranking(_ranked(store, "cat sky"), expected)
    if store.dialect_name == "postgresql":
        kept, recounted = _stats(store)
        assert kept == recounted == (10, sum(len(tokens) for tokens in documents.values()))
        kept_postings, recomputed = _postings(store)
        assert kept_postings == recomputed
        assert len(kept_postings) == 29  # 27 in the current chunks, 2 in the retired one
