"""Fixtures of the reliability probes: a copy of the bundled corpus with its own store, and
helpers that run ``akm`` as a real subprocess (bounded by a timeout, so a hang fails)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from akm.embedding import Embedder, load_embedder
from akm.ingest import ingest
from akm.manifest import Manifest, load_manifest
from akm.store import EvidenceStore, open_store

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FixedGenerator:
    """Answers with a fixed text (the claims under test), whatever the prompt."""

    text: str
    prompts: list[Any] = field(default_factory=list)

    def generate(self, prompt: Any, *, max_new_tokens: int, temperature: float, seed: int | None) -> Any:
        from akm.answer import GeneratedAnswer

        self.prompts.append(prompt)
        return GeneratedAnswer(text=self.text, decode={"new_tokens": 0, "source": "fixed"})


@dataclass
class Corpus:
    """A copy of the bundled docs with its own manifest and SQLite store, ingested once."""

    root: Path
    manifest: Manifest
    store: EvidenceStore
    embedder: Embedder

    @staticmethod
    def generator(text: str) -> FixedGenerator:
        return FixedGenerator(text)


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[Corpus]:
    root = tmp_path / "project"
    shutil.copytree(REPO / "docs", root / "docs")
    (root / "config").mkdir()
    shutil.copy(REPO / "config" / "manifest.yaml", root / "config" / "manifest.yaml")
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    embedder = load_embedder("hashing")
    manifest = load_manifest(root / "config" / "manifest.yaml")
    ingest(store, manifest, embedder=embedder)
    yield Corpus(root=root, manifest=manifest, store=store, embedder=embedder)
    store.close()


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
