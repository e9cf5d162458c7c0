"""ASGI middleware: request IDs, structured access logs and metrics; body size and media type limits.

Pure ASGI (no BaseHTTPMiddleware) so streaming responses pass through untouched and a
client disconnect reaches the route.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from akm.api.metrics import ServiceMetrics
from akm.api.problems import (
    HEADERS_TOO_LARGE,
    PAYLOAD_TOO_LARGE,
    PROBLEM_MEDIA_TYPE,
    REQUEST_TIMEOUT,
    UNSUPPORTED_MEDIA_TYPE,
    ProblemType,
    problem_body,
)

REQUEST_ID_HEADER = "x-request-id"
_ACCEPTED_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

access_log = logging.getLogger("akm.api.access")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


async def send_problem(send: Send, scope: Scope, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": body["status"],
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class RequestContextMiddleware:
    """Give each request an ID (echoed in ``X-Request-ID``), log it as JSON, count it."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = _header(scope, REQUEST_ID_HEADER.encode())
        request_id = offered if offered and _ACCEPTED_REQUEST_ID.match(offered) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            route = scope.get("route")
            template = str(getattr(route, "path", "unmatched"))
            self.metrics.observe_request(template, scope["method"], status, seconds)
            access_log.info(
                "request",
                extra={
                    "fields": {
                        "requestId": request_id,
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": template,
                        "status": status,
                        "durationMs": round(seconds * 1000.0, 3),
                    }
                },
            )


class BodyLimitMiddleware:
    """431 for headers over ``max_header_bytes``, 413 for bodies over ``max_bytes``, 408 for a
    body whose next piece does not arrive within ``body_timeout_s``, 415 for bodies that are not JSON.

    The body is read up to the limit before the app sees it, so a route never parses half of
    an oversized request, and a client that abandons its body is answered (and counted) as a
    client error, not left to fail inside a route as a 500.

    ``streamed_paths`` (uploads) are passed through unread, after the header check: their route
    streams the body to disk and enforces its own size, type and time limits as it reads.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        max_header_bytes: int = 32_768,
        body_timeout_s: float = 30.0,
        streamed_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_header_bytes = max_header_bytes
        self.body_timeout_s = body_timeout_s
        self.streamed_paths = streamed_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header_bytes = sum(len(name) + len(value) for name, value in scope.get("headers", []))
            if header_bytes > self.max_header_bytes:
                detail = f"the request headers are over the limit of {self.max_header_bytes} bytes"
                await self._refuse(scope, send, HEADERS_TOO_LARGE, detail, maxBytes=self.max_header_bytes)
                return
        if (
            scope["type"] != "http"
            or scope["method"] not in _BODY_METHODS
            or scope["path"] in self.streamed_paths
        ):
            await self.app(scope, receive, send)
            return
        length_header = _header(scope, b"content-length")
        declared = int(length_header) if length_header and length_header.isdigit() else None
        if declared is not None and declared > self.max_bytes:
            await self._too_large(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            with anyio.move_on_after(self.body_timeout_s) as waiting:
                message = await receive()
            if waiting.cancelled_caught:
                detail = f"no part of the request body arrived for {self.body_timeout_s:g} s"
                await self._refuse(scope, send, REQUEST_TIMEOUT, detail)
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._too_large(scope, send)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        if body and not _is_json(_header(scope, b"content-type")):
            await send_problem(
                send,
                scope,
                problem_body(
                    UNSUPPORTED_MEDIA_TYPE,
                    "the request body must be application/json",
                    instance=scope["path"],
                    request_id=scope.get("state", {}).get("request_id"),
                ),
            )
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, kind: ProblemType, detail: str, **extra: Any) -> None:
        await send_problem(
            send,
            scope,
            problem_body(
                kind,
                detail,
                instance=scope["path"],
                request_id=scope.get("state", {}).get("request_id"),
                **extra,
            ),
        )

    async def _too_large(self, scope: Scope, send: Send) -> None:
        await send_problem(
            send,
            scope,
            problem_body(
                PAYLOAD_TOO_LARGE,
                f"the request body is over the limit of {self.max_bytes} bytes",
                instance=scope["path"],
                request_id=scope.get("state", {}).get("request_id"),
                maxBytes=self.max_bytes,
            ),
        )


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            document.update(fields)
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str)
