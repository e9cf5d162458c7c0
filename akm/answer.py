"""One grounded answer: retrieval → fusion → direct read → prompt → speculative decoding →
claims → verification → packet → one store transaction.

This is the only module that uses both the evidence plane and the ``decoding`` package. The
boundary between them is narrow on purpose: the decoder receives a prompt built from directly
read excerpts and returns text plus decode statistics. The statistics are stored beside the
packet, linked by its ID, and never reach an evidence row, a claim or a verdict: whether a
draft token was accepted says nothing about whether a claim is true.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from akm.claims import extract_claims, sentence_spans, strip_citations
from akm.contract.ids import packet_id as make_packet_id
from akm.contract.ids import utc_now_iso
from akm.contract.models import EvidencePacket, EvidenceRow, FusionMethod, Verdict
from akm.direct_read import (
    DirectReadOutcome,
    direct_read,
)
from akm.embedding import Embedder
from akm.fusion import FusionResult, FusionSettings, expand_winners, fuse, store_neighbours
from akm.manifest import Manifest
from akm.packet import assemble_packet, important_claim_classes, record_history
from akm.retrieval.orchestrate import retrieve
from akm.source_readers import RootReaders
from akm.store import EvidenceStore, Rejection
from akm.support import (
    ClaimAssessment,
    ClaimOutcome,
    ReadAttempt,
    ReadEvidence,
    SupportResult,
    apply_support,
    direct_read_queue,
)
from akm.verify import ClaimVerifier, LexicalClaimVerifier
from decoding.drafters import CompositeDrafter, Drafter, EvidenceDrafter, ModelDrafter, PromptLookupDrafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder

DEFAULT_MAX_ROWS = 3
DEFAULT_MAX_NEW_TOKENS = 96
PROMPT_EXCERPT_CHARS = 700
ANSWER_ACTOR = "akm.answer"
# A 135M-parameter model follows short instructions best and copies well when the question
# comes first and the instruction to quote comes last, right before it answers.
SYSTEM_PROMPT = "You are a precise assistant. Quote the evidence."
ANSWER_INSTRUCTION = (
    "Answer the question with one sentence copied from the evidence above, then its number like [E1]."
)


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
class EvidencePrompt:
    """The generator's whole input: instructions, question and the numbered excerpts."""

    question: str
    system: str
    user: str
    passages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GeneratedAnswer:
    """Generated text; ``complete`` is False when generation stopped at a length limit mid-text."""

    text: str
    decode: dict[str, Any] = field(default_factory=dict)
    complete: bool = True


_HEADING_LINE = re.compile(r"^[ \t]*(?:\[E\d+\][ \t]*)?#{1,6}[ \t].*$", re.MULTILINE)
# The prompt's own labels, which a small model sometimes repeats before answering.
_QUESTION_ECHO = re.compile(r"^Question\s*:", re.IGNORECASE)
_ANSWER_LABEL = re.compile(r"^Answer\s*:\s*", re.IGNORECASE)
_FINISHED = re.compile(r"[.!?][\"'”’)\]]*(?:\s*\[[^\]]*\])*\s*$")


def tidy_answer(text: str, *, complete: bool = True) -> str:
    """The answer as presented and checked: heading lines echoed from the evidence and an echoed
    question dropped, each
    repeated sentence kept once, and, when generation was cut off, the unfinished last sentence dropped.

    Small models repeat themselves and echo headings; neither adds a claim worth checking.
    """
    body = _HEADING_LINE.sub("", text)
    spans = sentence_spans(body)
    kept: list[str] = []
    seen: set[str] = set()
    for index, span in enumerate(spans):
        sentence = _ANSWER_LABEL.sub("", span.slice(body).strip())
        if _QUESTION_ECHO.match(sentence):
            continue
        key = " ".join(strip_citations(sentence).lower().split())
        if not key or key in seen:
            continue
        if not complete and index == len(spans) - 1 and not _FINISHED.search(sentence):
            continue
        seen.add(key)
        kept.append(" ".join(sentence.split()))
    # An unfinished sentence stays a block of its own so it cannot absorb the next sentence.
    joined = ""
    for sentence in kept:
        separator = " " if not joined or _FINISHED.search(joined) else "\n\n"
        joined = f"{joined}{separator}{sentence}" if joined else sentence
    return joined


