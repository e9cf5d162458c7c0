"""Apps over a seeded SQLite store with fake answer and re-verify services."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from akm.api import ApiLimits
from akm.settings import load_settings
from akm.store import EvidenceStore, open_store

# The fakes module is also imported by the uvicorn processes the server tests start
# (with this folder on their path), so it is a plain module rather than part of a package.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_fakes import ApiHarness, FakeAnswerService, FakeReverifyService, build_app, seed_store

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def seeded_sqlite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A seeded SQLite file made once; each test works on its own copy."""
    path = tmp_path_factory.mktemp("seeded") / "seeded.sqlite3"
    store = open_store(f"sqlite:///{path}")
    ids = seed_store(store)
    store.close()
    return path, ids


@pytest.fixture
def seeded_store(seeded_sqlite: tuple[Path, dict[str, str]], tmp_path: Path) -> Iterator[EvidenceStore]:
    copy = tmp_path / "store.sqlite3"
    shutil.copyfile(seeded_sqlite[0], copy)
    store = open_store(f"sqlite:///{copy}")
    yield store
    store.close()


@pytest.fixture
def api(
    seeded_store: EvidenceStore, seeded_sqlite: tuple[Path, dict[str, str]], tmp_path: Path
) -> Iterator[ApiHarness]:
    answers = FakeAnswerService(seeded_store)
    reverify = FakeReverifyService()
    app = build_app(
        seeded_store,
        answers,
        reverify,
        settings=load_settings(data_dir=tmp_path),
        limits=ApiLimits(max_body_bytes=32_768),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield ApiHarness(app, client, seeded_store, answers, reverify, dict(seeded_sqlite[1]))
