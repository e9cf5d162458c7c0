"""Assembling an EvidencePacket from what happened, with its verdict, and checking it before it is stored.

The verdict follows EVIDENCE-SCHEMA §3.2 and the manifest's ``verificationPolicy``:

=================  ==============================================================================
Verdict            When
=================  ==============================================================================
FAIL               a gate failed: a winner's direct read found another checksum than the index
                   (``checksumMismatchVerdict``), a winner is out of scope or denied, or no lane
                   completed. The derived path is rolled back (``rollbackRequired``).
HOLD               an important claim is not supported, a blocking conflict is open
                   (``unresolvedBlockingConflictVerdict``), required evidence is missing, a
                   required direct read did not complete, no claim at all is supported, or (for
                   answers) no supported claim addresses the question.
PASS_WITH_NOTE     every important claim is supported but a caveat remains: an unsupported or
                   conflicted supporting claim, a non-blocking conflict, a winner that could not
                   be read, or stale evidence among the winners.
PASS               every claim is supported by claim-supported rows, nothing is open, and (for
                   answers) a supported claim addresses the question.
=================  ==============================================================================

Every reason is recorded in ``verdictReasons``. A packet is checked against the upstream schema,
the project schema and the project rule checker; one that fails raises :class:`InvalidPacketError`
and is never stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_args

import jsonschema

from akm.contract.builders import build_packet, winner_ids
from akm.contract.ids import utc_now_iso
from akm.contract.models import (
    Claim,
    ClaimClass,
    Conflict,
    DirectReadQueueItem,
    EvidencePacket,
    EvidenceRow,
    Fusion,
    LaneRun,
    MissingEvidence,
    PacketPolicies,
    PacketProject,
    PacketVerification,
    QueryClass,
    Verdict,
)
from akm.contract.rules import check_packet
from akm.contract.schema import FORMAT_CHECKER, UPSTREAM_SCHEMA_PATH, project_schema
from akm.manifest import Manifest

PACKET_VERIFIER = "akm.packet"
_CLAIM_CLASSES: frozenset[str] = frozenset(get_args(ClaimClass))
_NOT_SUPPORTED = ("unsupported", "candidate-only", "direct-read-pending", "conflicted", "rejected")


class InvalidPacketError(RuntimeError):
    """A packet this service built violates the contract: a bug, never stored."""

    def __init__(self, packet_id: str, findings: Sequence[str]) -> None:
        self.packet_id = packet_id
        self.findings = tuple(findings)
        listed = "; ".join(findings[:8]) + (f"; and {len(findings) - 8} more" if len(findings) > 8 else "")
        super().__init__(f"packet {packet_id} violates the evidence contract: {listed}")


@dataclass(frozen=True, slots=True)
class VerdictDecision:
    verdict: Verdict
    reasons: tuple[str, ...]
    rollback_required: bool
    rollback_reason: str

    def record(self, *, at: str | None = None, by: str = PACKET_VERIFIER) -> PacketVerification:
        return PacketVerification(
            verdict=self.verdict,
            verdict_reasons=self.reasons,
            verified_by=by,
            verified_at=at or utc_now_iso(),
            rollback_required=self.rollback_required,
            rollback_reason=self.rollback_reason,
        )


def important_claim_classes(manifest: Manifest) -> tuple[ClaimClass, ...]:
    """The manifest's important classes that are claim classes (it also names query intents)."""
    return tuple(
        name  # type: ignore[misc]
        for name in manifest.verification_policy.important_claim_classes
        if name in _CLAIM_CLASSES
    )


def packet_project(manifest: Manifest) -> PacketProject:
    return PacketProject(
        project_id=manifest.project_id,
        manifest_id=manifest.manifest_id,
        manifest_version=manifest.manifest_version,
        manifest_checksum=manifest.sha256 or "unavailable",
    )


def packet_policies(manifest: Manifest) -> PacketPolicies:
    return PacketPolicies(
        retrieval_policy_ref=f"project-retrieval-manifest:{manifest.manifest_id}:rankingPolicy",
        retrieval_policy_version=f"{manifest.ranking_policy.policy_id}@{manifest.manifest_version}",
        authority_policy_ref=f"project-retrieval-manifest:{manifest.manifest_id}:rankingPolicy.authorityOrder",
        freshness_policy_ref=f"project-retrieval-manifest:{manifest.manifest_id}:{manifest.freshness_policy.policy_id}",
        verification_policy_ref=f"project-retrieval-manifest:{manifest.manifest_id}:verificationPolicy",
        security_policy_ref=manifest.security.policy_ref,
    )


