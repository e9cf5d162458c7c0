"""``akm keys create|list|revoke``: the REST API's keys, in the store the server uses.

``create`` prints the key once (``akm_<id>_<secret>``); only the SHA-256 of its secret is stored,
so a lost key cannot be shown again: revoke it and create another. ``list`` shows every key's ID,
name, scopes, creation, expiry, revocation and last use, never a secret. See docs/security.md.

Exit status: 0 done, 1 no such key (revoke), 2 bad arguments or an unusable database.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from akm.settings import Settings
from akm.store import SCOPES, ApiKeyInfo, EvidenceStore, StoreError, open_store
from akm.store.base import now_utc

EXIT_OK = 0
EXIT_UNKNOWN = 1
EXIT_USAGE = 2
MAX_EXPIRES_IN_DAYS = 36_500


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = subparsers.add_parser(
        "keys",
        help="create, list and revoke API keys of the REST API",
        description=(
            "API keys for `akm serve`, sent as `Authorization: Bearer <key>`. Scopes: ask (answers), "
            "ingest (uploads, ingest jobs, re-verification), audit (packets, evidence, sources, "
            "rejections, metrics, validation), admin (all of them). See docs/security.md."
        ),
    )
    actions = keys.add_subparsers(dest="keys_action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a key and print it once")
    create.add_argument(
        "--scope",
        dest="scopes",
        action="append",
        choices=SCOPES,
        required=True,
        help="a scope the key grants (repeat for several)",
    )
    create.add_argument("--name", help="a label for the key (shown by `akm keys list`)")
    create.add_argument(
        "--expires-in", type=int, metavar="DAYS", help="the key stops working after DAYS days"
    )
    create.add_argument("--json", action="store_true", help="print the key and its record as JSON")
    create.set_defaults(handler=run_create)
    listing = actions.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--json", action="store_true", help="print the keys as JSON")
    listing.set_defaults(handler=run_list)
    revoke = actions.add_parser("revoke", help="revoke a key; its requests get 401 from then on")
    revoke.add_argument("key_id", metavar="ID", help="the key's ID (the part after `akm_`)")
    revoke.set_defaults(handler=run_revoke)


def _open(settings: Settings) -> EvidenceStore | None:
    try:
        return open_store(settings.resolved_database_url)
    except (SQLAlchemyError, OSError) as error:
        print(f"akm keys: cannot open the store: {error}", file=sys.stderr)
        return None


def _when(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment is not None else None


def key_json(info: ApiKeyInfo, at: datetime | None = None) -> dict[str, Any]:
    return {
        "id": info.key_id,
        "name": info.name,
        "scopes": list(info.scopes),
        "status": info.status(at),
        "createdAt": _when(info.created_at),
        "expiresAt": _when(info.expires_at),
        "revokedAt": _when(info.revoked_at),
        "lastUsedAt": _when(info.last_used_at),
    }


def run_create(args: argparse.Namespace, settings: Settings) -> int:
    days: int | None = args.expires_in
    if days is not None and not 1 <= days <= MAX_EXPIRES_IN_DAYS:
        print(f"akm keys: --expires-in must be 1-{MAX_EXPIRES_IN_DAYS} days, got {days}", file=sys.stderr)
        return EXIT_USAGE
    if args.name is not None and not 1 <= len(args.name) <= 128:
        print("akm keys: --name must be 1-128 characters", file=sys.stderr)
        return EXIT_USAGE
    store = _open(settings)
    if store is None:
        return EXIT_USAGE
    expires_at = now_utc() + timedelta(days=days) if days is not None else None
    try:
        with store.transaction() as tx:
            created = tx.create_api_key(scopes=args.scopes, name=args.name, expires_at=expires_at)
    except (StoreError, SQLAlchemyError) as error:
        print(f"akm keys: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    if args.json:
        print(json.dumps({"key": created.token, **key_json(created.info)}, indent=2))
    else:
        print(created.token)
        print(
            f"akm keys: created key {created.info.key_id} with scope(s) {', '.join(created.info.scopes)}"
            + (f", expiring {_when(expires_at)}" if expires_at else "")
            + ". The key is shown only now: store it safely.",
            file=sys.stderr,
        )
    return EXIT_OK


def run_list(args: argparse.Namespace, settings: Settings) -> int:
    store = _open(settings)
    if store is None:
        return EXIT_USAGE
    try:
        keys = store.list_api_keys()
    except SQLAlchemyError as error:
        print(f"akm keys: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    moment = now_utc()
    documents = [key_json(info, moment) for info in keys]
    if args.json:
        print(json.dumps(documents, indent=2))
        return EXIT_OK
    columns = ("id", "name", "scopes", "status", "createdAt", "expiresAt", "revokedAt", "lastUsedAt")
    rows = [
        [
            ",".join(document[column]) if column == "scopes" else str(document[column] or "-")
            for column in columns
        ]
        for document in documents
    ]
    widths = [max([len(column), *(len(row[index]) for row in rows)]) for index, column in enumerate(columns)]
    for row in [list(columns), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return EXIT_OK


def run_revoke(args: argparse.Namespace, settings: Settings) -> int:
    store = _open(settings)
    if store is None:
        return EXIT_USAGE
    try:
        with store.transaction() as tx:
            revoked = tx.revoke_api_key(args.key_id)
    except SQLAlchemyError as error:
        print(f"akm keys: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    if revoked is None:
        print(f"akm keys: no key with ID {args.key_id!r}", file=sys.stderr)
        return EXIT_UNKNOWN
    print(f"akm keys: revoked key {revoked.key_id} at {_when(revoked.revoked_at)}")
    return EXIT_OK
