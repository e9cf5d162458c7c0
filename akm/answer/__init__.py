"""Grounded answers: selection of the answer-bearing sentences, the prompt, the generator adapter,
answer tidying, the responsiveness check, and the orchestration that stores it all.

Only ``akm.answer.generation`` imports ``decoding``; everything else here is plain evidence-plane code.
The generator adapter is loaded lazily so importing this package never loads the decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akm.answer.orchestrate import (
    ANSWER_ACTOR,
    NO_ANSWER_TEXT,
    answer,
    answer_stream,
    save_answer,
)
from akm.answer.prompt import AnswerGenerator, EvidencePrompt, build_prompt, run_to_end
from akm.answer.results import (
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_MAX_ROWS,
    AnsweredClaim,
    AnswerOptions,
    AnswerResult,
    Citation,
    GeneratedAnswer,
    source_path,
)
from akm.answer.tidy import tidy_answer

if TYPE_CHECKING:
    from akm.answer.generation import SpeculativeAnswerGenerator


def __getattr__(name: str) -> Any:
    if name == "SpeculativeAnswerGenerator":
        from akm.answer.generation import SpeculativeAnswerGenerator

        return SpeculativeAnswerGenerator
    raise AttributeError(f"module 'akm.answer' has no attribute {name!r}")


__all__ = [
    "ANSWER_ACTOR",
    "DEFAULT_MAX_NEW_TOKENS",
    "DEFAULT_MAX_ROWS",
    "NO_ANSWER_TEXT",
    "AnswerGenerator",
    "AnswerOptions",
    "AnswerResult",
    "AnsweredClaim",
    "Citation",
    "EvidencePrompt",
    "GeneratedAnswer",
    "SpeculativeAnswerGenerator",
    "answer",
    "answer_stream",
    "build_prompt",
    "run_to_end",
    "save_answer",
    "source_path",
    "tidy_answer",
]
