"""Real ingest of a small Markdown tree, then retrieve → fuse → expand → direct read."""

from __future__ import annotations

from pathlib import Path

import yaml

from akm.direct_read import FileSourceReader, direct_read
from akm.embedding import HashingEmbedder
from akm.fusion import FusionSettings, expand_winners, fuse
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.retrieval.neighbours import store_neighbours
from akm.retrieval.orchestrate import retrieve

GUIDE = "# Guide\n\nInstall the service with make install.\n\n## Use\n\nAsk a question about [security](security.md).\n"
SECURITY = "# Security\n\nNever store secret values in any layer.\n\n## Rotation\n\nSigning keys rotate every ninety days.\n"


def _project(tmp_path: Path, manifest_document: dict) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "security.md").write_text(SECURITY, encoding="utf-8")
    (docs / "api-token-notes.md").write_text("# Notes\n\nSigning keys for the vault.\n", encoding="utf-8")
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(manifest_document), encoding="utf-8")
    return path


def test_ingested_sources_are_retrieved_fused_and_directly_read(tmp_path, sqlite_store, manifest_document):
    manifest = load_manifest(_project(tmp_path, manifest_document), check_schema=False)
    embedder = HashingEmbedder()
    ingest(sqlite_store, manifest, embedder=embedder)

    result = retrieve("how often do signing keys rotate", sqlite_store, manifest, embedder)
    fused = fuse(result.candidates, FusionSettings.from_manifest(manifest, max_rows=3))
    winners = expand_winners(fused.winners, store_neighbours(sqlite_store, result.chunk_ids), manifest)
    reader = FileSourceReader.for_manifest(manifest)
    outcomes = [direct_read(row, reader) for row in winners]

    assert winners[0].source.canonical_path == "docs/security.md"
    assert winners[0].content.excerpt == "## Rotation\n\nSigning keys rotate every ninety days."
    assert all("api-token-notes" not in row.source.source_id for row in result.candidates)
    assert [outcome.status for outcome in outcomes] == ["direct-read"] * len(winners)
    first = outcomes[0]
    assert first.read is not None and first.read.text == winners[0].content.excerpt
    assert first.row.verification.direct_read is not None
    assert first.row.verification.direct_read.checksum_match is True

    (tmp_path / "docs" / "security.md").write_text(SECURITY.replace("ninety", "thirty"), encoding="utf-8")
    reread = [direct_read(row, reader) for row in winners]
    expected = [
        "stale" if row.source.canonical_path == "docs/security.md" else "direct-read" for row in winners
    ]
    assert [outcome.status for outcome in reread] == expected
    assert reread[0].row.freshness.state == "stale"
