"""Property-based fuzzing from the app's own OpenAPI document (in-process ASGI, no network).

Bounded: at most 25 generated examples per operation. Every response must be below 500,
conform to the documented status codes, media types and schemas, and every error must be
an RFC 9457 problem document.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from api_fakes import FakeAnswerService, build_app
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from akm.api import ApiLimits
from akm.config import DEFAULT_MANIFEST_FILE
from akm.settings import load_settings
from akm.store import EvidenceStore

MAX_EXAMPLES = 25
PROBLEM_FIELDS = {"type", "title", "status"}


REPO = Path(__file__).resolve().parents[3]
# The committed document; test_openapi checks that it equals what the app generates.
schema = schemathesis.openapi.from_path(REPO / "docs" / "openapi.json")


@pytest.fixture
def fuzz_app(seeded_store: EvidenceStore, tmp_path: Path) -> Any:
    # A generated POST /v1/ingest starts a real job: over one small page with the hashing
    # embedder, so it ends in moments instead of embedding the whole documentation.
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "page.md").write_text("# Page\n\nOne small page to ingest.\n", encoding="utf-8")
    (project / "config").mkdir()
    shutil.copy(DEFAULT_MANIFEST_FILE, project / "config" / "manifest.yaml")
    settings = load_settings(
        data_dir=tmp_path, embedding_model="hashing", manifest_path=project / "config" / "manifest.yaml"
    )
    return build_app(
        seeded_store,
        FakeAnswerService(seeded_store),
        settings=settings,
        limits=ApiLimits(generation_wait_s=5.0),
    )


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)
def test_api_answers_every_generated_request_without_server_errors(case: Any, fuzz_app: Any) -> None:
    response = case.call(app=fuzz_app)
    case.validate_response(
        response,
        transport_kwargs={"app": fuzz_app},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
    if response.status_code >= 400:
        content_type = response.headers["content-type"]
        assert content_type == ["application/problem+json"], (response.status_code, response.text)
        body = response.json()
        assert set(body) >= PROBLEM_FIELDS
        assert body["status"] == response.status_code
        assert body["type"].startswith("urn:akm:problem:")
