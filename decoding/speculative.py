"""The decode loop: prefill, then draft -> verify -> accept -> roll back, until a stop condition.

Invariant: the target's KV cache holds every committed token except the last one (the pending
token). Each step forwards [pending, d1..dk] in one call, which scores all k drafts and yields the
token after them, then crops the cache to the accepted prefix. With no drafts the same step is a
plain decode step, so `plain_generate` is this loop with a drafter that proposes nothing. In greedy
decoding a step may verify a draft tree instead (`decoding.draft_tree`): the drafters' other candidates
in the rows the chain's block leaves spare; the cache then keeps the accepted path only.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from decoding.acceptance import (
    Acceptance,
    SamplingParams,
    accept_greedy,
    accept_speculative,
    choose_token,
    sampling_probs,
)
from decoding.draft_length import (
    AcceptanceTracker,
    ObservedCost,
    VerifyCostCurve,
    best_draft_length,
    load_or_measure_verify_cost,
)
from decoding.draft_tree import DraftTree
from decoding.drafters import (
    CompositeDrafter,
    Drafter,
    DraftProposal,
    MemberLedger,
    NoDrafter,
    as_token_list,
    feed_features,
    matched_prefix,
    pays_per_token,
    wants_features,
)
from decoding.history import OutputHistory
from decoding.kv_cache import CachedModel
from decoding.models import context_window
from decoding.stats import DecodeStats, peak_rss_bytes
from decoding.stopping import FinishReason, RepetitionRule, Transcript

_DRAFT_TIME_SMOOTHING = 0.2
# A model drafter found not to pay is still asked for one draft every this many steps.
_PROBE_EVERY = 16
# Rows a draft tree may add to a chain's block: while the block costs at most this much more.
_SPARE_ROW_SLACK = 1.03


class PromptError(ValueError):
    """The prompt cannot be decoded from (empty, or longer than the model's context window)."""


class EmptyPromptError(PromptError):
    pass


class PromptTooLongError(PromptError):
    pass


@dataclass(frozen=True)
class DecodeConfig:
    """`draft_length` None = adaptive (cost- and acceptance-driven, at most `max_draft`); an int = fixed k.

    `repetition_stop` ends a generation with finish reason "repetition" once the last
    `repetition_ngram` generated tokens have occurred `repetition_count` times in the output. It is
    off by default so that benchmark comparisons against other decoders see the same token budget.
    """

    max_draft: int = 16
    draft_length: int | None = None
    cost_curve: VerifyCostCurve | None = None
    cost_cache_dir: Path | None = None
    eos_token_ids: tuple[int, ...] | None = None
    repetition_stop: bool = False
    repetition_ngram: int = 8
    repetition_count: int = 3
    # Greedy decoding verifies the drafters' other candidates in the rows a chain leaves spare.
    draft_tree: bool = True
    # Output tokens of earlier requests the decoder keeps for `HistoryDrafter` (0 = keep none).
    history_tokens: int = 16384
    # Keep the target's cache between requests and prefill only what a new prompt does not share
    # with it (the chat template and system prompt every answer opens with).
    prefix_reuse: bool = True
    # Correct the cost curve by the verify times observed while decoding (`ObservedCost`). Off, draft
    # lengths and trees follow the given curve alone: the same choices on any machine and load.
    observe_cost: bool = True

    def __post_init__(self) -> None:
        if self.history_tokens < 0:
            raise ValueError(f"history_tokens must be >= 0, got {self.history_tokens}")
        if self.repetition_stop:
            self.repetition_rule()  # refuse an impossible rule when the config is made, not mid-request

    def repetition_rule(self) -> RepetitionRule | None:
        if not self.repetition_stop:
            return None
        return RepetitionRule(ngram=self.repetition_ngram, count=self.repetition_count)


@dataclass(frozen=True)
class DecodeResult:
    token_ids: list[int]
    text: str
    stats: DecodeStats
    finish_reason: FinishReason


@dataclass(frozen=True)
class LearntState:
    """What a decoder carries from one request to the next."""

    tracker: AcceptanceTracker
    member_ledgers: dict[str, MemberLedger]
    draft_seconds_per_token: dict[str, float]
    skipped_drafts: int
    history: OutputHistory | None
    # The tokens the target's cache held; a restore keeps only the cached prefix it shares with them.
    cached_tokens: tuple[int, ...] = ()
    observed_cost: ObservedCost = field(default_factory=ObservedCost)


@dataclass
class _Run:
    transcript: Transcript
    stats: DecodeStats
    started: float
    result: DecodeResult | None = None
    steps: int = field(default=0)


def _common_length(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading tokens two sequences share."""
    for index, (left, right) in enumerate(zip(first, second, strict=False)):
        if left != right:
            return index
    return min(len(first), len(second))


def _eos_ids(tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel) -> tuple[int, ...]:
    ids: set[int] = set()
    for value in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(item) for item in value)
    return tuple(sorted(ids))


class DecodeStream:
    """Iterates over text increments as they are committed; `.result` once exhausted."""

    def __init__(self, run: _Run, steps: Iterator[None]) -> None:
        self._run = run
        self._steps = steps
        self._emitted = ""

    def __iter__(self) -> Iterator[str]:
        for _ in self._steps:
            stable = self._run.transcript.stable_text()
            if len(stable) > len(self._emitted) and stable.startswith(self._emitted):
                delta, self._emitted = stable[len(self._emitted) :], stable
                yield delta

    @property
    def result(self) -> DecodeResult:
        if self._run.result is None:
            raise RuntimeError("the stream has not been consumed to the end yet")
        return self._run.result


class SpeculativeDecoder:
    """Exact speculative decoding of one target model with one drafter."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        drafter: Drafter | None = None,
        config: DecodeConfig | None = None,
        *,
        tracker: AcceptanceTracker | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.drafter: Drafter = drafter if drafter is not None else NoDrafter()
        self.config = config or DecodeConfig()
        self.target = CachedModel(model)
        # Acceptance statistics outlive one request: they describe this target and kind of drafter.
        self.tracker = tracker if tracker is not None else AcceptanceTracker()
        # What each member of a composite drafter has cost and saved, by member key, across requests.
        self.member_ledgers: dict[str, MemberLedger] = {}
        self._cost = self.config.cost_curve
        if self._cost is not None:
            self.target.use_kernels(self._cost.kernels, self._cost.prefill_kernel)
        # Verify times observed while decoding, which correct the curve for the load of the moment.
        self.observed_cost = ObservedCost()
        # Seconds a drafter spends per proposed token, by source; a model drafter's forwards are a
        # real cost that the choice of k must weigh, a lookup's microseconds are not.
        self.draft_seconds_per_token: dict[str, float] = {}
        self._skipped_drafts = 0
        # The outputs of earlier requests, for a HistoryDrafter (decoding.history).
        self.history = OutputHistory(self.config.history_tokens) if self.config.history_tokens else None
        self.eos_token_ids = (
            self.config.eos_token_ids if self.config.eos_token_ids is not None else _eos_ids(tokenizer, model)
        )
        self.context_window = context_window(model)
        # The prompt of the last prefill that computed features, and those features (a feature
        # drafter needs every prompt position's; a reused prefix takes them from here).
        self._prompt_features: tuple[list[int], torch.Tensor] | None = None

    def learnt_state(self) -> LearntState:
        """A copy of what this decoder has learnt across requests: acceptance rates, the composite's
        member ledgers, drafting costs, earlier outputs. `restore_learnt_state` puts it back (a
        benchmark's repeats)."""
        return copy.deepcopy(
            LearntState(
                self.tracker,
                self.member_ledgers,
                self.draft_seconds_per_token,
                self._skipped_drafts,
                self.history,
                tuple(self.target.tokens),
                self.observed_cost,
            )
        )

    def restore_learnt_state(self, state: LearntState) -> None:
        state = copy.deepcopy(state)
        self.tracker, self.member_ledgers = state.tracker, state.member_ledgers
        self.draft_seconds_per_token, self._skipped_drafts = (
            state.draft_seconds_per_token,
            state.skipped_drafts,
        )
        # A HistoryDrafter built before this call still reads the history it was given.
        self.history = state.history
        self.observed_cost = state.observed_cost
        # Positions cached since then are forgotten, so the next prompt reuses no more than it would have.
        self.target.crop(self.target.common_prefix(list(state.cached_tokens)))

    @property
    def cost_curve(self) -> VerifyCostCurve:
        if self._cost is None:
            self._cost = load_or_measure_verify_cost(
                self.model, self.config.max_draft, self.config.cost_cache_dir
            )
            # The kernels the curve's costs were measured with are the ones verification then uses.
            self.target.use_kernels(self._cost.kernels, self._cost.prefill_kernel)
        return self._cost

    @property
    def choice_curve(self) -> VerifyCostCurve:
        """The cost curve draft lengths are chosen by: the measured one, corrected by the verify times
        observed while decoding (`ObservedCost`)."""
        if not self.config.observe_cost:
            return self.cost_curve
        return self.observed_cost.calibrated(self.cost_curve)

    def generate(
        self,
        prompt_ids: Sequence[int] | torch.Tensor,
        max_new_tokens: int = 128,
        *,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int | None = None,
        stop_strings: Iterable[str] = (),
        drafter: Drafter | None = None,
    ) -> DecodeResult:
        """Decode up to `max_new_tokens`; `drafter` replaces the decoder's drafter for this call only."""
        stream = self.stream(
            prompt_ids,
            max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            seed=seed,
            stop_strings=stop_strings,
            drafter=drafter,
        )
        for _ in stream._steps:
            pass
        return stream.result

    def stream(
        self,
        prompt_ids: Sequence[int] | torch.Tensor,
        max_new_tokens: int = 128,
        *,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int | None = None,
        stop_strings: Iterable[str] = (),
        drafter: Drafter | None = None,
    ) -> DecodeStream:
        """Like `generate`, but iterates over text increments as they are committed."""
        prompt = as_token_list(prompt_ids)
        if not prompt:
            raise EmptyPromptError("the prompt is empty: at least one token is needed to decode from")
        if len(prompt) >= self.context_window:
            raise PromptTooLongError(
                f"the prompt has {len(prompt)} tokens; the model's context window is {self.context_window}"
            )
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        sampling = SamplingParams(temperature=temperature, top_k=top_k, top_p=top_p)
        # Without a seed, draw one from the OS: reseeding torch's global generator would affect the caller.
        generator = torch.Generator().manual_seed(seed if seed is not None else int.from_bytes(os.urandom(7)))
        drafter = drafter if drafter is not None else self.drafter
        adaptive = self.config.draft_length is None
        if adaptive and not isinstance(drafter, NoDrafter):
            _ = self.cost_curve  # measured before the clock starts, once per decoder
        if isinstance(drafter, CompositeDrafter):
            # Choosing among proposals by what this decoder has seen accepted and by what verifying
            # costs here, not by match length alone.
            drafter.tracker = self.tracker
            drafter.cost_curve = self.choice_curve if adaptive else None
            drafter.share_ledgers(self.member_ledgers)
        run = _Run(
            transcript=Transcript(
                self.tokenizer,
                max_new_tokens=max_new_tokens,
                eos_token_ids=self.eos_token_ids,
                stop_strings=stop_strings,
                repetition=self.config.repetition_rule(),
            ),
            stats=DecodeStats(prompt_tokens=len(prompt)),
            started=time.perf_counter(),
        )
        return DecodeStream(run, self._decode(run, drafter, prompt, sampling, generator))

    def _decode(
        self,
        run: _Run,
        drafter: Drafter,
        prompt: list[int],
        sampling: SamplingParams,
        generator: torch.Generator,
    ) -> Iterator[None]:
        transcript, stats = run.transcript, run.stats
        drafter.reset()
        if transcript.max_new_tokens > 0:
            logits = self._prefill(prompt, drafter, stats)
            stats.target_calls += 1
            first = choose_token(logits, sampling, generator)
            stats.prefill_s = stats.ttft_s = time.perf_counter() - run.started
            self._commit(run, [first])
            yield None
            while not transcript.finished:
                self._step(run, drafter, prompt, sampling, generator)
                yield None
        else:
            transcript.finish(FinishReason.LENGTH)
        stats.new_tokens = len(transcript.tokens)
        stats.wall_s = time.perf_counter() - run.started
        if self.history is not None:
            self.history.add(prompt, transcript.tokens)
        stats.peak_rss_bytes = peak_rss_bytes()
        run.result = DecodeResult(
            token_ids=list(transcript.tokens),
            text=transcript.text,
            stats=stats,
            finish_reason=transcript.finish_reason or FinishReason.LENGTH,
        )

    def _prefill(self, prompt: list[int], drafter: Drafter, stats: DecodeStats) -> torch.Tensor:
        """Bring the target's cache to `prompt`; the logits after its last token.

        With `prefix_reuse` the positions the cache shares with the prompt are kept (the last prompt
        token is always run, for its logits); a feature drafter can reuse only positions whose
        features are kept from an earlier prefill.
        """
        features_wanted = wants_features(drafter)
        keep = 0
        if self.config.prefix_reuse:
            keep = min(self.target.common_prefix(prompt), len(prompt) - 1)
            if features_wanted:
                known = self._prompt_features
                keep = min(keep, _common_length(known[0], prompt) if known is not None else 0)
        self.target.crop(keep)
        stats.cached_prompt_tokens = keep
        if not features_wanted:
            return self.target.forward(prompt[keep:], logits_to_keep=1)[-1].cpu()
        # A feature drafter (a trained draft head) reads the target's own hidden states.
        logits, computed = self.target.forward_features(prompt[keep:], logits_to_keep=1)
        if keep:
            assert self._prompt_features is not None
            computed = torch.cat([self._prompt_features[1][:keep], computed])
        self._prompt_features = (list(prompt), computed)
        feed_features(drafter, 0, computed)
        return logits[-1].cpu()

    def _commit(self, run: _Run, tokens: list[int]) -> int:
        kept = run.transcript.commit(tokens)
        now = time.perf_counter() - run.started
        run.stats.token_times_s.extend([now] * kept)
        return kept

    def _draft(
        self,
        drafter: Drafter,
        context: list[int],
        budget: int,
        sampling: SamplingParams,
        generator: torch.Generator,
    ) -> DraftProposal:
        """Ask the drafter, then keep only as many drafts as pay for their verification."""
        fixed = self.config.draft_length
        limit = min(budget, fixed if fixed is not None else self.config.max_draft)
        if limit <= 0:
            return DraftProposal(tokens=[])
        if fixed is None and pays_per_token(drafter):
            # A model drafter pays per token before anything is verified: ask only for what pays.
            acceptance = self.tracker.estimates(drafter.name, 0, limit)
            per_token = self.draft_seconds_per_token.get(drafter.name, 0.0)
            limit = best_draft_length(acceptance, self.choice_curve, per_token)
            self._skipped_drafts = self._skipped_drafts + 1 if limit <= 0 else 0
            if limit <= 0 and self._skipped_drafts % _PROBE_EVERY == 0:
                # A probe: one draft now and then, so estimates spoilt by other text can recover.
                return drafter.propose(context, 1, sampling, generator).truncated(1)
            if limit <= 0:
                return DraftProposal(tokens=[])
        started = time.perf_counter()
        proposal = drafter.propose(context, limit, sampling, generator)
        if isinstance(drafter, CompositeDrafter):
            # It times its members and cuts its proposal to the length that pays by itself.
            return proposal.truncated(limit)
        if proposal.tokens:
            self._record_draft_time(proposal.source, time.perf_counter() - started, len(proposal.tokens))
        proposal = proposal.truncated(limit)
        if fixed is None and proposal.tokens:
            acceptance = self.tracker.estimates(proposal.source, proposal.match_length, len(proposal.tokens))
            # The drafting time is spent by now: only the verify cost decides how much to keep.
            proposal = proposal.truncated(best_draft_length(acceptance, self.choice_curve))
        return proposal

    def _record_draft_time(self, source: str, seconds: float, tokens: int) -> None:
        per_token = seconds / tokens
        previous = self.draft_seconds_per_token.get(source)
        # A moving average: one slow call (a page fault, a busy moment) should not switch drafting off.
        self.draft_seconds_per_token[source] = (
            per_token if previous is None else previous + _DRAFT_TIME_SMOOTHING * (per_token - previous)
        )

    def _step(
        self,
        run: _Run,
        drafter: Drafter,
        prompt: list[int],
        sampling: SamplingParams,
        generator: torch.Generator,
    ) -> None:
        transcript, stats = run.transcript, run.stats
        context = prompt + transcript.tokens
        pending = context[-1]
        cached = len(context) - 1
        remaining_tokens = transcript.max_new_tokens - len(transcript.tokens)
        room = self.context_window - len(context)
        if room <= 0:
            transcript.finish(FinishReason.CONTEXT_WINDOW)
            return
        # A step commits up to k+1 tokens; drafting past the budget or the window is wasted work.
        budget = min(remaining_tokens, room) - 1

        observing = self._cost is not None and self.config.draft_length is None
        if observing and isinstance(drafter, CompositeDrafter):
            drafter.cost_curve = self.choice_curve
        started = time.perf_counter()
        proposal = self._draft(drafter, context, budget, sampling, generator)
        drafted = time.perf_counter()
        stats.draft_s += drafted - started

        k = len(proposal.tokens)
        tree = self._tree(proposal, sampling)
        if tree is not None:
            committed, accepted = self._verify_tree(run, drafter, tree, pending, cached)
            if observing:
                self.observed_cost.record(tree.size, time.perf_counter() - drafted, self.cost_curve)
            # The main chain's own fate, for its drafter's statistics.
            main_accepted = matched_prefix(proposal.tokens, committed)[1]
            stats.record_step(tree.depth, accepted, proposal.source)
        else:
            features = None
            if wants_features(drafter):
                logits, features = self.target.forward_features([pending, *proposal.tokens])
            else:
                logits = self.target.forward([pending, *proposal.tokens])
            logits = logits.cpu()
            stats.target_calls += 1
            acceptance = self._verify(proposal, logits, sampling, generator)
            self.target.crop(cached + 1 + acceptance.accepted)
            if features is not None:
                # Features of the pending token and the accepted drafts: all committed positions now.
                feed_features(drafter, cached, features[: acceptance.accepted + 1])
            verified = time.perf_counter() - drafted
            stats.verify_s += verified
            if observing:
                self.observed_cost.record(k, verified, self.cost_curve)
            committed, main_accepted = acceptance.committed(proposal.tokens), acceptance.accepted
            stats.record_step(k, main_accepted, proposal.source)
        if k and not isinstance(drafter, CompositeDrafter):
            # A composite scores all of its members' proposals against the committed tokens itself.
            self.tracker.record(proposal.source, proposal.match_length, k, main_accepted)
        drafter.observe(main_accepted, k)
        self._commit(run, committed)

    def _tree(self, proposal: DraftProposal, sampling: SamplingParams) -> DraftTree | None:
        """A draft tree of the proposal and its branches, if the target verifies trees and the rows its
        chain's block leaves spare (by the measured cost curve) can hold some; else None (a chain)."""
        if (
            not proposal.branches
            or not proposal.tokens
            or not sampling.greedy
            or not self.config.draft_tree
            or self.config.draft_length is not None
            or not self.target.supports_tree
        ):
            return None
        cost = self.choice_curve
        main = min(len(proposal.tokens), cost.max_draft)
        nodes = main
        while nodes < cost.max_draft and cost.seconds[nodes + 1] <= cost.seconds[main] * _SPARE_ROW_SLACK:
            nodes += 1
        if nodes == main:
            return None
        tree = DraftTree.from_chains([proposal.tokens, *proposal.branches], max_nodes=nodes)
        return None if tree.is_chain else tree

    def _verify_tree(
        self, run: _Run, drafter: Drafter, tree: DraftTree, pending: int, cached: int
    ) -> tuple[list[int], int]:
        """One target forward over the tree's rows, greedy acceptance down the tree, and the cache
        compacted to the accepted path. Returns the tokens to commit and how many drafts they include."""
        stats = run.stats
        started = time.perf_counter()
        logits, features = self.target.forward_tree(
            [pending, *tree.tokens], tree.row_parents(), features=wants_features(drafter)
        )
        stats.target_calls += 1
        path, next_token = tree.accept_greedy(logits.cpu())
        kept = tree.path_rows(path)
        self.target.keep(cached, kept)
        if features is not None:
            feed_features(drafter, cached, features[kept])
        stats.verify_s += time.perf_counter() - started
        stats.tree_steps += 1
        stats.tree_nodes += tree.size
        if any(node >= tree.main for node in path):
            stats.branch_accepts += 1
        return [*tree.path_tokens(path), next_token], len(path)

    @staticmethod
    def _verify(
        proposal: DraftProposal, logits: torch.Tensor, sampling: SamplingParams, generator: torch.Generator
    ) -> Acceptance:
        if sampling.greedy and not proposal.tokens:
            # A plain step: the argmax alone, without the tensor work of comparing drafts.
            return Acceptance(accepted=0, next_token=int(torch.argmax(logits[0]).item()))
        drafts = torch.tensor(proposal.tokens, dtype=torch.long)
        if sampling.greedy:
            return accept_greedy(drafts, logits)
        draft_probs = None if proposal.probs is None else proposal.probs.cpu()
        return accept_speculative(drafts, draft_probs, sampling_probs(logits, sampling), generator)


def plain_generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompt_ids: Sequence[int] | torch.Tensor,
    max_new_tokens: int = 128,
    *,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int | None = None,
    stop_strings: Iterable[str] = (),
) -> DecodeResult:
    """The baseline: one target forward per token, with a KV cache; same stats as speculative runs."""
    return SpeculativeDecoder(model, tokenizer, NoDrafter()).generate(
        prompt_ids,
        max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        stop_strings=stop_strings,
    )
