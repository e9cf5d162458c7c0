"""The answer service as the API sees it: one grounded answer, whole or as a stream of events.

``AnswerService`` is the seam between HTTP and the answer orchestration: the API calls it from
a worker thread with a :class:`CancelSignal` that it sets when the client goes away; an
implementation checks the signal between decoding steps, stops, and stores nothing for a
cancelled request. Streams yield ``draft`` events (text increments that no check has looked
at yet), then one ``claim`` event per verified claim, then exactly one ``verdict`` event whose
data is the complete answer object (the same object as ``akm ask --json``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

AnswerEventKind = Literal["draft", "claim", "verdict"]


class CancelSignal:
    """Set once by the caller when the answer is no longer wanted."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class AnswerRequest:
    question: str
    options: Mapping[str, Any] = field(default_factory=dict)
    # Who asked, recorded as ``by`` of what the answer stores (an API key's ``key:<id>``);
    # None: the pipeline's own actor names.
    actor: str | None = None


@dataclass(frozen=True)
class AnswerEvent:
    kind: AnswerEventKind
    data: dict[str, Any]


@dataclass(frozen=True)
class ModelReadiness:
    loaded: bool
    detail: str


class AnswerService(Protocol):
    def answer(self, request: AnswerRequest, cancel: CancelSignal) -> dict[str, Any]:
        """The complete answer object; raises ModelUnavailableError, GenerationCancelledError."""
        ...

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        """Draft increments, claim verdicts, then the final verdict event."""
        ...

    def load(self) -> None:
        """Load the models now (once per process); raises ModelUnavailableError."""
        ...

    def readiness(self) -> ModelReadiness: ...


class ReverifyService(Protocol):
    def reverify(self, source_id: str | None, actor: str | None = None) -> dict[str, Any]:
        """Re-verify one source (or every source): what became stale, which claims and packets changed.

        ``actor`` (an API key's ``key:<id>``) is recorded as ``by`` of what it stores.
        """
        ...


def draft_event(text: str) -> AnswerEvent:
    """The event of one draft text increment (nothing in it has been checked)."""
    return AnswerEvent("draft", {"text": text})


def stream_from_answer(
    service: AnswerService, request: AnswerRequest, cancel: CancelSignal
) -> Iterator[AnswerEvent]:
    """Events for a service that can only answer whole: claims and the verdict, no drafts."""
    result = service.answer(request, cancel)
    for claim in result.get("claims") or []:
        yield AnswerEvent("claim", dict(claim))
    yield AnswerEvent("verdict", result)
