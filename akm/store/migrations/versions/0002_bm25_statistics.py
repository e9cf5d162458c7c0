"""PostgreSQL BM25 statistics: each chunk's lexical length, posting lists (lexeme, chunk, term
frequency) and the totals of current chunks, kept by triggers on ``chunks``.

SQLite needs nothing: its FTS5 index keeps the lengths and totals ``bm25()`` reads.

Revision ID: 0002_bm25_statistics
Revises: 0001_evidence_store
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from akm.store.dialects import create_bm25_statistics, drop_bm25_statistics

revision: str = "0002_bm25_statistics"
down_revision: str | None = "0001_evidence_store"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    create_bm25_statistics(op.get_bind())


def downgrade() -> None:
    drop_bm25_statistics(op.get_bind())
