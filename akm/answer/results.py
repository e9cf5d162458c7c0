"""What an answer is made of, as returned to the CLI and the API: options in, result out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from akm.contract.models import EvidencePacket, EvidenceRow, FusionMethod, Verdict
from akm.support import ClaimOutcome

DEFAULT_MAX_ROWS = 4
# Two quoted sentences fit; a longer generation would be cut and quoted instead anyway.
DEFAULT_MAX_NEW_TOKENS = 64


@dataclass(frozen=True, slots=True)
class AnswerOptions:
    """How to answer: lanes (None = chosen by query class), fusion method (None = manifest),
    rows read into the prompt, decoding limits, and ``strict`` (return only supported claims)."""

    lanes: tuple[str, ...] | None = None
    fusion_method: FusionMethod | None = None
    max_rows: int = DEFAULT_MAX_ROWS
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    temperature: float = 0.0
    seed: int | None = None
    strict: bool = False

    def __post_init__(self) -> None:
        if self.max_rows < 1:
            raise ValueError("max rows must be at least 1")
        if self.max_new_tokens < 1:
            raise ValueError("max new tokens must be at least 1")
        if self.temperature < 0:
            raise ValueError("temperature must not be negative")


@dataclass(frozen=True, slots=True)
class GeneratedAnswer:
    """Generated text; ``complete`` is False when generation stopped at a length limit mid-text."""

    text: str
    decode: dict[str, Any] = field(default_factory=dict)
    complete: bool = True


def source_path(row: EvidenceRow) -> str:
    """The project-relative path of a row's source (its canonical URI without the scheme)."""
    uri = row.source.canonical_uri
    return uri.removeprefix("file:") if uri.startswith("file:") else row.source.canonical_path or uri


@dataclass(frozen=True, slots=True)
class Citation:
    evidence_id: str
    number: int | None
    source_path: str
    locator: str
    revision: str

    def to_json(self) -> dict[str, Any]:
        return {
            "evidenceId": self.evidence_id,
            "evidenceNumber": self.number,
            "sourcePath": self.source_path,
            "locator": self.locator,
            "revision": self.revision,
        }


@dataclass(frozen=True, slots=True)
class AnsweredClaim:
    claim_id: str
    text: str
    status: ClaimOutcome
    importance: str
    claim_class: str
    citation_mode: str
    citations: tuple[Citation, ...]
    notes: str
    # The verifier's support score in [0, 1] (None when it gives none) and the checks behind it.
    support_score: float | None = None
    score_reasons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "claimId": self.claim_id,
            "text": self.text,
            "status": self.status,
            "importance": self.importance,
            "claimClass": self.claim_class,
            "citationMode": self.citation_mode,
            "citations": [citation.to_json() for citation in self.citations],
            "notes": self.notes,
            "supportScore": None if self.support_score is None else round(self.support_score, 4),
            "scoreReasons": list(self.score_reasons),
        }


@dataclass(frozen=True)
class AnswerResult:
    question: str
    generated_text: str
    answer: str
    claims: tuple[AnsweredClaim, ...]
    packet: EvidencePacket
    decode: dict[str, Any]
    timings_ms: dict[str, float]
    # What selection chose, how the answer was composed, and the responsiveness check.
    selection: dict[str, Any] = field(default_factory=dict)

    @property
    def packet_id(self) -> str:
        return self.packet.packet_id

    @property
    def verdict(self) -> Verdict:
        return self.packet.verification.verdict

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "claims": [claim.to_json() for claim in self.claims],
            "verdict": {
                "verdict": self.verdict,
                "reasons": list(self.packet.verification.verdict_reasons),
            },
            "packetId": self.packet_id,
            "packet": self.packet.to_json(),
            "decode": self.decode,
            "selection": self.selection,
        }


__all__ = [
    "DEFAULT_MAX_NEW_TOKENS",
    "DEFAULT_MAX_ROWS",
    "AnswerOptions",
    "AnswerResult",
    "AnsweredClaim",
    "Citation",
    "GeneratedAnswer",
    "source_path",
]
