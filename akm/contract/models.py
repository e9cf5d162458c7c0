"""Pydantic models of the AKM evidence contract (EvidenceRow, EvidencePacket and their parts).

Attributes are snake_case; the JSON form uses the contract's camelCase names. Every model
is frozen: a state change builds a new object (see ``akm.contract.states``). The model
validators mirror the conditional rules of the upstream JSON Schema, so any instance that
can be constructed serialises to a document the upstream schema accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, TypeVar

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

SCHEMA_VERSION: Literal["1.0.0"] = "1.0.0"

# RFC 3339 date-time, the profile of JSON Schema's "date-time" format.
TIMESTAMP_PATTERN = (
    r"^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)"
    r"(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$"
)
RELATIVE_PATH_PATTERN = r"^(?!/)(?![A-Za-z]:[\\/])(?!.*(?:^|/)\.\.(?:/|$)).+$"
CHECKSUM_PATTERN = r"^(?:[A-Fa-f0-9]{64}|unavailable)$"
CANONICAL_URI_PATTERN = r"^(?:file|https|qmd|akm|source):"


_Item = TypeVar("_Item")


def _unique(items: tuple[_Item, ...]) -> tuple[_Item, ...]:
    seen: list[_Item] = []
    for item in items:
        if item in seen:
            raise ValueError(f"duplicate item {item!r}")
        seen.append(item)
    return items


NonEmptyStr = Annotated[str, Field(min_length=1)]
Timestamp = Annotated[str, Field(pattern=TIMESTAMP_PATTERN)]
RelativePath = Annotated[str, Field(min_length=1, pattern=RELATIVE_PATH_PATTERN)]
Checksum = Annotated[str, Field(pattern=CHECKSUM_PATTERN)]
PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
UniqueStrs = Annotated[tuple[NonEmptyStr, ...], AfterValidator(_unique)]

VerificationStateValue = Literal[
    "candidate", "direct-read", "claim-supported", "conflicted", "stale", "rejected"
]
LaneName = Literal["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship", "direct-read", "other"]
LocatorType = Literal[
    "path", "line-range", "heading", "page", "symbol", "thread", "row", "url-fragment", "other"
]
ChecksumAlgorithm = Literal["sha256", "source-native", "none"]
SourceType = Literal[
    "markdown", "web", "paper", "book", "code", "thread", "transcript", "database", "artifact", "other"
]
Classification = Literal["public", "non-sensitive", "private", "restricted", "unknown"]
ScopeDecision = Literal["in-scope", "explicit-expansion", "out-of-scope", "denied"]
AuthorityLevel = Literal["canonical", "official", "primary", "reviewed", "secondary", "internal", "unknown"]
FreshnessState = Literal["current", "unknown", "stale", "superseded"]
FusionMethodTag = Literal["not-fused", "deterministic-priority", "rrf", "other"]
ReadMethod = Literal["direct-file-read", "direct-web-read", "source-api-read", "other"]
LaneStatus = Literal["completed", "skipped", "failed"]
ExclusionReason = Literal[
    "denied", "out-of-scope", "duplicate", "source-cap", "stale", "identity-error", "invalid-locator", "other"
]
FusionMethod = Literal["deterministic-priority", "rrf"]
PriorityKey = Literal[
    "scope",
    "authority",
    "exact-support",
    "lane-rank",
    "semantic-relevance",
    "relationship-support",
    "freshness",
]
DedupKey = Literal["sourceId", "canonicalUri", "revision", "checksum", "locator"]
DiversityField = Literal["sourceId", "sourceType", "collection", "authority", "projectScope"]
ClaimImportance = Literal["important", "supporting"]
ClaimClass = Literal["number", "date", "system-state", "recommendation", "policy", "interpretation", "other"]
ClaimStatus = Literal[
    "unsupported", "candidate-only", "direct-read-pending", "supported", "conflicted", "rejected"
]
ConflictType = Literal["authority", "freshness", "scope", "factual", "version", "interpretation"]
ConflictStatus = Literal["open", "resolved", "accepted-divergence"]
MissingStatus = Literal["open", "waived", "resolved"]
QueuePriority = Literal["critical", "high", "normal", "low"]
QueueStatus = Literal["pending", "completed", "skipped", "failed"]
QueryClass = Literal[
    "exact-path-property",
    "literal-token",
    "semantic-recall",
    "relationship-neighborhood",
    "authority-conflict",
    "mixed",
]
Verdict = Literal["NOT_TESTED", "PASS", "PASS_WITH_NOTE", "HOLD", "FAIL"]
MetadataValue = str | int | float | bool | None


class ContractModel(BaseModel):
    """Base of every contract model: camelCase JSON, frozen, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
        regex_engine="python-re",
    )

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON object: camelCase keys, absent optionals omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls.model_validate(dict(data))


