"""An incremental forward for Llama-architecture models, without Transformers' per-step machinery.

Decoding a token through `LlamaForCausalLM.__call__` pays for generic work that a decoder stepping one
sequence does not need: a `DynamicCache` that concatenates every layer's keys and values onto a new
tensor on every step (a copy of the whole cache per step), mask construction through the masking
interface, rotary embeddings recomputed per call, output dataclasses and hook dispatch. `LeanLlama`
runs the same arithmetic on the same weight tensors (no copy, no other precision):

- keys and values go into a preallocated cache (grown by doubling), written in place; rollback to a
  shorter prefix only moves the length;
- rotary cosines and sines come from a table computed once, the way Transformers computes them;
- each operation is the one Transformers' Llama layers run, in the same order and dtype (the RMS norm's
  float32 round trip included), so the logits equal Transformers' bit for bit on the same CPU
  (`tests/decoding/test_lean_llama.py`);
- a step of several rows (a verification) attends with `enable_gqa` over the shared key/value heads,
  as `decoding.attention` does for Transformers' path.

Verification steps of 4 to 16 rows also get packed weights. The stock float32 matrix product (MKL's
`sgemm`) packs the weight on every call from 4 rows on, which costs about as much as reading it: on
SmolLM2-135M a forward over 4 rows measured 1.7x one row, over 8 rows 2.0x. With float32 CPU weights
and MKL, `LeanLlama` packs each weight once per row count in `pack_rows` (MKL's packed GEMM; the copy
is made the first time a block runs packed, once per model, and shared) and pads a block of rows up to the next packed count: 8 rows then
measured 1.4x one row (docs/speculative-decoding.md, "Verify cost"). The arithmetic stays float32;
only the summation order inside the kernel differs, as it already does between the stock one-row and
many-row kernels.

Which kernel is fastest for a verification block of 2 to 32 rows depends on the CPU and its BLAS build, so each
row count's kernel can be set (`set_kernel`): `stock`, `packed` (4-16 rows), `transposed`, which
computes `(W @ x^T)^T`, the large weight as the left operand in its stored order, or `onednn`,
oneDNN's linear over a copy of the weights in its own layout (made the first time a row count takes
it, shared, about the size of the model's weights), or `native` (`decoding.native_kernel`, a C kernel
built on first use that reads a copy of the weights packed in panels once for every row of the block;
the copy is made the first time a row count takes it, shared, and as large as the weights; offered
where it builds and passes its self-test). On an AVX2-only CPU whose MKL took a slow path,
the stock kernel made two rows cost 2.0x one row, the transposed one 0.9x; over 9 rows the whole
forward cost 1.7x one row transposed and 1.4x with oneDNN.
`decoding.draft_length.measure_verify_cost` times every choice and the decoder takes the fastest.
A block whose products take the native kernel runs its whole layer stack in the kernel's C
(`lean_layers`: norms, rotations, attention, SiLU and residual adds as well), one call per step instead
of some forty torch operations per layer; the final norm and the LM head stay here.
One row (a plain decoding step) keeps the stock kernel unless a measured curve chose `native` for
it: on a 2-core AMD EPYC a one-row step of SmolLM2-135M took 21 ms native against 58 ms stock, so
the stock one-row step is the slowest forward per row there is. Prefills keep the stock kernel unless
a measured curve chose oneDNN's or the native C layers for them (`set_prefill_kernel`): on an AMD EPYC
with AVX-512, where MKL's products ran at less than half of oneDNN's speed, oneDNN halved the time to
the first token, and the C layers took about as long as oneDNN.
Without a curve (`CachedModel.use_kernels`) every row count and the prefill keep their defaults, and
a one-row step and a prefill stay equal to Transformers' bit for bit; by default two and three rows
do too.

`LeanLlama.supports(model)` says whether a model is one it reproduces exactly: a `LlamaForCausalLM`
with default rotary embeddings, SiLU MLP, no biases and SDPA attention; `CachedModel` uses Transformers'
own forward for every other model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional
from torch.utils.weak import WeakIdKeyDictionary
from transformers import LlamaForCausalLM

from decoding.draft_tree import row_depths, tree_mask
from decoding.native_kernel import CachePointers, LayerPointers, NativeKernel, Panels, native_kernel
from decoding.packed_linear import is_prepacked

_INITIAL_CAPACITY = 512
# Row counts with a packed copy of every weight (each copy is the size of the model's linear weights).
PACK_ROWS: tuple[int, ...] = (8, 16)
# Fewer rows than this take the stock kernel, which does not repack the weight below it.
PACK_MIN_ROWS = 4
# The kernels a linear layer can run with, and the most rows a block may take a non-stock one for.
KERNELS: tuple[str, ...] = ("stock", "transposed", "packed", "onednn", "native")
MAX_KERNEL_ROWS = 32
# The kernels a prefill (a block whose last rows' logits alone are wanted) can run with.
PREFILL_KERNELS: tuple[str, ...] = ("stock", "onednn", "native")

# Packed copies per weight tensor and row count, shared by every LeanLlama over the same weights.
_PACKED: WeakIdKeyDictionary = WeakIdKeyDictionary()
# oneDNN's copy of each weight tensor (one layout serves every row count), made when first needed.
_ONEDNN: WeakIdKeyDictionary = WeakIdKeyDictionary()
# The native kernel's panels of each weight tensor (decoding.native_kernel), made when first needed.
_PANELS: WeakIdKeyDictionary = WeakIdKeyDictionary()


def _float32_cpu(model: nn.Module) -> bool:
    parameter = next(model.parameters(), None)
    return parameter is not None and parameter.dtype == torch.float32 and parameter.device.type == "cpu"


def can_use_onednn(model: nn.Module) -> bool:
    """Whether `model`'s weights can go through oneDNN's linear: float32 on a CPU torch with oneDNN."""
    return (
        _float32_cpu(model)
        and torch.backends.mkldnn.is_available()  # type: ignore[no-untyped-call]
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
    )


def onednn_weight(weight: torch.Tensor) -> torch.Tensor:
    """`weight` in oneDNN's layout for products with a few rows (made once, shared; the layout chosen
    for 16 rows served every row count from 2 to 16 in the measurements)."""
    if weight not in _ONEDNN:
        with torch.inference_mode():
            _ONEDNN[weight] = torch.ops.mkldnn._reorder_linear_weight(weight.detach(), 16)
    copy: torch.Tensor = _ONEDNN[weight]
    return copy


def can_use_native(model: nn.Module) -> bool:
    """Whether `model`'s weights can go through `decoding.native_kernel`: float32 on a CPU where the
    kernel builds and passes its self-test."""
    return _float32_cpu(model) and native_kernel() is not None


def can_pack(model: nn.Module) -> bool:
    """Whether `model`'s weights can be packed for MKL's GEMM: float32 on a CPU torch built with MKL."""
    return (
        _float32_cpu(model)
        and torch.backends.mkl.is_available()  # type: ignore[no-untyped-call]
        and hasattr(torch.ops.mkl, "_mkl_reorder_linear_weight")
    )


def native_panels(kernel: NativeKernel, weight: torch.Tensor) -> Panels:
    """`weight` packed in the native kernel's panels (made once, then shared)."""
    if weight not in _PANELS:
        with torch.inference_mode():
            _PANELS[weight] = kernel.pack(weight.detach())
    panels: Panels = _PANELS[weight]
    return panels


