"""The production answer and re-verify services: ``akm.answer`` and ``akm.reverify`` behind
the API's service interface.

Streaming: the pipeline's generator is wrapped so each committed text increment becomes a
``draft`` event and the cancel signal is checked as text arrives; a cancelled generation raises
before the pipeline's single storage transaction, so nothing of it is stored.
"""

from __future__ import annotations

import importlib
import inspect
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from akm.manifest import Manifest
from akm.service.answers import AnswerEvent, AnswerRequest, CancelSignal, ModelReadiness
from akm.service.audit import AuditService
from akm.service.errors import (
    GenerationCancelledError,
    InvalidRequestError,
    ModelUnavailableError,
    ServiceUnavailableError,
)
from akm.service.scope import SourceScope
from akm.settings import Settings
from akm.store import EvidenceStore

TextSink = Callable[[str], None]


def answer_options(options: Mapping[str, Any]) -> Any:
    """The pipeline's ``AnswerOptions`` from the API's option names."""
    from akm.answer import AnswerOptions

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
    """An ``AnswerGenerator`` that reports text as it is committed and honours cancellation."""

    def __init__(
        self, inner: Any, on_text: TextSink, cancel: CancelSignal, lock: threading.Lock | None = None
    ) -> None:
        self.inner = inner
        self.on_text = on_text
        self.cancel = cancel
        # One decoder (model, KV cache, drafter) per worker: decoding is serialised even when
        # several answers overlap in retrieval, verification and storage.
        self.lock = lock or threading.Lock()

    def _text(self, delta: str) -> None:
        if self.cancel.is_set():
            raise GenerationCancelledError("the client went away during generation")
        self.on_text(delta)

    def generate(self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None) -> Any:
        with self.lock:
            return self._generate(prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)

    def _generate(self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None) -> Any:
        if self.cancel.is_set():
            raise GenerationCancelledError("the client went away before generation")
        if "on_text" in inspect.signature(self.inner.generate).parameters:
            generated = self.inner.generate(
                prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, on_text=self._text
            )
        else:
            generated = self.inner.generate(
                prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed
            )
            self._text(generated.text)
        if self.cancel.is_set():
            raise GenerationCancelledError("the client went away during generation")
        return generated


class PipelineAnswerService:
    """``akm.answer.answer`` over one lazily built ``akm.runtime.Runtime`` per worker process."""

    def __init__(
        self, settings: Settings, store: Callable[[], EvidenceStore], verifier: SharedVerifier | None = None
    ) -> None:
        self.settings = settings
        self._store = store
        self._verifier = verifier
        self._runtime: Any = None
        self._lock = threading.Lock()
        self._decode_lock = threading.Lock()
        self._failure: str | None = None

    def _loaded_runtime(self) -> Any:
        with self._lock:
            if self._runtime is None:
                try:
                    from akm.runtime import ModelUnavailableError as RuntimeModelError
                    from akm.runtime import Runtime
                except ImportError as error:
                    raise ServiceUnavailableError(f"the answer pipeline is not installed: {error}") from error
                runtime = Runtime.from_settings(self.settings)
                runtime._store = self._store()
                try:
                    if self._verifier is not None:
                        runtime._verifier = self._verifier.get()
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
            return ModelReadiness(True, "loaded")
        return ModelReadiness(False, f"failed: {self._failure}" if self._failure else "not-loaded")

    def _run(self, request: AnswerRequest, cancel: CancelSignal, on_text: TextSink) -> dict[str, Any]:
        from akm.answer import answer
        from akm.retrieval.orchestrate import UnknownLaneError
        from akm.retrieval.query import QueryError

        runtime = self._loaded_runtime()
        options = answer_options(request.options)
        try:
            result = answer(
                request.question,
                options,
                store=runtime.store,
                manifest=runtime.manifest,
                embedder=runtime.embedder,
                generator=ObservedGenerator(runtime.generator, on_text, cancel, self._decode_lock),
                verifier=runtime.verifier,
            )
        except (QueryError, UnknownLaneError) as error:
            raise InvalidRequestError(str(error)) from error
        document: dict[str, Any] = result.to_json()
        return document

    def answer(self, request: AnswerRequest, cancel: CancelSignal) -> dict[str, Any]:
        return self._run(request, cancel, lambda _delta: None)

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        # The pipeline calls back from inside its own call; a helper thread turns those
        # callbacks into the items of this iterator.
        items: queue.Queue[tuple[str, Any]] = queue.Queue()

        def work() -> None:
            try:
                result = self._run(request, cancel, lambda delta: items.put(("draft", delta)))
                items.put(("result", result))
            except BaseException as error:  # re-raised in the consuming thread
                items.put(("error", error))

        worker = threading.Thread(target=work, name="akm-answer", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = items.get()
                if kind == "draft":
                    yield AnswerEvent("draft", {"text": value})
                elif kind == "error":
                    raise value
                else:
                    for claim in value.get("claims") or []:
                        yield AnswerEvent("claim", dict(claim))
                    yield AnswerEvent("verdict", value)
                    return
        finally:
            if worker.is_alive():
                cancel.set()
            worker.join()


class SharedVerifier:
    """The runtime's claim verifier (lexical, or the strictest of lexical and NLI when an NLI
    model is configured), built once per worker and shared by answering and re-verification, so a
    claim re-checked after its source changed is judged exactly as it was when answered."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._verifier: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._verifier is None:
                from akm.runtime import ModelUnavailableError as RuntimeModelError
                from akm.runtime import Runtime

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

    def _function(self) -> Callable[..., Any]:
        try:
            module = importlib.import_module("akm.reverify")
        except ImportError as error:
            raise ServiceUnavailableError(f"re-verification is not installed: {error}") from error
        function = getattr(module, "reverify", None)
        if function is None:
            raise ServiceUnavailableError("akm.reverify has no reverify() function")
        return cast(Callable[..., Any], function)

    def reverify(self, source_id: str | None) -> dict[str, Any]:
        function = self._function()
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
        verifier = importlib.import_module("akm.reverify").DeferredVerifier(self.verifier.get)
        # Corpus rows are re-read from the files their roots were ingested from (recorded at ingest).
        manifest = self.manifest.with_corpus_files(store.corpus_files())
        for one in source_ids:
            report = function(store, manifest, source_id=one, verifier=verifier)
            produced = report.to_json() if hasattr(report, "to_json") else dict(report)
            merged["sourcesChecked"] += int(produced.get("sourcesChecked", 1))
            for key in ("rowsStale", "rowsRejected", "packets"):
                merged[key].extend(produced.get(key) or [])
        return merged
