from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from akm.contract.models import EvidenceRow
from akm.fusion import FusionError, FusionSettings, NeighbourContext, expand_winners, fuse
from akm.manifest import DEFAULT_MANIFEST_FILE, load_manifest

Validator = Callable[[dict[str, Any], str], None]


def _sources(rows: tuple[EvidenceRow, ...]) -> list[str]:
    return [row.source.canonical_path or "" for row in rows]


def test_deterministic_priority_orders_by_authority_then_exact_then_rank_then_support_then_freshness(
    make_row,
):
    candidates = [
        make_row("a", "exact", 1, authority="reviewed"),
        make_row("b", "qmd-lexical", 1),
        make_row("c", "qmd-semantic", 1),
        make_row("d", "qmd-lexical", 2),
        make_row("d", "qmd-semantic", 3),
        make_row("e", "qmd-lexical", 3, freshness="unknown"),
        make_row("f", "qmd-lexical", 4),
        make_row("g", "exact", 5),
    ]

    result = fuse(candidates, FusionSettings())

    assert _sources(result.winners) == [
        "docs/g.md",  # canonical with exact support beats every non-exact canonical row
        "docs/c.md",  # rank 1 with semantic support
        "docs/b.md",  # rank 1
        "docs/d.md",  # rank 2
        "docs/e.md",  # rank 3
        "docs/f.md",  # rank 4
        "docs/a.md",  # exact rank 1 but reviewed authority ranks below canonical (E5)
    ]
    tie_breaks = [contribution.tie_break_reason for contribution in result.fusion.contributions]
    assert tie_breaks == [
        None,
        "after previous winner by exact-support",
        "after previous winner by semantic-relevance",
        "after previous winner by lane-rank",
        "after previous winner by lane-rank",
        "after previous winner by lane-rank",
        "after previous winner by authority",
    ]


def test_freshness_only_breaks_ties(make_row):
    result = fuse(
        [make_row("old", "qmd-lexical", 2, freshness="unknown"), make_row("new", "qmd-semantic", 2)]
    )
    # The unknown-freshness row has no semantic support, so semantic relevance decides, not freshness.
    assert _sources(result.winners) == ["docs/new.md", "docs/old.md"]

    tied = fuse([make_row("old", "qmd-lexical", 2, freshness="unknown"), make_row("new", "qmd-lexical", 2)])
    assert _sources(tied.winners) == ["docs/new.md", "docs/old.md"]
    assert tied.fusion.contributions[1].tie_break_reason == "after previous winner by freshness"


def test_rrf_orders_by_reciprocal_rank_sum_and_records_k(make_row):
    candidates = [
        make_row("a", "qmd-lexical", 1),
        make_row("a", "qmd-semantic", 3),
        make_row("b", "qmd-lexical", 2),
        make_row("c", "qmd-semantic", 1),
        make_row("d", "qmd-lexical", 3),
        make_row("d", "qmd-semantic", 2),
    ]

    result = fuse(candidates, FusionSettings(method="rrf", rrf_k=60))

    assert _sources(result.winners) == ["docs/a.md", "docs/d.md", "docs/c.md", "docs/b.md"]
    contributions = {c.evidence_id: c for c in result.fusion.contributions}
    first = contributions[result.winners[0].evidence_id]
    assert first.lane_ranks == {"qmd-lexical": 1, "qmd-semantic": 3}
    assert first.contribution == pytest.approx(1 / 61 + 1 / 63)
    assert [c.final_rank for c in result.fusion.contributions] == [1, 2, 3, 4]
    assert result.fusion.parameters["k"] == 60
    assert result.fusion.method == "rrf"
    assert all(row.retrieval.fusion_method == "rrf" for row in result.winners)


