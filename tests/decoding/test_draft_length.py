"""Cost-aware draft length: exact choices from hand-made acceptance and cost numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import LlamaForCausalLM

from decoding.draft_length import (
    AcceptanceTracker,
    VerifyCostCurve,
    best_draft_length,
    expected_tokens,
    load_or_measure_verify_cost,
)

# The CPU curve from the measured SmolLM2 numbers: k=1 costs 1.7x a plain step, k=8 about 2x.
CPU = VerifyCostCurve((72.0, 124.0, 128.0, 131.0, 136.0, 140.0, 143.0, 146.0, 148.0))


def test_expected_tokens() -> None:
    assert expected_tokens([0.5, 0.5]) == [1.0, 1.5, 1.75]
    assert expected_tokens([]) == [1.0]


@pytest.mark.parametrize(
    ("acceptance", "curve", "expected"),
    [
        # 0.4: at most 1/(1-0.4) = 1.67 tokens per step, never worth 1.7x a plain step.
        ([0.4] * 8, CPU, 0),
        # 0.6: k=5 expects 2.38 tokens for 140/72 = 1.94x the cost; k=6 adds 0.05 tokens for 3 more units.
        ([0.6] * 8, CPU, 5),
        ([0.95] * 8, CPU, 8),
        ([0.99, 0.99, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], CPU, 2),
        ([0.3] * 8, VerifyCostCurve.flat(8), 8),
        ([0.0] * 8, VerifyCostCurve.flat(8), 0),
    ],
    ids=[
        "forty_on_cpu",
        "sixty_on_cpu",
        "confident_on_cpu",
        "two_good_then_bad",
        "flat_cost_weak",
        "flat_cost_hopeless",
    ],
)
def test_best_draft_length(acceptance: list[float], curve: VerifyCostCurve, expected: int) -> None:
    assert best_draft_length(acceptance, curve) == expected


def test_draft_cost_can_make_speculation_not_pay() -> None:
    assert best_draft_length([0.9] * 4, VerifyCostCurve.flat(4)) == 4
    assert best_draft_length([0.9] * 4, VerifyCostCurve.flat(4), draft_cost_per_token_s=1.0) == 0


def test_tracker_prior_grows_with_match_length() -> None:
    tracker = AcceptanceTracker()
    assert tracker.estimates("evidence", 2, 2) == [0.5, 0.5]
    assert tracker.estimates("evidence", 8, 1) == [0.8]
    assert tracker.estimates("model", 0, 1) == [0.5]


def test_tracker_learns_per_position_bucket_and_source() -> None:
    tracker = AcceptanceTracker(bucket_weight=2.0, source_weight=2.0)
    tracker.record("evidence", 2, proposed=4, accepted=1)  # position 1 accepted, position 2 rejected
    tracker.record("evidence", 2, proposed=4, accepted=4)
    # Pooled at position 1: (2 + 2*0.5)/(2 + 2) = 0.75; bucket: (2 + 2*0.75)/(2 + 2) = 0.875.
    # Position 2: pooled (1 + 1)/(2 + 2) = 0.5, bucket (1 + 1)/(2 + 2) = 0.5.
    # Position 3: pooled (1 + 1)/(1 + 2) = 2/3, bucket (1 + 4/3)/(1 + 2) = 7/9.
    assert tracker.estimates("evidence", 2, 3) == pytest.approx([0.875, 0.5, 7 / 9])
    # Another bucket of the same source has no counts of its own: it takes the pooled rate.
    assert tracker.estimates("evidence", 1, 1) == pytest.approx([(2 + 2 / 3) / 4])
    assert tracker.estimates("prompt_lookup", 2, 1) == [0.5]


def test_repeated_failures_switch_speculation_off() -> None:
    tracker = AcceptanceTracker()
    assert best_draft_length(tracker.estimates("evidence", 3, 8), CPU) > 0
    for _ in range(4):
        tracker.record("evidence", 3, proposed=8, accepted=0)
    assert best_draft_length(tracker.estimates("evidence", 3, 8), CPU) == 0
    assert best_draft_length(tracker.estimates("evidence", 1, 8), CPU) == 0


def test_cost_curve_is_measured_once_and_cached(target: LlamaForCausalLM, tmp_path: Path) -> None:
    curve = load_or_measure_verify_cost(target, 4, tmp_path)
    assert curve.max_draft == 4
    assert all(later >= earlier for earlier, later in zip(curve.seconds, curve.seconds[1:], strict=False))
    assert (tmp_path / "verify-cost.json").is_file()
    assert load_or_measure_verify_cost(target, 4, tmp_path) == curve
