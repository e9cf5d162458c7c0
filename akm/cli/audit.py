"""``akm audit``: lineage queries over the evidence store, printed as JSON.

* ``akm audit rejections [--reason R] [--source ID] [--stage S] [--packet ID] [--limit N]``
* ``akm audit dependents SOURCE_ID [--revision REV]``: packets and claims relying on a source
* ``akm audit packet PACKET_ID``: the packet, its decode statistics and every verification of its task
* ``akm audit evidence EVIDENCE_ID``: a row's current state and its append-only event log

Exit status: 0 found, 2 unknown ID or unusable database.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from akm.settings import Settings
from akm.store import EvidenceStore, open_store

EXIT_OK = 0
EXIT_USAGE = 2


class _NotFound(LookupError):
    pass


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit", help="query evidence lineage: rejections, dependents, packets, rows"
    )
    queries = parser.add_subparsers(dest="query", metavar="QUERY", required=True)
    rejections = queries.add_parser("rejections", help="dropped candidates with their reasons, newest first")
    rejections.add_argument("--reason")
    rejections.add_argument("--source", metavar="ID")
    rejections.add_argument("--stage")
    rejections.add_argument("--packet", metavar="ID")
    rejections.add_argument("--limit", type=int, default=100)
    dependents = queries.add_parser("dependents", help="packets and claims that rely on a source")
    dependents.add_argument("source_id", metavar="SOURCE_ID")
    dependents.add_argument("--revision", metavar="REV", help="only rows read at this revision")
    packet = queries.add_parser("packet", help="a packet with its decode statistics and verification history")
    packet.add_argument("packet_id", metavar="PACKET_ID")
    evidence = queries.add_parser("evidence", help="an evidence row and its verification events")
    evidence.add_argument("evidence_id", metavar="EVIDENCE_ID")
    parser.set_defaults(handler=run_audit)


def _rejections(store: EvidenceStore, args: argparse.Namespace) -> Any:
    records = store.list_rejections(
        reason=args.reason, source=args.source, stage=args.stage, packet_id=args.packet, limit=args.limit
    )
    return [
        {
            "stage": record.stage,
            "reason": record.reason,
            "query": record.query,
            "packetId": record.packet_id,
            "sourceId": record.source_id,
            "evidenceId": record.evidence_id,
            "detail": record.detail,
            "at": record.at.isoformat(),
        }
        for record in records
    ]


def _dependents(store: EvidenceStore, args: argparse.Namespace) -> Any:
    if store.get_source(args.source_id) is None:
        raise _NotFound(f"unknown source {args.source_id!r}")
    return [
        {
            "packetId": item.packet_id,
            "taskId": item.task_id,
            "claimId": item.claim_id,
            "evidenceId": item.evidence_id,
            "revision": item.revision,
            "label": item.label,
        }
        for item in store.dependents_of_source(args.source_id, args.revision)
    ]


def _packet(store: EvidenceStore, args: argparse.Namespace) -> Any:
    packet = store.get_packet(args.packet_id)
    if packet is None:
        raise _NotFound(f"unknown packet {args.packet_id!r}")
    task_packets = store.packets_of_task(str(packet.get("taskId", "")))
    verdicts = store.packet_verdicts(task_packets)
    return {
        "packet": packet,
        "decodeStats": store.decode_stats(args.packet_id),
        "verifications": [{"packetId": item, "verdict": verdicts.get(item)} for item in task_packets],
    }


def _evidence(store: EvidenceStore, args: argparse.Namespace) -> Any:
    row = store.get_row(args.evidence_id)
    if row is None:
        raise _NotFound(f"unknown evidence row {args.evidence_id!r}")
    events = [
        {
            "fromState": event.from_state,
            "toState": event.to_state,
            "actor": event.actor,
            "reason": event.reason,
            "packetId": event.packet_id,
            "at": event.at.isoformat(),
        }
        for event in store.verification_events(args.evidence_id)
    ]
    return {"row": row, "events": events}


_QUERIES = {"rejections": _rejections, "dependents": _dependents, "packet": _packet, "evidence": _evidence}


def run_audit(args: argparse.Namespace, settings: Settings) -> int:
    try:
        store = open_store(settings.resolved_database_url)
    except (SQLAlchemyError, OSError) as error:
        print(f"akm audit: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = _QUERIES[args.query](store, args)
    except _NotFound as error:
        print(f"akm audit: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return EXIT_OK
