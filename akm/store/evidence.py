"""Evidence rows and their verification events.

A row is stored as its JSON document plus the columns audits filter on (source, revision,
checksum, state, lane); saving a row again replaces it. Verification events are append-only:
each records one state change of one row, with its actor and reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select

from akm.store.base import (
    JsonDocument,
    StoreError,
    StoreReads,
    TransactionWrites,
    as_utc,
    document_of,
    now_utc,
)
from akm.store.models import EvidenceRowRecord, Source, SourceVersion, VerificationEvent

# Verification states no later change can move a row out of (the contract's terminal states).
_TERMINAL_ROW_STATES = ("conflicted", "stale", "rejected")


@dataclass(frozen=True)
class VerificationEventRecord:
    id: int
    evidence_id: str
    from_state: str | None
    to_state: str
    actor: str
    reason: str
    packet_id: str | None
    detail: dict[str, Any]
    at: datetime


def event_record(event: VerificationEvent) -> VerificationEventRecord:
    return VerificationEventRecord(
        id=event.id,
        evidence_id=event.evidence_id,
        from_state=event.from_state,
        to_state=event.to_state,
        actor=event.actor,
        reason=event.reason,
        packet_id=event.packet_id,
        detail=dict(event.detail),
        at=as_utc(event.at) or now_utc(),
    )


class EvidenceWrites(TransactionWrites):
    """Writes of evidence rows and verification events."""

    def save_rows(self, rows: Iterable[Mapping[str, Any] | JsonDocument]) -> None:
        """Insert or replace evidence rows by ``evidenceId`` (current state plus full JSON)."""
        stamp = now_utc()
        for record in rows:
            document = document_of(record)
            evidence_id = document.get("evidenceId")
            if not isinstance(evidence_id, str) or not evidence_id:
                raise StoreError("evidence row without evidenceId")
            source = document.get("source") or {}
            verification = document.get("verification") or {}
            retrieval = document.get("retrieval") or {}
            existing = self.session.get(EvidenceRowRecord, evidence_id)
            values = {
                "source_id": str(source.get("sourceId", "")),
                "source_revision": (source.get("version") or {}).get("revision"),
                "source_checksum": (source.get("version") or {}).get("checksum"),
                "state": str(verification.get("state", "candidate")),
                "lane": retrieval.get("lane"),
                "row_json": document,
                "updated_at": stamp,
            }
            if existing is None:
                self.session.add(EvidenceRowRecord(evidence_id=evidence_id, created_at=stamp, **values))
            else:
                for key, value in values.items():
                    setattr(existing, key, value)
        self.session.flush()

    def record_verification_event(
        self,
        *,
        evidence_id: str,
        from_state: str | None,
        to_state: str,
        actor: str,
        reason: str,
        packet_id: str | None = None,
        detail: Mapping[str, Any] | None = None,
        at: datetime | None = None,
    ) -> None:
        self.session.add(
            VerificationEvent(
                evidence_id=evidence_id,
                from_state=from_state,
                to_state=to_state,
                actor=actor,
                reason=reason,
                packet_id=packet_id,
                detail=dict(detail or {}),
                at=at or now_utc(),
            )
        )


class EvidenceReads(StoreReads):
    """Reads of evidence rows and verification events."""

    def get_row(self, evidence_id: str) -> dict[str, Any] | None:
        with self._reading() as session:
            record = session.get(EvidenceRowRecord, evidence_id)
            return dict(record.row_json) if record is not None else None

    def rows_for_source(self, source_id: str, *, state: str | None = None) -> list[dict[str, Any]]:
        query = select(EvidenceRowRecord.row_json).where(EvidenceRowRecord.source_id == source_id)
        if state is not None:
            query = query.where(EvidenceRowRecord.state == state)
        with self._reading() as session:
            return [dict(row) for row in session.scalars(query.order_by(EvidenceRowRecord.evidence_id))]

    def verification_events(self, evidence_id: str) -> list[VerificationEventRecord]:
        """Every verification event of one row, in order."""
        with self._reading() as session:
            events = session.scalars(
                select(VerificationEvent)
                .where(VerificationEvent.evidence_id == evidence_id)
                .order_by(VerificationEvent.id)
            ).all()
            return [event_record(event) for event in events]

    def verification_events_of_packet(self, packet_id: str) -> list[VerificationEventRecord]:
        """Every verification event recorded for ``packet_id``, in order."""
        with self._reading() as session:
            events = session.scalars(
                select(VerificationEvent)
                .where(VerificationEvent.packet_id == packet_id)
                .order_by(VerificationEvent.id)
            ).all()
            return [event_record(event) for event in events]

    def sources_awaiting_reverification(self) -> list[str]:
        """Sources with rows still live although the source changed or disappeared since they were read.

        Re-verifying a source makes each such row stale or rejected in the same transaction
        that appends the re-verified packets, so this list is what is left to do after an
        interrupted or failed re-verification; the next ingest or ``akm reverify`` picks it up.
        """
        current = SourceVersion.__table__.alias("current_version")
        query = (
            select(EvidenceRowRecord.source_id)
            .join(Source, Source.source_id == EvidenceRowRecord.source_id)
            .outerjoin(current, current.c.id == Source.current_version_id)
            .where(
                EvidenceRowRecord.state.not_in(_TERMINAL_ROW_STATES),
                EvidenceRowRecord.source_checksum.is_not(None),
                or_(
                    Source.deleted_at.is_not(None),
                    current.c.id.is_(None),
                    current.c.sha256 != EvidenceRowRecord.source_checksum,
                ),
            )
            .distinct()
            .order_by(EvidenceRowRecord.source_id)
        )
        with self._reading() as session:
            return list(session.scalars(query))
