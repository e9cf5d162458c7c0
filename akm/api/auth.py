"""API keys on the REST API: who may call which route, and how often.

Off unless ``Settings.require_api_keys`` is set (``akm serve`` sets it for any address other
machines can reach). When on:

* :class:`ApiKeyMiddleware` (outside the body limits, so nothing of a body is read first)
  authenticates every request outside :data:`OPEN_PATHS` from ``Authorization: Bearer <key>``:
  401 ``unauthorized`` with ``WWW-Authenticate: Bearer`` for a missing, malformed, unknown,
  expired or revoked key; 429 ``rate-limited`` with ``Retry-After`` when the key's token bucket
  (``api_key_requests_per_minute``, per worker process) is empty. The key is left in
  ``request.state.api_key``.
* :func:`authorize_route`, a dependency of every API route, answers 403 ``insufficient-scope``
  (naming the scope needed) unless the key grants the route's scope: the route's entry in
  :data:`ROUTE_SCOPES`, or the scope a route declares itself with ``Depends(require_scope(...))``;
  a route with neither needs ``admin``.

The key's ID is the actor (``by``) of what its requests record: :func:`request_actor`.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi import Request
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Receive, Scope, Send

from akm.api.problems import PROBLEM_MEDIA_TYPE, STORE_UNAVAILABLE, ApiProblem, ProblemType, problem_body
from akm.service.errors import StoreUnavailableError
from akm.store import ApiKeyCheck, ApiKeyInfo, EvidenceStore

logger = logging.getLogger("akm.api.auth")

UNAUTHORIZED = ProblemType("unauthorized", 401, "A valid API key is required")
INSUFFICIENT_SCOPE = ProblemType("insufficient-scope", 403, "The API key lacks the scope this route needs")
RATE_LIMITED = ProblemType("rate-limited", 429, "Too many requests for this API key")
AUTH_PROBLEM_TYPES = (UNAUTHORIZED, INSUFFICIENT_SCOPE, RATE_LIMITED)

REALM = "akm"
# Answered without a key: liveness, readiness, and the API's own description.
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})

# The scope each API route needs (method, path template); None: open. Keep docs/security.md in step.
ROUTE_SCOPES: dict[tuple[str, str], str | None] = {
    ("GET", "/healthz"): None,
    ("GET", "/readyz"): None,
    ("GET", "/metrics"): "audit",
    ("POST", "/v1/answers"): "ask",
    ("POST", "/v1/chat/completions"): "ask",
    ("GET", "/v1/models"): "ask",
    ("GET", "/v1/models/{model_id}"): "ask",
    ("GET", "/v1/packets/{packet_id}"): "audit",
    ("GET", "/v1/packets/{packet_id}/history"): "audit",
    ("GET", "/v1/evidence/{evidence_id}"): "audit",
    ("GET", "/v1/evidence/{evidence_id}/history"): "audit",
    ("GET", "/v1/claims/{claim_id:path}"): "audit",
    ("GET", "/v1/audit/rejections"): "audit",
    ("GET", "/v1/audit/sources/{source_id:path}/dependents"): "audit",
    ("GET", "/v1/sources"): "audit",
    ("GET", "/v1/sources/{source_id:path}"): "audit",
    ("POST", "/v1/validate"): "audit",
    ("POST", "/v1/sources"): "ingest",
    ("POST", "/v1/ingest"): "ingest",
    ("GET", "/v1/ingest/{job_id}"): "ingest",
    ("POST", "/v1/sources/reverify"): "ingest",
}
FALLBACK_SCOPE = "admin"
_CONVERTOR = re.compile(r"{(\w+):\w+}")
# A key's last use is written at most this often per worker (a write per request would
# serialise every request on the store's write lock).
TOUCH_INTERVAL_S = 60.0


class TokenBuckets:
    """One token bucket per key: ``per_minute`` tokens, refilled evenly; 0 means no limit."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0.0 when a token was taken; else the seconds until the next token."""
        if self.per_minute <= 0:
            return 0.0
        rate = self.per_minute / 60.0
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.get(key, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - then) * rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / rate


