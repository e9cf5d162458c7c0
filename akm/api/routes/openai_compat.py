"""OpenAI-compatible serving: ``POST /v1/chat/completions`` and ``GET /v1/models``.

A chat completion is one evidence-gated answer from the same answer service, generation gate
and cancellation as ``POST /v1/answers``. The question is the last message, which must be the
user's; system, developer and earlier messages are accepted and not read (the answer depends on
the evidence only). The message content is the answer; the evidence (packet ID, verdict, claims
with their status and supporting spans) is the ``akm`` extension object of the response, and of
the last chunk before ``data: [DONE]`` when streaming. Parameters the service cannot honour get
a 400 problem naming them (with an OpenAI-style ``error`` member, so OpenAI clients show it).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute

from akm.api.deps import ActorDep, AnswersDep, GateDep, LimitsDep, MetricsDep, SettingsDep
from akm.api.generation import KEEPALIVE, EventStream, open_event_stream, run_answer, stream_problem
from akm.api.metrics import ServiceMetrics
from akm.api.openai_schemas import (
    MODEL_IDS,
    STRICT_MODEL_ID,
    ChatCompletionIn,
    ChatCompletionOut,
    ModelListOut,
    ModelOut,
)
from akm.api.problems import (
    MALFORMED,
    VALIDATION,
    ApiProblem,
    ProblemType,
    problem_responses,
)
from akm.service.answers import AnswerRequest
from akm.service.errors import (
    GenerationCancelledError,
    InvalidRequestError,
    NotFoundError,
)
from akm.settings import Settings

INVALID_PARAMETER = ProblemType("invalid-parameter", 400, "Invalid or unsupported parameter")
_ACCEPTED_ROLES = frozenset({"system", "developer", "user", "assistant"})
# OpenAI's model objects need a `created` time: when this worker process loaded the routes.
_CREATED = int(time.time())


def _param_name(location: Sequence[Any]) -> str:
    """``("body", "messages", 0, "content")`` → ``messages[0].content``."""
    name = ""
    for part in location:
        if part == "body" and not name:
            continue
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name or "body"


def _openai_error(detail: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"message": detail, "type": "invalid_request_error", "param": param, "code": code}


def invalid(params: Sequence[tuple[str, str]], code: str = "invalid_parameter") -> ApiProblem:
    """A 400 naming every offending parameter (the first one in OpenAI's ``error.param``)."""
    detail = "; ".join(f"{name}: {reason}" for name, reason in params[:5])
    return ApiProblem(
        INVALID_PARAMETER,
        detail,
        invalidParams=[{"name": name, "reason": reason} for name, reason in params],
        error=_openai_error(detail, params[0][0], code),
    )


def _unanswerable(param: str, error: InvalidRequestError) -> ApiProblem:
    """A well-formed question the pipeline cannot act on (e.g. no searchable terms): 422, as on
    ``POST /v1/answers``, naming the message."""
    detail = f"{param}: {error}"
    return ApiProblem(
        VALIDATION,
        detail,
        invalidParams=[{"name": param, "reason": str(error)}],
        error=_openai_error(detail, param, "unprocessable_question"),
    )


class OpenAIRoute(APIRoute):
    """Request validation failures are OpenAI's 400 (not this API's 422), naming the parameter."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as error:
                raise _from_validation(error) from None

        return route


def _from_validation(error: RequestValidationError) -> ApiProblem:
    params = []
    for item in error.errors():
        if item.get("type") == "json_invalid":
            detail = "the body is not valid JSON"
            return ApiProblem(
                MALFORMED,
                detail,
                invalidParams=[{"name": "body", "reason": "not valid JSON"}],
                error=_openai_error(detail, None, "invalid_json"),
            )
        params.append((_param_name(item.get("loc", ())), str(item.get("msg", "invalid"))))
    return invalid(params or [("body", "invalid")])


router = APIRouter(tags=["openai"], route_class=OpenAIRoute)


# ---- the request -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatRequest:
    """What a chat completion request asks of the answer service."""

    model: str
    question: str
    options: dict[str, Any]
    strict: bool
    stream: bool
    ignored: list[str] = field(default_factory=list)


def _text_of(message_index: int, content: Any, problems: list[tuple[str, str]]) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part_index, part in enumerate(content):
        name = f"messages[{message_index}].content[{part_index}]"
        if part.type != "text":
            problems.append((f"{name}.type", f"only text parts are supported (got {part.type!r})"))
        elif part.text is None:
            problems.append((f"{name}.text", "a text part needs its text"))
        else:
            texts.append(part.text)
    return "\n".join(texts)


def _check_messages(body: ChatCompletionIn, problems: list[tuple[str, str]]) -> str:
    """The question (the last message's text); every message's role and content checked."""
    texts = []
    for index, message in enumerate(body.messages):
        if message.role not in _ACCEPTED_ROLES:
            problems.append(
                (
                    f"messages[{index}].role",
                    f"one of {', '.join(sorted(_ACCEPTED_ROLES))} (got {message.role!r})",
                )
            )
        for unsupported in ("tool_calls", "function_call"):
            if (message.model_extra or {}).get(unsupported) is not None:
                problems.append(
                    (f"messages[{index}].{unsupported}", "tool and function calls are not supported")
                )
        texts.append(_text_of(index, message.content, problems))
    last = len(body.messages) - 1
    if not any(message.role == "user" for message in body.messages):
        problems.append(("messages", "no user message: the last message must be the user's question"))
    elif body.messages[last].role != "user":
        problems.append(
            (
                f"messages[{last}].role",
                f"the last message must be the user's question (got {body.messages[last].role!r})",
            )
        )
    elif not texts[last].strip():
        problems.append((f"messages[{last}].content", "the question is empty"))
    return texts[last]


def _check_unsupported(body: ChatCompletionIn, problems: list[tuple[str, str]]) -> None:
    if body.n is not None and body.n != 1:
        problems.append(("n", f"only one choice per request (n=1), got n={body.n}"))
    if body.logprobs:
        problems.append(("logprobs", "log probabilities are not returned"))
    if body.top_logprobs is not None:
        problems.append(("top_logprobs", "log probabilities are not returned"))
    for name in ("tools", "functions"):
        if getattr(body, name):
            problems.append((name, "tool and function calling are not supported"))
    for name in ("tool_choice", "function_call"):
        value = getattr(body, name)
        if value is not None and value != "none":
            problems.append((name, 'tool and function calling are not supported (only "none")'))
    if body.response_format is not None and body.response_format.get("type") != "text":
        problems.append(("response_format", 'the answer is text: only {"type": "text"}'))
    if body.modalities is not None and set(body.modalities) != {"text"}:
        problems.append(("modalities", 'only ["text"]'))
    for name in ("audio", "prediction", "web_search_options"):
        if getattr(body, name) is not None:
            problems.append((name, "not supported"))


def parse_chat_request(body: ChatCompletionIn, max_question_chars: int) -> ChatRequest:
    """Check ``body`` and map it to the answer service's request; raises a 400 ApiProblem."""
    problems: list[tuple[str, str]] = []
    if body.model not in MODEL_IDS:
        problems.append(
            ("model", f"unknown model {body.model!r}; GET /v1/models lists {', '.join(MODEL_IDS)}")
        )
    question = _check_messages(body, problems)
    if len(question) > max_question_chars:
        problems.append(
            (
                f"messages[{len(body.messages) - 1}].content",
                f"at most {max_question_chars} characters (got {len(question)})",
            )
        )
    _check_unsupported(body, problems)
    if (
        body.max_tokens is not None
        and body.max_completion_tokens is not None
        and body.max_tokens != body.max_completion_tokens
    ):
        problems.append(("max_tokens", "differs from max_completion_tokens; give one of them"))
    extension = body.akm
    strict = body.model == STRICT_MODEL_ID
    if extension is not None and extension.strict is not None:
        if strict and not extension.strict:
            problems.append(("akm.strict", "false contradicts the model akm-strict"))
        strict = strict or extension.strict
    if problems:
        code = "model_not_found" if problems[0][0] == "model" else "invalid_parameter"
        raise invalid(problems, code)

    options: dict[str, Any] = {"strict": strict}
    if body.temperature is not None:
        options["temperature"] = body.temperature
    max_tokens = body.max_completion_tokens or body.max_tokens
    if max_tokens is not None:
        options["max_new_tokens"] = max_tokens
    if body.seed is not None:
        options["seed"] = body.seed
    if extension is not None:
        options.update(extension.model_dump(exclude_none=True, exclude={"strict"}))
    # Known harmless parameters (top_p, stop, user, ...) and unknown ones are not fields of the
    # request model: they are the extras, named back to the client as ignored.
    ignored = sorted(body.model_extra or {})
    return ChatRequest(body.model, question, options, strict, body.stream, ignored)


# ---- the evidence ------------------------------------------------------------------------------


def _span(row: Mapping[str, Any]) -> dict[str, Any]:
    source = row.get("source") or {}
    version = source.get("version") or {}
    verification = row.get("verification") or {}
    return {
        "evidenceId": row.get("evidenceId"),
        "sourceId": source.get("sourceId"),
        "path": source.get("canonicalPath"),
        "revision": version.get("revision"),
        "checksum": version.get("checksum"),
        "locator": (row.get("scope") or {}).get("locator"),
        "lines": (verification.get("directRead") or {}).get("locatorRead"),
        "state": verification.get("state"),
        "excerpt": (row.get("content") or {}).get("excerpt"),
    }


def evidence_extension(result: Mapping[str, Any], chat: ChatRequest) -> dict[str, Any]:
    """The ``akm`` object of a reply: packet, verdict, and each claim with its supporting spans."""
    packet = result.get("packet") or {}
    rows = {row.get("evidenceId"): row for row in packet.get("evidenceRows") or []}
    support = {claim.get("claimId"): claim.get("supportRowIds") or [] for claim in packet.get("claims") or []}
    claims = []
    for claim in result.get("claims") or []:
        cited = [citation.get("evidenceId") for citation in claim.get("citations") or []]
        span_ids = list(dict.fromkeys([*support.get(claim.get("claimId"), []), *cited]))
        claims.append(
            {
                "claimId": claim.get("claimId"),
                "text": claim.get("text", ""),
                "status": claim.get("status"),
                "supportScore": claim.get("supportScore"),
                "citations": list(claim.get("citations") or []),
                "spans": [_span(rows[row_id]) for row_id in span_ids if row_id in rows],
            }
        )
    verdict = result.get("verdict") or {}
    packet_id = str(result.get("packetId", ""))
    return {
        "packetId": packet_id,
        "packetUrl": f"/v1/packets/{packet_id}",
        "verdict": verdict.get("verdict"),
        "verdictReasons": list(verdict.get("reasons") or []),
        "strict": chat.strict,
        "answer": result.get("answer", ""),
        "claims": claims,
        "decode": result.get("decode"),
        "ignoredParameters": chat.ignored,
    }


# ---- the routes --------------------------------------------------------------------------------

# One server-sent event of a streamed reply: `data` is a chat.completion.chunk as JSON, or `[DONE]`.
SSE_CHUNK_SCHEMA = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "data": {
            "type": "string",
            "description": "a `chat.completion.chunk` object as JSON (the last one with `finish_reason` "
            "and `akm`), then `[DONE]`; a failure after the first chunk is a problem object with an "
            "OpenAI `error` member",
        }
    },
}

