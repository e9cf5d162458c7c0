"""The verification state machine (§3.1): every allowed edge works, every other edge raises."""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from typing import Any

import jsonschema
import pytest

from akm.contract.errors import ContractError, ForbiddenTransition, MissingTransitionEvidence
from akm.contract.models import DirectRead, EvidenceRow
from akm.contract.states import (
    ALLOWED_TRANSITIONS,
    TERMINAL_STATES,
    VerificationState,
    is_allowed,
    mark_conflicted,
    mark_stale,
    promote_to_claim_supported,
    record_direct_read,
    reject,
    transition,
)

from .conftest import SOURCE_CHECKSUM, make_candidate

T1 = "2026-07-20T00:01:00.000Z"
T2 = "2026-07-20T00:02:00.000Z"
S = VerificationState


def read(row: EvidenceRow) -> EvidenceRow:
    return record_direct_read(
        row,
        by="retrieval-worker",
        read_method="direct-file-read",
        locator_read="99-system/SECURITY.md:5-13",
        observed_revision="working-tree",
        observed_checksum=SOURCE_CHECKSUM,
        checksum_match=True,
        context_included=True,
        at=T1,
    )


def supported(row: EvidenceRow) -> EvidenceRow:
    return promote_to_claim_supported(
        read(row), ["claim-secret-values-prohibited"], by="verifier", support_note="supports only this", at=T2
    )


def row_in(state: VerificationState) -> EvidenceRow:
    candidate = make_candidate()
    builders: dict[VerificationState, Callable[[], EvidenceRow]] = {
        S.CANDIDATE: lambda: candidate,
        S.DIRECT_READ: lambda: read(candidate),
        S.CLAIM_SUPPORTED: lambda: supported(candidate),
        S.CONFLICTED: lambda: mark_conflicted(candidate, ["cf-1"], by="fusion", reason="disagrees", at=T1),
        S.STALE: lambda: mark_stale(
            candidate, by="w", reason="changed", expected_revision="a", observed_revision="b"
        ),
        S.REJECTED: lambda: reject(candidate, by="fusion", reasons=["duplicate"], at=T1),
    }
    return builders[state]()


def evidence_for(to_state: VerificationState) -> dict[str, Any]:
    evidence: dict[VerificationState, dict[str, Any]] = {
        S.DIRECT_READ: {
            "direct_read": DirectRead(
                performed=True,
                read_at=T1,
                read_by="reader",
                read_method="direct-file-read",
                locator_read="99-system/SECURITY.md:5-13",
                observed_revision="working-tree",
                observed_checksum=SOURCE_CHECKSUM,
                checksum_match=True,
                context_included=True,
            )
        },
        S.CLAIM_SUPPORTED: {"claim_ids": ["claim-other"], "notes": "support note"},
        S.CONFLICTED: {"conflict_ids": ["cf-9"]},
        S.STALE: {},
        S.REJECTED: {"rejection_reasons": ["quality"]},
        S.CANDIDATE: {},
    }
    return evidence[to_state]


ALLOWED = [(a, b) for a, b in product(S, S) if b in ALLOWED_TRANSITIONS[a]]
FORBIDDEN = [(a, b) for a, b in product(S, S) if b not in ALLOWED_TRANSITIONS[a]]


def test_the_graph_is_exactly_section_3_1() -> None:
    assert {(a.value, b.value) for a, b in ALLOWED} == {
        ("candidate", "direct-read"),
        ("candidate", "conflicted"),
        ("candidate", "stale"),
        ("candidate", "rejected"),
        ("direct-read", "claim-supported"),
        ("direct-read", "conflicted"),
        ("direct-read", "stale"),
        ("direct-read", "rejected"),
        ("claim-supported", "claim-supported"),
        ("claim-supported", "conflicted"),
        ("claim-supported", "stale"),
        ("claim-supported", "rejected"),
    }
    assert {state.value for state in TERMINAL_STATES} == {"conflicted", "stale", "rejected"}


@pytest.mark.parametrize(("from_state", "to_state"), ALLOWED, ids=[f"{a}->{b}" for a, b in ALLOWED])
def test_allowed_transition_appends_one_event_and_keeps_identity(
    from_state: VerificationState,
    to_state: VerificationState,
    upstream_validator: jsonschema.Draft202012Validator,
) -> None:
    before = row_in(from_state)
    after = transition(before, to_state, by="actor", reason="because", at=T2, **evidence_for(to_state))
    assert after.verification.state == to_state.value
    history_before = before.verification.history or ()
    history_after = after.verification.history or ()
    assert history_after[:-1] == history_before
    assert (history_after[-1].state, history_after[-1].by, history_after[-1].at) == (
        to_state.value,
        "actor",
        T2,
    )
    assert history_after[0].state == "candidate"
    assert after.retrieval == before.retrieval
    assert after.scope.locator == before.scope.locator
    assert after.source == before.source
    assert after.evidence_id == before.evidence_id
    assert after.content == before.content
    assert list(upstream_validator.iter_errors(after.to_json())) == []
    assert is_allowed(from_state.value, to_state.value)


