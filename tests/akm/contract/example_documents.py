"""The documents in examples/, built with the contract's builders and state machine.

``python tests/akm/contract/example_documents.py`` rewrites examples/ from these functions;
``test_examples.py`` checks that the files still equal what the functions build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from akm.contract.builders import build_candidate_row, build_packet
from akm.contract.ids import claim_id, sha256_text
from akm.contract.models import (
    Authority,
    Claim,
    DirectReadQueueItem,
    EvidencePacket,
    EvidenceRow,
    ExcludedRow,
    Freshness,
    Fusion,
    FusionContribution,
    LaneRun,
    Locator,
    MissingEvidence,
    PacketPolicies,
    PacketProject,
    PacketVerification,
)
from akm.contract.states import promote_to_claim_supported, record_direct_read

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLES_DIR = REPO_ROOT / "examples"

T_RETRIEVED = "2026-07-20T00:00:00+09:00"
T_READ = "2026-07-20T00:01:00+09:00"
T_SUPPORTED = "2026-07-20T00:01:30+09:00"
T_PACKET = "2026-07-20T00:02:00+09:00"
PROJECT = "akm-evidence-pilot"
SECURITY_TEXT = (
    "# Security\n\n## 1. Never store secret values\n\nAPI keys, tokens, passwords ... never, in any layer.\n"
)
ROUTER_TEXT = "# Router\n\n## Storage\n\nCanonical Markdown stays where the router placed it.\n"
SECRET_CLAIM = "claim-secret-values-prohibited"
ROUTER_CLAIM = claim_id("task:example", "Canonical Markdown stays where the router placed it.")


def _freshness() -> Freshness:
    return Freshness(
        state="current",
        checked_at=T_RETRIEVED,
        policy_ref="project-retrieval-manifest:freshnessPolicy",
        reason="Current working-tree source was found.",
    )


def candidate_row() -> EvidenceRow:
    """§7.1's candidate row, with a real checksum, a reproducible evidenceId and its history."""
    return build_candidate_row(
        source_id="akm:99-system:SECURITY",
        canonical_uri="file:99-system/SECURITY.md",
        canonical_path="99-system/SECURITY.md",
        source_type="markdown",
        classification="public",
        project_scopes=[PROJECT],
        revision="working-tree",
        checksum_algorithm="sha256",
        checksum=sha256_text(SECURITY_TEXT),
        project_id=PROJECT,
        manifest_id=PROJECT,
        manifest_version="1.0.0",
        collection="akm",
        locator=Locator(type="heading", value="## 1. Never store secret values"),
        authority=Authority(
            level="canonical",
            rationale="Canonical AKM security policy for secret handling.",
            policy_ref="99-system/SECURITY.md",
        ),
        freshness=_freshness(),
        lane="exact",
        query="never store secret values",
        rank=1,
        result_set_id="rs:example",
        parameters={"match": "literal"},
        excerpt="API keys, tokens, passwords ... never, in any layer.",
        retrieved_by="exact-lane",
        at=T_RETRIEVED,
    )


def _router_row() -> EvidenceRow:
    return build_candidate_row(
        source_id="akm:99-system:ROUTER",
        canonical_uri="file:99-system/ROUTER.md",
        canonical_path="99-system/ROUTER.md",
        source_type="markdown",
        classification="public",
        project_scopes=[PROJECT],
        revision="working-tree",
        checksum_algorithm="sha256",
        checksum=sha256_text(ROUTER_TEXT),
        project_id=PROJECT,
        manifest_id=PROJECT,
        manifest_version="1.0.0",
        collection="akm",
        locator=Locator(type="line-range", value="99-system/ROUTER.md:5", start_line=5, end_line=5),
        authority=Authority(
            level="canonical", rationale="Canonical AKM routing policy.", policy_ref="99-system/ROUTER.md"
        ),
        freshness=_freshness(),
        lane="qmd-lexical",
        query="where canonical markdown stays",
        rank=1,
        result_set_id="rs:example-lexical",
        parameters={"collection": "akm", "limit": 20},
        raw_score=7.25,
        raw_score_meaning="qmd BM25 score, comparable only within this result set",
        excerpt="Canonical Markdown stays where the router placed it.",
        retrieved_by="qmd-lexical-lane",
        at=T_RETRIEVED,
    )


def _semantic_duplicate() -> EvidenceRow:
    return build_candidate_row(
        source_id="akm:99-system:SECURITY",
        canonical_uri="file:99-system/SECURITY.md",
        canonical_path="99-system/SECURITY.md",
        source_type="markdown",
        classification="public",
        project_scopes=[PROJECT],
        revision="working-tree",
        checksum_algorithm="sha256",
        checksum=sha256_text(SECURITY_TEXT),
        project_id=PROJECT,
        manifest_id=PROJECT,
        manifest_version="1.0.0",
        collection="akm",
        locator=Locator(type="line-range", value="99-system/SECURITY.md:3-5", start_line=3, end_line=5),
        authority=Authority(
            level="canonical",
            rationale="Canonical AKM security policy for secret handling.",
            policy_ref="99-system/SECURITY.md",
        ),
        freshness=_freshness(),
        lane="qmd-semantic",
        query="may credentials be kept in notes",
        rank=1,
        result_set_id="rs:example-semantic",
        parameters={"collection": "akm", "limit": 20},
        raw_score=0.83,
        raw_score_meaning="cosine similarity of MiniLM embeddings, lane-local",
        excerpt="## 1. Never store secret values",
        retrieved_by="qmd-semantic-lane",
        at=T_RETRIEVED,
    )


