"""Claim × passage → supported | insufficient | contradicted, with the span the verdict rests on.

Pure text logic: nothing here touches the store or the decoder.
"""

from akm.verify.combined import StrictestOf
from akm.verify.judgement import (
    SUPPORT_LABELS,
    CheckOutcome,
    ClaimVerifier,
    SupportJudgement,
    SupportLabel,
)
from akm.verify.lexical import DEFAULT_SUPPORT_THRESHOLD, LexicalClaimVerifier
from akm.verify.nli import NLIModelError, NLIModelLoadError, NLIModelNotConfigured, NLIVerifier

__all__ = [
    "DEFAULT_SUPPORT_THRESHOLD",
    "SUPPORT_LABELS",
    "CheckOutcome",
    "ClaimVerifier",
    "LexicalClaimVerifier",
    "NLIModelError",
    "NLIModelLoadError",
    "NLIModelNotConfigured",
    "NLIVerifier",
    "StrictestOf",
    "SupportJudgement",
    "SupportLabel",
]
