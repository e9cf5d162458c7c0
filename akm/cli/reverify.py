"""``akm reverify [--source ID]``: re-verify what relied on sources that changed or disappeared.

Rows read at an old revision become stale (rejected when the source is gone); the latest packet
of each affected task gets a new packet with a new verdict; nothing earlier is overwritten.

Claims are judged by the runtime's verifier, the one answering uses (with the NLI model when one
is configured). Each source is re-verified in one transaction: a run that stops part-way leaves the
sources it did not finish pending, and the next run (or ingest) picks them up.

Exit status: 0 done, 2 unknown source, unusable manifest, database or verifier model,
4 a re-verified packet failed validation (nothing of that source was stored).
"""

from __future__ import annotations

import argparse
import json
import sys

from sqlalchemy.exc import SQLAlchemyError

from akm.manifest import ManifestError, load_manifest
from akm.packet import InvalidPacketError
from akm.reverify import DeferredVerifier, UnknownSourceError, reverify
from akm.runtime import ModelUnavailableError, Runtime
from akm.settings import Settings
from akm.store import open_store

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INVALID_PACKET = 4


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "reverify",
        help="re-verify packets and claims that relied on changed or deleted sources",
        description=(
            "Mark rows read at an old source revision stale (rejected if the source is gone), check each "
            "affected claim against the current text, and append a new verification packet to each affected task."
        ),
    )
    parser.add_argument("--source", metavar="ID", help="only this source ID (default: every source)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run_reverify)


def run_reverify(args: argparse.Namespace, settings: Settings) -> int:
    try:
        store = open_store(settings.resolved_database_url)
        # Corpus rows are re-read from the files their roots were ingested from.
        manifest = load_manifest(settings.manifest_path).with_corpus_files(store.corpus_files())
    except (ManifestError, SQLAlchemyError, OSError) as error:
        print(f"akm reverify: {error}", file=sys.stderr)
        return EXIT_USAGE
    runtime = Runtime.from_settings(settings)
    try:
        report = reverify(
            store, manifest, source_id=args.source, verifier=DeferredVerifier(lambda: runtime.verifier)
        )
    except UnknownSourceError as error:
        print(f"akm reverify: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ModelUnavailableError as error:
        print(f"akm reverify: {error}; sources not yet re-verified stay pending", file=sys.stderr)
        return EXIT_USAGE
    except InvalidPacketError as error:
        print(
            f"akm reverify: internal error, nothing of the failing source was stored: {error}",
            file=sys.stderr,
        )
        return EXIT_INVALID_PACKET
    finally:
        store.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print("\n".join(report.summary_lines()))
    return EXIT_OK
