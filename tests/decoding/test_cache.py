"""After rejections the KV cache holds exactly the accepted prefix, equal to a fresh prefill of it."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache, LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.kv_cache import CachedModel
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

from .conftest import ScriptedDrafter

PROMPT = [0, 2, 3, 4, 2, 3, 4]


def fresh_prefill(model: LlamaForCausalLM, tokens: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Transformers' own forward over a `DynamicCache`: the reference for both `CachedModel` paths."""
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=torch.tensor([tokens]), cache=cache, use_cache=True)
    return [(layer.keys, layer.values) for layer in cache.layers]


def assert_cache_equal(
    actual: list[tuple[torch.Tensor, torch.Tensor]], expected: list[tuple[torch.Tensor, torch.Tensor]]
) -> None:
    assert len(actual) == len(expected)
    for (keys, values), (fresh_keys, fresh_values) in zip(actual, expected, strict=True):
        assert keys.shape == fresh_keys.shape
        assert torch.allclose(keys, fresh_keys, atol=1e-12, rtol=0)
        assert torch.allclose(values, fresh_values, atol=1e-12, rtol=0)


@pytest.mark.parametrize("wrong_every", [1, 2, 3], ids=["every_step", "every_second", "every_third"])
def test_cache_after_rejections_equals_fresh_prefill(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, wrong_every: int
) -> None:
    plain = plain_generate(target, tokenizer, PROMPT, 30)
    drafter = ScriptedDrafter(PROMPT + plain.token_ids, 16, wrong_every=wrong_every)
    decoder = SpeculativeDecoder(target, tokenizer, drafter, DecodeConfig(draft_length=5))
    result = decoder.generate(PROMPT, 30)
    assert result.token_ids == plain.token_ids
    assert result.stats.rejected > 0
    # The pending (last) token is never in the cache; everything before it is.
    committed = PROMPT + result.token_ids[:-1]
    assert decoder.target.tokens == committed
    assert decoder.target.lean is not None
    assert decoder.target.lean.length == len(committed)
    assert_cache_equal(decoder.target.key_values(), fresh_prefill(target, committed))


LEAN = pytest.mark.parametrize("lean", [True, False], ids=["lean", "transformers"])


@LEAN
def test_crop_then_extend_matches_fresh_prefill(target: LlamaForCausalLM, lean: bool) -> None:
    cached = CachedModel(target, lean=lean)
    assert (cached.lean is not None) == lean
    cached.forward([0, 2, 3, 4, 5, 6])
    cached.crop(3)
    logits = cached.forward([9, 9])
    fresh = CachedModel(target, lean=lean)
    expected = fresh.forward([0, 2, 3, 9, 9])
    assert torch.allclose(logits, expected[-2:], atol=1e-12, rtol=0)
    assert_cache_equal(cached.key_values(), fresh.key_values())
    assert_cache_equal(cached.key_values(), fresh_prefill(target, [0, 2, 3, 9, 9]))


@LEAN
def test_crop_out_of_range(target: LlamaForCausalLM, lean: bool) -> None:
    cached = CachedModel(target, lean=lean)
    cached.forward([0, 2])
    with pytest.raises(ValueError, match="cannot crop a cache of 2 tokens to 3"):
        cached.crop(3)


@LEAN
def test_sync_reuses_the_common_prefix(target: LlamaForCausalLM, lean: bool) -> None:
    cached = CachedModel(target, lean=lean)
    cached.sync([0, 2, 3, 4])
    logits = cached.sync([0, 2, 5])
    assert cached.tokens == [0, 2, 5]
    assert torch.allclose(logits, CachedModel(target, lean=lean).forward([0, 2, 5])[-1], atol=1e-12, rtol=0)
