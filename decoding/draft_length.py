"""Cost-aware draft length: verify k drafts only when the expected tokens per second beats a plain step.

Expected tokens from verifying k drafts = 1 + sum_{j<=k} prod_{i<=j} a_i, where a_i is the running
estimate of P(draft i accepted | drafts before it accepted). The cost of a forward pass over k+1
tokens is measured once per model and device. On a CPU where verifying 2 tokens costs 1.7x one,
speculation only pays on confident proposals, and k=0 (a plain step) is the right answer otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedModel

from decoding.kv_cache import CachedModel
from decoding.lean_llama import KERNELS, PACK_ROWS, PREFILL_KERNELS, LeanLlama, can_pack, can_use_native
from decoding.native_kernel import library_digest as native_library_digest
from decoding.packed_linear import is_prepacked

# Match-length buckets: a proposal continuing a 12-token match is far likelier to be right than one
# continuing a single token, so acceptance is tracked per bucket.
_MATCH_BUCKETS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def match_bucket(match_length: int) -> int:
    bucket = 0
    for edge in _MATCH_BUCKETS:
        if match_length >= edge:
            bucket = edge
    return bucket


@dataclass(frozen=True)
class VerifyCostCurve:
    """seconds[k] = wall time of one forward pass over k+1 new tokens (k drafts plus the pending token)."""

    seconds: tuple[float, ...]
    # kernels[k]: the linear-layer kernel (decoding.lean_llama.KERNELS) that measured fastest for k+1
    # rows, which the decoder then uses; None where there was no choice (not the lean forward).
    kernels: tuple[str, ...] | None = None
    # The kernel prefills measured fastest with (decoding.lean_llama.PREFILL_KERNELS), and the least
    # time of a prefill of the measured context with it; None where there was no choice.
    prefill_kernel: str | None = None
    prefill_seconds: float | None = None

    def __post_init__(self) -> None:
        if not self.seconds or any(value <= 0 for value in self.seconds):
            raise ValueError("a cost curve needs a positive cost for k = 0..K")
        if self.kernels is not None:
            if len(self.kernels) != len(self.seconds):
                raise ValueError(f"{len(self.kernels)} kernels for {len(self.seconds)} costs")
            unknown = sorted(set(self.kernels) - set(KERNELS))
            if unknown:
                raise ValueError(f"unknown kernels {unknown}; known: {list(KERNELS)}")
        if self.prefill_kernel is not None and self.prefill_kernel not in PREFILL_KERNELS:
            raise ValueError(
                f"unknown prefill kernel {self.prefill_kernel!r}; known: {list(PREFILL_KERNELS)}"
            )

    @property
    def max_draft(self) -> int:
        return len(self.seconds) - 1

    def ratio(self, k: int) -> float:
        return self.seconds[min(k, self.max_draft)] / self.seconds[0]

    @classmethod
    def flat(cls, max_draft: int) -> VerifyCostCurve:
        """Verifying is as cheap as one token (a GPU-like assumption, and the right one for tests)."""
        return cls(tuple(1.0 for _ in range(max_draft + 1)))

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {"seconds": list(self.seconds)}
        if self.kernels is not None:
            document["kernels"] = list(self.kernels)
        if self.prefill_kernel is not None:
            document["prefill_kernel"] = self.prefill_kernel
            document["prefill_seconds"] = self.prefill_seconds
        return document


# Bumped whenever the cache layout or the measurement method changes: older caches are ignored
# (6: one-row steps, k = 0, choose their kernel too; 7: and prefills).
COST_CACHE_FORMAT = 7
REMEASURE_ENV = "AKM_REMEASURE_VERIFY_COST"
MEASUREMENT_METHOD = "min-wall-interleaved-kernels"

# Bounds on what a CPU or GPU forward can plausibly cost. Verifying one draft reads the same weights as
# a plain step, so it cannot be much cheaper (noise aside) nor many times dearer; a curve outside these
# bounds was measured on a busy machine and would steer the chooser wrong for as long as it is cached.
# Where a plain step has only the stock one-row kernel, a faster kernel for a few rows can make k = 1
# to 3 cheaper than k = 0: 0.83x on a 2-core AMD EPYC with OpenMP's default wait policy, 0.5-0.6x with
# the native few-row kernel (decoding.native_kernel; see docs/speculative-decoding.md). So the blocks
# of k >= 1 are judged against each other, and k = 1 against k = 0 only by these bounds. With the
# native kernel for one row too, a two-row block measured 1.13x the one-row step on that machine.
_MIN_FIRST_RATIO = 0.4
_MAX_FIRST_RATIO = 3.0
_MONOTONE_TOLERANCE = 0.85
_MEASURE_ATTEMPTS = 3
# After this many measured rounds, a kernel this many times slower than the fastest for its k is not
# measured again (the least time over rounds can only fall by what load added to it).
_PRUNE_AFTER_ROUNDS = 2
_PRUNE_RATIO = 1.3


def curve_problem(curve: VerifyCostCurve) -> str | None:
    """Why a measured curve cannot be right, or None when it is plausible."""
    if curve.max_draft >= 1:
        first = curve.ratio(1)
        if first < _MIN_FIRST_RATIO:
            return f"verifying one draft measured {first:.2f}x a plain step (below {_MIN_FIRST_RATIO})"
        if first > _MAX_FIRST_RATIO:
            return f"verifying one draft measured {first:.2f}x a plain step (above {_MAX_FIRST_RATIO})"
    highest = curve.seconds[1] if curve.max_draft >= 1 else curve.seconds[0]
    for k in range(2, curve.max_draft + 1):
        value = curve.seconds[k]
        if value < _MONOTONE_TOLERANCE * highest:
            return f"cost at k={k} is {value / highest:.2f} of a smaller k's: not monotone beyond noise"
        highest = max(highest, value)
    return None


def monotone(curve: VerifyCostCurve) -> VerifyCostCurve:
    """Costs of k >= 1 only grow with k; noise that says otherwise would make the chooser chase it. A
    plain step (k = 0, the one-row kernel) may cost more than verifying a few drafts and stays as
    measured."""
    seconds = list(curve.seconds)
    for k in range(2, len(seconds)):
        seconds[k] = max(seconds[k], seconds[k - 1])
    return dataclasses.replace(curve, seconds=tuple(seconds))


@dataclass
class ObservedCost:
    """Verify times the decoder observed, per k, blended into the measured curve's ratios.

    The curve is measured once per model, device and thread count and then cached, but the machine's
    load changes after that: on one shared machine a plain step took 70 ms in one period and 50 ms in
    another, and verifying 16 drafts cost 1.51x a plain step while decoding against 2.04x in the cached
    curve. So each k's cost relative to a plain step becomes a weighted mean of the curve's ratio and
    the ratio observed (the mean time for that k over the mean plain step); `prior_weight` observations
    weigh as much as the curve, and at most 1 / (1 - decay) count, as older ones fade so that a change
    of load is followed. An observation is capped at `outlier_ratio` times what is expected of it, so
    one page fault cannot switch drafting off. Only ratios are corrected, in the curve's own units: a
    uniformly slower machine changes no choice, and a curve given in other units stays consistent.
    """

    prior_weight: float = 8.0
    decay: float = 0.98
    outlier_ratio: float = 2.0
    # k -> [weight of its observations, their mean in seconds]
    seen: dict[int, list[float]] = field(default_factory=dict)

    def record(self, k: int, seconds: float, curve: VerifyCostCurve) -> None:
        if k > curve.max_draft or seconds <= 0:
            return
        plain = self._plain_seconds(curve)
        if plain is not None:
            expected = plain * self.calibrated(curve).ratio(k)
            seconds = min(seconds, self.outlier_ratio * expected)
        weight, mean = self.seen.get(k, (0.0, 0.0))
        weight = weight * self.decay + 1.0
        self.seen[k] = [weight, mean + (seconds - mean) / weight]

    def _plain_seconds(self, curve: VerifyCostCurve) -> float | None:
        """The observed time of a plain step; where a decoder has verified drafts on every step so far,
        the smallest observed block's time over its ratio in the curve (None before any observation)."""
        if 0 in self.seen:
            return self.seen[0][1]
        if not self.seen:
            return None
        smallest = min(self.seen)
        return self.seen[smallest][1] / curve.ratio(smallest)

    def calibrated(self, curve: VerifyCostCurve) -> VerifyCostCurve:
        """The curve with every observed k's ratio to a plain step moved towards the observed one; the
        curve itself until something has been observed. Without a plain step observed, the smallest
        observed block keeps the curve's ratio and the others are measured against it: a composite that
        verifies a guess on every step still learns that its longer blocks cost more than the curve said."""
        plain = self._plain_seconds(curve)
        if plain is None:
            return curve
        seconds = [curve.seconds[0]]
        for k in range(1, curve.max_draft + 1):
            weight, mean = self.seen.get(k, (0.0, 0.0))
            ratio = (self.prior_weight * curve.ratio(k) + weight * mean / plain) / (
                self.prior_weight + weight
            )
            seconds.append(curve.seconds[0] * ratio)
        # Not smoothed to grow with k: an observed cost is measured, not noise of one measurement, and
        # a k the decoder is steered away from wrongly is observed again when it is chosen.
        return dataclasses.replace(curve, seconds=tuple(seconds))


