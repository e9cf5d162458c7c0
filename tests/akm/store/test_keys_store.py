"""API keys in the store: created with a random secret, kept only as its SHA-256, checked, revoked."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from sqlalchemy import text

from akm.store import EvidenceStore, StoreError
from akm.store.base import now_utc
from akm.store.keys import parse_api_key, secret_digest


def test_a_new_key_is_stored_as_the_digest_of_its_secret_only(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        created = tx.create_api_key(scopes=["audit", "ask"], name="ci")
    key_id, secret = parse_api_key(created.token) or ("", "")
    assert key_id == created.info.key_id
    assert created.info.scopes == ("ask", "audit")
    with store.engine.connect() as connection:
        rows = [tuple(row) for row in connection.execute(text("SELECT * FROM api_keys"))]
    assert len(rows) == 1
    stored = " ".join(str(value) for value in rows[0])
    assert secret not in stored and created.token not in stored
    assert hashlib.sha256(secret.encode()).hexdigest() in stored
    assert secret_digest(secret) == hashlib.sha256(secret.encode()).hexdigest()


def test_check_tells_valid_invalid_expired_and_revoked_apart(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        good = tx.create_api_key(scopes=["ask"])
        expired = tx.create_api_key(scopes=["ask"], expires_at=now_utc() - timedelta(seconds=1))
        revoked = tx.create_api_key(scopes=["ask"])
    with store.transaction() as tx:
        assert tx.revoke_api_key(revoked.info.key_id) is not None
        assert tx.revoke_api_key("000000000000") is None

    check = store.check_api_key(good.token)
    assert check.outcome == "valid" and check.key is not None and check.key.key_id == good.info.key_id
    assert store.check_api_key(expired.token).outcome == "expired"
    assert store.check_api_key(revoked.token).outcome == "revoked"
    # A wrong secret under a real ID, a malformed token, an unknown ID: all just invalid.
    key_id, secret = parse_api_key(good.token) or ("", "")
    wrong = f"akm_{key_id}_{'A' * 43}"
    assert store.check_api_key(wrong).outcome == "invalid"
    assert store.check_api_key(f"akm_{'f' * 12}_{secret}").outcome == "invalid"
    assert store.check_api_key("not-a-key").outcome == "invalid"
    assert store.check_api_key(good.token + "x").outcome == "invalid"
    # A revoked key with a wrong secret is not told to be revoked.
    revoked_id, _ = parse_api_key(revoked.token) or ("", "")
    assert store.check_api_key(f"akm_{revoked_id}_{'B' * 43}").outcome == "invalid"
    assert store.count_active_api_keys() == 1


def test_revoking_twice_keeps_the_first_time_and_listing_has_no_secret(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        created = tx.create_api_key(scopes=["admin"], name="ops")
    with store.transaction() as tx:
        first = tx.revoke_api_key(created.info.key_id)
    with store.transaction() as tx:
        second = tx.revoke_api_key(created.info.key_id)
    assert first is not None and second is not None and first.revoked_at == second.revoked_at
    (listed,) = store.list_api_keys()
    assert listed.key_id == created.info.key_id and listed.name == "ops"
    assert listed.status() == "revoked"
    assert not hasattr(listed, "secret_sha256") and not hasattr(listed, "token")


def test_touch_records_the_last_use(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        created = tx.create_api_key(scopes=["ask"])
    moment = now_utc()
    with store.transaction() as tx:
        tx.touch_api_key(created.info.key_id, moment)
    info = store.get_api_key(created.info.key_id)
    assert info is not None and info.last_used_at is not None
    assert abs((info.last_used_at - moment).total_seconds()) < 1


def test_admin_grants_every_scope_and_unknown_scopes_are_refused(store: EvidenceStore) -> None:
    with store.transaction() as tx:
        admin = tx.create_api_key(scopes=["admin"])
        asker = tx.create_api_key(scopes=["ask", "ask"])
    assert all(admin.info.allows(scope) for scope in ("ask", "ingest", "audit", "admin"))
    assert asker.info.scopes == ("ask",)
    assert asker.info.allows("ask") and not asker.info.allows("audit")
    assert asker.info.actor == f"key:{asker.info.key_id}"
    with pytest.raises(StoreError, match="unknown scope"), store.transaction() as tx:
        tx.create_api_key(scopes=["read"])
    with pytest.raises(StoreError, match="at least one scope"), store.transaction() as tx:
        tx.create_api_key(scopes=[])
