"""Packets, evidence rows and claims, with their verification histories."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from akm.api.deps import AuditDep
from akm.api.problems import problem_responses
from akm.service.audit_models import ClaimOut, EvidenceHistoryOut, PacketHistoryOut

router = APIRouter(tags=["lineage"], responses=problem_responses(404, 422, 503))


@router.get("/v1/packets/{packet_id}", summary="A stored EvidencePacket")
def get_packet(packet_id: str, audit: AuditDep) -> dict[str, Any]:
    return audit.packet(packet_id)


@router.get("/v1/packets/{packet_id}/history", summary="Verification events recorded for a packet")
def get_packet_history(packet_id: str, audit: AuditDep) -> PacketHistoryOut:
    return audit.packet_history(packet_id)


@router.get("/v1/evidence/{evidence_id}", summary="A stored EvidenceRow")
def get_evidence(evidence_id: str, audit: AuditDep) -> dict[str, Any]:
    return audit.evidence(evidence_id)


@router.get(
    "/v1/evidence/{evidence_id}/history",
    summary="Every verification state of a row, with time, actor and reason",
)
def get_evidence_history(evidence_id: str, audit: AuditDep) -> EvidenceHistoryOut:
    return audit.evidence_history(evidence_id)


@router.get(
    "/v1/claims/{claim_id:path}", summary="A claim in each packet that made it, with its support rows"
)
def get_claim(claim_id: str, audit: AuditDep) -> ClaimOut:
    return audit.claim(claim_id)
