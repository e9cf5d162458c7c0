"""Ingest jobs started over REST: one at a time, progress while running, the report when done.

A job runs the same ingest as ``akm ingest`` (the manifest's roots, or chosen project-relative
paths) in a background thread, then re-verifies what the changed or deleted sources supported, as
the command does. The registry of jobs lives in the process; each job's state is also written as
JSON to ``<data_dir>/ingest-jobs/<jobId>.json`` when it starts, about once a second while it
runs, and when it ends, so a finished job's report outlives a restart and every worker process
can answer for any job. When the server shuts down, a running job stops at its next file and reads
as ``cancelled``; a job whose process ended without that (killed) reads as ``interrupted``. Either
way the batches it had written stay stored and the next ingest carries on from them.

Only one job runs at a time across all worker processes sharing the data directory: a job holds
an exclusive lock on ``<data_dir>/ingest-jobs/running.lock`` (which names it) while it runs, and a
second start is refused with the running job's ID.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from akm.embedding import Embedder, EmbeddingModelError, load_embedder
from akm.ingest import IngestError, IngestProgress, ingest
from akm.manifest import Manifest, ManifestError, load_manifest
from akm.packet import InvalidPacketError
from akm.reverify import DeferredVerifier, reverify_sources
from akm.runtime import ModelUnavailableError as RuntimeModelError
from akm.service.errors import ModelUnavailableError, NotFoundError, StoreUnavailableError
from akm.settings import Settings
from akm.store import EvidenceStore
from akm.verify import ClaimVerifier

logger = logging.getLogger("akm.ingest_jobs")

JOBS_FOLDER = "ingest-jobs"
LOCK_NAME = "running.lock"
SNAPSHOT_INTERVAL_S = 1.0
_JOB_ID = re.compile(r"^[0-9a-f]{32}$")


class _StopRequestedError(Exception):
    """Raised from the progress callback to end a job early (the server is shutting down)."""


class IngestJobRunningError(Exception):
    """Another ingest job is running; ``job_id`` names it."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"ingest job {job_id} is still running; wait for it to finish")
        self.job_id = job_id


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class IngestJob:
    """One job's state; ``to_json`` is what ``GET /v1/ingest/{jobId}`` answers."""

    job_id: str
    paths: list[str] | None
    created_at: str = field(default_factory=_now)
    state: str = "running"
    finished_at: str | None = None
    progress: IngestProgress | None = None
    report: dict[str, Any] | None = None
    reverify: dict[str, Any] | None = None
    error: str | None = None

    def progress_json(self) -> dict[str, Any]:
        progress = self.progress
        if progress is None:
            return {
                "phase": "starting",
                "filesTotal": None,
                "filesSeen": 0,
                "filesIngested": 0,
                "filesDenied": 0,
                "chunksWritten": 0,
                "embeddingsComputed": 0,
                "elapsedSeconds": 0.0,
                "filesPerSecond": 0.0,
            }
        rate = progress.files_done / progress.elapsed_s if progress.elapsed_s > 0 else 0.0
        return {
            "phase": progress.phase,
            "filesTotal": progress.total,
            "filesSeen": progress.files_done,
            "filesIngested": progress.files_written,
            "filesDenied": progress.denied,
            "chunksWritten": progress.chunks_written,
            "embeddingsComputed": progress.embedded,
            "elapsedSeconds": round(progress.elapsed_s, 3),
            "filesPerSecond": round(rate, 2),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "jobId": self.job_id,
            "state": self.state,
            "paths": self.paths,
            "createdAt": self.created_at,
            "finishedAt": self.finished_at,
            "progress": self.progress_json(),
            "report": self.report,
            "reverify": self.reverify,
            "error": self.error,
        }


