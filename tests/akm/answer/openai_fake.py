"""A small OpenAI-compatible completions server for the remote generator's tests.

It runs under a real uvicorn server in a thread of the test process, so each test scripts its
replies directly: a list of :class:`Reply` objects, one per request, taken in order (the last one
repeats). A reply is an HTTP status with a body, or a server-sent event stream of raw ``data:``
payloads with optional pauses and an optional dropped connection.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


class Pause:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class Drop:
    """Break the connection here (the response body is never completed)."""


@dataclass
class Reply:
    status: int = 200
    events: list[Any] = field(default_factory=list)  # str payloads (after "data: "), dicts, Pause, Drop
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    pause_before_headers_s: float = 0.0
    content_type: str = "text/event-stream"


def completion_chunk(text: str, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}],
        **extra,
    }


def text_reply(*pieces: str, usage: dict[str, int] | None = None, **final_extra: Any) -> Reply:
    """A well-formed stream: one chunk per piece, a final chunk (usage and extras), then [DONE]."""
    events: list[Any] = [completion_chunk(piece) for piece in pieces]
    final = completion_chunk("", "stop", **final_extra)
    if usage is not None:
        final["usage"] = usage
    events.extend([final, "[DONE]"])
    return Reply(events=events)


class FakeOpenAI:
    """The scripted server; ``requests`` holds each request's JSON body and headers."""

    def __init__(self) -> None:
        self.replies: list[Reply] = [text_reply("ok")]
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self._served = 0
        self.app = Starlette(
            routes=[
                Route("/v1/completions", self._handle, methods=["POST"]),
                Route("/v1/chat/completions", self._handle, methods=["POST"]),
            ]
        )

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self._served = 0
        self.requests.clear()
        self.request_times.clear()

    async def _handle(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({"path": request.url.path, "body": body, "headers": dict(request.headers)})
        self.request_times.append(time.monotonic())
        reply = self.replies[min(self._served, len(self.replies) - 1)]
        self._served += 1
        if reply.pause_before_headers_s:
            await asyncio.sleep(reply.pause_before_headers_s)
        if reply.status != 200:
            return JSONResponse(
                reply.body or {"error": {"message": "scripted failure"}}, reply.status, reply.headers
            )

        async def stream() -> AsyncIterator[bytes]:
            for event in reply.events:
                if isinstance(event, Pause):
                    await asyncio.sleep(event.seconds)
                elif isinstance(event, Drop):
                    raise ConnectionAbortedError("scripted drop")
                else:
                    payload = event if isinstance(event, str) else json.dumps(event)
                    yield f"data: {payload}\n\n".encode()

        return StreamingResponse(stream(), media_type=reply.content_type, headers=reply.headers)


def spare_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yield its base URL (``.../v1``)."""
    port = spare_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fake server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
