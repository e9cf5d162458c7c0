"""Audit queries: the read side the lineage audits need beyond the per-aggregate reads.

Sources with all their versions, when a source's rows were last read directly, each stored
occurrence of a claim with its support rows, the claim support naming given rows, and the
verdicts of given packets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from akm.store.base import StoreReads, as_utc, now_utc
from akm.store.models import (
    ClaimRecord,
    ClaimSupport,
    EvidenceRowRecord,
    PacketRecord,
    Source,
    VerificationEvent,
)
from akm.store.sources import SourceVersionInfo, versions_of


@dataclass(frozen=True)
class SourceInfo:
    """A source with all its versions (oldest first)."""

    source_id: str
    root_alias: str
    path: str
    canonical_uri: str
    source_type: str
    classification: str
    title: str | None
    external_id: str | None
    first_seen_at: datetime
    deleted_at: datetime | None
    versions: tuple[SourceVersionInfo, ...]

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def current_version(self) -> SourceVersionInfo | None:
        return next((version for version in self.versions if version.is_current), None)

    @property
    def current_revision(self) -> str | None:
        current = self.current_version
        return current.revision if current is not None else None

    @property
    def current_sha256(self) -> str | None:
        current = self.current_version
        return current.sha256 if current is not None else None

    @property
    def last_observed_at(self) -> datetime | None:
        """When any version of the source was last observed (``None`` without versions)."""
        return max((version.observed_at for version in self.versions), default=None)


@dataclass(frozen=True)
class ClaimSupportRecord:
    packet_id: str
    claim_id: str
    evidence_id: str
    label: str | None
    note: str | None
    # The verifier's support score for this claim and row, as recorded with its judgement.
    support_score: float | None = None


@dataclass(frozen=True)
class ClaimInfo:
    packet_id: str
    claim_id: str
    status: str
    claim: dict[str, Any]
    support: list[ClaimSupportRecord]


def _source_info(session: Session, source: Source) -> SourceInfo:
    return SourceInfo(
        source_id=source.source_id,
        root_alias=source.root_alias,
        path=source.path,
        canonical_uri=source.canonical_uri,
        source_type=source.source_type,
        classification=source.classification,
        title=source.title,
        external_id=source.external_id,
        first_seen_at=as_utc(source.first_seen_at) or now_utc(),
        deleted_at=as_utc(source.deleted_at),
        versions=tuple(versions_of(session, source.source_id)),
    )


def _score(detail: Any) -> float | None:
    value = detail.get("supportScore") if isinstance(detail, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _support_of(session: Session, *conditions: Any) -> list[ClaimSupportRecord]:
    return [
        ClaimSupportRecord(
            packet_id=support.packet_id,
            claim_id=support.claim_id,
            evidence_id=support.evidence_id,
            label=support.label,
            note=support.note,
            support_score=_score(support.detail),
        )
        for support in session.scalars(select(ClaimSupport).where(*conditions).order_by(ClaimSupport.id))
    ]


class AuditReads(StoreReads):
    """Read-only queries behind the lineage audits."""

    def source_page(self, *, after: str | None = None, limit: int = 100) -> list[SourceInfo]:
        """Sources ordered by id, starting after ``after`` (keyset pagination)."""
        query = select(Source).order_by(Source.source_id).limit(limit)
        if after is not None:
            query = query.where(Source.source_id > after)
        with self._reading() as session:
            return [_source_info(session, source) for source in session.scalars(query)]

    def get_source(self, source_id: str) -> SourceInfo | None:
        with self._reading() as session:
            source = session.get(Source, source_id)
            return _source_info(session, source) if source is not None else None

    def last_direct_read_at(self, source_id: str) -> datetime | None:
        """When any evidence row of ``source_id`` last entered the direct-read state."""
        with self._reading() as session:
            value = session.scalar(
                select(func.max(VerificationEvent.at))
                .join(EvidenceRowRecord, EvidenceRowRecord.evidence_id == VerificationEvent.evidence_id)
                .where(EvidenceRowRecord.source_id == source_id, VerificationEvent.to_state == "direct-read")
            )
        return as_utc(value)

    def claim_records(self, claim_id: str) -> list[ClaimInfo]:
        """Every stored occurrence of ``claim_id`` (one per packet) with its support rows."""
        with self._reading() as session:
            claims = session.scalars(
                select(ClaimRecord).where(ClaimRecord.claim_id == claim_id).order_by(ClaimRecord.id)
            ).all()
            return [
                ClaimInfo(
                    packet_id=claim.packet_id,
                    claim_id=claim.claim_id,
                    status=claim.status,
                    claim=dict(claim.claim_json),
                    support=_support_of(
                        session, ClaimSupport.packet_id == claim.packet_id, ClaimSupport.claim_id == claim_id
                    ),
                )
                for claim in claims
            ]

    def claim_support_of_rows(self, evidence_ids: Iterable[str]) -> list[ClaimSupportRecord]:
        """Claim↔row links that name any of these evidence rows."""
        wanted = list(dict.fromkeys(evidence_ids))
        found: list[ClaimSupportRecord] = []
        with self._reading() as session:
            for start in range(0, len(wanted), 500):
                found.extend(_support_of(session, ClaimSupport.evidence_id.in_(wanted[start : start + 500])))
        return found

    def packet_verdicts(self, packet_ids: Iterable[str]) -> dict[str, str]:
        """The stored verdict of each known packet id."""
        wanted = list(dict.fromkeys(packet_ids))
        if not wanted:
            return {}
        with self._reading() as session:
            rows = session.execute(
                select(PacketRecord.packet_id, PacketRecord.verdict).where(PacketRecord.packet_id.in_(wanted))
            ).all()
        return {row[0]: row[1] for row in rows}
