"""The overhead benchmark of the OpenAI-compatible route: interleaved timing of both routes over
the same answer service, its figures, its failure on a bad reply, and the ``akm bench`` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from api_fakes import ApiHarness

from akm.bench.openai_overhead import ANSWERS, CHAT, OverheadReport, format_table, measure
from akm.cli import main


def test_measure_alternates_the_routes_over_the_same_service(api: ApiHarness) -> None:
    seen: list[str] = []

    def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        seen.append(path)
        response = api.client.post(path, json=body)
        return response.status_code, response.content

    report = measure(post, rounds=4, warmup=1, stream=False)
    # ABBA order: a drift in load falls on both routes alike.
    assert seen == [ANSWERS, CHAT, CHAT, ANSWERS, ANSWERS, CHAT, CHAT, ANSWERS, ANSWERS, CHAT]
    assert len(report.answers_ms) == len(report.chat_ms) == 4
    assert len(api.answers.stored) == 10
    figures = report.to_json()
    assert set(figures["answers_ms"]) == {"p50", "p5", "p25", "p75", "p95", "mean", "stdev"}
    assert figures["overhead_p50_ms"] == report.overhead_p50_ms
    assert "POST /v1/chat/completions" in format_table(report)


def test_streamed_replies_are_read_to_the_end(api: ApiHarness) -> None:
    def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        assert body["stream"] is True
        response = api.client.post(path, json=body)
        return response.status_code, response.content

    report = measure(post, rounds=2, warmup=0, stream=True)
    assert report.stream and len(report.chat_ms) == 2


def test_a_failed_reply_stops_the_benchmark(api: ApiHarness) -> None:
    def post(path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        if path == CHAT:
            body = {**body, "n": 2}
        response = api.client.post(path, json=body)
        return response.status_code, response.content

    with pytest.raises(RuntimeError, match="answered 400"):
        measure(post, rounds=2, warmup=0)


def test_the_target_is_the_median_difference() -> None:
    within = OverheadReport("q", False, 3, [10.0, 11.0, 30.0], [14.0, 15.0, 16.0])
    assert (within.overhead_p50_ms, within.passed) == (4.0, True)
    over = OverheadReport("q", False, 3, [10.0, 11.0, 12.0], [16.5, 17.0, 18.0])
    assert (over.overhead_p50_ms, over.passed) == (6.0, False)


def test_akm_bench_openai_overhead_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "overhead.json"
    argv = ["--data-dir", str(tmp_path), "bench", "openai-overhead", "--rounds", "3", "--warmup", "1"]
    assert main([*argv, "--service", "replay", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["setup"]["service"] == "replay"
    assert len(figures["samples_ms"]["chat_completions"]) == 3
    assert "overhead at the median" in capsys.readouterr().out
    assert main([*argv, "--stream", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert (figures["setup"]["service"], figures["stream"]) == ("pipeline", True)
