"""Audit queries: rejected candidates, and what relied on each revision of a source."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from akm.api.deps import AuditDep, LimitsDep
from akm.api.problems import VALIDATION, ApiProblem, problem_responses
from akm.service.audit import MAX_PAGE_SIZE, RejectionFilters
from akm.service.audit_models import RejectionPageOut, SourceDependentsOut

router = APIRouter(tags=["audit"], responses=problem_responses(404, 422, 503))

FilterText = Annotated[str | None, Query(min_length=1, max_length=512)]


def page_limit(limit: int | None, limits: LimitsDep) -> int:
    chosen = limits.default_page_size if limit is None else limit
    if chosen > limits.max_page_size:
        reason = f"at most {limits.max_page_size}"
        raise ApiProblem(VALIDATION, f"limit: {reason}", invalidParams=[{"name": "limit", "reason": reason}])
    return chosen


@router.get("/v1/audit/rejections", summary="Rejected candidates, newest first")
def list_rejections(
    audit: AuditDep,
    limits: LimitsDep,
    reason: FilterText = None,
    stage: FilterText = None,
    source: FilterText = None,
    since: Annotated[datetime | None, Query(description="inclusive lower bound (ISO 8601)")] = None,
    until: Annotated[datetime | None, Query(description="exclusive upper bound (ISO 8601)")] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE_SIZE)] = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> RejectionPageOut:
    filters = RejectionFilters(reason=reason, stage=stage, source=source, since=since, until=until)
    return audit.rejections(filters, limit=page_limit(limit, limits), offset=offset)


@router.get(
    "/v1/audit/sources/{source_id:path}/dependents",
    summary="Claims and packets that relied on each revision of a source, and which are now stale",
)
def get_source_dependents(source_id: str, audit: AuditDep) -> SourceDependentsOut:
    return audit.source_dependents(source_id)
