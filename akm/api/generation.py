"""Running answer generations for HTTP requests: slots, worker threads, cancellation, SSE.

The answer service is synchronous (it holds a model), so each generation runs in a worker
thread. A :class:`GenerationGate` bounds how many run at once per worker process; a request
that finds every slot busy waits up to ``wait_s`` and then gets 429. The slot is released
only when the worker thread has finished, so a disconnected client cannot let more
generations run than configured.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
from starlette.requests import Request

from akm.api.metrics import ServiceMetrics
from akm.api.problems import problem_body
from akm.service.answers import AnswerEvent, AnswerRequest, AnswerService, CancelSignal
from akm.service.errors import GenerationBusyError, GenerationCancelledError, ServiceError

_POLL_S = 0.02
# A comment line this often while nothing else is sent keeps proxies from closing the stream.
KEEPALIVE_S = 15.0
KEEPALIVE = b": keep-alive\n\n"
_DISCONNECT_POLL_S = 0.1


class GenerationGate:
    """At most ``limit`` generations at once; waiting is bounded by ``wait_s``."""

    def __init__(self, limit: int, wait_s: float) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self._slots = threading.BoundedSemaphore(limit)

    async def acquire(self) -> None:
        # Polling keeps the gate independent of any one event loop and safe to cancel.
        deadline = time.monotonic() + self.wait_s
        while not self._slots.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise GenerationBusyError(self.limit, self.wait_s)
            await anyio.sleep(_POLL_S)

    def release(self) -> None:
        self._slots.release()


async def _watch_disconnect(request: Request, cancel: CancelSignal) -> None:
    while not cancel.is_set():
        if await request.is_disconnected():
            cancel.set()
            return
        await anyio.sleep(_DISCONNECT_POLL_S)


async def run_answer(
    request: Request,
    service: AnswerService,
    answer_request: AnswerRequest,
    gate: GenerationGate,
    metrics: ServiceMetrics,
) -> dict[str, Any]:
    """The whole answer object; generation stops if the client disconnects first."""
    await gate.acquire()
    cancel = CancelSignal()
    metrics.in_progress_generations.inc()
    watcher = asyncio.get_running_loop().create_task(_watch_disconnect(request, cancel))
    try:
        result = await anyio.to_thread.run_sync(service.answer, answer_request, cancel)
    finally:
        cancel.set()
        watcher.cancel()
        metrics.in_progress_generations.dec()
        gate.release()
    metrics.observe_answer(result)
    return result


_END = object()


class _Producer:
    """Runs one event stream in a thread and hands its items to the event loop."""

    def __init__(
        self,
        events: Callable[[], Iterator[AnswerEvent]],
        cancel: CancelSignal,
        on_done: Callable[[], None],
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.events = events
        self.cancel = cancel
        self.on_done = on_done
        self.thread = threading.Thread(target=self._run, name="akm-generation", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _put(self, item: object) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:
            # The loop is closed: nobody is listening any more.
            self.cancel.set()

    def _run(self) -> None:
        iterator: Iterator[AnswerEvent] | None = None
        try:
            iterator = self.events()
            for event in iterator:
                if self.cancel.is_set():
                    break
                self._put(event)
        except BaseException as error:  # handed to the loop, which raises or reports it
            self._put(error)
        finally:
            if iterator is not None and hasattr(iterator, "close"):
                iterator.close()
            self.on_done()
            self._put(_END)

    async def next(self) -> object:
        return await self.queue.get()


def format_event(event: AnswerEvent, sequence: int) -> bytes:
    data = dict(event.data)
    if event.kind == "draft":
        # Drafts are shown while decoding; no claim in them has been checked yet.
        data.setdefault("unverified", True)
    return f"id: {sequence}\nevent: {event.kind}\ndata: {json.dumps(data)}\n\n".encode()


def stream_problem(error: BaseException, request_id: str | None) -> dict[str, Any]:
    """The problem body of a failure after a stream began (its headers are long sent)."""
    from akm.api.problems import INTERNAL, MODEL_UNAVAILABLE, STORE_UNAVAILABLE
    from akm.service.errors import ModelUnavailableError, StoreUnavailableError

    problem_type = (
        MODEL_UNAVAILABLE
        if isinstance(error, ModelUnavailableError)
        else STORE_UNAVAILABLE
        if isinstance(error, StoreUnavailableError)
        else INTERNAL
    )
    detail = str(error) if isinstance(error, ServiceError) else "generation failed"
    return problem_body(problem_type, detail, request_id=request_id)


def format_error(error: BaseException, request_id: str | None) -> bytes:
    return f"event: error\ndata: {json.dumps(stream_problem(error, request_id))}\n\n".encode()


class EventStream:
    """The events of one streamed answer as they come from its worker thread.

    ``events()`` yields each :class:`AnswerEvent`, and ``None`` whenever nothing arrived for
    ``KEEPALIVE_S`` seconds (a cue to send a keep-alive); an error raised by the answer service
    is raised from it. ``cancel`` stops the generation; a consumer sets it when it stops reading.
    """

    def __init__(self, producer: _Producer, first: object, cancel: CancelSignal) -> None:
        self._producer = producer
        self._first = first
        self.cancel = cancel

    async def events(self) -> AsyncIterator[AnswerEvent | None]:
        item = self._first
        while item is not _END:
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, AnswerEvent)
            yield item
            while True:
                try:
                    item = await asyncio.wait_for(self._producer.next(), timeout=KEEPALIVE_S)
                    break
                except TimeoutError:
                    yield None


async def open_event_stream(
    service: AnswerService,
    answer_request: AnswerRequest,
    gate: GenerationGate,
    metrics: ServiceMetrics,
) -> EventStream:
    """Start generating in a worker thread and wait for the first event, so failures before any
    output raise here (and become ordinary problem responses); the slot is released when the
    thread has finished."""
    cancel = CancelSignal()
    released = threading.Event()

    def done() -> None:
        if not released.is_set():
            released.set()
            metrics.in_progress_generations.dec()
            gate.release()

    await gate.acquire()
    metrics.in_progress_generations.inc()
    try:
        producer = _Producer(lambda: service.stream(answer_request, cancel), cancel, done)
        producer.start()
    except BaseException:
        done()
        raise
    try:
        first = await producer.next()
    except BaseException:
        cancel.set()
        raise
    if isinstance(first, BaseException):
        raise first
    return EventStream(producer, first, cancel)


async def open_answer_stream(
    request: Request,
    service: AnswerService,
    answer_request: AnswerRequest,
    gate: GenerationGate,
    metrics: ServiceMetrics,
) -> AsyncIterator[bytes]:
    """The SSE byte stream of one answer (see :func:`open_event_stream` for what raises here)."""
    stream = await open_event_stream(service, answer_request, gate, metrics)
    return _sse(stream, metrics, getattr(request.state, "request_id", None))


async def _sse(stream: EventStream, metrics: ServiceMetrics, request_id: str | None) -> AsyncIterator[bytes]:
    sequence = 0
    try:
        async for event in stream.events():
            if event is None:
                yield KEEPALIVE
                continue
            sequence += 1
            if event.kind == "verdict":
                metrics.observe_answer(event.data)
            yield format_event(event, sequence)
    except GenerationCancelledError:
        return
    except Exception as error:  # the answer service failed after the stream began
        yield format_error(error, request_id)
    finally:
        # Reached on normal end, on error and when the server cancels us because the client left.
        stream.cancel.set()
