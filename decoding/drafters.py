"""Drafters: cheap guesses of the next few tokens, all behind one small protocol.

A drafter sees the committed context (prompt + generated tokens) and proposes up to k tokens.
Drafters that sample from a distribution return it (q, one row per proposed token) so the
speculative sampling test can use it; deterministic drafters return None (q is one-hot).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from decoding.acceptance import SamplingParams, sampling_probs
from decoding.draft_length import AcceptanceTracker, VerifyCostCurve, best_draft_length, expected_tokens
from decoding.kv_cache import CachedModel
from decoding.suffix_automaton import SuffixAutomaton, SuffixMatch

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
    # Other candidate continuations of the same context, likeliest first. A greedy decoder whose
    # target verifies trees puts them in the rows a block of `tokens` leaves spare (decoding.draft_tree).
    branches: tuple[tuple[int, ...], ...] = ()

    def truncated(self, k: int) -> DraftProposal:
        probs = None if self.probs is None else self.probs[:k]
        branches = tuple(branch[:k] for branch in self.branches) if k > 0 else ()
        return DraftProposal(self.tokens[:k], probs, self.source, self.match_length, branches)


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


def wants_features(drafter: object) -> bool:
    """Whether a drafter reads the target's features (a trained draft head, or a composite holding one).

    Such a drafter has `observe_features(start, features)`, called with the target's last hidden
    states of every committed position, in order.
    """
    return bool(getattr(drafter, "wants_features", False))


def feed_features(drafter: object, start: int, features: torch.Tensor) -> None:
    """Hand a feature drafter the target's features of positions start, start+1, ..."""
    observe = getattr(drafter, "observe_features", None)
    if observe is not None:
        observe(start, features)


def pays_per_token(drafter: object) -> bool:
    """Whether a drafter runs a model per proposed token, so asking it for more drafts costs time."""
    return bool(getattr(drafter, "pays_per_token", False))


def as_token_list(context_ids: Sequence[int] | torch.Tensor) -> list[int]:
    if isinstance(context_ids, torch.Tensor):
        return [int(token) for token in context_ids.reshape(-1).tolist()]
    return [int(token) for token in context_ids]


class ContextDrafter:
    """The plumbing of a drafter that reads the context as a token list and proposes the same tokens
    whatever the sampling parameters (a lookup): `propose` hands `draft` the context and k; `reset`
    and `observe` do nothing unless a subclass keeps state."""

    name = "context"

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
        return self.draft(as_token_list(context_ids), k)

    def draft(self, context: list[int], k: int) -> DraftProposal:
        raise NotImplementedError


class NoDrafter(ContextDrafter):
    """Proposes nothing: speculative decoding with it is plain decoding."""

    name = "none"

    def draft(self, context: list[int], k: int) -> DraftProposal:
        return EMPTY_PROPOSAL


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
    pays_per_token = True

    def __init__(
        self,
        model: PreTrainedModel,
        *,
        target_vocab_size: int,
        tokenizer: PreTrainedTokenizerBase | None = None,
        target_tokenizer: PreTrainedTokenizerBase | None = None,
        name: str | None = None,
    ) -> None:
        if name is not None:
            self.name = name
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


