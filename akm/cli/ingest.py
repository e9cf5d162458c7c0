"""``akm ingest [PATH...]`` and ``akm ingest --corpus FILE``: build or refresh the evidence store.

Without paths, every root of the project manifest is walked; paths (relative to the project
root) limit the walk. ``--corpus`` ingests a BEIR-style JSONL(.gz) corpus as its own public
source root instead. Progress goes to stderr; the summary (counts only, no denied names) to
stdout, or the JSON report with ``--json``.

Exit status: 0 done, 2 unusable manifest, corpus, model or database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from akm.embedding import Embedder, EmbeddingModelError, load_embedder
from akm.ingest import IngestError, IngestProgress, IngestReport, ingest, ingest_corpus
from akm.manifest import ManifestError, load_manifest
from akm.reverify import reverify_sources
from akm.settings import Settings
from akm.store import open_store

EXIT_OK = 0
EXIT_USAGE = 2
PROGRESS_INTERVAL_S = 2.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="ingest the manifest's sources (or a JSONL corpus) into the evidence store",
        description=(
            "Walk the project manifest's source roots (or only PATHs, relative to the project root), "
            "cut allowed Markdown and text into located chunks, embed them and store source versions, "
            "chunks and link edges. Unchanged sources are skipped; changed ones get a new version; "
            "missing ones are marked deleted. Denied paths are never opened and are reported as counts."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="file or folder inside a manifest root")
    parser.add_argument(
        "--corpus", type=Path, metavar="FILE", help='JSONL(.gz) corpus of {"_id","title","text"}'
    )
    parser.add_argument(
        "--corpus-name", metavar="NAME", help="root alias of the corpus (default: from its path)"
    )
    parser.add_argument(
        "--embedder",
        metavar="NAME",
        help="'minilm', 'hashing' (no model; tests), 'none' (no vectors) or a local model folder "
        "(default: settings embedding_model)",
    )
    parser.add_argument("--batch-size", type=int, metavar="N", help="files (or documents) per transaction")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.set_defaults(handler=run_ingest)


class ProgressPrinter:
    """A line on stderr at most every couple of seconds: files, writes, chunks, rate."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = PROGRESS_INTERVAL_S) -> None:
        self.stream = stream
        self.interval_s = interval_s
        self._last = 0.0

    def __call__(self, progress: IngestProgress) -> None:
        now = time.monotonic()
        if progress.phase != "done" and now - self._last < self.interval_s:
            return
        self._last = now
        rate = progress.files_done / progress.elapsed_s if progress.elapsed_s > 0 else 0.0
        print(
            f"ingest: {progress.files_done} scanned, {progress.files_written} written, "
            f"{progress.chunks_written} chunks, {rate:.1f}/s, {progress.elapsed_s:.0f} s",
            # sys.stderr is looked up at each call: it may have been replaced since construction.
            file=self.stream or sys.stderr,
            flush=True,
        )


def _embedder(name: str) -> Embedder | None:
    return None if name == "none" else load_embedder(name)


def _print_report(report: IngestReport, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return
    for line in report.summary_lines():
        print(line)


def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    progress = None if args.quiet else ProgressPrinter()
    try:
        embedder = _embedder(args.embedder or settings.embedding_model)
        store = open_store(settings.resolved_database_url)
    except (EmbeddingModelError, SQLAlchemyError, OSError) as error:
        print(f"akm ingest: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.corpus is not None:
            if args.paths:
                print("akm ingest: give either PATHs or --corpus, not both", file=sys.stderr)
                return EXIT_USAGE
            kwargs = {"batch_size": args.batch_size} if args.batch_size else {}
            report = ingest_corpus(
                store, args.corpus, alias=args.corpus_name, embedder=embedder, progress=progress, **kwargs
            )
        else:
            manifest = load_manifest(settings.manifest_path)
            kwargs = {"batch_size": args.batch_size} if args.batch_size else {}
            report = ingest(
                store, manifest, args.paths or None, embedder=embedder, progress=progress, **kwargs
            )
            # Changed or deleted sources invalidate what was verified against them.
            for line in reverify_sources(
                store, manifest, report.changed_source_ids + report.deleted_source_ids
            ):
                print(line, file=sys.stderr)
    except (ManifestError, IngestError, EmbeddingModelError) as error:
        print(f"akm ingest: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    _print_report(report, args.json)
    return EXIT_OK