def test_dedup_happens_before_the_source_cap(make_row):
    candidates = [
        make_row("s", "qmd-lexical", 1, chunk=1),
        make_row("s", "qmd-semantic", 2, chunk=1),  # same source, revision and locator
        make_row("s", "qmd-lexical", 2, chunk=2),
        make_row("t", "qmd-lexical", 3),
    ]

    capped_at_two = fuse(candidates, FusionSettings(per_source_cap=2, unique_sources_when_available=0))
    # Without dedup first, the duplicate of chunk 1 would have used up the cap of 2.
    assert [row.scope.locator.value for row in capped_at_two.winners] == [
        "docs/s.md:10-14",
        "docs/s.md:20-24",
        "docs/t.md:10-14",
    ]
    # The second lane's copy is the same evidence (one ID): merged into the winner, not excluded.
    assert capped_at_two.excluded == ()
    assert capped_at_two.fusion.contributions[0].lane_ranks == {"qmd-lexical": 1, "qmd-semantic": 2}

    capped_at_one = fuse(candidates, FusionSettings(per_source_cap=1))
    assert [row.scope.locator.value for row in capped_at_one.winners] == [
        "docs/s.md:10-14",
        "docs/t.md:10-14",
    ]
    assert sorted(e.reason for e in capped_at_one.excluded) == ["source-cap"]


def test_duplicate_keeps_the_exact_lane_row_and_its_locator(make_row):
    result = fuse([make_row("s", "qmd-semantic", 1), make_row("s", "exact", 4)])
    (winner,) = result.winners
    assert winner.retrieval.lane == "exact"
    assert winner.retrieval.rank == 4
    assert result.fusion.contributions[0].lane_ranks == {"exact": 4, "qmd-semantic": 1}


def test_denied_out_of_scope_and_stale_rows_never_win(make_row):
    candidates = [
        make_row("secret", "exact", 1, scope_decision="denied"),
        make_row("other-project", "qmd-lexical", 1, scope_decision="out-of-scope"),
        make_row("old", "qmd-semantic", 1, freshness="stale"),
        make_row("ok", "qmd-lexical", 9, authority="unknown"),
    ]

    result = fuse(candidates)

    assert _sources(result.winners) == ["docs/ok.md"]
    assert [(row.evidence_id, row.reason) for row in result.fusion.excluded_rows] == [
        (candidates[0].evidence_id, "denied"),
        (candidates[1].evidence_id, "out-of-scope"),
        (candidates[2].evidence_id, "stale"),
    ]


def test_max_rows_excludes_the_rest_with_a_reason(make_row):
    candidates = [make_row(f"doc{index}", "qmd-lexical", index) for index in range(1, 6)]
    result = fuse(candidates, FusionSettings(max_rows=3))
    assert _sources(result.winners) == ["docs/doc1.md", "docs/doc2.md", "docs/doc3.md"]
    assert [(row.reason, row.notes) for row in result.fusion.excluded_rows] == [
        ("other", "max-rows: beyond the 3 final rows"),
        ("other", "max-rows: beyond the 3 final rows"),
    ]


def test_diversity_puts_distinct_sources_first(make_row):
    candidates = [
        make_row("s", "qmd-lexical", 1, chunk=1),
        make_row("s", "qmd-lexical", 2, chunk=2),
        make_row("t", "qmd-lexical", 3),
    ]
    result = fuse(candidates, FusionSettings(per_source_cap=2, unique_sources_when_available=2))
    assert _sources(result.winners) == ["docs/s.md", "docs/t.md", "docs/s.md"]


