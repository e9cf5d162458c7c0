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
class SupportJudgement:
    """A verifier's verdict on one claim against one passage.

    ``span`` is the [start, end) range of the passage the verdict rests on (the aligned
    sentences), or None when nothing aligned. ``decided_by`` names the check that settled the
    label and ``note`` says why in words. ``scores`` holds the measurements behind it.
    """

    label: SupportLabel
    span: tuple[int, int] | None
    note: str
    decided_by: str = ""
    scores: dict[str, float] = field(default_factory=dict)


class ClaimVerifier(Protocol):
    """Judges whether ``passage`` supports ``claim``. Implementations must be pure and deterministic."""

    def verify(self, claim: str, passage: str) -> SupportJudgement: ...
