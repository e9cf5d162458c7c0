"""Prometheus metrics of one app instance (its own registry, never the process-global one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
RATE_BUCKETS = (1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 200.0, 500.0)
LENGTH_BUCKETS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0)


class ServiceMetrics:
    """Request, answer, decoding and retrieval measures, exported as Prometheus text."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "akm_http_requests_total",
            "HTTP requests by route template, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "akm_http_request_duration_seconds",
            "HTTP request latency by route template, method and status.",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.in_progress_generations = Gauge(
            "akm_generations_in_progress", "Answer generations running now.", registry=self.registry
        )
        self.verdicts = Counter(
            "akm_answer_verdicts_total", "Answers by packet verdict.", ["verdict"], registry=self.registry
        )
        self.decode_tokens_per_second = Histogram(
            "akm_decode_tokens_per_second",
            "Decoded tokens per second of each answer.",
            buckets=RATE_BUCKETS,
            registry=self.registry,
        )
        self.mean_accepted_length = Histogram(
            "akm_decode_mean_accepted_length",
            "Mean accepted draft length per speculative step of each answer.",
            buckets=LENGTH_BUCKETS,
            registry=self.registry,
        )
        self.drafts_proposed = Counter(
            "akm_decode_draft_tokens_proposed_total",
            "Draft tokens verified by the target, by draft position (1-based).",
            ["position"],
            registry=self.registry,
        )
        self.drafts_accepted = Counter(
            "akm_decode_draft_tokens_accepted_total",
            "Draft tokens accepted by the target, by draft position (1-based).",
            ["position"],
            registry=self.registry,
        )
        self.acceptance_by_position = Gauge(
            "akm_decode_acceptance_by_position",
            "Acceptance rate by draft position over every answer of this worker.",
            ["position"],
            registry=self.registry,
        )
        self.lane_seconds = Histogram(
            "akm_retrieval_lane_duration_seconds",
            "Retrieval latency by lane.",
            ["lane"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.rejected_candidates = Counter(
            "akm_rejected_candidates_total",
            "Candidates dropped while answering, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self._proposed: dict[int, float] = {}
        self._accepted: dict[int, float] = {}

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        labels = (route, method, str(status))
        self.requests.labels(*labels).inc()
        self.request_seconds.labels(*labels).observe(seconds)

    def observe_answer(self, result: Mapping[str, Any]) -> None:
        """Count what one answer object reports (verdict, decode statistics, lanes, rejections)."""
        verdict = result.get("verdict")
        if isinstance(verdict, Mapping):
            verdict = verdict.get("verdict")
        if isinstance(verdict, str):
            self.verdicts.labels(verdict).inc()
        decode = result.get("decode")
        if isinstance(decode, Mapping):
            self._observe_decode(decode)
        packet = result.get("packet")
        if isinstance(packet, Mapping):
            self._observe_packet(packet)

    def _observe_decode(self, decode: Mapping[str, Any]) -> None:
        rate = decode.get("tokens_per_s")
        if isinstance(rate, int | float) and rate > 0:
            self.decode_tokens_per_second.observe(float(rate))
        steps = decode.get("draft_steps")
        mean_length = decode.get("mean_accepted_length")
        if isinstance(mean_length, int | float) and isinstance(steps, int) and steps > 0:
            self.mean_accepted_length.observe(float(mean_length))
        proposed = decode.get("proposed_by_position") or []
        accepted = decode.get("accepted_by_position") or []
        for index, (tried, passed) in enumerate(zip(proposed, accepted, strict=False), start=1):
            if not isinstance(tried, int) or not isinstance(passed, int) or tried <= 0:
                continue
            self.drafts_proposed.labels(str(index)).inc(tried)
            self.drafts_accepted.labels(str(index)).inc(passed)
            self._proposed[index] = self._proposed.get(index, 0.0) + tried
            self._accepted[index] = self._accepted.get(index, 0.0) + passed
            self.acceptance_by_position.labels(str(index)).set(self._accepted[index] / self._proposed[index])

    def _observe_packet(self, packet: Mapping[str, Any]) -> None:
        for lane in packet.get("lanesRun") or []:
            if not isinstance(lane, Mapping):
                continue
            latency = lane.get("latencyMs")
            if lane.get("status") == "completed" and isinstance(latency, int | float):
                self.lane_seconds.labels(str(lane.get("lane"))).observe(float(latency) / 1000.0)
        fusion = packet.get("fusion")
        excluded = fusion.get("excludedRows") if isinstance(fusion, Mapping) else None
        for row in excluded or []:
            if isinstance(row, Mapping) and isinstance(row.get("reason"), str):
                self.rejected_candidates.labels(row["reason"]).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
