"""The API in a real uvicorn process on 127.0.0.1, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from api_fakes import DRAFT_WORDS, GUIDE, HIDDEN_BY_EXCLUDE, seed_store
from uvicorn_process import akm_serve_command, fake_server_command, running_server, spare_port

from akm.store import open_store

pytestmark = pytest.mark.server

QUESTION = "May secret values be stored?"


@pytest.fixture
def seeded_url(store_url: str) -> tuple[str, dict[str, str]]:
    store = open_store(store_url)
    ids = seed_store(store)
    store.close()
    return store_url, ids


def packet_count(url: str) -> int:
    store = open_store(url)
    try:
        return store.count_packets()
    finally:
        store.close()


def test_akm_serve_answers_audits(seeded_url: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, ids = seeded_url
    port = spare_port()
    env = {"AKM_DATABASE_URL": url, "AKM_DATA_DIR": str(tmp_path)}
    with running_server(akm_serve_command(port), port, env) as base, httpx.Client(base_url=base) as client:
        health = client.get("/healthz", headers={"X-Request-ID": "probe-1"})
        assert health.json() == {"status": "ok"}
        assert health.headers["x-request-id"] == "probe-1"
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.headers["content-type"] == "application/problem+json"
        assert (ready.json()["store"], ready.json()["models"]) == ("ok", "not-loaded")
        assert [s["sourceId"] for s in client.get("/v1/sources").json()["items"]] == [GUIDE]
        assert client.get(f"/v1/sources/{HIDDEN_BY_EXCLUDE}").status_code == 404
        packet = client.get(f"/v1/packets/{ids['packet']}")
        assert packet.status_code == 200
        assert packet.json()["packetId"] == ids["packet"]
        history = client.get(f"/v1/evidence/{ids['row']}/history").json()
        assert [e["toState"] for e in history["events"]] == ["candidate", "direct-read", "claim-supported"]
        rejections = client.get("/v1/audit/rejections", params={"source": GUIDE}).json()
        assert len(rejections["items"]) == 3
        metrics = client.get("/metrics").text
        assert 'akm_http_requests_total{method="GET",route="/v1/sources",status="200"} 1.0' in metrics
    lines = [
        json.loads(line)
        for line in (tmp_path / f"server-{port}.log").read_text().splitlines()
        if line.startswith("{")
    ]
    access = [line for line in lines if line.get("logger") == "akm.api.access"]
    [probe] = [line for line in access if line["requestId"] == "probe-1"]
    assert (probe["path"], probe["route"], probe["status"], probe["method"]) == (
        "/healthz",
        "/healthz",
        200,
        "GET",
    )
    assert all(line["durationMs"] >= 0 for line in access)


def test_answers_and_streams_over_the_network(seeded_url: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, _ = seeded_url
    port = spare_port()
    env = {"AKM_DATABASE_URL": url, "AKM_DATA_DIR": str(tmp_path), "AKM_TEST_WORD_DELAY_S": "0.1"}
    before = packet_count(url)
    with (
        running_server(fake_server_command(port), port, env) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        whole = client.post("/v1/answers", json={"question": QUESTION})
        assert whole.status_code == 200
        assert packet_count(url) == before + 1
        assert client.get(f"/v1/packets/{whole.json()['packetId']}").json() == whole.json()["packet"]

        kinds: list[str] = []
        with client.stream("POST", "/v1/answers", json={"question": QUESTION, "stream": True}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("event: "):
                    kinds.append(line.removeprefix("event: "))
        assert kinds == ["draft"] * len(DRAFT_WORDS) + ["claim", "claim", "verdict"]
        assert packet_count(url) == before + 2

        # Leave after two drafts: generation stops and nothing is stored.
        drafts = 0
        with client.stream("POST", "/v1/answers", json={"question": QUESTION, "stream": True}) as response:
            for line in response.iter_lines():
                drafts += line.startswith("event: draft")
                if drafts == 2:
                    break
        time.sleep(0.1 * len(DRAFT_WORDS) + 1.0)
        assert packet_count(url) == before + 2
        # The slot was released: another answer runs at once.
        assert client.post("/v1/answers", json={"question": QUESTION}).status_code == 200
        assert packet_count(url) == before + 3
