"""The project schema is the upstream schema made stricter, never looser; the manifest schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from akm.config import DEFAULT_MANIFEST_FILE
from akm.contract.schema import (
    MANIFEST_SCHEMA_PATH,
    PROJECT_SCHEMA_PATH,
    UPSTREAM_SCHEMA_PATH,
    SchemaLoadError,
    load_schema,
    project_schema,
    upstream_schema,
    validate_manifest,
)

from .conftest import UPSTREAM_SCHEMA_PATH as REFERENCE_SCHEMA_PATH
from .example_documents import candidate_row, claim_supported_row, hold_packet, pass_packet
from .test_rules import RULE_CASES, SCHEMA_CASES

REFERENCE_MANIFEST = REFERENCE_SCHEMA_PATH.parent / "project-retrieval-manifest.yaml"
REPO_ROOT = Path(__file__).resolve().parents[3]


def _project_valid(document: object) -> bool:
    return not project_schema().validate(document)


def _upstream_valid(document: object) -> bool:
    return not upstream_schema().validate(document)


@pytest.mark.skipif(not REFERENCE_SCHEMA_PATH.exists(), reason="../shared/reference/akm is not present")
def test_vendored_upstream_schema_is_the_reference_unchanged() -> None:
    assert UPSTREAM_SCHEMA_PATH.read_bytes() == REFERENCE_SCHEMA_PATH.read_bytes()


def test_project_schema_keeps_every_upstream_definition() -> None:
    upstream = load_schema(UPSTREAM_SCHEMA_PATH)
    project = load_schema(PROJECT_SCHEMA_PATH)
    assert set(upstream["$defs"]) <= set(project["$defs"])
    assert project["oneOf"] == upstream["oneOf"]
    for name, definition in upstream["$defs"].items():
        if "required" in definition:
            assert set(definition["required"]) <= set(project["$defs"][name]["required"]), name
        if "additionalProperties" in definition:
            assert project["$defs"][name]["additionalProperties"] == definition["additionalProperties"], name


def _corpus() -> list[object]:
    documents: list[object] = [
        document.to_json()
        for document in (candidate_row(), claim_supported_row(), pass_packet(), hold_packet())
    ]
    for _, build, mutate, *_ in [*RULE_CASES, *SCHEMA_CASES]:
        document = build()
        mutate(document)
        documents.append(document)
    return documents


def test_corpus_project_valid_implies_upstream_valid() -> None:
    corpus = _corpus()
    project_valid = [document for document in corpus if _project_valid(document)]
    assert len(project_valid) >= 4
    assert all(_upstream_valid(document) for document in project_valid)
    # and the project schema is strictly stronger: some upstream-valid documents are rejected
    assert any(_upstream_valid(document) and not _project_valid(document) for document in corpus)


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        ["", "x", "unavailable", "candidate", "claim-supported", "stale", "sha256", "none", "a" * 64]
    ),
)


def _paths(document: object, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found: list[tuple[str | int, ...]] = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(_paths(value, (*prefix, index)))
    return found


BASES = [candidate_row().to_json(), claim_supported_row().to_json(), hold_packet().to_json()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_documents_project_valid_implies_upstream_valid(data: st.DataObject) -> None:
    document: Any = copy.deepcopy(data.draw(st.sampled_from(BASES)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(document)
        path = data.draw(st.sampled_from(paths))
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(JSON_LEAF)
    if _project_valid(document):
        assert _upstream_valid(document)


def test_load_schema_reports_a_broken_schema(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"type": 12}), encoding="utf-8")
    with pytest.raises(SchemaLoadError, match="not a valid Draft 2020-12 schema"):
        load_schema(broken)
    with pytest.raises(SchemaLoadError, match="cannot read schema"):
        load_schema(tmp_path / "absent.json")


# --- manifest schema --------------------------------------------------------------------------


def _manifest() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(DEFAULT_MANIFEST_FILE.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.skipif(not REFERENCE_MANIFEST.exists(), reason="../shared/reference/akm is not present")
def test_reference_manifest_template_is_valid() -> None:
    assert validate_manifest(yaml.safe_load(REFERENCE_MANIFEST.read_text(encoding="utf-8"))) == []


def test_project_manifest_is_valid() -> None:
    assert validate_manifest(_manifest()) == []


@pytest.mark.parametrize(
    ("path", "value", "rule_id"),
    [
        (("scope", "defaultDecision"), "allow", "manifest:const"),
        (("sourceRefs", 0, "classification"), "private", "manifest:enum"),
        (("sourceRefs", 0, "rootPath"), "../outside", "manifest:pattern"),
        (("security", "denyExtensions", 0), "db", "manifest:pattern"),
        (("rankingPolicy", "freshnessMayOverrideAuthority"), True, "manifest:const"),
        (("rankingPolicy", "priorityOrder", 0), "freshness-tiebreak", "manifest:const"),
        (("fusion", "caps", "perSource"), 0, "manifest:minimum"),
        (("verificationPolicy", "requiredDirectReadMayBeSkipped"), True, "manifest:const"),
        (("neighborExpansion", "stage"), "before-fusion", "manifest:const"),
        (("unknownSection",), {}, "manifest:additionalProperties"),
    ],
    ids=[
        "allow-by-default",
        "private-source",
        "escaping-root",
        "undotted-extension",
        "freshness-over-authority",
        "priority-not-scope-first",
        "zero-cap",
        "skippable-required-read",
        "expansion-before-fusion",
        "unknown-section",
    ],
)
def test_manifest_constraint(path: tuple[str | int, ...], value: object, rule_id: str) -> None:
    manifest: Any = _manifest()
    parent = manifest
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    assert rule_id in {violation.rule_id for violation in validate_manifest(manifest)}


def test_manifest_requires_its_sections() -> None:
    manifest = _manifest()
    del manifest["security"]
    assert [(v.rule_id, v.pointer) for v in validate_manifest(manifest)] == [("manifest:required", "")]


def test_manifest_schema_file_is_a_valid_schema() -> None:
    assert load_schema(MANIFEST_SCHEMA_PATH)["title"] == "AKM project retrieval manifest"
