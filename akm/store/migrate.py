"""Run the Alembic revisions programmatically, under the store's write lock."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from akm.store.dialects import acquire_write_lock


def migrations_dir() -> Path:
    """The Alembic environment and revisions shipped inside this package (``akm/store/migrations``).

    Alembic runs ``env.py`` and the revision files from a folder, so the package must be
    installed as files (a wheel or a source tree), not imported from a zip archive.
    """
    folder = files("akm.store").joinpath("migrations")
    if not isinstance(folder, Path) or not folder.joinpath("env.py").is_file():
        raise RuntimeError(f"the Alembic migrations are not installed as files with akm.store: {folder}")
    return folder


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no Alembic revisions found in {migrations_dir()}")
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
