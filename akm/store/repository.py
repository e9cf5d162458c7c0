"""``EvidenceStore``: the one store façade over sources, chunks, evidence, packets and audit records.

Each kind of data has its own module with a read part (a base of ``EvidenceStore``) and a
write part (a base of ``StoreTransaction``):

* ``akm.store.sources``: sources, versions, chunks, links, corpus files
* ``akm.store.search``: literal, lexical and vector search over current chunks
* ``akm.store.evidence``: evidence rows and their verification events
* ``akm.store.packets``: packets, claims, claim support, decode statistics, dependents
* ``akm.store.rejections``: lane runs and rejected candidates
* ``akm.store.audit``: the read-only queries behind the lineage audits
* ``akm.store.keys``: the REST API's keys (scopes, lifetime, digests of their secrets)

Reads are plain methods. Writes go through ``EvidenceStore.transaction()``, which yields a
``StoreTransaction``: one database transaction holding the store's write lock, committed
on success and rolled back on any exception, so an interrupted batch leaves nothing behind.
Evidence rows and packets are stored as their JSON documents (``to_json()`` output or a
plain mapping) plus the columns audits filter on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session

from akm.store import dialects, migrate
from akm.store.audit import AuditReads, ClaimInfo, ClaimSupportRecord, SourceInfo
from akm.store.evidence import EvidenceReads, EvidenceWrites
from akm.store.keys import ApiKeyReads, ApiKeyWrites
from akm.store.packets import PacketReads, PacketWrites, SourceDependent
from akm.store.rejections import RejectionReads, RetrievalRecordWrites
from akm.store.search import ChunkSearch
from akm.store.sources import SourceWrites


class StoreTransaction(SourceWrites, EvidenceWrites, PacketWrites, RetrievalRecordWrites, ApiKeyWrites):
    """Writes inside one transaction that holds the store's write lock."""


class EvidenceStore(ChunkSearch, EvidenceReads, PacketReads, RejectionReads, AuditReads, ApiKeyReads):
    """Repository over one database (SQLite file or PostgreSQL)."""

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        """One write transaction under the store's write lock; rolled back on any exception."""
        with Session(self.engine, expire_on_commit=False) as session:
            session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})
            dialects.acquire_write_lock(session.connection())
            tx = StoreTransaction(session)
            try:
                yield tx
                if tx._chunks_changed:
                    tx.bump_chunk_generation()
                session.commit()
            except BaseException:
                session.rollback()
                raise


def normalise_database_url(database_url: str) -> str:
    """Use the psycopg 3 driver for plain ``postgresql://`` URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    return database_url


def create_store_engine(database_url: str) -> Engine:
    url = normalise_database_url(database_url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        dialects.configure_sqlite_engine(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


def open_store(database_url: str, *, migrate_to_head: bool = True) -> EvidenceStore:
    """Open (creating if needed) the store at ``database_url``, migrated to the head revision."""
    if database_url.startswith("sqlite:///") and not database_url.startswith("sqlite:///:memory:"):
        Path(database_url[len("sqlite:///") :]).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_store_engine(database_url)
    if migrate_to_head:
        migrate.upgrade(engine)
    return EvidenceStore(engine)


__all__ = [
    "ClaimInfo",
    "ClaimSupportRecord",
    "EvidenceStore",
    "SourceDependent",
    "SourceInfo",
    "StoreTransaction",
    "create_store_engine",
    "normalise_database_url",
    "open_store",
]
