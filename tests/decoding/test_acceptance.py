"""Token acceptance as pure functions over hand-made tensors, and its output distribution."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable

import pytest
import torch

from decoding.acceptance import (
    Acceptance,
    SamplingParams,
    accept_greedy,
    accept_speculative,
    leading_true,
    residual_distribution,
    sampling_probs,
)

from .distribution_check import ALPHA, chi_square_p_value


def logits_with_argmax(argmaxes: list[int], vocab: int = 5) -> torch.Tensor:
    logits = torch.zeros(len(argmaxes), vocab, dtype=torch.float64)
    for row, token in enumerate(argmaxes):
        logits[row, token] = 3.0
    return logits


@pytest.mark.parametrize(
    ("drafts", "argmaxes", "expected"),
    [
        ([1, 2, 3], [1, 2, 3, 4], Acceptance(accepted=3, next_token=4)),
        ([1, 2, 3], [1, 0, 3, 4], Acceptance(accepted=1, next_token=0)),
        ([1, 2, 3], [2, 2, 3, 4], Acceptance(accepted=0, next_token=2)),
        ([], [4], Acceptance(accepted=0, next_token=4)),
        ([1, 2, 3], [1, 2, 0, 4], Acceptance(accepted=2, next_token=0)),
    ],
    ids=["all_pass_bonus", "mismatch_second", "mismatch_first", "no_drafts", "mismatch_last"],
)
def test_accept_greedy(drafts: list[int], argmaxes: list[int], expected: Acceptance) -> None:
    assert accept_greedy(torch.tensor(drafts, dtype=torch.long), logits_with_argmax(argmaxes)) == expected


def test_accept_greedy_rejects_wrong_row_count() -> None:
    with pytest.raises(ValueError, match="need 3 rows"):
        accept_greedy(torch.tensor([1, 2]), logits_with_argmax([1, 2]))


def test_committed_tokens() -> None:
    assert Acceptance(accepted=2, next_token=9).committed([4, 5, 6]) == [4, 5, 9]


@pytest.mark.parametrize(
    ("mask", "expected"),
    [([True, True, False, True], 2), ([False, True], 0), ([True, True], 2), ([], 0)],
    ids=["run_of_two", "first_false", "all_true", "empty"],
)
def test_leading_true(mask: list[bool], expected: int) -> None:
    assert leading_true(torch.tensor(mask, dtype=torch.bool)) == expected


def test_residual_distribution_exact() -> None:
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    q = torch.tensor([0.2, 0.6, 0.2], dtype=torch.float64)
    assert torch.equal(residual_distribution(p, q), torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    assert torch.equal(residual_distribution(p, p), p)


def test_speculative_certain_accept_and_certain_reject() -> None:
    # p puts all mass on token 1 at every position: a draft of 1 always passes, a draft of 2 never does.
    p = torch.tensor([[0.0, 1.0, 0.0]] * 3, dtype=torch.float64)
    assert accept_speculative(torch.tensor([1, 1]), None, p) == Acceptance(accepted=2, next_token=1)
    assert accept_speculative(torch.tensor([1, 2]), None, p) == Acceptance(accepted=1, next_token=1)
    q = torch.tensor([[0.0, 0.0, 1.0]] * 2, dtype=torch.float64)
    assert accept_speculative(torch.tensor([2, 2]), q, p) == Acceptance(accepted=0, next_token=1)


def test_speculative_is_reproducible_with_a_seeded_generator() -> None:
    p = torch.softmax(torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(1)), -1)
    drafts = torch.tensor([3, 1, 4, 1])
    runs = [
        [accept_speculative(drafts, None, p, torch.Generator().manual_seed(seed)) for seed in range(20)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert len(set(runs[0])) > 1


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        # softmax over logits 3 and 2 only: e^3 / (e^3 + e^2) = 1 / (1 + e^-1).
        (SamplingParams(temperature=1.0, top_k=2), [0.0, 0.0, 0.7310585786300049, 0.2689414213699951]),
        (SamplingParams(temperature=1.0, top_p=0.5), [0.0, 0.0, 1.0, 0.0]),
    ],
    ids=["top_k_2", "top_p_half"],
)
def test_sampling_filters(params: SamplingParams, expected: list[float]) -> None:
    logits = torch.tensor([[0.0, 1.0, 3.0, 2.0]], dtype=torch.float64)
    probs = sampling_probs(logits, params)[0]
    assert torch.allclose(probs, torch.tensor(expected, dtype=torch.float64), atol=1e-12)


def test_temperature_sharpens() -> None:
    logits = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    hot = sampling_probs(logits, SamplingParams(temperature=2.0))[0]
    cold = sampling_probs(logits, SamplingParams(temperature=0.5))[0]
    assert torch.allclose(hot, torch.softmax(torch.tensor([0.0, 0.5], dtype=torch.float64), -1))
    assert torch.allclose(cold, torch.softmax(torch.tensor([0.0, 2.0], dtype=torch.float64), -1))


AcceptRule = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Generator], Acceptance]


def always_accept(
    drafts: torch.Tensor,
    draft_probs: torch.Tensor | None,
    target_probs: torch.Tensor,
    generator: torch.Generator,
) -> Acceptance:
    """A broken rule: trusts every draft."""
    k = drafts.shape[0]
    bonus = int(torch.multinomial(target_probs[k], 1, generator=generator).item())
    return Acceptance(accepted=k, next_token=bonus)


def resample_from_p(
    drafts: torch.Tensor,
    draft_probs: torch.Tensor | None,
    target_probs: torch.Tensor,
    generator: torch.Generator,
) -> Acceptance:
    """A broken rule: correct test, but resamples from p instead of the residual max(0, p - q)."""
    result = accept_speculative(drafts, draft_probs, target_probs, generator)
    if result.accepted == drafts.shape[0]:
        return result
    token = int(torch.multinomial(target_probs[result.accepted], 1, generator=generator).item())
    return Acceptance(accepted=result.accepted, next_token=token)


def first_two_tokens_p_value(rule: AcceptRule, one_hot_drafter: bool, samples: int = 6000) -> float:
    """Draws (drafts from q, verify with p) and tests the first two emitted tokens against p exactly.

    p is position-independent here, so the exact joint of the first two emitted tokens is p x p.
    """
    generator = torch.Generator().manual_seed(11)
    p = torch.tensor([0.4, 0.3, 0.2, 0.1, 0.0], dtype=torch.float64)
    q = torch.tensor([0.1, 0.1, 0.2, 0.3, 0.3], dtype=torch.float64)
    k = 2
    target_probs = p.expand(k + 1, -1)
    counts: Counter[Hashable] = Counter()
    for _ in range(samples):
        drafts = torch.multinomial(q, k, replacement=True, generator=generator)
        draft_probs = None if one_hot_drafter else q.expand(k, -1)
        result = rule(drafts, draft_probs, target_probs, generator)
        emitted = result.committed(drafts.tolist())
        if len(emitted) < 2:
            # The second token would come from the next step, which again samples from p.
            emitted.append(int(torch.multinomial(p, 1, generator=generator).item()))
        counts[(emitted[0], emitted[1])] += 1
    expected = {(a, b): float(p[a] * p[b]) for a in range(5) for b in range(5)}
    return chi_square_p_value(counts, expected, samples)


@pytest.mark.parametrize("one_hot_drafter", [False, True], ids=["draft_probs", "one_hot"])
def test_speculative_sampling_matches_target_distribution(one_hot_drafter: bool) -> None:
    assert first_two_tokens_p_value(accept_speculative, one_hot_drafter) > ALPHA


@pytest.mark.parametrize(
    "broken_rule", [always_accept, resample_from_p], ids=["always_accept", "resample_from_p"]
)
def test_distribution_check_catches_broken_rules(broken_rule: AcceptRule) -> None:
    assert first_two_tokens_p_value(broken_rule, one_hot_drafter=False) < ALPHA
