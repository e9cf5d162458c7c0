"""Alembic environment: one set of revisions for SQLite and PostgreSQL.

``akm.store.migrate`` passes an open connection in ``config.attributes["connection"]``;
the ``alembic`` command line uses ``-x url=...`` or AKM_DATABASE_URL instead.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection, create_engine

from akm.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("AKM_DATABASE_URL")
    if not url:
        raise SystemExit("set AKM_DATABASE_URL or pass -x url=<database url>")
    engine = create_engine(url)
    with engine.connect() as connection:
        _run(connection)
        connection.commit()


if context.is_offline_mode():
    raise SystemExit("offline SQL generation is not supported: the search indexes need a live dialect")
run_migrations_online()
