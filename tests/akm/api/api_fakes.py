"""In-memory stand-ins behind the API's service interface, and a seeded evidence store."""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from akm.api import ApiLimits, ApiServices, StoreHandle, create_app
from akm.config import DEFAULT_MANIFEST_FILE
from akm.manifest import Manifest, load_manifest
from akm.service.answers import AnswerEvent, AnswerRequest, CancelSignal, ModelReadiness
from akm.service.errors import GenerationCancelledError, ModelUnavailableError
from akm.service.scope import SourceScope
from akm.settings import Settings, load_settings
from akm.store import EvidenceStore, NewChunk, Rejection

REPO = Path(__file__).resolve().parents[3]
EXAMPLE_PACKET = json.loads((REPO / "examples" / "packet-pass.json").read_text())
EXAMPLE_ROW = json.loads((REPO / "examples" / "claim-supported-row.json").read_text())

GUIDE = "akm:docs:guide.md"
HIDDEN_BY_EXCLUDE = "akm:docs:private-plan.md"
HIDDEN_BY_CLASSIFICATION = "akm:docs:restricted.md"
HIDDEN_BY_TOKEN = "akm:docs:notes/secret-keys.md"
DRAFT_WORDS = ("Secret ", "values ", "must ", "never ", "be ", "stored ", "[E1].")

_numbers = itertools.count(1)


def unique_packet_id(seed: str) -> str:
    return "pk:sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def packet_with_rows_from(source_id: str, packet_id: str, revision: str = "r1") -> dict[str, Any]:
    """The example PASS packet, re-pointed so every row comes from ``source_id`` at ``revision``."""
    packet = copy.deepcopy(EXAMPLE_PACKET)
    packet["packetId"] = packet_id
    for row in packet["evidenceRows"]:
        row["source"]["sourceId"] = source_id
        row["source"]["version"]["revision"] = revision
    return packet


def answer_object(packet: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "answer": text,
        "claims": [
            {
                "claimId": claim["claimId"],
                "text": claim["claimText"],
                "status": claim["status"],
                "citations": [],
            }
            for claim in packet["claims"]
        ],
        "verdict": {"verdict": "PASS", "reasons": list(packet["verification"]["verdictReasons"])},
        "packetId": packet["packetId"],
        "packet": packet,
        "decode": {
            "new_tokens": len(DRAFT_WORDS),
            "tokens_per_s": 120.0,
            "draft_steps": 2,
            "mean_accepted_length": 2.5,
            "proposed_by_position": [2, 2, 1],
            "accepted_by_position": [2, 2, 1],
            "acceptance_by_position": [1.0, 1.0, 1.0],
        },
    }


