"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Response

from akm.api.deps import MetricsDep, ServicesDep
from akm.api.problems import NOT_READY, ApiProblem, problem_responses
from akm.api.schemas import HealthOut, ReadyOut
from akm.service.errors import StoreUnavailableError

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="The process is up")
def healthz() -> HealthOut:
    return HealthOut(status="ok")


@router.get(
    "/readyz", summary="The store is reachable and the models are loaded", responses=problem_responses(503)
)
async def readyz(services: ServicesDep) -> ReadyOut:
    try:
        await anyio.to_thread.run_sync(services.store.ping)
        store = "ok"
    except StoreUnavailableError:
        store = "unreachable"
    # A remote generator is probed over the network: off the event loop.
    readiness = await anyio.to_thread.run_sync(services.answers.readiness)
    models = "loaded" if readiness.loaded else readiness.detail
    if store != "ok" or not readiness.loaded:
        raise ApiProblem(NOT_READY, f"store: {store}; models: {models}", store=store, models=models)
    return ReadyOut(status="ready", store=store, models=models)


@router.get(
    "/metrics",
    summary="Prometheus metrics of this worker",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics(metrics: MetricsDep) -> Response:
    return Response(metrics.exposition(), media_type=metrics.content_type)
