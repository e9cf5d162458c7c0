"""The evidence store: SQLAlchemy models, Alembic migrations, and the ``EvidenceStore`` façade.

The façade and its transaction are composed in ``akm.store.repository`` from one module per
kind of data (sources and chunks, search, evidence, packets, rejections, audit queries, API keys).
"""

from akm.store.audit import ClaimInfo, ClaimSupportRecord, SourceInfo
from akm.store.base import JsonDocument, StoreError
from akm.store.evidence import VerificationEventRecord
from akm.store.keys import SCOPES, ApiKeyCheck, ApiKeyInfo, NewApiKey
from akm.store.packets import SourceDependent
from akm.store.rejections import Rejection, RejectionRecord
from akm.store.repository import EvidenceStore, StoreTransaction, open_store
from akm.store.sources import LinkEdge, NewChunk, NewLink, SourceState, SourceVersionInfo, StoredChunk

__all__ = [
    "SCOPES",
    "ApiKeyCheck",
    "ApiKeyInfo",
    "ClaimInfo",
    "ClaimSupportRecord",
    "EvidenceStore",
    "JsonDocument",
    "LinkEdge",
    "NewApiKey",
    "NewChunk",
    "NewLink",
    "Rejection",
    "RejectionRecord",
    "SourceDependent",
    "SourceInfo",
    "SourceState",
    "SourceVersionInfo",
    "StoreError",
    "StoreTransaction",
    "StoredChunk",
    "VerificationEventRecord",
    "open_store",
]
