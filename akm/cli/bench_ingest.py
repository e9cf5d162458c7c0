"""``akm bench ingest [--json OUT] [--pdf-files N] [--pdf-pages N] ... [--embedder NAME] [--check]``:
ingest throughput per format on generated PDF, HTML, DOCX and Markdown documents.

Writes the documents into a temporary folder (or ``--keep DIR``), measures text extraction and
a full ingest into a fresh SQLite store for each format, prints a table and writes the JSON.
Exit status: 0 done (1 with ``--check`` when PDF extraction is under 20 pages/s), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from akm.settings import Settings

EXIT_OK = 0
EXIT_TARGET_MISSED = 1
EXIT_USAGE = 2
_COUNTS = ("pdf_files", "pdf_pages", "html_files", "docx_files", "markdown_files")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="ingest throughput per format (PDF pages/s, HTML, DOCX, Markdown files/s) on generated documents",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", type=Path, dest="json_out", metavar="OUT", help="write the report here")
    parser.add_argument("--pdf-files", type=int, default=10, metavar="N", help="PDF files (default 10)")
    parser.add_argument("--pdf-pages", type=int, default=50, metavar="N", help="pages per PDF (default 50)")
    parser.add_argument("--html-files", type=int, default=100, metavar="N", help="HTML pages (default 100)")
    parser.add_argument("--docx-files", type=int, default=50, metavar="N", help="DOCX files (default 50)")
    parser.add_argument(
        "--markdown-files", type=int, default=100, metavar="N", help="Markdown files (default 100)"
    )
    parser.add_argument(
        "--embedder",
        default="none",
        metavar="NAME",
        help="embed chunks during ingest: none (default: text only), hashing, minilm, or a model folder",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="write the documents and store here and keep them"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when PDF extraction is under 20 pages/s")
    parser.set_defaults(handler=run_bench_ingest)


def run_bench_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from akm.bench.ingest import BenchSizes, format_table, run_ingest_benchmark
    from akm.embedding import Embedder, EmbeddingModelError, load_embedder

    for name in _COUNTS:
        if getattr(args, name) < 0 or (name == "pdf_pages" and args.pdf_pages < 1):
            flag = "--" + name.replace("_", "-")
            print(
                f"akm bench ingest: {flag} must be {'positive' if name == 'pdf_pages' else 'zero or more'}",
                file=sys.stderr,
            )
            return EXIT_USAGE
    embedder: Embedder | None = None
    if args.embedder != "none":
        try:
            embedder = load_embedder(args.embedder, device=settings.device)
        except EmbeddingModelError as error:
            print(f"akm bench ingest: {error}", file=sys.stderr)
            return EXIT_USAGE
    sizes = BenchSizes(**{name: getattr(args, name) for name in _COUNTS})

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def run(folder: Path) -> dict[str, Any]:
        return run_ingest_benchmark(
            folder, sizes=sizes, embedder=embedder, embedder_name=args.embedder, progress=progress
        )

    if args.keep is not None:
        if args.keep.exists() and any(args.keep.iterdir()):
            print(f"akm bench ingest: --keep {args.keep} must be a new or empty folder", file=sys.stderr)
            return EXIT_USAGE
        args.keep.mkdir(parents=True, exist_ok=True)
        report = run(args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="akm-bench-ingest-") as folder:
            report = run(Path(folder))
    print(format_table(report))
    if args.json_out is not None:
        try:
            args.json_out.parent.mkdir(parents=True, exist_ok=True)
            args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"akm bench ingest: cannot write {args.json_out}: {error.strerror}", file=sys.stderr)
            return EXIT_USAGE
    if args.check and not report["targets"]["pdfExtractPagesPerSecond"]["met"]:
        print("target missed: PDF extraction under 20 pages/s", file=sys.stderr)
        return EXIT_TARGET_MISSED
    return EXIT_OK
