"""Shared fixtures for the whole suite.

- ``sqlite_url`` / ``postgres_url`` / ``store_url``: a new, EMPTY database (for migration tests
  and for code that migrates on open).
- ``migrated_sqlite_url``: the same SQLite path holding a copy of the session's migrated template
  (Alembic runs once per session, not once per test).
- ``sqlite_store``: a fresh ``EvidenceStore`` on that copy.
- ``postgres_url``: (session) URL of a throwaway PostgreSQL 16 + pgvector server started with
  ``pgserver`` in a temporary directory and deleted at the end. It listens on a Unix socket
  only (no TCP port to collide with). When pgserver runs as root it starts the server as the
  unprivileged ``pgserver`` system user, creating that user if needed. Tests using it carry
  ``@pytest.mark.postgres``; it fails (never skips) if pgserver is installed but cannot start.
- ``postgres_store``: a fresh ``EvidenceStore`` in its own new database on that server, created
  from a template database migrated once per session.
- ``store``: parametrised over both backends (ids ``sqlite`` and ``postgres``), migrated the same way.
"""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from akm.store import EvidenceStore, open_store

pytest_plugins = ["tests.plugins.corpus"]

_database_numbers = itertools.count(1)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.sqlite3'}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store migrated to head once per session; tests get copies of it."""
    path = tmp_path_factory.mktemp("template") / "store.sqlite3"
    open_store(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def migrated_sqlite_url(sqlite_url: str, sqlite_template: Path) -> str:
    """``sqlite_url`` holding a copy of the migrated template."""
    shutil.copyfile(sqlite_template, sqlite_url.removeprefix("sqlite:///"))
    return sqlite_url


@pytest.fixture
def sqlite_store(migrated_sqlite_url: str) -> Iterator[EvidenceStore]:
    store = open_store(migrated_sqlite_url)
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


def _database_url(server_url: str, name: str) -> str:
    return server_url.replace("/postgres?", f"/{name}?", 1)


def _new_database(server_url: str, template: str | None = None) -> Iterator[str]:
    """A new database on the server (a copy of ``template`` when given), dropped afterwards."""
    import psycopg

    name = f"akm_test_{next(_database_numbers)}"
    copy = f" TEMPLATE {template}" if template else ""
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}{copy}")
    yield _database_url(server_url, name)
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres_template(postgres_server_url: str) -> str:
    """Name of a database migrated to head once per session; ``CREATE DATABASE ... TEMPLATE`` copies it."""
    import psycopg

    name = "akm_template"
    with psycopg.connect(postgres_server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    # Closed (engine disposed) before any copy: a template must have no open connections.
    open_store(_database_url(postgres_server_url, name)).close()
    return name


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """URL of a new, empty database on the session's PostgreSQL server (dropped afterwards)."""
    yield from _new_database(postgres_server_url)


@pytest.fixture
def migrated_postgres_url(postgres_server_url: str, postgres_template: str) -> Iterator[str]:
    """URL of a new database copied from the migrated template (dropped afterwards)."""
    yield from _new_database(postgres_server_url, postgres_template)


@pytest.fixture
def postgres_store(migrated_postgres_url: str) -> Iterator[EvidenceStore]:
    store = open_store(migrated_postgres_url)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest) -> str:
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        return str(request.getfixturevalue("sqlite_url"))
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def migrated_store_url(request: pytest.FixtureRequest) -> str:
    """A fresh database URL on each backend, copied from that backend's migrated template."""
    if request.param == "sqlite":
        return str(request.getfixturevalue("migrated_sqlite_url"))
    return str(request.getfixturevalue("migrated_postgres_url"))


@pytest.fixture
def store(migrated_store_url: str) -> Iterator[EvidenceStore]:
    """A fresh migrated ``EvidenceStore`` on each backend."""
    opened = open_store(migrated_store_url)
    yield opened
    opened.close()
