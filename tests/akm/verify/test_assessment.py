"""assess_claim: claim status from per-row judgements; support notes."""

from __future__ import annotations

import pytest

from akm.verify import LexicalClaimVerifier, SupportJudgement, assess_claim, support_note

SUPPORTS = "The cache is enabled by default."
CONTRADICTS = "The cache is disabled by default."
UNRELATED = "Backups run nightly."


@pytest.mark.parametrize(
    ("passages", "status", "supporting", "contradicting"),
    [
        ({"row-a": SUPPORTS, "row-b": UNRELATED}, "supported", ("row-a",), ()),
        ({"row-a": SUPPORTS, "row-b": CONTRADICTS}, "conflicted", ("row-a",), ("row-b",)),
        ({"row-b": CONTRADICTS}, "conflicted", (), ("row-b",)),
        ({"row-c": UNRELATED}, "unsupported", (), ()),
        ({}, "unsupported", (), ()),
    ],
    ids=["one-supports", "support-and-contradiction", "only-contradiction", "nothing-relevant", "no-rows"],
)
def test_assess_claim(
    passages: dict[str, str], status: str, supporting: tuple[str, ...], contradicting: tuple[str, ...]
) -> None:
    assessment = assess_claim("claim-1", "The cache is enabled by default.", passages, LexicalClaimVerifier())
    assert (assessment.claim_id, assessment.status) == ("claim-1", status)
    assert (assessment.supporting_row_ids, assessment.contradicting_row_ids) == (supporting, contradicting)
    assert [item.row_id for item in assessment.judgements] == list(passages)


def test_support_note_quotes_the_span() -> None:
    passage = "Intro text.  The cache is\nenabled by default. Outro."
    judgement = LexicalClaimVerifier().verify("The cache is enabled by default.", passage)
    assert support_note(judgement, passage) == (
        "supported (all-checks) by span 13-45: “The cache is enabled by default.”; " + judgement.note
    )


def test_support_note_without_span_and_long_excerpt() -> None:
    assert support_note(SupportJudgement("insufficient", None, "no sentences", "alignment"), "") == (
        "insufficient (alignment): no sentences"
    )
    long_passage = "word " * 100
    note = support_note(SupportJudgement("supported", (0, 500), "ok", "all-checks"), long_passage)
    assert note.startswith("supported (all-checks) by span 0-500: “word word")
    assert "…”; ok" in note
