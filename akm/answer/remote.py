"""A remote generator: the answer drafted by an OpenAI-compatible server over HTTP.

Any server that speaks OpenAI's completions API can draft answers: vLLM, the llama.cpp server,
Ollama, or another ``akm serve --generator-only`` (the speculative decoder behind
``/v1/completions``). Only drafting moves: the prompt is built here from directly read sentences,
and every claim of the returned text is verified here, exactly as for a local model. The server's
decode statistics are kept where it reports them and are ``None`` where it does not; a count this
side cannot observe is never reported as zero.

Selected by ``target_model = "openai+http://host:port/v1#model-name"`` (or ``openai+https://``).
By default the request is ``POST {base}/completions`` with ``stream: true`` and the chat rendered
as ChatML text; ``generator_endpoint = "chat"`` sends the messages to ``{base}/chat/completions``
instead, for a server whose model uses another chat template.

Failures: a server that cannot be reached, answers 5xx or 429 is retried with exponential
backoff, but only while no text has been passed on; a stall past the read timeout, a malformed
reply, an error reported in the stream or a stream that ends before ``data: [DONE]`` fail the
answer with :class:`akm.errors.ModelUnavailableError`. Nothing is remembered between requests: the
next answer tries the server again.

This module never imports ``decoding``: the decoder, when there is one, runs in the other process.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal
from urllib.parse import unquote, urlsplit

import httpx

from akm.answer.prompt import EvidencePrompt
from akm.answer.results import GeneratedAnswer
from akm.errors import ModelUnavailableError
from akm.settings import Settings

SCHEME_PREFIX = "openai+"
Endpoint = Literal["completions", "chat"]
# ChatML: what SmolLM2 (the default target, also behind `akm serve --generator-only`), Qwen and
# many other instruction models are trained on. The reply ends at the end-of-turn marker.
CHATML_STOP = ("<|im_end|>",)
# The longest server-requested wait (Retry-After) honoured between two attempts.
MAX_RETRY_AFTER_S = 30.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Errors after which nothing reached the server's model, or the reply broke before any text.
_RETRYABLE_TRANSPORT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)
# The local decoder's statistics; a remote answer reports each one the server sent and None for the rest.
DECODE_KEYS = (
    "new_tokens",
    "prompt_tokens",
    "cached_prompt_tokens",
    "target_calls",
    "tokens_per_target_call",
    "draft_steps",
    "plain_steps",
    "proposed",
    "accepted",
    "rejected",
    "acceptance_rate",
    "proposed_by_position",
    "accepted_by_position",
    "acceptance_by_position",
    "mean_accepted_length",
    "proposals_by_source",
    "tree_steps",
    "tree_nodes",
    "branch_accepts",
    "ttft_s",
    "prefill_s",
    "inter_token_latency_p50_ms",
    "inter_token_latency_p95_ms",
    "draft_s",
    "verify_s",
    "wall_s",
    "tokens_per_s",
    "peak_rss_bytes",
    "finish_reason",
    "drafters",
    "speedup_by_calls",
    "estimated_speedup",
)
# Measured on this side of the wire (what the answer waited), not taken from the server.
_CLIENT_TIMINGS = ("ttft_s", "wall_s", "tokens_per_s")


def is_remote_target(target: str) -> bool:
    """Whether a ``target_model`` setting names a remote OpenAI-compatible server."""
    return target.startswith((f"{SCHEME_PREFIX}http://", f"{SCHEME_PREFIX}https://"))


def parse_remote_target(target: str) -> tuple[str, str]:
    """``openai+http://host:port/v1#model`` → (``http://host:port/v1``, ``model``); ValueError when malformed."""
    if not is_remote_target(target):
        raise ValueError(f"{target!r} is not of the form openai+http(s)://host:port/v1#model-name")
    url, _, fragment = target.removeprefix(SCHEME_PREFIX).partition("#")
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"{target!r} names no host")
    try:
        _ = parts.port
    except ValueError as error:
        raise ValueError(f"{target!r}: {error}") from None
    if parts.username or parts.password:
        raise ValueError(
            f"{target!r} carries credentials; name the environment variable holding the API key "
            "in generator_api_key_env instead"
        )
    if parts.query:
        raise ValueError(f"{target!r} has a query string; give the base URL only (e.g. http://host:port/v1)")
    model = unquote(fragment).strip()
    if not model:
        raise ValueError(f"{target!r} names no model: add '#model-name' after the base URL")
    return url.rstrip("/"), model


