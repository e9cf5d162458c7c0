"""Ingest throughput per document format, on generated documents.

``run_ingest_benchmark`` writes a throwaway project (PDF files of many pages, HTML pages with
scripts and navigation around their main content, DOCX files with headings and paragraphs,
Markdown files), then for each format measures

* **extraction**: reading each file and turning it into located chunks, nothing else
  (``akm.ingest.formats.extract_document``; for Markdown, ``chunk_text``);
* **ingest**: ``akm.ingest.ingest`` of that format's folder into a fresh store: walk, read,
  extract, chunk, embed (with the given embedder) and write, as ``akm ingest`` does.

PDF figures are pages per second; the others files per second. The PDFs are written here by a
small writer of text-only PDF pages (Helvetica, one text line per line), so the benchmark needs
no PDF library beyond the reader the service uses.
"""

from __future__ import annotations

import io
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import Embedder
from akm.ingest import ingest
from akm.ingest.chunking import chunk_text
from akm.ingest.content_types import DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT
from akm.ingest.formats import extract_document
from akm.manifest import Manifest, load_manifest
from akm.store import open_store

# The target: PDF text extraction of at least 20 pages per second (on 2 cores).
PDF_PAGES_PER_SECOND_TARGET = 20.0

_WORDS = [
    "telescope",
    "dome",
    "quasar",
    "nebula",
    "relay",
    "badge",
    "archive",
    "catalogue",
    "redshift",
    "spectrum",
    "observer",
    "night",
    "crew",
    "station",
    "orbit",
    "signal",
    "antenna",
    "calibration",
    "mirror",
    "detector",
    "cooling",
    "vacuum",
    "pressure",
    "valve",
    "schedule",
    "maintenance",
    "report",
    "survey",
    "galaxy",
    "cluster",
    "pulsar",
    "photon",
    "exposure",
    "filter",
    "lens",
    "shutter",
    "readout",
    "noise",
    "frame",
    "dark",
    "flat",
    "bias",
    "reduction",
    "pipeline",
    "storage",
    "backup",
    "checksum",
    "revision",
    "policy",
    "visitor",
    "desk",
    "renewal",
    "contractor",
    "permit",
    "safety",
    "helmet",
    "ladder",
    "platform",
    "cable",
    "power",
    "supply",
    "fuse",
]


@dataclass(frozen=True)
class BenchSizes:
    """How many documents of each format, and how many pages per PDF."""

    pdf_files: int = 10
    pdf_pages: int = 50
    html_files: int = 100
    docx_files: int = 50
    markdown_files: int = 100


def _sentence(rng: random.Random, words: int) -> str:
    chosen = [rng.choice(_WORDS) for _ in range(words)]
    return (" ".join(chosen)).capitalize() + f" {rng.randint(1, 9999)}."


def _paragraph(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(sentences))


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1", errors="replace") + b")"


