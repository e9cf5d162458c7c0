"""The answer store: the target's own answers to other prompts, drafted from (tiny float64 models)."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding.answer_store import (
    STORE_LEAD,
    AnswerStoreFileError,
    StoreDrafter,
    answer_store_path,
    load_answer_store,
    prompt_digest,
    save_answer_store,
)
from decoding.draft_head import DraftHead, DraftHeadConfig, DraftHeadMismatchError, save_draft_head
from decoding.draft_length import VerifyCostCurve
from decoding.drafters import CompositeDrafter, PromptLookupDrafter
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

from .conftest import tiny_model
from .test_greedy_equality import MAX_NEW, PROMPTS

CONFIG = DecodeConfig(max_draft=8, draft_length=8, cost_curve=VerifyCostCurve.flat(8), history_tokens=0)


def stored_answers(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> list[tuple[list[int], list[int]]]:
    """PROMPTS with the target's greedy answers to them (an answer that ends at once is not stored)."""
    pairs = [(prompt, plain_generate(target, tokenizer, prompt, MAX_NEW).token_ids) for prompt in PROMPTS]
    return [(prompt, answer) for prompt, answer in pairs if len(answer) > 4]


def test_a_stored_answer_is_drafted_and_the_output_stays_the_targets(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    pairs = stored_answers(target, tokenizer)
    path = save_answer_store(tmp_path / "tiny.answers.safetensors", pairs, target, "tiny")
    store = load_answer_store(path, target)
    assert len(pairs) >= 4
    assert (store.answers, store.excluded, store.target_name) == (len(pairs), 0, "tiny")
    assert len(store) == sum(len(answer) for _, answer in pairs)
    for prompt, answer in pairs:
        plain = plain_generate(target, tokenizer, prompt, MAX_NEW)
        drafted = SpeculativeDecoder(target, tokenizer, StoreDrafter(store), CONFIG).generate(prompt, MAX_NEW)
        assert drafted.token_ids == plain.token_ids == answer
        # The whole answer is in the store after the prompt's last tokens: a few calls suffice.
        assert drafted.stats.target_calls <= len(answer) // 3
        assert drafted.stats.proposals_by_source.get("answer_store", 0) > 0


def test_the_answers_to_excluded_prompts_are_left_out(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    pairs = stored_answers(target, tokenizer)
    path = save_answer_store(tmp_path / "tiny.answers.safetensors", pairs, target, "tiny")
    measured, answer = pairs[0]
    store = load_answer_store(path, target, exclude=[measured])
    assert (store.answers, store.excluded) == (len(pairs) - 1, 1)
    assert len(store) == sum(len(other) for _, other in pairs[1:])
    # The measured prompt's lead and answer are not in the store's text.
    text, wanted = store.history.text, measured[-STORE_LEAD:] + answer
    assert not any(text[start : start + len(wanted)] == wanted for start in range(len(text)))
    assert store.history.outputs == len(pairs) - 1
    # The digest names the token ids, however the prompt was built.
    assert prompt_digest(measured) == prompt_digest(tuple(measured))
    assert prompt_digest(measured) != prompt_digest(measured[:-1])


def test_a_composite_with_the_others_answers_is_exact(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    pairs = stored_answers(target, tokenizer)
    # Each prompt is measured with the others' answers only, as the benchmark does.
    path = save_answer_store(tmp_path / "tiny.answers.safetensors", pairs, target, "tiny")
    for prompt, answer in pairs:
        store = load_answer_store(path, target, exclude=[prompt])
        with_store = SpeculativeDecoder(
            target, tokenizer, CompositeDrafter([PromptLookupDrafter(), StoreDrafter(store)]), CONFIG
        ).generate(prompt, MAX_NEW)
        assert with_store.token_ids == answer


def test_a_store_for_another_target_or_a_damaged_file_is_refused(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    path = save_answer_store(
        tmp_path / "tiny.answers.safetensors", stored_answers(target, tokenizer), target, "tiny"
    )
    with pytest.raises(DraftHeadMismatchError, match=r"answer store .* was made by tiny"):
        load_answer_store(path, tiny_model(seed=99))
    with pytest.raises(AnswerStoreFileError, match="akm train-draft-head"):
        load_answer_store(tmp_path / "missing.answers.safetensors", target)
    damaged = tmp_path / "damaged.answers.safetensors"
    damaged.write_bytes(path.read_bytes()[:40])
    with pytest.raises(AnswerStoreFileError, match="not a readable safetensors file"):
        load_answer_store(damaged, target)
    head = save_draft_head(
        DraftHead(DraftHeadConfig.for_target(target, "tiny")), tmp_path / "tiny.safetensors"
    )
    with pytest.raises(AnswerStoreFileError, match="is not an answer store file"):
        load_answer_store(head, target)


def test_the_store_sits_beside_its_head() -> None:
    assert answer_store_path("/models/draft-heads/smollm2.safetensors") == Path(
        "/models/draft-heads/smollm2.answers.safetensors"
    )
