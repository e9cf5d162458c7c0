"""Fixtures of the reliability probes (the service-docs corpus comes from ``tests/plugins/corpus.py``) and
helpers that run ``akm`` as a real subprocess (bounded by a timeout, so a hang fails)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import HashingEmbedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.store import open_store

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


def akm_environment(data_dir: Path, manifest: Path, database: Path) -> dict[str, str]:
    """The environment of an ``akm`` subprocess on its own data directory, store and manifest."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("AKM_")}
    environment.update(
        AKM_DATA_DIR=str(data_dir),
        AKM_MANIFEST_PATH=str(manifest),
        AKM_DATABASE_URL=f"sqlite:///{database}",
        AKM_EMBEDDING_MODEL="hashing",
        PYTHONUNBUFFERED="1",
    )
    return environment


def run_akm(
    argv: Sequence[str], environment: dict[str, str], *, timeout: float = 60.0, cwd: Path | None = None
) -> Finished:
    """``python -m akm ARGV`` to completion; a hang fails the test at ``timeout`` seconds."""
    done = subprocess.run(
        [sys.executable, "-m", "akm", *argv],
        env=environment,
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Finished(done.returncode, done.stdout, done.stderr)


def assert_no_traceback(finished: Finished) -> None:
    assert "Traceback" not in finished.stderr, finished.stderr[-2000:]


# ---- a project of many small files, ingested once cleanly (crash and concurrency probes) ----

FILES = 150


@pytest.fixture(scope="session")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash") / "project"
    (root / "docs").mkdir(parents=True)
    for number in range(FILES):
        (root / "docs" / f"note-{number:03d}.md").write_text(
            f"# Note {number}\n\nA paragraph about topic{number} and quasar{number % 7}.\n\n"
            f"## Part\n\nMore text {number} " + "word " * 40 + "\n",
            encoding="utf-8",
        )
    document = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    document["projectRoot"] = "."
    document["sourceRefs"][0]["rootPath"] = "docs"
    (root / "manifest.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    return root


Snapshot = tuple[tuple[tuple[str, str, int], ...], int]


def snapshot(database: Path) -> Snapshot:
    """Current sources with their checksum and chunk count, and the number of current chunks."""
    with sqlite3.connect(database) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "sources" not in tables:
            return (), 0  # killed before the first migration committed: nothing of it is left
        sources = connection.execute(
            "SELECT s.source_id, v.sha256, "
            "(SELECT COUNT(*) FROM chunks c WHERE c.source_version_id = v.id AND c.is_current) "
            "FROM sources s JOIN source_versions v ON v.id = s.current_version_id "
            "WHERE s.deleted_at IS NULL ORDER BY s.source_id"
        ).fetchall()
        chunks = connection.execute("SELECT COUNT(*) FROM chunks WHERE is_current").fetchone()[0]
    return tuple((str(a), str(b), int(c)) for a, b, c in sources), int(chunks)


def assert_intact(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "chunks_fts" in tables:
            connection.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        if "source_versions" in tables:
            empty = connection.execute(
                "SELECT COUNT(*) FROM source_versions v "
                "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.source_version_id = v.id)"
            ).fetchone()[0]
            assert empty == 0, "a version was stored without its chunks"


def ingest_here(project: Path, database: Path) -> None:
    store = open_store(f"sqlite:///{database}")
    try:
        ingest(store, load_manifest(project / "manifest.yaml"), embedder=HashingEmbedder(), batch_size=2)
    finally:
        store.close()


@pytest.fixture(scope="session")
def clean(many_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    database = tmp_path_factory.mktemp("clean") / "clean.sqlite3"
    ingest_here(many_files, database)
    return snapshot(database)