def write_text_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A PDF with one page per item and one text line per string (Helvetica, 10 pt, WinAnsi)."""
    objects: list[bytes] = []
    page_numbers = [4 + 2 * index for index in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = b" ".join(b"%d 0 R" % number for number in page_numbers)
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % len(pages))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for index, lines in enumerate(pages):
        content = (
            b"BT /F1 10 Tf 13 TL 56 760 Td "
            + b" ".join(_pdf_string(line) + b" Tj T*" for line in lines)
            + b" ET"
        )
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % (page_numbers[index] + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _pdf_document(rng: random.Random, pages: int) -> bytes:
    """Dense pages: about 50 lines of about 90 characters each."""
    content: list[list[str]] = []
    for page in range(pages):
        lines = [f"Section {page + 1}: {_sentence(rng, 5)}"]
        lines.extend(_sentence(rng, rng.randint(11, 15)) for _ in range(50))
        content.append(lines)
    return write_text_pdf(content)


def _html_document(rng: random.Random, number: int) -> bytes:
    sections = "".join(
        f"<h2>{_sentence(rng, 3)}</h2>" + "".join(f"<p>{_paragraph(rng)}</p>" for _ in range(3))
        for _ in range(4)
    )
    return (
        f"<!doctype html><html><head><title>Page {number}</title>"
        "<script>document.body.innerHTML = 'not run';</script><style>p { margin: 0 }</style></head><body>"
        "<nav><a href='/'>Home</a> <a href='javascript:void(0)'>Menu</a></nav>"
        f"<main><h1>Page {number}</h1><p>{_paragraph(rng)}</p>{sections}</main>"
        "<footer>Footer text</footer></body></html>"
    ).encode()


def _docx_document(rng: random.Random, number: int) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading(f"Report {number}", level=1)
    for _ in range(4):
        document.add_heading(_sentence(rng, 3), level=2)
        for _ in range(4):
            document.add_paragraph(_paragraph(rng))
    stream = io.BytesIO()
    document.save(stream)
    return stream.getvalue()


def _markdown_document(rng: random.Random, number: int) -> bytes:
    sections = "".join(
        f"## {_sentence(rng, 3)}\n\n" + "".join(f"{_paragraph(rng)}\n\n" for _ in range(3)) for _ in range(4)
    )
    return f"# Note {number}\n\n{_paragraph(rng)}\n\n{sections}".encode()


@dataclass(frozen=True)
class _Format:
    name: str
    folder: str
    suffix: str
    content_type: str
    make: Callable[[random.Random, int], bytes]
    count: int


def _formats(sizes: BenchSizes) -> list[_Format]:
    return [
        _Format(
            "pdf", "pdf", ".pdf", PDF, lambda rng, _: _pdf_document(rng, sizes.pdf_pages), sizes.pdf_files
        ),
        _Format("html", "html", ".html", HTML, _html_document, sizes.html_files),
        _Format("docx", "docx", ".docx", DOCX, _docx_document, sizes.docx_files),
        _Format("markdown", "markdown", ".md", MARKDOWN, _markdown_document, sizes.markdown_files),
    ]


def bench_manifest(project: Path) -> Manifest:
    """The bundled manifest over ``project/docs`` with every format admitted and no corpus cap."""
    document = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    document["projectRoot"] = "."
    document["scope"]["allowedContentTypes"] = [MARKDOWN, PLAIN_TEXT, HTML, PDF, DOCX]
    document["scope"].pop("maxCorpusDocuments", None)
    ref = document["sourceRefs"][0]
    ref["rootPath"] = "docs"
    ref["include"] = ["**/*"]
    ref["exclude"] = []
    path = project / "manifest.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return load_manifest(path)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _rate(count: float, seconds: float) -> float | None:
    return round(count / seconds, 2) if seconds > 0 else None


def run_ingest_benchmark(
    folder: Path,
    *,
    sizes: BenchSizes = BenchSizes(),
    embedder: Embedder | None = None,
    embedder_name: str = "none",
    seed: int = 13,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Generate the documents under ``folder``, extract and ingest each format, return the report."""
    rng = random.Random(seed)
    project = folder / "project"
    formats = _formats(sizes)
    say = progress or (lambda _message: None)
    for spec in formats:
        directory = project / "docs" / spec.folder
        directory.mkdir(parents=True, exist_ok=True)
        say(f"writing {spec.count} {spec.name} file(s)")
        for number in range(spec.count):
            (directory / f"{spec.name}-{number:04d}{spec.suffix}").write_bytes(spec.make(rng, number))
    manifest = bench_manifest(project)
    store = open_store(f"sqlite:///{folder / 'bench.db'}")
    results: dict[str, Any] = {}
    try:
        for spec in formats:
            files = sorted((project / "docs" / spec.folder).iterdir())
            say(f"extracting {spec.name}")
            pages = chunks = byte_count = 0
            started = time.perf_counter()
            for path in files:
                raw = path.read_bytes()
                byte_count += len(raw)
                if spec.content_type == MARKDOWN:
                    chunks += len(chunk_text(raw.decode("utf-8"), markdown=True))
                else:
                    document = extract_document(spec.content_type, raw)
                    pages += document.pages
                    chunks += len(document.chunks)
            extract_seconds = time.perf_counter() - started
            say(f"ingesting {spec.name}")
            report = ingest(store, manifest, [f"docs/{spec.folder}"], embedder=embedder)
            unit = pages if spec.content_type == PDF else len(files)
            results[spec.name] = {
                "files": len(files),
                "pages": pages if spec.content_type == PDF else None,
                "bytes": byte_count,
                "chunks": chunks,
                "unit": "pages" if spec.content_type == PDF else "files",
                "extractSeconds": round(extract_seconds, 3),
                "extractPerSecond": _rate(unit, extract_seconds),
                "ingestSeconds": round(report.seconds, 3),
                "ingestPerSecond": _rate(unit, report.seconds),
                "ingested": report.ingested,
                "chunksWritten": report.chunks_written,
                "denied": report.denied,
                "noText": report.no_text,
            }
    finally:
        store.close()
    pdf_rate = results["pdf"]["extractPerSecond"] if sizes.pdf_files else None
    return {
        "benchmark": "ingest",
        "cores": usable_cores(),
        "embedder": embedder_name,
        "sizes": {
            "pdfFiles": sizes.pdf_files,
            "pdfPages": sizes.pdf_pages,
            "htmlFiles": sizes.html_files,
            "docxFiles": sizes.docx_files,
            "markdownFiles": sizes.markdown_files,
        },
        "formats": results,
        "targets": {
            "pdfExtractPagesPerSecond": {
                "target": PDF_PAGES_PER_SECOND_TARGET,
                "observed": pdf_rate,
                "met": pdf_rate is not None and pdf_rate >= PDF_PAGES_PER_SECOND_TARGET,
            }
        },
    }


def format_table(report: dict[str, Any]) -> str:
    """The report as a small fixed-width table."""
    header = f"{'format':<9} {'files':>6} {'pages':>6} {'chunks':>7} {'extract/s':>10} {'ingest/s':>9} unit"
    lines = [
        f"akm bench ingest: {report['cores']} core(s), embedder {report['embedder']}",
        header,
        "-" * len(header),
    ]
    for name, row in report["formats"].items():
        pages = "" if row["pages"] is None else str(row["pages"])
        extract = "-" if row["extractPerSecond"] is None else f"{row['extractPerSecond']:.1f}"
        ingest_rate = "-" if row["ingestPerSecond"] is None else f"{row['ingestPerSecond']:.1f}"
        lines.append(
            f"{name:<9} {row['files']:>6} {pages:>6} {row['chunksWritten']:>7} {extract:>10} {ingest_rate:>9} {row['unit']}"
        )
    target = report["targets"]["pdfExtractPagesPerSecond"]
    verdict = "met" if target["met"] else "MISSED"
    lines.append(f"target: PDF extraction ≥ {target['target']:.0f} pages/s: {target['observed']} ({verdict})")
    return "\n".join(lines)


__all__ = [
    "PDF_PAGES_PER_SECOND_TARGET",
    "BenchSizes",
    "bench_manifest",
    "format_table",
    "run_ingest_benchmark",
    "usable_cores",
    "write_text_pdf",
]
