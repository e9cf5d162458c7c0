"""One claim against every passage read for it → which rows support it, which contradict it,
and the claim status those judgements allow.

Pure: the caller applies the outcome (promoting rows, recording conflicts) through the
evidence state machine; nothing here changes a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from akm.verify.judgement import ClaimVerifier, SupportJudgement

ClaimStatus = Literal["supported", "conflicted", "unsupported"]
_EXCERPT_CHARS = 160


@dataclass(frozen=True, slots=True)
class RowJudgement:
    """A verifier's judgement of one claim against the passage of one evidence row."""

    row_id: str
    judgement: SupportJudgement


@dataclass(frozen=True, slots=True)
class ClaimAssessment:
    """All row judgements for one claim, and the status they allow.

    ``status``: "conflicted" when any read passage contradicts the claim (whether or not
    another supports it), "supported" when at least one supports it and none contradicts,
    otherwise "unsupported".
    """

    claim_id: str
    status: ClaimStatus
    judgements: tuple[RowJudgement, ...]

    @property
    def supporting_row_ids(self) -> tuple[str, ...]:
        return tuple(item.row_id for item in self.judgements if item.judgement.label == "supported")

    @property
    def contradicting_row_ids(self) -> tuple[str, ...]:
        return tuple(item.row_id for item in self.judgements if item.judgement.label == "contradicted")


def assess_claim(
    claim_id: str, claim_text: str, passages: Mapping[str, str], verifier: ClaimVerifier
) -> ClaimAssessment:
    """Judge ``claim_text`` against each row's passage (``passages``: row id → directly read text)."""
    judgements = tuple(
        RowJudgement(row_id, verifier.verify(claim_text, text)) for row_id, text in passages.items()
    )
    labels = {item.judgement.label for item in judgements}
    status: ClaimStatus
    if "contradicted" in labels:
        status = "conflicted"
    elif "supported" in labels:
        status = "supported"
    else:
        status = "unsupported"
    return ClaimAssessment(claim_id, status, judgements)


def support_note(judgement: SupportJudgement, passage: str) -> str:
    """The note recorded with a claim-supported transition: which check passed, and the span quoted."""
    if judgement.span is None:
        return f"{judgement.label} ({judgement.decided_by}): {judgement.note}"
    start, end = judgement.span
    excerpt = " ".join(passage[start:end].split())
    if len(excerpt) > _EXCERPT_CHARS:
        excerpt = excerpt[: _EXCERPT_CHARS - 1].rstrip() + "…"
    return f"{judgement.label} ({judgement.decided_by}) by span {start}-{end}: “{excerpt}”; {judgement.note}"
