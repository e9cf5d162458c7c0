"""``akm serve --generator-only``'s app (``POST /v1/completions``, ``/healthz``) over a scripted
text generator: OpenAI completions whole and streamed with usage and the decoder's statistics,
refused parameters, and the remote generator client reading it back through a real uvicorn server."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from akm.answer.prompt import build_prompt
from akm.answer.remote import RemoteAnswerGenerator, RemoteGeneratorConfig, render_chatml
from akm.answer.results import GeneratedAnswer
from akm.api.generator_app import create_generator_app
from akm.errors import ModelUnavailableError
from akm.settings import load_settings
from tests.akm.answer.openai_fake import serving

WORDS = ["The", " bridge", " opened", " in", " 1932."]


class ScriptedText:
    """Continues any prompt with WORDS (cut at ``max_new_tokens`` words); a prompt containing
    ``FAIL`` breaks after the first word. Records what it was asked."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.closed = threading.Event()

    def stream_text(
        self,
        text: str,
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        top_p: float = 1.0,
        stop: Sequence[str] = (),
    ) -> Generator[str, None, GeneratedAnswer]:
        self.calls.append(
            {
                "text": text,
                "max": max_new_tokens,
                "temperature": temperature,
                "seed": seed,
                "top_p": top_p,
                "stop": tuple(stop),
            }
        )
        if not text:
            raise ValueError("the prompt is empty")
        words = WORDS[:max_new_tokens]
        try:
            for index, word in enumerate(words):
                if "FAIL" in text and index == 1:
                    raise RuntimeError("the decoder broke")
                yield word
        finally:
            self.closed.set()
        decode = {
            "new_tokens": len(words),
            "prompt_tokens": len(text.split()),
            "target_calls": 2,
            "tokens_per_target_call": len(words) / 2,
            "proposed": 6,
            "accepted": 3,
            "acceptance_rate": 0.5,
            "acceptance_by_position": [0.75, 0.25],
            "wall_s": 0.01,
            "finish_reason": "eos" if len(words) == len(WORDS) else "length",
        }
        return GeneratedAnswer("".join(words), decode, complete=len(words) == len(WORDS))


@pytest.fixture
def scripted() -> ScriptedText:
    return ScriptedText()


@pytest.fixture
def client(scripted: ScriptedText, tmp_path: Path) -> Iterator[TestClient]:
    app = create_generator_app(load_settings(data_dir=tmp_path, target_model="smollm2"), scripted)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def sse_payloads(text: str) -> list[str]:
    return [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]