def test_a_cut_to_a_few_rows_keeps_the_manifest_s_share_of_distinct_sources(make_row, tmp_path, monkeypatch):
    # The default manifest asks for 5 distinct sources in 20 final rows. Cut to 3 rows, promoting
    # each source's first candidate would leave out the second section of the best document, found
    # first by both lanes, for the best candidates of two other documents, however weak.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    manifest = load_manifest(DEFAULT_MANIFEST_FILE)
    candidates = [
        make_row("bakery", "qmd-lexical", 1, chunk=1),
        make_row("bakery", "qmd-semantic", 1, chunk=2),
        make_row("trail", "qmd-lexical", 5),
        make_row("minutes", "qmd-semantic", 8),
        make_row("orbit", "qmd-semantic", 16),
    ]
    cut = FusionSettings.from_manifest(manifest, max_rows=3)
    assert cut.unique_sources_when_available == 1  # ceil(5 * 3 / 20)
    assert _sources(fuse(candidates, cut).winners) == ["docs/bakery.md", "docs/bakery.md", "docs/trail.md"]
    assert cut.parameters()["uniqueSourcesWhenAvailable"] == 1  # recorded as applied
    # The manifest's own final rows, or an explicit setting, keep the rule as written.
    whole = FusionSettings.from_manifest(manifest)
    assert whole.unique_sources_when_available == 5
    assert _sources(fuse(candidates, whole).winners)[:4] == [
        "docs/bakery.md", "docs/trail.md", "docs/minutes.md", "docs/orbit.md"
    ]  # fmt: skip
    explicit = FusionSettings.from_manifest(manifest, max_rows=3, unique_sources_when_available=3)
    assert explicit.unique_sources_when_available == 3
    assert FusionSettings.from_manifest(manifest, max_rows=8).unique_sources_when_available == 2


def test_every_winner_has_a_contribution_and_everything_validates(make_row, contract_validator: Validator):
    candidates = [
        make_row("a", "exact", 1),
        make_row("a", "qmd-lexical", 2),
        make_row("b", "qmd-semantic", 1),
        make_row("c", "graphify-relationship", 1),
        make_row("x", "qmd-lexical", 1, scope_decision="denied"),
    ]
    for method in ("deterministic-priority", "rrf"):
        result = fuse(candidates, FusionSettings(method=method))  # type: ignore[arg-type]
        assert [c.evidence_id for c in result.fusion.contributions] == [
            row.evidence_id for row in result.winners
        ]
        assert all(c.lane_ranks for c in result.fusion.contributions)
        contract_validator(result.fusion.to_json(), "Fusion")
        for row in result.winners:
            contract_validator(row.to_json(), "EvidenceRow")
            assert row.verification.state == "candidate"


def test_unknown_method_is_a_typed_error():
    with pytest.raises(FusionError, match="unknown fusion method 'borda'"):
        FusionSettings(method="borda")  # type: ignore[arg-type]


def test_expansion_only_for_leading_winners_and_keeps_the_locator(make_row, contract_validator: Validator):
    winners = fuse([make_row(f"doc{index}", "qmd-lexical", index) for index in range(1, 4)]).winners
    asked: list[str] = []

    def neighbours(row: EvidenceRow, before: int, after: int) -> NeighbourContext:
        asked.append(row.source.canonical_path or "")
        return NeighbourContext(before="B" * 50, after="A" * 50)

    expanded = expand_winners(winners, neighbours, max_winners=2, max_bytes=60)

    assert asked == ["docs/doc1.md", "docs/doc2.md"]
    first = expanded[0]
    assert first.scope.locator == winners[0].scope.locator
    assert first.content.context_expansion is not None
    assert first.content.context_expansion.locator == winners[0].scope.locator
    assert (first.content.before, first.content.after) == ("B" * 30, "A" * 30)
    assert first.content.context_expansion.bytes_added == 60
    assert first.content.excerpt == winners[0].content.excerpt
    assert expanded[2] == winners[2]
    contract_validator(first.to_json(), "EvidenceRow")


def test_lane_rank_compares_every_lane_rank_best_first(make_row):
    candidates = [
        make_row("z", "qmd-semantic", 1),
        make_row("y", "qmd-lexical", 1),
        make_row("y", "qmd-semantic", 40),
        make_row("x", "qmd-lexical", 2),
        make_row("x", "qmd-semantic", 3),
        make_row("w", "qmd-lexical", 3),
    ]
    result = fuse(candidates)
    # (1, 40) before (1, absent) before (2, 3) before (3, absent).
    assert _sources(result.winners) == ["docs/y.md", "docs/z.md", "docs/x.md", "docs/w.md"]
    assert [c.tie_break_reason for c in result.fusion.contributions][1:] == [
        "after previous winner by lane-rank",
        "after previous winner by lane-rank",
        "after previous winner by lane-rank",
    ]