class PromptLookupDrafter(ContextDrafter):
    """Copies what followed the most recent earlier occurrence of the context's last n tokens.

    When that occurrence is close to the end (the text repeats itself), the copy runs on through the
    tokens it has copied, so a repeating stretch is drafted k tokens long rather than one period long.

    When no n-gram of `min_ngram` or more tokens recurs, a last token that occurred at most
    `rare_token_matches` times before is matched alone (match length 1): a rare token (a name, a
    number, a word of the passage being quoted) is usually followed by what followed it before, a
    common one ("the", ",") is not. That picks a copy back up after the output paraphrased a few
    words of its source, where no two-token n-gram matches yet.
    """

    name = "prompt_lookup"

    def __init__(
        self, min_ngram: int = 2, max_ngram: int = 5, alternatives: int = 3, rare_token_matches: int = 2
    ) -> None:
        """`alternatives`: how many other continuations (earlier occurrences whose next token differs)
        to offer as branches of a draft tree; `rare_token_matches` 0 turns single-token matches off."""
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need 1 <= min_ngram <= max_ngram, got {min_ngram}, {max_ngram}")
        if alternatives < 0:
            raise ValueError(f"alternatives must be >= 0, got {alternatives}")
        if rare_token_matches < 0:
            raise ValueError(f"rare_token_matches must be >= 0, got {rare_token_matches}")
        self.min_ngram = min_ngram
        self.max_ngram = max_ngram
        self.alternatives = alternatives
        self.rare_token_matches = rare_token_matches

    def draft(self, context: list[int], k: int) -> DraftProposal:
        if k <= 0:
            return EMPTY_PROPOSAL
        size = len(context)
        main: list[int] = []
        match_length = 0
        branches: list[tuple[int, ...]] = []
        seen: set[int] = set()
        for n in range(min(self.max_ngram, size - 1), self.min_ngram - 1, -1):
            pattern = context[size - n :]
            first = pattern[0]
            # Most recent occurrence first: recent text is the likeliest to be continued.
            for start in range(size - n - 1, -1, -1):
                if context[start] == first and context[start : start + n] == pattern:
                    if not main:
                        main, match_length = _copy_forward(context, start + n, k), n
                        seen.add(main[0])
                        if not self.alternatives:
                            return DraftProposal(tokens=main, source=self.name, match_length=n)
                    elif context[start + n] not in seen:
                        # Another occurrence that goes on differently: a branch of a draft tree.
                        seen.add(context[start + n])
                        branches.append(tuple(_copy_forward(context, start + n, k)))
                        if len(branches) >= self.alternatives:
                            return DraftProposal(main, None, self.name, match_length, tuple(branches))
        if not main:
            return self._rare_token_draft(context, k)
        return DraftProposal(main, None, self.name, match_length, tuple(branches))

    def _rare_token_draft(self, context: list[int], k: int) -> DraftProposal:
        """The continuation of the last token's most recent earlier occurrence, if it has at most
        `rare_token_matches` of them (a single-token match is `min_ngram` 1's job otherwise)."""
        if self.min_ngram == 1 or not self.rare_token_matches or len(context) < 2:
            return EMPTY_PROPOSAL
        last = context[-1]
        earlier = context.count(last) - 1
        if not 1 <= earlier <= self.rare_token_matches:
            return EMPTY_PROPOSAL  # never seen before, or a common token
        starts = [index + 1 for index in range(len(context) - 2, -1, -1) if context[index] == last]
        main = _copy_forward(context, starts[0], k)
        branches = tuple(
            tuple(_copy_forward(context, start, k))
            for start in starts[1 : 1 + self.alternatives]
            if context[start] != main[0]
        )
        return DraftProposal(main, None, self.name, 1, branches)


def _copy_forward(context: list[int], source: int, k: int) -> list[int]:
    """k tokens copied from `context[source:]` onwards; past the end of the context the copy reads
    what it has just copied (an overlapping copy, as in LZ77), so a loop of period p = len(context) -
    source is continued for all k tokens instead of stopping after p of them."""
    size = len(context)
    tokens = context[source : source + k]
    while len(tokens) < k:
        tokens.append(tokens[len(tokens) - (size - source)])
    return tokens


class EvidenceDrafter(ContextDrafter):
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

    def _match_context(self, context: list[int]) -> SuffixMatch:
        seen = len(self._seen)
        if seen <= len(context) and context[:seen] == self._seen:
            self._match = self.automaton.match(context[seen:], self._match)
        else:
            self._match = self.automaton.match(context)
        self._seen = context
        return self._match

    def draft(self, context: list[int], k: int) -> DraftProposal:
        match = self._match_context(context)
        if k <= 0 or match.length < self.min_match:
            return EMPTY_PROPOSAL
        tokens, length = self.automaton.continuation(match, k)
        if length < self.min_match or not tokens:
            return EMPTY_PROPOSAL
        return DraftProposal(tokens=tokens, source=self.name, match_length=length)