class Locator(ContractModel):
    type: LocatorType
    value: NonEmptyStr
    heading_path: tuple[NonEmptyStr, ...] | None = None
    start_line: PositiveInt | None = None
    end_line: PositiveInt | None = None
    page: PositiveInt | None = None
    symbol: NonEmptyStr | None = None
    thread_id: NonEmptyStr | None = None
    anchor: NonEmptyStr | None = None


class SourceVersion(ContractModel):
    revision: NonEmptyStr
    checksum_algorithm: ChecksumAlgorithm
    checksum: Checksum | None = None
    observed_at: Timestamp

    @model_validator(mode="after")
    def _checksum_follows_algorithm(self) -> Self:
        if self.checksum_algorithm == "none" and self.checksum is not None:
            raise ValueError("checksum must be absent when checksumAlgorithm is 'none'")
        if self.checksum_algorithm != "none" and self.checksum is None:
            raise ValueError(f"checksum is required when checksumAlgorithm is {self.checksum_algorithm!r}")
        return self


class Source(ContractModel):
    source_id: NonEmptyStr
    canonical_uri: Annotated[str, Field(min_length=1, pattern=CANONICAL_URI_PATTERN)]
    canonical_path: RelativePath | None = None
    source_type: SourceType
    classification: Classification
    title: NonEmptyStr | None = None
    authors: UniqueStrs | None = None
    origin_uri: NonEmptyStr | None = None
    publisher: NonEmptyStr | None = None
    parent_source_id: NonEmptyStr | None = None
    derived: bool
    derivation_method: NonEmptyStr | None = None
    access_policy_ref: NonEmptyStr | None = None
    project_scopes: Annotated[UniqueStrs, Field(min_length=1)]
    version: SourceVersion
    source_metadata: dict[str, MetadataValue] | None = None

    @model_validator(mode="after")
    def _derived_names_parent(self) -> Self:
        if self.derived and (self.parent_source_id is None or self.derivation_method is None):
            raise ValueError("a derived source requires parentSourceId and derivationMethod")
        return self


class Scope(ContractModel):
    project_id: NonEmptyStr
    manifest_id: NonEmptyStr
    manifest_version: NonEmptyStr
    scope_decision: ScopeDecision
    collection: NonEmptyStr
    locator: Locator
    scope_reason: NonEmptyStr | None = None


class Authority(ContractModel):
    level: AuthorityLevel
    rationale: NonEmptyStr
    policy_ref: NonEmptyStr
    owner: NonEmptyStr | None = None
    reviewed_at: Timestamp | None = None
    supersedes_source_ids: UniqueStrs | None = None
    limitations: tuple[NonEmptyStr, ...] | None = None


class Freshness(ContractModel):
    state: FreshnessState
    checked_at: Timestamp
    policy_ref: NonEmptyStr
    reason: NonEmptyStr
    source_modified_at: Timestamp | None = None
    captured_at: Timestamp | None = None
    watermark: NonEmptyStr | None = None
    stale_after: Timestamp | None = None
    superseded_by_source_id: NonEmptyStr | None = None


