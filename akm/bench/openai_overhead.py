"""What the OpenAI-compatible route adds over ``POST /v1/answers`` for the same question.

Both routes answer through the same answer service, so any difference in latency is the
OpenAI layer: parsing and checking the chat request, building the ``akm`` evidence object and
the reply (or the chunk stream). Requests alternate between the routes (ABBA order, so a drift
in machine load falls on both alike); each request is timed until its whole body is read.

    akm bench openai-overhead --rounds 200 --json out/openai-overhead.json     # in-process app
    python -m akm.bench.openai_overhead --base-url http://127.0.0.1:8000 --rounds 200

The first runs the app in this process over a throwaway project with a fixed generator (see
``akm.cli.bench_openai``); the second measures a running server over HTTP. The target is an
overhead of at most 5 ms at the median (``--check`` exits 1 above it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ANSWERS = "/v1/answers"
CHAT = "/v1/chat/completions"
TARGET_MS = 5.0
DEFAULT_QUESTION = "Which lanes does retrieval run?"

# POST path and JSON body; returns the status and the whole response body.
Post = Callable[[str, dict[str, Any]], tuple[int, bytes]]


def request_body(route: str, question: str, *, stream: bool) -> dict[str, Any]:
    if route == ANSWERS:
        return {"question": question, "stream": stream}
    return {"model": "akm", "messages": [{"role": "user", "content": question}], "stream": stream}


def _check_reply(route: str, status: int, body: bytes, *, stream: bool) -> None:
    if status != 200:
        raise RuntimeError(f"{route} answered {status}: {body[:500]!r}")
    if stream:
        ending = b"data: [DONE]" if route == CHAT else b"event: verdict"
        if ending not in body:
            raise RuntimeError(f"{route} stream ended without {ending.decode()}: {body[-500:]!r}")
    elif b"packetId" not in body:
        raise RuntimeError(f"{route} reply has no packetId: {body[:500]!r}")


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median and spread (p5, quartiles, p95, mean, standard deviation) in ms, rounded to µs."""
    return {
        "p50": round(statistics.median(values), 3),
        "p5": round(_percentile(values, 0.05), 3),
        "p25": round(_percentile(values, 0.25), 3),
        "p75": round(_percentile(values, 0.75), 3),
        "p95": round(_percentile(values, 0.95), 3),
        "mean": round(statistics.fmean(values), 3),
        "stdev": round(statistics.stdev(values), 3) if len(values) > 1 else 0.0,
    }


@dataclass
class OverheadReport:
    question: str
    stream: bool
    rounds: int
    answers_ms: list[float]
    chat_ms: list[float]
    target_ms: float = TARGET_MS
    setup: dict[str, Any] = field(default_factory=dict)

    @property
    def overhead_p50_ms(self) -> float:
        """Median of the chat route minus median of the answers route."""
        return round(statistics.median(self.chat_ms) - statistics.median(self.answers_ms), 3)

    @property
    def paired_ms(self) -> list[float]:
        """Per round: the chat request's time minus the answers request's time."""
        return [chat - answers for chat, answers in zip(self.chat_ms, self.answers_ms, strict=True)]

    @property
    def passed(self) -> bool:
        return self.overhead_p50_ms <= self.target_ms

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "stream": self.stream,
            "rounds": self.rounds,
            "setup": self.setup,
            "answers_ms": spread(self.answers_ms),
            "chat_completions_ms": spread(self.chat_ms),
            "overhead_p50_ms": self.overhead_p50_ms,
            "paired_difference_ms": spread(self.paired_ms),
            "target_ms": self.target_ms,
            "passed": self.passed,
            "samples_ms": {"answers": self.answers_ms, "chat_completions": self.chat_ms},
        }


def measure(
    post: Post,
    *,
    question: str = DEFAULT_QUESTION,
    rounds: int = 200,
    warmup: int = 10,
    stream: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> OverheadReport:
    """``rounds`` requests to each route, alternating, after ``warmup`` untimed pairs."""
    if rounds < 2:
        raise ValueError("at least 2 rounds")
    timings: dict[str, list[float]] = {ANSWERS: [], CHAT: []}
    bodies = {route: request_body(route, question, stream=stream) for route in (ANSWERS, CHAT)}
    for index in range(warmup + rounds):
        # ABBA: every other round starts with the chat route.
        order = (ANSWERS, CHAT) if index % 2 == 0 else (CHAT, ANSWERS)
        for route in order:
            started = time.perf_counter()
            status, body = post(route, bodies[route])
            elapsed_ms = (time.perf_counter() - started) * 1000.0
            _check_reply(route, status, body, stream=stream)
            if index >= warmup:
                timings[route].append(round(elapsed_ms, 3))
        if progress is not None:
            progress(index + 1, warmup + rounds)
    return OverheadReport(question, stream, rounds, timings[ANSWERS], timings[CHAT])


def format_table(report: OverheadReport) -> str:
    rows = [("route", "p50 ms", "p25–p75 ms", "p5–p95 ms", "mean ms", "stdev ms")]
    for name, values in (
        ("POST /v1/answers", report.answers_ms),
        ("POST /v1/chat/completions", report.chat_ms),
        ("difference (paired)", report.paired_ms),
    ):
        figures = spread(values)
        rows.append(
            (
                name,
                f"{figures['p50']:.2f}",
                f"{figures['p25']:.2f}–{figures['p75']:.2f}",
                f"{figures['p5']:.2f}–{figures['p95']:.2f}",
                f"{figures['mean']:.2f}",
                f"{figures['stdev']:.2f}",
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    verdict = "within" if report.passed else "OVER"
    mode = "streamed" if report.stream else "whole"
    lines.append(
        f"overhead at the median ({mode} replies, {report.rounds} rounds): {report.overhead_p50_ms:+.2f} ms "
        f"({verdict} the {report.target_ms:g} ms target)"
    )
    return "\n".join(lines)


def write_report(report: OverheadReport, path: Path | None) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")


def http_post(client: httpx.Client) -> Post:
    def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        response = client.post(path, json=body)
        return response.status_code, response.content

    return post


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m akm.bench.openai_overhead",
        description="Latency the OpenAI-compatible route adds over POST /v1/answers, on a running server.",
    )
    parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--stream", action="store_true", help="time streamed replies (until the last event)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 when the overhead exceeds {TARGET_MS:g} ms"
    )
    args = parser.parse_args(argv)
    if args.rounds < 2 or args.warmup < 0:
        parser.error("--rounds must be at least 2 and --warmup not negative")
    with httpx.Client(base_url=args.base_url, timeout=args.timeout) as client:
        report = measure(
            http_post(client),
            question=args.question,
            rounds=args.rounds,
            warmup=args.warmup,
            stream=args.stream,
        )
    report.setup = {"transport": "http", "base_url": args.base_url}
    write_report(report, args.json_out)
    print(format_table(report))
    return 1 if args.check and not report.passed else 0


if __name__ == "__main__":
    sys.exit(main())
