"""Invalid documents, one per rule or schema constraint, each failing with its own rule ID."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from akm.contract.ids import sha256_text
from akm.contract.rules import RULE_IDS, check_packet, check_row
from akm.contract.validation import validate_document

from .example_documents import candidate_row, claim_supported_row, hold_packet, pass_packet

Document = dict[str, Any]
Mutation = Callable[[Document], None]
UNKNOWN_ROW = "ev:sha256:" + "0" * 64


def _packet() -> Document:
    document: Document = pass_packet().to_json()
    return document


def _row(packet: Document, index: int) -> Document:
    row: Document = packet["evidenceRows"][index]
    return row


def _ids(packet: Document) -> list[str]:
    return [row["evidenceId"] for row in packet["evidenceRows"]]


def _history_event(state: str, at: str = "2026-07-20T00:05:00+09:00") -> Document:
    return {"state": state, "at": at, "by": "tester", "reason": "test event"}


# --- packet mutations -------------------------------------------------------------------------


def e2_candidate_supports(packet: Document) -> None:
    packet["claims"][1]["supportRowIds"] = [_ids(packet)[2]]


def supporting_claim_cites_direct_read_row(packet: Document) -> None:
    verification = _row(packet, 1)["verification"]
    verification["state"] = "direct-read"
    verification.pop("claimIds")
    verification["history"].pop()


def e3_no_observed_checksum(packet: Document) -> None:
    del _row(packet, 0)["verification"]["directRead"]["observedChecksum"]


def e3_checksum_mismatch(packet: Document) -> None:
    _row(packet, 0)["verification"]["directRead"]["checksumMatch"] = False


def e3_checksum_match_false_claim(packet: Document) -> None:
    _row(packet, 0)["verification"]["directRead"]["observedChecksum"] = "0" * 64


def e4_no_direct_read_event(packet: Document) -> None:
    history = _row(packet, 0)["verification"]["history"]
    _row(packet, 0)["verification"]["history"] = [history[0], history[2]]


def history_last_differs(packet: Document) -> None:
    _row(packet, 0)["verification"]["history"].pop()


def history_forbidden_edge(packet: Document) -> None:
    _row(packet, 0)["verification"]["history"].insert(
        2, _history_event("rejected", "2026-07-20T00:01:10+09:00")
    )


def history_out_of_order(packet: Document) -> None:
    _row(packet, 0)["verification"]["history"][1]["at"] = "2026-07-19T23:00:00+09:00"


def id_duplicate_claim(packet: Document) -> None:
    packet["claims"].append(copy.deepcopy(packet["claims"][0]))


def important_supported_by_other_claims_row(packet: Document) -> None:
    packet["claims"][0]["supportRowIds"] = [_ids(packet)[1]]


def row_names_unknown_claim(packet: Document) -> None:
    _row(packet, 0)["verification"]["claimIds"].append("claim-unknown")


def claim_cites_unknown_row(packet: Document) -> None:
    packet["claims"][1]["supportRowIds"] = [UNKNOWN_ROW]


def completion_row_not_read(packet: Document) -> None:
    packet["directReadQueue"][1]["completionRowId"] = _ids(packet)[2]


def conflicted_row_unknown_conflict(packet: Document) -> None:
    verification = _row(packet, 1)["verification"]
    verification["state"] = "conflicted"
    verification["conflictIds"] = ["cf-missing"]
    verification["history"].append(_history_event("conflicted"))


def open_conflict_row_not_conflicted(packet: Document) -> None:
    packet["conflicts"].append(
        {
            "conflictId": "cf-1",
            "topic": "where canonical Markdown lives",
            "rowIds": [_ids(packet)[1], _ids(packet)[2]],
            "type": "freshness",
            "status": "open",
            "resolution": "",
            "claimIds": [],
        }
    )


def row_from_other_project(packet: Document) -> None:
    _row(packet, 1)["scope"]["projectId"] = "another-project"


def winner_not_in_rows(packet: Document) -> None:
    packet["fusion"]["contributions"][1]["evidenceId"] = UNKNOWN_ROW


def winner_ranked_by_skipped_lane(packet: Document) -> None:
    packet["fusion"]["contributions"][0]["laneRanks"] = {"graphify-relationship": 1}


def winner_without_lane_ranks(packet: Document) -> None:
    packet["fusion"]["contributions"][0]["laneRanks"] = {}


def excluded_row_is_winner(packet: Document) -> None:
    packet["fusion"]["excludedRows"][0]["evidenceId"] = _ids(packet)[0]


def per_source_cap_exceeded(packet: Document) -> None:
    fusion = packet["fusion"]
    fusion["perSourceCap"] = 1
    fusion["excludedRows"] = []
    fusion["contributions"].append(
        {"evidenceId": _ids(packet)[2], "laneRanks": {"qmd-semantic": 1}, "contribution": 0.2, "finalRank": 3}
    )
    for name in ("finalRowCount", "uniqueSourceCount", "uniqueSourceTypeCount", "staleHitCount"):
        packet["metrics"][name] = None


def max_rows_exceeded(packet: Document) -> None:
    packet["fusion"]["maxRows"] = 1


def out_of_scope_winner(packet: Document) -> None:
    _row(packet, 1)["scope"]["scopeDecision"] = "out-of-scope"


def denied_row_in_packet(packet: Document) -> None:
    _row(packet, 2)["scope"]["scopeDecision"] = "denied"


def non_winner_expanded(packet: Document) -> None:
    _row(packet, 2)["content"]["contextExpansion"] = {
        "policyRef": "project-retrieval-manifest:neighborExpansion",
        "bytesAdded": 120,
        "locator": {"type": "line-range", "value": "99-system/SECURITY.md:1-9"},
    }


def pass_with_pending_important_claim(packet: Document) -> None:
    packet["claims"][0]["status"] = "direct-read-pending"
    packet["metrics"]["importantClaimSupportedCount"] = None


def pass_with_blocking_conflict(packet: Document) -> None:
    packet["conflicts"].append(
        {
            "conflictId": "cf-2",
            "topic": "secret storage",
            "rowIds": [_ids(packet)[0], _ids(packet)[2]],
            "type": "authority",
            "status": "open",
            "resolution": "",
            "claimIds": [packet["claims"][0]["claimId"]],
        }
    )


def pass_with_required_missing_evidence(packet: Document) -> None:
    packet["missingEvidence"].append(
        {
            "missingId": "m-1",
            "claimIds": [],
            "description": "the audit log",
            "required": True,
            "status": "open",
        }
    )


def pass_with_optional_gap(packet: Document) -> None:
    packet["missingEvidence"].append(
        {"missingId": "m-2", "claimIds": [], "description": "an example", "required": False, "status": "open"}
    )


def pass_with_skipped_required_read(packet: Document) -> None:
    item = packet["directReadQueue"][1]
    item["status"] = "skipped"
    item["skipReason"] = "took too long"
    del item["completionRowId"]
    packet["metrics"]["directReadCompletedCount"] = None


def pass_with_pending_required_read(packet: Document) -> None:
    item = packet["directReadQueue"][1]
    item["status"] = "pending"
    del item["completionRowId"]
    packet["metrics"]["directReadCompletedCount"] = None


def metric_contradicts_packet(packet: Document) -> None:
    packet["metrics"]["finalRowCount"] = 5


def metric_part_exceeds_whole(packet: Document) -> None:
    packet["metrics"]["eligibleCount"] = 10


def fabricated_zero_tokens(packet: Document) -> None:
    packet["metrics"]["estimatedContextTokens"] = 0


def fabricated_zero_latency(packet: Document) -> None:
    packet["metrics"]["totalLatencyMs"] = 0


def hold_metric_contradicts(packet: Document) -> None:
    packet["metrics"]["importantClaimCount"] = 0


# --- row mutations ----------------------------------------------------------------------------


def row_locator_changed(row: Document) -> None:
    row["scope"]["locator"]["value"] = "## 2. Another heading"


def row_excerpt_changed(row: Document) -> None:
    row["content"]["excerpt"] = "A different excerpt."


def row_line_range_reversed(row: Document) -> None:
    row["scope"]["locator"].update({"startLine": 9, "endLine": 5})


def row_private_in_scope(row: Document) -> None:
    row["source"]["classification"] = "private"


def row_absolute_uri(row: Document) -> None:
    row["source"]["canonicalUri"] = "file:///home/someone/akm/99-system/SECURITY.md"


def row_excerpt_holds_private_key(row: Document) -> None:
    # Assembled so that the test file itself holds no key-block marker.
    row["content"]["before"] = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"


def row_history_not_from_candidate(row: Document) -> None:
    row["verification"]["history"][0]["state"] = "direct-read"


RULE_CASES: list[tuple[str, Callable[[], Document], Mutation, str]] = [
    ("E2", _packet, e2_candidate_supports, "E2"),
    ("E4-supporting-claim", _packet, supporting_claim_cites_direct_read_row, "E4"),
    ("E3-observed-checksum", _packet, e3_no_observed_checksum, "E3"),
    ("E3-checksum-mismatch", _packet, e3_checksum_mismatch, "E3-checksum-mismatch"),
    ("E3-checksum-match", _packet, e3_checksum_match_false_claim, "E3-checksum-match"),
    ("E4", _packet, e4_no_direct_read_event, "E4"),
    ("history-last", _packet, history_last_differs, "history-consistent"),
    ("history-transition", _packet, history_forbidden_edge, "history-transition"),
    ("history-order", _packet, history_out_of_order, "history-order"),
    ("id-unique", _packet, id_duplicate_claim, "id-unique"),
    ("S5.4", _packet, important_supported_by_other_claims_row, "S5.4-important-supported"),
    ("claim-ref-exists", _packet, row_names_unknown_claim, "claim-ref-exists"),
    ("row-ref-exists", _packet, claim_cites_unknown_row, "row-ref-exists"),
    ("S5.6-completion-read", _packet, completion_row_not_read, "S5.6-completion-read"),
    ("conflict-unknown", _packet, conflicted_row_unknown_conflict, "conflict-agreement"),
    ("conflict-open-row", _packet, open_conflict_row_not_conflicted, "conflict-agreement"),
    ("project-consistent", _packet, row_from_other_project, "project-consistent"),
    ("fusion-winner-row", _packet, winner_not_in_rows, "fusion-winner-row"),
    ("E7-skipped-lane", _packet, winner_ranked_by_skipped_lane, "E7-lane-ranks"),
    ("E7-empty", _packet, winner_without_lane_ranks, "E7-lane-ranks"),
    ("excluded-not-winner", _packet, excluded_row_is_winner, "excluded-not-winner"),
    ("E8-cap", _packet, per_source_cap_exceeded, "E8-cap"),
    ("fusion-max-rows", _packet, max_rows_exceeded, "fusion-max-rows"),
    ("S4.3", _packet, out_of_scope_winner, "S4.3-scope-winner"),
    ("S9-denied-leak", _packet, denied_row_in_packet, "S9-denied-leak"),
    ("E9", _packet, non_winner_expanded, "E9-expansion-winner"),
    ("S3.2-important", _packet, pass_with_pending_important_claim, "S3.2-pass"),
    ("S3.2-conflict", _packet, pass_with_blocking_conflict, "S3.2-pass"),
    ("S3.2-missing", _packet, pass_with_required_missing_evidence, "S3.2-pass"),
    ("S3.2-caveat", _packet, pass_with_optional_gap, "S3.2-pass-caveat"),
    ("S5.6-skipped", _packet, pass_with_skipped_required_read, "S5.6-required-skipped"),
    ("S5.6-pending", _packet, pass_with_pending_required_read, "S5.6-required-open"),
    ("metrics-derivable", _packet, metric_contradicts_packet, "metrics-derivable"),
    ("metrics-derivable-hold", lambda: hold_packet().to_json(), hold_metric_contradicts, "metrics-derivable"),
    ("metrics-inconsistent", _packet, metric_part_exceeds_whole, "metrics-inconsistent"),
    ("zero-tokens", _packet, fabricated_zero_tokens, "metrics-unmeasured-zero"),
    ("zero-latency", _packet, fabricated_zero_latency, "metrics-unmeasured-zero"),
    ("evidence-id-stable", lambda: candidate_row().to_json(), row_locator_changed, "evidence-id-stable"),
    ("excerpt-checksum", lambda: candidate_row().to_json(), row_excerpt_changed, "excerpt-checksum"),
    ("locator-line-range", lambda: candidate_row().to_json(), row_line_range_reversed, "locator-line-range"),
    ("S9-classification", lambda: candidate_row().to_json(), row_private_in_scope, "S9-classification"),
    (
        "history-first",
        lambda: candidate_row().to_json(),
        row_history_not_from_candidate,
        "history-consistent",
    ),
    ("S9-absolute-path", lambda: candidate_row().to_json(), row_absolute_uri, "S9-absolute-path"),
    (
        "E11-secret-value",
        lambda: candidate_row().to_json(),
        row_excerpt_holds_private_key,
        "E11-secret-value",
    ),
]


def _rule_ids(document: Document) -> set[str]:
    check = check_packet if "packetType" in document else check_row
    return {violation.rule_id for violation in check(document)}


@pytest.mark.parametrize(
    ("build", "mutate", "rule_id"),
    [case[1:] for case in RULE_CASES],
    ids=[case[0] for case in RULE_CASES],
)
def test_rule_violation_is_reported_with_its_id(
    build: Callable[[], Document], mutate: Mutation, rule_id: str
) -> None:
    document = build()
    assert rule_id not in _rule_ids(document)
    mutate(document)
    assert rule_id in _rule_ids(document)
    assert rule_id in {finding.rule_id for finding in validate_document(document)}


def test_every_rule_has_a_failing_case() -> None:
    assert {case[3] for case in RULE_CASES} == set(RULE_IDS)


@pytest.mark.parametrize(
    "build",
    [pass_packet, hold_packet, candidate_row, claim_supported_row],
    ids=["pass-packet", "hold-packet", "candidate-row", "claim-supported-row"],
)
def test_valid_documents_have_no_violations(build: Callable[[], Any]) -> None:
    assert validate_document(build().to_json(), check_upstream=True) == []


def test_violation_pointer_names_the_offending_field() -> None:
    packet = _packet()
    pass_with_skipped_required_read(packet)
    violations = [
        violation for violation in check_packet(packet) if violation.rule_id == "S5.6-required-skipped"
    ]
    assert [(violation.pointer, violation.message) for violation in violations] == [
        ("/directReadQueue/1/status", "required direct read 'dr-2' was skipped in a PASS packet")
    ]


def test_hold_packet_may_keep_open_requirements() -> None:
    packet = hold_packet().to_json()
    assert packet["verification"]["verdict"] == "HOLD"
    assert check_packet(packet) == []


def test_rule_checker_never_raises_on_garbage() -> None:
    garbage_values: list[object] = [
        None,
        [],
        "text",
        3,
        {"evidenceRows": "x", "claims": [1, None], "fusion": []},
    ]
    for garbage in garbage_values:
        assert check_packet(garbage) == []
        assert check_row(garbage) == []


@pytest.mark.parametrize(
    "text",
    [
        "API keys, tokens, passwords ... never, in any layer.",
        "Set password: <your password> in the vault, never here.",
        "The token format is ghp_ followed by 36 characters.",
    ],
    ids=["policy-prose", "placeholder", "format-description"],
)
def test_prose_about_secrets_is_not_a_secret(text: str) -> None:
    row = candidate_row().to_json()
    row["content"]["before"] = text
    assert "E11-secret-value" not in _rule_ids(row)


def test_excerpt_checksum_is_case_insensitive() -> None:
    row = candidate_row().to_json()
    row["content"]["excerptChecksum"] = sha256_text(row["content"]["excerpt"]).upper()
    assert "excerpt-checksum" not in _rule_ids(row)


# --- schema constraints: schema:<keyword> (project) and upstream:<keyword> -----------------------


def _candidate() -> Document:
    document: Document = candidate_row().to_json()
    return document


def _supported() -> Document:
    document: Document = claim_supported_row().to_json()
    return document


SCHEMA_CASES: list[tuple[str, Callable[[], Document], Mutation, str, bool]] = [
    # (id, base, mutation, expected rule ID, also rejected upstream)
    ("history-required", _candidate, lambda d: d["verification"].pop("history"), "schema:required", False),
    (
        "sha256-unavailable",
        _candidate,
        lambda d: d["source"]["version"].update(checksum="unavailable"),
        "schema:pattern",
        False,
    ),
    (
        "evidence-id-pattern",
        _candidate,
        lambda d: d.update(evidenceId="ev:sha256:example"),
        "schema:pattern",
        False,
    ),
    ("state-enum", _candidate, lambda d: d["verification"].update(state="verified"), "schema:enum", True),
    ("row-type", _candidate, lambda d: d.update(rowType="Row"), "schema:kind", True),
    (
        "timestamp",
        _candidate,
        lambda d: d["freshness"].update(checkedAt="2026-07-20 00:00"),
        "schema:pattern",
        True,
    ),
    (
        "calendar-date",
        _candidate,
        lambda d: d["freshness"].update(checkedAt="2026-02-30T00:00:00Z"),
        "schema:format",
        True,
    ),
    ("extra-key", _candidate, lambda d: d.update(score=0.9), "schema:additionalProperties", True),
    ("claim-ids-empty", _supported, lambda d: d["verification"].update(claimIds=[]), "schema:minItems", True),
    (
        "candidate-claim-ids",
        _candidate,
        lambda d: d["verification"].update(claimIds=["c"]),
        "schema:maxItems",
        True,
    ),
    (
        "raw-score-meaning",
        _candidate,
        lambda d: d["retrieval"].update(rawScore=1.5),
        "schema:dependentRequired",
        True,
    ),
    ("support-note", _supported, lambda d: d["verification"].update(notes=""), "schema:minLength", False),
    (
        "checksum-with-none",
        _candidate,
        lambda d: d["source"]["version"].update(checksumAlgorithm="none"),
        "schema:not",
        True,
    ),
    ("rank-minimum", _candidate, lambda d: d["retrieval"].update(rank=0), "schema:minimum", True),
    (
        "absolute-path",
        _candidate,
        lambda d: d["source"].update(canonicalPath="/etc/passwd"),
        "schema:pattern",
        True,
    ),
    (
        "stale-fresh",
        _candidate,
        lambda d: d["verification"].update(state="stale"),
        "schema:enum",
        True,
    ),
    (
        "priority-order",
        _packet,
        lambda d: d["fusion"].update(priorityOrder=["lane-rank", "scope", "authority"]),
        "schema:const",
        False,
    ),
    ("metric-type", _packet, lambda d: d["metrics"].update(finalRowCount="2"), "schema:type", True),
    ("metric-missing", _packet, lambda d: d["metrics"].pop("totalLatencyMs"), "schema:required", True),
    (
        "dedup-keys",
        _packet,
        lambda d: d["fusion"].update(dedupKeys=["revision", "checksum", "locator"]),
        "schema:contains",
        False,
    ),
    ("packet-id", _packet, lambda d: d.update(packetId="packet-0001"), "schema:pattern", False),
    (
        "supported-without-rows",
        _packet,
        lambda d: d["claims"][1].update(supportRowIds=[]),
        "schema:minItems",
        False,
    ),
    (
        "rollback-reason",
        _packet,
        lambda d: d["verification"].update(rollbackRequired=True, rollbackReason=""),
        "schema:minLength",
        False,
    ),
]


@pytest.mark.parametrize(
    ("build", "mutate", "rule_id", "upstream_rejects"),
    [case[1:] for case in SCHEMA_CASES],
    ids=[case[0] for case in SCHEMA_CASES],
)
def test_schema_violation_is_reported_with_its_keyword(
    build: Callable[[], Document], mutate: Mutation, rule_id: str, upstream_rejects: bool
) -> None:
    document = build()
    mutate(document)
    findings = {
        finding.rule_id for finding in validate_document(document, profile="service", check_upstream=True)
    }
    assert rule_id in findings
    upstream_findings = {finding for finding in findings if finding.startswith("upstream:")}
    assert bool(upstream_findings) == (upstream_rejects and rule_id != "schema:kind")
