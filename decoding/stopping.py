"""The committed output: stop conditions applied token by token, and text that is safe to stream.

A verify step commits a block of tokens at once; `Transcript.commit` walks the block one token at
a time so nothing after an EOS, a completed stop string or the token budget is ever kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from transformers import PreTrainedTokenizerBase

_STOP_WINDOW_MARGIN = 4


class FinishReason(StrEnum):
    EOS = "eos"
    STOP_STRING = "stop"
    LENGTH = "length"
    CONTEXT_WINDOW = "context_window"
    REPETITION = "repetition"


@dataclass(frozen=True)
class RepetitionRule:
    """A generation loops once the `ngram` tokens just generated have occurred `count` times in its output.

    A small model that has started repeating itself rarely stops before its token budget; every
    token after the loop is visible is wasted time. Only generated tokens are counted: copying a
    phrase from the prompt is what grounded answers should do, saying it three times is not.
    """

    ngram: int = 8
    count: int = 3

    def __post_init__(self) -> None:
        if self.ngram < 1 or self.count < 2:
            raise ValueError(
                f"a repetition rule needs ngram >= 1 and count >= 2, got {self.ngram}, {self.count}"
            )


class RepetitionDetector:
    """Counts every n-gram of the output as it grows, O(1) per token."""

    def __init__(self, rule: RepetitionRule) -> None:
        self.rule = rule
        self._counts: dict[tuple[int, ...], int] = {}

    def looping(self, tokens: list[int]) -> bool:
        """Called after each appended token: whether the n-gram it completed has now occurred `count` times."""
        size = self.rule.ngram
        if len(tokens) < size:
            return False
        gram = tuple(tokens[-size:])
        seen = self._counts.get(gram, 0) + 1
        self._counts[gram] = seen
        return seen >= self.rule.count


class Transcript:
    """Generated token ids, the reason generation ended, and the text decoded from them."""

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        *,
        max_new_tokens: int,
        eos_token_ids: Iterable[int] = (),
        stop_strings: Iterable[str] = (),
        repetition: RepetitionRule | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.eos_token_ids = frozenset(eos_token_ids)
        self.stop_strings = tuple(stop for stop in stop_strings if stop)
        # Every token that decodes to text adds at least one UTF-8 byte, so a stop string completed
        # by the last token lies within its byte length of trailing tokens; the margin covers a
        # token split inside a character and tokenizers that drop a leading space of a fragment.
        self.stop_window = (
            max(len(stop.encode()) for stop in self.stop_strings) + _STOP_WINDOW_MARGIN
            if self.stop_strings
            else 0
        )
        self.tokens: list[int] = []
        self.finish_reason: FinishReason | None = None
        self._stop_index: int | None = None
        self._repetition = RepetitionDetector(repetition) if repetition is not None else None

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    def decode(self) -> str:
        return str(self.tokenizer.decode(self.tokens, skip_special_tokens=True))

    def finish(self, reason: FinishReason) -> None:
        if self.finish_reason is None:
            self.finish_reason = reason

    def commit(self, tokens: list[int]) -> int:
        """Append tokens until a stop condition fires; returns how many were kept."""
        kept = 0
        for token in tokens:
            if self.finished:
                break
            if token in self.eos_token_ids:
                self.finish(FinishReason.EOS)
                break
            self.tokens.append(token)
            kept += 1
            if self.stop_strings:
                self._check_stop_strings()
            if self._repetition is not None and self._repetition.looping(self.tokens):
                self.finish(FinishReason.REPETITION)
            if len(self.tokens) >= self.max_new_tokens:
                self.finish(FinishReason.LENGTH)
        return kept

    def _check_stop_strings(self) -> None:
        # Only the tail can hold a stop string the last token completed (earlier ones were found
        # earlier), so decoding it keeps the check O(1) per token instead of O(length).
        tail = str(self.tokenizer.decode(self.tokens[-self.stop_window :], skip_special_tokens=True))
        if not any(stop in tail for stop in self.stop_strings):
            return
        # The index is into the whole text, which a fragment's decoding need not reproduce exactly.
        text = self.decode()
        found = [index for index in (text.find(stop) for stop in self.stop_strings) if index >= 0]
        if found:
            self._stop_index = min(found)
            self.finish_reason = FinishReason.STOP_STRING

    @property
    def text(self) -> str:
        """The output text, cut before a stop string that ended generation."""
        text = self.decode()
        if self._stop_index is not None:
            return text[: self._stop_index]
        return text

    def stable_text(self) -> str:
        """Text that later tokens cannot change: no dangling partial character, no possible stop prefix."""
        text = self.text
        if self.finished:
            return text
        text = text.rstrip("\ufffd")
        held = 0
        for stop in self.stop_strings:
            for length in range(min(len(stop) - 1, len(text)), held, -1):
                if text.endswith(stop[:length]):
                    held = length
                    break
        return text[: len(text) - held] if held else text
