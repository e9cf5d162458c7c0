"""`LeanLlama` computes what Transformers' Llama forward computes, bit for bit, over its own cache."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

from decoding.kv_cache import CachedModel
from decoding.lean_llama import (
    PACK_ROWS,
    LeanLlama,
    can_pack,
    can_use_onednn,
    native_panels,
    onednn_weight,
    packed_weight,
)
from decoding.native_kernel import native_kernel, unavailable_reason
from decoding.speculative import DecodeConfig, SpeculativeDecoder, plain_generate

from .conftest import ScriptedDrafter, character_tokenizer, tiny_config, tiny_model

# Prefill, single steps, a verification block, a rollback, then more steps past the rollback point.
SCRIPT: list[tuple[str, list[int] | int]] = [
    ("forward", [0, 2, 3, 4, 5, 6, 7]),
    ("forward", [8]),
    ("forward", [9]),
    ("forward", [10, 11, 12, 13, 14]),
    ("crop", 10),
    ("forward", [3, 4]),
    ("forward", [5]),
    ("crop", 2),
    ("forward", [6, 7, 8]),
]


def run_script(cached: CachedModel, features: bool = False) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    outputs: list[tuple[torch.Tensor, torch.Tensor | None]] = []
    for action, argument in SCRIPT:
        if action == "crop":
            assert isinstance(argument, int)
            cached.crop(argument)
        else:
            assert isinstance(argument, list)
            if features:
                outputs.append(cached.forward_features(argument))
            else:
                outputs.append((cached.forward(argument), None))
    return outputs


def float32_model(seed: int) -> LlamaForCausalLM:
    return tiny_model(seed, vocab_size=16).to(torch.float32)


@pytest.mark.parametrize(
    "make", [lambda: tiny_model(3), lambda: float32_model(4)], ids=["float64", "float32"]
)
def test_logits_and_features_equal_transformers_bit_for_bit(make) -> None:  # type: ignore[no-untyped-def]
    model = make()
    # Stock kernels only: packed weights (float32, 4-16 rows) sum in another order, tested below.
    lean = CachedModel(model, pack_rows=())
    reference = CachedModel(model, lean=False)
    assert lean.lean is not None and reference.lean is None
    for (logits, features), (expected_logits, expected_features) in zip(
        run_script(lean, features=True), run_script(reference, features=True), strict=True
    ):
        assert logits.dtype == expected_logits.dtype
        assert torch.equal(logits, expected_logits)
        assert features is not None and expected_features is not None
        assert torch.equal(features, expected_features)
    assert lean.tokens == reference.tokens
    for (keys, values), (expected_keys, expected_values) in zip(
        lean.key_values(), reference.key_values(), strict=True
    ):
        assert torch.equal(keys, expected_keys)
        assert torch.equal(values, expected_values)


def test_logits_to_keep_returns_the_last_rows() -> None:
    model = tiny_model(5)
    cached = CachedModel(model)
    everything = cached.forward([0, 2, 3, 4, 5])
    cached.crop(0)
    last_two = cached.forward([0, 2, 3, 4, 5], logits_to_keep=2)
    assert last_two.shape == (2, 16)
    # Two rows and five rows of the LM head may sum in another order: equal to rounding.
    assert torch.allclose(last_two, everything[-2:], atol=1e-12, rtol=0)


def test_the_cache_grows_past_its_initial_capacity() -> None:
    model = tiny_model(6)
    lean = LeanLlama(model, capacity=3, pack_rows=())
    reference = CachedModel(model, lean=False)
    tokens = [0, *range(2, 16), *range(2, 12)]
    for start in range(0, len(tokens), 4):
        chunk = tokens[start : start + 4]
        logits, _ = lean.forward(chunk)
        assert torch.equal(logits, reference.forward(chunk))
    assert lean.length == len(tokens)
    assert lean.key_values()[0][0].shape == (1, 2, len(tokens), 8)


def test_crop_rejects_lengths_it_does_not_hold_and_forward_needs_a_token() -> None:
    lean = LeanLlama(tiny_model(7))
    lean.forward([0, 2, 3])
    with pytest.raises(ValueError, match="cannot crop a cache of 3 tokens to 4"):
        lean.crop(4)
    with pytest.raises(ValueError, match="at least one token"):
        lean.forward([])
    lean.reset()
    assert lean.length == 0


# The tiny Llama's dimensions, for a model of another architecture with the same shape.
_TINY_SHAPE = {
    name: getattr(tiny_config(), name)
    for name in (
        "vocab_size",
        "hidden_size",
        "intermediate_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
    )
}


def llama(**changes: object) -> LlamaForCausalLM:
    config = tiny_config()
    for name, value in changes.items():
        setattr(config, name, value)
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize(
    ("model", "why"),
    [
        (lambda: llama(attention_bias=True), "biased projections"),
        (lambda: llama(mlp_bias=True), "biased MLP"),
        (lambda: llama(hidden_act="gelu"), "another activation"),
        (
            lambda: LlamaForCausalLM(
                LlamaConfig(
                    **{
                        **tiny_config().to_dict(),
                        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
                    }
                )
            ).eval(),
            "scaled rotary embeddings",
        ),
        (
            lambda: LlamaForCausalLM._from_config(tiny_config(), attn_implementation="eager").eval(),
            "eager attention",
        ),
        (
            lambda: MistralForCausalLM(MistralConfig(**_TINY_SHAPE)).eval(),
            "another architecture",
        ),
    ],
    ids=["attention-bias", "mlp-bias", "gelu", "linear-rope", "eager", "mistral"],
)
def test_models_it_would_not_reproduce_keep_transformers_forward(model, why: str) -> None:  # type: ignore[no-untyped-def]
    built = model()
    assert not LeanLlama.supports(built), why
    with pytest.raises(ValueError, match="not a Llama model"):
        LeanLlama(built)
    cached = CachedModel(built)
    assert cached.lean is None
    assert cached.forward([0, 2, 3]).shape == (3, 16)


def test_the_tiny_llama_is_supported() -> None:
    assert LeanLlama.supports(tiny_model(8))


needs_mkl = pytest.mark.skipif(
    not can_pack(float32_model(0)), reason="this torch has no MKL packed GEMM for float32 CPU weights"
)
needs_onednn = pytest.mark.skipif(
    not can_use_onednn(float32_model(0)), reason="this torch has no oneDNN linear for float32 CPU weights"
)
needs_native = pytest.mark.skipif(
    native_kernel() is None, reason=f"no native few-row kernel here: {unavailable_reason()}"
)


@needs_mkl
def test_packed_weights_serve_verification_blocks_with_float32_rounding_only() -> None:
    model = float32_model(9)
    packed = LeanLlama(model)
    stock = LeanLlama(model, pack_rows=())
    assert packed.pack_rows == PACK_ROWS == (8, 16)
    prompt = [0, *range(2, 16), *range(2, 10)]
    assert torch.equal(packed.forward(prompt)[0], stock.forward(prompt)[0])
    for rows in range(1, 19):
        block = [2 + (index * 5 + rows) % 14 for index in range(rows)]
        logits, _ = packed.forward(block)
        expected, _ = stock.forward(block)
        if rows < 4 or rows > 16:
            assert torch.equal(logits, expected), rows  # the stock kernel either way
        else:
            assert torch.allclose(logits, expected, atol=1e-5, rtol=1e-5), rows
            assert torch.equal(logits.argmax(-1), expected.argmax(-1)), rows
        packed.crop(len(prompt))
        stock.crop(len(prompt))


@needs_mkl
def test_packed_copies_are_made_once_per_weight_and_row_count() -> None:
    model = float32_model(10)
    first = LeanLlama(model)
    second = LeanLlama(model)
    assert first._packs == {}  # nothing packed until a block runs packed
    for lean in (first, second):
        lean.forward([0, 2, 3])
        lean.forward([4, 5, 6, 7, 8])  # five rows: the copy packed for 8
    assert set(first._packs) == {8}
    weight = model.model.layers[0].mlp.gate_proj.weight
    assert packed_weight(weight, 8) is packed_weight(weight, 8)
    assert first._packs[8][id(weight)] is second._packs[8][id(weight)]
    assert packed_weight(weight, 8) is not packed_weight(weight, 16)
    first.drop_copies("packed")
    assert first._packs == {}
    assert second._packs[8][id(weight)] is not packed_weight(weight, 8)  # the shared one was forgotten


def test_only_float32_cpu_weights_are_packed() -> None:
    model = tiny_model(11)  # float64
    assert not can_pack(model)
    assert LeanLlama(model).pack_rows == ()
    with pytest.raises(ValueError, match="only float32 CPU weights"):
        LeanLlama(model, pack_rows=(8,))


@pytest.mark.parametrize(
    "kernel",
    [
        pytest.param("packed", marks=needs_mkl),
        "transposed",
        pytest.param("onednn", marks=needs_onednn),
    ],
)
@pytest.mark.parametrize("draft_length", [1, 3, 7, 12])
def test_speculative_greedy_equals_plain_through_every_verification_kernel(
    draft_length: int, kernel: str
) -> None:
    # float32 with a sharp head: other kernels round differently from one-row steps, but far from ties.
    model = tiny_model(seed=1, scale=8.0).to(torch.float32)
    tokenizer = character_tokenizer()
    prompt = [0, 2, 3, 4, 2, 3, 4]
    plain = plain_generate(model, tokenizer, prompt, 40)
    drafter = ScriptedDrafter(prompt + plain.token_ids, 16, wrong_every=4)
    decoder = SpeculativeDecoder(model, tokenizer, drafter, DecodeConfig(draft_length=draft_length))
    assert decoder.target.lean is not None
    if kernel == "packed":  # the default for 4-16 rows
        assert decoder.target.lean.pack_rows == PACK_ROWS
    else:
        decoder.target.use_kernels(["stock", *[kernel] * 15])
    assert set(decoder.target.lean.kernels.values()) == {kernel}
    result = decoder.generate(prompt, 40)
    assert result.token_ids == plain.token_ids
    assert result.stats.accepted > 0


@needs_onednn
def test_onednn_copies_are_made_when_first_used_and_can_be_dropped() -> None:
    model = float32_model(18)
    lean = LeanLlama(model, pack_rows=())
    weight = model.model.layers[0].self_attn.q_proj.weight
    lean.set_kernel(5, "onednn")
    copy = onednn_weight(weight)
    assert onednn_weight(weight) is copy  # one shared copy per weight
    assert lean._onednn[id(weight)] is copy
    lean.drop_copies("onednn")
    assert lean._onednn == {}
    assert onednn_weight(weight) is not copy  # made anew


def test_prefills_keep_the_stock_kernel_whatever_their_row_count_takes_in_verification() -> None:
    model = float32_model(19)
    chosen = LeanLlama(model, pack_rows=())
    stock = LeanLlama(model, pack_rows=())
    chosen.set_kernel(6, "transposed")
    prompt = [0, 2, 3, 4, 5, 6]
    # A prefill wants its last row's logits only: stock, bit for bit.
    assert torch.equal(
        chosen.forward(prompt, logits_to_keep=1)[0], stock.forward(prompt, logits_to_keep=1)[0]
    )
    # The same row count as a verification block (every row's logits) takes the chosen kernel.
    block = [7, 8, 9, 10, 11, 12]
    logits, _ = chosen.forward(block)
    expected, _ = stock.forward(block)
    assert torch.allclose(logits, expected, atol=1e-5, rtol=1e-5)


@needs_onednn
def test_a_prefill_can_take_onednn_and_decoders_on_it_agree() -> None:
    model = tiny_model(seed=1, scale=8.0).to(torch.float32)  # sharp: far from ties
    chosen = LeanLlama(model, pack_rows=())
    stock = LeanLlama(model, pack_rows=())
    native = ("native",) if native_kernel() is not None else ()
    assert chosen.prefill_choices() == ("stock", "onednn", *native)
    chosen.set_prefill_kernel("onednn")
    assert chosen.prefill_kernel == "onednn" and chosen._onednn  # its copies are made
    prompt = [0, 2, 3, 4, 2, 3, 4, 5, 6, 7, 8]
    got = chosen.forward(prompt, logits_to_keep=1)[0]
    expected = stock.forward(prompt, logits_to_keep=1)[0]
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(got.argmax(-1), expected.argmax(-1))
    # The cache the oneDNN prefill wrote serves the next step as the stock one's does.
    step, _ = chosen.forward([5])
    stock_step, _ = stock.forward([5])
    assert torch.allclose(step, stock_step, atol=1e-5, rtol=1e-5)

    # A plain decoder and a speculative one whose prefills run on oneDNN agree with each other.
    tokenizer = character_tokenizer()
    plain = SpeculativeDecoder(model, tokenizer)
    plain.target.use_kernels(None, "onednn")
    assert plain.target.lean is not None and plain.target.lean.prefill_kernel == "onednn"
    reference = plain.generate(prompt, 40)
    drafter = ScriptedDrafter(prompt + reference.token_ids, 16, wrong_every=4)
    decoder = SpeculativeDecoder(model, tokenizer, drafter, DecodeConfig(draft_length=5))
    decoder.target.use_kernels(None, "onednn")
    result = decoder.generate(prompt, 40)
    assert result.token_ids == reference.token_ids
    assert result.stats.accepted > 0


@needs_native
def test_a_prefill_can_take_the_native_layers_and_decoders_on_it_agree() -> None:
    model = tiny_model(seed=1, scale=8.0).to(torch.float32)  # sharp: far from ties
    chosen = _all_native(model)
    stock = LeanLlama(model, pack_rows=())
    assert "native" in chosen.prefill_choices()
    chosen.set_prefill_kernel("native")
    # 70 rows: attention tasks of at most 16 rows, products in two passes of up to 64 rows.
    prompt = [0, *([2, 3, 4, 5, 6, 7, 8, 9, 10, 11] * 7)][:70]
    got = chosen.forward(prompt, logits_to_keep=1)[0]
    expected = stock.forward(prompt, logits_to_keep=1)[0]
    assert not torch.equal(got, expected)  # the C layers did run
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(got.argmax(-1), expected.argmax(-1))
    # The cache the native prefill wrote serves the next steps as the stock one's does.
    for token in (5, 6, 7):
        step, _ = chosen.forward([token])
        stock_step, _ = stock.forward([token])
        torch.testing.assert_close(step, stock_step, atol=1e-5, rtol=1e-5)

    tokenizer = character_tokenizer()
    plain = SpeculativeDecoder(model, tokenizer)
    plain.target.use_kernels(["native"] * 9, "native")
    reference = plain.generate(prompt, 40)
    stock_reference = SpeculativeDecoder(model, tokenizer).generate(prompt, 40)
    assert reference.token_ids == stock_reference.token_ids
    drafter = ScriptedDrafter(prompt + reference.token_ids, 16, wrong_every=4)
    decoder = SpeculativeDecoder(model, tokenizer, drafter, DecodeConfig(draft_length=5))
    decoder.target.use_kernels(["native"] * 9, "native")
    result = decoder.generate(prompt, 40)
    assert result.token_ids == reference.token_ids
    assert result.stats.accepted > 0


def test_a_prefill_kernel_must_be_one_the_weights_can_take() -> None:
    lean = LeanLlama(tiny_model(21))  # float64: no oneDNN
    assert lean.prefill_choices() == ("stock",)
    with pytest.raises(ValueError, match="no 'onednn' kernel for prefills"):
        lean.set_prefill_kernel("onednn")
    with pytest.raises(ValueError, match="no 'native' kernel for prefills"):
        lean.set_prefill_kernel("native")
    assert lean.prefill_kernel == "stock"


@needs_onednn
def test_dropping_the_onednn_copies_sends_prefills_back_to_the_stock_kernel() -> None:
    lean = LeanLlama(float32_model(22), pack_rows=())
    lean.set_prefill_kernel("onednn")
    lean.drop_copies("onednn")
    assert lean.prefill_kernel == "stock" and lean._onednn == {}
    logits, _ = lean.forward([0, 2, 3, 4], logits_to_keep=1)
    assert logits.shape[0] == 1


@pytest.mark.parametrize(
    ("kernel", "make"),
    [
        ("transposed", lambda: tiny_model(12)),
        ("transposed", lambda: float32_model(13)),
        pytest.param("onednn", lambda: float32_model(16), marks=needs_onednn),
        pytest.param("native", lambda: float32_model(18), marks=needs_native),
    ],
    ids=["transposed-float64", "transposed-float32", "onednn-float32", "native-float32"],
)
def test_other_kernels_agree_with_the_stock_one_to_rounding(kernel: str, make: Any) -> None:
    model = make()
    chosen = LeanLlama(model, pack_rows=())
    stock = LeanLlama(model, pack_rows=())
    for rows in range(2, 17):
        chosen.set_kernel(rows, kernel)
    assert chosen.kernels == dict.fromkeys(range(2, 17), kernel)
    prompt = [0, *range(2, 16), *range(2, 10)]
    # Prefills and single rows keep the stock kernel: bit for bit.
    assert torch.equal(chosen.forward(prompt)[0], stock.forward(prompt)[0])
    assert torch.equal(chosen.forward([5])[0], stock.forward([5])[0])
    tolerance = 1e-12 if model.dtype == torch.float64 else 1e-5
    for rows in range(2, 19):
        block = [2 + (index * 3 + rows) % 14 for index in range(rows)]
        logits, _ = chosen.forward(block)
        expected, _ = stock.forward(block)
        assert torch.allclose(logits, expected, atol=tolerance, rtol=tolerance), rows
        assert torch.equal(logits.argmax(-1), expected.argmax(-1)), rows
        chosen.crop(len(prompt) + 1)
        stock.crop(len(prompt) + 1)


def test_kernels_are_chosen_per_block_size_within_what_each_size_offers() -> None:
    lean = LeanLlama(tiny_model(14))  # float64: nothing to pack
    assert lean.kernel_choices(1) == ("stock",)
    assert lean.kernel_choices(33) == ("stock",)
    assert (
        lean.kernel_choices(2) == lean.kernel_choices(8) == lean.kernel_choices(32) == ("stock", "transposed")
    )
    with pytest.raises(ValueError, match="no 'transposed' kernel for 1-row blocks"):
        lean.set_kernel(1, "transposed")
    with pytest.raises(ValueError, match="no 'packed' kernel for 8-row blocks"):
        lean.set_kernel(8, "packed")
    lean.set_kernel(3, "transposed")
    lean.set_kernel(3, "stock")
    assert lean.kernels == {}


@needs_native
def test_one_row_can_take_the_native_kernel_and_then_decodes_as_its_blocks_verify() -> None:
    model = tiny_model(seed=1, scale=8.0).to(torch.float32)  # sharp: far from ties
    assert LeanLlama(model).kernel_choices(1) == ("stock", "native")
    with pytest.raises(ValueError, match="no 'transposed' kernel for 1-row blocks"):
        LeanLlama(model).set_kernel(1, "transposed")
    chosen = LeanLlama(model, pack_rows=())
    stock = LeanLlama(model, pack_rows=())
    chosen.set_kernel(1, "native")
    prompt = [0, 2, 3, 4, 2, 3, 4]
    # The prefill keeps the stock kernel; the one-row step after it takes the native one.
    assert torch.equal(
        chosen.forward(prompt, logits_to_keep=1)[0], stock.forward(prompt, logits_to_keep=1)[0]
    )
    native_step, _ = chosen.forward([5])
    stock_step, _ = stock.forward([5])
    assert not torch.equal(native_step, stock_step)  # another summation order: the kernel did run
    assert torch.allclose(native_step, stock_step, atol=1e-5, rtol=1e-5)

    # A plain decoder and a speculative one on the native kernel for every row count agree.
    tokenizer = character_tokenizer()
    kernels = ["native"] * 16
    plain = SpeculativeDecoder(model, tokenizer)
    plain.target.use_kernels(kernels)
    assert plain.target.lean is not None and plain.target.lean.kernels[1] == "native"
    expected = plain.generate(prompt, 40)
    assert expected.token_ids == plain_generate(model, tokenizer, prompt, 40).token_ids
    drafter = ScriptedDrafter(prompt + expected.token_ids, 16, wrong_every=4)
    decoder = SpeculativeDecoder(model, tokenizer, drafter, DecodeConfig(draft_length=5))
    decoder.target.use_kernels(kernels)
    result = decoder.generate(prompt, 40)
    assert result.token_ids == expected.token_ids
    assert result.stats.accepted > 0


def _all_native(model: LlamaForCausalLM, **options: Any) -> LeanLlama:
    lean = LeanLlama(model, pack_rows=(), **options)
    for rows in range(1, 33):
        lean.set_kernel(rows, "native")
    return lean


@needs_native
def test_native_layers_compute_what_the_torch_operations_compute() -> None:
    model = float32_model(21)
    layers = _all_native(model)
    products_only = _all_native(model, native_layers=False)
    assert layers.runs_native_layers and not products_only.runs_native_layers
    prompt = [0, *range(2, 16), *range(2, 12)]
    # A prefill keeps torch's operations either way.
    assert torch.equal(
        layers.forward(prompt, logits_to_keep=1)[0], products_only.forward(prompt, logits_to_keep=1)[0]
    )
    for block in ([5], [6, 7], [3, 9, 4, 11, 2, 8, 8, 13, 14], list(range(2, 16))):
        logits, features = layers.forward(block, features=True)
        expected, expected_features = products_only.forward(block, features=True)
        assert features is not None and expected_features is not None
        assert not torch.equal(logits, expected)  # its own exp, norm and sums: the C layers did run
        torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(features, expected_features, rtol=1e-5, atol=1e-5)
        assert torch.equal(logits.argmax(-1), expected.argmax(-1))
    # Keys and values written to the cache are the same ones.
    for (keys, values), (expected_keys, expected_values) in zip(
        layers.key_values(), products_only.key_values(), strict=True
    ):
        torch.testing.assert_close(keys, expected_keys, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(values, expected_values, rtol=1e-5, atol=1e-5)


@needs_native
def test_a_row_of_a_native_block_equals_that_row_decoded_alone_bit_for_bit() -> None:
    lean = _all_native(float32_model(22), capacity=8)  # grows past its first capacity on the way
    lean.forward([0, 2, 3, 4, 5, 6, 7, 8, 9, 10], logits_to_keep=1)
    _assert_rows_equal_rows_alone(lean, [3, 9, 4, 11, 2, 12], [-1, 0, 0, 1, -1, 4])


def _assert_rows_equal_rows_alone(lean: LeanLlama, block: list[int], parents: list[int]) -> None:
    """Each row of `block` decoded as a chain equals that row decoded alone, and each row of it
    decoded as a tree (`parents`) equals its path from the cache decoded as a chain, bit for bit.
    Leaves the cache as it found it."""
    start = lean.length
    chain, _ = lean.forward(block)
    lean.crop(start)
    alone = torch.cat([lean.forward([token])[0] for token in block])
    assert torch.equal(chain, alone)
    lean.crop(start)
    tree, _ = lean.forward(block, parents=parents)
    for row in range(len(block)):
        path = [row]
        while parents[path[0]] >= 0:
            path.insert(0, parents[path[0]])
        lean.crop(start)
        decoded, _ = lean.forward([block[index] for index in path])
        assert torch.equal(decoded[-1], tree[row]), row
    lean.crop(start)


@needs_native
def test_heads_of_64_over_a_long_cache_keep_each_row_of_a_split_block_bit_for_bit() -> None:
    # Heads of 64 take the C attention's constant-size path; a 75-token cache spans three blocks of
    # cached keys; 11 rows over 2 key/value heads are split between attention tasks; 80 inputs to
    # the down product and a vocabulary of 50 leave partly filled panels.
    config = tiny_config(vocab_size=50, context=128)
    config.hidden_size, config.num_attention_heads, config.num_key_value_heads = 256, 4, 2
    config.head_dim, config.intermediate_size = 64, 80
    torch.manual_seed(24)
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    lean = _all_native(model)
    products_only = _all_native(model, native_layers=False)
    assert lean.runs_native_layers
    generator = torch.Generator().manual_seed(24)
    prompt = torch.randint(2, 50, (75,), generator=generator).tolist()
    block = torch.randint(2, 50, (11,), generator=generator).tolist()
    for cached in (lean, products_only):
        cached.forward(prompt, logits_to_keep=1)
    start = lean.length
    chain, _ = lean.forward(block)
    expected, _ = products_only.forward(block)
    assert not torch.equal(chain, expected)  # the C layers did run
    torch.testing.assert_close(chain, expected, rtol=1e-5, atol=1e-5)
    lean.crop(start)
    _assert_rows_equal_rows_alone(lean, block, [-1, 0, 0, 1, 3, -1, 5, 5, 2, 8, 4])


@needs_native
def test_native_panels_are_made_once_per_weight_and_dropped_with_their_kernel() -> None:
    model = float32_model(25)
    first, second = LeanLlama(model, pack_rows=()), LeanLlama(model, pack_rows=())
    weight = model.model.layers[0].mlp.gate_proj.weight
    kernel = native_kernel()
    assert kernel is not None
    assert first._panels == {}  # nothing packed until a row count takes the native kernel
    first.set_kernel(2, "native")  # packed then, not at the first step on it
    assert id(weight) in first._panels and first._native_layers is not None
    second.set_prefill_kernel("native")
    assert first._panels[id(weight)] is second._panels[id(weight)] is native_panels(kernel, weight)
    for lean in (first, second):
        lean.forward([0, 2, 3, 4])
    before, _ = first.forward([5, 6])
    first.crop(4)
    first.drop_copies("native")
    assert first._panels == {}
    assert native_panels(kernel, weight) is not second._panels[id(weight)]  # the shared one was forgotten
    again, _ = first.forward([5, 6])  # packed anew
    assert torch.equal(again, before)


@needs_native
def test_a_head_size_the_c_layers_do_not_take_keeps_torch_operations() -> None:
    config = tiny_config(vocab_size=16)
    config.hidden_size, config.head_dim = 24, 6  # 4 heads of 6
    torch.manual_seed(23)
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    lean = _all_native(model)
    assert not lean.runs_native_layers
    reference = CachedModel(model, lean=False)
    prompt = [0, 2, 3, 4, 5]
    lean.forward(prompt, logits_to_keep=1)
    reference.forward(prompt)
    logits, _ = lean.forward([6, 7, 8])
    torch.testing.assert_close(logits, reference.forward([6, 7, 8]), rtol=1e-5, atol=1e-5)


@needs_native
def test_weights_that_are_not_contiguous_get_no_native_kernel() -> None:
    model = float32_model(20)
    assert "native" in LeanLlama(model).kernel_choices(1)
    layer = model.model.layers[0].mlp.up_proj
    layer.weight = torch.nn.Parameter(layer.weight.detach().T.contiguous().T)  # same values, strided
    assert not layer.weight.is_contiguous()
    assert LeanLlama(model).kernel_choices(1) == ("stock",)
    assert "native" not in LeanLlama(model).kernel_choices(4)


@needs_mkl
@needs_onednn
def test_packed_row_counts_choose_between_packed_transposed_and_onednn() -> None:
    lean = LeanLlama(float32_model(15))
    native = ("native",) if native_kernel() is not None else ()
    assert lean.kernel_choices(3) == ("stock", "transposed", "onednn", *native)
    assert lean.kernel_choices(4) == lean.kernel_choices(16) == ("packed", "transposed", "onednn", *native)
    assert lean.kernels[4] == "packed"
    lean.set_kernel(4, "transposed")
    assert lean.kernels[4] == "transposed"


def test_float64_weights_have_no_onednn_or_native_kernel() -> None:
    assert not can_use_onednn(tiny_model(17))
    assert "onednn" not in LeanLlama(tiny_model(17)).kernel_choices(8)
    assert "native" not in LeanLlama(tiny_model(17)).kernel_choices(8)