class SuccessorDrafter(ContextDrafter):
    """A one-token guess for the steps nothing can be copied into: the token that most often followed
    the context's last token (the most recent among equals), or, after a token never seen before, the
    context's most frequent token.

    The guess is right only a few times in a hundred. It is worth offering because, on CPUs where the
    measured verify-cost curve says that verifying one draft costs less than a plain step (the
    two-row block runs a faster kernel than the one-row step, which keeps the stock kernel), a step
    that verifies a wrong guess is still cheaper than a plain one; where it costs more, the chooser
    finds the guess not worth verifying and the step stays plain. Counts are kept incrementally while
    each context extends the one before.
    """

    name = "successor"

    def __init__(self) -> None:
        self._seen: list[int] = []
        self._counts: dict[int, int] = {}
        # successors[a][b] = [times b followed a, position of the latest such b]
        self._successors: dict[int, dict[int, list[int]]] = {}

    def reset(self) -> None:
        self._seen, self._counts, self._successors = [], {}, {}

    def _update(self, context: list[int]) -> None:
        seen = len(self._seen)
        if not (seen <= len(context) and context[:seen] == self._seen):
            self.reset()
            seen = 0
        counts, successors = self._counts, self._successors
        for position in range(seen, len(context)):
            token = context[position]
            counts[token] = counts.get(token, 0) + 1
            if position:
                entry = successors.setdefault(context[position - 1], {}).setdefault(token, [0, 0])
                entry[0] += 1
                entry[1] = position
        self._seen = context

    def draft(self, context: list[int], k: int) -> DraftProposal:
        if k <= 0 or not context:
            return EMPTY_PROPOSAL
        self._update(context)
        followers = self._successors.get(context[-1])
        if followers:
            guess = max(followers.items(), key=lambda item: (item[1][0], item[1][1]))[0]
        else:
            guess = max(self._counts.items(), key=lambda item: item[1])[0]
        return DraftProposal(tokens=[guess], source=self.name)


def expected_accepted(tracker: AcceptanceTracker, proposal: DraftProposal) -> float:
    """Tokens of `proposal` expected to be accepted, from the tracker's per-source, per-match-length rates."""
    if not proposal.tokens:
        return 0.0
    rates = tracker.estimates(proposal.source, proposal.match_length, len(proposal.tokens))
    return expected_tokens(rates)[-1] - 1.0


def matched_prefix(proposed: Sequence[int], committed: Sequence[int]) -> tuple[int, int]:
    """(positions decided, positions accepted) when `proposed` is scored against the tokens committed after it.

    A draft position is decided once the committed text reaches it; positions beyond the committed
    tokens are unknown, not rejected, so a proposal longer than one step's output is not penalised
    for its tail.
    """
    decided = min(len(proposed), len(committed))
    accepted = 0
    while accepted < decided and proposed[accepted] == committed[accepted]:
        accepted += 1
    return decided, accepted


@dataclass(frozen=True)
class ScoredProposal:
    """A member's proposal cut to its best length, with the verify rate that length is expected to reach."""

    member: int
    proposal: DraftProposal
    expected: float
    tokens_per_s: float


# Moving-average weight of the latest timing of a member's propose(); one slow call should not decide.
_TIMING_SMOOTHING = 0.2
# Steps a member runs before its running cost is weighed against what it contributed, and how often
# a member benched for not paying is run again, so a change in the text can bring it back.
_PROBATION_STEPS = 8
_PROBE_EVERY = 16


