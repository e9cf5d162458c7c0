"""`akm keys create|list|revoke`: the key printed once, listed without its secret, revoked;
`akm serve` refusing a non-loopback bind (or require_api_keys) while no key is active."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from akm.cli import main
from akm.cli.serve import missing_keys_error
from akm.settings import load_settings
from akm.store import open_store
from akm.store.keys import parse_api_key


@pytest.fixture
def database(tmp_path: Path) -> list[str]:
    return ["--data-dir", str(tmp_path), "--database-url", f"sqlite:///{tmp_path / 'keys.sqlite3'}"]


def _create(database: list[str], capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    assert main([*database, "keys", "create", *flags]) == 0
    captured = capsys.readouterr()
    token = captured.out.strip()
    assert parse_api_key(token) is not None, captured
    return token


def test_create_list_revoke(database: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = _create(
        database, capsys, "--scope", "ask", "--scope", "audit", "--name", "ci", "--expires-in", "30"
    )
    key_id = token.split("_")[1]
    assert main([*database, "keys", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["id"] == key_id and listed["name"] == "ci"
    assert listed["scopes"] == ["ask", "audit"] and listed["status"] == "active"
    assert listed["expiresAt"] is not None and listed["revokedAt"] is None and listed["lastUsedAt"] is None

    assert main([*database, "keys", "list"]) == 0
    table = capsys.readouterr().out
    assert key_id in table and "ask,audit" in table and token.split("_", 2)[2] not in table

    assert main([*database, "keys", "revoke", key_id]) == 0
    assert f"revoked key {key_id}" in capsys.readouterr().out
    assert main([*database, "keys", "list", "--json"]) == 0
    (revoked,) = json.loads(capsys.readouterr().out)
    assert revoked["status"] == "revoked" and revoked["revokedAt"] is not None
    assert main([*database, "keys", "revoke", "0123456789ab"]) == 1
    assert "no key with ID" in capsys.readouterr().err

    # At rest: neither the key nor its secret appears anywhere in the database file.
    raw = (tmp_path / "keys.sqlite3").read_bytes()
    assert token.encode() not in raw and token.split("_", 2)[2].encode() not in raw
    with sqlite3.connect(tmp_path / "keys.sqlite3") as connection:
        rows = connection.execute("SELECT * FROM api_keys").fetchall()
    assert len(rows) == 1 and all(token.split("_", 2)[2] not in str(value) for value in rows[0])


def test_create_as_json_and_every_scope(database: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*database, "keys", "create", "--scope", "admin", "--json"]) == 0
    created: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert parse_api_key(created["key"]) is not None
    assert created["scopes"] == ["admin"] and created["expiresAt"] is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["create"], "--scope"),
        (["create", "--scope", "read"], "invalid choice"),
        (["create", "--scope", "ask", "--expires-in", "0"], "--expires-in must be"),
        (["create", "--scope", "ask", "--name", ""], "--name must be"),
        ([], "ACTION"),
    ],
    ids=["no-scope", "unknown-scope", "zero-days", "empty-name", "no-action"],
)
def test_bad_arguments_are_refused(
    database: list[str], capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    try:
        code = main([*database, "keys", *flags])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.fixture
def restored_environment() -> Iterator[None]:
    """``akm serve`` exports its settings to the environment for its workers; undo that."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.usefixtures("restored_environment")
def test_serve_refuses_a_non_loopback_bind_without_an_active_key(
    database: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    started: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    for host in ("0.0.0.0", "::", "192.168.1.10"):
        assert main([*database, "serve", "--host", host]) == 2
        error = capsys.readouterr().err
        assert f"binding {host}, which other machines can reach" in error
        assert "no active key" in error and "akm keys create" in error
    # A revoked key is no key.
    token = _create(database, capsys, "--scope", "ask")
    assert main([*database, "keys", "revoke", token.split("_")[1]]) == 0
    assert main([*database, "serve", "--host", "0.0.0.0"]) == 2
    assert not started
    # Loopback needs no key, unless require_api_keys says so.
    assert main([*database, "serve"]) == 0 and len(started) == 1
    monkeypatch.setenv("AKM_REQUIRE_API_KEYS", "true")
    assert main([*database, "serve"]) == 2
    assert "require_api_keys is set" in capsys.readouterr().err
    _create(database, capsys, "--scope", "ask")
    assert main([*database, "serve", "--host", "0.0.0.0"]) == 0 and len(started) == 2
    assert os.environ["AKM_REQUIRE_API_KEYS"] == "True"


def test_serve_refuses_when_the_store_cannot_be_read(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    settings = load_settings(data_dir=tmp_path, database_url=f"sqlite:///{blocker / 'sub' / 'x.db'}")
    error = missing_keys_error("0.0.0.0", settings)
    assert error is not None and "cannot be read" in error
    assert missing_keys_error("127.0.0.1", settings) is None


def test_an_expired_key_does_not_count(database: list[str], tmp_path: Path) -> None:
    from datetime import timedelta

    from akm.store.base import now_utc

    settings = load_settings(data_dir=tmp_path, database_url=database[3])
    store = open_store(settings.resolved_database_url)
    with store.transaction() as tx:
        tx.create_api_key(scopes=["ask"], expires_at=now_utc() - timedelta(seconds=1))
    store.close()
    assert missing_keys_error("0.0.0.0", settings) is not None
