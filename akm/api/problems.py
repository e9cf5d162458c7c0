"""RFC 9457 problem details: every error response of the API is ``application/problem+json``.

Each kind of failure has one stable ``type`` URI; clients branch on it, never on ``title``
or ``detail`` text. All mapping from exceptions to problems happens here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from akm.service.errors import (
    GenerationBusyError,
    GenerationCancelledError,
    InvalidRequestError,
    ModelUnavailableError,
    NotFoundError,
    ServiceUnavailableError,
    StoreUnavailableError,
)

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "urn:akm:problem:"

logger = logging.getLogger("akm.api")


@dataclass(frozen=True)
class ProblemType:
    slug: str
    status: int
    title: str

    @property
    def uri(self) -> str:
        return TYPE_BASE + self.slug


VALIDATION = ProblemType("validation", 422, "Request is not valid")
MALFORMED = ProblemType("malformed-request", 400, "Request cannot be parsed")
NOT_FOUND = ProblemType("not-found", 404, "Not found")
METHOD_NOT_ALLOWED = ProblemType("method-not-allowed", 405, "Method not allowed")
NOT_ACCEPTABLE = ProblemType("not-acceptable", 406, "Not acceptable")
PAYLOAD_TOO_LARGE = ProblemType("payload-too-large", 413, "Request body too large")
UNSUPPORTED_MEDIA_TYPE = ProblemType("unsupported-media-type", 415, "Unsupported media type")
REQUEST_TIMEOUT = ProblemType("request-timeout", 408, "Request body not received in time")
HEADERS_TOO_LARGE = ProblemType("headers-too-large", 431, "Request headers too large")
CONCURRENCY_LIMIT = ProblemType("concurrency-limit", 429, "Too many generation requests")
CLIENT_CLOSED = ProblemType("client-closed-request", 499, "Client closed the request")
INTERNAL = ProblemType("internal", 500, "Internal error")
MODEL_UNAVAILABLE = ProblemType("model-unavailable", 503, "Model unavailable")
STORE_UNAVAILABLE = ProblemType("store-unavailable", 503, "Evidence store unavailable")
NOT_READY = ProblemType("not-ready", 503, "Service not ready")
SERVICE_UNAVAILABLE = ProblemType("service-unavailable", 503, "Service unavailable")

PROBLEM_TYPES: tuple[ProblemType, ...] = (
    VALIDATION,
    MALFORMED,
    NOT_FOUND,
    METHOD_NOT_ALLOWED,
    NOT_ACCEPTABLE,
    PAYLOAD_TOO_LARGE,
    UNSUPPORTED_MEDIA_TYPE,
    REQUEST_TIMEOUT,
    HEADERS_TOO_LARGE,
    CONCURRENCY_LIMIT,
    CLIENT_CLOSED,
    INTERNAL,
    MODEL_UNAVAILABLE,
    STORE_UNAVAILABLE,
    NOT_READY,
    SERVICE_UNAVAILABLE,
)
_BY_STATUS = {
    400: MALFORMED,
    404: NOT_FOUND,
    405: METHOD_NOT_ALLOWED,
    406: NOT_ACCEPTABLE,
    413: PAYLOAD_TOO_LARGE,
    415: UNSUPPORTED_MEDIA_TYPE,
    422: VALIDATION,
    429: CONCURRENCY_LIMIT,
}


class InvalidParam(BaseModel):
    name: str
    reason: str


class Problem(BaseModel):
    """The problem+json body (RFC 9457) with this API's extension members."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    request_id: str | None = Field(default=None, alias="requestId")
    invalid_params: list[InvalidParam] | None = Field(default=None, alias="invalidParams")


class ApiProblem(Exception):
    """Raised anywhere in the API layer to answer with a problem."""

    def __init__(
        self, problem_type: ProblemType, detail: str, *, headers: dict[str, str] | None = None, **extra: Any
    ) -> None:
        super().__init__(detail)
        self.problem_type = problem_type
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def problem_body(
    problem_type: ProblemType,
    detail: str | None,
    *,
    instance: str | None = None,
    request_id: str | None = None,
    status: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": problem_type.uri,
        "title": problem_type.title,
        "status": status or problem_type.status,
    }
    if detail:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    if request_id:
        body["requestId"] = request_id
    body.update({key: value for key, value in extra.items() if value is not None})
    return body


