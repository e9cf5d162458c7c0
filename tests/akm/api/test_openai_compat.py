"""POST /v1/chat/completions and GET /v1/models over the fake answer service: reply and chunk
shapes, the evidence extension, how parameters map to answer options, and every refused input."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_fakes import (
    DRAFT_WORDS,
    PROBLEM,
    FakeAnswerService,
    FakeReverifyService,
    assert_problem,
    build_app,
)
from fastapi.testclient import TestClient

from akm.api import ApiLimits
from akm.service.answers import AnswerEvent, AnswerRequest, CancelSignal
from akm.service.errors import InvalidRequestError, ModelUnavailableError, StoreUnavailableError
from akm.settings import load_settings
from akm.store import EvidenceStore

QUESTION = "May secret values be stored?"
ANSWER = "".join(DRAFT_WORDS)


class RecordingAnswerService(FakeAnswerService):
    """The fake service, remembering each request it was given."""

    def __init__(self, store: EvidenceStore, **kwargs: Any) -> None:
        super().__init__(store, **kwargs)
        self.requests: list[AnswerRequest] = []

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        self.requests.append(request)
        return super().stream(request, cancel)


@pytest.fixture
def service(seeded_store: EvidenceStore) -> RecordingAnswerService:
    return RecordingAnswerService(seeded_store)


@pytest.fixture
def client(
    seeded_store: EvidenceStore, service: RecordingAnswerService, tmp_path: Path
) -> Iterator[TestClient]:
    app = build_app(
        seeded_store,
        service,
        FakeReverifyService(),
        settings=load_settings(data_dir=tmp_path),
        limits=ApiLimits(max_body_bytes=32_768, max_question_chars=200),
    )
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def chat(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "akm", "messages": [{"role": "user", "content": QUESTION}]}
    body.update(overrides)
    return body


def sse_payloads(text: str) -> list[str]:
    """The `data:` payloads of an event stream, in order (comments and blank lines dropped)."""
    return [line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")]


# ---- /v1/models -----------------------------------------------------------------------------------


def test_models_lists_the_service_model_ids(client: TestClient) -> None:
    response = client.get("/v1/models")
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "list"
    assert [(m["id"], m["object"], m["owned_by"], m["akm"]["strict"]) for m in body["data"]] == [
        ("akm", "model", "akm", False),
        ("akm-strict", "model", "akm", True),
    ]
    assert all(isinstance(m["created"], int) for m in body["data"])
    assert client.get("/v1/models/akm-strict").json()["id"] == "akm-strict"
    assert_problem(client.get("/v1/models/gpt-4o"), 404, "not-found")


# ---- replies ----------------------------------------------------------------------------------------


def test_reply_is_the_answer_with_its_evidence(
    client: TestClient, service: RecordingAnswerService, seeded_store: EvidenceStore
) -> None:
    messages = [
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": "Where does canonical Markdown live?"},
        {"role": "assistant", "content": "In docs/."},
        {"role": "user", "content": QUESTION},
    ]
    response = client.post("/v1/chat/completions", json=chat(messages=messages))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"].startswith("chatcmpl-")
    assert (body["object"], body["model"]) == ("chat.completion", "akm")
    assert isinstance(body["created"], int)
    [choice] = body["choices"]
    assert choice == {
        "index": 0,
        "message": {"role": "assistant", "content": ANSWER, "refusal": None},
        "finish_reason": "stop",
        "logprobs": None,
    }
    # Only the last user message is the question; the system prompt and earlier turns are not read.
    [request] = service.requests
    assert request.question == QUESTION
    assert dict(request.options) == {"strict": False}

    evidence = body["akm"]
    assert evidence["packetId"] == service.stored[0]
    assert seeded_store.get_packet(evidence["packetId"]) is not None
    assert evidence["packetUrl"] == f"/v1/packets/{evidence['packetId']}"
    assert (evidence["verdict"], evidence["strict"], evidence["answer"]) == ("PASS", False, ANSWER)
    assert evidence["verdictReasons"]
    assert evidence["ignoredParameters"] == []
    assert [claim["status"] for claim in evidence["claims"]] == ["supported", "supported"]
    packet = client.get(evidence["packetUrl"]).json()
    rows = {row["evidenceId"]: row for row in packet["evidenceRows"]}
    for claim, stored in zip(evidence["claims"], packet["claims"], strict=True):
        assert claim["claimId"] == stored["claimId"]
        assert [span["evidenceId"] for span in claim["spans"]] == stored["supportRowIds"]
        for span in claim["spans"]:
            row = rows[span["evidenceId"]]
            assert span["sourceId"] == row["source"]["sourceId"]
            assert span["revision"] == row["source"]["version"]["revision"]
            assert span["checksum"] == row["source"]["version"]["checksum"]
            assert span["locator"] == row["scope"]["locator"]
            assert span["lines"] == row["verification"]["directRead"]["locatorRead"]
            assert span["state"] == "claim-supported"


def test_text_parts_are_joined_into_the_question(client: TestClient, service: RecordingAnswerService) -> None:
    content = [{"type": "text", "text": "May secret values"}, {"type": "text", "text": "be stored?"}]
    response = client.post("/v1/chat/completions", json=chat(messages=[{"role": "user", "content": content}]))
    assert response.status_code == 200, response.text
    assert service.requests[0].question == "May secret values\nbe stored?"


@pytest.mark.parametrize(
    ("overrides", "options"),
    [
        (
            {"temperature": 0.7, "max_tokens": 32, "seed": 7},
            {"strict": False, "temperature": 0.7, "max_new_tokens": 32, "seed": 7},
        ),
        ({"max_completion_tokens": 48}, {"strict": False, "max_new_tokens": 48}),
        ({"max_tokens": 48, "max_completion_tokens": 48}, {"strict": False, "max_new_tokens": 48}),
        ({"model": "akm-strict"}, {"strict": True}),
        ({"akm": {"strict": True}}, {"strict": True}),
        ({"model": "akm-strict", "akm": {"strict": True}}, {"strict": True}),
        (
            {"akm": {"lanes": ["exact"], "fusion": "rrf", "maxRows": 2}},
            {"strict": False, "lanes": ["exact"], "fusion": "rrf", "max_rows": 2},
        ),
        ({"n": 1, "logprobs": False, "tool_choice": "none", "tools": []}, {"strict": False}),
    ],
    ids=[
        "sampling",
        "max-completion-tokens",
        "both-max-equal",
        "strict-model",
        "strict-ext",
        "strict-both",
        "akm",
        "defaults",
    ],
)
def test_parameters_map_to_answer_options(
    client: TestClient, service: RecordingAnswerService, overrides: dict[str, Any], options: dict[str, Any]
) -> None:
    response = client.post("/v1/chat/completions", json=chat(**overrides))
    assert response.status_code == 200, response.text
    assert dict(service.requests[0].options) == options
    assert response.json()["model"] == overrides.get("model", "akm")
    assert response.json()["akm"]["strict"] == options["strict"]


def test_harmless_and_unknown_parameters_are_ignored_and_listed(
    client: TestClient, service: RecordingAnswerService
) -> None:
    extra = {
        "top_p": 0.9,
        "stop": ["\n"],
        "user": "u-1",
        "presence_penalty": 0.5,
        "stream_options": {"include_usage": True},
        "some_future_option": 1,
    }
    response = client.post("/v1/chat/completions", json=chat(**extra))
    assert response.status_code == 200, response.text
    assert response.json()["akm"]["ignoredParameters"] == sorted(extra)
    assert dict(service.requests[0].options) == {"strict": False}


# ---- streaming ------------------------------------------------------------------------------------


def test_stream_sends_drafts_then_the_evidence_then_done(
    client: TestClient, service: RecordingAnswerService
) -> None:
    response = client.post("/v1/chat/completions", json=chat(stream=True))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    payloads = sse_payloads(response.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(payload) for payload in payloads[:-1]]
    assert len({chunk["id"] for chunk in chunks}) == 1
    assert chunks[0]["id"].startswith("chatcmpl-")
    assert {(chunk["object"], chunk["model"]) for chunk in chunks} == {("chat.completion.chunk", "akm")}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    deltas = [chunk["choices"][0]["delta"].get("content") for chunk in chunks[1:-1]]
    assert deltas == list(DRAFT_WORDS)
    assert all(chunk["choices"][0]["finish_reason"] is None for chunk in chunks[:-1])
    assert all("akm" not in chunk for chunk in chunks[:-1])
    final = chunks[-1]
    assert final["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}]
    assert final["akm"]["packetId"] == service.stored[0]
    assert final["akm"]["verdict"] == "PASS"
    assert final["akm"]["answer"] == ANSWER
    assert [claim["status"] for claim in final["akm"]["claims"]] == ["supported", "supported"]
    assert all(claim["spans"] for claim in final["akm"]["claims"])


def test_strict_stream_shows_only_the_verified_answer(client: TestClient) -> None:
    response = client.post("/v1/chat/completions", json=chat(model="akm-strict", stream=True))
    payloads = sse_payloads(response.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(payload) for payload in payloads[:-1]]
    deltas = [chunk["choices"][0]["delta"].get("content") for chunk in chunks]
    # No unverified draft: the role chunk, the verified answer once, then the evidence.
    assert deltas == ["", ANSWER, None]
    assert chunks[-1]["akm"]["strict"] is True
    assert {chunk["model"] for chunk in chunks} == {"akm-strict"}


class WholeAnswerService(RecordingAnswerService):
    """A service that drafts nothing (as when the pipeline abstains): claims and verdict only."""

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        events = list(super().stream(request, cancel))
        return iter([event for event in events if event.kind != "draft"])


def test_stream_without_drafts_sends_the_answer_as_content(
    seeded_store: EvidenceStore, tmp_path: Path
) -> None:
    app = build_app(seeded_store, WholeAnswerService(seeded_store), settings=load_settings(data_dir=tmp_path))
    with TestClient(app) as client:
        payloads = sse_payloads(client.post("/v1/chat/completions", json=chat(stream=True)).text)
    chunks = [json.loads(payload) for payload in payloads[:-1]]
    assert [chunk["choices"][0]["delta"].get("content") for chunk in chunks] == ["", ANSWER, None]


# ---- failures of the service ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_model_unavailable_is_503(seeded_store: EvidenceStore, tmp_path: Path, stream: bool) -> None:
    answers = FakeAnswerService(seeded_store, fail_with=ModelUnavailableError("no weights"))
    app = build_app(seeded_store, answers, settings=load_settings(data_dir=tmp_path))
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/chat/completions", json=chat(stream=stream))
    assert_problem(response, 503, "model-unavailable")
    assert response.headers["retry-after"] == "30"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_question_the_pipeline_cannot_act_on_is_422_naming_it(
    seeded_store: EvidenceStore, tmp_path: Path, stream: bool
) -> None:
    answers = FakeAnswerService(seeded_store, fail_with=InvalidRequestError("the query has no terms"))
    app = build_app(seeded_store, answers, settings=load_settings(data_dir=tmp_path))
    messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "?!"}]
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/chat/completions", json=chat(messages=messages, stream=stream))
    body = assert_problem(response, 422, "validation")
    assert body["invalidParams"] == [{"name": "messages[1].content", "reason": "the query has no terms"}]
    assert body["error"]["param"] == "messages[1].content"


# ---- refused input ----------------------------------------------------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
BAD_INPUT: list[tuple[str, dict[str, Any], str]] = [
    ("n-2", {"n": 2}, "n"),
    ("n-0", {"n": 0}, "n"),
    ("logprobs", {"logprobs": True}, "logprobs"),
    ("top-logprobs", {"top_logprobs": 3}, "top_logprobs"),
    ("tools", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ("tool-choice", {"tool_choice": "auto"}, "tool_choice"),
    ("functions", {"functions": [{"name": "f", "parameters": {}}]}, "functions"),
    ("function-call", {"function_call": {"name": "f"}}, "function_call"),
    ("no-user-message", {"messages": [{"role": "system", "content": "be brief"}]}, "messages"),
    ("no-messages", {"messages": []}, "messages"),
    ("missing-messages", {"messages": None}, "messages"),
    (
        "last-is-assistant",
        {"messages": [{"role": "user", "content": QUESTION}, {"role": "assistant", "content": "Yes"}]},
        "messages[1].role",
    ),
    ("empty-question", {"messages": [{"role": "user", "content": "  "}]}, "messages[0].content"),
    ("long-question", {"messages": [{"role": "user", "content": "why " * 60}]}, "messages[0].content"),
    (
        "unknown-role",
        {"messages": [{"role": "tool", "content": "42"}, {"role": "user", "content": QUESTION}]},
        "messages[0].role",
    ),
    (
        "tool-calls-in-history",
        {
            "messages": [
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
                {"role": "user", "content": QUESTION},
            ]
        },
        "messages[0].tool_calls",
    ),
    ("unknown-model", {"model": "gpt-4o"}, "model"),
    ("missing-model", {"model": None}, "model"),
    (
        "image-part",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": QUESTION}, IMAGE]}]},
        "messages[0].content[1].type",
    ),
    (
        "image-part-in-history",
        {"messages": [{"role": "user", "content": [IMAGE]}, {"role": "user", "content": QUESTION}]},
        "messages[0].content[0].type",
    ),
    ("stream-not-boolean", {"stream": "yes"}, "stream"),
    ("temperature", {"temperature": 3}, "temperature"),
    ("max-tokens", {"max_tokens": 0}, "max_tokens"),
    ("max-completion-tokens", {"max_completion_tokens": 5000}, "max_completion_tokens"),
    ("max-tokens-disagree", {"max_tokens": 10, "max_completion_tokens": 20}, "max_tokens"),
    ("seed", {"seed": -1}, "seed"),
    ("json-mode", {"response_format": {"type": "json_object"}}, "response_format"),
    ("audio", {"modalities": ["text", "audio"]}, "modalities"),
    ("strict-contradiction", {"model": "akm-strict", "akm": {"strict": False}}, "akm.strict"),
    ("akm-unknown-option", {"akm": {"verbose": True}}, "akm.verbose"),
    ("akm-lane", {"akm": {"lanes": ["web"]}}, "akm.lanes[0]"),
]


@pytest.mark.parametrize(
    ("overrides", "param"), [case[1:] for case in BAD_INPUT], ids=[c[0] for c in BAD_INPUT]
)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_bad_input_is_400_naming_the_parameter(
    client: TestClient, service: RecordingAnswerService, overrides: dict[str, Any], param: str, stream: bool
) -> None:
    body = chat(**{"stream": stream, **overrides})
    body = {key: value for key, value in body.items() if value is not None}
    response = client.post("/v1/chat/completions", json=body)
    problem = assert_problem(response, 400, "invalid-parameter")
    assert param in [item["name"] for item in problem["invalidParams"]], problem
    assert param in problem["detail"]
    # OpenAI clients read `error`: the same message, and the first parameter named.
    assert problem["error"]["type"] == "invalid_request_error"
    assert problem["error"]["param"] == problem["invalidParams"][0]["name"]
    assert problem["error"]["message"] == problem["detail"]
    assert service.requests == []
    assert service.stored == []


def test_unknown_model_has_openai_error_code(client: TestClient) -> None:
    problem = client.post("/v1/chat/completions", json=chat(model="gpt-4o")).json()
    assert problem["error"]["code"] == "model_not_found"
    assert "akm, akm-strict" in problem["detail"]


def test_every_problem_is_named_at_once(client: TestClient) -> None:
    response = client.post(
        "/v1/chat/completions", json=chat(n=3, logprobs=True, tools=[{"type": "function"}])
    )
    problem = assert_problem(response, 400, "invalid-parameter")
    assert [item["name"] for item in problem["invalidParams"]] == ["n", "logprobs", "tools"]


def test_body_that_is_not_json_is_400(client: TestClient) -> None:
    response = client.post(
        "/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}
    )
    problem = assert_problem(response, 400, "malformed-request")
    assert problem["error"]["code"] == "invalid_json"
    assert response.headers["content-type"] == PROBLEM


class FailsAfterDrafts(RecordingAnswerService):
    """Drafts two words, then the store fails."""

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        self.requests.append(request)
        yield AnswerEvent("draft", {"text": DRAFT_WORDS[0]})
        yield AnswerEvent("draft", {"text": DRAFT_WORDS[1]})
        raise StoreUnavailableError("database is locked")


def test_a_failure_mid_stream_is_an_error_chunk_without_done(
    seeded_store: EvidenceStore, tmp_path: Path
) -> None:
    app = build_app(seeded_store, FailsAfterDrafts(seeded_store), settings=load_settings(data_dir=tmp_path))
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/v1/chat/completions", json=chat(stream=True))
    payloads = sse_payloads(response.text)
    assert "[DONE]" not in payloads
    *chunks, last = [json.loads(payload) for payload in payloads]
    assert [chunk["choices"][0]["delta"].get("content") for chunk in chunks] == ["", *DRAFT_WORDS[:2]]
    assert last["type"] == "urn:akm:problem:store-unavailable"
    assert last["requestId"] == response.headers["x-request-id"]
    assert last["error"] == {
        "message": "database is locked",
        "type": "server_error",
        "param": None,
        "code": "store-unavailable",
    }


def test_chat_and_answers_share_the_generation_slots(seeded_store: EvidenceStore, tmp_path: Path) -> None:
    release = threading.Event()
    answers = FakeAnswerService(seeded_store, block=release)
    limits = ApiLimits(generation_concurrency=1, generation_wait_s=0.2)
    app = build_app(seeded_store, answers, settings=load_settings(data_dir=tmp_path), limits=limits)
    with TestClient(app, raise_server_exceptions=False) as client:
        first = threading.Thread(target=lambda: client.post("/v1/answers", json={"question": QUESTION}))
        first.start()
        deadline = time.monotonic() + 10
        while answers.running == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        for stream in (False, True):
            busy = client.post("/v1/chat/completions", json=chat(stream=stream))
            assert_problem(busy, 429, "concurrency-limit")
            assert busy.headers["retry-after"] == "1"
        release.set()
        first.join(10)
        assert client.post("/v1/chat/completions", json=chat()).status_code == 200
