"""The production answer and re-verify services: ``akm.answer`` and ``akm.reverify`` behind
the API's service interface.

Streaming is one generator chain from the decoder up: the target model's decode stream yields
committed text increments, ``akm.answer.answer_stream`` passes them on, and
:meth:`PipelineAnswerService.stream` turns each into a ``draft`` event, checking the cancel signal
as text arrives. A cancelled generation raises before the pipeline's single storage transaction,
so nothing of it is stored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

from akm.answer import AnswerOptions, AnswerResult, answer_stream, run_to_end
from akm.answer.prompt import AnswerGenerator, EvidencePrompt, relay
from akm.answer.remote import RemoteAnswerGenerator
from akm.answer.results import GeneratedAnswer
from akm.manifest import Manifest
from akm.retrieval.orchestrate import UnknownLaneError
from akm.retrieval.query import QueryError
from akm.reverify import DeferredVerifier, reverify
from akm.runtime import ModelUnavailableError as RuntimeModelError
from akm.runtime import Runtime
from akm.service.answers import AnswerEvent, AnswerRequest, CancelSignal, ModelReadiness, draft_event
from akm.service.audit import AuditService
from akm.service.errors import (
    GenerationCancelledError,
    InvalidRequestError,
    ModelUnavailableError,
)
from akm.service.scope import SourceScope
from akm.settings import Settings
from akm.store import EvidenceStore
from akm.verify import ClaimVerifier


def answer_options(options: Mapping[str, Any]) -> AnswerOptions:
    """The pipeline's ``AnswerOptions`` from the API's option names."""
    fields: dict[str, Any] = {}
    if options.get("lanes") is not None:
        fields["lanes"] = tuple(options["lanes"])
    if options.get("fusion") is not None:
        fields["fusion_method"] = options["fusion"]
    for name in ("max_rows", "max_new_tokens", "temperature", "seed", "strict"):
        if options.get(name) is not None:
            fields[name] = options[name]
    try:
        return AnswerOptions(**fields)
    except ValueError as error:
        raise InvalidRequestError(str(error)) from error


class ObservedGenerator:
    """An ``AnswerGenerator`` that honours cancellation as text arrives and decodes one answer at a time."""

    def __init__(
        self, inner: AnswerGenerator, cancel: CancelSignal, lock: threading.Lock | None = None
    ) -> None:
        self.inner = inner
        self.cancel = cancel
        # One decoder (model, KV cache, drafter) per worker: decoding is serialised even when
        # several answers overlap in retrieval, verification and storage.
        self.lock = lock or threading.Lock()

    def _check(self, when: str) -> None:
        if self.cancel.is_set():
            raise GenerationCancelledError(f"the client went away {when} generation")

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        self._check("before")

        def checked(increment: str) -> str:
            self._check("during")
            return increment

        with self.lock:
            stream = self.inner.stream(
                prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed
            )
            generated = yield from relay(stream, checked)
        self._check("during")
        return generated


class PipelineAnswerService:
    """``akm.answer.answer_stream`` over one lazily built :class:`akm.runtime.Runtime` per worker process."""

    def __init__(
        self, settings: Settings, store: Callable[[], EvidenceStore], verifier: SharedVerifier | None = None
    ) -> None:
        self.settings = settings
        self._store = store
        self._verifier = verifier
        self._runtime: Runtime | None = None
        self._lock = threading.Lock()
        self._decode_lock = threading.Lock()
        self._failure: str | None = None

    def _loaded_runtime(self) -> Runtime:
        with self._lock:
            if self._runtime is None:
                try:
                    runtime = Runtime.from_settings(
                        self.settings,
                        store=self._store(),
                        verifier=self._verifier.get() if self._verifier is not None else None,
                    )
                    _ = runtime.generator
                    _ = runtime.embedder
                    _ = runtime.verifier
                except (RuntimeModelError, ModelUnavailableError) as error:
                    self._failure = str(error)
                    raise ModelUnavailableError(str(error)) from error
                self._failure = None
                self._runtime = runtime
            return self._runtime

    def load(self) -> None:
        self._loaded_runtime()

    def readiness(self) -> ModelReadiness:
        if self._runtime is not None:
            generator = self._runtime.generator
            if isinstance(generator, RemoteAnswerGenerator):
                unreachable = generator.probe()
                if unreachable is not None:
                    return ModelReadiness(
                        False, f"remote generator {generator.name} unreachable: {unreachable}"
                    )
            return ModelReadiness(True, "loaded")
        return ModelReadiness(False, f"failed: {self._failure}" if self._failure else "not-loaded")

    def _answer_stream(
        self, request: AnswerRequest, cancel: CancelSignal
    ) -> Generator[str, None, AnswerResult]:
        runtime = self._loaded_runtime()
        options = answer_options(request.options)
        generator = runtime.generator
        # A remote generator bounds its own requests (generator_max_concurrency); the one local
        # decoder decodes one answer at a time.
        lock = None if getattr(generator, "runs_concurrently", False) else self._decode_lock
        try:
            return (
                yield from answer_stream(
                    request.question,
                    options,
                    store=runtime.store,
                    manifest=runtime.manifest,
                    embedder=runtime.embedder,
                    generator=ObservedGenerator(generator, cancel, lock),
                    verifier=runtime.verifier,
                    actor=request.actor,
                )
            )
        except (QueryError, UnknownLaneError) as error:
            raise InvalidRequestError(str(error)) from error

    def answer(self, request: AnswerRequest, cancel: CancelSignal) -> dict[str, Any]:
        document: dict[str, Any] = run_to_end(self._answer_stream(request, cancel)).to_json()
        return document

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        result = yield from relay(self._answer_stream(request, cancel), draft_event)
        document: dict[str, Any] = result.to_json()
        for claim in document.get("claims") or []:
            yield AnswerEvent("claim", dict(claim))
        yield AnswerEvent("verdict", document)


class SharedVerifier:
    """The runtime's claim verifier (lexical, or the strictest of lexical and NLI when an NLI
    model is configured), built once per worker and shared by answering and re-verification, so a
    claim re-checked after its source changed is judged exactly as it was when answered."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._verifier: ClaimVerifier | None = None
        self._lock = threading.Lock()

    def get(self) -> ClaimVerifier:
        with self._lock:
            if self._verifier is None:
                try:
                    self._verifier = Runtime.from_settings(self.settings).verifier
                except RuntimeModelError as error:
                    raise ModelUnavailableError(str(error)) from error
            return self._verifier