class Retrieval(ContractModel):
    lane: LaneName
    query: NonEmptyStr
    rank: PositiveInt
    result_set_id: NonEmptyStr
    parameters: dict[str, Any]
    raw_score: float | None = None
    raw_score_meaning: NonEmptyStr | None = None
    normalized_score: float | None = None
    normalization_method: NonEmptyStr | None = None
    fusion_contribution: float | None = None
    fusion_method: FusionMethodTag | None = None
    matched_terms: tuple[NonEmptyStr, ...] | None = None
    relationship_path: tuple[NonEmptyStr, ...] | None = None
    latency_ms: NonNegativeFloat | None = None
    retrieved_at: Timestamp | None = None

    @model_validator(mode="after")
    def _scores_carry_meaning(self) -> Self:
        # A lane-local score is meaningless without the lane's own explanation of it (E6).
        if self.raw_score is not None and self.raw_score_meaning is None:
            raise ValueError("rawScore requires rawScoreMeaning")
        if self.normalized_score is not None and self.normalization_method is None:
            raise ValueError("normalizedScore requires normalizationMethod")
        return self


class ContextExpansion(ContractModel):
    policy_ref: NonEmptyStr
    bytes_added: NonNegativeInt
    locator: Locator


class Redactions(ContractModel):
    count: NonNegativeInt
    reason: NonEmptyStr


class Content(ContractModel):
    excerpt: NonEmptyStr
    excerpt_checksum: Checksum
    language: Annotated[str, Field(min_length=2)] | None = None
    before: str | None = None
    after: str | None = None
    heading: NonEmptyStr | None = None
    context_expansion: ContextExpansion | None = None
    redactions: Redactions | None = None


class DirectRead(ContractModel):
    performed: bool
    read_at: Timestamp | None = None
    read_by: NonEmptyStr | None = None
    read_method: ReadMethod | None = None
    locator_read: NonEmptyStr | None = None
    observed_revision: NonEmptyStr | None = None
    observed_checksum: Checksum | None = None
    checksum_match: bool | None = None
    context_included: bool | None = None

    @model_validator(mode="after")
    def _performed_read_is_described(self) -> Self:
        if self.performed:
            missing = [
                alias
                for alias, value in (
                    ("readAt", self.read_at),
                    ("readBy", self.read_by),
                    ("readMethod", self.read_method),
                    ("locatorRead", self.locator_read),
                    ("observedRevision", self.observed_revision),
                    ("contextIncluded", self.context_included),
                )
                if value is None
            ]
            if missing:
                raise ValueError(f"a performed direct read requires {', '.join(missing)}")
        return self


class VerificationEvent(ContractModel):
    state: VerificationStateValue
    at: Timestamp
    by: NonEmptyStr
    reason: NonEmptyStr


class Verification(ContractModel):
    state: VerificationStateValue
    verified_at: Timestamp | None = None
    verified_by: NonEmptyStr
    notes: str
    claim_ids: UniqueStrs | None = None
    direct_read: DirectRead | None = None
    conflict_ids: UniqueStrs | None = None
    rejection_reasons: tuple[NonEmptyStr, ...] | None = None
    history: tuple[VerificationEvent, ...] | None = None

    @model_validator(mode="after")
    def _state_has_its_evidence(self) -> Self:
        state = self.state
        if state == "candidate" and self.claim_ids:
            raise ValueError("a candidate row cannot carry claimIds (E2)")
        if state in ("direct-read", "claim-supported"):
            if self.verified_at is None:
                raise ValueError(f"state {state!r} requires verifiedAt")
            if self.direct_read is None or not self.direct_read.performed:
                raise ValueError(f"state {state!r} requires directRead.performed true (E3)")
        if state == "claim-supported" and not self.claim_ids:
            raise ValueError("state 'claim-supported' requires at least one claimId (E4)")
        if state == "conflicted" and not self.conflict_ids:
            raise ValueError("state 'conflicted' requires at least one conflictId")
        if state == "rejected" and not self.rejection_reasons:
            raise ValueError("state 'rejected' requires at least one rejection reason")
        return self