@dataclass
class MemberLedger:
    """What one member of a composite has cost and contributed, in seconds."""

    steps: int = 0
    seconds_per_call: float = 0.0
    seconds_per_token: float = 0.0
    spent_s: float = 0.0
    saved_s: float = 0.0
    # Steps it was benched, and steps it was not run because a lookup's proposal was already better
    # than the best it could be expected to offer.
    skipped: int = 0
    outbid: int = 0

    def record_time(self, seconds: float, tokens: int) -> None:
        per_token = seconds / max(tokens, 1)
        if self.steps == 0:
            self.seconds_per_call, self.seconds_per_token = seconds, per_token
        else:
            self.seconds_per_call += _TIMING_SMOOTHING * (seconds - self.seconds_per_call)
            self.seconds_per_token += _TIMING_SMOOTHING * (per_token - self.seconds_per_token)
        self.steps += 1
        self.spent_s += seconds

    @property
    def pays(self) -> bool:
        return self.steps < _PROBATION_STEPS or self.saved_s >= self.spent_s


def unique_keys(drafters: Sequence[Drafter]) -> list[str]:
    """Tracker keys for the members: their names, numbered where two members share one."""
    names = [drafter.name for drafter in drafters]
    return [name if names.count(name) == 1 else f"{name}#{index}" for index, name in enumerate(names)]


