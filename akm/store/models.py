"""Table definitions of the evidence store (SQLAlchemy 2 declarative).

The Alembic revisions under ``migrations/versions`` create exactly these tables; the lexical
and vector indexes that differ per backend are added by ``akm.store.dialects``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from akm.store.dialects import EmbeddingVector


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        list[Any]: JSON,
        datetime: DateTime(timezone=True),
    }


class Source(Base):
    """One canonical source (file or corpus document), stable across its versions."""

    __tablename__ = "sources"

    source_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    root_alias: Mapped[str] = mapped_column(String(128), index=True)
    path: Mapped[str] = mapped_column(String(1024))
    canonical_uri: Mapped[str] = mapped_column(String(1024))
    source_type: Mapped[str] = mapped_column(String(32))
    classification: Mapped[str] = mapped_column(String(32))
    source_ref_id: Mapped[str] = mapped_column(String(256))
    title: Mapped[str | None] = mapped_column(Text)
    external_id: Mapped[str | None] = mapped_column(String(256), index=True)
    current_version_id: Mapped[int | None] = mapped_column(Integer)
    first_seen_at: Mapped[datetime]
    deleted_at: Mapped[datetime | None]


class SourceVersion(Base):
    """One observation of a source's content; earlier versions stay for lineage.

    Content seen again after a change (a revert) is a new version with its own observation
    time and a revision label told apart from the earlier one, so the A→B→A timeline is kept
    and rows read at either A stay distinct evidence.
    """

    __tablename__ = "source_versions"
    __table_args__ = (Index("ix_source_versions_source_sha256", "source_id", "sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source_id: Mapped[str] = mapped_column(ForeignKey("sources.source_id"), index=True)
    revision: Mapped[str] = mapped_column(String(128))
    sha256: Mapped[str] = mapped_column(String(64))
    path: Mapped[str] = mapped_column(String(1024))
    byte_size: Mapped[int] = mapped_column(Integer)
    observed_at: Mapped[datetime]
    is_current: Mapped[bool] = mapped_column(Boolean, index=True)
    # How an extracted format (PDF, HTML, DOCX) was laid out as lines when this version was cut
    # (akm.ingest.formats.LAYOUT_VERSIONS); None for Markdown and text, read as they are.
    layout: Mapped[str | None] = mapped_column(String(32), nullable=True)


class Chunk(Base):
    """A located passage of one source version."""

    __tablename__ = "chunks"
    __table_args__ = (
        UniqueConstraint("source_version_id", "ordinal", name="uq_chunks_version_ordinal"),
        Index("ix_chunks_source_current", "source_id", "is_current"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source_version_id: Mapped[int] = mapped_column(ForeignKey("source_versions.id"), index=True)
    source_id: Mapped[str] = mapped_column(ForeignKey("sources.source_id"))
    ordinal: Mapped[int] = mapped_column(Integer)
    locator_type: Mapped[str] = mapped_column(String(32))
    locator_value: Mapped[str] = mapped_column(Text)
    heading_path: Mapped[list[Any]]
    heading_text: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int | None] = mapped_column(Integer)
    end_line: Mapped[int | None] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    excerpt_sha256: Mapped[str] = mapped_column(String(64), index=True)
    is_current: Mapped[bool] = mapped_column(Boolean)
    embedding: Mapped[NDArray[np.float32] | None] = mapped_column(EmbeddingVector())


class Link(Base):
    """A relationship-graph edge: a markdown link or wikilink from a chunk to a target."""

    __tablename__ = "links"
    __table_args__ = (Index("ix_links_target_source", "target_source_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source_version_id: Mapped[int] = mapped_column(ForeignKey("source_versions.id"), index=True)
    from_source_id: Mapped[str] = mapped_column(ForeignKey("sources.source_id"), index=True)
    from_chunk_id: Mapped[int | None] = mapped_column(ForeignKey("chunks.id"))
    link_type: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(Text)
    target_source_id: Mapped[str | None] = mapped_column(String(512))
    anchor: Mapped[str | None] = mapped_column(Text)
    is_current: Mapped[bool] = mapped_column(Boolean)


class EvidenceRowRecord(Base):
    """An EvidenceRow as its JSON document plus the columns audits filter on."""

    __tablename__ = "evidence_rows"
    __table_args__ = (Index("ix_evidence_rows_source_checksum", "source_id", "source_checksum"),)

    evidence_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(512), index=True)
    source_revision: Mapped[str | None] = mapped_column(String(128))
    # The checksum of the source version the row was read at: rows whose checksum is not the
    # source's current one are waiting for re-verification.
    source_checksum: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(32), index=True)
    lane: Mapped[str | None] = mapped_column(String(32))
    row_json: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class VerificationEvent(Base):
    """Append-only history of verification state changes."""

    __tablename__ = "verification_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    evidence_id: Mapped[str] = mapped_column(String(256), index=True)
    from_state: Mapped[str | None] = mapped_column(String(32))
    to_state: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str] = mapped_column(String(128))
    reason: Mapped[str] = mapped_column(Text)
    packet_id: Mapped[str | None] = mapped_column(String(256), index=True)
    detail: Mapped[dict[str, Any]]
    at: Mapped[datetime] = mapped_column(index=True)


class LaneRun(Base):
    __tablename__ = "lane_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    result_set_id: Mapped[str] = mapped_column(String(256), index=True)
    packet_id: Mapped[str | None] = mapped_column(String(256), index=True)
    lane: Mapped[str] = mapped_column(String(32))
    query: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(32))
    parameters: Mapped[dict[str, Any]]
    candidate_count: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[float | None]
    skip_reason: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime]


class RejectedCandidate(Base):
    """A candidate dropped at some stage, with the reason (never the content of a denied source)."""

    __tablename__ = "rejected_candidates"
    __table_args__ = (Index("ix_rejected_reason_at", "reason", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    stage: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(128))
    query: Mapped[str | None] = mapped_column(Text)
    result_set_id: Mapped[str | None] = mapped_column(String(256), index=True)
    packet_id: Mapped[str | None] = mapped_column(String(256), index=True)
    source_id: Mapped[str | None] = mapped_column(String(512), index=True)
    evidence_id: Mapped[str | None] = mapped_column(String(256))
    detail: Mapped[dict[str, Any]]
    at: Mapped[datetime] = mapped_column(index=True)


class PacketRecord(Base):
    __tablename__ = "packets"

    packet_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    task_id: Mapped[str] = mapped_column(String(256), index=True)
    query: Mapped[str] = mapped_column(Text)
    verdict: Mapped[str] = mapped_column(String(32), index=True)
    manifest_id: Mapped[str | None] = mapped_column(String(256))
    manifest_checksum: Mapped[str | None] = mapped_column(String(64))
    packet_json: Mapped[dict[str, Any]]
    generated_at: Mapped[datetime] = mapped_column(index=True)


class ClaimRecord(Base):
    __tablename__ = "claims"
    __table_args__ = (UniqueConstraint("packet_id", "claim_id", name="uq_claims_packet_claim"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    packet_id: Mapped[str] = mapped_column(ForeignKey("packets.packet_id"), index=True)
    claim_id: Mapped[str] = mapped_column(String(256))
    claim_text: Mapped[str] = mapped_column(Text)
    claim_class: Mapped[str] = mapped_column(String(32))
    importance: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    claim_json: Mapped[dict[str, Any]]


class ClaimSupport(Base):
    """Which evidence row a claim relies on, and the verifier's judgement of it."""

    __tablename__ = "claim_support"
    __table_args__ = (
        UniqueConstraint("packet_id", "claim_id", "evidence_id", name="uq_claim_support"),
        Index("ix_claim_support_evidence", "evidence_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    packet_id: Mapped[str] = mapped_column(ForeignKey("packets.packet_id"))
    claim_id: Mapped[str] = mapped_column(String(256))
    evidence_id: Mapped[str] = mapped_column(String(256))
    label: Mapped[str | None] = mapped_column(String(32))
    note: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict[str, Any]]


class DecodeStatsRecord(Base):
    __tablename__ = "decode_stats"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    packet_id: Mapped[str] = mapped_column(ForeignKey("packets.packet_id"), index=True)
    stats_json: Mapped[dict[str, Any]]
    at: Mapped[datetime]


class CorpusFile(Base):
    """The JSONL(.gz) file a corpus root was ingested from, so a direct read can open it again.

    One per root alias; ingesting the corpus again from another file moves the root there.
    """

    __tablename__ = "corpus_files"

    root_alias: Mapped[str] = mapped_column(String(128), primary_key=True)
    path: Mapped[str] = mapped_column(Text)
    registered_at: Mapped[datetime]


class ApiKeyRecord(Base):
    """An API key of the REST API: its scopes and lifetime, and the SHA-256 of its secret (never the secret)."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str | None] = mapped_column(String(128))
    scopes: Mapped[list[Any]]
    secret_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]


class StoreMeta(Base):
    """Small key/value counters, e.g. the chunk generation that invalidates vector caches."""

    __tablename__ = "store_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[int] = mapped_column(Integer)
