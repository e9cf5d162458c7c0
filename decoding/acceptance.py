"""Token acceptance as pure functions over tensors: sampling filters, greedy and exact speculative acceptance.

The decoder's verify step (the target scoring a block of drafted tokens) decides with these which
drafts to keep; this is token acceptance, not claim support (that is `akm.verify`).

`accept_greedy` and `accept_speculative` take the k drafted tokens and the target's k+1 rows of
logits / probabilities (row i scores the token after draft position i-1; the last row is the bonus
position) and return how many drafts are accepted and the one token the target adds after them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingParams:
    """Temperature 0 means greedy; top_k 0 and top_p 1.0 disable those filters."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


@dataclass(frozen=True)
class Acceptance:
    """Outcome of one verify step: `accepted` leading drafts pass, then `next_token` is appended."""

    accepted: int
    next_token: int

    def committed(self, draft_tokens: list[int]) -> list[int]:
        return [*draft_tokens[: self.accepted], self.next_token]


def sampling_probs(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Probabilities after temperature, top-k and top-p, row-wise over the last dimension.

    The same function shapes both the target's p and the drafter's q, so the acceptance test
    compares the two distributions the user actually asked to sample from.
    """
    if params.greedy:
        raise ValueError("greedy decoding has no sampling distribution; use accept_greedy")
    scaled = logits / params.temperature
    vocab = scaled.shape[-1]
    if 0 < params.top_k < vocab:
        kth = torch.topk(scaled, params.top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if params.top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, dim=-1, descending=True)
        sorted_probs = torch.softmax(sorted_logits, dim=-1)
        mass_before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        # Keep the smallest prefix whose mass reaches top_p (the first token is always kept).
        drop_sorted = mass_before >= params.top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def leading_true(mask: torch.Tensor) -> int:
    """Length of the run of True at the start of a 1-D boolean tensor."""
    return int(torch.cumprod(mask.to(torch.int64), dim=0).sum().item())


def accept_greedy(draft_tokens: torch.Tensor, target_logits: torch.Tensor) -> Acceptance:
    """Accept drafts while they equal the target's argmax; the first mismatch (or bonus) is the argmax."""
    k = draft_tokens.shape[0]
    if target_logits.shape[0] != k + 1:
        raise ValueError(f"need {k + 1} rows of target logits for {k} drafts, got {target_logits.shape[0]}")
    choice = torch.argmax(target_logits, dim=-1)
    accepted = leading_true(draft_tokens == choice[:k])
    return Acceptance(accepted=accepted, next_token=int(choice[accepted].item()))


def one_hot_probs(draft_tokens: torch.Tensor, vocab_size: int, dtype: torch.dtype) -> torch.Tensor:
    """The draft distribution of a deterministic drafter: all mass on the proposed token."""
    return torch.nn.functional.one_hot(draft_tokens, vocab_size).to(dtype)


def residual_distribution(target_probs: torch.Tensor, draft_probs: torch.Tensor) -> torch.Tensor:
    """normalize(max(0, p - q)); falls back to p when p == q leaves nothing."""
    residual = torch.clamp(target_probs - draft_probs, min=0.0)
    total = residual.sum()
    if total.item() <= 0.0:
        return target_probs
    return residual / total


def accept_speculative(
    draft_tokens: torch.Tensor,
    draft_probs: torch.Tensor | None,
    target_probs: torch.Tensor,
    generator: torch.Generator | None = None,
) -> Acceptance:
    """Exact speculative sampling: accept draft i with probability min(1, p_i(d_i) / q_i(d_i)).

    On the first rejection the replacement is drawn from normalize(max(0, p - q)); when every
    draft passes, the bonus token is drawn from the last row of p. The output is distributed
    exactly as sampling from p token by token. `draft_probs` None means a deterministic drafter
    (q one-hot on its proposal).
    """
    k = draft_tokens.shape[0]
    if target_probs.shape[0] != k + 1:
        raise ValueError(
            f"need {k + 1} rows of target probabilities for {k} drafts, got {target_probs.shape[0]}"
        )
    if draft_probs is None:
        draft_probs = one_hot_probs(draft_tokens, target_probs.shape[-1], target_probs.dtype)
    positions = torch.arange(k)
    p_draft = target_probs[positions, draft_tokens]
    q_draft = draft_probs[positions, draft_tokens].to(target_probs.dtype)
    uniform = torch.rand(k, generator=generator, dtype=target_probs.dtype)
    accepted = leading_true(uniform * q_draft < p_draft)
    if accepted == k:
        final = target_probs[k]
    else:
        final = residual_distribution(target_probs[accepted], draft_probs[accepted].to(target_probs.dtype))
    next_token = int(torch.multinomial(final, 1, generator=generator).item())
    return Acceptance(accepted=accepted, next_token=next_token)


def choose_token(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """One token from one row of logits: argmax when greedy, else a draw from the filtered distribution."""
    if params.greedy:
        return int(torch.argmax(logits).item())
    return int(torch.multinomial(sampling_probs(logits, params), 1, generator=generator).item())
