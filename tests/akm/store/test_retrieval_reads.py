"""SQLite read paths the retrieval lanes lean on: verbatim lookup and lexical ranking stay exact
when chunks are replaced or retired."""

from __future__ import annotations

import numpy as np
import pytest

from akm.store import EvidenceStore

from .conftest import add_markdown_version


def _add_version(store: EvidenceStore, source_id: str, texts: list[str], *, sha: str) -> None:
    embeddings = [np.eye(384, dtype=np.float32)[ordinal] for ordinal in range(len(texts))]
    add_markdown_version(store, source_id, texts, sha=sha, embeddings=embeddings)


@pytest.fixture
def store(sqlite_store: EvidenceStore) -> EvidenceStore:
    _add_version(
        sqlite_store, "alpha", ["IL-6 binds CD44.", "The CD4 count fell.", "cd4 lower case."], sha="a1"
    )
    _add_version(sqlite_store, "beta", ["CD4 again.", "Nothing here."], sha="b1")
    return sqlite_store


def _texts(store: EvidenceStore, literal: str, limit: int = 20) -> list[str]:
    return [chunk.text for chunk in store.chunks_containing(literal, limit=limit)]


@pytest.mark.parametrize(
    ("literal", "limit", "expected"),
    [
        ("CD4", 20, ["IL-6 binds CD44.", "The CD4 count fell.", "CD4 again."]),
        ("CD4", 2, ["IL-6 binds CD44.", "The CD4 count fell."]),
        ("CD4", 0, []),
        ("cd4", 20, ["cd4 lower case."]),
        ("IL-6 binds", 20, ["IL-6 binds CD44."]),
        ("fell.cd4", 20, []),
        ("fell.\x00cd4", 20, []),
        ("absent", 20, []),
    ],
    ids=[
        "substring-in-id-order",
        "limit",
        "zero-limit",
        "case-sensitive",
        "phrase",
        "never-spans-chunks",
        "nul",
        "absent",
    ],
)
def test_chunks_containing_matches_verbatim(
    store: EvidenceStore, literal: str, limit: int, expected: list[str]
) -> None:
    assert _texts(store, literal, limit) == expected


def test_chunks_containing_follows_new_versions_and_deletions(store: EvidenceStore) -> None:
    assert _texts(store, "Nothing") == ["Nothing here."]
    _add_version(store, "beta", ["Rewritten, CD4 free? No: CD4."], sha="b2")
    assert _texts(store, "Nothing") == []
    assert _texts(store, "CD4") == [
        "IL-6 binds CD44.",
        "The CD4 count fell.",
        "Rewritten, CD4 free? No: CD4.",
    ]
    with store.transaction() as tx:
        tx.mark_source_deleted("alpha")
    assert _texts(store, "CD4") == ["Rewritten, CD4 free? No: CD4."]


def test_lexical_search_skips_retired_chunks_that_outrank_current_ones(store: EvidenceStore) -> None:
    # Many short retired chunks rank above the one long current chunk; the answer must still be
    # the current chunk, however many retired ones lead the ranking.
    _add_version(store, "gamma", ["nebula"] * 60, sha="g1")
    _add_version(store, "gamma", ["Filler words " * 20 + "nebula."], sha="g2")
    _add_version(store, "delta", ["a nebula seen " + "far " * 30], sha="d1")
    hits = store.lexical_search("nebula", 5)
    assert sorted(chunk.source_id for chunk, _ in hits) == ["delta", "gamma"]
    assert all(chunk.is_current for chunk, _ in hits)
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)


def test_vector_search_leaves_blas_threads_as_they_were(store: EvidenceStore) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
    before = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()]
    hits = store.vector_search(np.eye(384, dtype=np.float32)[1], 2)
    assert [chunk.text for chunk, _ in hits] == ["The CD4 count fell.", "Nothing here."]
    assert [pool["num_threads"] for pool in threadpoolctl.threadpool_info()] == before
