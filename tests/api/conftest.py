"""Apps over a seeded SQLite store with fake answer and re-verify services."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from akm.api import ApiLimits, ApiServices, StoreHandle, create_app
from akm.manifest import load_manifest
from akm.service.scope import SourceScope
from akm.settings import Settings, load_settings
from akm.store import EvidenceStore

# The fakes module is also imported by the uvicorn processes the server tests start
# (with this folder on their path), so it is a plain module rather than part of a package.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_fakes import FakeAnswerService, FakeReverifyService, seed_store

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ApiHarness:
    app: FastAPI
    client: TestClient
    store: EvidenceStore
    answers: FakeAnswerService
    reverify: FakeReverifyService
    ids: dict[str, str]


def build_app(
    store: EvidenceStore,
    answers: FakeAnswerService,
    reverify: FakeReverifyService | None = None,
    *,
    settings: Settings | None = None,
    limits: ApiLimits | None = None,
) -> FastAPI:
    services = ApiServices(
        store=StoreHandle(store=store),
        scope=SourceScope(load_manifest(REPO / "config" / "manifest.yaml")),
        answers=answers,
        reverify=reverify or FakeReverifyService(),
    )
    return create_app(settings or load_settings(), services, limits=limits or ApiLimits())


@pytest.fixture
def api(sqlite_store: EvidenceStore, tmp_path: Path) -> Iterator[ApiHarness]:
    ids = seed_store(sqlite_store)
    answers = FakeAnswerService(sqlite_store)
    reverify = FakeReverifyService()
    app = build_app(
        sqlite_store,
        answers,
        reverify,
        settings=load_settings(data_dir=tmp_path),
        limits=ApiLimits(max_body_bytes=32_768),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield ApiHarness(app, client, sqlite_store, answers, reverify, ids)