def problem_response(
    request: Request,
    problem_type: ProblemType,
    detail: str | None,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = problem_body(
        problem_type,
        detail,
        instance=request.url.path,
        request_id=getattr(request.state, "request_id", None),
        status=status,
        **extra,
    )
    return JSONResponse(body, status_code=body["status"], media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def _invalid_params(error: RequestValidationError) -> list[dict[str, str]]:
    params = []
    for item in error.errors():
        location = [str(part) for part in item.get("loc", ()) if part != "body"]
        params.append({"name": ".".join(location) or "body", "reason": str(item.get("msg", "invalid"))})
    return params


def install_problem_handlers(app: FastAPI) -> None:
    """Map every exception the API can meet to its problem response."""

    async def on_api_problem(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ApiProblem)
        return problem_response(
            request, error.problem_type, error.detail, headers=error.headers, **error.extra
        )

    async def on_validation(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        params = _invalid_params(error)
        if any(item["reason"].startswith("JSON decode error") for item in params):
            body_error = [{"name": "body", "reason": "not valid JSON"}]
            return problem_response(
                request, MALFORMED, "the body is not valid JSON", invalidParams=body_error
            )
        detail = "; ".join(f"{item['name']}: {item['reason']}" for item in params[:5])
        return problem_response(request, VALIDATION, detail, invalidParams=params)

    async def on_http(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, StarletteHTTPException)
        problem_type = _BY_STATUS.get(error.status_code, INTERNAL if error.status_code >= 500 else MALFORMED)
        detail = error.detail if isinstance(error.detail, str) else None
        return problem_response(
            request, problem_type, detail, status=error.status_code, headers=dict(error.headers or {})
        )

    async def on_not_found(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, NotFoundError)
        return problem_response(request, NOT_FOUND, str(error))

    async def on_invalid(request: Request, error: Exception) -> JSONResponse:
        return problem_response(request, VALIDATION, str(error))

    async def on_busy(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, GenerationBusyError)
        return problem_response(
            request, CONCURRENCY_LIMIT, str(error), headers={"Retry-After": "1"}, limit=error.limit
        )

    async def on_cancelled(request: Request, error: Exception) -> JSONResponse:
        return problem_response(request, CLIENT_CLOSED, str(error) or "the client went away")

    async def on_model(request: Request, error: Exception) -> JSONResponse:
        logger.warning("model unavailable: %s", error)
        return problem_response(request, MODEL_UNAVAILABLE, str(error), headers={"Retry-After": "30"})

    async def on_store(request: Request, error: Exception) -> JSONResponse:
        # The driver's message can name hosts and users; it goes to the log only.
        logger.error("store unavailable: %s", error)
        return problem_response(
            request, STORE_UNAVAILABLE, "the evidence store cannot be reached", headers={"Retry-After": "5"}
        )

    async def on_unavailable(request: Request, error: Exception) -> JSONResponse:
        return problem_response(request, SERVICE_UNAVAILABLE, str(error))

    async def on_unexpected(request: Request, error: Exception) -> JSONResponse:
        logger.exception("unhandled error", exc_info=error)
        return problem_response(request, INTERNAL, "unexpected error; see the server log for the request id")

    app.add_exception_handler(ApiProblem, on_api_problem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(NotFoundError, on_not_found)
    app.add_exception_handler(InvalidRequestError, on_invalid)
    app.add_exception_handler(GenerationBusyError, on_busy)
    app.add_exception_handler(GenerationCancelledError, on_cancelled)
    app.add_exception_handler(ModelUnavailableError, on_model)
    app.add_exception_handler(StoreUnavailableError, on_store)
    app.add_exception_handler(SQLAlchemyError, on_store)
    app.add_exception_handler(ServiceUnavailableError, on_unavailable)
    app.add_exception_handler(Exception, on_unexpected)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries documenting problem+json bodies for ``statuses``."""
    described: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        problem_type = _BY_STATUS.get(status) or {503: MODEL_UNAVAILABLE, 500: INTERNAL}.get(status, INTERNAL)
        described[status] = {
            "description": problem_type.title,
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    return described
