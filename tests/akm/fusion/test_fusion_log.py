from __future__ import annotations

from akm.fusion import FusionSettings, fuse, log_exclusions
from akm.store import EvidenceStore


def test_every_excluded_candidate_is_logged_and_denied_ones_by_reason_only(
    make_row, sqlite_store: EvidenceStore
):
    candidates = [
        make_row("s", "qmd-lexical", 1, chunk=1),
        make_row("s", "qmd-semantic", 1, chunk=1),
        make_row("s", "qmd-lexical", 2, chunk=2),
        make_row("hidden", "exact", 1, scope_decision="denied"),
    ]
    result = fuse(candidates, FusionSettings(per_source_cap=1))

    log_exclusions(sqlite_store, result, query="test query", result_set_id="rs:1", packet_id="pk:1")

    logged = sorted(sqlite_store.list_rejections(stage="fusion"), key=lambda record: record.reason)
    assert [(record.reason, record.query, record.result_set_id, record.packet_id) for record in logged] == [
        ("denied", "test query", "rs:1", "pk:1"),
        ("duplicate", "test query", "rs:1", "pk:1"),
        ("source-cap", "test query", "rs:1", "pk:1"),
    ]
    denied, duplicate, capped = logged
    assert (denied.source_id, denied.evidence_id, denied.detail) == (
        None,
        None,
        {"notes": "scope decision denied"},
    )
    assert duplicate.source_id == "akm:docs:docs/s.md"
    assert duplicate.detail["lane"] == "qmd-semantic"
    assert capped.evidence_id == candidates[2].evidence_id
    assert capped.detail["locator"] == "docs/s.md:20-24"
