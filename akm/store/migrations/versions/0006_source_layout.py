"""Source layout: how an extracted format (PDF, HTML, DOCX) was laid out as lines for a version.

A version stored before this revision has none, so ingest cuts its unchanged PDF, HTML and DOCX
files again once, with the layout of today's reader.

Revision ID: 0006_source_layout
Revises: 0005_api_keys
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_source_layout"
down_revision: str | None = "0005_api_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("source_versions", sa.Column("layout", sa.String(32), nullable=True))


def downgrade() -> None:
    # A plain column: SQLite (3.35 and later) drops it in place, so no table is rebuilt under the
    # chunks that refer to it.
    op.drop_column("source_versions", "layout")
