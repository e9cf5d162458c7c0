"""The support score: its range, its reasons, the threshold setting, and how it reaches a claim."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from akm.claims.extraction import ExtractedClaim
from akm.settings import Settings
from akm.support import ReadEvidence, apply_support, judge_all
from akm.verify import DEFAULT_SUPPORT_THRESHOLD, LexicalClaimVerifier
from akm.verify.lexical import CHECK_FACTORS

PASSAGE = (
    "Statin therapy decreased LDL cholesterol levels but increased the risk of new-onset diabetes. "
    "Critics say that the trial was stopped too early."
)


def test_a_supported_judgement_scores_at_least_the_threshold_and_lists_every_check() -> None:
    judgement = LexicalClaimVerifier().verify(
        "Statin therapy increases the risk of new-onset diabetes.", PASSAGE
    )
    assert judgement.label == "supported"
    assert judgement.support_score is not None and DEFAULT_SUPPORT_THRESHOLD <= judgement.support_score <= 1.0
    assert judgement.failed_checks == ()
    assert {"quantity", "polarity", "direction", "coverage", "entity"} <= set(judgement.passed_checks)


def test_a_failed_check_lowers_the_score_by_its_factor_and_names_itself() -> None:
    judgement = LexicalClaimVerifier().verify(
        "Statin therapy decreases the risk of new-onset diabetes.", PASSAGE
    )
    assert judgement.label != "supported"
    assert "direction" in judgement.failed_checks
    assert judgement.support_score is not None
    assert judgement.support_score <= CHECK_FACTORS["direction"] + 1e-9


def test_to_json_carries_the_score_and_its_reasons() -> None:
    judgement = LexicalClaimVerifier().verify("The trial was stopped too early.", PASSAGE)
    document = json.loads(json.dumps(judgement.to_json()))
    assert document["label"] == "insufficient"
    assert document["supportScore"] == judgement.support_score
    assert document["failedChecks"] == ["attribution"]
    failed = [check for check in document["checks"] if not check["passed"]]
    assert failed[0]["check"] == "attribution" and failed[0]["factor"] == CHECK_FACTORS["attribution"]
    assert "reports" in failed[0]["detail"]


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.95])
def test_the_threshold_decides_between_supported_and_not(threshold: float) -> None:
    # Two of three content words ("nightly" is missing): coverage 2/3 is the whole score.
    claim, passage = "Backups run nightly.", "Backups run weekly."
    judgement = LexicalClaimVerifier(support_threshold=threshold).verify(claim, passage)
    assert judgement.support_score == pytest.approx(2 / 3, abs=1e-3)
    assert (judgement.label == "supported") == (judgement.support_score >= threshold)


def test_support_threshold_setting_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().support_threshold == DEFAULT_SUPPORT_THRESHOLD
    monkeypatch.setenv("AKM_SUPPORT_THRESHOLD", "0.9")
    assert Settings().support_threshold == 0.9
    monkeypatch.setenv("AKM_SUPPORT_THRESHOLD", "1.5")
    with pytest.raises(ValueError, match="support_threshold"):
        Settings()


def _read(number: int, passage: str) -> ReadEvidence:
    row: Any = SimpleNamespace(
        evidence_id=f"row-{number}",
        verification=SimpleNamespace(state="direct-read"),
        source=SimpleNamespace(source_id=f"source-{number}", version=SimpleNamespace(revision="r1")),
    )
    return ReadEvidence(number=number, row=row, passage=passage)


CLAIM = ExtractedClaim(
    claim_id="c1",
    text="The trial was stopped too early.",
    start=0,
    end=33,
    claim_class="other",
    importance="supporting",
    cited_evidence=(1,),
)


def test_row_judgements_carry_score_and_checks_into_the_stored_record() -> None:
    (judgement,) = judge_all([CLAIM], [_read(1, PASSAGE)], LexicalClaimVerifier())
    stored = judgement.to_json()
    assert stored["supportScore"] == judgement.support_score
    assert stored["failedChecks"] == ["attribution"]
    assert any(reason.startswith("attribution failed: ") for reason in judgement.score_reasons)


def test_claim_assessment_shows_the_best_score_of_its_passages() -> None:
    evidence = [_read(1, "Backups run weekly."), _read(2, PASSAGE)]
    result = apply_support([CLAIM], evidence, LexicalClaimVerifier())
    assessment = result.assessment("c1")
    scores = [j.support_score for j in result.judgements if j.support_score is not None]
    assert assessment.outcome == "unsupported"
    assert assessment.support_score == max(scores)
    assert assessment.score_reasons
