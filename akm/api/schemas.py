"""Request and response bodies of the API (camelCase on the wire), separate from storage models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from akm.service.audit import (
    ClaimOccurrence,
    PacketHistory,
    RejectionPage,
    SourceDependents,
    SourceDetail,
    SourcePage,
    SupportRowAudit,
)
from akm.store import RejectionRecord, SourceVersionInfo, VerificationEventRecord
from akm.store.repository import SourceInfo

LaneName = Literal["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship"]


class ApiModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


# ---- answers --------------------------------------------------------------------------------


class AnswerOptionsIn(ApiModel):
    """Pipeline options; anything left out takes the pipeline's default."""

    lanes: list[LaneName] | None = Field(
        default=None, min_length=1, max_length=4, description="lanes to run; default: chosen by query class"
    )
    fusion: Literal["deterministic-priority", "rrf"] | None = Field(
        default=None, description="fusion method; default: the manifest's"
    )
    max_rows: int | None = Field(default=None, ge=1, le=20, description="rows read into the prompt")
    max_new_tokens: int | None = Field(default=None, ge=1, le=1024)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    # Strict: "yes", "1" or 1 is refused, not read as true (the schema says boolean).
    strict: bool | None = Field(default=None, strict=True, description="return only supported claims")


class AnswerIn(ApiModel):
    question: str = Field(min_length=1, description="the question; at most the server's question limit")
    stream: bool = Field(
        default=False, strict=True, description="stream server-sent events instead of one JSON object"
    )
    options: AnswerOptionsIn = Field(default_factory=AnswerOptionsIn)


class AnswerOut(BaseModel):
    """The answer object, identical to ``akm ask --json``."""

    model_config = ConfigDict(extra="allow")

    answer: str
    claims: list[dict[str, Any]]
    verdict: dict[str, Any] = Field(description="`verdict` (PASS, HOLD, ...) and its `reasons`")
    packet_id: str = Field(alias="packetId")
    packet: dict[str, Any]
    decode: dict[str, Any] | None = None


# ---- lineage --------------------------------------------------------------------------------


class VerificationEventOut(ApiModel):
    id: int
    evidence_id: str
    from_state: str | None
    to_state: str
    actor: str
    reason: str
    packet_id: str | None
    detail: dict[str, Any]
    at: datetime

    @classmethod
    def of(cls, event: VerificationEventRecord) -> VerificationEventOut:
        return cls(
            id=event.id,
            evidence_id=event.evidence_id,
            from_state=event.from_state,
            to_state=event.to_state,
            actor=event.actor,
            reason=event.reason,
            packet_id=event.packet_id,
            detail=event.detail,
            at=event.at,
        )


class PacketHistoryOut(ApiModel):
    packet_id: str
    verdict: str
    events: list[VerificationEventOut]

    @classmethod
    def of(cls, history: PacketHistory) -> PacketHistoryOut:
        return cls(
            packet_id=history.packet_id,
            verdict=history.verdict,
            events=[VerificationEventOut.of(event) for event in history.events],
        )


class EvidenceHistoryOut(ApiModel):
    evidence_id: str
    events: list[VerificationEventOut]


class SupportRowOut(ApiModel):
    evidence_id: str
    label: str | None
    note: str | None
    state: str | None
    revision: str | None
    revisions: list[VerificationEventOut] = Field(description="every verification state of the row")

    @classmethod
    def of(cls, support: SupportRowAudit) -> SupportRowOut:
        return cls(
            evidence_id=support.evidence_id,
            label=support.label,
            note=support.note,
            state=support.state,
            revision=support.revision,
            revisions=[VerificationEventOut.of(event) for event in support.events],
        )


class ClaimOccurrenceOut(ApiModel):
    packet_id: str
    status: str
    claim: dict[str, Any]
    support: list[SupportRowOut]

    @classmethod
    def of(cls, occurrence: ClaimOccurrence) -> ClaimOccurrenceOut:
        return cls(
            packet_id=occurrence.packet_id,
            status=occurrence.status,
            claim=occurrence.claim,
            support=[SupportRowOut.of(row) for row in occurrence.support],
        )


class ClaimOut(ApiModel):
    claim_id: str
    occurrences: list[ClaimOccurrenceOut]


class RejectionOut(ApiModel):
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

    @classmethod
    def of(cls, record: RejectionRecord) -> RejectionOut:
        return cls(
            id=record.id,
            stage=record.stage,
            reason=record.reason,
            query=record.query,
            result_set_id=record.result_set_id,
            packet_id=record.packet_id,
            source_id=record.source_id,
            evidence_id=record.evidence_id,
            detail=record.detail,
            at=record.at,
        )


class RejectionPageOut(ApiModel):
    items: list[RejectionOut]
    limit: int
    offset: int
    has_more: bool
    next_offset: int | None

    @classmethod
    def of(cls, page: RejectionPage) -> RejectionPageOut:
        return cls(
            items=[RejectionOut.of(record) for record in page.items],
            limit=page.limit,
            offset=page.offset,
            has_more=page.has_more,
            next_offset=page.offset + len(page.items) if page.has_more else None,
        )


