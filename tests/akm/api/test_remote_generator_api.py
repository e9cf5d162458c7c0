"""The production app and answer pipeline with a remote generator (a scripted OpenAI-compatible
server under uvicorn): a generator that is down, breaks mid-stream, stalls or answers garbage
makes the answer 503 problem+json with Retry-After (or an SSE error event once drafting began)
and stores nothing; the next answer after it recovers succeeds and is stored."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from akm.api import ApiLimits, create_app
from akm.config import DEFAULT_MANIFEST_FILE
from akm.embedding import load_embedder
from akm.ingest import ingest
from akm.manifest import load_manifest
from akm.settings import load_settings
from akm.store import open_store
from tests.akm.answer.openai_fake import Drop, FakeOpenAI, Pause, Reply, completion_chunk, serving, text_reply

FIXTURE_DOCS = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "docs"
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"
ANSWER = ["The Kestrel Harbour Bridge", " was opened to traffic", " on 19 March 1932."]


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeOpenAI, str]]:
    server = FakeOpenAI()
    with serving(server.app) as base:
        yield server, base


@pytest.fixture
def api(fake: tuple[FakeOpenAI, str], tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    with _api(fake[1], tmp_path, ApiLimits()) as made:
        yield made


@contextmanager
def _api(
    base: str, tmp_path: Path, limits: ApiLimits, read_timeout_s: float = 0.5
) -> Iterator[tuple[TestClient, str]]:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE_DOCS, root / "docs")
    (root / "config").mkdir()
    manifest = root / "config" / "manifest.yaml"
    shutil.copy(DEFAULT_MANIFEST_FILE, manifest)
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = open_store(url)
    ingest(store, load_manifest(manifest), embedder=load_embedder("hashing"))
    store.close()
    settings = load_settings(
        data_dir=tmp_path,
        database_url=url,
        manifest_path=manifest,
        embedding_model="hashing",
        target_model=f"openai+{base}#fake-model",
        generator_read_timeout_s=read_timeout_s,
        generator_retries=1,
        generator_backoff_s=0.01,
    )
    with TestClient(create_app(settings, limits=limits), raise_server_exceptions=False) as client:
        yield client, url


def packets(url: str) -> int:
    store = open_store(url)
    try:
        return store.count_packets()
    finally:
        store.close()


def assert_unavailable(reply: Any, fragment: str) -> None:
    assert reply.status_code == 503, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    assert int(reply.headers["retry-after"]) > 0
    body = reply.json()
    assert body["type"] == "urn:akm:problem:model-unavailable"
    assert "remote generator fake-model at" in body["detail"] and fragment in body["detail"]


def test_an_answer_through_the_remote_generator_is_verified_and_stored(
    api: tuple[TestClient, str], fake: tuple[FakeOpenAI, str]
) -> None:
    client, url = api
    server, _ = fake
    server.script(text_reply(*ANSWER, usage={"prompt_tokens": 50, "completion_tokens": 14}))
    reply = client.post("/v1/answers", json={"question": QUESTION})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert any(claim["status"] == "supported" for claim in body["claims"])
    assert body["verdict"]["verdict"] == "PASS"
    assert body["decode"]["new_tokens"] == 14
    assert body["decode"]["target_calls"] is None
    assert body["decode"]["generator"]["backend"] == "openai"
    assert packets(url) == 1
    sent = server.requests[0]["body"]
    assert "19 March 1932" in sent["prompt"] and sent["model"] == "fake-model"


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(status=503), "HTTP 503"),
        (Reply(events=[completion_chunk("x"), "{oops"]), "malformed reply"),
        (Reply(events=["[DONE]"], pause_before_headers_s=2.0), "waited more than 0.5 s"),
        (Reply(events=[completion_chunk("The bridge")]), "ended before data: [DONE]"),
    ],
    ids=["5xx", "malformed-json", "stall", "early-close"],
)
def test_a_failing_generator_is_503_and_stores_nothing_then_recovers(
    api: tuple[TestClient, str], fake: tuple[FakeOpenAI, str], reply: Reply, fragment: str
) -> None:
    client, url = api
    server, _ = fake
    server.script(reply)
    assert_unavailable(client.post("/v1/answers", json={"question": QUESTION}), fragment)
    assert packets(url) == 0
    assert client.get("/readyz").status_code == 200  # nothing sticky: the worker stays ready
    server.script(text_reply(*ANSWER))
    recovered = client.post("/v1/answers", json={"question": QUESTION})
    assert recovered.status_code == 200, recovered.text
    assert packets(url) == 1


def test_a_stream_broken_after_drafting_began_ends_with_an_error_event(
    api: tuple[TestClient, str], fake: tuple[FakeOpenAI, str]
) -> None:
    client, url = api
    server, _ = fake
    server.script(
        Reply(events=[completion_chunk("The Kestrel"), Pause(0.1), completion_chunk(" Harbour"), Drop()])
    )
    with client.stream("POST", "/v1/answers", json={"question": QUESTION, "stream": True}) as reply:
        assert reply.status_code == 200
        text = reply.read().decode()
    events = [block for block in text.split("\n\n") if block.strip()]
    kinds = [
        line.removeprefix("event: ")
        for block in events
        for line in block.splitlines()
        if line.startswith("event: ")
    ]
    assert kinds[:2] == ["draft", "draft"] and kinds[-1] == "error"
    error = json.loads(events[-1].splitlines()[-1].removeprefix("data: "))
    assert error["type"] == "urn:akm:problem:model-unavailable"
    assert "after text had arrived" in error["detail"]
    assert len(server.requests) == 1  # not retried once text had been passed on
    assert packets(url) == 0


def test_a_generator_down_before_a_stream_is_a_503_before_any_event(
    api: tuple[TestClient, str], fake: tuple[FakeOpenAI, str]
) -> None:
    client, url = api
    server, _ = fake
    server.script(Reply(status=502))
    reply = client.post("/v1/answers", json={"question": QUESTION, "stream": True})
    assert_unavailable(reply, "HTTP 502")
    assert len(server.requests) == 2  # one retry (generator_retries=1)
    assert packets(url) == 0


def test_remote_answers_are_not_serialised_like_the_local_decoder(
    fake: tuple[FakeOpenAI, str], tmp_path: Path
) -> None:
    """Two answers at once reach the generator server together (the local decoder would take
    them one after the other)."""
    server, base = fake
    server.script(Reply(events=[Pause(2.0), *text_reply(*ANSWER).events]))
    with _api(base, tmp_path, ApiLimits(generation_concurrency=2), read_timeout_s=5.0) as (client, url):

        def ask(_: int) -> Any:
            return client.post("/v1/answers", json={"question": QUESTION})

        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(ask, range(2)))
        assert [reply.status_code for reply in replies] == [200, 200]
        assert len(server.request_times) == 2
        # One after the other, the second request would come at least 2 s after the first.
        assert abs(server.request_times[1] - server.request_times[0]) < 1.0
        assert packets(url) == 2


def test_readiness_follows_the_remote_generator(tmp_path: Path) -> None:
    server = FakeOpenAI()
    with serving(server.app) as base, _api(base, tmp_path, ApiLimits()) as (client, _):
        server.script(text_reply(*ANSWER))
        assert client.post("/v1/answers", json={"question": QUESTION}).status_code == 200
        ready = client.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["models"] == "loaded"
    # The generator server is gone; the API process is not.
    with _api(base, tmp_path / "again", ApiLimits()) as (client, _):
        client.app.state.services.answers.load()  # type: ignore[attr-defined]
        down = client.get("/readyz")
        assert down.status_code == 503
        assert "remote generator fake-model at" in down.json()["models"]
        assert "unreachable" in down.json()["models"]
