"""Greedy continuations of many prompts at once, for training data (`decoding.train_head`).

Transformers' `generate` over a batch pays for a `DynamicCache` that concatenates every layer's keys
and values onto a new tensor on every step: at 32 rows of ~300 positions that is a copy of ~440 MB
per token on SmolLM2-135M, and on this project's 2-core machine a batch of 32 ran no faster per token
than a batch of 8. `greedy_batch` runs the same Llama arithmetic as `decoding.lean_llama` on the
model's own weights over a preallocated cache of `rows x (prompt + answer)` positions, left-padded,
so a step's cost is one matrix product per weight for all rows.

This is for making training text, not for serving: a row's logits come out of a many-row matrix
product, whose summation order differs from a one-row decode, so a near-tie can go the other way.
The decoder proper (`decoding.speculative`) is what keeps output exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional

from decoding.lean_llama import LeanLlama, _Layer, _rope_theta, can_pack, packed_weight


class _Weights:
    """The model's own weight tensors and shape, as `LeanLlama` reads them."""

    def __init__(self, model: nn.Module) -> None:
        if not LeanLlama.supports(model):
            raise ValueError(f"{type(model).__name__} is not a Llama model greedy_batch can run")
        config: Any = model.config  # type: ignore[union-attr]
        decoder: Any = model.model  # type: ignore[union-attr]
        self.layers = [_Layer(layer) for layer in decoder.layers]
        self.embedding: torch.Tensor = decoder.embed_tokens.weight
        self.final_norm: torch.Tensor = decoder.norm.weight
        head: Any = model.lm_head  # type: ignore[union-attr]
        self.lm_head: torch.Tensor = head.weight
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(config.num_key_value_heads)
        self.head_dim = int(
            getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        )
        self.epsilon = float(config.rms_norm_eps)
        theta = _rope_theta(config)
        assert theta is not None
        self.inverse_frequencies = 1.0 / (
            theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim)
        )

    def norm(self, hidden: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        hidden = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + self.epsilon)
        return weight * hidden.to(dtype)


def _rotate(states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = states.shape[-1] // 2
    return states * cos + torch.cat((-states[..., half:], states[..., :half]), dim=-1) * sin


@torch.inference_mode()
def greedy_batch(
    model: nn.Module,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos_token_id: int | None = None,
    on_step: Callable[[], None] | None = None,
) -> list[list[int]]:
    """Each prompt's greedy answer (up to `max_new_tokens`, ending at and including `eos_token_id`),
    all prompts decoded together in one batch."""
    if not prompts:
        return []
    if any(len(prompt) == 0 for prompt in prompts):
        raise ValueError("every prompt needs at least one token")
    if max_new_tokens < 1:
        return [[] for _ in prompts]
    weights = _Weights(model)
    device, dtype = weights.embedding.device, weights.embedding.dtype
    rows, width = len(prompts), max(len(prompt) for prompt in prompts)
    total = width + max_new_tokens
    pads = torch.tensor([width - len(prompt) for prompt in prompts], device=device)
    tokens = torch.zeros((rows, width), dtype=torch.long, device=device)
    for row, prompt in enumerate(prompts):
        tokens[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
    columns = torch.arange(total, device=device)
    # Key positions a row may attend to: its own prompt and answer, never the padding before it.
    valid = columns[None, :] >= pads[:, None]
    positions = (columns[None, :] - pads[:, None]).clamp(min=0)
    angles = positions.to(torch.float)[..., None] * weights.inverse_frequencies
    angles = torch.cat((angles, angles), dim=-1)
    cos_table, sin_table = angles.cos().to(dtype), angles.sin().to(dtype)
    cache_shape = (len(weights.layers), rows, weights.kv_heads, total, weights.head_dim)
    keys = torch.zeros(cache_shape, dtype=dtype, device=device)
    values = torch.zeros(cache_shape, dtype=dtype, device=device)

    # A step's products have `rows` input rows. MKL's stock float32 GEMM packs the weight again on
    # every call of 4 rows or more, which costs about as much as reading it; a copy packed once for
    # `rows` rows (`decoding.lean_llama.packed_weight`, shared with the decoder) skips that.
    packed = can_pack(model) and rows >= 4

    def linear(inputs: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        if not packed or inputs.shape[1] != 1:
            return functional.linear(inputs, weight)
        flat = inputs.reshape(rows, inputs.shape[-1])
        output: torch.Tensor = torch.ops.mkl._mkl_linear(
            flat, packed_weight(weight, rows), weight, None, rows
        )
        return output.view(rows, 1, weight.shape[0])

    def forward(ids: torch.Tensor, start: int) -> torch.Tensor:
        count = ids.shape[1]
        end = start + count
        hidden = functional.embedding(ids, weights.embedding)
        cos, sin = cos_table[:, None, start:end], sin_table[:, None, start:end]
        query_columns = columns[start:end, None]
        causal = columns[None, :end] <= query_columns
        # A padding row attends to itself, so no row's softmax is over nothing (which gives NaN).
        mask = ((valid[:, None, :end] & causal[None]) | (columns[None, :end] == query_columns)[None])[:, None]
        shape = (rows, count, -1, weights.head_dim)
        for index, layer in enumerate(weights.layers):
            normed = weights.norm(hidden, layer.attention_norm)
            query = _rotate(linear(normed, layer.q).view(shape).transpose(1, 2), cos, sin)
            key = _rotate(linear(normed, layer.k).view(shape).transpose(1, 2), cos, sin)
            keys[index, :, :, start:end] = key
            values[index, :, :, start:end] = linear(normed, layer.v).view(shape).transpose(1, 2)
            attended = functional.scaled_dot_product_attention(
                query,
                keys[index, :, :, :end],
                values[index, :, :, :end],
                attn_mask=mask,
                scale=weights.head_dim**-0.5,
                enable_gqa=weights.heads != weights.kv_heads,
            )
            hidden = hidden + linear(attended.transpose(1, 2).reshape(rows, count, -1), layer.o)
            normed = weights.norm(hidden, layer.mlp_norm)
            gated = functional.silu(linear(normed, layer.gate)) * linear(normed, layer.up)
            hidden = hidden + linear(gated, layer.down)
        last = weights.norm(hidden[:, -1:], weights.final_norm)
        return linear(last, weights.lm_head)[:, 0]

    answers: list[list[int]] = [[] for _ in prompts]
    finished = [False] * rows
    following = forward(tokens, 0).argmax(-1)
    for step in range(max_new_tokens):
        chosen = following.tolist()
        for row, token in enumerate(chosen):
            if not finished[row]:
                answers[row].append(int(token))
                finished[row] = eos_token_id is not None and token == eos_token_id
        if on_step is not None:
            on_step()
        if all(finished) or step == max_new_tokens - 1:
            break
        following = forward(following[:, None], width + step).argmax(-1)
    return answers
