"""The audit read model: the bodies the REST API returns and ``akm audit`` prints.

One set of models for both, camelCase on the wire. They are read straight from the store's
records (``from_attributes``): a field of a model is an attribute of the record it is built
from, so no layer copies fields by hand.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    # A JSON body: snake_case in Python, camelCase on the wire, no unknown fields.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ReadModel(ApiModel):
    # Built from store records and service values by attribute.
    model_config = ConfigDict(from_attributes=True)


def wire_json(body: BaseModel) -> Any:
    """``body`` as the JSON value the API sends (camelCase names, ISO 8601 times)."""
    return body.model_dump(mode="json", by_alias=True)


# ---- lineage --------------------------------------------------------------------------------


class VerificationEventOut(ReadModel):
    id: int
    evidence_id: str
    from_state: str | None
    to_state: str
    actor: str
    reason: str
    packet_id: str | None
    detail: dict[str, Any]
    at: datetime


class PacketHistoryOut(ReadModel):
    packet_id: str
    verdict: str
    events: list[VerificationEventOut]


class EvidenceHistoryOut(ReadModel):
    evidence_id: str
    events: list[VerificationEventOut]


class SupportRowOut(ReadModel):
    evidence_id: str
    label: str | None
    note: str | None
    support_score: float | None = Field(
        default=None, description="the verifier's support score (0-1) for this claim and row, when recorded"
    )
    state: str | None
    revision: str | None
    revisions: list[VerificationEventOut] = Field(description="every verification state of the row")


class ClaimOccurrenceOut(ReadModel):
    packet_id: str
    status: str
    claim: dict[str, Any]
    support: list[SupportRowOut]


class ClaimOut(ReadModel):
    claim_id: str
    occurrences: list[ClaimOccurrenceOut]


class TaskPacketOut(ReadModel):
    packet_id: str
    verdict: str


class TaskPacketsOut(ReadModel):
    # Every packet of a packet's task, oldest first: the answer, then each re-verification
    # (``akm audit packet --task``; the REST API has no such query).
    task_id: str
    packets: list[TaskPacketOut]


class DecodeStatsOut(ReadModel):
    # Decode statistics stored beside a packet (``akm audit packet --decode-stats``).
    packet_id: str
    decode_stats: list[dict[str, Any]]


# ---- rejections -----------------------------------------------------------------------------


class RejectionOut(ReadModel):
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


class RejectionPageOut(ReadModel):
    items: list[RejectionOut]
    limit: int
    offset: int
    has_more: bool
    next_offset: int | None


# ---- sources --------------------------------------------------------------------------------


class SourceVersionOut(ReadModel):
    version_id: int
    revision: str
    sha256: str
    path: str
    observed_at: datetime
    is_current: bool


class SourceSummaryOut(ReadModel):
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


class SourcePageOut(ReadModel):
    items: list[SourceSummaryOut]
    limit: int
    next_after: str | None = Field(description="pass as `after` for the next page; null at the end")


class SourceOut(SourceSummaryOut):
    versions: list[SourceVersionOut]
    last_direct_read_at: datetime | None
    evidence_rows: int


class DependentRowOut(ReadModel):
    evidence_id: str
    state: str
    stale: bool


class DependentClaimOut(ReadModel):
    packet_id: str
    claim_id: str
    evidence_id: str
    label: str | None
    stale: bool


class DependentPacketOut(ReadModel):
    packet_id: str
    verdict: str
    stale: bool


class RevisionDependentsOut(ReadModel):
    revision: str
    sha256: str | None
    is_current: bool
    observed_at: datetime | None
    rows: list[DependentRowOut]
    claims: list[DependentClaimOut]
    packets: list[DependentPacketOut]


class SourceDependentsOut(ReadModel):
    source_id: str
    revisions: list[RevisionDependentsOut]
    stale_packet_ids: list[str]
