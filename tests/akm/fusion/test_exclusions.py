from __future__ import annotations

from akm.fusion import FusionSettings, fuse


def test_the_same_chunk_from_two_lanes_is_one_item_not_an_exclusion(make_row):
    lexical = make_row("s", "qmd-lexical", 1, chunk=1)
    semantic = make_row("s", "qmd-semantic", 3, chunk=1)
    assert lexical.evidence_id == semantic.evidence_id

    result = fuse([lexical, semantic])

    assert [row.evidence_id for row in result.winners] == [lexical.evidence_id]
    assert result.excluded == ()
    assert result.fusion.excluded_rows == ()
    assert result.fusion.contributions[0].lane_ranks == {"qmd-lexical": 1, "qmd-semantic": 3}


def test_a_capped_chunk_is_excluded_once_whichever_lanes_found_it(make_row):
    candidates = [
        make_row("s", "qmd-lexical", 1, chunk=1),
        make_row("s", "qmd-lexical", 2, chunk=2),
        make_row("s", "qmd-semantic", 1, chunk=2),
    ]
    result = fuse(candidates, FusionSettings(per_source_cap=1))

    # The chunk both lanes found wins; the other is capped, and recorded once.
    assert [row.evidence_id for row in result.winners] == [candidates[1].evidence_id]
    assert [(item.row.evidence_id, item.reason) for item in result.excluded] == [
        (candidates[0].evidence_id, "source-cap")
    ]


def test_log_details_keep_lane_rank_and_locator_but_nothing_of_a_denied_row(make_row):
    candidates = [
        make_row("s", "qmd-lexical", 1, chunk=1),
        make_row("s", "qmd-lexical", 2, chunk=2),
        make_row("hidden", "exact", 1, scope_decision="denied"),
    ]
    result = fuse(candidates, FusionSettings(per_source_cap=1))

    details = {item.reason: item.log_detail() for item in result.excluded}
    assert details["denied"] == {"notes": "scope decision denied"}
    assert details["source-cap"] == {
        "notes": "per-source cap 1 reached",
        "lane": "qmd-lexical",
        "laneRank": 2,
        "locator": "docs/s.md:20-24",
    }
    assert [row.evidence_id for row in result.winners] == [candidates[0].evidence_id]
