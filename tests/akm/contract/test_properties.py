"""Property: builder rows, after any sequence of allowed transitions, satisfy the upstream
schema, the project schema and the row rules, and keep their history."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from akm.contract.builders import build_candidate_row
from akm.contract.ids import sha256_text
from akm.contract.models import Authority, ChecksumAlgorithm, DirectRead, EvidenceRow, Freshness, Locator
from akm.contract.rules import check_row
from akm.contract.schema import project_schema
from akm.contract.states import ALLOWED_TRANSITIONS, VerificationState, transition

from .conftest import upstream_schema

UPSTREAM = jsonschema.Draft202012Validator(upstream_schema())
TEXT = st.text(min_size=1, max_size=40)
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
            type=draw(st.sampled_from(["path", "heading", "line-range", "symbol", "other"])), value=draw(TEXT)
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
