"""POST /v1/validate: the same checks, profiles and rule IDs as ``akm validate``."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, Query

from akm.api.problems import problem_responses
from akm.api.schemas import FindingOut, ValidationReportOut
from akm.contract.schema import DEFAULT_PROFILE, UPSTREAM_SCHEMA_PATH, ValidationProfile
from akm.contract.validation import validate_document

router = APIRouter(tags=["validation"], responses=problem_responses(400, 413, 415, 422))


@router.post(
    "/v1/validate", summary="Validate an EvidenceRow, an EvidencePacket, a manifest or a list of them"
)
async def validate(
    document: Annotated[dict[str, Any] | list[Any], Body(description="the document itself")],
    profile: Annotated[
        ValidationProfile,
        Query(
            description=(
                "contract: the upstream AKM schema and every contract rule, IDs any string of 8+ "
                "characters (for another project's evidence); service: the project's stricter schema "
                "with digest-form IDs (for this service's own output)"
            )
        ),
    ] = DEFAULT_PROFILE,
    upstream: Annotated[
        bool,
        Query(description="with profile=service, also check against the vendored upstream schema"),
    ] = False,
) -> ValidationReportOut:
    findings = await anyio.to_thread.run_sync(
        lambda: validate_document(
            document, profile=profile, upstream_schema_path=UPSTREAM_SCHEMA_PATH if upstream else None
        )
    )
    return ValidationReportOut(
        valid=not findings,
        documents=len(document) if isinstance(document, list) else 1,
        findings=[FindingOut(rule_id=f.rule_id, pointer=f.pointer, message=f.message) for f in findings],
    )
