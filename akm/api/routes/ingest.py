"""Uploads into the upload root (``POST /v1/sources``) and ingest jobs (``POST /v1/ingest``,
``GET /v1/ingest/{jobId}``). The rules live in ``akm.service.uploads`` and
``akm.service.ingest_jobs``; this module maps them to HTTP."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Body, Depends, FastAPI, Header, Request, Response
from starlette.requests import ClientDisconnect

from akm.api.deps import LimitsDep
from akm.api.ingest_schemas import IngestIn, IngestJobOut, UploadOut
from akm.api.problems import (
    CLIENT_CLOSED,
    MALFORMED,
    PAYLOAD_TOO_LARGE,
    PROBLEM_MEDIA_TYPE,
    REQUEST_TIMEOUT,
    UNSUPPORTED_MEDIA_TYPE,
    VALIDATION,
    ApiProblem,
    ProblemType,
    problem_responses,
)
from akm.manifest import ManifestError, load_manifest
from akm.service.errors import ServiceUnavailableError
from akm.service.ingest_jobs import IngestJobRunningError, IngestJobs
from akm.service.uploads import UploadRefusal, UploadRefused, UploadService
from akm.settings import Settings


@asynccontextmanager
async def _stop_jobs_at_shutdown(app: FastAPI) -> AsyncIterator[None]:
    yield
    jobs: IngestJobs | None = getattr(app.state, "ingest_jobs", None)
    if jobs is not None:  # a running ingest job stops at its next file
        await anyio.to_thread.run_sync(jobs.shutdown)


router = APIRouter(lifespan=_stop_jobs_at_shutdown)
logger = logging.getLogger("akm.api")

# After a refusal the rest of the body is read and dropped for at most this long, so a client
# still sending (most send the whole body before reading the answer) gets the problem, not a reset.
DRAIN_S = 30.0

UPLOADS_DISABLED = ProblemType("uploads-disabled", 403, "Uploads are not enabled on this server")
UPLOADS_MISCONFIGURED = ProblemType("uploads-misconfigured", 503, "The upload root is not usable")
NO_FILES = ProblemType("no-files", 422, "The upload holds no file")
TOO_MANY_FILES = ProblemType("too-many-files", 413, "Too many files in one upload")
INVALID_FILE_NAME = ProblemType("invalid-file-name", 422, "File name refused")
DUPLICATE_FILE_NAME = ProblemType("duplicate-file-name", 422, "A file name appears twice")
CONTENT_TYPE_NOT_ALLOWED = ProblemType("content-type-not-allowed", 415, "Content type not allowed")
CONTENT_TYPE_MISMATCH = ProblemType(
    "content-type-mismatch", 415, "Declared content type contradicts the extension"
)
UPLOAD_DENIED = ProblemType("upload-denied", 403, "The manifest's scope denies this file")
NAME_CONFLICT = ProblemType("name-conflict", 409, "File name conflicts with an existing file")
PRECONDITION_REQUIRED = ProblemType("precondition-required", 428, "If-Match required to replace a file")
PRECONDITION_FAILED = ProblemType("precondition-failed", 412, "If-Match does not name the current file")
INGEST_RUNNING = ProblemType("ingest-running", 409, "An ingest job is running")

UPLOAD_PROBLEMS: dict[UploadRefusal, ProblemType] = {
    UploadRefusal.DISABLED: UPLOADS_DISABLED,
    UploadRefusal.MISCONFIGURED: UPLOADS_MISCONFIGURED,
    UploadRefusal.NOT_MULTIPART: UNSUPPORTED_MEDIA_TYPE,
    UploadRefusal.MALFORMED: MALFORMED,
    UploadRefusal.NOT_A_FILE: VALIDATION,
    UploadRefusal.NO_FILES: NO_FILES,
    UploadRefusal.TOO_MANY_FILES: TOO_MANY_FILES,
    UploadRefusal.TOO_LARGE: PAYLOAD_TOO_LARGE,
    UploadRefusal.BAD_NAME: INVALID_FILE_NAME,
    UploadRefusal.DUPLICATE_NAME: DUPLICATE_FILE_NAME,
    UploadRefusal.TYPE_NOT_ALLOWED: CONTENT_TYPE_NOT_ALLOWED,
    UploadRefusal.TYPE_MISMATCH: CONTENT_TYPE_MISMATCH,
    UploadRefusal.DENIED: UPLOAD_DENIED,
    UploadRefusal.NAME_CONFLICT: NAME_CONFLICT,
    UploadRefusal.PRECONDITION_REQUIRED: PRECONDITION_REQUIRED,
    UploadRefusal.PRECONDITION_FAILED: PRECONDITION_FAILED,
}

_state_lock = threading.Lock()


def _described(*problem_types: ProblemType) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses for these problem types (several may share a status)."""
    described: dict[int | str, dict[str, Any]] = {}
    for problem_type in problem_types:
        entry = described.setdefault(
            problem_type.status,
            {
                "description": "",
                "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
            },
        )
        title = f"{problem_type.title} (`{problem_type.uri}`)"
        entry["description"] = f"{entry['description']}; {title}" if entry["description"] else title
    return described


