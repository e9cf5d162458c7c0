"""StrictestOf: a combined verdict is never less strict than any member's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from akm.verify import SUPPORT_LABELS, StrictestOf, SupportJudgement, SupportLabel
from akm.verify.judgement import STRICTNESS


class FixedVerifier:
    """A fake that answers one label with one span, whatever it is asked."""

    def __init__(self, label: SupportLabel, span: tuple[int, int] | None = None) -> None:
        self.label = label
        self.span = span

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        return SupportJudgement(self.label, self.span, f"always {self.label}", "fixed", {"fixed": 1.0})


@given(st.lists(st.sampled_from(SUPPORT_LABELS), min_size=1, max_size=5))
def test_combined_label_is_the_strictest(labels: list[SupportLabel]) -> None:
    combined = StrictestOf(*(FixedVerifier(label) for label in labels)).verify("claim", "passage")
    assert STRICTNESS[combined.label] == max(STRICTNESS[label] for label in labels)
    assert all(STRICTNESS[combined.label] >= STRICTNESS[label] for label in labels)
    assert (combined.label == "supported") == all(label == "supported" for label in labels)


@given(st.sampled_from(SUPPORT_LABELS), st.sampled_from(SUPPORT_LABELS))
def test_adding_a_verifier_never_relaxes(base: SupportLabel, added: SupportLabel) -> None:
    alone = StrictestOf(FixedVerifier(base)).verify("claim", "passage")
    combined = StrictestOf(FixedVerifier(base), FixedVerifier(added)).verify("claim", "passage")
    assert STRICTNESS[combined.label] >= STRICTNESS[alone.label]


@pytest.mark.parametrize(
    ("first", "second", "label", "span"),
    [
        ("supported", "supported", "supported", (0, 5)),
        ("supported", "insufficient", "insufficient", (6, 9)),
        ("supported", "contradicted", "contradicted", (6, 9)),
        ("contradicted", "insufficient", "contradicted", (0, 5)),
        ("insufficient", "insufficient", "insufficient", (0, 5)),
    ],
    ids=["both-support", "second-withholds", "second-contradicts", "first-contradicts", "tie-keeps-first"],
)
def test_span_and_decider_come_from_the_deciding_member(
    first: SupportLabel, second: SupportLabel, label: SupportLabel, span: tuple[int, int]
) -> None:
    combined = StrictestOf(FixedVerifier(first, (0, 5)), FixedVerifier(second, (6, 9))).verify("c", "p")
    assert (combined.label, combined.span, combined.decided_by) == (label, span, "FixedVerifier:fixed")
    assert (
        combined.note == f"FixedVerifier: {first} (always {first}); FixedVerifier: {second} (always {second})"
    )


def test_needs_at_least_one_verifier() -> None:
    with pytest.raises(ValueError, match="at least one verifier"):
        StrictestOf()
