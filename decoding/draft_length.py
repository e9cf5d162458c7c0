"""Cost-aware draft length: verify k drafts only when the expected tokens per second beats a plain step.

Expected tokens from verifying k drafts = 1 + sum_{j<=k} prod_{i<=j} a_i, where a_i is the running
estimate of P(draft i accepted | drafts before it accepted). The cost of a forward pass over k+1
tokens is measured once per model and device. On a CPU where verifying 2 tokens costs 1.7x one,
speculation only pays on confident proposals, and k=0 (a plain step) is the right answer otherwise.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import PreTrainedModel

from decoding.kv_cache import CachedModel

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

    def __post_init__(self) -> None:
        if not self.seconds or any(value <= 0 for value in self.seconds):
            raise ValueError("a cost curve needs a positive cost for k = 0..K")

    @property
    def max_draft(self) -> int:
        return len(self.seconds) - 1

    def ratio(self, k: int) -> float:
        return self.seconds[min(k, self.max_draft)] / self.seconds[0]

    @classmethod
    def flat(cls, max_draft: int) -> VerifyCostCurve:
        """Verifying is as cheap as one token (a GPU-like assumption, and the right one for tests)."""
        return cls(tuple(1.0 for _ in range(max_draft + 1)))

    def to_dict(self) -> dict[str, list[float]]:
        return {"seconds": list(self.seconds)}


def measure_verify_cost(
    model: PreTrainedModel,
    max_draft: int,
    *,
    context_length: int = 256,
    repeats: int = 3,
) -> VerifyCostCurve:
    """Median wall time of a forward over k+1 tokens on a `context_length` cache, for k = 0..max_draft."""
    cached = CachedModel(model)
    vocab = int(model.config.vocab_size)
    generator = torch.Generator().manual_seed(0)
    context = torch.randint(0, vocab, (context_length,), generator=generator).tolist()
    cached.forward(context, logits_to_keep=1)
    block = torch.randint(0, vocab, (max_draft + 1,), generator=generator).tolist()
    cached.forward(block[:1])  # warm-up
    cached.crop(context_length)
    seconds: list[float] = []
    for k in range(max_draft + 1):
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            cached.forward(block[: k + 1])
            timings.append(time.perf_counter() - started)
            cached.crop(context_length)
        seconds.append(statistics.median(timings))
    # Costs only grow with k; noise that says otherwise would make the chooser chase it.
    for k in range(1, len(seconds)):
        seconds[k] = max(seconds[k], seconds[k - 1])
    return VerifyCostCurve(tuple(seconds))


def cost_curve_key(model: PreTrainedModel, max_draft: int) -> str:
    parameter = next(model.parameters())
    config = model.config
    return (
        f"{config.model_type}-h{config.hidden_size}-l{config.num_hidden_layers}-v{config.vocab_size}"
        f"-{parameter.dtype}-{parameter.device}-t{torch.get_num_threads()}-k{max_draft}"
    )


def load_or_measure_verify_cost(
    model: PreTrainedModel,
    max_draft: int,
    cache_dir: Path | None = None,
) -> VerifyCostCurve:
    """The measured cost curve for this model on this device, from `cache_dir` when measured before."""
    key = cost_curve_key(model, max_draft)
    path = cache_dir / "verify-cost.json" if cache_dir is not None else None
    known: dict[str, dict[str, list[float]]] = {}
    if path is not None and path.is_file():
        try:
            known = json.loads(path.read_text())
            return VerifyCostCurve(tuple(known[key]["seconds"]))
        except (ValueError, KeyError, TypeError):
            pass
    curve = measure_verify_cost(model, max_draft)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        known[key] = curve.to_dict()
        staging = path.with_suffix(".json.tmp")
        staging.write_text(json.dumps(known, indent=2))
        staging.replace(path)
    return curve


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
    """

    bucket_weight: float = 2.0
    source_weight: float = 2.0
    # (source, bucket) -> per position [reached, accepted]; bucket -1 holds the source's pooled counts.
    counts: dict[tuple[str, int], list[list[int]]] = field(default_factory=dict)

    def _rows(self, source: str, bucket: int) -> list[list[int]]:
        return self.counts.get((source, bucket), [])

    def estimates(self, source: str, match_length: int, k: int) -> list[float]:
        bucket_rows = self._rows(source, match_bucket(match_length))
        pooled_rows = self._rows(source, -1)
        prior = match_length_prior(match_length)
        result = []
        for position in range(k):
            reached, accepted = pooled_rows[position] if position < len(pooled_rows) else (0, 0)
            pooled = (accepted + self.source_weight * prior) / (reached + self.source_weight)
            reached, accepted = bucket_rows[position] if position < len(bucket_rows) else (0, 0)
            result.append((accepted + self.bucket_weight * pooled) / (reached + self.bucket_weight))
        return result

    def record(self, source: str, match_length: int, proposed: int, accepted: int) -> None:
        for bucket in (match_bucket(match_length), -1):
            rows = self.counts.setdefault((source, bucket), [])
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
