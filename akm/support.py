"""Applying claim-support judgements to directly read evidence rows.

The verifier judges every claim against every directly read passage. From those judgements:

* only a ``supported`` judgement on a ``direct-read`` row promotes that row to
  ``claim-supported``, for that claim ID only, through the state machine, with a support note
  that quotes the aligned span of the passage (E4);
* a claim that one row supports while another contradicts it opens a ``factual`` conflict:
  the claim is ``conflicted`` and every row involved becomes ``conflicted`` (E10), so neither
  side wins silently. The rows of one document revision are read as one text that does not
  contradict itself: a row that seems to contradict a claim another row of the same document
  supports speaks of another case (a price and the fee for missing the appointment, Gold and
  Bronze members), so it opens no conflict and the claim's note names it;
* a claim that cites no row (or only rows that do not support it) is attributed to the rows
  the verifier's own alignment finds, and its notes say "attributed" rather than "cited";
* an unsupported important claim gets a required ``missingEvidence`` record, an unsupported
  supporting claim an optional one.

Nothing here looks at retrieval rank, fusion contribution or anything the decoder reported:
support follows from the passage text alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from akm.claims import ExtractedClaim
from akm.contract.ids import sha256_text
from akm.contract.models import (
    Claim,
    ClaimStatus,
    Conflict,
    DirectReadQueueItem,
    EvidenceRow,
    MissingEvidence,
)
from akm.contract.states import mark_conflicted, promote_to_claim_supported
from akm.verify import ClaimVerifier, SupportJudgement, SupportLabel
from akm.verify.judgement import CheckOutcome

SUPPORT_ACTOR = "akm.support"
QUOTE_LIMIT = 240

# What a user is told about a claim; "contradicted" is stored as status "unsupported" because
# the contract's claim statuses have no separate word for it (the notes say which).
ClaimOutcome = Literal["supported", "unsupported", "contradicted", "conflicted"]
Citation = Literal["cited", "attributed", "none"]
_CONTRACT_STATUS: Mapping[ClaimOutcome, ClaimStatus] = {
    "supported": "supported",
    "unsupported": "unsupported",
    "contradicted": "unsupported",
    "conflicted": "conflicted",
}


@dataclass(frozen=True, slots=True)
class ReadEvidence:
    """A directly read row, its number in the prompt ([E1] is 1) and the passage text that was read."""

    number: int
    row: EvidenceRow
    passage: str


@dataclass(frozen=True, slots=True)
class RowJudgement:
    """The verifier's verdict on one claim against one directly read row."""

    claim_id: str
    evidence_id: str
    number: int
    label: SupportLabel
    span: tuple[int, int] | None
    quote: str
    note: str
    decided_by: str
    cited: bool
    support_score: float | None = None
    checks: tuple[CheckOutcome, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "span": list(self.span) if self.span is not None else None,
            "quote": self.quote,
            "note": self.note,
            "decidedBy": self.decided_by,
            "cited": self.cited,
            "evidenceNumber": self.number,
            "supportScore": self.support_score,
            "failedChecks": [check.name for check in self.checks if not check.passed],
            "checks": [check.to_json() for check in self.checks],
        }

    @property
    def score_reasons(self) -> tuple[str, ...]:
        """The checks behind the support score in words: "roles failed: ...", "coverage passed"."""
        return tuple(
            f"{check.name} passed" if check.passed else f"{check.name} failed: {check.detail}"
            for check in self.checks
        )


@dataclass(frozen=True, slots=True)
class ClaimAssessment:
    """One claim of the answer with what the evidence says about it."""

    claim: ExtractedClaim
    outcome: ClaimOutcome
    citation: Citation
    support_row_ids: tuple[str, ...]
    contradicting_row_ids: tuple[str, ...]
    referenced_row_ids: tuple[str, ...]
    record: Claim
    # The best support score any directly read passage gave the claim (None when no passage was
    # judged or the verifier gives no score), and the checks behind it in words.
    support_score: float | None = None
    score_reasons: tuple[str, ...] = ()

    @property
    def claim_id(self) -> str:
        return self.claim.claim_id


