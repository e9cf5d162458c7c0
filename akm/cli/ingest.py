"""``akm ingest [PATH...]`` and ``akm ingest --corpus FILE``: build or refresh the evidence store.

Without paths, every root of the project manifest is walked; paths (relative to the project
root) limit the walk. ``--corpus`` ingests a BEIR-style JSONL(.gz) corpus as its own public
source root instead. At most the manifest's ``scope.maxCorpusDocuments`` sources are kept
current per target (the manifest's roots together, or the corpus); the rest are counted only.
Progress goes to stderr (a redrawn bar on a terminal, a plain line every few seconds
otherwise); the summary (counts only, no denied names) to stdout, or the JSON report with
``--json``.

Changed or deleted sources, and any left pending by an earlier re-verification that failed or
was interrupted, are re-verified afterwards with the runtime's verifier (the one answering uses),
one transaction per source. A failed re-verification leaves its sources pending for the next
ingest or ``akm reverify``; the ingested sources stay stored.

Exit status: 0 done, 2 unusable manifest, corpus, model or database, or a PATH that names nothing,
4 the sources were stored but re-verification failed (it stays pending and is retried).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from akm.embedding import Embedder, EmbeddingModelError, load_embedder
from akm.ingest import CAP_FIELD, IngestError, IngestProgress, IngestReport, ingest, ingest_corpus
from akm.manifest import Manifest, ManifestError, load_manifest
from akm.packet import InvalidPacketError
from akm.reverify import DeferredVerifier, ReverifyReport, reverify_sources
from akm.runtime import ModelUnavailableError, Runtime
from akm.settings import Settings
from akm.store import EvidenceStore, open_store

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_REVERIFY_FAILED = 4
BAR_WIDTH = 20
LOG_INTERVAL_S = 2.0
REDRAW_INTERVAL_S = 0.1
# Before this much time the rate is mostly start-up cost and the ETA would mislead.
ETA_AFTER_S = 1.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="ingest the manifest's sources (or a JSONL corpus) into the evidence store",
        description=(
            "Walk the project manifest's source roots (or only PATHs, relative to the project root), "
            "cut the files of every format the manifest's scope.allowedContentTypes admits (Markdown, "
            "text, PDF, HTML, DOCX; docs/ingest.md) into located chunks, embed them and store source "
            "versions, chunks and link edges. Unchanged sources are skipped; changed ones get a new "
            "version; missing ones are marked deleted. Denied paths are never opened and are reported as "
            "counts; encrypted, damaged and over-limit files are counted as denied, files without any "
            "text as no text. "
            "At most the manifest's scope.maxCorpusDocuments sources are kept current (the roots "
            "together, or each corpus by its documents); files over that cap are not opened and are "
            "reported as a count. Progress goes to stderr: a redrawn bar with rate and ETA on a "
            "terminal, a plain line every few seconds otherwise."
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
    parser.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    parser.set_defaults(handler=run_ingest)


def format_duration(seconds: float) -> str:
    """``M:SS``, or ``H:MM:SS`` from an hour on."""
    whole = max(round(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_fields(progress: IngestProgress) -> tuple[float | None, str, str, str, str]:
    """Fraction done (``None`` without a total), then the scanned, rate, time and count texts."""
    unit = progress.unit
    rate = progress.files_done / progress.elapsed_s if progress.elapsed_s > 0 else 0.0
    fraction: float | None = None
    if progress.total is not None:
        fraction = min(progress.files_done / progress.total, 1.0) if progress.total else 1.0
        scanned = f"{progress.files_done}/{progress.total} {unit} scanned"
    else:
        scanned = f"{progress.files_done} {unit} scanned"
    if progress.phase == "done":
        timing = f"done in {format_duration(progress.elapsed_s)}"
    elif progress.total is not None and rate > 0 and progress.elapsed_s >= ETA_AFTER_S:
        timing = f"ETA {format_duration(max(progress.total - progress.files_done, 0) / rate)}"
    elif progress.total is not None:
        timing = "ETA --:--"
    else:
        timing = f"{format_duration(progress.elapsed_s)} elapsed"
    counts = (
        f"{progress.files_written} written, {progress.chunks_written} chunks, {progress.embedded} embedded"
    )
    return fraction, scanned, f"{rate:.1f} {unit}/s", timing, counts


def progress_bar(fraction: float, width: int = BAR_WIDTH) -> str:
    # Rounded down, so the bar is full only when everything is done.
    filled = min(int(fraction * width), width)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def terminal_line(progress: IngestProgress, width: int = BAR_WIDTH) -> str:
    """The redrawn line: bar and percentage when the total is known, then scanned, rate, ETA
    and counts, in that order, so a narrow terminal cuts the counts first."""
    fraction, scanned, rate, timing, counts = progress_fields(progress)
    head = f"{progress_bar(fraction, width)} {int(fraction * 100):3d}% " if fraction is not None else ""
    return f"{head}{scanned} | {rate} | {timing} | {counts}"


def log_line(progress: IngestProgress) -> str:
    """A line that reads well in a log file."""
    fraction, scanned, rate, timing, counts = progress_fields(progress)
    percent = f" ({int(fraction * 100)}%)" if fraction is not None else ""
    return f"ingest: {scanned}{percent}, {counts}, {rate}, {timing}"


class ProgressDisplay:
    """Ingest progress on stderr.

    On a terminal, one line redrawn in place (carriage return) at most every
    ``REDRAW_INTERVAL_S``; elsewhere, a plain line at most every ``LOG_INTERVAL_S`` so logs
    stay readable. The final snapshot is always shown, and ends the terminal line.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        interactive: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        columns: int | None = None,
        bar_width: int = BAR_WIDTH,
    ) -> None:
        self.stream = stream
        self.interactive = interactive
        self.clock = clock
        self.columns = columns
        self.bar_width = bar_width
        self._last: float | None = None
        self._drawn = 0  # length of the terminal line on screen; 0 when no line is open

    def _target(self) -> TextIO:
        # sys.stderr is looked up at each call: it may have been replaced since construction.
        return self.stream or sys.stderr

    def _is_terminal(self, stream: TextIO) -> bool:
        if self.interactive is not None:
            return self.interactive
        isatty = getattr(stream, "isatty", None)
        return bool(isatty()) if callable(isatty) else False

    def __call__(self, progress: IngestProgress) -> None:
        stream = self._target()
        terminal = self._is_terminal(stream)
        now = self.clock()
        interval = REDRAW_INTERVAL_S if terminal else LOG_INTERVAL_S
        done = progress.phase == "done"
        if not done and self._last is not None and now - self._last < interval:
            return
        self._last = now
        if not terminal:
            stream.write(log_line(progress) + "\n")
            stream.flush()
            return
        columns = self.columns or shutil.get_terminal_size().columns
        # One column short of the width: a line that fills it would wrap and break the redraw.
        line = terminal_line(progress, self.bar_width)[: max(columns - 1, 1)]
        stream.write("\r" + line.ljust(self._drawn) + ("\n" if done else ""))
        stream.flush()
        self._drawn = 0 if done else len(line)

    def close(self) -> None:
        """End an open terminal line, so what is printed next starts on its own line."""
        if self._drawn:
            stream = self._target()
            stream.write("\n")
            stream.flush()
            self._drawn = 0


