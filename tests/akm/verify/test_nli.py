"""NLIVerifier with a fake pair scorer, and the errors of an unusable model directory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from akm.verify import (
    LexicalClaimVerifier,
    NLIModelLoadError,
    NLIModelNotConfigured,
    NLIVerifier,
    StrictestOf,
)
from akm.verify.nli import PairScorer

PASSAGE = "The cache is enabled by default. Backups run nightly."


def scorer_for(scores: dict[str, tuple[float, float, float]]) -> PairScorer:
    """A fake scorer: (entailment, neutral, contradiction) by premise text, neutral otherwise."""

    def score(pairs: Sequence[tuple[str, str]]) -> list[tuple[float, float, float]]:
        return [scores.get(premise, (0.0, 1.0, 0.0)) for premise, _ in pairs]

    return score


@pytest.mark.parametrize(
    ("scores", "label", "span"),
    [
        ({"Backups run nightly.": (0.95, 0.04, 0.01)}, "supported", (33, 53)),
        ({"Backups run nightly.": (0.80, 0.15, 0.05)}, "insufficient", (33, 53)),
        ({"The cache is enabled by default.": (0.01, 0.04, 0.95)}, "contradicted", (0, 32)),
        ({}, "insufficient", (0, 32)),
    ],
    ids=["entailed", "below-threshold", "contradicted", "neutral"],
)
def test_nli_labels_from_scores(
    scores: dict[str, tuple[float, float, float]], label: str, span: tuple[int, int]
) -> None:
    judgement = NLIVerifier(scorer_for(scores)).verify("claim", PASSAGE)
    assert (judgement.label, judgement.span, judgement.decided_by) == (label, span, "nli")


def test_nli_can_only_make_lexical_stricter() -> None:
    contradicting = NLIVerifier(scorer_for({"The cache is enabled by default.": (0.0, 0.0, 1.0)}))
    entailing = NLIVerifier(scorer_for({"Backups run nightly.": (1.0, 0.0, 0.0)}))
    claim_lexically_supported = "The cache is enabled by default."
    claim_lexically_unsupported = "Backups run weekly on tape."
    assert StrictestOf(LexicalClaimVerifier(), contradicting).verify(
        claim_lexically_supported, PASSAGE
    ).label == ("contradicted")
    assert StrictestOf(LexicalClaimVerifier(), entailing).verify(
        claim_lexically_unsupported, PASSAGE
    ).label == ("insufficient")


def test_not_configured() -> None:
    with pytest.raises(NLIModelNotConfigured, match="AKM_NLI_MODEL"):
        NLIVerifier.from_directory("")


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(NLIModelLoadError, match="does not exist"):
        NLIVerifier.from_directory(tmp_path / "absent")


def test_directory_without_a_model(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(NLIModelLoadError, match="cannot load NLI model"):
        NLIVerifier.from_directory(tmp_path)