def _read(row: EvidenceRow, locator_read: str, text: str) -> EvidenceRow:
    return record_direct_read(
        row,
        by="retrieval-worker",
        read_method="direct-file-read",
        locator_read=locator_read,
        observed_revision="working-tree",
        observed_checksum=sha256_text(text),
        checksum_match=True,
        context_included=True,
        at=T_READ,
    )


def claim_supported_row() -> EvidenceRow:
    """§7.2: the candidate, directly read, then supporting exactly one named claim."""
    return promote_to_claim_supported(
        _read(candidate_row(), "99-system/SECURITY.md:5-13", SECURITY_TEXT),
        [SECRET_CLAIM],
        by="retrieval-worker",
        support_note="The directly read canonical policy supports only the named prohibition claim.",
        at=T_SUPPORTED,
    )


def _project() -> PacketProject:
    return PacketProject(
        project_id=PROJECT,
        manifest_id=PROJECT,
        manifest_version="1.0.0",
        manifest_checksum=sha256_text("project-retrieval-manifest akm-evidence-pilot 1.0.0"),
    )


def _policies() -> PacketPolicies:
    return PacketPolicies(
        retrieval_policy_ref="project-retrieval-manifest:retrieval",
        retrieval_policy_version="1.0.0",
        authority_policy_ref="project-retrieval-manifest:rankingPolicy",
        freshness_policy_ref="project-retrieval-manifest:freshnessPolicy",
        verification_policy_ref="project-retrieval-manifest:verificationPolicy",
        security_policy_ref="99-system/SECURITY.md",
    )


def _lanes(direct_read_status: str = "completed") -> list[LaneRun]:
    lanes = [
        LaneRun(
            lane="exact",
            status="completed",
            query="never store secret values",
            parameters={"match": "literal"},
            result_count=1,
            latency_ms=3.0,
        ),
        LaneRun(
            lane="qmd-lexical",
            status="completed",
            query="where canonical markdown stays",
            parameters={"collection": "akm", "limit": 20},
            result_count=1,
            latency_ms=41.0,
        ),
        LaneRun(
            lane="qmd-semantic",
            status="completed",
            query="may credentials be kept in notes",
            parameters={"collection": "akm", "limit": 20},
            result_count=1,
            latency_ms=88.0,
        ),
        LaneRun(
            lane="graphify-relationship",
            status="skipped",
            query="",
            parameters={},
            result_count=0,
            skip_reason="no relationship or neighbourhood intent in the query",
        ),
    ]
    if direct_read_status == "completed":
        lanes.append(
            LaneRun(
                lane="direct-read",
                status="completed",
                query="read fusion winners",
                parameters={"winners": 2},
                result_count=2,
                latency_ms=6.0,
            )
        )
    return lanes


def pass_packet() -> EvidencePacket:
    """Two winners from two sources, both directly read and claim-supported: verdict PASS."""
    secret = claim_supported_row()
    router = promote_to_claim_supported(
        _read(_router_row(), "99-system/ROUTER.md:5", ROUTER_TEXT),
        [ROUTER_CLAIM],
        by="retrieval-worker",
        support_note="The routing policy states this storage rule in the read lines.",
        at=T_SUPPORTED,
    )
    duplicate = _semantic_duplicate()
    rows = [secret, router, duplicate]
    fusion = Fusion(
        method="deterministic-priority",
        parameters={"tieBreak": "freshness"},
        priority_order=("scope", "authority", "exact-support", "lane-rank", "freshness"),
        dedup_keys=("sourceId", "canonicalUri", "revision", "checksum"),
        per_source_cap=2,
        max_rows=20,
        diversity_fields=("sourceId", "sourceType", "collection", "authority"),
        contributions=(
            FusionContribution(
                evidence_id=secret.evidence_id,
                lane_ranks={"exact": 1},
                contribution=1.0,
                final_rank=1,
                tie_break_reason="exact support outranks lexical recall at equal authority",
            ),
            FusionContribution(
                evidence_id=router.evidence_id, lane_ranks={"qmd-lexical": 1}, contribution=0.5, final_rank=2
            ),
        ),
        excluded_rows=(
            ExcludedRow(
                evidence_id=duplicate.evidence_id,
                reason="duplicate",
                notes="same source and revision as the exact winner; the exact locator is kept",
            ),
        ),
    )
    claims = [
        Claim(
            claim_id=SECRET_CLAIM,
            claim_text="Secret values must never be stored in any layer.",
            importance="important",
            claim_class="policy",
            support_row_ids=(secret.evidence_id,),
            status="supported",
            notes="",
        ),
        Claim(
            claim_id=ROUTER_CLAIM,
            claim_text="Canonical Markdown stays where the router placed it.",
            importance="supporting",
            claim_class="policy",
            support_row_ids=(router.evidence_id,),
            status="supported",
            notes="",
        ),
    ]
    queue = [
        DirectReadQueueItem(
            queue_id="dr-1",
            row_id=secret.evidence_id,
            claim_ids=(SECRET_CLAIM,),
            priority="critical",
            reason="important policy claim",
            required=True,
            status="completed",
            completion_row_id=secret.evidence_id,
        ),
        DirectReadQueueItem(
            queue_id="dr-2",
            row_id=router.evidence_id,
            claim_ids=(ROUTER_CLAIM,),
            priority="normal",
            reason="supporting claim",
            required=True,
            status="completed",
            completion_row_id=router.evidence_id,
        ),
    ]
    excerpt_bytes = sum(len(row.content.excerpt.encode("utf-8")) for row in rows)
    return build_packet(
        task_id="task:example",
        query="May secret values be stored, and where does canonical Markdown live?",
        normalized_intent="secret storage policy and canonical Markdown location",
        query_class="mixed",
        important_claim_classes=["policy"],
        project=_project(),
        policies=_policies(),
        lanes_run=_lanes(),
        fusion=fusion,
        rows=rows,
        claims=claims,
        direct_read_queue=queue,
        measured_metrics={
            "input_candidate_count": 3,
            "eligible_count": 3,
            "deduplicated_source_count": 2,
            "citation_coverage": 1.0,
            "authority_scope_error_count": 0,
            "input_bytes": excerpt_bytes,
            "total_latency_ms": 138.0,
        },
        verification=PacketVerification(
            verdict="PASS",
            verdict_reasons=("every important claim has a claim-supported row", "no open conflict"),
            verified_by="packet-verifier",
            verified_at=T_PACKET,
            rollback_required=False,
            rollback_reason="",
        ),
        generated_at=T_PACKET,
    )


