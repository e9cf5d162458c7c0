"""API keys of the REST API: scopes, lifetime, and the SHA-256 of each secret.

A key is shown to its owner once, as ``akm_<id>_<secret>``: ``<id>`` (12 hex digits) names the
key in listings, logs and the actor of what its requests record; ``<secret>`` is 32 random bytes
(URL-safe base64). Only the SHA-256 of the secret is stored, and a presented secret is compared
with it in constant time, so nothing read from the database can be used as a key.

Scopes: ``ask`` (answers), ``ingest`` (uploads, ingest jobs, re-verification), ``audit`` (reads of
packets, evidence, sources, rejections, metrics; validation) and ``admin``, which grants them all.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import func, select

from akm.store.base import StoreError, StoreReads, TransactionWrites, as_utc, now_utc
from akm.store.models import ApiKeyRecord

SCOPES: tuple[str, ...] = ("ask", "ingest", "audit", "admin")
ADMIN_SCOPE = "admin"
TOKEN_PREFIX = "akm"
_TOKEN = re.compile(r"^akm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
# Compared against when the presented ID is unknown, so a miss costs what a hit costs.
_NO_DIGEST = "0" * 64

KeyCheckOutcome = Literal["valid", "invalid", "expired", "revoked"]


def secret_digest(secret: str) -> str:
    """The stored form of a key's secret: the hex SHA-256 of its text."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def parse_api_key(token: str) -> tuple[str, str] | None:
    """``(key_id, secret)`` of a well-formed ``akm_<id>_<secret>``; ``None`` for anything else."""
    match = _TOKEN.match(token)
    return (match.group(1), match.group(2)) if match else None


def normalised_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The scopes in their canonical order, once each; ``StoreError`` for an unknown or empty set."""
    wanted = set(scopes)
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise StoreError(f"unknown scope(s) {', '.join(unknown)}; use {', '.join(SCOPES)}")
    if not wanted:
        raise StoreError(f"a key needs at least one scope ({', '.join(SCOPES)})")
    return tuple(scope for scope in SCOPES if scope in wanted)


@dataclass(frozen=True)
class ApiKeyInfo:
    """What is known about a key, without its secret or its digest."""

    key_id: str
    name: str | None
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def actor(self) -> str:
        """How the key is named as the actor (``by``) of what its requests record."""
        return f"key:{self.key_id}"

    def allows(self, scope: str) -> bool:
        return scope in self.scopes or ADMIN_SCOPE in self.scopes

    def status(self, at: datetime | None = None) -> Literal["active", "expired", "revoked"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (at or now_utc()):
            return "expired"
        return "active"


@dataclass(frozen=True)
class NewApiKey:
    """A key just created: ``token`` is the only copy of its secret."""

    token: str
    info: ApiKeyInfo


@dataclass(frozen=True)
class ApiKeyCheck:
    """The outcome of presenting a token; ``key`` only when its secret matched."""

    outcome: KeyCheckOutcome
    key: ApiKeyInfo | None = None


def _info(record: ApiKeyRecord) -> ApiKeyInfo:
    return ApiKeyInfo(
        key_id=record.key_id,
        name=record.name,
        scopes=tuple(str(scope) for scope in record.scopes),
        created_at=as_utc(record.created_at) or now_utc(),
        expires_at=as_utc(record.expires_at),
        revoked_at=as_utc(record.revoked_at),
        last_used_at=as_utc(record.last_used_at),
    )


class ApiKeyWrites(TransactionWrites):
    """Creating, revoking and marking the use of API keys."""

    def create_api_key(
        self, *, scopes: Iterable[str], name: str | None = None, expires_at: datetime | None = None
    ) -> NewApiKey:
        """A new key with a fresh random secret; the returned token is never stored."""
        chosen = normalised_scopes(scopes)
        key_id = secrets.token_hex(6)
        secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii").rstrip("=")
        record = ApiKeyRecord(
            key_id=key_id,
            name=name,
            scopes=list(chosen),
            secret_sha256=secret_digest(secret),
            created_at=now_utc(),
            expires_at=expires_at,
            revoked_at=None,
            last_used_at=None,
        )
        self.session.add(record)
        self.session.flush()
        return NewApiKey(token=f"{TOKEN_PREFIX}_{key_id}_{secret}", info=_info(record))

    def revoke_api_key(self, key_id: str, at: datetime | None = None) -> ApiKeyInfo | None:
        """Revoke ``key_id`` (a key revoked before keeps its first revocation time); ``None`` if unknown."""
        record = self.session.get(ApiKeyRecord, key_id)
        if record is None:
            return None
        if record.revoked_at is None:
            record.revoked_at = at or now_utc()
            self.session.flush()
        return _info(record)

    def touch_api_key(self, key_id: str, at: datetime | None = None) -> None:
        record = self.session.get(ApiKeyRecord, key_id)
        if record is not None:
            record.last_used_at = at or now_utc()


class ApiKeyReads(StoreReads):
    """Listing keys and checking a presented token."""

    def list_api_keys(self) -> list[ApiKeyInfo]:
        with self._reading() as session:
            query = select(ApiKeyRecord).order_by(ApiKeyRecord.created_at, ApiKeyRecord.key_id)
            return [_info(record) for record in session.scalars(query)]

    def get_api_key(self, key_id: str) -> ApiKeyInfo | None:
        with self._reading() as session:
            record = session.get(ApiKeyRecord, key_id)
            return _info(record) if record is not None else None

    def count_active_api_keys(self, at: datetime | None = None) -> int:
        moment = at or now_utc()
        query = (
            select(func.count())
            .select_from(ApiKeyRecord)
            .where(ApiKeyRecord.revoked_at.is_(None))
            .where((ApiKeyRecord.expires_at.is_(None)) | (ApiKeyRecord.expires_at > moment))
        )
        with self._reading() as session:
            return int(session.scalar(query) or 0)

    def check_api_key(self, token: str, at: datetime | None = None) -> ApiKeyCheck:
        """Whether ``token`` is a key whose secret matches and that is neither revoked nor expired.

        Revocation and expiry are told only to a caller who holds the secret.
        """
        parsed = parse_api_key(token)
        if parsed is None:
            return ApiKeyCheck("invalid")
        key_id, secret = parsed
        with self._reading() as session:
            record = session.get(ApiKeyRecord, key_id)
            stored = record.secret_sha256 if record is not None else _NO_DIGEST
            matches = hmac.compare_digest(stored, secret_digest(secret))
            if record is None or not matches:
                return ApiKeyCheck("invalid")
            info = _info(record)
        status = info.status(at)
        return ApiKeyCheck("valid" if status == "active" else status, info)
