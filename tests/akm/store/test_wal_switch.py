"""The switch to WAL mode waits out a lock held by another connection instead of failing at once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from akm.store import dialects
from akm.store.dialects import enable_wal


class _Cursor:
    def __init__(self, owner: _Connection) -> None:
        self.owner = owner
        self.row: tuple[str] | None = None

    def execute(self, statement: str) -> _Cursor:
        self.owner.statements.append(statement)
        if statement == "PRAGMA journal_mode":
            self.row = (self.owner.mode,)
            return self
        if self.owner.failures:
            self.owner.failures -= 1
            raise sqlite3.OperationalError(self.owner.error)
        self.owner.mode = "wal"
        return self

    def fetchone(self) -> tuple[str] | None:
        return self.row

    def close(self) -> None:
        pass


class _Connection:
    """A DB-API connection whose journal-mode switch fails `failures` times with `error`."""

    def __init__(self, failures: int, error: str = "database is locked", mode: str = "delete") -> None:
        self.failures = failures
        self.error = error
        self.mode = mode
        self.statements: list[str] = []

    def cursor(self) -> _Cursor:
        return _Cursor(self)


def test_a_locked_switch_is_retried_until_it_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr(dialects.time, "sleep", sleeps.append)
    connection = _Connection(failures=3)
    enable_wal(connection)
    assert connection.mode == "wal"
    assert connection.statements.count("PRAGMA journal_mode = WAL") == 4
    assert sleeps == [0.01, 0.02, 0.04]


def test_a_store_already_in_wal_mode_is_not_switched_again() -> None:
    connection = _Connection(failures=0, mode="wal")
    enable_wal(connection)
    assert connection.statements == ["PRAGMA journal_mode"]


def test_other_errors_and_a_lock_held_past_the_timeout_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dialects.time, "sleep", lambda seconds: None)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        enable_wal(_Connection(failures=1, error="disk I/O error"))
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        enable_wal(_Connection(failures=10**6), timeout_s=0.0)


def test_a_real_store_file_ends_in_wal_mode(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "store.sqlite3", isolation_level=None)
    try:
        enable_wal(connection)
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()
