"""Models: camelCase JSON, frozen values, explicit metric nulls, construction-time rules."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from akm.contract.models import (
    ContractModel,
    DirectRead,
    EvidencePacket,
    EvidenceRow,
    LaneRun,
    Metrics,
    Retrieval,
    SourceVersion,
    Verification,
)
from akm.contract.schema import UPSTREAM_SCHEMA_PATH, load_schema

from .example_documents import candidate_row, claim_supported_row, hold_packet, pass_packet


@pytest.mark.parametrize(
    "build",
    [candidate_row, claim_supported_row],
    ids=["candidate", "claim-supported"],
)
def test_row_round_trips_through_json(build: Any) -> None:
    row: EvidenceRow = build()
    document = row.to_json()
    assert EvidenceRow.from_json(document) == row
    assert EvidenceRow.from_json(document).to_json() == document


@pytest.mark.parametrize("build", [pass_packet, hold_packet], ids=["pass", "hold"])
def test_packet_round_trips_through_json(build: Any) -> None:
    packet: EvidencePacket = build()
    document = packet.to_json()
    assert EvidencePacket.from_json(document).to_json() == document


def test_json_uses_contract_names() -> None:
    document = candidate_row().to_json()
    assert list(document) == [
        "schemaVersion",
        "rowType",
        "evidenceId",
        "source",
        "scope",
        "authority",
        "freshness",
        "retrieval",
        "content",
        "verification",
    ]
    assert document["source"]["version"]["checksumAlgorithm"] == "sha256"
    assert document["retrieval"]["resultSetId"] == "rs:example"
    assert pass_packet().to_json()["query"]["class"] == "mixed"


def test_metrics_keep_explicit_nulls_inside_a_packet() -> None:
    metrics = hold_packet().to_json()["metrics"]
    required = load_schema(UPSTREAM_SCHEMA_PATH)["$defs"]["Metrics"]["required"]
    assert sorted(metrics) == sorted(required)
    assert metrics["totalLatencyMs"] is None
    assert metrics["finalRowCount"] == 1
    assert Metrics().to_json() == {alias: None for alias in metrics}


def test_models_are_frozen() -> None:
    row = candidate_row()
    with pytest.raises(ValidationError, match="frozen"):
        row.evidence_id = "ev:sha256:other"  # type: ignore[misc]


def test_unknown_keys_are_rejected() -> None:
    document = candidate_row().to_json()
    document["retrieval"]["score"] = 1
    with pytest.raises(ValidationError, match="score"):
        EvidenceRow.from_json(document)


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            lambda: SourceVersion(
                revision="r", checksum_algorithm="sha256", observed_at="2026-07-20T00:00:00Z"
            ),
            "checksum is required",
        ),
        (
            lambda: SourceVersion(
                revision="r", checksum_algorithm="none", checksum="a" * 64, observed_at="2026-07-20T00:00:00Z"
            ),
            "must be absent",
        ),
        (
            lambda: Retrieval(
                lane="exact", query="q", rank=1, result_set_id="rs", parameters={}, raw_score=1.0
            ),
            "rawScoreMeaning",
        ),
        (lambda: DirectRead(performed=True, read_by="r"), "readAt"),
        (lambda: Verification(state="candidate", verified_by="x", notes="", claim_ids=("c",)), "E2"),
        (
            lambda: Verification(
                state="direct-read", verified_by="x", notes="", verified_at="2026-07-20T00:00:00Z"
            ),
            "E3",
        ),
        (lambda: Verification(state="conflicted", verified_by="x", notes=""), "conflictId"),
        (lambda: Verification(state="rejected", verified_by="x", notes=""), "rejection reason"),
        (
            lambda: LaneRun(lane="exact", status="skipped", query="", parameters={}, result_count=0),
            "skipReason",
        ),
        (
            lambda: Retrieval(lane="exact", query="q", rank=0, result_set_id="rs", parameters={}),
            "greater than or equal to 1",
        ),
        (
            lambda: SourceVersion(
                revision="r", checksum_algorithm="sha256", checksum="x", observed_at="2026-07-20"
            ),
            "pattern",
        ),
    ],
    ids=[
        "sha256-needs-checksum",
        "none-forbids-checksum",
        "raw-score-needs-meaning",
        "performed-read-described",
        "candidate-without-claims",
        "direct-read-needs-read",
        "conflicted-needs-id",
        "rejected-needs-reason",
        "skipped-lane-needs-reason",
        "rank-positive",
        "timestamp-and-checksum-format",
    ],
)
def test_models_refuse_what_the_schema_refuses(factory: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        factory()


def test_stale_row_needs_stale_freshness() -> None:
    document = candidate_row().to_json()
    document["verification"]["state"] = "stale"
    with pytest.raises(ValidationError, match=r"freshness\.state"):
        EvidenceRow.from_json(document)


def test_packet_row_lookup() -> None:
    packet = pass_packet()
    first = packet.evidence_rows[0]
    assert packet.row(first.evidence_id) == first
    assert packet.row("ev:sha256:absent") is None


def _parts() -> list[tuple[str, ContractModel]]:
    packet = pass_packet()
    row = packet.evidence_rows[0]
    verification = row.verification
    assert verification.direct_read is not None and verification.history is not None
    return [
        ("Locator", row.scope.locator),
        ("SourceVersion", row.source.version),
        ("Source", row.source),
        ("Scope", row.scope),
        ("Authority", row.authority),
        ("Freshness", row.freshness),
        ("Retrieval", row.retrieval),
        ("Content", row.content),
        ("DirectRead", verification.direct_read),
        ("VerificationEvent", verification.history[0]),
        ("Verification", verification),
        ("EvidenceRow", row),
        ("LaneRun", packet.lanes_run[3]),
        ("FusionContribution", packet.fusion.contributions[0]),
        ("ExcludedRow", packet.fusion.excluded_rows[0]),
        ("Fusion", packet.fusion),
        ("Claim", packet.claims[0]),
        ("DirectReadQueueItem", packet.direct_read_queue[0]),
        ("MissingEvidence", hold_packet().missing_evidence[0]),
        ("Metrics", packet.metrics),
        ("PacketVerification", packet.verification),
        ("EvidencePacket", packet),
    ]


@pytest.mark.parametrize(("definition", "part"), _parts(), ids=[name for name, _ in _parts()])
def test_every_part_serialises_to_its_upstream_definition(definition: str, part: ContractModel) -> None:
    schema = load_schema(UPSTREAM_SCHEMA_PATH)
    root = {key: value for key, value in schema.items() if key != "oneOf"} | {"$ref": f"#/$defs/{definition}"}
    assert list(jsonschema.Draft202012Validator(root).iter_errors(part.to_json())) == []