def _embedder(name: str) -> Embedder | None:
    return None if name == "none" else load_embedder(name)


def _print_report(report: IngestReport, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
        return
    for line in report.summary_lines():
        print(line)


def _cap_notice(report: IngestReport, unit: str, manifest_path: Path) -> str:
    return (
        f"akm ingest: corpus cap reached, {unit} left out: {report.over_cap} (count only); "
        f"the manifest keeps at most {report.corpus_cap} sources current per ingest target. "
        f"Raise {CAP_FIELD} in {manifest_path} to ingest them."
    )


def _reverify_after(
    store: EvidenceStore, manifest: Manifest, report: IngestReport, settings: Settings
) -> ReverifyReport | str:
    """Re-verify what the ingest changed (and anything pending); the failure message when it fails."""
    runtime = Runtime.from_settings(settings)
    try:
        return reverify_sources(
            store,
            manifest,
            report.changed_source_ids + report.deleted_source_ids,
            verifier=DeferredVerifier(lambda: runtime.verifier),
        )
    except (InvalidPacketError, ModelUnavailableError, SQLAlchemyError) as error:
        return (
            f"akm ingest: the sources were stored, but re-verification failed ({type(error).__name__}: "
            f"{error}); what relied on them stays pending and is re-verified by the next "
            "`akm ingest` or `akm reverify`"
        )


def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    display = None if args.quiet else ProgressDisplay()
    try:
        embedder = _embedder(args.embedder or settings.embedding_model)
        store = open_store(settings.resolved_database_url)
    except (EmbeddingModelError, SQLAlchemyError, OSError) as error:
        print(f"akm ingest: {error}", file=sys.stderr)
        return EXIT_USAGE
    unit = "files"
    reverified: ReverifyReport | str | None = None
    try:
        if args.corpus is not None and args.paths:
            print("akm ingest: give either PATHs or --corpus, not both", file=sys.stderr)
            return EXIT_USAGE
        manifest = load_manifest(settings.manifest_path)
        kwargs = {"batch_size": args.batch_size} if args.batch_size else {}
        if args.corpus is not None:
            unit = "documents"
            report = ingest_corpus(
                store,
                args.corpus,
                alias=args.corpus_name,
                embedder=embedder,
                progress=display,
                max_documents=manifest.scope.max_corpus_documents,
                **kwargs,
            )
        else:
            report = ingest(
                store, manifest, args.paths or None, embedder=embedder, progress=display, **kwargs
            )
            if report.missing_paths:
                if display is not None:
                    display.close()
                for path in report.missing_paths:
                    print(
                        f"akm ingest: {path}: no such file or folder in the manifest's roots", file=sys.stderr
                    )
                return EXIT_USAGE
            # Changed, deleted or retired sources invalidate what was verified against them.
            reverified = _reverify_after(store, manifest, report, settings)
    except (ManifestError, IngestError, EmbeddingModelError) as error:
        if display is not None:
            display.close()
        print(f"akm ingest: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if display is not None:
            display.close()
        store.close()
    _print_report(report, args.json)
    if report.over_cap:
        print(_cap_notice(report, unit, settings.manifest_path), file=sys.stderr)
    if isinstance(reverified, str):
        print(reverified, file=sys.stderr)
        return EXIT_REVERIFY_FAILED
    if reverified is not None and reverified.sources_checked:
        for line in reverified.summary_lines():
            print(line, file=sys.stderr)
    return EXIT_OK
