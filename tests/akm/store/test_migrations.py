"""The same Alembic revisions run up and down on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from akm.store import migrate
from akm.store.models import Base
from akm.store.repository import create_store_engine

TABLES = {
    "sources",
    "source_versions",
    "chunks",
    "links",
    "evidence_rows",
    "verification_events",
    "lane_runs",
    "rejected_candidates",
    "packets",
    "claims",
    "claim_support",
    "decode_stats",
    "store_meta",
    "api_keys",
}


def _user_tables(engine: object) -> set[str]:
    names = set(inspect(engine).get_table_names())  # type: ignore[arg-type]
    return {name for name in names if name in TABLES or name.startswith("chunks_fts")}


def test_upgrade_downgrade_upgrade(store_url: str) -> None:
    engine = create_store_engine(store_url)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    assert _user_tables(engine) >= TABLES
    if engine.dialect.name == "sqlite":
        assert "chunks_fts" in _user_tables(engine)
    else:
        columns = {column["name"] for column in inspect(engine).get_columns("chunks")}
        assert "text_tsv" in columns
        indexes = {index["name"] for index in inspect(engine).get_indexes("chunks")}
        assert {"ix_chunks_text_tsv", "ix_chunks_embedding_hnsw"} <= indexes

    migrate.downgrade(engine)
    assert migrate.current_revision(engine) is None
    assert _user_tables(engine) == set()

    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()


def test_migrated_schema_matches_models(store_url: str) -> None:
    engine = create_store_engine(store_url)
    migrate.upgrade(engine)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        differences = compare_metadata(context, Base.metadata)
    engine.dispose()
    # Only the backend-specific search structures, which the models deliberately leave out, may differ.
    unexpected = [
        difference
        for difference in differences
        if not (
            isinstance(difference, tuple)
            and difference[0] in {"remove_table", "remove_column", "remove_index"}
            and (
                "chunks_fts" in str(difference[1])
                or "text_tsv" in str(difference)
                or "hnsw" in str(difference)
            )
        )
    ]
    assert unexpected == []


@pytest.mark.parametrize("target", ["head"], ids=["twice"])
def test_upgrade_is_idempotent(sqlite_url: str, target: str) -> None:
    engine = create_store_engine(sqlite_url)
    migrate.upgrade(engine, target)
    migrate.upgrade(engine, target)
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()
