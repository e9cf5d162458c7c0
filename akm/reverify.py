"""Re-verification after sources change: stale rows, re-checked claims, appended packet verdicts.

For each source (one, or every source the store knows):

1. every stored row read at a revision other than the source's current one becomes ``stale``
   (``rejected`` when the source is gone), through the state machine, with a history event;
2. the latest packet of each task whose view of those rows is out of date is re-verified: each
   claim that relied on them is checked again against the source's current text, and where a
   current passage still supports it a new row at the new revision is read and promoted to
   ``claim-supported`` for that claim;
3. the re-verified packet is stored as a NEW packet of the same task (the next run sequence),
   with its verdict and reasons; the earlier packet, its rows and events stay as they were.

Everything for one source is written in one transaction: the rows made stale and the packets
appended together, or nothing. A source left with live rows read at another version (a failed
or interrupted re-verification, an answer stored while its source changed) is found again by
``EvidenceStore.sources_awaiting_reverification``, so the next ingest or ``akm reverify`` redoes it.

Within a re-verified packet every evidence ID appears once by construction: the packet's rows
and the rows read on re-verification live in one mapping keyed by evidence ID; a current
passage whose row is already in the packet and still live is reused, never added twice.

Claims are judged by the same verifier that answering uses (the runtime's: lexical, or the
strictest of lexical and NLI when an NLI model is configured), passed in by the caller.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from akm.answer.responsiveness import carried_forward
from akm.bundle import ClaimJudgement, PacketBundle, RowWrite, record_rows, save_packet_bundle
from akm.contract.ids import evidence_id, utc_now_iso
from akm.contract.models import (
    SCHEMA_VERSION,
    Claim,
    DirectReadQueueItem,
    EvidencePacket,
    EvidenceRow,
    MissingEvidence,
)
from akm.contract.states import TERMINAL_STATES, mark_stale, promote_to_claim_supported, reject
from akm.direct_read import direct_read
from akm.manifest import Manifest
from akm.packet import PACKET_VERIFIER, assemble_packet
from akm.retrieval.candidates import candidate_from_chunk
from akm.source_readers import RootReaders
from akm.store import EvidenceStore, StoredChunk
from akm.store.repository import SourceInfo
from akm.support import quote_of
from akm.verify import ClaimVerifier, SupportJudgement

REVERIFY_ACTOR = "akm.reverify"
_TERMINAL = {state.value for state in TERMINAL_STATES}
_PAGE = 500


class UnknownSourceError(LookupError):
    """Re-verification was asked for a source the store does not know."""


@dataclass(frozen=True, slots=True)
class PacketReverification:
    task_id: str
    previous_packet_id: str
    packet_id: str
    previous_verdict: str
    verdict: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "previousPacketId": self.previous_packet_id,
            "packetId": self.packet_id,
            "previousVerdict": self.previous_verdict,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
        }


@dataclass
class ReverifyReport:
    sources_checked: list[str] = field(default_factory=list)
    rows_stale: list[str] = field(default_factory=list)
    rows_rejected: list[str] = field(default_factory=list)
    packets: list[PacketReverification] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "sourcesChecked": len(self.sources_checked),
            "rowsStale": self.rows_stale,
            "rowsRejected": self.rows_rejected,
            "packets": [packet.to_json() for packet in self.packets],
        }

    def summary_lines(self) -> list[str]:
        lines = [
            f"re-verify: {len(self.sources_checked)} source(s) checked, {len(self.rows_stale)} row(s) stale, "
            f"{len(self.rows_rejected)} rejected, {len(self.packets)} packet(s) re-verified"
        ]
        lines += [
            f"  {item.previous_packet_id} {item.previous_verdict} -> {item.packet_id} {item.verdict}"
            for item in self.packets
        ]
        return lines


def _all_sources(store: EvidenceStore) -> list[SourceInfo]:
    sources: list[SourceInfo] = []
    after: str | None = None
    while True:
        page = store.source_page(after=after, limit=_PAGE)
        sources.extend(page)
        if len(page) < _PAGE:
            return sources
        after = page[-1].source_id


class DeferredVerifier:
    """A verifier built on its first use, so a run with nothing to re-check loads no model."""

    def __init__(self, build: Callable[[], ClaimVerifier]) -> None:
        self._build = build
        self._verifier: ClaimVerifier | None = None

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        if self._verifier is None:
            self._verifier = self._build()
        return self._verifier.verify(claim, passage)


def reverify(
    store: EvidenceStore,
    manifest: Manifest,
    source_id: str | None = None,
    *,
    verifier: ClaimVerifier,
    actor: str | None = None,
) -> ReverifyReport:
    """Re-verify everything that relied on ``source_id`` (or on any source); see the module docstring.

    ``actor`` (an API key's ``key:<id>``) is recorded as ``by`` of the events and packets this
    writes instead of ``REVERIFY_ACTOR`` and the packet verifier.
    """
    report = ReverifyReport()
    if source_id is not None:
        info = store.get_source(source_id)
        if info is None:
            raise UnknownSourceError(f"unknown source {source_id!r}")
        sources = [info]
    else:
        sources = _all_sources(store)
    for info in sources:
        report.sources_checked.append(info.source_id)
        _reverify_source(store, manifest, info, verifier, report, actor)
    return report


def reverify_sources(
    store: EvidenceStore, manifest: Manifest, source_ids: Sequence[str], *, verifier: ClaimVerifier
) -> ReverifyReport:
    """Re-verify after ingest: the sources it saw change or disappear, and any left over from
    an earlier re-verification that failed or was interrupted."""
    report = ReverifyReport()
    for source_id in dict.fromkeys([*source_ids, *store.sources_awaiting_reverification()]):
        info = store.get_source(source_id)
        if info is not None:
            report.sources_checked.append(source_id)
            _reverify_source(store, manifest, info, verifier, report)
    return report


def _current_version(info: SourceInfo) -> tuple[str, str] | None:
    """(revision, sha256) of the source's current version; None when it is deleted."""
    if info.deleted_at is not None:
        return None
    current = next((version for version in info.versions if version.is_current), None)
    return (current.revision, current.sha256) if current is not None else None


def _invalidated(
    row: EvidenceRow, current: tuple[str, str] | None, at: str, actor: str | None = None
) -> EvidenceRow | None:
    """The row made stale or rejected, or None when it is still current (or already terminal)."""
    by = actor or REVERIFY_ACTOR
    if row.verification.state in _TERMINAL:
        return None
    if current is None:
        return reject(row, by=by, reasons=("source-missing: the source was deleted",), at=at)
    revision, checksum = current
    if row.source.version.checksum == checksum:
        return None
    return mark_stale(
        row,
        by=by,
        reason="the source changed after this row was read",
        expected_revision=row.source.version.revision,
        observed_revision=revision,
        at=at,
    )


def _reverify_source(
    store: EvidenceStore,
    manifest: Manifest,
    info: SourceInfo,
    verifier: ClaimVerifier,
    report: ReverifyReport,
    actor: str | None = None,
) -> None:
    at = utc_now_iso()
    current = _current_version(info)
    invalidated: list[tuple[EvidenceRow, int]] = []
    state_now: dict[str, str] = {}
    for document in store.rows_for_source(info.source_id):
        row = EvidenceRow.from_json(document)
        changed = _invalidated(row, current, at, actor)
        state_now[row.evidence_id] = (changed or row).verification.state
        if changed is not None:
            invalidated.append((changed, len(row.verification.history or ())))
            (report.rows_stale if changed.verification.state == "stale" else report.rows_rejected).append(
                row.evidence_id
            )

    tasks = dict.fromkeys(dependent.task_id for dependent in store.dependents_of_source(info.source_id))
    rebuilt: list[
        tuple[EvidencePacket, list[tuple[EvidenceRow, int]], dict[str, Any], PacketReverification]
    ] = []
    for task_id in tasks:
        packet_ids = store.packets_of_task(task_id)
        latest = store.get_packet(packet_ids[-1]) if packet_ids else None
        if latest is None:
            continue
        previous = EvidencePacket.from_json(latest)
        outdated = [
            row
            for row in previous.evidence_rows
            if row.source.source_id == info.source_id
            and row.verification.state not in _TERMINAL
            and state_now.get(row.evidence_id) in ("stale", "rejected")
        ]
        if not outdated:
            continue
        packet, new_rows, judgements = _reverified_packet(
            store, manifest, previous, outdated, current, verifier, len(packet_ids) + 1, at, actor
        )
        rebuilt.append(
            (
                packet,
                new_rows,
                judgements,
                PacketReverification(
                    task_id=task_id,
                    previous_packet_id=previous.packet_id,
                    packet_id=packet.packet_id,
                    previous_verdict=previous.verification.verdict,
                    verdict=packet.verification.verdict,
                    reasons=packet.verification.verdict_reasons,
                ),
            )
        )

    if not invalidated and not rebuilt:
        return
    with store.transaction() as tx:
        record_rows(tx, (RowWrite(row, since) for row, since in invalidated), packet_id="")
        for packet, new_rows, judgements, _summary in rebuilt:
            save_packet_bundle(
                tx,
                PacketBundle(
                    packet=packet,
                    rows=tuple(RowWrite(row, since) for row, since in new_rows),
                    judgements=tuple(
                        ClaimJudgement(
                            claim_id=claim_id,
                            evidence_id=row_id,
                            label=str(judgement["label"]),
                            note=str(judgement["note"]),
                            detail=judgement,
                        )
                        for key, judgement in judgements.items()
                        for claim_id, row_id in [key.split("\n", 1)]
                    ),
                ),
            )
    report.packets.extend(summary for *_, summary in rebuilt)


def _reverified_packet(
    store: EvidenceStore,
    manifest: Manifest,
    previous: EvidencePacket,
    outdated: Sequence[EvidenceRow],
    current: tuple[str, str] | None,
    verifier: ClaimVerifier,
    run_sequence: int,
    at: str,
    actor: str | None = None,
) -> tuple[EvidencePacket, list[tuple[EvidenceRow, int]], dict[str, Any]]:
    """The packet re-verified against the current text, the rows read or promoted now (each with
    its history length before), and the verifier's judgements by claim and row."""
    outdated_ids = {row.evidence_id for row in outdated}
    source_id = outdated[0].source.source_id
    old_revisions = tuple(dict.fromkeys(row.source.version.revision for row in outdated))
    # One mapping keyed by evidence ID holds the packet's rows and the rows read now, so no
    # evidence ID can enter the packet twice.
    rows: dict[str, EvidenceRow] = {}
    for row in previous.evidence_rows:
        changed = _invalidated(row, current, at, actor) if row.evidence_id in outdated_ids else None
        rows[row.evidence_id] = changed or row
    chunks = store.chunks_of_source(source_id) if current is not None else []
    readers = RootReaders(manifest, reader_id=REVERIFY_ACTOR)
    # Rows read or promoted now, with how many history events they had before (0: new rows).
    read_now: dict[str, int] = {}
    judgements: dict[str, Any] = {}
    claims: list[Claim] = []
    replacement: dict[str, str] = {}
    for claim in previous.claims:
        relied = [row_id for row_id in claim.support_row_ids if row_id in outdated_ids]
        if not relied or claim.status == "conflicted":
            claims.append(claim)
            continue
        kept = [row_id for row_id in claim.support_row_ids if row_id not in outdated_ids]
        found = _current_support(claim, chunks, manifest, readers, verifier, rows, at, actor)
        if found is not None:
            row, judgement = found
            before = rows.get(row.evidence_id)
            read_now.setdefault(row.evidence_id, len(before.verification.history or ()) if before else 0)
            rows[row.evidence_id] = row
            judgements[f"{claim.claim_id}\n{row.evidence_id}"] = judgement
            for row_id in relied:
                replacement[row_id] = row.evidence_id
            support = [*kept, row.evidence_id] if claim.status == "supported" else [row.evidence_id]
            claims.append(
                claim.model_copy(
                    update={
                        "support_row_ids": tuple(dict.fromkeys(support)),
                        "status": "supported",
                        "notes": f"{claim.notes}; re-verified at revision {row.source.version.revision}: "
                        f'still supported by "{judgement["quote"]}"',
                    }
                )
            )
        else:
            still_supported = claim.status == "supported" and bool(kept)
            reason = "the source is gone" if current is None else "no passage of the current text supports it"
            claims.append(
                claim.model_copy(
                    update={
                        "support_row_ids": tuple(kept) if still_supported else claim.support_row_ids,
                        "status": "supported" if still_supported else "unsupported",
                        "notes": f"{claim.notes}; re-verification: {source_id} changed from "
                        f"{', '.join(old_revisions)}: {reason}",
                    }
                )
            )
    missing = _missing_evidence(claims, previous.missing_evidence)
    queue = tuple(_requeued(item, outdated_ids, replacement) for item in previous.direct_read_queue)
    measured = {
        name: value
        for name, value in previous.metrics.model_dump().items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    packet = assemble_packet(
        manifest=manifest,
        task_id=previous.task_id,
        query=previous.query.original,
        normalized_intent=previous.query.normalized_intent,
        query_class=previous.query.query_class,
        lanes_run=previous.lanes_run,
        fusion=previous.fusion,
        rows=list(rows.values()),
        claims=claims,
        conflicts=previous.conflicts,
        missing_evidence=missing,
        direct_read_queue=queue,
        measured_metrics=measured,
        run_sequence=run_sequence,
        project=previous.project,
        context_reasons=(
            f"re-verification of {previous.packet_id}: {_change(source_id, outdated, current)}",
        ),
        at=at,
        verified_by=actor or PACKET_VERIFIER,
        responsiveness=carried_forward(
            previous.verification.verdict_reasons, {claim.claim_id: claim.status for claim in claims}
        ),
    )
    return packet, [(rows[row_id], since) for row_id, since in read_now.items()], judgements


def _change(source_id: str, outdated: Sequence[EvidenceRow], current: tuple[str, str] | None) -> str:
    """What happened to the source, never "from X to X": equal labels are told apart by checksum."""
    if current is None:
        return f"source {source_id} was deleted"
    revision, checksum = current
    before = list(dict.fromkeys(row.source.version.revision for row in outdated))
    if revision not in before:
        return f"source {source_id} changed from revision {', '.join(before)} to {revision}"
    checksums = dict.fromkeys((row.source.version.checksum or "unknown")[:12] for row in outdated)
    return (
        f"source {source_id} changed at revision {revision}: "
        f"checksum {', '.join(checksums)} is now {checksum[:12]}"
    )


def _current_support(
    claim: Claim,
    chunks: Sequence[StoredChunk],
    manifest: Manifest,
    readers: RootReaders,
    verifier: ClaimVerifier,
    rows: dict[str, EvidenceRow],
    at: str,
    actor: str | None = None,
) -> tuple[EvidenceRow, dict[str, Any]] | None:
    """A row at the current revision that supports the claim, read and promoted, or None.

    ``rows`` are the packet's rows by evidence ID: a passage whose row is already there is
    reused while it is live, and skipped once terminal (a terminal row never recovers).
    """
    refs = {ref.source_id: ref for ref in manifest.source_refs}
    for chunk in chunks:
        ref = refs.get(chunk.source_ref_id)
        if ref is None:
            continue
        existing = rows.get(_chunk_row_id(chunk))
        if existing is not None and existing.verification.state in _TERMINAL:
            continue
        judgement = verifier.verify(claim.claim_text, chunk.text)
        if judgement.label != "supported":
            continue
        if existing is None or existing.verification.state == "candidate":
            built = existing or candidate_from_chunk(
                chunk,
                manifest,
                ref,
                lane="direct-read",
                query=claim.claim_text,
                rank=1,
                result_set_id=f"rs:reverify:{uuid.uuid4().hex}",
                parameters={"purpose": "re-verification of a claim against the current source text"},
                raw_score=None,
                raw_score_meaning=None,
                at=at,
            )
            outcome = direct_read(built, readers.for_row(built), at=at)
            if outcome.status != "direct-read" or outcome.read is None:
                continue
            candidate = outcome.row
            passage = outcome.read.text
        else:
            candidate = existing
            passage = chunk.text
        quote = quote_of(passage, judgement.span)
        promoted = promote_to_claim_supported(
            candidate,
            [claim.claim_id],
            by=actor or REVERIFY_ACTOR,
            support_note=f'{claim.claim_id} (attributed on re-verification): "{quote}"',
            at=at,
        )
        detail = {
            "label": judgement.label,
            "span": list(judgement.span) if judgement.span else None,
            "quote": quote,
            "note": judgement.note,
            "decidedBy": judgement.decided_by,
            "cited": False,
        }
        return promoted, detail
    return None


def _chunk_row_id(chunk: StoredChunk) -> str:
    """The evidence ID a row built from ``chunk`` gets (same as the candidate builder's)."""
    return evidence_id(SCHEMA_VERSION, chunk.source_id, chunk.revision, chunk.sha256, chunk.locator_value)


def _missing_evidence(
    claims: Sequence[Claim], previous: Sequence[MissingEvidence]
) -> tuple[MissingEvidence, ...]:
    """Open records for unsupported claims; a record for a claim supported again is resolved."""
    by_claim = {claim.claim_id: claim for claim in claims}
    records: dict[str, MissingEvidence] = {}
    for item in previous:
        supported = all(
            by_claim.get(claim_id) is not None and by_claim[claim_id].status == "supported"
            for claim_id in item.claim_ids
        )
        records[item.missing_id] = item.model_copy(update={"status": "resolved"}) if supported else item
    for claim in claims:
        missing_id = f"missing:{claim.claim_id}"
        if claim.status == "unsupported" and missing_id not in records:
            records[missing_id] = MissingEvidence(
                missing_id=missing_id,
                claim_ids=(claim.claim_id,),
                description=f"after re-verification no directly read passage supports the {claim.importance} "
                f"{claim.claim_class} claim {claim.claim_id}",
                required=claim.importance == "important",
                status="open",
            )
    return tuple(records.values())


def _requeued(
    item: DirectReadQueueItem, outdated: set[str], replacement: dict[str, str]
) -> DirectReadQueueItem:
    """A winner whose row went stale is completed by the new row that re-read its claim, or failed."""
    if item.row_id not in outdated and item.completion_row_id not in outdated:
        return item
    new_row = replacement.get(item.row_id) or replacement.get(item.completion_row_id or "")
    if new_row is not None:
        return item.model_copy(update={"status": "completed", "completion_row_id": new_row})
    return item.model_copy(update={"status": "failed", "completion_row_id": None})


__all__ = [
    "REVERIFY_ACTOR",
    "DeferredVerifier",
    "PacketReverification",
    "ReverifyReport",
    "UnknownSourceError",
    "reverify",
    "reverify_sources",
]
