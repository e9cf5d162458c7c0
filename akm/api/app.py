"""``create_app(settings, services)``: the FastAPI application of one worker process."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi

from akm import __version__
from akm.api.auth import ApiKeyAuth, ApiKeyMiddleware, TokenBuckets, authorize_route, secure_openapi
from akm.api.generation import GenerationGate
from akm.api.limits import ApiLimits
from akm.api.metrics import ServiceMetrics
from akm.api.middleware import BodyLimitMiddleware, RequestContextMiddleware
from akm.api.problems import Problem, install_problem_handlers
from akm.api.routes import answers, audit, ingest, lineage, openai_compat, operations, sources, validate
from akm.api.routes import ui as viewer
from akm.api.wiring import ApiServices, StoreHandle
from akm.service.errors import ModelUnavailableError
from akm.settings import Settings

logger = logging.getLogger("akm.api")

DESCRIPTION = (
    "Grounded answers over the project's evidence, and audits over evidence lineage. "
    "Every error is `application/problem+json` (RFC 9457) with a stable `type` URI "
    "(`urn:akm:problem:<kind>`). Sources outside the manifest's scope do not exist for this API."
)


def default_services(settings: Settings) -> ApiServices:
    """The production wiring: the configured store, the manifest scope, the answer pipeline."""
    from akm.manifest import load_manifest
    from akm.service.backend import PipelineAnswerService, PipelineReverifyService, SharedVerifier
    from akm.service.scope import SourceScope

    store = StoreHandle(settings.resolved_database_url)
    manifest = load_manifest(settings.manifest_path)
    scope = SourceScope(manifest)
    # Answers and re-verification judge claims with one verifier.
    verifier = SharedVerifier(settings)
    return ApiServices(
        store=store,
        scope=scope,
        answers=PipelineAnswerService(settings, store.get, verifier),
        reverify=PipelineReverifyService(settings, store.get, manifest, scope, verifier),
    )


def _openapi_with_problem(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Problem"] = Problem.model_json_schema(
            by_alias=True, ref_template="#/components/schemas/{model}"
        )
        for name, definition in components["Problem"].pop("$defs", {}).items():
            components.setdefault(name, definition)
        secure_openapi(schema)
        app.openapi_schema = schema
    return app.openapi_schema


def create_app(
    settings: Settings,
    services: ApiServices | None = None,
    *,
    limits: ApiLimits | None = None,
) -> FastAPI:
    """The app for one worker; ``services`` defaults to :func:`default_services`."""
    limits = limits or ApiLimits()
    services = services or default_services(settings)
    metrics = ServiceMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if limits.load_models_at_startup:
            try:
                await anyio.to_thread.run_sync(services.answers.load)
            except ModelUnavailableError as error:
                # The worker still serves audits; /readyz and answers report the failure.
                logger.error("model load at startup failed: %s", error)
        yield
        services.store.close()

    app = FastAPI(
        title="AKM evidence service",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # API keys: 403 unless the request's key grants the route's scope (akm.api.auth).
        dependencies=[Depends(authorize_route)],
    )
    app.state.settings = settings
    app.state.limits = limits
    app.state.services = services
    app.state.metrics = metrics
    app.state.gate = GenerationGate(limits.generation_concurrency, limits.generation_wait_s)
    app.state.auth = ApiKeyAuth(
        enabled=settings.require_api_keys,
        store=services.store.get,
        buckets=TokenBuckets(settings.api_key_requests_per_minute),
    )
    install_problem_handlers(app)
    for module in (answers, lineage, audit, ingest, sources, validate, operations):
        app.include_router(module.router)
    app.include_router(openai_compat.router)
    # The audit viewer's HTML pages under /ui/ (left out of the OpenAPI document).
    app.include_router(viewer.router)
    # Added last = outermost: the request ID exists before the body limits answer.
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=limits.max_body_bytes,
        max_header_bytes=limits.max_header_bytes,
        body_timeout_s=limits.body_timeout_s,
        # Uploads stream to disk under their own limits (akm.api.routes.ingest).
        streamed_paths=frozenset({"/v1/sources"}),
    )
    # Keys are checked before any of the body is read, inside the request ID.
    app.add_middleware(ApiKeyMiddleware, auth=app.state.auth)
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    app.openapi = lambda: _openapi_with_problem(app)  # type: ignore[method-assign]
    return app
