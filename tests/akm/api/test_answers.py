"""POST /v1/answers: whole answers, SSE order, disconnects, concurrency limit, unavailable model."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
from api_fakes import DRAFT_WORDS, ApiHarness, FakeAnswerService, assert_problem, build_app
from fastapi.testclient import TestClient

from akm.api import ApiLimits, ApiServices, StoreHandle, create_app
from akm.service.errors import ModelUnavailableError
from akm.service.scope import EVERYTHING
from akm.settings import load_settings
from akm.store import EvidenceStore

QUESTION = "May secret values be stored?"


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_answer_object_matches_ask_json_shape(api: ApiHarness) -> None:
    response = api.client.post("/v1/answers", json={"question": QUESTION, "options": {"maxNewTokens": 32}})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"answer", "claims", "verdict", "packetId", "packet", "decode"}
    assert body["answer"] == "".join(DRAFT_WORDS)
    assert body["verdict"]["verdict"] == "PASS"
    assert body["packetId"] == api.answers.stored[0]
    assert api.store.get_packet(body["packetId"]) == body["packet"]


@pytest.mark.parametrize(
    ("body", "headers"),
    [({"question": QUESTION, "stream": True}, {}), ({"question": QUESTION}, {"Accept": "text/event-stream"})],
    ids=["stream-flag", "accept-header"],
)
def test_stream_delivers_drafts_then_claims_then_verdict(
    api: ApiHarness, body: dict[str, Any], headers: dict[str, str]
) -> None:
    response = api.client.post("/v1/answers", json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds == ["draft"] * len(DRAFT_WORDS) + ["claim", "claim", "verdict"]
    assert [data["text"] for kind, data in events if kind == "draft"] == list(DRAFT_WORDS)
    assert all(data["unverified"] is True for kind, data in events if kind == "draft")
    assert [data["status"] for kind, data in events if kind == "claim"] == ["supported", "supported"]
    final = events[-1][1]
    assert final["packetId"] == api.answers.stored[0]
    assert final["verdict"]["verdict"] == "PASS"
    ids = [int(line.split(": ")[1]) for line in response.text.splitlines() if line.startswith("id: ")]
    assert ids == list(range(1, len(events) + 1))


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"question": ""}, "question"),
        ({"question": "x" * 4001}, "question"),
        ({}, "question"),
        ({"question": QUESTION, "options": {"maxNewTokens": 0}}, "options.maxNewTokens"),
        ({"question": QUESTION, "options": {"lanes": ["web"]}}, "options.lanes.0"),
        ({"question": QUESTION, "options": {"unknown": 1}}, "options.unknown"),
        ({"question": QUESTION, "stream": "sometimes"}, "stream"),
    ],
    ids=["empty", "too-long", "missing", "zero-tokens", "unknown-lane", "unknown-option", "bad-stream"],
)
def test_bad_answer_requests_are_422(api: ApiHarness, body: dict[str, Any], param: str) -> None:
    problem = assert_problem(api.client.post("/v1/answers", json=body), 422, "validation")
    assert param in [item["name"] for item in problem["invalidParams"]]
    assert api.answers.stored == []


def test_question_at_the_limit_is_accepted(api: ApiHarness) -> None:
    assert api.client.post("/v1/answers", json={"question": "x" * 4000}).status_code == 200


def test_generation_beyond_the_limit_waits_then_gets_429(seeded_store: EvidenceStore) -> None:
    gate_open = threading.Event()
    answers = FakeAnswerService(seeded_store, block=gate_open)
    app = build_app(seeded_store, answers, limits=ApiLimits(generation_concurrency=1, generation_wait_s=0.3))
    results: dict[str, int] = {}
    with TestClient(app) as client:
        first = threading.Thread(
            target=lambda: results.update(
                first=client.post("/v1/answers", json={"question": QUESTION}).status_code
            )
        )
        first.start()
        deadline = time.monotonic() + 5
        while answers.running == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        second = client.post("/v1/answers", json={"question": QUESTION, "stream": True})
        waited = time.monotonic() - started
        problem = assert_problem(second, 429, "concurrency-limit")
        assert second.headers["retry-after"] == "1"
        assert problem["limit"] == 1
        assert waited >= 0.3
        gate_open.set()
        first.join(10)
        assert results["first"] == 200
        # The slot is free again once the first generation finished.
        assert client.post("/v1/answers", json={"question": QUESTION}).status_code == 200
    assert answers.max_running == 1
    assert len(answers.stored) == 2


def test_requests_within_the_limit_wait_for_a_slot(seeded_store: EvidenceStore) -> None:
    answers = FakeAnswerService(seeded_store, word_delay_s=0.02)
    app = build_app(seeded_store, answers, limits=ApiLimits(generation_concurrency=2, generation_wait_s=10))
    with TestClient(app) as client:
        threads = [
            threading.Thread(target=lambda: client.post("/v1/answers", json={"question": QUESTION}))
            for _ in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
    assert len(answers.stored) == 5
    assert answers.max_running <= 2


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_unavailable_model_is_503(seeded_store: EvidenceStore, stream: bool) -> None:
    answers = FakeAnswerService(
        seeded_store, fail_with=ModelUnavailableError("the target model 'x' could not be loaded")
    )
    with TestClient(build_app(seeded_store, answers)) as client:
        response = client.post("/v1/answers", json={"question": QUESTION, "stream": stream})
        problem = assert_problem(response, 503, "model-unavailable")
        assert problem["detail"] == "the target model 'x' could not be loaded"
        ready = assert_problem(client.get("/readyz"), 503, "not-ready")
        assert ready["models"].startswith("failed:")
        # The worker is still alive and serves everything else.
        assert client.get("/v1/sources").status_code == 200
        assert client.post("/v1/answers", json={"question": QUESTION}).status_code == 503


def test_model_load_failure_at_startup_keeps_the_worker_serving(seeded_store: EvidenceStore) -> None:
    answers = FakeAnswerService(seeded_store, fail_with=ModelUnavailableError("no weights"))
    app = build_app(seeded_store, answers, limits=ApiLimits(load_models_at_startup=True))
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert_problem(client.get("/readyz"), 503, "not-ready")


def test_unreachable_store_is_503(seeded_store: EvidenceStore) -> None:
    services = ApiServices(
        store=StoreHandle("postgresql://akm@127.0.0.1:1/akm?connect_timeout=2"),
        scope=EVERYTHING,
        answers=FakeAnswerService(seeded_store),
        reverify=None,  # type: ignore[arg-type]
    )
    with TestClient(create_app(load_settings(), services)) as client:
        problem = assert_problem(client.get("/v1/sources"), 503, "store-unavailable")
        assert "127.0.0.1" not in json.dumps(problem)
        assert_problem(client.get("/v1/packets/pk:x"), 503, "store-unavailable")
        ready = assert_problem(client.get("/readyz"), 503, "not-ready")
        assert ready["store"] == "unreachable"


async def _stream_until_disconnect(app: Any, drafts_before_leaving: int) -> list[bytes]:
    """Drive the ASGI app directly: read ``drafts_before_leaving`` events, then disconnect."""
    body = json.dumps({"question": QUESTION, "stream": True}).encode()
    leave = asyncio.Event()
    chunks: list[bytes] = []
    sent_body = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            chunks.append(message["body"])
            if sum(chunk.count(b"event: draft") for chunk in chunks) >= drafts_before_leaving:
                leave.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/answers",
        "raw_path": b"/v1/answers",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    return chunks


def test_disconnect_stops_generation_and_stores_nothing(seeded_store: EvidenceStore) -> None:
    answers = FakeAnswerService(seeded_store, word_delay_s=0.05)
    app = build_app(seeded_store, answers)
    packets_before = seeded_store.count_packets()
    chunks = asyncio.run(_stream_until_disconnect(app, drafts_before_leaving=2))
    deadline = time.monotonic() + 5
    while answers.running and time.monotonic() < deadline:
        time.sleep(0.01)
    text = b"".join(chunks).decode()
    assert "event: verdict" not in text
    assert answers.cancelled == 1
    assert answers.words_drafted < len(DRAFT_WORDS)
    assert answers.stored == []
    assert seeded_store.count_packets() == packets_before
    # The slot was handed back: the next answer runs.
    with TestClient(app) as client:
        assert client.post("/v1/answers", json={"question": QUESTION}).status_code == 200


def test_stream_sends_keepalive_comments_while_waiting(
    seeded_store: EvidenceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from akm.api import generation

    monkeypatch.setattr(generation, "KEEPALIVE_S", 0.02)
    answers = FakeAnswerService(seeded_store, word_delay_s=0.15)
    with TestClient(build_app(seeded_store, answers)) as client:
        text = client.post("/v1/answers", json={"question": QUESTION, "stream": True}).text
    blocks = text.strip().split("\n\n")
    assert ": keep-alive" in blocks
    events = [block for block in blocks if not block.startswith(":")]
    assert [block.split("\n")[1] for block in events][-1] == "event: verdict"
    assert len(events) == len(DRAFT_WORDS) + 3