def packed_weight(weight: torch.Tensor, rows: int) -> torch.Tensor:
    """`weight` packed by MKL for products with `rows` input rows (made once, then shared)."""
    if weight not in _PACKED:
        _PACKED[weight] = {}
    by_rows: dict[int, torch.Tensor] = _PACKED[weight]
    if rows not in by_rows:
        with torch.inference_mode():
            by_rows[rows] = torch.ops.mkl._mkl_reorder_linear_weight(weight.detach(), rows)
    return by_rows[rows]


def _rope_theta(config: Any) -> float | None:
    parameters = getattr(config, "rope_parameters", None)
    if isinstance(parameters, dict):
        if parameters.get("rope_type", "default") != "default":
            return None
        theta = parameters.get("rope_theta")
        return float(theta) if theta is not None else None
    if getattr(config, "rope_scaling", None):
        return None
    theta = getattr(config, "rope_theta", None)
    return float(theta) if theta is not None else None


class _Layer:
    """One decoder layer's weight tensors (the model's own, not copies)."""

    __slots__ = ("attention_norm", "down", "gate", "k", "mlp_norm", "o", "q", "up", "v")

    def __init__(self, layer: Any) -> None:
        attention, mlp = layer.self_attn, layer.mlp
        self.attention_norm: torch.Tensor = layer.input_layernorm.weight
        self.mlp_norm: torch.Tensor = layer.post_attention_layernorm.weight
        self.q: torch.Tensor = attention.q_proj.weight
        self.k: torch.Tensor = attention.k_proj.weight
        self.v: torch.Tensor = attention.v_proj.weight
        self.o: torch.Tensor = attention.o_proj.weight
        self.gate: torch.Tensor = mlp.gate_proj.weight
        self.up: torch.Tensor = mlp.up_proj.weight
        self.down: torch.Tensor = mlp.down_proj.weight