def decide_verdict(
    *,
    manifest: Manifest,
    lanes_run: Sequence[LaneRun],
    fusion: Fusion,
    rows: Sequence[EvidenceRow],
    claims: Sequence[Claim],
    conflicts: Sequence[Conflict],
    missing_evidence: Sequence[MissingEvidence],
    direct_read_queue: Sequence[DirectReadQueueItem],
    checksum_mismatches: Sequence[str] = (),
    responsiveness: tuple[bool, str] | None = None,
) -> VerdictDecision:
    """The packet verdict and every reason for it (see the module docstring).

    ``responsiveness`` is whether the answer addresses the question, with the check's reason: an
    answer whose supported claims do not answer the question is held, whatever their support.
    """
    policy = manifest.verification_policy
    failures: list[str] = []
    holds: list[str] = []
    notes: list[str] = []
    winners = set(winner_ids(fusion))
    by_id = {row.evidence_id: row for row in rows}

    if not any(run.status == "completed" for run in lanes_run):
        failures.append("no retrieval lane completed")
    for row_id in sorted(winners):
        row = by_id.get(row_id)
        if row is not None and row.scope.scope_decision in ("out-of-scope", "denied"):
            failures.append(f"scope gate: winner {row_id} is {row.scope.scope_decision}")
    mismatch_reasons = [
        f"checksum mismatch: {row_id} changed between indexing and direct read (re-run akm ingest)"
        for row_id in checksum_mismatches
    ]
    if mismatch_reasons:
        (failures if policy.checksum_mismatch_verdict == "FAIL" else holds).extend(mismatch_reasons)

    important = {claim.claim_id for claim in claims if claim.importance == "important"}
    for claim in claims:
        if claim.importance == "important" and claim.status in _NOT_SUPPORTED:
            holds.append(f"important {claim.claim_class} claim {claim.claim_id} is {claim.status}")
        elif claim.status in _NOT_SUPPORTED:
            notes.append(f"supporting claim {claim.claim_id} is {claim.status}")
    answered: list[str] = []
    if responsiveness is not None:
        (answered if responsiveness[0] else holds).append(responsiveness[1])
    if not claims:
        holds.append("the answer contains no claim that could be checked against evidence")
    elif not any(claim.status == "supported" for claim in claims):
        holds.append("no claim of the answer is supported by a directly read passage")
    supporting_important = {
        row_id for claim in claims if claim.claim_id in important for row_id in claim.support_row_ids
    }
    for conflict in conflicts:
        if conflict.status != "open":
            continue
        blocking = bool(set(conflict.claim_ids) & important) or bool(
            set(conflict.row_ids) & supporting_important
        )
        target = (
            (failures if policy.unresolved_blocking_conflict_verdict == "FAIL" else holds)
            if blocking
            else notes
        )
        target.append(
            f"{'blocking' if blocking else 'non-blocking'} {conflict.type} conflict {conflict.conflict_id} is open"
        )
    for item in missing_evidence:
        if item.status == "open" and item.required:
            holds.append(f"required evidence {item.missing_id} is missing")
        elif item.status == "open":
            notes.append(f"optional evidence {item.missing_id} is missing")
    for queued in direct_read_queue:
        if queued.required and queued.status != "completed":
            holds.append(f"required direct read {queued.queue_id} of {queued.row_id} is {queued.status}")
        elif queued.status == "failed":
            notes.append(
                f"direct read {queued.queue_id} of {queued.row_id} failed; the row cannot support a claim"
            )
    stale = sorted(
        row_id
        for row_id in winners
        if (row := by_id.get(row_id)) is not None
        and (row.verification.state == "stale" or row.freshness.state in ("stale", "superseded"))
    )
    if stale:
        notes.append(f"{len(stale)} winner row(s) are stale: {', '.join(stale)}")

    if failures:
        return VerdictDecision(
            "FAIL",
            tuple(failures + holds + notes),
            True,
            "a verification gate failed: rebuild the derived index (akm ingest) and ask again",
        )
    if holds:
        return VerdictDecision("HOLD", tuple(holds + notes), False, "")
    if notes:
        return VerdictDecision("PASS_WITH_NOTE", tuple(notes + answered), False, "")
    supported = sum(1 for claim in claims if claim.status == "supported")
    return VerdictDecision(
        "PASS",
        (
            f"all {supported} claim(s) are supported by claim-supported, directly read rows; nothing is open",
            *answered,
        ),
        False,
        "",
    )


