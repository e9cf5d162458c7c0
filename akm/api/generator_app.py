"""``akm serve --generator-only``: the local target model behind the speculative decoder as an
OpenAI-compatible completions server, for API workers elsewhere (``akm.answer.remote``).

It serves ``POST /v1/completions`` (whole and streamed, with ``usage``) and ``GET /healthz``,
nothing else: no store, no retrieval, no verification. Each reply carries an ``akm`` object with
the decoder's statistics (tokens per target call, drafts proposed and accepted, acceptance by
draft position, timings). The model is loaded before the server accepts connections, so
``/healthz`` answering means completions can be decoded. One decoder decodes one completion at a
time; a request that finds it busy waits up to ``AKM_API_GENERATION_WAIT_S`` and then gets 429
with ``Retry-After`` (which a remote generator client retries).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Protocol

import anyio
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from akm import __version__
from akm.answer.prompt import relay, run_to_end
from akm.answer.results import GeneratedAnswer
from akm.api.generation import KEEPALIVE, EventStream, GenerationGate, open_event_stream, run_answer
from akm.api.limits import ApiLimits
from akm.api.metrics import ServiceMetrics
from akm.api.middleware import BodyLimitMiddleware, RequestContextMiddleware
from akm.api.problems import INTERNAL, install_problem_handlers, problem_body
from akm.api.routes.openai_compat import OpenAIRoute, invalid
from akm.service.answers import AnswerEvent, AnswerRequest, CancelSignal, ModelReadiness, draft_event
from akm.service.errors import GenerationCancelledError, ModelUnavailableError, ServiceError
from akm.settings import Settings

logger = logging.getLogger("akm.api")

DEFAULT_MAX_TOKENS = 16  # OpenAI's default for completions
MAX_STOP_SEQUENCES = 4


class TextGenerator(Protocol):
    """What the server decodes with: :meth:`akm.answer.SpeculativeAnswerGenerator.stream_text`."""

    def stream_text(
        self,
        text: str,
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
    ) -> Generator[str, None, GeneratedAnswer]: ...


class StreamOptionsIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool | None = None


class CompletionIn(BaseModel):
    """An OpenAI completion request. Parameters the decoder cannot honour are refused (400 naming
    them) when set to anything but their neutral value; other unknown parameters are ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="the served model's name (the target_model setting)")
    prompt: str | list[str] = Field(description="the text to continue (one prompt)")
    max_tokens: int | None = Field(default=None, ge=1, le=4096)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    stop: str | list[str] | None = None
    stream: bool = Field(default=False, strict=True)
    stream_options: StreamOptionsIn | None = None
    n: int | None = Field(default=None, description="only 1")
    best_of: int | None = Field(default=None, description="only 1")
    logprobs: int | None = Field(default=None, description="not supported")
    echo: bool | None = Field(default=None, description="only false")
    suffix: str | None = Field(default=None, description="not supported")
    presence_penalty: float | None = Field(default=None, description="only 0")
    frequency_penalty: float | None = Field(default=None, description="only 0")
    logit_bias: dict[str, float] | None = Field(default=None, description="not supported")


def _refused(body: CompletionIn) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    checks: list[tuple[str, bool, str]] = [
        ("n", body.n not in (None, 1), "only n=1 is supported"),
        ("best_of", body.best_of not in (None, 1), "only best_of=1 is supported"),
        ("logprobs", body.logprobs is not None, "log probabilities are not returned"),
        ("echo", bool(body.echo), "echoing the prompt is not supported"),
        ("suffix", bool(body.suffix), "insertion (suffix) is not supported"),
        ("presence_penalty", bool(body.presence_penalty), "penalties are not supported"),
        ("frequency_penalty", bool(body.frequency_penalty), "penalties are not supported"),
        ("logit_bias", bool(body.logit_bias), "logit bias is not supported"),
    ]
    problems.extend((name, reason) for name, failed, reason in checks if failed)
    if isinstance(body.prompt, list) and len(body.prompt) != 1:
        problems.append(("prompt", "exactly one prompt per request"))
    stops = [body.stop] if isinstance(body.stop, str) else body.stop or []
    if len(stops) > MAX_STOP_SEQUENCES:
        problems.append(("stop", f"at most {MAX_STOP_SEQUENCES} stop sequences"))
    return problems


