"""Corpus files: where each JSONL corpus root was ingested from, so its rows can be read directly.

A corpus document's canonical URI (``source:<alias>/<id>``) names the document, not the file it
came from; without this table no reader can open the corpus again and every corpus row is
rejected at direct read.

Revision ID: 0004_corpus_files
Revises: 0003_source_observations
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_corpus_files"
down_revision: str | None = "0003_source_observations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "corpus_files",
        sa.Column("root_alias", sa.String(128), primary_key=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("corpus_files")
