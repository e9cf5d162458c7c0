"""Drafters: cheap guesses of the next few tokens, all behind one small protocol.

A drafter sees the committed context (prompt + generated tokens) and proposes up to k tokens.
Drafters that sample from a distribution return it (q, one row per proposed token) so the
speculative sampling test can use it; deterministic drafters return None (q is one-hot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from decoding.draft_length import AcceptanceTracker, expected_tokens
from decoding.kv_cache import CachedModel
from decoding.suffix_automaton import SuffixAutomaton, SuffixMatch
from decoding.verify import SamplingParams, sampling_probs

GREEDY = SamplingParams()


class VocabularyMismatchError(ValueError):
    """The draft model does not share the target's tokenizer, so its tokens would mean other things."""


@dataclass(frozen=True)
class DraftProposal:
    """Proposed tokens, their draft distribution (rows = positions) if any, and why they were proposed."""

    tokens: list[int]
    probs: torch.Tensor | None = None
    source: str = ""
    # Length of the context suffix that the proposal continues (0 for model drafters).
    match_length: int = 0

    def truncated(self, k: int) -> DraftProposal:
        probs = None if self.probs is None else self.probs[:k]
        return DraftProposal(self.tokens[:k], probs, self.source, self.match_length)


EMPTY_PROPOSAL = DraftProposal(tokens=[])


@runtime_checkable
class Drafter(Protocol):
    name: str

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal: ...

    def reset(self) -> None:
        """Forget everything about the previous request."""

    def observe(self, accepted: int, proposed: int) -> None:
        """Told after each verify step how many of the proposed tokens were accepted."""


def as_token_list(context_ids: Sequence[int] | torch.Tensor) -> list[int]:
    if isinstance(context_ids, torch.Tensor):
        return [int(token) for token in context_ids.reshape(-1).tolist()]
    return [int(token) for token in context_ids]


class NoDrafter:
    """Proposes nothing: speculative decoding with it is plain decoding."""

    name = "none"

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        return EMPTY_PROPOSAL

    def reset(self) -> None:
        pass

    def observe(self, accepted: int, proposed: int) -> None:
        pass


def check_vocabulary(
    target_tokenizer: PreTrainedTokenizerBase,
    draft_tokenizer: PreTrainedTokenizerBase,
    target_vocab_size: int,
    draft_vocab_size: int,
) -> None:
    """Refuse a draft model whose token ids do not mean the same strings as the target's."""
    if target_vocab_size != draft_vocab_size:
        raise VocabularyMismatchError(
            f"draft model has {draft_vocab_size} output logits, the target has {target_vocab_size}"
        )
    target_vocab, draft_vocab = target_tokenizer.get_vocab(), draft_tokenizer.get_vocab()
    if target_vocab != draft_vocab:
        differing = sorted(set(target_vocab.items()) ^ set(draft_vocab.items()))[:3]
        raise VocabularyMismatchError(
            f"draft and target tokenizers differ ({len(draft_vocab)} vs {len(target_vocab)} entries; "
            f"e.g. {differing}); a draft model must use the target's tokenizer"
        )


class ModelDrafter:
    """A smaller causal LM with the target's tokenizer; keeps its own KV cache across steps."""

    name = "model"

    def __init__(
        self,
        model: PreTrainedModel,
        *,
        target_vocab_size: int,
        tokenizer: PreTrainedTokenizerBase | None = None,
        target_tokenizer: PreTrainedTokenizerBase | None = None,
    ) -> None:
        draft_vocab_size = int(model.config.vocab_size)
        if tokenizer is not None and target_tokenizer is not None:
            check_vocabulary(target_tokenizer, tokenizer, target_vocab_size, draft_vocab_size)
        elif draft_vocab_size != target_vocab_size:
            raise VocabularyMismatchError(
                f"draft model has {draft_vocab_size} output logits, the target has {target_vocab_size}"
            )
        self.cached = CachedModel(model)

    def reset(self) -> None:
        self.cached.reset()

    def observe(self, accepted: int, proposed: int) -> None:
        # Rollback is lazy: the next propose() crops the cache to the prefix it shares with the context.
        pass

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        if k <= 0:
            return EMPTY_PROPOSAL
        logits = self.cached.sync(as_token_list(context_ids))
        tokens: list[int] = []
        rows: list[torch.Tensor] = []
        for position in range(k):
            if sampling.greedy:
                token = int(torch.argmax(logits).item())
            else:
                q = sampling_probs(logits.unsqueeze(0), sampling)[0]
                token = int(torch.multinomial(q, 1, generator=generator).item())
                rows.append(q)
            tokens.append(token)
            if position < k - 1:
                logits = self.cached.forward([token], logits_to_keep=1)[-1]
        probs = torch.stack(rows) if rows else None
        return DraftProposal(tokens=tokens, probs=probs, source=self.name)


