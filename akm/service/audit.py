"""Audit queries over evidence lineage: packets, rows, claims, rejections, sources, dependents.

The REST API and ``akm audit`` both answer through :class:`AuditService`, and both send the
bodies it returns (``akm.service.audit_models``). Every lookup goes through the manifest
scope: a packet, row, claim or source that touches a source outside the scope answers
:class:`NotFoundError`, the same as an unknown id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from akm.service.audit_models import (
    ClaimOccurrenceOut,
    ClaimOut,
    DecodeStatsOut,
    DependentClaimOut,
    DependentPacketOut,
    DependentRowOut,
    EvidenceHistoryOut,
    PacketHistoryOut,
    RejectionOut,
    RejectionPageOut,
    RevisionDependentsOut,
    SourceDependentsOut,
    SourceOut,
    SourcePageOut,
    SourceSummaryOut,
    SourceVersionOut,
    SupportRowOut,
    TaskPacketOut,
    TaskPacketsOut,
    VerificationEventOut,
)
from akm.service.errors import NotFoundError
from akm.service.scope import SourceScope
from akm.store import EvidenceStore, RejectionRecord, SourceInfo, VerificationEventRecord

# Page sizes of the listings (rejections, sources): the REST API's bounds, used by the CLI too.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


@dataclass(frozen=True)
class RejectionFilters:
    reason: str | None = None
    stage: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    # Only the CLI filters by packet; the REST API has no such parameter.
    packet_id: str | None = None


def _row_revision(row: Mapping[str, Any]) -> str | None:
    version = (row.get("source") or {}).get("version") or {}
    revision = version.get("revision")
    return str(revision) if revision is not None else None


def _row_state(row: Mapping[str, Any]) -> str | None:
    state = (row.get("verification") or {}).get("state")
    return str(state) if state is not None else None


class AuditService:
    """Read-only audits over one store, seen through one manifest scope."""

    def __init__(self, store: EvidenceStore, scope: SourceScope) -> None:
        self.store = store
        self.scope = scope

    # ---- visibility ---------------------------------------------------------------------

    def _visible_source(self, source_id: str) -> SourceInfo | None:
        info = self.store.get_source(source_id)
        if info is None:
            return None
        allowed = self.scope.allows(
            root_alias=info.root_alias, path=info.path, classification=info.classification
        )
        return info if allowed else None

    def _rows_visible(self, rows: Iterable[Mapping[str, Any]]) -> bool:
        rows = list(rows)
        source_ids = {str((row.get("source") or {}).get("sourceId", "")) for row in rows}
        stored: dict[str, tuple[str, str, str]] = {}
        for source_id in source_ids:
            info = self.store.get_source(source_id)
            if info is not None:
                stored[source_id] = (info.root_alias, info.path, info.classification)
        return all(self.scope.allows_row(row, stored) for row in rows)

    def _visible_packet(self, packet_id: str) -> dict[str, Any] | None:
        packet = self.store.get_packet(packet_id)
        if packet is None:
            return None
        rows = [row for row in packet.get("evidenceRows") or [] if isinstance(row, Mapping)]
        return packet if self._rows_visible(rows) else None

    # ---- packets, rows, claims ----------------------------------------------------------

    def packet(self, packet_id: str) -> dict[str, Any]:
        packet = self._visible_packet(packet_id)
        if packet is None:
            raise NotFoundError("packet", packet_id)
        return packet

    def packet_history(self, packet_id: str) -> PacketHistoryOut:
        packet = self.packet(packet_id)
        return PacketHistoryOut(
            packet_id=packet_id,
            verdict=str((packet.get("verification") or {}).get("verdict", "NOT_TESTED")),
            events=_events(self.store.verification_events_of_packet(packet_id)),
        )

    def task_packets(self, packet_id: str) -> TaskPacketsOut:
        """The packets of ``packet_id``'s task in scope, oldest first, with their verdicts."""
        task_id = str(self.packet(packet_id).get("taskId", ""))
        visible = [item for item in self.store.packets_of_task(task_id) if self._visible_packet(item)]
        verdicts = self.store.packet_verdicts(visible)
        return TaskPacketsOut(
            task_id=task_id,
            packets=[TaskPacketOut(packet_id=item, verdict=verdicts[item]) for item in visible],
        )

    def decode_stats(self, packet_id: str) -> DecodeStatsOut:
        self.packet(packet_id)
        return DecodeStatsOut(packet_id=packet_id, decode_stats=self.store.decode_stats(packet_id))

    def evidence(self, evidence_id: str) -> dict[str, Any]:
        row = self.store.get_row(evidence_id)
        if row is None or not self._rows_visible([row]):
            raise NotFoundError("evidence row", evidence_id)
        return row

    def evidence_history(self, evidence_id: str) -> EvidenceHistoryOut:
        self.evidence(evidence_id)
        return EvidenceHistoryOut(
            evidence_id=evidence_id, events=_events(self.store.verification_events(evidence_id))
        )

    def claim(self, claim_id: str) -> ClaimOut:
        occurrences: list[ClaimOccurrenceOut] = []
        for record in self.store.claim_records(claim_id):
            if self._visible_packet(record.packet_id) is None:
                continue
            support = []
            for link in record.support:
                row = self.store.get_row(link.evidence_id)
                support.append(
                    SupportRowOut(
                        evidence_id=link.evidence_id,
                        label=link.label,
                        note=link.note,
                        support_score=link.support_score,
                        state=_row_state(row) if row else None,
                        revision=_row_revision(row) if row else None,
                        revisions=_events(self.store.verification_events(link.evidence_id)),
                    )
                )
            occurrences.append(
                ClaimOccurrenceOut(
                    packet_id=record.packet_id, status=record.status, claim=record.claim, support=support
                )
            )
        if not occurrences:
            raise NotFoundError("claim", claim_id)
        return ClaimOut(claim_id=claim_id, occurrences=occurrences)

    # ---- rejections ---------------------------------------------------------------------

    def rejections(self, filters: RejectionFilters, *, limit: int, offset: int) -> RejectionPageOut:
        if filters.source is not None and self._visible_source(filters.source) is None:
            # An out-of-scope source filters to nothing, exactly like an unknown one.
            known = self.store.get_source(filters.source)
            if known is not None:
                return _rejection_page([], limit, offset, has_more=False)
        records = self.store.list_rejections(
            reason=filters.reason,
            stage=filters.stage,
            source=filters.source,
            packet_id=filters.packet_id,
            since=filters.since,
            until=filters.until,
            limit=limit + 1,
            offset=offset,
        )
        visible: dict[str, bool] = {}
        items = []
        for record in records[:limit]:
            if record.source_id is not None:
                if record.source_id not in visible:
                    info = self.store.get_source(record.source_id)
                    visible[record.source_id] = (
                        info is None or self._visible_source(record.source_id) is not None
                    )
                if not visible[record.source_id]:
                    # Keep the count by reason honest without naming what was denied.
                    record = replace(record, source_id=None, evidence_id=None, detail={})
            items.append(record)
        return _rejection_page(items, limit, offset, has_more=len(records) > limit)

    # ---- sources ------------------------------------------------------------------------

    def sources(self, *, after: str | None, limit: int) -> SourcePageOut:
        """Visible sources in id order; ``next_after`` continues the listing."""
        items: list[SourceInfo] = []
        cursor = after
        batch = max(limit, 50)
        while True:
            page = self.store.source_page(after=cursor, limit=batch)
            for info in page:
                cursor = info.source_id
                if self.scope.allows(
                    root_alias=info.root_alias, path=info.path, classification=info.classification
                ):
                    items.append(info)
                    if len(items) == limit:
                        return _source_page(items, limit, cursor)
            if len(page) < batch:
                return _source_page(items, limit, None)

    def source(self, source_id: str) -> SourceOut:
        info = self._visible_source(source_id)
        if info is None:
            raise NotFoundError("source", source_id)
        return SourceOut(
            **SourceSummaryOut.model_validate(info).model_dump(),
            versions=[SourceVersionOut.model_validate(version) for version in info.versions],
            last_direct_read_at=self.store.last_direct_read_at(source_id),
            evidence_rows=len(self.store.rows_for_source(source_id)),
        )

    def source_dependents(self, source_id: str, *, revision: str | None = None) -> SourceDependentsOut:
        """What relied on each revision of a visible source (only ``revision``, when given)."""
        info = self._visible_source(source_id)
        if info is None:
            raise NotFoundError("source", source_id)
        current = info.current_version
        revisions: dict[str, _RevisionEntry] = {
            version.revision: _RevisionEntry(
                version.revision, version.sha256, version.is_current, version.observed_at
            )
            for version in info.versions
        }
        stale_rows: set[str] = set()
        row_revision: dict[str, str] = {}
        for row in self.store.rows_for_source(source_id):
            evidence_id = str(row.get("evidenceId"))
            row_read_at = _row_revision(row) or "unknown"
            state = _row_state(row) or "candidate"
            stale = (
                state == "stale"
                or info.deleted_at is not None
                or current is None
                or row_read_at != current.revision
            )
            if stale:
                stale_rows.add(evidence_id)
            row_revision[evidence_id] = row_read_at
            entry = revisions.setdefault(row_read_at, _RevisionEntry(row_read_at, None, False, None))
            entry.rows.append(DependentRowOut(evidence_id=evidence_id, state=state, stale=stale))
        support = self.store.claim_support_of_rows(row_revision)
        verdicts = self.store.packet_verdicts(link.packet_id for link in support)
        stale_packets = {link.packet_id for link in support if link.evidence_id in stale_rows}
        for link in support:
            entry = revisions[row_revision[link.evidence_id]]
            entry.claims.append(
                DependentClaimOut(
                    packet_id=link.packet_id,
                    claim_id=link.claim_id,
                    evidence_id=link.evidence_id,
                    label=link.label,
                    stale=link.evidence_id in stale_rows,
                )
            )
            if all(p.packet_id != link.packet_id for p in entry.packets):
                entry.packets.append(
                    DependentPacketOut(
                        packet_id=link.packet_id,
                        verdict=verdicts.get(link.packet_id, "NOT_TESTED"),
                        stale=link.packet_id in stale_packets,
                    )
                )
        chosen = [entry for entry in revisions.values() if revision is None or entry.revision == revision]
        return SourceDependentsOut(
            source_id=source_id,
            revisions=[RevisionDependentsOut.model_validate(entry) for entry in chosen],
            stale_packet_ids=sorted({p.packet_id for entry in chosen for p in entry.packets if p.stale}),
        )


@dataclass
class _RevisionEntry:
    """What relied on one revision, gathered while reading the source's rows."""

    revision: str
    sha256: str | None
    is_current: bool
    observed_at: datetime | None
    rows: list[DependentRowOut] = field(default_factory=list)
    claims: list[DependentClaimOut] = field(default_factory=list)
    packets: list[DependentPacketOut] = field(default_factory=list)


def _rejection_page(
    items: list[RejectionRecord], limit: int, offset: int, *, has_more: bool
) -> RejectionPageOut:
    return RejectionPageOut(
        items=[RejectionOut.model_validate(record) for record in items],
        limit=limit,
        offset=offset,
        has_more=has_more,
        next_offset=offset + len(items) if has_more else None,
    )


def _source_page(items: list[SourceInfo], limit: int, next_after: str | None) -> SourcePageOut:
    return SourcePageOut(
        items=[SourceSummaryOut.model_validate(info) for info in items], limit=limit, next_after=next_after
    )


def _events(records: Iterable[VerificationEventRecord]) -> list[VerificationEventOut]:
    return [VerificationEventOut.model_validate(record) for record in records]
