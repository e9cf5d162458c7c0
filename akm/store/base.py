"""What every part of the store shares: the error type, JSON documents, UTC times, and the two
bases the per-aggregate parts build on (reads over an engine, writes inside one session)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import Engine
from sqlalchemy.orm import Session


class StoreError(RuntimeError):
    """The store cannot do what was asked (unknown id, bad record)."""


@runtime_checkable
class JsonDocument(Protocol):
    def to_json(self) -> Any: ...


def now_utc() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime | None) -> datetime | None:
    """``value`` with UTC attached when the backend returned it naive (SQLite)."""
    if value is None:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def document_of(record: Mapping[str, Any] | JsonDocument) -> dict[str, Any]:
    """The JSON document of a record: ``to_json()`` output (dict or JSON text) or a mapping."""
    if isinstance(record, Mapping):
        return dict(record)
    produced = record.to_json()
    if isinstance(produced, str | bytes):
        produced = json.loads(produced)
    if not isinstance(produced, dict):
        raise StoreError(f"to_json() of {type(record).__name__} did not produce an object")
    return produced


class StoreReads:
    """Base of the read side: one engine, a short-lived session per read."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect_name = engine.dialect.name

    @contextmanager
    def _reading(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session


class TransactionWrites:
    """Base of the write side: every write runs in the caller's one session (one transaction)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        # Set by writes that change which chunks are current; the store then bumps the chunk
        # generation, so the in-memory search caches reload.
        self._chunks_changed = False
