"""The remote generator against a scripted OpenAI-compatible server served by uvicorn: streaming,
decode statistics from usage (and None where the server reports none), retries with backoff
before the first text and never after it, and every way a reply can break."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from akm.answer.prompt import EvidencePrompt, build_prompt
from akm.answer.remote import (
    RemoteAnswerGenerator,
    RemoteGeneratorConfig,
    is_remote_target,
    parse_remote_target,
    render_chatml,
)
from akm.answer.results import GeneratedAnswer
from akm.errors import ModelUnavailableError
from akm.runtime import Runtime
from akm.settings import load_settings
from tests.akm.answer.openai_fake import (
    Drop,
    FakeOpenAI,
    Pause,
    Reply,
    completion_chunk,
    serving,
    spare_port,
    text_reply,
)

PROMPT = build_prompt("When did the bridge open?", ["The bridge opened in 1932."])


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeOpenAI, str]]:
    server = FakeOpenAI()
    with serving(server.app) as base:
        yield server, base


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def generator(base: str, sleep: Sleeps | None = None, **config: Any) -> RemoteAnswerGenerator:
    settings: dict[str, Any] = {"read_timeout_s": 5.0, "backoff_s": 0.05, "retries": 2, **config}
    return RemoteAnswerGenerator(
        RemoteGeneratorConfig(base_url=base, model="fake-model", **settings),
        sleep=sleep or Sleeps(),
    )


def collect(
    remote: RemoteAnswerGenerator, prompt: EvidencePrompt = PROMPT
) -> tuple[list[str], GeneratedAnswer]:
    pieces: list[str] = []
    stream = remote.stream(prompt, max_new_tokens=32, temperature=0.0, seed=7)
    while True:
        try:
            pieces.append(next(stream))
        except StopIteration as finished:
            return pieces, finished.value


def pieces_before_failure(remote: RemoteAnswerGenerator) -> tuple[list[str], ModelUnavailableError]:
    pieces: list[str] = []
    stream = remote.stream(PROMPT, max_new_tokens=32, temperature=0.0, seed=None)
    with pytest.raises(ModelUnavailableError) as caught:
        for piece in stream:
            pieces.append(piece)
    return pieces, caught.value


# ---- the target string and the runtime's choice ---------------------------------------------------


def test_the_target_url_names_the_server_and_the_model() -> None:
    assert parse_remote_target("openai+http://127.0.0.1:8001/v1#smollm2") == (
        "http://127.0.0.1:8001/v1",
        "smollm2",
    )
    assert parse_remote_target("openai+https://gpu.example:443/v1/#org/model%20x") == (
        "https://gpu.example:443/v1",
        "org/model x",
    )
    assert is_remote_target("openai+http://h/v1#m") and not is_remote_target("smollm2")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("openai+http://127.0.0.1:8001/v1", "names no model"),
        ("openai+http://127.0.0.1:8001/v1#", "names no model"),
        ("openai+http:///v1#m", "names no host"),
        ("openai+http://127.0.0.1:99999/v1#m", "out of range"),
        ("openai+http://user:secret@127.0.0.1/v1#m", "credentials"),
        ("openai+http://127.0.0.1/v1?key=1#m", "query string"),
        ("openai+ftp://127.0.0.1/v1#m", "not of the form"),
    ],
)
def test_a_malformed_target_url_is_refused_with_the_reason(target: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_remote_target(target)


def test_the_runtime_picks_the_remote_generator_without_loading_a_model(tmp_path: Any) -> None:
    settings = load_settings(data_dir=tmp_path, target_model="openai+http://127.0.0.1:9/v1#m")
    runtime = Runtime.from_settings(settings)
    chosen = runtime.generator
    assert isinstance(chosen, RemoteAnswerGenerator)
    assert chosen.url == "http://127.0.0.1:9/v1/completions"
    with pytest.raises(ModelUnavailableError, match="remote generator server"):
        _ = runtime.local_generator
    runtime.close()


def test_the_api_key_comes_from_the_named_environment_variable(
    fake: tuple[FakeOpenAI, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    server, base = fake
    target = f"openai+{base}#fake-model"
    settings = load_settings(data_dir=tmp_path, target_model=target, generator_api_key_env="AKM_TEST_GEN_KEY")
    monkeypatch.delenv("AKM_TEST_GEN_KEY", raising=False)
    with pytest.raises(ModelUnavailableError, match="AKM_TEST_GEN_KEY"):
        _ = Runtime.from_settings(settings).generator
    monkeypatch.setenv("AKM_TEST_GEN_KEY", "sk-test-123")
    remote = Runtime.from_settings(settings).generator
    assert isinstance(remote, RemoteAnswerGenerator)
    assert "sk-test-123" not in repr(remote.config)
    server.script(text_reply("ok"))
    collect(remote)
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-test-123"


# ---- streaming and statistics -----------------------------------------------------------------------


def test_text_streams_as_it_arrives_and_usage_becomes_decode_statistics(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    akm_stats = {
        "decode": {"target_calls": 3, "tokens_per_target_call": 2.0, "acceptance_rate": 0.75, "wall_s": 0.4}
    }
    server.script(
        text_reply(
            "The bridge",
            " opened",
            " in 1932.",
            usage={"prompt_tokens": 40, "completion_tokens": 6},
            akm=akm_stats,
        )
    )
    pieces, answer = collect(generator(base))
    assert pieces == ["The bridge", " opened", " in 1932."]
    assert answer.text == "The bridge opened in 1932."
    assert answer.complete
    decode = answer.decode
    assert decode["new_tokens"] == 6
    assert decode["prompt_tokens"] == 40
    assert decode["target_calls"] == 3
    assert decode["tokens_per_target_call"] == 2.0
    assert decode["acceptance_rate"] == 0.75
    assert decode["finish_reason"] == "stop"
    assert decode["wall_s"] > 0 and decode["ttft_s"] is not None and decode["ttft_s"] <= decode["wall_s"]
    assert decode["tokens_per_s"] == pytest.approx(6 / decode["wall_s"])
    assert decode["generator"]["server"]["wall_s"] == 0.4  # the server's own timing, kept apart
    assert decode["generator"]["attempts"] == 1
    request = server.requests[0]
    assert request["path"] == "/v1/completions"
    body = request["body"]
    assert body["model"] == "fake-model" and body["stream"] is True and body["max_tokens"] == 32
    assert body["seed"] == 7 and body["temperature"] == 0.0
    assert body["prompt"] == render_chatml(PROMPT)
    assert body["prompt"].endswith("<|im_start|>assistant\n") and body["stop"] == ["<|im_end|>"]
    assert body["stream_options"] == {"include_usage": True}


def test_statistics_the_server_does_not_report_are_null_not_zero(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(text_reply("The bridge opened in 1932."))
    _, answer = collect(generator(base))
    decode = answer.decode
    for key in (
        "new_tokens",
        "prompt_tokens",
        "target_calls",
        "tokens_per_target_call",
        "acceptance_rate",
        "tokens_per_s",
        "mean_accepted_length",
    ):
        assert decode[key] is None, key
    assert decode["wall_s"] > 0


def test_usage_in_a_trailing_chunk_without_choices_is_read(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    usage_only = {
        "id": "x",
        "object": "text_completion",
        "choices": [],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4},
    }
    server.script(
        Reply(events=[completion_chunk("Yes."), completion_chunk("", "length"), usage_only, "[DONE]"])
    )
    _, answer = collect(generator(base))
    assert answer.decode["new_tokens"] == 4
    assert answer.decode["finish_reason"] == "length"
    assert not answer.complete


def test_llama_cpp_timings_give_counts_and_draft_acceptance(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    timings = {
        "prompt_n": 30,
        "prompt_ms": 50.0,
        "predicted_n": 8,
        "predicted_ms": 150.0,
        "predicted_per_second": 53.3,
        "draft_n": 10,
        "draft_n_accepted": 6,
    }
    server.script(text_reply("Yes.", timings=timings))
    _, answer = collect(generator(base))
    decode = answer.decode
    assert (decode["new_tokens"], decode["prompt_tokens"]) == (8, 30)
    assert (decode["proposed"], decode["accepted"], decode["acceptance_rate"]) == (10, 6, 0.6)
    assert decode["generator"]["server"] == {"wall_s": 0.2, "ttft_s": 0.05, "tokens_per_s": 53.3}


def test_the_chat_endpoint_sends_messages_and_reads_deltas(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}],
    }
    text = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "In 1932."}, "finish_reason": "stop"}],
    }
    server.script(Reply(events=[chunk, text, "[DONE]"]))
    pieces, answer = collect(generator(base, endpoint="chat"))
    assert pieces == ["In 1932."] and answer.text == "In 1932."
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["body"]["messages"] == [{"role": "user", "content": PROMPT.user}]


def test_closing_the_stream_stops_reading(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("one"), Pause(3.0), completion_chunk("two"), "[DONE]"]))
    stream = generator(base).stream(PROMPT, max_new_tokens=8, temperature=0.0, seed=None)
    started = time.monotonic()
    assert next(stream) == "one"
    stream.close()
    assert time.monotonic() - started < 2.0


# ---- retries ---------------------------------------------------------------------------------------


def test_5xx_and_429_before_any_text_are_retried_with_exponential_backoff(
    fake: tuple[FakeOpenAI, str],
) -> None:
    server, base = fake
    server.script(Reply(status=503), Reply(status=429), text_reply("In 1932."))
    sleeps = Sleeps()
    _, answer = collect(generator(base, sleeps, retries=2, backoff_s=0.05))
    assert answer.text == "In 1932."
    assert len(server.requests) == 3
    assert sleeps.waits == [0.05, 0.1]
    assert answer.decode["generator"]["attempts"] == 3


def test_retry_after_is_honoured(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(status=429, headers={"Retry-After": "2"}), text_reply("ok"))
    sleeps = Sleeps()
    collect(generator(base, sleeps, backoff_s=0.05))
    assert sleeps.waits == [2.0]


def test_retries_really_wait_between_attempts(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(status=502), Reply(status=502), text_reply("ok"))
    remote = RemoteAnswerGenerator(RemoteGeneratorConfig(base_url=base, model="m", retries=2, backoff_s=0.2))
    collect(remote)
    gaps = [
        later - earlier
        for earlier, later in zip(server.request_times, server.request_times[1:], strict=False)
    ]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.4


def test_the_last_failure_is_reported_once_retries_run_out(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(status=500, body={"error": {"message": "model crashed"}}))
    sleeps = Sleeps()
    _, error = pieces_before_failure(generator(base, sleeps, retries=2))
    assert len(server.requests) == 3 and sleeps.waits == [0.05, 0.1]
    assert "HTTP 500" in str(error) and "model crashed" in str(error) and "after 3 attempts" in str(error)
    assert error.kind == "target"


def test_an_unreachable_server_is_retried_then_unavailable() -> None:
    sleeps = Sleeps()
    remote = generator(f"http://127.0.0.1:{spare_port()}/v1", sleeps, retries=3)
    _, error = pieces_before_failure(remote)
    assert sleeps.waits == [0.05, 0.1, 0.2]
    assert "ConnectError" in str(error) and "after 4 attempts" in str(error)


def test_a_client_error_is_not_retried(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(status=404, body={"error": {"message": "model 'x' not found"}}))
    sleeps = Sleeps()
    _, error = pieces_before_failure(generator(base, sleeps))
    assert len(server.requests) == 1 and not sleeps.waits
    assert "HTTP 404" in str(error) and "not found" in str(error)


def test_a_connection_dropped_before_any_text_is_retried(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[Drop()]), text_reply("In 1932."))
    _, answer = collect(generator(base))
    assert answer.text == "In 1932." and len(server.requests) == 2


def test_no_retry_once_text_has_arrived(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("The bridge"), Drop()]), text_reply("never asked for"))
    sleeps = Sleeps()
    pieces, error = pieces_before_failure(generator(base, sleeps))
    assert pieces == ["The bridge"]
    assert len(server.requests) == 1 and not sleeps.waits
    assert "after text had arrived" in str(error)


# ---- broken replies ----------------------------------------------------------------------------------


def test_malformed_json_fails_the_answer(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("The bridge"), "{not json", "[DONE]"]))
    pieces, error = pieces_before_failure(generator(base))
    assert pieces == ["The bridge"]
    assert "malformed reply" in str(error) and "not JSON" in str(error)
    assert len(server.requests) == 1


def test_a_chunk_of_the_wrong_shape_fails_the_answer(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[{"choices": [{"index": 0, "text": 5}]}, "[DONE]"]))
    _, error = pieces_before_failure(generator(base))
    assert "malformed reply" in str(error)


def test_a_reply_that_is_not_an_event_stream_fails(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=["[DONE]"], content_type="application/json"))
    _, error = pieces_before_failure(generator(base))
    assert "not text/event-stream" in str(error)


def test_an_error_reported_in_the_stream_fails_the_answer(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("The"), {"error": {"message": "decoder failed"}}]))
    pieces, error = pieces_before_failure(generator(base))
    assert pieces == ["The"] and "decoder failed" in str(error)


def test_a_stream_that_ends_before_done_fails_the_answer(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("The bridge"), completion_chunk(" opened")]))
    pieces, error = pieces_before_failure(generator(base))
    assert pieces == ["The bridge", " opened"]
    assert "ended before data: [DONE]" in str(error)


def test_a_stall_before_the_reply_fails_after_the_read_timeout(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("late"), "[DONE]"], pause_before_headers_s=3.0))
    started = time.monotonic()
    _, error = pieces_before_failure(generator(base, read_timeout_s=0.4))
    assert time.monotonic() - started < 2.5
    assert "waited more than 0.4 s for a reply" in str(error)
    assert len(server.requests) == 1  # a stall is not retried


def test_a_stall_mid_stream_fails_after_the_read_timeout(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(
        Reply(events=[completion_chunk("The bridge"), Pause(3.0), completion_chunk(" opened"), "[DONE]"])
    )
    started = time.monotonic()
    pieces, error = pieces_before_failure(generator(base, read_timeout_s=0.4))
    assert time.monotonic() - started < 2.5
    assert pieces == ["The bridge"]
    assert "waited more than 0.4 s for more text" in str(error)


def test_a_failure_is_not_remembered(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    remote = generator(base, retries=0)
    server.script(Reply(status=503), text_reply("In 1932."))
    pieces_before_failure(remote)
    _, answer = collect(remote)
    assert answer.text == "In 1932."


def test_requests_beyond_the_concurrency_limit_wait_then_fail(fake: tuple[FakeOpenAI, str]) -> None:
    server, base = fake
    server.script(Reply(events=[completion_chunk("slow"), Pause(1.5), "[DONE]"]))
    remote = generator(base, max_concurrency=1, read_timeout_s=0.5)
    first = remote.stream(PROMPT, max_new_tokens=8, temperature=0.0, seed=None)
    assert next(first) == "slow"  # holds the only slot
    _, error = pieces_before_failure(remote)
    assert "stayed busy" in str(error)
    first.close()
    server.script(text_reply("free again"))
    assert collect(remote)[1].text == "free again"


def test_akm_ask_summarises_a_remote_decode_without_inventing_numbers(fake: tuple[FakeOpenAI, str]) -> None:
    from akm.cli.ask import decode_summary

    server, base = fake
    server.script(text_reply("In 1932."))
    _, answer = collect(generator(base))
    line = decode_summary(answer.decode)
    assert line.startswith(f"decode: remote generator fake-model at {base}: token count not reported in ")
    assert "tokens per target call" not in line
    server.script(
        text_reply(
            "In 1932.",
            usage={"prompt_tokens": 5, "completion_tokens": 4},
            akm={"decode": {"tokens_per_target_call": 2.0, "acceptance_rate": 0.5}},
        )
    )
    _, answer = collect(generator(base))
    line = decode_summary(answer.decode)
    assert (
        ": 4 tokens in " in line and "2.00 tokens per target call" in line and "draft acceptance 50%" in line
    )
