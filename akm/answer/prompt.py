"""The generator's input: the question and only the answer-bearing sentences, in words a small model follows.

A 135M-parameter model echoes instructions it does not understand ("The answer to the question
is: [E1]"), talks about "the evidence", and answers from the wrong passage when several are
shown. So the prompt is short and plain: the chosen sentences as the text to answer from, the
bare question, no citation markers (the verifier's alignment attributes each claim to its row
after generation). The same sentences go to the evidence drafter, so what the model copies is
drafted for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from akm.answer.results import GeneratedAnswer

SYSTEM_TEMPLATE = "Answer the question using only this text: {text}"


@dataclass(frozen=True, slots=True)
class EvidencePrompt:
    """The generator's whole input: instructions, question and the text it may use.

    ``passages`` are what the evidence drafter may copy from: the answer-bearing sentences.
    """

    question: str
    system: str
    user: str
    passages: tuple[str, ...]


class AnswerGenerator(Protocol):
    """Turns an evidence prompt into answer text plus decode statistics."""

    def generate(
        self, prompt: EvidencePrompt, *, max_new_tokens: int, temperature: float, seed: int | None
    ) -> GeneratedAnswer: ...


def build_prompt(question: str, sentences: Sequence[str]) -> EvidencePrompt:
    """The answer-bearing sentences as the system message and the bare question as the user turn."""
    quoted = tuple(" ".join(sentence.split()) for sentence in sentences if sentence.strip())
    text = " ".join(quoted) if quoted else "(no passage could be read)"
    return EvidencePrompt(
        question=question,
        system=SYSTEM_TEMPLATE.format(text=text),
        user=question,
        passages=quoted,
    )


__all__ = ["SYSTEM_TEMPLATE", "AnswerGenerator", "EvidencePrompt", "build_prompt"]
