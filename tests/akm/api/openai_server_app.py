"""uvicorn ``--factory`` target for the OpenAI-compatible client tests: the production app and
answer pipeline over the store at AKM_DATABASE_URL and the manifest at AKM_MANIFEST_PATH, with the
hashing embedder (AKM_EMBEDDING_MODEL=hashing) and, in place of the language model, a generator
that streams the chosen passage word by word (AKM_TEST_WORD_DELAY_S between words)."""

from __future__ import annotations

import os
import time
from collections.abc import Generator

from fastapi import FastAPI

from akm.answer import EvidencePrompt, GeneratedAnswer
from akm.api import ApiLimits, create_app
from akm.api.wiring import ApiServices, StoreHandle
from akm.manifest import load_manifest
from akm.runtime import Runtime
from akm.service.backend import PipelineAnswerService, PipelineReverifyService
from akm.service.scope import SourceScope
from akm.settings import load_settings
from akm.store import open_store


class WordByWordGenerator:
    """Copies the first passage of the prompt, one word per increment."""

    def __init__(self, word_delay_s: float = 0.0) -> None:
        self.word_delay_s = word_delay_s

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        words = text.split(" ")
        for index, word in enumerate(words):
            time.sleep(self.word_delay_s)
            yield word if index == len(words) - 1 else word + " "
        return GeneratedAnswer(text=text, decode={"new_tokens": len(words)})


def create() -> FastAPI:
    settings = load_settings()
    store = open_store(settings.resolved_database_url)
    manifest = load_manifest(settings.manifest_path)
    scope = SourceScope(manifest)
    answers = PipelineAnswerService(settings, lambda: store)
    runtime = Runtime.from_settings(settings)
    runtime._store = store
    runtime._generator = WordByWordGenerator(  # type: ignore[assignment]
        float(os.environ.get("AKM_TEST_WORD_DELAY_S", "0"))
    )
    answers._runtime = runtime
    services = ApiServices(
        store=StoreHandle(store=store),
        scope=scope,
        answers=answers,
        reverify=PipelineReverifyService(settings, lambda: store, manifest, scope),
    )
    return create_app(settings, services, limits=ApiLimits())
