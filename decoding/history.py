"""Drafting from earlier outputs: what a decoder has generated before, offered as drafts.

Answers repeat their own phrasing from one request to the next ("The answer to this question
is:", a closing clause, the end-of-turn token after a final period), and neither the prompt nor the
evidence holds it, so prompt lookup cannot propose it. `OutputHistory` keeps a decoder's last
outputs (bounded in tokens, oldest dropped first), each after the last few tokens of its prompt (the
chat template's opening of the answer), with an index of their short n-grams. `HistoryDrafter`
proposes the continuation of the longest context suffix found there, the most recent occurrence
first, and offers other occurrences that go on differently as draft-tree branches. Like prompt
lookup it only proposes: verification keeps the output exactly the target's.

The history belongs to one decoder (one process); it is never written to disk. Its drafts change
only how fast a later answer is produced, never its tokens.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Sequence

from decoding.drafters import EMPTY_PROPOSAL, ContextDrafter, DraftProposal

# Between outputs in the joined text: no context token equals it, so no match crosses two outputs.
_SEPARATOR = -1


class OutputHistory:
    """The last outputs of a decoder, joined, with an index from n-grams (n ≤ `index_ngram`) to the
    positions that follow them.

    `max_tokens` bounds the output tokens kept; when an output takes it past the bound, the oldest
    outputs are dropped until a quarter of the room is free and the index is rebuilt (so a rebuild
    happens once per many requests, not per request). `lead` prompt tokens before each output are
    kept as context for its first tokens; they are matched but never proposed.
    """

    def __init__(self, max_tokens: int = 16384, *, lead: int = 8, index_ngram: int = 3) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        if lead < 0 or index_ngram < 1:
            raise ValueError("lead must be >= 0 and index_ngram >= 1")
        self.max_tokens = max_tokens
        self.lead = lead
        self.index_ngram = index_ngram
        self._outputs: deque[tuple[list[int], list[int]]] = deque()
        self._kept = 0
        self.text: list[int] = []
        self.index: dict[tuple[int, ...], list[int]] = {}
        # Where each kept output's first token sits in `text`, in order, and where it ends.
        self.starts: list[int] = []
        self.ends: list[int] = []

    def __len__(self) -> int:
        """Output tokens kept."""
        return self._kept

    @property
    def outputs(self) -> int:
        return len(self._outputs)

    def clear(self) -> None:
        self._outputs.clear()
        self._kept = 0
        self.text, self.index, self.starts, self.ends = [], {}, [], []

    def add(self, prompt: Sequence[int], output: Sequence[int]) -> None:
        """Remember one finished output and the tail of the prompt it answered."""
        tokens = [int(token) for token in output]
        if not tokens:
            return
        lead = [int(token) for token in prompt[max(0, len(prompt) - self.lead) :]] if self.lead else []
        if len(tokens) > self.max_tokens:
            # Only the tail fits; the prompt's tail no longer leads into it.
            tokens, lead = tokens[-self.max_tokens :], []
        self._outputs.append((lead, tokens))
        self._kept += len(tokens)
        if self._kept <= self.max_tokens:
            self._append(lead, tokens)
            return
        while self._kept > self.max_tokens * 3 // 4 and len(self._outputs) > 1:
            self._kept -= len(self._outputs.popleft()[1])
        self.text, self.index, self.starts, self.ends = [], {}, [], []
        for kept_lead, kept in self._outputs:
            self._append(kept_lead, kept)

    def _append(self, lead: list[int], output: list[int]) -> None:
        text, index = self.text, self.index
        start = len(text)
        text.extend(lead)
        first = len(text)
        self.starts.append(first)
        text.extend(output)
        self.ends.append(len(text))
        text.append(_SEPARATOR)
        # Position p is indexed under every n-gram that ends just before it (within this output's
        # lead and tokens): looking up the context's last n tokens gives the tokens that followed them.
        for position in range(max(first, start + 1), first + len(output)):
            for n in range(1, min(self.index_ngram, position - start) + 1):
                index.setdefault(tuple(text[position - n : position]), []).append(position)

    def occurrences(self, context: Sequence[int], max_match: int, limit: int) -> list[tuple[int, int]]:
        """(match length, position) of up to `limit` places the context's suffix occurs, longest match
        first and the most recent first among equals; a match of `index_ngram` tokens is extended back
        as far as it goes (at most `max_match`)."""
        size = len(context)
        positions: list[int] | None = None
        n = min(self.index_ngram, size)
        while n > 0:
            positions = self.index.get(tuple(context[size - n :]))
            if positions:
                break
            n -= 1
        if not positions:
            return []
        text = self.text
        found: list[tuple[int, int]] = []
        for position in reversed(positions[-limit:]):
            length = n
            if n == self.index_ngram:
                while (
                    length < max_match
                    and length < size
                    and position - length - 1 >= 0
                    and text[position - length - 1] == context[size - length - 1]
                ):
                    length += 1
            found.append((length, position))
        # Stable: among equal lengths the most recent stays first.
        found.sort(key=lambda entry: -entry[0])
        return found

    def output_matched(self, position: int, length: int) -> int:
        """How many of a match's `length` tokens before `position` are output tokens, not lead."""
        start = self.starts[bisect_right(self.starts, position) - 1]
        return min(length, position - start)

    def remaining(self, position: int) -> int:
        """How many output tokens follow from `position` on to the end of its output."""
        return self.ends[bisect_right(self.starts, position) - 1] - position

    def continuation(self, position: int, k: int) -> list[int]:
        """Up to k tokens from `position` on, not past the end of their output."""
        tokens: list[int] = []
        for token in self.text[position : position + k]:
            if token == _SEPARATOR:
                break
            tokens.append(token)
        return tokens


