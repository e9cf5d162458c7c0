"""POST /v1/answers: a grounded answer, as one JSON object or as server-sent events."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from akm.api.deps import ActorDep, AnswersDep, GateDep, LimitsDep, MetricsDep
from akm.api.generation import open_answer_stream, run_answer
from akm.api.problems import VALIDATION, ApiProblem, problem_responses
from akm.api.schemas import AnswerIn, AnswerOut
from akm.service.answers import AnswerRequest

router = APIRouter(tags=["answers"])

# One server-sent event; `data` is JSON text (a draft increment, a claim, the answer object or a problem).
SSE_EVENT_SCHEMA = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["draft", "claim", "verdict", "error"]},
        "data": {"type": "string"},
        "id": {"type": "string"},
    },
}

_STREAM_DESCRIPTION = (
    "With `stream: true` or `Accept: text/event-stream` the response is `text/event-stream`: "
    "`draft` events carry text increments (`unverified: true`, nothing in them has been checked), "
    "then one `claim` event per claim with its verification status, then one `verdict` event with "
    "the complete answer object; `: keep-alive` comment lines fill long pauses. A client that "
    "disconnects stops the generation; nothing is stored for it."
)


@router.post(
    "/v1/answers",
    response_model=AnswerOut,
    response_model_by_alias=True,
    summary="Answer a question from the evidence",
    description=_STREAM_DESCRIPTION,
    responses={
        200: {"content": {"text/event-stream": {"schema": SSE_EVENT_SCHEMA}}},
        **problem_responses(400, 413, 415, 422, 429, 503),
    },
)
async def create_answer(
    body: AnswerIn,
    request: Request,
    answers: AnswersDep,
    gate: GateDep,
    limits: LimitsDep,
    metrics: MetricsDep,
    actor: ActorDep,
) -> Any:
    if len(body.question) > limits.max_question_chars:
        reason = f"at most {limits.max_question_chars} characters (got {len(body.question)})"
        raise ApiProblem(
            VALIDATION, f"question: {reason}", invalidParams=[{"name": "question", "reason": reason}]
        )
    answer_request = AnswerRequest(body.question, body.options.model_dump(exclude_none=True), actor=actor)
    if body.stream or "text/event-stream" in request.headers.get("accept", ""):
        events = await open_answer_stream(request, answers, answer_request, gate, metrics)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    return await run_answer(request, answers, answer_request, gate, metrics)