def test_health_and_only_completions(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    for path in ("/v1/answers", "/v1/chat/completions", "/v1/sources", "/readyz"):
        assert client.post(path, json={}).status_code == 404, path
        assert client.get(path).status_code in (404, 405), path


def test_a_whole_completion_has_usage_and_decode_statistics(
    client: TestClient, scripted: ScriptedText
) -> None:
    reply = client.post(
        "/v1/completions",
        json={
            "model": "smollm2",
            "prompt": "Q: when?\nA:",
            "max_tokens": 8,
            "temperature": 0,
            "seed": 3,
            "stop": "\n",
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["object"] == "text_completion" and body["model"] == "smollm2"
    assert body["choices"] == [
        {"index": 0, "text": "The bridge opened in 1932.", "finish_reason": "stop", "logprobs": None}
    ]
    assert body["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 5,
        "total_tokens": 8,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    assert body["akm"]["decode"]["tokens_per_target_call"] == 2.5
    assert body["akm"]["decode"]["acceptance_by_position"] == [0.75, 0.25]
    assert scripted.calls == [
        {"text": "Q: when?\nA:", "max": 8, "temperature": 0.0, "seed": 3, "top_p": 1.0, "stop": ("\n",)}
    ]


def test_a_cut_off_completion_finishes_with_length(client: TestClient) -> None:
    body = client.post("/v1/completions", json={"model": "smollm2", "prompt": "x", "max_tokens": 2}).json()
    assert body["choices"][0]["text"] == "The bridge"
    assert body["choices"][0]["finish_reason"] == "length"


def test_a_streamed_completion_ends_with_usage_statistics_and_done(client: TestClient) -> None:
    with client.stream(
        "POST", "/v1/completions", json={"model": "smollm2", "prompt": "x", "max_tokens": 8, "stream": True}
    ) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        payloads = sse_payloads(reply.read().decode())
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(payload) for payload in payloads[:-1]]
    assert "".join(chunk["choices"][0]["text"] for chunk in chunks) == "The bridge opened in 1932."
    assert [chunk["choices"][0]["finish_reason"] for chunk in chunks] == [None] * 5 + ["stop"]
    assert chunks[-1]["usage"]["completion_tokens"] == 5
    assert chunks[-1]["akm"]["decode"]["target_calls"] == 2


def test_a_failure_mid_stream_is_an_error_chunk_without_done(client: TestClient) -> None:
    with client.stream(
        "POST",
        "/v1/completions",
        json={"model": "smollm2", "prompt": "FAIL", "max_tokens": 8, "stream": True},
    ) as reply:
        payloads = sse_payloads(reply.read().decode())
    assert "[DONE]" not in payloads
    assert json.loads(payloads[0])["choices"][0]["text"] == "The"
    assert "error" in json.loads(payloads[-1])


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 2}, "n"),
        ({"logprobs": 2}, "logprobs"),
        ({"echo": True}, "echo"),
        ({"best_of": 3}, "best_of"),
        ({"prompt": ["a", "b"]}, "prompt"),
        ({"model": "gpt-4"}, "model"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": 5}, "temperature"),
    ],
)
def test_unsupported_parameters_are_400_naming_them(
    client: TestClient, extra: dict[str, Any], param: str
) -> None:
    reply = client.post("/v1/completions", json={"model": "smollm2", "prompt": "x", **extra})
    assert reply.status_code == 400, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    body = reply.json()
    assert body["error"]["param"] == param
    assert any(item["name"] == param for item in body["invalidParams"])


def test_an_empty_prompt_is_400(client: TestClient) -> None:
    reply = client.post("/v1/completions", json={"model": "smollm2", "prompt": "", "stream": True})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "prompt"


def test_the_remote_generator_reads_the_generator_server_back(scripted: ScriptedText, tmp_path: Path) -> None:
    """The client of akm.answer.remote against this app under a real uvicorn server."""
    app = create_generator_app(load_settings(data_dir=tmp_path, target_model="smollm2"), scripted)
    prompt = build_prompt("When did the bridge open?", ["The bridge opened in 1932."])
    with serving(app) as base:
        remote = RemoteAnswerGenerator(RemoteGeneratorConfig(base_url=base, model="smollm2"))
        pieces: list[str] = []
        stream = remote.stream(prompt, max_new_tokens=16, temperature=0.0, seed=None)
        while True:
            try:
                pieces.append(next(stream))
            except StopIteration as finished:
                answer: GeneratedAnswer = finished.value
                break
        with pytest.raises(ModelUnavailableError, match="reported an error in the stream: generation failed"):
            list(
                remote.stream(
                    build_prompt("FAIL", ["FAIL now."]), max_new_tokens=16, temperature=0.0, seed=None
                )
            )
        remote.close()
    assert pieces == WORDS
    assert answer.text == "The bridge opened in 1932." and answer.complete
    assert scripted.calls[0]["text"] == render_chatml(prompt)
    assert scripted.calls[0]["stop"] == ("<|im_end|>",)
    decode = answer.decode
    assert decode["new_tokens"] == 5 and decode["target_calls"] == 2 and decode["acceptance_rate"] == 0.5
    assert decode["acceptance_by_position"] == [0.75, 0.25]
    assert decode["finish_reason"] == "stop"


def test_generator_only_refuses_a_remote_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from akm.cli import main

    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AKM_TARGET_MODEL", "openai+http://127.0.0.1:9/v1#smollm2")
    assert main(["serve", "--generator-only", "--port", "8123"]) == 2
    assert "--generator-only serves a local target model" in capsys.readouterr().err