class HistoryDrafter(ContextDrafter):
    """Proposes what followed the context's longest suffix in the decoder's earlier outputs.

    The proposal's `match_length` is the number of output tokens in the match (the prompt's lead
    tokens help find it, but every answer opens after the same chat template), so acceptance is
    learnt per match length:
    a one-token match ("The" → what followed "The" last time) is drafted only while such matches
    are accepted often enough to pay. Up to `alternatives` other occurrences whose next token
    differs become branches of a draft tree.
    """

    name = "history"

    def __init__(
        self,
        history: OutputHistory,
        *,
        min_match: int = 1,
        max_match: int = 16,
        alternatives: int = 3,
        scan_limit: int = 32,
    ) -> None:
        if min_match < 1 or max_match < min_match:
            raise ValueError("need 1 <= min_match <= max_match")
        self.history = history
        self.min_match = min_match
        self.max_match = max_match
        self.alternatives = alternatives
        self.scan_limit = scan_limit

    def draft(self, context: list[int], k: int) -> DraftProposal:
        if k <= 0 or not self.history.text:
            return EMPTY_PROPOSAL
        found = self.history.occurrences(context, self.max_match, self.scan_limit)
        if not found or found[0][0] < self.min_match:
            return EMPTY_PROPOSAL
        # Among the longest matches, the next token that followed most often leads (SuffixDecoding's
        # frequency rule), then one whose output goes on for k tokens (a match near the end of an
        # output would draft only its last few), the most recent among equals; other next tokens
        # become branches.
        longest = found[0][0]
        history = self.history
        text = history.text
        votes = Counter(text[position] for length, position in found if length == longest)
        ranked = sorted(
            found,
            key=lambda entry: (
                -entry[0],
                -votes.get(text[entry[1]], 0),
                -min(k, history.remaining(entry[1])),
            ),
        )
        length, position = ranked[0]
        main = history.continuation(position, k)
        if not main:
            return EMPTY_PROPOSAL
        branches: list[tuple[int, ...]] = []
        seen = {main[0]}
        for other_length, other in ranked[1:]:
            if len(branches) >= self.alternatives or other_length < self.min_match:
                break
            tokens = self.history.continuation(other, k)
            if tokens and tokens[0] not in seen:
                seen.add(tokens[0])
                branches.append(tuple(tokens))
        # Acceptance is learnt per output tokens matched: every answer opens after the same chat
        # template, so matching through it says little about what follows.
        matched = max(1, self.history.output_matched(position, length))
        return DraftProposal(main, None, self.name, matched, tuple(branches))
