"""Source versions are observations: content seen again (a revert) is a new version with its
own observation time, so ``(source_id, sha256)`` is no longer unique; evidence rows record the
checksum of the source version they were read at, so rows left behind by a change can be found.

SQLite cannot drop a table constraint in place: the table is copied out, dropped, recreated and
filled again in the same transaction, with foreign keys deferred to the commit (chunks and
links point at the same version ids before and after).

Downgrade refuses while a source holds two versions with the same content: the older schema
cannot represent a revert, and merging them would rewrite chunk lineage.

Revision ID: 0003_source_observations
Revises: 0002_bm25_statistics
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_source_observations"
down_revision: str | None = "0002_bm25_statistics"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_UNIQUE = "uq_source_versions_source_sha256"
CONTENT_INDEX = "ix_source_versions_source_sha256"
CHECKSUM_INDEX = "ix_evidence_rows_source_checksum"
_COLUMNS = "id, source_id, revision, sha256, path, byte_size, observed_at, is_current"


def _rebuild_sqlite_versions(*, unique: bool) -> None:
    """Recreate ``source_versions`` with or without the content constraint (SQLite only)."""
    bind = op.get_bind()
    bind.exec_driver_sql("PRAGMA defer_foreign_keys = ON")
    bind.exec_driver_sql(f"CREATE TEMP TABLE source_versions_copy AS SELECT {_COLUMNS} FROM source_versions")
    bind.exec_driver_sql("DROP TABLE source_versions")
    constraint = f", CONSTRAINT {OLD_UNIQUE} UNIQUE (source_id, sha256)" if unique else ""
    bind.exec_driver_sql(
        "CREATE TABLE source_versions (id INTEGER NOT NULL, source_id VARCHAR(512) NOT NULL, "
        "revision VARCHAR(128) NOT NULL, sha256 VARCHAR(64) NOT NULL, path VARCHAR(1024) NOT NULL, "
        "byte_size INTEGER NOT NULL, observed_at DATETIME NOT NULL, is_current BOOLEAN NOT NULL, "
        f"PRIMARY KEY (id){constraint}, FOREIGN KEY(source_id) REFERENCES sources (source_id))"
    )
    bind.exec_driver_sql(
        f"INSERT INTO source_versions ({_COLUMNS}) SELECT {_COLUMNS} FROM source_versions_copy"
    )
    bind.exec_driver_sql("DROP TABLE source_versions_copy")
    bind.exec_driver_sql("CREATE INDEX ix_source_versions_source_id ON source_versions (source_id)")
    bind.exec_driver_sql("CREATE INDEX ix_source_versions_is_current ON source_versions (is_current)")


def _backfill_row_checksums() -> None:
    rows = sa.table(
        "evidence_rows",
        sa.column("evidence_id", sa.String),
        sa.column("row_json", sa.JSON),
        sa.column("source_checksum", sa.String),
    )
    bind = op.get_bind()
    for evidence_id, document in bind.execute(sa.select(rows.c.evidence_id, rows.c.row_json)).all():
        version = ((document or {}).get("source") or {}).get("version") or {}
        checksum = version.get("checksum")
        if isinstance(checksum, str):
            bind.execute(
                rows.update().where(rows.c.evidence_id == evidence_id).values(source_checksum=checksum)
            )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite_versions(unique=False)
    else:
        op.drop_constraint(OLD_UNIQUE, "source_versions", type_="unique")
    op.create_index(CONTENT_INDEX, "source_versions", ["source_id", "sha256"])
    op.add_column("evidence_rows", sa.Column("source_checksum", sa.String(64), nullable=True))
    op.create_index(CHECKSUM_INDEX, "evidence_rows", ["source_id", "source_checksum"])
    _backfill_row_checksums()


def downgrade() -> None:
    bind = op.get_bind()
    repeated = bind.execute(
        sa.text(
            "SELECT source_id FROM source_versions GROUP BY source_id, sha256 HAVING COUNT(*) > 1 LIMIT 1"
        )
    ).first()
    if repeated is not None:
        raise RuntimeError(
            f"cannot downgrade below {revision}: source {repeated[0]!r} has two versions with the same "
            "content (a revert), which the older schema cannot hold"
        )
    op.drop_index(CHECKSUM_INDEX, table_name="evidence_rows")
    with op.batch_alter_table("evidence_rows") as batch:
        batch.drop_column("source_checksum")
    op.drop_index(CONTENT_INDEX, table_name="source_versions")
    if bind.dialect.name == "sqlite":
        _rebuild_sqlite_versions(unique=True)
    else:
        op.create_unique_constraint(OLD_UNIQUE, "source_versions", ["source_id", "sha256"])
