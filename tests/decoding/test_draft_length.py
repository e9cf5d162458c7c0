"""Cost-aware draft length: exact choices from hand-made acceptance and cost numbers."""

from __future__ import annotations

import copy
import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from decoding import draft_length
from decoding.draft_length import (
    COST_CACHE_FORMAT,
    REMEASURE_ENV,
    AcceptanceTracker,
    ObservedCost,
    VerifyCostCurve,
    best_draft_length,
    choose_prefill_kernel,
    cost_curve_key,
    curve_problem,
    expected_tokens,
    load_or_measure_verify_cost,
    measure_verify_cost,
    monotone,
    omp_wait_policy,
)
from decoding.drafters import DraftProposal, ModelDrafter, PromptLookupDrafter
from decoding.kv_cache import CachedModel
from decoding.speculative import DecodeConfig, SpeculativeDecoder

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


def test_measure_verify_cost_times_every_k(target: LlamaForCausalLM) -> None:
    # The tiny model's forwards take microseconds, too few for a plausibility verdict to be stable.
    curve = measure_verify_cost(target, 4, repeats=2)
    assert curve.max_draft == 4
    smoothed = monotone(curve).seconds
    assert all(later >= earlier for earlier, later in itertools.pairwise(smoothed[1:]))
    assert smoothed[:2] == curve.seconds[:2]


def test_smoothing_keeps_a_plain_step_dearer_than_a_few_drafts() -> None:
    measured = VerifyCostCurve((10.0, 8.3, 9.4, 8.9, 10.4, 9.9))
    assert monotone(measured).seconds == (10.0, 8.3, 9.4, 9.4, 10.4, 10.4)
    # Verifying one draft costs less than a plain step, so any proposal is worth verifying.
    assert best_draft_length([0.05], monotone(measured)) == 1


def test_measurement_chooses_a_kernel_per_block_size(target: LlamaForCausalLM) -> None:
    curve = measure_verify_cost(target, 5, repeats=1)
    assert curve.kernels is not None and len(curve.kernels) == 6
    assert curve.kernels[0] == "stock"  # float64: one row has no other kernel
    lean = CachedModel(target).lean
    assert lean is not None
    for k, kernel in enumerate(curve.kernels):
        assert kernel in lean.kernel_choices(k + 1)