class EvidenceRow(ContractModel):
    schema_version: Literal["1.0.0"] = SCHEMA_VERSION
    row_type: Literal["EvidenceRow"] = "EvidenceRow"
    evidence_id: Annotated[str, Field(min_length=8)]
    source: Source
    scope: Scope
    authority: Authority
    freshness: Freshness
    retrieval: Retrieval
    content: Content
    verification: Verification

    @model_validator(mode="after")
    def _stale_row_has_stale_freshness(self) -> Self:
        if self.verification.state == "stale" and self.freshness.state not in ("stale", "superseded"):
            raise ValueError("a stale row requires freshness.state 'stale' or 'superseded'")
        return self

    @property
    def state(self) -> VerificationStateValue:
        return self.verification.state


class LaneRun(ContractModel):
    lane: LaneName
    status: LaneStatus
    query: str
    parameters: dict[str, Any]
    result_count: NonNegativeInt
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    latency_ms: NonNegativeFloat | None = None
    skip_reason: NonEmptyStr | None = None
    error: NonEmptyStr | None = None

    @model_validator(mode="after")
    def _status_has_its_reason(self) -> Self:
        if self.status == "skipped" and self.skip_reason is None:
            raise ValueError("a skipped lane requires skipReason")
        if self.status == "failed" and self.error is None:
            raise ValueError("a failed lane requires error")
        return self


class FusionContribution(ContractModel):
    evidence_id: NonEmptyStr
    lane_ranks: dict[str, PositiveInt]
    contribution: float
    final_rank: PositiveInt
    tie_break_reason: str | None = None


class ExcludedRow(ContractModel):
    evidence_id: NonEmptyStr
    reason: ExclusionReason
    notes: str | None = None


class Fusion(ContractModel):
    method: FusionMethod
    parameters: dict[str, Any]
    priority_order: Annotated[tuple[PriorityKey, ...], Field(min_length=2)]
    dedup_keys: Annotated[tuple[DedupKey, ...], Field(min_length=3), AfterValidator(_unique)]
    per_source_cap: PositiveInt
    max_rows: PositiveInt
    diversity_fields: Annotated[tuple[DiversityField, ...], AfterValidator(_unique)]
    contributions: tuple[FusionContribution, ...]
    excluded_rows: tuple[ExcludedRow, ...]


class Claim(ContractModel):
    claim_id: NonEmptyStr
    claim_text: NonEmptyStr
    importance: ClaimImportance
    claim_class: ClaimClass
    support_row_ids: UniqueStrs
    status: ClaimStatus
    notes: str


class Conflict(ContractModel):
    conflict_id: NonEmptyStr
    topic: NonEmptyStr
    row_ids: Annotated[UniqueStrs, Field(min_length=2)]
    type: ConflictType
    status: ConflictStatus
    resolution: str
    resolved_by: NonEmptyStr | None = None
    resolved_at: Timestamp | None = None
    claim_ids: UniqueStrs

    @model_validator(mode="after")
    def _resolution_is_recorded(self) -> Self:
        if self.status == "resolved" and (
            self.resolved_by is None or self.resolved_at is None or not self.resolution
        ):
            raise ValueError("a resolved conflict requires resolution, resolvedBy and resolvedAt")
        return self


class MissingEvidence(ContractModel):
    missing_id: NonEmptyStr
    claim_ids: UniqueStrs
    description: NonEmptyStr
    required: bool
    status: MissingStatus
    waiver_reason: NonEmptyStr | None = None


class DirectReadQueueItem(ContractModel):
    queue_id: NonEmptyStr
    row_id: NonEmptyStr
    claim_ids: UniqueStrs
    priority: QueuePriority
    reason: NonEmptyStr
    required: bool
    status: QueueStatus
    completion_row_id: NonEmptyStr | None = None
    skip_reason: NonEmptyStr | None = None

    @model_validator(mode="after")
    def _status_has_its_record(self) -> Self:
        if self.status == "completed" and self.completion_row_id is None:
            raise ValueError("a completed queue item requires completionRowId")
        if self.status == "skipped" and self.skip_reason is None:
            raise ValueError("a skipped queue item requires skipReason")
        return self


