"""Lookup drafters against brute force, and the composite's choice."""

from __future__ import annotations

import time

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.draft_length import AcceptanceTracker, VerifyCostCurve
from decoding.drafters import (
    CompositeDrafter,
    ContextDrafter,
    DraftProposal,
    EvidenceDrafter,
    PromptLookupDrafter,
    SuccessorDrafter,
    matched_prefix,
    unique_keys,
)
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate
from decoding.suffix_automaton import SuffixAutomaton

tokens = st.lists(st.integers(min_value=0, max_value=3), max_size=30)


def occurs_in(needle: list[int], passages: list[list[int]]) -> bool:
    size = len(needle)
    return any(
        passage[i : i + size] == needle for passage in passages for i in range(len(passage) - size + 1)
    )


def longest_suffix_in(context: list[int], passages: list[list[int]]) -> int:
    for length in range(len(context), 0, -1):
        if occurs_in(context[-length:], passages):
            return length
    return 0


@settings(max_examples=300, deadline=None)
@given(passages=st.lists(tokens, min_size=1, max_size=4), context=tokens)
def test_suffix_automaton_matches_brute_force(passages: list[list[int]], context: list[int]) -> None:
    automaton = SuffixAutomaton(passages)
    match = automaton.match(context)
    assert match.length == longest_suffix_in(context, passages)
    continuation, length = automaton.continuation(match, 5)
    if continuation:
        # The proposal continues a real occurrence of the context's last `length` tokens.
        suffix = context[len(context) - length :]
        assert 0 < length <= match.length
        assert occurs_in(suffix + continuation, passages)


@settings(max_examples=100, deadline=None)
@given(passages=st.lists(tokens, min_size=1, max_size=3), context=tokens, extra=tokens)
def test_incremental_matching_equals_matching_from_scratch(
    passages: list[list[int]], context: list[int], extra: list[int]
) -> None:
    drafter = EvidenceDrafter(passages)
    fresh = EvidenceDrafter(passages)
    drafter.propose(context, 4)
    assert drafter.propose(context + extra, 4) == fresh.propose(context + extra, 4)


def test_evidence_drafter_proposes_the_passage_continuation() -> None:
    drafter = EvidenceDrafter([[5, 6, 7, 8, 9], [1, 2, 3, 6, 7, 4]])
    proposal = drafter.propose([0, 0, 2, 3, 6, 7], 3)
    assert (proposal.tokens, proposal.match_length, proposal.source) == ([4], 4, "evidence")
    assert drafter.propose([9, 6, 7], 2).tokens == [8, 9]
    assert drafter.propose([9, 9, 9], 2).tokens == []


def test_evidence_matches_never_span_two_passages() -> None:
    drafter = EvidenceDrafter([[1, 2], [3, 4]])
    proposal = drafter.propose([1, 2, 3], 2)
    assert (proposal.tokens, proposal.match_length) == ([4], 1)


def test_suffix_automaton_builds_fast() -> None:
    generator = torch.Generator().manual_seed(0)
    passages = [torch.randint(0, 49152, (500,), generator=generator).tolist() for _ in range(8)]
    started = time.perf_counter()
    automaton = SuffixAutomaton(passages)
    assert time.perf_counter() - started < 0.5
    assert automaton.match(passages[3][100:140]).length == 40


@pytest.mark.parametrize(
    ("context", "expected_tokens", "expected_n"),
    [
        ([1, 2, 3, 9, 1, 2, 3], [9, 1, 2], 3),
        ([1, 2, 3, 4, 7, 2, 3], [4, 7, 2], 2),
        ([5, 6, 7, 8], [], 0),
        ([4, 4, 4], [4, 4, 4], 2),
    ],
    ids=["trigram", "bigram_fallback", "no_match", "overlapping"],
)
def test_prompt_lookup(context: list[int], expected_tokens: list[int], expected_n: int) -> None:
    proposal = PromptLookupDrafter(min_ngram=2, max_ngram=3).propose(context, 3)
    assert (proposal.tokens, proposal.match_length) == (expected_tokens, expected_n)


