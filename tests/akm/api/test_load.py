"""Bounded load test on loopback: 20 clients over answers (fake fast generator) and audits.

CI runs it for 10 s; set AKM_LOAD_DURATION_S=30 for the full-size run. Figures are printed
(run with -s) and written to the test's temporary directory as load-report.json.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest
from api_fakes import seed_store
from uvicorn_process import fake_server_command, running_server, spare_port

from akm.bench.load_test import format_report, percentile, run_load
from akm.store import open_store

CLIENTS = 20
DURATION_S = float(os.environ.get("AKM_LOAD_DURATION_S", "10"))


@pytest.mark.server
@pytest.mark.slow
def test_load_has_no_errors_and_loses_no_packet(sqlite_url: str, tmp_path: Path) -> None:
    store = open_store(sqlite_url)
    seed_store(store)
    before = store.count_packets()
    store.close()
    port = spare_port()
    env = {
        "AKM_DATABASE_URL": sqlite_url,
        "AKM_DATA_DIR": str(tmp_path),
        "AKM_API_GENERATION_CONCURRENCY": "4",
        "AKM_API_GENERATION_WAIT_S": "30",
    }
    with running_server(fake_server_command(port), port, env) as base:
        report = asyncio.run(run_load(base, clients=CLIENTS, duration_s=DURATION_S))
    print("\n" + format_report(report))
    (tmp_path / "load-report.json").write_text(json.dumps(asdict(report), indent=2))
    assert report.errors == 0, report.error_examples
    assert report.requests_by_kind["answer"] > 0
    assert report.requests_by_kind["audit"] > 0
    assert report.packets_missing == 0
    store = open_store(sqlite_url)
    try:
        assert store.count_packets() == before + report.acknowledged_packets
    finally:
        store.close()


@pytest.mark.parametrize(
    ("values", "fraction", "expected"),
    [
        ([], 0.5, 0.0),
        ([3.0], 0.99, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 0.5, 2.5),
        ([1.0, 2.0, 3.0, 4.0], 0.95, 3.85),
    ],
    ids=["empty", "single", "median", "p95"],
)
def test_percentile(values: list[float], fraction: float, expected: float) -> None:
    assert percentile(values, fraction) == pytest.approx(expected)