class Metrics(ContractModel):
    """Packet counters. ``None`` means not measured and is serialised as an explicit null (§5.7)."""

    input_candidate_count: NonNegativeInt | None = None
    eligible_count: NonNegativeInt | None = None
    deduplicated_source_count: NonNegativeInt | None = None
    cap_excluded_count: NonNegativeInt | None = None
    final_row_count: NonNegativeInt | None = None
    unique_source_count: NonNegativeInt | None = None
    unique_source_type_count: NonNegativeInt | None = None
    direct_read_required_count: NonNegativeInt | None = None
    direct_read_completed_count: NonNegativeInt | None = None
    important_claim_count: NonNegativeInt | None = None
    important_claim_supported_count: NonNegativeInt | None = None
    citation_coverage: Annotated[float, Field(ge=0, le=1)] | None = None
    stale_hit_count: NonNegativeInt | None = None
    authority_scope_error_count: NonNegativeInt | None = None
    input_bytes: NonNegativeInt | None = None
    estimated_context_tokens: NonNegativeInt | None = None
    total_latency_ms: NonNegativeFloat | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)


class PacketVerification(ContractModel):
    verdict: Verdict
    verdict_reasons: Annotated[tuple[NonEmptyStr, ...], Field(min_length=1)]
    verified_by: NonEmptyStr
    verified_at: Timestamp | None = None
    rollback_required: bool
    rollback_reason: str


class PacketQuery(ContractModel):
    original: NonEmptyStr
    normalized_intent: NonEmptyStr
    # "class" is the JSON name; a validation alias keeps the Python name usable as a keyword.
    query_class: QueryClass = Field(
        validation_alias=AliasChoices("class", "query_class", "queryClass"), serialization_alias="class"
    )
    important_claim_classes: Annotated[tuple[ClaimClass, ...], AfterValidator(_unique)]


class PacketProject(ContractModel):
    project_id: NonEmptyStr
    manifest_id: NonEmptyStr
    manifest_version: NonEmptyStr
    manifest_checksum: Checksum


class PacketPolicies(ContractModel):
    retrieval_policy_ref: NonEmptyStr
    retrieval_policy_version: NonEmptyStr
    authority_policy_ref: NonEmptyStr
    freshness_policy_ref: NonEmptyStr
    verification_policy_ref: NonEmptyStr
    security_policy_ref: NonEmptyStr


class EvidencePacket(ContractModel):
    schema_version: Literal["1.0.0"] = SCHEMA_VERSION
    packet_type: Literal["EvidencePacket"] = "EvidencePacket"
    packet_id: Annotated[str, Field(min_length=8)]
    task_id: NonEmptyStr
    query: PacketQuery
    project: PacketProject
    policies: PacketPolicies
    generated_at: Timestamp
    lanes_run: Annotated[tuple[LaneRun, ...], Field(min_length=1)]
    fusion: Fusion
    evidence_rows: tuple[EvidenceRow, ...]
    claims: tuple[Claim, ...]
    conflicts: tuple[Conflict, ...]
    missing_evidence: tuple[MissingEvidence, ...]
    direct_read_queue: tuple[DirectReadQueueItem, ...]
    metrics: Metrics
    verification: PacketVerification

    def to_json(self) -> dict[str, Any]:
        document = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        # exclude_none would drop the explicit nulls that mean "not measured".
        document["metrics"] = self.metrics.to_json()
        return document

    def row(self, evidence_id: str) -> EvidenceRow | None:
        return next((row for row in self.evidence_rows if row.evidence_id == evidence_id), None)


__all__ = [
    "SCHEMA_VERSION",
    "Authority",
    "Claim",
    "Conflict",
    "Content",
    "ContextExpansion",
    "ContractModel",
    "DirectRead",
    "DirectReadQueueItem",
    "EvidencePacket",
    "EvidenceRow",
    "ExcludedRow",
    "Freshness",
    "Fusion",
    "FusionContribution",
    "LaneRun",
    "Locator",
    "Metrics",
    "MissingEvidence",
    "PacketPolicies",
    "PacketProject",
    "PacketQuery",
    "PacketVerification",
    "Redactions",
    "Retrieval",
    "Scope",
    "Source",
    "SourceVersion",
    "Verification",
    "VerificationEvent",
]
