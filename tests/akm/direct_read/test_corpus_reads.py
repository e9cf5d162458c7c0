"""Corpus rows (``source:<alias>/<id>``) are read directly from the JSONL file they were ingested from.

The corpus is written by each test, ingested with ``ingest_corpus`` (which records the file in
the store), retrieved, and read through ``RootReaders``; a changed document is stale, and an
answer over the corpus cites claim-supported rows.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from akm.answer import EvidencePrompt, GeneratedAnswer, answer
from akm.bench.retrieval import benchmark_manifest
from akm.config import DEFAULT_MANIFEST_FILE
from akm.contract.models import EvidenceRow
from akm.direct_read import direct_read
from akm.embedding import Embedder, load_embedder
from akm.fusion import FusionSettings, fuse
from akm.ingest import ingest, ingest_corpus
from akm.manifest import Manifest, load_manifest
from akm.retrieval.orchestrate import retrieve
from akm.runtime import Runtime
from akm.settings import Settings
from akm.source_readers import RootReaders
from akm.store import EvidenceStore, open_store

REPO_ROOT_DIR = Path(__file__).resolve().parents[3]

DOCUMENTS = [
    {
        "_id": "d1",
        "title": "Tidal locking",
        "text": "The Moon is tidally locked to the Earth. Its rotation period equals its orbital period.",
    },
    {
        "_id": "d2",
        "title": "Photosynthesis",
        "text": "Chloroplasts convert light energy into chemical energy. Plants release oxygen in the process.",
    },
    {
        "_id": "d3",
        "title": "Plate tectonics",
        "text": "Continental plates drift a few centimetres each year. Earthquakes happen at plate boundaries.",
    },
]


def write_corpus(path: Path, documents: list[dict[str, Any]]) -> Path:
    lines = "".join(json.dumps(document) + "\n" for document in documents).encode("utf-8")
    path.write_bytes(gzip.compress(lines) if path.suffix == ".gz" else lines)
    return path


@dataclass
class CorpusProject:
    corpus: Path
    store: EvidenceStore
    manifest: Manifest
    embedder: Embedder


@pytest.fixture(params=["facts.jsonl", "facts.jsonl.gz"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CorpusProject]:
    corpus = write_corpus(tmp_path / request.param, DOCUMENTS)
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    embedder = load_embedder("hashing")
    ingest_corpus(store, corpus, embedder=embedder)
    base = load_manifest(DEFAULT_MANIFEST_FILE)
    manifest = benchmark_manifest(base, corpus).with_corpus_files(store.corpus_files())
    yield CorpusProject(corpus=corpus, store=store, manifest=manifest, embedder=embedder)
    store.close()


def winners(project: CorpusProject, question: str) -> list[EvidenceRow]:
    retrieval = retrieve(question, project.store, project.manifest, project.embedder, record=False)
    return list(fuse(retrieval.candidates, FusionSettings.from_manifest(project.manifest)).winners)


def test_ingest_records_the_corpus_file(project: CorpusProject) -> None:
    assert project.store.corpus_files() == {"facts": str(project.corpus.resolve())}
    assert project.manifest.corpus_file("facts") == project.corpus.resolve()


def test_retrieved_corpus_rows_are_read_directly(project: CorpusProject) -> None:
    rows = winners(project, "Is the Moon tidally locked?")
    assert rows and rows[0].source.canonical_uri == "source:facts/d1"
    readers = RootReaders(project.manifest)
    outcome = direct_read(rows[0], readers.for_row(rows[0]))
    assert outcome.status == "direct-read", outcome.reason
    direct = outcome.row.verification.direct_read
    assert direct is not None
    assert direct.read_method == "source-api-read"
    assert direct.checksum_match is True
    assert outcome.read is not None and "tidally locked" in outcome.read.text


def test_a_changed_document_is_stale(project: CorpusProject) -> None:
    row = winners(project, "Is the Moon tidally locked?")[0]
    changed = [dict(document) for document in DOCUMENTS]
    changed[0]["text"] = "The Moon rotates freely."
    # The other documents first: offsets move, so a reader indexed before must index again.
    write_corpus(project.corpus, [changed[2], changed[1], changed[0]])
    readers = RootReaders(project.manifest)
    outcome = direct_read(row, readers.for_row(row))
    assert outcome.status == "stale"


def test_a_document_removed_from_the_corpus_is_rejected(project: CorpusProject) -> None:
    row = winners(project, "Is the Moon tidally locked?")[0]
    write_corpus(project.corpus, DOCUMENTS[1:])
    outcome = direct_read(row, RootReaders(project.manifest).for_row(row))
    assert (outcome.status, outcome.reason) == ("rejected", "source-missing")


def test_without_a_recorded_corpus_file_the_row_is_rejected(project: CorpusProject) -> None:
    row = winners(project, "Is the Moon tidally locked?")[0]
    unregistered = project.manifest.with_corpus_files({})
    outcome = direct_read(row, RootReaders(unregistered).for_row(row))
    assert (outcome.status, outcome.reason) == ("rejected", "source-unreadable")


class QuotingGenerator:
    """Answers with the first sentence it was given, as an extractive reader would."""

    def stream(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> Generator[str, None, GeneratedAnswer]:
        text = prompt.passages[0] if prompt.passages else ""
        yield text
        return GeneratedAnswer(text=text, decode={})


def test_an_answer_over_the_corpus_cites_claim_supported_rows(project: CorpusProject) -> None:
    result = answer(
        "Is the Moon tidally locked to the Earth?",
        store=project.store,
        manifest=project.manifest,
        embedder=project.embedder,
        generator=QuotingGenerator(),
    )
    supported = [row for row in result.packet.evidence_rows if row.verification.state == "claim-supported"]
    assert supported, result.to_json()["verdict"]
    assert {row.source.canonical_uri for row in supported} == {"source:facts/d1"}
    assert "tidally locked" in result.answer


def test_the_runtime_manifest_knows_the_recorded_corpus_files(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "facts.jsonl", DOCUMENTS)
    settings = Settings(data_dir=tmp_path / "data", embedding_model="none")
    runtime = Runtime.from_settings(settings)
    try:
        ingest_corpus(runtime.store, corpus)
        assert runtime.manifest.corpus_file("facts") == corpus.resolve()
    finally:
        runtime.close()


def test_a_walk_leaves_corpus_roots_alone(project: CorpusProject, tmp_path: Path) -> None:
    """A manifest naming both a folder root and a corpus root: ``akm ingest`` walks only the folder,
    so the corpus root's '.' is never walked and its documents are not marked deleted."""
    root = tmp_path / "walked"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "note.md").write_text("# Note\n\nA note about tides.\n", encoding="utf-8")
    (root / "stray.md").write_text("# Stray\n\nNot under any folder root.\n", encoding="utf-8")
    docs_ref = load_manifest(DEFAULT_MANIFEST_FILE).source_refs[0]
    manifest = project.manifest.model_copy(
        update={"project_root": root, "source_refs": (docs_ref, *project.manifest.source_refs)}
    )
    assert manifest.corpus_aliases() == {"facts"}
    report = ingest(project.store, manifest, embedder=project.embedder)
    assert (report.new, report.deleted) == (1, 0)
    facts = project.store.source_states("facts")
    assert sorted(state.path for state in facts.values() if not state.deleted) == ["d1", "d2", "d3"]


SCIFACT = REPO_ROOT_DIR.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl.gz"


@pytest.mark.datasets
@pytest.mark.skipif(not SCIFACT.is_file(), reason="../shared/datasets/scifact is not present")
def test_an_answer_over_scifact_cites_the_gold_abstract_read_from_the_shared_file(tmp_path: Path) -> None:
    """The first 300 SciFact abstracts (the rest counted over the cap), read back from the shared .gz."""
    store = open_store(f"sqlite:///{tmp_path / 'scifact.sqlite3'}")
    try:
        report = ingest_corpus(store, SCIFACT, max_documents=300)
        assert report.ingested == 300
        base = load_manifest(DEFAULT_MANIFEST_FILE)
        manifest = benchmark_manifest(base, SCIFACT).with_corpus_files(store.corpus_files())
        result = answer(
            "Egr2 regulates the homeostasis of B and T cells.",
            store=store,
            manifest=manifest,
            embedder=None,
            generator=QuotingGenerator(),
        )
        supported = {
            row.source.canonical_uri
            for row in result.packet.evidence_rows
            if row.verification.state == "claim-supported"
        }
        assert "source:scifact/1550937" in supported
        assert all(row.verification.state != "rejected" for row in result.packet.evidence_rows)
    finally:
        store.close()
