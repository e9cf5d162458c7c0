"""settings.draft_model: a model drafter joins the lookups in the answer generator, and a bad one is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from akm.answer import EvidencePrompt, SpeculativeAnswerGenerator, run_to_end
from akm.runtime import ModelUnavailableError, Runtime
from akm.settings import load_settings
from decoding.drafters import ModelDrafter
from decoding.models import LoadedModel

LETTERS = ["<s>", "</s>", *"abcdefghijklmn"]


def _tokenizer() -> PreTrainedTokenizerFast:
    backend = Tokenizer(models.WordLevel({token: i for i, token in enumerate(LETTERS)}, unk_token="<s>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>")


def _model(seed: int, vocab_size: int = len(LETTERS)) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=0,
        eos_token_id=1,
    )
    model = LlamaForCausalLM(config).to(torch.float64).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    return model


PROMPT = EvidencePrompt(question="abc", system="abab", user="cdcdcd abc", passages=("abcdefgabcdefg",))


def test_a_model_drafter_is_asked_and_the_answer_is_the_same_tokens() -> None:
    tokenizer = _tokenizer()
    target = _model(1)
    plain = run_to_end(
        SpeculativeAnswerGenerator(target, tokenizer, max_draft=4).stream(
            PROMPT, max_new_tokens=24, temperature=0.0, seed=0
        )
    )
    drafter = ModelDrafter(
        _model(2), target_vocab_size=len(LETTERS), tokenizer=tokenizer, target_tokenizer=tokenizer
    )
    with_model = run_to_end(
        SpeculativeAnswerGenerator(target, tokenizer, max_draft=4, model_drafter=drafter).stream(
            PROMPT, max_new_tokens=24, temperature=0.0, seed=0
        )
    )
    assert with_model.text == plain.text
    assert with_model.decode["drafters"] == ["evidence", "prompt_lookup", "history", "successor", "model"]
    assert "model" not in plain.decode["drafters"]


def _loaded(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast) -> LoadedModel:
    return LoadedModel(model, tokenizer, "tiny", torch.device("cpu"), torch.float64, 0.0)


@pytest.mark.parametrize(
    ("vocab_size", "accepted"), [(len(LETTERS), True), (len(LETTERS) + 4, False)], ids=["same", "other"]
)
def test_the_configured_draft_model_is_loaded_or_refused_with_its_reason(
    tmp_path: Path, vocab_size: int, accepted: bool
) -> None:
    tokenizer = _tokenizer()
    folder = tmp_path / "draft"
    _model(3, vocab_size).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    runtime = Runtime.from_settings(
        load_settings(data_dir=tmp_path, draft_model=str(folder), dtype="float64")
    )
    target = _loaded(_model(1), tokenizer)
    if accepted:
        assert isinstance(runtime._load_model_drafter(target), ModelDrafter)
        return
    with pytest.raises(
        ModelUnavailableError,
        match=r"the draft model .* could not be loaded: draft model has 20 output logits",
    ):
        runtime._load_model_drafter(target)


def test_a_missing_draft_model_is_refused(tmp_path: Path) -> None:
    runtime = Runtime.from_settings(load_settings(data_dir=tmp_path, draft_model=str(tmp_path / "nowhere")))
    with pytest.raises(ModelUnavailableError, match="model directory not found"):
        runtime._load_model_drafter(_loaded(_model(1), _tokenizer()))


def ask(generator: SpeculativeAnswerGenerator) -> Any:
    """PROMPT answered greedily, to the end."""
    return run_to_end(generator.stream(PROMPT, max_new_tokens=24, temperature=0.0, seed=0))


def test_answers_are_remembered_for_the_history_drafter_unless_history_is_off() -> None:
    tokenizer = _tokenizer()
    target = _model(1)

    remembering = SpeculativeAnswerGenerator(target, tokenizer, max_draft=4)
    history = remembering.decoder.history
    assert history is not None and history.outputs == 0
    first = ask(remembering)
    # The answer's tokens are kept (drafting from them is tested in tests/decoding/test_history.py).
    answer_ids = tokenizer(first.text, add_special_tokens=False)["input_ids"]
    assert history.outputs == 1 and history.text[-1 - len(answer_ids) : -1] == answer_ids
    second = ask(remembering)
    assert second.text == first.text and "history" in second.decode["drafters"]
    forgetting = SpeculativeAnswerGenerator(target, tokenizer, max_draft=4, history_tokens=0)
    assert forgetting.decoder.history is None
    again = ask(forgetting)
    assert again.text == first.text and "history" not in again.decode["drafters"]


def test_the_next_answer_reuses_the_cached_prompt_unless_reuse_is_off() -> None:
    tokenizer = _tokenizer()
    target = _model(1)

    reusing = SpeculativeAnswerGenerator(target, tokenizer, max_draft=4)
    first = ask(reusing)
    assert first.decode["cached_prompt_tokens"] == 0
    second = ask(reusing)
    assert second.text == first.text
    assert second.decode["cached_prompt_tokens"] == first.decode["prompt_tokens"] - 1
    cold = SpeculativeAnswerGenerator(target, tokenizer, max_draft=4, prefix_reuse=False)
    ask(cold)
    again = ask(cold)
    assert again.text == first.text and again.decode["cached_prompt_tokens"] == 0