def assemble_packet(
    *,
    manifest: Manifest,
    task_id: str,
    query: str,
    normalized_intent: str,
    query_class: QueryClass,
    lanes_run: Sequence[LaneRun],
    fusion: Fusion,
    rows: Sequence[EvidenceRow],
    claims: Sequence[Claim],
    conflicts: Sequence[Conflict] = (),
    missing_evidence: Sequence[MissingEvidence] = (),
    direct_read_queue: Sequence[DirectReadQueueItem] = (),
    checksum_mismatches: Sequence[str] = (),
    measured_metrics: Mapping[str, int | float | None] | None = None,
    run_sequence: int = 1,
    project: PacketProject | None = None,
    context_reasons: Sequence[str] = (),
    at: str | None = None,
    responsiveness: tuple[bool, str] | None = None,
    verified_by: str = PACKET_VERIFIER,
) -> EvidencePacket:
    """Decide the verdict, build the packet and validate it; raises InvalidPacketError.

    ``context_reasons`` come first among the verdict reasons (e.g. why a packet was re-verified).
    ``verified_by`` is the packet's ``verification.verifiedBy`` (an API key's actor for a keyed request).
    """
    moment = at or utc_now_iso()
    decision = decide_verdict(
        manifest=manifest,
        lanes_run=lanes_run,
        fusion=fusion,
        rows=rows,
        claims=claims,
        conflicts=conflicts,
        missing_evidence=missing_evidence,
        direct_read_queue=direct_read_queue,
        checksum_mismatches=checksum_mismatches,
        responsiveness=responsiveness,
    )
    if context_reasons:
        decision = VerdictDecision(
            decision.verdict,
            (*context_reasons, *decision.reasons),
            decision.rollback_required,
            decision.rollback_reason,
        )
    packet = build_packet(
        task_id=task_id,
        query=query,
        normalized_intent=normalized_intent,
        query_class=query_class,
        important_claim_classes=important_claim_classes(manifest),
        project=project or packet_project(manifest),
        policies=packet_policies(manifest),
        lanes_run=lanes_run,
        fusion=fusion,
        rows=rows,
        claims=claims,
        verification=decision.record(at=moment, by=verified_by),
        conflicts=conflicts,
        missing_evidence=missing_evidence,
        direct_read_queue=direct_read_queue,
        measured_metrics=measured_metrics,
        run_sequence=run_sequence,
        generated_at=moment,
    )
    ensure_valid(packet)
    return packet


@cache
def _reference_validator(path: Path) -> jsonschema.Draft202012Validator:
    schema = json.loads(path.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=FORMAT_CHECKER)


def packet_findings(document: Mapping[str, Any]) -> list[str]:
    """Every reason a packet document is invalid: the upstream schema (vendored in
    ``akm/contract/schemas/upstream/``), the project schema, then the project rule checker."""
    findings: list[str] = []
    for error in _reference_validator(UPSTREAM_SCHEMA_PATH).iter_errors(document):
        where = "/" + "/".join(str(part) for part in error.absolute_path)
        findings.append(f"upstream schema {where}: {error.message[:300]}")
    findings.extend(f"{v.rule_id} {v.pointer}: {v.message}" for v in project_schema().validate(document))
    findings.extend(f"{v.rule_id} {v.pointer}: {v.message}" for v in check_packet(document))
    return findings


def ensure_valid(packet: EvidencePacket) -> dict[str, Any]:
    """The packet's JSON document, or InvalidPacketError with every finding."""
    document = packet.to_json()
    findings = packet_findings(document)
    if findings:
        raise InvalidPacketError(packet.packet_id, findings)
    return document


__all__ = [
    "PACKET_VERIFIER",
    "InvalidPacketError",
    "VerdictDecision",
    "assemble_packet",
    "decide_verdict",
    "ensure_valid",
    "important_claim_classes",
    "packet_findings",
    "packet_policies",
    "packet_project",
]
