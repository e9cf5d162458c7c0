"""What retrieval records beside a packet: lane runs and rejected candidates.

Both are append-only. A rejection names the stage that dropped a candidate (fusion, direct
read, selection, ...) and why; ``list_rejections`` is the audit's view of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from akm.store.base import StoreReads, TransactionWrites, as_utc, now_utc
from akm.store.models import LaneRun, RejectedCandidate


@dataclass(frozen=True)
class Rejection:
    stage: str
    reason: str
    query: str | None = None
    result_set_id: str | None = None
    packet_id: str | None = None
    source_id: str | None = None
    evidence_id: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    at: datetime | None = None


@dataclass(frozen=True)
class RejectionRecord:
    id: int
    stage: str
    reason: str
    query: str | None
    result_set_id: str | None
    packet_id: str | None
    source_id: str | None
    evidence_id: str | None
    detail: dict[str, Any]
    at: datetime


class RetrievalRecordWrites(TransactionWrites):
    """Writes of lane runs and rejected candidates."""

    def record_lane_run(
        self,
        *,
        result_set_id: str,
        lane: str,
        query: str,
        status: str,
        parameters: Mapping[str, Any],
        candidate_count: int | None = None,
        latency_ms: float | None = None,
        skip_reason: str | None = None,
        error: str | None = None,
        packet_id: str | None = None,
    ) -> None:
        self.session.add(
            LaneRun(
                result_set_id=result_set_id,
                packet_id=packet_id,
                lane=lane,
                query=query,
                status=status,
                parameters=dict(parameters),
                candidate_count=candidate_count,
                latency_ms=latency_ms,
                skip_reason=skip_reason,
                error=error,
                at=now_utc(),
            )
        )

    def record_rejections(self, rejections: Iterable[Rejection]) -> None:
        self.session.add_all(
            RejectedCandidate(
                stage=rejection.stage,
                reason=rejection.reason,
                query=rejection.query,
                result_set_id=rejection.result_set_id,
                packet_id=rejection.packet_id,
                source_id=rejection.source_id,
                evidence_id=rejection.evidence_id,
                detail=dict(rejection.detail),
                at=rejection.at or now_utc(),
            )
            for rejection in rejections
        )


class RejectionReads(StoreReads):
    """The rejection log, filtered and paged."""

    def list_rejections(
        self,
        *,
        reason: str | None = None,
        source: str | None = None,
        stage: str | None = None,
        packet_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[RejectionRecord]:
        """Rejected candidates, newest first, filtered by any of the given fields."""
        query = select(RejectedCandidate)
        if reason is not None:
            query = query.where(RejectedCandidate.reason == reason)
        if source is not None:
            query = query.where(RejectedCandidate.source_id == source)
        if stage is not None:
            query = query.where(RejectedCandidate.stage == stage)
        if packet_id is not None:
            query = query.where(RejectedCandidate.packet_id == packet_id)
        if since is not None:
            query = query.where(RejectedCandidate.at >= since)
        if until is not None:
            query = query.where(RejectedCandidate.at < until)
        query = (
            query.order_by(RejectedCandidate.at.desc(), RejectedCandidate.id.desc())
            .limit(limit)
            .offset(offset)
        )
        with self._reading() as session:
            return [
                RejectionRecord(
                    id=record.id,
                    stage=record.stage,
                    reason=record.reason,
                    query=record.query,
                    result_set_id=record.result_set_id,
                    packet_id=record.packet_id,
                    source_id=record.source_id,
                    evidence_id=record.evidence_id,
                    detail=dict(record.detail),
                    at=as_utc(record.at) or now_utc(),
                )
                for record in session.scalars(query)
            ]