@dataclass(frozen=True, slots=True)
class SupportResult:
    rows: tuple[EvidenceRow, ...]
    assessments: tuple[ClaimAssessment, ...]
    conflicts: tuple[Conflict, ...]
    missing_evidence: tuple[MissingEvidence, ...]
    judgements: tuple[RowJudgement, ...]

    def assessment(self, claim_id: str) -> ClaimAssessment:
        return next(item for item in self.assessments if item.claim_id == claim_id)


def quote_of(passage: str, span: tuple[int, int] | None) -> str:
    """The aligned passage text, whitespace collapsed and bounded so a note stays readable."""
    if span is None:
        return ""
    text = " ".join(passage[span[0] : span[1]].split())
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1].rstrip() + "…"


def judge_all(
    claims: Sequence[ExtractedClaim], evidence: Sequence[ReadEvidence], verifier: ClaimVerifier
) -> tuple[RowJudgement, ...]:
    """Every claim × every directly read passage (claims and passages are few per answer)."""
    judgements: list[RowJudgement] = []
    for claim in claims:
        for item in evidence:
            judgement: SupportJudgement = verifier.verify(claim.text, item.passage)
            judgements.append(
                RowJudgement(
                    claim_id=claim.claim_id,
                    evidence_id=item.row.evidence_id,
                    number=item.number,
                    label=judgement.label,
                    span=judgement.span,
                    quote=quote_of(item.passage, judgement.span),
                    note=judgement.note,
                    decided_by=judgement.decided_by,
                    cited=item.number in claim.cited_evidence,
                    support_score=judgement.support_score,
                    checks=judgement.checks,
                )
            )
    return tuple(judgements)


def _conflict_id(claim_id: str, row_ids: Sequence[str]) -> str:
    return "conflict:" + sha256_text("\n".join([claim_id, *sorted(row_ids)]))[:16]


