"""The target's cache is kept between requests: a new prompt prefills only what it does not share."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.draft_length import VerifyCostCurve
from decoding.drafters import CompositeDrafter, ContextDrafter, DraftProposal, PromptLookupDrafter
from decoding.kv_cache import CachedModel
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

TEMPLATE = [0, 2, 3, 4, 5, 6, 7]  # what every request opens with (a chat template, a system prompt)
FIRST = [*TEMPLATE, 9, 13, 4, 11]
SECOND = [*TEMPLATE, 12, 8, 10]


def _decoder(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, **options: object
) -> SpeculativeDecoder:
    config = DecodeConfig(max_draft=8, cost_curve=VerifyCostCurve.flat(8), **options)  # type: ignore[arg-type]
    return SpeculativeDecoder(target, tokenizer, config=config)


def test_a_second_prompt_prefills_only_what_it_does_not_share(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    decoder = _decoder(target, tokenizer)
    first = decoder.generate(FIRST, 30, drafter=PromptLookupDrafter())
    assert first.stats.cached_prompt_tokens == 0
    second = decoder.generate(SECOND, 30, drafter=PromptLookupDrafter())
    assert second.stats.cached_prompt_tokens == len(TEMPLATE)
    assert second.stats.to_dict()["cached_prompt_tokens"] == len(TEMPLATE)
    assert second.token_ids == plain_generate(target, tokenizer, SECOND, 30).token_ids
    # The same prompt again: everything but its last token (whose logits are needed) is cached.
    again = decoder.generate(SECOND, 30, drafter=PromptLookupDrafter())
    assert again.stats.cached_prompt_tokens == len(SECOND) - 1
    assert again.token_ids == second.token_ids
    # A prompt that continues the last one (a chat's next turn) reuses the answer's positions too.
    follow_up = [*SECOND, *again.token_ids[:5], 3]
    turn = decoder.generate(follow_up, 10)
    assert turn.stats.cached_prompt_tokens == len(follow_up) - 1
    assert turn.token_ids == plain_generate(target, tokenizer, follow_up, 10).token_ids


def test_reused_logits_equal_a_fresh_prefill(target: LlamaForCausalLM) -> None:
    cached = CachedModel(target)
    fresh = CachedModel(target)
    cached.forward(FIRST)
    cached.crop(cached.common_prefix(SECOND))
    reused = cached.forward(SECOND[len(TEMPLATE) :], logits_to_keep=1)[-1]
    whole = fresh.forward(SECOND, logits_to_keep=1)[-1]
    torch.testing.assert_close(reused, whole, rtol=0, atol=1e-12)
    assert cached.tokens == fresh.tokens == SECOND


def test_reuse_can_be_switched_off(target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> None:
    decoder = _decoder(target, tokenizer, prefix_reuse=False)
    decoder.generate(FIRST, 10)
    assert decoder.generate(SECOND, 10).stats.cached_prompt_tokens == 0


def test_a_restore_forgets_positions_cached_since(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    """A benchmark's repeats restore the learnt state: the second round must not find its own prompt cached."""
    decoder = _decoder(target, tokenizer)
    decoder.generate(FIRST, 10)
    saved = decoder.learnt_state()
    assert decoder.generate(SECOND, 10).stats.cached_prompt_tokens == len(TEMPLATE)
    decoder.restore_learnt_state(saved)
    assert decoder.generate(SECOND, 10).stats.cached_prompt_tokens == len(TEMPLATE)


class FeatureRecorder(ContextDrafter):
    """A feature drafter that proposes nothing and keeps the features it is handed, by position."""

    wants_features = True

    def __init__(self) -> None:
        self.features: dict[int, torch.Tensor] = {}

    def reset(self) -> None:
        self.features = {}

    def observe_features(self, start: int, features: torch.Tensor) -> None:
        for offset, row in enumerate(features):
            self.features[start + offset] = row.clone()

    def draft(self, context: list[int], k: int) -> DraftProposal:
        return DraftProposal(tokens=[], source="recorder", match_length=0)


def test_a_feature_drafter_gets_every_prompt_position_when_the_prefix_is_reused(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    decoder = _decoder(target, tokenizer)
    # A prefill without features first: its cached positions have no kept features to reuse.
    decoder.generate(FIRST, 5)
    recorder = FeatureRecorder()
    first = decoder.generate(FIRST, 5, drafter=CompositeDrafter([PromptLookupDrafter(), recorder]))
    assert first.stats.cached_prompt_tokens == 0
    second = decoder.generate(SECOND, 5, drafter=CompositeDrafter([PromptLookupDrafter(), recorder]))
    assert second.stats.cached_prompt_tokens == len(TEMPLATE)
    reference = CachedModel(target)
    _, expected = reference.forward_features(SECOND)
    for position in range(len(SECOND)):
        torch.testing.assert_close(recorder.features[position], expected[position], rtol=0, atol=1e-12)


def test_a_failed_forward_leaves_no_cache_to_reuse(
    target: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Transformers' forward may fail after some layers cached the new tokens: the cache starts again."""
    cached = CachedModel(target, lean=False)
    cached.forward(FIRST)

    class Failing:
        config = target.config

        def __call__(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("out of memory")

    monkeypatch.setattr(cached, "model", Failing())
    with pytest.raises(RuntimeError, match="out of memory"):
        cached.forward([3, 4])
    assert cached.tokens == [] and cached.common_prefix(FIRST) == 0
    monkeypatch.undo()
    fresh = CachedModel(target, lean=False)
    torch.testing.assert_close(
        cached.forward(FIRST, logits_to_keep=1), fresh.forward(FIRST, logits_to_keep=1), rtol=0, atol=0
    )
