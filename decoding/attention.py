"""Attention for verification steps: grouped-query attention over several new tokens without copying the cache.

Transformers' SDPA path handles a one-token step of a grouped-query model (SmolLM2: 9 query heads
sharing 3 key/value heads) by regrouping the query, but a step of several tokens with a mask (a
verification of k drafts against a KV cache) first repeats every cached key and value once per
query head: a copy of the whole cache in every layer on every verify step. PyTorch's
`scaled_dot_product_attention(..., enable_gqa=True)` reads the shared heads as they are; its output
equals the repeated-cache call's (tested bit for bit), only the copy is gone.

`use_grouped_query_attention(model)` switches a model that uses SDPA to `grouped_query_sdpa_forward`.
That function is Transformers' SDPA attention unchanged except inside `grouped_query_attention()`,
which `CachedModel.forward` enters: other users of the same model (Hugging Face `generate`, the
benchmark's baselines) run exactly what transformers runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

IMPLEMENTATION = "decoding_gqa_sdpa"

_ACTIVE: ContextVar[bool] = ContextVar("decoding_grouped_query_attention", default=False)


@contextmanager
def grouped_query_attention() -> Iterator[None]:
    """Within this block, switched models attend over several new tokens without repeating the cache."""
    token = _ACTIVE.set(True)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def takes_grouped_path(
    module: torch.nn.Module,
    query: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float,
    kwargs: dict[str, Any],
) -> bool:
    """Whether a call goes to `enable_gqa` SDPA; every other call is Transformers' own SDPA path."""
    return (
        _ACTIVE.get()
        and int(getattr(module, "num_key_value_groups", 1)) > 1
        and query.shape[2] > 1
        and attention_mask is not None
        and dropout == 0.0
        and kwargs.get("position_bias") is None
        and kwargs.get("softcap") is None
        and not kwargs.get("output_attentions", False)
    )


def grouped_query_sdpa_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    if not takes_grouped_path(module, query, attention_mask, dropout, kwargs):
        output, weights = sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout, scaling, is_causal, **kwargs
        )
        return output, weights
    output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, scale=scaling, enable_gqa=True
    )
    return output.transpose(1, 2).contiguous(), None


def use_grouped_query_attention(model: PreTrainedModel) -> bool:
    """Switch an SDPA `model` to `grouped_query_sdpa_forward` (idempotent); whether it uses it now."""
    implementation = getattr(model.config, "_attn_implementation", None)
    if implementation == IMPLEMENTATION:
        return True
    if implementation != "sdpa":
        return False
    AttentionInterface.register(IMPLEMENTATION, grouped_query_sdpa_forward)
    AttentionMaskInterface.register(IMPLEMENTATION, sdpa_mask)
    model.set_attn_implementation(IMPLEMENTATION)
    return True
