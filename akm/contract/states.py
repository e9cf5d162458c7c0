"""The verification state machine of an EvidenceRow (§3.1).

```
candidate → direct-read → claim-supported
candidate → conflicted | stale | rejected
direct-read → claim-supported | conflicted | stale | rejected
claim-supported → conflicted | stale | rejected      (later evidence invalidates support)
claim-supported → claim-supported                     (only to add further claim IDs)
```

``conflicted``, ``stale`` and ``rejected`` are terminal: a row that recovers is re-retrieved
as a new candidate, because its revision or locator (and so its evidenceId) has changed.

Every transition returns a new row whose ``verification.history`` gains one event; the
retrieval lane, locator, source identity, content and earlier events are carried over
unchanged. Only ``stale`` also touches ``freshness`` (its state must agree, §4.8 rule 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from akm.contract.errors import ForbiddenTransition, MissingTransitionEvidence
from akm.contract.ids import utc_now_iso
from akm.contract.models import (
    DirectRead,
    EvidenceRow,
    Freshness,
    ReadMethod,
    Verification,
    VerificationEvent,
)


class VerificationState(StrEnum):
    CANDIDATE = "candidate"
    DIRECT_READ = "direct-read"
    CLAIM_SUPPORTED = "claim-supported"
    CONFLICTED = "conflicted"
    STALE = "stale"
    REJECTED = "rejected"


_S = VerificationState
ALLOWED_TRANSITIONS: Mapping[VerificationState, frozenset[VerificationState]] = {
    _S.CANDIDATE: frozenset({_S.DIRECT_READ, _S.CONFLICTED, _S.STALE, _S.REJECTED}),
    _S.DIRECT_READ: frozenset({_S.CLAIM_SUPPORTED, _S.CONFLICTED, _S.STALE, _S.REJECTED}),
    _S.CLAIM_SUPPORTED: frozenset({_S.CLAIM_SUPPORTED, _S.CONFLICTED, _S.STALE, _S.REJECTED}),
    _S.CONFLICTED: frozenset(),
    _S.STALE: frozenset(),
    _S.REJECTED: frozenset(),
}
TERMINAL_STATES: frozenset[VerificationState] = frozenset(
    state for state, targets in ALLOWED_TRANSITIONS.items() if not targets
)
# States whose row may be cited as support of a final claim (E2, E4).
CLAIM_SUPPORTING_STATES: frozenset[VerificationState] = frozenset({_S.CLAIM_SUPPORTED})

_EVIDENCE_KEYS = frozenset(
    {"direct_read", "claim_ids", "conflict_ids", "rejection_reasons", "freshness", "notes"}
)


def is_allowed(from_state: str, to_state: str) -> bool:
    try:
        return VerificationState(to_state) in ALLOWED_TRANSITIONS[VerificationState(from_state)]
    except ValueError:
        return False


def _merged(existing: Sequence[str] | None, added: Sequence[str]) -> tuple[str, ...]:
    merged = list(existing or ())
    merged.extend(item for item in added if item not in merged)
    return tuple(merged)


def transition(
    row: EvidenceRow,
    to_state: VerificationState | str,
    *,
    by: str,
    reason: str,
    at: str | None = None,
    **state_evidence: Any,
) -> EvidenceRow:
    """Move ``row`` to ``to_state`` and return the new row with one more history event.

    ``state_evidence`` supplies what the target state requires (§3.1): ``direct_read``
    (a performed :class:`DirectRead`) for direct-read; ``claim_ids`` and ``notes`` (the
    support note) for claim-supported; ``conflict_ids`` for conflicted;
    ``rejection_reasons`` for rejected; optionally ``freshness`` for stale.
    Raises :class:`ForbiddenTransition` for an edge outside the graph and
    :class:`MissingTransitionEvidence` when the target state's evidence is absent.
    """
    unknown = set(state_evidence) - _EVIDENCE_KEYS
    if unknown:
        raise TypeError(f"unknown state evidence: {', '.join(sorted(unknown))}")
    source_state = VerificationState(row.verification.state)
    target = VerificationState(to_state)
    if target not in ALLOWED_TRANSITIONS[source_state]:
        raise ForbiddenTransition(source_state.value, target.value)
    if not by or not reason:
        raise MissingTransitionEvidence(target.value, "'by' and 'reason' must be non-empty")
    moment = at or utc_now_iso()
    current = row.verification
    updates: dict[str, Any] = {"state": target.value, "verified_by": by, "verified_at": moment}
    freshness = row.freshness

    if target is _S.DIRECT_READ:
        direct_read = state_evidence.get("direct_read")
        if not isinstance(direct_read, DirectRead) or not direct_read.performed:
            raise MissingTransitionEvidence(target.value, "a performed DirectRead record (E3)")
        _check_direct_read(row, direct_read, target)
        updates["direct_read"] = direct_read
    elif target is _S.CLAIM_SUPPORTED:
        claim_ids = tuple(state_evidence.get("claim_ids") or ())
        if not claim_ids:
            raise MissingTransitionEvidence(target.value, "at least one claim ID (E4)")
        note = state_evidence.get("notes")
        if not note:
            raise MissingTransitionEvidence(target.value, "a support note")
        merged = _merged(current.claim_ids, claim_ids)
        if source_state is _S.CLAIM_SUPPORTED and merged == tuple(current.claim_ids or ()):
            raise ForbiddenTransition(source_state.value, target.value, "no new claim ID is added")
        updates["claim_ids"] = merged
    elif target is _S.CONFLICTED:
        conflict_ids = tuple(state_evidence.get("conflict_ids") or ())
        if not conflict_ids:
            raise MissingTransitionEvidence(target.value, "at least one conflict ID")
        updates["conflict_ids"] = _merged(current.conflict_ids, conflict_ids)
    elif target is _S.STALE:
        supplied = state_evidence.get("freshness")
        if isinstance(supplied, Freshness):
            freshness = supplied
        elif freshness.state not in ("stale", "superseded"):
            freshness = Freshness(
                **{**_fields(freshness), "state": "stale", "reason": reason, "checked_at": moment}
            )
        if freshness.state not in ("stale", "superseded"):
            raise MissingTransitionEvidence(target.value, "freshness.state 'stale' or 'superseded'")
    elif target is _S.REJECTED:
        reasons = tuple(state_evidence.get("rejection_reasons") or ())
        if not reasons:
            raise MissingTransitionEvidence(target.value, "at least one rejection reason")
        updates["rejection_reasons"] = (*(current.rejection_reasons or ()), *reasons)

    if "notes" in state_evidence and state_evidence["notes"] is not None:
        updates["notes"] = str(state_evidence["notes"])
    event = VerificationEvent(state=target.value, at=moment, by=by, reason=reason)
    updates["history"] = (*(current.history or ()), event)
    verification = Verification(**{**_fields(current), **updates})
    return EvidenceRow(**{**_fields(row), "verification": verification, "freshness": freshness})


def _fields(model: Any) -> dict[str, Any]:
    return {name: getattr(model, name) for name in type(model).model_fields}


def _check_direct_read(row: EvidenceRow, direct_read: DirectRead, target: VerificationState) -> None:
    version = row.source.version
    if version.checksum_algorithm != "none" and direct_read.observed_checksum is None:
        raise MissingTransitionEvidence(
            target.value, f"observedChecksum (source checksumAlgorithm is {version.checksum_algorithm}) (E3)"
        )
    if direct_read.checksum_match is False:
        # A read that found different content is evidence of staleness, not of the retrieved row.
        raise ForbiddenTransition(
            row.verification.state, target.value, "observed checksum does not match; mark the row stale"
        )


def record_direct_read(
    row: EvidenceRow,
    *,
    by: str,
    read_method: ReadMethod,
    locator_read: str,
    observed_revision: str,
    observed_checksum: str | None,
    checksum_match: bool | None,
    context_included: bool,
    at: str | None = None,
    notes: str | None = None,
) -> EvidenceRow:
    """candidate → direct-read after the identified source location was actually read (E3)."""
    moment = at or utc_now_iso()
    direct_read = DirectRead(
        performed=True,
        read_at=moment,
        read_by=by,
        read_method=read_method,
        locator_read=locator_read,
        observed_revision=observed_revision,
        observed_checksum=observed_checksum,
        checksum_match=checksum_match,
        context_included=context_included,
    )
    return transition(
        row,
        VerificationState.DIRECT_READ,
        by=by,
        reason=f"direct read of {locator_read} at revision {observed_revision}",
        at=moment,
        direct_read=direct_read,
        notes=notes,
    )


def promote_to_claim_supported(
    row: EvidenceRow,
    claim_ids: Sequence[str],
    *,
    by: str,
    support_note: str,
    at: str | None = None,
) -> EvidenceRow:
    """direct-read (or claim-supported) → claim-supported for the named claims only (E4)."""
    return transition(
        row,
        VerificationState.CLAIM_SUPPORTED,
        by=by,
        reason=f"supports {', '.join(claim_ids)}" if claim_ids else "supports no claim",
        at=at,
        claim_ids=tuple(claim_ids),
        notes=support_note,
    )


def mark_stale(
    row: EvidenceRow,
    *,
    by: str,
    reason: str,
    expected_revision: str,
    observed_revision: str,
    at: str | None = None,
) -> EvidenceRow:
    """→ stale: the source failed the freshness/version policy; freshness.state becomes stale."""
    moment = at or utc_now_iso()
    detail = f"{reason} (expected revision {expected_revision}, observed {observed_revision})"
    freshness = Freshness(
        **{**_fields(row.freshness), "state": "stale", "reason": detail, "checked_at": moment}
    )
    return transition(
        row, VerificationState.STALE, by=by, reason=detail, at=moment, freshness=freshness, notes=detail
    )


def reject(row: EvidenceRow, *, by: str, reasons: Sequence[str], at: str | None = None) -> EvidenceRow:
    """→ rejected for scope, access, identity, duplication, locator or quality reasons."""
    return transition(
        row,
        VerificationState.REJECTED,
        by=by,
        reason="; ".join(reasons) if reasons else "rejected",
        at=at,
        rejection_reasons=tuple(reasons),
    )


def mark_conflicted(
    row: EvidenceRow,
    conflict_ids: Sequence[str],
    *,
    by: str,
    reason: str,
    at: str | None = None,
) -> EvidenceRow:
    """→ conflicted: the row takes part in the named open conflicts (E10)."""
    return transition(
        row, VerificationState.CONFLICTED, by=by, reason=reason, at=at, conflict_ids=tuple(conflict_ids)
    )


__all__ = [
    "ALLOWED_TRANSITIONS",
    "CLAIM_SUPPORTING_STATES",
    "TERMINAL_STATES",
    "VerificationState",
    "is_allowed",
    "mark_conflicted",
    "mark_stale",
    "promote_to_claim_supported",
    "record_direct_read",
    "reject",
    "transition",
]
