"""Concurrency probes: two ingests of one store at once, and answers while an ingest writes.

Two ingests neither duplicate nor lose anything (the store equals one clean run); an answer
stored while its source changes is valid, and whatever it read at the old version is
re-verified by the next ingest (nothing is left pending).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from akm.packet import packet_findings
from tests.plugins.corpus import CAP_SENTENCE, Corpus

from .conftest import REPO, Snapshot, akm_environment, assert_intact, snapshot

pytestmark = pytest.mark.reliability


def test_two_ingests_at_once_equal_one_clean_run(many_files: Path, clean: Snapshot, tmp_path: Path) -> None:
    database = tmp_path / "store.sqlite3"
    environment = akm_environment(tmp_path / "data", many_files / "manifest.yaml", database)
    command = [sys.executable, "-m", "akm", "ingest", "--quiet", "--batch-size", "2"]
    processes = [
        subprocess.Popen(command, env=environment, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=90)
        assert process.returncode == 0, stderr.decode()[-2000:]
    assert_intact(database)
    assert snapshot(database) == clean


def test_answers_during_an_ingest_are_stored_whole(corpus: Corpus, tmp_path: Path) -> None:
    from akm.answer import AnswerOptions, answer
    from akm.cli import main

    for path in sorted((corpus.root / "docs").glob("*.md")):
        path.write_bytes(path.read_bytes() + b"\nAn added closing line.\n")
    url = corpus.store.engine.url.render_as_string(hide_password=False)
    manifest = corpus.root / "config" / "manifest.yaml"
    environment = akm_environment(tmp_path / "data", manifest, Path(corpus.store.engine.url.database or ""))
    process = subprocess.Popen(
        [sys.executable, "-m", "akm", "ingest", "--quiet", "--batch-size", "1"],
        env=environment,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    database = Path(corpus.store.engine.url.database or "")
    versions = _versions(database)
    deadline = time.monotonic() + 60
    # Answer only once the ingest writes: answers before its first commit would overlap nothing.
    while _versions(database) == versions and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    answered: list[str] = []
    while process.poll() is None and len(answered) < 4 and time.monotonic() < deadline:
        result = answer(
            "What does the per-source cap limit?",
            AnswerOptions(max_rows=4),
            store=corpus.store,
            manifest=corpus.manifest,
            embedder=corpus.embedder,
            generator=corpus.generator(f"{CAP_SENTENCE} [E1]"),
        )
        answered.append(result.packet_id)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert answered, "no answer ran during the ingest"
    for packet_id in answered:
        stored = corpus.store.get_packet(packet_id)
        assert stored is not None and packet_findings(stored) == []
    # Answers stored while their source changed are re-verified by the next ingest.
    argv = ["--manifest", str(manifest), "--database-url", url, "ingest", "--embedder", "hashing", "--quiet"]
    assert main(argv) == 0
    assert corpus.store.sources_awaiting_reverification() == []
    assert_intact(database)


def _versions(database: Path) -> int:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM source_versions").fetchone()[0])
