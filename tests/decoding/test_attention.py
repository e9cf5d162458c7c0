"""Grouped-query attention for verification steps: same numbers as Transformers' SDPA, without the cache copy."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache, LlamaForCausalLM
from transformers.integrations import sdpa_attention

from decoding.attention import IMPLEMENTATION, grouped_query_attention, use_grouped_query_attention
from decoding.kv_cache import CachedModel

from .conftest import tiny_model

PROMPT = [0, 2, 3, 4, 5, 6, 7, 8, 2, 3]


def stock_logits(model: LlamaForCausalLM, prefix: list[int], block: list[int]) -> torch.Tensor:
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=torch.tensor([prefix]), cache=cache, use_cache=True)
        logits: torch.Tensor = model(input_ids=torch.tensor([block]), cache=cache, use_cache=True).logits[0]
    return logits


@pytest.fixture()
def model() -> LlamaForCausalLM:
    return tiny_model(seed=5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("rows", [2, 3, 6])
def test_verify_block_logits_equal_transformers_sdpa(
    model: LlamaForCausalLM, dtype: torch.dtype, rows: int
) -> None:
    model = model.to(dtype)
    block = [9, 10, 11, 12, 13, 14][:rows]
    expected = stock_logits(model, PROMPT, block)  # before the switch: Transformers' own SDPA path
    cached = CachedModel(model)
    assert model.config._attn_implementation == IMPLEMENTATION
    cached.forward(PROMPT)
    assert torch.equal(cached.forward(block), expected)


def count_repeats(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = sdpa_attention.repeat_kv

    def counting(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
        calls.append(n_rep)
        return original(hidden_states, n_rep)

    monkeypatch.setattr(sdpa_attention, "repeat_kv", counting)
    return calls


def test_cached_model_does_not_repeat_the_cache(
    model: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = CachedModel(model)
    cached.forward(PROMPT)
    calls = count_repeats(monkeypatch)
    cached.forward([9, 10, 11, 12])
    assert calls == []


def test_outside_the_decoder_the_model_runs_transformers_sdpa(
    model: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert use_grouped_query_attention(model)
    calls = count_repeats(monkeypatch)
    stock_logits(model, PROMPT, [9, 10, 11])
    # The block after a cached prefix has several query rows and a mask: Transformers repeats the keys
    # and the values in every layer (the prefill on an empty cache needs no mask, so no repeat).
    assert len(calls) == 2 * model.config.num_hidden_layers
    calls.clear()
    with grouped_query_attention():
        stock_logits(model, PROMPT, [9, 10, 11])
    assert calls == []


def test_other_attention_implementations_are_left_alone() -> None:
    model = tiny_model(seed=6)
    model.set_attn_implementation("eager")
    assert not use_grouped_query_attention(model)
    assert model.config._attn_implementation == "eager"
