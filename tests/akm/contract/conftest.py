"""Shared fixtures of the contract tests: a candidate row and the upstream schema validator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from akm.contract.builders import build_candidate_row
from akm.contract.ids import sha256_text
from akm.contract.models import Authority, EvidenceRow, Freshness, Locator
from akm.contract.schema import UPSTREAM_SCHEMA_PATH as VENDORED_UPSTREAM_SCHEMA_PATH

UPSTREAM_SCHEMA_PATH = (
    Path(__file__).resolve().parents[4] / "shared" / "reference" / "akm" / "evidence-row.schema.json"
)
SOURCE_TEXT = "API keys, tokens, passwords ... never, in any layer."
SOURCE_CHECKSUM = sha256_text("# Security\n\n" + SOURCE_TEXT + "\n")
T0 = "2026-07-20T00:00:00.000Z"


def make_candidate(**overrides: Any) -> EvidenceRow:
    arguments: dict[str, Any] = {
        "source_id": "akm:99-system:SECURITY.md",
        "canonical_uri": "file:99-system/SECURITY.md",
        "canonical_path": "99-system/SECURITY.md",
        "source_type": "markdown",
        "classification": "public",
        "project_scopes": ["akm-evidence-pilot"],
        "revision": "working-tree",
        "checksum_algorithm": "sha256",
        "checksum": SOURCE_CHECKSUM,
        "project_id": "akm-evidence-pilot",
        "manifest_id": "akm-evidence-pilot",
        "manifest_version": "1.0.0",
        "collection": "akm",
        "locator": Locator(type="heading", value="## 1. Never store secret values"),
        "authority": Authority(
            level="canonical",
            rationale="Canonical AKM security policy for secret handling.",
            policy_ref="99-system/SECURITY.md",
        ),
        "freshness": Freshness(
            state="current",
            checked_at=T0,
            policy_ref="project-retrieval-manifest:freshnessPolicy",
            reason="Current working-tree source was found.",
        ),
        "lane": "exact",
        "query": "never store secret values",
        "rank": 1,
        "result_set_id": "rs:example",
        "parameters": {"match": "literal"},
        "excerpt": SOURCE_TEXT,
        "at": T0,
    }
    arguments.update(overrides)
    return build_candidate_row(**arguments)


@pytest.fixture
def candidate() -> EvidenceRow:
    return make_candidate()


def upstream_schema() -> dict[str, Any]:
    """The upstream schema from ../shared; without it, the vendored copy, which
    test_schema.py checks byte for byte against ../shared wherever that is present."""
    path = UPSTREAM_SCHEMA_PATH if UPSTREAM_SCHEMA_PATH.exists() else VENDORED_UPSTREAM_SCHEMA_PATH
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="session")
def upstream_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(upstream_schema(), format_checker=jsonschema.FormatChecker())
