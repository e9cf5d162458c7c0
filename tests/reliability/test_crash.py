"""Crash probes: ``akm ingest`` killed with SIGKILL at several moments, in a real subprocess.

After each kill the SQLite file passes its integrity checks (the database's and the FTS5
index's), every stored version is whole (a version is never left without its chunks), and a
rerun leaves exactly what one clean ingest leaves: a crash costs at most the uncommitted batch.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.plugins.corpus import CAP_SENTENCE, Corpus

from .conftest import FILES, REPO, Snapshot, akm_environment, assert_intact, ingest_here, snapshot

pytestmark = pytest.mark.reliability


def _versions(database: Path) -> int:
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0.05) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM source_versions").fetchone()[0])
    except sqlite3.Error:
        return -1


MOMENTS: dict[str, Callable[[Path], bool]] = {
    # As soon as the file exists: while the store is created and migrated.
    "opening-the-store": lambda database: database.exists(),
    "after-the-first-batch": lambda database: _versions(database) >= 2,
    "mid-ingest": lambda database: _versions(database) >= FILES // 2,
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_kill_9_during_ingest_then_rerun_equals_a_clean_run(
    many_files: Path, clean: Snapshot, tmp_path: Path, moment: str
) -> None:
    database = tmp_path / "store.sqlite3"
    environment = akm_environment(tmp_path / "data", many_files / "manifest.yaml", database)
    process = subprocess.Popen(
        [sys.executable, "-m", "akm", "ingest", "--quiet", "--batch-size", "2"],
        env=environment,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    reached = MOMENTS[moment]
    deadline = time.monotonic() + 60
    try:
        while not reached(database) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        os.kill(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(30)
    assert process.returncode == -signal.SIGKILL, "ingest ended before it could be killed at " + moment
    if database.exists():
        assert_intact(database)
        written = snapshot(database)[0]
        assert set(written) <= set(clean[0]), "a killed ingest left a source no clean run has"
    ingest_here(many_files, database)
    assert_intact(database)
    assert snapshot(database) == clean


CONFIGURATION = "akm:docs:configuration.md"

# Runs ingest as a library, then dies by SIGKILL at the chosen point of the re-verification.
_DIE_SCRIPT = """
import os, signal, sys
from akm.embedding import HashingEmbedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.reverify import reverify_sources
from akm.store import open_store
from akm.store.repository import StoreTransaction
from akm.verify import LexicalClaimVerifier

manifest_path, url, point = sys.argv[1:]
store = open_store(url)
manifest = load_manifest(manifest_path)
report = ingest(store, manifest, embedder=HashingEmbedder())
assert report.changed_source_ids, report.to_json()
if point == "before-reverification":
    os.kill(os.getpid(), signal.SIGKILL)
def die(self, packet):
    os.kill(os.getpid(), signal.SIGKILL)
StoreTransaction.save_packet = die  # inside the re-verification transaction, rows already written
reverify_sources(store, manifest, report.changed_source_ids, verifier=LexicalClaimVerifier())
"""


@pytest.mark.parametrize("point", ["before-reverification", "inside-the-reverification-transaction"])
def test_kill_9_around_reverification_leaves_it_pending_and_the_next_ingest_does_it(
    corpus: Corpus, tmp_path: Path, point: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from akm.answer import AnswerOptions, answer
    from akm.cli import main

    store = corpus.store
    root: Path = corpus.root
    first = answer(
        "What does the per-source cap limit?",
        AnswerOptions(max_rows=4),
        store=store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=corpus.generator(f"{CAP_SENTENCE} [E1]"),
    )
    supporting = first.packet.claims[0].support_row_ids[0]
    path = root / "docs" / "configuration.md"
    path.write_bytes(path.read_bytes() + b"\nAn added closing line.\n")
    url = store.engine.url.render_as_string(hide_password=False)
    manifest_path = str(root / "config" / "manifest.yaml")
    done = subprocess.run(
        [sys.executable, "-c", _DIE_SCRIPT, manifest_path, url, point],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert_intact(Path(store.engine.url.database))
    # The new version is committed; nothing of the re-verification is.
    assert store.get_row(supporting)["verification"]["state"] == "claim-supported"
    assert len(store.packets_of_task(first.packet.task_id)) == 1
    assert store.sources_awaiting_reverification() == [CONFIGURATION]
    argv = ["--manifest", manifest_path, "--database-url", url, "ingest", "--embedder", "hashing", "--quiet"]
    assert main(argv) == 0
    assert "unchanged" in capsys.readouterr().out
    assert store.get_row(supporting)["verification"]["state"] == "stale"
    assert len(store.packets_of_task(first.packet.task_id)) == 2
    assert store.sources_awaiting_reverification() == []