def apply_support(
    claims: Sequence[ExtractedClaim],
    evidence: Sequence[ReadEvidence],
    verifier: ClaimVerifier,
    *,
    by: str = SUPPORT_ACTOR,
    at: str | None = None,
    extra_rows: Sequence[EvidenceRow] = (),
) -> SupportResult:
    """Judge the claims, move rows through the state machine and build the claim registry.

    ``evidence`` rows must be ``direct-read``; ``extra_rows`` (stale or rejected winners) are
    carried through unchanged so the packet keeps every winner.
    """
    for item in evidence:
        if item.row.verification.state != "direct-read":
            raise ValueError(
                f"row {item.row.evidence_id} is {item.row.verification.state}; only direct-read rows can be judged"
            )
    judgements = judge_all(claims, evidence, verifier)
    by_claim: dict[str, list[RowJudgement]] = {claim.claim_id: [] for claim in claims}
    for judgement in judgements:
        by_claim[judgement.claim_id].append(judgement)

    conflicts: list[Conflict] = []
    conflicted_rows: dict[str, list[str]] = {}
    supporting: dict[str, list[RowJudgement]] = {}
    contradicting: dict[str, list[RowJudgement]] = {}
    # Contradictions set aside as another case of the same document (see the module's docstring).
    other_cases: dict[str, list[RowJudgement]] = {}
    document = {item.row.evidence_id: _document_of(item.row) for item in evidence}
    for claim in claims:
        supports = [j for j in by_claim[claim.claim_id] if j.label == "supported"]
        supporting_documents = {document[j.evidence_id] for j in supports}
        contradictions = [j for j in by_claim[claim.claim_id] if j.label == "contradicted"]
        against = [j for j in contradictions if document[j.evidence_id] not in supporting_documents]
        other_cases[claim.claim_id] = [
            j for j in contradictions if document[j.evidence_id] in supporting_documents
        ]
        supporting[claim.claim_id], contradicting[claim.claim_id] = supports, against
        if supports and against:
            row_ids = [j.evidence_id for j in (*supports, *against)]
            conflict_id = _conflict_id(claim.claim_id, row_ids)
            conflicts.append(
                Conflict(
                    conflict_id=conflict_id,
                    topic=f"claim {claim.claim_id}: {claim.text[:200]}",
                    row_ids=tuple(dict.fromkeys(row_ids)),
                    type="factual",
                    status="open",
                    resolution="",
                    claim_ids=(claim.claim_id,),
                )
            )
            for row_id in dict.fromkeys(row_ids):
                conflicted_rows.setdefault(row_id, []).append(conflict_id)

    rows = {item.row.evidence_id: item.row for item in evidence}
    support_notes: dict[str, list[str]] = {}
    promotions: dict[str, list[str]] = {}
    assessments: list[ClaimAssessment] = []
    missing: list[MissingEvidence] = []
    for claim in claims:
        judged = by_claim[claim.claim_id]
        supports = [j for j in supporting[claim.claim_id] if j.evidence_id not in conflicted_rows]
        against = contradicting[claim.claim_id]
        in_conflict = bool(supporting[claim.claim_id]) and bool(against)
        if in_conflict:
            outcome: ClaimOutcome = "conflicted"
        elif supports:
            outcome = "supported"
        elif against:
            outcome = "contradicted"
        else:
            outcome = "unsupported"
        citation: Citation
        if outcome == "supported":
            citation = "cited" if any(j.cited for j in supports) else "attributed"
            for judgement in supports:
                promotions.setdefault(judgement.evidence_id, []).append(claim.claim_id)
                support_notes.setdefault(judgement.evidence_id, []).append(
                    f"{claim.claim_id} ({'cited' if judgement.cited else 'attributed'}): "
                    f'"{judgement.quote}" [passage {judgement.span[0] if judgement.span else 0}'
                    f"-{judgement.span[1] if judgement.span else 0}]"
                )
            referenced = tuple(j.evidence_id for j in supports)
        else:
            cited = [j for j in judged if j.cited]
            citation = "cited" if cited else ("attributed" if judged else "none")
            referenced = _referenced_rows(outcome, cited, judged, supporting[claim.claim_id], against)
        best = _best_scored(supports if outcome == "supported" else judged)
        record = Claim(
            claim_id=claim.claim_id,
            claim_text=claim.text,
            importance=claim.importance,
            claim_class=claim.claim_class,
            support_row_ids=referenced,
            status=_CONTRACT_STATUS[outcome],
            notes=_claim_note(
                claim, outcome, citation, judged, supports, against, other_cases[claim.claim_id]
            ),
        )
        assessments.append(
            ClaimAssessment(
                claim=claim,
                outcome=outcome,
                citation=citation,
                support_row_ids=tuple(j.evidence_id for j in supports) if outcome == "supported" else (),
                contradicting_row_ids=tuple(j.evidence_id for j in against),
                referenced_row_ids=referenced,
                record=record,
                support_score=best.support_score if best is not None else None,
                score_reasons=best.score_reasons if best is not None else (),
            )
        )
        if outcome in ("unsupported", "contradicted"):
            important = claim.importance == "important"
            missing.append(
                MissingEvidence(
                    missing_id=f"missing:{claim.claim_id}",
                    claim_ids=(claim.claim_id,),
                    description=(
                        f"no directly read passage supports the {'important' if important else 'supporting'} "
                        f"{claim.claim_class} claim {claim.claim_id}"
                        + (" (a passage contradicts it)" if outcome == "contradicted" else "")
                    ),
                    required=important,
                    status="open",
                )
            )

    for row_id, claim_ids in promotions.items():
        rows[row_id] = promote_to_claim_supported(
            rows[row_id], claim_ids, by=by, support_note="; ".join(support_notes[row_id]), at=at
        )
    for row_id, conflict_ids in conflicted_rows.items():
        rows[row_id] = mark_conflicted(
            rows[row_id],
            conflict_ids,
            by=by,
            reason="passages disagree about a claim: " + ", ".join(conflict_ids),
            at=at,
        )
    ordered = tuple(rows[item.row.evidence_id] for item in evidence) + tuple(extra_rows)
    return SupportResult(
        rows=ordered,
        assessments=tuple(assessments),
        conflicts=tuple(conflicts),
        missing_evidence=tuple(missing),
        judgements=judgements,
    )


def _document_of(row: EvidenceRow) -> tuple[str, str]:
    """The document revision a row was read from."""
    return row.source.source_id, row.source.version.revision


def _best_scored(judgements: Sequence[RowJudgement]) -> RowJudgement | None:
    """The judgement with the highest support score (the first one when none has a score)."""
    scored = [j for j in judgements if j.support_score is not None]
    if scored:
        return max(scored, key=lambda j: j.support_score or 0.0)
    return judgements[0] if judgements else None


