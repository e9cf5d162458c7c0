"""The copy ceiling: the most that drafting by copying could speed up a greedy output's decoding steps.

Lookup drafters (prompt lookup, the evidence passages, earlier outputs) propose tokens that follow an
earlier occurrence of the context's last token. Once own plain decoding has produced a prompt's
greedy output, it is known at every step how long a run of the next tokens follows some earlier
occurrence of the last token, in the prompt or in the output so far (read on through the copy
itself, as `decoding.drafters._copy_forward` does). A decoder that knew those runs and verified just
the right number of them at each step would commit the output with the least verify cost the
measured cost curve allows; no drafter that copies can do better, whatever it copies from that
context and however long it drafts (a draft tree verifies at least as many rows as its accepted path).

`copy_ceiling` is that least cost in plain steps (the curve's `ratio`), found exactly by dynamic
programming over the steps' lengths. The tokens after the first one count: the first comes from the
prefill, which drafting cannot shorten. The speedup it gives is therefore over the decoding steps
alone; a measured wall-time speedup also carries the prefill and the decoder's own work per step.
Drafts that do not copy (a draft model, a trained head) are not bounded by it.

`lookup_ceiling` is the same least cost for the one proposal prompt lookup makes at each step: the
gap between the two is what the choice of occurrence costs, and the gap below it what not knowing
in advance how far a draft holds costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from decoding.draft_length import VerifyCostCurve
from decoding.drafters import PromptLookupDrafter


@dataclass(frozen=True)
class CopyCeiling:
    """`tokens` decoded after the first, committed at best in `steps` plain steps' worth of verify cost."""

    tokens: int
    steps: float

    @property
    def speedup(self) -> float | None:
        return self.tokens / self.steps if self.steps > 0 else None


def copy_runs(prompt: Sequence[int], tokens: Sequence[int], max_draft: int) -> list[int]:
    """runs[i], for each step that starts with `tokens[:i]` committed (i >= 1): the longest run of
    `tokens[i:]` that follows an earlier occurrence of `tokens[i - 1]` in the prompt or the output,
    at most `max_draft` and at most len(tokens) - i - 1 (a step commits its accepted drafts and one
    token of the target's own). runs[0] is 0: the first token comes from the prefill."""
    context = [*prompt, *tokens]
    start = len(prompt)
    runs = [0] * len(tokens)
    # Positions of each token, up to the one before the last token committed so far.
    seen: dict[int, list[int]] = {}
    for position in range(start - 1):
        seen.setdefault(context[position], []).append(position)
    for index in range(1, len(tokens)):
        here = start + index  # where the step's first draft would go
        if here >= 2:
            seen.setdefault(context[here - 2], []).append(here - 2)
        limit = min(max_draft, len(tokens) - index - 1)
        best = 0
        for occurrence in seen.get(context[here - 1], ()):
            length = 0
            # Reading past `here` reads the copy's own tokens, which equal the output where it held.
            while length < limit and context[occurrence + 1 + length] == context[here + length]:
                length += 1
            best = max(best, length)
            if best == limit:
                break
        runs[index] = best
    return runs


def lookup_runs(prompt: Sequence[int], tokens: Sequence[int], max_draft: int) -> list[int]:
    """runs[i], as in `copy_runs`, but of the one proposal prompt lookup makes at that step (the
    most recent occurrence of the longest matched n-gram, `decoding.drafters.PromptLookupDrafter`
    with its defaults): how many of its drafts `tokens[i:]` holds."""
    drafter = PromptLookupDrafter()
    context = [*prompt, *tokens]
    start = len(prompt)
    runs = [0] * len(tokens)
    for index in range(1, len(tokens)):
        limit = min(max_draft, len(tokens) - index - 1)
        if limit <= 0:
            continue
        proposal = drafter.draft(context[: start + index], limit).tokens
        length = 0
        while length < len(proposal) and proposal[length] == tokens[index + length]:
            length += 1
        runs[index] = length
    return runs


def least_steps(runs: Sequence[int], curve: VerifyCostCurve) -> CopyCeiling:
    """The least verify cost, in plain steps, of committing the tokens after the first when the step
    starting at token i can verify at most runs[i] drafts that hold."""
    count = len(runs)
    # least[i]: the least cost of committing tokens[i:] once tokens[:i] are committed.
    least = [0.0] * (count + 1)
    for index in range(count - 1, 0, -1):
        least[index] = min(
            curve.ratio(length) + least[index + 1 + length] for length in range(runs[index] + 1)
        )
    return CopyCeiling(max(count - 1, 0), least[1] if count > 1 else 0.0)


def copy_ceiling(prompt: Sequence[int], tokens: Sequence[int], curve: VerifyCostCurve) -> CopyCeiling:
    """The least verify cost, in plain steps, of committing `tokens` after the first by drafts that copy."""
    return least_steps(copy_runs(prompt, tokens, curve.max_draft), curve)


def lookup_ceiling(prompt: Sequence[int], tokens: Sequence[int], curve: VerifyCostCurve) -> CopyCeiling:
    """The same for prompt lookup's own proposals, each verified to the right length: what choosing
    the draft length alone could reach, with the occurrence prompt lookup copies from."""
    return least_steps(lookup_runs(prompt, tokens, curve.max_draft), curve)
