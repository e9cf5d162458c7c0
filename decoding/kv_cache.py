"""A model with its KV cache: forward new tokens, and roll the cache back to any shorter prefix.

A Llama-architecture model (SmolLM2 among them) runs through `decoding.lean_llama.LeanLlama`: the same
arithmetic as Transformers' forward, bit for bit, over a preallocated cache whose rollback only moves
its length. Any other model runs Transformers' forward over a `DynamicCache`; rollback is
`DynamicCache.crop`, which in transformers 5.x takes a negative count of tokens to drop, and an SDPA
model is switched to `decoding.attention`'s grouped-query attention, which forwards several new tokens
(a verification step) without repeating the cached keys and values per query head.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import DynamicCache, PreTrainedModel

from decoding.attention import grouped_query_attention, use_grouped_query_attention
from decoding.lean_llama import LeanLlama


class CachedModel:
    """Runs a causal LM incrementally; `tokens` always mirrors exactly what the cache holds."""

    def __init__(
        self, model: PreTrainedModel, *, lean: bool = True, pack_rows: tuple[int, ...] | None = None
    ) -> None:
        """`lean=False` keeps Transformers' forward even for a model `LeanLlama` supports;
        `pack_rows` goes to `LeanLlama` (None: its default)."""
        self.model = model
        use_grouped_query_attention(model)
        self.device = next(model.parameters()).device
        self.tokens: list[int] = []
        self.lean = LeanLlama(model, pack_rows=pack_rows) if lean and LeanLlama.supports(model) else None
        self.cache = DynamicCache(config=model.config)

    @property
    def length(self) -> int:
        return len(self.tokens)

    def use_kernels(self, kernels: Sequence[str] | None, prefill_kernel: str | None = None) -> None:
        """Compute blocks of k+1 rows with `kernels[k]` and prefills with `prefill_kernel` (a measured
        cost curve's choices); None, or a model on Transformers' own forward, keeps the defaults."""
        if self.lean is None:
            return
        for k, kernel in enumerate(kernels or ()):
            self.lean.set_kernel(k + 1, kernel)
        if prefill_kernel is not None:
            self.lean.set_prefill_kernel(prefill_kernel)

    def reset(self) -> None:
        self.tokens = []
        if self.lean is not None:
            self.lean.reset()
        else:
            self.cache = DynamicCache(config=self.model.config)

    def key_values(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each layer's cached keys and values, (batch, key/value heads, length, head dim)."""
        if self.lean is not None:
            return self.lean.key_values()
        layers: Any = self.cache.layers
        return [(layer.keys, layer.values) for layer in layers]

    def crop(self, length: int) -> None:
        """Forget every cached position at or after `length`."""
        if length < 0 or length > self.length:
            raise ValueError(f"cannot crop a cache of {self.length} tokens to {length}")
        drop = self.length - length
        if drop:
            if self.lean is not None:
                self.lean.crop(length)
            else:
                self.cache.crop(-drop)
            del self.tokens[length:]

    @torch.inference_mode()
    def forward(self, tokens: list[int], logits_to_keep: int = 0) -> torch.Tensor:
        """Append `tokens` to the cache; logits (rows = positions) for the last `logits_to_keep` (0 = all).

        Computing the LM head only for the rows that will be read saves most of a prefill's head cost.
        """
        return self._forward(tokens, logits_to_keep, features=False)[0]

    @torch.inference_mode()
    def forward_features(
        self, tokens: list[int], logits_to_keep: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Like `forward`, plus the model's features of every new token: its last hidden state after
        the final norm (rows = positions), the vector its LM head reads."""
        logits, features = self._forward(tokens, logits_to_keep, features=True)
        assert features is not None
        return logits, features

    @property
    def supports_tree(self) -> bool:
        """Whether `forward_tree` can verify a draft tree (the lean forward only)."""
        return self.lean is not None

    @torch.inference_mode()
    def forward_tree(
        self, tokens: list[int], parents: list[int], *, features: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Forward rows that form a tree (`decoding.draft_tree`): logits of every row and, with
        `features`, their features. Follow with `keep` to leave only the accepted path cached."""
        if self.lean is None:
            raise ValueError("tree verification needs the lean forward; this model runs Transformers' own")
        computed = self.lean.forward(tokens, 0, features=features, parents=parents)
        self.tokens.extend(tokens)
        return computed

    @torch.inference_mode()
    def keep(self, start: int, rows: list[int]) -> None:
        """After a tree forward from `start` cached tokens: keep only `rows` of it, in order."""
        if self.lean is None:
            raise ValueError("tree verification needs the lean forward; this model runs Transformers' own")
        self.lean.keep(start, rows)
        self.tokens[start:] = [self.tokens[start + row] for row in rows]

    def _forward(
        self, tokens: list[int], logits_to_keep: int, *, features: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if not tokens:
            raise ValueError("forward needs at least one token")
        if self.lean is not None:
            computed = self.lean.forward(tokens, logits_to_keep, features=features)
            self.tokens.extend(tokens)
            return computed
        input_ids = torch.tensor([tokens], dtype=torch.long, device=self.device)
        try:
            with grouped_query_attention():
                output = self.model(
                    input_ids=input_ids,
                    cache=self.cache,
                    use_cache=True,
                    logits_to_keep=logits_to_keep,
                    output_hidden_states=features,
                )
        except BaseException:
            # Some layers may have cached the new tokens and others not: start again from nothing
            # rather than let a later request reuse a cache that no longer matches `tokens`.
            self.reset()
            raise
        self.tokens.extend(tokens)
        logits: torch.Tensor = output.logits[0]
        return logits, (output.hidden_states[-1][0] if features else None)

    def common_prefix(self, context: list[int]) -> int:
        """How many leading tokens of `context` the cache already holds."""
        limit = min(len(context), self.length)
        if self.tokens[:limit] == context[:limit]:
            return limit
        for index in range(limit):
            if self.tokens[index] != context[index]:
                return index
        return limit

    def sync(self, context: list[int]) -> torch.Tensor:
        """Make the cache hold exactly `context` and return the logits after its last token.

        Reuses the longest cached prefix; at least the last token is recomputed to get its logits.
        """
        if not context:
            raise ValueError("cannot sync to an empty context")
        keep = min(self.common_prefix(context), len(context) - 1)
        self.crop(keep)
        return self.forward(context[keep:], logits_to_keep=1)[-1]