def openai_finish_reason(reason: Any) -> str:
    """The decoder's finish reason in OpenAI's words: ``length`` for every cut-off, else ``stop``."""
    return "length" if str(reason) in ("length", "context_window", "repetition") else "stop"


def usage_of(generated: GeneratedAnswer) -> dict[str, Any]:
    """OpenAI's usage object; ``cached_tokens`` counts prompt tokens the decoder's cache already held."""
    prompt_tokens = int(generated.decode.get("prompt_tokens") or 0)
    completion_tokens = int(generated.decode.get("new_tokens") or 0)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": int(generated.decode.get("cached_prompt_tokens") or 0)},
    }


class CompletionService:
    """The target model's completions for the HTTP layer's thread and cancellation machinery.

    ``request.question`` is the prompt and ``request.options`` the decoding parameters. Events:
    ``draft`` for each text increment, then one ``verdict`` event whose data is the whole
    completion (text, finish reason, usage, the decoder's statistics).
    """

    def __init__(self, settings: Settings, generator: TextGenerator | None = None) -> None:
        self.settings = settings
        self._generator = generator
        self._lock = threading.Lock()
        self._decode = threading.Lock()
        self._failure: str | None = None

    def load(self) -> None:
        self.generator()

    def generator(self) -> TextGenerator:
        with self._lock:
            if self._generator is None:
                from akm.runtime import Runtime

                try:
                    self._generator = Runtime.from_settings(self.settings).local_generator
                except ModelUnavailableError as error:
                    self._failure = str(error)
                    raise
                self._failure = None
            return self._generator

    def readiness(self) -> ModelReadiness:
        if self._generator is not None:
            return ModelReadiness(True, "loaded")
        return ModelReadiness(False, f"failed: {self._failure}" if self._failure else "not-loaded")

    def _completion(
        self, request: AnswerRequest, cancel: CancelSignal
    ) -> Generator[str, None, GeneratedAnswer]:
        generator = self.generator()
        options = request.options
        with self._decode:
            if cancel.is_set():
                raise GenerationCancelledError("the client went away before decoding")
            stream = generator.stream_text(
                request.question,
                max_new_tokens=int(options["max_tokens"]),
                temperature=float(options["temperature"]),
                seed=options.get("seed"),
                top_p=float(options["top_p"]),
                stop=tuple(options["stop"]),
            )
            try:
                while True:
                    try:
                        delta = next(stream)
                    except StopIteration as finished:
                        generated: GeneratedAnswer = finished.value
                        return generated
                    except ValueError as error:  # the decoder's prompt errors (empty, too long)
                        raise invalid([("prompt", str(error))]) from error
                    if cancel.is_set():
                        raise GenerationCancelledError("the client went away during decoding")
                    yield delta
            finally:
                stream.close()

    def answer(self, request: AnswerRequest, cancel: CancelSignal) -> dict[str, Any]:
        return _finished(run_to_end(self._completion(request, cancel)))

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        generated = yield from relay(self._completion(request, cancel), draft_event)
        yield AnswerEvent("verdict", _finished(generated))


def _finished(generated: GeneratedAnswer) -> dict[str, Any]:
    return {
        "text": generated.text,
        "finish_reason": openai_finish_reason(generated.decode.get("finish_reason")),
        "usage": usage_of(generated),
        "akm": {"decode": dict(generated.decode)},
    }


def served_models(settings: Settings) -> tuple[str, ...]:
    """The names a request's ``model`` may use: the target_model setting, and a directory's name."""
    name = settings.target_model
    return tuple(dict.fromkeys([name, Path(name).name]))


def _services(request: Request) -> CompletionService:
    service: CompletionService = request.app.state.completions
    return service


router = APIRouter(tags=["completions"], route_class=OpenAIRoute)


def _chunk(
    completion_id: str, created: int, model: str, text: str, finish_reason: str | None
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "text_completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}],
    }


def _data(document: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(document)}\n\n".encode()


