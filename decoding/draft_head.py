"""A draft head trained for its target (EAGLE-style feature drafting).

The target's *feature* at position t is its last hidden state there, after the final norm: the vector
its LM head reads to predict token t+1. The head learns the next feature from the pair
(feature f_t, token x_{t+1}): one linear layer fuses f_t with the target's frozen embedding of
x_{t+1}, one decoder layer (causal attention over the earlier pairs, then a SwiGLU MLP) turns the
result into a predicted f_{t+1}, and the target's frozen LM head reads a draft token from it. Drafting
k tokens feeds each predicted feature back in with the token it proposed.

The LM head is the target's own weights: all of its rows, or only the `draft_vocab` rows of the
tokens seen most often in the training text (`DraftHeadConfig.draft_vocab`), which makes each draft
token several times cheaper on a CPU. Tokens outside the reduced head are never proposed, so drafts
stay drafts: the target's verification decides, and greedy and sampled output stay exact.

A head belongs to one target: its file records the target's shape and a fingerprint of its
embedding matrix, and `load_draft_head` refuses another target with `DraftHeadMismatchError`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from torch import nn
from transformers import PreTrainedModel

from decoding.acceptance import SamplingParams, sampling_probs
from decoding.artifact_files import read_artifact_metadata, write_artifact
from decoding.drafters import EMPTY_PROPOSAL, GREEDY, DraftProposal, VocabularyMismatchError, as_token_list

HEAD_FORMAT = "akm-draft-head"
HEAD_FORMAT_VERSION = 1
HEADS_DIRECTORY = "draft-heads"


class DraftHeadMismatchError(VocabularyMismatchError):
    """The draft head was trained for another target model (other shape, vocabulary or weights)."""


class DraftHeadFileError(ValueError):
    """A draft head file is missing, unreadable, or not a draft head."""


def target_fingerprint(model: PreTrainedModel) -> str:
    """A short hash of the target's input embedding, rounded to bfloat16 so a float32 and a bfloat16
    load of the same weights agree, while any other checkpoint differs."""
    embedding: Any = model.get_input_embeddings()
    weight: torch.Tensor = embedding.weight.detach()
    digest = hashlib.sha256(str(tuple(weight.shape)).encode())
    digest.update(weight.to(torch.bfloat16).view(torch.int16).cpu().numpy().tobytes())
    return digest.hexdigest()[:24]


def _head_count(model: PreTrainedModel) -> int:
    return int(getattr(model.config, "num_attention_heads", 1))


@dataclass(frozen=True)
class DraftHeadConfig:
    """Shape of a head and the target it belongs to; saved with the weights."""

    hidden_size: int
    num_heads: int
    intermediate_size: int
    vocab_size: int
    draft_vocab: int
    target_name: str
    target_fingerprint: str
    rope_theta: float = 10000.0
    rms_eps: float = 1e-5

    @classmethod
    def for_target(
        cls,
        model: PreTrainedModel,
        target_name: str,
        *,
        draft_vocab: int = 0,
        intermediate_size: int | None = None,
    ) -> DraftHeadConfig:
        config = model.config
        hidden = int(config.hidden_size)
        heads = _head_count(model)
        if hidden % heads:
            heads = 1
        vocab = int(config.vocab_size)
        return cls(
            hidden_size=hidden,
            num_heads=heads,
            intermediate_size=int(
                intermediate_size or getattr(config, "intermediate_size", None) or 4 * hidden
            ),
            vocab_size=vocab,
            draft_vocab=vocab if draft_vocab <= 0 or draft_vocab > vocab else draft_vocab,
            target_name=target_name,
            target_fingerprint=target_fingerprint(model),
            rms_eps=float(getattr(config, "rms_norm_eps", 1e-5)),
        )

    def check_target(self, model: PreTrainedModel) -> None:
        """Refuse a target this head was not trained for."""
        hidden, vocab = int(model.config.hidden_size), int(model.config.vocab_size)
        if (hidden, vocab) != (self.hidden_size, self.vocab_size):
            raise DraftHeadMismatchError(
                f"this draft head was trained for {self.target_name} (hidden size {self.hidden_size}, "
                f"vocabulary {self.vocab_size}); the target has hidden size {hidden}, vocabulary {vocab}"
            )
        fingerprint = target_fingerprint(model)
        if fingerprint != self.target_fingerprint:
            raise DraftHeadMismatchError(
                f"this draft head was trained for {self.target_name} (embedding fingerprint "
                f"{self.target_fingerprint}); the loaded target's is {fingerprint}: train a head for it "
                "with `akm train-draft-head`"
            )


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class _RowBuffer:
    """Rows appended along dimension -2 of a [heads, rows, dim] tensor, with capacity that doubles."""

    def __init__(self) -> None:
        self.data: torch.Tensor | None = None
        self.length = 0

    def write(self, start: int, rows: torch.Tensor) -> torch.Tensor:
        """Place `rows` at [start, start+n) (dropping anything from `start` on); the filled view."""
        end = start + rows.shape[-2]
        if self.data is None or end > self.data.shape[-2]:
            capacity = max(64, 2 * end)
            grown = rows.new_zeros((*rows.shape[:-2], capacity, rows.shape[-1]))
            if self.data is not None:
                grown[..., :start, :] = self.data[..., :start, :]
            self.data = grown
        self.data[..., start:end, :] = rows
        self.length = end
        return self.data[..., :end, :]

    def crop(self, length: int) -> None:
        self.length = min(self.length, length)


class HeadCache:
    """Keys and values of the head's one attention layer, by position."""

    def __init__(self) -> None:
        self.keys = _RowBuffer()
        self.values = _RowBuffer()

    @property
    def length(self) -> int:
        return self.keys.length

    def crop(self, length: int) -> None:
        self.keys.crop(length)
        self.values.crop(length)


