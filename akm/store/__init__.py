"""The evidence store: SQLAlchemy models, Alembic migrations, and the ``EvidenceStore`` repository."""

from akm.store.repository import (
    EvidenceStore,
    JsonDocument,
    LinkEdge,
    NewChunk,
    NewLink,
    Rejection,
    RejectionRecord,
    SourceState,
    SourceVersionInfo,
    StoredChunk,
    StoreError,
    StoreTransaction,
    VerificationEventRecord,
    open_store,
)

__all__ = [
    "EvidenceStore",
    "JsonDocument",
    "LinkEdge",
    "NewChunk",
    "NewLink",
    "Rejection",
    "RejectionRecord",
    "SourceState",
    "SourceVersionInfo",
    "StoreError",
    "StoreTransaction",
    "StoredChunk",
    "VerificationEventRecord",
    "open_store",
]