async def _sse(
    stream: EventStream, completion_id: str, created: int, model: str, request_id: str | None
) -> AsyncIterator[bytes]:
    try:
        async for event in stream.events():
            if event is None:
                yield KEEPALIVE
            elif event.kind == "draft":
                yield _data(_chunk(completion_id, created, model, event.data["text"], None))
            else:
                final = _chunk(completion_id, created, model, "", event.data["finish_reason"])
                final["usage"] = event.data["usage"]
                final["akm"] = event.data["akm"]
                yield _data(final)
                yield b"data: [DONE]\n\n"
    except GenerationCancelledError:
        return
    except Exception as error:  # decoding failed after the stream began: an error chunk, no [DONE]
        logger.error("completion failed mid-stream: %s", error)
        detail = str(error) if isinstance(error, ServiceError) else "generation failed"
        problem = problem_body(INTERNAL, detail, request_id=request_id)
        yield _data(
            {"error": {"message": detail, "type": "server_error", "param": None, "code": None}, **problem}
        )
    finally:
        stream.cancel.set()


@router.post(
    "/v1/completions",
    summary="Continue a prompt with the target model behind the speculative decoder (OpenAI completions)",
)
async def create_completion(
    body: CompletionIn, request: Request, service: Annotated[CompletionService, Depends(_services)]
) -> Any:
    settings: Settings = request.app.state.settings
    models = served_models(settings)
    if body.model not in models:
        raise invalid(
            [("model", f"this server serves {', '.join(repr(name) for name in models)}")], "model_not_found"
        )
    refused = _refused(body)
    if refused:
        raise invalid(refused)
    prompt = body.prompt if isinstance(body.prompt, str) else body.prompt[0]
    options = {
        "max_tokens": body.max_tokens or DEFAULT_MAX_TOKENS,
        "temperature": 1.0 if body.temperature is None else body.temperature,
        "top_p": 1.0 if body.top_p is None else body.top_p,
        "seed": body.seed,
        "stop": [body.stop] if isinstance(body.stop, str) else list(body.stop or []),
    }
    answer_request = AnswerRequest(prompt, options)
    gate: GenerationGate = request.app.state.gate
    metrics: ServiceMetrics = request.app.state.metrics
    completion_id = f"cmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if body.stream:
        stream = await open_event_stream(service, answer_request, gate, metrics)
        request_id = getattr(request.state, "request_id", None)
        return StreamingResponse(
            _sse(stream, completion_id, created, body.model, request_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    result = await run_answer(request, service, answer_request, gate, metrics)
    document = _chunk(completion_id, created, body.model, result["text"], result["finish_reason"])
    document["usage"] = result["usage"]
    document["akm"] = result["akm"]
    return document


@router.get("/healthz", summary="The process is up and the model is loaded")
def healthz(service: Annotated[CompletionService, Depends(_services)]) -> dict[str, str]:
    readiness = service.readiness()
    if not readiness.loaded:
        raise ModelUnavailableError(f"the target model is not loaded: {readiness.detail}")
    return {"status": "ok"}


def create_generator_app(
    settings: Settings, generator: TextGenerator | None = None, *, limits: ApiLimits | None = None
) -> FastAPI:
    """The generator-only app; ``generator`` defaults to the target model ``settings`` names, loaded
    (in a worker thread) before the server accepts connections."""
    limits = limits or ApiLimits()
    service = CompletionService(settings, generator)
    metrics = ServiceMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(service.load)
        yield

    app = FastAPI(
        title="AKM generator server",
        version=__version__,
        description="The target model behind the speculative decoder, as OpenAI completions.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.limits = limits
    app.state.metrics = metrics
    app.state.completions = service
    # One decoder: one completion at a time; others wait for it, then get 429.
    app.state.gate = GenerationGate(1, limits.generation_wait_s)
    install_problem_handlers(app)
    app.include_router(router)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=limits.max_body_bytes,
        max_header_bytes=limits.max_header_bytes,
        body_timeout_s=limits.body_timeout_s,
        streamed_paths=frozenset(),
    )
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    return app


def generator_app_from_environment() -> FastAPI:
    """uvicorn ``--factory`` entry point of ``akm serve --generator-only``."""
    from akm.settings import load_settings

    return create_generator_app(load_settings())


__all__ = ["CompletionService", "create_generator_app", "generator_app_from_environment", "served_models"]
