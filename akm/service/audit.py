"""Audit queries over evidence lineage: packets, rows, claims, rejections, sources, dependents.

Every lookup goes through the manifest scope: a packet, row, claim or source that touches a
source outside the scope answers :class:`NotFoundError`, the same as an unknown id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from akm.service.errors import NotFoundError
from akm.service.scope import SourceScope
from akm.store import EvidenceStore, RejectionRecord, SourceVersionInfo, VerificationEventRecord
from akm.store.repository import ClaimSupportRecord, SourceInfo


@dataclass(frozen=True)
class RejectionFilters:
    reason: str | None = None
    stage: str | None = None
    source: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class RejectionPage:
    items: list[RejectionRecord]
    limit: int
    offset: int
    has_more: bool


@dataclass(frozen=True)
class SourcePage:
    items: list[SourceInfo]
    limit: int
    next_after: str | None


@dataclass(frozen=True)
class SourceDetail:
    info: SourceInfo
    last_direct_read_at: datetime | None
    evidence_rows: int


@dataclass(frozen=True)
class PacketHistory:
    packet_id: str
    verdict: str
    events: list[VerificationEventRecord]


@dataclass(frozen=True)
class SupportRowAudit:
    evidence_id: str
    label: str | None
    note: str | None
    state: str | None
    revision: str | None
    events: list[VerificationEventRecord]


@dataclass(frozen=True)
class ClaimOccurrence:
    packet_id: str
    status: str
    claim: dict[str, Any]
    support: list[SupportRowAudit]


@dataclass(frozen=True)
class DependentRow:
    evidence_id: str
    state: str
    stale: bool


@dataclass(frozen=True)
class DependentClaim:
    packet_id: str
    claim_id: str
    evidence_id: str
    label: str | None
    stale: bool


@dataclass(frozen=True)
class DependentPacket:
    packet_id: str
    verdict: str
    stale: bool


@dataclass
class RevisionDependents:
    revision: str
    sha256: str | None
    is_current: bool
    observed_at: datetime | None
    rows: list[DependentRow] = field(default_factory=list)
    claims: list[DependentClaim] = field(default_factory=list)
    packets: list[DependentPacket] = field(default_factory=list)


@dataclass(frozen=True)
class SourceDependents:
    source_id: str
    revisions: list[RevisionDependents]

    @property
    def stale_packet_ids(self) -> list[str]:
        return sorted({p.packet_id for r in self.revisions for p in r.packets if p.stale})


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

    def packet_history(self, packet_id: str) -> PacketHistory:
        packet = self.packet(packet_id)
        verdict = str((packet.get("verification") or {}).get("verdict", "NOT_TESTED"))
        return PacketHistory(packet_id, verdict, self.store.verification_events_of_packet(packet_id))

    def evidence(self, evidence_id: str) -> dict[str, Any]:
        row = self.store.get_row(evidence_id)
        if row is None or not self._rows_visible([row]):
            raise NotFoundError("evidence row", evidence_id)
        return row

    def evidence_history(self, evidence_id: str) -> list[VerificationEventRecord]:
        self.evidence(evidence_id)
        return self.store.verification_events(evidence_id)

    def claim(self, claim_id: str) -> list[ClaimOccurrence]:
        occurrences: list[ClaimOccurrence] = []
        for record in self.store.claim_records(claim_id):
            if self._visible_packet(record.packet_id) is None:
                continue
            support = []
            for link in record.support:
                row = self.store.get_row(link.evidence_id)
                support.append(
                    SupportRowAudit(
                        evidence_id=link.evidence_id,
                        label=link.label,
                        note=link.note,
                        state=_row_state(row) if row else None,
                        revision=_row_revision(row) if row else None,
                        events=self.store.verification_events(link.evidence_id),
                    )
                )
            occurrences.append(ClaimOccurrence(record.packet_id, record.status, record.claim, support))
        if not occurrences:
            raise NotFoundError("claim", claim_id)
        return occurrences

    # ---- rejections ---------------------------------------------------------------------

    def rejections(self, filters: RejectionFilters, *, limit: int, offset: int) -> RejectionPage:
        if filters.source is not None and self._visible_source(filters.source) is None:
            # An out-of-scope source filters to nothing, exactly like an unknown one.
            known = self.store.get_source(filters.source)
            if known is not None:
                return RejectionPage([], limit, offset, False)
        records = self.store.list_rejections(
            reason=filters.reason,
            stage=filters.stage,
            source=filters.source,
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
        return RejectionPage(items, limit, offset, len(records) > limit)

    # ---- sources ------------------------------------------------------------------------

    def sources(self, *, after: str | None, limit: int) -> SourcePage:
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
                        return SourcePage(items, limit, cursor)
            if len(page) < batch:
                return SourcePage(items, limit, None)

    def source(self, source_id: str) -> SourceDetail:
        info = self._visible_source(source_id)
        if info is None:
            raise NotFoundError("source", source_id)
        return SourceDetail(
            info=info,
            last_direct_read_at=self.store.last_direct_read_at(source_id),
            evidence_rows=len(self.store.rows_for_source(source_id)),
        )

    def source_dependents(self, source_id: str) -> SourceDependents:
        info = self._visible_source(source_id)
        if info is None:
            raise NotFoundError("source", source_id)
        current = next((v for v in info.versions if v.is_current), None)
        revisions: dict[str, RevisionDependents] = {
            version.revision: _revision_entry(version) for version in info.versions
        }
        rows = self.store.rows_for_source(source_id)
        stale_rows: set[str] = set()
        row_revision: dict[str, str] = {}
        for row in rows:
            evidence_id = str(row.get("evidenceId"))
            revision = _row_revision(row) or "unknown"
            state = _row_state(row) or "candidate"
            stale = (
                state == "stale"
                or info.deleted_at is not None
                or current is None
                or revision != current.revision
            )
            if stale:
                stale_rows.add(evidence_id)
            row_revision[evidence_id] = revision
            entry = revisions.setdefault(revision, RevisionDependents(revision, None, False, None))
            entry.rows.append(DependentRow(evidence_id, state, stale))
        support = self.store.claim_support_of_rows(row_revision)
        verdicts = self.store.packet_verdicts(link.packet_id for link in support)
        stale_packets = {link.packet_id for link in support if link.evidence_id in stale_rows}
        for link in support:
            entry = revisions[row_revision[link.evidence_id]]
            entry.claims.append(_dependent_claim(link, link.evidence_id in stale_rows))
            if all(p.packet_id != link.packet_id for p in entry.packets):
                entry.packets.append(
                    DependentPacket(
                        link.packet_id,
                        verdicts.get(link.packet_id, "NOT_TESTED"),
                        link.packet_id in stale_packets,
                    )
                )
        return SourceDependents(source_id, list(revisions.values()))


def _revision_entry(version: SourceVersionInfo) -> RevisionDependents:
    return RevisionDependents(version.revision, version.sha256, version.is_current, version.observed_at)


def _dependent_claim(link: ClaimSupportRecord, stale: bool) -> DependentClaim:
    return DependentClaim(link.packet_id, link.claim_id, link.evidence_id, link.label, stale)
