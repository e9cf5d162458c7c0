"""Packets and their claims: claim support (the verifier's judgement per claim and row), decode
statistics, and the packets and claims that rely on a source.

A packet is stored as its JSON document plus the columns audits filter on; its claims and
their support rows are taken from that document. Saving a packet again replaces its claims;
decode statistics are append-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from akm.store.base import JsonDocument, StoreError, StoreReads, TransactionWrites, document_of, now_utc
from akm.store.models import ClaimRecord, ClaimSupport, DecodeStatsRecord, EvidenceRowRecord, PacketRecord


@dataclass(frozen=True)
class SourceDependent:
    """One claim of one packet relying on a row of a source revision."""

    packet_id: str
    task_id: str
    claim_id: str
    evidence_id: str
    revision: str | None
    label: str | None


class PacketWrites(TransactionWrites):
    """Writes of packets, their claims and claim support, and decode statistics."""

    def save_packet(self, packet: Mapping[str, Any] | JsonDocument) -> str:
        """Insert or replace a packet with its claims and claim support (from the packet JSON)."""
        document = document_of(packet)
        packet_id = document.get("packetId")
        if not isinstance(packet_id, str) or not packet_id:
            raise StoreError("packet without packetId")
        query = document.get("query") or {}
        project = document.get("project") or {}
        verification = document.get("verification") or {}
        generated = document.get("generatedAt")
        generated_at = datetime.fromisoformat(generated) if isinstance(generated, str) else now_utc()
        checksum = project.get("manifestChecksum")
        if isinstance(checksum, dict):
            checksum = checksum.get("value")
        values: dict[str, Any] = {
            "task_id": str(document.get("taskId", "")),
            "query": str(query.get("original", "")) if isinstance(query, dict) else str(query),
            "verdict": str(verification.get("verdict", "NOT_TESTED")),
            "manifest_id": project.get("manifestId"),
            "manifest_checksum": checksum,
            "packet_json": document,
            "generated_at": generated_at,
        }
        existing = self.session.get(PacketRecord, packet_id)
        if existing is None:
            self.session.add(PacketRecord(packet_id=packet_id, **values))
        else:
            # A re-saved packet replaces its claims; decode stats and events stay (append-only).
            self.session.query(ClaimSupport).filter(ClaimSupport.packet_id == packet_id).delete()
            self.session.query(ClaimRecord).filter(ClaimRecord.packet_id == packet_id).delete()
            for key, value in values.items():
                setattr(existing, key, value)
        self.session.flush()
        for claim in document.get("claims") or []:
            claim_id = str(claim.get("claimId", ""))
            self.session.add(
                ClaimRecord(
                    packet_id=packet_id,
                    claim_id=claim_id,
                    claim_text=str(claim.get("claimText", "")),
                    claim_class=str(claim.get("claimClass", "other")),
                    importance=str(claim.get("importance", "supporting")),
                    status=str(claim.get("status", "unsupported")),
                    claim_json=dict(claim),
                )
            )
            for evidence_id in dict.fromkeys(claim.get("supportRowIds") or []):
                self.session.add(
                    ClaimSupport(
                        packet_id=packet_id,
                        claim_id=claim_id,
                        evidence_id=str(evidence_id),
                        label=None,
                        note=None,
                        detail={},
                    )
                )
        self.session.flush()
        return packet_id

    def record_claim_support(
        self,
        *,
        packet_id: str,
        claim_id: str,
        evidence_id: str,
        label: str | None,
        note: str | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Set the verifier's judgement for one claim↔row pair (insert or update)."""
        existing = self.session.scalar(
            select(ClaimSupport).where(
                ClaimSupport.packet_id == packet_id,
                ClaimSupport.claim_id == claim_id,
                ClaimSupport.evidence_id == evidence_id,
            )
        )
        if existing is None:
            self.session.add(
                ClaimSupport(
                    packet_id=packet_id,
                    claim_id=claim_id,
                    evidence_id=evidence_id,
                    label=label,
                    note=note,
                    detail=dict(detail or {}),
                )
            )
        else:
            existing.label = label
            existing.note = note
            existing.detail = dict(detail or {})

    def save_decode_stats(self, packet_id: str, stats: Mapping[str, Any]) -> None:
        self.session.add(DecodeStatsRecord(packet_id=packet_id, stats_json=dict(stats), at=now_utc()))


class PacketReads(StoreReads):
    """Reads of packets, decode statistics, and what relies on a source."""

    def get_packet(self, packet_id: str) -> dict[str, Any] | None:
        with self._reading() as session:
            record = session.get(PacketRecord, packet_id)
            return dict(record.packet_json) if record is not None else None

    def decode_stats(self, packet_id: str) -> list[dict[str, Any]]:
        with self._reading() as session:
            return [
                dict(stats)
                for stats in session.scalars(
                    select(DecodeStatsRecord.stats_json)
                    .where(DecodeStatsRecord.packet_id == packet_id)
                    .order_by(DecodeStatsRecord.id)
                )
            ]

    def count_packets(self) -> int:
        with self._reading() as session:
            return int(session.scalar(select(func.count()).select_from(PacketRecord)) or 0)

    def packets_of_task(self, task_id: str) -> list[str]:
        """Packet ids of one task, oldest first (a re-verification appends a packet to its task)."""
        with self._reading() as session:
            return list(
                session.scalars(
                    select(PacketRecord.packet_id)
                    .where(PacketRecord.task_id == task_id)
                    .order_by(PacketRecord.generated_at, PacketRecord.packet_id)
                )
            )

    def dependents_of_source(self, source_id: str, revision: str | None = None) -> list[SourceDependent]:
        """Packets and claims that rely on rows of ``source_id`` (read at ``revision`` when given)."""
        query = (
            select(
                ClaimSupport.packet_id,
                PacketRecord.task_id,
                ClaimSupport.claim_id,
                ClaimSupport.evidence_id,
                EvidenceRowRecord.source_revision,
                ClaimSupport.label,
            )
            .join(EvidenceRowRecord, EvidenceRowRecord.evidence_id == ClaimSupport.evidence_id)
            .join(PacketRecord, PacketRecord.packet_id == ClaimSupport.packet_id)
            .where(EvidenceRowRecord.source_id == source_id)
        )
        if revision is not None:
            query = query.where(EvidenceRowRecord.source_revision == revision)
        with self._reading() as session:
            rows = session.execute(query.order_by(ClaimSupport.id)).all()
        return [
            SourceDependent(
                packet_id=row[0],
                task_id=row[1],
                claim_id=row[2],
                evidence_id=row[3],
                revision=row[4],
                label=row[5],
            )
            for row in rows
        ]
