"""Combining verifiers so that a second opinion can only make a verdict stricter."""

from __future__ import annotations

from akm.verify.judgement import STRICTNESS, ClaimVerifier, SupportJudgement


class StrictestOf:
    """Runs every verifier and keeps the strictest verdict.

    Strictness orders supported < insufficient < contradicted, so a claim is supported only
    when every member supports it; an added member (an NLI model, say) can turn "supported"
    into "insufficient" or "contradicted" but never the reverse. The span and checks of the
    member that decided are kept; the notes and checks of all members are joined, and the
    support score is the lowest any member gave.
    """

    def __init__(self, *verifiers: ClaimVerifier) -> None:
        if not verifiers:
            raise ValueError("StrictestOf needs at least one verifier")
        self.verifiers: tuple[ClaimVerifier, ...] = verifiers

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        judgements = [verifier.verify(claim, passage) for verifier in self.verifiers]
        # max keeps the first of equally strict verdicts, so the first member's span wins ties.
        deciding = max(judgements, key=lambda judgement: STRICTNESS[judgement.label])
        notes = "; ".join(
            f"{type(verifier).__name__}: {judgement.label} ({judgement.note})"
            for verifier, judgement in zip(self.verifiers, judgements, strict=True)
        )
        # The score can only fall as well: the lowest score any member gave.
        member_scores = [j.support_score for j in judgements if j.support_score is not None]
        return SupportJudgement(
            label=deciding.label,
            span=deciding.span,
            note=notes,
            decided_by=f"{type(self.verifiers[judgements.index(deciding)]).__name__}:{deciding.decided_by}",
            scores=dict(deciding.scores),
            support_score=min(member_scores) if member_scores else None,
            checks=tuple(check for judgement in judgements for check in judgement.checks),
        )
