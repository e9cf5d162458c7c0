"""One grounded answer: retrieval → fusion → direct read → selection → generation → claims →
verification → responsiveness → packet → one store transaction.

The orchestration does the I/O around the pure steps: it reads the store and the sources, asks
the generator (any :class:`AnswerGenerator`; the speculative decoder lives behind
``akm.answer.generation``, the one module that imports ``decoding``), and writes everything in one
transaction.

How the answer is composed (see docs/answers.md):

1. The directly read passages that bear on the question are kept; the rest are recorded as
   selection rejections. The answer-bearing sentence(s) are chosen by ``akm.answer.selection``.
2. When even the best sentence does not share the question's focus, nothing is generated: the
   answer says plainly that no passage in scope answers the question (HOLD).
3. Otherwise the generator writes a short answer from those sentences only. Its claims are
   verified against the kept passages.
4. When no claim of the generated text is both supported and responsive, or the generated text
   drops much of what the chosen sentences say, the answer quotes the answer-bearing
   sentence(s) verbatim instead (an exact substring of a direct-read passage), and
   the packet records that the generated text was set aside.
5. PASS needs every important claim supported and a responsive supported claim; the
   responsiveness check and its reason stand among the verdict reasons.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from opentelemetry import trace
from opentelemetry.trace import Span

from akm import tracing
from akm.answer.prompt import AnswerGenerator, build_prompt, run_to_end
from akm.answer.responsiveness import (
    NO_ANSWER_REASON,
    ClaimInContext,
    Responsiveness,
    check_responsiveness,
)
from akm.answer.results import (
    AnsweredClaim,
    AnswerOptions,
    AnswerResult,
    Citation,
    GeneratedAnswer,
    source_path,
)
from akm.answer.selection import (
    Selection,
    content_terms,
    document_title,
    heading_words,
    select_evidence,
    text_before,
)
from akm.answer.tidy import drop_non_answers, tidy_answer
from akm.bundle import ClaimJudgement, PacketBundle, fresh_rows, save_packet_bundle
from akm.claims import (
    TextSpan,
    asked_before,
    claim_text,
    definition_term,
    extract_claims,
    is_cell_line,
    is_field_entry,
    is_line_entry,
    is_list_item,
    is_statement,
    is_table_row,
    lead_in,
    lead_in_before,
    line_cells,
    referred_before,
    row_header,
    said_before,
    table_header,
)
from akm.contract.models import EvidencePacket, EvidenceRow, LaneRun
from akm.direct_read import DirectReadOutcome, direct_read
from akm.embedding import Embedder
from akm.fusion import ExcludedCandidate, FusionResult, FusionSettings, expand_winners, fuse
from akm.manifest import Manifest
from akm.packet import PACKET_VERIFIER, assemble_packet, important_claim_classes
from akm.retrieval.neighbours import store_neighbours
from akm.retrieval.orchestrate import retrieve
from akm.source_readers import RootReaders
from akm.store import EvidenceStore, Rejection
from akm.support import (
    ClaimAssessment,
    ReadAttempt,
    ReadEvidence,
    SupportResult,
    apply_support,
    direct_read_queue,
)
from akm.verify import ClaimVerifier, LexicalClaimVerifier

ANSWER_ACTOR = "akm.answer"
NO_ANSWER_TEXT = "No passage in scope answers the question."
# The best sentence must share at least this much of the question's focus (with its passage)
# for anything to be generated at all.
ABSTAIN_FOCUS = 0.5
ABSTAIN_SCORE = 0.45
# A generated answer must keep this share of the chosen sentences' content terms to stand.
KEEP_GENERATED_COVERAGE = 0.8
Composition = Literal["generated", "quoted", "abstained"]


@dataclass(frozen=True, slots=True)
class _Composed:
    """The answer text that will be presented and checked, how it came about, and its checks."""

    text: str
    composition: Composition
    support: SupportResult
    claims_checked: int
    responsiveness: Responsiveness


# Span names of the timed stages (see akm.tracing); a stage not listed is traced as akm.<stage>.
_SPAN_NAMES = {"decoding": "akm.generation"}


class _Clock:
    """Times each stage (``timings_ms``) and traces it as a span under ``root``."""

    def __init__(self, root: Span) -> None:
        self.started = time.perf_counter()
        self.timings_ms: dict[str, float] = {}
        self.root = root

    @contextmanager
    def stage(self, name: str) -> Iterator[Span]:
        begun = time.perf_counter()
        try:
            with tracing.span(_SPAN_NAMES.get(name, f"akm.{name}"), self.root) as opened:
                yield opened
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
    actor: str | None = None,
) -> AnswerResult:
    """Answer ``question`` from directly read evidence and store everything in one transaction.

    Raises ``QueryError`` / ``UnknownLaneError`` for bad input before anything is searched,
    and ``InvalidPacketError`` (nothing stored) if the packet would violate the contract.
    """
    return run_to_end(
        answer_stream(
            question,
            options,
            store=store,
            manifest=manifest,
            embedder=embedder,
            generator=generator,
            verifier=verifier,
            task_id=task_id,
            actor=actor,
        )
    )


def answer_stream(
    question: str,
    options: AnswerOptions | None = None,
    *,
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    generator: AnswerGenerator,
    verifier: ClaimVerifier | None = None,
    task_id: str | None = None,
    actor: str | None = None,
) -> Generator[str, None, AnswerResult]:
    """:func:`answer` as a generator: yields the draft's text increments as the generator
    commits them (nothing in them has been checked), then returns the :class:`AnswerResult`.

    Storage happens after the last increment; closing the generator earlier (or an exception
    raised by the generator) stores nothing. ``actor`` (an API key's ``key:<id>``) is recorded as
    ``by`` of the claim-support events and as the packet's ``verifiedBy``; without it, the
    answer's and the packet verifier's own names.
    """
    options = options or AnswerOptions()
    verifier = verifier or LexicalClaimVerifier()
    root = tracing.start_span("akm.answer", attributes={"akm.question_chars": len(question)})
    try:
        result = yield from _answer_stream(
            question, options, store, manifest, embedder, generator, verifier, task_id, _Clock(root), actor
        )
    except BaseException as error:
        root.record_exception(error)
        root.set_status(trace.Status(trace.StatusCode.ERROR, str(error)))
        raise
    else:
        root.set_attributes({"akm.packet_id": result.packet_id, "akm.verdict": result.verdict})
        return result
    finally:
        root.end()


def _answer_stream(
    question: str,
    options: AnswerOptions,
    store: EvidenceStore,
    manifest: Manifest,
    embedder: Embedder | None,
    generator: AnswerGenerator,
    verifier: ClaimVerifier,
    task_id: str | None,
    clock: _Clock,
    actor: str | None = None,
) -> Generator[str, None, AnswerResult]:
    task = task_id or f"ask:{uuid.uuid4().hex}"

    with clock.stage("retrieval") as retrieval_span:
        retrieval = retrieve(question, store, manifest, embedder, lanes=options.lanes, record=False)
        for run in retrieval.lane_runs:
            if run.started_at is not None and run.latency_ms is not None:
                tracing.record_finished(
                    "akm.lane",
                    retrieval_span,
                    run.started_at,
                    run.latency_ms,
                    {
                        "akm.lane": run.lane,
                        "akm.lane.status": run.status,
                        "akm.lane.results": run.result_count,
                    },
                )
        overrides: dict[str, object] = {"max_rows": options.max_rows}
        if options.fusion_method is not None:
            overrides["method"] = options.fusion_method
        with tracing.span("akm.fusion", retrieval_span, {"akm.candidates": len(retrieval.candidates)}):
            fused = fuse(retrieval.candidates, FusionSettings.from_manifest(manifest, **overrides))
        winners = expand_winners(fused.winners, store_neighbours(store, retrieval.chunk_ids), manifest)
    rejections = [
        _fusion_rejection(excluded, retrieval.query, retrieval.result_set_id) for excluded in fused.excluded
    ]

    with clock.stage("direct_read"):
        readers = RootReaders(manifest)
        outcomes = [direct_read(row, readers.for_row(row)) for row in winners]
    evidence, others, attempts = _read_evidence(outcomes)
    rejections.extend(
        _read_rejection(outcome, retrieval.query, retrieval.result_set_id)
        for outcome in outcomes
        if outcome.status != "direct-read"
    )

    with clock.stage("selection"):
        selection = select_evidence(retrieval.query, evidence, embedder)
    rejections.extend(
        Rejection(
            stage="selection",
            reason=excluded.reason,
            query=retrieval.query,
            result_set_id=retrieval.result_set_id,
            source_id=excluded.evidence.row.source.source_id,
            evidence_id=excluded.evidence.row.evidence_id,
            detail={"notes": excluded.note, "locator": excluded.evidence.row.scope.locator.value},
        )
        for excluded in selection.excluded
    )
    set_aside = [excluded.evidence.row for excluded in selection.excluded]
    important = important_claim_classes(manifest)
    generated = GeneratedAnswer(text="", decode={})
    if worth_generating(selection):
        prompt = build_prompt(retrieval.query, [sentence.text for sentence in selection.sentences])
        with clock.stage("decoding"):
            generated = yield from generator.stream(
                prompt,
                max_new_tokens=options.max_new_tokens,
                temperature=options.temperature,
                seed=options.seed,
            )
    text = tidy_answer(generated.text, complete=generated.complete) if generated.text else ""

    with clock.stage("verification"):
        composed = _compose(
            retrieval.query,
            text,
            selection,
            important,
            verifier,
            embedder,
            extra_rows=[*set_aside, *others],
            by=actor or ANSWER_ACTOR,
        )
        support = composed.support
        queue = direct_read_queue(attempts, support.assessments)
        input_bytes = sum(len(sentence.text.encode("utf-8")) for sentence in selection.sentences)
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
            responsiveness=(composed.responsiveness.responsive, _responsiveness_reason(composed)),
            verified_by=actor or PACKET_VERIFIER,
        )

    decode = dict(generated.decode)
    selection_record = _selection_record(selection, composed, generated_text=text)
    with clock.stage("storage"):
        save_answer(
            store,
            packet,
            support=support,
            lanes_run=retrieval.lane_runs,
            lane_result_set=retrieval.result_set_id,
            rejections=rejections,
            decode_record={
                **decode,
                "timings_ms": clock.timings_ms,
                "question": question,
                "selection": selection_record,
            },
        )
    decode["timings_ms"] = dict(clock.timings_ms)
    decode["total_ms"] = round(clock.total_ms(), 2)
    answered = tuple(_answered(assessment, support, selection.kept) for assessment in support.assessments)
    presented = (
        " ".join(claim.text for claim in answered if claim.status == "supported")
        if options.strict
        else composed.text
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
        selection=selection_record,
    )


def worth_generating(selection: Selection) -> bool:
    """Whether the best sentence shares enough of the question's focus to answer from at all."""
    best = selection.best
    return best is not None and best.context >= ABSTAIN_FOCUS and best.score >= ABSTAIN_SCORE


def _compose(
    question: str,
    generated: str,
    selection: Selection,
    important: Sequence[str],
    verifier: ClaimVerifier,
    embedder: Embedder | None,
    *,
    extra_rows: Sequence[EvidenceRow],
    by: str = ANSWER_ACTOR,
) -> _Composed:
    """The generated answer when it is responsive and keeps what the chosen sentences say; else the quote.

    A generated answer that shortens the sentences can drop the very words that answer the
    question ("Manning was the oldest quarterback" without "at age 39"), so it is kept only when
    its supported claims hold ``KEEP_GENERATED_COVERAGE`` of the quote's content terms. With
    nothing worth generating from, the answer is the plain statement that no passage answers.
    """
    if not worth_generating(selection):
        support = apply_support([], selection.kept, verifier, by=by, extra_rows=extra_rows)
        best = selection.best
        why = (
            "no sentence of a directly read passage could be scored"
            if best is None
            else (
                f"the best sentence shares {best.context:.2f} of the question's focus "
                f"(needs {ABSTAIN_FOCUS:.2f}) and scores {best.score:.2f} (needs {ABSTAIN_SCORE:.2f}): {best.describe()}"
            )
        )
        return _Composed(
            NO_ANSWER_TEXT, "abstained", support, 0, Responsiveness(False, None, f"{NO_ANSWER_REASON}: {why}")
        )
    answer_text = drop_non_answers(generated, question)
    attempt = _checked(question, answer_text, selection, important, verifier, embedder, extra_rows, by=by)
    quote = _quote(selection)
    # What the generated text must keep is what the chosen sentences say, not their table's header.
    kept = _coverage(attempt, _quote(selection, headers=False))
    if attempt.responsiveness.responsive and kept >= KEEP_GENERATED_COVERAGE:
        return attempt
    quoted = _checked(question, quote, selection, important, verifier, embedder, extra_rows, "quoted", by=by)
    # The quote replaces the generated text only when it does better: responsive, or at least supported.
    if quoted.responsiveness.responsive or not any(
        a.outcome == "supported" for a in attempt.support.assessments
    ):
        return quoted
    return attempt


def _coverage(attempt: _Composed, quote: str) -> float:
    """The share of the quote's content terms that the supported claims of ``attempt`` hold."""
    wanted = set(content_terms(quote))
    held: set[str] = set()
    for assessment in attempt.support.assessments:
        if assessment.outcome == "supported":
            held |= set(content_terms(assessment.claim.text))
    return len(wanted & held) / len(wanted) if wanted else 0.0


def _add_lead_in(lines: list[str], kinds: list[str], passage: str, span: TextSpan) -> bool:
    """Put the line that leads in to the list (or the run of entries) ``span`` is an item of above
    it, unless it is there already; whether it was put. A plain text's term goes with a colon,
    which leads in to its description's sentences, quoted as items, as it does to a list."""
    lead = lead_in(passage, span)
    if lead is None:
        return False
    text = lead.slice(passage)
    if definition_term(passage, span) is not None and not text.endswith(":"):
        text = f"{text}:"
    if text in lines:
        return False
    if lines:
        lines.append("")
        kinds.append("")
    lines.append(text)
    kinds.append("lead")
    return True


def _quote(selection: Selection, *, headers: bool = True) -> str:
    """The chosen sentences in passage order: prose joined into one line, each list item (after its
    own bullet or number), table row and line of fields ("Deposit: £120") on a line of its own, so
    that each stays one claim; a blank line ends a list item or a field before a line that is not
    one, which would otherwise read as its continuation. A table row comes under its table's header
    row and rule (unless ``headers`` is off). A line of fields without another beside it, and a line
    that its line breaks made an entry ("Friday 8.30am - 4.00pm") stating its figure without a verb,
    are quoted as list items: alone, neither reads as an entry otherwise."""
    lines: list[str] = []
    kinds: list[str] = []
    kind = ""
    several = len(selection.sentences) > 1
    for sentence in _passage_order(selection):
        text = " ".join(sentence.text.split())
        span = TextSpan(sentence.start, sentence.end)
        passage = sentence.evidence.passage
        cells = is_cell_line(sentence.text)
        if is_table_row(passage, span) or cells:
            # A plain text's row set out in columns is quoted as a table row, its cells kept apart
            # ("Kingsmoor and Pelling        Wednesday" as "| Kingsmoor and Pelling | Wednesday |").
            line, now = (_as_row(sentence.text) if cells else text), "row"
            # A row's header row and rule go above it, so that its cells read as what they are
            # ("| Half plot | 125 m² | £52.00 | £8.00 |" under "| Plot size | ... | Annual rent | ...").
            header = table_header(passage, span) if headers else None
            if header is not None:
                head = header.slice(passage)
                head = _as_row(head) if cells else " ".join(head.split())
                if head not in lines:
                    if lines:
                        lines.append("")
                        kinds.append("")
                    lines.extend([head, "|" + " --- |" * head.strip().strip("|").count("|") + " --- |"])
                    kinds.extend(["row", "row"])
                    kind = "row"
        elif is_list_item(passage, span):
            marker = passage[passage.rfind("\n", 0, sentence.start) + 1 : sentence.start].strip()
            line, now = f"{marker} {text}", "item"
            # The line that leads in to the list goes above its item: it says what the item is
            # ("**Every 3 months (owner):**" over "- Clean the magnetic filter on the return pipe.").
            if _add_lead_in(lines, kinds, passage, span):
                kind = "lead"
        elif is_field_entry(passage, span):
            line, now = text, "field"
        elif definition_term(passage, span) is not None:
            # A sentence of a plain text's description goes under its term ("Thu 26 December
            # (Boxing Day):" over "- Sunday timetable on route 12 only."), which says what it is of.
            line, now = f"- {text}", "item"
            if _add_lead_in(lines, kinds, passage, span):
                kind = "lead"
        elif is_line_entry(passage, span) and (several or not is_statement(claim_text(text))):
            # An entry that its line breaks set apart ("Friday 8.30am - 4.00pm") is quoted as a list
            # item: the quote has no wrap width to tell it from a wrapped line, and joined to the
            # next sentence it would read as one with it. The line ending in a colon above the
            # entries goes above it, as a list's lead-in does.
            line, now = f"- {text}", "item"
            if _add_lead_in(lines, kinds, passage, span):
                kind = "lead"
        elif kind == "prose":
            lines[-1] = f"{lines[-1]} {text}"
            continue
        else:
            line, now = text, "prose"
        if kind in ("item", "field") and now != kind:
            lines.append("")
            kinds.append("")
        lines.append(line)
        kinds.append(now)
        kind = now
    for index, now in enumerate(kinds):
        beside = kinds[index - 1 : index] + kinds[index + 1 : index + 2]
        if now == "field" and "field" not in beside:
            lines[index] = f"- {lines[index]}"
    return "\n".join(lines)


def _as_row(line: str) -> str:
    return "| " + " | ".join(line_cells(line)) + " |"


def _passage_order(selection: Selection) -> list[Any]:
    return sorted(selection.sentences, key=lambda sentence: (sentence.evidence.number, sentence.start))


def _checked(
    question: str,
    text: str,
    selection: Selection,
    important: Sequence[str],
    verifier: ClaimVerifier,
    embedder: Embedder | None,
    extra_rows: Sequence[EvidenceRow],
    composition: Composition = "generated",
    *,
    by: str = ANSWER_ACTOR,
) -> _Composed:
    claims = extract_claims(text, important)
    support = apply_support(claims, selection.kept, verifier, by=by, extra_rows=extra_rows)
    passages = {item.row.evidence_id: item for item in selection.kept}
    throughout = _document_terms(selection)
    titles = _document_names(selection)
    in_context = [
        ClaimInContext(
            claim_id=assessment.claim_id,
            text=assessment.claim.text,
            context=" ".join(
                passages[row_id].passage for row_id in assessment.support_row_ids if row_id in passages
            ),
            # What the passage's headings name, a quoted table row's column headers, and the
            # question a quoted answer of an FAQ answers.
            heading=" ".join(
                heading_words(passages[row_id].row)
                + " "
                + _row_columns(passages[row_id], assessment.claim.text)
                + " "
                + asked_before(passages[row_id].passage, assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            asked=" ".join(
                asked_before(passages[row_id].passage, assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            referent=" ".join(
                referred_before(passages[row_id].passage, assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            before=" ".join(
                said_before(passages[row_id].passage, assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            lead=" ".join(
                lead_in_before(passages[row_id].passage, assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            columns=" ".join(
                _row_columns(passages[row_id], assessment.claim.text)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ).strip(),
            title=" ".join(
                document_title(passages[row_id].row)
                for row_id in assessment.support_row_ids
                if row_id in passages
            ),
            document_terms=frozenset().union(
                *(
                    throughout.get(passages[row_id].row.source.source_id, frozenset())
                    for row_id in assessment.support_row_ids
                    if row_id in passages
                )
            ),
            other_titles=frozenset().union(
                *(
                    terms
                    for source, terms in titles.items()
                    if source
                    not in {
                        passages[row_id].row.source.source_id
                        for row_id in assessment.support_row_ids
                        if row_id in passages
                    }
                )
            ),
        )
        for assessment in support.assessments
        if assessment.outcome == "supported"
    ]
    responsiveness = check_responsiveness(selection.focus, in_context, embedder)
    return _Composed(text, composition, support, len(claims), responsiveness)


def _document_names(selection: Selection) -> dict[str, frozenset[str]]:
    """For each document of the kept passages, the content terms of its title and its file name
    ("Services, Fees and Opening Hours | Harbourside Veterinary Clinic", "harbourside-vets.html")."""
    names = {}
    for item in selection.kept:
        source = item.row.source
        stem = PurePosixPath(source.canonical_path or source.canonical_uri).stem
        names[source.source_id] = frozenset(
            content_terms(re.sub(r"[_.-]+", " ", f"{source.title or ''} {stem}"))
        )
    return names


def _document_name(item: ReadEvidence) -> str:
    source = item.row.source
    return source.title or PurePosixPath(source.canonical_path or source.canonical_uri).stem


def _document_terms(selection: Selection) -> dict[str, frozenset[str]]:
    """For each document of the kept passages, the content terms that two or more of its kept
    passages hold, and those of its title or file name ("hollins_green_bakery.txt"): what the
    document speaks of throughout."""
    by_source: dict[str, list[set[str]]] = {}
    names: dict[str, set[str]] = {}
    for item in selection.kept:
        source = item.row.source
        by_source.setdefault(source.source_id, []).append(set(content_terms(item.passage)))
        names[source.source_id] = set(content_terms(re.sub(r"[_.]+", " ", _document_name(item))))
    return {
        source: frozenset(term for term in set().union(*held) if sum(term in terms for terms in held) >= 2)
        | names[source]
        for source, held in by_source.items()
    }


def _row_columns(item: ReadEvidence, claim: str) -> str:
    """The header of the table row a claim quotes: in its passage, or for a table cut in two
    between chunks, in the text before the passage (see `columns_of`)."""
    header = row_header(item.passage, claim)
    if header or not claim.lstrip().startswith("|"):
        return header
    before = text_before(item)
    return row_header(f"{before}\n{item.passage}", claim) if before else ""


def _responsiveness_reason(composed: _Composed) -> str:
    if composed.composition == "quoted":
        return f"{composed.responsiveness.reason} (the generated text had no supported claim that answers the question; the answer quotes the passage)"
    return composed.responsiveness.reason


def _selection_record(selection: Selection, composed: _Composed, *, generated_text: str) -> dict[str, Any]:
    """What selection chose and why, for the response and the stored decode record."""
    return {
        "answerType": selection.focus.answer_type,
        # The question as selection read it: a misspelt word as the passages' word it nearly is.
        "readAs": selection.focus.question,
        "composition": composed.composition,
        "responsive": composed.responsiveness.responsive,
        "responsiveness": composed.responsiveness.reason,
        "generatedText": generated_text,
        "sentences": [
            {
                "evidenceNumber": sentence.evidence.number,
                "evidenceId": sentence.evidence.row.evidence_id,
                "start": sentence.start,
                "end": sentence.end,
                "score": round(sentence.score, 4),
                "lexical": round(sentence.lexical, 4),
                "context": round(sentence.context, 4),
                "similarity": None if sentence.semantic is None else round(sentence.semantic, 4),
                "answerTypeFound": sentence.type_match,
                "text": sentence.text,
            }
            for sentence in selection.sentences
        ],
        "excluded": [
            {"evidenceId": item.evidence.row.evidence_id, "reason": item.reason, "notes": item.note}
            for item in selection.excluded
        ],
    }


def _fusion_rejection(excluded: ExcludedCandidate, query: str, result_set_id: str) -> Rejection:
    denied = excluded.reason == "denied"
    return Rejection(
        stage="fusion",
        reason=excluded.reason,
        query=query,
        result_set_id=result_set_id,
        source_id=None if denied else excluded.row.source.source_id,
        evidence_id=None if denied else excluded.row.evidence_id,
        detail=excluded.log_detail(),
    )


def _read_rejection(outcome: DirectReadOutcome, query: str, result_set_id: str) -> Rejection:
    return Rejection(
        stage="direct-read",
        reason=outcome.reason,
        query=query,
        result_set_id=result_set_id,
        source_id=outcome.row.source.source_id,
        evidence_id=outcome.row.evidence_id,
        detail={"state": outcome.row.verification.state, "locator": outcome.row.scope.locator.value},
    )


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
        support_score=assessment.support_score,
        score_reasons=assessment.score_reasons,
    )


def save_answer(
    store: EvidenceStore,
    packet: EvidencePacket,
    *,
    support: SupportResult,
    lanes_run: Sequence[LaneRun],
    lane_result_set: str,
    rejections: Sequence[Rejection],
    decode_record: Mapping[str, Any],
) -> None:
    """Packet, rows, history events, claims with the verifier's judgements, lane runs,
    rejections and decode statistics: all or nothing."""
    bundle = PacketBundle(
        packet=packet,
        rows=fresh_rows(packet.evidence_rows),
        judgements=tuple(
            ClaimJudgement(
                claim_id=judgement.claim_id,
                evidence_id=judgement.evidence_id,
                label=judgement.label,
                note=judgement.note,
                detail=judgement.to_json(),
            )
            for judgement in support.judgements
        ),
        lane_runs=tuple(lanes_run),
        result_set_id=lane_result_set,
        rejections=tuple(rejections),
        decode_stats=decode_record,
    )
    with store.transaction() as tx:
        save_packet_bundle(tx, bundle)


__all__ = [
    "ANSWER_ACTOR",
    "NO_ANSWER_TEXT",
    "answer",
    "save_answer",
]
