"""uvicorn ``--factory`` target for the upload and ingest-job tests: the production app (answer
pipeline, re-verification, upload service, ingest jobs) over the store at AKM_DATABASE_URL and
the manifest at AKM_MANIFEST_PATH, with the hashing embedder and a generator that quotes its
first passage in place of the language model.

``AKM_TEST_INGEST_GATE``: a file path; while it does not exist, an ingest job's embedding step
waits for it (at most 60 s), so a test can hold a job running while it starts another.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Sequence
from pathlib import Path

import numpy as np
from fastapi import FastAPI
from numpy.typing import NDArray

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.api import ApiLimits, create_app
from akm.api.wiring import ApiServices, StoreHandle
from akm.embedding import HashingEmbedder
from akm.manifest import load_manifest
from akm.runtime import Runtime
from akm.service.backend import PipelineAnswerService, PipelineReverifyService
from akm.service.ingest_jobs import IngestJobs
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.store import open_store


class QuotingGenerator:
    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        yield text
        return GeneratedAnswer(text=text, decode={})


class GatedEmbedder:
    """The hashing embedder, holding each call until the gate file exists."""

    def __init__(self, gate: Path) -> None:
        self.gate = gate
        self.inner = HashingEmbedder()
        self.model_id = self.inner.model_id
        self.dimensions = self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        deadline = time.monotonic() + 60.0
        while not self.gate.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.inner.embed(texts)


def create() -> FastAPI:
    settings = load_settings()
    store = open_store(settings.resolved_database_url)
    manifest = load_manifest(settings.manifest_path)
    scope = SourceScope(manifest)
    answers = PipelineAnswerService(settings, lambda: store)
    runtime = Runtime.from_settings(settings)
    runtime._store = store
    runtime._generator = QuotingGenerator()  # type: ignore[assignment]
    answers._runtime = runtime
    services = ApiServices(
        store=StoreHandle(store=store),
        scope=scope,
        answers=answers,
        reverify=PipelineReverifyService(settings, lambda: store, manifest, scope),
    )
    app = create_app(settings, services, limits=ApiLimits())
    gate = os.environ.get("AKM_TEST_INGEST_GATE")
    if gate:
        gated = GatedEmbedder(Path(gate))
        app.state.ingest_jobs = IngestJobs(settings, lambda: store, embedder=lambda: gated)
    return app
