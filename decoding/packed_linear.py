"""Linear layers with weights prepacked once for oneDNN (optional; the models load without them by default).

A speculative step forwards k+1 rows, so the cost of a few-row linear layer decides whether drafting
pays. Packing each weight once into oneDNN's layout and calling `mkldnn_linear` was meant to keep
the cost of 2-31 rows close to one row; one row keeps the stock kernel. On SmolLM2-135M (float32, 1 or
2 threads, interleaved runs) the packed layers were slower than the stock ones at every row count:
each call converts its input into oneDNN's layout and the output back, which costs more than the
576-wide products themselves (a 2-token forward measured 1.97x a one-token forward packed against
1.12x stock; see docs/speculative-decoding.md, "Verify cost"). The arithmetic stays float32 (no
quantisation, no lower precision); only the summation order inside the kernel differs from the
stock path, as it already does between the stock path's one-row and many-row kernels.

`prepack_linear_layers` swaps every `nn.Linear` of a float32 CPU model for a `PackedLinear`;
other models (another dtype or device, or a torch built without oneDNN) are left as they are.
"""

from __future__ import annotations

import torch
from torch import nn


def can_prepack(model: nn.Module) -> bool:
    """Whether `model`'s linear layers would be packed: float32 on CPU with oneDNN available."""
    if not torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]
        return False
    parameter = next(model.parameters(), None)
    return parameter is not None and parameter.device.type == "cpu" and parameter.dtype == torch.float32


# From this many rows on (a prefill), the stock GEMM is used: it is at least as fast there, and the
# packed layout only pays for the few-row calls of verification.
PACKED_MAX_ROWS = 32
# A single row (a plain decoding step) also takes the stock kernel: a matrix-vector product reads the
# weight once either way, and the packed call's conversions in and out of oneDNN's layout cost more
# than they save there (measured 1.6x the stock forward on one thread), which made own plain decoding
# slower than Hugging Face's on the same weights.
PACKED_MIN_ROWS = 2


class PackedLinear(nn.Module):
    """`y = x W^T + b` through oneDNN with `W` packed at construction; any leading input shape.

    Keeps the original parameters (so tied weights, parameter counts and state dicts are as before)
    and uses them for inputs of fewer than `min_rows` or of `max_rows` rows or more.
    """

    def __init__(
        self, linear: nn.Linear, max_rows: int = PACKED_MAX_ROWS, min_rows: int = PACKED_MIN_ROWS
    ) -> None:
        super().__init__()
        weight = linear.weight.detach()
        if weight.dtype != torch.float32 or weight.device.type != "cpu":
            raise ValueError(f"only float32 CPU weights can be packed, not {weight.dtype} on {weight.device}")
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.max_rows = max_rows
        self.min_rows = min_rows
        self.weight = linear.weight
        self.bias = linear.bias
        self.packed_weight = weight.contiguous().to_mkldnn()
        bias = linear.bias.detach() if linear.bias is not None else torch.zeros(self.out_features)
        self.packed_bias = bias.to(torch.float32).contiguous().to_mkldnn()

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.shape[-1] != self.in_features:
            raise ValueError(f"expected {self.in_features} input features, got {inputs.shape[-1]}")
        rows = inputs.reshape(-1, self.in_features)
        if not self.min_rows <= rows.shape[0] < self.max_rows:
            return nn.functional.linear(inputs, self.weight, self.bias)
        output = torch._C._nn.mkldnn_linear(
            rows.contiguous().to_mkldnn(), self.packed_weight, self.packed_bias
        )
        return output.to_dense().reshape(*inputs.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, oneDNN packed for {self.min_rows} to {self.max_rows - 1} rows"
        )


def prepack_linear_layers(model: nn.Module, max_rows: int = PACKED_MAX_ROWS) -> int:
    """Replace every `nn.Linear` in `model` by a `PackedLinear`; the number replaced (0 if not packable).

    The packed copies add one float32 copy of the linear weights to memory. They are snapshots:
    training or moving the model afterwards is not supported.
    """
    if not can_prepack(model):
        return 0
    replaced = 0
    with torch.no_grad():
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if isinstance(child, nn.Linear):
                    setattr(parent, name, PackedLinear(child, max_rows))
                    replaced += 1
    return replaced


def is_prepacked(model: nn.Module) -> bool:
    return any(isinstance(module, PackedLinear) for module in model.modules())
