"""JSONL corpus ingest (BEIR format) as its own source root."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from akm.contract.ids import sha256_text
from akm.direct_read import corpus_document_text
from akm.embedding import HashingEmbedder
from akm.ingest import IngestError, corpus_alias, ingest_corpus
from akm.store import EvidenceStore

from .conftest import run_ingest_command

DOCUMENTS = [
    {"_id": "101", "title": "Aspirin and platelets", "text": "Aspirin inhibits platelet aggregation."},
    {"_id": "102", "title": "Vitamin D", "text": "Vitamin D deficiency is common in winter."},
    {"_id": "103", "title": "", "text": "Untitled abstract about telomeres."},
]


def _write_corpus(path: Path, documents: list[dict[str, str]]) -> Path:
    lines = "".join(json.dumps(document) + "\n" for document in documents)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as stream:
            stream.write(lines)
    else:
        path.write_text(lines, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz"], ids=["plain", "gzip"])
def test_corpus_documents_become_row_sources(store: EvidenceStore, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "minifact"
    folder.mkdir()
    corpus = _write_corpus(folder / name, DOCUMENTS)
    assert corpus_alias(corpus) == "minifact"
    report = ingest_corpus(store, corpus, embedder=HashingEmbedder())
    assert (report.new, report.chunks_written, report.embeddings_computed) == (3, 3, 3)
    chunk = store.chunks_of_source("akm:minifact:101")[0]
    expected_text = corpus_document_text(DOCUMENTS[0])
    assert (chunk.locator_type, chunk.locator_value, chunk.text) == ("row", "101", expected_text)
    assert (chunk.start_line, chunk.end_line) == (None, None)
    assert chunk.sha256 == sha256_text(expected_text)
    assert chunk.revision == f"sha256:{chunk.sha256[:16]}"
    assert (chunk.canonical_uri, chunk.external_id, chunk.title, chunk.source_type) == (
        "source:minifact/101",
        "101",
        "Aspirin and platelets",
        "paper",
    )
    assert [c.external_id for c, _ in store.lexical_search("platelet aspirin", 3)] == ["101"]


def test_corpus_reingest_changes_and_deletions(store: EvidenceStore, tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "docs.jsonl", DOCUMENTS)
    ingest_corpus(store, corpus, alias="mini", embedder=HashingEmbedder())
    again = ingest_corpus(store, corpus, alias="mini", embedder=HashingEmbedder())
    assert (again.new, again.changed, again.unchanged, again.deleted, again.embeddings_computed) == (
        0,
        0,
        3,
        0,
        0,
    )
    edited = [dict(DOCUMENTS[0], text="Aspirin reduces fever."), DOCUMENTS[1]]
    _write_corpus(corpus, edited)
    embedder = HashingEmbedder()
    report = ingest_corpus(store, corpus, alias="mini", embedder=embedder)
    assert report.changed_source_ids == ["akm:mini:101"]
    assert report.deleted_source_ids == ["akm:mini:103"]
    assert report.unchanged == 1
    assert embedder.calls == [1]
    assert [version.is_current for version in store.source_versions("akm:mini:101")] == [False, True]


def test_corpus_errors_are_typed(sqlite_store: EvidenceStore, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="not found"):
        ingest_corpus(sqlite_store, tmp_path / "absent.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "1", "text": "ok"}\n{"title": "no id"}\n', encoding="utf-8")
    with pytest.raises(IngestError, match="line 2"):
        ingest_corpus(sqlite_store, bad)


def test_cli_corpus_ingest(tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _write_corpus(tmp_path / "docs.jsonl", DOCUMENTS)
    code = run_ingest_command(
        ["--corpus", str(corpus), "--embedder", "hashing", "--quiet"], database_url=sqlite_url
    )
    assert code == 0
    assert "ingested 3 (new 3, changed 0)" in capsys.readouterr().out
    code = run_ingest_command(["--corpus", str(tmp_path / "nope.jsonl"), "--quiet"], database_url=sqlite_url)
    assert code == 2
    assert "corpus file not found" in capsys.readouterr().err
