"""Shared fixtures for the whole suite.

- ``sqlite_store``: a fresh ``EvidenceStore`` on a SQLite file in ``tmp_path``, migrated to head.
- ``postgres_url``: (session) URL of a throwaway PostgreSQL 16 + pgvector server started with
  ``pgserver`` in a temporary directory and deleted at the end. It listens on a Unix socket
  only (no TCP port to collide with). When pgserver runs as root it starts the server as the
  unprivileged ``pgserver`` system user, creating that user if needed. Tests using it carry
  ``@pytest.mark.postgres``; it fails (never skips) if pgserver is installed but cannot start.
- ``postgres_store``: a fresh ``EvidenceStore`` in its own new database on that server.
- ``store``: parametrised over both backends (ids ``sqlite`` and ``postgres``).
"""

from __future__ import annotations

import importlib.util
import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from akm.store import EvidenceStore, open_store

_database_numbers = itertools.count(1)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture
def sqlite_store(sqlite_url: str) -> Iterator[EvidenceStore]:
    store = open_store(sqlite_url)
    yield store
    store.close()


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    if importlib.util.find_spec("pgserver") is None:
        pytest.skip("pgserver is not installed (pip install -e '.[dev]')")
    import pgserver

    with tempfile.TemporaryDirectory(prefix="akm-pg-") as parent:
        # pgserver as root chowns this folder to its own user, which needs to traverse the parent.
        Path(parent).chmod(0o755)
        server = pgserver.get_server(Path(parent) / "pgdata", cleanup_mode="delete")
        try:
            # A throwaway server needs no durability; this keeps database creation and shutdown fast.
            server.psql(
                "ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off; "
                "ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf();"
            )
            yield server.get_uri()
        finally:
            server.cleanup()


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """URL of a new, empty database on the session's PostgreSQL server (dropped afterwards)."""
    import psycopg

    name = f"akm_test_{next(_database_numbers)}"
    with psycopg.connect(postgres_server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    yield postgres_server_url.replace("/postgres?", f"/{name}?", 1)
    with psycopg.connect(postgres_server_url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def postgres_store(postgres_url: str) -> Iterator[EvidenceStore]:
    store = open_store(postgres_url)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest) -> str:
    """A fresh database URL on each backend."""
    if request.param == "sqlite":
        return str(request.getfixturevalue("sqlite_url"))
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def store(store_url: str) -> Iterator[EvidenceStore]:
    """A fresh migrated ``EvidenceStore`` on each backend."""
    opened = open_store(store_url)
    yield opened
    opened.close()
