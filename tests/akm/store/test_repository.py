"""EvidenceStore behaviour on both backends."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from akm.store import ClaimSupportRecord, EvidenceStore, LinkEdge, NewChunk, NewLink, Rejection, StoreError

from .conftest import add_markdown_version


def _unit(index: int) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[index] = 1.0
    return vector


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _add_source(store: EvidenceStore, source_id: str, texts: list[str], *, sha: str = "v1") -> int:
    offset = 10 if source_id == "beta" else 0
    links = [NewLink(link_type="markdown", target="beta.md", target_source_id="beta", from_ordinal=0)]
    return add_markdown_version(
        store,
        source_id,
        texts,
        sha=sha,
        embeddings=[_unit(ordinal + offset) for ordinal in range(len(texts))],
        links=links if source_id == "alpha" else (),
    )


@pytest.fixture
def filled(store: EvidenceStore) -> EvidenceStore:
    _add_source(
        store, "alpha", ["Speculative decoding drafts tokens.", "The verifier accepts prefixes.", "Tail."]
    )
    _add_source(store, "beta", ["Evidence rows record the locator.", "Stale rows never win."])
    return store


def test_lexical_search_ranks_matching_chunks(filled: EvidenceStore) -> None:
    hits = filled.lexical_search("verifier prefixes", 5)
    assert [chunk.text for chunk, _ in hits] == ["The verifier accepts prefixes."]
    assert hits[0][1] > 0
    assert hits[0][0].path == "alpha.md"
    assert filled.lexical_search("   ", 5) == []


def test_lexical_search_stems_words(filled: EvidenceStore) -> None:
    assert [chunk.text for chunk, _ in filled.lexical_search("locators", 5)] == [
        "Evidence rows record the locator."
    ]


def test_vector_search_orders_by_cosine(filled: EvidenceStore) -> None:
    query = _unit(11) * 0.9 + _unit(1) * 0.1
    hits = filled.vector_search(query, 2)
    assert [chunk.text for chunk, _ in hits] == ["Stale rows never win.", "The verifier accepts prefixes."]
    assert hits[0][1] == pytest.approx(0.9 / np.linalg.norm([0.9, 0.1]), abs=1e-5)


def test_vector_search_sees_new_chunks(filled: EvidenceStore) -> None:
    assert filled.vector_search(_unit(50), 1)[0][1] == pytest.approx(0.0, abs=1e-6)
    with filled.transaction() as tx:
        tx.upsert_source(
            source_id="gamma",
            root_alias="docs",
            path="gamma.md",
            canonical_uri="file:docs/gamma.md",
            source_type="markdown",
            classification="public",
            source_ref_id="ref",
        )
        tx.add_source_version(
            source_id="gamma",
            revision="r",
            sha256="g",
            path="gamma.md",
            byte_size=1,
            chunks=[
                NewChunk(
                    ordinal=0,
                    locator_type="row",
                    locator_value="g",
                    text="g",
                    excerpt_sha256="g",
                    embedding=_unit(50),
                )
            ],
        )
    assert filled.vector_search(_unit(50), 1)[0][0].source_id == "gamma"


def test_neighbours_are_adjacent_chunks_in_order(filled: EvidenceStore) -> None:
    middle = filled.lexical_search("verifier", 1)[0][0]
    assert [chunk.ordinal for chunk in filled.neighbours(middle.chunk_id, before=1, after=1)] == [0, 1, 2]
    assert [chunk.ordinal for chunk in filled.neighbours(middle.chunk_id, before=0, after=0)] == [1]


def _edges(links: dict[str, list[LinkEdge]]) -> dict[str, list[tuple[str, str | None]]]:
    return {
        source_id: [(edge.from_source_id, edge.target_source_id) for edge in edges]
        for source_id, edges in links.items()
    }


def test_links_form_graph_edges(filled: EvidenceStore) -> None:
    assert _edges(filled.links_from_sources(["alpha", "beta"])) == {"alpha": [("alpha", "beta")], "beta": []}
    assert _edges(filled.links_to_sources(["beta", "alpha"])) == {"beta": [("alpha", "beta")], "alpha": []}


def test_new_version_keeps_old_one(filled: EvidenceStore) -> None:
    _add_source(filled, "beta", ["Rewritten beta."], sha="v2")
    versions = filled.source_versions("beta")
    assert [(version.sha256, version.is_current) for version in versions] == [("v1", False), ("v2", True)]
    assert [chunk.text for chunk in filled.chunks_of_source("beta")] == ["Rewritten beta."]
    assert len(filled.chunks_of_source("beta", current_only=False)) == 3
    assert filled.lexical_search("stale", 5) == []
    # The graph edge into beta survives: it belongs to alpha's current version.
    assert _edges(filled.links_to_sources(["beta"])) == {"beta": [("alpha", "beta")]}


def test_failed_transaction_leaves_nothing(filled: EvidenceStore) -> None:
    before = filled.count_current_chunks()
    with pytest.raises(RuntimeError, match="interrupted"), filled.transaction() as tx:
        tx.upsert_source(
            source_id="delta",
            root_alias="docs",
            path="delta.md",
            canonical_uri="file:docs/delta.md",
            source_type="markdown",
            classification="public",
            source_ref_id="ref",
        )
        tx.add_source_version(
            source_id="delta",
            revision="r",
            sha256="d",
            path="delta.md",
            byte_size=1,
            chunks=[
                NewChunk(
                    ordinal=0, locator_type="row", locator_value="d", text="delta text", excerpt_sha256="d"
                )
            ],
        )
        raise RuntimeError("interrupted")
    assert filled.count_current_chunks() == before
    assert "delta" not in filled.source_states("docs")
    assert filled.lexical_search("delta", 5) == []


def test_embeddings_for_excerpts_reuses_stored_vectors(filled: EvidenceStore) -> None:
    found = filled.embeddings_for_excerpts([_sha("Tail."), "missing"])
    assert list(found) == [_sha("Tail.")]
    assert np.array_equal(found[_sha("Tail.")], _unit(2))


def _row(evidence_id: str, state: str) -> dict[str, object]:
    return {
        "evidenceId": evidence_id,
        "source": {"sourceId": "alpha", "version": {"revision": "rev-v1"}},
        "retrieval": {"lane": "qmd-lexical"},
        "verification": {"state": state},
    }


class _Packaged:
    def __init__(self, document: dict[str, object]) -> None:
        self.document = document

    def to_json(self) -> dict[str, object]:
        return self.document


def test_rows_and_events_round_trip(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        tx.save_rows([_row("ev:1", "candidate"), _Packaged(_row("ev:2", "candidate"))])
    with store.transaction() as tx:
        tx.save_rows([_row("ev:1", "direct-read")])
        tx.record_verification_event(
            evidence_id="ev:1",
            from_state="candidate",
            to_state="direct-read",
            actor="direct_read",
            reason="read",
        )
    assert store.get_row("ev:1") == _row("ev:1", "direct-read")
    assert [row["evidenceId"] for row in store.rows_for_source("alpha", state="candidate")] == ["ev:2"]
    events = store.verification_events("ev:1")
    assert [(event.from_state, event.to_state) for event in events] == [("candidate", "direct-read")]
    with pytest.raises(StoreError, match="evidenceId"), store.transaction() as tx:
        tx.save_rows([{"source": {}}])


def test_list_rejections_filters_and_pages(store: EvidenceStore) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with store.transaction() as tx:
        tx.record_rejections(
            Rejection(
                stage="fusion",
                reason="per-source-cap" if index % 2 == 0 else "out-of-scope",
                query="q",
                result_set_id="rs:1",
                source_id=f"s{index}",
                evidence_id=f"ev:{index}",
                at=start + timedelta(hours=index),
            )
            for index in range(5)
        )
    capped = store.list_rejections(reason="per-source-cap")
    assert [record.evidence_id for record in capped] == ["ev:4", "ev:2", "ev:0"]
    assert [r.evidence_id for r in store.list_rejections(reason="per-source-cap", limit=1, offset=1)] == [
        "ev:2"
    ]
    assert [r.evidence_id for r in store.list_rejections(source="s1")] == ["ev:1"]
    window = store.list_rejections(since=start + timedelta(hours=1), until=start + timedelta(hours=3))
    assert [r.evidence_id for r in window] == ["ev:2", "ev:1"]


def test_save_packet_stores_rows_claims_and_stats(store: EvidenceStore) -> None:
    packet = {
        "packetId": "pk:0001",
        "taskId": "task-1",
        "query": {"original": "what?"},
        "project": {
            "projectId": "p",
            "manifestId": "m",
            "manifestChecksum": {"algorithm": "sha256", "value": "abc"},
        },
        "generatedAt": "2026-11-29T10:00:00+00:00",
        "evidenceRows": [_row("ev:1", "claim-supported")],
        "claims": [
            {
                "claimId": "c1",
                "claimText": "x",
                "claimClass": "number",
                "importance": "important",
                "status": "supported",
                "supportRowIds": ["ev:1"],
            }
        ],
        "verification": {"verdict": "PASS"},
    }
    with store.transaction() as tx:
        tx.save_rows(packet["evidenceRows"])
        tx.save_packet(packet)
        tx.record_rejections([Rejection(stage="fusion", reason="dup", packet_id="pk:0001")])
        tx.save_decode_stats("pk:0001", {"targetCalls": 3})
    with store.transaction() as tx:
        tx.save_packet(packet)
    assert store.get_packet("pk:0001") == packet
    assert store.get_row("ev:1") == _row("ev:1", "claim-supported")
    assert store.claim_support_of_rows(["ev:1"]) == [
        ClaimSupportRecord(packet_id="pk:0001", claim_id="c1", evidence_id="ev:1", label=None, note=None)
    ]
    assert store.decode_stats("pk:0001") == [{"targetCalls": 3}]
    assert [r.reason for r in store.list_rejections(packet_id="pk:0001")] == ["dup"]


@pytest.mark.parametrize(
    "query",
    ["_ __ the", "AND OR NOT NEAR", '"quoted" (paren) col:umn * ^', "a & b | !c <-> d", "x" * 300, "é ß 5%"],
    ids=["underscores-stopwords", "fts-operators", "fts-syntax", "tsquery-syntax", "long-token", "unicode"],
)
def test_lexical_search_accepts_any_text(filled: EvidenceStore, query: str) -> None:
    assert isinstance(filled.lexical_search(query, 5), list)


def test_lexical_search_ignores_operator_words(filled: EvidenceStore) -> None:
    hits = filled.lexical_search("verifier NOT prefixes", 5)
    assert [chunk.text for chunk, _ in hits] == ["The verifier accepts prefixes."]