class IngestJobs:
    """The process's ingest jobs. ``start`` returns at once; the job runs in its own thread."""

    def __init__(
        self,
        settings: Settings,
        store: Callable[[], EvidenceStore],
        *,
        embedder: Callable[[], Embedder | None] | None = None,
        verifier: Callable[[], ClaimVerifier] | None = None,
        manifest: Callable[[], Manifest] | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._embedder_factory = embedder or self._configured_embedder
        self._verifier = verifier or self._configured_verifier
        self._manifest = manifest or (lambda: load_manifest(settings.manifest_path))
        self.folder = settings.data_dir / JOBS_FOLDER
        self._lock = threading.Lock()
        self._jobs: dict[str, IngestJob] = {}
        self._running: tuple[IngestJob, threading.Thread] | None = None
        self._embedder: Embedder | None = None
        self._embedder_loaded = False
        self._runtime_verifier: ClaimVerifier | None = None
        self._stopping = threading.Event()

    # ---- defaults: the configured embedding model and claim verifier, built once ----

    def _configured_embedder(self) -> Embedder | None:
        if not self._embedder_loaded:
            name = self.settings.embedding_model
            self._embedder = None if name == "none" else load_embedder(name, device=self.settings.device)
            self._embedder_loaded = True
        return self._embedder

    def _configured_verifier(self) -> ClaimVerifier:
        if self._runtime_verifier is None:
            from akm.runtime import Runtime

            self._runtime_verifier = Runtime.from_settings(self.settings).verifier
        return self._runtime_verifier

    # ---- starting and reading jobs ----

    def start(self, paths: Sequence[str] | None = None) -> IngestJob:
        """Start a job, or IngestJobRunningError naming the one that runs (here or in another worker)."""
        with self._lock:
            if self._running is not None:
                raise IngestJobRunningError(self._running[0].job_id)
            self.folder.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                other = _lock_owner(descriptor)
                os.close(descriptor)
                raise IngestJobRunningError(other or "unknown") from None
            job = IngestJob(job_id=uuid.uuid4().hex, paths=list(paths) if paths is not None else None)
            thread = threading.Thread(
                target=self._run, args=(job, descriptor), name=f"akm-ingest-{job.job_id[:8]}", daemon=False
            )
            try:
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, job.job_id.encode(), 0)
                self._persist(job.to_json())
                thread.start()
            except (OSError, RuntimeError):
                # Nothing started: the lock goes back and the error reaches the caller.
                os.close(descriptor)
                raise
            self._jobs[job.job_id] = job
            self._running = (job, thread)
            return job

    def get(self, job_id: str) -> dict[str, Any]:
        """The job's document: from this process, else from its JSON file; NotFoundError otherwise."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                return job.to_json()
        if not _JOB_ID.match(job_id):
            raise NotFoundError("ingest job", job_id)
        try:
            document: dict[str, Any] = json.loads((self.folder / f"{job_id}.json").read_text("utf-8"))
        except FileNotFoundError:
            raise NotFoundError("ingest job", job_id) from None
        except (OSError, ValueError) as error:
            raise StoreUnavailableError(f"ingest job file unreadable: {error}") from error
        if document.get("state") == "running" and self._running_elsewhere() != job_id:
            document["state"] = "interrupted"
            document["error"] = "the process running this job ended before it finished"
        return document

    def running_job_id(self) -> str | None:
        with self._lock:
            return self._running[0].job_id if self._running is not None else None

    def wait(self, timeout_s: float | None = None) -> None:
        """Wait for the running job of this process, if any (tests, shutdown)."""
        running = self._running
        if running is not None:
            running[1].join(timeout_s)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Stop the running job at its next file (what it wrote stays stored) and wait for it."""
        self._stopping.set()
        self.wait(timeout_s)

    def _running_elsewhere(self) -> str | None:
        """The job ID the lock names while some process holds it; None when no job runs."""
        path = self.folder / LOCK_NAME
        try:
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return _lock_owner(descriptor)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            return None
        finally:
            os.close(descriptor)

    # ---- running one job ----

    def _run(self, job: IngestJob, lock_descriptor: int) -> None:
        last_snapshot = time.monotonic()

        def observe(progress: IngestProgress) -> None:
            nonlocal last_snapshot
            if self._stopping.is_set():
                raise _StopRequestedError
            job.progress = progress
            now = time.monotonic()
            if now - last_snapshot >= SNAPSHOT_INTERVAL_S:
                last_snapshot = now
                self._persist(job.to_json())

        state, error_text = "failed", None
        try:
            store = self._store()
            manifest = self._manifest()
            report = ingest(store, manifest, job.paths, embedder=self._embedder_factory(), progress=observe)
            job.report = {**report.to_json(), "missingPaths": report.missing_paths}
            try:
                reverified = reverify_sources(
                    store,
                    manifest.with_corpus_files(store.corpus_files()),
                    report.changed_source_ids + report.deleted_source_ids,
                    verifier=DeferredVerifier(self._verifier),
                )
                job.reverify = reverified.to_json()
            except (InvalidPacketError, RuntimeModelError, ModelUnavailableError, SQLAlchemyError) as error:
                # Like `akm ingest` (exit 4): the sources are stored; what relied on them stays
                # pending and is re-verified by the next ingest or re-verification.
                job.reverify = {"error": f"{type(error).__name__}: {error}", "pending": True}
            state = "succeeded"
        except _StopRequestedError:
            state = "cancelled"
            error_text = (
                "the server shut down during the job; the batches it wrote stay stored and the next "
                "ingest carries on from them"
            )
        except (
            ManifestError,
            IngestError,
            EmbeddingModelError,
            RuntimeModelError,
            ModelUnavailableError,
            StoreUnavailableError,
            SQLAlchemyError,
            OSError,
        ) as error:
            error_text = f"{type(error).__name__}: {error}"
        except Exception as error:  # a job thread must always end with a recorded state
            logger.exception("ingest job %s failed", job.job_id)
            error_text = f"unexpected error ({type(error).__name__}); see the server log"
        finally:
            finished_at = _now()
            document = {**job.to_json(), "state": state, "finishedAt": finished_at, "error": error_text}
            try:
                self._persist(document)
            except OSError:
                logger.exception("could not write the report of ingest job %s", job.job_id)
            with contextlib.suppress(OSError):
                os.ftruncate(lock_descriptor, 0)
            os.close(lock_descriptor)
            # Published together: whoever reads the final state may start the next job at once.
            with self._lock:
                job.state, job.finished_at, job.error = state, finished_at, error_text
                self._running = None

    def _persist(self, document: dict[str, Any]) -> None:
        """Write a job's document atomically: a temporary file in the same folder, fsync, rename."""
        job_id = document["jobId"]
        final = self.folder / f"{job_id}.json"
        temporary = self.folder / f".{job_id}.{os.getpid()}.{threading.get_ident()}.tmp"
        payload = json.dumps(document, indent=2).encode("utf-8")
        with temporary.open("wb") as stream:
            stream.write(payload)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, final)


def _lock_owner(descriptor: int) -> str | None:
    for _ in range(20):
        owner = os.pread(descriptor, 64, 0).decode("ascii", errors="replace").strip()
        if owner:
            return owner
        time.sleep(0.01)  # the holder writes its ID right after taking the lock
    return None
