"""Evidence store: sources, versions, chunks with lexical and vector indexes, links,
evidence rows, verification events, lane runs, rejected candidates, packets, claims,
claim support, decode stats.

Revision ID: 0001_evidence_store
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from akm.store.dialects import EmbeddingVector, create_extensions, create_search_indexes, drop_search_indexes

revision: str = "0001_evidence_store"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    create_extensions(op.get_bind())
    op.create_table(
        "sources",
        sa.Column("source_id", sa.String(512), primary_key=True),
        sa.Column("root_alias", sa.String(128), nullable=False, index=True),
        sa.Column("path", sa.String(1024), nullable=False),
        sa.Column("canonical_uri", sa.String(1024), nullable=False),
        sa.Column("source_type", sa.String(32), nullable=False),
        sa.Column("classification", sa.String(32), nullable=False),
        sa.Column("source_ref_id", sa.String(256), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("external_id", sa.String(256), nullable=True, index=True),
        sa.Column("current_version_id", sa.Integer(), nullable=True),
        sa.Column("first_seen_at", TS, nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
    )
    op.create_table(
        "source_versions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source_id", sa.String(512), sa.ForeignKey("sources.source_id"), nullable=False, index=True),
        sa.Column("revision", sa.String(128), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("path", sa.String(1024), nullable=False),
        sa.Column("byte_size", sa.Integer(), nullable=False),
        sa.Column("observed_at", TS, nullable=False),
        sa.Column("is_current", sa.Boolean(), nullable=False, index=True),
        sa.UniqueConstraint("source_id", "sha256", name="uq_source_versions_source_sha256"),
    )
    op.create_table(
        "chunks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source_version_id", sa.Integer(), sa.ForeignKey("source_versions.id"), nullable=False, index=True),
        sa.Column("source_id", sa.String(512), sa.ForeignKey("sources.source_id"), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("locator_type", sa.String(32), nullable=False),
        sa.Column("locator_value", sa.Text(), nullable=False),
        sa.Column("heading_path", sa.JSON(), nullable=False),
        sa.Column("heading_text", sa.Text(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=True),
        sa.Column("end_line", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("excerpt_sha256", sa.String(64), nullable=False, index=True),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.Column("embedding", EmbeddingVector(), nullable=True),
        sa.UniqueConstraint("source_version_id", "ordinal", name="uq_chunks_version_ordinal"),
        sa.Index("ix_chunks_source_current", "source_id", "is_current"),
    )
    create_search_indexes(op.get_bind())
    op.create_table(
        "links",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source_version_id", sa.Integer(), sa.ForeignKey("source_versions.id"), nullable=False, index=True),
        sa.Column("from_source_id", sa.String(512), sa.ForeignKey("sources.source_id"), nullable=False, index=True),
        sa.Column("from_chunk_id", sa.Integer(), sa.ForeignKey("chunks.id"), nullable=True),
        sa.Column("link_type", sa.String(32), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("target_source_id", sa.String(512), nullable=True),
        sa.Column("anchor", sa.Text(), nullable=True),
        sa.Column("is_current", sa.Boolean(), nullable=False),
        sa.Index("ix_links_target_source", "target_source_id"),
    )
    op.create_table(
        "evidence_rows",
        sa.Column("evidence_id", sa.String(256), primary_key=True),
        sa.Column("source_id", sa.String(512), nullable=False, index=True),
        sa.Column("source_revision", sa.String(128), nullable=True),
        sa.Column("state", sa.String(32), nullable=False, index=True),
        sa.Column("lane", sa.String(32), nullable=True),
        sa.Column("row_json", sa.JSON(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "verification_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("evidence_id", sa.String(256), nullable=False, index=True),
        sa.Column("from_state", sa.String(32), nullable=True),
        sa.Column("to_state", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("packet_id", sa.String(256), nullable=True, index=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("at", TS, nullable=False, index=True),
    )
    op.create_table(
        "lane_runs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("result_set_id", sa.String(256), nullable=False, index=True),
        sa.Column("packet_id", sa.String(256), nullable=True, index=True),
        sa.Column("lane", sa.String(32), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("candidate_count", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("skip_reason", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("at", TS, nullable=False),
    )
    op.create_table(
        "rejected_candidates",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("reason", sa.String(128), nullable=False),
        sa.Column("query", sa.Text(), nullable=True),
        sa.Column("result_set_id", sa.String(256), nullable=True, index=True),
        sa.Column("packet_id", sa.String(256), nullable=True, index=True),
        sa.Column("source_id", sa.String(512), nullable=True, index=True),
        sa.Column("evidence_id", sa.String(256), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("at", TS, nullable=False, index=True),
        sa.Index("ix_rejected_reason_at", "reason", "at"),
    )
    op.create_table(
        "packets",
        sa.Column("packet_id", sa.String(256), primary_key=True),
        sa.Column("task_id", sa.String(256), nullable=False, index=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=False, index=True),
        sa.Column("manifest_id", sa.String(256), nullable=True),
        sa.Column("manifest_checksum", sa.String(64), nullable=True),
        sa.Column("packet_json", sa.JSON(), nullable=False),
        sa.Column("generated_at", TS, nullable=False, index=True),
    )
    op.create_table(
        "claims",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("packet_id", sa.String(256), sa.ForeignKey("packets.packet_id"), nullable=False, index=True),
        sa.Column("claim_id", sa.String(256), nullable=False),
        sa.Column("claim_text", sa.Text(), nullable=False),
        sa.Column("claim_class", sa.String(32), nullable=False),
        sa.Column("importance", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("claim_json", sa.JSON(), nullable=False),
        sa.UniqueConstraint("packet_id", "claim_id", name="uq_claims_packet_claim"),
    )
    op.create_table(
        "claim_support",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("packet_id", sa.String(256), sa.ForeignKey("packets.packet_id"), nullable=False),
        sa.Column("claim_id", sa.String(256), nullable=False),
        sa.Column("evidence_id", sa.String(256), nullable=False),
        sa.Column("label", sa.String(32), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.UniqueConstraint("packet_id", "claim_id", "evidence_id", name="uq_claim_support"),
        sa.Index("ix_claim_support_evidence", "evidence_id"),
    )
    op.create_table(
        "decode_stats",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("packet_id", sa.String(256), sa.ForeignKey("packets.packet_id"), nullable=False, index=True),
        sa.Column("stats_json", sa.JSON(), nullable=False),
        sa.Column("at", TS, nullable=False),
    )
    op.create_table(
        "store_meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Integer(), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "store_meta",
        "decode_stats",
        "claim_support",
        "claims",
        "packets",
        "rejected_candidates",
        "lane_runs",
        "verification_events",
        "evidence_rows",
        "links",
    ):
        op.drop_table(table)
    drop_search_indexes(op.get_bind())
    op.drop_table("chunks")
    op.drop_table("source_versions")
    op.drop_table("sources")
