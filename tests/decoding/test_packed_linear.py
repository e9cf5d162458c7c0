"""Prepacked oneDNN linear layers: same float32 results as nn.Linear, and models that cannot be packed stay as they are."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from transformers import LlamaForCausalLM

from decoding.kv_cache import CachedModel
from decoding.packed_linear import PackedLinear, can_prepack, is_prepacked, prepack_linear_layers

from .conftest import tiny_config

pytestmark = pytest.mark.skipif(
    not torch.backends.mkldnn.is_available(), reason="this torch build has no oneDNN, so nothing is packed"
)


@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
@pytest.mark.parametrize("shape", [(1, 24), (3, 24), (17, 24), (2, 5, 24), (1, 1, 24)], ids=str)
def test_packed_linear_matches_nn_linear(bias: bool, shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    linear = nn.Linear(24, 40, bias=bias).eval()
    packed = PackedLinear(linear)
    inputs = torch.randn(*shape)
    with torch.inference_mode():
        expected = linear(inputs)
        actual = packed(inputs)
    assert actual.shape == expected.shape
    assert actual.dtype == torch.float32
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def test_inputs_of_max_rows_or_more_take_the_stock_kernel_exactly() -> None:
    torch.manual_seed(1)
    linear = nn.Linear(24, 40).eval()
    packed = PackedLinear(linear, max_rows=8)
    assert packed.weight is linear.weight and packed.bias is linear.bias
    with torch.inference_mode():
        for rows in (8, 9, 40):
            inputs = torch.randn(1, rows, 24)
            assert torch.equal(packed(inputs), linear(inputs)), rows


def test_packed_linear_refuses_other_dtypes_and_wrong_widths() -> None:
    with pytest.raises(ValueError, match="float32"):
        PackedLinear(nn.Linear(4, 4).to(torch.float64))
    packed = PackedLinear(nn.Linear(4, 3))
    with pytest.raises(ValueError, match="expected 4 input features, got 5"):
        packed(torch.zeros(2, 5))


def _tiny_float32_llama(seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    return LlamaForCausalLM(tiny_config()).to(torch.float32).eval()


def test_prepacked_model_gives_the_stock_logits_prefill_and_incremental() -> None:
    stock = _tiny_float32_llama(3)
    packed = _tiny_float32_llama(3)
    layers = 7 * stock.config.num_hidden_layers + 1  # q, k, v, o, gate, up, down per layer, and the head
    assert prepack_linear_layers(packed) == layers
    assert is_prepacked(packed) and not is_prepacked(stock)
    tokens = [0, 5, 9, 2, 14, 3, 3, 7]
    stock_cached, packed_cached = CachedModel(stock), CachedModel(packed)
    torch.testing.assert_close(
        packed_cached.forward(tokens), stock_cached.forward(tokens), rtol=1e-4, atol=1e-4
    )
    # A verification-sized block after a cache rollback, as a speculative step runs it.
    stock_cached.crop(5)
    packed_cached.crop(5)
    torch.testing.assert_close(
        packed_cached.forward([4, 4, 8, 11]), stock_cached.forward([4, 4, 8, 11]), rtol=1e-4, atol=1e-4
    )


def test_batched_verification_sees_the_sequential_logits_on_a_packed_model() -> None:
    model = _tiny_float32_llama(4)
    prepack_linear_layers(model)
    cached = CachedModel(model)
    cached.forward([0, 2, 3])
    block = [6, 7, 8, 9, 10]
    batched = cached.forward(block)
    cached.crop(3)
    sequential = torch.cat([cached.forward([token]) for token in block])
    torch.testing.assert_close(batched, sequential, rtol=1e-4, atol=1e-4)
    assert torch.equal(batched.argmax(-1), sequential.argmax(-1))


def test_models_that_cannot_be_packed_are_left_alone() -> None:
    double = _tiny_float32_llama(5).to(torch.float64)
    assert not can_prepack(double)
    assert prepack_linear_layers(double) == 0
    assert not is_prepacked(double)
    assert isinstance(double.lm_head, nn.Linear)


def test_a_single_row_takes_the_stock_kernel_exactly() -> None:
    """A plain decoding step must cost what it costs on stock layers: packing only serves verification."""
    torch.manual_seed(3)
    linear = nn.Linear(24, 40)
    packed = PackedLinear(linear)
    with torch.no_grad():
        for shape in ((1, 1, 24), (1, 24), (24,)):
            inputs = torch.randn(*shape)
            assert torch.equal(packed(inputs), linear(inputs)), shape