def _referenced_rows(
    outcome: ClaimOutcome,
    cited: Sequence[RowJudgement],
    judged: Sequence[RowJudgement],
    supports: Sequence[RowJudgement],
    against: Sequence[RowJudgement],
) -> tuple[str, ...]:
    """Rows an unsupported claim points at: its conflict, its contradiction, its citations,
    or else the row the verifier aligned best (for the audit trail, never as support)."""
    if outcome == "conflicted":
        return tuple(dict.fromkeys(j.evidence_id for j in (*supports, *against)))
    if outcome == "contradicted":
        return tuple(dict.fromkeys(j.evidence_id for j in against))
    if cited:
        return tuple(dict.fromkeys(j.evidence_id for j in cited))
    aligned = [j for j in judged if j.span is not None]
    return (aligned[0].evidence_id,) if aligned else ()


def _claim_note(
    claim: ExtractedClaim,
    outcome: ClaimOutcome,
    citation: Citation,
    judged: Sequence[RowJudgement],
    supports: Sequence[RowJudgement],
    against: Sequence[RowJudgement],
    other_cases: Sequence[RowJudgement] = (),
) -> str:
    cited_numbers = ", ".join(f"E{number}" for number in claim.cited_evidence) or "nothing"
    head = f"cites {cited_numbers}; span {claim.start}-{claim.end} of the answer"
    if outcome == "supported":
        how = "cited" if citation == "cited" else "attributed by the verifier's alignment (not cited)"
        detail = "; ".join(f"E{j.number} supports: {j.note}" for j in supports)
        aside = "".join(
            f"; E{j.number}, of the same document, read as another case: {j.note}" for j in other_cases
        )
        return f"{head}; supported, {how}: {detail}{aside}"
    if outcome == "conflicted":
        detail = "; ".join(f"E{j.number} {j.label}: {j.note}" for j in (*supports, *against))
        return f"{head}; conflicted: directly read passages disagree: {detail}"
    if outcome == "contradicted":
        detail = "; ".join(f"E{j.number} contradicts: {j.note}" for j in against)
        return f"{head}; contradicted ({citation}): {detail}"
    if not judged:
        return f"{head}; unsupported: no passage was directly read"
    best = next((j for j in judged if j.cited), judged[0])
    return f"{head}; unsupported ({citation}): E{best.number} {best.label}: {best.note}"


@dataclass(frozen=True, slots=True)
class ReadAttempt:
    """What happened when one fusion winner was re-read: its row afterwards and the outcome."""

    row_id: str
    status: Literal["direct-read", "stale", "rejected"]
    reason: str
    completion_row_id: str | None = None


def direct_read_queue(
    attempts: Sequence[ReadAttempt], assessments: Sequence[ClaimAssessment]
) -> tuple[DirectReadQueueItem, ...]:
    """One queue item per fusion winner: completed when it was read, failed when it was not.

    An item is required when an important claim relies on its row, because
    ``directReadRequiredForImportantClaims`` makes that read a precondition of the claim.
    """
    relying: dict[str, list[ClaimAssessment]] = {}
    for assessment in assessments:
        for row_id in assessment.referenced_row_ids:
            relying.setdefault(row_id, []).append(assessment)
    items: list[DirectReadQueueItem] = []
    for index, attempt in enumerate(attempts, start=1):
        claims = relying.get(attempt.row_id, []) + relying.get(attempt.completion_row_id or "", [])
        claim_ids = tuple(dict.fromkeys(item.claim_id for item in claims))
        important = any(item.claim.importance == "important" for item in claims)
        completed = attempt.status == "direct-read" or attempt.completion_row_id is not None
        items.append(
            DirectReadQueueItem(
                queue_id=f"drq:{index}",
                row_id=attempt.row_id,
                claim_ids=claim_ids,
                priority="high" if important else "normal",
                reason=f"fusion winner: its locator must be re-read before a claim may rely on it ({attempt.reason})",
                required=important,
                status="completed" if completed else "failed",
                completion_row_id=(attempt.completion_row_id or attempt.row_id) if completed else None,
            )
        )
    return tuple(items)


__all__ = [
    "SUPPORT_ACTOR",
    "ClaimAssessment",
    "ClaimOutcome",
    "ReadAttempt",
    "ReadEvidence",
    "RowJudgement",
    "SupportResult",
    "apply_support",
    "direct_read_queue",
    "judge_all",
    "quote_of",
]
