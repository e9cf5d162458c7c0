"""Builders that turn what a retrieval lane or a packet assembler knows into contract objects.

The builders compute what must be computed rather than supplied: evidenceId, excerptChecksum,
packetId, the initial candidate history event and the metrics derivable from a packet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from akm.contract.ids import evidence_id, packet_id, sha256_text, utc_now_iso
from akm.contract.models import (
    SCHEMA_VERSION,
    Authority,
    ChecksumAlgorithm,
    Claim,
    ClaimClass,
    Classification,
    Conflict,
    Content,
    ContextExpansion,
    DirectReadQueueItem,
    EvidencePacket,
    EvidenceRow,
    Freshness,
    Fusion,
    LaneName,
    LaneRun,
    Locator,
    Metrics,
    MissingEvidence,
    PacketPolicies,
    PacketProject,
    PacketQuery,
    PacketVerification,
    QueryClass,
    Retrieval,
    Scope,
    ScopeDecision,
    Source,
    SourceType,
    SourceVersion,
    Verification,
    VerificationEvent,
)

CANDIDATE_NOTE = "Retrieved candidate; cannot support a final claim until directly read."


def build_candidate_row(
    *,
    source_id: str,
    canonical_uri: str,
    source_type: SourceType,
    classification: Classification,
    project_scopes: Sequence[str],
    revision: str,
    checksum_algorithm: ChecksumAlgorithm,
    checksum: str | None,
    project_id: str,
    manifest_id: str,
    manifest_version: str,
    collection: str,
    locator: Locator,
    authority: Authority,
    freshness: Freshness,
    lane: LaneName,
    query: str,
    rank: int,
    result_set_id: str,
    parameters: Mapping[str, Any],
    excerpt: str,
    canonical_path: str | None = None,
    title: str | None = None,
    derived: bool = False,
    parent_source_id: str | None = None,
    derivation_method: str | None = None,
    scope_decision: ScopeDecision = "in-scope",
    scope_reason: str | None = None,
    raw_score: float | None = None,
    raw_score_meaning: str | None = None,
    matched_terms: Sequence[str] | None = None,
    relationship_path: Sequence[str] | None = None,
    latency_ms: float | None = None,
    heading: str | None = None,
    language: str | None = None,
    before: str | None = None,
    after: str | None = None,
    context_expansion: ContextExpansion | None = None,
    observed_at: str | None = None,
    retrieved_by: str | None = None,
    at: str | None = None,
) -> EvidenceRow:
    """A ``candidate`` row exactly as one lane retrieved it, with its first history event."""
    moment = at or utc_now_iso()
    retriever = retrieved_by or f"lane:{lane}"
    row_id = evidence_id(SCHEMA_VERSION, source_id, revision, checksum, locator.value)
    event = VerificationEvent(
        state="candidate",
        at=moment,
        by=retriever,
        reason=f"retrieved by the {lane} lane at rank {rank} in result set {result_set_id}",
    )
    return EvidenceRow(
        evidence_id=row_id,
        source=Source(
            source_id=source_id,
            canonical_uri=canonical_uri,
            canonical_path=canonical_path,
            source_type=source_type,
            classification=classification,
            title=title,
            derived=derived,
            parent_source_id=parent_source_id,
            derivation_method=derivation_method,
            project_scopes=tuple(project_scopes),
            version=SourceVersion(
                revision=revision,
                checksum_algorithm=checksum_algorithm,
                checksum=checksum,
                observed_at=observed_at or moment,
            ),
        ),
        scope=Scope(
            project_id=project_id,
            manifest_id=manifest_id,
            manifest_version=manifest_version,
            scope_decision=scope_decision,
            collection=collection,
            locator=locator,
            scope_reason=scope_reason,
        ),
        authority=authority,
        freshness=freshness,
        retrieval=Retrieval(
            lane=lane,
            query=query,
            rank=rank,
            result_set_id=result_set_id,
            parameters=dict(parameters),
            raw_score=raw_score,
            raw_score_meaning=raw_score_meaning,
            fusion_method="not-fused",
            matched_terms=tuple(matched_terms) if matched_terms is not None else None,
            relationship_path=tuple(relationship_path) if relationship_path is not None else None,
            latency_ms=latency_ms,
            retrieved_at=moment,
        ),
        content=Content(
            excerpt=excerpt,
            excerpt_checksum=sha256_text(excerpt),
            heading=heading,
            language=language,
            before=before,
            after=after,
            context_expansion=context_expansion,
        ),
        verification=Verification(
            state="candidate",
            verified_by=retriever,
            notes=CANDIDATE_NOTE,
            history=(event,),
        ),
    )


def winner_ids(fusion: Fusion) -> tuple[str, ...]:
    """Fusion winners in final-rank order (the rows in ``contributions``)."""
    ordered = sorted(fusion.contributions, key=lambda contribution: contribution.final_rank)
    seen: list[str] = []
    for contribution in ordered:
        if contribution.evidence_id not in seen:
            seen.append(contribution.evidence_id)
    return tuple(seen)


def derive_metrics(
    *,
    rows: Sequence[EvidenceRow],
    fusion: Fusion,
    claims: Sequence[Claim],
    direct_read_queue: Sequence[DirectReadQueueItem],
    measured: Mapping[str, int | float | None] | None = None,
) -> Metrics:
    """Metrics whose value follows from the packet itself; everything else stays ``None``
    (not measured) unless supplied in ``measured`` (snake_case field names).

    The definitions here are the ones ``akm.contract.rules`` checks (rule ``metrics-derivable``).
    """
    derived = derivable_metrics(rows=rows, fusion=fusion, claims=claims, direct_read_queue=direct_read_queue)
    values: dict[str, Any] = {name: None for name in Metrics.model_fields}
    values.update(measured or {})
    values.update({name: value for name, value in derived.items() if value is not None})
    return Metrics(**values)


def derivable_metrics(
    *,
    rows: Sequence[EvidenceRow],
    fusion: Fusion,
    claims: Sequence[Claim],
    direct_read_queue: Sequence[DirectReadQueueItem],
) -> dict[str, int | None]:
    """Counts that a packet determines. Winner-based counts are ``None`` when a winner's row
    is not in the packet, because they cannot then be derived."""
    winners = winner_ids(fusion)
    by_id = {row.evidence_id: row for row in rows}
    winner_rows = [by_id[winner] for winner in winners if winner in by_id]
    complete = len(winner_rows) == len(winners)
    important = [claim for claim in claims if claim.importance == "important"]
    required = [item for item in direct_read_queue if item.required]
    return {
        "final_row_count": len(winners),
        "cap_excluded_count": sum(1 for row in fusion.excluded_rows if row.reason == "source-cap"),
        "unique_source_count": len({row.source.source_id for row in winner_rows}) if complete else None,
        "unique_source_type_count": len({row.source.source_type for row in winner_rows})
        if complete
        else None,
        "stale_hit_count": (
            sum(
                1
                for row in winner_rows
                if row.verification.state == "stale" or row.freshness.state in ("stale", "superseded")
            )
            if complete
            else None
        ),
        "direct_read_required_count": len(required),
        "direct_read_completed_count": sum(1 for item in required if item.status == "completed"),
        "important_claim_count": len(important),
        "important_claim_supported_count": sum(1 for claim in important if claim.status == "supported"),
    }


def build_packet(
    *,
    task_id: str,
    query: str,
    normalized_intent: str,
    query_class: QueryClass,
    important_claim_classes: Sequence[ClaimClass],
    project: PacketProject,
    policies: PacketPolicies,
    lanes_run: Sequence[LaneRun],
    fusion: Fusion,
    rows: Sequence[EvidenceRow],
    claims: Sequence[Claim],
    verification: PacketVerification,
    conflicts: Sequence[Conflict] = (),
    missing_evidence: Sequence[MissingEvidence] = (),
    direct_read_queue: Sequence[DirectReadQueueItem] = (),
    measured_metrics: Mapping[str, int | float | None] | None = None,
    run_sequence: int = 1,
    generated_at: str | None = None,
) -> EvidencePacket:
    """An EvidencePacket with a reproducible packetId and metrics derived from its content."""
    return EvidencePacket(
        packet_id=packet_id(task_id, query, project.manifest_version, run_sequence),
        task_id=task_id,
        query=PacketQuery(
            original=query,
            normalized_intent=normalized_intent,
            query_class=query_class,
            important_claim_classes=tuple(important_claim_classes),
        ),
        project=project,
        policies=policies,
        generated_at=generated_at or utc_now_iso(),
        lanes_run=tuple(lanes_run),
        fusion=fusion,
        evidence_rows=tuple(rows),
        claims=tuple(claims),
        conflicts=tuple(conflicts),
        missing_evidence=tuple(missing_evidence),
        direct_read_queue=tuple(direct_read_queue),
        metrics=derive_metrics(
            rows=rows,
            fusion=fusion,
            claims=claims,
            direct_read_queue=direct_read_queue,
            measured=measured_metrics,
        ),
        verification=verification,
    )


__all__ = [
    "CANDIDATE_NOTE",
    "build_candidate_row",
    "build_packet",
    "derivable_metrics",
    "derive_metrics",
    "winner_ids",
]
