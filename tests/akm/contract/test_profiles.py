"""Validation profiles: ``contract`` takes any upstream-valid ID, ``service`` only digest-form IDs.

Both profiles apply every contract rule, so each rule case of ``test_rules`` must still fail
under ``contract`` once its IDs are rewritten into the short form the upstream document uses.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from akm.cli import main
from akm.contract.ids import sha256_text
from akm.contract.validation import validate_document

from .example_documents import candidate_row, claim_supported_row, hold_packet, pass_packet
from .test_rules import RULE_CASES, Document, Mutation

_DIGEST_ID = re.compile(r"^(ev|pk):sha256:[0-9a-f]{64}$")

# The candidate row of the upstream EVIDENCE-SCHEMA.md §7.1. Its ID is a placeholder the upstream
# schema accepts; its two checksums are placeholders the upstream schema itself refuses (64 hex
# digits or "unavailable"), so the test replaces those with real digests and keeps the ID.
UPSTREAM_EXAMPLE_ROW = """
schemaVersion: "1.0.0"
rowType: EvidenceRow
evidenceId: "ev:sha256:example-candidate"
source:
  sourceId: "akm:99-system:SECURITY"
  canonicalUri: "file:99-system/SECURITY.md"
  canonicalPath: "99-system/SECURITY.md"
  sourceType: markdown
  classification: public
  projectScopes: ["akm-evidence-pilot"]
  derived: false
  version:
    revision: "working-tree"
    checksumAlgorithm: sha256
    checksum: "example-checksum"
    observedAt: "2026-07-20T00:00:00+09:00"
scope:
  projectId: "akm-evidence-pilot"
  manifestId: "akm-evidence-pilot"
  manifestVersion: "1.0.0"
  scopeDecision: in-scope
  collection: "akm"
  locator:
    type: heading
    value: "## 1. Never store secret values"
authority:
  level: canonical
  rationale: "Canonical AKM security policy for secret handling."
  policyRef: "99-system/SECURITY.md"
freshness:
  state: current
  checkedAt: "2026-07-20T00:00:00+09:00"
  policyRef: "project-retrieval-manifest:freshnessPolicy"
  reason: "Current working-tree source was found."
retrieval:
  lane: exact
  query: "never store secret values"
  rank: 1
  resultSetId: "rs:example"
  parameters: {match: literal}
content:
  excerpt: "API keys, tokens, passwords ... never, in any layer."
  excerptChecksum: "example-excerpt-checksum"
verification:
  state: candidate
  verifiedBy: "not-yet-direct-read"
  notes: "Retrieved candidate; cannot support a final claim yet."
"""


def upstream_example_row() -> Document:
    loaded: Document = yaml.safe_load(UPSTREAM_EXAMPLE_ROW)
    loaded["source"]["version"]["checksum"] = sha256_text("# Security\n")
    loaded["content"]["excerptChecksum"] = sha256_text(loaded["content"]["excerpt"])
    return loaded


def with_short_ids(document: Document) -> Document:
    """``document`` with every digest-form evidence and packet ID replaced by a short one."""
    names: dict[str, str] = {}

    def short(value: str) -> str:
        if value not in names:
            kind = "row" if value.startswith("ev:") else "packet"
            names[value] = f"{value[:10]}{kind}-{len(names) + 1}"
        return names[value]

    def rewrite(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: rewrite(value) for key, value in item.items()}
        if isinstance(item, list):
            return [rewrite(value) for value in item]
        if isinstance(item, str) and _DIGEST_ID.match(item):
            return short(item)
        return item

    rewritten: Document = rewrite(copy.deepcopy(document))
    return rewritten


def _rule_ids(document: Document, profile: str) -> set[str]:
    return {finding.rule_id for finding in validate_document(document, profile=profile)}  # type: ignore[arg-type]


# Every rule case except the one about the digest recipe itself, which only digest-form IDs follow.
SHORT_ID_CASES = [case for case in RULE_CASES if case[3] != "evidence-id-stable"]


@pytest.mark.parametrize(
    ("build", "mutate", "rule_id"),
    [case[1:] for case in SHORT_ID_CASES],
    ids=[case[0] for case in SHORT_ID_CASES],
)
def test_contract_profile_catches_every_rule_with_short_ids(
    build: Callable[[], Document], mutate: Mutation, rule_id: str
) -> None:
    document = with_short_ids(build())
    assert not any(_DIGEST_ID.match(str(value)) for value in _strings(document))
    assert rule_id not in _rule_ids(document, "contract")
    mutate(document)
    assert rule_id in _rule_ids(document, "contract")


def _strings(item: Any) -> list[str]:
    if isinstance(item, dict):
        return [text for value in item.values() for text in _strings(value)]
    if isinstance(item, list):
        return [text for value in item for text in _strings(value)]
    return [item] if isinstance(item, str) else []


@pytest.mark.parametrize(
    "build",
    [pass_packet, hold_packet, candidate_row, claim_supported_row],
    ids=["pass-packet", "hold-packet", "candidate-row", "claim-supported-row"],
)
def test_short_ids_pass_contract_and_fail_service(build: Callable[[], Any]) -> None:
    document = with_short_ids(build().to_json())
    assert validate_document(document, profile="contract") == []
    service = validate_document(document, profile="service")
    assert service
    assert {finding.rule_id for finding in service} == {"schema:pattern"}
    assert any(finding.pointer.endswith("/evidenceId") for finding in service)


def test_digest_ids_pass_both_profiles() -> None:
    document = pass_packet().to_json()
    assert validate_document(document, profile="contract") == []
    assert validate_document(document, profile="service") == []


def test_the_upstream_example_row_passes_contract_only() -> None:
    row = upstream_example_row()
    assert validate_document(row, profile="contract") == []
    service = {(finding.rule_id, finding.pointer) for finding in validate_document(row, profile="service")}
    assert ("schema:pattern", "/evidenceId") in service


def test_the_digest_recipe_is_checked_only_for_digest_form_ids() -> None:
    row = upstream_example_row()
    row["scope"]["locator"]["value"] = "## 2. Another section"
    assert "evidence-id-stable" not in _rule_ids(row, "contract")
    digest = candidate_row().to_json()
    digest["scope"]["locator"]["value"] = "## 2. Another section"
    assert "evidence-id-stable" in _rule_ids(digest, "contract")


def test_cli_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "upstream-row.json"
    path.write_text(json.dumps(upstream_example_row()), encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    assert main(["validate", "--profile", "contract", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", "--profile", "service", str(path)]) == 1
    assert f"{path}:/evidenceId: schema:pattern:" in capsys.readouterr().out


def test_cli_contract_profile_reports_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = upstream_example_row()
    row["content"]["excerpt"] = "changed after the checksum was taken"
    path = tmp_path / "row.json"
    path.write_text(json.dumps(row), encoding="utf-8")
    assert main(["validate", "--format", "json", str(path)]) == 1
    findings = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    assert [(finding["ruleId"], finding["pointer"]) for finding in findings] == [
        ("excerpt-checksum", "/content/excerptChecksum")
    ]
