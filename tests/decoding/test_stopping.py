"""Stops (EOS, stop strings, budget), input errors, streaming, and the vocabulary check."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.drafters import ModelDrafter, VocabularyMismatchError, check_vocabulary
from decoding.speculative import (
    DecodeConfig,
    EmptyPromptError,
    PromptTooLongError,
    SpeculativeDecoder,
    plain_generate,
)
from decoding.stopping import FinishReason, RepetitionRule, Transcript

from .conftest import ScriptedDrafter, character_tokenizer, tiny_model

PROMPT = [0, 2, 3, 4, 2, 3, 4]


@pytest.fixture(scope="module")
def reference(target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> list[int]:
    result = plain_generate(target, tokenizer, PROMPT, 40)
    assert result.finish_reason == FinishReason.LENGTH
    return result.token_ids


def oracle_decoder(
    target: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    reference: list[int],
    eos: tuple[int, ...] | None = None,
) -> SpeculativeDecoder:
    config = DecodeConfig(draft_length=8, eos_token_ids=eos)
    return SpeculativeDecoder(target, tokenizer, ScriptedDrafter(PROMPT + reference, 16), config)


def test_stop_string_inside_an_accepted_block_is_trimmed(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int]
) -> None:
    text = tokenizer.decode(reference, skip_special_tokens=True)
    stop = text[5:7]
    cut = text.find(stop)
    result = oracle_decoder(target, tokenizer, reference).generate(PROMPT, 40, stop_strings=[stop, "zzz"])
    assert result.finish_reason == FinishReason.STOP_STRING
    assert result.text == text[:cut]
    # Tokens end with the one that completed the stop string: nothing after it survives the block.
    assert result.token_ids == reference[: len(result.token_ids)]
    assert tokenizer.decode(result.token_ids, skip_special_tokens=True).endswith(stop)
    assert stop not in tokenizer.decode(result.token_ids[:-1], skip_special_tokens=True)
    assert result.stats.new_tokens == len(result.token_ids)


def test_eos_inside_an_accepted_block_ends_generation(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int]
) -> None:
    # Declare the 6th generated token an end-of-sequence token: the oracle proposes it mid-block.
    eos = reference[5]
    first = reference.index(eos)
    result = oracle_decoder(target, tokenizer, reference, eos=(eos,)).generate(PROMPT, 40)
    assert result.finish_reason == FinishReason.EOS
    assert result.token_ids == reference[:first]


@pytest.mark.parametrize("budget", [1, 2, 9, 10, 17], ids=lambda n: f"max{n}")
def test_max_new_tokens_is_exact(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int], budget: int
) -> None:
    result = oracle_decoder(target, tokenizer, reference).generate(PROMPT, budget)
    assert result.token_ids == reference[:budget]
    assert result.finish_reason == FinishReason.LENGTH


def test_max_new_tokens_zero_returns_nothing(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    result = plain_generate(target, tokenizer, PROMPT, 0)
    assert (result.token_ids, result.text, result.finish_reason) == ([], "", FinishReason.LENGTH)
    assert result.stats.target_calls == 0


def test_empty_prompt_is_refused(target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> None:
    with pytest.raises(EmptyPromptError, match="the prompt is empty"):
        plain_generate(target, tokenizer, [], 5)


def test_prompt_longer_than_context_is_refused(tokenizer: PreTrainedTokenizerFast) -> None:
    short_context = tiny_model(seed=1, context=16)
    with pytest.raises(
        PromptTooLongError, match="the prompt has 16 tokens; the model's context window is 16"
    ):
        plain_generate(short_context, tokenizer, [2] * 16, 5)


def test_generation_stops_at_the_context_window(tokenizer: PreTrainedTokenizerFast) -> None:
    short_context = tiny_model(seed=1, context=16, scale=8.0)
    result = SpeculativeDecoder(short_context, tokenizer, config=DecodeConfig(eos_token_ids=())).generate(
        [0, 2, 3], 50
    )
    # Prompt plus output fill the window exactly.
    assert len(result.token_ids) == 16 - 3
    assert result.finish_reason == FinishReason.CONTEXT_WINDOW


def test_stream_yields_the_final_text(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int]
) -> None:
    text = tokenizer.decode(reference, skip_special_tokens=True)
    stream = oracle_decoder(target, tokenizer, reference).stream(PROMPT, 40, stop_strings=[text[20:23]])
    pieces = list(stream)
    assert len(pieces) > 1
    assert "".join(pieces) == stream.result.text == text[: text.find(text[20:23])]


def test_transcript_holds_back_partial_stop_strings(tokenizer: PreTrainedTokenizerFast) -> None:
    transcript = Transcript(tokenizer, max_new_tokens=10, stop_strings=["cde"])
    transcript.commit([2, 3, 4])  # "abc": "c" may start "cde"
    assert transcript.stable_text() == "ab"
    transcript.commit([5, 7])  # "abcd" then "f": neither completes "cde"
    assert transcript.stable_text() == "abcdf"
    assert not transcript.finished


def test_vocabulary_mismatch_is_refused(target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> None:
    other = character_tokenizer(["<s>", "</s>", *"abcdefghijklmz"])
    with pytest.raises(VocabularyMismatchError, match="a draft model must use the target's tokenizer"):
        check_vocabulary(tokenizer, other, 16, 16)
    bigger = tiny_model(seed=5, vocab_size=20)
    with pytest.raises(VocabularyMismatchError, match="draft model has 20 output logits, the target has 16"):
        ModelDrafter(bigger, target_vocab_size=16, tokenizer=tokenizer, target_tokenizer=tokenizer)


def test_stats_are_consistent_and_serialisable(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int]
) -> None:
    drafter = ScriptedDrafter(PROMPT + reference, 16, wrong_every=2)
    result = SpeculativeDecoder(target, tokenizer, drafter, DecodeConfig(draft_length=4)).generate(PROMPT, 40)
    stats = result.stats.to_dict()
    assert stats["new_tokens"] == 40
    assert stats["accepted"] + stats["rejected"] == stats["proposed"]
    assert stats["accepted"] == sum(stats["accepted_by_position"])
    # Every committed token comes from prefill, an accepted draft, or one correction/bonus per step.
    assert 1 + stats["accepted"] + (stats["target_calls"] - 1) == 40
    assert stats["tokens_per_target_call"] == 40 / stats["target_calls"]
    assert stats["peak_rss_bytes"] > 0
    assert torch.tensor(stats["acceptance_by_position"]).le(1.0).all()
    assert json.loads(json.dumps(stats)) == stats


class CountingTokenizer:
    """Decodes like `inner` and records how many tokens each decode call was given."""

    def __init__(self, inner: PreTrainedTokenizerFast) -> None:
        self.inner = inner
        self.lengths: list[int] = []

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        self.lengths.append(len(token_ids))
        return str(self.inner.decode(token_ids, skip_special_tokens=skip_special_tokens))


@pytest.mark.parametrize(
    ("blocks", "stop", "kept", "text"),
    [
        # The stop string "kcd" spans three tokens, committed in two blocks, far into the transcript.
        ([list("ab" * 150 + "k"), list("cdmn")], "kcd", 303, "ab" * 150),
        ([list("ab" * 150 + "kc"), list("dmn")], "kcd", 303, "ab" * 150),
        ([list("ab" * 150 + "kcd")], "kcd", 303, "ab" * 150),
        ([list("ab" * 150 + "kcmn")], "kcd", 304, "ab" * 150 + "kcmn"),
    ],
    ids=["split_one_two", "split_two_one", "one_block", "no_stop"],
)
def test_stop_strings_decode_a_bounded_tail(
    tokenizer: PreTrainedTokenizerFast, blocks: list[list[str]], stop: str, kept: int, text: str
) -> None:
    counting = CountingTokenizer(tokenizer)
    transcript = Transcript(counting, max_new_tokens=1000, stop_strings=[stop, "zz"])  # type: ignore[arg-type]
    vocab = tokenizer.get_vocab()
    for block in blocks:
        transcript.commit([vocab[token] for token in block])
    assert len(transcript.tokens) == kept
    assert transcript.text == text
    assert (transcript.finish_reason == FinishReason.STOP_STRING) is (kept == 303)
    # Every check decoded at most the window; only a found stop string decodes the whole text.
    window_decodes = [length for length in counting.lengths if length <= transcript.stop_window]
    assert transcript.stop_window == 3 + 4
    assert len(counting.lengths) - len(window_decodes) == (1 if kept == 303 else 0) + 1


def test_a_looping_generation_stops_with_finish_reason_repetition(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, reference: list[int]
) -> None:
    # This prompt drives the tiny target into a five-token cycle: without the stop it spends the budget.
    looping = plain_generate(target, tokenizer, PROMPT, 200)
    assert looping.finish_reason == FinishReason.LENGTH
    assert looping.token_ids[-10:-5] == looping.token_ids[-5:]
    config = DecodeConfig(repetition_stop=True, repetition_ngram=4, repetition_count=3)
    stopped = SpeculativeDecoder(target, tokenizer, config=config).generate(PROMPT, 200)
    assert stopped.finish_reason == FinishReason.REPETITION
    assert len(stopped.token_ids) < 50
    assert stopped.token_ids == looping.token_ids[: len(stopped.token_ids)]
    # Inside accepted blocks the stop falls on the same token.
    oracle = SpeculativeDecoder(
        target, tokenizer, ScriptedDrafter(PROMPT + looping.token_ids, 16), replace(config, draft_length=8)
    ).generate(PROMPT, 200)
    assert (oracle.token_ids, oracle.finish_reason) == (stopped.token_ids, FinishReason.REPETITION)


def test_repetition_stop_is_off_by_default_and_counts_only_generated_tokens(
    tokenizer: PreTrainedTokenizerFast,
) -> None:
    assert DecodeConfig().repetition_rule() is None
    transcript = Transcript(tokenizer, max_new_tokens=100, repetition=RepetitionRule(ngram=2, count=3))
    transcript.commit([2, 3, 4, 2, 3, 5, 2])
    assert not transcript.finished
    transcript.commit([3, 6])
    assert transcript.finish_reason == FinishReason.REPETITION
    assert transcript.tokens == [2, 3, 4, 2, 3, 5, 2, 3]


def test_an_impossible_repetition_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="repetition rule"):
        DecodeConfig(repetition_stop=True, repetition_count=1)