@dataclass(frozen=True)
class RemoteGeneratorConfig:
    """Where the generator server is and how to talk to it."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    endpoint: Endpoint = "completions"
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 60.0
    retries: int = 2
    backoff_s: float = 0.5
    max_concurrency: int = 4

    @classmethod
    def from_settings(
        cls, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> RemoteGeneratorConfig:
        """The configuration named by ``settings``; ValueError when the target or the key is missing."""
        base_url, model = parse_remote_target(settings.target_model)
        environ = os.environ if environ is None else environ
        api_key: str | None = None
        if settings.generator_api_key_env:
            api_key = environ.get(settings.generator_api_key_env) or None
            if api_key is None:
                raise ValueError(
                    f"generator_api_key_env names {settings.generator_api_key_env}, which is not set or empty"
                )
        return cls(
            base_url=base_url,
            model=model,
            api_key=api_key,
            endpoint=settings.generator_endpoint,
            connect_timeout_s=settings.generator_connect_timeout_s,
            read_timeout_s=settings.generator_read_timeout_s,
            retries=settings.generator_retries,
            backoff_s=settings.generator_backoff_s,
            max_concurrency=settings.generator_max_concurrency,
        )


def render_chatml(prompt: EvidencePrompt) -> str:
    """The chat as ChatML text, ending where the assistant's reply begins."""
    system = f"<|im_start|>system\n{prompt.system}<|im_end|>\n" if prompt.system else ""
    return f"{system}<|im_start|>user\n{prompt.user}<|im_end|>\n<|im_start|>assistant\n"


def chat_messages(prompt: EvidencePrompt) -> list[dict[str, str]]:
    """The chat as OpenAI messages (an empty system message leaves the server's default)."""
    messages = [{"role": "system", "content": prompt.system}] if prompt.system else []
    messages.append({"role": "user", "content": prompt.user})
    return messages


class _Retry(Exception):
    """One attempt failed in a way another attempt may not (raised before any text was passed on)."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


@dataclass
class _Reply:
    """What one streamed reply said, chunk by chunk."""

    endpoint: Endpoint
    parts: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    akm: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    done: bool = False

    def take(self, chunk: Any) -> str:
        """The text this chunk adds; its finish reason, usage and statistics are kept."""
        if not isinstance(chunk, dict):
            raise ValueError(f"a chunk is {type(chunk).__name__}, not a JSON object")
        if chunk.get("error") is not None:
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise _StreamError(f"reported an error in the stream: {str(message)[:300]}")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("akm"), dict):
            self.akm = chunk["akm"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        choices = chunk.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise ValueError("choices is not a list")
        text = ""
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            piece = (
                choice.get("text")
                if self.endpoint == "completions"
                else (choice.get("delta") or {}).get("content")
            )
            if piece is not None and not isinstance(piece, str):
                raise ValueError("a choice's text is not a string")
            text += piece or ""
            if choice.get("finish_reason") is not None:
                self.finish_reason = str(choice["finish_reason"])
        if text:
            self.parts.append(text)
        return text


class _StreamError(Exception):
    """The server said in the stream that generation failed."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def decode_stats(
    reply: _Reply, config: RemoteGeneratorConfig, *, wall_s: float, ttft_s: float | None, attempts: int
) -> dict[str, Any]:
    """The local decoder's statistics as far as the server reported them (None elsewhere), the
    client-side timings, and where the answer was generated."""
    decode: dict[str, Any] = dict.fromkeys(DECODE_KEYS)
    server: dict[str, Any] = {"wall_s": None, "ttft_s": None, "tokens_per_s": None}
    if reply.akm is not None:
        # Another akm generator server: its speculative decoder's own statistics.
        nested = reply.akm.get("decode")
        reported: dict[str, Any] = nested if isinstance(nested, dict) else reply.akm
        for key, value in reported.items():
            if key in _CLIENT_TIMINGS:
                server[key] = value
            elif key != "finish_reason":
                decode[key] = value
    if reply.timings is not None:
        # The llama.cpp server's timings: prompt and predicted counts, and its draft model's acceptance.
        timings = reply.timings
        decode["prompt_tokens"] = decode["prompt_tokens"] or _count(timings.get("prompt_n"))
        decode["new_tokens"] = decode["new_tokens"] or _count(timings.get("predicted_n"))
        proposed, accepted = _count(timings.get("draft_n")), _count(timings.get("draft_n_accepted"))
        if proposed is not None and accepted is not None:
            decode["proposed"], decode["accepted"] = proposed, accepted
            decode["acceptance_rate"] = accepted / proposed if proposed else None
        server["tokens_per_s"] = _number(timings.get("predicted_per_second"))
        prompt_ms, predicted_ms = _number(timings.get("prompt_ms")), _number(timings.get("predicted_ms"))
        if prompt_ms is not None and predicted_ms is not None:
            server["wall_s"] = (prompt_ms + predicted_ms) / 1000.0
            server["ttft_s"] = prompt_ms / 1000.0
    if reply.usage is not None:
        # Usage is the server's own count of the tokens it billed: it wins over everything else.
        completion = _count(reply.usage.get("completion_tokens"))
        prompt_tokens = _count(reply.usage.get("prompt_tokens"))
        decode["new_tokens"] = completion if completion is not None else decode["new_tokens"]
        decode["prompt_tokens"] = prompt_tokens if prompt_tokens is not None else decode["prompt_tokens"]
    new_tokens = decode["new_tokens"]
    decode["finish_reason"] = reply.finish_reason
    decode["wall_s"] = wall_s
    decode["ttft_s"] = ttft_s
    decode["tokens_per_s"] = new_tokens / wall_s if isinstance(new_tokens, int) and wall_s > 0 else None
    decode["generator"] = {
        "backend": "openai",
        "baseUrl": config.base_url,
        "model": config.model,
        "endpoint": config.endpoint,
        "attempts": attempts,
        "server": server,
    }
    return decode


