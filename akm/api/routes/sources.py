"""Sources with their versions and checksums; re-verification after sources change."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, Query

from akm.api.deps import ActorDep, AuditDep, LimitsDep, ReverifyDep
from akm.api.problems import problem_responses
from akm.api.routes.audit import page_limit
from akm.api.schemas import ReverifyIn
from akm.service.audit import MAX_PAGE_SIZE
from akm.service.audit_models import SourceOut, SourcePageOut

router = APIRouter(tags=["sources"], responses=problem_responses(404, 422, 503))


@router.get("/v1/sources", summary="Sources in scope, in id order")
def list_sources(
    audit: AuditDep,
    limits: LimitsDep,
    after: Annotated[
        str | None, Query(min_length=1, max_length=1024, description="`nextAfter` of the previous page")
    ] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE_SIZE)] = None,
) -> SourcePageOut:
    return audit.sources(after=after, limit=page_limit(limit, limits))


@router.post(
    "/v1/sources/reverify",
    summary="Re-read sources and re-verify what relied on them (one source, or all)",
    responses=problem_responses(400, 413, 415, 503),
)
async def reverify_sources(
    audit: AuditDep,
    reverify: ReverifyDep,
    actor: ActorDep,
    body: Annotated[ReverifyIn | None, Body()] = None,
) -> dict[str, Any]:
    source_id = body.source_id if body is not None else None
    if source_id is not None:
        audit.source(source_id)  # not found (or out of scope) before any work
    return await anyio.to_thread.run_sync(reverify.reverify, source_id, actor)


@router.get("/v1/sources/{source_id:path}", summary="A source with its versions, checksums and last read")
def get_source(source_id: str, audit: AuditDep) -> SourceOut:
    return audit.source(source_id)
