"""The official ``openai`` Python client against a real uvicorn process: the production answer
pipeline over ingested fixture articles (hashing embedder, a generator that copies the chosen
passage word by word), whole and streamed replies with the ``akm`` evidence object, refused
parameters as the client's BadRequestError, and a client that leaves a stream early."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from uvicorn_process import (
    HERE,
    akm_serve_command,
    fake_server_command,
    fixture_project,
    running_server,
    spare_port,
)

from akm.store import open_store

pytestmark = pytest.mark.server

FIXTURE_DOCS = HERE.parents[1] / "fixtures" / "answers" / "docs"
QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"


def packet_count(url: str) -> int:
    store = open_store(url)
    try:
        return store.count_packets()
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    env = fixture_project(tmp_path_factory.mktemp("openai"))
    env["AKM_TEST_WORD_DELAY_S"] = "0.05"
    port = spare_port()
    with running_server(fake_server_command(port, "openai_server_app:create"), port, env) as base:
        yield base, env


@pytest.fixture
def client(server: tuple[str, dict[str, str]]) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{server[0]}/v1", api_key="not-used", max_retries=0, timeout=60) as client:
        yield client


def assert_evidence(evidence: dict[str, Any], base: str, *, strict: bool) -> None:
    """The akm object names a stored PASS packet whose claims hold spans into the bridge article."""
    assert evidence["verdict"] == "PASS", evidence["verdictReasons"]
    assert evidence["strict"] is strict
    supported = [claim for claim in evidence["claims"] if claim["status"] == "supported"]
    assert supported
    for claim in supported:
        assert claim["citations"], claim
        assert claim["spans"], claim
        for span in claim["spans"]:
            assert span["path"] == "docs/harbour_bridge.md"
            assert span["state"] == "claim-supported"
            assert len(span["checksum"]) == 64
            assert span["lines"].startswith("docs/harbour_bridge.md:")
            assert span["locator"]["value"]
    packet = httpx.get(f"{base}{evidence['packetUrl']}", timeout=10).json()
    assert packet["packetId"] == evidence["packetId"]
    stored = [claim["claimId"] for claim in packet["claims"]]
    shown = [claim["claimId"] for claim in evidence["claims"]]
    # Strict replies leave out the claims that are not supported; the packet keeps them all.
    assert set(shown) <= set(stored) if strict else shown == stored


def test_models_are_listed_for_the_client(client: openai.OpenAI) -> None:
    assert [model.id for model in client.models.list()] == ["akm", "akm-strict"]
    assert client.models.retrieve("akm-strict").model_extra["akm"]["strict"] is True  # type: ignore[index]


def test_whole_reply_through_the_client(client: openai.OpenAI, server: tuple[str, dict[str, str]]) -> None:
    base, env = server
    before = packet_count(env["AKM_DATABASE_URL"])
    completion = client.chat.completions.create(
        model="akm",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": QUESTION},
        ],
        temperature=0,
        max_tokens=64,
    )
    assert completion.model == "akm"
    assert completion.object == "chat.completion"
    [choice] = completion.choices
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert "19 March 1932" in (choice.message.content or "")
    evidence = completion.model_extra["akm"]  # type: ignore[index]
    assert evidence["answer"] == choice.message.content
    assert_evidence(evidence, base, strict=False)
    assert packet_count(env["AKM_DATABASE_URL"]) == before + 1


def test_strict_reply_holds_only_supported_claims(
    client: openai.OpenAI, server: tuple[str, dict[str, str]]
) -> None:
    completion = client.chat.completions.create(
        model="akm-strict", messages=[{"role": "user", "content": QUESTION}]
    )
    evidence = completion.model_extra["akm"]  # type: ignore[index]
    assert_evidence(evidence, server[0], strict=True)
    assert {claim["status"] for claim in evidence["claims"]} == {"supported"}
    assert completion.choices[0].message.content == " ".join(claim["text"] for claim in evidence["claims"])


def test_streamed_reply_ends_with_the_evidence(
    client: openai.OpenAI, server: tuple[str, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    base, env = server
    before = packet_count(env["AKM_DATABASE_URL"])
    stream = client.chat.completions.create(
        model="akm", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    contents: list[str] = []
    finals = []
    ids = set()
    for chunk in stream:
        ids.add(chunk.id)
        assert chunk.model == "akm"
        delta = chunk.choices[0].delta
        if delta.content:
            contents.append(delta.content)
        if chunk.choices[0].finish_reason is not None:
            finals.append(chunk)
    assert len(ids) == 1
    assert len(contents) > 3  # the draft arrives word by word
    [final] = finals
    assert final.choices[0].finish_reason == "stop"
    evidence = final.model_extra["akm"]  # type: ignore[index]
    assert "19 March 1932" in "".join(contents)
    assert_evidence(evidence, base, strict=False)
    assert packet_count(env["AKM_DATABASE_URL"]) == before + 1
    with capsys.disabled():
        if os.environ.get("AKM_TEST_SHOW_TRANSCRIPT"):
            print("\nstreamed content:", repr("".join(contents)))
            print("akm:", {k: evidence[k] for k in ("packetId", "verdict", "strict")})
            for claim in evidence["claims"]:
                print(" claim", claim["status"], claim["supportScore"], repr(claim["text"]))
                for span in claim["spans"]:
                    print("   span", span["lines"], span["revision"], span["checksum"][:12], span["locator"])


@pytest.mark.parametrize(
    ("arguments", "param"),
    [
        ({"n": 2}, "n"),
        ({"logprobs": True}, "logprobs"),
        ({"tools": [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]}, "tools"),
        ({"model": "gpt-4o"}, "model"),
    ],
    ids=["n", "logprobs", "tools", "model"],
)
def test_refused_parameters_are_bad_requests_for_the_client(
    client: openai.OpenAI, arguments: dict[str, Any], param: str
) -> None:
    request: dict[str, Any] = {
        "model": "akm",
        "messages": [{"role": "user", "content": QUESTION}],
        **arguments,
    }
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(**request)
    assert caught.value.status_code == 400
    assert caught.value.param == param
    assert param in caught.value.message
    assert caught.value.response.headers["content-type"] == "application/problem+json"


def test_leaving_a_stream_stores_nothing(client: openai.OpenAI, server: tuple[str, dict[str, str]]) -> None:
    _, env = server
    before = packet_count(env["AKM_DATABASE_URL"])
    stream = client.chat.completions.create(
        model="akm", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    received = 0
    for chunk in stream:
        received += bool(chunk.choices[0].delta.content)
        if received == 2:
            break
    stream.close()
    time.sleep(2.0)
    assert packet_count(env["AKM_DATABASE_URL"]) == before
    # The generation slot was released: the next answer runs at once.
    completion = client.chat.completions.create(model="akm", messages=[{"role": "user", "content": QUESTION}])
    assert completion.choices[0].finish_reason == "stop"
    assert packet_count(env["AKM_DATABASE_URL"]) == before + 1


@pytest.mark.real_model
@pytest.mark.slow
def test_akm_serve_streams_a_real_model_answer(tmp_path: Path) -> None:
    """``akm serve`` with the real SmolLM2 target (converted once into AKM_TEST_MODEL_CACHE when
    set): a streamed answer and its evidence through the client."""
    env = fixture_project(tmp_path)
    cache = os.environ.get("AKM_TEST_MODEL_CACHE")
    if cache:
        Path(cache).mkdir(parents=True, exist_ok=True)
        (tmp_path / "models").symlink_to(Path(cache).resolve(), target_is_directory=True)
    port = spare_port()
    with (
        running_server(akm_serve_command(port, "--load-models"), port, env, startup_s=600) as base,
        openai.OpenAI(base_url=f"{base}/v1", api_key="not-used", max_retries=0, timeout=300) as client,
    ):
        stream = client.chat.completions.create(
            model="akm", messages=[{"role": "user", "content": QUESTION}], stream=True, max_tokens=48
        )
        chunks = list(stream)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    evidence = final.model_extra["akm"]  # type: ignore[index]
    assert evidence["packetId"].startswith("pk:")
    assert evidence["verdict"] in {"PASS", "PASS_WITH_NOTE", "HOLD"}
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text.strip()
    assert any(claim["status"] == "supported" and claim["spans"] for claim in evidence["claims"])
