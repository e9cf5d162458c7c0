from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from akm.manifest import Manifest
from akm.retrieval.lanes import (
    ExactLane,
    LaneRequest,
    LexicalLane,
    RelationshipLane,
    SemanticLane,
    lexical_terms,
)
from akm.retrieval.orchestrate import retrieve
from akm.retrieval.query import classify_query
from akm.store import EvidenceStore

Validator = Callable[[dict[str, Any], str], None]


def _request(query: str, limit: int = 10, seeds: tuple[Any, ...] = ()) -> LaneRequest:
    return LaneRequest(
        query=query, classification=classify_query(query), result_set_id="rs:test", limit=limit, seeds=seeds
    )


def _locators(rows: Any) -> list[str]:
    return [row.scope.locator.value for row in rows]


def test_exact_lane_finds_a_path_and_a_quoted_literal(
    corpus_store: EvidenceStore, manifest: Manifest, contract_validator: Validator
):
    lane = ExactLane(corpus_store, manifest)

    by_path = lane.search(_request("docs/security.md"), manifest)
    by_literal = lane.search(_request('"k=60"'), manifest)

    assert _locators(by_path.candidates) == ["docs/security.md:1-1", "docs/security.md:3-3"]
    assert [row.retrieval.rank for row in by_path.candidates] == [1, 2]
    assert _locators(by_literal.candidates) == ["docs/fusion.md:1-1"]
    row = by_literal.candidates[0]
    assert (row.retrieval.lane, row.retrieval.matched_terms, row.retrieval.raw_score) == (
        "exact",
        ("k=60",),
        1.0,
    )
    assert (
        row.retrieval.raw_score_meaning is not None and "higher is better" in row.retrieval.raw_score_meaning
    )
    assert row.verification.state == "candidate"
    assert by_literal.lane_run.status == "completed"
    assert by_literal.lane_run.result_count == 1
    for result in (by_path, by_literal):
        contract_validator(result.lane_run.to_json(), "LaneRun")
        for candidate in result.candidates:
            contract_validator(candidate.to_json(), "EvidenceRow")


def test_lexical_lane_ranks_by_bm25(
    corpus_store: EvidenceStore, manifest: Manifest, contract_validator: Validator
):
    result = LexicalLane(corpus_store).search(_request("rotated keys"), manifest)

    assert _locators(result.candidates) == ["docs/security.md:3-3", "docs/security.md:1-1"]
    first, second = result.candidates
    assert first.retrieval.matched_terms == ("keys", "rotated")
    assert first.retrieval.raw_score is not None and second.retrieval.raw_score is not None
    assert first.retrieval.raw_score > second.retrieval.raw_score
    assert first.retrieval.raw_score_meaning == corpus_store.lexical_score_meaning
    assert first.retrieval.lane == "qmd-lexical"
    assert first.retrieval.result_set_id == "rs:test"
    assert (result.lane_run.lane, result.lane_run.status, result.lane_run.result_count) == (
        "qmd-lexical",
        "completed",
        2,
    )
    for candidate in result.candidates:
        contract_validator(candidate.to_json(), "EvidenceRow")


def test_semantic_lane_ranks_by_cosine(
    corpus_store: EvidenceStore, manifest: Manifest, embedder, contract_validator: Validator
):
    result = SemanticLane(corpus_store, embedder).search(_request("rotated keys", limit=2), manifest)

    assert _locators(result.candidates) == ["docs/security.md:3-3", "docs/security.md:1-1"]
    assert [row.retrieval.rank for row in result.candidates] == [1, 2]
    assert result.candidates[0].retrieval.raw_score == pytest.approx(0.5669468)
    assert (
        result.candidates[0].retrieval.raw_score_meaning
        == "cosine similarity of bag-of-words embeddings; higher is better"
    )
    assert result.lane_run.parameters == {"limit": 2, "model": "bag-of-words", "metric": "cosine"}
    contract_validator(result.lane_run.to_json(), "LaneRun")