class FakeAnswerService:
    """Drafts a fixed text word by word, then stores a packet in one transaction (unless cancelled)."""

    def __init__(
        self,
        store: EvidenceStore,
        *,
        word_delay_s: float = 0.0,
        fail_with: Exception | None = None,
        block: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.word_delay_s = word_delay_s
        self.fail_with = fail_with
        self.block = block
        self.words_drafted = 0
        self.cancelled = 0
        self.stored: list[str] = []
        self.running = 0
        self.max_running = 0
        self._lock = threading.Lock()

    def load(self) -> None:
        if isinstance(self.fail_with, ModelUnavailableError):
            raise self.fail_with

    def readiness(self) -> ModelReadiness:
        if self.fail_with is not None:
            return ModelReadiness(False, f"failed: {self.fail_with}")
        return ModelReadiness(True, "loaded")

    def stream(self, request: AnswerRequest, cancel: CancelSignal) -> Iterator[AnswerEvent]:
        if self.fail_with is not None:
            raise self.fail_with
        with self._lock:
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            if self.block is not None:
                self.block.wait(10)
            for word in DRAFT_WORDS:
                if cancel.is_set():
                    with self._lock:
                        self.cancelled += 1
                    raise GenerationCancelledError("cancelled")
                time.sleep(self.word_delay_s)
                with self._lock:
                    self.words_drafted += 1
                yield AnswerEvent("draft", {"text": word})
            if cancel.is_set():
                with self._lock:
                    self.cancelled += 1
                raise GenerationCancelledError("cancelled")
            packet_id = unique_packet_id(f"{request.question}:{next(_numbers)}:{time.time_ns()}")
            packet = packet_with_rows_from(GUIDE, packet_id)
            with self.store.transaction() as tx:
                tx.save_rows(packet["evidenceRows"])
                tx.save_packet(packet)
                tx.record_rejections([Rejection(stage="fusion", reason="duplicate", packet_id=packet_id)])
            with self._lock:
                self.stored.append(packet_id)
            result = answer_object(packet, "".join(DRAFT_WORDS))
            for claim in result["claims"]:
                yield AnswerEvent("claim", claim)
            yield AnswerEvent("verdict", result)
        except GeneratorExit:
            # Closed by the consumer before the end: the same as a cancellation.
            with self._lock:
                self.cancelled += 1
            raise
        finally:
            with self._lock:
                self.running -= 1

    def answer(self, request: AnswerRequest, cancel: CancelSignal) -> dict[str, Any]:
        final: dict[str, Any] = {}
        for event in self.stream(request, cancel):
            if event.kind == "verdict":
                final = event.data
        return final


class FakeReverifyService:
    def __init__(self) -> None:
        self.calls: list[str | None] = []
        self.actors: list[str | None] = []

    def reverify(self, source_id: str | None, actor: str | None = None) -> dict[str, Any]:
        self.calls.append(source_id)
        self.actors.append(actor)
        return {"sources": [source_id] if source_id else ["all"], "stale": [], "changedPackets": []}


def _add_source(
    store: EvidenceStore, source_id: str, path: str, classification: str, versions: list[str]
) -> None:
    with store.transaction() as tx:
        tx.upsert_source(
            source_id=source_id,
            root_alias="docs",
            path=path,
            canonical_uri=f"file:docs/{path}",
            source_type="markdown",
            classification=classification,
            source_ref_id="akm-evidence:docs:public-markdown",
            title=path,
        )
    for number, text in enumerate(versions, start=1):
        sha = hashlib.sha256(text.encode()).hexdigest()
        with store.transaction() as tx:
            tx.add_source_version(
                source_id=source_id,
                revision=f"r{number}",
                sha256=sha,
                path=path,
                byte_size=len(text),
                chunks=[NewChunk(0, "heading", "# Guide", text, sha)],
            )


def seed_store(store: EvidenceStore) -> dict[str, str]:
    """Sources (one visible with two revisions, three out of scope), packets, events, rejections."""
    _add_source(store, GUIDE, "guide.md", "public", ["first text", "second text"])
    _add_source(store, HIDDEN_BY_EXCLUDE, "private-plan.md", "public", ["plan"])
    _add_source(store, HIDDEN_BY_CLASSIFICATION, "restricted.md", "restricted", ["restricted"])
    _add_source(store, HIDDEN_BY_TOKEN, "notes/secret-keys.md", "public", ["keys"])
    old_packet = packet_with_rows_from(GUIDE, unique_packet_id("old"), revision="r1")
    hidden_packet = packet_with_rows_from(HIDDEN_BY_EXCLUDE, unique_packet_id("hidden"), revision="r1")
    for row in hidden_packet["evidenceRows"]:
        row["evidenceId"] = "ev:sha256:" + hashlib.sha256(row["evidenceId"].encode()).hexdigest()
    for claim in hidden_packet["claims"]:
        claim["claimId"] = claim["claimId"] + "-hidden"
        claim["supportRowIds"] = [
            "ev:sha256:" + hashlib.sha256(ev.encode()).hexdigest() for ev in claim["supportRowIds"]
        ]
    first_row = old_packet["evidenceRows"][0]["evidenceId"]
    with store.transaction() as tx:
        for packet in (old_packet, hidden_packet):
            tx.save_rows(packet["evidenceRows"])
            tx.save_packet(packet)
        for from_state, to_state, actor in (
            (None, "candidate", "exact-lane"),
            ("candidate", "direct-read", "akm.direct_read"),
            ("direct-read", "claim-supported", "akm.answer"),
        ):
            tx.record_verification_event(
                evidence_id=first_row,
                from_state=from_state,
                to_state=to_state,
                actor=actor,
                reason=f"to {to_state}",
                packet_id=old_packet["packetId"],
            )
    rejections = [
        Rejection(stage="fusion", reason="duplicate", source_id=GUIDE, packet_id=old_packet["packetId"]),
        Rejection(stage="fusion", reason="per-source-cap", source_id=GUIDE),
        Rejection(stage="direct-read", reason="stale", source_id=GUIDE),
        Rejection(
            stage="fusion",
            reason="duplicate",
            source_id=HIDDEN_BY_EXCLUDE,
            detail={"path": "private-plan.md"},
        ),
    ]
    with store.transaction() as tx:
        tx.record_rejections(rejections)
    return {
        "packet": old_packet["packetId"],
        "hidden_packet": hidden_packet["packetId"],
        "row": first_row,
        "hidden_row": hidden_packet["evidenceRows"][0]["evidenceId"],
        "claim": old_packet["claims"][0]["claimId"],
        "hidden_claim": hidden_packet["claims"][0]["claimId"],
    }


@functools.cache
def default_manifest() -> Manifest:
    return load_manifest(DEFAULT_MANIFEST_FILE)


def build_app(
    store: EvidenceStore,
    answers: FakeAnswerService,
    reverify: FakeReverifyService | None = None,
    *,
    settings: Settings | None = None,
    limits: ApiLimits | None = None,
) -> FastAPI:
    services = ApiServices(
        store=StoreHandle(store=store),
        scope=SourceScope(default_manifest()),
        answers=answers,
        reverify=reverify or FakeReverifyService(),
    )
    return create_app(settings or load_settings(), services, limits=limits or ApiLimits())


PROBLEM = "application/problem+json"


@dataclass
class ApiHarness:
    app: FastAPI
    client: TestClient
    store: EvidenceStore
    answers: FakeAnswerService
    reverify: FakeReverifyService
    ids: dict[str, str]


def assert_problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    """The response is an RFC 9457 problem of ``slug`` carrying the request's ID."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["type"] == f"urn:akm:problem:{slug}"
    assert body["status"] == status
    assert body["requestId"] == response.headers["x-request-id"]
    return body
