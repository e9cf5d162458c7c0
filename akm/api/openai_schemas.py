"""Bodies of the OpenAI-compatible routes (``/v1/chat/completions``, ``/v1/models``).

The OpenAI wire format is snake_case; the ``akm`` extension objects (request options and the
evidence in the response) use this API's camelCase, like ``POST /v1/answers``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from akm.api.schemas import LaneName
from akm.service.audit_models import ApiModel

# The service's model ids: the answer as composed, or (strict) only its supported claims.
MODEL_ID = "akm"
STRICT_MODEL_ID = "akm-strict"
MODEL_IDS = (MODEL_ID, STRICT_MODEL_ID)


class ContentPartIn(BaseModel):
    """One part of a message's content; only ``{"type": "text", "text": ...}`` is accepted."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(description="system, developer, user or assistant")
    content: str | list[ContentPartIn] | None = Field(
        default=None, description="text, or a list of text parts"
    )
    name: str | None = None


class AkmChatOptionsIn(ApiModel):
    """The ``akm`` request extension: pipeline options that OpenAI's parameters do not cover."""

    strict: bool | None = Field(
        default=None, strict=True, description="return only supported claims (as model `akm-strict`)"
    )
    lanes: list[LaneName] | None = Field(default=None, min_length=1, max_length=4)
    fusion: Literal["deterministic-priority", "rrf"] | None = None
    max_rows: int | None = Field(default=None, ge=1, le=20, description="rows read into the prompt")


class ChatCompletionIn(BaseModel):
    """An OpenAI chat completion request. Parameters the service cannot honour are fields here and
    are refused (400 naming them) when set; every other parameter (``top_p``, ``stop``, ``user``,
    ... and unknown ones) is ignored and named in ``akm.ignoredParameters`` of the response."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="`akm` or `akm-strict` (see GET /v1/models)")
    messages: list[ChatMessageIn] = Field(
        min_length=1, description="the question is the last message, which must be the user's"
    )
    stream: bool = Field(default=False, strict=True)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1, le=1024)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=1024)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    n: int | None = Field(default=None, description="only 1")
    logprobs: bool | None = Field(default=None, strict=True, description="only false")
    top_logprobs: int | None = Field(default=None, description="not supported")
    tools: list[Any] | None = Field(default=None, description="not supported")
    tool_choice: Any = Field(default=None, description='not supported (only "none")')
    functions: list[Any] | None = Field(default=None, description="not supported")
    function_call: Any = Field(default=None, description='not supported (only "none")')
    response_format: dict[str, Any] | None = Field(default=None, description='only {"type": "text"}')
    modalities: list[str] | None = Field(default=None, description='only ["text"]')
    audio: Any = Field(default=None, description="not supported")
    prediction: Any = Field(default=None, description="not supported")
    web_search_options: Any = Field(default=None, description="not supported")
    akm: AkmChatOptionsIn | None = Field(default=None, description="options of the evidence pipeline")


# ---- responses -------------------------------------------------------------------------------


class EvidenceSpanOut(ApiModel):
    """A passage that supports a claim: where it is, at which revision, and what it says."""

    evidence_id: str
    source_id: str | None = None
    path: str | None = None
    revision: str | None = None
    checksum: str | None = Field(default=None, description="sha256 of the source at that revision")
    locator: dict[str, Any] | None = Field(default=None, description="the row's locator (type, value)")
    lines: str | None = Field(default=None, description="what the direct read read: `path:first-last`")
    state: str | None = Field(default=None, description="the row's evidence state")
    excerpt: str | None = None


class EvidenceClaimOut(ApiModel):
    claim_id: str
    text: str
    status: str = Field(description="supported, unsupported, contradicted or conflicted")
    support_score: float | None = None
    citations: list[dict[str, Any]] = Field(description="as in the answer object of POST /v1/answers")
    spans: list[EvidenceSpanOut] = Field(description="the rows that support the claim")


class AkmEvidenceOut(ApiModel):
    """The ``akm`` response extension: the evidence behind the message."""

    packet_id: str
    packet_url: str = Field(description="GET this path for the whole stored packet")
    verdict: str = Field(description="PASS, PASS_WITH_NOTE, HOLD or FAIL")
    verdict_reasons: list[str]
    strict: bool
    answer: str = Field(
        description="the answer as verified and composed (the message in non-streamed replies)"
    )
    claims: list[EvidenceClaimOut]
    decode: dict[str, Any] | None = None
    ignored_parameters: list[str]


class ChatMessageOut(BaseModel):
    role: Literal["assistant"]
    content: str
    refusal: None = None


class ChatChoiceOut(BaseModel):
    index: int
    message: ChatMessageOut
    finish_reason: Literal["stop"]
    logprobs: None = None


class ChatCompletionOut(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoiceOut]
    akm: AkmEvidenceOut


class ChatDeltaOut(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChatChunkChoiceOut(BaseModel):
    index: int
    delta: ChatDeltaOut
    finish_reason: Literal["stop"] | None = None
    logprobs: None = None


class ChatCompletionChunkOut(BaseModel):
    """One `data:` line of a streamed reply; the last chunk before `data: [DONE]` has
    ``finish_reason`` and the ``akm`` evidence object."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChatChunkChoiceOut]
    akm: AkmEvidenceOut | None = None


class ModelOut(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    akm: dict[str, Any] = Field(description="`strict`, and the target model the answers are drafted with")


class ModelListOut(BaseModel):
    object: Literal["list"]
    data: list[ModelOut]


__all__ = [
    "MODEL_ID",
    "MODEL_IDS",
    "STRICT_MODEL_ID",
    "AkmChatOptionsIn",
    "AkmEvidenceOut",
    "ChatCompletionChunkOut",
    "ChatCompletionIn",
    "ChatCompletionOut",
    "ChatMessageIn",
    "ContentPartIn",
    "EvidenceClaimOut",
    "EvidenceSpanOut",
    "ModelListOut",
    "ModelOut",
]