# How long a readiness probe of the remote server is reused.
PROBE_INTERVAL_S = 2.0


class RemoteAnswerGenerator:
    """An :class:`akm.answer.prompt.AnswerGenerator` drafting on an OpenAI-compatible server.

    Thread-safe; at most ``config.max_concurrency`` requests run at once (one HTTP connection
    each). ``runs_concurrently`` tells the answer service not to serialise answers around it the
    way it does around the one local decoder.
    """

    runs_concurrently: ClassVar[bool] = True

    def __init__(
        self,
        config: RemoteGeneratorConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        headers = {"Accept": "text/event-stream"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(
                connect=config.connect_timeout_s,
                read=config.read_timeout_s,
                write=config.read_timeout_s,
                pool=config.read_timeout_s,
            ),
            limits=httpx.Limits(
                max_connections=config.max_concurrency, max_keepalive_connections=config.max_concurrency
            ),
            transport=transport,
            follow_redirects=False,
        )
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._sleep = sleep
        self._probe_lock = threading.Lock()
        self._probed_at = float("-inf")
        self._probe_result: str | None = None
        path = "completions" if config.endpoint == "completions" else "chat/completions"
        self.url = f"{config.base_url}/{path}"

    @property
    def name(self) -> str:
        return f"{self.config.model} at {self.config.base_url}"

    def close(self) -> None:
        self._client.close()

    def probe(self) -> str | None:
        """Why the server cannot be reached now (None when it answers HTTP below 500).

        ``GET {base}/models``, bounded by the connect timeout; any answer below 500, a 404 of a
        server without that route included, counts as reachable. Checked at most every
        ``PROBE_INTERVAL_S`` seconds (readiness checks arrive often).
        """
        now = time.monotonic()
        with self._probe_lock:
            if now - self._probed_at < PROBE_INTERVAL_S:
                return self._probe_result
            try:
                response = self._client.get(
                    f"{self.config.base_url}/models",
                    headers={"Accept": "application/json"},
                    timeout=self.config.connect_timeout_s,
                )
                result = None if response.status_code < 500 else f"HTTP {response.status_code}"
            except httpx.HTTPError as error:
                result = f"{type(error).__name__}: {error}"
            self._probed_at, self._probe_result = time.monotonic(), result
            return result

    def _error(self, reason: str) -> ModelUnavailableError:
        return ModelUnavailableError(
            f"the remote generator {self.name} is unavailable: {reason}",
            kind="target",
            name=self.name,
            reason=reason,
        )

    def request_body(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": max_new_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if seed is not None:
            body["seed"] = seed
        if self.config.endpoint == "completions":
            body["prompt"] = render_chatml(prompt)
            body["stop"] = list(CHATML_STOP)
        else:
            body["messages"] = chat_messages(prompt)
        return body

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        """Ask the server; yield each text increment as it arrives; return the whole answer."""
        body = self.request_body(prompt, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed)
        if not self._slots.acquire(timeout=self.config.read_timeout_s):
            raise self._error(
                f"all {self.config.max_concurrency} requests to it stayed busy for {self.config.read_timeout_s:g} s"
            )
        try:
            return (yield from self._with_retries(body))
        finally:
            self._slots.release()

    def _with_retries(self, body: dict[str, Any]) -> Generator[str, None, GeneratedAnswer]:
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            reply = _Reply(self.config.endpoint)
            first_text_at: list[float] = []
            try:
                yield from self._attempt(body, reply, first_text_at)
            except _Retry as failure:
                if attempt > self.config.retries:
                    tries = f" (after {attempt} attempts)" if attempt > 1 else ""
                    raise self._error(f"{failure.reason}{tries}") from None
                delay = self.config.backoff_s * 2 ** (attempt - 1)
                if failure.retry_after_s is not None:
                    delay = max(delay, min(failure.retry_after_s, MAX_RETRY_AFTER_S))
                self._sleep(delay)
                continue
            wall_s = time.perf_counter() - started
            ttft_s = first_text_at[0] - started if first_text_at else None
            decode = decode_stats(reply, self.config, wall_s=wall_s, ttft_s=ttft_s, attempts=attempt)
            return GeneratedAnswer(
                text="".join(reply.parts), decode=decode, complete=reply.finish_reason != "length"
            )

    def _attempt(
        self, body: dict[str, Any], reply: _Reply, first_text_at: list[float]
    ) -> Generator[str, None, None]:
        """One request. Raises _Retry for a failure before any text was passed on that another
        attempt may not meet; ModelUnavailableError for every other failure."""
        try:
            with self._client.stream("POST", self.url, json=body) as response:
                if response.status_code != 200:
                    raise self._status_failure(response)
                for chunk in self._chunks(response, reply):
                    text = reply.take(chunk)
                    if text:
                        if not first_text_at:
                            first_text_at.append(time.perf_counter())
                        yield text
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout) and not reply.parts:
                raise _Retry(f"connecting timed out after {self.config.connect_timeout_s:g} s") from None
            stage = "more text" if reply.parts else "a reply"
            raise self._error(f"waited more than {self.config.read_timeout_s:g} s for {stage}") from None
        except _RETRYABLE_TRANSPORT as error:
            if reply.parts:
                raise self._error(
                    f"the connection broke after text had arrived ({type(error).__name__})"
                ) from None
            raise _Retry(
                f"cannot connect or the connection broke ({type(error).__name__}: {error})"
            ) from None
        except httpx.HTTPError as error:
            raise self._error(f"{type(error).__name__}: {error}") from None
        except _StreamError as error:
            raise self._error(str(error)) from None
        except ValueError as error:
            raise self._error(f"sent a malformed reply: {error}") from None

    def _status_failure(self, response: httpx.Response) -> Exception:
        response.read()
        summary = " ".join(response.text.split())[:300]
        reason = f"answered HTTP {response.status_code}" + (f": {summary}" if summary else "")
        if response.status_code in RETRY_STATUSES:
            retry_after = response.headers.get("retry-after", "")
            seconds = float(retry_after) if retry_after.replace(".", "", 1).isdigit() else None
            return _Retry(reason, seconds)
        return self._error(reason)

    def _chunks(self, response: httpx.Response, reply: _Reply) -> Iterator[Any]:
        """The JSON chunks of a server-sent event stream, up to ``data: [DONE]``."""
        content_type = response.headers.get("content-type", "")
        if not content_type.startswith("text/event-stream"):
            raise ValueError(f"the reply is {content_type or 'untyped'}, not text/event-stream")
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # comments (keep-alives), event names, ids, blank separators
            data = line[5:].strip()
            if data == "[DONE]":
                reply.done = True
                return
            try:
                chunk = json.loads(data)
            except json.JSONDecodeError as error:
                raise ValueError(f"a data line is not JSON ({error.msg}): {data[:120]!r}") from None
            yield chunk
        raise self._error(
            "the stream ended before data: [DONE]" + (" after text had arrived" if reply.parts else "")
        )


def remote_generator(settings: Settings) -> RemoteAnswerGenerator:
    """The remote generator ``settings.target_model`` names; ModelUnavailableError when misconfigured."""
    try:
        config = RemoteGeneratorConfig.from_settings(settings)
    except ValueError as error:
        raise ModelUnavailableError.could_not_load("target", settings.target_model, str(error)) from error
    return RemoteAnswerGenerator(config)


__all__ = [
    "CHATML_STOP",
    "RemoteAnswerGenerator",
    "RemoteGeneratorConfig",
    "chat_messages",
    "decode_stats",
    "is_remote_target",
    "parse_remote_target",
    "remote_generator",
    "render_chatml",
]