def test_semantic_lane_failure_is_recorded_and_other_lanes_still_answer(
    corpus_store, manifest, unavailable_embedder, contract_validator: Validator
):
    result = retrieve("rotated keys", corpus_store, manifest, unavailable_embedder)

    semantic = result.lane_run("qmd-semantic")
    assert semantic.status == "failed"
    assert semantic.error == (
        "EmbeddingModelError: cannot load embedding model from /models/minilm: no config.json"
    )
    assert result.lane_run("qmd-lexical").status == "completed"
    assert _locators(result.candidates_of("qmd-lexical")) == ["docs/security.md:3-3", "docs/security.md:1-1"]
    assert result.candidates_of("qmd-semantic") == ()
    contract_validator(semantic.to_json(), "LaneRun")


def test_missing_embedder_fails_only_the_semantic_lane(corpus_store, manifest):
    result = retrieve("rotated keys", corpus_store, manifest, None)
    assert result.lane_run("qmd-semantic").error == "RuntimeError: no embedding model is configured"
    assert result.lane_run("qmd-lexical").result_count == 2


def test_relationship_lane_walks_links_of_seed_hits(corpus_store: EvidenceStore, manifest: Manifest):
    seeds = ExactLane(corpus_store, manifest).search(_request("docs/security.md"), manifest).candidates

    result = RelationshipLane(corpus_store).search(_request("docs/security.md", seeds=seeds), manifest)

    assert _locators(result.candidates) == ["docs/guide.md:3-3"]
    row = result.candidates[0]
    assert row.retrieval.relationship_path == (
        "akm:docs:docs/security.md",
        "linked-from:markdown",
        "akm:docs:docs/guide.md",
    )
    assert (row.retrieval.lane, row.retrieval.rank, row.retrieval.raw_score) == (
        "graphify-relationship",
        1,
        1.0,
    )


def test_out_of_scope_and_denied_chunks_never_become_candidates(corpus_store, manifest, embedder):
    result = retrieve(
        "rotation schedule",
        corpus_store,
        manifest,
        embedder,
        lanes=["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship"],
        limit=50,
    )
    sources = {row.source.source_id for row in result.candidates}
    assert "akm:docs:docs/api-token-notes.md" not in sources
    assert "akm:docs:other/elsewhere.md" not in sources
    assert all(
        "vault" not in row.content.excerpt and "another project" not in row.content.excerpt
        for row in result.candidates
    )


def test_lane_runs_are_written_to_the_store(corpus_store: EvidenceStore, manifest, embedder):
    result = retrieve("rotated keys", corpus_store, manifest, embedder)
    with corpus_store.engine.connect() as connection:
        logged = connection.execute(
            text("SELECT lane, status, skip_reason FROM lane_runs WHERE result_set_id = :id ORDER BY id"),
            {"id": result.result_set_id},
        ).all()
    assert [tuple(row) for row in logged] == [
        ("exact", "skipped", "query class semantic-recall: no literal token, path or ID to match verbatim"),
        ("qmd-lexical", "completed", None),
        ("qmd-semantic", "completed", None),
        ("graphify-relationship", "skipped", "query class semantic-recall: no link or neighbourhood intent"),
    ]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        # A question's word, auxiliary and the asker's pronouns say nothing of its topic.
        ("Can I pay for my bike repair with a cheque?", ["pay", "bike", "repair", "cheque"]),
        ("What does error code E09 mean?", ["error", "code", "e09", "mean"]),
        # A query of nothing else keeps its words.
        ("What can I do?", ["what", "can", "i", "do"]),
        # A short form is searched for with the word it stands for.
        ("What's the max nozzle temp?", ["s", "max", "nozzle", "temp", "maximum", "temperature"]),
        ("Why won't it join the wifi?", ["won", "t", "join", "wifi", "wi", "fi"]),
        # "min" is a minimum, unless a number comes before it; the apostrophe may be left out.
        (
            "whats the min length for a wifi pw",
            ["min", "length", "wifi", "pw", "minimum", "wi", "fi", "password"],
        ),
        ("is the bus 10 min late", ["bus", "10", "min", "late", "minutes"]),
    ],
)
def test_lexical_terms_leave_out_a_question_s_scaffolding(query: str, terms: list[str]) -> None:
    assert lexical_terms(query) == terms