@pytest.mark.parametrize(("from_state", "to_state"), FORBIDDEN, ids=[f"{a}->{b}" for a, b in FORBIDDEN])
def test_forbidden_transition_raises_with_both_states(
    from_state: VerificationState, to_state: VerificationState
) -> None:
    before = row_in(from_state)
    with pytest.raises(ForbiddenTransition) as raised:
        transition(before, to_state, by="actor", reason="because", at=T2, **evidence_for(to_state))
    assert f"{from_state.value} -> {to_state.value}" in str(raised.value)
    assert isinstance(raised.value, ContractError)
    assert not is_allowed(from_state.value, to_state.value)


def test_claim_cannot_be_promoted_from_candidate(candidate: EvidenceRow) -> None:
    with pytest.raises(ForbiddenTransition, match="candidate -> claim-supported"):
        promote_to_claim_supported(candidate, ["claim-a"], by="verifier", support_note="note")


def test_second_claim_is_appended_with_its_own_event(candidate: EvidenceRow) -> None:
    first = supported(candidate)
    second = promote_to_claim_supported(first, ["claim-b"], by="verifier", support_note="also b", at=T2)
    assert second.verification.claim_ids == ("claim-secret-values-prohibited", "claim-b")
    assert [event.state for event in second.verification.history or ()] == [
        "candidate",
        "direct-read",
        "claim-supported",
        "claim-supported",
    ]


def test_repeating_an_existing_claim_is_not_a_transition(candidate: EvidenceRow) -> None:
    first = supported(candidate)
    with pytest.raises(ForbiddenTransition, match="no new claim ID"):
        promote_to_claim_supported(first, ["claim-secret-values-prohibited"], by="v", support_note="again")


def test_full_path_keeps_every_event(candidate: EvidenceRow) -> None:
    final = mark_stale(
        supported(candidate),
        by="watcher",
        reason="source changed",
        expected_revision="r1",
        observed_revision="r2",
    )
    assert [event.state for event in final.verification.history or ()] == [
        "candidate",
        "direct-read",
        "claim-supported",
        "stale",
    ]
    assert final.freshness.state == "stale"
    assert final.freshness.reason == "source changed (expected revision r1, observed r2)"
    assert final.verification.claim_ids == ("claim-secret-values-prohibited",)


@pytest.mark.parametrize(
    ("to_state", "evidence", "message"),
    [
        (S.DIRECT_READ, {}, "performed DirectRead"),
        (S.CONFLICTED, {"conflict_ids": []}, "conflict ID"),
        (S.REJECTED, {"rejection_reasons": []}, "rejection reason"),
    ],
    ids=["direct-read-without-read", "conflicted-without-id", "rejected-without-reason"],
)
def test_missing_transition_evidence_raises(
    candidate: EvidenceRow, to_state: VerificationState, evidence: dict[str, Any], message: str
) -> None:
    with pytest.raises(MissingTransitionEvidence, match=message):
        transition(candidate, to_state, by="a", reason="r", **evidence)


def test_claim_support_needs_claim_ids_and_note(candidate: EvidenceRow) -> None:
    direct = read(candidate)
    with pytest.raises(MissingTransitionEvidence, match="claim ID"):
        promote_to_claim_supported(direct, [], by="v", support_note="n")
    with pytest.raises(MissingTransitionEvidence, match="support note"):
        promote_to_claim_supported(direct, ["c"], by="v", support_note="")


def test_direct_read_needs_observed_checksum_when_source_has_one(candidate: EvidenceRow) -> None:
    with pytest.raises(MissingTransitionEvidence, match="observedChecksum"):
        record_direct_read(
            candidate,
            by="r",
            read_method="direct-file-read",
            locator_read="x",
            observed_revision="working-tree",
            observed_checksum=None,
            checksum_match=None,
            context_included=True,
        )


def test_direct_read_without_checksum_is_fine_when_source_has_none() -> None:
    row = make_candidate(checksum_algorithm="none", checksum=None)
    direct = record_direct_read(
        row,
        by="r",
        read_method="direct-web-read",
        locator_read="x",
        observed_revision="etag-1",
        observed_checksum=None,
        checksum_match=None,
        context_included=False,
    )
    assert direct.verification.state == "direct-read"


def test_checksum_mismatch_cannot_become_direct_read(candidate: EvidenceRow) -> None:
    with pytest.raises(ForbiddenTransition, match="mark the row stale"):
        record_direct_read(
            candidate,
            by="r",
            read_method="direct-file-read",
            locator_read="x",
            observed_revision="working-tree",
            observed_checksum="0" * 64,
            checksum_match=False,
            context_included=True,
        )


def test_transitions_do_not_mutate_their_input(candidate: EvidenceRow) -> None:
    snapshot = candidate.to_json()
    read(candidate)
    reject(candidate, by="f", reasons=["duplicate"])
    assert candidate.to_json() == snapshot


def test_unknown_state_evidence_is_a_type_error(candidate: EvidenceRow) -> None:
    with pytest.raises(TypeError, match="unknown state evidence: bogus"):
        transition(candidate, S.REJECTED, by="a", reason="r", rejection_reasons=["x"], bogus=1)