# ---- sources --------------------------------------------------------------------------------


class SourceVersionOut(ApiModel):
    version_id: int
    revision: str
    sha256: str
    path: str
    observed_at: datetime
    is_current: bool

    @classmethod
    def of(cls, version: SourceVersionInfo) -> SourceVersionOut:
        return cls(
            version_id=version.version_id,
            revision=version.revision,
            sha256=version.sha256,
            path=version.path,
            observed_at=version.observed_at,
            is_current=version.is_current,
        )


class SourceSummaryOut(ApiModel):
    source_id: str
    path: str
    canonical_uri: str
    source_type: str
    classification: str
    title: str | None
    deleted: bool
    current_revision: str | None
    current_sha256: str | None
    last_observed_at: datetime | None

    @classmethod
    def fields_of(cls, info: SourceInfo) -> dict[str, Any]:
        current = next((v for v in info.versions if v.is_current), None)
        observed = max((v.observed_at for v in info.versions), default=None)
        return {
            "source_id": info.source_id,
            "path": info.path,
            "canonical_uri": info.canonical_uri,
            "source_type": info.source_type,
            "classification": info.classification,
            "title": info.title,
            "deleted": info.deleted_at is not None,
            "current_revision": current.revision if current else None,
            "current_sha256": current.sha256 if current else None,
            "last_observed_at": observed,
        }

    @classmethod
    def of(cls, info: SourceInfo) -> SourceSummaryOut:
        return cls(**cls.fields_of(info))


class SourcePageOut(ApiModel):
    items: list[SourceSummaryOut]
    limit: int
    next_after: str | None = Field(description="pass as `after` for the next page; null at the end")

    @classmethod
    def of(cls, page: SourcePage) -> SourcePageOut:
        return cls(
            items=[SourceSummaryOut.of(info) for info in page.items],
            limit=page.limit,
            next_after=page.next_after,
        )


class SourceOut(SourceSummaryOut):
    versions: list[SourceVersionOut]
    last_direct_read_at: datetime | None
    evidence_rows: int

    @classmethod
    def of_detail(cls, detail: SourceDetail) -> SourceOut:
        return cls(
            **SourceSummaryOut.fields_of(detail.info),
            versions=[SourceVersionOut.of(version) for version in detail.info.versions],
            last_direct_read_at=detail.last_direct_read_at,
            evidence_rows=detail.evidence_rows,
        )


class DependentRowOut(ApiModel):
    evidence_id: str
    state: str
    stale: bool


class DependentClaimOut(ApiModel):
    packet_id: str
    claim_id: str
    evidence_id: str
    label: str | None
    stale: bool


class DependentPacketOut(ApiModel):
    packet_id: str
    verdict: str
    stale: bool


class RevisionDependentsOut(ApiModel):
    revision: str
    sha256: str | None
    is_current: bool
    observed_at: datetime | None
    rows: list[DependentRowOut]
    claims: list[DependentClaimOut]
    packets: list[DependentPacketOut]


class SourceDependentsOut(ApiModel):
    source_id: str
    revisions: list[RevisionDependentsOut]
    stale_packet_ids: list[str]

    @classmethod
    def of(cls, dependents: SourceDependents) -> SourceDependentsOut:
        return cls(
            source_id=dependents.source_id,
            revisions=[
                RevisionDependentsOut(
                    revision=entry.revision,
                    sha256=entry.sha256,
                    is_current=entry.is_current,
                    observed_at=entry.observed_at,
                    rows=[
                        DependentRowOut(evidence_id=r.evidence_id, state=r.state, stale=r.stale)
                        for r in entry.rows
                    ],
                    claims=[
                        DependentClaimOut(
                            packet_id=c.packet_id,
                            claim_id=c.claim_id,
                            evidence_id=c.evidence_id,
                            label=c.label,
                            stale=c.stale,
                        )
                        for c in entry.claims
                    ],
                    packets=[
                        DependentPacketOut(packet_id=p.packet_id, verdict=p.verdict, stale=p.stale)
                        for p in entry.packets
                    ],
                )
                for entry in dependents.revisions
            ],
            stale_packet_ids=dependents.stale_packet_ids,
        )


class ReverifyIn(ApiModel):
    source_id: str | None = Field(default=None, min_length=1, description="one source; omit for every source")


class ReverifyOut(BaseModel):
    """The re-verification report (what became stale, which claims and packets changed)."""

    model_config = ConfigDict(extra="allow")


# ---- validation and operations -------------------------------------------------------------


class FindingOut(ApiModel):
    rule_id: str
    pointer: str
    message: str


class ValidationReportOut(ApiModel):
    valid: bool
    documents: int
    findings: list[FindingOut]


class HealthOut(ApiModel):
    status: Literal["ok"]


class ReadyOut(ApiModel):
    status: Literal["ready", "not-ready"]
    store: str
    models: str
