"""A suffix automaton over token ids, for finding where the current context continues in evidence passages.

Passages are joined with distinct negative separators so that no match spans two passages.
Building is linear in the total number of tokens; matching the context advances one token at a
time and can resume from a saved state when the context only grew.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _State:
    length: int
    link: int
    # End index (in the joined text) of the first occurrence of this state's substrings.
    first_end: int
    transitions: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SuffixMatch:
    """The longest suffix of a context that occurs in the text: its length and the automaton state."""

    length: int
    state: int


class SuffixAutomaton:
    """Suffix automaton of a sequence of passages (lists of token ids)."""

    def __init__(self, passages: list[list[int]]) -> None:
        self.text: list[int] = []
        self._states: list[_State] = [_State(length=0, link=-1, first_end=-1)]
        self._last = 0
        for number, passage in enumerate(passages):
            if number:
                self._extend(-number)
            for token in passage:
                if token < 0:
                    raise ValueError(f"token ids must be non-negative, got {token}")
                self._extend(token)

    def __len__(self) -> int:
        return len(self.text)

    def _extend(self, token: int) -> None:
        states = self._states
        self.text.append(token)
        current = len(states)
        states.append(_State(length=states[self._last].length + 1, link=-1, first_end=len(self.text) - 1))
        walker = self._last
        while walker != -1 and token not in states[walker].transitions:
            states[walker].transitions[token] = current
            walker = states[walker].link
        if walker == -1:
            states[current].link = 0
        else:
            target = states[walker].transitions[token]
            if states[walker].length + 1 == states[target].length:
                states[current].link = target
            else:
                clone = len(states)
                states.append(
                    _State(
                        length=states[walker].length + 1,
                        link=states[target].link,
                        first_end=states[target].first_end,
                        transitions=dict(states[target].transitions),
                    )
                )
                while walker != -1 and states[walker].transitions.get(token) == target:
                    states[walker].transitions[token] = clone
                    walker = states[walker].link
                states[target].link = clone
                states[current].link = clone
        self._last = current

    def advance(self, match: SuffixMatch, token: int) -> SuffixMatch:
        """The longest matched suffix after appending `token` to the context."""
        states = self._states
        state, length = match.state, match.length
        while state != -1 and token not in states[state].transitions:
            state = states[state].link
            length = states[state].length if state != -1 else 0
        if state == -1:
            return SuffixMatch(length=0, state=0)
        return SuffixMatch(length=length + 1, state=states[state].transitions[token])

    def match(self, context: list[int], start: SuffixMatch | None = None) -> SuffixMatch:
        current = start if start is not None else SuffixMatch(length=0, state=0)
        for token in context:
            current = self.advance(current, token)
        return current

    def continuation(self, match: SuffixMatch, max_tokens: int) -> tuple[list[int], int]:
        """Up to `max_tokens` tokens that follow the first occurrence of the matched suffix.

        When that occurrence ends its passage, shorter suffixes (via suffix links) are tried so
        a proposal is still made from somewhere the context's tail does continue. Returns the
        tokens and the length of the suffix they continue.
        """
        if match.length == 0 or max_tokens <= 0:
            return [], 0
        state, length = match.state, match.length
        while state > 0:
            start = self._states[state].first_end + 1
            tokens: list[int] = []
            for token in self.text[start : start + max_tokens]:
                if token < 0:
                    break
                tokens.append(token)
            if tokens:
                return tokens, length
            state = self._states[state].link
            length = self._states[state].length
        return [], 0
