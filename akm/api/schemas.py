"""Request and response bodies of the API (camelCase on the wire), separate from storage models.

The lineage, rejection and source bodies are the audit read model that ``akm audit`` prints
too: they live in ``akm.service.audit_models``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from akm.service.audit_models import ApiModel

LaneName = Literal["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship"]


# ---- answers --------------------------------------------------------------------------------


class AnswerOptionsIn(ApiModel):
    """Pipeline options; anything left out takes the pipeline's default."""

    lanes: list[LaneName] | None = Field(
        default=None, min_length=1, max_length=4, description="lanes to run; default: chosen by query class"
    )
    fusion: Literal["deterministic-priority", "rrf"] | None = Field(
        default=None, description="fusion method; default: the manifest's"
    )
    max_rows: int | None = Field(default=None, ge=1, le=20, description="rows read into the prompt")
    max_new_tokens: int | None = Field(default=None, ge=1, le=1024)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = Field(default=None, ge=0, le=2**32 - 1)
    # Strict: "yes", "1" or 1 is refused, not read as true (the schema says boolean).
    strict: bool | None = Field(default=None, strict=True, description="return only supported claims")


class AnswerIn(ApiModel):
    question: str = Field(min_length=1, description="the question; at most the server's question limit")
    stream: bool = Field(
        default=False, strict=True, description="stream server-sent events instead of one JSON object"
    )
    options: AnswerOptionsIn = Field(default_factory=AnswerOptionsIn)


class AnswerOut(BaseModel):
    """The answer object, identical to ``akm ask --json``."""

    model_config = ConfigDict(extra="allow")

    answer: str
    claims: list[dict[str, Any]]
    verdict: dict[str, Any] = Field(description="`verdict` (PASS, HOLD, ...) and its `reasons`")
    packet_id: str = Field(alias="packetId")
    packet: dict[str, Any]
    decode: dict[str, Any] | None = None


# ---- sources ------------------------------------------------------------------------------


class ReverifyIn(ApiModel):
    source_id: str | None = Field(default=None, min_length=1, description="one source; omit for every source")


class ReverifyOut(BaseModel):
    """The re-verification report (what became stale, which claims and packets changed)."""

    model_config = ConfigDict(extra="allow")


# ---- validation and operations -------------------------------------------------------------


class FindingOut(ApiModel):
    rule_id: str
    pointer: str
    message: str


class ValidationReportOut(ApiModel):
    valid: bool
    documents: int
    findings: list[FindingOut]


class HealthOut(ApiModel):
    status: Literal["ok"]


class ReadyOut(ApiModel):
    status: Literal["ready", "not-ready"]
    store: str
    models: str
