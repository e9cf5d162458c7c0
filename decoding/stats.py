"""DecodeStats: what every decode run reports, for the benchmark and for the answer's metadata."""

from __future__ import annotations

import itertools
import resource
import sys
from dataclasses import dataclass, field
from typing import Any


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def percentile(values: list[float], fraction: float) -> float:
    """Linear-interpolated percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class DecodeStats:
    new_tokens: int = 0
    prompt_tokens: int = 0
    # Prompt tokens found in the target's cache from an earlier request, so not prefilled again.
    cached_prompt_tokens: int = 0
    target_calls: int = 0
    # Index i counts draft position i+1: proposed = verified drafts at that position, accepted = passed.
    proposed_by_position: list[int] = field(default_factory=list)
    accepted_by_position: list[int] = field(default_factory=list)
    draft_steps: int = 0
    plain_steps: int = 0
    ttft_s: float = 0.0
    prefill_s: float = 0.0
    draft_s: float = 0.0
    verify_s: float = 0.0
    wall_s: float = 0.0
    peak_rss_bytes: int = 0
    token_times_s: list[float] = field(default_factory=list)
    proposals_by_source: dict[str, int] = field(default_factory=dict)
    # Steps that verified a draft tree (decoding.draft_tree), their nodes in all, and how many of them
    # accepted a path that left the main chain (a branch supplied the accepted tokens).
    tree_steps: int = 0
    tree_nodes: int = 0
    branch_accepts: int = 0

    def record_step(self, proposed: int, accepted: int, source: str) -> None:
        while len(self.proposed_by_position) < proposed:
            self.proposed_by_position.append(0)
            self.accepted_by_position.append(0)
        for position in range(proposed):
            self.proposed_by_position[position] += 1
            if position < accepted:
                self.accepted_by_position[position] += 1
        if proposed:
            self.draft_steps += 1
            self.proposals_by_source[source] = self.proposals_by_source.get(source, 0) + 1
        else:
            self.plain_steps += 1

    @property
    def proposed(self) -> int:
        return sum(self.proposed_by_position)

    @property
    def accepted(self) -> int:
        return sum(self.accepted_by_position)

    @property
    def rejected(self) -> int:
        return self.proposed - self.accepted

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposed if self.proposed else 0.0

    @property
    def acceptance_by_position(self) -> list[float]:
        return [
            accepted / proposed if proposed else 0.0
            for proposed, accepted in zip(self.proposed_by_position, self.accepted_by_position, strict=True)
        ]

    @property
    def mean_accepted_length(self) -> float:
        """Mean accepted drafts per step that verified drafts."""
        return self.accepted / self.draft_steps if self.draft_steps else 0.0

    @property
    def tokens_per_target_call(self) -> float:
        return self.new_tokens / self.target_calls if self.target_calls else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def inter_token_latencies_ms(self) -> list[float]:
        times = self.token_times_s
        return [(later - earlier) * 1000.0 for earlier, later in itertools.pairwise(times)]

    def to_dict(self) -> dict[str, Any]:
        latencies = self.inter_token_latencies_ms
        return {
            "new_tokens": self.new_tokens,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "target_calls": self.target_calls,
            "tokens_per_target_call": self.tokens_per_target_call,
            "draft_steps": self.draft_steps,
            "plain_steps": self.plain_steps,
            "proposed": self.proposed,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "acceptance_rate": self.acceptance_rate,
            "proposed_by_position": list(self.proposed_by_position),
            "accepted_by_position": list(self.accepted_by_position),
            "acceptance_by_position": self.acceptance_by_position,
            "mean_accepted_length": self.mean_accepted_length,
            "proposals_by_source": dict(self.proposals_by_source),
            "tree_steps": self.tree_steps,
            "tree_nodes": self.tree_nodes,
            "branch_accepts": self.branch_accepts,
            "ttft_s": self.ttft_s,
            "prefill_s": self.prefill_s,
            "inter_token_latency_p50_ms": percentile(latencies, 0.5),
            "inter_token_latency_p95_ms": percentile(latencies, 0.95),
            "draft_s": self.draft_s,
            "verify_s": self.verify_s,
            "wall_s": self.wall_s,
            "tokens_per_s": self.tokens_per_s,
            "peak_rss_bytes": self.peak_rss_bytes,
        }
