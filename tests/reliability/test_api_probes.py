"""Probes 8, 9, 11 and the oversized header: what the REST API refuses, and how.

The network probes run against a real ``akm serve`` process on 127.0.0.1 (a raw socket sends
what a client library would not); the request models are checked in process.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from akm.api.schemas import AnswerIn
from akm.cli import main
from akm.cli.serve import exposure_warning, is_loopback
from akm.store import open_store

from .conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "akm" / "api"))
from uvicorn_process import akm_serve_command, running_server, spare_port

pytestmark = pytest.mark.reliability


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, "1", None])
def test_stream_must_be_a_boolean(value: Any) -> None:
    with pytest.raises(ValidationError):
        AnswerIn.model_validate({"question": "x", "stream": value})


@pytest.mark.parametrize("value", ["yes", 1])
def test_strict_option_must_be_a_boolean(value: Any) -> None:
    with pytest.raises(ValidationError):
        AnswerIn.model_validate({"question": "x", "options": {"strict": value}})


def test_booleans_are_still_accepted() -> None:
    request = AnswerIn.model_validate({"question": "x", "stream": True, "options": {"strict": False}})
    assert request.stream is True and request.options.strict is False


def _raw_exchange(port: int, payload: bytes, *, wait_s: float) -> bytes:
    """Send ``payload`` and read what the server answers within ``wait_s`` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as connection:
        connection.sendall(payload)
        received = b""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and b"\r\n\r\n" not in received:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            received += chunk
        return received


def test_the_server_refuses_abandoned_bodies_big_headers_and_loose_booleans(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    open_store(url).close()
    port = spare_port()
    env = {"AKM_DATABASE_URL": url, "AKM_DATA_DIR": str(tmp_path), "AKM_API_BODY_TIMEOUT_S": "1"}
    with running_server(akm_serve_command(port), port, env) as base, httpx.Client(base_url=base) as client:
        # A client that sends 10 of 100 promised bytes and then goes quiet: 408, not a 500 after a minute.
        started = time.monotonic()
        head = (
            b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n"
        )
        answer = _raw_exchange(port, head + b'{"a": 1, ', wait_s=10)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert time.monotonic() - started < 8
        # A 70 KB header is refused (by the HTTP parser or by the API's own header limit).
        big = client.get("/healthz", headers={"X-Padding": "x" * 70_000})
        assert big.status_code in (400, 431)
        assert client.get("/healthz", headers={"X-Padding": "x" * 4_000}).status_code == 200
        # "stream": "yes" is not a boolean.
        loose = client.post("/v1/answers", json={"question": "x", "stream": "yes"})
        assert loose.status_code == 422
        assert loose.headers["content-type"] == "application/problem+json"
        metrics = client.get("/metrics").text
    assert 'status="408"' in metrics
    assert 'status="500"' not in metrics


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.org", False),
    ],
)
def test_non_loopback_addresses_are_told_apart(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert (exposure_warning(host) is None) is loopback


@pytest.fixture
def restored_environment() -> Iterator[None]:
    """``akm serve`` exports its settings to the environment for its workers; undo that."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.usefixtures("restored_environment")
def test_serving_on_all_interfaces_needs_an_api_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import uvicorn

    started: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    monkeypatch.setenv("AKM_DATA_DIR", str(tmp_path))
    database = ["--database-url", f"sqlite:///{tmp_path / 's.db'}"]
    assert main([*database, "serve", "--host", "0.0.0.0"]) == 2
    assert not started
    refusal = capsys.readouterr().err
    assert "refusing to start" in refusal and "akm keys create" in refusal
    assert main([*database, "keys", "create", "--scope", "ask"]) == 0
    capsys.readouterr()
    assert main([*database, "serve", "--host", "0.0.0.0"]) == 0 and started
    assert "needs an API key" in capsys.readouterr().err
    # The workers rebuild their settings from the environment: keys are required there.
    assert os.environ["AKM_REQUIRE_API_KEYS"] == "True"
    main([*database, "serve"])
    assert "API key" not in capsys.readouterr().err


def test_deployment_docs_say_non_loopback_serving_needs_keys() -> None:
    text = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8").lower()
    assert "api key" in text and "security.md" in text
    assert "0.0.0.0" in text


def test_a_server_killed_mid_stream_stores_nothing_half_done(tmp_path: Path) -> None:
    from api_fakes import seed_store
    from uvicorn_process import fake_server_command

    database = tmp_path / "store.sqlite3"
    url = f"sqlite:///{database}"
    store = open_store(url)
    seed_store(store)
    before = store.count_packets()
    store.close()
    port = spare_port()
    environment = {**os.environ, "AKM_DATABASE_URL": url, "AKM_DATA_DIR": str(tmp_path)}
    environment["AKM_TEST_WORD_DELAY_S"] = "0.3"
    server = subprocess.Popen(
        fake_server_command(port),
        env=environment,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
                time.sleep(0.1)
        drafts = 0
        with (
            httpx.Client(base_url=base, timeout=10) as client,
            client.stream(
                "POST", "/v1/answers", json={"question": "May secrets be stored?", "stream": True}
            ) as response,
        ):
            for line in response.iter_lines():
                drafts += line.startswith("event: draft")
                if drafts == 2:
                    os.kill(server.pid, signal.SIGKILL)
                    break
        server.wait(15)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(15)
    assert drafts == 2 and server.returncode == -signal.SIGKILL
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    reopened = open_store(url)
    try:
        assert reopened.count_packets() == before
    finally:
        reopened.close()