_DESCRIPTION = (
    "An OpenAI chat completion answered by the evidence-gated answer service (the same one as "
    "`POST /v1/answers`). The question is the last message, which must be the user's; earlier, "
    "system and developer messages are not read. The message is the answer; model `akm-strict` (or "
    '`"akm": {"strict": true}`) keeps only supported claims. The `akm` member carries the evidence: '
    "packet ID, verdict, claims with status and supporting spans. With `stream: true` the reply is "
    "server-sent events in OpenAI's chunk format: the draft as `delta.content` (unverified; in strict "
    "mode the verified answer instead, once), then one chunk with `finish_reason` and `akm`, then "
    "`data: [DONE]`. Unsupported parameters (`n>1`, `logprobs`, `top_logprobs`, `tools`, `tool_choice`, "
    "`functions`, non-text content, an unknown model) get 400 `invalid-parameter` naming them; a "
    "question the pipeline cannot act on (no searchable terms) gets 422 `validation`."
)


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletionOut,
    summary="Answer a chat completion from the evidence (OpenAI-compatible)",
    description=_DESCRIPTION,
    responses={
        200: {"content": {"text/event-stream": {"schema": SSE_CHUNK_SCHEMA}}},
        **problem_responses(400, 413, 415, 422, 429, 503),
    },
)
async def create_chat_completion(
    body: ChatCompletionIn,
    request: Request,
    answers: AnswersDep,
    gate: GateDep,
    limits: LimitsDep,
    metrics: MetricsDep,
    actor: ActorDep,
) -> Response:
    chat = parse_chat_request(body, limits.max_question_chars)
    answer_request = AnswerRequest(chat.question, chat.options, actor=actor)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    question_param = f"messages[{len(body.messages) - 1}].content"
    if chat.stream:
        try:
            events = await open_event_stream(answers, answer_request, gate, metrics)
        except InvalidRequestError as error:
            raise _unanswerable(question_param, error) from error
        request_id = getattr(request.state, "request_id", None)
        return StreamingResponse(
            _chunks(events, chat, metrics, completion_id, created, request_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    try:
        result = await run_answer(request, answers, answer_request, gate, metrics)
    except InvalidRequestError as error:
        raise _unanswerable(question_param, error) from error
    reply = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": chat.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": result.get("answer", ""), "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "akm": evidence_extension(result, chat),
    }
    return JSONResponse(reply)


def _sse(payload: Mapping[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def _stream_error(error: BaseException, request_id: str | None) -> bytes:
    """A failure after the first chunk: a problem body with OpenAI's ``error`` member (the
    ``openai`` client raises it as an APIError); no ``[DONE]`` follows."""
    body = stream_problem(error, request_id)
    code = str(body["type"]).rsplit(":", 1)[-1]
    body["error"] = {"message": body["detail"], "type": "server_error", "param": None, "code": code}
    return _sse(body)


async def _chunks(
    events: EventStream,
    chat: ChatRequest,
    metrics: ServiceMetrics,
    completion_id: str,
    created: int,
    request_id: str | None,
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, akm: dict[str, Any] | None = None) -> bytes:
        payload: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": chat.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if akm is not None:
            payload["akm"] = akm
        return _sse(payload)

    drafted = False
    try:
        yield chunk({"role": "assistant", "content": ""})
        async for event in events.events():
            if event is None:
                yield KEEPALIVE
            elif event.kind == "draft" and not chat.strict:
                text = str(event.data.get("text", ""))
                if text:
                    drafted = True
                    yield chunk({"content": text})
            elif event.kind == "verdict":
                metrics.observe_answer(event.data)
                if chat.strict or not drafted:
                    # Nothing unverified was shown: the verified answer is the content.
                    yield chunk({"content": str(event.data.get("answer", ""))})
                yield chunk({}, "stop", evidence_extension(event.data, chat))
                yield b"data: [DONE]\n\n"
    except GenerationCancelledError:
        return
    except Exception as error:  # the answer service failed after the stream began
        yield _stream_error(error, request_id)
    finally:
        # Reached on normal end, on error and when the server cancels us because the client left.
        events.cancel.set()


def _model(model_id: str, settings: Settings) -> dict[str, Any]:
    strict = model_id == STRICT_MODEL_ID
    return {
        "id": model_id,
        "object": "model",
        "created": _CREATED,
        "owned_by": "akm",
        "akm": {
            "strict": strict,
            "targetModel": settings.target_model,
            "description": "only the supported claims of each answer"
            if strict
            else "the answer as verified and composed, with every claim's status",
        },
    }


@router.get(
    "/v1/models",
    response_model=ModelListOut,
    summary="The model ids of the OpenAI-compatible chat completions",
)
async def list_models(settings: SettingsDep) -> Response:
    return JSONResponse({"object": "list", "data": [_model(model_id, settings) for model_id in MODEL_IDS]})


@router.get(
    "/v1/models/{model_id}",
    response_model=ModelOut,
    summary="One model id of the OpenAI-compatible chat completions",
    responses=problem_responses(404, 422),
)
async def get_model(model_id: str, settings: SettingsDep) -> Response:
    if model_id not in MODEL_IDS:
        raise NotFoundError("model", model_id)
    return JSONResponse(_model(model_id, settings))
