"""PDF, HTML and DOCX files ingested, retrieved, read directly with their locators, then changed."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.contract.models import EvidenceRow
from akm.contract.validation import validate_document
from akm.direct_read import direct_read
from akm.embedding import HashingEmbedder
from akm.ingest import ingest, pipeline
from akm.ingest.content_types import DOCX, HTML, PDF
from akm.ingest.formats import ExtractionLimits
from akm.manifest import Manifest, load_manifest
from akm.retrieval.orchestrate import retrieve
from akm.source_readers import RootReaders
from akm.store import EvidenceStore

from .documents import docx_bytes, pdf_bytes, project_with, scanned_pdf_bytes, zip_bomb_docx


def _pdf(word: str) -> bytes:
    return pdf_bytes(
        [
            ["Observatory handbook", "The dome opens at dusk for the night crew."],
            ["Catalogue", f"The quasar catalogue lists {word} entries with redshift values."],
        ]
    )


def _html(word: str) -> bytes:
    return (
        "<html><head><title>Relay notes</title><script>alert('never')</script></head><body><main>"
        "<h1>Relay</h1><p>Intro to the relay.</p>"
        f"<h2>Maintenance</h2><p>Restart the nebula relay every {word} hours.</p>"
        "<p><a href='javascript:steal()'>panel</a></p>"
        "</main></body></html>"
    ).encode()


def _docx(word: str) -> bytes:
    return docx_bytes(
        [
            ("h1", "Badge policy"),
            ("p", "Badges are issued at the front desk."),
            ("h2", "Renewal"),
            ("p", f"Pulsar badges are renewed every {word} days."),
        ]
    )


FORMATS: dict[str, tuple[str, Callable[[str], bytes], str, str, str]] = {
    # name: (file, maker, query, expected locator type, expected locator value prefix)
    "pdf": ("handbook.pdf", _pdf, "quasar catalogue entries", "page", "page 2, characters 0-"),
    "html": (
        "relay.html",
        _html,
        "restart the nebula relay",
        "heading",
        "Relay > Maintenance, characters 0-",
    ),
    "docx": ("badges.docx", _docx, "pulsar badges renewed", "other", "paragraphs 3-4"),
}


def _manifest(root: Path) -> Manifest:
    return load_manifest(root / "manifest.yaml")


def _row_for(store: EvidenceStore, manifest: Manifest, query: str, path: str) -> EvidenceRow:
    result = retrieve(query, store, manifest, HashingEmbedder())
    rows = [row for row in result.candidates if row.source.canonical_path == path]
    assert rows, f"no candidate from {path} for {query!r}"
    return rows[0]


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_document_is_ingested_retrieved_read_and_goes_stale(
    tmp_path: Path, sqlite_store: EvidenceStore, kind: str
) -> None:
    name, make, query, locator_type, value_prefix = FORMATS[kind]
    root = project_with(tmp_path, {name: make("412")})
    manifest = _manifest(root)
    report = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert (report.new, report.denied, report.no_text) == (1, {}, 0)
    assert report.pages == (2 if kind == "pdf" else 0)

    row = _row_for(sqlite_store, manifest, query, f"docs/{name}")
    locator = row.scope.locator
    assert locator.type == locator_type
    assert locator.value.startswith(value_prefix)
    assert locator.start_line is not None and locator.end_line is not None
    assert "412" in row.content.excerpt
    if kind == "pdf":
        assert locator.page == 2
    if kind == "html":
        assert locator.heading_path == ("Relay", "Maintenance")
        assert "never" not in row.content.excerpt and "steal" not in row.content.excerpt
    if kind == "docx":
        assert locator.heading_path == ("Badge policy", "Renewal")
    # The source checksum is the original file's, and the row is a valid contract document.
    assert row.source.version.checksum is not None
    assert row.source.version.checksum.endswith(
        hashlib.sha256((root / "docs" / name).read_bytes()).hexdigest()
    )
    assert validate_document(row.to_json(), profile="service", check_upstream=True) == []

    readers = RootReaders(manifest)
    outcome = direct_read(row, readers.for_row(row))
    assert outcome.status == "direct-read", outcome.reason
    assert outcome.read is not None and outcome.read.text == row.content.excerpt
    assert validate_document(outcome.row.to_json(), profile="service", check_upstream=True) == []

    # The original changes: the indexed row reads stale, and a new ingest writes a new version.
    (root / "docs" / name).write_bytes(make("977"))
    stale = direct_read(row, readers.for_row(row))
    assert stale.status == "stale"
    assert stale.row.freshness.state == "stale"
    again = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert (again.changed, again.unchanged) == (1, 0)
    fresh = _row_for(sqlite_store, manifest, query, f"docs/{name}")
    assert "977" in fresh.content.excerpt
    assert direct_read(fresh, readers.for_row(fresh)).status == "direct-read"
    # Unchanged on the next run: nothing is extracted or written again.
    assert ingest(sqlite_store, manifest, embedder=HashingEmbedder()).unchanged == 1


def test_bad_files_are_counted_and_nothing_of_them_is_stored(
    tmp_path: Path, sqlite_store: EvidenceStore
) -> None:
    root = project_with(
        tmp_path,
        {
            "good.pdf": _pdf("412"),
            "locked.pdf": pdf_bytes([["locked words"]], user_password="pw"),
            "broken.pdf": _pdf("412")[:300],
            "scan.pdf": scanned_pdf_bytes(3),
            "cut.docx": _docx("30")[:-300],
            "bomb.docx": zip_bomb_docx(32 * 2**20),
            "notes.rtf": b"{\\rtf1 plain}",
        },
    )
    report = ingest(sqlite_store, _manifest(root), embedder=HashingEmbedder())
    assert report.denied == {"encrypted": 1, "corrupt": 2, "over-limit": 1, "unknown-content-type": 1}
    assert report.no_text == 1
    assert report.new_source_ids == ["akm:docs:good.pdf"]
    assert report.files_seen == 2  # good.pdf and scan.pdf were read; the denied ones are not counted
    assert any(line.startswith("no text 1: ") for line in report.summary_lines())
    assert report.to_json()["noText"] == 1
    assert sorted(sqlite_store.source_states("docs")) == ["akm:docs:good.pdf"]


def test_a_file_that_becomes_unreadable_is_no_longer_current(
    tmp_path: Path, sqlite_store: EvidenceStore
) -> None:
    root = project_with(tmp_path, {"handbook.pdf": _pdf("412")})
    manifest = _manifest(root)
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    row = _row_for(sqlite_store, manifest, "quasar catalogue entries", "docs/handbook.pdf")
    (root / "docs" / "handbook.pdf").write_bytes(pdf_bytes([["locked"]], user_password="pw"))

    outcome = direct_read(row, RootReaders(manifest).for_row(row))
    assert outcome.status == "stale"  # a different file now: its checksum tells
    report = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert report.denied == {"encrypted": 1}
    assert report.deleted_source_ids == ["akm:docs:handbook.pdf"]
    assert sqlite_store.source_states("docs")["akm:docs:handbook.pdf"].deleted


def test_a_file_over_the_size_limit_is_refused_unread(
    tmp_path: Path, sqlite_store: EvidenceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = _pdf("412")
    root = project_with(tmp_path, {"handbook.pdf": big, "relay.html": _html("12")})
    monkeypatch.setattr(pipeline, "DEFAULT_LIMITS", ExtractionLimits(max_file_bytes=len(big) - 1))
    opened: list[str] = []
    original = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(path).name)
        return original(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    report = ingest(sqlite_store, _manifest(root), embedder=HashingEmbedder())
    assert report.denied == {"over-limit": 1}
    assert report.new_source_ids == ["akm:docs:relay.html"]
    assert "handbook.pdf" not in opened


def test_content_types_the_manifest_omits_are_denied_unopened(
    tmp_path: Path, sqlite_store: EvidenceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project_with(
        tmp_path,
        {"handbook.pdf": _pdf("412"), "relay.html": _html("12"), "guide.md": b"# Guide\n\nText.\n"},
        allowedContentTypes=["text/markdown", "Text/HTML"],
    )
    opened: list[str] = []
    original = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(Path(path).name)
        return original(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    report = ingest(sqlite_store, _manifest(root), embedder=HashingEmbedder())
    assert report.denied == {"content-type-not-allowed": 1}
    assert sorted(report.new_source_ids) == ["akm:docs:guide.md", "akm:docs:relay.html"]
    assert "handbook.pdf" not in opened


def test_without_allowed_content_types_only_markdown_is_admitted(
    tmp_path: Path, sqlite_store: EvidenceStore
) -> None:
    root = project_with(
        tmp_path, {"guide.md": b"# G\n\nx\n", "notes.txt": b"plain\n", "relay.html": _html("1")}
    )
    path = root / "manifest.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    del document["scope"]["allowedContentTypes"]
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    report = ingest(sqlite_store, load_manifest(path), embedder=HashingEmbedder())
    assert report.new_source_ids == ["akm:docs:guide.md"]
    assert report.denied == {"content-type-not-allowed": 2}


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_an_unchanged_file_is_cut_again_when_its_format_s_layout_changes(
    tmp_path: Path, sqlite_store: EvidenceStore, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    name, make, *_ = FORMATS[kind]
    root = project_with(tmp_path, {name: make("412")})
    manifest = _manifest(root)
    ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    source_id = f"akm:docs:{name}"
    content_type = {"pdf": PDF, "html": HTML, "docx": DOCX}[kind]
    assert sqlite_store.source_states("docs")[source_id].layout == pipeline.LAYOUT_VERSIONS[content_type]
    assert ingest(sqlite_store, manifest, embedder=HashingEmbedder()).unchanged == 1
    # A reader that lays the format out anew: the stored line ranges would point into other lines,
    # so the same file is cut again, as a new version, and once only.
    monkeypatch.setitem(pipeline.LAYOUT_VERSIONS, content_type, "layout-next")
    again = ingest(sqlite_store, manifest, embedder=HashingEmbedder())
    assert (again.changed, again.unchanged) == (1, 0)
    assert sqlite_store.source_states("docs")[source_id].layout == "layout-next"
    assert len(sqlite_store.source_versions(source_id)) == 2
    assert ingest(sqlite_store, manifest, embedder=HashingEmbedder()).unchanged == 1