def test_a_float32_curve_chooses_the_one_row_and_prefill_kernels_and_decoders_take_them(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    model = copy.deepcopy(target).to(torch.float32)
    lean = CachedModel(model).lean
    assert lean is not None
    curve = measure_verify_cost(model, 3, repeats=1)
    assert curve.kernels is not None
    assert curve.kernels[0] in lean.kernel_choices(1)
    assert curve.prefill_kernel in lean.prefill_choices()
    assert curve.prefill_seconds is not None and curve.prefill_seconds > 0
    decoder = SpeculativeDecoder(model, tokenizer, None, DecodeConfig(max_draft=3, cost_curve=curve))
    assert decoder.target.lean is not None
    assert decoder.target.lean.kernels.get(1, "stock") == curve.kernels[0]
    assert decoder.target.lean.prefill_kernel == curve.prefill_kernel
    # float64 weights have one prefill kernel only.
    assert measure_verify_cost(target, 1, repeats=1).prefill_kernel == "stock"


def test_a_curve_names_a_known_prefill_kernel() -> None:
    with pytest.raises(ValueError, match="unknown prefill kernel 'packed'"):
        VerifyCostCurve((1.0, 2.0), ("stock", "stock"), "packed", 0.1)
    assert VerifyCostCurve((1.0, 2.0), ("native", "native"), "native", 0.1).prefill_kernel == "native"


def test_a_native_prefill_close_to_the_fastest_is_taken_so_one_copy_serves_both() -> None:
    assert choose_prefill_kernel({"stock": 0.5, "onednn": 0.30}) == "onednn"
    # Within 5% of oneDNN: the native kernel's copy serves prefills and verification blocks alike.
    assert choose_prefill_kernel({"stock": 0.5, "onednn": 0.30, "native": 0.31}) == "native"
    assert choose_prefill_kernel({"stock": 0.5, "onednn": 0.30, "native": 0.32}) == "onednn"
    assert choose_prefill_kernel({"stock": 0.5, "onednn": 0.30, "native": 0.25}) == "native"
    assert choose_prefill_kernel({"stock": 0.2, "native": 0.3}) == "stock"


def test_a_kernel_this_torch_cannot_run_is_left_out(
    target: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> torch.Tensor:
        raise RuntimeError("no such kernel here")

    monkeypatch.setattr(torch, "mm", broken)  # only the transposed kernel calls it
    curve = measure_verify_cost(target, 3, repeats=1)
    assert curve.kernels == ("stock", "stock", "stock", "stock")


def test_a_kernel_far_slower_than_the_fastest_is_not_measured_again(
    target: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    mm = torch.mm
    calls = 0

    def slow(*args: Any, **kwargs: Any) -> torch.Tensor:
        nonlocal calls
        calls += 1
        time.sleep(0.002)
        return mm(*args, **kwargs)

    monkeypatch.setattr(torch, "mm", slow)  # only the transposed kernel calls it
    curve = measure_verify_cost(target, 3, repeats=5)
    assert curve.kernels is not None and "transposed" not in curve.kernels
    # One product per linear layer (7 a layer, the LM head): warm-up plus two measured rounds for
    # k = 1..3 (one row has no transposed kernel), then no more.
    per_forward = 7 * len(target.model.layers) + 1
    assert calls == 3 * 3 * per_forward


def test_the_decoder_verifies_with_the_kernels_its_curve_chose(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    curve = VerifyCostCurve((10.0, 11.0, 12.0, 13.0), ("stock", "transposed", "stock", "transposed"))
    decoder = SpeculativeDecoder(target, tokenizer, config=DecodeConfig(max_draft=3, cost_curve=curve))
    assert decoder.target.lean is not None
    assert decoder.target.lean.kernels == {2: "transposed", 4: "transposed"}


def test_a_curve_names_known_kernels_one_per_cost() -> None:
    with pytest.raises(ValueError, match="unknown kernels"):
        VerifyCostCurve((1.0, 2.0), ("stock", "fast"))
    with pytest.raises(ValueError, match="1 kernels for 2 costs"):
        VerifyCostCurve((1.0, 2.0), ("stock",))


def test_the_cache_keeps_each_k_kernel(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    chosen = VerifyCostCurve(
        (10.0, 11.0, 12.0, 13.0, 14.0),
        ("stock", "transposed", "stock", "transposed", "packed"),
        "onednn",
        0.25,
    )
    handed = scripted_measurements(monkeypatch, [chosen, chosen])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == chosen
    reloaded = load_or_measure_verify_cost(target, 4, tmp_path)
    assert reloaded == chosen and reloaded.kernels == chosen.kernels
    assert (reloaded.prefill_kernel, reloaded.prefill_seconds) == ("onednn", 0.25)
    assert len(handed) == 1
    document = json.loads((tmp_path / "verify-cost.json").read_text())
    (entry,) = document["curves"].values()
    assert entry["kernels"] == list(chosen.kernels)
    assert entry["prefill_kernel"] == "onednn"


def test_cost_curve_is_measured_once_and_cached(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    handed = scripted_measurements(monkeypatch, [GOOD, GOOD])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert (tmp_path / "verify-cost.json").is_file()
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert len(handed) == 1


def scripted_measurements(
    monkeypatch: pytest.MonkeyPatch, curves: list[VerifyCostCurve]
) -> list[VerifyCostCurve]:
    """Replaces the timing with `curves`, handed out in order; returns the list of those handed out."""
    handed: list[VerifyCostCurve] = []

    def measure(model: object, max_draft: int, **_: object) -> VerifyCostCurve:
        handed.append(curves[len(handed)])
        return handed[-1]

    monkeypatch.setattr(draft_length, "measure_verify_cost", measure)
    return handed


GOOD = VerifyCostCurve((10.0, 17.0, 18.0, 19.0, 20.0))


@pytest.mark.parametrize(
    ("seconds", "plausible"),
    [
        ((10.0, 17.0, 18.0, 19.0, 20.0), True),
        ((10.0, 9.8, 10.5, 11.0, 11.0), True),  # within noise of flat
        ((10.0, 9.0, 10.0, 11.0, 12.0), True),  # a faster two-row kernel than the one-row one
        # Measured with OpenMP's default wait policy: 1-3 drafts cheaper than the one-row stock step.
        ((10.0, 8.3, 9.4, 8.9, 10.4), True),
        # The native few-row kernel against the stock one-row step, measured: 0.60, 0.60, 0.58.
        ((10.0, 6.0, 6.0, 5.8, 8.4), True),
        ((10.0, 3.0, 10.0, 11.0, 12.0), False),  # one draft far cheaper than a plain step
        ((10.0, 68.0, 70.0, 71.0, 72.0), False),  # 6.8x: speculation could never pay
        ((10.0, 17.0, 18.0, 12.0, 20.0), False),  # drops far below a smaller k
    ],
    ids=[
        "cpu_like",
        "flat_within_noise",
        "first_a_little_below_one",
        "few_rows_cheaper_than_one",
        "native_few_rows",
        "first_far_below_one",
        "first_absurdly_high",
        "not_monotone",
    ],
)
def test_curve_problem(seconds: tuple[float, ...], plausible: bool) -> None:
    assert (curve_problem(VerifyCostCurve(seconds)) is None) is plausible


def test_implausible_measurement_is_remeasured_and_conditions_recorded(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    flat = VerifyCostCurve((10.0, 3.0, 3.0, 3.0, 3.0))
    handed = scripted_measurements(monkeypatch, [flat, GOOD])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert handed == [flat, GOOD]
    document = json.loads((tmp_path / "verify-cost.json").read_text())
    assert document["format"] == COST_CACHE_FORMAT
    (entry,) = document["curves"].values()
    assert entry["seconds"] == list(GOOD.seconds)
    conditions = entry["conditions"]
    assert conditions["threads"] == torch.get_num_threads()
    assert conditions["omp_wait_policy"] == omp_wait_policy()
    assert conditions["torch_version"] == str(torch.__version__)
    assert conditions["context_length"] == 256
    assert conditions["method"] == "min-wall-interleaved-kernels"
    assert set(conditions) == {
        "threads",
        "omp_wait_policy",
        "torch_version",
        "context_length",
        "repeats",
        "method",
        "measured_at",
    }


def test_never_plausible_measurement_is_used_and_kept_provisionally_for_an_hour(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a machine too busy to measure a plausible curve, the next process uses the last one instead
    # of measuring three times again before its first answer; after an hour it measures once more.
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    absurd = VerifyCostCurve((10.0, 68.0, 60.0, 70.0, 70.0))
    handed = scripted_measurements(monkeypatch, [absurd] * 3)
    assert load_or_measure_verify_cost(target, 4, tmp_path).seconds == (10.0, 68.0, 68.0, 70.0, 70.0)
    assert len(handed) == 3
    path = tmp_path / "verify-cost.json"
    key = cost_curve_key(target, 4)
    assert set(json.loads(path.read_text())["curves"]) == {key + "#provisional"}
    again = scripted_measurements(monkeypatch, [GOOD])
    assert load_or_measure_verify_cost(target, 4, tmp_path).seconds == (10.0, 68.0, 68.0, 70.0, 70.0)
    assert again == []  # not measured: the provisional curve is young
    stored = json.loads(path.read_text())
    stored["curves"][key + "#provisional"]["conditions"]["measured_at"] = "2020-01-01T00:00:00+00:00"
    path.write_text(json.dumps(stored))
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert again == [GOOD]  # an hour on, measured again; the plausible curve replaces the provisional one
    assert set(json.loads(path.read_text())["curves"]) == {key}


def test_old_format_and_implausible_caches_are_ignored(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    key = cost_curve_key(target, 4)
    path = tmp_path / "verify-cost.json"
    path.write_text(json.dumps({key: {"seconds": [10.0, 17.0, 18.0, 19.0, 20.0]}}))
    scripted_measurements(monkeypatch, [GOOD, GOOD])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    stored = {"format": COST_CACHE_FORMAT, "curves": {key: {"seconds": [10.0, 68.0, 69.0, 70.0, 71.0]}}}
    path.write_text(json.dumps(stored))
    handed = scripted_measurements(monkeypatch, [GOOD])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert handed == [GOOD]


@pytest.mark.parametrize("by_env", [False, True], ids=["parameter", "environment"])
def test_remeasure_ignores_a_good_cache(
    target: LlamaForCausalLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_env: bool
) -> None:
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    other = VerifyCostCurve((10.0, 15.0, 16.0, 17.0, 18.0))
    scripted_measurements(monkeypatch, [GOOD, other, other])
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD
    assert load_or_measure_verify_cost(target, 4, tmp_path) == GOOD  # cached: no second measurement
    if by_env:
        monkeypatch.setenv(REMEASURE_ENV, "1")
    assert load_or_measure_verify_cost(target, 4, tmp_path, remeasure=not by_env) == other
    monkeypatch.delenv(REMEASURE_ENV, raising=False)
    assert load_or_measure_verify_cost(target, 4, tmp_path) == other


class SlowModelDrafter(ModelDrafter):
    """A model drafter that takes 20 ms per proposed token, as a large draft model on a CPU would."""

    def __init__(self, model: LlamaForCausalLM, vocab_size: int) -> None:
        super().__init__(model, target_vocab_size=vocab_size)
        self.requested: list[int] = []

    def propose(self, context_ids: Sequence[int] | torch.Tensor, k: int, *rest: Any) -> DraftProposal:
        self.requested.append(k)
        time.sleep(0.02 * k)
        return super().propose(context_ids, k, *rest)


def test_model_draft_time_is_weighed_against_verify_cost(
    target: LlamaForCausalLM, draft_model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    drafter = SlowModelDrafter(draft_model, int(target.config.vocab_size))
    # Verifying is nearly free (1 ms at any k), so only the drafter's own time can argue against drafting.
    config = DecodeConfig(max_draft=4, cost_curve=VerifyCostCurve(tuple(0.001 for _ in range(5))))
    decoder = SpeculativeDecoder(target, tokenizer, drafter, config)
    result = decoder.generate([0, 2, 3, 4, 2, 3, 4], 12)
    assert drafter.requested == [4]
    assert result.stats.draft_steps == 1
    assert decoder.draft_seconds_per_token["model"] >= 0.02


def test_the_cost_curve_key_names_the_forward_that_was_measured(
    target: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from decoding.lean_llama import can_pack, can_use_native
    from decoding.native_kernel import library_digest

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)

    assert cost_curve_key(target, 4).endswith(f"-torch.float64-cpu-t{torch.get_num_threads()}-k4-lean")
    float32 = copy.deepcopy(target).to(torch.float32)
    expected = "-lean-packed8,16" if can_pack(float32) else "-lean"
    # A changed native kernel (another digest of its source) is another key, measured again.
    expected += f"-native-{library_digest()[:8]}" if can_use_native(float32) else ""
    assert cost_curve_key(float32, 4).endswith(expected)
    eager = copy.deepcopy(target)
    eager.set_attn_implementation("eager")
    assert cost_curve_key(eager, 4).endswith("-k4")


def test_the_cost_curve_key_names_a_set_openmp_wait_policy(
    target: LlamaForCausalLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    unset = cost_curve_key(target, 4)
    assert unset.endswith("-k4-lean")
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    assert cost_curve_key(target, 4) == unset + "-omp-passive"
    assert omp_wait_policy() == "passive"


# A curve measured in a busy period: verifying 4 drafts at 2x a plain step.
BUSY = VerifyCostCurve((10.0, 20.0, 20.0, 20.0, 20.0))


def test_nothing_observed_leaves_the_curve_as_measured() -> None:
    assert ObservedCost().calibrated(BUSY) is BUSY


def test_observed_verify_times_pull_the_curve_towards_them() -> None:
    observed = ObservedCost()
    acceptance = [0.4] * 4
    assert best_draft_length(acceptance, observed.calibrated(BUSY)) == 0
    for _ in range(40):
        observed.record(0, 10.0, BUSY)
        observed.record(4, 11.0, BUSY)
    calibrated = observed.calibrated(BUSY)
    # 28 observations (after fading) of 1.1x against the curve's 2x, worth 8: about 1.3x.
    assert 1.2 < calibrated.ratio(4) < 1.35
    # Drafting that the busy curve ruled out pays at the cost decoding saw.
    assert best_draft_length(acceptance, calibrated) == 4


def test_a_uniformly_slower_machine_changes_no_choice() -> None:
    observed = ObservedCost()
    for _ in range(200):
        observed.record(0, 20.0, BUSY)
        observed.record(2, 40.0, BUSY)
    # Only ratios are corrected, in the curve's units: both doubled, so nothing moved.
    assert observed.calibrated(BUSY).seconds == pytest.approx(BUSY.seconds)


def test_without_a_plain_step_the_smallest_block_observed_is_the_anchor() -> None:
    observed = ObservedCost()
    observed.record(1, 11.0, BUSY)
    # One size observed: nothing to compare it with, so nothing moves.
    assert observed.calibrated(BUSY).seconds == pytest.approx(BUSY.seconds)
    for _ in range(40):  # a decoder that verified drafts on every step: 4 drafts at twice one draft's time
        observed.record(1, 11.0, BUSY)
        observed.record(4, 22.0, BUSY)
    calibrated = observed.calibrated(BUSY)
    # One draft keeps the curve's 2x; four, observed at 4x against it (worth 28 after fading), move
    # from the curve's 2x: (8 * 2 + 28 * 4) / 36.
    assert calibrated.ratio(1) == pytest.approx(2.0)
    assert 3.3 < calibrated.ratio(4) < 3.8


def test_one_outlier_barely_moves_the_curve() -> None:
    observed = ObservedCost()
    observed.record(0, 10.0, BUSY)
    # One page fault: capped at twice what is expected (2x a plain step), weighed as one of nine.
    observed.record(1, 2000.0, BUSY)
    assert observed.calibrated(BUSY).seconds[1] == pytest.approx(10.0 * (8 * 2.0 + 4.0) / 9)


def test_older_observations_fade() -> None:
    observed = ObservedCost()
    for _ in range(50):
        observed.record(0, 10.0, BUSY)
        observed.record(1, 30.0, BUSY)
    for _ in range(300):
        observed.record(0, 10.0, BUSY)
        observed.record(1, 12.0, BUSY)
    # 2.0 weighs 8, the 1.2 observed 50: the 3.0 seen first has faded out.
    assert observed.calibrated(BUSY).ratio(1) == pytest.approx((8 * 2.0 + 50 * 1.2) / 58, rel=0.01)


def test_the_decoder_learns_its_verify_times_while_decoding(
    target: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast
) -> None:
    curve = VerifyCostCurve.flat(4)
    decoder = SpeculativeDecoder(
        target, tokenizer, PromptLookupDrafter(), DecodeConfig(max_draft=4, cost_curve=curve)
    )
    result = decoder.generate([0, 2, 3, 4, 2, 3, 4, 2, 3], 16)
    seen = decoder.observed_cost.seen
    # One observation per step after the prefill, each k by itself (decay only thins repeats).
    steps = result.stats.target_calls - 1
    assert seen and 0.8 * steps <= sum(weight for weight, _ in seen.values()) <= steps
    assert decoder.choice_curve != curve
    # The learnt state carries them, so a benchmark's repeats start from the same estimates.
    state = decoder.learnt_state()
    decoder.generate([0, 5, 6, 7, 5, 6, 7], 8)
    decoder.restore_learnt_state(state)
    assert decoder.observed_cost.seen == state.observed_cost.seen
    # A fixed draft length chooses nothing, so it observes nothing.
    fixed = SpeculativeDecoder(
        target, tokenizer, PromptLookupDrafter(), DecodeConfig(draft_length=2, cost_curve=curve)
    )
    fixed.generate([0, 2, 3, 4, 2, 3, 4, 2, 3], 8)
    assert fixed.observed_cost.seen == {}
    # Told not to, it keeps to the given curve whatever it observes.
    steady = SpeculativeDecoder(
        target,
        tokenizer,
        PromptLookupDrafter(),
        DecodeConfig(max_draft=4, cost_curve=curve, observe_cost=False),
    )
    steady.generate([0, 2, 3, 4, 2, 3, 4, 2, 3], 16)
    assert steady.choice_curve is curve
