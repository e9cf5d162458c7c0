"""Two real processes: ``akm serve --generator-only`` with SmolLM2 behind the speculative decoder,
and ``akm serve`` answering through it (``AKM_TARGET_MODEL=openai+http://127.0.0.1:PORT/v1#smollm2``,
hashing embedder, the fixture articles). The generator is SIGKILLed while a streamed answer is
drafting: the stream ends with a model-unavailable error event, answers meanwhile are 503
problem+json with Retry-After, nothing half-done is stored, and once the generator is started
again on the same port the next answer succeeds.

Each step prints one line (run with ``-s`` to see the transcript). The model is converted once
into ``AKM_TEST_MODEL_CACHE`` when set.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from uvicorn_process import REPO, akm_serve_command, fixture_project, spare_port

from akm.store import open_store

pytestmark = [pytest.mark.real_model, pytest.mark.server, pytest.mark.slow]

QUESTION = "When was the Kestrel Harbour Bridge opened to traffic?"
STARTED = time.monotonic()


def say(line: str) -> None:
    print(f"[{time.monotonic() - STARTED:7.2f} s] {line}", flush=True)


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            command, env={**os.environ, **env}, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT
        )


def wait_healthy(process: subprocess.Popen[bytes], base: str, log: Path, startup_s: float) -> None:
    deadline = time.monotonic() + startup_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"server did not start in {startup_s} s: {log.read_text()[-3000:]}")
        time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextmanager
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for process in started:
            stop(process)


def packet_count(url: str) -> int:
    store = open_store(url)
    try:
        return store.count_packets()
    finally:
        store.close()


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield kind, json.loads(line.removeprefix("data: "))


def assert_model_unavailable(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 503, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    assert int(reply.headers["retry-after"]) > 0
    problem: dict[str, Any] = reply.json()
    assert problem["type"] == "urn:akm:problem:model-unavailable"
    assert "remote generator smollm2" in problem["detail"]
    return problem


def test_an_api_process_answers_through_a_generator_process_that_is_killed_and_restarted(
    tmp_path: Path,
) -> None:
    # The API's project: the fixture articles ingested with the hashing embedder.
    project_env = fixture_project(tmp_path)
    url = project_env["AKM_DATABASE_URL"]

    # The generator's data directory holds only the model cache.
    generator_dir = tmp_path / "generator"
    generator_dir.mkdir()
    cache = os.environ.get("AKM_TEST_MODEL_CACHE")
    if cache:
        Path(cache).mkdir(parents=True, exist_ok=True)
        (generator_dir / "models").symlink_to(Path(cache).resolve(), target_is_directory=True)
    generator_port, api_port = spare_port(), spare_port()
    generator_env = {"AKM_DATA_DIR": str(generator_dir), "AKM_TARGET_MODEL": "smollm2"}
    generator_command = akm_serve_command(generator_port, "--generator-only")
    generator_base = f"http://127.0.0.1:{generator_port}"
    api_env = {
        **project_env,
        "AKM_TARGET_MODEL": f"openai+{generator_base}/v1#smollm2",
        "AKM_GENERATOR_READ_TIMEOUT_S": "60",
        "AKM_GENERATOR_RETRIES": "2",
        "AKM_GENERATOR_BACKOFF_S": "0.2",
    }
    api_base = f"http://127.0.0.1:{api_port}"
    generator_log, api_log = tmp_path / "generator.log", tmp_path / "api.log"
    ask = {"question": QUESTION, "options": {"max_new_tokens": 64}}

    with processes() as running, httpx.Client(base_url=api_base, timeout=300) as client:
        generator = start(generator_command, generator_env, generator_log)
        running.append(generator)
        api = start(akm_serve_command(api_port), api_env, api_log)
        running.append(api)
        wait_healthy(generator, generator_base, generator_log, startup_s=600)
        say(f"generator up: akm serve --generator-only on port {generator_port} (pid {generator.pid})")
        wait_healthy(api, api_base, api_log, startup_s=120)
        say(f"API up: akm serve on port {api_port}, AKM_TARGET_MODEL={api_env['AKM_TARGET_MODEL']}")

        # 1. An answer drafted by the generator process, verified and stored by the API process.
        reply = client.post("/v1/answers", json=ask)
        assert reply.status_code == 200, reply.text
        answer = reply.json()
        supported = [claim for claim in answer["claims"] if claim["status"] == "supported"]
        assert supported and all(claim["citations"] for claim in supported)
        stored = httpx.get(f"{api_base}/v1/packets/{answer['packetId']}", timeout=30).json()
        assert any(row["verification"]["state"] == "claim-supported" for row in stored["evidenceRows"])
        decode = answer["decode"]
        assert decode["generator"]["backend"] == "openai" and decode["generator"]["model"] == "smollm2"
        assert isinstance(decode["new_tokens"], int) and decode["new_tokens"] > 0
        assert isinstance(decode["target_calls"], int) and decode["target_calls"] > 0
        assert packet_count(url) == 1
        say(
            f"answer 1: 200 verdict={answer['verdict']['verdict']} supported={len(supported)} "
            f"packet={answer['packetId']} answer={answer['answer']!r}"
        )
        say(
            f"  decode from the generator: new_tokens={decode['new_tokens']} target_calls={decode['target_calls']} "
            f"tokens_per_target_call={decode['tokens_per_target_call']:.2f} "
            f"acceptance_rate={decode['acceptance_rate']} wall_s={decode['wall_s']:.2f}"
        )

        # 2. SIGKILL the generator while a streamed answer is drafting.
        killed_at_draft = None
        with client.stream("POST", "/v1/answers", json={**ask, "stream": True}) as stream:
            assert stream.status_code == 200
            events = sse_events(stream.iter_lines())
            seen: list[str] = []
            for kind, data in events:
                seen.append(kind)
                if kind == "draft" and killed_at_draft is None:
                    generator.send_signal(signal.SIGKILL)
                    killed_at_draft = data["text"]
                    say(
                        f"stream: first draft {data['text']!r} arrived; SIGKILL sent to the generator (pid {generator.pid})"
                    )
                if kind == "error":
                    error = data
                    break
            else:
                pytest.fail(f"the stream ended without an error event: {seen}")
        generator.wait(10)
        assert "verdict" not in seen, "the answer finished before the generator was killed"
        assert error["type"] == "urn:akm:problem:model-unavailable"
        assert "remote generator smollm2" in error["detail"]
        say(f"stream: events {seen[:3]}...{seen[-2:]} ({len(seen)} in all); error event: {error['detail']}")
        assert packet_count(url) == 1
        say("store: still 1 packet (nothing of the killed answer)")

        # 3. While the generator is down: 503 problem+json with Retry-After, whole and streamed.
        down = assert_model_unavailable(client.post("/v1/answers", json=ask))
        say(f"answer while down: 503 {down['type']} Retry-After present; detail: {down['detail']}")
        streamed_down = assert_model_unavailable(client.post("/v1/answers", json={**ask, "stream": True}))
        say(f"streamed answer while down: 503 before any event; detail: {streamed_down['detail']}")
        assert packet_count(url) == 1
        say("store: still 1 packet")

        # 4. The generator comes back on the same port: the next answer succeeds.
        generator = start(generator_command, generator_env, generator_log)
        running.append(generator)
        wait_healthy(generator, generator_base, generator_log, startup_s=600)
        say(f"generator restarted on port {generator_port} (pid {generator.pid})")
        reply = client.post("/v1/answers", json=ask)
        assert reply.status_code == 200, reply.text
        again = reply.json()
        assert any(claim["status"] == "supported" for claim in again["claims"])
        assert packet_count(url) == 2
        say(
            f"answer after restart: 200 verdict={again['verdict']['verdict']} packet={again['packetId']}; store: 2 packets"
        )
