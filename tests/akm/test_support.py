"""Conflicts between directly read rows: across documents a conflict is opened, within one
document revision a seeming contradiction is read as another case (akm.support)."""

from __future__ import annotations

import pytest

from akm.claims.extraction import ExtractedClaim
from akm.contract.ids import sha256_text
from akm.contract.models import EvidenceRow
from akm.contract.states import record_direct_read
from akm.support import ReadEvidence, apply_support
from akm.verify import SupportJudgement
from tests.akm.contract.example_documents import candidate_row

PRICE = "| Hygienist appointment (45 minutes) | £85 |"
MISSED = (
    "Missed appointments are charged at £35 for a dentist appointment and £25 for a hygienist appointment."
)
CLAIM = ExtractedClaim(
    claim_id="claim-price",
    text=PRICE,
    start=0,
    end=len(PRICE),
    claim_class="number",
    importance="important",
    cited_evidence=(),
)


class PriceVerifier:
    """Supports the claim on the price row and contradicts it on the missed-appointment sentence."""

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        if passage == PRICE:
            return SupportJudgement("supported", (0, len(PRICE)), "states the price", "fake")
        return SupportJudgement("contradicted", (0, 10), "states another price", "fake")


def _row(evidence_id: str, source_id: str, revision: str, text: str) -> EvidenceRow:
    row = candidate_row()
    source = row.source.model_copy(
        update={
            "source_id": source_id,
            "version": row.source.version.model_copy(update={"revision": revision}),
        }
    )
    row = row.model_copy(update={"evidence_id": evidence_id, "source": source})
    return record_direct_read(
        row,
        by="test",
        read_method="direct-file-read",
        locator_read="price-list.md:1-2",
        observed_revision=revision,
        observed_checksum=sha256_text(text),
        checksum_match=True,
        context_included=True,
    )


@pytest.mark.parametrize(
    ("source_id", "revision", "outcome", "conflicts"),
    [
        pytest.param("price-list", "r1", "supported", 0, id="same-document"),
        pytest.param("old-price-list", "r1", "conflicted", 1, id="another-document"),
        pytest.param("price-list", "r0", "conflicted", 1, id="another-revision"),
    ],
)
def test_a_document_revision_does_not_conflict_with_itself(
    source_id: str, revision: str, outcome: str, conflicts: int
) -> None:
    evidence = [
        ReadEvidence(1, _row("row-price-0001", "price-list", "r1", PRICE), PRICE),
        ReadEvidence(2, _row("row-missed-001", source_id, revision, MISSED), MISSED),
    ]
    result = apply_support([CLAIM], evidence, PriceVerifier())
    assessment = result.assessment(CLAIM.claim_id)
    assert (assessment.outcome, len(result.conflicts)) == (outcome, conflicts)
    states = [row.verification.state for row in result.rows]
    if outcome == "supported":
        assert states == ["claim-supported", "direct-read"]
        assert assessment.contradicting_row_ids == ()
        assert (
            "E2, of the same document, read as another case: states another price" in assessment.record.notes
        )
    else:
        assert states == ["conflicted", "conflicted"]
        assert assessment.contradicting_row_ids == ("row-missed-001",)


def test_a_contradiction_alone_still_contradicts_within_one_document() -> None:
    """Without a supporting row there is no case to set the contradiction beside."""
    evidence = [ReadEvidence(1, _row("row-missed-001", "price-list", "r1", MISSED), MISSED)]
    result = apply_support([CLAIM], evidence, PriceVerifier())
    assert result.assessment(CLAIM.claim_id).outcome == "contradicted"
