"""Run the Alembic revisions programmatically, under the store's write lock."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from akm.store.dialects import acquire_write_lock

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
MIGRATIONS_DIR = PROJECT_ROOT / "migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no Alembic revisions found in {MIGRATIONS_DIR}")
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _run(engine: Engine, action: str, target: str) -> None:
    config = alembic_config()
    # Two processes opening the same new store must not both create the tables.
    with engine.connect().execution_options(sqlite_begin="IMMEDIATE") as connection, connection.begin():
        acquire_write_lock(connection)
        config.attributes["connection"] = connection
        if action == "upgrade":
            command.upgrade(config, target)
        else:
            command.downgrade(config, target)


def upgrade(engine: Engine, target: str = "head") -> None:
    _run(engine, "upgrade", target)


def downgrade(engine: Engine, target: str = "base") -> None:
    _run(engine, "downgrade", target)