@dataclass
class ApiKeyAuth:
    """The app's key checking: whether it is on, where keys are stored, the rate limits."""

    enabled: bool
    store: Callable[[], EvidenceStore]
    buckets: TokenBuckets

    def __post_init__(self) -> None:
        self._touched: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, token: str) -> ApiKeyCheck:
        try:
            return self.store().check_api_key(token)
        except SQLAlchemyError as error:
            raise StoreUnavailableError(str(error)) from error

    def touch_due(self, key_id: str) -> bool:
        """Whether the key's use should be written now: at most once per ``TOUCH_INTERVAL_S`` here."""
        now = time.monotonic()
        with self._lock:
            if now - self._touched.get(key_id, -math.inf) < TOUCH_INTERVAL_S:
                return False
            self._touched[key_id] = now
            return True

    def touch(self, key_id: str) -> None:
        """Record the key's use in the store; a failure is logged, never the request's."""
        try:
            with self.store().transaction() as tx:
                tx.touch_api_key(key_id)
        except (SQLAlchemyError, StoreUnavailableError) as error:
            logger.warning("could not record the use of key %s: %s", key_id, error)


def _bearer_challenge(error: str | None = None, description: str | None = None, **more: str) -> str:
    parts = [f'realm="{REALM}"']
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    parts.extend(f'{name}="{value}"' for name, value in more.items())
    return "Bearer " + ", ".join(parts)


_REFUSALS = {
    "invalid": "the API key is not valid",
    "expired": "the API key has expired",
    "revoked": "the API key has been revoked",
}


