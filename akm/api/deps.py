"""FastAPI dependency aliases, so route signatures stay short: ``store: StoreDep``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from akm.api.auth import request_actor
from akm.api.generation import GenerationGate
from akm.api.limits import ApiLimits
from akm.api.metrics import ServiceMetrics
from akm.api.wiring import ApiServices
from akm.service.answers import AnswerService, ReverifyService
from akm.service.audit import AuditService
from akm.settings import Settings
from akm.store import EvidenceStore


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_limits(request: Request) -> ApiLimits:
    limits: ApiLimits = request.app.state.limits
    return limits


def get_services(request: Request) -> ApiServices:
    services: ApiServices = request.app.state.services
    return services


def get_metrics(request: Request) -> ServiceMetrics:
    metrics: ServiceMetrics = request.app.state.metrics
    return metrics


def get_gate(request: Request) -> GenerationGate:
    gate: GenerationGate = request.app.state.gate
    return gate


ServicesDep = Annotated[ApiServices, Depends(get_services)]


def get_store(services: ServicesDep) -> EvidenceStore:
    return services.store.get()


def get_audit(services: ServicesDep) -> AuditService:
    return AuditService(services.store.get(), services.scope)


def get_answers(services: ServicesDep) -> AnswerService:
    return services.answers


def get_reverify(services: ServicesDep) -> ReverifyService:
    return services.reverify


SettingsDep = Annotated[Settings, Depends(get_settings)]
LimitsDep = Annotated[ApiLimits, Depends(get_limits)]
MetricsDep = Annotated[ServiceMetrics, Depends(get_metrics)]
GateDep = Annotated[GenerationGate, Depends(get_gate)]
StoreDep = Annotated[EvidenceStore, Depends(get_store)]
AuditDep = Annotated[AuditService, Depends(get_audit)]
AnswersDep = Annotated[AnswerService, Depends(get_answers)]
ReverifyDep = Annotated[ReverifyService, Depends(get_reverify)]
# `key:<id>` of the request's API key; None when keys are off.
ActorDep = Annotated[str | None, Depends(request_actor)]
