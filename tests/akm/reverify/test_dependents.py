"""The dependency and task queries on both store backends."""

from __future__ import annotations

import shutil
from pathlib import Path

from akm.answer import AnswerOptions, answer
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import load_embedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.reverify import reverify
from akm.store import EvidenceStore
from akm.verify import LexicalClaimVerifier
from tests.plugins.corpus import CAP_SENTENCE as CAP
from tests.plugins.corpus import SERVICE_DOCS, FixedGenerator


def test_dependents_and_task_packets(store: EvidenceStore, tmp_path: Path) -> None:
    shutil.copytree(SERVICE_DOCS, tmp_path / "docs")
    (tmp_path / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, tmp_path / "config" / "manifest.yaml")
    manifest = load_manifest(tmp_path / "config" / "manifest.yaml")
    embedder = load_embedder("hashing")
    ingest(store, manifest, embedder=embedder)

    result = answer(
        "What does the per-source cap limit?",
        AnswerOptions(),
        store=store,
        manifest=manifest,
        embedder=embedder,
        generator=FixedGenerator(f"{CAP} [E1]"),
    )
    (claim,) = result.packet.claims
    (row_id,) = claim.support_row_ids
    revision = result.packet.row(row_id).source.version.revision  # type: ignore[union-attr]
    (dependent,) = store.dependents_of_source("akm:docs:configuration.md", revision)
    assert (dependent.packet_id, dependent.claim_id, dependent.evidence_id, dependent.label) == (
        result.packet_id,
        claim.claim_id,
        row_id,
        "supported",
    )
    assert store.dependents_of_source("akm:docs:configuration.md", "git-blob:other") == []
    assert store.packets_of_task(result.packet.task_id) == [result.packet_id]

    path = tmp_path / "docs" / "configuration.md"
    path.write_text(path.read_text(encoding="utf-8").replace("(2 rows", "(5 rows"), encoding="utf-8")
    ingest(store, manifest, embedder=embedder)
    report = reverify(store, manifest, source_id="akm:docs:configuration.md", verifier=LexicalClaimVerifier())
    (summary,) = report.packets
    assert store.packets_of_task(result.packet.task_id) == [result.packet_id, summary.packet_id]
    assert store.packet_verdicts([result.packet_id, summary.packet_id]) == {
        result.packet_id: "PASS",
        summary.packet_id: "HOLD",
    }
