"""Packet assembly and verdicts on the bundled corpus with fixed answers; invalid packets are errors."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import akm.answer.orchestrate
from akm.answer import AnswerOptions, answer
from akm.packet import InvalidPacketError, ensure_valid, packet_findings
from akm.support import SupportResult
from akm.verify import SupportJudgement

# The whole sentence of docs/configuration.md that answers the question, as a copying model writes it
# (a shortened copy would be replaced by the quote, see docs/answers.md).
CAP = (
    "The manifest also sets the fusion method (`deterministic-priority` by default, `rrf` with k = 60 as a "
    "comparison), the per-source cap (2 rows per source) and the maximum number of fused rows (20)."
)


def _ask(corpus: Any, text: str, **kwargs: Any) -> Any:
    result = answer(
        "What does the per-source cap limit?",
        AnswerOptions(),
        store=corpus.store,
        manifest=corpus.manifest,
        embedder=corpus.embedder,
        generator=corpus.generator(text),
        **kwargs,
    )
    document = result.packet.to_json()
    assert packet_findings(document) == []
    corpus.check_upstream(document)
    assert corpus.store.get_packet(result.packet_id) == document
    return result


@pytest.mark.parametrize(
    ("text", "verdict", "statuses", "reason"),
    [
        pytest.param(f"{CAP} [E1]", "PASS", ["supported"], "all 1 claim(s) are supported", id="pass"),
        pytest.param(
            f"{CAP} [E1] The moon is made of cheese.",
            "PASS_WITH_NOTE",
            ["supported", "unsupported"],
            "supporting claim claim-",
            id="pass-with-note-unsupported-supporting-claim",
        ),
        pytest.param(
            f"{CAP} [E1] The per-source cap is 7 rows per source.",
            "HOLD",
            ["supported", "unsupported"],
            "important number claim claim-",
            id="hold-unsupported-important-claim",
        ),
    ],
)
def test_verdict_table(corpus: Any, text: str, verdict: str, statuses: list[str], reason: str) -> None:
    result = _ask(corpus, text)
    verification = result.packet.verification
    assert verification.verdict == verdict
    assert [claim.status for claim in result.packet.claims] == statuses
    assert any(item.startswith(reason) for item in verification.verdict_reasons), verification.verdict_reasons
    assert verification.rollback_required is False


def test_unsupported_important_claim_is_required_missing_evidence(corpus: Any) -> None:
    result = _ask(corpus, f"{CAP} [E1] The per-source cap is 7 rows per source.")
    unsupported = result.packet.claims[1]
    assert unsupported.importance == "important" and unsupported.claim_class == "number"
    (missing,) = result.packet.missing_evidence
    assert (missing.claim_ids, missing.required, missing.status) == ((unsupported.claim_id,), True, "open")


def test_supported_claim_promotes_only_its_row_for_its_claim_id(corpus: Any) -> None:
    result = _ask(corpus, f"{CAP} [E1]")
    (claim,) = result.packet.claims
    (row_id,) = claim.support_row_ids
    rows = {row.evidence_id: row for row in result.packet.evidence_rows}
    supported = rows[row_id]
    assert supported.verification.state == "claim-supported"
    assert supported.verification.claim_ids == (claim.claim_id,)
    assert "per-source cap (2 rows per source)" in supported.verification.notes
    assert [event.state for event in supported.verification.history or ()] == [
        "candidate",
        "direct-read",
        "claim-supported",
    ]
    others = [row.verification.state for key, row in rows.items() if key != row_id]
    assert others and set(others) == {"direct-read"}
    (queue_item,) = [item for item in result.packet.direct_read_queue if item.row_id == row_id]
    assert (queue_item.status, queue_item.required, queue_item.claim_ids) == (
        "completed",
        True,
        (claim.claim_id,),
    )


class PerSourceVerifier:
    """Supports the claim on the passage that states the cap and contradicts it on every other
    passage: directly read passages that disagree."""

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        if "per-source cap (2 rows per source)" in passage:
            return SupportJudgement("supported", (0, 20), "states the cap", "fake")
        return SupportJudgement("contradicted", (0, 20), "states another cap", "fake")


def test_conflicted_claim_opens_a_factual_conflict_and_holds(corpus: Any) -> None:
    result = _ask(corpus, f"{CAP} [E1]", verifier=PerSourceVerifier())
    packet = result.packet
    (claim,) = packet.claims
    (conflict,) = packet.conflicts
    assert claim.status == "conflicted"
    assert (conflict.type, conflict.status, conflict.claim_ids) == ("factual", "open", (claim.claim_id,))
    assert len(conflict.row_ids) >= 2 and set(claim.support_row_ids) == set(conflict.row_ids)
    for row in packet.evidence_rows:
        if row.evidence_id in conflict.row_ids:
            assert row.verification.state == "conflicted"
            assert row.verification.conflict_ids == (conflict.conflict_id,)
    assert packet.verification.verdict == "HOLD"
    assert f"blocking factual conflict {conflict.conflict_id} is open" in packet.verification.verdict_reasons
    assert [item.status for item in result.claims] == ["conflicted"]


def test_checksum_mismatch_between_index_and_read_fails(corpus: Any) -> None:
    path = corpus.root / "docs" / "configuration.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nEdited after indexing.\n", encoding="utf-8")
    result = _ask(corpus, f"{CAP} [E1]")
    verification = result.packet.verification
    assert verification.verdict == "FAIL"
    assert verification.rollback_required is True
    stale = [row for row in result.packet.evidence_rows if row.verification.state == "stale"]
    assert [row.source.source_id for row in stale] == ["akm:docs:configuration.md"]
    assert (
        f"checksum mismatch: {stale[0].evidence_id} changed between indexing and direct read (re-run akm ingest)"
        in (verification.verdict_reasons)
    )


def test_a_packet_that_breaks_a_rule_is_an_error(corpus: Any) -> None:
    result = _ask(corpus, f"{CAP} [E1] The per-source cap is 7 rows per source.")
    claims = list(result.packet.claims)
    claims[1] = claims[1].model_copy(update={"status": "supported"})
    broken = result.packet.model_copy(update={"claims": tuple(claims)})
    with pytest.raises(InvalidPacketError) as raised:
        ensure_valid(broken)
    assert any(
        finding.startswith("S3.2-pass") or finding.startswith("S5.4") for finding in raised.value.findings
    )


def test_invalid_packet_is_never_stored(corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A support step that marks a claim supported without promoting its row is a bug: nothing is stored."""
    real = akm.answer.orchestrate.apply_support

    def unpromoted(*args: Any, **kwargs: Any) -> SupportResult:
        support = real(*args, **kwargs)
        claims = [assessment for assessment in support.assessments]
        wrong = replace(claims[1], record=claims[1].record.model_copy(update={"status": "supported"}))
        return replace(support, assessments=(claims[0], wrong))

    monkeypatch.setattr(akm.answer.orchestrate, "apply_support", unpromoted)
    before = corpus.store.count_packets()
    with pytest.raises(InvalidPacketError):
        _ask(corpus, f"{CAP} [E1] The per-source cap is 7 rows per source.")
    assert corpus.store.count_packets() == before
    assert corpus.store.list_rejections() == []