def test_prompt_lookup_continues_a_loop_past_the_end_of_the_context() -> None:
    # "a b c" repeating: the last "b c a b" occurred 3 tokens back, so only "c" follows it in the
    # context; the copy goes on through what it copied, one period after another.
    context = [9, 1, 2, 3, 1, 2, 3, 1, 2]
    proposal = PromptLookupDrafter(min_ngram=2, max_ngram=4).propose(context, 7)
    assert (proposal.tokens, proposal.match_length) == ([3, 1, 2, 3, 1, 2, 3], 4)
    # A match far from the end is copied as it stands, up to k tokens.
    assert PromptLookupDrafter(min_ngram=2, max_ngram=2).propose([5, 6, 7, 8, 9, 5, 6], 3).tokens == [7, 8, 9]


def test_prompt_lookup_prefers_the_most_recent_occurrence() -> None:
    assert PromptLookupDrafter(min_ngram=1, max_ngram=1).propose([1, 5, 1, 6, 1], 1).tokens == [6]


def test_prompt_lookup_matches_a_rare_last_token_alone() -> None:
    # No bigram recurs ("9 7" is new), but 7 occurred once before: what followed it is proposed.
    context = [1, 7, 2, 3, 4, 9, 7]
    proposal = PromptLookupDrafter().propose(context, 3)
    assert (proposal.tokens, proposal.match_length, proposal.branches) == ([2, 3, 4], 1, ())
    # Twice before, the most recent occurrence leads and the other continuation is a branch.
    proposal = PromptLookupDrafter().propose([7, 5, 6, 1, 7, 2, 3, 9, 7], 2)
    assert (proposal.tokens, proposal.match_length, proposal.branches) == ([2, 3], 1, ((5, 6),))
    # A longer match wins over a single-token one.
    assert PromptLookupDrafter().propose([7, 8, 1, 7, 2, 7, 8], 1).match_length == 2


@pytest.mark.parametrize(
    ("context", "drafter"),
    [
        ([7, 1, 7, 2, 7, 3, 9, 7], PromptLookupDrafter()),  # 7 occurred 3 times: a common token
        ([1, 7, 2, 3, 4, 9, 7], PromptLookupDrafter(rare_token_matches=0)),  # switched off
        ([5, 6, 7, 8], PromptLookupDrafter()),  # never occurred before
    ],
    ids=["common", "off", "unseen"],
)
def test_prompt_lookup_leaves_common_or_unseen_tokens_alone(
    context: list[int], drafter: PromptLookupDrafter
) -> None:
    assert drafter.propose(context, 3).tokens == []


def test_prompt_lookup_refuses_a_negative_rare_token_limit() -> None:
    with pytest.raises(ValueError, match="rare_token_matches"):
        PromptLookupDrafter(rare_token_matches=-1)


def test_successor_guesses_the_most_frequent_follower_of_the_last_token() -> None:
    # 5 was followed by 7 twice and by 8 once.
    assert SuccessorDrafter().draft([5, 7, 5, 8, 5, 7, 5], 4).tokens == [7]
    # Once each: the most recent wins.
    assert SuccessorDrafter().draft([5, 7, 5, 8, 5], 4).tokens == [8]
    # 9 never occurred before: the context's most frequent token.
    assert SuccessorDrafter().draft([1, 2, 2, 3, 9], 4).tokens == [2]
    assert SuccessorDrafter().draft([], 4).tokens == []
    assert SuccessorDrafter().draft([1, 1], 0).tokens == []


@settings(max_examples=200, deadline=None)
@given(
    context=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=5),
    other=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=20),
)
def test_successor_counts_kept_while_the_context_grows_equal_counts_from_scratch(
    context: list[int], cuts: list[int], other: list[int]
) -> None:
    drafter = SuccessorDrafter()
    for cut in [*sorted(cuts), len(context)]:
        prefix = context[:cut]
        assert drafter.draft(prefix, 1) == SuccessorDrafter().draft(prefix, 1)
    # A context that does not extend the last one is counted afresh.
    assert drafter.draft(other, 1) == SuccessorDrafter().draft(other, 1)


@pytest.mark.parametrize(("one_draft", "verified"), [(0.8, True), (2.5, False)], ids=["cheaper", "dearer"])
def test_a_successor_guess_is_verified_only_where_one_draft_costs_less_than_a_plain_step(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, one_draft: float, verified: bool
) -> None:
    curve = VerifyCostCurve((1.0, one_draft, *(one_draft + 0.1 * k for k in range(1, 8))))
    prompt = [0, 2, 3, 4, 2, 3, 4]
    plain = plain_generate(target, tokenizer, prompt, 40)
    decoder = SpeculativeDecoder(
        target, tokenizer, CompositeDrafter([SuccessorDrafter()]), DecodeConfig(cost_curve=curve)
    )
    result = decoder.generate(prompt, 40)
    assert result.token_ids == plain.token_ids
    guesses = result.stats.proposals_by_source.get("successor", 0)
    if verified:
        # Every step but the prefill verifies a guess, right or wrong: a wrong one still costs less.
        assert guesses >= result.stats.target_calls - 2 > 0
    else:
        assert guesses == 0
        assert result.stats.target_calls == len(plain.token_ids)