class DraftHead(nn.Module):
    """Fuse (feature, next token's embedding), one decoder layer, predicted next feature.

    The embedding and LM head rows are the target's, frozen and not part of the head's weights:
    `attach(target)` binds them. `draft_ids` lists the token ids of the LM head rows drafting uses.
    """

    draft_ids: torch.Tensor
    inverse_frequency: torch.Tensor

    def __init__(self, config: DraftHeadConfig) -> None:
        super().__init__()
        self.config = config
        hidden, inner = config.hidden_size, config.intermediate_size
        self.head_dim = hidden // config.num_heads
        self.fuse = nn.Linear(2 * hidden, hidden, bias=True)
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.mlp_norm = nn.Parameter(torch.ones(hidden))
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)
        self.register_buffer("draft_ids", torch.arange(config.draft_vocab, dtype=torch.long))
        inverse = 1.0 / (config.rope_theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        self.register_buffer("inverse_frequency", inverse, persistent=False)
        # The target's modules and weights are kept out of the head's parameters and state.
        self.__dict__["_embedding"] = None
        self._lm_rows: torch.Tensor | None = None
        self._lm_full: torch.Tensor | None = None

    # --- binding to the target ------------------------------------------------------------------

    def attach(self, target: PreTrainedModel) -> DraftHead:
        """Bind the target's frozen embedding and LM head; moves the head to the target's dtype."""
        self.config.check_target(target)
        parameter = next(target.parameters())
        self.to(device=parameter.device, dtype=parameter.dtype)
        self.__dict__["_embedding"] = target.get_input_embeddings()
        output: Any = target.get_output_embeddings()  # type: ignore[no-untyped-call]
        if output is None:
            raise DraftHeadMismatchError("the target has no output embedding (LM head) to draft with")
        self._lm_full = output.weight.detach()
        self._lm_rows = self._lm_full.index_select(0, self.draft_ids).contiguous()
        return self

    def set_draft_ids(self, ids: Sequence[int] | torch.Tensor) -> None:
        ids_tensor = torch.as_tensor(
            list(ids) if not isinstance(ids, torch.Tensor) else ids, dtype=torch.long
        )
        if ids_tensor.numel() != self.config.draft_vocab:
            raise ValueError(f"need {self.config.draft_vocab} draft ids, got {ids_tensor.numel()}")
        self.draft_ids = ids_tensor.to(self.fuse.weight.device)
        if self._lm_full is not None:
            self._lm_rows = self._lm_full.index_select(0, self.draft_ids).contiguous()

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        embedding = self.__dict__["_embedding"]
        if embedding is None:
            raise RuntimeError("attach(target) first: the head drafts with the target's embedding")
        with torch.no_grad():
            embedded: torch.Tensor = embedding(tokens)
        return embedded

    def lm_rows(self, full: bool = False) -> torch.Tensor:
        rows = self._lm_full if full else self._lm_rows
        if rows is None:
            raise RuntimeError("attach(target) first: the head drafts with the target's LM head")
        return rows

    # --- the layer ------------------------------------------------------------------------------

    def _rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.to(self.inverse_frequency.dtype)[:, None] * self.inverse_frequency[None, :]
        angles = torch.cat((angles, angles), dim=-1).to(x.dtype)
        return x * angles.cos() + _rotate_half(x) * angles.sin()

    def _mlp(self, hidden: torch.Tensor) -> torch.Tensor:
        variance = hidden.pow(2).mean(-1, keepdim=True)
        normed = hidden * torch.rsqrt(variance + self.config.rms_eps) * self.mlp_norm
        mixed: torch.Tensor = self.down_proj(F.silu(self.gate_proj(normed)) * self.up_proj(normed))
        return mixed

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.config.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Training: predicted next features for a batch [B, T, hidden] of features and [B, T] next tokens."""
        fused = self.fuse(torch.cat((features, self.embed(tokens)), dim=-1))
        positions = torch.arange(features.shape[1], device=features.device)
        q = self._rope(self._heads(self.q_proj(fused)), positions)
        k = self._rope(self._heads(self.k_proj(fused)), positions)
        v = self._heads(self.v_proj(fused))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        hidden: torch.Tensor = fused + self.o_proj(attended.transpose(1, 2).reshape(fused.shape))
        return hidden + self._mlp(hidden)

    @torch.inference_mode()
    def step(
        self, features: torch.Tensor, tokens: Sequence[int], start: int, cache: HeadCache
    ) -> torch.Tensor:
        """Predicted features for positions start..start+n-1 given their (feature, next token) pairs,
        attending to the cached positions before `start`; the cache then holds start+n positions."""
        token_ids = torch.tensor([list(tokens)], dtype=torch.long, device=features.device)
        fused = self.fuse(torch.cat((features.unsqueeze(0), self.embed(token_ids)), dim=-1))
        count = fused.shape[1]
        positions = torch.arange(start, start + count, device=features.device)
        q = self._rope(self._heads(self.q_proj(fused)), positions)
        keys = cache.keys.write(start, self._rope(self._heads(self.k_proj(fused)), positions)[0])
        values = cache.values.write(start, self._heads(self.v_proj(fused))[0])
        if count == 1:
            attended = F.scaled_dot_product_attention(q, keys.unsqueeze(0), values.unsqueeze(0))
        else:
            visible = torch.arange(start + count, device=features.device)[None, :] <= positions[:, None]
            attended = F.scaled_dot_product_attention(
                q, keys.unsqueeze(0), values.unsqueeze(0), attn_mask=visible
            )
        hidden = fused + self.o_proj(attended.transpose(1, 2).reshape(fused.shape))
        predicted: torch.Tensor = (hidden + self._mlp(hidden))[0]
        return predicted

    def logits(self, features: torch.Tensor, full: bool = False) -> torch.Tensor:
        """Draft logits over `draft_ids` (or the whole vocabulary with `full`)."""
        return features @ self.lm_rows(full).T


# --- files --------------------------------------------------------------------------------------


def default_head_path(cache_root: str | Path, target_name: str) -> Path:
    """Where `akm train-draft-head` writes the head of a target, and where serving looks for it."""
    safe = "".join(
        character if character.isalnum() or character in "-_." else "_" for character in target_name
    )
    return Path(cache_root) / HEADS_DIRECTORY / f"{safe}.safetensors"


def save_draft_head(head: DraftHead, path: str | Path, training: dict[str, object] | None = None) -> Path:
    """Write the head's own weights (float32) and config; written aside and renamed into place."""
    destination = Path(path)
    tensors = {name: tensor.detach().to("cpu").contiguous() for name, tensor in head.state_dict().items()}
    tensors = {
        name: tensor.float() if tensor.is_floating_point() else tensor for name, tensor in tensors.items()
    }
    metadata = {
        "format": HEAD_FORMAT,
        "version": str(HEAD_FORMAT_VERSION),
        "config": json.dumps(asdict(head.config)),
        "training": json.dumps(training or {}),
    }
    return write_artifact(destination, tensors, metadata)


def read_head_metadata(path: str | Path) -> dict[str, str]:
    return read_artifact_metadata(
        path,
        file_format=HEAD_FORMAT,
        version=HEAD_FORMAT_VERSION,
        what="draft head",
        error=DraftHeadFileError,
        missing="train one with `akm train-draft-head`",
    )


def load_draft_head(path: str | Path, target: PreTrainedModel) -> DraftHead:
    """Read a head and bind it to `target`; `DraftHeadMismatchError` if it was trained for another."""
    metadata = read_head_metadata(path)
    try:
        config = DraftHeadConfig(**json.loads(metadata["config"]))
    except (KeyError, TypeError, ValueError) as error:
        raise DraftHeadFileError(f"{path}: the head's config cannot be read: {error}") from error
    config.check_target(target)
    head = DraftHead(config)
    state = load_file(str(path))
    try:
        head.load_state_dict(state)
    except RuntimeError as error:
        raise DraftHeadFileError(f"{path}: the weights do not fit the head's config: {error}") from error
    return head.attach(target).eval()


# --- the drafter --------------------------------------------------------------------------------


class DraftHeadDrafter:
    """Drafts a chain of tokens with a trained head from the target's own features.

    The decoder hands over the target's features of every committed position
    (`observe_features`); the head keeps its attention cache for the committed positions only and
    drops the positions it drafted after each proposal. With `min_confidence`, a greedy chain stops
    at the first token whose draft probability is below it (the target would likely reject it).

    When the head is more than `catch_up_window` positions behind (after a long prompt, or a stretch
    where a composite did not ask it), it starts its cache again over the last `catch_up_window`
    positions: a catch-up over hundreds of positions would cost as much as a target step. Rotary
    positions are relative, so the window's own numbering changes nothing but what is attended to.
    """

    name = "draft_head"
    wants_features = True
    pays_per_token = True

    def __init__(
        self,
        head: DraftHead,
        *,
        min_confidence: float = 0.0,
        full_vocab: bool = False,
        catch_up_window: int = 128,
    ) -> None:
        if catch_up_window < 1:
            raise ValueError("catch_up_window must be at least 1")
        self.head = head
        self.min_confidence = min_confidence
        self.full_vocab = full_vocab
        self.catch_up_window = catch_up_window
        self._ids = None if full_vocab else head.draft_ids
        self.reset()

    def reset(self) -> None:
        self._features = _RowBuffer()
        self._cache = HeadCache()
        # Cache row r holds the pair (f_s, x_{s+1}) of s = r + _offset.
        self._offset = 0
        self._last: torch.Tensor | None = None

    def observe(self, accepted: int, proposed: int) -> None:
        pass

    def observe_features(self, start: int, features: torch.Tensor) -> None:
        """The target's features at positions start, start+1, ...; anything held from `start` on is replaced."""
        if start > self._features.length:
            # A gap: the decoder skipped positions; start again from what is known to be consistent.
            self.reset()
            return
        self._features.write(start, features.detach().to(self.head.fuse.weight.dtype).unsqueeze(0))
        if start < self._offset:
            self._cache, self._offset, self._last = HeadCache(), 0, None
        elif self._cache.length > start - self._offset:
            self._cache.crop(start - self._offset)
            self._last = None

    def _catch_up(self, context: list[int], committed: int) -> torch.Tensor | None:
        """Run the head over committed positions it has not seen; the predicted feature after the last."""
        rows = committed - self._offset
        self._cache.crop(rows)
        done = self._cache.length
        if done == rows:
            return self._last
        if rows - done > self.catch_up_window:
            self._cache, self._offset = HeadCache(), committed - self.catch_up_window
            rows, done = self.catch_up_window, 0
        data = self._features.data
        if data is None:
            return None
        first = self._offset + done
        features = data[0, first:committed]
        predicted = self.head.step(features, context[first + 1 : committed + 1], done, self._cache)
        self._last = predicted[-1]
        return self._last

    def propose(
        self,
        context_ids: Sequence[int] | torch.Tensor,
        k: int,
        sampling: SamplingParams = GREEDY,
        generator: torch.Generator | None = None,
    ) -> DraftProposal:
        context = as_token_list(context_ids)
        # Pairs (f_s, x_{s+1}) exist for s < len(context) - 1: the pending token's feature comes later.
        committed = len(context) - 1
        if k <= 0 or committed < 1 or self._features.length < committed:
            return EMPTY_PROPOSAL
        with torch.inference_mode():
            feature = self._catch_up(context, committed)
            if feature is None:
                return EMPTY_PROPOSAL
            rows = committed - self._offset
            tokens: list[int] = []
            probabilities: list[torch.Tensor] = []
            branches: list[tuple[int, ...]] = []
            for position in range(k):
                logits = self.head.logits(feature, self.full_vocab)
                token, confidence, q = self._choose(logits, sampling, generator)
                if position > 0 and confidence < self.min_confidence:
                    break
                if sampling.greedy and logits.shape[-1] > 1:
                    # The runner-up at this position, after the chain so far: a branch of a draft tree.
                    runner_up = int(torch.topk(logits, 2).indices[1].item())
                    runner_up = runner_up if self._ids is None else int(self._ids[runner_up].item())
                    branches.append((*tokens, runner_up))
                tokens.append(token)
                if q is not None:
                    probabilities.append(q)
                if position < k - 1:
                    feature = self.head.step(feature.unsqueeze(0), [token], rows + position, self._cache)[-1]
            self._cache.crop(rows)
        probs = torch.stack(probabilities) if probabilities else None
        return DraftProposal(tokens, probs, self.name, 0, tuple(branches))

    def _choose(
        self, logits: torch.Tensor, sampling: SamplingParams, generator: torch.Generator | None
    ) -> tuple[int, float, torch.Tensor | None]:
        """(token, its draft probability, the full-vocabulary draft distribution when sampling)."""
        if sampling.greedy:
            index = int(torch.argmax(logits).item())
            token = index if self._ids is None else int(self._ids[index].item())
            if self.min_confidence <= 0.0:
                return token, 1.0, None
            confidence = float(torch.softmax(logits.double(), dim=-1)[index].item())
            return token, confidence, None
        full = logits
        if self._ids is not None:
            full = logits.new_full((self.head.config.vocab_size,), -math.inf)
            full[self._ids] = logits
        q = sampling_probs(full.unsqueeze(0), sampling)[0]
        token = int(torch.multinomial(q, 1, generator=generator).item())
        return token, float(q[token].item()), q
