"""Audit service queries on both backends (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from api_fakes import (
    GUIDE,
    HIDDEN_BY_CLASSIFICATION,
    HIDDEN_BY_EXCLUDE,
    HIDDEN_BY_TOKEN,
    default_manifest,
    seed_store,
)

from akm.service.audit import AuditService, RejectionFilters
from akm.service.errors import NotFoundError
from akm.service.scope import EVERYTHING, SourceScope
from akm.store import EvidenceStore


def test_lineage_queries(store: EvidenceStore) -> None:
    ids = seed_store(store)
    audit = AuditService(store, SourceScope(default_manifest()))
    assert audit.packet(ids["packet"])["packetId"] == ids["packet"]
    assert [e.to_state for e in audit.packet_history(ids["packet"]).events] == [
        "candidate",
        "direct-read",
        "claim-supported",
    ]
    [occurrence] = audit.claim(ids["claim"]).occurrences
    assert [row.evidence_id for row in occurrence.support] == [ids["row"]]
    dependents = audit.source_dependents(GUIDE)
    assert [entry.revision for entry in dependents.revisions] == ["r1", "r2"]
    assert dependents.stale_packet_ids == [ids["packet"]]
    detail = audit.source(GUIDE)
    assert [v.revision for v in detail.versions] == ["r1", "r2"]
    assert (detail.current_revision, detail.deleted, detail.evidence_rows) == ("r2", False, 3)
    assert detail.last_direct_read_at is not None
    page = audit.rejections(RejectionFilters(source=GUIDE, stage="fusion"), limit=10, offset=0)
    assert [r.reason for r in page.items] == ["per-source-cap", "duplicate"]


@pytest.mark.parametrize(
    "hidden",
    [HIDDEN_BY_EXCLUDE, HIDDEN_BY_CLASSIFICATION, HIDDEN_BY_TOKEN],
    ids=["excluded-path", "denied-classification", "denied-basename-token"],
)
def test_scope_hides_sources_the_unscoped_service_sees(store: EvidenceStore, hidden: str) -> None:
    seed_store(store)
    scoped = AuditService(store, SourceScope(default_manifest()))
    unscoped = AuditService(store, EVERYTHING)
    assert unscoped.source(hidden).source_id == hidden
    with pytest.raises(NotFoundError):
        scoped.source(hidden)
    assert [s.source_id for s in scoped.sources(after=None, limit=10).items] == [GUIDE]
    assert len(unscoped.sources(after=None, limit=10).items) == 4


def test_source_pages_follow_the_cursor(store: EvidenceStore) -> None:
    seed_store(store)
    audit = AuditService(store, EVERYTHING)
    first = audit.sources(after=None, limit=3)
    assert first.next_after == first.items[-1].source_id
    second = audit.sources(after=first.next_after, limit=3)
    assert second.next_after is None
    seen = [s.source_id for s in first.items + second.items]
    assert seen == sorted(seen)
    assert len(seen) == 4
