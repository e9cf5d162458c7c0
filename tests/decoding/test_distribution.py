"""End to end: speculative sampling with a draft model that disagrees still samples from the target."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

import decoding.speculative
from decoding.acceptance import Acceptance, SamplingParams, sampling_probs
from decoding.drafters import ModelDrafter
from decoding.kv_cache import CachedModel
from decoding.speculative import DecodeConfig, SpeculativeDecoder

from .conftest import character_tokenizer, tiny_model
from .distribution_check import ALPHA, chi_square_p_value

VOCAB = 6
PROMPT = [0, 2, 3]
PARAMS = SamplingParams(temperature=1.0)
# 36 cells; at 1000 samples the always-accept rule scores p ~ 1e-15 against ALPHA = 1e-3.
SAMPLES = 1000


@pytest.fixture(scope="module")
def small_vocab_pair() -> tuple[LlamaForCausalLM, LlamaForCausalLM, PreTrainedTokenizerFast]:
    target = tiny_model(seed=3, vocab_size=VOCAB, scale=2.0)
    draft = tiny_model(seed=4, vocab_size=VOCAB, scale=2.0)
    return target, draft, character_tokenizer(["<s>", "</s>", "a", "b", "c", "d"])


def exact_second_third(target: LlamaForCausalLM) -> dict[Hashable, float]:
    """P(token 2, token 3 | prompt), marginalising token 1: the tokens the first speculative step decides."""
    cached = CachedModel(target)
    first = sampling_probs(cached.sync(PROMPT).unsqueeze(0), PARAMS)[0]
    joint: dict[Hashable, float] = {}
    for t1 in range(VOCAB):
        second = sampling_probs(cached.sync([*PROMPT, t1]).unsqueeze(0), PARAMS)[0]
        for t2 in range(VOCAB):
            third = sampling_probs(cached.sync([*PROMPT, t1, t2]).unsqueeze(0), PARAMS)[0]
            for t3 in range(VOCAB):
                key = (t2, t3)
                joint[key] = joint.get(key, 0.0) + float(first[t1] * second[t2] * third[t3])
    return joint


def sampled_second_third(
    target: LlamaForCausalLM, draft: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> Counter[Hashable]:
    # No EOS, so every run yields four tokens; k=2 makes tokens 2 and 3 come from one verify step.
    config = DecodeConfig(max_draft=2, draft_length=2, eos_token_ids=())
    decoder = SpeculativeDecoder(target, tokenizer, ModelDrafter(draft, target_vocab_size=VOCAB), config)
    counts: Counter[Hashable] = Counter()
    for seed in range(SAMPLES):
        tokens = decoder.generate(PROMPT, 4, temperature=PARAMS.temperature, seed=seed).token_ids
        counts[(tokens[1], tokens[2])] += 1
    return counts


def test_speculative_sampling_end_to_end_matches_target(
    small_vocab_pair: tuple[LlamaForCausalLM, LlamaForCausalLM, PreTrainedTokenizerFast],
) -> None:
    target, draft, tokenizer = small_vocab_pair
    counts = sampled_second_third(target, draft, tokenizer)
    value = chi_square_p_value(counts, exact_second_third(target), SAMPLES)
    assert value > ALPHA


def test_end_to_end_check_catches_always_accept(
    small_vocab_pair: tuple[LlamaForCausalLM, LlamaForCausalLM, PreTrainedTokenizerFast],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def always_accept(
        drafts: torch.Tensor,
        draft_probs: torch.Tensor | None,
        target_probs: torch.Tensor,
        generator: torch.Generator | None = None,
    ) -> Acceptance:
        k = drafts.shape[0]
        return Acceptance(k, int(torch.multinomial(target_probs[k], 1, generator=generator).item()))

    monkeypatch.setattr(decoding.speculative, "accept_speculative", always_accept)
    target, draft, tokenizer = small_vocab_pair
    counts = sampled_second_third(target, draft, tokenizer)
    value = chi_square_p_value(counts, exact_second_third(target), SAMPLES)
    assert value < ALPHA


def test_seeded_sampling_is_reproducible(
    small_vocab_pair: tuple[LlamaForCausalLM, LlamaForCausalLM, PreTrainedTokenizerFast],
) -> None:
    target, draft, tokenizer = small_vocab_pair
    decoder = SpeculativeDecoder(
        target,
        tokenizer,
        ModelDrafter(draft, target_vocab_size=VOCAB),
        DecodeConfig(draft_length=3, eos_token_ids=()),
    )
    first = decoder.generate(PROMPT, 20, temperature=0.8, top_k=4, top_p=0.9, seed=5).token_ids
    again = decoder.generate(PROMPT, 20, temperature=0.8, top_k=4, top_p=0.9, seed=5).token_ids
    other = decoder.generate(PROMPT, 20, temperature=0.8, top_k=4, top_p=0.9, seed=6).token_ids
    assert first == again
    assert first != other
    assert len(first) == 20