class PipelineReverifyService:
    """``akm.reverify.reverify`` over the worker's store and manifest, one in-scope source at a time.

    "All sources" means every source in scope: out-of-scope sources are neither re-verified
    through the API nor counted in its report. Claims are judged by ``verifier`` (the worker's
    shared runtime verifier), built only when a claim needs it.
    """

    def __init__(
        self,
        settings: Settings,
        store: Callable[[], EvidenceStore],
        manifest: Manifest,
        scope: SourceScope,
        verifier: SharedVerifier | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self.manifest = manifest
        self.scope = scope
        self.verifier = verifier or SharedVerifier(settings)

    def reverify(self, source_id: str | None, actor: str | None = None) -> dict[str, Any]:
        store = self._store()
        audit = AuditService(store, self.scope)
        if source_id is not None:
            audit.source(source_id)  # NotFoundError for unknown and out-of-scope sources alike
            source_ids = [source_id]
        else:
            source_ids = []
            after: str | None = None
            while True:
                page = audit.sources(after=after, limit=500)
                source_ids.extend(info.source_id for info in page.items)
                if page.next_after is None:
                    break
                after = page.next_after
        merged: dict[str, Any] = {"sourcesChecked": 0, "rowsStale": [], "rowsRejected": [], "packets": []}
        verifier = DeferredVerifier(self.verifier.get)
        # Corpus rows are re-read from the files their roots were ingested from (recorded at ingest).
        manifest = self.manifest.with_corpus_files(store.corpus_files())
        for one in source_ids:
            produced = reverify(store, manifest, source_id=one, verifier=verifier, actor=actor).to_json()
            merged["sourcesChecked"] += int(produced.get("sourcesChecked", 1))
            for key in ("rowsStale", "rowsRejected", "packets"):
                merged[key].extend(produced.get(key) or [])
        return merged
