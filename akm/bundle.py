"""One write path for a packet and everything stored with it, used by answering and re-verification.

A :class:`PacketBundle` is a value: the packet, the rows it read or promoted (each with how many of
its history events are already stored), the verifier's judgement of each claim↔row pair, and, for
an answer, the lane runs, the rejected candidates and the decode statistics. ``save_packet_bundle``
writes it inside a transaction the caller holds, so one answer is stored all or nothing and one
re-verification stores every packet of a source together with the rows it made stale.

Only judgements of pairs the packet's claims cite are stored: a verifier's verdict on a row the
packet does not use for that claim stays out of the claim-support table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from akm.contract.ids import utc_now_iso
from akm.contract.models import EvidencePacket, EvidenceRow, LaneRun
from akm.retrieval.orchestrate import write_lane_runs
from akm.store import Rejection, StoreTransaction


@dataclass(frozen=True, slots=True)
class RowWrite:
    """A row to store, and how many of its history events the event log already holds."""

    row: EvidenceRow
    events_stored: int = 0


@dataclass(frozen=True, slots=True)
class ClaimJudgement:
    """The verifier's judgement of one claim against one row."""

    claim_id: str
    evidence_id: str
    label: str
    note: str
    detail: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PacketBundle:
    """A packet and what is stored with it (see the module docstring)."""

    packet: EvidencePacket
    rows: tuple[RowWrite, ...]
    judgements: tuple[ClaimJudgement, ...]
    lane_runs: tuple[LaneRun, ...] = ()
    result_set_id: str | None = None
    rejections: tuple[Rejection, ...] = ()
    decode_stats: Mapping[str, Any] | None = field(default=None)


def record_rows(tx: StoreTransaction, rows: Iterable[RowWrite], packet_id: str) -> None:
    """Store each row's current state and append its history events not stored yet."""
    writes = list(rows)
    tx.save_rows(write.row for write in writes)
    for write in writes:
        history = write.row.verification.history or ()
        for index in range(write.events_stored, len(history)):
            event = history[index]
            tx.record_verification_event(
                evidence_id=write.row.evidence_id,
                from_state=history[index - 1].state if index > 0 else None,
                to_state=event.state,
                actor=event.by,
                reason=event.reason,
                packet_id=packet_id,
                detail={"historyIndex": index},
            )


def save_packet_bundle(tx: StoreTransaction, bundle: PacketBundle) -> None:
    """Write ``bundle`` inside the open transaction ``tx``."""
    packet = bundle.packet
    cited = {(claim.claim_id, row_id) for claim in packet.claims for row_id in claim.support_row_ids}
    record_rows(tx, bundle.rows, packet.packet_id)
    tx.save_packet(packet.to_json())
    for judgement in bundle.judgements:
        if (judgement.claim_id, judgement.evidence_id) in cited:
            tx.record_claim_support(
                packet_id=packet.packet_id,
                claim_id=judgement.claim_id,
                evidence_id=judgement.evidence_id,
                label=judgement.label,
                note=judgement.note,
                detail=dict(judgement.detail),
            )
    if bundle.result_set_id is not None:
        write_lane_runs(tx, bundle.lane_runs, bundle.result_set_id, packet.packet_id)
    # The candidates this packet's retrieval and reading left out are logged under its ID.
    tx.record_rejections(replace(rejection, packet_id=packet.packet_id) for rejection in bundle.rejections)
    if bundle.decode_stats is not None:
        tx.save_decode_stats(packet.packet_id, {**bundle.decode_stats, "recordedAt": utc_now_iso()})


def fresh_rows(rows: Sequence[EvidenceRow]) -> tuple[RowWrite, ...]:
    """Rows none of whose history is stored yet (an answer's rows)."""
    return tuple(RowWrite(row) for row in rows)


__all__ = ["ClaimJudgement", "PacketBundle", "RowWrite", "fresh_rows", "record_rows", "save_packet_bundle"]
