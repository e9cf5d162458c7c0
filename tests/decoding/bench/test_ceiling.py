"""The copy ceiling (decoding.bench.ceiling) against brute force on small outputs."""

from __future__ import annotations

import functools
import random

import pytest

from decoding.bench.ceiling import CopyCeiling, copy_ceiling, copy_runs, lookup_ceiling, lookup_runs
from decoding.draft_length import VerifyCostCurve

# Verifying k drafts costs 1 + 0.3k plain steps, up to k = 4.
RISING = VerifyCostCurve(tuple(1.0 + 0.3 * k for k in range(5)))


def naive_runs(prompt: list[int], tokens: list[int], max_draft: int) -> list[int]:
    """Every earlier occurrence of the last token, every length, read straight from the full text."""
    context = prompt + tokens
    runs = [0]
    for index in range(1, len(tokens)):
        here = len(prompt) + index
        limit = min(max_draft, len(tokens) - index - 1)
        best = 0
        for occurrence in range(here - 1):
            if context[occurrence] != context[here - 1]:
                continue
            for length in range(limit, 0, -1):
                if context[occurrence + 1 : occurrence + 1 + length] == context[here : here + length]:
                    best = max(best, length)
                    break
        runs.append(best)
    return runs


def brute_force_steps(runs: list[int], curve: VerifyCostCurve) -> float:
    """The least cost over every sequence of step lengths the runs allow."""

    @functools.cache
    def least(index: int) -> float:
        if index >= len(runs):
            return 0.0
        return min(curve.ratio(length) + least(index + 1 + length) for length in range(runs[index] + 1))

    return least(1) if len(runs) > 1 else 0.0


@pytest.mark.parametrize("seed", range(40))
def test_runs_and_least_steps_match_brute_force(seed: int) -> None:
    generator = random.Random(seed)
    vocabulary = generator.randint(2, 5)
    prompt = [generator.randrange(vocabulary) for _ in range(generator.randint(1, 12))]
    tokens = [generator.randrange(vocabulary) for _ in range(generator.randint(1, 14))]
    runs = copy_runs(prompt, tokens, RISING.max_draft)
    assert runs == naive_runs(prompt, tokens, RISING.max_draft)
    ceiling = copy_ceiling(prompt, tokens, RISING)
    assert ceiling.tokens == len(tokens) - 1
    assert ceiling.steps == pytest.approx(brute_force_steps(runs, RISING), abs=1e-12)


def test_an_output_the_prompt_holds_is_copied_in_one_step_where_verifying_is_free() -> None:
    prompt = [9, 1, 2, 3, 4, 5, 6]
    tokens = [1, 2, 3, 4, 5, 6, 0]
    # The step after "1" copies 2..6 (five drafts), and the target adds the 0 itself.
    assert copy_runs(prompt, tokens, 16) == [0, 5, 4, 3, 2, 1, 0]
    ceiling = copy_ceiling(prompt, tokens, VerifyCostCurve.flat(16))
    assert ceiling == CopyCeiling(6, 1.0)
    assert ceiling.speedup == 6.0
    # Drafts cut at max_draft: two drafts a step, so 6 tokens take two steps.
    assert copy_runs(prompt, tokens, 2) == [0, 2, 2, 2, 2, 1, 0]
    assert copy_ceiling(prompt, tokens, VerifyCostCurve.flat(2)).steps == 2.0


def test_a_copy_reads_on_through_itself() -> None:
    # "1" occurs once before the output; copying from it reads the output's own 1s (a loop of period 1).
    assert copy_runs([7, 1], [1, 1, 1, 1, 1], 16) == [0, 3, 2, 1, 0]


def test_drafting_that_never_pays_leaves_one_step_per_token() -> None:
    # Verifying k drafts costs k + 1 plain steps: a copy saves nothing, so the least cost is plain's.
    curve = VerifyCostCurve(tuple(float(k + 1) for k in range(5)))
    ceiling = copy_ceiling([1, 2, 3, 1, 2, 3], [1, 2, 3, 1, 2], curve)
    assert ceiling.steps == pytest.approx(4.0)
    assert ceiling.speedup == pytest.approx(1.0)


def test_no_tokens_after_the_first_have_no_ceiling() -> None:
    assert copy_ceiling([1, 2], [3], RISING) == CopyCeiling(0, 0.0)
    assert copy_ceiling([1, 2], [], RISING) == CopyCeiling(0, 0.0)
    assert CopyCeiling(0, 0.0).speedup is None


@pytest.mark.parametrize("seed", range(20))
def test_prompt_lookups_own_proposals_hold_no_more_than_the_best_copy(seed: int) -> None:
    generator = random.Random(seed)
    prompt = [generator.randrange(4) for _ in range(generator.randint(2, 16))]
    tokens = [generator.randrange(4) for _ in range(generator.randint(2, 16))]
    lookup, best = lookup_runs(prompt, tokens, RISING.max_draft), copy_runs(prompt, tokens, RISING.max_draft)
    assert all(0 <= mine <= most for mine, most in zip(lookup, best, strict=True))
    assert lookup_ceiling(prompt, tokens, RISING).steps >= copy_ceiling(prompt, tokens, RISING).steps - 1e-12


def test_prompt_lookup_copies_the_most_recent_occurrence_where_an_older_one_went_on_right() -> None:
    # "1 2" occurs twice before the output: first followed by 3 4 5, then (more recently) by 9.
    prompt = [1, 2, 3, 4, 5, 0, 1, 2, 9, 0]
    tokens = [1, 2, 3, 4, 5, 7]
    # After "1 2" prompt lookup drafts 9 (the recent occurrence); the best copy drafts 3 4 5.
    assert copy_runs(prompt, tokens, 16)[2] == 3
    assert lookup_runs(prompt, tokens, 16)[2] == 0
    flat = VerifyCostCurve.flat(16)
    assert copy_ceiling(prompt, tokens, flat).steps < lookup_ceiling(prompt, tokens, flat).steps
