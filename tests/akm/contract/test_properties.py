"""Property: builder rows, after any sequence of allowed transitions, satisfy the upstream
schema, the project schema and the row rules, and keep their history."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from akm.contract.builders import build_candidate_row, build_packet
from akm.contract.ids import evidence_id, sha256_text
from akm.contract.models import (
    Authority,
    ChecksumAlgorithm,
    Claim,
    DirectRead,
    EvidencePacket,
    EvidenceRow,
    Freshness,
    Fusion,
    FusionContribution,
    LaneRun,
    Locator,
    PacketPolicies,
    PacketProject,
    PacketVerification,
)
from akm.contract.rules import check_row
from akm.contract.schema import project_schema
from akm.contract.states import ALLOWED_TRANSITIONS, VerificationState, transition
from akm.contract.validation import validate_document

from .conftest import upstream_schema

UPSTREAM = jsonschema.Draft202012Validator(upstream_schema())
TEXT = st.text(min_size=1, max_size=40)
# A locator a reader records as read: project-relative, as rule S9-absolute-path demands.
RELATIVE_LOCATOR = TEXT.filter(lambda value: not re.match(r"^(?:/|[A-Za-z]:[\\/]|\\\\)", value)).filter(
    lambda value: ".." not in re.split(r"[\\/]", value)
)
SAFE_SEGMENT = st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True)
RELATIVE_PATH = st.lists(SAFE_SEGMENT, min_size=1, max_size=4).map("/".join)
HEX64 = st.from_regex(r"[0-9a-f]{64}", fullmatch=True)


@st.composite
def candidate_rows(draw: st.DrawFn) -> EvidenceRow:
    path = draw(RELATIVE_PATH)
    algorithm: ChecksumAlgorithm = draw(st.sampled_from(["sha256", "source-native", "none"]))
    checksum = {
        "sha256": draw(HEX64),
        "source-native": draw(st.sampled_from(["unavailable", "f" * 64])),
        "none": None,
    }[algorithm]
    scored = draw(st.booleans())
    return build_candidate_row(
        source_id=f"akm:{draw(SAFE_SEGMENT)}:{path}",
        canonical_uri=draw(st.sampled_from(["file:", "https://example.org/", "qmd://akm/"])) + path,
        canonical_path=path,
        source_type=draw(st.sampled_from(["markdown", "web", "paper", "code", "other"])),
        classification=draw(st.sampled_from(["public", "non-sensitive"])),
        project_scopes=draw(st.lists(SAFE_SEGMENT, min_size=1, max_size=3, unique=True)),
        revision=draw(TEXT),
        checksum_algorithm=algorithm,
        checksum=checksum,
        project_id="p",
        manifest_id="m",
        manifest_version="1.0.0",
        collection=draw(TEXT),
        locator=Locator(
            type=draw(st.sampled_from(["path", "heading", "line-range", "symbol", "other"])),
            value=draw(RELATIVE_LOCATOR),
        ),
        authority=Authority(
            level=draw(st.sampled_from(["canonical", "official", "reviewed", "unknown"])),
            rationale=draw(TEXT),
            policy_ref=draw(TEXT),
        ),
        freshness=Freshness(
            state=draw(st.sampled_from(["current", "unknown"])),
            checked_at="2026-07-20T00:00:00Z",
            policy_ref="freshnessPolicy",
            reason=draw(TEXT),
        ),
        lane=draw(
            st.sampled_from(["exact", "qmd-lexical", "qmd-semantic", "graphify-relationship", "other"])
        ),
        query=draw(TEXT),
        rank=draw(st.integers(min_value=1, max_value=10_000)),
        result_set_id=draw(TEXT),
        parameters=draw(st.dictionaries(SAFE_SEGMENT, st.integers() | TEXT, max_size=3)),
        raw_score=draw(st.floats(allow_nan=False, allow_infinity=False)) if scored else None,
        raw_score_meaning="lane-local score" if scored else None,
        matched_terms=draw(st.none() | st.lists(TEXT, max_size=3)),
        excerpt=draw(st.text(min_size=1, max_size=200)),
        at="2026-07-20T00:00:00Z",
    )


def _evidence(row: EvidenceRow, target: VerificationState, step: int, draw: st.DrawFn) -> dict[str, Any]:
    if target is VerificationState.DIRECT_READ:
        checksum = row.source.version.checksum
        return {
            "direct_read": DirectRead(
                performed=True,
                read_at=f"2026-07-20T00:{step:02d}:00Z",
                read_by="reader",
                read_method="direct-file-read",
                locator_read=row.scope.locator.value,
                observed_revision=row.source.version.revision,
                observed_checksum=checksum,
                checksum_match=True if checksum else None,
                context_included=draw(st.booleans()),
            )
        }
    if target is VerificationState.CLAIM_SUPPORTED:
        return {"claim_ids": [f"claim-{step}"], "notes": "supports this claim"}
    if target is VerificationState.CONFLICTED:
        return {"conflict_ids": [f"cf-{step}"]}
    if target is VerificationState.REJECTED:
        return {"rejection_reasons": [draw(TEXT)]}
    return {}


@st.composite
def transitioned_rows(draw: st.DrawFn) -> tuple[EvidenceRow, list[str]]:
    row = draw(candidate_rows())
    states = ["candidate"]
    for step in range(1, draw(st.integers(min_value=0, max_value=5)) + 1):
        targets = sorted(ALLOWED_TRANSITIONS[VerificationState(row.verification.state)])
        if not targets:
            break
        target = draw(st.sampled_from(targets))
        row = transition(
            row,
            target,
            by=draw(TEXT),
            reason=draw(TEXT),
            at=f"2026-07-20T00:{step:02d}:00Z",
            **_evidence(row, target, step, draw),
        )
        states.append(target.value)
    return row, states


@settings(max_examples=150, deadline=None)
@given(candidate_rows())
def test_builder_rows_validate_upstream(row: EvidenceRow) -> None:
    document = row.to_json()
    assert list(UPSTREAM.iter_errors(document)) == []
    assert project_schema().validate(document) == []
    assert check_row(document) == []
    assert row.content.excerpt_checksum == sha256_text(row.content.excerpt)


@settings(max_examples=200, deadline=None)
@given(transitioned_rows())
def test_rows_after_valid_transitions_validate_upstream(case: tuple[EvidenceRow, list[str]]) -> None:
    row, states = case
    document = row.to_json()
    assert list(UPSTREAM.iter_errors(document)) == []
    assert project_schema().validate(document) == []
    assert check_row(document) == []
    assert [event.state for event in row.verification.history or ()] == states
    assert EvidenceRow.from_json(document) == row


@st.composite
def packets(draw: st.DrawFn) -> EvidencePacket:
    """A packet over 1-5 rows from distinct sources, each read and supporting its own claim or not."""
    rows: list[EvidenceRow] = []
    claims: list[Claim] = []
    for index in range(draw(st.integers(min_value=1, max_value=5))):
        row = draw(candidate_rows())
        row = EvidenceRow.from_json(
            {**row.to_json(), "source": {**row.source.to_json(), "sourceId": f"akm:packet:{index}"}}
        )
        row = EvidenceRow.from_json(
            {
                **row.to_json(),
                "evidenceId": evidence_id(
                    "1.0.0",
                    f"akm:packet:{index}",
                    row.source.version.revision,
                    row.source.version.checksum,
                    row.scope.locator.value,
                ),
            }
        )
        claim = f"claim-{index}"
        supported = draw(st.booleans())
        if supported:
            row = transition(
                row,
                VerificationState.DIRECT_READ,
                by="r",
                reason="read",
                at="2026-07-20T00:01:00Z",
                **_evidence(row, VerificationState.DIRECT_READ, 1, draw),
            )
            row = transition(
                row,
                VerificationState.CLAIM_SUPPORTED,
                by="v",
                reason="supports",
                at="2026-07-20T00:02:00Z",
                claim_ids=[claim],
                notes="supports",
            )
        rows.append(row)
        claims.append(
            Claim(
                claim_id=claim,
                claim_text=f"claim {index}",
                importance=draw(st.sampled_from(["important", "supporting"])),
                claim_class="other",
                support_row_ids=(row.evidence_id,),
                status="supported" if supported else "candidate-only",
                notes="",
            )
        )
    lanes = sorted({row.retrieval.lane for row in rows})
    all_important_supported = all(c.status == "supported" for c in claims if c.importance == "important")
    return build_packet(
        task_id="task",
        query="q",
        normalized_intent="q",
        query_class="mixed",
        important_claim_classes=["other"],
        project=PacketProject(
            project_id="p", manifest_id="m", manifest_version="1.0.0", manifest_checksum="a" * 64
        ),
        policies=PacketPolicies(
            retrieval_policy_ref="r",
            retrieval_policy_version="1",
            authority_policy_ref="a",
            freshness_policy_ref="f",
            verification_policy_ref="v",
            security_policy_ref="s",
        ),
        lanes_run=[
            LaneRun(lane=lane, status="completed", query="q", parameters={}, result_count=1) for lane in lanes
        ],
        fusion=Fusion(
            method="deterministic-priority",
            parameters={},
            priority_order=("scope", "authority"),
            dedup_keys=("sourceId", "canonicalUri", "revision"),
            per_source_cap=1,
            max_rows=5,
            diversity_fields=(),
            contributions=tuple(
                FusionContribution(
                    evidence_id=row.evidence_id,
                    lane_ranks={row.retrieval.lane: row.retrieval.rank},
                    contribution=1.0 / rank,
                    final_rank=rank,
                )
                for rank, row in enumerate(rows, start=1)
            ),
            excluded_rows=(),
        ),
        rows=rows,
        claims=claims,
        verification=PacketVerification(
            verdict="PASS" if all_important_supported else "HOLD",
            verdict_reasons=("generated",),
            verified_by="t",
            rollback_required=False,
            rollback_reason="",
        ),
        generated_at="2026-07-20T00:03:00Z",
    )


@settings(max_examples=40, deadline=None)
@given(packets())
def test_built_packets_validate_and_their_metrics_agree_with_the_rules(packet: EvidencePacket) -> None:
    document = packet.to_json()
    assert list(UPSTREAM.iter_errors(document)) == []
    assert validate_document(document, check_upstream=True) == []
    assert document["metrics"]["finalRowCount"] == len(packet.evidence_rows)
    assert document["metrics"]["inputBytes"] is None
