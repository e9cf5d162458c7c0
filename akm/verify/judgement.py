"""The verifier interface: claim text × passage text → supported | insufficient | contradicted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

SupportLabel = Literal["supported", "insufficient", "contradicted"]
SUPPORT_LABELS: tuple[SupportLabel, ...] = get_args(SupportLabel)
# How strict a verdict is: only "supported" lets a claim through, and "contradicted" asserts
# a conflict, which is a stronger finding than a gap.
STRICTNESS: dict[SupportLabel, int] = {"supported": 0, "insufficient": 1, "contradicted": 2}


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One check of a verdict: its name, whether the passage passed it, and why in words.

    ``factor`` is what a failure multiplies the support score by (1.0 when passed), so the
    reasons of a score can be read back check by check.
    """

    name: str
    passed: bool
    detail: str = ""
    factor: float = 1.0

    def to_json(self) -> dict[str, object]:
        return {"check": self.name, "passed": self.passed, "detail": self.detail, "factor": self.factor}


@dataclass(frozen=True, slots=True)
class SupportJudgement:
    """A verifier's verdict on one claim against one passage.

    ``span`` is the [start, end) range of the passage the verdict rests on (the aligned
    sentences), or None when nothing aligned. ``decided_by`` names the check that settled the
    label and ``note`` says why in words. ``scores`` holds the measurements behind it.

    ``support_score`` in [0, 1] says how well the passage supports the claim (None when the
    verifier gives none); a claim is ``supported`` only when the score reaches the verifier's
    threshold and no check failed. ``checks`` are the reasons: every check that ran, passed or
    failed, in the order they ran.
    """

    label: SupportLabel
    span: tuple[int, int] | None
    note: str
    decided_by: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    support_score: float | None = None
    checks: tuple[CheckOutcome, ...] = ()

    @property
    def failed_checks(self) -> tuple[str, ...]:
        return tuple(check.name for check in self.checks if not check.passed)

    @property
    def passed_checks(self) -> tuple[str, ...]:
        return tuple(check.name for check in self.checks if check.passed)

    def to_json(self) -> dict[str, object]:
        """The judgement as stored beside a claim's support record and returned to callers."""
        return {
            "label": self.label,
            "span": list(self.span) if self.span is not None else None,
            "note": self.note,
            "decidedBy": self.decided_by,
            "scores": dict(self.scores),
            "supportScore": self.support_score,
            "passedChecks": list(self.passed_checks),
            "failedChecks": list(self.failed_checks),
            "checks": [check.to_json() for check in self.checks],
        }


class ClaimVerifier(Protocol):
    """Judges whether ``passage`` supports ``claim``. Implementations must be pure and deterministic."""

    def verify(self, claim: str, passage: str) -> SupportJudgement: ...