class PromptLookupDrafter:
    """Copies what followed the most recent earlier occurrence of the context's last n tokens."""

    name = "prompt_lookup"

    def __init__(self, min_ngram: int = 2, max_ngram: int = 5) -> None:
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need 1 <= min_ngram <= max_ngram, got {min_ngram}, {max_ngram}")
        self.min_ngram = min_ngram
        self.max_ngram = max_ngram

    def reset(self) -> None:
        pass

    def observe(self, accepted: int, proposed: int) -> None:
        pass

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        context = as_token_list(context_ids)
        if k <= 0:
            return EMPTY_PROPOSAL
        size = len(context)
        for n in range(min(self.max_ngram, size - 1), self.min_ngram - 1, -1):
            pattern = context[size - n :]
            first = pattern[0]
            # Most recent occurrence first: recent text is the likeliest to be continued.
            for start in range(size - n - 1, -1, -1):
                if context[start] == first and context[start : start + n] == pattern:
                    tokens = context[start + n : start + n + k]
                    if tokens:
                        return DraftProposal(tokens=tokens, source=self.name, match_length=n)
        return EMPTY_PROPOSAL


class EvidenceDrafter:
    """Proposes the continuation, inside the evidence passages, of the longest matching context suffix."""

    name = "evidence"

    def __init__(self, passages: list[list[int]], min_match: int = 1) -> None:
        self.automaton = SuffixAutomaton(passages)
        self.min_match = min_match
        self._seen: list[int] = []
        self._match = SuffixMatch(length=0, state=0)

    def reset(self) -> None:
        self._seen = []
        self._match = SuffixMatch(length=0, state=0)

    def observe(self, accepted: int, proposed: int) -> None:
        pass

    def _match_context(self, context: list[int]) -> SuffixMatch:
        seen = len(self._seen)
        if seen <= len(context) and context[:seen] == self._seen:
            self._match = self.automaton.match(context[seen:], self._match)
        else:
            self._match = self.automaton.match(context)
        self._seen = context
        return self._match

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        match = self._match_context(as_token_list(context_ids))
        if k <= 0 or match.length < self.min_match:
            return EMPTY_PROPOSAL
        tokens, length = self.automaton.continuation(match, k)
        if length < self.min_match or not tokens:
            return EMPTY_PROPOSAL
        return DraftProposal(tokens=tokens, source=self.name, match_length=length)


def expected_accepted(tracker: AcceptanceTracker, proposal: DraftProposal) -> float:
    """Tokens of `proposal` expected to be accepted, from the tracker's per-source, per-match-length rates."""
    if not proposal.tokens:
        return 0.0
    rates = tracker.estimates(proposal.source, proposal.match_length, len(proposal.tokens))
    return expected_tokens(rates)[-1] - 1.0


class CompositeDrafter:
    """Asks every drafter and keeps the proposal with the most tokens expected to be accepted.

    The expectation comes from `tracker`: the decoder hands over its own, so a drafter whose long
    matches keep failing (evidence matched on a common word) loses to one that copies well,
    whatever their match lengths. Ties go to the drafter listed first.
    """

    name = "composite"

    def __init__(self, drafters: Sequence[Drafter], tracker: AcceptanceTracker | None = None) -> None:
        if not drafters:
            raise ValueError("a composite drafter needs at least one drafter")
        self.drafters = list(drafters)
        self.tracker = tracker if tracker is not None else AcceptanceTracker()

    def reset(self) -> None:
        for drafter in self.drafters:
            drafter.reset()

    def observe(self, accepted: int, proposed: int) -> None:
        for drafter in self.drafters:
            drafter.observe(accepted, proposed)

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        context = as_token_list(context_ids)
        best, best_expected = EMPTY_PROPOSAL, 0.0
        for drafter in self.drafters:
            proposal = drafter.propose(context, k, sampling, generator)
            expected = expected_accepted(self.tracker, proposal)
            if expected > best_expected:
                best, best_expected = proposal, expected
        return best
