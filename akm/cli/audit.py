"""``akm audit``: lineage queries over the evidence store, printed as JSON.

Each query prints the body the REST API returns for the same query, through the same audit
service and response models, and sees only what the manifest's scope lets the API see: a
packet, row, claim or source outside the scope is an unknown ID here too.

* ``akm audit rejections [--reason R] [--stage S] [--source ID] [--since T] [--until T] [--limit N]
  [--offset N] [--packet ID]``: ``GET /v1/audit/rejections`` (``--packet`` is CLI-only)
* ``akm audit dependents SOURCE_ID [--revision REV]``: ``GET /v1/audit/sources/{id}/dependents``
  (``--revision`` keeps that one revision)
* ``akm audit packet PACKET_ID``: ``GET /v1/packets/{id}``; ``--history``: ``.../history``;
  ``--task``: every packet of its task with its verdict; ``--decode-stats``: its decode statistics
* ``akm audit evidence EVIDENCE_ID``: ``GET /v1/evidence/{id}``; ``--history``: ``.../history``
* ``akm audit claim CLAIM_ID``: ``GET /v1/claims/{id}``
* ``akm audit sources [--after ID] [--limit N]``: ``GET /v1/sources``
* ``akm audit source SOURCE_ID``: ``GET /v1/sources/{id}``

Exit status: 0 found, 2 unknown (or out-of-scope) ID, bad argument, unusable manifest or database.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError

from akm.manifest import ManifestError, load_manifest
from akm.service.audit import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, AuditService, RejectionFilters
from akm.service.audit_models import wire_json
from akm.service.errors import NotFoundError
from akm.service.scope import SourceScope
from akm.settings import Settings
from akm.store import open_store

EXIT_OK = 0
EXIT_USAGE = 2


def _page_size(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_PAGE_SIZE:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PAGE_SIZE}")
    return value


def _offset(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _instant(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from error


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="query evidence lineage: rejections, dependents, packets, rows, claims, sources",
        description=(
            "Print the REST API's audit body for the same query (GET /v1/...), within the manifest's scope."
        ),
    )
    queries = parser.add_subparsers(dest="query", metavar="QUERY", required=True)

    rejections = queries.add_parser(
        "rejections", help="dropped candidates with their reasons, newest first (GET /v1/audit/rejections)"
    )
    rejections.add_argument("--reason")
    rejections.add_argument("--stage")
    rejections.add_argument("--source", metavar="ID")
    rejections.add_argument("--since", type=_instant, metavar="TIME", help="inclusive lower bound (ISO 8601)")
    rejections.add_argument("--until", type=_instant, metavar="TIME", help="exclusive upper bound (ISO 8601)")
    rejections.add_argument("--limit", type=_page_size, default=DEFAULT_PAGE_SIZE, help="page size")
    rejections.add_argument("--offset", type=_offset, default=0)
    rejections.add_argument("--packet", metavar="ID", help="only rejections recorded for this packet")

    dependents = queries.add_parser(
        "dependents",
        help="claims and packets relying on each revision of a source (GET /v1/audit/sources/ID/dependents)",
    )
    dependents.add_argument("source_id", metavar="SOURCE_ID")
    dependents.add_argument("--revision", metavar="REV", help="only this revision")

    packet = queries.add_parser("packet", help="a stored packet (GET /v1/packets/ID)")
    packet.add_argument("packet_id", metavar="PACKET_ID")
    packet_view = packet.add_mutually_exclusive_group()
    packet_view.add_argument(
        "--history", action="store_true", help="its verification events (GET /v1/packets/ID/history)"
    )
    packet_view.add_argument(
        "--task",
        action="store_true",
        help="every packet of its task (answer, re-verifications) with verdicts",
    )
    packet_view.add_argument("--decode-stats", action="store_true", help="its decode statistics")

    evidence = queries.add_parser("evidence", help="a stored evidence row (GET /v1/evidence/ID)")
    evidence.add_argument("evidence_id", metavar="EVIDENCE_ID")
    evidence.add_argument(
        "--history", action="store_true", help="its verification events (GET /v1/evidence/ID/history)"
    )

    claim = queries.add_parser("claim", help="a claim in each packet that made it (GET /v1/claims/ID)")
    claim.add_argument("claim_id", metavar="CLAIM_ID")

    sources = queries.add_parser("sources", help="sources in scope, in id order (GET /v1/sources)")
    sources.add_argument("--after", metavar="ID", help="`nextAfter` of the previous page")
    sources.add_argument("--limit", type=_page_size, default=DEFAULT_PAGE_SIZE, help="page size")

    source = queries.add_parser("source", help="a source with its versions (GET /v1/sources/ID)")
    source.add_argument("source_id", metavar="SOURCE_ID")

    parser.set_defaults(handler=run_audit)


def _rejections(audit: AuditService, args: argparse.Namespace) -> BaseModel:
    filters = RejectionFilters(
        reason=args.reason,
        stage=args.stage,
        source=args.source,
        since=args.since,
        until=args.until,
        packet_id=args.packet,
    )
    return audit.rejections(filters, limit=args.limit, offset=args.offset)


def _packet(audit: AuditService, args: argparse.Namespace) -> BaseModel | dict[str, Any]:
    if args.history:
        return audit.packet_history(args.packet_id)
    if args.task:
        return audit.task_packets(args.packet_id)
    if args.decode_stats:
        return audit.decode_stats(args.packet_id)
    return audit.packet(args.packet_id)


def _evidence(audit: AuditService, args: argparse.Namespace) -> BaseModel | dict[str, Any]:
    if args.history:
        return audit.evidence_history(args.evidence_id)
    return audit.evidence(args.evidence_id)


_QUERIES: dict[str, Callable[[AuditService, argparse.Namespace], BaseModel | dict[str, Any]]] = {
    "rejections": _rejections,
    "dependents": lambda audit, args: audit.source_dependents(args.source_id, revision=args.revision),
    "packet": _packet,
    "evidence": _evidence,
    "claim": lambda audit, args: audit.claim(args.claim_id),
    "sources": lambda audit, args: audit.sources(after=args.after, limit=args.limit),
    "source": lambda audit, args: audit.source(args.source_id),
}


def run_audit(args: argparse.Namespace, settings: Settings) -> int:
    try:
        # The scope the API applies: the configured manifest's.
        scope = SourceScope(load_manifest(settings.manifest_path))
        store = open_store(settings.resolved_database_url)
    except (ManifestError, SQLAlchemyError, OSError) as error:
        print(f"akm audit: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        body = _QUERIES[args.query](AuditService(store, scope), args)
    except NotFoundError as error:
        print(f"akm audit: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    printed = wire_json(body) if isinstance(body, BaseModel) else body
    print(json.dumps(printed, indent=2, ensure_ascii=False))
    return EXIT_OK
