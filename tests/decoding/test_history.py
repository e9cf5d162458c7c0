"""Earlier outputs as drafts (decoding.history): the index, its bound, the drafter, and the decoder
that keeps them. Exactness with the history drafter is in test_greedy_equality."""

from __future__ import annotations

import pytest
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.draft_length import VerifyCostCurve
from decoding.drafters import CompositeDrafter, PromptLookupDrafter
from decoding.history import HistoryDrafter, OutputHistory
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate


def test_the_longest_most_recent_match_is_continued_and_others_become_branches() -> None:
    history = OutputHistory(100, lead=2)
    history.add([0, 9], [2, 3, 4, 5, 1])
    history.add([0, 9], [7, 3, 4, 8, 1])
    history.add([0, 9], [6, 3, 4, 10, 11, 1])
    drafter = HistoryDrafter(history)
    # "3 4" occurs three times; the most recent occurrence leads, the others go on differently.
    proposal = drafter.propose([12, 3, 4], 3)
    assert proposal.tokens == [10, 11, 1]
    assert proposal.match_length == 2
    assert proposal.branches == ((8, 1), (5, 1))
    # A longer match wins over a more recent one: "2 3 4" only in the first output.
    longer = drafter.propose([2, 3, 4], 4)
    assert longer.tokens == [5, 1] and longer.match_length == 3
    # A proposal never runs past the end of its output into the next one.
    assert drafter.propose([10, 11], 8).tokens == [1]


def test_the_next_token_that_followed_most_often_leads() -> None:
    history = OutputHistory(100, lead=0)
    history.add([], [3, 4, 5, 6])
    history.add([], [2, 3, 4, 5, 7])
    history.add([], [9, 3, 4, 8])
    # "3 4" went on with 5 twice and with 8 once (most recently): 5 leads, in its latest output.
    proposal = HistoryDrafter(history).propose([12, 3, 4], 3)
    assert proposal.tokens == [5, 7]
    assert proposal.branches == ((8,),)


def test_among_equal_matches_one_whose_output_goes_on_is_continued() -> None:
    history = OutputHistory(64, lead=0)
    history.add([], [5, 1, 2, 3, 4, 5, 6, 7, 8])
    # Newer, as long a match and the same next token, but its output ends after one more token.
    history.add([], [6, 1, 2, 3, 4])
    assert history.remaining(history.starts[1] + 4) == 1
    proposal = HistoryDrafter(history).draft([7, 1, 2, 3], 4)
    assert list(proposal.tokens) == [4, 5, 6, 7]
    # With a draft of one token both go on far enough, and the most recent is kept as before.
    assert list(HistoryDrafter(history).draft([7, 1, 2, 3], 1).tokens) == [4]


def test_the_prompt_tail_leads_into_an_output_but_is_never_proposed() -> None:
    history = OutputHistory(100, lead=3)
    history.add([5, 6, 7, 8, 9], [2, 3, 4])
    drafter = HistoryDrafter(history)
    # A new prompt that ends like the last one: the earlier output's opening is proposed.
    opening = drafter.propose([13, 7, 8, 9], 5)
    assert opening.tokens == [2, 3, 4]
    # Credited as a one-token match: the lead (the chat template) opens every answer alike.
    assert opening.match_length == 1
    # The lead's own tokens are context only: "6" was never an output token to continue after 5.
    assert drafter.propose([5], 2).tokens == []
    assert HistoryDrafter(OutputHistory()).propose([1, 2], 4).tokens == []
    assert drafter.propose([8, 9], 0).tokens == []


def test_matches_extend_back_past_the_index_and_stop_at_the_previous_output() -> None:
    history = OutputHistory(100, lead=0, index_ngram=2)
    history.add([], [2, 3, 4, 5, 6, 7])
    history.add([], [9, 4, 5, 8])
    drafter = HistoryDrafter(history, max_match=16)
    # "4 5" is in both; the context matches "2 3 4 5" in the first: a 4-token match beats recency.
    assert drafter.propose([2, 3, 4, 5], 2).tokens == [6, 7]
    assert drafter.propose([2, 3, 4, 5], 2).match_length == 4
    # Matching back from the second output's "4 5" stops at its start: "7 | 9 4 5" is not text.
    assert drafter.propose([7, 9, 4, 5], 2).match_length == 3
    with pytest.raises(ValueError):
        HistoryDrafter(history, min_match=0)


def test_the_bound_drops_the_oldest_outputs_and_the_index_matches_a_rebuild() -> None:
    history = OutputHistory(20, lead=2)
    outputs = [[2 + (number + offset) % 13 for offset in range(6)] for number in range(12)]
    for number, output in enumerate(outputs):
        history.add([0, number % 5], output)
        assert len(history) <= 20
    kept = history.outputs
    assert 0 < kept < len(outputs)
    rebuilt = OutputHistory(20, lead=2)
    for number, output in list(enumerate(outputs))[len(outputs) - kept :]:
        rebuilt.add([0, number % 5], output)
    assert history.text == rebuilt.text
    assert history.index == rebuilt.index
    # An output longer than the whole bound keeps its tail.
    history.add([0], list(range(2, 40)))
    assert len(history) == 20 and history.outputs == 1
    assert history.text == [*range(20, 40), -1]
    history.clear()
    assert len(history) == 0 and history.text == [] and history.index == {}
    with pytest.raises(ValueError):
        OutputHistory(0)


def test_a_decoder_keeps_its_outputs_and_the_second_answer_drafts_from_the_first(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    config = DecodeConfig(max_draft=8, cost_curve=VerifyCostCurve.flat(8))
    decoder = SpeculativeDecoder(target, tokenizer, config=config)
    assert decoder.history is not None and len(decoder.history) == 0
    prompt = [0, 2, 5, 9, 13, 4]
    plain = plain_generate(target, tokenizer, prompt, 40)
    first = decoder.generate(prompt, 40, drafter=HistoryDrafter(decoder.history))
    assert first.token_ids == plain.token_ids
    assert decoder.history.text[-len(plain.token_ids) - 1 : -1] == plain.token_ids
    # The same question again: the whole answer is in the history.
    saved = decoder.learnt_state()
    second = decoder.generate(prompt, 40, drafter=HistoryDrafter(decoder.history))
    assert second.token_ids == plain.token_ids
    assert second.stats.target_calls * 3 <= first.stats.target_calls
    # A restore forgets what came after the saved state (a benchmark's repeats start equal).
    assert decoder.history.outputs == 2
    decoder.restore_learnt_state(saved)
    assert decoder.history.outputs == 1
    # In a composite with prompt lookup the output is the same.
    mixed = decoder.generate(
        prompt, 40, drafter=CompositeDrafter([PromptLookupDrafter(), HistoryDrafter(decoder.history)])
    )
    assert mixed.token_ids == plain.token_ids


def test_history_can_be_switched_off(target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> None:
    decoder = SpeculativeDecoder(target, tokenizer, config=DecodeConfig(history_tokens=0))
    assert decoder.history is None
    decoder.generate([0, 2, 3], 5)
    assert decoder.learnt_state().history is None
    with pytest.raises(ValueError, match="history_tokens"):
        DecodeConfig(history_tokens=-1)