class LeanLlama:
    """A Llama causal LM stepping one sequence over its own key/value cache.

    `length` is the number of cached positions; `forward` appends tokens and returns their logits,
    `crop` forgets positions, `reset` forgets all.
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        capacity: int = _INITIAL_CAPACITY,
        pack_rows: tuple[int, ...] | None = None,
        native_layers: bool = True,
    ) -> None:
        """`pack_rows`: row counts to pack the weights for (default `PACK_ROWS` where `can_pack`;
        `()` keeps the stock kernel for every row count). `native_layers=False` keeps the native
        kernel to the products, with every other operation of the layers in torch."""
        if not self.supports(model):
            raise ValueError(f"{type(model).__name__} is not a Llama model LeanLlama reproduces exactly")
        config: Any = model.config  # type: ignore[union-attr]
        decoder: Any = model.model  # type: ignore[union-attr]
        self.layers = [_Layer(layer) for layer in decoder.layers]
        self.embedding: torch.Tensor = decoder.embed_tokens.weight
        self.final_norm: torch.Tensor = decoder.norm.weight
        head: Any = model.lm_head
        self.lm_head: torch.Tensor = head.weight
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(config.num_key_value_heads)
        self.head_dim = int(
            getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        )
        self.epsilon = float(config.rms_norm_eps)
        self.dtype = self.embedding.dtype
        self.device = self.embedding.device
        theta = _rope_theta(config)
        assert theta is not None
        self._inverse_frequencies = 1.0 / (
            theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim)
        )
        weights = [self.lm_head] + [
            weight
            for layer in self.layers
            for weight in (layer.q, layer.k, layer.v, layer.o, layer.gate, layer.up, layer.down)
        ]
        if pack_rows is None:
            pack_rows = PACK_ROWS if can_pack(model) else ()
        if pack_rows and not can_pack(model):
            raise ValueError("only float32 CPU weights with MKL can be packed")
        self.pack_rows = tuple(sorted({rows for rows in pack_rows if rows >= PACK_MIN_ROWS}))
        # Packed copies by packed row count, then weight id: made when a block first runs packed.
        self._packs: dict[int, dict[int, torch.Tensor]] = {}
        # For each row count a packed copy serves: the smallest packed count that holds it.
        self._pack_for = {
            count: next(rows for rows in self.pack_rows if rows >= count)
            for count in range(PACK_MIN_ROWS, max(self.pack_rows, default=0) + 1)
        }
        # The kernel of each row count (absent: stock); `set_kernel` changes it, e.g. to the fastest
        # one measured on this machine (decoding.draft_length.measure_verify_cost).
        self.kernels: dict[int, str] = {count: "packed" for count in self._pack_for}
        self._weights = weights
        # The kernels of the forward running now: `kernels` for a verification block, the prefill
        # kernel (if not stock) for a prefill.
        self._active_kernels: dict[int, str] = {}
        # The kernel of prefills; `set_prefill_kernel` changes it (measured: draft_length).
        self.prefill_kernel = "stock"
        self._can_use_onednn = can_use_onednn(model)
        # decoding.native_kernel, for float32 CPU weights where it builds and runs; None otherwise.
        # Its weights are checked here once (float32 CPU by `can_use_native`, contiguous), so each
        # product skips the checks of `NativeKernel.linear`: they cost 5% of a one-row step.
        self._native = (
            native_kernel() if can_use_native(model) and all(w.is_contiguous() for w in weights) else None
        )
        # The native kernel's panels by weight id, fetched when a row count first takes it.
        self._panels: dict[int, Panels] = {}
        # Whether a block whose products take the native kernel runs its whole layer stack in one call
        # to its `lean_layers` (norms, rotations, attention and all); the pointers are made on first use.
        self._native_layers_wanted = (
            self._native is not None
            and native_layers
            and LayerPointers.suits(self.heads, self.kv_heads, self.head_dim)
            and all(
                norm.dtype == torch.float32 and norm.is_contiguous()
                for layer in self.layers
                for norm in (layer.attention_norm, layer.mlp_norm)
            )
        )
        self._native_layers: LayerPointers | None = None
        # oneDNN copies by weight id, fetched when a row count first takes the oneDNN kernel.
        self._onednn: dict[int, torch.Tensor] = {}
        self.length = 0
        self._initial_capacity = max(1, capacity)
        self._capacity = 0
        self._keys = torch.empty(0)
        self._values = torch.empty(0)
        self._cos = torch.empty(0)
        self._sin = torch.empty(0)
        self._grow(self._initial_capacity)

    @property
    def runs_native_layers(self) -> bool:
        """Whether a block whose products take the native kernel runs its layers in the kernel's C
        (`lean_layers`) too; False where the kernel is missing or the model's shapes do not suit it."""
        return self._native_layers_wanted

    def _native_panels(self, weight: torch.Tensor) -> Panels:
        panels = self._panels.get(id(weight))
        if panels is None:
            assert self._native is not None
            panels = self._panels[id(weight)] = native_panels(self._native, weight)
        return panels

    def _layer_pointers(self) -> LayerPointers:
        if self._native_layers is None:
            self._native_layers = LayerPointers(
                [
                    (
                        *(
                            self._native_panels(weight)
                            for weight in (
                                layer.q,
                                layer.k,
                                layer.v,
                                layer.o,
                                layer.gate,
                                layer.up,
                                layer.down,
                            )
                        ),
                        layer.attention_norm,
                        layer.mlp_norm,
                    )
                    for layer in self.layers
                ],
                heads=self.heads,
                kv_heads=self.kv_heads,
                dim=self.head_dim,
                eps=self.epsilon,
            )
        return self._native_layers

    @staticmethod
    def supports(model: nn.Module) -> bool:
        config: Any = getattr(model, "config", None)
        if config is None or not isinstance(model, LlamaForCausalLM):
            return False
        parameter = next(model.parameters(), None)
        return (
            parameter is not None
            and getattr(config, "_attn_implementation", None) in ("sdpa", "decoding_gqa_sdpa")
            and getattr(config, "hidden_act", None) == "silu"
            and not getattr(config, "attention_bias", False)
            and not getattr(config, "mlp_bias", False)
            and not getattr(config, "pretraining_tp", 1) > 1
            and _rope_theta(config) is not None
            and not is_prepacked(model)
            and all(not isinstance(module, nn.Linear) or module.bias is None for module in model.modules())
        )

    def _grow(self, needed: int) -> None:
        capacity = max(self._capacity, self._initial_capacity)
        while capacity < needed:
            capacity *= 2
        if capacity == self._capacity:
            return
        shape = (len(self.layers), 1, self.kv_heads, capacity, self.head_dim)
        keys = torch.empty(shape, dtype=self.dtype, device=self.device)
        values = torch.empty(shape, dtype=self.dtype, device=self.device)
        if self.length:
            keys[:, :, :, : self.length] = self._keys[:, :, :, : self.length]
            values[:, :, :, : self.length] = self._values[:, :, :, : self.length]
        self._keys, self._values, self._capacity = keys, values, capacity
        # Transformers: position (float32) times inverse frequency, duplicated, cos/sin, then the model dtype.
        positions = torch.arange(capacity, dtype=torch.float)
        frequencies = positions[:, None] * self._inverse_frequencies
        angles = torch.cat((frequencies, frequencies), dim=-1)
        self._cos = angles.cos().to(device=self.device, dtype=self.dtype)
        self._sin = angles.sin().to(device=self.device, dtype=self.dtype)

    def reset(self) -> None:
        self.length = 0

    def crop(self, length: int) -> None:
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot crop a cache of {self.length} tokens to {length}")
        self.length = length

    def keep(self, start: int, rows: Sequence[int]) -> None:
        """Keep, after the first `start` positions, only the cached rows `rows` (ascending), moved to
        consecutive positions: the accepted path of a tree forward."""
        if not 0 <= start <= self.length or any(start + row >= self.length for row in rows):
            raise ValueError(f"rows {list(rows)} after {start} are not all cached ({self.length})")
        if list(rows) != sorted(set(rows)):
            raise ValueError(f"rows to keep must ascend without repeats, got {list(rows)}")
        if list(rows) != list(range(len(rows))):
            # Rotary positions were applied by depth, which is the kept index: only moves are needed.
            source = torch.tensor(rows, device=self.device) + start
            end = start + len(rows)
            self._keys[:, :, :, start:end] = self._keys[:, :, :, source]
            self._values[:, :, :, start:end] = self._values[:, :, :, source]
        self.length = start + len(rows)

    def key_values(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each layer's cached keys and values, (1, key/value heads, length, head dim): views, not copies."""
        return [
            (self._keys[index, :, :, : self.length], self._values[index, :, :, : self.length])
            for index in range(len(self.layers))
        ]

    def _norm(self, hidden: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        # LlamaRMSNorm: computed in float32, scaled by the weight in the input dtype.
        dtype = hidden.dtype
        if dtype == torch.float32:  # the same operations without the two no-op conversions
            variance = hidden.pow(2).mean(-1, keepdim=True)
            return weight * (hidden * torch.rsqrt(variance + self.epsilon))
        hidden = hidden.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = hidden * torch.rsqrt(variance + self.epsilon)
        return weight * hidden.to(dtype)

    def kernel_choices(self, rows: int) -> tuple[str, ...]:
        """The kernels a block of `rows` rows can take. One row (a plain decoding step) can take the
        native kernel besides the stock one: it computes each row of a block as it computes that row
        alone, so a decoder on it verifies with the same arithmetic it decodes with. Prefills have
        their own choice (`prefill_choices`)."""
        if rows == 1:
            return ("stock", "native") if self._native else ("stock",)
        if not 2 <= rows <= MAX_KERNEL_ROWS:
            return ("stock",)
        extra = (("onednn",) if self._can_use_onednn else ()) + (("native",) if self._native else ())
        if rows in self._pack_for:
            # The stock kernel repacks the weight on every call from 4 rows on (see the module notes).
            return ("packed", "transposed", *extra)
        return ("stock", "transposed", *extra)

    def prefill_choices(self) -> tuple[str, ...]:
        """The kernels a prefill can take: the stock one, oneDNN's where it runs, and the native
        kernel's C layers where they run. On a 2-core AMD EPYC with AVX-512, whose MKL took a slower
        path, oneDNN computed a 300-row prefill's linear layers in 0.44x the stock kernel's time; the
        C layers prefilled 100, 300 and 700 tokens in 0.89, 0.99 and 1.03 of oneDNN's time
        (docs/speculative-decoding.md)."""
        return (
            "stock",
            *(("onednn",) if self._can_use_onednn else ()),
            *(("native",) if self._native_layers_wanted else ()),
        )

    def set_prefill_kernel(self, kernel: str) -> None:
        """Compute the linear layers of prefills with `kernel` (one of `prefill_choices`)."""
        if kernel not in self.prefill_choices():
            raise ValueError(f"no {kernel!r} kernel for prefills; choose from {self.prefill_choices()}")
        if kernel == "onednn":
            self._fetch_onednn()
        if kernel == "native":
            self._fetch_native()
        self.prefill_kernel = kernel

    def _fetch_native(self) -> None:
        """Pack every weight for the native kernel now (about 0.2 s for SmolLM2-135M), so that the
        first step on it does not wait for the packing."""
        for weight in self._weights:
            self._native_panels(weight)
        if self._native_layers_wanted:
            self._layer_pointers()

    def _fetch_onednn(self) -> None:
        if not self._onednn:
            self._onednn = {id(weight): onednn_weight(weight) for weight in self._weights}

    def set_kernel(self, rows: int, kernel: str) -> None:
        """Compute the linear layers of `rows`-row blocks with `kernel` (one of `kernel_choices`)."""
        if kernel not in self.kernel_choices(rows):
            raise ValueError(
                f"no {kernel!r} kernel for {rows}-row blocks; choose from {self.kernel_choices(rows)}"
            )
        if kernel == "onednn":
            self._fetch_onednn()
        if kernel == "native":
            self._fetch_native()
        if kernel == "stock":
            self.kernels.pop(rows, None)
        else:
            self.kernels[rows] = kernel

    def drop_copies(self, kernel: str) -> None:
        """Forget the copies of this model's weights made for `kernel` (`onednn`, `packed` or `native`),
        shared ones included: a measurement that chose another kernel frees their memory. A LeanLlama
        still using them keeps its own references; one that takes the kernel again makes them anew."""
        shared = {"onednn": _ONEDNN, "packed": _PACKED, "native": _PANELS}[kernel]
        for weight in self._weights:
            if weight in shared:
                del shared[weight]
        if kernel == "onednn":
            self._onednn = {}
            self.prefill_kernel = "stock"
        elif kernel == "native":
            self._panels = {}
            self._native_layers = None
        else:
            self._packs = {}

    def _linear(self, inputs: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """`inputs @ weight.T` for (1, rows, in) or (rows, in) inputs, by the row count's kernel."""
        count = inputs.shape[-2]
        kernel = self._active_kernels.get(count)
        if kernel is None:
            return functional.linear(inputs, weight)
        rows = inputs.reshape(count, inputs.shape[-1])
        if kernel == "transposed":
            # (weight @ rows^T)^T: the weight is the large operand, read once in its stored row-major
            # order, and the few input rows are the narrow side; some BLAS builds take a much faster
            # path for this shape than for `rows @ weight^T` (measured: docs/speculative-decoding.md).
            transposed = torch.mm(weight, rows.t()).t().contiguous()
            return transposed.reshape(*inputs.shape[:-1], weight.shape[0])
        if kernel == "native":
            assert self._native is not None
            return self._native.product(rows, self._native_panels(weight)).reshape(
                *inputs.shape[:-1], weight.shape[0]
            )
        if kernel == "onednn":
            product: torch.Tensor = torch.ops.mkldnn._linear_pointwise(
                rows, self._onednn[id(weight)], None, "none", [], ""
            )
            return product.reshape(*inputs.shape[:-1], weight.shape[0])
        packed = self._pack_for[count]
        if packed not in self._packs:
            self._packs[packed] = {id(weight): packed_weight(weight, packed) for weight in self._weights}
        if count < packed:
            rows = torch.cat((rows, rows.new_zeros(packed - count, rows.shape[1])))
        output: torch.Tensor = torch.ops.mkl._mkl_linear(
            rows, self._packs[packed][id(weight)], weight, None, packed
        )
        return output[:count].reshape(*inputs.shape[:-1], weight.shape[0])

    @staticmethod
    def _rotate(states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = states.shape[-1] // 2
        rotated = torch.cat((-states[..., half:], states[..., :half]), dim=-1)
        return (states * cos) + (rotated * sin)

    @torch.inference_mode()
    def forward(
        self,
        tokens: list[int],
        logits_to_keep: int = 0,
        *,
        features: bool = False,
        parents: Sequence[int] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Append `tokens`; logits for the last `logits_to_keep` rows (0 = all) and, with `features`,
        the final-norm hidden states of every new row.

        `parents` makes the rows a tree (`decoding.draft_tree`): row r attends to the cache, its
        ancestors and itself, at position length + its depth. `keep` then compacts the accepted path.
        """
        count = len(tokens)
        if not count:
            raise ValueError("forward needs at least one token")
        start, end = self.length, self.length + count
        self._grow(end)
        # A block whose every row's logits are wanted is a verification and takes its row count's
        # kernel; a prefill (logits of its last rows only) takes the prefill kernel, and its LM head
        # over those last rows the stock one.
        if not logits_to_keep:
            self._active_kernels = self.kernels
        elif self.prefill_kernel == "stock" or count <= logits_to_keep:
            self._active_kernels = {}
        else:
            self._active_kernels = {count: self.prefill_kernel}
        hidden = functional.embedding(torch.tensor([tokens], device=self.device), self.embedding)
        if self._native_layers_wanted and self._active_kernels.get(count) == "native":
            assert self._native is not None
            if parents is None:
                positions = torch.arange(start, end)
                allowed = None
            else:
                if len(parents) != count:
                    raise ValueError(f"{len(parents)} parents for {count} rows")
                positions = torch.tensor(row_depths(parents)) + start
                allowed = tree_mask(parents, 0).to(torch.uint8)
            rows = hidden[0]
            self._native.decoder_layers(
                self._layer_pointers(),
                rows,
                CachePointers(self._keys, self._values, self._cos, self._sin),
                start,
                positions,
                allowed,
            )
            self.length = end
            normed = self._norm(rows, self.final_norm)
            kept = normed[-logits_to_keep:] if logits_to_keep else normed
            return self._linear(kept, self.lm_head), (normed if features else None)
        mask = None
        if parents is not None:
            if len(parents) != count:
                raise ValueError(f"{len(parents)} parents for {count} rows")
            positions = torch.tensor(row_depths(parents), device=self.device) + start
            cos = self._cos[positions][None, None]
            sin = self._sin[positions][None, None]
            mask = tree_mask(parents, start, self.device)
        else:
            cos = self._cos[start:end][None, None]
            sin = self._sin[start:end][None, None]
            if count > 1:
                # Row i (position start + i) sees cached positions and new rows up to itself.
                mask = torch.ones(count, end, dtype=torch.bool, device=self.device).tril(start)
        shape = (1, count, -1, self.head_dim)
        for index, layer in enumerate(self.layers):
            normed = self._norm(hidden, layer.attention_norm)
            query = self._linear(normed, layer.q).view(shape).transpose(1, 2)
            key = self._linear(normed, layer.k).view(shape).transpose(1, 2)
            value = self._linear(normed, layer.v).view(shape).transpose(1, 2)
            query = self._rotate(query, cos, sin)
            self._keys[index, :, :, start:end] = self._rotate(key, cos, sin)
            self._values[index, :, :, start:end] = value
            attended = functional.scaled_dot_product_attention(
                query,
                self._keys[index, :, :, :end],
                self._values[index, :, :, :end],
                attn_mask=mask,
                scale=self.head_dim**-0.5,
                enable_gqa=self.heads != self.kv_heads,
            )
            attended = attended.transpose(1, 2).reshape(1, count, -1)
            hidden = hidden + self._linear(attended, layer.o)
            normed = self._norm(hidden, layer.mlp_norm)
            gated = functional.silu(self._linear(normed, layer.gate)) * self._linear(normed, layer.up)
            hidden = hidden + self._linear(gated, layer.down)
        self.length = end
        normed = self._norm(hidden, self.final_norm)[0]
        kept = normed[-logits_to_keep:] if logits_to_keep else normed
        return self._linear(kept, self.lm_head), (normed if features else None)