def hold_packet() -> EvidencePacket:
    """The important claim has only a candidate row and its required read is pending: HOLD."""
    candidate = candidate_row()
    fusion = Fusion(
        method="deterministic-priority",
        parameters={},
        priority_order=("scope", "authority", "exact-support", "lane-rank", "freshness"),
        dedup_keys=("sourceId", "canonicalUri", "revision", "checksum"),
        per_source_cap=2,
        max_rows=20,
        diversity_fields=("sourceId",),
        contributions=(
            FusionContribution(
                evidence_id=candidate.evidence_id, lane_ranks={"exact": 1}, contribution=1.0, final_rank=1
            ),
        ),
        excluded_rows=(),
    )
    return build_packet(
        task_id="task:example-hold",
        query="May secret values be stored?",
        normalized_intent="secret storage policy",
        query_class="literal-token",
        important_claim_classes=["policy"],
        project=_project(),
        policies=_policies(),
        lanes_run=_lanes(direct_read_status="not-run")[:1],
        fusion=fusion,
        rows=[candidate],
        claims=[
            Claim(
                claim_id=SECRET_CLAIM,
                claim_text="Secret values must never be stored in any layer.",
                importance="important",
                claim_class="policy",
                support_row_ids=(candidate.evidence_id,),
                status="candidate-only",
                notes="Retrieved but not yet directly read.",
            )
        ],
        direct_read_queue=[
            DirectReadQueueItem(
                queue_id="dr-1",
                row_id=candidate.evidence_id,
                claim_ids=(SECRET_CLAIM,),
                priority="critical",
                reason="important policy claim rests on a candidate",
                required=True,
                status="pending",
            )
        ],
        missing_evidence=[
            MissingEvidence(
                missing_id="missing-1",
                claim_ids=(SECRET_CLAIM,),
                description="A direct read of 99-system/SECURITY.md at the matched heading.",
                required=True,
                status="open",
            )
        ],
        verification=PacketVerification(
            verdict="HOLD",
            verdict_reasons=("important claim is candidate-only; required direct read pending",),
            verified_by="packet-verifier",
            verified_at=T_PACKET,
            rollback_required=False,
            rollback_reason="",
        ),
        generated_at=T_PACKET,
    )


def example_files() -> dict[str, str]:
    """File name → exact file content of every example."""

    def as_json(document: Any) -> str:
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    candidate = candidate_row().to_json()
    return {
        "candidate-row.json": as_json(candidate),
        "candidate-row.yaml": yaml.safe_dump(candidate, sort_keys=False, allow_unicode=True),
        "claim-supported-row.json": as_json(claim_supported_row().to_json()),
        "packet-pass.json": as_json(pass_packet().to_json()),
        "packet-hold.json": as_json(hold_packet().to_json()),
        "rows.jsonl": "".join(
            json.dumps(row.to_json(), ensure_ascii=False) + "\n" for row in pass_packet().evidence_rows
        ),
    }


def write_examples(directory: Path = EXAMPLES_DIR) -> None:
    directory.mkdir(exist_ok=True)
    for name, content in example_files().items():
        (directory / name).write_text(content, encoding="utf-8")


if __name__ == "__main__":
    write_examples(Path(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLES_DIR)