class CompositeDrafter:
    """Runs several drafters and keeps the proposal expected to commit the most tokens per second.

    Never worse than its best member, by three means:
    - every member's proposal is scored against the tokens the step actually committed, chosen or
      not, so acceptance by position is learnt per member (in `tracker`, keyed by member) from
      every step instead of only from the steps it happened to win, and the steps where no other
      member proposed the same next token are counted apart (on XQuAD prompts the successor guess
      was right on a third of all steps, but on one in twenty of the steps it alone proposed
      anything, the only steps where it decides what is verified);
    - proposals compete on expected committed tokens per second of verification (the measured
      cost curve), each cut to its own best length, not on expected accepted tokens: a long
      proposal that is half right loses to a short one that is always right when verifying the
      long one costs more than it gains;
    - a member's running time is counted: a costly member (a draft model) is asked only for as
      many tokens as pay, is not run on a step where a lookup member's proposal already beats the
      best it is expected to offer, and is benched while its running time exceeds the verify time
      its wins saved, with an occasional probe run so it can return when the text changes.

    The decoder hands over its tracker and its members' ledgers (both outlive one request) and its cost curve; with
    no cost curve (a fixed draft length), verification is taken as free and the longest expected
    accepted run wins. Ties go to the member listed first.
    """

    name = "composite"

    def __init__(
        self,
        drafters: Sequence[Drafter],
        tracker: AcceptanceTracker | None = None,
        cost_curve: VerifyCostCurve | None = None,
    ) -> None:
        if not drafters:
            raise ValueError("a composite drafter needs at least one drafter")
        self.drafters = list(drafters)
        self.keys = unique_keys(self.drafters)
        self.tracker = tracker if tracker is not None else AcceptanceTracker()
        self.cost_curve = cost_curve
        self.ledgers = [MemberLedger() for _ in self.drafters]
        self._context: list[int] = []
        self._proposals: list[DraftProposal | None] = []
        # Whether each member's last proposal began with a token no other member proposed (see propose).
        self._alone: list[bool] = []
        # The member whose proposal the last step verified (-1: none).
        self._chosen = -1
        self._step = 0

    @property
    def wants_features(self) -> bool:
        return any(wants_features(drafter) for drafter in self.drafters)

    def observe_features(self, start: int, features: torch.Tensor) -> None:
        for drafter in self.drafters:
            if wants_features(drafter):
                feed_features(drafter, start, features)

    def share_ledgers(self, book: dict[str, MemberLedger]) -> None:
        """Keep the members' ledgers in `book` (by member key), so that what a member cost and saved on
        earlier requests counts on this one: a member found not to pay is not on probation again."""
        self.ledgers = [
            book.setdefault(key, ledger) for key, ledger in zip(self.keys, self.ledgers, strict=True)
        ]

    def reset(self) -> None:
        for drafter in self.drafters:
            drafter.reset()
        self._context, self._proposals, self._alone = [], [], []

    def observe(self, accepted: int, proposed: int) -> None:
        for drafter in self.drafters:
            drafter.observe(accepted, proposed)

    def _score_previous(self, context: list[int]) -> None:
        """Record how every member's last proposal fared against the tokens committed since."""
        previous, proposals, alone = self._context, self._proposals, self._alone
        self._proposals = []
        if not proposals or len(context) <= len(previous) or context[: len(previous)] != previous:
            return
        committed = context[len(previous) :]
        for member, (key, proposal, only) in enumerate(zip(self.keys, proposals, alone, strict=True)):
            if proposal is None or not proposal.tokens:
                continue
            decided, accepted = matched_prefix(proposal.tokens, committed)
            if member != self._chosen:
                # Past its first token, a proposal that was not verified is decided only where the
                # chosen one agreed with it, which is where it is likelier right: that would
                # overstate its later positions, so only its first token counts.
                decided, accepted = min(decided, 1), min(accepted, 1)
            self.tracker.record(key, proposal.match_length, decided, accepted, only)

    def _request(self, member: int, k: int, cost: VerifyCostCurve) -> int:
        """How many tokens to ask a member for: all k, unless it pays per token (a draft model) and
        drafting that many is expected to cost more than it saves; a probe step asks for at least one.

        The acceptance estimates outlive the request (the decoder's tracker), so a member that has
        not paid on earlier requests is not asked for a long draft on the first step of the next.
        """
        ledger = self.ledgers[member]
        if not pays_per_token(self.drafters[member]):
            return k
        acceptance = self.tracker.estimates(self.keys[member], 0, min(k, cost.max_draft))
        request = best_draft_length(acceptance, cost, ledger.seconds_per_token)
        return max(request, 1) if self._probing(member) else request

    def _outbid(self, member: int, request: int, cost: VerifyCostCurve, scored: list[ScoredProposal]) -> bool:
        """Whether a model member need not run: a proposal in hand already commits tokens faster than
        the best the member's draft of up to `request` tokens is expected to, its own running time
        included. That is known before it runs, since its acceptance estimates do not depend on what
        it would propose. Lookups cost microseconds and always run; probe steps run the member."""
        if not scored or not pays_per_token(self.drafters[member]) or self._probing(member):
            return False
        acceptance = self.tracker.estimates(self.keys[member], 0, min(request, cost.max_draft))
        expected = expected_tokens(acceptance)
        per_token = self.ledgers[member].seconds_per_token
        best = max(
            expected[length] / (cost.seconds[length] + length * per_token)
            for length in range(1, len(expected))
        )
        return max(entry.tokens_per_s for entry in scored) >= best

    def _probing(self, member: int) -> bool:
        return (self._step + member) % _PROBE_EVERY == 0

    def _runs(self, member: int, leader: int) -> bool:
        """Whether to run a member this step: it pays, or leads the others, or is due for a probe."""
        ledger = self.ledgers[member]
        if ledger.pays or member == leader or self._probing(member):
            return True
        ledger.skipped += 1
        return False

    def _leader(self) -> int:
        """The member with the most net seconds saved: it always runs, so benching never leaves none."""
        return max(
            range(len(self.ledgers)),
            key=lambda member: (self.ledgers[member].saved_s - self.ledgers[member].spent_s, -member),
        )

    def _score(
        self, member: int, proposal: DraftProposal, cost: VerifyCostCurve, min_gain: float, alone: bool
    ) -> ScoredProposal:
        key = self.keys[member]
        limit = min(len(proposal.tokens), cost.max_draft)
        acceptance = self.tracker.estimates(key, proposal.match_length, limit, alone)
        length = best_draft_length(acceptance, cost, min_gain=min_gain)
        expected = expected_tokens(acceptance[:length])[-1]
        chosen = proposal.truncated(length)
        tagged = DraftProposal(chosen.tokens, chosen.probs, key, proposal.match_length)
        return ScoredProposal(member, tagged, expected, expected / cost.seconds[length])

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        context = as_token_list(context_ids)
        self._score_previous(context)
        self._step += 1
        if k <= 0:
            return EMPTY_PROPOSAL
        # Without a measured curve (fixed draft length) verification counts as free.
        cost = self.cost_curve if self.cost_curve is not None else VerifyCostCurve.flat(k)
        min_gain = 1.1 if self.cost_curve is not None else 1.0
        proposals: list[DraftProposal | None] = [None] * len(self.drafters)
        alone = [False] * len(self.drafters)
        scored: list[ScoredProposal] = []
        leader = self._leader()
        lookups = [
            member for member in range(len(self.drafters)) if not pays_per_token(self.drafters[member])
        ]
        models = [member for member in range(len(self.drafters)) if pays_per_token(self.drafters[member])]
        for member in lookups:
            request = self._request(member, k, cost)
            if request > 0 and self._runs(member, leader):
                proposals[member] = self._run(member, context, request, sampling, generator)
        # Whether another member proposes the same next token is known before the choice: a member's
        # record on the steps no other member backed its first token is kept apart (AcceptanceTracker).
        for member in lookups:
            proposal = proposals[member]
            if proposal is not None and proposal.tokens:
                alone[member] = not self._backed(member, proposal.tokens[0], proposals)
                scored.append(self._score(member, proposal, cost, min_gain, alone[member]))
        # A draft model runs only if it could beat the best of the lookups' proposals.
        for member in models:
            if not self._runs(member, leader):
                continue
            request = self._request(member, k, cost)
            if request <= 0:
                continue
            if self._outbid(member, request, cost, scored):
                self.ledgers[member].outbid += 1
                continue
            proposal = self._run(member, context, request, sampling, generator)
            proposals[member] = proposal
            if proposal.tokens:
                alone[member] = not self._backed(member, proposal.tokens[0], proposals)
                scored.append(self._score(member, proposal, cost, min_gain, alone[member]))
        self._context, self._proposals, self._alone, self._chosen = context, proposals, alone, -1
        return self._choose(scored, cost)

    @staticmethod
    def _backed(member: int, first: int, proposals: list[DraftProposal | None]) -> bool:
        """Whether another member's proposal starts with `first`, this member's first token."""
        return any(
            other != member and proposal is not None and proposal.tokens[:1] == [first]
            for other, proposal in enumerate(proposals)
        )

    def _run(
        self,
        member: int,
        context: list[int],
        request: int,
        sampling: SamplingParams,
        generator: torch.Generator | None,
    ) -> DraftProposal:
        """The member's proposal of up to `request` tokens, timed into its ledger."""
        started = time.perf_counter()
        proposal = self.drafters[member].propose(context, request, sampling, generator)
        self.ledgers[member].record_time(time.perf_counter() - started, len(proposal.tokens))
        return proposal

    def _choose(self, scored: list[ScoredProposal], cost: VerifyCostCurve) -> DraftProposal:
        """The fastest proposal; the winner is credited with the verify time it saved over the runner-up."""
        plain_rate = 1.0 / cost.seconds[0]
        ranked = sorted(
            (entry for entry in scored if entry.proposal.tokens),
            key=lambda entry: (-entry.tokens_per_s, entry.member),
        )
        if not ranked:
            return EMPTY_PROPOSAL
        best = ranked[0]
        self._chosen = best.member
        runner_up = ranked[1].tokens_per_s if len(ranked) > 1 else plain_rate
        # Expected seconds to commit the winner's tokens at the runner-up's rate, minus at its own.
        self.ledgers[best.member].saved_s += best.expected / runner_up - best.expected / best.tokens_per_s
        chosen = best.proposal
        branches = self._branches([entry.member for entry in ranked])
        if not branches:
            return chosen
        return DraftProposal(chosen.tokens, chosen.probs, chosen.source, chosen.match_length, branches)

    def _branches(self, ranking: list[int]) -> tuple[tuple[int, ...], ...]:
        """Candidates for the spare rows of a draft tree, likeliest first: the runners-up's whole
        proposals, then the alternatives the members offered themselves."""
        proposals = [self._proposals[member] for member in ranking]
        candidates = [tuple(proposal.tokens) for proposal in proposals[1:] if proposal is not None]
        for proposal in proposals:
            if proposal is not None:
                candidates.extend(proposal.branches)
        return tuple(candidate for candidate in candidates if candidate)
