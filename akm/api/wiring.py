"""What one app instance (one worker process) holds: store, scope, answer and re-verify services."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from akm.service.answers import AnswerService, ReverifyService
from akm.service.errors import StoreUnavailableError
from akm.service.scope import SourceScope
from akm.store import EvidenceStore, open_store


class StoreHandle:
    """The worker's store, opened (and migrated) on first use; failures are StoreUnavailableError."""

    def __init__(self, database_url: str | None = None, *, store: EvidenceStore | None = None) -> None:
        if database_url is None and store is None:
            raise ValueError("StoreHandle needs a database URL or an open store")
        self._url = database_url
        self._store = store
        self._lock = threading.Lock()

    def get(self) -> EvidenceStore:
        if self._store is not None:
            return self._store
        with self._lock:
            if self._store is None:
                assert self._url is not None
                try:
                    self._store = open_store(self._url)
                except (SQLAlchemyError, OSError) as error:
                    raise StoreUnavailableError(str(error)) from error
            return self._store

    def ping(self) -> None:
        try:
            with self.get().engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except SQLAlchemyError as error:
            raise StoreUnavailableError(str(error)) from error

    def close(self) -> None:
        if self._store is not None and self._url is not None:
            self._store.close()


@dataclass
class ApiServices:
    store: StoreHandle
    scope: SourceScope
    answers: AnswerService
    reverify: ReverifyService