class ApiKeyMiddleware:
    """Authenticate and rate-limit each request outside ``OPEN_PATHS`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, auth: ApiKeyAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.auth.enabled or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        token = _bearer_token(scope)
        if token is None:
            detail = "send an API key as `Authorization: Bearer <key>` (create one with `akm keys create`)"
            await _refuse(scope, send, UNAUTHORIZED, detail, {"WWW-Authenticate": _bearer_challenge()})
            return
        try:
            check = await anyio.to_thread.run_sync(self.auth.check, token)
        except StoreUnavailableError as error:
            logger.error("store unavailable while checking an API key: %s", error)
            detail = "the evidence store cannot be reached"
            await _refuse(scope, send, STORE_UNAVAILABLE, detail, {"Retry-After": "5"})
            return
        if check.outcome != "valid" or check.key is None:
            detail = _REFUSALS.get(check.outcome, _REFUSALS["invalid"])
            challenge = _bearer_challenge("invalid_token", detail)
            await _refuse(scope, send, UNAUTHORIZED, detail, {"WWW-Authenticate": challenge})
            return
        key = check.key
        wait_s = self.auth.buckets.take(key.key_id)
        if wait_s > 0.0:
            retry_after = max(1, math.ceil(wait_s))
            detail = (
                f"key {key.key_id} is over its limit of {self.auth.buckets.per_minute} requests per "
                f"minute; retry in {retry_after} s"
            )
            await _refuse(
                scope,
                send,
                RATE_LIMITED,
                detail,
                {"Retry-After": str(retry_after)},
                limitPerMinute=self.auth.buckets.per_minute,
            )
            return
        scope.setdefault("state", {})["api_key"] = key
        if self.auth.touch_due(key.key_id):
            await anyio.to_thread.run_sync(self.auth.touch, key.key_id)
        await self.app(scope, receive, send)


def _bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            text: str = value.decode("latin-1")
            scheme, _, credentials = text.strip().partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                return credentials.strip()
            return None
    return None


async def _refuse(
    scope: Scope, send: Send, kind: ProblemType, detail: str, headers: dict[str, str], **extra: Any
) -> None:
    body = problem_body(
        kind,
        detail,
        instance=scope["path"],
        request_id=scope.get("state", {}).get("request_id"),
        **extra,
    )
    payload = json.dumps(body).encode()
    raw_headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(payload)).encode()),
        *((name.lower().encode(), value.encode("latin-1")) for name, value in headers.items()),
    ]
    await send({"type": "http.response.start", "status": body["status"], "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


def _forbidden(key: ApiKeyInfo, scope: str) -> ApiProblem:
    return ApiProblem(
        INSUFFICIENT_SCOPE,
        f"this route needs an API key with the `{scope}` scope (or `admin`); key {key.key_id} has "
        f"{', '.join(f'`{name}`' for name in key.scopes)}",
        headers={"WWW-Authenticate": _bearer_challenge("insufficient_scope", scope=scope)},
        requiredScope=scope,
    )


def _unauthenticated() -> ApiProblem:
    return ApiProblem(
        UNAUTHORIZED,
        "send an API key as `Authorization: Bearer <key>`",
        headers={"WWW-Authenticate": _bearer_challenge()},
    )


def _auth_of(request: Request) -> ApiKeyAuth | None:
    auth: ApiKeyAuth | None = getattr(request.app.state, "auth", None)
    return auth if auth is not None and auth.enabled else None


class ScopeRequirement:
    """A FastAPI dependency: the request's key must grant ``scope``; returns the key (None when keys are off).

    Routes outside :data:`ROUTE_SCOPES` (the audit viewer's pages, say) declare their scope with
    ``Depends(require_scope("audit"))``, on the route or on their router.
    """

    def __init__(self, scope: str) -> None:
        self.scope = scope

    def __call__(self, request: Request) -> ApiKeyInfo | None:
        if _auth_of(request) is None:
            return None
        key: ApiKeyInfo | None = getattr(request.state, "api_key", None)
        if key is None:
            raise _unauthenticated()
        if not key.allows(self.scope):
            raise _forbidden(key, self.scope)
        return key


def require_scope(scope: str) -> ScopeRequirement:
    """The dependency that admits only keys granting ``scope`` (``admin`` grants every scope)."""
    return ScopeRequirement(scope)


def declared_scope(route: Any) -> str | None:
    """The scope a route declares with :func:`require_scope`, if any."""
    for dependency in getattr(getattr(route, "dependant", None), "dependencies", ()):
        if isinstance(dependency.call, ScopeRequirement):
            return str(dependency.call.scope)
    for depends in getattr(route, "dependencies", ()) or ():
        if isinstance(getattr(depends, "dependency", None), ScopeRequirement):
            return str(depends.dependency.scope)
    return None


def route_scope(method: str, route: Any) -> str | None:
    """The scope ``method`` on ``route`` needs: its table entry, its own declaration, else ``admin``."""
    path = str(getattr(route, "path", ""))
    if (method, path) in ROUTE_SCOPES:
        return ROUTE_SCOPES[(method, path)]
    if method == "HEAD" and ("GET", path) in ROUTE_SCOPES:
        return ROUTE_SCOPES[("GET", path)]
    return declared_scope(route) or FALLBACK_SCOPE


def authorize_route(request: Request) -> None:
    """The app-wide dependency: 403 unless the request's key grants the route's scope."""
    if _auth_of(request) is None:
        return
    needed = route_scope(request.method, request.scope.get("route"))
    if needed is None:
        return
    ScopeRequirement(needed)(request)


def request_actor(request: Request) -> str | None:
    """The actor to record for this request: ``key:<id>`` of its API key, or None when keys are off."""
    key: ApiKeyInfo | None = getattr(request.state, "api_key", None)
    return key.actor if key is not None else None


def secure_openapi(schema: dict[str, Any]) -> None:
    """Add the bearer scheme, each operation's scope, and its 401/403/429 problems to ``schema``."""
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})["apiKey"] = {
        "type": "http",
        "scheme": "bearer",
        "description": (
            "An API key from `akm keys create`, as `Authorization: Bearer akm_<id>_<secret>`. The "
            "scope listed on each operation is the one it needs; `admin` grants every scope. Keys are "
            "required when the server binds an address other machines can reach (see docs/security.md)."
        ),
    }
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    # The document writes ``{claim_id:path}`` as ``{claim_id}``.
    scopes = {
        (method, _CONVERTOR.sub(r"{\1}", path)): scope for (method, path), scope in ROUTE_SCOPES.items()
    }
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            scope = scopes.get((method.upper(), path), FALLBACK_SCOPE)
            if scope is None:
                continue
            operation["security"] = [{"apiKey": [scope]}]
            responses = operation.setdefault("responses", {})
            for kind in AUTH_PROBLEM_TYPES:
                responses.setdefault(str(kind.status), {"description": kind.title, "content": problem})
