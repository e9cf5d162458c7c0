"""`greedy_batch` answers many prompts of different lengths at once with each prompt's own greedy answer."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaForCausalLM, MistralConfig, MistralForCausalLM

from decoding.batch_generate import greedy_batch
from decoding.head_options import HeadTrainingConfig
from decoding.lean_llama import can_pack
from decoding.train_head import _batch_answerer

from .conftest import character_tokenizer, tiny_config, tiny_model

PROMPTS = [[0, 2], [0, 5, 6, 7, 3, 9, 4], [0, 12, 3, 3, 8, 2, 11, 13, 2, 4, 6, 9, 10], [0], [0, 7, 7, 2]]


@torch.inference_mode()
def reference(model: torch.nn.Module, prompt: list[int], new_tokens: int, eos: int | None) -> list[int]:
    """Greedy decoding the slow way: the whole sequence through the model for every token."""
    ids = list(prompt)
    answer: list[int] = []
    for _ in range(new_tokens):
        token = int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
        answer.append(token)
        ids.append(token)
        if token == eos:
            break
    return answer


def test_each_row_is_its_prompts_own_greedy_answer_float64() -> None:
    model = tiny_model(5, scale=4.0)
    answers = greedy_batch(model, PROMPTS, 12)
    assert answers == [reference(model, prompt, 12, None) for prompt in PROMPTS]
    assert all(len(answer) == 12 for answer in answers)


@pytest.mark.skipif(not can_pack(tiny_model(0).to(torch.float32)), reason="needs a CPU torch with MKL")
def test_float32_steps_of_many_rows_take_the_packed_weights_and_agree() -> None:
    # Eight rows: each step's products go through MKL's packed GEMM (float32, 4 rows or more).
    model = tiny_model(6, vocab_size=16, scale=8.0).to(torch.float32)
    prompts = [*PROMPTS, [0, 3], [0, 9, 9, 9], [0, 4, 13, 2, 2, 5]]
    assert greedy_batch(model, prompts, 10) == [reference(model, prompt, 10, None) for prompt in prompts]


def test_a_row_ends_at_its_end_of_sequence_token_while_the_others_go_on() -> None:
    model = tiny_model(7, scale=4.0)
    unstopped = greedy_batch(model, PROMPTS, 16)
    # Pick as "end of sequence" a token some rows produce early and others late or never.
    firsts = {answer[2] for answer in unstopped}
    eos = sorted(firsts)[0]
    answers = greedy_batch(model, PROMPTS, 16, eos_token_id=eos)
    for answer, full in zip(answers, unstopped, strict=True):
        if eos in full:
            assert answer == full[: full.index(eos) + 1]
        else:
            assert answer == full
    assert any(len(answer) < 16 for answer in answers)


def test_bad_input_is_refused_or_answered_empty() -> None:
    model = tiny_model(8)
    assert greedy_batch(model, [], 4) == []
    assert greedy_batch(model, [[0, 2]], 0) == [[]]
    with pytest.raises(ValueError, match="at least one token"):
        greedy_batch(model, [[0, 2], []], 4)
    mistral = MistralForCausalLM(MistralConfig(**tiny_config().to_dict())).eval()
    with pytest.raises(ValueError, match="not a Llama model"):
        greedy_batch(mistral, [[0, 2]], 4)


@pytest.mark.parametrize("kind", ["llama", "mistral"])
def test_training_answers_a_batch_with_greedy_batch_or_generate(kind: str) -> None:
    torch.manual_seed(9)
    model = (
        tiny_model(9, scale=4.0)
        if kind == "llama"
        else MistralForCausalLM(MistralConfig(**tiny_config().to_dict())).to(torch.float64).eval()
    )
    assert isinstance(model, LlamaForCausalLM) == (kind == "llama")
    answer = _batch_answerer(model, character_tokenizer(), HeadTrainingConfig(answer_tokens=6))
    # Transformers' generate stops rows at the end-of-sequence token (1) and pads them after it.
    expected = [reference(model, prompt, 6, 1) for prompt in PROMPTS]
    answers = [got[: len(want)] for got, want in zip(answer(PROMPTS), expected, strict=True)]
    assert answers == expected
