"""Lookup drafters against brute force, and the composite's choice."""

from __future__ import annotations

import time

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.draft_length import AcceptanceTracker, VerifyCostCurve
from decoding.drafters import CompositeDrafter, EvidenceDrafter, PromptLookupDrafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder
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
        ([4, 4, 4], [4], 2),
    ],
    ids=["trigram", "bigram_fallback", "no_match", "overlapping"],
)
def test_prompt_lookup(context: list[int], expected_tokens: list[int], expected_n: int) -> None:
    proposal = PromptLookupDrafter(min_ngram=2, max_ngram=3).propose(context, 3)
    assert (proposal.tokens, proposal.match_length) == (expected_tokens, expected_n)


def test_prompt_lookup_prefers_the_most_recent_occurrence() -> None:
    assert PromptLookupDrafter(min_ngram=1, max_ngram=1).propose([1, 5, 1, 6, 1], 1).tokens == [6]


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