class AnswerGenerator(Protocol):
    """Turns an evidence prompt into answer text plus decode statistics."""

    def generate(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> GeneratedAnswer: ...


def build_prompt(question: str, evidence: Sequence[ReadEvidence]) -> EvidencePrompt:
    """The question, the numbered excerpts ([E1]...) of directly read passages only, the instruction."""
    passages = tuple(_bounded_excerpt(item.passage) for item in evidence)
    blocks = [f"[E{item.number}] {text}" for item, text in zip(evidence, passages, strict=True)]
    body = "\n\n".join(blocks) if blocks else "(no passage could be read)"
    user = f"Question: {question}\n\n{body}\n\n{ANSWER_INSTRUCTION}"
    return EvidencePrompt(question=question, system=SYSTEM_PROMPT, user=user, passages=passages)


def source_path(row: EvidenceRow) -> str:
    """The project-relative path of a row's source (its canonical URI without the scheme)."""
    uri = row.source.canonical_uri
    return uri.removeprefix("file:") if uri.startswith("file:") else row.source.canonical_path or uri


def _bounded_excerpt(text: str) -> str:
    if len(text) <= PROMPT_EXCERPT_CHARS:
        return text.strip()
    cut = text[:PROMPT_EXCERPT_CHARS]
    # End at a line or sentence boundary so the model never sees half a statement.
    boundary = max(cut.rfind("\n"), cut.rfind(". "))
    return (cut[: boundary + 1] if boundary > PROMPT_EXCERPT_CHARS // 2 else cut).strip()


class SpeculativeAnswerGenerator:
    """The target model behind the speculative decoder, drafting from the evidence and the prompt."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        cost_cache_dir: Path | None = None,
        max_draft: int = 8,
        model_drafter: ModelDrafter | None = None,
    ) -> None:
        from decoding.models import chat_prompt_ids

        self._chat_prompt_ids = chat_prompt_ids
        self.tokenizer = tokenizer
        # Optional (settings.draft_model): asked beside the lookups every step; the composite keeps
        # whichever proposal is expected to have the most tokens accepted.
        self.model_drafter = model_drafter
        self.decoder = SpeculativeDecoder(
            model, tokenizer, config=DecodeConfig(max_draft=max_draft, cost_cache_dir=cost_cache_dir)
        )

    def generate(
        self,
        prompt: EvidencePrompt,
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        on_text: Callable[[str], None] | None = None,
    ) -> GeneratedAnswer:
        """Decode an answer; ``on_text`` receives each committed text increment as it appears."""
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
        prompt_ids = self._chat_prompt_ids(self.tokenizer, messages)
        passage_ids = [
            [int(token) for token in self.tokenizer(passage, add_special_tokens=False)["input_ids"]]
            for passage in prompt.passages
            if passage
        ]
        drafters: list[Drafter] = [PromptLookupDrafter()]
        if passage_ids:
            drafters.insert(0, EvidenceDrafter(passage_ids))
        if self.model_drafter is not None:
            drafters.append(self.model_drafter)
        # A drafter per call: the excerpts belong to this request only.
        stream = self.decoder.stream(
            prompt_ids,
            max_new_tokens,
            temperature=temperature,
            seed=0 if seed is None else seed,
            drafter=CompositeDrafter(drafters),
        )
        for delta in stream:
            if on_text is not None:
                on_text(delta)
        result = stream.result
        stats = result.stats
        decode = stats.to_dict()
        decode["finish_reason"] = str(result.finish_reason)
        decode["drafters"] = [drafter.name for drafter in drafters]
        decode["speedup_by_calls"] = stats.new_tokens / stats.target_calls if stats.target_calls else None
        decode["estimated_speedup"] = self._estimated_speedup(
            stats.new_tokens, stats.target_calls, stats.proposed
        )
        complete = str(result.finish_reason) not in ("length", "context_window")
        return GeneratedAnswer(text=result.text, decode=decode, complete=complete)

    def _estimated_speedup(self, new_tokens: int, target_calls: int, proposed: int) -> float | None:
        """Plain decoding makes one single-token call per token; these calls verified ``proposed``
        drafts in all, each call costing the measured verify-cost ratio of its mean draft length.

        Only the curve's ratios are used, not its absolute seconds, so a uniformly busy machine
        at measurement time does not skew the estimate.
        """
        if target_calls <= 0 or new_tokens <= 0:
            return None
        # Measured (and cached) by the decoder before its first adaptive draft.
        ratio = self.decoder.cost_curve.ratio(round(proposed / target_calls))
        return new_tokens / (target_calls * ratio)


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
        }


class _Clock:
    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.timings_ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        begun = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[name] = round((time.perf_counter() - begun) * 1000.0, 2)

    def total_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0


def answer(
    question: str,
    options: AnswerOptions | None = None,
    *,
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    generator: AnswerGenerator,
    verifier: ClaimVerifier | None = None,
    task_id: str | None = None,
) -> AnswerResult:
    """Answer ``question`` from directly read evidence and store everything in one transaction.

    Raises ``QueryError`` / ``UnknownLaneError`` for bad input before anything is searched,
    and ``InvalidPacketError`` (nothing stored) if the packet would violate the contract.
    """
    options = options or AnswerOptions()
    verifier = verifier or LexicalClaimVerifier()
    clock = _Clock()
    task = task_id or f"ask:{uuid.uuid4().hex}"

    with clock.stage("retrieval"):
        retrieval = retrieve(question, store, manifest, embedder, lanes=options.lanes, record=False)
        overrides: dict[str, object] = {"max_rows": options.max_rows}
        if options.fusion_method is not None:
            overrides["method"] = options.fusion_method
        fused = merged_duplicates(
            fuse(retrieval.candidates, FusionSettings.from_manifest(manifest, **overrides))
        )
        winners = expand_winners(fused.winners, store_neighbours(store), manifest)
    packet_id = make_packet_id(task, retrieval.query, manifest.manifest_version, 1)
    rejections = [
        Rejection(
            stage="fusion",
            reason=excluded.reason,
            query=retrieval.query,
            result_set_id=retrieval.result_set_id,
            packet_id=packet_id,
            source_id=None if excluded.reason == "denied" else excluded.row.source.source_id,
            evidence_id=None if excluded.reason == "denied" else excluded.row.evidence_id,
            detail={"notes": excluded.notes}
            if excluded.reason == "denied"
            else {
                "notes": excluded.notes,
                "lane": excluded.row.retrieval.lane,
                "locator": excluded.row.scope.locator.value,
            },
        )
        for excluded in fused.excluded
    ]

    with clock.stage("direct_read"):
        readers = RootReaders(manifest)
        outcomes = [direct_read(row, readers.for_row(row)) for row in winners]
    evidence, others, attempts = _read_evidence(outcomes)
    for outcome in outcomes:
        if outcome.status != "direct-read":
            rejections.append(
                Rejection(
                    stage="direct-read",
                    reason=outcome.reason,
                    query=retrieval.query,
                    result_set_id=retrieval.result_set_id,
                    packet_id=packet_id,
                    source_id=outcome.row.source.source_id,
                    evidence_id=outcome.row.evidence_id,
                    detail={
                        "state": outcome.row.verification.state,
                        "locator": outcome.row.scope.locator.value,
                    },
                )
            )

    prompt = build_prompt(retrieval.query, evidence)
    with clock.stage("decoding"):
        generated = generator.generate(
            prompt, max_new_tokens=options.max_new_tokens, temperature=options.temperature, seed=options.seed
        )
    text = tidy_answer(generated.text, complete=generated.complete)

    with clock.stage("verification"):
        claims = extract_claims(text, important_claim_classes(manifest))
        support = apply_support(claims, evidence, verifier, by=ANSWER_ACTOR, extra_rows=others)
        queue = direct_read_queue(attempts, support.assessments)
        input_bytes = sum(len(passage.encode("utf-8")) for passage in prompt.passages)
        packet = assemble_packet(
            manifest=manifest,
            task_id=task,
            query=retrieval.query,
            normalized_intent=" ".join(retrieval.query.lower().split()),
            query_class=retrieval.query_class.value,  # type: ignore[arg-type]
            lanes_run=retrieval.lane_runs,
            fusion=fused.fusion,
            rows=support.rows,
            claims=[assessment.record for assessment in support.assessments],
            conflicts=support.conflicts,
            missing_evidence=support.missing_evidence,
            direct_read_queue=queue,
            checksum_mismatches=[attempt.row_id for attempt in attempts if attempt.status == "stale"],
            measured_metrics=_measured_metrics(retrieval.candidates, fused, support, input_bytes, clock),
        )
    if packet.packet_id != packet_id:
        raise RuntimeError("packet ID differs from the one its rejections were logged under")

    decode = dict(generated.decode)
    with clock.stage("storage"):
        save_answer(
            store,
            packet,
            support=support,
            lane_result_set=retrieval.result_set_id,
            rejections=rejections,
            decode_record={**decode, "timings_ms": clock.timings_ms, "question": question},
        )
    decode["timings_ms"] = dict(clock.timings_ms)
    decode["total_ms"] = round(clock.total_ms(), 2)
    answered = tuple(_answered(assessment, support, evidence) for assessment in support.assessments)
    presented = (
        " ".join(claim.text for claim in answered if claim.status == "supported") if options.strict else text
    )
    return AnswerResult(
        question=question,
        generated_text=text,
        answer=presented,
        claims=tuple(claim for claim in answered if claim.status == "supported")
        if options.strict
        else answered,
        packet=packet,
        decode=decode,
        timings_ms=dict(clock.timings_ms),
    )


def merged_duplicates(result: FusionResult) -> FusionResult:
    """Drop "duplicate" exclusions of a row that is itself a winner.

    Two lanes that return the same chunk produce one evidence ID; dedup keeps one copy as the
    winner (its contribution records both lanes' ranks) and lists the other copy as excluded,
    which would name the winner's ID among the excluded rows. The merge is already recorded in
    the contribution's ``laneRanks``.
    """
    winners = {row.evidence_id for row in result.winners}
    kept = tuple(
        excluded
        for excluded in result.excluded
        if not (excluded.reason == "duplicate" and excluded.row.evidence_id in winners)
    )
    if len(kept) == len(result.excluded):
        return result
    fusion = result.fusion.model_copy(update={"excluded_rows": tuple(item.record() for item in kept)})
    return FusionResult(fusion=fusion, winners=result.winners, excluded=kept)


def _read_evidence(
    outcomes: Sequence[DirectReadOutcome],
) -> tuple[list[ReadEvidence], list[EvidenceRow], list[ReadAttempt]]:
    evidence: list[ReadEvidence] = []
    others: list[EvidenceRow] = []
    attempts: list[ReadAttempt] = []
    for outcome in outcomes:
        attempts.append(
            ReadAttempt(row_id=outcome.row.evidence_id, status=outcome.status, reason=outcome.reason)
        )
        if outcome.status == "direct-read" and outcome.read is not None:
            evidence.append(
                ReadEvidence(number=len(evidence) + 1, row=outcome.row, passage=outcome.read.text)
            )
        else:
            others.append(outcome.row)
    return evidence, others, attempts


def _measured_metrics(
    candidates: Sequence[EvidenceRow],
    fused: FusionResult,
    support: SupportResult,
    input_bytes: int,
    clock: _Clock,
) -> dict[str, int | float | None]:
    gated = {"denied", "out-of-scope"}
    ineligible = sum(1 for excluded in fused.excluded if excluded.reason in gated)
    eligible = [row for row in candidates if row.scope.scope_decision not in gated]
    claims = support.assessments
    cited = sum(1 for assessment in claims if assessment.referenced_row_ids)
    return {
        "input_candidate_count": len(candidates),
        "eligible_count": max(len(candidates) - ineligible, 0),
        "deduplicated_source_count": len({row.source.source_id for row in eligible}),
        "citation_coverage": round(cited / len(claims), 4) if claims else None,
        "authority_scope_error_count": sum(1 for row in fused.winners if row.scope.scope_decision in gated),
        # With no passage read, nothing was put before the model: not measured, so null.
        "input_bytes": input_bytes or None,
        # A rough count (4 bytes per token); the decoder's own token count stays out of evidence.
        "estimated_context_tokens": (input_bytes + 3) // 4 or None,
        "total_latency_ms": round(clock.total_ms(), 2),
    }


def _answered(
    assessment: ClaimAssessment, support: SupportResult, evidence: Sequence[ReadEvidence]
) -> AnsweredClaim:
    numbers = {item.row.evidence_id: item.number for item in evidence}
    rows = {row.evidence_id: row for row in support.rows}
    citations = tuple(
        Citation(
            evidence_id=row_id,
            number=numbers.get(row_id),
            source_path=source_path(rows[row_id]),
            locator=rows[row_id].scope.locator.value,
            revision=rows[row_id].source.version.revision,
        )
        for row_id in assessment.support_row_ids
    )
    return AnsweredClaim(
        claim_id=assessment.claim_id,
        text=assessment.claim.text,
        status=assessment.outcome,
        importance=assessment.claim.importance,
        claim_class=assessment.claim.claim_class,
        citation_mode=assessment.citation,
        citations=citations,
        notes=assessment.record.notes,
    )


def save_answer(
    store: EvidenceStore,
    packet: EvidencePacket,
    *,
    support: SupportResult,
    lane_result_set: str,
    rejections: Sequence[Rejection],
    decode_record: Mapping[str, Any],
) -> None:
    """Packet, rows, history events, claims with the verifier's judgements, lane runs,
    rejections and decode statistics: all or nothing."""
    document = packet.to_json()
    referenced = {(claim.claim_id, row_id) for claim in packet.claims for row_id in claim.support_row_ids}
    with store.transaction() as tx:
        tx.save_rows(packet.evidence_rows)
        tx.save_packet(document)
        for judgement in support.judgements:
            if (judgement.claim_id, judgement.evidence_id) in referenced:
                tx.record_claim_support(
                    packet_id=packet.packet_id,
                    claim_id=judgement.claim_id,
                    evidence_id=judgement.evidence_id,
                    label=judgement.label,
                    note=judgement.note,
                    detail=judgement.to_json(),
                )
        record_history(tx, packet.evidence_rows, packet.packet_id)
        for run in packet.lanes_run:
            tx.record_lane_run(
                result_set_id=lane_result_set,
                lane=run.lane,
                query=run.query,
                status=run.status,
                parameters=run.parameters,
                candidate_count=run.result_count,
                latency_ms=run.latency_ms,
                skip_reason=run.skip_reason,
                error=run.error,
                packet_id=packet.packet_id,
            )
        tx.record_rejections(rejections)
        tx.save_decode_stats(packet.packet_id, {**decode_record, "recordedAt": utc_now_iso()})


__all__ = [
    "AnswerGenerator",
    "AnswerOptions",
    "AnswerResult",
    "AnsweredClaim",
    "Citation",
    "EvidencePrompt",
    "GeneratedAnswer",
    "SpeculativeAnswerGenerator",
    "answer",
    "build_prompt",
    "merged_duplicates",
    "save_answer",
    "source_path",
    "tidy_answer",
]
