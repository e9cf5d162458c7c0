from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from akm.retrieval.orchestrate import UnknownLaneError, retrieve
from akm.retrieval.query import EmptyQueryError, QueryTooLongError

Validator = Callable[[dict[str, Any], str], None]
ALL = ["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship"]


def test_every_lane_is_recorded_and_skips_have_reasons(
    corpus_store, manifest, embedder, contract_validator: Validator
):
    result = retrieve("how are signing keys rotated", corpus_store, manifest, embedder)

    assert result.query_class.value == "semantic-recall"
    assert [(run.lane, run.status) for run in result.lane_runs] == [
        ("exact", "skipped"),
        ("qmd-lexical", "completed"),
        ("qmd-semantic", "completed"),
        ("graphify-relationship", "skipped"),
    ]
    assert result.lane_run("graphify-relationship").skip_reason == (
        "query class semantic-recall: no link or neighbourhood intent"
    )
    assert result.candidates_of("qmd-lexical")[0].scope.locator.value == "docs/security.md:3-3"
    assert {row.retrieval.result_set_id for row in result.candidates} == {result.result_set_id}
    for run in result.lane_runs:
        contract_validator(run.to_json(), "LaneRun")
    for row in result.candidates:
        contract_validator(row.to_json(), "EvidenceRow")


def test_requested_lanes_override_the_fanout(corpus_store, manifest, embedder):
    result = retrieve(
        "how are signing keys rotated", corpus_store, manifest, embedder, lanes=["qmd-semantic"]
    )
    assert [(run.lane, run.status, run.skip_reason) for run in result.lane_runs] == [
        ("exact", "skipped", "not requested by the caller"),
        ("qmd-lexical", "skipped", "not requested by the caller"),
        ("qmd-semantic", "completed", None),
        ("graphify-relationship", "skipped", "not requested by the caller"),
    ]
    assert {row.retrieval.lane for row in result.candidates} == {"qmd-semantic"}


def test_relationship_without_seeds_is_skipped_with_a_reason(corpus_store, manifest, embedder):
    result = retrieve(
        "zebra", corpus_store, manifest, embedder, lanes=["qmd-lexical", "graphify-relationship"]
    )
    assert (
        result.lane_run("graphify-relationship").skip_reason
        == "no seed hits from the other lanes to expand from"
    )


def test_unknown_lane_is_a_typed_error(corpus_store, manifest, embedder):
    with pytest.raises(UnknownLaneError, match="unknown lane\\(s\\) bm25"):
        retrieve("keys", corpus_store, manifest, embedder, lanes=["bm25"])


@pytest.mark.parametrize(
    ("query", "error"), [("  ", EmptyQueryError), ("q" * 4001, QueryTooLongError)], ids=["empty", "huge"]
)
def test_bad_query_is_refused_before_any_lane_runs(corpus_store, manifest, embedder, query, error):
    with pytest.raises(error):
        retrieve(query, corpus_store, manifest, embedder)
    with corpus_store.engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM lane_runs").scalar() == 0


def test_denied_file_by_exact_path_is_answered_as_if_absent(corpus_store, manifest, embedder):
    denied = retrieve("docs/api-token-notes.md", corpus_store, manifest, embedder, lanes=ALL)
    absent = retrieve("docs/api-absent-notes.md", corpus_store, manifest, embedder, lanes=ALL)

    def shape(result: Any) -> list[tuple[str, str, int, str | None]]:
        return [(run.lane, run.status, run.result_count, run.skip_reason) for run in result.lane_runs]

    assert denied.candidates_of("exact") == ()
    assert shape(denied) == shape(absent)
    # Neither word occurs in an eligible chunk, so the lexical answers must be identical too.
    for lane in ("exact", "qmd-lexical"):
        assert [row.evidence_id for row in denied.candidates_of(lane)] == [
            row.evidence_id for row in absent.candidates_of(lane)
        ]
    leaked = [row for row in denied.candidates if "api-token-notes" in row.source.source_id]
    assert leaked == []
    assert all("vault" not in row.content.excerpt for row in denied.candidates)


def test_semantic_lane_runs_beside_the_lexical_lane_with_the_same_results(
    corpus_store, manifest, embedder, monkeypatch
):
    import threading

    query = "how are signing keys rotated"
    alone = {
        lane: [
            row.scope.locator.value
            for row in retrieve(query, corpus_store, manifest, embedder, lanes=[lane]).candidates
        ]
        for lane in ("qmd-lexical", "qmd-semantic")
    }
    embedding_started = threading.Event()
    embedding_threads: list[str] = []
    overlapped: list[bool] = []

    class SignallingEmbedder:
        model_id = embedder.model_id
        dimensions = embedder.dimensions

        def embed(self, texts):
            embedding_threads.append(threading.current_thread().name)
            embedding_started.set()
            return embedder.embed(texts)

    lexical_search = corpus_store.lexical_search

    def lexical_search_waiting_for_the_embedding(query_text, limit):
        # Only returns True if the semantic lane started while this lane was still running.
        overlapped.append(embedding_started.wait(timeout=10))
        return lexical_search(query_text, limit)

    monkeypatch.setattr(corpus_store, "lexical_search", lexical_search_waiting_for_the_embedding)
    result = retrieve(query, corpus_store, manifest, SignallingEmbedder())

    assert overlapped == [True]
    assert embedding_threads and embedding_threads[0].startswith("akm-lane")
    assert [(run.lane, run.status) for run in result.lane_runs][1:3] == [
        ("qmd-lexical", "completed"),
        ("qmd-semantic", "completed"),
    ]
    for lane, locators in alone.items():
        assert [row.scope.locator.value for row in result.candidates_of(lane)] == locators