def measure_verify_cost(
    model: PreTrainedModel,
    max_draft: int,
    *,
    context_length: int = 256,
    repeats: int = 5,
) -> VerifyCostCurve:
    """Least wall time of a forward over k+1 tokens on a `context_length` cache, for k = 0..max_draft,
    with the fastest of the linear-layer kernels the lean forward offers for each k.

    Which kernel is fastest for a few rows depends on the CPU and its BLAS build (on one machine the
    stock kernel for two rows cost 2x one row, the transposed product 0.9x), so it is measured, not
    assumed. Rounds visit every k and kernel in turn, so a burst of load hits all alike instead of
    one; the minimum over rounds is the cost with the least interference, which load can only add to.
    The prefill of that context is timed with each prefill kernel the same way.
    The raw curve is returned: `curve_problem` judges it before `monotone` smooths it.
    """
    cached = CachedModel(model)
    lean = cached.lean
    choices = [lean.kernel_choices(k + 1) if lean is not None else ("stock",) for k in range(max_draft + 1)]
    vocab = int(model.config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    context = torch.randint(0, vocab, (context_length,), generator=generator).tolist()
    prefill = _fastest_prefill(cached, context, repeats) if lean is not None else None
    cached.reset()
    cached.forward(context, logits_to_keep=1)
    block = torch.randint(0, vocab, (max_draft + 1,), generator=generator).tolist()
    best: dict[tuple[int, str], float] = {}
    for round_index in range(repeats + 1):  # round 0 warms up: first calls of a shape pay for allocation
        if round_index == _PRUNE_AFTER_ROUNDS + 1:
            choices = _without_slow_kernels(choices, best)
        for k in range(max_draft + 1):
            for kernel in choices[k]:
                if lean is not None:
                    lean.set_kernel(k + 1, kernel)
                started = time.perf_counter()
                try:
                    cached.forward(block[: k + 1])
                except RuntimeError:
                    if kernel == "stock":
                        raise
                    # This torch build cannot run that kernel here: it is not a choice.
                    choices = [tuple(other for other in options if other != kernel) for options in choices]
                    cached.crop(min(context_length, cached.length))
                    continue
                elapsed = time.perf_counter() - started
                cached.crop(context_length)
                if round_index:
                    best[k, kernel] = min(best.get((k, kernel), float("inf")), elapsed)
    fastest = [min(choices[k], key=lambda kernel: best[k, kernel]) for k in range(max_draft + 1)]
    if lean is not None:
        for kernel in ("onednn", "packed", "native"):
            if kernel not in fastest and (prefill is None or prefill[0] != kernel):
                lean.drop_copies(kernel)
    return VerifyCostCurve(
        tuple(best[k, kernel] for k, kernel in enumerate(fastest)),
        tuple(fastest) if lean is not None else None,
        prefill[0] if prefill is not None else None,
        prefill[1] if prefill is not None else None,
    )


def _without_slow_kernels(
    choices: list[tuple[str, ...]], best: dict[tuple[int, str], float]
) -> list[tuple[str, ...]]:
    """Each k's kernels without those already `_PRUNE_RATIO` times slower than its fastest: their
    later rounds would only lengthen the measurement (the stock kernel for a few rows can take 3x the
    native one), since load adds time and never takes it away."""
    kept = []
    for k, options in enumerate(choices):
        measured = {kernel: best[k, kernel] for kernel in options if (k, kernel) in best}
        if not measured:
            kept.append(options)
            continue
        fastest = min(measured.values())
        kept.append(
            tuple(kernel for kernel in options if measured.get(kernel, 0.0) <= _PRUNE_RATIO * fastest)
        )
    return kept


# A native prefill within this fraction of the fastest prefill is taken: where verification blocks
# take the native kernel too (the fastest for them on every machine measured), one copy of the weights
# serves both, and a oneDNN copy (as large as the model's weights) is not kept for prefills alone. On
# the 2-core AMD EPYC the native prefill of 256 tokens took 1.00-1.04 of oneDNN's time, and keeping
# both copies took 0.5 GB more memory (`akm ask`'s peak 2.2 GB against 1.7 GB).
SHARED_COPY_MARGIN = 0.05


def _fastest_prefill(cached: CachedModel, context: list[int], repeats: int) -> tuple[str, float]:
    """The prefill kernel with the least wall time for `context` from an empty cache (a native one
    within `SHARED_COPY_MARGIN` of it), and that kernel's time; the lean forward is left on it. Rounds
    alternate the kernels, after one round of warming up."""
    lean = cached.lean
    assert lean is not None
    choices = lean.prefill_choices()
    best = dict.fromkeys(choices, float("inf"))
    for round_index in range(min(repeats, 3) + 1):
        for kernel in choices:
            lean.set_prefill_kernel(kernel)
            cached.reset()
            started = time.perf_counter()
            cached.forward(context, logits_to_keep=1)
            if round_index:
                best[kernel] = min(best[kernel], time.perf_counter() - started)
    kernel = choose_prefill_kernel(best)
    lean.set_prefill_kernel(kernel)
    return kernel, best[kernel]


def choose_prefill_kernel(seconds: dict[str, float]) -> str:
    """The prefill kernel to take from each kernel's least measured time: the fastest, or the native
    one where it is within `SHARED_COPY_MARGIN` of the fastest."""
    fastest = min(seconds, key=lambda name: seconds[name])
    if "native" in seconds and seconds["native"] <= seconds[fastest] * (1 + SHARED_COPY_MARGIN):
        return "native"
    return fastest


def _lean_suffix(model: PreTrainedModel) -> str:
    """`-lean` for the lean Llama forward, with the row counts its weights are packed for."""
    if not LeanLlama.supports(model):
        return ""
    packed = ",".join(str(rows) for rows in PACK_ROWS) if can_pack(model) else ""
    # The native library's name carries a digest of its source: a changed kernel is measured again.
    native = f"-native-{native_library_digest()[:8]}" if can_use_native(model) else ""
    return f"-lean{'-packed' + packed if packed else ''}{native}"


def omp_wait_policy() -> str:
    """OpenMP's wait policy for this process (`OMP_WAIT_POLICY`), `default` when unset. It moves the
    curve: with `PASSIVE`, idle threads sleep between the forward's many small operations and a block
    of a few rows loses most of its advantage over a one-row step (docs/speculative-decoding.md)."""
    return os.environ.get("OMP_WAIT_POLICY", "").strip().lower() or "default"


def cost_curve_key(model: PreTrainedModel, max_draft: int) -> str:
    parameter = next(model.parameters())
    config = model.config
    policy = omp_wait_policy()
    return (
        f"{config.model_type}-h{config.hidden_size}-l{config.num_hidden_layers}-v{config.vocab_size}"
        f"-{parameter.dtype}-{parameter.device}-t{torch.get_num_threads()}-k{max_draft}"
        f"{'-packed' if is_prepacked(model) else ''}"
        f"{_lean_suffix(model)}"
        f"{'' if policy == 'default' else f'-omp-{policy}'}"
    )


def measurement_conditions(context_length: int, repeats: int) -> dict[str, object]:
    """What a cached curve was measured under, so a stale or odd one can be told apart."""
    return {
        "threads": torch.get_num_threads(),
        "omp_wait_policy": omp_wait_policy(),
        "torch_version": str(torch.__version__),
        "context_length": context_length,
        "repeats": repeats,
        "method": MEASUREMENT_METHOD,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _read_cache(path: Path | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("format") != COST_CACHE_FORMAT:
        return {}
    curves = document.get("curves")
    return curves if isinstance(curves, dict) else {}


def _cached_curve(entry: object) -> VerifyCostCurve | None:
    try:
        kernels = entry.get("kernels")  # type: ignore[attr-defined]
        prefill_kernel = entry.get("prefill_kernel")  # type: ignore[attr-defined]
        prefill_seconds = entry.get("prefill_seconds")  # type: ignore[attr-defined]
        curve = VerifyCostCurve(
            tuple(float(value) for value in entry["seconds"]),  # type: ignore[index]
            None if kernels is None else tuple(str(kernel) for kernel in kernels),
            None if prefill_kernel is None else str(prefill_kernel),
            None if prefill_seconds is None else float(prefill_seconds),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return curve if curve_problem(curve) is None else None


def load_or_measure_verify_cost(
    model: PreTrainedModel,
    max_draft: int,
    cache_dir: Path | None = None,
    *,
    remeasure: bool = False,
    context_length: int = 256,
    repeats: int = 5,
) -> VerifyCostCurve:
    """The measured cost curve for this model on this device, from `cache_dir` when measured before.

    `remeasure` (or AKM_REMEASURE_VERIFY_COST=1) ignores the cache. A curve that fails
    `curve_problem` is measured again; if every attempt fails, the last is used and kept as a
    provisional curve for `PROVISIONAL_SECONDS`: on a machine too busy to measure a plausible curve,
    the next processes use it rather than spend minutes measuring again before each answer, and the
    first process after that hour measures once more.
    """
    key = cost_curve_key(model, max_draft)
    path = cache_dir / "verify-cost.json" if cache_dir is not None else None
    curves = _read_cache(path)
    remeasure = remeasure or os.environ.get(REMEASURE_ENV, "") not in ("", "0")
    if not remeasure and key in curves:
        cached = _cached_curve(curves[key])
        if cached is not None:
            return cached
    if not remeasure:
        provisional = _provisional_curve(curves.get(key + _PROVISIONAL_SUFFIX))
        if provisional is not None:
            return provisional
    curve = measure_verify_cost(model, max_draft, context_length=context_length, repeats=repeats)
    for _ in range(_MEASURE_ATTEMPTS - 1):
        if curve_problem(curve) is None:
            break
        curve = measure_verify_cost(model, max_draft, context_length=context_length, repeats=repeats)
    problem = curve_problem(curve)
    curve = monotone(curve)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {**curve.to_dict(), "conditions": measurement_conditions(context_length, repeats)}
        if problem is None:
            curves[key] = entry
            curves.pop(key + _PROVISIONAL_SUFFIX, None)
        else:
            curves[key + _PROVISIONAL_SUFFIX] = {**entry, "problem": problem}
        staging = path.with_suffix(".json.tmp")
        staging.write_text(json.dumps({"format": COST_CACHE_FORMAT, "curves": curves}, indent=2))
        staging.replace(path)
    return curve


# How long a curve measured on a busy machine (every attempt implausible) is used before measuring again.
PROVISIONAL_SECONDS = 3600.0
_PROVISIONAL_SUFFIX = "#provisional"


def _provisional_curve(entry: object) -> VerifyCostCurve | None:
    """A provisional curve younger than `PROVISIONAL_SECONDS`, or None."""
    try:
        measured = datetime.fromisoformat(str(entry["conditions"]["measured_at"]))  # type: ignore[index]
        curve = VerifyCostCurve(tuple(float(value) for value in entry["seconds"]))  # type: ignore[index]
        kernels = entry.get("kernels")  # type: ignore[attr-defined]
        prefill_kernel = entry.get("prefill_kernel")  # type: ignore[attr-defined]
        prefill_seconds = entry.get("prefill_seconds")  # type: ignore[attr-defined]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    age = (datetime.now(UTC) - measured).total_seconds()
    if not 0 <= age < PROVISIONAL_SECONDS:
        return None
    return VerifyCostCurve(
        curve.seconds,
        None if kernels is None else tuple(str(kernel) for kernel in kernels),
        None if prefill_kernel is None else str(prefill_kernel),
        None if prefill_seconds is None else float(prefill_seconds),
    )


def match_length_prior(match_length: int) -> float:
    """Acceptance expected before any evidence: longer context matches are likelier to be continued.

    Model drafters (match length 0) start at one half.
    """
    if match_length <= 0:
        return 0.5
    return match_length / (match_length + 2.0)


@dataclass
class AcceptanceTracker:
    """Running estimates of P(draft i accepted | drafts before it accepted).

    Counted per drafter source and match-length bucket, and pooled per source: a bucket with
    few observations leans on its source's pooled rate, which in turn leans on a prior that grows
    with match length. So a drafter that keeps failing stops being verified after a few steps,
    in every bucket, while long matches of a drafter that copies well are trusted at once.

    A composite also tells apart the steps where no other member proposed the same next token
    (`alone`): a guess that is often right while the text is being copied, when the other members
    propose it too, is seldom right where it stands alone, and those are the steps where it decides
    what is verified. Such steps are counted in buckets of their own, which lean on the source's
    alone-pooled rate, which leans on the source's pooled rate (all steps).
    """

    bucket_weight: float = 2.0
    source_weight: float = 2.0
    # (source, bucket, alone) -> per position [reached, accepted]; bucket -1 holds pooled counts,
    # (source, -1, False) those of every step of the source.
    counts: dict[tuple[str, int, bool], list[list[int]]] = field(default_factory=dict)

    def _rows(self, source: str, bucket: int, alone: bool) -> list[list[int]]:
        return self.counts.get((source, bucket, alone), [])

    def estimates(self, source: str, match_length: int, k: int, alone: bool = False) -> list[float]:
        levels = [self._rows(source, -1, False)]
        if alone:
            levels.append(self._rows(source, -1, True))
        levels.append(self._rows(source, match_bucket(match_length), alone))
        weights = [self.source_weight] * (len(levels) - 1) + [self.bucket_weight]
        prior = match_length_prior(match_length)
        result = []
        for position in range(k):
            rate = prior
            for rows, weight in zip(levels, weights, strict=True):
                reached, accepted = rows[position] if position < len(rows) else (0, 0)
                rate = (accepted + weight * rate) / (reached + weight)
            result.append(rate)
        return result

    def record(
        self, source: str, match_length: int, proposed: int, accepted: int, alone: bool = False
    ) -> None:
        keys = [(source, match_bucket(match_length), alone), (source, -1, False)]
        if alone:
            keys.append((source, -1, True))
        for key in keys:
            rows = self.counts.setdefault(key, [])
            while len(rows) < proposed:
                rows.append([0, 0])
            # Position accepted+1 was reached and rejected; positions after it were never tested.
            for position in range(min(proposed, accepted + 1)):
                rows[position][0] += 1
                if position < accepted:
                    rows[position][1] += 1


def expected_tokens(acceptance: list[float]) -> list[float]:
    """expected[k] = expected tokens committed by a step verifying the first k drafts."""
    expected = [1.0]
    survive = 1.0
    for rate in acceptance:
        survive *= rate
        expected.append(expected[-1] + survive)
    return expected


def best_draft_length(
    acceptance: list[float],
    cost: VerifyCostCurve,
    draft_cost_per_token_s: float = 0.0,
    min_gain: float = 1.1,
) -> int:
    """The k (0 = a plain step) with the most expected tokens per second.

    Speculating must beat a plain step by `min_gain`: the estimates are noisy, and a marginal
    expected gain is not worth the risk of being slower than plain decoding.
    """
    expected = expected_tokens(acceptance[: cost.max_draft])
    plain_rate = expected[0] / cost.seconds[0]
    best_k, best_rate = 0, plain_rate * min_gain
    for k in range(1, len(expected)):
        rate = expected[k] / (cost.seconds[k] + k * draft_cost_per_token_s)
        if rate > best_rate:
            best_k, best_rate = k, rate
    return best_k