def get_uploads(request: Request) -> UploadService:
    """The app's upload service, built on first use from its settings and manifest."""
    state = request.app.state
    with _state_lock:
        service: UploadService | None = getattr(state, "uploads", None)
        if service is None:
            settings: Settings = state.settings
            try:
                manifest = load_manifest(settings.manifest_path)
            except ManifestError as error:
                raise ServiceUnavailableError(f"uploads need a usable manifest: {error}") from error
            service = UploadService(
                manifest,
                settings.upload_root,
                max_file_bytes=settings.upload_max_file_bytes,
                max_files=settings.upload_max_files,
                lock_directory=settings.data_dir,
            )
            state.uploads = service
        return service


def get_ingest_jobs(request: Request) -> IngestJobs:
    """The app's ingest-job registry, built on first use over the app's store."""
    state = request.app.state
    with _state_lock:
        jobs: IngestJobs | None = getattr(state, "ingest_jobs", None)
        if jobs is None:
            jobs = IngestJobs(state.settings, state.services.store.get)
            state.ingest_jobs = jobs
        return jobs


UploadsDep = Annotated[UploadService, Depends(get_uploads)]
IngestJobsDep = Annotated[IngestJobs, Depends(get_ingest_jobs)]


class _BodyTimeoutError(Exception):
    pass


class _Body:
    """The request body as it arrives, with a limit on the wait for each piece."""

    def __init__(self, request: Request, timeout_s: float) -> None:
        self.stream = request.stream()
        self.timeout_s = timeout_s
        self.started = False

    async def pieces(self) -> AsyncIterator[bytes]:
        while True:
            self.started = True
            with anyio.move_on_after(self.timeout_s) as waiting:
                try:
                    piece = await self.stream.__anext__()
                except StopAsyncIteration:
                    return
            if waiting.cancelled_caught:
                raise _BodyTimeoutError
            if piece:
                yield piece

    async def drain(self) -> None:
        with anyio.move_on_after(DRAIN_S), contextlib.suppress(ClientDisconnect, RuntimeError):
            async for _ in self.stream:
                pass


UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "files": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "description": "one part per file; each part's filename is the stored name",
                    }
                },
                "required": ["files"],
            }
        }
    },
}