def test_composite_trusts_longer_matches_before_any_evidence() -> None:
    evidence = EvidenceDrafter([[7, 8, 9, 10, 11]])
    lookup = PromptLookupDrafter(min_ngram=1, max_ngram=4)
    composite = CompositeDrafter([lookup, evidence])
    # Lookup matches "9" once (n=1, proposes 3); the evidence matches "7 8 9" (n=3, proposes 10 11).
    proposal = composite.propose([9, 3, 7, 8, 9], 2)
    assert (proposal.tokens, proposal.source, proposal.match_length) == ([10, 11], "evidence", 3)
    # Nothing in the evidence: the lookup proposal wins.
    assert composite.propose([5, 6, 5], 2).tokens == [6, 5]


def test_composite_prefers_the_drafter_that_gets_accepted() -> None:
    evidence = EvidenceDrafter([[7, 8, 9, 10, 11]])
    lookup = PromptLookupDrafter(min_ngram=1, max_ngram=4)
    tracker = AcceptanceTracker()
    composite = CompositeDrafter([lookup, evidence], tracker)
    context = [9, 3, 7, 8, 9]
    assert composite.propose(context, 2).source == "evidence"
    # The evidence's 3-token matches keep being rejected at once; the lookup's 1-token ones accepted.
    for _ in range(6):
        tracker.record("evidence", 3, proposed=2, accepted=0)
        tracker.record("prompt_lookup", 1, proposed=2, accepted=2)
    proposal = composite.propose(context, 2)
    assert (proposal.tokens, proposal.source, proposal.match_length) == ([3, 7], "prompt_lookup", 1)


