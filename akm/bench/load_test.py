"""A bounded load test of a running API: concurrent clients over audit and answer endpoints.

    python -m akm.bench.load_test --base-url http://127.0.0.1:8000 --clients 20 --duration 30

Each client loops for the duration, alternating by weight between answers (POST /v1/answers)
and audit reads (sources, rejections, dependents, stored packets). Afterwards every packet
the server acknowledged is fetched again to check the store holds it. Prints a table and
writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx

QUESTIONS = (
    "May secret values be stored?",
    "Where does canonical Markdown live?",
    "Which lanes does retrieval run?",
    "What makes a row claim-supported?",
)


@dataclass
class Sample:
    kind: str
    status: int
    seconds: float


@dataclass
class LoadReport:
    clients: int
    duration_s: float
    requests: int
    errors: int
    throughput_rps: float
    latency_ms: dict[str, float]
    latency_ms_by_kind: dict[str, dict[str, float]]
    requests_by_kind: dict[str, int]
    status_counts: dict[str, int]
    acknowledged_packets: int
    packets_missing: int
    error_examples: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.errors == 0 and self.packets_missing == 0


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks (0.0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _summary(seconds: Sequence[float]) -> dict[str, float]:
    values = [s * 1000.0 for s in seconds]
    return {
        "p50": round(percentile(values, 0.50), 2),
        "p95": round(percentile(values, 0.95), 2),
        "p99": round(percentile(values, 0.99), 2),
        "max": round(max(values, default=0.0), 2),
    }


class _Run:
    def __init__(self, client: httpx.AsyncClient, answer_share: float, seed: int) -> None:
        self.client = client
        self.answer_share = answer_share
        self.random = random.Random(seed)
        self.samples: list[Sample] = []
        self.packets: list[str] = []
        self.sources: list[str] = []
        self.error_examples: list[str] = []

    async def _request(self, kind: str, method: str, url: str, **kwargs: object) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = await self.client.request(method, url, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as error:
            self.samples.append(Sample(kind, 0, time.perf_counter() - started))
            if len(self.error_examples) < 5:
                self.error_examples.append(f"{method} {url}: {type(error).__name__}: {error}")
            return None
        self.samples.append(Sample(kind, response.status_code, time.perf_counter() - started))
        if response.status_code >= 400 and len(self.error_examples) < 5:
            self.error_examples.append(f"{method} {url}: {response.status_code} {response.text[:200]}")
        return response

    async def answer(self) -> None:
        response = await self._request(
            "answer", "POST", "/v1/answers", json={"question": self.random.choice(QUESTIONS)}
        )
        if response is not None and response.status_code == 200:
            self.packets.append(response.json()["packetId"])

    async def audit(self) -> None:
        choice = self.random.randrange(5)
        if choice == 0 or not self.sources:
            response = await self._request("audit", "GET", "/v1/sources", params={"limit": 50})
            if response is not None and response.status_code == 200 and not self.sources:
                self.sources = [item["sourceId"] for item in response.json()["items"]]
        elif choice == 1:
            await self._request("audit", "GET", "/v1/audit/rejections", params={"limit": 50})
        elif choice == 2:
            source = quote(self.random.choice(self.sources), safe=":")
            await self._request("audit", "GET", f"/v1/audit/sources/{source}/dependents")
        elif choice == 3:
            await self._request(
                "audit", "GET", f"/v1/sources/{quote(self.random.choice(self.sources), safe=':')}"
            )
        elif self.packets:
            await self._request("audit", "GET", f"/v1/packets/{self.random.choice(self.packets)}")
        else:
            await self._request("audit", "GET", "/healthz")

    async def client_loop(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.random.random() < self.answer_share:
                await self.answer()
            else:
                await self.audit()


async def run_load(
    base_url: str,
    *,
    clients: int = 20,
    duration_s: float = 30.0,
    answer_share: float = 0.5,
    seed: int = 0,
    timeout_s: float = 60.0,
) -> LoadReport:
    """Run ``clients`` concurrent loops for ``duration_s`` seconds and check every acknowledged packet."""
    limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)
    async with httpx.AsyncClient(base_url=base_url, timeout=timeout_s, limits=limits) as client:
        runs = [_Run(client, answer_share, seed + number) for number in range(clients)]
        started = time.monotonic()
        deadline = started + duration_s
        await asyncio.gather(*(run.client_loop(deadline) for run in runs))
        elapsed = time.monotonic() - started
        acknowledged = [packet for run in runs for packet in run.packets]
        missing = 0
        for packet_id in acknowledged:
            response = await client.get(f"/v1/packets/{packet_id}")
            if response.status_code != 200 or response.json().get("packetId") != packet_id:
                missing += 1
    samples = [sample for run in runs for sample in run.samples]
    kinds = sorted({sample.kind for sample in samples})
    statuses: dict[str, int] = {}
    for sample in samples:
        statuses[str(sample.status)] = statuses.get(str(sample.status), 0) + 1
    return LoadReport(
        clients=clients,
        duration_s=round(elapsed, 2),
        requests=len(samples),
        errors=sum(1 for sample in samples if not 200 <= sample.status < 300),
        throughput_rps=round(len(samples) / elapsed, 1) if elapsed > 0 else 0.0,
        latency_ms=_summary([sample.seconds for sample in samples]),
        latency_ms_by_kind={
            kind: _summary([sample.seconds for sample in samples if sample.kind == kind]) for kind in kinds
        },
        requests_by_kind={kind: sum(1 for sample in samples if sample.kind == kind) for kind in kinds},
        status_counts=statuses,
        acknowledged_packets=len(acknowledged),
        packets_missing=missing,
        error_examples=[example for run in runs for example in run.error_examples][:10],
    )


def format_report(report: LoadReport) -> str:
    lines = [
        f"clients {report.clients}, {report.duration_s} s, {report.requests} requests, "
        f"{report.throughput_rps} req/s, errors {report.errors}",
        f"{'kind':<8} {'requests':>9} {'p50 ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'max ms':>9}",
    ]
    rows = {**report.latency_ms_by_kind, "all": report.latency_ms}
    counts = {**report.requests_by_kind, "all": report.requests}
    for kind, figures in rows.items():
        lines.append(
            f"{kind:<8} {counts[kind]:>9} {figures['p50']:>9} {figures['p95']:>9} {figures['p99']:>9} {figures['max']:>9}"
        )
    lines.append(
        f"acknowledged packets {report.acknowledged_packets}, missing from the store {report.packets_missing}"
    )
    lines.extend(f"error: {example}" for example in report.error_examples)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m akm.bench.load_test", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds")
    parser.add_argument(
        "--answer-share", type=float, default=0.5, help="fraction of requests that are answers"
    )
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.duration <= 0 or not 0.0 <= args.answer_share <= 1.0:
        print("load_test: error: --clients >= 1, --duration > 0, 0 <= --answer-share <= 1", file=sys.stderr)
        return 2
    report = asyncio.run(
        run_load(
            args.base_url, clients=args.clients, duration_s=args.duration, answer_share=args.answer_share
        )
    )
    print(format_report(report))
    if args.output is not None:
        args.output.write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
    return 0 if report.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
