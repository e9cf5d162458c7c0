"""Speculative greedy decoding must reproduce plain greedy decoding token for token (float64, tiny models)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.answer_store import STORE_LEAD, AnswerStore, StoreDrafter
from decoding.draft_length import VerifyCostCurve
from decoding.drafters import (
    CompositeDrafter,
    Drafter,
    EvidenceDrafter,
    ModelDrafter,
    PromptLookupDrafter,
)
from decoding.history import HistoryDrafter, OutputHistory
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

from .conftest import ScriptedDrafter

VOCAB = 16
MAX_NEW = 40


def prompts() -> list[list[int]]:
    generator = torch.Generator().manual_seed(7)
    result = [[0, 2, 3, 4, 2, 3, 4], [0, 5], [0, *range(2, 16)] * 2]
    for length in (3, 9, 17, 30):
        result.append([0, *torch.randint(2, VOCAB, (length,), generator=generator).tolist()])
    return result


PROMPTS = prompts()

DrafterFactory = Callable[[list[int], list[int], LlamaForCausalLM], Drafter]


def oracle(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return ScriptedDrafter(prompt + reference, VOCAB)


def adversary(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return ScriptedDrafter(prompt + reference, VOCAB, always_wrong=True)


def flaky_oracle(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return ScriptedDrafter(prompt + reference, VOCAB, wrong_every=2)


def prompt_lookup(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return PromptLookupDrafter(min_ngram=1, max_ngram=3)


def evidence(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    # One passage holds part of the true continuation, one is noise.
    return EvidenceDrafter([[3, 4, 5, 6, 7, 8], reference[5:25], [9, 9, 2, 3]])


def history(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    # Earlier outputs: one holds part of the true continuation, one is noise after the same prompt.
    earlier = OutputHistory(64, lead=4)
    earlier.add(prompt, [9, 9, 2, 3, 9, 9, 4])
    earlier.add(prompt[:2], reference[4:30])
    return HistoryDrafter(earlier)


def answer_store(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    # Stored answers to other prompts: one holds part of the true continuation, one is noise.
    stored = OutputHistory(64, lead=STORE_LEAD)
    stored.add(prompt[1:], [9, 9, 2, 3, 9, 9, 4])
    stored.add([5, 5], reference[3:30])
    return StoreDrafter(AnswerStore(stored, "tiny", 2, 0))


def composite(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return CompositeDrafter([evidence(prompt, reference, draft), PromptLookupDrafter(min_ngram=1)])


def model_drafter(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    return ModelDrafter(draft, target_vocab_size=VOCAB)


def composite_with_model(prompt: list[int], reference: list[int], draft: LlamaForCausalLM) -> Drafter:
    # A right, a wrong and a model member: whichever the composite picks, the output must not change.
    members = [adversary(prompt, reference, draft), model_drafter(prompt, reference, draft)]
    return CompositeDrafter([*members, flaky_oracle(prompt, reference, draft)])


DRAFTERS: dict[str, DrafterFactory] = {
    "oracle": oracle,
    "adversary": adversary,
    "flaky_oracle": flaky_oracle,
    "prompt_lookup": prompt_lookup,
    "evidence": evidence,
    "history": history,
    "answer_store": answer_store,
    "composite": composite,
    "model": model_drafter,
    "composite_with_model": composite_with_model,
}


@pytest.mark.parametrize("draft_length", [1, 3, 8, None], ids=["k1", "k3", "k8", "adaptive"])
@pytest.mark.parametrize("drafter_name", list(DRAFTERS), ids=list(DRAFTERS))
def test_speculative_greedy_equals_plain_greedy(
    target: LlamaForCausalLM,
    draft_model: LlamaForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    drafter_name: str,
    draft_length: int | None,
) -> None:
    config = DecodeConfig(max_draft=8, draft_length=draft_length, cost_curve=VerifyCostCurve.flat(8))
    for prompt in PROMPTS:
        plain = plain_generate(target, tokenizer, prompt, MAX_NEW)
        drafter = DRAFTERS[drafter_name](prompt, plain.token_ids, draft_model)
        result = SpeculativeDecoder(target, tokenizer, drafter, config).generate(prompt, MAX_NEW)
        assert result.token_ids == plain.token_ids, f"prompt {prompt}"
        assert result.finish_reason == plain.finish_reason
        assert result.text == plain.text
        assert result.stats.new_tokens == len(plain.token_ids)


def test_oracle_needs_few_target_calls_and_adversary_accepts_nothing(
    target: LlamaForCausalLM, draft_model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    prompt = PROMPTS[0]
    plain = plain_generate(target, tokenizer, prompt, MAX_NEW)
    assert plain.stats.target_calls == len(plain.token_ids)
    config = DecodeConfig(max_draft=8, draft_length=8)
    good = SpeculativeDecoder(
        target, tokenizer, oracle(prompt, plain.token_ids, draft_model), config
    ).generate(prompt, MAX_NEW)
    bad = SpeculativeDecoder(
        target, tokenizer, adversary(prompt, plain.token_ids, draft_model), config
    ).generate(prompt, MAX_NEW)
    steps = len(plain.token_ids) - 1
    # Prefill gives token 1; each oracle step then commits 9 tokens (8 drafts + bonus), capped by the budget.
    assert good.stats.target_calls == 1 + -(-steps // 9)
    assert good.stats.rejected == 0
    assert bad.stats.accepted == 0
    assert bad.stats.target_calls == len(plain.token_ids)
    assert bad.stats.rejected == bad.stats.proposed > 0