def test_decoder_hands_its_tracker_to_a_composite(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    composite = CompositeDrafter([PromptLookupDrafter()])
    decoder = SpeculativeDecoder(
        target, tokenizer, composite, DecodeConfig(cost_curve=VerifyCostCurve.flat(16))
    )
    decoder.generate([0, 2, 3, 4, 2, 3, 4], 4)
    assert composite.tracker is decoder.tracker


class FixedDrafter(ContextDrafter):
    """Proposes from a reference continuation: `length` tokens, all wrong when `wrong`; optionally slow."""

    def __init__(
        self, name: str, reference: list[int], *, length: int, match_length: int, wrong: bool = False
    ) -> None:
        self.name = name
        self.reference = reference
        self.length = length
        self.match_length = match_length
        self.wrong = wrong
        self.delay_s = 0.0
        self.calls = 0

    def draft(self, context: list[int], k: int) -> DraftProposal:
        self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        tokens = self.reference[len(context) : len(context) + min(k, self.length)]
        if self.wrong:
            tokens = [(token + 1) % VOCAB for token in tokens]
        if not tokens:
            return DraftProposal(tokens=[])
        return DraftProposal(tokens=tokens, source=self.name, match_length=self.match_length)


VOCAB = 16
# A CPU-like curve: verifying k drafts costs more with every k, as measured for SmolLM2 on two threads.
CPU_CURVE = VerifyCostCurve(
    (1.0, 1.27, 1.3, 1.33, 1.4, 1.45, 1.5, 1.55, 1.64, 1.7, 1.75, 1.8, 1.85, 1.9, 2.0, 2.05, 2.1)
)


@pytest.mark.parametrize("curve", [VerifyCostCurve.flat(16), CPU_CURVE], ids=["flat", "cpu"])
def test_composite_converges_to_the_drafter_that_is_right(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, curve: VerifyCostCurve
) -> None:
    prompt = [0, 2, 3, 4, 2, 3, 4]
    plain = plain_generate(target, tokenizer, prompt, 60)
    reference = prompt + plain.token_ids
    # Long matches with a high prior, always wrong; short matches with a low prior, always right.
    # The given curve alone: verify times observed on a loaded machine would move the draft lengths.
    decoder = SpeculativeDecoder(target, tokenizer, config=DecodeConfig(cost_curve=curve, observe_cost=False))

    def composite() -> CompositeDrafter:
        long_wrong = FixedDrafter("long_wrong", reference, length=16, match_length=24, wrong=True)
        short_right = FixedDrafter("short_right", reference, length=2, match_length=1)
        return CompositeDrafter([long_wrong, short_right])

    first = decoder.generate(prompt, 60, drafter=composite())
    assert first.token_ids == plain.token_ids
    chosen = first.stats.proposals_by_source
    assert chosen.get("long_wrong", 0) <= 4, chosen
    # Converged: the next request (a new composite, the decoder's statistics) never verifies the wrong one,
    # and every step verifies the right drafter's two tokens and commits three.
    second = decoder.generate(prompt, 60, drafter=composite())
    assert second.token_ids == plain.token_ids
    assert second.stats.proposals_by_source == {"short_right": second.stats.draft_steps}
    assert second.stats.rejected == 0
    assert second.stats.target_calls <= 1 + -(-(len(plain.token_ids) - 1) // 3) + 1


def test_composite_is_never_worse_than_its_best_member(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    prompt = [0, 2, 3, 4, 2, 3, 4]
    plain = plain_generate(target, tokenizer, prompt, 60)
    reference = prompt + plain.token_ids
    config = DecodeConfig(cost_curve=CPU_CURVE)

    def right() -> FixedDrafter:
        return FixedDrafter("right", reference, length=6, match_length=2)

    alone = SpeculativeDecoder(target, tokenizer, right(), config).generate(prompt, 60)
    wrong = FixedDrafter("wrong", reference, length=12, match_length=32, wrong=True)
    mixed = SpeculativeDecoder(target, tokenizer, CompositeDrafter([wrong, right()]), config).generate(
        prompt, 60
    )
    assert mixed.token_ids == alone.token_ids == plain.token_ids
    assert mixed.stats.target_calls <= alone.stats.target_calls + 2


SLOW_PROMPT = [0, 2, 3, 4, 2, 3, 4]
# Verify steps of 10 ms: the slow member's 5 ms is half of one.
FAST_CURVE = VerifyCostCurve(tuple(0.01 * CPU_CURVE.ratio(k) for k in range(9)))


def right_and_slow(reference: list[int]) -> tuple[FixedDrafter, FixedDrafter]:
    """A cheap member, and a slow one that proposes the same tokens: never better, half a verify step slower."""
    right = FixedDrafter("right", reference, length=4, match_length=4)
    slow = FixedDrafter("slow", reference, length=4, match_length=4)
    slow.delay_s = 0.005
    return right, slow


def test_composite_benches_a_costly_member_that_never_wins(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    plain = plain_generate(target, tokenizer, SLOW_PROMPT, 160)
    right, slow = right_and_slow(SLOW_PROMPT + plain.token_ids)
    decoder = SpeculativeDecoder(
        target, tokenizer, CompositeDrafter([right, slow]), DecodeConfig(cost_curve=FAST_CURVE)
    )
    result = decoder.generate(SLOW_PROMPT, 160)
    assert result.token_ids == plain.token_ids
    steps = result.stats.target_calls - 1
    assert right.calls == steps
    # Run through its probation, then only on probe steps.
    probation, probe_every = 8, 16
    assert slow.calls <= probation + steps // probe_every + 1 < steps // 2, (slow.calls, steps)


def test_a_benched_member_stays_benched_on_the_next_request(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    plain = plain_generate(target, tokenizer, SLOW_PROMPT, 160)
    decoder = SpeculativeDecoder(target, tokenizer, config=DecodeConfig(cost_curve=FAST_CURVE))

    def run() -> tuple[FixedDrafter, int]:
        right, slow = right_and_slow(SLOW_PROMPT + plain.token_ids)
        result = decoder.generate(SLOW_PROMPT, 160, drafter=CompositeDrafter([right, slow]))
        assert result.token_ids == plain.token_ids
        return slow, result.stats.target_calls - 1

    first, _ = run()
    second, steps = run()
    # The decoder kept the ledgers: no second probation, only the probe steps.
    assert decoder.member_ledgers["slow"].steps == first.calls + second.calls
    assert second.calls <= steps // 16 + 1 < first.calls, (first.calls, second.calls)


@pytest.mark.parametrize(("wrong", "counted"), [(True, [[1, 0]]), (False, [[1, 1]])], ids=["wrong", "right"])
def test_composite_scores_members_it_did_not_choose_on_their_first_token(
    wrong: bool, counted: list[list[int]]
) -> None:
    tracker = AcceptanceTracker()
    reference = list(range(12))
    chosen = FixedDrafter("chosen", reference, length=3, match_length=8)
    other = FixedDrafter("other", reference, length=3, match_length=1, wrong=wrong)
    composite = CompositeDrafter([chosen, other], tracker)
    assert composite.propose(reference[:2], 3).source == "chosen"
    # The step committed four tokens: the chosen member is scored on all three positions. The other
    # is scored on its first token only, right or wrong: past it, its positions are decided only
    # where the chosen proposal agreed with it, where it is likelier right, so counting them would
    # overstate it.
    composite.propose(reference[:6], 3)
    assert tracker.counts[("chosen", -1, False)] == [[1, 1], [1, 1], [1, 1]]
    assert tracker.counts[("other", -1, False)] == counted


def test_a_guess_no_other_member_backs_is_scored_apart() -> None:
    # A guess that is right whenever the lookup copies, and wrong whenever it alone proposes: it is
    # not verified on the steps it stands alone, however often it is right beside the lookup.
    tracker = AcceptanceTracker()
    reference = list(range(100))
    lookup = FixedDrafter("lookup", reference, length=3, match_length=4)
    guess = FixedDrafter("guess", reference, length=1, match_length=0)
    composite = CompositeDrafter([lookup, guess], tracker, CPU_CURVE)
    context = reference[:2]
    for _ in range(12):  # both propose the same next tokens; the step commits four
        composite.propose(context, 3)
        context = reference[: len(context) + 4]
    composite.propose(context, 3)
    assert tracker.estimates("guess", 0, 1)[0] > 0.8
    lookup.length, guess.wrong = 0, True
    for _ in range(12):  # the lookup has nothing, the guess is alone and wrong; a plain step commits one
        composite.propose(context, 3)
        context = reference[: len(context) + 1]
    assert tracker.estimates("guess", 0, 1, alone=True)[0] < 0.2
    assert tracker.estimates("guess", 0, 1)[0] > 0.8
    assert composite.propose(context, 3).tokens == []


def test_matched_prefix_leaves_undecided_positions_out() -> None:
    assert matched_prefix([1, 2, 3], [1, 2]) == (2, 2)
    assert matched_prefix([1, 2, 3], [1, 5, 3, 4]) == (3, 1)
    assert matched_prefix([], [1]) == (0, 0)


def test_composite_members_with_one_name_are_told_apart() -> None:
    assert unique_keys([PromptLookupDrafter(), PromptLookupDrafter(min_ngram=1), EvidenceDrafter([[1]])]) == [
        "prompt_lookup#0",
        "prompt_lookup#1",
        "evidence",
    ]


class CostlyDrafter(FixedDrafter):
    """A right one-token drafter that pays per token, as a draft model does."""

    pays_per_token = True


class EveryOtherStep(FixedDrafter):
    """A lookup that has a match only when the context's length is even; `silent` records each step."""

    def __init__(self, name: str, reference: list[int], *, length: int, match_length: int) -> None:
        super().__init__(name, reference, length=length, match_length=match_length)
        self.silent: list[bool] = []

    def draft(self, context: list[int], k: int) -> DraftProposal:
        self.silent.append(len(context) % 2 == 1)
        if self.silent[-1]:
            self.calls += 1
            return DraftProposal(tokens=[])
        return super().draft(context, k)


def test_a_model_member_is_not_run_when_a_lookup_already_offers_more(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    plain = plain_generate(target, tokenizer, SLOW_PROMPT, 120)
    reference = SLOW_PROMPT + plain.token_ids
    lookup = EveryOtherStep("lookup", reference, length=4, match_length=4)
    model = CostlyDrafter("model", reference, length=1, match_length=0)
    composite = CompositeDrafter([model, lookup])
    decoder = SpeculativeDecoder(target, tokenizer, composite, DecodeConfig(cost_curve=CPU_CURVE))
    result = decoder.generate(SLOW_PROMPT, 120)
    assert result.token_ids == plain.token_ids
    silent, steps = lookup.silent, len(lookup.silent)
    assert 0 < sum(silent) < steps
    # Run where the lookup had nothing (and on probe steps), never where its 4 sure tokens beat one.
    outbid = composite.ledgers[0].outbid
    assert outbid > 0 and model.calls + outbid <= steps
    assert sum(silent) <= model.calls <= sum(silent) + steps // 16 + 1, (model.calls, sum(silent), steps)