@router.post(
    "/v1/sources",
    tags=["sources"],
    status_code=201,
    summary="Upload files into the upload root (ingested by the next ingest job)",
    description=(
        "multipart/form-data, one part per file. All files of a request are stored, or none. "
        "Replacing an existing file needs `If-Match` with its current entity tag "
        '(`"sha256:<hex>"`): 428 without it, 412 when it is not current. 201 when any file is new, '
        "200 when every file replaced one."
    ),
    openapi_extra={"requestBody": UPLOAD_BODY},
    responses={
        200: {"description": "Every file replaced an existing one", "model": UploadOut},
        **_described(
            MALFORMED,
            UPLOAD_DENIED,
            REQUEST_TIMEOUT,
            NAME_CONFLICT,
            PRECONDITION_FAILED,
            PAYLOAD_TOO_LARGE,
            TOO_MANY_FILES,
            UNSUPPORTED_MEDIA_TYPE,
            CONTENT_TYPE_NOT_ALLOWED,
            CONTENT_TYPE_MISMATCH,
            VALIDATION,
            NO_FILES,
            INVALID_FILE_NAME,
            DUPLICATE_FILE_NAME,
            PRECONDITION_REQUIRED,
            UPLOADS_DISABLED,
            UPLOADS_MISCONFIGURED,
        ),
    },
)
async def upload_sources(
    request: Request,
    response: Response,
    uploads: UploadsDep,
    limits: LimitsDep,
    if_match: Annotated[
        str | None, Header(alias="If-Match", description="current entity tag of each file replaced")
    ] = None,
) -> UploadOut:
    body = _Body(request, limits.body_timeout_s)
    length = request.headers.get("content-length")
    try:
        uploads.check_declared_length(int(length) if length and length.isdigit() else None)
        stored = await uploads.receive(body.pieces(), request.headers.get("content-type"), if_match)
    except UploadRefused as refusal:
        # A client waiting for 100-continue has sent nothing yet: answering is enough.
        if body.started or "100-continue" not in request.headers.get("expect", "").lower():
            await body.drain()
        raise ApiProblem(UPLOAD_PROBLEMS[refusal.reason], refusal.detail, **refusal.extra) from None
    except _BodyTimeoutError:
        detail = f"no part of the upload arrived for {limits.body_timeout_s:g} s"
        raise ApiProblem(REQUEST_TIMEOUT, detail) from None
    except ClientDisconnect:
        raise ApiProblem(CLIENT_CLOSED, "the client went away during the upload") from None
    except OSError as error:
        # Disk full, permissions: nothing of the upload is kept; the path stays in the log.
        logger.error("upload could not be stored: %s", error)
        raise ServiceUnavailableError(
            f"the upload could not be stored: {error.strerror or 'I/O error'}"
        ) from None
    if not any(not item.replaced for item in stored):
        response.status_code = 200
    if len(stored) == 1:
        response.headers["ETag"] = stored[0].etag
    return UploadOut.model_validate({"files": [item.to_json() for item in stored]})


@router.post(
    "/v1/ingest",
    tags=["ingest"],
    status_code=202,
    summary="Start an ingest job (one at a time); poll GET /v1/ingest/{jobId}",
    responses={**_described(INGEST_RUNNING), **problem_responses(400, 413, 415, 422, 503)},
)
def start_ingest(
    jobs: IngestJobsDep, response: Response, body: Annotated[IngestIn | None, Body()] = None
) -> IngestJobOut:
    paths = body.paths if body is not None else None
    try:
        job = jobs.start(paths)
    except IngestJobRunningError as running:
        raise ApiProblem(
            INGEST_RUNNING,
            str(running),
            headers={"Location": f"/v1/ingest/{running.job_id}", "Retry-After": "5"},
            runningJobId=running.job_id,
        ) from None
    except OSError as error:
        raise ServiceUnavailableError(
            f"cannot record the ingest job in the data directory: {error}"
        ) from error
    response.headers["Location"] = f"/v1/ingest/{job.job_id}"
    return IngestJobOut.model_validate(jobs.get(job.job_id))


@router.get(
    "/v1/ingest/{job_id}",
    tags=["ingest"],
    summary="An ingest job's progress and, once finished, its report",
    responses=problem_responses(404, 422, 503),
)
def get_ingest_job(job_id: str, jobs: IngestJobsDep) -> IngestJobOut:
    return IngestJobOut.model_validate(jobs.get(job_id))
